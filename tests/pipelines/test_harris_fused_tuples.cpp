// The pipeline-fused-private-tuples strategy (rewrite/strategy_pipeline_fusion.h) on Harris
// (examples/pipelines/harris.weft): the nine stages become one overlapped-tiling kernel whose
// producer is one Sobel stencil giving (Ixx, Ixy, Iyy) per pixel, kept per work-item as a private
// tile (one array per component), and whose consumer computes the three box sums and the
// response. The fused program must equal the unfused one in the interpreter exactly (the same
// float operations in the same order) on small random images for several tile sizes (theta1 - 2
// must divide H and theta2 - 2 W), be one kernel with a private tile and no local memory, and
// the strategy must refuse (fail, naming the step) programs of other shapes: blur, unsharp mask,
// Canny.
#include <doctest/doctest.h>

#include <string>
#include <tuple>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
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

Definition fusedHarris(const RuleArguments& factors) {
  RewriteContext context;
  StrategyResult result = pipelineFusedPrivateTuples(factors)(loadPipeline("harris"), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

}  // namespace

TEST_CASE("Harris fused with tuples equals the unfused program in the interpreter") {
  const Definition harris = loadPipeline("harris");
  // theta1, theta2 (the producer's tile with its halo), width, height.
  const std::vector<std::tuple<int, int, int, int>> tilings = {
      {3, 3, 5, 7}, {4, 5, 9, 6}, {6, 4, 10, 12}, {5, 10, 16, 9}, {8, 3, 1, 12}};
  int compared = 0;
  for (const auto& [theta1, theta2, width, height] : tilings) {
    CAPTURE(theta1);
    CAPTURE(theta2);
    CAPTURE(width);
    CAPTURE(height);
    const Definition fused = fusedHarris({{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}});
    typecheck(fused);
    for (uint32_t seed : {1u, 2u}) {
      const Image image = randomImage(width, height, 1, seed);
      const Value expected = interpretOnImage(harris, image);
      const Value actual = interpretOnImage(fused, image);
      CHECK_MESSAGE(expected == actual, printDefinition(fused));
      ++compared;
    }
  }
  CHECK(compared == 10);
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

TEST_CASE("pipeline-fused-private-tuples refuses pipelines of other shapes") {
  for (const std::string name : {"blur", "unsharp", "canny"}) {
    CAPTURE(name);
    RewriteContext context;
    StrategyResult result = pipelineFusedPrivateTuples(
        {{"theta1", Arith(6)}, {"theta2", Arith(10)}})(loadPipeline(name), context);
    CHECK_FALSE(result.success());
    CHECK(result.failure.find("pipeline-fused-private-tuples") != std::string::npos);
    MESSAGE(name << ": " << result.failure);
  }
}
