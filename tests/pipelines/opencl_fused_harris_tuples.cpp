// Harris (examples/pipelines/harris.weft) fused by pipeline-fused-private-tuples
// (rewrite/strategy_pipeline_fusion.h) on OpenCL: ONE kernel (the unfused program has nine), each
// work-item computing a theta1 x theta2 tile of (Ixx, Ixy, Iyy) triples, halo included, into
// private memory (one array per component) and the box sums and response of its
// (theta1 - 2) x (theta2 - 2) outputs from it; and by pipeline-fused-sliding-window-tuples, the
// same kernel walking down the tile with three rows of triples kept (mapSeqSlide). On small
// images (borders included; sizes specialised, and left symbolic: W and H fixed at launch; canary
// regions around the output) the output equals the unfused kernels' bit for bit and the C++
// reference of tests/support/pipeline_reference.h. At the full size, 4256x2832 (theta
// 6 x 16: 4 | 2832, 14 | 4256; sizes specialised), it equals the reference at every pixel and
// the unfused kernels bit for bit; its time (best of 5 cl_event sums, work-groups of 16 x 1
// tiles) is printed, a figure for orientation only (bench/pipelines.cpp measures). Label opencl:
// skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_opencl_fixture.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

using StrategyMaker = rewrite::Strategy (*)(const rewrite::RuleArguments&);

const std::vector<std::pair<std::string, StrategyMaker>> kTupleStrategies = {
    {"pipeline-fused-private-tuples", rewrite::pipelineFusedPrivateTuples},
    {"pipeline-fused-sliding-window-tuples", rewrite::pipelineFusedSlidingWindowTuples}};

Definition fusedHarris(StrategyMaker strategy, int theta1, int theta2) {
  rewrite::RewriteContext rewriting;
  rewrite::StrategyResult result = strategy({{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}})(
      loadPipeline("harris"), rewriting);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

bool tilesFit(const Definition& lowered, const ArithBinding& sizes) {
  for (const Constraint& c : typecheck(lowered).constraints) {
    if (c.evaluate(sizes) == std::optional<bool>(false)) return false;
  }
  return true;
}

void checkReference(const std::vector<float>& got, const Image& image) {
  const HarrisResult reference = harrisReference(image);
  const Agreement agreement =
      compareFloats(got, reference.output.data, image.width, image.height, reference.scale);
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.mismatches << " of " << agreement.compared
                                                                << " pixels differ, first "
                                                                << agreement.firstMismatch);
}

}  // namespace

TEST_CASE("Harris fused with tuples: one kernel on OpenCL, equal to the unfused kernels") {
  for (const auto& [name, strategy] : kTupleStrategies) {
    for (const SmallTiling& t : smallFusedTilings()) {
      CAPTURE(name);
      CAPTURE(t.theta1);
      CAPTURE(t.theta2);
      const Definition lowered = fusedHarris(strategy, t.theta1, t.theta2);
      for (bool symbolic : {false, true}) {
        CAPTURE(symbolic);
        for (uint32_t seed : {5u, 6u}) {
          CAPTURE(seed);
          const Image image = seed == 5 ? blockyImage(t.width, t.height, 1, seed)
                                        : randomImage(t.width, t.height, 1, seed);
          const ArithBinding sizes = imageSizes(image, false);
          REQUIRE(tilesFit(lowered, sizes));
          const host::RunResult result = compileAndRun(lowered, image, sizes, !symbolic);
          CHECK(result.kernels.size() == 1);
          const std::vector<float> got = flattenToFloats(result.output);
          checkSameAsUnfused(got, unfusedOutput("harris", image, sizes), image.width, image.height,
                             harrisReference(image).scale);
          checkReference(got, image);
        }
      }
    }
  }
}

TEST_CASE("Harris fused with tuples at 4256x2832 equals the reference and the unfused kernels") {
  const Image image = randomImage(4256, 2832, 1, 2025);
  const ArithBinding sizes = imageSizes(image, false);
  const std::vector<float> unfused = unfusedOutput("harris", image, sizes);
  for (const auto& [name, strategy] : kTupleStrategies) {
    CAPTURE(name);
    const Definition lowered = fusedHarris(strategy, 6, 16);
    REQUIRE(tilesFit(lowered, sizes));
    // Work-groups of 16 x 1 tiles (304 tiles per row), no canaries, best of 5.
    const host::RunResult result = compileAndRun(lowered, image, sizes, true, {5, false}, 16);
    CHECK(result.kernels.size() == 1);
    const std::vector<float> got = flattenToFloats(result.output);
    checkSameAsUnfused(got, unfused, image.width, image.height, harrisReference(image).scale);
    checkReference(got, image);
    MESSAGE("Harris 4256x2832 fused by "
            << name << ", theta 6 x 16, local 16 x 1: " << milliseconds(result.totalNanoseconds));
  }
}
