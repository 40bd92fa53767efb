// The pipeline-fused-local and pipeline-fused-private strategies (rewrite/
// strategy_pipeline_fusion.h) on the blur pipeline of examples/pipelines/blur.weft: the fused
// program equals, in the interpreter, both the unfused program and the C++ reference of
// tests/support/pipeline_reference.h on small random images, for several tile sizes (given as
// numbers, and as tuning variables substituted afterwards); it is one kernel (local: one local
// buffer holding the producer's tile with its halo and a barrier; private: the tile a private
// array of the work-item, no local memory, no barrier) where the unfused program is two; the
// tiles' constraints name the tuning variables; and a program that is not a stencil over a
// stencil is refused by both. pipeline-line-buffered (strips of whole rows walked down in
// float<v> lanes) equals the unfused program and the reference on six strip heights and widths,
// and at full size is one kernel of a work-item per strip with one walk and vectorised rows.
// pipeline-fused-inlined (blurx recomputed inside each window of blury) equals the unfused
// program and the reference, and is one kernel of a work-item per pixel; Harris is refused.
// pipeline-inlined-rows (blurx's rows recomputed where blury reads them, float<v> lanes, strips
// of rows as work-items) equals the unfused program and the reference on six strip heights and
// widths, and stores no row.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
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

enum class Placement { Local, Private };

Definition fused(const Definition& blur, const RuleArguments& factors, RewriteContext& context,
                 Placement placement = Placement::Local) {
  StrategyResult result = placement == Placement::Local
                              ? pipelineFusedLocal(factors)(blur, context)
                              : pipelineFusedPrivate(factors)(blur, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

}  // namespace

TEST_CASE("fused blur equals the unfused blur and the reference for several tile sizes") {
  const Definition blur = loadPipeline("blur");
  struct Tiling {
    int theta1, theta2;  // producer tile with halo: theta1 - 2 output rows, theta2 columns
    int width, height;
  };
  const std::vector<Tiling> tilings = {{3, 1, 5, 7},    {4, 4, 8, 6}, {6, 3, 9, 8},
                                       {10, 8, 16, 16}, {5, 2, 6, 9}, {34, 32, 32, 32}};
  int compared = 0;
  for (const Placement placement : {Placement::Local, Placement::Private})
    for (const Tiling& t : tilings) {
      CAPTURE(placement == Placement::Local);
      CAPTURE(t.theta1);
      CAPTURE(t.theta2);
      RewriteContext context;
      const Definition program = fused(
          blur, {{"theta1", Arith(t.theta1)}, {"theta2", Arith(t.theta2)}}, context, placement);
      for (uint64_t seed : {1, 2}) {
        const Image image = seed == 1 ? randomImage(t.width, t.height, 1, seed)
                                      : blockyImage(t.width, t.height, 1, seed);
        const std::vector<float> unfused = flattenToFloats(interpretOnImage(blur, image));
        const std::vector<float> got = flattenToFloats(interpretOnImage(program, image));
        REQUIRE(got.size() == unfused.size());
        // The same operations in the same order: the fused program's floats are identical.
        CHECK(got == unfused);
        const Agreement agreement =
            compareFloats(got, blurReference(image).data, t.width, t.height);
        CHECK(agreement.mismatches == 0);
        ++compared;
      }
    }
  CHECK(compared == 24);
}

TEST_CASE("with tile sizes left open the fused blur has tuning variables and their constraints") {
  const Definition blur = loadPipeline("blur");
  for (const Placement placement : {Placement::Local, Placement::Private}) {
    CAPTURE(placement == Placement::Local);
    RewriteContext context;
    const Definition program = fused(blur, {}, context, placement);
    const std::vector<Arith>& tuning = context.tuningVariables();
    REQUIRE(tuning.size() == 2);
    const TypedDefinition typed = typecheck(program);
    CHECK(typed.type.toString() == "[[float]W]H");
    std::string constraints;
    for (const Constraint& c : typed.constraints) constraints += c.formula() + "\n";
    CAPTURE(constraints);
    CHECK(constraints.find(tuning[0].varName()) != std::string::npos);
    CHECK(constraints.find(tuning[1].varName()) != std::string::npos);
    // Values satisfying them: theta1 - 2 divides H, theta2 divides W.
    for (auto [theta1, theta2, width, height] :
         std::vector<std::array<int, 4>>{{4, 3, 6, 4}, {7, 2, 4, 10}, {3, 4, 8, 3}}) {
      const ArithBinding binding{{tuning[0].varName(), theta1}, {tuning[1].varName(), theta2}};
      const Image image = randomImage(width, height, 1, 7 + theta1);
      const std::vector<float> expected = flattenToFloats(interpretOnImage(blur, image));
      CHECK(flattenToFloats(interpretOnImage(program, image, binding)) == expected);
    }
  }
}

TEST_CASE("the fused blur is one kernel with the producer's tile in local memory") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  const Definition program = fused(blur, {{"theta1", Arith(10)}, {"theta2", Arith(8)}}, context);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  // The stage let is inlined; the two lets left name a window inside each stage's function.
  CHECK_FALSE(body.isPrim(Op::Let));
  CHECK(countPrims(body, Op::Let) == 2);
  CHECK(countPrims(body, Op::MapWrg) == 2);
  CHECK(countPrims(body, Op::MapLcl) == 4);
  CHECK(countPrims(body, Op::ToLocal) == 1);
  CHECK(countPrims(body, Op::MapGlb) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 64}, {"H", 64}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("local float") != std::string::npos);
  CHECK(compiled.source.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos);
  // The unfused program is two kernels.
  CHECK(compileToOpenCL(blur, options).kernels.size() == 2);
}

TEST_CASE("the privately fused blur is one kernel with the producer's tile in private memory") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  const Definition program =
      fused(blur, {{"theta1", Arith(6)}, {"theta2", Arith(4)}}, context, Placement::Private);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  CHECK_FALSE(body.isPrim(Op::Let));
  CHECK(countPrims(body, Op::MapGlb) == 2);
  CHECK(countPrims(body, Op::ToPrivate) == 1);
  CHECK(countPrims(body, Op::ToLocal) == 0);
  CHECK(countPrims(body, Op::MapWrg) + countPrims(body, Op::MapLcl) == 0);
  // Every loop of the work-item is unrolled (constant trip counts).
  CHECK(countPrims(body, Op::MapSeq) == 0);
  CHECK(countPrims(body, Op::MapSeqUnroll) > 0);
  CodegenOptions options;
  options.specialize = {{"W", 64}, {"H", 64}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 1);
  // The producer's tile with its halo: theta1 x theta2 = 24 private floats (unrolled, code
  // generation names them one by one).
  CHECK(compiled.kernels[0].privateScalars >= 24);
  CHECK(compiled.source.find("_23 = ") != std::string::npos);
  CHECK(compiled.source.find("local float") == std::string::npos);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // A work-item per tile: (H / (theta1 - 2)) x (W / theta2) work-items.
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 64 / 4);
  CHECK(evaluate(compiled.kernels[0].globalSize[1], {}) == 64 / 4);
}

namespace {

// Strips of theta rows with their halo (theta - 2 output rows), float<v>, on a width x height
// image.
struct Strips {
  int theta, v;
  int width, height;
};

// The blur `walk` gives for each case equals the unfused blur (interpreter) and the C++
// reference on a random and a blocky image; returns the comparisons made.
int checkStripsAgainstUnfused(const std::function<Strategy(const RuleArguments&)>& walk,
                              const std::vector<Strips>& cases) {
  const Definition blur = loadPipeline("blur");
  int compared = 0;
  for (const Strips& c : cases) {
    CAPTURE(c.theta);
    CAPTURE(c.v);
    RewriteContext context;
    StrategyResult result = walk({{"theta", Arith(c.theta)}, {"v", Arith(c.v)}})(blur, context);
    REQUIRE_MESSAGE(result.success(), result.failure);
    for (uint64_t seed : {1, 2}) {
      const Image image = seed == 1 ? randomImage(c.width, c.height, 1, seed)
                                    : blockyImage(c.width, c.height, 1, seed);
      const std::vector<float> unfused = flattenToFloats(interpretOnImage(blur, image));
      const std::vector<float> got = flattenToFloats(interpretOnImage(*result.definition, image));
      REQUIRE(got.size() == unfused.size());
      CHECK(got == unfused);
      const Agreement agreement = compareFloats(got, blurReference(image).data, c.width, c.height);
      CHECK(agreement.mismatches == 0);
      ++compared;
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("blur line-buffered along whole rows equals the unfused blur and the reference") {
  CHECK(checkStripsAgainstUnfused(pipelineLineBuffered, {{3, 2, 4, 5},
                                                         {4, 4, 8, 6},
                                                         {7, 4, 12, 10},
                                                         {10, 8, 16, 16},
                                                         {5, 2, 6, 9},
                                                         {34, 4, 8, 32}}) == 12);
}

TEST_CASE("the line-buffered blur walks strips of whole rows in float<v> lanes") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  StrategyResult result =
      pipelineLineBuffered({{"theta", Arith(66)}, {"v", Arith(16)}})(blur, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  const Expr& body = result.definition->function.body();
  CAPTURE(printDefinition(*result.definition));
  // Strips as work-items, one walk down each strip, both rows' maps vectorised, no unrolled
  // loop and no 2-D tile.
  CHECK(countPrims(body, Op::MapGlb) == 1);
  CHECK(countPrims(body, Op::MapSeqSlide) == 1);
  CHECK(countPrims(body, Op::Vectorize) == 2);
  CHECK(countPrims(body, Op::MapSeqUnroll) == 0);
  CHECK(countPrims(body, Op::ToPrivate) + countPrims(body, Op::ToLocal) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 4096}, {"H", 4096}};
  const CompiledProgram compiled = compileToOpenCL(*result.definition, options);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("vload16") != std::string::npos);
  // The ring: 3 rows of 4096 values of the producer.
  CHECK(compiled.kernels[0].privateScalars >= 3 * 4096);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 4096 / 64);
  // A program with a pointwise stage after the stencils is the other strategy's.
  CHECK_FALSE(pipelineLineBuffered({{"theta", Arith(12)}, {"v", Arith(4)}})(loadPipeline("unsharp"),
                                                                            context)
                  .success());
  CHECK_THROWS_AS(pipelineLineBuffered({{"theta", Arith(66)}}), std::invalid_argument);
}

TEST_CASE("blur walked by column blocks equals the unfused blur and the reference") {
  // Blocks of v columns: images one block wide, two, and three.
  CHECK(checkStripsAgainstUnfused(
            pipelineColumnWalk, {{3, 2, 4, 5}, {4, 4, 8, 6}, {7, 4, 12, 10}, {10, 8, 8, 16}}) == 8);
}

TEST_CASE("the column-walk blur keeps its ring of three vectors in registers") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  StrategyResult result =
      pipelineColumnWalk({{"theta", Arith(10)}, {"v", Arith(16)}})(blur, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  const Expr& body = result.definition->function.body();
  CAPTURE(printDefinition(*result.definition));
  // Strips as work-items, one walk per column block, both rows' maps vectorised.
  CHECK(countPrims(body, Op::MapGlb) == 1);
  CHECK(countPrims(body, Op::MapSeqSlide) == 1);
  CHECK(countPrims(body, Op::Vectorize) == 2);
  CodegenOptions options;
  options.specialize = {{"W", 4096}, {"H", 4096}};
  const CompiledProgram compiled = compileToOpenCL(*result.definition, options);
  CHECK(compiled.kernels.size() == 1);
  CAPTURE(compiled.source);
  // The ring is three float16 variables (an array of vectors, promoted), not a float array
  // read through vload16, and the inner blocks read plain vectors under a per-block check.
  CHECK(compiled.source.find("float16 win") != std::string::npos);
  CHECK(compiled.source.find("vload16(0, win") == std::string::npos);
  CHECK(compiled.source.find("if (16*i") != std::string::npos);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 4096 / 8);
  // Its taps' vector reads could be aligned (float16, 64 bytes); with the option they are: the
  // taps x - 1 and x + 1 shuffled from the aligned vectors around them.
  CHECK(compiled.widestRealignableReadBytes == 64);
  CHECK(compiled.source.find("shuffle2(") == std::string::npos);
  options.alignedVectorReads = true;
  const CompiledProgram aligned = compileToOpenCL(*result.definition, options);
  CHECK(aligned.source.find("shuffle2((*(const global float16*)(") != std::string::npos);
  CHECK(aligned.source.find("(uint16)(15, 16, ") != std::string::npos);
  CHECK(aligned.source.find("(uint16)(1, 2, ") != std::string::npos);
  CHECK_FALSE(
      pipelineColumnWalk({{"theta", Arith(12)}, {"v", Arith(4)}})(loadPipeline("unsharp"), context)
          .success());
}

TEST_CASE("blur inlined is one stencil of a work-item per pixel equal to the unfused blur") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  StrategyResult result = pipelineFusedInlined({})(blur, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  for (const auto& [width, height] : std::vector<std::pair<int, int>>{{7, 5}, {1, 4}, {16, 3}}) {
    for (uint64_t seed : {1, 2}) {
      const Image image =
          seed == 1 ? randomImage(width, height, 1, seed) : blockyImage(width, height, 1, seed);
      const std::vector<float> got = flattenToFloats(interpretOnImage(*result.definition, image));
      CHECK(got == flattenToFloats(interpretOnImage(blur, image)));
      CHECK(compareFloats(got, blurReference(image).data, width, height).mismatches == 0);
    }
  }
  // Rows and pixels as work-items, the window's taps unrolled: no tile, no walk, no lets.
  const Expr& body = result.definition->function.body();
  CAPTURE(printDefinition(*result.definition));
  CHECK(countPrims(body, Op::MapGlb) == 2);
  CHECK(countPrims(body, Op::MapSeqSlide) + countPrims(body, Op::ToPrivate) +
            countPrims(body, Op::ToLocal) ==
        0);
  CodegenOptions options;
  options.specialize = {{"W", 4096}, {"H", 4096}};
  const CompiledProgram compiled = compileToOpenCL(*result.definition, options);
  REQUIRE(compiled.kernels.size() == 1);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 4096);
  CHECK(evaluate(compiled.kernels[0].globalSize[1], {}) == 4096);
  CHECK(compiled.source.find(" for (") == std::string::npos);
  // Harris's other stages would stay apart, and unsharp mask has no stencil over a stencil
  // without its pointwise stages: refused, naming why.
  StrategyResult harris = pipelineFusedInlined({})(loadPipeline("harris"), context);
  CHECK_FALSE(harris.success());
  CHECK(harris.failure.find("not one stencil") != std::string::npos);
  CHECK_FALSE(pipelineFusedInlined({})(loadPipeline("unsharp"), context).success());
  CHECK_THROWS_AS(pipelineFusedInlined({{"theta", Arith(3)}}), std::invalid_argument);
}

TEST_CASE("blur inlined along whole rows equals the unfused blur and the reference") {
  const Definition blur = loadPipeline("blur");
  struct Strips {
    int rows, v;  // output rows per work-item, float<v>
    int width, height;
  };
  const std::vector<Strips> cases = {{1, 2, 4, 5},    {2, 4, 8, 6}, {5, 4, 12, 10},
                                     {16, 8, 16, 16}, {3, 2, 6, 9}, {32, 4, 8, 32}};
  int compared = 0;
  for (const Strips& c : cases) {
    CAPTURE(c.rows);
    CAPTURE(c.v);
    RewriteContext context;
    StrategyResult result =
        pipelineInlinedRows({{"rows", Arith(c.rows)}, {"v", Arith(c.v)}})(blur, context);
    REQUIRE_MESSAGE(result.success(), result.failure);
    for (uint64_t seed : {1, 2}) {
      const Image image = seed == 1 ? randomImage(c.width, c.height, 1, seed)
                                    : blockyImage(c.width, c.height, 1, seed);
      const std::vector<float> got = flattenToFloats(interpretOnImage(*result.definition, image));
      CHECK(got == flattenToFloats(interpretOnImage(blur, image)));
      CHECK(compareFloats(got, blurReference(image).data, c.width, c.height).mismatches == 0);
      ++compared;
    }
  }
  CHECK(compared == 12);
}

TEST_CASE("the row-inlined blur is strips of whole rows of one lane function, nothing stored") {
  const Definition blur = loadPipeline("blur");
  RewriteContext context;
  StrategyResult result =
      pipelineInlinedRows({{"rows", Arith(64)}, {"v", Arith(16)}})(blur, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  const Expr& body = result.definition->function.body();
  CAPTURE(printDefinition(*result.definition));
  // Strips as work-items, one vectorised lane function reading the nine taps, no walk, no
  // private or local copy, no let (no producer row is stored).
  CHECK(countPrims(body, Op::MapGlb) == 1);
  CHECK(countPrims(body, Op::Vectorize) == 1);
  CHECK(countPrims(body, Op::MapSeqSlide) + countPrims(body, Op::ToPrivate) +
            countPrims(body, Op::ToLocal) + countPrims(body, Op::Let) ==
        0);
  CodegenOptions options;
  options.specialize = {{"W", 4096}, {"H", 4096}};
  const CompiledProgram compiled = compileToOpenCL(*result.definition, options);
  REQUIRE(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("vload16") != std::string::npos);
  CHECK(compiled.kernels[0].privateScalars < 64);
  CHECK(evaluate(compiled.kernels[0].globalSize[0], {}) == 4096 / 64);
  // With the strip height open it is a tuning variable.
  RewriteContext openContext;
  REQUIRE(pipelineInlinedRows({{"v", Arith(4)}})(blur, openContext).success());
  CHECK(openContext.tuningVariables().size() == 1);
  // Unsharp mask's pointwise stages are not blur's shape; a vector width is needed.
  CHECK_FALSE(pipelineInlinedRows({{"v", Arith(4)}})(loadPipeline("unsharp"), context).success());
  CHECK_THROWS_AS(pipelineInlinedRows({{"rows", Arith(8)}}), std::invalid_argument);
  CHECK_THROWS_AS(pipelineInlinedRows({{"theta", Arith(8)}, {"v", Arith(4)}}),
                  std::invalid_argument);
}

TEST_CASE("pipeline-fused-local refuses a single stencil stage") {
  const Definition single = parseProgram(R"(
fun mean3(a: float, b: float, c: float): float = (a + b + c) / 3.0f
def blurx(input: [[float]W]H): [[float]W]H =
  map(row -> join(row),
    map2D(nbh -> let(w -> map(t -> mean3(t._0, t._1, t._2),
                              zip(crop(0, 2, w), crop(1, 1, w), crop(2, 0, w))),
                     join(nbh)),
          slide2D(1, 3, 1, 1, pad2D(1, 1, 0, 0, clamp, input))))
)",
                                         "single")
                                .definitions.back();
  RewriteContext context;
  StrategyResult result = pipelineFusedLocal({})(single, context);
  CHECK_FALSE(result.success());
  CHECK(result.failure.find("pipeline-fused-local") != std::string::npos);
  StrategyResult privately = pipelineFusedPrivate({})(single, context);
  CHECK_FALSE(privately.success());
  CHECK(privately.failure.find("pipeline-fused-private") != std::string::npos);
}
