// Property tests of the Winograd rules (rewrite/rules_winograd.cpp): conv-winograd-2x2 and
// conv-winograd-4x4.
//
// The transform matrices are checked first on their own: y = Aᵀ[(G g) ⊙ (Bᵀ d)] must be the
// correlation of 3 taps g with α values d. Then each rule is applied through the engine (which
// re-type-checks the result) to Listing 3 layers with random sizes (channels, kernels, padding
// 0 to 2, heights and widths whose outputs the tile size divides) and random real-valued inputs,
// and the rewritten program is run in the interpreter against the original. The sums are
// re-associated and the transforms' entries are rounded to float, so results are compared within
// a tolerance relative to the largest output: 1e-5 for F(2×2, 3×3), whose entries (±1, ±1/2) are
// exact, and 1e-4 for F(4×4, 3×3) (1/6, 1/24, ...). Unit tests check where the rules must not
// match: other kernel sizes, strides, and windows that are not a sum of products.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/rules_winograd.h"
#include "tests/support/listing3_layers.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing;

namespace {

std::optional<Definition> applyAtRoot(const Definition& d, const std::string& rule) {
  RewriteContext context;
  return applyAt(d, ruleNamed(rule), Position{}, {}, context);
}

}  // namespace

TEST_CASE("the Winograd matrices compute a 3-tap correlation") {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> value(-1, 1);
  for (int64_t m : {2, 4}) {
    const WinogradMatrices& f = winogradMatrices(m);
    const size_t alpha = static_cast<size_t>(m + 2);
    REQUIRE(f.bt.size() == alpha);
    REQUIRE(f.g.size() == alpha);
    REQUIRE(f.at.size() == static_cast<size_t>(m));
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> g(3), d(alpha);
      for (double& x : g) x = value(rng);
      for (double& x : d) x = value(rng);
      for (size_t i = 0; i < static_cast<size_t>(m); ++i) {
        double winograd = 0;
        for (size_t xi = 0; xi < alpha; ++xi) {
          double u = 0, v = 0;
          for (size_t j = 0; j < 3; ++j) u += f.g[xi][j] * g[j];
          for (size_t j = 0; j < alpha; ++j) v += f.bt[xi][j] * d[j];
          winograd += f.at[i][xi] * u * v;
        }
        double direct = 0;
        for (size_t j = 0; j < 3; ++j) direct += g[j] * d[i + j];
        CHECK(winograd == doctest::Approx(direct).epsilon(1e-12));
      }
    }
  }
  CHECK_THROWS_AS(winogradMatrices(3), std::invalid_argument);
}

TEST_CASE("conv-winograd-2x2 and -4x4 equal the direct convolution on random layers") {
  std::mt19937_64 rng(11);
  for (int64_t m : {2, 4}) {
    const std::string rule = m == 2 ? "conv-winograd-2x2" : "conv-winograd-4x4";
    const double tolerance = m == 2 ? 1e-5 : 1e-4;
    int applications = 0;
    while (applications < 50) {
      const int c = uniformInt(rng, 1, 4), kernels = uniformInt(rng, 1, 4);
      const int p = uniformInt(rng, 0, 2);
      // Outputs of 1 to 3 tiles each way: H + 2P - 2 = m · tiles.
      const int h = static_cast<int>(m) * uniformInt(rng, 1, 3) + 2 - 2 * p;
      const int w = static_cast<int>(m) * uniformInt(rng, 1, 3) + 2 - 2 * p;
      if (h < 1 || w < 1) continue;
      const Definition original = listing3Layer(c, h, w, kernels, 3, 1, p);
      CAPTURE(rule);
      CAPTURE(printDefinition(original));
      std::optional<Definition> rewritten = applyAtRoot(original, rule);
      REQUIRE(rewritten.has_value());
      CHECK(testing::rewrittenLayerError(original, *rewritten, rng) <= tolerance);
      ++applications;
    }
    MESSAGE(rule << ": " << applications << " random layers checked");
  }
}

TEST_CASE("the Winograd rules match only 3x3 stride-1 sums of products") {
  CHECK_FALSE(applyAtRoot(listing3Layer(2, 6, 6, 2, 5, 1, 2), "conv-winograd-2x2"));
  CHECK_FALSE(applyAtRoot(listing3Layer(2, 9, 9, 2, 3, 2, 1), "conv-winograd-2x2"));
  CHECK_FALSE(applyAtRoot(listing3Layer(2, 6, 6, 2, 1, 1, 0), "conv-winograd-4x4"));
  // A window reduced with something other than a sum of products.
  const Definition maxPool =
      parseProgram(
          "def f(input: [[[float]2]6]6, ks: [([[[float]2]3]3, float)]2): [[[float]2]4]4 =\n"
          "  map2D(window -> join(map(k -> reduce(k._1, (acc, q) -> max(acc, q._0 * q._1),\n"
          "        zip(join(join(window)), join(join(k._0)))), ks)), slide2D(3, 3, 1, 1, input))\n",
          "pool.weft")
          .definitions.back();
  CHECK_FALSE(applyAtRoot(maxPool, "conv-winograd-2x2"));
  // Outputs the tile does not divide: the rule applies, and the result's type states the
  // constraint that fails at these sizes.
  CHECK_THROWS(applyAtRoot(listing3Layer(2, 5, 5, 2, 3, 1, 1), "conv-winograd-2x2"));
}
