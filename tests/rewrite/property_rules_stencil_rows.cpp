// Property tests of window-taps-as-shifted-rows, pad2d-one-axis, zip-map-flatten and
// window-rows-inline (rewrite/rules_stencil_rows.cpp) against the interpreter.
//
// A generator builds random stencils over int data with random concrete sizes: a 1-D slide (or
// slideStrict) of step 1 over a row (the input, a computed row or a clamp-padded one), or a slide2D
// of steps 1 over an image (the input or its clamp-padded form) in the three stage forms (map2D,
// its rows joined, and join(map(f, row)) per row). The window function picks one to four random
// taps (crops of the window or of the joined 2-D window, sometimes of the window mapped by a random
// term, or a row's crop of a column's crop), zips them when there are several, and maps a random
// int term of their components over them, sometimes twice. The rule is applied through the engine
// (re-type-checked), both programs run in the interpreter on the same random inputs and must agree
// exactly: 100 rapidcheck cases for each generator, at least 50 applications; pad2d-one-axis
// likewise on pads of random images along one axis, and zip-map-flatten on maps over zips with a
// map over a zip among the components (read once or twice), and window-rows-inline on maps over
// slide or slideStrict windows (sizes 1 to 3, steps 1 or 2) of computed rows whose function reads
// one to three whole rows of its window (refused when it reads the window otherwise). Unit tests:
// what the rule refuses (a window summed by a reduce, step 2, a symbolic window size), and the
// unsharp mask's first stage, whose rows become one map over five zipped crops of the padded row.
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
const char* const kRule = "window-taps-as-shifted-rows";

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

// A map of a random int term of the element's components (the element is a tuple of `arity`
// ints when arity > 1) over `taps`.
Expr mapOfTerm(std::mt19937_64& rng, size_t arity, Expr taps) {
  return map(lam("t",
                 [&](Expr t) {
                   if (arity == 1) return randomTerm(rng, ScalarKind::Int, t) + lit(1);
                   Expr sum = randomTerm(rng, ScalarKind::Int, get(0, t));
                   for (size_t i = 1; i < arity; ++i) {
                     sum = sum + randomTerm(rng, ScalarKind::Int, get(static_cast<int64_t>(i), t));
                   }
                   return sum;
                 }),
             std::move(taps));
}

// A window function's body over `taps` (each a one-element array): zipped when several, one or
// two maps of random terms over them.
Expr bodyOverTaps(std::mt19937_64& rng, std::vector<Expr> taps) {
  const size_t arity = taps.size();
  Expr zipped = arity == 1 ? std::move(taps[0]) : zip(std::move(taps));
  Expr body = mapOfTerm(rng, arity, std::move(zipped));
  if (chance(rng, 3)) body = mapOfTerm(rng, 1, std::move(body));
  return body;
}

bool checkRewrite(const Definition& original, const Expr& target, std::mt19937_64& rng) {
  return testing::checkRewriteWhereRunnable(original, testing::ruleNamed(kRule), target, rng);
}

}  // namespace

TEST_CASE("window-taps-as-shifted-rows preserves the interpreter's result (1-D)") {
  checkRuleOverRandomPrograms("window-taps-as-shifted-rows 1-D", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 9);
    Expr input = Expr::param("input", arrayOf(kInt, n));
    Expr row = input;
    switch (uniformInt(rng, 0, 2)) {
      case 1:
        row = map(lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x) + lit(2); }),
                  row);
        break;
      case 2:
        row = pad(uniformInt(rng, 0, 2), uniformInt(rng, 0, 2), Boundary::Clamp, row);
        break;
      default:
        break;
    }
    const int size = uniformInt(rng, 1, n);
    Expr windows = chance(rng, 2) ? slide(size, 1, row) : slideStrict(size, 1, row);
    Expr f = lam("w", [&](Expr w) {
      std::vector<Expr> taps;
      const int count = uniformInt(rng, 1, 4);
      for (int k = 0; k < count; ++k) {
        const int a = uniformInt(rng, 0, size - 1);
        taps.push_back(chance(rng, 3) ? crop(a, size - 1 - a,
                                             map(lam("x", [&](Expr x) {
                                                   return randomTerm(rng, ScalarKind::Int, x);
                                                 }),
                                                 w))
                                      : crop(a, size - 1 - a, w));
      }
      return bodyOverTaps(rng, std::move(taps));
    });
    Expr target = map(f, windows);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, target, rng);
  });
}

TEST_CASE("window-taps-as-shifted-rows preserves the interpreter's result (2-D stages)") {
  checkRuleOverRandomPrograms("window-taps-as-shifted-rows 2-D", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 6), height = uniformInt(rng, 1, 6);
    Expr input = Expr::param("input", arrayOf(arrayOf(kInt, width), height));
    Expr image = input;
    int paddedWidth = width, paddedHeight = height;
    if (chance(rng, 2)) {
      const int l = uniformInt(rng, 0, 2), r = uniformInt(rng, 0, 2);
      const int t = uniformInt(rng, 0, 2), b = uniformInt(rng, 0, 2);
      image = pad2D(l, r, t, b, Boundary::Clamp, image);
      paddedWidth += l + r;
      paddedHeight += t + b;
    }
    const int s1 = uniformInt(rng, 1, paddedHeight), s2 = uniformInt(rng, 1, paddedWidth);
    Expr windows = slide2D(s1, s2, 1, 1, image);
    Expr f = lam("nbh", [&](Expr nbh) {
      std::vector<Expr> taps;
      const int count = uniformInt(rng, 1, 4);
      for (int k = 0; k < count; ++k) {
        const int kind = uniformInt(rng, 0, 2);
        if (kind < 2) {
          const int a = uniformInt(rng, 0, s1 * s2 - 1);
          Expr window = kind == 0 ? nbh : map2D(lam("x", [&](Expr x) {
                                                  return randomTerm(rng, ScalarKind::Int, x);
                                                }),
                                                nbh);
          taps.push_back(crop(a, s1 * s2 - 1 - a, join(window)));
        } else {
          const int i = uniformInt(rng, 0, s1 - 1), j = uniformInt(rng, 0, s2 - 1);
          taps.push_back(join(map(lam("tapRow", [&](Expr tapRow) {
                                    return crop(j, s2 - 1 - j, tapRow);
                                  }),
                                  crop(i, s1 - 1 - i, nbh))));
        }
      }
      Expr body = bodyOverTaps(rng, std::move(taps));
      // Sometimes through the taps idiom's let: the joined window bound once.
      if (chance(rng, 3)) {
        Expr joined = join(nbh);
        body = let(lam("j", [&](Expr j) {
                     return map(lam("t", [](Expr t) { return get(0, t) + get(1, t); }),
                                zip(crop(0, s1 * s2 - 1, j), crop(s1 * s2 - 1, 0, j)));
                   }),
                   joined);
      }
      return body;
    });
    Expr target;
    switch (uniformInt(rng, 0, 2)) {
      case 0:
        target = map2D(f, windows);
        break;
      case 1:
        target = map(lam("row", [](Expr row) { return join(row); }), map2D(f, windows));
        break;
      default:
        target = map(lam("row", [&](Expr row) { return join(map(f, row)); }), windows);
        break;
    }
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, target, rng);
  });
}

TEST_CASE("pad2d-one-axis preserves the interpreter's result") {
  checkRuleOverRandomPrograms("pad2d-one-axis", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr input = Expr::param("input", arrayOf(arrayOf(kInt, width), height));
    const Boundary boundary = chance(rng, 2) ? Boundary::Clamp : Boundary::Mirror;
    const int a = uniformInt(rng, 0, 3), b = uniformInt(rng, 0, 3);
    Expr target = chance(rng, 2) ? pad2D(0, 0, a, b, boundary, input)
                                 : pad2D(a, b, 0, 0, boundary, input);
    Expr body = map2D(lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x); }),
                      target);
    Definition d{"f", Expr::lambda({input}, body), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, testing::ruleNamed("pad2d-one-axis"), target,
                                              rng);
  });
  Expr input = Expr::param("input", arrayOf(arrayOf(kInt, 4), 4));
  Expr both = pad2D(1, 1, 1, 0, Boundary::Clamp, input);
  Definition d{"f", Expr::lambda({input}, both), Type(), {}};
  CHECK_FALSE(testing::tryRuleAt(d, "pad2d-one-axis", both).has_value());
}

TEST_CASE("zip-map-flatten preserves the interpreter's result") {
  checkRuleOverRandomPrograms("zip-map-flatten", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 6);
    const int outer = uniformInt(rng, 1, 3), inner = uniformInt(rng, 2, 3);
    std::vector<Expr> inputs;
    auto input = [&]() {
      inputs.push_back(Expr::param("x" + std::to_string(inputs.size()), arrayOf(kInt, n)));
      return inputs.back();
    };
    std::vector<Expr> ys;
    for (int k = 0; k < inner; ++k) ys.push_back(input());
    Expr computed = mapOfTerm(rng, ys.size(), zip(ys));
    std::vector<Expr> xs;
    const int at = uniformInt(rng, 0, outer);
    for (int k = 0; k <= outer; ++k) xs.push_back(k == at ? computed : input());
    // f reads the computed component once or twice.
    Expr target = map(lam("t",
                          [&](Expr t) {
                            Expr sum = randomTerm(rng, ScalarKind::Int, get(at, t));
                            for (int k = 0; k <= outer; ++k) {
                              sum = sum + randomTerm(rng, ScalarKind::Int, get(k, t));
                            }
                            return sum;
                          }),
                      zip(xs));
    Definition d{"f", Expr::lambda(inputs, target), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, testing::ruleNamed("zip-map-flatten"), target,
                                              rng);
  });
}

TEST_CASE("window-rows-inline preserves the interpreter's result") {
  checkRuleOverRandomPrograms("window-rows-inline", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 6);
    Expr input = Expr::param("input", arrayOf(arrayOf(kInt, width), height));
    // z: the rows as given, clamp-padded along each row, or padded above and below.
    Expr z = input;
    switch (uniformInt(rng, 0, 2)) {
      case 1:
        z = map(lam("row", [](Expr row) { return pad(1, 1, Boundary::Clamp, row); }), z);
        break;
      case 2:
        z = pad(uniformInt(rng, 0, 2), uniformInt(rng, 0, 2), Boundary::Clamp, z);
        break;
      default:
        break;
    }
    // P: a row computed from a row, element by element or from two of its shifted crops.
    Expr producer = lam("row", [&](Expr row) {
      if (chance(rng, 2)) {
        return map(lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x) + lit(3); }),
                   row);
      }
      return mapOfTerm(rng, 2, zip(crop(0, 1, row), crop(1, 0, row)));
    });
    const int n = uniformInt(rng, 1, 3), step = uniformInt(rng, 1, 2);
    Expr produced = map(producer, z);
    Expr windows = chance(rng, 2) ? slide(n, step, produced) : slideStrict(n, step, produced);
    // C: a map over one to three rows of the window (the same row possibly twice), each read
    // as join(crop(i, n - 1 - i, x)), sometimes under crop(0, 0, .).
    Expr consumer = lam("x", [&](Expr x) {
      std::vector<Expr> rows;
      const int count = uniformInt(rng, 1, 3);
      for (int k = 0; k < count; ++k) {
        const int i = uniformInt(rng, 0, n - 1);
        Expr row = join(crop(i, n - 1 - i, x));
        rows.push_back(chance(rng, 3) ? crop(0, 0, row) : row);
      }
      const size_t arity = rows.size();
      return mapOfTerm(rng, arity, arity == 1 ? std::move(rows[0]) : zip(std::move(rows)));
    });
    Expr target = map(consumer, windows);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, testing::ruleNamed("window-rows-inline"), target,
                                              rng);
  });
  // A consumer that reads its window other than by whole elements is refused.
  Expr input = Expr::param("input", arrayOf(arrayOf(kInt, 4), 5));
  Expr produced =
      map(lam("row", [](Expr row) { return map(lam("x", [](Expr x) { return x; }), row); }), input);
  Expr whole = map(lam("x", [](Expr x) { return join(x); }), slide(2, 1, produced));
  Definition d{"f", Expr::lambda({input}, whole), Type(), {}};
  CHECK_FALSE(testing::tryRuleAt(d, "window-rows-inline", whole).has_value());
}

TEST_CASE("window-taps-as-shifted-rows refuses what it cannot take") {
  Expr input = Expr::param("input", arrayOf(kInt, 8));
  auto taps = lam("w", [](Expr w) {
    return map(lam("t", [](Expr t) { return get(0, t) + get(1, t); }),
               zip(crop(0, 2, w), crop(2, 0, w)));
  });
  // The window summed: not through taps.
  {
    auto sum = lam("w", [](Expr w) {
      return reduce(lit(0), lam2("a", "v", [](Expr a, Expr v) { return a + v; }), w);
    });
    Expr target = map(sum, slide(3, 1, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, kRule, target).has_value());
  }
  // A crop of more than one element is not a tap.
  {
    auto wide = lam("w", [](Expr w) {
      return map(lam("t", [](Expr t) { return get(0, t) * lit(2); }),
                 zip(crop(0, 1, w), crop(1, 0, w)));
    });
    Expr target = map(wide, slide(3, 1, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, kRule, target).has_value());
  }
  // Step 2: the windows are not every position of the row.
  {
    Expr target = map(taps, slide(3, 2, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, kRule, target).has_value());
  }
  // A symbolic window size: the taps' positions are not known.
  {
    Expr target = map(taps, slide(Arith::var("k", VarKind::Tuning, 3, 3), 1, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(testing::tryRuleAt(d, kRule, target).has_value());
  }
}

TEST_CASE("window-taps-as-shifted-rows: the unsharp mask's horizontal blur, row by row") {
  const std::string text =
      "fun gauss5(a: float, b: float, c: float, d: float, e: float): float =\n"
      "  (a + 4.0f * b + 6.0f * c + 4.0f * d + e) / 16.0f\n"
      "def blurx(plane: [[float]7]3): [[float]7]3 =\n"
      "  map(row -> join(row),\n"
      "    map2D(nbh -> map(t -> gauss5(t._0, t._1, t._2, t._3, t._4),\n"
      "                     zip(crop(0, 4, join(nbh)), crop(1, 3, join(nbh)),\n"
      "                         crop(2, 2, join(nbh)), crop(3, 1, join(nbh)),\n"
      "                         crop(4, 0, join(nbh)))),\n"
      "          slide2D(1, 5, 1, 1, pad2D(2, 2, 0, 0, clamp, plane))))\n";
  const Definition original = parseProgram(text, "blurx.weft").definitions.back();
  const Expr& stage = original.function.body();
  std::optional<Definition> rewritten = testing::tryRuleAt(original, kRule, stage);
  REQUIRE(rewritten);
  const std::string printed = printDefinition(*rewritten);
  // One map over the rows of one-row windows, five crops of the row in one zip, no slide2D.
  CHECK(printed.find("crop(4, 0, join(crop(0, 0, rows)))") != std::string::npos);
  CHECK(printed.find("slide(1, 1,") != std::string::npos);
  CHECK(printed.find("nbh") == std::string::npos);
  std::mt19937_64 rng(7);
  const Value plane =
      weft::testing::randomValue(original.function.params()[0].paramType(), {}, rng);
  CHECK(interpret(original, {plane}, {}) == interpret(*rewritten, {plane}, {}));
}
