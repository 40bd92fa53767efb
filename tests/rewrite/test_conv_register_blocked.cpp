// The named strategy conv-register-blocked (rewrite/strategies.h) applied to examples/conv.weft:
// for several (θ, ρ, κ, σ, unroll) on small layers the rewritten definition type-checks, has the
// register-blocked structure (one reduce per work-item whose accumulator is a [σ][κ] array, the
// maps that write it unrolled, no chunks and hence one reduce only, mapWrg over tile rows, tiles
// and kernel groups, mapLcl over window groups) and computes the original layer in the
// interpreter within 1e-4 absolute + 1e-4 relative on real-valued random inputs. Layers: C = 2,
// H = W = 6, M = 4, K = 3, P = 1, S = 1 (tiles of 5 or the whole padded image), and a stride-2
// unpadded one.
#include <doctest/doctest.h>

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
  int theta, rho, kappa, sigma, unroll;
};

std::string describe(const Parameters& p) {
  return "theta=" + std::to_string(p.theta) + " rho=" + std::to_string(p.rho) +
         " kappa=" + std::to_string(p.kappa) + " sigma=" + std::to_string(p.sigma) +
         " unroll=" + std::to_string(p.unroll);
}

// The reduce (reduceSeq or reduceSeqUnroll) of the rewritten definition, which must be the only
// one: no chunks, so no final reduction.
std::vector<Expr> reduces(const Expr& body) {
  std::vector<Expr> found;
  forEachNode(body, [&](const Expr& node) {
    if (node.isPrim(Op::ReduceSeq) || node.isPrim(Op::ReduceSeqUnroll) || node.isPrim(Op::Reduce)) {
      found.push_back(node);
    }
  });
  return found;
}

void checkCases(const Definition& conv, const Layer& layer, const std::vector<Parameters>& cases) {
  const NamedStrategy* strategy = findStrategy("conv-register-blocked");
  REQUIRE(strategy != nullptr);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  for (const Parameters& p : cases) {
    CAPTURE(describe(p));
    RewriteContext context;
    StrategyResult result = strategy->make({{"theta", Arith(p.theta)},
                                            {"rho", Arith(p.rho)},
                                            {"kappa", Arith(p.kappa)},
                                            {"sigma", Arith(p.sigma)},
                                            {"unroll", Arith(p.unroll)}})(conv, context);
    REQUIRE_MESSAGE(result.success(), result.failure);
    const Definition& rewritten = *result.definition;
    CAPTURE(printDefinition(rewritten));
    TypedDefinition typed = typecheck(rewritten);
    CHECK(context.tuningVariables().empty());
    const Expr& body = rewritten.function.body();
    CHECK(countPrims(body, Op::MapWrg) == 3);
    CHECK(countPrims(body, Op::MapLcl) == 1);
    // One reduce, over the whole window, with a [σ][κ] accumulator written by unrolled maps.
    std::vector<Expr> found = reduces(body);
    REQUIRE(found.size() == 1);
    const Expr& reduce = found.front();
    CHECK(reduce.isPrim(p.unroll ? Op::ReduceSeqUnroll : Op::ReduceSeq));
    const Type accumulator = typed.types.at(reduce.args()[0].node());
    REQUIRE(accumulator.isArray());
    CHECK(accumulator.arrayLength() == Arith(p.sigma));
    REQUIRE(accumulator.arrayElement().isArray());
    CHECK(accumulator.arrayElement().arrayLength() == Arith(p.kappa));
    const Type input = typed.types.at(reduce.args()[1].node());
    const ArithBinding& sizes = layer.sizes;
    CHECK(evaluate(input.arrayLength(), sizes) == sizes.at("K") * sizes.at("K") * sizes.at("C"));
    CHECK(countPrims(reduce.funs()[0], Op::MapSeqUnroll) == 2);
    CHECK(countPrims(reduce.funs()[0], Op::Map) == 0);
    CHECK(countPrims(reduce.args()[0], Op::MapSeqUnroll) == 2);
    const Value actual = interpret(rewritten, layer.inputs, layer.sizes);
    CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                  "max difference " << maxAbsDifference(actual, expected));
  }
}

}  // namespace

TEST_CASE("conv-register-blocked computes the same layer for several (theta, kappa, sigma, unroll)") {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(7);
  // C = 2, H = W = 6, M = 4, K = 3, P = 1, S = 1: padded 8 + ρ. θ = 5 (step 3, ρ in {0, 3}, 9
  // windows per tile) or θ = 8 (ρ = 0, one tile of 36 windows); κ | 4, σ | windows per tile.
  const Layer layer = randomListing3Layer(conv, 2, 4, 3, 6, 6, 1, 1, rng);
  checkCases(conv, layer,
             {{5, 0, 1, 1, 0},
              {5, 3, 2, 3, 1},
              {5, 0, 4, 9, 0},
              {8, 0, 4, 4, 0},
              {8, 0, 2, 6, 1},
              {8, 0, 4, 12, 0},
              {5, 3, 4, 1, 1}});
}

TEST_CASE("conv-register-blocked with stride 2 and no padding computes the same layer") {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(11);
  // C = 2, H = W = 7, M = 2, K = 3, P = 0, S = 2: tiles of 5 step 4 cover 7 + 2ρ = 9 (ρ = 1)
  // with 2×2 windows each.
  const Layer layer = randomListing3Layer(conv, 2, 2, 3, 7, 7, 0, 2, rng);
  checkCases(conv, layer, {{5, 1, 2, 4, 0}, {5, 1, 1, 2, 1}});
}
