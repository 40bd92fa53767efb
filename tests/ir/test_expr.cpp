// Tests of expression nodes: validated construction against the primitive table,
// alpha-equivalence and hashing (used to deduplicate variants), structural sharing in
// withChildren, and param/arithmetic substitution.
#include <doctest/doctest.h>

#include "ir/expr.h"

using namespace weft;

namespace {

Expr mapOf(const Expr& f, const Expr& x) { return Expr::prim(Op::Map, {}, {f}, {x}); }
Expr addOf(const Expr& a, const Expr& b) { return Expr::prim(Op::Add, {}, {}, {a, b}); }
Expr identityLambda(const std::string& name) {
  Expr p = Expr::param(name);
  return Expr::lambda({p}, p);
}

}  // namespace

TEST_CASE("primitive table rows match the Op enum and layouts") {
  for (const PrimInfo& info : allPrimitives()) {
    CHECK(&primInfo(info.op) == &info);
    CHECK(findPrimitive(info.name) == info.op);
    CHECK((info.typeRule != nullptr));
    CHECK((info.signature != nullptr));
  }
  CHECK(primInfo(Op::Split).natCount() == 1);
  CHECK(primInfo(Op::Pad).hasBoundary());
  CHECK(primInfo(Op::Reorder).hasIndexFunction());
  CHECK(primInfo(Op::Reduce).minArgs() == 2);
  CHECK(primInfo(Op::Reduce).funCount() == 1);
  CHECK(primInfo(Op::Zip).maxArgs() == -1);
  CHECK(primInfo(Op::Zip).minArgs() == 2);
  CHECK(!findPrimitive("map2D"));  // 2D forms are builders, not primitives
}

TEST_CASE("Expr::prim validates argument counts against the table") {
  Expr x = Expr::param("x");
  CHECK_THROWS_WITH_AS(Expr::prim(Op::Split, {}, {}, {x}),
                       "split: expected 1 size arguments, found 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Expr::prim(Op::Map, {}, {}, {x}),
                       "map: expected 1 function arguments, found 0", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Expr::prim(Op::Map, {}, {x}, {x}),
                       "map: function argument must be a lambda or a user function",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(Expr::prim(Op::Zip, {}, {}, {x}),
                       "zip: expected 2 data arguments at least, found 1", std::invalid_argument);
  CHECK_THROWS_WITH_AS(Expr::prim(Op::Join, {}, {}, {x, x}),
                       "join: expected 1 data arguments at most, found 2", std::invalid_argument);
  CHECK_THROWS_AS(Expr::lambda({}, x), std::invalid_argument);
  CHECK_THROWS_AS(Expr::userFun("f", {Expr::param("a")}, Type::floatType(), x),
                  std::invalid_argument);
}

TEST_CASE("equality is alpha-equivalence and hashes agree") {
  Expr input = Expr::param("input");
  Expr a = mapOf(identityLambda("x"), input);
  Expr b = mapOf(identityLambda("y"), input);
  CHECK(a == b);
  CHECK(a.hash() == b.hash());

  // A different free param is a different program.
  Expr other = Expr::param("input");
  CHECK(mapOf(identityLambda("x"), input) != mapOf(identityLambda("x"), other));

  // x -> y -> x differs from x -> y -> y.
  Expr x = Expr::param("x"), y = Expr::param("y");
  Expr first = Expr::lambda({x}, Expr::lambda({y}, x));
  Expr x2 = Expr::param("x"), y2 = Expr::param("y");
  Expr second = Expr::lambda({x2}, Expr::lambda({y2}, y2));
  CHECK(first != second);
  Expr x3 = Expr::param("a"), y3 = Expr::param("b");
  CHECK(first == Expr::lambda({x3}, Expr::lambda({y3}, x3)));

  // A body shared between two lambdas that bind different params is not alpha-equal.
  Expr p = Expr::param("p"), q = Expr::param("q");
  Expr sharedBody = addOf(p, Expr::floatLiteral(1.0));
  CHECK(Expr::lambda({p}, sharedBody) != Expr::lambda({q}, sharedBody));
  CHECK(Expr::lambda({p}, sharedBody) == Expr::lambda({p}, sharedBody));

  // Literals, size arguments and attributes take part.
  CHECK(Expr::floatLiteral(1.0) == Expr::floatLiteral(1.0));
  CHECK(Expr::floatLiteral(1.0) != Expr::floatLiteral(2.0));
  CHECK(Expr::floatLiteral(1.0) != Expr::intLiteral(1));
  Arith n = Arith::size("n");
  CHECK(Expr::prim(Op::Split, {n + n}, {}, {input}) == Expr::prim(Op::Split, {2 * n}, {}, {input}));
  CHECK(Expr::prim(Op::Split, {n}, {}, {input}) != Expr::prim(Op::Split, {4}, {}, {input}));
  PrimAttribute clamp, mirror;
  mirror.boundary = Boundary::Mirror;
  CHECK(Expr::prim(Op::Pad, {1, 1}, {}, {input}, clamp) !=
        Expr::prim(Op::Pad, {1, 1}, {}, {input}, mirror));
}

TEST_CASE("withChildren shares unchanged nodes") {
  Expr input = Expr::param("input");
  Expr f = identityLambda("x");
  Expr m = mapOf(f, input);
  CHECK(m.withChildren(m.nats(), m.funs(), m.args()).node() == m.node());
  Expr other = Expr::param("other");
  Expr changed = m.withChildren({}, {f}, {other});
  CHECK(changed.node() != m.node());
  CHECK(changed.funs()[0].node() == f.node());
  CHECK(changed.args()[0].node() == other.node());
}

TEST_CASE("substituteParams and substituteArith") {
  Expr a = Expr::param("a");
  Expr b = Expr::param("b");
  Expr sum = addOf(a, b);
  Expr replaced = substituteParams(sum, {{a, Expr::floatLiteral(2.0)}});
  CHECK(replaced == addOf(Expr::floatLiteral(2.0), b));
  CHECK(substituteParams(sum, {}).node() == sum.node());

  Arith n = Arith::size("n");
  Expr typed = Expr::param("xs", Type::array(Type::floatType(), n));
  Expr split = Expr::prim(Op::Split, {n / 2}, {}, {typed});
  Expr bound = substituteArith(split, {{"n", Arith(8)}});
  CHECK(bound.nats()[0] == Arith(4));
  CHECK(bound.args()[0].paramType() == Type::array(Type::floatType(), 8));
  CHECK(bound.args()[0].paramId() == typed.paramId());  // the same param, retyped
}

TEST_CASE("forEachNode visits parents before children") {
  Expr input = Expr::param("input");
  Expr m = mapOf(identityLambda("x"), input);
  std::vector<ExprKind> kinds;
  forEachNode(m, [&](const Expr& e) { kinds.push_back(e.kind()); });
  REQUIRE(kinds.size() == 5);
  CHECK(kinds[0] == ExprKind::Prim);
  CHECK(kinds[1] == ExprKind::Lambda);
  CHECK(kinds.back() == ExprKind::Param);
}

TEST_CASE("types: equality through canonical lengths, printing, substitution") {
  Arith n = Arith::size("n");
  Type a = Type::array(Type::array(Type::floatType(), 4), n / 4);
  CHECK(a.toString() == "[[float]4](n/4)");
  CHECK(Type::array(Type::floatType(), n + n) == Type::array(Type::floatType(), 2 * n));
  CHECK(Type::array(Type::floatType(), n + n).hash() == Type::array(Type::floatType(), 2 * n).hash());
  CHECK(Type::vector(ScalarKind::Float, 4).toString() == "float4");
  CHECK(Type::tuple({Type::floatType(), Type::intType()}).toString() == "(float, int)");
  CHECK_THROWS_WITH_AS(Type::vector(ScalarKind::Float, 5),
                       "invalid vector width 5 (expected 2, 3, 4, 8 or 16)", std::invalid_argument);
  CHECK(substitute(a, {{"n", Arith(16)}}).toString() == "[[float]4]4");
  REQUIRE(typeVars(a).size() == 1);
  CHECK(typeVars(a)[0].varName() == "n");
}
