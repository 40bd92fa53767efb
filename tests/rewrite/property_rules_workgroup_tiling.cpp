// Property tests of conv-workgroup-tiles (rewrite/rules_workgroup_tiling.cpp): the rule is
// applied through the engine (which re-type-checks the result) to Listing 3 layers with random
// sizes (channels, kernels, kernel sizes 1 to 5, strides 1 to 3, padding 0 to 2) and random
// factors that satisfy its divisibility constraints, with each operand staged in local memory or
// not, and the rewritten program is run in the interpreter against the original on random
// real-valued inputs. The channel sums are re-associated (a chunk of TC at a time), so results
// are compared within 1e-5 of the largest output. Unit tests check where the rule must not
// apply: register tiles not given as numbers, windows that are not a sum of products, and
// tiles that do not divide the output (the result's type states the constraint that fails).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "tests/support/listing3_layers.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing;

namespace {

std::optional<Definition> tiled(const Definition& d, const RuleArguments& arguments) {
  RewriteContext context;
  return applyAt(d, ruleNamed("conv-workgroup-tiles"), Position{}, arguments, context);
}

}  // namespace

TEST_CASE("conv-workgroup-tiles equals the direct convolution on random layers") {
  std::mt19937_64 rng(29);
  int applications = 0, staged[2][2] = {{0, 0}, {0, 0}};
  while (applications < 60) {
    const int k = uniformInt(rng, 1, 5), s = uniformInt(rng, 1, 3), p = uniformInt(rng, 0, 2);
    const int c = uniformInt(rng, 1, 6), m = uniformInt(rng, 1, 6);
    const int h = uniformInt(rng, 1, 12), w = uniformInt(rng, 1, 12);
    if (h + 2 * p < k || w + 2 * p < k) continue;
    const int outH = (h + 2 * p - k) / s + 1, outW = (w + 2 * p - k) / s + 1;
    const int tk = divisorOf(rng, m), rk = divisorOf(rng, tk), tc = divisorOf(rng, c);
    const int th = divisorOf(rng, outH), tw = divisorOf(rng, outW), rp = divisorOf(rng, th * tw);
    const int stageInput = uniformInt(rng, 0, 1), stageWeights = uniformInt(rng, 0, 1);
    const Definition original = listing3Layer(c, h, w, m, k, s, p);
    CAPTURE(printDefinition(original));
    CAPTURE(tk);
    CAPTURE(rk);
    CAPTURE(th);
    CAPTURE(tw);
    CAPTURE(rp);
    CAPTURE(tc);
    const std::optional<Definition> rewritten =
        tiled(original, {{"kernels_per_group", Arith(tk)},
                         {"kernels_per_item", Arith(rk)},
                         {"tile_rows", Arith(th)},
                         {"tile_cols", Arith(tw)},
                         {"pixels_per_item", Arith(rp)},
                         {"channels_per_step", Arith(tc)},
                         {"stage_input", Arith(stageInput)},
                         {"stage_weights", Arith(stageWeights)}});
    REQUIRE(rewritten.has_value());
    CHECK(rewrittenLayerError(original, *rewritten, rng) <= 1e-5);
    ++staged[stageInput][stageWeights];
    ++applications;
  }
  MESSAGE("conv-workgroup-tiles: " << applications << " random layers checked");
  for (auto& row : staged) {
    for (int count : row) CHECK(count > 0);  // every combination of staging was drawn
  }
}

TEST_CASE("conv-workgroup-tiles leaves its tile sizes to the space when they are not given") {
  const Definition original = listing3Layer(4, 8, 8, 8, 3, 1, 1);
  const std::optional<Definition> rewritten =
      tiled(original, {{"kernels_per_item", Arith(2)}, {"pixels_per_item", Arith(4)}});
  REQUIRE(rewritten.has_value());
  const std::string text = printDefinition(*rewritten);
  for (const char* stem : {"tk", "th", "tw", "tc"}) {
    CAPTURE(stem);
    CHECK(text.find(stem) != std::string::npos);
  }
  CHECK(text.find("toLocal") != std::string::npos);
  CHECK(text.find("mapLcl(1") != std::string::npos);
}

TEST_CASE("conv-workgroup-tiles applies only where it can") {
  const Definition layer = listing3Layer(2, 6, 6, 4, 3, 1, 1);
  // The register tile is unrolled: its sizes must be given numbers.
  CHECK_FALSE(tiled(layer, {{"pixels_per_item", Arith(2)}}));
  CHECK_FALSE(tiled(layer, {{"kernels_per_item", Arith(2)}}));
  // A window reduced with something other than a sum of products.
  const Definition maxPool =
      parseProgram(
          "def f(input: [[[float]2]6]6, ks: [([[[float]2]3]3, float)]2): [[[float]4]4]2 =\n"
          "  transpose(map(rows -> transpose(rows),\n"
          "  map2D(window -> join(map(k -> reduce(k._1, (acc, q) -> max(acc, q._0 * q._1),\n"
          "        zip(join(join(window)), join(join(k._0)))), ks)), slide2D(3, 3, 1, 1, input))))\n",
          "pool.weft")
          .definitions.back();
  CHECK_FALSE(tiled(maxPool, {{"kernels_per_item", Arith(1)}, {"pixels_per_item", Arith(1)}}));
  // Tiles that do not divide the output: the result's type states the constraint that fails.
  CHECK_THROWS(tiled(layer, {{"kernels_per_item", Arith(1)},
                             {"pixels_per_item", Arith(1)},
                             {"tile_rows", Arith(4)}}));
}

namespace {

// examples/matmul.weft's product with its sizes fixed: A M×K, B K×N.
Definition matmulOfSizes(int m, int n, int k) {
  const std::string text = "def matmul(A: [[float]" + std::to_string(k) + "]" + std::to_string(m) +
                           ", B: [[float]" + std::to_string(n) + "]" + std::to_string(k) +
                           "): [[float]" + std::to_string(n) + "]" + std::to_string(m) +
                           " =\n"
                           "  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * "
                           "p._1, zip(row, col)), transpose(B))), A)\n";
  return parseProgram(text, "matmul.weft").definitions.back();
}

std::optional<Definition> allPairsTiled(const Definition& d, const RuleArguments& arguments) {
  RewriteContext context;
  return applyAt(d, ruleNamed("allpairs-workgroup-tiles"), Position{}, arguments, context);
}

}  // namespace

TEST_CASE("allpairs-workgroup-tiles equals the matrix product on random sizes") {
  std::mt19937_64 rng(31);
  int staged[2][2] = {{0, 0}, {0, 0}};
  for (int applications = 0; applications < 60; ++applications) {
    const int m = uniformInt(rng, 1, 12), n = uniformInt(rng, 1, 12), k = uniformInt(rng, 1, 12);
    const int tm = divisorOf(rng, m), tn = divisorOf(rng, n), tc = divisorOf(rng, k);
    const int rm = divisorOf(rng, tm), rn = divisorOf(rng, tn);
    const int stageRows = uniformInt(rng, 0, 1), stageCols = uniformInt(rng, 0, 1);
    const Definition original = matmulOfSizes(m, n, k);
    CAPTURE(printDefinition(original));
    CAPTURE(tm);
    CAPTURE(tn);
    CAPTURE(tc);
    CAPTURE(rm);
    CAPTURE(rn);
    const std::optional<Definition> rewritten =
        allPairsTiled(original, {{"rows_per_group", Arith(tm)},
                                 {"cols_per_group", Arith(tn)},
                                 {"depth_per_step", Arith(tc)},
                                 {"rows_per_item", Arith(rm)},
                                 {"cols_per_item", Arith(rn)},
                                 {"stage_rows", Arith(stageRows)},
                                 {"stage_cols", Arith(stageCols)}});
    REQUIRE(rewritten.has_value());
    CHECK(rewrittenLayerError(original, *rewritten, rng) <= 1e-5);
    ++staged[stageRows][stageCols];
  }
  for (auto& row : staged) {
    for (int count : row) CHECK(count > 0);  // every combination of staging was drawn
  }
}

TEST_CASE("allpairs-workgroup-tiles applies only where it can") {
  const Definition product = matmulOfSizes(4, 6, 8);
  // The register tile is unrolled: its sizes must be given numbers.
  CHECK_FALSE(allPairsTiled(product, {{"rows_per_item", Arith(2)}}));
  CHECK_FALSE(allPairsTiled(product, {{"cols_per_item", Arith(2)}}));
  // Left to the space: the tile sizes and the depth per step become tuning variables.
  const std::optional<Definition> open =
      allPairsTiled(product, {{"rows_per_item", Arith(2)}, {"cols_per_item", Arith(3)}});
  REQUIRE(open.has_value());
  const std::string text = printDefinition(*open);
  for (const char* stem : {"tm", "tn", "tc"}) {
    CAPTURE(stem);
    CHECK(text.find(stem) != std::string::npos);
  }
  // Not a sum of products (a max), or rows zipped with something other than the columns.
  const Definition maxima =
      parseProgram(
          "def f(A: [[float]8]4, B: [[float]6]8): [[float]6]4 =\n"
          "  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> max(acc, p._0 * p._1),\n"
          "        zip(row, col)), transpose(B))), A)\n",
          "max.weft")
          .definitions.back();
  CHECK_FALSE(allPairsTiled(maxima, {{"rows_per_item", Arith(1)}, {"cols_per_item", Arith(1)}}));
  const Definition selfPairs =
      parseProgram(
          "def f(A: [[float]8]4, B: [[float]6]8): [[float]6]4 =\n"
          "  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1,\n"
          "        zip(row, row)), transpose(B))), A)\n",
          "self.weft")
          .definitions.back();
  CHECK_FALSE(allPairsTiled(selfPairs, {{"rows_per_item", Arith(1)}, {"cols_per_item", Arith(1)}}));
  // Tiles that do not divide the result: the result's type states the constraint that fails.
  CHECK_THROWS(allPairsTiled(
      product,
      {{"rows_per_item", Arith(1)}, {"cols_per_item", Arith(1)}, {"rows_per_group", Arith(3)}}));
}
