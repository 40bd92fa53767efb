// Property tests of the stencil-chain rules (rewrite/rules_stencil_chain.cpp) against the
// interpreter: let-inline-recompute, horizontal-stencil-fusion, boxed-stage-fusion and
// let-tuple-fusion (two stages over the same image, or over two images' zipped rows, per pixel
// or per row, read by a body that reads both or one of them).
//
// For each rule a generator builds a random well-typed left side over int data with random
// concrete sizes: element functions are random scalar terms (tests/support/rule_check.h's
// randomTerm); stages are flat (map2D(f)) or boxed (f giving one-element arrays, as
// map(join) ∘ map2D(f) or map(row -> join(map(f, row)))) over a plain image or over the windows
// of slide2D(pad2D(clamp or mirror)) of it, so f may be a window sum as in the pipelines. The
// rule is applied through the engine (applyAt re-type-checks the result), both programs run in
// the interpreter on the same random inputs and must agree exactly; a left side the type checker
// or the interpreter rejects (mirror padding wider than the image) is not counted. Each property
// runs 100 rapidcheck cases and counts its applications (at least 50; printed with MESSAGE).
// Unit tests check what the rules must refuse (a let read once or inside a stage's function,
// two stages over different arrays, a boxed and a flat stage zipped, a flat inner stage).
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using weft::testing::arrayOf;
using weft::testing::checkRuleOverRandomPrograms;
using weft::testing::positionOf;
using weft::testing::randomTerm;
using weft::testing::uniformInt;

namespace {

// The rule from the library when registered there, else from addStencilChainRules.
const Rule& chainRule(const std::string& name) {
  return testing::ruleNamedOrAdded(name, addStencilChainRules);
}

std::optional<Definition> tryChainRule(const Definition& d, const std::string& name,
                                       const Expr& target) {
  RewriteContext context;
  return applyAt(d, chainRule(name), positionOf(d, target), {}, context);
}

const Type kInt = Type::intType();

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

Expr intFunction(std::mt19937_64& rng) {
  return lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x); });
}

// Applies the rule at `target` (it must match), runs both on random inputs, asserts equal
// results; false when the original is not a program the interpreter runs.
bool checkRewrite(const Definition& original, const std::string& rule, const Expr& target,
                  std::mt19937_64& rng) {
  return testing::checkRewriteWhereRunnable(original, chainRule(rule), target, rng);
}

// The array stages read: the image, or the windows of slide2D(a1, a2, 1, 1, pad2D(..)) of it
// (same shape as the image when the pad is a1 - 1 rows and a2 - 1 columns). Built afresh per
// call (new params), so two calls give alpha-equivalent arrays.
struct StageSource {
  bool windows;
  int a1, a2, top, left;
  Boundary boundary;
  Expr build(const Expr& image) const {
    if (!windows) return image;
    return slide2D(a1, a2, 1, 1,
                   pad2D(left, a2 - 1 - left, top, a1 - 1 - top, boundary, image));
  }
};
StageSource randomSource(std::mt19937_64& rng) {
  StageSource s{};
  s.windows = !chance(rng, 3);
  s.a1 = uniformInt(rng, 1, 3);
  s.a2 = uniformInt(rng, 1, 3);
  s.top = uniformInt(rng, 0, s.a1 - 1);
  s.left = uniformInt(rng, 0, s.a2 - 1);
  s.boundary = chance(rng, 2) ? Boundary::Clamp : Boundary::Mirror;
  return s;
}

// The sum of a window's ints: reduce(0, +, join(w)).
Expr windowSum(const Expr& w) {
  return reduce(lit(0), lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }), join(w));
}

// A random element function over the source's elements: flat gives an int, boxed [int]1. Over
// windows it is always boxed (a window sum is a one-element array: weft has no indexing).
Expr randomElement(std::mt19937_64& rng, const StageSource& source, bool boxed) {
  Expr k = intFunction(rng);
  if (source.windows) return lam("w", [&](Expr w) { return map(k, windowSum(w)); });
  return lam("x", [&](Expr x) {
    if (boxed) return map(k, fill(1, x));
    return apply(k, {x});
  });
}

// A stage over `x` with element function f: flat, or boxed in one of its two spellings.
Expr stageOf(std::mt19937_64& rng, const Expr& f, bool boxed, Expr x) {
  if (!boxed) return map(lam("row", [&](Expr row) { return map(f, row); }), std::move(x));
  if (chance(rng, 2)) {
    return map(lam("row", [&](Expr row) { return join(map(f, row)); }), std::move(x));
  }
  Expr mapped = map(lam("row", [&](Expr row) { return map(f, row); }), std::move(x));
  return map(lam("row", [](Expr row) { return join(row); }), std::move(mapped));
}

Type image(int width, int height) { return arrayOf(arrayOf(kInt, width), height); }

}  // namespace

TEST_CASE("let-inline-recompute preserves the interpreter's result") {
  checkRuleOverRandomPrograms("let-inline-recompute", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 6);
    Expr input = Expr::param("input", arrayOf(kInt, n));
    // The value holds lambdas (the copies need their own params).
    Expr value = map(intFunction(rng), map(intFunction(rng), input));
    Expr combine = lam("p", [&](Expr p) {
      return randomTerm(rng, ScalarKind::Int, get(0, p)) + get(1, p);
    });
    const int use = uniformInt(rng, 0, 2);
    Expr binder = lam("x", [&](Expr x) {
      if (use == 0) return map(combine, zip(x, map(intFunction(rng), x)));
      if (use == 1) return map(combine, zip(x, x));
      // x read three times, once inside a nested let.
      return let(lam("y", [&](Expr y) { return map(combine, zip(y, x)); }),
                 map(combine, zip(x, map(intFunction(rng), x))));
    });
    Expr target = let(binder, value);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "let-inline-recompute", target, rng);
  });
}

TEST_CASE("horizontal-stencil-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("horizontal-stencil-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr input = Expr::param("input", image(width, height));
    const StageSource source = randomSource(rng);
    const bool boxed = chance(rng, 2) || source.windows;
    Expr first = stageOf(rng, randomElement(rng, source, boxed), boxed, source.build(input));
    Expr second = stageOf(rng, randomElement(rng, source, boxed), boxed, source.build(input));
    Expr h = lam("p", [&](Expr p) {
      Expr a = randomTerm(rng, ScalarKind::Int, get(0, p));
      Expr b = randomTerm(rng, ScalarKind::Int, get(1, p));
      return chance(rng, 2) ? a - b : a * lit(3) + b;
    });
    Expr target = map(lam("r", [&](Expr r) { return map(h, zip(get(0, r), get(1, r))); }),
                      zip(first, second));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "horizontal-stencil-fusion", target, rng);
  });
}

TEST_CASE("boxed-stage-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("boxed-stage-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr input = Expr::param("input", image(width, height));
    const StageSource source = randomSource(rng);
    Expr inner = stageOf(rng, randomElement(rng, source, true), true, source.build(input));
    const bool outerBoxed = chance(rng, 2);
    Expr outerElement = outerBoxed ? lam("x", [&](Expr x) { return map(intFunction(rng), fill(1, x)); })
                                   : intFunction(rng);
    Expr target = stageOf(rng, outerElement, outerBoxed, inner);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "boxed-stage-fusion", target, rng);
  });
}

TEST_CASE("let-tuple-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("let-tuple-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 4), height = uniformInt(rng, 1, 4);
    Expr input = Expr::param("input", image(width, height));
    Expr other = Expr::param("other", image(width, height));
    // X: the image, or the rows of two images zipped (as magnitude and direction read gx, gy).
    const bool zipped = chance(rng, 2);
    auto source = [&]() { return zipped ? zip(input, other) : input; };
    // A stage over X: per pixel (a map over each row, or over each row's zip), or per row (an
    // element function of the whole row, which pairs rows, not pixels).
    const int shape = uniformInt(rng, 0, 2);
    auto stage = [&]() {
      if (shape == 2) {
        return map(lam("r",
                       [&](Expr r) {
                         Expr row = zipped ? get(0, r) : r;
                         return reduce(lit(0),
                                       lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }),
                                       map(intFunction(rng), row));
                       }),
                   source());
      }
      return map(lam("r",
                     [&](Expr r) {
                       if (!zipped) return map(intFunction(rng), r);
                       return map(lam("p",
                                      [&](Expr p) {
                                        return randomTerm(rng, ScalarKind::Int, get(0, p)) +
                                               randomTerm(rng, ScalarKind::Int, get(1, p));
                                      }),
                                  zip(get(0, r), get(1, r)));
                     }),
                 source());
    };
    Expr aValue = stage();
    Expr bValue = stage();
    // B reads both (once or twice each), or only one of them.
    const int reads = uniformInt(rng, 0, 2);
    Expr target = let(lam("a",
                          [&](Expr a) {
                            return let(lam("b",
                                           [&](Expr b) {
                                             if (reads == 0) return zip(a, b);
                                             if (reads == 1) return zip(b, zip(a, a));
                                             return zip(b, b);
                                           }),
                                       bValue);
                          }),
                      aValue);
    Definition d{"f", Expr::lambda({input, other}, target), Type(), {}};
    return checkRewrite(d, "let-tuple-fusion", target, rng);
  });
}

TEST_CASE("the stencil-chain rules refuse what they must not rewrite") {
  std::mt19937_64 rng(7);
  Expr input = Expr::param("input", image(4, 3));
  auto refuses = [&](const Expr& target, const std::string& rule) {
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    typecheck(d);
    CHECK_FALSE(tryChainRule(d, rule, target).has_value());
  };
  auto plus1 = lam("x", [](Expr x) { return x + lit(1); });
  // let-inline-recompute: a value read once (let-inline's case).
  refuses(let(lam("x", [&](Expr x) { return map(lam("r", [&](Expr r) { return map(plus1, r); }), x); }),
              input),
          "let-inline-recompute");
  // ... and a let inside a stage's function (a value its formula reads twice).
  {
    Expr inner = let(lam("y", [](Expr y) { return y + y; }), lit(2));
    Expr body = map(lam("r", [&](Expr r) { return map(lam("x", [&](Expr x) { return x + inner; }), r); }),
                    input);
    Definition d{"f", Expr::lambda({input}, body), Type(), {}};
    typecheck(d);
    CHECK_FALSE(tryChainRule(d, "let-inline-recompute", inner).has_value());
  }
  StageSource windows{true, 3, 3, 1, 1, Boundary::Clamp};
  auto boxedSum = lam("w", [](Expr w) { return map(lam("s", [](Expr s) { return s; }), windowSum(w)); });
  auto pairSum = lam("p", [](Expr p) { return get(0, p) + get(1, p); });
  auto pairs = [&](Expr a, Expr b) {
    return map(lam("r", [&](Expr r) { return map(pairSum, zip(get(0, r), get(1, r))); }),
               zip(std::move(a), std::move(b)));
  };
  // horizontal-stencil-fusion: windows of different pads (not the same array).
  StageSource mirrored = windows;
  mirrored.boundary = Boundary::Mirror;
  refuses(pairs(stageOf(rng, boxedSum, true, windows.build(input)),
                stageOf(rng, boxedSum, true, mirrored.build(input))),
          "horizontal-stencil-fusion");
  // ... a boxed and a flat stage.
  StageSource plain{false, 1, 1, 0, 0, Boundary::Clamp};
  refuses(pairs(stageOf(rng, lam("x", [](Expr x) { return map(lam("s", [](Expr s) { return s; }), fill(1, x)); }), true, input),
                stageOf(rng, plus1, false, plain.build(input))),
          "horizontal-stencil-fusion");
  // boxed-stage-fusion: the inner stage flat.
  refuses(stageOf(rng, plus1, false, stageOf(rng, plus1, false, input)), "boxed-stage-fusion");
}

TEST_CASE("let-tuple-fusion refuses stages over different arrays and a stage reading the other") {
  Expr input = Expr::param("input", image(4, 3));
  Expr other = Expr::param("other", image(4, 3));
  auto plus = [](int k) { return lam("x", [k](Expr x) { return x + lit(k); }); };
  auto perPixel = [](const Expr& f, Expr x) {
    return map(lam("r", [&](Expr r) { return map(f, r); }), std::move(x));
  };
  auto refuses = [&](const Expr& target) {
    Definition d{"f", Expr::lambda({input, other}, target), Type(), {}};
    typecheck(d);
    CHECK_FALSE(tryChainRule(d, "let-tuple-fusion", target).has_value());
  };
  auto both = [](Expr a, Expr b) { return zip(std::move(a), std::move(b)); };
  refuses(let(lam("a",
                  [&](Expr a) {
                    return let(lam("b", [&](Expr b) { return both(a, b); }),
                               perPixel(plus(2), other));
                  }),
              perPixel(plus(1), input)));
  refuses(let(lam("a",
                  [&](Expr a) {
                    return let(
                        lam("b", [&](Expr b) { return both(a, b); }),
                        map(lam("r", [&](Expr r) { return zip(r, join(crop(0, 2, a))); }), input));
                  }),
              perPixel(plus(1), input)));
}
