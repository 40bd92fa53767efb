// Tests of constraint inference and of the Constraint type: the constraints programs with
// symbolic sizes produce (split and asVector divisibility, strict slide coverage, slide and
// crop bounds, mirror padding, equal zip lengths, reorder strides, derived parameter lengths,
// declared result lengths), their origin and location, deduplication, dropping of provably
// true ones (with declared size ranges such as [P >= 0]); formula(), describe(), vars(),
// evaluate() and decide(), with a property test that decide() never contradicts evaluate().
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include "ir/constraint.h"
#include "ir/expr.h"
#include "ir/parser.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

const Arith N = Arith::size("N");
const Arith M = Arith::size("M");
const Type F = Type::floatType();

Type arr(const Type& element, const Arith& length) { return Type::array(element, length); }
Expr call(Op op, std::vector<Expr> args) { return Expr::prim(op, {}, {}, std::move(args)); }
Expr callN(Op op, std::vector<Arith> nats, std::vector<Expr> args, SourceLoc loc = {}) {
  return Expr::prim(op, std::move(nats), {}, std::move(args), {}, std::move(loc));
}

std::vector<Constraint> constraintsOf(const std::vector<Expr>& params, const Expr& body,
                                      const Type& declared = Type()) {
  return typecheck(Definition{"test", Expr::lambda(params, body), declared, {}}).constraints;
}

std::vector<std::string> formulas(const std::vector<Constraint>& constraints) {
  std::vector<std::string> out;
  for (const Constraint& c : constraints) out.push_back(c.formula());
  return out;
}

using Strings = std::vector<std::string>;

Constraint make(Relation relation, Arith lhs, Arith rhs, std::string origin = "",
                std::string reason = "") {
  return Constraint{relation, std::move(lhs),   std::move(rhs), std::move(origin),
                    {},       std::move(reason)};
}

}  // namespace

TEST_CASE("split by 4 of [float]N requires N % 4 = 0") {
  Expr xs = Expr::param("xs", arr(F, N));
  SourceLoc loc{std::make_shared<const std::string>("conv.weft"), 12, 5};
  std::vector<Constraint> cs = constraintsOf({xs}, callN(Op::Split, {4}, {xs}, loc));
  REQUIRE(cs.size() == 1);
  const Constraint& c = cs[0];
  CHECK(c.relation == Relation::Divides);
  CHECK(c.lhs == Arith(4));
  CHECK(c.rhs == N);
  CHECK(c.origin == "split");
  CHECK(c.loc.toString() == "conv.weft:12:5");
  CHECK(c.formula() == "N % 4 = 0");
  CHECK(c.describe() == "split by 4 requires N % 4 = 0 (the split size must divide the length)");
  CHECK(c.requirement() == "split by 4 requires N % 4 = 0");
}

TEST_CASE("constraints of layout primitives with symbolic sizes") {
  Expr xs = Expr::param("xs", arr(F, N));
  Expr ys = Expr::param("ys", arr(F, M));
  const Arith tile = Arith::var("t", VarKind::Tuning, 1);
  PrimAttribute mirror;
  mirror.boundary = Boundary::Mirror;
  PrimAttribute stride;
  stride.indexFunction = IndexFunction::Stride;
  stride.stride = tile;

  CHECK(formulas(constraintsOf({xs}, callN(Op::Slide, {3, 1}, {xs}))) == Strings{"3 <= N"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::SlideStrict, {3, 2}, {xs}))) ==
        Strings{"3 <= N", "(N - 3) % 2 = 0"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::SlideStrict, {tile, tile}, {xs}))) ==
        Strings{"t <= N", "(N - t) % t = 0"});
  CHECK(formulas(constraintsOf({xs, ys}, call(Op::Zip, {xs, ys}))) == Strings{"N = M"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::AsVector, {4}, {xs}))) == Strings{"N % 4 = 0"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::Split, {tile}, {xs}))) == Strings{"N % t = 0"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::Crop, {1, 1}, {xs}))) == Strings{"2 <= N - 1"});
  // l and r give the same constraint: it is recorded once.
  CHECK(formulas(constraintsOf({xs}, Expr::prim(Op::Pad, {2, 2}, {}, {xs}, mirror))) ==
        Strings{"2 <= N"});
  CHECK(formulas(constraintsOf({xs}, Expr::prim(Op::Reorder, {}, {}, {xs}, stride))) ==
        Strings{"N % t = 0"});
  CHECK(formulas(constraintsOf({xs}, callN(Op::Fill, {tile}, {xs}))).empty());    // t >= 1
  CHECK(formulas(constraintsOf({xs}, callN(Op::Pad, {tile, 0}, {xs}))).empty());  // 0 <= t
  std::vector<Constraint> asVector = constraintsOf({xs}, callN(Op::AsVector, {4}, {xs}));
  CHECK(asVector[0].describe() ==
        "asVector to width 4 requires N % 4 = 0 (the vector width must divide the length)");
  CHECK(asVector[0].origin == "asVector");
  std::vector<Constraint> zip = constraintsOf({xs, ys}, call(Op::Zip, {xs, ys}));
  CHECK(zip[0].relation == Relation::Equal);
  CHECK(zip[0].describe() == "zip requires N = M (zipped arrays must have the same length)");
}

TEST_CASE("provably true constraints are dropped; plain sizes need no positivity") {
  Expr xs = Expr::param("xs", arr(F, N));
  Expr padded = callN(Op::Pad, {1, 1}, {xs});
  CHECK(constraintsOf({xs}, callN(Op::Slide, {3, 1}, {padded})).empty());  // 3 <= N + 2
  Expr quad = Expr::param("quad", arr(F, 4 * N));
  CHECK(constraintsOf({quad}, callN(Op::Split, {4}, {quad})).empty());     // 4 | 4*N
  CHECK(constraintsOf({quad}, callN(Op::AsVector, {2}, {quad})).empty());  // 2 | 4*N
  CHECK(constraintsOf({xs}, callN(Op::Fill, {N}, {Expr::floatLiteral(1)})).empty());
  CHECK(constraintsOf({xs}, callN(Op::Slide, {1, 1}, {xs})).empty());
  Expr fixed = Expr::param("fixed", arr(F, 12));
  CHECK(constraintsOf({fixed}, callN(Op::SlideStrict, {4, 4}, {fixed})).empty());
  CHECK(constraintsOf({fixed}, call(Op::Join, {callN(Op::Split, {3}, {fixed})})).empty());
  Expr mat = Expr::param("mat", arr(arr(F, M), N));
  CHECK(constraintsOf({mat}, call(Op::Transpose, {mat})).empty());
}

TEST_CASE("constraints are deduplicated and kept in discovery order") {
  Expr xs = Expr::param("xs", arr(F, N));
  Expr ys = Expr::param("ys", arr(F, M));
  // Two distinct split nodes with the same constraint, then a zip of N and M twice.
  Expr body = call(Op::Tuple,
                   {call(Op::Zip, {callN(Op::Split, {4}, {xs}), callN(Op::Split, {4}, {xs})}),
                    call(Op::Zip, {xs, ys}), call(Op::Zip, {xs, ys}), callN(Op::Split, {2}, {ys})});
  std::vector<Constraint> cs = constraintsOf({xs, ys}, body);
  CHECK(formulas(cs) == Strings{"N % 4 = 0", "N = M", "M % 2 = 0"});
  // The first occurrence is kept (its origin and location).
  CHECK(cs[0].origin == "split");
  CHECK(cs[1].origin == "zip");
}

TEST_CASE("derived lengths in parameter types and declared result lengths") {
  Expr xs = Expr::param("xs", arr(F, N - 2));
  std::vector<Constraint> cs = constraintsOf({xs}, call(Op::Id, {xs}));
  REQUIRE(cs.size() == 1);
  CHECK(cs[0].formula() == "1 <= N - 2");
  CHECK(cs[0].origin == "def test");
  CHECK(cs[0].describe() == "def test requires 1 <= N - 2 (array lengths must be positive)");

  Expr ys = Expr::param("ys", arr(F, N));
  std::vector<Constraint> declared =
      constraintsOf({ys}, callN(Op::Split, {4}, {ys}), arr(arr(F, 4), M));
  CHECK(formulas(declared) == Strings{"N % 4 = 0", "M = N/4"});
}

TEST_CASE("constraints from a parsed program carry origin and location") {
  Program program = parseProgram(
      "def tiles(x: [float]N, y: [float]M) =\n"
      "  zip(split(4, x),\n"
      "      slideStrict(4, 4, y))\n",
      "tiles.weft");
  std::vector<TypedDefinition> typed = typecheckProgram(program);
  REQUIRE(typed.size() == 1);
  const std::vector<Constraint>& cs = typed[0].constraints;
  REQUIRE(formulas(cs) == Strings{"N % 4 = 0", "4 <= M", "(M - 4) % 4 = 0", "N/4 = M/4"});
  CHECK(cs[0].loc.toString() == "tiles.weft:2:7");
  CHECK(cs[1].loc.toString() == "tiles.weft:3:7");
  CHECK(cs[1].origin == "slideStrict");
  CHECK(cs[3].origin == "zip");
  CHECK(cs[3].loc.toString() == "tiles.weft:2:3");
}

TEST_CASE("formula and describe for every relation") {
  CHECK(make(Relation::Equal, N, M).formula() == "N = M");
  CHECK(make(Relation::LessEqual, 3, N).formula() == "3 <= N");
  CHECK(make(Relation::Less, N, M + 1).formula() == "N < M + 1");
  CHECK(make(Relation::Divides, 4, N).formula() == "N % 4 = 0");
  CHECK(make(Relation::Divides, 2, N - 3).formula() == "(N - 3) % 2 = 0");
  CHECK(make(Relation::Divides, M + 1, N).formula() == "N % (M + 1) = 0");
  CHECK(make(Relation::Divides, 2 * M, N).formula() == "N % (2*M) = 0");
  CHECK(make(Relation::Divides, 4, 2 * N).formula() == "2*N % 4 = 0");
  CHECK(make(Relation::Divides, 4, N / 2).formula() == "(N/2) % 4 = 0");
  CHECK(make(Relation::Divides, 4, N, "split", "x").describe() ==
        "split by 4 requires N % 4 = 0 (x)");
  CHECK(make(Relation::Divides, 4, N, "reorder").describe() ==
        "reorder with stride 4 requires N % 4 = 0");
  CHECK(make(Relation::Divides, 2, N - 3, "slideStrict").describe() ==
        "slideStrict with step 2 requires (N - 3) % 2 = 0");
  CHECK(make(Relation::LessEqual, 3, N, "slide", "the window must fit").describe() ==
        "slide requires 3 <= N (the window must fit)");
  CHECK(make(Relation::Equal, N, M).describe() == "the program requires N = M");
  CHECK(std::string(relationSymbol(Relation::Equal)) == "=");
  CHECK(std::string(relationSymbol(Relation::LessEqual)) == "<=");
  CHECK(std::string(relationSymbol(Relation::Less)) == "<");
  CHECK(std::string(relationSymbol(Relation::Divides)) == "|");
}

TEST_CASE("vars, equality") {
  const Arith k = Arith::var("k", VarKind::Tuning, 1);
  Constraint c = make(Relation::Divides, k, N + M);
  std::vector<Arith> vars = c.vars();
  REQUIRE(vars.size() == 3);
  CHECK(vars[0].varName() == "M");
  CHECK(vars[1].varName() == "N");
  CHECK(vars[2].varName() == "k");
  CHECK(make(Relation::Equal, 1, 2).vars().empty());
  CHECK(make(Relation::Divides, 4, N, "split") == make(Relation::Divides, 4, N, "asVector", "r"));
  CHECK(!(make(Relation::Divides, 4, N) == make(Relation::Equal, 4, N)));
  CHECK(!(make(Relation::Equal, N, M) == make(Relation::Equal, M, N)));
}

TEST_CASE("evaluate under a binding") {
  const Arith k = Arith::var("k", VarKind::Tuning, 1);
  CHECK(make(Relation::Divides, 4, N).evaluate({{"N", 8}}) == true);
  CHECK(make(Relation::Divides, 4, N).evaluate({{"N", 6}}) == false);
  CHECK(make(Relation::Divides, k, N).evaluate({{"N", 6}, {"k", 3}}) == true);
  CHECK(make(Relation::Divides, k, N).evaluate({{"N", 6}, {"k", 0}}) == false);  // k must be > 0
  CHECK(make(Relation::Divides, k, N).evaluate({{"N", 6}, {"k", -3}}) == false);
  CHECK(make(Relation::Divides, k, N).evaluate({{"N", 6}}) == std::nullopt);  // k unbound
  CHECK(make(Relation::Equal, N, M).evaluate({{"N", 3}, {"M", 3}}) == true);
  CHECK(make(Relation::LessEqual, 3, N).evaluate({{"N", 3}}) == true);
  CHECK(make(Relation::Less, 3, N).evaluate({{"N", 3}}) == false);
  CHECK(make(Relation::LessEqual, N / k, 2).evaluate({{"N", 6}, {"k", 0}}) == std::nullopt);
}

TEST_CASE("decide without a binding") {
  const Arith k = Arith::var("k", VarKind::Tuning, 1);
  CHECK(make(Relation::Divides, 4, 8).decide() == true);
  CHECK(make(Relation::Divides, 3, 8).decide() == false);
  CHECK(make(Relation::Divides, 0, 8).decide() == false);
  CHECK(make(Relation::Divides, 4, N).decide() == std::nullopt);
  CHECK(make(Relation::Divides, 4, 4 * N).decide() == true);
  CHECK(make(Relation::Divides, k, k * N).decide() == true);
  CHECK(make(Relation::Divides, k, N).decide() == std::nullopt);
  CHECK(make(Relation::Divides, 4, 8 * N + 2).decide() == false);
  CHECK(make(Relation::Equal, N, N).decide() == true);
  CHECK(make(Relation::Equal, N, N + 1).decide() == false);
  CHECK(make(Relation::Equal, N, M).decide() == std::nullopt);
  CHECK(make(Relation::LessEqual, 1, N).decide() == true);
  CHECK(make(Relation::LessEqual, 0, N - 1).decide() == true);
  CHECK(make(Relation::LessEqual, 3, N).decide() == std::nullopt);
  CHECK(make(Relation::LessEqual, N + 1, N).decide() == false);
  CHECK(make(Relation::Less, N, N).decide() == false);
  CHECK(make(Relation::Less, N, N + 1).decide() == true);
  CHECK(make(Relation::Less, 0, N).decide() == true);
  CHECK(make(Relation::LessEqual, 4, 3).decide() == false);
}

TEST_CASE("property: decide never contradicts evaluate") {
  // Constraints over one size variable N: lhs = a + b*N, rhs = c + d*N. Whenever decide()
  // answers, evaluation at every sampled N >= 1 must agree.
  bool ok = rc::check("decide agrees with evaluate", [] {
    const auto a = *rc::gen::inRange<int64_t>(-6, 7);
    const auto b = *rc::gen::inRange<int64_t>(-3, 4);
    const auto c = *rc::gen::inRange<int64_t>(-6, 7);
    const auto d = *rc::gen::inRange<int64_t>(-3, 4);
    const auto relation =
        *rc::gen::element(Relation::Equal, Relation::LessEqual, Relation::Less, Relation::Divides);
    const auto n = *rc::gen::inRange<int64_t>(1, 200);
    Constraint constraint = make(relation, a + b * N, c + d * N);
    std::optional<bool> decided = constraint.decide();
    if (decided) {
      RC_ASSERT(constraint.evaluate({{"N", n}}) == decided);
    }
  });
  CHECK(ok);
}

TEST_CASE("declared size ranges are what constraint inference proves with") {
  // slide needs a window of at least 1: provable for a plain size P in [1, inf), a constraint
  // once P is declared [P >= 0].
  Program program = parseProgram(
      "def plain(xs: [float]N) = slide(P, 1, xs)\n"
      "def declared[P >= 0](xs: [float]N) = slide(P, 1, xs)\n"
      "def bounded[0 <= S <= 4](xs: [float]N) = slide(3, S, xs)\n"
      "def tiles[P >= 0](xs: [float]N) = split(P, xs)\n"
      "def mirrored[P >= 0](xs: [float]N) = pad(P, P, mirror, xs)\n",
      "ranges.weft");
  std::vector<TypedDefinition> typed = typecheckProgram(program);
  REQUIRE(typed.size() == 5);
  CHECK(formulas(typed[0].constraints) == Strings{"P <= N"});
  CHECK(formulas(typed[1].constraints) == Strings{"1 <= P", "P <= N"});
  CHECK(formulas(typed[2].constraints) == Strings{"1 <= S", "3 <= N"});
  // Split by a size that may be 0: the divisibility constraint is false for 0.
  REQUIRE(formulas(typed[3].constraints) == Strings{"N % P = 0"});
  CHECK(typed[3].constraints[0].evaluate({{"N", 4}, {"P", 0}}) == false);
  CHECK(typed[3].constraints[0].evaluate({{"N", 4}, {"P", 2}}) == true);
  // 0 <= P is provable from the declaration and dropped; the mirror bound stays.
  CHECK(formulas(typed[4].constraints) == Strings{"P <= N"});

  // The convolution example: padding 0 is allowed, the window must still fit.
  std::vector<TypedDefinition> conv = typecheckProgram(parseFile("examples/conv.weft"));
  REQUIRE(conv.size() == 1);
  CHECK(formulas(conv[0].constraints) == Strings{"K <= 2*P + W", "K <= H + 2*P"});
  CHECK(conv[0].constraints[0].evaluate({{"K", 3}, {"P", 0}, {"W", 3}}) == true);
  CHECK(conv[0].constraints[0].evaluate({{"K", 3}, {"P", 0}, {"W", 2}}) == false);
}
