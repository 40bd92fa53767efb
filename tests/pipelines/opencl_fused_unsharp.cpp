// The unsharp mask fused by the pipeline-fused-private-pointwise strategy (rewrite/
// strategy_pipeline_fusion.h) on OpenCL: one kernel in which every work-item computes a tile
// of blurx with its halo in private memory, then blury on it, sharpen and mask (the input
// pixel read as the centre tap of the window), and by pipeline-fused-sliding-window-pointwise
// (the first stencil carrying the input pixel, each work-item walking down its tile). On small
// 3-channel images (borders included, two tile sizes, sizes specialised and symbolic, explicit
// local sizes, canary regions around the output) the output equals the unfused program's four
// kernels exactly and the C++ reference of tests/support/pipeline_reference.h (threshold ties
// counted apart, the tolerance not loosened). pipeline-line-buffered-pointwise (strips of whole
// rows, float<v> lanes) likewise on four strip heights and vector widths, sizes specialised
// (its ring of rows is a private array), one work-item per work-group. The last test case runs
// the full size, 4256×2832×3: skipped unless asked for
// (`test_pipelines_opencl_fused_unsharp --no-skip -tc='*4256*'`; it needs about 7 GB for the
// interpreter values runProgram takes and returns, and over 20 s), it checks the fused and the
// unfused outputs against the reference at every pixel and prints both kernel times (best of 5
// cl_event sums) and their ratio. Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "tests/support/pipeline_opencl_fixture.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

Definition fusedUnsharp(int theta1, int theta2,
                        const std::string& strategy = "pipeline-fused-private-pointwise") {
  return fusedPipeline("unsharp", strategy, theta1, theta2);
}

// `lowered` run on `image` (sizes W, H, C specialised or symbolic); `localX` > 0: every kernel
// in work-groups of localX x 1 x 1.
host::RunResult run(const Definition& lowered, const Image& image, bool specialise, int repeats = 1,
                    bool guards = true, int localX = 0) {
  return compileAndRun(lowered, image, imageSizes(image, true), specialise, {repeats, guards},
                       localX);
}

// `fused` run on `image` is one kernel whose output equals `unfused`'s exactly and the C++
// reference (threshold ties counted apart).
void checkOneKernelAgainstUnfused(const Definition& fused, const Definition& unfused,
                                  const Image& image, bool specialise, int localX) {
  const std::vector<float> expected = flattenToFloats(run(unfused, image, true).output);
  const host::RunResult result = run(fused, image, specialise, 1, true, localX);
  CHECK(result.kernels.size() == 1);
  const std::vector<float> got = flattenToFloats(result.output);
  CHECK(got == expected);
  const UnsharpResult reference = unsharpReference(image);
  const Agreement agreement = compareFloats(got, reference.output.data, image.width,
                                            image.height, reference.scale, reference.fragile);
  CHECK_MESSAGE(agreement.mismatches == 0,
                agreement.mismatches << " pixels differ, first " << agreement.firstMismatch);
}

}  // namespace

TEST_CASE("fused unsharp mask: one kernel on OpenCL equals the unfused kernels and the reference") {
  const Definition unfused = loadPipeline("unsharp");
  struct Tiling {
    int theta1, theta2, width, height, localX;
  };
  // Kept small: the private tile is unrolled, and code generation grows with theta1 x theta2.
  const std::vector<Tiling> tilings = {{6, 4, 12, 8, 3}, {7, 2, 6, 9, 3}};
  for (const std::string strategy :
       {"pipeline-fused-private-pointwise", "pipeline-fused-sliding-window-pointwise"}) {
  for (const Tiling& t : tilings) {
    CAPTURE(strategy);
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    CAPTURE(t.localX);
    const Definition fused = fusedUnsharp(t.theta1, t.theta2, strategy);
    // Sizes specialised (seed 5) and symbolic (seed 6; opencl_fused_symbolic_sizes.cpp bounds
    // that generation's time and memory).
    for (int seed : {5, 6}) {
      const bool specialise = seed == 5;
      CAPTURE(seed);
      const Image image =
          seed == 5 ? blockyImage(t.width, t.height, 3, 5) : randomImage(t.width, t.height, 3, 6);
      checkOneKernelAgainstUnfused(fused, unfused, image, specialise, t.localX);
    }
  }
  }
}

TEST_CASE("unsharp mask line-buffered along whole rows: equals the unfused kernels on OpenCL") {
  const Definition unfused = loadPipeline("unsharp");
  struct Strips {
    int theta, v, width, height;
  };
  // Strips of theta rows with their halo (theta - 4 divides H), rows of float<v> (v divides W),
  // one strip, several, and images narrower than the clamped border reads of a vector.
  const std::vector<Strips> cases = {{6, 4, 12, 8}, {12, 4, 8, 8}, {8, 8, 16, 12},
                                     {7, 16, 32, 9}};
  for (const Strips& c : cases) {
    CAPTURE(c.theta);
    CAPTURE(c.v);
    CAPTURE(c.width);
    CAPTURE(c.height);
    const rewrite::NamedStrategy* strategy =
        rewrite::findStrategy("pipeline-line-buffered-pointwise");
    REQUIRE(strategy != nullptr);
    rewrite::RewriteContext rewriting;
    rewrite::StrategyResult rewritten =
        strategy->make({{"theta", Arith(c.theta)}, {"v", Arith(c.v)}})(loadPipeline("unsharp"),
                                                                       rewriting);
    REQUIRE_MESSAGE(rewritten.success(), rewritten.failure);
    // The ring of rows is a private array: sizes specialised, one work-item per work-group.
    checkOneKernelAgainstUnfused(*rewritten.definition, unfused,
                                 blockyImage(c.width, c.height, 3, 7), true, 1);
  }
}

TEST_CASE("full size: unfused vs fused unsharp mask at 4256x2832x3" * doctest::skip()) {
  const Image image = randomImage(4256, 2832, 3, 11);
  const UnsharpResult reference = unsharpReference(image);
  auto check = [&](const host::RunResult& result, const std::string& what) {
    const Agreement agreement =
        compareFloats(flattenToFloats(result.output), reference.output.data, image.width,
                      image.height, reference.scale, reference.fragile);
    MESSAGE(what << ": " << agreement.compared << " pixels compared, " << agreement.tieFlips
                 << " threshold tie flips, " << agreement.mismatches << " mismatches");
    CHECK_MESSAGE(agreement.mismatches == 0, agreement.firstMismatch);
  };
  const host::RunResult unfused = run(loadPipeline("unsharp"), image, true, 5, false);
  MESSAGE("unfused unsharp mask 4256x2832x3, 4 kernels, best of 5: "
          << milliseconds(unfused.totalNanoseconds));
  check(unfused, "unfused");
  struct Tiling {
    int theta1, theta2, localX;
  };
  // theta1 - 4 divides 2832, theta2 divides 4256.
  const char* chosen = std::getenv("WEFT_UNSHARP_TILES");  // "theta1,theta2,localX"
  std::vector<Tiling> tilings = {{12, 16, 8}, {12, 32, 4}, {20, 16, 4}};
  if (chosen) {
    Tiling t{};
    if (std::sscanf(chosen, "%d,%d,%d", &t.theta1, &t.theta2, &t.localX) == 3) tilings = {t};
  }
  for (const Tiling& t : tilings) {
    const host::RunResult fused =
        run(fusedUnsharp(t.theta1, t.theta2), image, true, 5, false, t.localX);
    MESSAGE("fused unsharp mask 4256x2832x3, 1 kernel, tile "
            << t.theta1 - 4 << "x" << t.theta2 << " outputs per work-item (theta1=" << t.theta1
            << ", theta2=" << t.theta2 << "), local " << t.localX
            << "x1x1, best of 5: " << milliseconds(fused.totalNanoseconds) << " ("
            << static_cast<double>(unfused.totalNanoseconds) /
                   static_cast<double>(fused.totalNanoseconds)
            << "x faster than unfused)");
    check(fused, "fused");
  }
}
