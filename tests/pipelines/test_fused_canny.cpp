// The pipeline-fused-private-chain strategy (rewrite/strategy_pipeline_chain.h) on Canny
// without hysteresis (examples/pipelines/canny.weft): the fused program equals, in the
// interpreter, the unfused program exactly (the same float operations in the same order) and the
// C++ reference of tests/support/pipeline_reference.h (labels that hang on a near tie counted
// apart, nothing else loosened) on small random and blocky images, for several tile sizes,
// including images whose sizes are not multiples of the tiles' outputs where the tiles still
// cover them (W = 9 with theta2 - 2 = 3; the constraints ask theta1 - 2 | H, theta2 - 2 | W).
// Structure: three kernels (the unfused program seven): magnitude and direction each by
// overlapped tiling with the Gaussian's tile in private memory (no local memory, no barrier),
// suppression and threshold as one, reading the temporaries in image order over W x H
// work-items. pipeline-fused-private-chain-pairs equals both the same way and is two kernels:
// (magnitude, direction) pairs from one Gaussian tile, stored as one float and one int array.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/strategy_pipeline_chain.h"
#include "tests/support/pipeline_reference.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing::pipelines;

namespace {

Definition loadCanny() {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/pipelines/canny.weft")
      .definitions.back();
}

Definition fusedCanny(const RuleArguments& factors, bool pairs = false) {
  RewriteContext context;
  StrategyResult result = pairs ? pipelineFusedPrivateChainPairs(factors)(loadCanny(), context)
                                : pipelineFusedPrivateChain(factors)(loadCanny(), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

std::vector<int32_t> run(const Definition& definition, const Image& image) {
  const Type inputType = definition.function.params()[0].paramType();
  ArithBinding sizes{{"W", image.width}, {"H", image.height}};
  Value input = valueFromFlat(inputType, sizes, image.data);
  return flattenToInts(interpret(definition, {input}, bindSizes(definition, {input}, {})));
}

int count(const Expr& e, Op op) {
  int n = 0;
  forEachNode(e, [&](const Expr& node) { n += node.isPrim(op) ? 1 : 0; });
  return n;
}

}  // namespace

TEST_CASE("fused Canny equals the unfused program and the reference") {
  const Definition canny = loadCanny();
  for (const bool pairs : {false, true}) {
    CAPTURE(pairs);
    struct Tiling {
      int theta1, theta2;  // the Gaussian's tile with its halo: theta1 - 2 rows of results
      int width, height;
    };
    const std::vector<Tiling> tilings = {{3, 3, 5, 7},    {4, 5, 9, 6},   {6, 4, 10, 12},
                                         {10, 6, 16, 16}, {5, 12, 20, 9}, {7, 3, 11, 15}};
    int compared = 0;
    size_t tieFlips = 0;
    for (const Tiling& t : tilings) {
      CAPTURE(t.theta1);
      CAPTURE(t.theta2);
      CAPTURE(t.width);
      CAPTURE(t.height);
      const Definition program =
          fusedCanny({{"theta1", Arith(t.theta1)}, {"theta2", Arith(t.theta2)}}, pairs);
      for (uint64_t seed : {1, 2, 3}) {
        const Image image = seed == 2 ? blockyImage(t.width, t.height, 1, seed)
                                      : randomImage(t.width, t.height, 1, seed);
        const std::vector<int32_t> unfused = run(canny, image);
        const std::vector<int32_t> got = run(program, image);
        CHECK(got == unfused);
        const CannyResult expected = cannyReference(image);
        const Agreement agreement =
            compareInts(got, expected.labels.data, t.width, expected.labelFragile);
        CHECK_MESSAGE(agreement.mismatches == 0, agreement.firstMismatch);
        tieFlips += agreement.tieFlips;
        ++compared;
      }
    }
    MESSAGE("labels on a near tie that differ from the reference: " << tieFlips);
    CHECK(compared == 18);
  }
}

TEST_CASE("fused Canny is three kernels, magnitude and direction by overlapped tiling") {
  const Definition canny = loadCanny();
  const Definition program = fusedCanny({{"theta1", Arith(6)}, {"theta2", Arith(10)}});
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  CHECK(count(body, Op::ToPrivate) == 2);
  CHECK(count(body, Op::MapGlb) == 4);
  CHECK(count(body, Op::ToLocal) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 32}, {"H", 16}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 3);
  CHECK(compiled.source.find("local float") == std::string::npos);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // The Gaussian's tile with its halo: theta1 x theta2 = 60 private floats per work-item.
  int tiled = 0;
  for (const auto& kernel : compiled.kernels) tiled += kernel.privateScalars >= 60 ? 1 : 0;
  CHECK(tiled == 2);
  CHECK(compileToOpenCL(canny, options).kernels.size() == 7);
}

TEST_CASE("Canny with magnitude and direction as pairs is two kernels, the pairs stored once") {
  const Definition program =
      fusedCanny({{"theta1", Arith(6)}, {"theta2", Arith(10)}}, /*pairs=*/true);
  const Expr& body = program.function.body();
  CAPTURE(printDefinition(program));
  // One Gaussian tile (one kernel A), no local memory.
  CHECK(count(body, Op::ToPrivate) == 1);
  CHECK(count(body, Op::ToLocal) == 0);
  CodegenOptions options;
  options.specialize = {{"W", 32}, {"H", 16}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  CAPTURE(compiled.source);
  CHECK(compiled.kernels.size() == 2);
  CHECK(compiled.source.find("barrier(") == std::string::npos);
  // The pairs as a structure of arrays: one float and one int temporary of W x H.
  int floats = 0, ints = 0;
  for (const auto& buffer : compiled.buffers) {
    if (buffer.role != BufferPlan::Role::Temporary) continue;
    floats += buffer.element == ScalarKind::Float;
    ints += buffer.element == ScalarKind::Int;
  }
  CHECK(floats == 1);
  CHECK(ints == 1);
  // Tile sizes left open: theta1 and theta2 once (the chain has a pair per kernel A).
  RewriteContext context;
  REQUIRE(pipelineFusedPrivateChainPairs({})(loadCanny(), context).success());
  CHECK(context.tuningVariables().size() == 2);
}

TEST_CASE("the suppression kernel reads magnitude and direction in image order, in 2D") {
  // Kernels A write their tiles through the inverse of the tile views (codegen's
  // reorderedKernelResult), so kernel B indexes the temporaries as row * W + column (no
  // tile-order % arithmetic, which PoCL turned into gathers); the threshold's map over the
  // suppression's one-element result is sequential, so kernel B is W x H work-items (not
  // 1 x W x H) and gets the interior fast path along x.
  const Definition program = fusedCanny({{"theta1", Arith(6)}, {"theta2", Arith(10)}});
  CodegenOptions options;
  options.specialize = {{"W", 32}, {"H", 16}};
  const CompiledProgram compiled = compileToOpenCL(program, options);
  REQUIRE(compiled.kernels.size() == 3);
  const KernelPlan& suppression = compiled.kernels[2];
  CHECK(suppression.dimensions == 2);
  CHECK(evaluate(suppression.globalSize[0], {}) == 32);
  CHECK(evaluate(suppression.globalSize[1], {}) == 16);
  const size_t start = compiled.source.find("kernel void " + suppression.name);
  REQUIRE(start != std::string::npos);
  const std::string text = compiled.source.substr(start);
  CAPTURE(text);
  CHECK(text.find('%') == std::string::npos);
  CHECK(text.find("_first") != std::string::npos);
}

TEST_CASE("the chain strategy refuses a pipeline without two stencils over the same windows") {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const Definition blur =
      parseFile(std::string(root ? root : ".") + "/examples/pipelines/blur.weft")
          .definitions.back();
  RewriteContext context;
  StrategyResult result = pipelineFusedPrivateChain({})(blur, context);
  CHECK_FALSE(result.success());
  CHECK(result.failure.find("pipeline-fused-private-chain") != std::string::npos);
}

