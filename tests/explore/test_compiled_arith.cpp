// CompiledArith (explore/compiled_constraint.h, a postfix program over parameter slots) against
// weft::tryEvaluate on random expressions that use every kind of node — sums, products, /, %,
// min, max and conditionals nested in each other — at random points, undefined values (division
// by zero, overflow) included; and the sampler's solver-free non-emptiness proof (a witness
// point) next to Z3's proof of an empty space.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "explore/compiled_constraint.h"
#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "explore/z3_encoding.h"
#include "ir/arith.h"
#include "ir/parser.h"

using namespace weft;
using namespace weft::explore;

namespace {

const std::vector<std::string> kNames = {"a", "b", "c"};

Arith randomExpression(std::mt19937_64& rng, int depth) {
  const int leaf = depth <= 0 ? static_cast<int>(rng() % 2) : -1;
  const int pick = leaf >= 0 ? leaf : static_cast<int>(rng() % 10);
  switch (pick) {
    case 0:
      return Arith(static_cast<int64_t>(rng() % 21) - 10);
    case 1:
      return Arith::var(kNames[rng() % kNames.size()], VarKind::Tuning, Arith(-100),
                        Arith(100));
    case 2:
      return randomExpression(rng, depth - 1) + randomExpression(rng, depth - 1);
    case 3:
      return randomExpression(rng, depth - 1) * randomExpression(rng, depth - 1);
    case 4:
    case 5: {
      Arith a = randomExpression(rng, depth - 1);
      Arith b = randomExpression(rng, depth - 1);
      if (b.constant() == 0) b = b + 3;  // a constant divisor 0 throws while building
      return pick == 4 ? a / b : a % b;
    }
    case 6:
      return min(randomExpression(rng, depth - 1), randomExpression(rng, depth - 1));
    case 7:
      return max(randomExpression(rng, depth - 1), randomExpression(rng, depth - 1));
    default:
      return ifLess(randomExpression(rng, depth - 1), randomExpression(rng, depth - 1),
                    randomExpression(rng, depth - 1), randomExpression(rng, depth - 1));
  }
}

}  // namespace

TEST_CASE("compiled expressions agree with tryEvaluate on random expressions and points") {
  std::mt19937_64 rng(11);
  auto slotOf = [](const std::string& name) {
    for (size_t i = 0; i < kNames.size(); ++i) {
      if (kNames[i] == name) return static_cast<int>(i);
    }
    return -1;
  };
  int compared = 0, undefined = 0, conditionals = 0;
  for (int e = 0; e < 400; ++e) {
    Arith expression;
    try {
      expression = randomExpression(rng, 1 + static_cast<int>(rng() % 4));
    } catch (const ArithError&) {
      continue;  // an overflow while simplifying constants
    }
    if (expression.toString().find('?') != std::string::npos) ++conditionals;
    CompiledArith compiled(expression, slotOf);
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<int64_t> point;
      ArithBinding binding;
      for (const std::string& name : kNames) {
        const int kind = static_cast<int>(rng() % 8);
        const int64_t v = kind == 0   ? 0
                          : kind == 1 ? static_cast<int64_t>(rng() >> 1)  // overflows
                                      : static_cast<int64_t>(rng() % 41) - 20;
        point.push_back(v);
        binding[name] = v;
      }
      std::optional<int64_t> expected = tryEvaluate(expression, binding);
      if (!expected) ++undefined;
      CAPTURE(expression.toString());
      CHECK(compiled.evaluate(point.data()) == expected);
      ++compared;
    }
  }
  MESSAGE(compared << " comparisons, " << undefined << " undefined, " << conditionals
                   << " expressions with conditionals");
  CHECK(undefined > 0);
  CHECK(conditionals > 0);
}

TEST_CASE("a non-empty space needs no solver check; an empty one still names its conflict") {
  Program program = parseProgram(
      "def f[1 <= a <= 60, 1 <= b <= 60](xs: [float]N) = map(r -> split(b, r), split(a, xs))\n");
  Definition tuned = tuneUnboundSizes(program.definitions[0], {{"N", 3600}});
  ParameterSpace space = buildParameterSpace(tuned, {{"N", 3600}});
  {
    Sampler sampler(space);
    SampleSet samples = sampler.sample(20, 3);
    CHECK(samples.points.size() == 20);
    CHECK(samples.solverChecks == 0);
  }
  // a divides 3600, b divides a, and a + b > 200 cannot hold with a, b <= 60.
  Constraint impossible;
  impossible.relation = Relation::Less;
  impossible.lhs = Arith(200);
  impossible.rhs = space.find("a")->variable + space.find("b")->variable;
  impossible.origin = "test";
  impossible.reason = "an impossible test constraint";
  space.constraints.push_back({impossible, impossible, ConstraintSource::Algorithmic});
  CHECK_THROWS_AS(Sampler{space}, UnsatisfiableSpace);
}
