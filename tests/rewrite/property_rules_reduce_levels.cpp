// Property tests of rewrite/rules_reduce_levels.cpp: reduce-swap-inner-levels and
// reduce-nest-inner-level.
//
// rapidcheck builds random reductions over flattened nested arrays: one array or a zip of two
// with the same nested lengths (two or three levels of one to three elements, joined back to
// one dimension), int or float scalars, a scalar accumulator (acc + term) or an array of them
// updated element-wise (map(q -> q._0 + term, zip(accs, x))), the sum on either side. Each
// rule is applied through the engine (applyAt re-type-checks the result) and the original and
// rewritten programs run in the interpreter on the same random inputs: exactly equal for
// reduce-nest-inner-level (the same operations in the same order) and for int sums, within
// kRuleTolerance for float sums under reduce-swap-inner-levels (it re-associates the sum).
// Unit tests check where the rules must not match.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/engine.h"
#include "tests/support/blocking_rule_check.h"
#include "tests/support/rule_check.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing;

namespace {

// A random reduction over flattened nested arrays (see the file comment) and the reduce node.
struct LevelReduction {
  Definition definition;
  Expr reduceNode;
  bool arrayAccumulator = false;
};

LevelReduction randomLevelReduction(std::mt19937_64& rng, ScalarKind kind, bool arrayAccumulator) {
  const Type t = Type::scalar(kind);
  const int levels = pick(rng, 2, 3);  // nested levels of each component: d = levels - 1 joins
  std::vector<int> shape;
  for (int i = 0; i < levels; ++i) shape.push_back(pick(rng, 1, 3));
  const bool zipped = coin(rng);
  const bool sumOnLeft = coin(rng);
  const int accumulators = pick(rng, 1, 3);
  // With an array accumulator the first component's elements are [t]accumulators.
  const Type first = arrayAccumulator ? arrayOf(t, accumulators) : t;
  LevelReduction out;
  out.arrayAccumulator = arrayAccumulator;
  out.definition = definition(
      "p",
      {{"a", nestedArray(first, shape)}, {"b", nestedArray(t, shape)}, {"z", t}},
      [&](const auto& p) {
        Expr xs = zipped ? zip(joinTimes(p[0], levels - 1), joinTimes(p[1], levels - 1))
                         : joinTimes(p[0], levels - 1);
        auto add = [&](Expr acc, Expr term) { return sumOnLeft ? acc + term : term + acc; };
        Expr f;
        Expr init;
        if (arrayAccumulator) {
          init = fill(accumulators, p[2]);
          f = lam2("accs", "x", [&](Expr accs, Expr x) {
            Expr values = zipped ? get(0, x) : x;
            return map(lam("q",
                           [&](Expr q) {
                             Expr term = zipped ? get(1, q) * get(1, x) : get(1, q);
                             return add(get(0, q), randomTerm(rng, kind, term));
                           }),
                       zip(accs, values));
          });
        } else {
          init = p[2];
          f = lam2("acc", "x", [&](Expr acc, Expr x) {
            Expr term = zipped ? get(0, x) * get(1, x) : x;
            return add(acc, randomTerm(rng, kind, term));
          });
        }
        out.reduceNode = reduce(init, f, xs);
        return out.reduceNode;
      });
  return out;
}

}  // namespace

TEST_CASE("reduce-swap-inner-levels keeps a sum over exchanged nested levels") {
  checkRuleApplications("reduce-swap-inner-levels", [&](std::mt19937_64& rng, ScalarKind kind) {
    LevelReduction r = randomLevelReduction(rng, kind, coin(rng));
    Definition rewritten = rewriteAt(r.definition, "reduce-swap-inner-levels", r.reduceNode, {});
    RC_ASSERT(countPrims(rewritten.function.body(), Op::Transpose) >= 1);
    RC_TAG(r.arrayAccumulator ? "array accumulator" : "scalar accumulator");
    checkRewriteKeepsResult(r.definition, rewritten, rng, kind == ScalarKind::Float);
  });
}

TEST_CASE("reduce-nest-inner-level folds row by row with the same result exactly") {
  checkRuleApplications("reduce-nest-inner-level", [&](std::mt19937_64& rng, ScalarKind kind) {
    LevelReduction r = randomLevelReduction(rng, kind, true);
    Definition rewritten = rewriteAt(r.definition, "reduce-nest-inner-level", r.reduceNode, {});
    RC_ASSERT(countPrims(rewritten.function.body(), Op::Reduce) == 2);
    checkRewriteKeepsResult(r.definition, rewritten, rng);
  });
}

TEST_CASE("reduce level rules: no match without nested levels, a sum, or an array accumulator") {
  const Type t = Type::floatType();
  auto matches = [&](const std::string& rule, bool nestedData, bool additive, bool arrayAcc) {
    Expr target;
    Definition d = definition(
        "p", {{"a", arrayOf(arrayOf(arrayOf(t, 2), 3), 2)}, {"flat", arrayOf(t, 12)}, {"z", t}},
        [&](const auto& p) {
          Expr xs = nestedData ? join(join(p[0])) : p[1];
          Expr f;
          if (arrayAcc) {
            f = lam2("accs", "x", [&](Expr accs, Expr x) {
              return map(lam("q",
                             [&](Expr q) {
                               return additive ? get(0, q) + get(1, q) : get(0, q) * get(1, q);
                             }),
                         zip(accs, fill(2, x)));
            });
          } else {
            f = lam2("acc", "x", [&](Expr acc, Expr x) { return additive ? acc + x : acc * x; });
          }
          target = reduce(arrayAcc ? fill(2, p[2]) : p[2], f, xs);
          return target;
        });
    return tryRuleAt(d, rule, target).has_value();
  };
  CHECK(matches("reduce-swap-inner-levels", true, true, false));
  CHECK(matches("reduce-swap-inner-levels", true, true, true));
  CHECK_FALSE(matches("reduce-swap-inner-levels", true, false, false));  // acc * x
  CHECK_FALSE(matches("reduce-swap-inner-levels", true, false, true));   // q._0 * q._1
  CHECK_FALSE(matches("reduce-swap-inner-levels", false, true, false));  // no joins
  CHECK(matches("reduce-nest-inner-level", true, false, true));  // any f: the order is kept
  CHECK_FALSE(matches("reduce-nest-inner-level", true, true, false));  // a scalar accumulator
  CHECK_FALSE(matches("reduce-nest-inner-level", false, true, true));  // no joins
}
