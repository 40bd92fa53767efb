// Tests of tuningFeasibility (typecheck/feasibility.h): the walk over the tuning parameters'
// ranges finds a value where one exists, says so where none does, and answers Unknown where it
// cannot tell (the search's use of it: tests/rewrite/test_sequence_search.cpp).
#include <doctest/doctest.h>

#include "typecheck/feasibility.h"

using namespace weft;

namespace {

Constraint relation(Relation relation, const Arith& lhs, const Arith& rhs) {
  Constraint c;
  c.relation = relation;
  c.lhs = lhs;
  c.rhs = rhs;
  return c;
}
Constraint divides(const Arith& divisor, const Arith& dividend) {
  return relation(Relation::Divides, divisor, dividend);
}
Constraint lessEqual(const Arith& a, const Arith& b) { return relation(Relation::LessEqual, a, b); }

const Arith N = Arith::var("N", VarKind::Size, Arith(1), Arith(int64_t{1} << 30));

}  // namespace

TEST_CASE("a window of 5 split by omega has no part of 4 lanes; of 5 it has") {
  const Arith omega = Arith::var("omega", VarKind::Tuning, Arith(1), Arith(5));
  const std::vector<Constraint> vectorsOf4 = {divides(omega, Arith(5)), divides(Arith(4), omega)};
  CHECK(tuningFeasibility(vectorsOf4, {}) == Feasibility::Infeasible);
  const std::vector<Constraint> vectorsOf5 = {divides(omega, Arith(5)), divides(Arith(5), omega)};
  CHECK(tuningFeasibility(vectorsOf5, {}) == Feasibility::Feasible);
}

TEST_CASE("ranges that follow earlier parameters and the sizes") {
  const Arith omega1 = Arith::var("omega1", VarKind::Tuning, Arith(1), N);
  const Arith omega2 = Arith::var("omega2", VarKind::Tuning, Arith(1), N / omega1);
  // omega1 * omega2 = 12 with both dividing N = 24, and omega2 a multiple of 4: (3, 4), (1, 12).
  const std::vector<Constraint> constraints = {
      divides(omega1, N), divides(omega2, N / omega1), divides(Arith(4), omega2),
      lessEqual(omega1 * omega2, Arith(12)), lessEqual(Arith(12), omega1 * omega2)};
  CHECK(tuningFeasibility(constraints, {{"N", 24}}) == Feasibility::Feasible);
  // N = 18: omega2 a multiple of 4 dividing 18 / omega1 is impossible.
  CHECK(tuningFeasibility(constraints, {{"N", 18}}) == Feasibility::Infeasible);
  // An unbound size: no answer.
  CHECK(tuningFeasibility(constraints, {}) == Feasibility::Unknown);
}

TEST_CASE("a walk longer than its bound, or a size condition alone") {
  const Arith stride = Arith::var("stride", VarKind::Tuning, Arith(1), N);
  // No stride in [1, N] is above N: the walk would cover all N values.
  const std::vector<Constraint> never = {lessEqual(N + Arith(1), stride)};
  CHECK(tuningFeasibility(never, {{"N", 1000}}) == Feasibility::Infeasible);
  CHECK(tuningFeasibility(never, {{"N", 1000}}, 100) == Feasibility::Unknown);
  // A condition on the sizes alone decides at once.
  CHECK(tuningFeasibility({divides(Arith(8), N)}, {{"N", 20}}) == Feasibility::Infeasible);
  CHECK(tuningFeasibility({divides(Arith(4), N)}, {{"N", 20}}) == Feasibility::Feasible);
  CHECK(tuningFeasibility({}, {}) == Feasibility::Feasible);
}

TEST_CASE("a parameter that must divide a fixed value walks its divisors only") {
  // chunk in [1, N] dividing N (a split's n % chunk = 0, or chunk | N) with chunk >= 2 and
  // chunk < N: at the prime N = 2^31 - 1 nothing, decided after two values where a walk
  // over the range would stop at its bound; at N = 2^30, chunk = 2.
  const Arith chunk = Arith::var("chunk", VarKind::Tuning, Arith(1), N);
  const Arith prime = Arith(int64_t{2147483647});
  const ArithBinding atPrime = {{"N", 2147483647}};
  const std::vector<Constraint> proper = {lessEqual(Arith(2), chunk), lessEqual(chunk + 1, N)};
  std::vector<Constraint> splitCondition = proper;
  splitCondition.push_back(relation(Relation::Equal, N % chunk, Arith(0)));
  CHECK(tuningFeasibility(splitCondition, atPrime, 10) == Feasibility::Infeasible);
  CHECK(tuningFeasibility(splitCondition, {{"N", int64_t{1} << 30}}, 10) == Feasibility::Feasible);
  std::vector<Constraint> dividing = proper;
  dividing.push_back(divides(chunk, N));
  CHECK(tuningFeasibility(dividing, atPrime, 10) == Feasibility::Infeasible);
  // Without the divisibility the same bound leaves it undecided.
  CHECK(tuningFeasibility({lessEqual(prime + 1, chunk)}, atPrime, 10) == Feasibility::Unknown);
}
