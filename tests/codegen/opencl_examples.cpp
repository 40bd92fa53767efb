// Every example program, compiled to OpenCL by codegen/compile_pipeline.h (default lowering,
// generation) and run on the default OpenCL device (PoCL on weft's build machines)
// through host/program_runner.h, against the reference interpreter on the same random inputs,
// within 1e-4 absolute + 1e-4 relative. Each program is compiled twice: with every size left
// symbolic (kernel arguments) and specialised to the sizes of the run. Label opencl: skipped,
// never passed, where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
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
#include "tests/support/random_values.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

host::ProgramCache& cache() {
  static host::ProgramCache programs;
  return programs;
}

std::string describeBinding(const ArithBinding& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) {
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return text;
}

// Runs the last definition of `file` for each binding (sizes the inputs do not fix included)
// in the interpreter and on OpenCL, symbolic and specialised, and compares.
void checkExample(const std::string& file, const std::vector<ArithBinding>& bindings) {
  const Definition original = parseFile(file).definitions.back();
  CAPTURE(file);
  const CompiledProgram symbolic = compileToOpenCL(original);
  std::mt19937_64 rng(7);
  for (const ArithBinding& binding : bindings) {
    std::string sizesText = describeBinding(binding);
    CAPTURE(sizesText);
    std::vector<Value> inputs;
    for (const Expr& param : original.function.params()) {
      inputs.push_back(testing::randomValue(param.paramType(), binding, rng, {true}));
    }
    const ArithBinding sizes = bindSizes(original, inputs, binding);
    const Value expected = interpret(original, inputs, sizes);

    host::RunOptions options;
    options.cache = &cache();
    CAPTURE(symbolic.source);
    host::RunResult run = host::runProgram(context(), symbolic, inputs, sizes, options);
    CHECK_MESSAGE(approximatelyEqual(run.output, expected, 1e-4, 1e-4),
                  "symbolic sizes: max difference " << maxAbsDifference(run.output, expected));
    CHECK(run.totalNanoseconds > 0);

    CodegenOptions specialised;
    specialised.specialize = sizes;
    const CompiledProgram fixed = compileToOpenCL(original, specialised);
    CAPTURE(fixed.source);
    CHECK(fixed.openSizes.empty());
    host::RunResult fixedRun = host::runProgram(context(), fixed, inputs, sizes, options);
    CHECK_MESSAGE(approximatelyEqual(fixedRun.output, expected, 1e-4, 1e-4),
                  "specialised: max difference " << maxAbsDifference(fixedRun.output, expected));
  }
}

}  // namespace

TEST_CASE("every example has a test here") {
  std::vector<std::string> covered = {"chunked.weft", "conv.weft",   "dot.weft",      "matmul.weft",
                                      "matvec.weft",  "stencil2d.weft", "sum.weft"};
  for (const auto& entry : std::filesystem::directory_iterator("examples")) {
    if (entry.path().extension() != ".weft") continue;
    CAPTURE(entry.path().string());
    CHECK(std::find(covered.begin(), covered.end(), entry.path().filename().string()) !=
          covered.end());
  }
}

TEST_CASE("conv on OpenCL matches the interpreter (P in {0, 1}, S in {1, 2})") {
  std::vector<ArithBinding> bindings;
  for (int64_t p : {0, 1}) {
    for (int64_t s : {1, 2}) {
      bindings.push_back({{"P", p}, {"S", s}, {"C", 3}, {"H", 8}, {"W", 8}, {"M", 4}, {"K", 3}});
    }
  }
  // Non-square and odd sizes.
  bindings.push_back({{"P", 1}, {"S", 2}, {"C", 2}, {"H", 7}, {"W", 9}, {"M", 3}, {"K", 3}});
  bindings.push_back({{"P", 0}, {"S", 1}, {"C", 1}, {"H", 5}, {"W", 4}, {"M", 1}, {"K", 1}});
  checkExample("examples/conv.weft", bindings);
}

TEST_CASE("stencil2d on OpenCL matches the interpreter") {
  checkExample(
      "examples/stencil2d.weft",
      {{{"W", 8}, {"H", 8}}, {{"W", 5}, {"H", 3}}, {{"W", 1}, {"H", 1}}, {{"W", 17}, {"H", 2}}});
}

TEST_CASE("dot on OpenCL matches the interpreter") {
  checkExample("examples/dot.weft", {{{"N", 1}}, {{"N", 7}}, {{"N", 64}}, {{"N", 1000}}});
  checkExample("examples/sum.weft", {{{"N", 1}}, {{"N", 7}}, {{"N", 1000}}});
  checkExample("examples/matvec.weft",
               {{{"M", 1}, {"N", 1}}, {{"M", 5}, {"N", 7}}, {{"M", 64}, {"N", 33}}});
}

TEST_CASE("chunked sums on OpenCL match the interpreter (kappa, a declared tuning parameter)") {
  checkExample("examples/chunked.weft", {{{"N", 1024}, {"kappa", 32}},
                                         {{"N", 12}, {"kappa", 3}},
                                         {{"N", 7}, {"kappa", 7}},
                                         {{"N", 5}, {"kappa", 1}}});
}

TEST_CASE("matmul on OpenCL matches the interpreter") {
  checkExample("examples/matmul.weft", {{{"M", 4}, {"K", 4}, {"N", 4}},
                                        {{"M", 3}, {"K", 5}, {"N", 7}},
                                        {{"M", 1}, {"K", 1}, {"N", 1}},
                                        {{"M", 16}, {"K", 9}, {"N", 2}}});
}
