// The pipeline-fused-private-tuples strategy (rewrite/strategy_pipeline_fusion.h) on Harris
// (examples/pipelines/harris.weft): the nine stages become one overlapped-tiling kernel whose
// producer is one Sobel stencil giving (Ixx, Ixy, Iyy) per pixel, kept per work-item as a private
// tile (one array per component), and whose consumer computes the three box sums and the
// response. The fused program must equal the unfused one in the interpreter exactly (the same
// float operations in the same order) on small random images for several tile sizes (theta1 - 2
// must divide H and theta2 - 2 W), be one kernel with a private tile and no local memory, and
// the strategy must refuse (fail, naming the step) programs of other shapes: blur, unsharp mask,
// Canny. pipeline-fused-sliding-window-tuples (the same fusion, each work-item walking down its
// tile with mapSeqSlide) must equal the unfused program in the same way, keep only the rows a
// box-sum window spans (3 x theta2 triples, not the tile) and refuse the same programs.
#include <doctest/doctest.h>

#include <regex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_programs.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing::pipelines;

namespace {

using StrategyMaker = Strategy (*)(const RuleArguments&);

Definition fusedHarris(const RuleArguments& factors,
                       StrategyMaker strategy = pipelineFusedPrivateTuples) {
  RewriteContext context;
  StrategyResult result = strategy(factors)(loadPipeline("harris"), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

const std::vector<std::pair<std::string, StrategyMaker>> kTupleStrategies = {
    {"pipeline-fused-private-tuples", pipelineFusedPrivateTuples},
    {"pipeline-fused-sliding-window-tuples", pipelineFusedSlidingWindowTuples}};

}  // namespace

TEST_CASE("Harris fused with tuples equals the unfused program in the interpreter") {
  const Definition harris = loadPipeline("harris");
  // theta1, theta2 (the producer's tile with its halo), width, height.
  const std::vector<std::tuple<int, int, int, int>> tilings = {
      {3, 3, 5, 7}, {4, 5, 9, 6}, {6, 4, 10, 12}, {5, 10, 16, 9}, {8, 3, 1, 12}};
  int compared = 0;
  for (const auto& [name, strategy] : kTupleStrategies) {
    CAPTURE(name);
    for (const auto& [theta1, theta2, width, height] : tilings) {
      CAPTURE(theta1);
      CAPTURE(theta2);
      CAPTURE(width);
      CAPTURE(height);
      const Definition fused =
          fusedHarris({{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}}, strategy);
      typecheck(fused);
      for (uint32_t seed : {1u, 2u}) {
        const Image image = randomImage(width, height, 1, seed);
        const Value expected = interpretOnImage(harris, image);
        const Value actual = interpretOnImage(fused, image);
        CHECK_MESSAGE(expected == actual, printDefinition(fused));
        ++compared;
      }
    }
  }
  CHECK(compared == 20);
}

TEST_CASE("Harris fused with tuples is one kernel with a private tuple tile") {
  const Definition fused = fusedHarris({{"theta1", Arith(6)}, {"theta2", Arith(10)}});
  const Expr& body = fused.function.body();
  CAPTURE(printDefinition(fused));
  CHECK(countPrims(body, Op::ToPrivate) == 1);
  CHECK(countPrims(body, Op::ToLocal) == 0);
  CHECK(countPrims(body, Op::MapGlb) == 2);
  CodegenOptions options;
  options.specialize = {{"W", 32}, {"H", 16}};
  const CompiledProgram compiled = compileToOpenCL(fused, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // The tile with its halo, theta1 x theta2 = 60 triples: 180 private floats.
  REQUIRE(compiled.kernels.size() == 1);
  CHECK(compiled.kernels[0].privateScalars >= 180);
}

TEST_CASE("Harris with a sliding window over tuples keeps three rows of triples, not the tile") {
  // theta1 = 10 rows with the halo; a row of the tile is theta2 = 10 triples.
  const Definition fused =
      fusedHarris({{"theta1", Arith(10)}, {"theta2", Arith(10)}}, pipelineFusedSlidingWindowTuples);
  const Expr& body = fused.function.body();
  CAPTURE(printDefinition(fused));
  CHECK(countPrims(body, Op::MapSeqSlide) == 1);
  CHECK(countPrims(body, Op::ToPrivate) == 0);
  CHECK(countPrims(body, Op::ToLocal) == 0);
  CHECK(countPrims(body, Op::MapGlb) == 2);
  // The window's slots hold what the producer computes per tile row: 10 triples (a view of
  // them, such as the row's 3-wide windows, would be copied into every slot).
  const TypedDefinition typed = typecheck(fused);
  int slides = 0;
  forEachNode(body, [&](const Expr& e) {
    if (!e.isPrim(Op::MapSeqSlide)) return;
    ++slides;
    CHECK(e.nats()[0] == Arith(3));
    const Type& slot = typed.typeOf(e.funs()[1].body());
    REQUIRE(slot.isArray());
    CHECK(slot.arrayLength() == Arith(10));
    CAPTURE(slot.toString());  // [[(float, float, float)]1]10: a pixel's stencil keeps its [.]1
    REQUIRE(slot.arrayElement().isArray());
    CHECK(slot.arrayElement().arrayLength() == Arith(1));
    CHECK(slot.arrayElement().arrayElement().isTuple());
  });
  CHECK(slides == 1);
  CodegenOptions options;
  options.specialize = {{"W", 32}, {"H", 16}};
  const CompiledProgram compiled = compileToOpenCL(fused, options);
  CAPTURE(compiled.source);
  REQUIRE(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // Every slot index is a constant once the walk is unrolled: the window is in registers, no
  // private array is left in the kernel.
  const std::regex privateArray(R"(float [A-Za-z_0-9]+\[)");
  CHECK_FALSE(std::regex_search(compiled.source, privateArray));
}

TEST_CASE("pipeline-fused-private-tuples leaves the tile sizes open when not given") {
  RewriteContext context;
  StrategyResult result = pipelineFusedPrivateTuples({})(loadPipeline("harris"), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  int tuning = 0;
  for (const Constraint& c : typecheck(*result.definition).constraints) {
    tuning += c.requirement().find("theta") != std::string::npos ? 1 : 0;
  }
  CHECK(tuning > 0);
  CHECK(findStrategy("pipeline-fused-private-tuples") != nullptr);
}

TEST_CASE("the tuple strategies refuse pipelines of other shapes") {
  for (const auto& [strategyName, strategy] : kTupleStrategies) {
    for (const std::string name : {"blur", "unsharp", "canny"}) {
      CAPTURE(strategyName);
      CAPTURE(name);
      RewriteContext context;
      StrategyResult result =
          strategy({{"theta1", Arith(6)}, {"theta2", Arith(10)}})(loadPipeline(name), context);
      CHECK_FALSE(result.success());
      CHECK(result.failure.find(strategyName + ":") == 0);
      MESSAGE(strategyName << " on " << name << ": " << result.failure);
    }
  }
}
