// Tests of explore/z3_encoding: Z3 agrees with the C++ evaluator (Constraint::evaluate) on
// random points for constraints with +, *, truncating / and %, min, max and conditionals over
// parameters of both signs (division by zero makes a constraint false in both), and on the
// spaces of rewritten programs; an empty space is explained by its unsat core in the program's
// words, naming only the conflicting constraints.
#include <doctest/doctest.h>

#include <random>

#include "explore/z3_encoding.h"
#include "ir/builders.h"
#include "tests/explore/parametric_programs.h"

using namespace weft;
using namespace weft::explore;
namespace ex = weft::testing::explore;

namespace {

Parameter parameter(const std::string& name, int64_t lo, int64_t hi) {
  Parameter p;
  p.name = name;
  p.lo = lo;
  p.hi = hi;
  p.variable = Arith::var(name, VarKind::Tuning, lo, hi);
  return p;
}

Constraint constraint(Relation relation, Arith lhs, Arith rhs, std::string origin) {
  Constraint c;
  c.relation = relation;
  c.lhs = std::move(lhs);
  c.rhs = std::move(rhs);
  c.origin = std::move(origin);
  return c;
}

// The error requireSatisfiable throws for `space`, which must be empty.
UnsatisfiableSpace emptySpaceError(const ParameterSpace& space) {
  SpaceSolver solver(space);
  try {
    solver.requireSatisfiable();
  } catch (const UnsatisfiableSpace& e) {
    return e;
  }
  FAIL("the space should be empty");
  return UnsatisfiableSpace("", {});
}

// Z3's verdict and the evaluator's on every constraint at `count` random points of the box.
void checkAgreement(ParameterSpace& space, int count, uint64_t seed) {
  SpaceSolver solver(space);
  std::mt19937_64 rng(seed);
  int agreedTrue = 0, agreedFalse = 0;
  for (int i = 0; i < count; ++i) {
    std::vector<int64_t> point;
    for (const Parameter& p : space.parameters) {
      point.push_back(std::uniform_int_distribution<int64_t>(p.lo, p.hi)(rng));
    }
    ArithBinding binding = space.binding(point);
    for (size_t c = 0; c < space.constraints.size(); ++c) {
      bool cpp = space.constraints[c].constraint.evaluate(binding).value_or(false);
      bool z3 = solver.holdsAt(c, point);
      CAPTURE(space.constraints[c].constraint.formula());
      CAPTURE(point);
      REQUIRE(cpp == z3);
      (cpp ? agreedTrue : agreedFalse)++;
    }
  }
  // Both verdicts occur, so the comparison is not vacuous.
  CHECK(agreedTrue > 0);
  CHECK(agreedFalse > 0);
}

}  // namespace

TEST_CASE("Z3 agrees with the evaluator on truncating division and remainder of any sign") {
  ParameterSpace space;
  space.definitionName = "synthetic";
  space.parameters = {parameter("a", -20, 20), parameter("b", -7, 7), parameter("c", 1, 9)};
  Arith a = space.parameters[0].variable, b = space.parameters[1].variable,
        c = space.parameters[2].variable;
  space.constraints = {
      {constraint(Relation::LessEqual, a % b, Arith(2), "t1"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Less, (a + 3 * c) / c, b, "t2"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, c, a * b + 7, "t3"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, b, a, "t4"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Equal, min(a, b) + max(a, c), (a - b) % c, "t5"), {},
       ConstraintSource::Algorithmic},
      {constraint(Relation::LessEqual, ifLess(a, b, a * c, b / c), Arith(3), "t6"), {},
       ConstraintSource::Algorithmic},
      {constraint(Relation::Equal, (a / b) * b + a % b, a, "t7"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Less, (a * a - 5) / (b + c), (a - 7) % (c + 1), "t8"), {},
       ConstraintSource::Algorithmic},
      {constraint(Relation::LessEqual, ceilDiv(a + 20, c) * (b % 3), Arith(4), "t9"), {},
       ConstraintSource::Algorithmic},
  };
  checkAgreement(space, 400, 7);
}

TEST_CASE("Z3 agrees with the evaluator on the spaces of rewritten programs") {
  rewrite::RewriteContext c1, c2;
  ParameterSpace twice = buildParameterSpace(ex::splitTwice(c1), {{"N", 96}});
  checkAgreement(twice, 300, 3);
  ParameterSpace tiles = buildParameterSpace(
      ex::applyRules(ex::kStencil1D, {{"slide-tiling", "0.1"}}, c2), {{"N", 130}});
  checkAgreement(tiles, 300, 5);
}

TEST_CASE("an empty space names the conflicting constraints in the program's words") {
  Arith kappa = Arith::var("kappa", VarKind::Tuning, 2, 7);
  Arith other = Arith::var("omega", VarKind::Tuning, 1, 7);
  Definition def = definition(
      "d", {{"xs", Type::array(Type::floatType(), Arith(7))}},
      [&](const std::vector<Expr>& p) { return split(kappa, join(split(other, p[0]))); });
  SpaceOptions options;
  options.powerOfTwo = {"kappa"};
  ParameterSpace space = buildParameterSpace(def, {}, options);
  const std::string message = emptySpaceError(space).what();
  CAPTURE(message);
  CHECK(message.find("split by kappa requires (7 - 7%omega) % kappa = 0") != std::string::npos);
  CHECK(message.find("kappa ranges over powers of two in [2, 7]") != std::string::npos);
  CHECK(message.find("split by omega requires 7 % omega = 0") != std::string::npos);
  // The same program with a length kappa can divide is not empty.
  Definition fine = definition(
      "d", {{"xs", Type::array(Type::floatType(), Arith(8))}},
      [&](const std::vector<Expr>& p) { return split(kappa, p[0]); });
  ParameterSpace ok = buildParameterSpace(fine, {}, options);
  SpaceSolver okSolver(ok);
  CHECK_NOTHROW(okSolver.requireSatisfiable());
  std::vector<int64_t> point = okSolver.anyPoint();
  CHECK(ok.violations(point).empty());
}

TEST_CASE("the unsat core leaves out constraints that take no part in the conflict") {
  ParameterSpace space;
  space.definitionName = "independent";
  space.parameters = {parameter("kappa", 2, 7), parameter("omega", 1, 30)};
  space.parameters[0].kind = DomainKind::PowerOfTwo;
  Arith kappa = space.parameters[0].variable, omega = space.parameters[1].variable;
  space.constraints = {
      {constraint(Relation::Divides, omega, Arith(30), "split"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, kappa, Arith(7), "split"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::LessEqual, omega, Arith(10), "slide"), {}, ConstraintSource::Algorithmic},
  };
  const UnsatisfiableSpace error = emptySpaceError(space);
  const std::string message = error.what();
  CAPTURE(message);
  CHECK(error.conflicting.size() == 2);
  CHECK(message.find("split by kappa requires 7 % kappa = 0") != std::string::npos);
  CHECK(message.find("omega") == std::string::npos);
}

TEST_CASE(
    "divisibility by a constant, encoded as the choice of its divisors, agrees with the "
    "evaluator") {
  ParameterSpace space;
  space.definitionName = "constant dividends";
  space.parameters = {parameter("a", -12, 40), parameter("c", 0, 9)};
  Arith a = space.parameters[0].variable, c = space.parameters[1].variable;
  space.constraints = {
      {constraint(Relation::Divides, a, Arith(36), "d1"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, 2 * c + a, Arith(60), "d2"),
       {},
       ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, a % c, Arith(24), "d3"), {}, ConstraintSource::Algorithmic},
      {constraint(Relation::Divides, a - c, Arith(1), "d4"), {}, ConstraintSource::Algorithmic},
  };
  checkAgreement(space, 400, 11);

  // A split of a prime length by a parameter that may not take the whole length: empty, and
  // the core names the split.
  ParameterSpace prime;
  prime.definitionName = "prime";
  prime.parameters = {parameter("chunk", 2, 999982), parameter("rows", 1, 64)};
  Arith chunk = prime.parameters[0].variable, rows = prime.parameters[1].variable;
  prime.constraints = {
      {constraint(Relation::Divides, chunk, Arith(999983), "split"),
       {},
       ConstraintSource::Algorithmic},
      {constraint(Relation::LessEqual, rows, chunk, "slide"), {}, ConstraintSource::Algorithmic},
  };
  const std::string message = emptySpaceError(prime).what();
  CAPTURE(message);
  CHECK(message.find("999983 % chunk = 0") != std::string::npos);
  CHECK(message.find("rows") == std::string::npos);
  prime.parameters[0].hi = 999983;
  SpaceSolver whole(prime);
  CHECK_NOTHROW(whole.requireSatisfiable());
  CHECK(whole.anyPoint()[0] == 999983);
}

TEST_CASE("unroll caps: a lowering unrolled over a whole row has no point") {
  // mapSeqUnroll over join(split(chunk, xs)) of N floats: the declared type makes chunk divide
  // N, so the loop always has N iterations (the walk over N's divisors decides it); over
  // pad(0, rho, xs) it has N + rho, rho in [0, N], more values than the walk visits: Z3
  // decides it. At N = 2^22 the cap (256 on a GPU) is out of reach; at N = 64 it holds.
  const Arith n = Arith::var("N", VarKind::Size, 1);
  const Arith chunk = Arith::var("chunk", VarKind::Tuning, Arith(1), n);
  const Arith rho = Arith::var("rho", VarKind::Tuning, Arith(0), n);
  auto increment = [] { return lam("x", [](Expr x) { return x + lit(1.0f); }); };
  const Definition wholeSplit =
      definition("u", {{"xs", Type::array(Type::floatType(), n)}}, [&](const std::vector<Expr>& p) {
        return mapSeqUnroll(increment(), join(split(chunk, p[0])));
      });
  const Definition padded =
      definition("p", {{"xs", Type::array(Type::floatType(), n)}}, [&](const std::vector<Expr>& p) {
        return crop(Arith(0), rho,
                    mapSeqUnroll(increment(), pad(Arith(0), rho, Boundary::Clamp, p[0])));
      });
  SpaceOptions options;
  options.device = host::loadProfile("nvidia-generic");
  const ArithBinding large = {{"N", int64_t{1} << 22}};
  for (const Definition* d : {&wholeSplit, &padded}) {
    CAPTURE(d->name);
    CHECK_FALSE(unrollCapsLeaveAPoint(*d, large, options));
    CHECK(unrollCapsLeaveAPoint(*d, {{"N", 64}}, options));
    // Without a device, or with the cap off, nothing is ruled out.
    CHECK(unrollCapsLeaveAPoint(*d, large, SpaceOptions{}));
    SpaceOptions uncapped = options;
    uncapped.maxUnrolledIterations = 0;
    CHECK(unrollCapsLeaveAPoint(*d, large, uncapped));
  }
  // A loop whose length follows the parameter is capped at some of its values only.
  const Definition perChunk =
      definition("c", {{"xs", Type::array(Type::floatType(), n)}}, [&](const std::vector<Expr>& p) {
        return join(mapGlb(Arith(0), lam("c", [&](Expr c) { return mapSeqUnroll(increment(), c); }),
                           split(chunk, p[0])));
      });
  CHECK(unrollCapsLeaveAPoint(perChunk, large, options));
}
