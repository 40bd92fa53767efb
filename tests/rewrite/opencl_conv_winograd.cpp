// The conv-winograd strategy (rewrite/strategy_conv_winograd.h) on OpenCL: Listing 3
// (examples/conv.weft) rewritten into Winograd's F(2×2, 3×3) and F(4×4, 3×3) and lowered by the
// strategy's rules, checked in the interpreter and then generated with every size specialised
// and run on the default OpenCL device (PoCL) against the interpreter's direct convolution, on
// small random layers with and without padding, several κ × σ blocks and tile rows per
// work-group. The relative tolerance is the rules' own (1e-5 for m = 2, whose transforms are
// exact in binary, 1e-4 for m = 4). The generated source must show what the strategy is for:
// six kernels, three of them preparation that reads only the weights and biases (the weights
// re-laid out, their transform, the products' weights re-laid out) and three per inference
// (the input's transform, the products, the output's transform), the products as σ float<κ>
// vector variables
// updated by fma with one vload of κ weights, and no product by a zero entry of a transform
// matrix. A layer the strategy cannot take (5×5 kernels) fails with a message; a layer whose
// output the tile does not divide is refused by its constraints (typecheck). Label opencl.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/listing3_layers.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

rewrite::StrategyResult winograd(const Definition& conv, int m, int kappa, int sigma, int rows,
                                 int partialTiles = 0) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-winograd");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext rewriting;
  return strategy->make({{"m", Arith(m)},
                         {"kappa", Arith(kappa)},
                         {"sigma", Arith(sigma)},
                         {"rows", Arith(rows)},
                         {"partial_tiles", Arith(partialTiles)}})(conv, rewriting);
}

struct Block {
  int m, kappa, sigma, rows;
  int partialTiles = 0;  // 1: the output padded to whole blocks of tiles, the surplus dropped
};

void checkLayer(int channels, int size, int kernels, int padding, const std::vector<Block>& blocks,
                uint64_t seed) {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(seed);
  const testing::Listing3Layer layer =
      testing::randomListing3Layer(conv, channels, kernels, 3, size, size, padding, 1, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  for (const Block& b : blocks) {
    CAPTURE(b.m);
    CAPTURE(b.kappa);
    CAPTURE(b.sigma);
    CAPTURE(b.rows);
    CAPTURE(b.partialTiles);
    const double tolerance = b.m == 2 ? 1e-5 : 1e-4;
    rewrite::StrategyResult rewritten =
        winograd(conv, b.m, b.kappa, b.sigma, b.rows, b.partialTiles);
    REQUIRE_MESSAGE(rewritten.success(), rewritten.failure);
    const Definition& program = *rewritten.definition;
    CAPTURE(printDefinition(program));
    CHECK(testing::errorOverLargest(interpret(program, layer.inputs, layer.sizes), expected) <=
          tolerance);

    CompilePipelineOptions options;
    options.codegen.specialize = layer.sizes;
    const CompiledProgram compiled = compileToOpenCL(program, {}, options);
    CAPTURE(compiled.source);
    // The weights re-laid out per kernel, their transform, each product's weights re-laid out
    // (preparation: they read only the weights), then the input's transform, the products and
    // the output's transform.
    REQUIRE(compiled.kernels.size() == 6);
    const std::vector<bool> preparation = compiled.preparationKernels({0, 1});
    CHECK(std::count(preparation.begin(), preparation.end(), true) == 3);
    const std::string k = std::to_string(b.kappa);
    CHECK(std::regex_search(compiled.source,
                            std::regex("fma\\(\\(float" + k + "\\)\\(.*vload" + k + "\\(")));
    CHECK(!std::regex_search(compiled.source, std::regex("float" + k + " acc[0-9]+\\[")));
    CHECK(!std::regex_search(compiled.source, std::regex("[^0-9.]0\\.0f \\*")));
    CHECK(!std::regex_search(compiled.source, std::regex("\\* 0\\.0f[^0-9]")));

    host::RunResult run = host::runProgram(context(), compiled, layer.inputs, layer.sizes);
    CHECK(testing::errorOverLargest(run.output, expected) <= tolerance);
  }
}

}  // namespace

TEST_CASE("conv-winograd F(2x2, 3x3) on OpenCL matches the direct convolution") {
  checkLayer(3, 8, 8, 1, {{2, 8, 1, 1}, {2, 8, 4, 2}, {2, 4, 2, 4}}, 1);
  checkLayer(5, 10, 16, 0, {{2, 16, 2, 1}, {2, 4, 4, 2}}, 2);
}

TEST_CASE("conv-winograd F(4x4, 3x3) on OpenCL matches the direct convolution") {
  checkLayer(4, 8, 8, 1, {{4, 8, 1, 1}, {4, 8, 2, 2}}, 3);
  checkLayer(2, 10, 4, 0, {{4, 4, 2, 1}}, 4);
}

TEST_CASE("conv-winograd with partial tiles: outputs the tiles or blocks do not divide") {
  // 7×7 outputs (a ResNet's last maps): 4 or 2 tiles of 2, 2 of 4, in blocks of 1-3 tiles and
  // groups of 1-3 tile rows; the surplus outputs are computed on zeros and dropped.
  checkLayer(3, 7, 8, 1, {{2, 8, 1, 1, 1}, {2, 4, 3, 2, 1}, {4, 8, 1, 1, 1}, {4, 4, 2, 2, 1}}, 5);
  // 13×13 without padding: an 11×11 output; and 6×6 (m = 4 does not divide it).
  checkLayer(2, 13, 4, 0, {{4, 4, 2, 1, 1}, {2, 4, 4, 3, 1}}, 6);
  checkLayer(2, 6, 8, 1, {{4, 8, 1, 1, 1}}, 7);
}

TEST_CASE("conv-winograd refuses what it cannot compute") {
  const Definition conv = testing::listing3FromExample();
  // Kernels other than 3x3 or strides other than 1: the strategy fixes K = 3 and S = 1 as
  // one-value ranges of declared sizes (what the explorer's space and weft run check), and the
  // weights' type is [M][3][3][C], so 5x5 weights do not run.
  rewrite::StrategyResult rewritten = winograd(conv, 2, 8, 1, 1);
  REQUIRE(rewritten.success());
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  for (const Arith& declared : rewritten.definition->sizeDeclarations) {
    if (!declared.varHi()) continue;  // P: at least 0, no upper bound
    ranges[declared.varName()] = {*declared.varLo().constant(), *declared.varHi()->constant()};
  }
  CHECK(ranges["K"] == std::pair<int64_t, int64_t>{3, 3});
  CHECK(ranges["S"] == std::pair<int64_t, int64_t>{1, 1});
  std::mt19937_64 rng(5);
  const testing::Listing3Layer five = testing::randomListing3Layer(conv, 2, 8, 5, 8, 8, 2, 1, rng);
  CHECK_THROWS(interpret(*rewritten.definition, five.inputs, five.sizes));
  // An output the tile does not divide (10x10 for m = 4): a constraint of the program is false
  // at the layer's sizes, so the explorer's space has no point there.
  const rewrite::StrategyResult four = winograd(conv, 4, 4, 1, 1);
  REQUIRE(four.success());
  std::mt19937_64 rng10(6);
  const testing::Listing3Layer ten =
      testing::randomListing3Layer(conv, 2, 4, 3, 10, 10, 1, 1, rng10);
  bool violated = false;
  for (const Constraint& c : typecheck(*four.definition).constraints) {
    if (c.evaluate(ten.sizes) == false) violated = true;
  }
  CHECK(violated);
  CHECK_THROWS_AS(winograd(conv, 3, 8, 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(winograd(conv, 2, 5, 1, 1), std::invalid_argument);
}
