// Property tests of the column-walk rule (rewrite/rules_column_walk.cpp) against the
// interpreter.
//
// A generator builds a random well-typed mapSeqSlide over int data with random concrete sizes:
// X is an image of rows, or the windows of m rows of an image (slide(m, 1)); the producer P is
// column-local with a random halo k: a map of a random term over the zip of 1 to 3 taps
// crop(a, k - a, row), each row r itself or one row of the window, join(crop(i, m - 1 - i, r));
// the consumer C is column-local with halo 0 over its window of n producer rows (1 to 3 taps
// crop(0, 0, join(crop(i, n - 1 - i, w)))); the rows' width is v·B + k for a random block
// width v and block count B. The rule is applied with v through the engine (applyAt
// re-type-checks the result), both programs run in the interpreter on the same random inputs
// and must agree exactly; column-walk-padded likewise at widths of whole blocks plus up to v - 1
// columns. Unit tests: what the rule refuses (no v, a consumer with a
// horizontal halo, a producer reading its row other than through taps).
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using weft::testing::arrayOf;
using weft::testing::checkRuleOverRandomPrograms;
using weft::testing::randomTerm;
using weft::testing::uniformInt;

namespace {

const Type kInt = Type::intType();

// h over the zip of `taps` (or over the one tap): a random term of each component, summed.
Expr overTaps(std::mt19937_64& rng, const std::vector<Expr>& taps) {
  if (taps.size() == 1) {
    return map(lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x) + lit(1); }),
               taps[0]);
  }
  return map(lam("t",
                 [&](Expr t) {
                   Expr sum = lit(1);
                   for (size_t i = 0; i < taps.size(); ++i) {
                     sum = sum +
                           randomTerm(rng, ScalarKind::Int, get(Arith(static_cast<int64_t>(i)), t));
                   }
                   return sum;
                 }),
             zip(taps));
}

// Row i of a window of `rows` rows.
Expr rowOf(const Expr& window, int64_t i, int64_t rows) {
  return join(crop(Arith(i), Arith(rows - 1 - i), window));
}

// A column-local producer with halo k over rows (window = false) or windows of m rows.
Expr producer(std::mt19937_64& rng, bool window, int m, int k) {
  return lam("r", [&](Expr r) {
    std::vector<Expr> taps;
    const int count = uniformInt(rng, 1, 3);
    for (int q = 0; q < count; ++q) {
      const int a = uniformInt(rng, 0, k);
      Expr row = window ? rowOf(r, uniformInt(rng, 0, m - 1), m) : r;
      taps.push_back(crop(Arith(a), Arith(k - a), row));
    }
    return overTaps(rng, taps);
  });
}

// A column-local consumer with halo 0 over a window of n rows.
Expr consumer(std::mt19937_64& rng, int n) {
  return lam("w", [&](Expr w) {
    std::vector<Expr> taps;
    const int count = uniformInt(rng, 1, 3);
    for (int q = 0; q < count; ++q) {
      taps.push_back(crop(Arith(0), Arith(0), rowOf(w, uniformInt(rng, 0, n - 1), n)));
    }
    return overTaps(rng, taps);
  });
}

// column-walk, or column-walk-padded (`anyWidth`: an output width of whole blocks plus 0 to
// v - 1 columns), on a random program.
bool checkColumnWalk(std::mt19937_64& rng, const std::string& rule, bool anyWidth) {
  const int v = uniformInt(rng, 1, 4), blocks = uniformInt(rng, 1, 3), k = uniformInt(rng, 0, 2);
  const int width = v * blocks + (anyWidth ? uniformInt(rng, 0, v - 1) : 0);
  const int height = uniformInt(rng, 1, 6);
  Expr input = Expr::param("input", arrayOf(arrayOf(kInt, width + k), height));
  const bool window = uniformInt(rng, 0, 1) == 1;
  const int m = window ? uniformInt(rng, 1, height) : 1;
  Expr xs = window ? slide(m, 1, input) : input;
  const int rows = height - m + 1;
  const int n = uniformInt(rng, 1, rows);
  Expr target = mapSeqSlide(Arith(n), consumer(rng, n), producer(rng, window, m, k), xs);
  Definition d{"f", Expr::lambda({input}, target), Type(), {}};
  return testing::checkRewriteWhereRunnable(d, testing::ruleNamed(rule), target, rng,
                                            {{"v", Arith(v)}});
}

}  // namespace

TEST_CASE("column-walk preserves the interpreter's result") {
  checkRuleOverRandomPrograms("column-walk", [](std::mt19937_64& rng) {
    return checkColumnWalk(rng, "column-walk", false);
  });
}

TEST_CASE("column-walk-padded preserves it at any width, whole blocks or not") {
  checkRuleOverRandomPrograms("column-walk-padded", [](std::mt19937_64& rng) {
    return checkColumnWalk(rng, "column-walk-padded", true);
  });
}

TEST_CASE("column-walk refuses what it cannot take") {
  Expr input = Expr::param("input", arrayOf(arrayOf(kInt, 10), 5));
  auto sumOfPair = [](Expr t) { return get(0, t) + get(1, t); };
  // The producer: the horizontal sum of neighbours (halo 2, 8 columns out).
  Expr horizontal =
      lam("r", [&](Expr r) { return map(lam("t", sumOfPair), zip(crop(0, 2, r), crop(2, 0, r))); });
  Expr vertical = lam("w", [&](Expr w) {
    return map(lam("t", sumOfPair), zip(crop(0, 0, rowOf(w, 0, 2)), crop(0, 0, rowOf(w, 1, 2))));
  });
  const RuleArguments four = {{"v", Arith(4)}};
  auto tryIt = [&](Expr consumerFunction, Expr producerFunction, const RuleArguments& arguments) {
    Expr target = mapSeqSlide(Arith(2), consumerFunction, producerFunction, input);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return testing::tryRuleAt(d, "column-walk", target, arguments);
  };
  CHECK(tryIt(vertical, horizontal, four).has_value());
  // No block width given.
  CHECK_FALSE(tryIt(vertical, horizontal, {}).has_value());
  // A consumer reading neighbouring columns of its rows (halo 1): its blocks would need the
  // producer's columns beyond them.
  Expr sideways = lam("w", [&](Expr w) {
    return map(lam("t", sumOfPair), zip(crop(0, 1, rowOf(w, 0, 2)), crop(1, 0, rowOf(w, 1, 2))));
  });
  CHECK_FALSE(tryIt(sideways, horizontal, four).has_value());
  // A producer reading its row other than through taps (a reordered row) is not column-local.
  Expr reversed = lam("r", [&](Expr r) {
    return map(lam("t", sumOfPair), zip(crop(0, 2, r), crop(0, 2, reorderStride(Arith(1), r))));
  });
  CHECK_FALSE(tryIt(vertical, reversed, four).has_value());
}
