// The named strategies (rewrite/strategies.h): stencil-tiled-local applied to
// examples/stencil2d.weft with concrete tile sizes gives a program that type-checks, uses the
// rules' placements (mapWrg, mapLcl, toLocal, no computing high-level map or reduce left) and interprets
// equal to the original on random inputs; with no tile sizes it creates two tuning variables.
#include <doctest/doctest.h>

#include <random>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/library.h"
#include "rewrite/strategies.h"
#include "tests/support/expr_counting.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

using testing::countPrims;

}  // namespace

TEST_CASE("stencil-tiled-local on stencil2d with concrete tiles equals the original") {
  const Definition original = parseFile("examples/stencil2d.weft").definitions.back();
  const NamedStrategy* strategy = findStrategy("stencil-tiled-local");
  REQUIRE(strategy != nullptr);
  // Tiles theta1 x theta2 with step theta - 2 must cover the padded (H+2) x (W+2) input exactly.
  struct Case {
    int theta1, theta2, height, width;
  };
  for (Case c : {Case{6, 6, 8, 8}, Case{4, 6, 6, 4}, Case{3, 10, 5, 8}}) {
    CAPTURE(c.theta1);
    CAPTURE(c.theta2);
    RewriteContext context;
    StrategyResult result = strategy->make(
        {{"theta1", Arith(c.theta1)}, {"theta2", Arith(c.theta2)}})(original, context);
    REQUIRE_MESSAGE(result.success(), result.failure);
    const Definition& tiled = *result.definition;
    CAPTURE(printDefinition(tiled));
    CHECK_NOTHROW(typecheck(tiled));
    const Expr& body = tiled.function.body();
    CHECK(countPrims(body, Op::MapWrg) == 2);
    CHECK(countPrims(body, Op::ToLocal) == 1);
    CHECK(countPrims(body, Op::MapLcl) == 4);  // rows of windows and windows; two in the copy
    CHECK(countPrims(body, Op::MapGlb) == 0);
    // High-level maps remain only as views (map(transpose), map(join), the rows of a slide).
    int computingMaps = 0;
    forEachNode(body, [&](const Expr& node) {
      if (node.isPrim(Op::Map) && !isLayoutFunction(node.funs()[0])) ++computingMaps;
    });
    CHECK(computingMaps == 0);
    CHECK(countPrims(body, Op::Reduce) == 0);
    CHECK(context.tuningVariables().empty());

    std::mt19937_64 rng(11);
    ArithBinding given{{"H", c.height}, {"W", c.width}};
    std::vector<Value> inputs;
    for (const Expr& p : original.function.params()) {
      inputs.push_back(testing::randomValue(p.paramType(), given, rng));
    }
    ArithBinding sizes = bindSizes(original, inputs, given);
    Value expected = interpret(original, inputs, sizes);
    Value actual = interpret(tiled, inputs, sizes);
    CHECK(expected == actual);  // same float operations in the same order
  }
}

TEST_CASE("stencil-tiled-local without tile sizes creates tuning variables") {
  const Definition original = parseFile("examples/stencil2d.weft").definitions.back();
  RewriteContext context;
  StrategyResult result = findStrategy("stencil-tiled-local")->make({})(original, context);
  REQUIRE(result.success());
  CHECK(context.tuningVariables().size() == 2u);
  CHECK_NOTHROW(typecheck(*result.definition));
}

TEST_CASE("stencil-tiled-local fails on a program without slide2D") {
  const Definition dot = parseFile("examples/dot.weft").definitions.back();
  RewriteContext context;
  StrategyResult result = findStrategy("stencil-tiled-local")->make({})(dot, context);
  CHECK_FALSE(result.success());
  CHECK(result.failure.find("slide2D") != std::string::npos);
  CHECK_THROWS(findStrategy("stencil-tiled-local")->make({{"kappa", Arith(2)}}));
}

// Termination of the loops the strategies run: each stops at a fixpoint (its strategy fails:
// nothing left to rewrite), not at its step limit, on the programs the strategies meet.
TEST_CASE("the strategies' repeat and normalize loops reach a fixpoint") {
  const Definition conv = parseFile("examples/conv.weft").definitions.back();
  const Definition stencil = parseFile("examples/stencil2d.weft").definitions.back();
  auto fixpoint = [](const Strategy& loop, const Definition& d, int limit) {
    RewriteContext context;
    StrategyResult result = loop(d, context);
    REQUIRE(result.success());
    CHECK(result.stopped == StopReason::Failure);
    CHECK(result.steps < limit);
    return result;
  };
  // conv-direct's fission loop separates the kernels; let-hoist binds each stage once.
  RewriteContext context;
  StrategyResult direct = findStrategy("conv-direct")
                              ->make({{"theta", Arith(5)}, {"rho", Arith(0)}, {"kappa", Arith(2)},
                                      {"sigma", Arith(3)}, {"omega", Arith(6)},
                                      {"coalesce", Arith(1)}})(conv, context);
  REQUIRE_MESSAGE(direct.success(), direct.failure);
  const Rule& fission = *findRule("map-fission-deep");
  const Rule& hoist = *findRule("let-hoist");
  CHECK(fixpoint(repeat(bottomUp(fission), 64), *direct.definition, 64).steps == 0);
  CHECK(fixpoint(repeat(topDown(hoist), 16), *direct.definition, 16).steps == 0);
  // From the high-level convolution the fission loop takes a few steps and stops by itself.
  CHECK(fixpoint(repeat(bottomUp(fission), 64), conv, 64).steps >= 1);
  // The lowering loops of stencil-tiled-local stop when nothing is left to lower.
  CHECK(fixpoint(repeat(topDown(*findRule("reduce-to-reduceseq")), 1000), stencil, 1000).steps ==
        1);
  StrategyResult normalized =
      normalize({*findRule("map-to-mapseq"), *findRule("reduce-to-reduceseq")}, 1000)(stencil,
                                                                                     context);
  REQUIRE(normalized.success());
  CHECK(normalized.stopped == StopReason::Fixpoint);
}
