// The conv-direct strategy (rewrite/strategies.h) on OpenCL: examples/conv.weft is rewritten
// with concrete tuning parameters (tile size theta, optimisation padding rho, kernel groups
// kappa, window groups sigma, chunks omega, coalesce, vector width v, unroll), lowered with
// codegen/lowering.h, compiled with every size specialised (unrolling needs constant trip
// counts), run on the default OpenCL device (PoCL) through host/program_runner.h and compared
// with the interpreter on the original layer within 1e-4 absolute + 1e-4 relative (chunks and
// partial sums reassociate the float sums). Every rewritten program must generate the paper's
// four kernels: pad, partial convolution, final reduction, crop. Layers: a small one
// (C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1) under 12 parameter sets covering every value
// of each parameter, the Listing 4 parameters on an 8×8×8 layer with 8 kernels, a stride-2
// layer and an unpadded (P = 0) layer. The parameter sets are checked against the tiling
// constraints (tiles cover the optimisation-padded input exactly; sigma divides the windows of
// a tile; kappa divides M; omega divides K·K·C; v divides omega) before use. Label opencl.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <set>
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

// A convolution layer's shape (conv.weft's size variables).
struct Shape {
  int channels, height, width, kernels, kernelSize, padding, stride;
};

// conv-direct's arguments.
struct Parameters {
  int theta, rho, kappa, sigma, omega, coalesce, v, unroll;
};

std::string describe(const Parameters& p) {
  return "theta=" + std::to_string(p.theta) + " rho=" + std::to_string(p.rho) +
         " kappa=" + std::to_string(p.kappa) + " sigma=" + std::to_string(p.sigma) +
         " omega=" + std::to_string(p.omega) + " coalesce=" + std::to_string(p.coalesce) +
         " v=" + std::to_string(p.v) + " unroll=" + std::to_string(p.unroll);
}

std::string describe(const Shape& s) {
  return "C=" + std::to_string(s.channels) + " H=" + std::to_string(s.height) +
         " W=" + std::to_string(s.width) + " M=" + std::to_string(s.kernels) +
         " K=" + std::to_string(s.kernelSize) + " P=" + std::to_string(s.padding) +
         " S=" + std::to_string(s.stride);
}

// Whether the parameters fit the layer (paper section 4.2): the padded input
// Hp = H + 2P + rho·S (and likewise Wp) is covered exactly by tiles of theta pixels stepping
// theta - (K - S), each tile's windows start on the stride, sigma divides a tile's
// ((theta - K) / S + 1)² windows, kappa divides M, omega divides a window's K·K·C values and
// v divides omega.
bool valid(const Shape& s, const Parameters& p) {
  const int step = p.theta - (s.kernelSize - s.stride);
  if (p.theta < s.kernelSize || step <= 0) return false;
  if ((p.theta - s.kernelSize) % s.stride != 0) return false;
  for (int extent : {s.height, s.width}) {
    const int padded = extent + 2 * s.padding + p.rho * s.stride;
    if (padded < p.theta || (padded - p.theta) % step != 0) return false;
  }
  const int windowsPerRow = (p.theta - s.kernelSize) / s.stride + 1;
  return (windowsPerRow * windowsPerRow) % p.sigma == 0 && s.kernels % p.kappa == 0 &&
         (s.kernelSize * s.kernelSize * s.channels) % p.omega == 0 && p.omega % p.v == 0;
}

Definition convDefinition() { return parseFile("examples/conv.weft").definitions.back(); }

struct Layer {
  std::vector<Value> inputs;
  ArithBinding sizes;  // C, H, W, M, K, P, S
  Value expected;      // the interpreter on conv.weft
};

// Random real-valued inputs (weights [[[[float]C]K]K]M, biases [float]M, input
// [[[float]C]W]H) and the interpreter's result on the original layer.
Layer randomLayer(const Definition& conv, const Shape& s, std::mt19937_64& rng) {
  const ArithBinding shape = {{"C", s.channels},
                              {"M", s.kernels},
                              {"K", s.kernelSize},
                              {"H", s.height},
                              {"W", s.width}};
  Layer layer;
  for (const Expr& param : conv.function.params()) {
    layer.inputs.push_back(testing::randomValue(param.paramType(), shape, rng, {true}));
  }
  layer.sizes = bindSizes(conv, layer.inputs, {{"P", s.padding}, {"S", s.stride}});
  layer.expected = interpret(conv, layer.inputs, layer.sizes);
  return layer;
}

// A rewritten, lowered and compiled parameter set, or why that failed.
struct Prepared {
  std::string lowered;  // the lowered definition, printed
  std::optional<CompiledProgram> compiled;
  std::string error;
};

// Rewrites conv.weft with conv-direct and the parameters, lowers it and generates OpenCL with
// every size bound.
Prepared prepare(const Definition& conv, const ArithBinding& sizes, const Parameters& p) {
  Prepared prepared;
  try {
    RewriteContext rewriteContext;
    StrategyResult result = findStrategy("conv-direct")
                                ->make({{"theta", Arith(p.theta)},
                                        {"rho", Arith(p.rho)},
                                        {"kappa", Arith(p.kappa)},
                                        {"sigma", Arith(p.sigma)},
                                        {"omega", Arith(p.omega)},
                                        {"coalesce", Arith(p.coalesce)},
                                        {"v", Arith(p.v)},
                                        {"unroll", Arith(p.unroll)}})(conv, rewriteContext);
    if (!result.success()) {
      prepared.error = "conv-direct failed: " + result.failure;
      return prepared;
    }
    const Definition lowered = *result.definition;
    prepared.lowered = printDefinition(lowered);
    CodegenOptions options;
    options.specialize = sizes;
    prepared.compiled = compileToOpenCL(lowered, options);
  } catch (const std::exception& e) {
    prepared.error = std::string(prepared.lowered.empty() ? "rewrite: " : "codegen: ") + e.what();
  }
  return prepared;
}

// Runs one compiled parameter set on the device: four kernels (pad, partial convolution, final
// reduction, crop) whose output matches the interpreter's. Failures are CHECKs, so that one
// parameter set's failure does not hide the others'.
void checkOnDevice(const Layer& layer, const Prepared& prepared) {
  CAPTURE(prepared.lowered);
  CHECK_MESSAGE(prepared.error.empty(), prepared.error);
  if (!prepared.compiled) return;
  const CompiledProgram& compiled = *prepared.compiled;
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 4);
  CHECK(compiled.openSizes.empty());
  if (compiled.kernels.size() != 4) return;
  const host::RunResult run = host::runProgram(context(), compiled, layer.inputs, layer.sizes);
  CHECK_MESSAGE(approximatelyEqual(run.output, layer.expected, kTolerance, kTolerance),
                "max difference " << maxAbsDifference(run.output, layer.expected));
}

// Runs every parameter set on one random layer, except those named in `excluded` (known
// failures, reported rather than hidden). Rewriting takes about a second per set, as long as
// PoCL's build of the result; both run on this thread, one set after the other.
void checkLayer(const Shape& shape, const std::vector<Parameters>& cases,
                const std::vector<std::string>& excluded, uint64_t seed) {
  CAPTURE(describe(shape));
  const Definition conv = convDefinition();
  std::mt19937_64 rng(seed);
  const Layer layer = randomLayer(conv, shape, rng);
  std::vector<Parameters> toRun;
  for (const Parameters& p : cases) {
    CAPTURE(describe(p));
    REQUIRE_MESSAGE(valid(shape, p), "invalid parameters chosen for the layer");
    if (std::find(excluded.begin(), excluded.end(), describe(p)) != excluded.end()) {
      MESSAGE("excluded (known failure): " << describe(shape) << " " << describe(p));
    } else {
      toRun.push_back(p);
    }
  }
  for (const Parameters& p : toRun) {
    CAPTURE(describe(p));
    checkOnDevice(layer, prepare(conv, layer.sizes, p));
  }
}

// Known failures, as describe(Parameters) strings: kept out of the runs so that the test
// stays green, listed so that fixing them means deleting the entry. None at present.
const std::vector<std::string> kKnownFailingSmallLayer = {};
const std::vector<std::string> kKnownFailingOtherLayers = {};

}  // namespace

TEST_CASE("conv-direct on a small layer runs on OpenCL like the interpreter (12 parameter sets)") {
  // C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1: padded input 8 + rho, tiles theta = 5 step 3
  // (rho in {0, 3}), 9 windows per tile (sigma | 9), windows of 18 values (omega | 18).
  const Shape shape{2, 6, 6, 4, 3, 1, 1};
  //                        theta rho kappa sigma omega coalesce v unroll
  const std::vector<Parameters> cases = {
      {5, 0, 1, 1, 3, 0, 1, 0},  {5, 3, 2, 3, 6, 1, 2, 0},  {5, 0, 4, 9, 18, 0, 2, 1},
      {5, 3, 1, 9, 6, 1, 1, 1},  {5, 0, 2, 1, 18, 1, 2, 1}, {5, 3, 4, 3, 3, 0, 1, 1},
      {5, 0, 1, 3, 18, 1, 1, 0}, {5, 3, 2, 9, 3, 0, 1, 0},  {5, 0, 4, 1, 6, 0, 2, 0},
      {5, 3, 1, 1, 18, 0, 2, 1}, {5, 0, 2, 9, 6, 1, 1, 1},  {5, 3, 4, 1, 18, 1, 2, 0},
  };
  // Every value of every parameter occurs.
  auto values = [&](auto member) {
    std::set<int> seen;
    for (const Parameters& p : cases) seen.insert(p.*member);
    return seen;
  };
  CHECK(values(&Parameters::rho) == std::set<int>{0, 3});
  CHECK(values(&Parameters::kappa) == std::set<int>{1, 2, 4});
  CHECK(values(&Parameters::sigma) == std::set<int>{1, 3, 9});
  CHECK(values(&Parameters::omega) == std::set<int>{3, 6, 18});
  CHECK(values(&Parameters::coalesce) == std::set<int>{0, 1});
  CHECK(values(&Parameters::v) == std::set<int>{1, 2});
  CHECK(values(&Parameters::unroll) == std::set<int>{0, 1});
  checkLayer(shape, cases, kKnownFailingSmallLayer, 2024);
}

TEST_CASE("conv-direct with Listing 4's parameters runs on OpenCL like the interpreter") {
  // C = 8, H = W = 8, M = 8, K = 3, P = 1, S = 1: padded 10 + 4 = 14 = 8 + 6, tiles of 8 with
  // 36 windows (sigma = 2), windows of 72 values in chunks of 12 as float4, kernel groups of 4.
  const Shape shape{8, 8, 8, 8, 3, 1, 1};
  checkLayer(shape, {{8, 4, 4, 2, 12, 1, 4, 0}}, kKnownFailingOtherLayers, 4);
}

TEST_CASE("conv-direct with stride 2 runs on OpenCL like the interpreter") {
  // C = 2, H = W = 7, M = 2, K = 3, P = 0, S = 2: padded 7 + 2·rho; tiles of 5 step 4 cover 9
  // (rho = 1) with 2×2 windows each; the crop keeps 3×3 of the 4×4 windows. Coalesced chunks
  // of 6 as float2.
  const Shape shape{2, 7, 7, 2, 3, 0, 2};
  checkLayer(shape, {{5, 1, 2, 4, 6, 1, 2, 0}}, kKnownFailingOtherLayers, 8);
}

TEST_CASE("conv-direct without padding (P = 0) runs on OpenCL like the interpreter") {
  // C = 3, H = W = 6, M = 2, K = 3, P = 0, S = 1: padded 6 + rho; tiles of 4 step 2 cover
  // 8 (rho = 2) with 2×2 windows each; windows of 27 values, one chunk, unrolled.
  const Shape shape{3, 6, 6, 2, 3, 0, 1};
  checkLayer(shape, {{4, 2, 1, 4, 27, 0, 1, 1}}, kKnownFailingOtherLayers, 16);
}
