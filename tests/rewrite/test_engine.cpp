// Tests of the rewrite engine and strategies: positions and their text form, nodeAt,
// allPositions order, findMatches, applyAt (structural sharing along the path, tuning variables,
// re-type-checking that catches a deliberately wrong rule), lowering legality through the
// ancestors, and the strategy combinators, including repeat and normalize stopping with the
// reason they report.
#include <doctest/doctest.h>

#include <string>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/strategy.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

Definition parseDef(const std::string& text) {
  Program program = parseProgram(text, "t.weft");
  REQUIRE(program.definitions.size() == 1);
  return program.definitions[0];
}

const Rule& rule(const std::string& name) {
  const Rule* r = findRule(name);
  REQUIRE_MESSAGE(r != nullptr, name);
  return *r;
}

}  // namespace

TEST_CASE("positions print, parse and reject bad syntax") {
  CHECK(positionToString({}) == "root");
  CHECK(positionToString({2, 0, 1}) == "2.0.1");
  CHECK(parsePosition("root").empty());
  CHECK(parsePosition("2.0.1") == Position{2, 0, 1});
  CHECK_THROWS_AS(parsePosition("2..1"), RewriteError);
  CHECK_THROWS_AS(parsePosition("a"), RewriteError);
  CHECK_THROWS_AS(parsePosition(""), RewriteError);
}

TEST_CASE("nodeAt and allPositions walk funs, then args, then lambda bodies") {
  Definition d = parseDef("def f(xs: [float]N) = map(x -> x + 1.0f, map(y -> y * 2.0f, xs))\n");
  const Expr& body = d.function.body();
  CHECK(nodeAt(body, {}).isPrim(Op::Map));
  CHECK(nodeAt(body, {0}).isLambda());
  CHECK(nodeAt(body, {0, 0}).isPrim(Op::Add));
  CHECK(nodeAt(body, {1}).isPrim(Op::Map));
  CHECK(nodeAt(body, {1, 1}).isParam());
  CHECK_THROWS_AS(nodeAt(body, {5}), RewriteError);
  std::vector<Position> all = allPositions(body);
  REQUIRE(all.size() == 11);
  CHECK(all[0].empty());
  CHECK(all[1] == Position{0});
  CHECK(all[2] == Position{0, 0});
  // Parents come before children.
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = i + 1; j < all.size(); ++j) {
      bool jIsPrefixOfI =
          all[j].size() < all[i].size() && std::equal(all[j].begin(), all[j].end(), all[i].begin());
      CHECK_FALSE(jIsPrefixOfI);
    }
  }
}

TEST_CASE("findMatches lists fusion, split-join and lowering positions") {
  Definition d = parseDef("def f(xs: [float]N) = map(x -> x + 1.0f, map(y -> y * 2.0f, xs))\n");
  std::vector<Match> matches = findMatches(d, ruleLibrary());
  auto has = [&](const std::string& name, const Position& position) {
    for (const Match& m : matches) {
      if (m.rule->name == name && m.position == position) return true;
    }
    return false;
  };
  CHECK(has("map-fusion", {}));
  CHECK_FALSE(has("map-fusion", {1}));
  CHECK(has("split-join", {}));
  CHECK(has("split-join", {1}));
  CHECK(has("map-to-mapglb", {1}));
  CHECK(has("map-to-mapseq", {}));
  CHECK_FALSE(has("map-to-maplcl", {}));  // no enclosing mapWrg
  CHECK_FALSE(has("reduce-to-reduceseq", {}));
}

TEST_CASE("applyAt shares every subtree off the path and creates tuning variables") {
  Definition d = parseDef(
      "def f(xs: [float]N, ys: [float]N) = zip(map(x -> x + 1.0f, xs), map(y -> y * 2.0f, ys))\n");
  RewriteContext context;
  std::optional<Definition> r = applyAt(d, rule("split-join"), {0}, {}, context);
  REQUIRE(r.has_value());
  const Expr& before = d.function.body();
  const Expr& after = r->function.body();
  CHECK(after.node() != before.node());
  CHECK(after.args()[1].node() == before.args()[1].node());  // off the path: the same node
  CHECK(after.args()[0].isPrim(Op::Join));
  // The split-join reuses the map's function node.
  CHECK(nodeAt(after, {0, 0, 0, 0, 0}).node() == nodeAt(before, {0, 0}).node());
  REQUIRE(context.tuningVariables().size() == 1);
  const Arith& chunk = context.tuningVariables()[0];
  CHECK(chunk.varName() == "chunk1");
  CHECK(chunk.varKind() == VarKind::Tuning);
  CHECK(chunk.varLo() == Arith(1));
  CHECK(*chunk.varHi() == Arith::size("N"));
  // Same meaning for a valid chunk size.
  std::vector<Value> inputs{
      Value::array({Value::ofFloat(1), Value::ofFloat(2), Value::ofFloat(3), Value::ofFloat(4)}),
      Value::array({Value::ofFloat(5), Value::ofFloat(6), Value::ofFloat(7), Value::ofFloat(8)})};
  ArithBinding sizes = bindSizes(d, inputs);
  ArithBinding tuned = sizes;
  tuned["chunk1"] = 2;
  CHECK(interpret(*r, inputs, tuned) == interpret(d, inputs, sizes));
  // A second variable gets the next number.
  applyAt(*r, rule("split-join"), {}, {}, context);
  CHECK_FALSE(applyAt(d, rule("map-fusion"), {}, {}, context).has_value());
  REQUIRE(context.tuningVariables().size() == 1);  // zip is not a map: nothing created
  std::optional<Definition> r2 = applyAt(d, rule("split-join"), {1}, {}, context);
  REQUIRE(r2.has_value());
  CHECK(context.tuningVariables().back().varName() == "chunk2");
}

TEST_CASE("applyAt with a given factor, and a factor that is not valid there") {
  Definition d = parseDef("def f(xs: [float]8) = map(x -> x + 1.0f, xs)\n");
  RewriteContext context;
  std::optional<Definition> r = applyAt(d, rule("split-join"), {}, {{"n", Arith(4)}}, context);
  REQUIRE(r.has_value());
  CHECK(context.tuningVariables().empty());
  CHECK(printExpr(r->function.body()).find("split(4") != std::string::npos);
  // 3 does not divide 8: the result is ill-typed and the engine says so.
  CHECK_THROWS_WITH_AS(applyAt(d, rule("split-join"), {}, {{"n", Arith(3)}}, context),
                       doctest::Contains("split-join"), RewriteError);
}

TEST_CASE("a rule that yields an ill-typed program is caught by re-type-checking") {
  Rule wrong{"wrong-transpose",
             "map(f) => transpose(map(f))",
             RuleFamily::Simplification,
             {},
             [](const RuleApplication& a) -> std::optional<Expr> {
               if (!a.node.isPrim(Op::Map)) return std::nullopt;
               return transpose(a.node);  // a 1D array cannot be transposed
             }};
  Definition d = parseDef("def f(xs: [float]N) = map(x -> x + 1.0f, xs)\n");
  RewriteContext context;
  CHECK_THROWS_WITH_AS(applyAt(d, wrong, {}, {}, context),
                       doctest::Contains("wrong-transpose at root produced an ill-typed program"),
                       RewriteError);
}

TEST_CASE("lowering legality depends on the enclosing maps") {
  Definition d = parseDef(
      "def f(xs: [[float]M]N) = mapWrg(0, row -> map(x -> x + 1.0f, row), map(r -> r, xs))\n");
  RewriteContext context;
  // Inside the mapWrg's function: mapLcl is legal, mapGlb is not, mapWrg(0) is used already.
  CHECK(applyAt(d, rule("map-to-maplcl"), {0, 0}, {}, context).has_value());
  CHECK_FALSE(applyAt(d, rule("map-to-mapglb"), {0, 0}, {}, context).has_value());
  CHECK_FALSE(applyAt(d, rule("map-to-mapwrg"), {0, 0}, {{"dim", Arith(0)}}, context));
  CHECK(applyAt(d, rule("map-to-mapwrg"), {0, 0}, {{"dim", Arith(1)}}, context).has_value());
  // The data argument of the mapWrg is outside its nest: mapLcl needs a mapWrg, mapGlb is fine.
  CHECK_FALSE(applyAt(d, rule("map-to-maplcl"), {1}, {}, context).has_value());
  CHECK(applyAt(d, rule("map-to-mapglb"), {1}, {}, context).has_value());
  // Without a given dimension the lowest legal one is taken.
  Definition nested =
      parseDef("def g(xs: [[float]M]N) = mapGlb(0, row -> map(x -> x + 1.0f, row), xs)\n");
  std::optional<Definition> lowered = applyAt(nested, rule("map-to-mapglb"), {0, 0}, {}, context);
  REQUIRE(lowered.has_value());
  CHECK(nodeAt(lowered->function.body(), {0, 0}).nats()[0] == Arith(1));
  // Sequential code holds no parallel map.
  Definition sequential =
      parseDef("def h(xs: [[float]M]N) = mapSeq(row -> map(x -> x + 1.0f, row), xs)\n");
  CHECK_FALSE(applyAt(sequential, rule("map-to-mapglb"), {0, 0}, {}, context).has_value());
  CHECK(applyAt(sequential, rule("map-to-mapseq"), {0, 0}, {}, context).has_value());
}

TEST_CASE("strategies: seq, leftChoice, tryS, traversals, atPosition") {
  Definition d = parseDef(
      "def f(xs: [[float]4]N) = transpose(transpose(map(r -> map(x -> x * 2.0f, r), xs)))\n");
  RewriteContext context;
  StrategyResult simplified = topDown(rule("transpose-transpose-id"))(d, context);
  REQUIRE(simplified.success());
  CHECK(simplified.definition->function.body().isPrim(Op::Map));
  StrategyResult failed = topDown(rule("join-split-id"))(d, context);
  CHECK_FALSE(failed.success());
  CHECK(failed.failure.find("join-split-id") != std::string::npos);
  CHECK(tryS(topDown(rule("join-split-id")))(d, context).definition->function.body().node() ==
        d.function.body().node());
  StrategyResult choice = leftChoice(topDown(rule("join-split-id")),
                                     topDown(rule("transpose-transpose-id")))(d, context);
  REQUIRE(choice.success());
  // topDown lowers the outer map first, bottomUp the inner one, outermost the shallowest.
  StrategyResult pipeline =
      seq(topDown(rule("transpose-transpose-id")), topDown(rule("map-to-mapseq")))(d, context);
  REQUIRE(pipeline.success());
  CHECK(pipeline.definition->function.body().isPrim(Op::MapSeq));
  Definition plain = *simplified.definition;
  StrategyResult inner = bottomUp(rule("map-to-mapseq"))(plain, context);
  REQUIRE(inner.success());
  CHECK(inner.definition->function.body().isPrim(Op::Map));
  CHECK(nodeAt(inner.definition->function.body(), {0, 0}).isPrim(Op::MapSeq));
  StrategyResult outer = outermost(rule("map-to-mapseq"))(plain, context);
  REQUIRE(outer.success());
  CHECK(outer.definition->function.body().isPrim(Op::MapSeq));
  CHECK(atPosition(rule("map-to-mapseq"), {0, 0})(plain, context).success());
  CHECK_FALSE(atPosition(rule("map-to-mapseq"), {0})(plain, context).success());
}

TEST_CASE("repeat and normalize stop and say why") {
  Definition d = parseDef(
      "def f(xs: [float]N) = map(a -> a + 1.0f, map(b -> b * 2.0f, map(c -> c - 3.0f, "
      "map(e -> e * e, xs))))\n");
  RewriteContext context;
  // Three fusions are possible, then map-fusion fails.
  StrategyResult fused = repeat(topDown(rule("map-fusion")), 10)(d, context);
  REQUIRE(fused.success());
  CHECK(fused.steps == 3);
  CHECK(fused.stopped == StopReason::Failure);
  CHECK_FALSE(topDown(rule("map-fusion"))(*fused.definition, context).success());
  StrategyResult limited = repeat(topDown(rule("map-fusion")), 2)(d, context);
  CHECK(limited.steps == 2);
  CHECK(limited.stopped == StopReason::Limit);
  // split-join always applies again (to the inner map): repeat is cut off by its limit.
  StrategyResult endless = repeat(topDown(rule("split-join")), 5)(d, context);
  CHECK(endless.steps == 5);
  CHECK(endless.stopped == StopReason::Limit);

  // normalize with the simplification identities reaches a fixpoint.
  Definition layouts = parseDef(
      "def g(xs: [[float]4]N) = transpose(transpose(split(4, join(join(split(2, xs))))))\n");
  std::vector<Rule> identities{rule("join-split-id"), rule("split-join-id"),
                               rule("transpose-transpose-id")};
  StrategyResult simple = normalize(identities, 100)(layouts, context);
  REQUIRE(simple.success());
  CHECK(simple.stopped == StopReason::Fixpoint);
  CHECK(simple.steps == 3);
  CHECK(simple.definition->function.body().isParam());
  StrategyResult cut = normalize(identities, 1)(layouts, context);
  CHECK(cut.stopped == StopReason::Limit);
  CHECK(cut.steps == 1);
  // Fusion and fission undo each other: only the limit stops them.
  StrategyResult cycle = normalize({rule("map-fusion"), rule("map-fission")}, 20)(d, context);
  CHECK(cycle.stopped == StopReason::Limit);
  CHECK(cycle.steps == 20);
  // The lowering rules terminate: every map and reduce becomes sequential once.
  Definition dot = parseDef(
      "def dot(a: [float]N, b: [float]N) = map(x -> x * 2.0f, reduce(0.0f, (acc, p) -> acc + "
      "p._0 * p._1, zip(a, b)))\n");
  StrategyResult lowered =
      normalize({rule("map-to-mapseq"), rule("reduce-to-reduceseq")}, 100)(dot, context);
  CHECK(lowered.stopped == StopReason::Fixpoint);
  CHECK(lowered.steps == 2);
}
