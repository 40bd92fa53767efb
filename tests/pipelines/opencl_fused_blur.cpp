// The blur pipeline fused by the pipeline-fused-local and pipeline-fused-private strategies
// (rewrite/strategy_pipeline_fusion.h) on OpenCL: one kernel in which every work-group computes
// a tile of blurx with its halo into local memory and then blury on it (local), or every
// work-item computes its tile of blurx with its halo in private memory and then blury
// (private), or every work-item walks down its tile computing each blurx row once and keeping
// the last three in registers for blury (sliding window), or every work-item computes one pixel
// with blurx recomputed inside its window (inlined), or every work-item computes a strip of whole
// rows in float<v> lanes with blurx's rows recomputed where blury reads them (row-inlined, also
// with streaming stores where the device's compiler takes them; also at widths the vector does
// not divide, rows padded to whole vectors). On
// small images (borders included,
// several tile sizes, sizes symbolic and specialised, explicit local sizes for the private
// kernel, canary regions around the output) the output equals the unfused program's two
// kernels (exactly on PoCL: checkSameAsUnfused) and the C++ reference of
// tests/support/pipeline_reference.h. The last test case is a
// measurement, not a test: skipped unless asked for
// (`test_pipelines_opencl_fused_blur --no-skip -tc='*4096*'`), it times the unfused and the
// fused blurs at 4096×4096 (best of 5 cl_event sums) and prints them (bench/pipelines.cpp
// compares them with hand-written OpenCL).
// Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <cstdint>
#include <regex>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "host/arithmetic_probe.h"
#include "rewrite/strategies.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_opencl_fixture.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

const char* const kLocal = "pipeline-fused-local";
const char* const kPrivate = "pipeline-fused-private";
const char* const kSlidingWindow = "pipeline-fused-sliding-window";

// `lowered` run on `image` (sizes W, H specialised or symbolic); `localX` > 0: every kernel in
// work-groups of localX x 1 (as explore's local_k0_d0).
host::RunResult run(const Definition& lowered, const Image& image, bool specialise, int repeats = 1,
                    bool guards = true, int localX = 0) {
  return compileAndRun(lowered, image, imageSizes(image, false), specialise, {repeats, guards},
                       localX);
}

// A row-walking blur: its strategy, strip factor and value, vector width, image size and the
// fused kernel's local size.
struct RowWalkCase {
  const char* strategy;
  const char* strip;
  int strip_value, v, width, height, localX;
};

// The blur rewritten by the case's strategy, with `padded` its rows padded to whole vectors
// (pad = 1).
Definition rowWalkBlur(const RowWalkCase& c, bool padded) {
  rewrite::RewriteContext rewriting;
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy(c.strategy);
  REQUIRE(strategy);
  rewrite::RuleArguments factors = {{c.strip, Arith(c.strip_value)}, {"v", Arith(c.v)}};
  if (padded) factors.push_back({"pad", Arith(1)});
  const rewrite::StrategyResult result = strategy->make(factors)(loadPipeline("blur"), rewriting);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

// `program`, generated from `lowered` with the image's sizes specialised, run on `image`:
// equal to the unfused program and to the C++ reference.
void checkBlurOutput(const CompiledProgram& program, const Definition& lowered,
                     const Image& image) {
  const std::vector<float> expected =
      flattenToFloats(run(loadPipeline("blur"), image, true).output);
  const std::vector<float> got =
      flattenToFloats(runOnImage(program, lowered, image, imageSizes(image, false)).output);
  checkSameAsUnfused(got, expected, image.width, image.height);
  CHECK(compareFloats(got, blurReference(image).data, image.width, image.height).mismatches == 0);
}

}  // namespace

TEST_CASE("fused blur: one kernel on OpenCL equals the unfused kernels and the reference") {
  const Definition unfused = loadPipeline("blur");
  struct Tiling {
    int theta1, theta2, width, height;
  };
  const std::vector<Tiling> tilings = {
      {10, 8, 32, 32}, {18, 16, 48, 32}, {3, 1, 7, 5}, {6, 4, 12, 8}, {34, 32, 64, 32}};
  const auto maxGroup = static_cast<int64_t>(pipelineContext().maxWorkGroupSize());
  for (const Tiling& t : tilings) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    if (int64_t{t.theta1} * t.theta2 > maxGroup) {  // a work-group per tile (1088 > NVIDIA's 1024)
      MESSAGE("tile " << t.theta1 << " x " << t.theta2 << " skipped: work-groups of at most "
                      << maxGroup << " on this device");
      continue;
    }
    const Definition fused = fusedPipeline("blur", kLocal, t.theta1, t.theta2);
    CHECK(compileToOpenCL(fused).kernels.size() == 1);
    for (bool specialise : {false, true}) {
      CAPTURE(specialise);
      const Image image =
          specialise ? blockyImage(t.width, t.height, 1, 3) : randomImage(t.width, t.height, 1, 2);
      const std::vector<float> expected = flattenToFloats(run(unfused, image, true).output);
      const std::vector<float> got = flattenToFloats(run(fused, image, specialise).output);
      checkSameAsUnfused(got, expected, t.width, t.height);
      const Agreement agreement = compareFloats(got, blurReference(image).data, t.width, t.height);
      CHECK_MESSAGE(agreement.mismatches == 0,
                    agreement.mismatches << " pixels differ, first " << agreement.firstMismatch);
    }
  }
}

// Tiles of a strategy that computes a tile per work-item: theta1 x theta2, image size, local
// size localX x 1 (0: the implementation's).
struct WorkItemTiling {
  int theta1, theta2, width, height, localX;
};

// `fused` (one kernel) on a blocky image (sizes specialised, seed) and a random one (symbolic,
// seed + 1) of width x height, in work-groups of localX x 1 (0: the implementation's), equals
// the unfused kernels and the C++ reference.
void checkOneKernelAgainstUnfused(const Definition& fused, int width, int height, int localX,
                                  uint64_t seed) {
  const Definition unfused = loadPipeline("blur");
  for (bool specialise : {false, true}) {
    CAPTURE(specialise);
    const Image image =
        specialise ? blockyImage(width, height, 1, seed) : randomImage(width, height, 1, seed + 1);
    const std::vector<float> expected = flattenToFloats(run(unfused, image, true).output);
    const host::RunResult result = run(fused, image, specialise, 1, true, localX);
    CHECK(result.kernels.size() == 1);
    const std::vector<float> got = flattenToFloats(result.output);
    checkSameAsUnfused(got, expected, width, height);
    const Agreement agreement = compareFloats(got, blurReference(image).data, width, height);
    CHECK_MESSAGE(agreement.mismatches == 0,
                  agreement.mismatches << " pixels differ, first " << agreement.firstMismatch);
  }
}

// Blur by pipeline-inlined-rows: strips of `rows` rows in float<v> lanes.
Definition inlinedRows(int rows, int v) {
  rewrite::RewriteContext rewriting;
  const rewrite::StrategyResult inlined = rewrite::pipelineInlinedRows(
      {{"rows", Arith(rows)}, {"v", Arith(v)}})(loadPipeline("blur"), rewriting);
  REQUIRE_MESSAGE(inlined.success(), inlined.failure);
  return *inlined.definition;
}

// `strategy`'s kernel for each tiling, on a blocky image (specialised sizes) and a random one
// (symbolic), equals the unfused kernels and the C++ reference.
void checkTilesAgainstUnfused(const char* strategy, const std::vector<WorkItemTiling>& tilings,
                              uint64_t seed) {
  for (const WorkItemTiling& t : tilings) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    CAPTURE(t.localX);
    checkOneKernelAgainstUnfused(fusedPipeline("blur", strategy, t.theta1, t.theta2), t.width,
                                 t.height, t.localX, seed);
  }
}

TEST_CASE(
    "privately fused blur: one kernel on OpenCL equals the unfused kernels and the reference") {
  // Kept small: the private tile is unrolled, and code generation grows with theta1 x theta2.
  checkTilesAgainstUnfused(kPrivate,
                           {{10, 8, 32, 32, 0},
                            {18, 8, 48, 32, 3},
                            {3, 1, 7, 5, 7},
                            {6, 4, 12, 8, 1},
                            {34, 4, 64, 32, 2},
                            {4, 16, 64, 6, 4}},
                           5);
}

TEST_CASE("blur fused with a sliding window: one kernel equals the unfused kernels and the "
          "reference") {
  // Tall tiles as well: the window holds 3 rows of theta2 whatever theta1.
  const std::vector<WorkItemTiling> tilings = {{10, 8, 32, 32, 0}, {34, 8, 48, 64, 3},
                                               {3, 1, 7, 5, 7},    {6, 4, 12, 8, 1},
                                               {66, 4, 64, 64, 2}, {4, 16, 64, 6, 4}};
  for (const WorkItemTiling& t : tilings) {
    CAPTURE(t.theta1);
    const CompiledProgram compiled =
        compileToOpenCL(fusedPipeline("blur", kSlidingWindow, t.theta1, t.theta2));
    REQUIRE(compiled.kernels.size() == 1);
    // The walk down the tile is a loop, unrolled over the ring's 3 rows (when that leaves more
    // than one iteration); the window is in registers, not a private array.
    if (t.theta1 - 2 >= 6) CHECK(compiled.source.find("for (") != std::string::npos);
    CHECK(compiled.source.find("float win") != std::string::npos);
    CHECK(!std::regex_search(compiled.source, std::regex(R"(float win[0-9]+\[)")));
  }
  checkTilesAgainstUnfused(kSlidingWindow, tilings, 7);
}

TEST_CASE(
    "blur inlined: one kernel of a work-item per pixel equals the unfused kernels and the "
    "reference") {
  rewrite::RewriteContext rewriting;
  const rewrite::StrategyResult inlined =
      rewrite::pipelineFusedInlined({})(loadPipeline("blur"), rewriting);
  REQUIRE_MESSAGE(inlined.success(), inlined.failure);
  struct Case {
    int width, height, localX;  // localX 0: the implementation's local size
  };
  // Work-groups inside the image, at its left or right border, or as wide as it.
  for (const Case& c : std::vector<Case>{
           {32, 32, 16}, {48, 7, 8}, {5, 9, 0}, {64, 3, 64}, {20, 12, 4}, {1, 6, 1}}) {
    CAPTURE(c.width);
    CAPTURE(c.height);
    CAPTURE(c.localX);
    checkOneKernelAgainstUnfused(*inlined.definition, c.width, c.height, c.localX, 21);
  }
}

TEST_CASE(
    "blur inlined along whole rows: one kernel of strips equals the unfused kernels and "
    "the reference") {
  struct Case {
    int rows, v, width, height, localX;  // localX 0: the implementation's local size
  };
  for (const Case& c : std::vector<Case>{{4, 4, 32, 32, 2},
                                         {1, 2, 6, 5, 0},
                                         {7, 8, 16, 7, 1},
                                         {3, 16, 48, 9, 3},
                                         {16, 4, 8, 32, 1}}) {
    CAPTURE(c.rows);
    CAPTURE(c.v);
    const Definition inlined = inlinedRows(c.rows, c.v);
    checkOneKernelAgainstUnfused(inlined, c.width, c.height, c.localX, 31);
  }
}

TEST_CASE(
    "blur walked by column blocks: one kernel of strips equals the unfused kernels and the "
    "reference") {
  // Strips of theta rows (theta - 2 output rows) walked one block of v columns at a time; the
  // image's first and last blocks read across the clamp, the others (border_unswitching.cpp)
  // do not: narrow images are all edge, wider ones have inner blocks.
  struct Case {
    int theta, v, width, height, localX;  // localX 0: the implementation's local size
  };
  for (const Case& c : std::vector<Case>{{10, 16, 64, 32, 2},
                                         {3, 2, 6, 5, 0},
                                         {6, 4, 4, 8, 1},
                                         {4, 8, 40, 6, 3},
                                         {34, 4, 32, 64, 1}}) {
    CAPTURE(c.theta);
    CAPTURE(c.v);
    rewrite::RewriteContext rewriting;
    const rewrite::StrategyResult walked = rewrite::pipelineColumnWalk(
        {{"theta", Arith(c.theta)}, {"v", Arith(c.v)}})(loadPipeline("blur"), rewriting);
    REQUIRE_MESSAGE(walked.success(), walked.failure);
    checkOneKernelAgainstUnfused(*walked.definition, c.width, c.height, c.localX, 37);
  }
}

TEST_CASE("aligned vector reads: the row-walking blurs give the same output") {
  // Specialised sizes (the buffer's length and the rows' offsets known modulo v): the taps'
  // vector reads become aligned loads and shuffles of neighbouring aligned vectors, the
  // image's first and last vectors included (their reads stay inside the buffer).
  for (const RowWalkCase& c :
       std::vector<RowWalkCase>{{"pipeline-column-walk", "theta", 10, 16, 32, 16, 2},
                                {"pipeline-column-walk", "theta", 4, 4, 12, 6, 1},
                                {"pipeline-line-buffered", "theta", 6, 8, 24, 12, 1},
                                {"pipeline-inlined-rows", "rows", 3, 16, 48, 9, 3}}) {
    CAPTURE(c.strategy);
    CAPTURE(c.v);
    const Definition lowered = rowWalkBlur(c, /*padded=*/false);
    const Image image = randomImage(c.width, c.height, 1, 43);
    CodegenOptions options;
    options.specialize = imageSizes(image, false);
    options.alignedVectorReads = true;
    const CompiledProgram program = withLocalSizeX(compileToOpenCL(lowered, options), c.localX);
    CHECK(program.widestRealignableReadBytes == 4 * c.v);
    CHECK(program.source.find("shuffle2(") != std::string::npos);
    checkBlurOutput(program, lowered, image);
  }
}

TEST_CASE("row-walking blurs at widths the vector does not divide, rows padded: the same output") {
  // pad = 1: each row padded to whole vectors (vectorize-zip-padded, column-walk-padded), the
  // surplus lanes dropped by guarded stores. Specialised (as exploration generates them: the
  // ring of rows is a private array), the walk's inside iterations read the input as whole
  // vectors (the unswitched loop's index bounded, so that the padded row's clamps vanish) and
  // store them whole.
  for (const RowWalkCase& c :
       std::vector<RowWalkCase>{{"pipeline-line-buffered", "theta", 6, 16, 45, 12, 1},
                                {"pipeline-line-buffered", "theta", 4, 8, 29, 8, 1},
                                {"pipeline-column-walk", "theta", 10, 16, 37, 16, 2},
                                {"pipeline-inlined-rows", "rows", 3, 16, 50, 9, 3}}) {
    CAPTURE(c.strategy);
    CAPTURE(c.v);
    CAPTURE(c.width);
    const Definition lowered = rowWalkBlur(c, /*padded=*/true);
    const Image image = randomImage(c.width, c.height, 1, 47);
    CodegenOptions options;
    options.specialize = imageSizes(image, false);
    const CompiledProgram program = withLocalSizeX(compileToOpenCL(lowered, options), c.localX);
    const std::string v = std::to_string(c.v);
    CHECK(program.source.find("vstore" + v + "(") != std::string::npos);
    CHECK(std::regex_search(program.source, std::regex("vload" + v + "\\(0, in_input")));
    checkBlurOutput(program, lowered, image);
  }
}

TEST_CASE("blur inlined along whole rows with streaming stores: the same output") {
  if (!host::acceptsNontemporalStores(pipelineContext())) {
    MESSAGE("skipped: this device's compiler does not take __builtin_nontemporal_store");
    return;
  }
  struct Case {
    int rows, v, width, height, localX;
  };
  for (const Case& c : std::vector<Case>{{4, 4, 32, 32, 2}, {3, 16, 48, 9, 3}, {7, 8, 16, 7, 1}}) {
    CAPTURE(c.rows);
    CAPTURE(c.v);
    const Definition inlined = inlinedRows(c.rows, c.v);
    for (bool specialise : {false, true}) {
      CAPTURE(specialise);
      const Image image = specialise ? blockyImage(c.width, c.height, 1, 41)
                                     : randomImage(c.width, c.height, 1, 42);
      const ArithBinding sizes = imageSizes(image, false);
      CodegenOptions options;
      if (specialise) options.specialize = sizes;
      options.streamingStores = true;
      const CompiledProgram program = withLocalSizeX(compileToOpenCL(inlined, options), c.localX);
      // Specialised, every row starts at a multiple of the vector width: each store of the
      // output streams. Symbolic, W * row is not known to be one: no store does.
      CHECK((program.source.find("__builtin_nontemporal_store(") != std::string::npos) ==
            specialise);
      CHECK((program.alignedVectorStoreSites > 0) == specialise);
      const std::vector<float> expected =
          flattenToFloats(run(loadPipeline("blur"), image, true).output);
      const std::vector<float> got =
          flattenToFloats(runOnImage(program, inlined, image, sizes).output);
      checkSameAsUnfused(got, expected, c.width, c.height);
    }
  }
}

TEST_CASE("measurement: unfused vs fused blur at 4096x4096" * doctest::skip()) {
  const int size = 4096;
  const Image image = randomImage(size, size, 1, 11);
  const host::RunResult unfused = run(loadPipeline("blur"), image, true, 5, false);
  MESSAGE(
      "unfused blur 4096x4096, 2 kernels, best of 5: " << milliseconds(unfused.totalNanoseconds));
  const std::vector<float> expected = flattenToFloats(unfused.output);
  struct Tiling {
    int theta1, theta2;
  };
  for (const Tiling& t : std::vector<Tiling>{
           {10, 8}, {18, 16}, {34, 32}, {18, 64}, {34, 64}, {10, 128}, {6, 256}, {10, 256}}) {
    const host::RunResult fused =
        run(fusedPipeline("blur", kLocal, t.theta1, t.theta2), image, true, 5, false);
    MESSAGE("fused blur 4096x4096, tile "
            << t.theta1 - 2 << "x" << t.theta2 << " outputs (theta1=" << t.theta1
            << ", theta2=" << t.theta2 << "), best of 5: " << milliseconds(fused.totalNanoseconds));
    CHECK(flattenToFloats(fused.output) == expected);
  }
  struct PrivateTiling {
    int theta1, theta2, localX;
  };
  for (const PrivateTiling& t : std::vector<PrivateTiling>{
           {10, 16, 8}, {10, 32, 4}, {18, 16, 4}, {18, 16, 16}, {18, 32, 4}, {34, 16, 4}}) {
    const host::RunResult fused =
        run(fusedPipeline("blur", kPrivate, t.theta1, t.theta2), image, true, 5, false, t.localX);
    MESSAGE("privately fused blur 4096x4096, tile "
            << t.theta1 - 2 << "x" << t.theta2 << " outputs per work-item (theta1=" << t.theta1
            << ", theta2=" << t.theta2 << "), local " << t.localX
            << "x1, best of 5: " << milliseconds(fused.totalNanoseconds));
    CHECK(flattenToFloats(fused.output) == expected);
  }
  rewrite::RewriteContext rewriting;
  const rewrite::StrategyResult inlined =
      rewrite::pipelineFusedInlined({})(loadPipeline("blur"), rewriting);
  REQUIRE(inlined.success());
  for (int localX : {16, 64, 256, 1024}) {
    const host::RunResult fused = run(*inlined.definition, image, true, 5, false, localX);
    MESSAGE("inlined blur 4096x4096, local "
            << localX << "x1, best of 5: " << milliseconds(fused.totalNanoseconds));
    CHECK(flattenToFloats(fused.output) == expected);
  }
}
