// The pipeline-fused-private-pointwise strategy (rewrite/strategy_pipeline_fusion.h) on the
// unsharp mask of examples/pipelines/unsharp.weft: the fused program equals, in the
// interpreter, the unfused program exactly (the same float operations in the same order) and
// the C++ reference of tests/support/pipeline_reference.h (threshold ties counted apart) on
// small random and blocky 3-channel images, for several tile sizes including images whose
// sizes are odd (3, 9, 15: tiles chosen to divide them, as the tiles' constraints require); it
// is one OpenCL kernel (the unfused program four) with the producer's tile in private memory,
// a work-item per tile and plane, and no local memory. pipeline-fused-sliding-window-pointwise
// (the first stencil carrying the input pixel, each work-item walking down its tile) passes
// the same comparisons and is one kernel with a mapSeqSlide and no private tile.
// pipeline-line-buffered-pointwise (strips of whole rows, float<v> lanes) equals the unfused
// program on six strip heights and widths, and at full size is one kernel of a work-item per
// strip and plane with one walk, both rows' maps vectorised and nothing unrolled.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_programs.h"
#include "tests/support/pipeline_reference.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing::pipelines;

namespace {

using StrategyMaker = Strategy (*)(const RuleArguments&);

Definition fusedUnsharp(const RuleArguments& factors, RewriteContext& context,
                        StrategyMaker strategy = pipelineFusedPrivatePointwise) {
  StrategyResult result = strategy(factors)(loadPipeline("unsharp"), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

}  // namespace

TEST_CASE("fused unsharp mask equals the unfused program and the reference") {
  const Definition unsharp = loadPipeline("unsharp");
  struct Tiling {
    int theta1, theta2;  // the producer's tile with its halo: theta1 - 4 output rows, theta2
    int width, height;   // columns
  };
  const std::vector<Tiling> tilings = {{5, 1, 3, 5},    {6, 4, 8, 6}, {9, 3, 9, 10},
                                       {12, 8, 16, 16}, {7, 2, 6, 9}, {20, 5, 15, 32}};
  int compared = 0;
  for (StrategyMaker strategy :
       {pipelineFusedPrivatePointwise, pipelineFusedSlidingWindowPointwise}) {
  for (const Tiling& t : tilings) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    CAPTURE(strategy == pipelineFusedSlidingWindowPointwise);
    RewriteContext context;
    const Definition program = fusedUnsharp(
        {{"theta1", Arith(t.theta1)}, {"theta2", Arith(t.theta2)}}, context, strategy);
    for (uint64_t seed : {1, 2}) {
      const Image image = seed == 1 ? randomImage(t.width, t.height, 3, seed)
                                    : blockyImage(t.width, t.height, 3, seed);
      const std::vector<float> unfused = flattenToFloats(interpretOnImage(unsharp, image));
      const std::vector<float> got = flattenToFloats(interpretOnImage(program, image));
      REQUIRE(got.size() == unfused.size());
      CHECK(got == unfused);
      const UnsharpResult expected = unsharpReference(image);
      const Agreement agreement = compareFloats(got, expected.output.data, t.width, t.height,
                                                expected.scale, expected.fragile);
      CHECK_MESSAGE(agreement.mismatches == 0, agreement.firstMismatch);
      ++compared;
    }
  }
  }
  CHECK(compared == 24);
}

TEST_CASE("the sliding-window unsharp mask is one kernel walking down its tiles") {
  RewriteContext context;
  const Definition program = fusedUnsharp({{"theta1", Arith(12)}, {"theta2", Arith(4)}}, context,
                                          pipelineFusedSlidingWindowPointwise);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  CHECK_FALSE(body.isPrim(Op::Let));
  CHECK(countPrims(body, Op::MapGlb) == 3);
  CHECK(countPrims(body, Op::MapSeqSlide) == 1);
  CHECK(countPrims(body, Op::ToPrivate) + countPrims(body, Op::ToLocal) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 64}, {"H", 32}, {"C", 3}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // The ring: 5 rows of theta2 (value, pixel) pairs, not the 12 x 4 tile.
  CHECK(compiled.kernels[0].privateScalars >= 5 * 4 * 2);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 64 / 4);
  CHECK(evaluate(compiled.kernels[0].globalSize[1], {}) == 32 / 8);
  CHECK(evaluate(compiled.kernels[0].globalSize[2], {}) == 3);
}

TEST_CASE("unsharp mask line-buffered along whole rows equals the unfused program") {
  const Definition unsharp = loadPipeline("unsharp");
  struct Strips {
    int theta, v;  // strips of theta rows with their halo (theta - 4 output rows), float<v>
    int width, height;
  };
  const std::vector<Strips> cases = {{5, 2, 4, 5},   {6, 4, 8, 6},  {9, 4, 12, 10},
                                     {12, 8, 16, 16}, {7, 2, 6, 9}, {36, 4, 8, 32}};
  int compared = 0;
  for (const Strips& c : cases) {
    CAPTURE(c.theta);
    CAPTURE(c.v);
    RewriteContext context;
    const Definition program = fusedUnsharp({{"theta", Arith(c.theta)}, {"v", Arith(c.v)}},
                                            context, pipelineLineBufferedPointwise);
    for (uint64_t seed : {1, 2}) {
      const Image image = seed == 1 ? randomImage(c.width, c.height, 3, seed)
                                    : blockyImage(c.width, c.height, 3, seed);
      const std::vector<float> unfused = flattenToFloats(interpretOnImage(unsharp, image));
      const std::vector<float> got = flattenToFloats(interpretOnImage(program, image));
      REQUIRE(got.size() == unfused.size());
      CHECK(got == unfused);
      ++compared;
    }
  }
  CHECK(compared == 12);
}

TEST_CASE("the line-buffered unsharp mask walks strips of whole rows in float<v> lanes") {
  RewriteContext context;
  const Definition program = fusedUnsharp({{"theta", Arith(52)}, {"v", Arith(16)}}, context,
                                          pipelineLineBufferedPointwise);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  // Planes and strips as work-items, one walk down each strip, both rows' maps vectorised, no
  // unrolled loop and no 2-D tile.
  CHECK(countPrims(body, Op::MapGlb) == 2);
  CHECK(countPrims(body, Op::MapSeqSlide) == 1);
  CHECK(countPrims(body, Op::Vectorize) == 2);
  CHECK(countPrims(body, Op::MapSeqUnroll) == 0);
  CHECK(countPrims(body, Op::ToPrivate) + countPrims(body, Op::ToLocal) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 4256}, {"H", 2832}, {"C", 3}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("vload16") != std::string::npos);
  // The ring: 5 rows of 4256 (value, pixel) pairs.
  CHECK(compiled.kernels[0].privateScalars >= 5 * 4256 * 2);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 2832 / 48);
  CHECK(evaluate(compiled.kernels[0].globalSize[1], {}) == 3);
  // Without a vector width the strategy does not start.
  CHECK_THROWS_AS(pipelineLineBufferedPointwise({{"theta", Arith(52)}}), std::invalid_argument);
}

TEST_CASE("the fused unsharp mask is one kernel with the producer's tile in private memory") {
  const Definition unsharp = loadPipeline("unsharp");
  RewriteContext context;
  const Definition program = fusedUnsharp({{"theta1", Arith(12)}, {"theta2", Arith(4)}}, context);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  CHECK_FALSE(body.isPrim(Op::Let));
  CHECK(countPrims(body, Op::MapGlb) == 3);
  CHECK(countPrims(body, Op::ToPrivate) == 1);
  CHECK(countPrims(body, Op::ToLocal) == 0);
  CHECK(countPrims(body, Op::MapWrg) + countPrims(body, Op::MapLcl) == 0);
  CHECK(countPrims(body, Op::MapSeq) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 64}, {"H", 32}, {"C", 3}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 1);
  // The producer's tile with its halo: theta1 x theta2 = 48 private floats.
  CHECK(compiled.kernels[0].privateScalars >= 48);
  CHECK(compiled.source.find("local float") == std::string::npos);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // A work-item per tile and plane: (W / theta2) x (H / (theta1 - 4)) x C.
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 64 / 4);
  CHECK(evaluate(compiled.kernels[0].globalSize[1], {}) == 32 / 8);
  CHECK(evaluate(compiled.kernels[0].globalSize[2], {}) == 3);
  CHECK(compileToOpenCL(unsharp, options).kernels.size() == 4);
}
