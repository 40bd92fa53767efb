// Canny fused by the pipeline-fused-private-chain strategy (rewrite/strategy_pipeline_chain.h)
// on OpenCL: three kernels (magnitude, direction, each by overlapped tiling with the Gaussian's
// tile in private memory per work-item; suppression and threshold as one) instead of the
// unfused program's seven; pipeline-fused-private-chain-pairs two (magnitude and direction as
// pairs from one Gaussian tile, then suppression and threshold). On small images (borders included,
// several tile sizes, widths and heights that are not multiples of the tiles' outputs where the
// constraints allow: 9, 15; sizes specialised, canary regions around the output and temporaries)
// the labels equal the unfused kernels' exactly and the C++ reference of
// tests/support/pipeline_reference.h (labels that hang on a near tie counted apart; nothing else
// loosened). One case generates the fused program with symbolic sizes (W and H left open, fixed at
// launch). The last case runs the full size, 4096×4096: skipped unless asked for
// (`test_pipelines_opencl_fused_canny
// --no-skip -tc='*4096*'`; WEFT_CANNY_TILES="theta1,theta2,localX" picks one tiling), it checks
// fused (both strategies) and unfused labels against the reference at every pixel and prints the
// kernel times (best of 5 cl_event sums) and their ratio. Label opencl: skipped where no OpenCL
// platform exists.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "rewrite/strategy_pipeline_chain.h"
#include "tests/support/pipeline_opencl_fixture.h"
#include "tests/support/pipeline_reference.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

Definition loadCanny() {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/pipelines/canny.weft")
      .definitions.back();
}

Definition fusedCanny(int theta1, int theta2, bool pairs = false) {
  rewrite::RewriteContext rewriting;
  const rewrite::RuleArguments tiles{{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}};
  rewrite::StrategyResult result =
      pairs ? rewrite::pipelineFusedPrivateChainPairs(tiles)(loadCanny(), rewriting)
            : rewrite::pipelineFusedPrivateChain(tiles)(loadCanny(), rewriting);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

// `localX` > 0: every kernel whose first global dimension localX divides runs in work-groups of
// localX x 1 x 1 (the others, e.g. the suppression's 1 x W x H, keep the runtime's choice).
host::RunResult run(const Definition& lowered, const Image& image, bool specialise,
                    int repeats = 1, bool guards = true, int localX = 0) {
  const ArithBinding sizes{{"W", image.width}, {"H", image.height}};
  CodegenOptions options;
  if (specialise) options.specialize = sizes;
  CompiledProgram program = compileToOpenCL(lowered, options);
  REQUIRE(program.kernels.size() >= 1);
  if (localX > 0) {
    for (KernelPlan& kernel : program.kernels) {
      if (evaluate(kernel.globalSize[0], sizes) % localX != 0) continue;
      kernel.hasLocalSize = true;
      kernel.localSize = {Arith(localX), Arith(1), Arith(1)};
    }
  }
  const Value input = valueFromFlat(lowered.function.params()[0].paramType(), sizes, image.data);
  host::RunOptions runOptions;
  runOptions.cache = &pipelineCache();
  runOptions.repeats = repeats;
  runOptions.guards = guards;
  host::RunResult result = host::runProgram(pipelineContext(), program, {input}, sizes, runOptions);
  for (const host::GuardViolation& v : result.guardViolations) FAIL(v.describe());
  return result;
}

// Labels against the reference: mismatches fail, near-tie flips are counted and returned.
size_t checkAgainstReference(const std::vector<int32_t>& got, const Image& image,
                             const std::string& what) {
  const CannyResult reference = cannyReference(image);
  const Agreement agreement =
      compareInts(got, reference.labels.data, image.width, reference.labelFragile);
  MESSAGE(what << ": " << agreement.compared << " labels compared, " << agreement.tieFlips
               << " near-tie flips, " << agreement.mismatches << " mismatches");
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.firstMismatch);
  return agreement.tieFlips;
}

}  // namespace

TEST_CASE("fused Canny: three kernels on OpenCL equal the unfused kernels and the reference") {
  const Definition unfused = loadCanny();
  for (const SmallTiling& t : smallFusedTilings()) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    const Definition fused = fusedCanny(t.theta1, t.theta2);
    for (int seed : {5, 6}) {
      CAPTURE(seed);
      const Image image = seed == 5 ? blockyImage(t.width, t.height, 1, 5)
                                    : randomImage(t.width, t.height, 1, 6);
      const std::vector<int32_t> expected = flattenToInts(run(unfused, image, true).output);
      const host::RunResult result = run(fused, image, true);
      CHECK(result.kernels.size() == 3);
      const std::vector<int32_t> got = flattenToInts(result.output);
      CHECK(got == expected);
      checkAgainstReference(got, image, "fused " + std::to_string(t.width) + "x" +
                                            std::to_string(t.height));
    }
  }
}

TEST_CASE(
    "Canny with magnitude and direction as pairs: two kernels on OpenCL equal the "
    "unfused kernels and the reference") {
  const Definition unfused = loadCanny();
  for (const SmallTiling& t : smallFusedTilings()) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    const Definition fused = fusedCanny(t.theta1, t.theta2, /*pairs=*/true);
    for (const bool specialise : {true, false}) {
      CAPTURE(specialise);
      const Image image = specialise ? blockyImage(t.width, t.height, 1, 15)
                                     : randomImage(t.width, t.height, 1, 16);
      const std::vector<int32_t> expected = flattenToInts(run(unfused, image, true).output);
      const host::RunResult result = run(fused, image, specialise);
      CHECK(result.kernels.size() == 2);
      const std::vector<int32_t> got = flattenToInts(result.output);
      CHECK(got == expected);
      checkAgainstReference(got, image,
                            "pairs " + std::to_string(t.width) + "x" + std::to_string(t.height));
    }
  }
}

TEST_CASE("fused Canny with symbolic sizes equals the unfused kernels") {
  const Definition unfused = loadCanny();
  const Definition fused = fusedCanny(6, 10);
  const Image image = blockyImage(24, 12, 1, 9);
  const std::vector<int32_t> expected = flattenToInts(run(unfused, image, true).output);
  const host::RunResult result = run(fused, image, false);
  CHECK(result.kernels.size() == 3);
  CHECK(flattenToInts(result.output) == expected);
}

TEST_CASE("full size: unfused vs fused Canny at 4096x4096" * doctest::skip()) {
  const Image image = randomImage(4096, 4096, 1, 11);
  const host::RunResult unfused = run(loadCanny(), image, true, 5, false);
  MESSAGE("unfused Canny 4096x4096, " << unfused.kernels.size()
                                      << " kernels, best of 5: "
                                      << milliseconds(unfused.totalNanoseconds));
  const std::vector<int32_t> unfusedLabels = flattenToInts(unfused.output);
  checkAgainstReference(unfusedLabels, image, "unfused");
  struct Tiling {
    int theta1, theta2, localX;
  };
  // theta1 - 2 and theta2 - 2 divide 4096; theta1 x theta2 <= 384 (pocl-cpu's private budget).
  const char* chosen = std::getenv("WEFT_CANNY_TILES");
  std::vector<Tiling> tilings = {{10, 18, 8}, {6, 34, 4}, {18, 18, 4}};
  if (chosen) {
    Tiling t{};
    if (std::sscanf(chosen, "%d,%d,%d", &t.theta1, &t.theta2, &t.localX) == 3) tilings = {t};
  }
  for (const auto& [t, pairs] : [&] {
         std::vector<std::pair<Tiling, bool>> both;
         for (const Tiling& t : tilings) both.insert(both.end(), {{t, false}, {t, true}});
         return both;
       }()) {
    const host::RunResult fused =
        run(fusedCanny(t.theta1, t.theta2, pairs), image, true, 5, false, t.localX);
    std::string perKernel;
    for (const auto& kernel : fused.kernels) {
      perKernel += (perKernel.empty() ? "" : ", ") + milliseconds(kernel.nanoseconds);
    }
    MESSAGE(std::string(pairs ? "fused Canny (pairs) 4096x4096, " : "fused Canny 4096x4096, ")
            << fused.kernels.size() << " kernels (" << perKernel << "), tile " << t.theta1 - 2
            << "x" << t.theta2 - 2 << " outputs per work-item (theta1=" << t.theta1
            << ", theta2=" << t.theta2 << "), local " << t.localX
            << "x1x1, best of 5: " << milliseconds(fused.totalNanoseconds) << " ("
            << static_cast<double>(unfused.totalNanoseconds) /
                   static_cast<double>(fused.totalNanoseconds)
            << "x faster than unfused)");
    const std::vector<int32_t> labels = flattenToInts(fused.output);
    size_t differ = 0;
    for (size_t i = 0; i < labels.size(); ++i) differ += labels[i] != unfusedLabels[i] ? 1 : 0;
    MESSAGE("labels differing from the unfused kernels: " << differ);
    CHECK(differ == 0);
    checkAgainstReference(labels, image, "fused");
  }
}
