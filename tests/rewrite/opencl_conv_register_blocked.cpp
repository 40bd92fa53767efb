// The conv-register-blocked strategy (rewrite/strategies.h) on OpenCL: examples/conv.weft is
// rewritten with concrete (θ, ρ, κ, σ, unroll), lowered with codegen/lowering.h, compiled with
// every size specialised, run on the default OpenCL device (PoCL) through
// host/program_runner.h and compared with the interpreter on the original layer within 1e-4
// absolute + 1e-4 relative. Every rewritten program must generate three kernels (pad,
// convolution, crop: no final-reduction kernel, since the window is reduced in one piece).
// Layers: C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1 (tiles of 5 or one tile of 8) and a
// stride-2 unpadded layer. Label opencl.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/random_values.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

constexpr double kTolerance = 1e-4;

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

struct Parameters {
  int theta, rho, kappa, sigma, unroll;
};

std::string describe(const Parameters& p) {
  return "theta=" + std::to_string(p.theta) + " rho=" + std::to_string(p.rho) +
         " kappa=" + std::to_string(p.kappa) + " sigma=" + std::to_string(p.sigma) +
         " unroll=" + std::to_string(p.unroll);
}

void checkLayer(int channels, int size, int kernels, int padding, int stride,
                const std::vector<Parameters>& cases, uint64_t seed) {
  const Definition conv = parseFile("examples/conv.weft").definitions.back();
  std::mt19937_64 rng(seed);
  const ArithBinding shape = {
      {"C", channels}, {"M", kernels}, {"K", 3}, {"H", size}, {"W", size}};
  std::vector<Value> inputs;
  for (const Expr& param : conv.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), shape, rng, {true}));
  }
  const ArithBinding sizes = bindSizes(conv, inputs, {{"P", padding}, {"S", stride}});
  const Value expected = interpret(conv, inputs, sizes);
  for (const Parameters& p : cases) {
    CAPTURE(describe(p));
    RewriteContext rewriteContext;
    StrategyResult result = findStrategy("conv-register-blocked")
                                ->make({{"theta", Arith(p.theta)},
                                        {"rho", Arith(p.rho)},
                                        {"kappa", Arith(p.kappa)},
                                        {"sigma", Arith(p.sigma)},
                                        {"unroll", Arith(p.unroll)}})(conv, rewriteContext);
    REQUIRE_MESSAGE(result.success(), result.failure);
    const Definition lowered = *result.definition;
    CAPTURE(printDefinition(lowered));
    CodegenOptions options;
    options.specialize = sizes;
    const CompiledProgram compiled = compileToOpenCL(lowered, options);
    CAPTURE(compiled.source);
    CHECK(compiled.kernels.size() == 3);
    CHECK(compiled.openSizes.empty());
    const host::RunResult run = host::runProgram(context(), compiled, inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(run.output, expected, kTolerance, kTolerance),
                  "max difference " << maxAbsDifference(run.output, expected));
  }
}

}  // namespace

TEST_CASE("conv-register-blocked runs on OpenCL like the interpreter (small layer)") {
  //            theta rho kappa sigma unroll
  checkLayer(2, 6, 4, 1, 1,
             {{5, 0, 1, 1, 0}, {5, 3, 2, 3, 1}, {5, 0, 4, 9, 0}, {8, 0, 4, 4, 1}, {8, 0, 2, 12, 0}},
             2024);
}

TEST_CASE("conv-register-blocked with stride 2 and no padding runs on OpenCL like the interpreter") {
  checkLayer(2, 7, 2, 0, 2, {{5, 1, 2, 4, 0}, {5, 1, 1, 2, 1}}, 8);
}
