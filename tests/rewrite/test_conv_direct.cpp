// The named strategy conv-direct (rewrite/strategies.h) applied to examples/conv.weft: with
// several valid parameter sets on a small layer (C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1,
// tiles θ = 5) the rewritten definition type-checks, has the placements of the paper's
// Table 1 (mapWrg over tile rows, tiles and kernel groups; mapLcl over window groups and
// chunks) and computes the original layer within 1e-4 absolute + 1e-4 relative (chunks
// reassociate the window sums) on real-valued random inputs. With no parameters the strategy
// creates the tuning variables theta, rho, kappa, sigma, omega and coalesce, and binding them to
// valid values gives the same layer.
#include <doctest/doctest.h>

#include <algorithm>

#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/expr_counting.h"
#include "tests/support/listing3_layers.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

using testing::countPrims;

constexpr double kTolerance = 1e-4;

using Layer = testing::Listing3Layer;
using testing::randomListing3Layer;

struct Parameters {
  int rho, kappa, sigma, omega, coalesce, v, unroll;
};

std::string describe(const Parameters& p) {
  return "rho=" + std::to_string(p.rho) + " kappa=" + std::to_string(p.kappa) +
         " sigma=" + std::to_string(p.sigma) + " omega=" + std::to_string(p.omega) +
         " coalesce=" + std::to_string(p.coalesce) + " v=" + std::to_string(p.v) +
         " unroll=" + std::to_string(p.unroll);
}

}  // namespace

TEST_CASE("conv-direct on examples/conv.weft computes the same layer for valid parameters") {
  const Definition conv = testing::listing3FromExample();
  const NamedStrategy* strategy = findStrategy("conv-direct");
  REQUIRE(strategy != nullptr);
  // C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1: the padded input is 8×8, windows of
  // K·K·C = 18 values. Tiles θ = 5 step θ - (K - S) = 3 cover 8 + ρ exactly for ρ in {0, 3},
  // with 3×3 = 9 windows per tile: σ | 9, κ | M = 4, ω | 18, v | ω.
  std::mt19937_64 rng(2024);
  std::vector<Parameters> cases = {
      {0, 1, 1, 3, 0, 1, 0},  {0, 2, 3, 6, 1, 2, 0}, {3, 4, 9, 18, 0, 2, 1},
      {3, 1, 3, 18, 1, 1, 1}, {0, 4, 9, 6, 0, 1, 1}, {3, 2, 1, 3, 1, 1, 0},
  };
  // And random combinations of the valid values.
  const int rhos[] = {0, 3}, kappas[] = {1, 2, 4}, sigmas[] = {1, 3, 9}, omegas[] = {3, 6, 18};
  auto pickOf = [&](const auto& values) {
    const int count = static_cast<int>(std::size(values));
    return values[std::uniform_int_distribution<int>(0, count - 1)(rng)];
  };
  for (int i = 0; i < 3; ++i) {  // each case takes about a second (rewrite + interpreter)
    Parameters p{pickOf(rhos),
                 pickOf(kappas),
                 pickOf(sigmas),
                 pickOf(omegas),
                 std::uniform_int_distribution<int>(0, 1)(rng),
                 1,
                 std::uniform_int_distribution<int>(0, 1)(rng)};
    if (p.omega % 2 == 0 && std::uniform_int_distribution<int>(0, 1)(rng) == 1) p.v = 2;
    cases.push_back(p);
  }
  const Layer layer = randomListing3Layer(conv, 2, 4, 3, 6, 6, 1, 1, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  for (const Parameters& p : cases) {
    CAPTURE(describe(p));
    RewriteContext context;
    StrategyResult result = strategy->make({{"theta", Arith(5)},
                                            {"rho", Arith(p.rho)},
                                            {"kappa", Arith(p.kappa)},
                                            {"sigma", Arith(p.sigma)},
                                            {"omega", Arith(p.omega)},
                                            {"coalesce", Arith(p.coalesce)},
                                            {"v", Arith(p.v)},
                                            {"unroll", Arith(p.unroll)}})(conv, context);
    REQUIRE_MESSAGE(result.success(), result.failure);
    const Definition& rewritten = *result.definition;
    CAPTURE(printDefinition(rewritten));
    CHECK_NOTHROW(typecheck(rewritten));
    CHECK(context.tuningVariables().empty());
    const Expr& body = rewritten.function.body();
    // Table 1: work-groups over tile rows, tiles and kernel groups; work-items over window
    // groups and chunks; the stages bound by lets; vectors and unrolling when asked for.
    CHECK(countPrims(body, Op::MapWrg) == 3);
    CHECK(countPrims(body, Op::MapLcl) == 2);
    CHECK(countPrims(body, Op::Let) >= 2);
    CHECK((countPrims(body, Op::Dot) > 0) == (p.v > 1));
    CHECK((countPrims(body, Op::ReduceSeqUnroll) > 0) == (p.unroll == 1));
    const Value actual = interpret(rewritten, layer.inputs, layer.sizes);
    CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                  "max difference " << maxAbsDifference(actual, expected));
  }
}

TEST_CASE("conv-direct with symbolic parameters creates its tuning variables") {
  const Definition conv = testing::listing3FromExample();
  RewriteContext context;
  StrategyResult result = findStrategy("conv-direct")->make({})(conv, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  const Definition& parametric = *result.definition;
  CHECK_NOTHROW(typecheck(parametric));
  // One variable per factor, named by its stem, among the tuning variables the program uses
  // (the tiling rule creates one per dimension; the strategy keeps one θ for both).
  std::vector<std::string> names;
  for (const Arith& variable : variableOccurrences(parametric)) {
    if (variable.isVar() && variable.varKind() == VarKind::Tuning &&
        std::find(names.begin(), names.end(), variable.varName()) == names.end()) {
      names.push_back(variable.varName());
    }
  }
  CAPTURE(names.size());
  const std::vector<std::string> stems = {"theta", "rho", "kappa", "sigma", "omega", "coalesce"};
  REQUIRE(names.size() == stems.size());
  auto nameWith = [&](const std::string& stem) -> std::string {
    std::string found;
    int count = 0;
    for (const std::string& name : names) {
      // the stem followed by digits only
      if (name.rfind(stem, 0) == 0 &&
          name.find_first_not_of("0123456789", stem.size()) == std::string::npos) {
        found = name;
        ++count;
      }
    }
    CHECK_MESSAGE(count == 1, stem << " variables: " << count);
    return found;
  };
  std::mt19937_64 rng(7);
  const Layer layer = randomListing3Layer(conv, 2, 4, 3, 6, 6, 1, 1, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  struct Binding {
    int theta, rho, kappa, sigma, omega, coalesce;
  };
  // Tiles θ with step θ - 2 cover the padded 8 + ρ exactly when (8 + ρ - θ) % (θ - 2) = 0;
  // each holds (θ - 2)² windows, which σ divides.
  for (Binding b : {Binding{5, 0, 2, 3, 6, 1}, Binding{5, 3, 4, 9, 18, 0},
                    Binding{8, 0, 1, 4, 3, 0}, Binding{4, 2, 2, 2, 9, 1}}) {
    CAPTURE(b.theta);
    CAPTURE(b.rho);
    CAPTURE(b.kappa);
    CAPTURE(b.sigma);
    CAPTURE(b.omega);
    CAPTURE(b.coalesce);
    ArithBinding sizes = layer.sizes;
    sizes[nameWith("theta")] = b.theta;
    sizes[nameWith("rho")] = b.rho;
    sizes[nameWith("kappa")] = b.kappa;
    sizes[nameWith("sigma")] = b.sigma;
    sizes[nameWith("omega")] = b.omega;
    sizes[nameWith("coalesce")] = b.coalesce;
    const Value actual = interpret(parametric, layer.inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                  "max difference " << maxAbsDifference(actual, expected));
  }
}

TEST_CASE("conv-direct rejects unknown and symbolic structural parameters") {
  const NamedStrategy* strategy = findStrategy("conv-direct");
  REQUIRE(strategy != nullptr);
  CHECK_THROWS(strategy->make({{"theta1", Arith(4)}}));
  CHECK_THROWS(strategy->make({{"v", Arith::size("V")}}));
  CHECK_THROWS(strategy->make({{"unroll", Arith::size("U")}}));
}
