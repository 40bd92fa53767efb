// Property tests of the sliding-window rule (rewrite/rules_sliding_window.cpp) against the
// interpreter, and of mapSeqSlide's meaning.
//
// A generator builds a random well-typed left side over int data with random concrete sizes:
// the producer is a map (or mapSeq, mapSeqUnroll) of a random scalar term over a 1-D array, or
// of a row function (a map of a term over each row, or a window sum of the row) over a 2-D
// image; between it and the slide, sometimes a layout map (each row split into one-element
// groups, or boxed as a one-row array, and joined back); the slide (or slideStrict) has step 1
// and a random size up to the length; above it, sometimes the windows transposed; the consumer
// (map or mapSeq) reduces a window with a random term, or combines its first and last element.
// The rule is applied through the engine (applyAt re-type-checks the result), both programs
// run in the interpreter on the same random inputs and must agree exactly. 100 rapidcheck
// cases, at least 50 applications. Unit tests: what the rule refuses (step 2, a symbolic size,
// a view below the slide), and mapSeqSlide's type errors and its interpreter result on a
// known input.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <random>
#include <string>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/parser.h"
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

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

// A random term of x plus one: never x itself, so a map of it computes (is not a view).
Expr intFunction(std::mt19937_64& rng) {
  return lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x) + lit(1); });
}

// The sum of f over an array: a [int]1.
Expr sumOf(std::mt19937_64& rng, const Expr& xs) {
  return reduce(lit(0),
                lam2("a", "v",
                     [&](Expr a, Expr v) { return a + randomTerm(rng, ScalarKind::Int, v); }),
                xs);
}

Expr producerMap(std::mt19937_64& rng, Expr f, Expr xs) {
  switch (uniformInt(rng, 0, 2)) {
    case 0:
      return map(std::move(f), std::move(xs));
    case 1:
      return mapSeq(std::move(f), std::move(xs));
    default:
      return mapSeqUnroll(std::move(f), std::move(xs));
  }
}

bool checkRewrite(const Definition& original, const Expr& target, std::mt19937_64& rng) {
  return testing::checkRewriteWhereRunnable(original, testing::ruleNamed("sliding-window"),
                                            target, rng);
}

Expr slideOf(std::mt19937_64& rng, int size, Expr xs) {
  return chance(rng, 2) ? slide(size, 1, std::move(xs)) : slideStrict(size, 1, std::move(xs));
}

}  // namespace

TEST_CASE("sliding-window preserves the interpreter's result (1-D)") {
  checkRuleOverRandomPrograms("sliding-window 1-D", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 8);
    Expr input = Expr::param("input", arrayOf(kInt, n));
    Expr produced = producerMap(rng, intFunction(rng), input);
    const int size = uniformInt(rng, 1, n);
    Expr windows = slideOf(rng, size, produced);
    Expr consumer = chance(rng, 2) ? lam("w", [&](Expr w) { return sumOf(rng, w); })
                                   : lam("w", [&](Expr w) {
                                       return map(lam("p", [&](Expr p) {
                                                    return get(0, p) * lit(3) - get(1, p);
                                                  }),
                                                  zip(crop(0, size - 1, w), crop(size - 1, 0, w)));
                                     });
    Expr target = chance(rng, 2) ? map(consumer, windows) : mapSeq(consumer, windows);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, target, rng);
  });
}

TEST_CASE("sliding-window preserves the interpreter's result (rows of an image)") {
  checkRuleOverRandomPrograms("sliding-window rows", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 6);
    Expr input = Expr::param("input", arrayOf(arrayOf(kInt, width), height));
    const int rowWindow = uniformInt(rng, 1, width);
    // A row of the producer: a term per pixel, or a window sum along the row.
    Expr rowFunction = chance(rng, 2)
                           ? lam("r", [&](Expr r) { return map(intFunction(rng), r); })
                           : lam("r", [&](Expr r) {
                               return join(map(lam("w", [&](Expr w) { return sumOf(rng, w); }),
                                               slide(rowWindow, 1, r)));
                             });
    Expr produced = producerMap(rng, rowFunction, input);
    const int layout = uniformInt(rng, 0, 2);
    if (layout == 1) {
      produced = map(lam("r", [](Expr r) { return join(split(1, r)); }), produced);
    } else if (layout == 2) {
      produced = map(lam("r", [](Expr r) { return split(1, r); }), produced);
    }
    const int size = uniformInt(rng, 1, height);
    Expr windows = slideOf(rng, size, produced);
    const bool transposed = chance(rng, 2);
    if (transposed) windows = map(lam("w", [](Expr w) { return transpose(w); }), windows);
    // A window of rows (or of columns when transposed): sums along its outer dimension.
    Expr consumer = lam("w", [&](Expr w) {
      if (transposed) {
        return map(lam("column", [&](Expr column) {
                     return layout == 2 ? sumOf(rng, join(column)) : sumOf(rng, column);
                   }),
                   w);
      }
      return layout == 2 ? map(lam("row", [&](Expr row) { return sumOf(rng, join(row)); }), w)
                         : map(lam("row", [&](Expr row) { return sumOf(rng, row); }), w);
    });
    Expr target = chance(rng, 2) ? map(consumer, windows) : mapSeq(consumer, windows);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, target, rng);
  });
}

TEST_CASE("sliding-window refuses what it cannot take") {
  Expr input = Expr::param("input", arrayOf(kInt, 8));
  auto sum = lam("w", [](Expr w) {
    return reduce(lit(0), lam2("a", "v", [](Expr a, Expr v) { return a + v; }), w);
  });
  auto twice = lam("x", [](Expr x) { return x * lit(2); });
  // Step 2: windows overlap by less than all but one element.
  {
    Expr target = map(sum, slide(3, 2, map(twice, input)));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, "sliding-window", target).has_value());
  }
  // A view below the slide: nothing computed to keep.
  {
    Expr target = map(sum, slide(3, 1, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, "sliding-window", target).has_value());
  }
  // A symbolic window size: the window must be a private array of known size.
  {
    Expr symbolic = Expr::param("input", arrayOf(kInt, 8));
    Expr target = map(sum, slide(Arith::var("k", VarKind::Tuning, 1, 8), 1, map(twice, symbolic)));
    Definition d{"f", Expr::lambda({symbolic}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, "sliding-window", target).has_value());
  }
}

TEST_CASE("mapSeqSlide: type errors and the interpreter's result") {
  const std::string ok =
      "def f(xs: [float]N): [[float]1](N - 2) =\n"
      "  mapSeqSlide(3, w -> reduce(0.0f, (a, v) -> a + v, w), x -> x * 2.0f, xs)\n";
  const Definition d = parseProgram(ok, "ok.weft").definitions.back();
  const Value out = interpret(d, {Value::array({Value::ofFloat(1), Value::ofFloat(2),
                                               Value::ofFloat(3), Value::ofFloat(4)})},
                              {{"N", 4}});
  CHECK(out.toString() == "[[12.0], [18.0]]");
  const std::string symbolic =
      "def f(xs: [float]N): [[float]1](N - K + 1) =\n"
      "  mapSeqSlide(K, w -> reduce(0.0f, (a, v) -> a + v, w), x -> x, xs)\n";
  try {
    typecheck(parseProgram(symbolic, "symbolic.weft").definitions.back());
    FAIL("a symbolic window size type-checked");
  } catch (const std::exception& e) {
    CHECK(std::string(e.what()).find("the window size must be a constant") != std::string::npos);
    CHECK(std::string(e.what()).find("symbolic.weft:2") != std::string::npos);
  }
}
