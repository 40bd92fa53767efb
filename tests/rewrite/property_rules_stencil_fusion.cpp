// Property tests of the stencil-fusion rules (rewrite/rules_stencil_fusion.cpp) against the
// interpreter: let-inline, pad-map-interchange, pad2d-map2d-interchange, slide-map-fusion,
// slide2d-map2d-fusion, overlapped-tiling-fusion, compute-to-local and compute-to-private.
//
// For each rule a generator builds a random well-typed left side over int data with random
// concrete sizes chosen so that the rule's size conditions hold (strict slides cover their input
// exactly, tiles cover the producer's input): element functions are random scalar terms
// (tests/support/rule_check.h's randomTerm), the pixel stages come in all three forms the rules
// accept (map2D(f), map(join) ∘ map2D(f) with f giving a one-element array, and the map-fused
// map(row -> join(map(f, row)))), over plain images or over the windows of a slide2D (so f may
// be a window sum, as in the pipelines), with clamp or mirror padding. The rule is applied
// through the engine (applyAt re-type-checks the result), both programs run in the interpreter
// on the same random inputs, and the results must be equal exactly; a left side the interpreter
// or the type checker rejects (mirror padding wider than the array) is not counted. Each property
// counts its applications (at least 50 of 100 cases; printed with MESSAGE). Unit tests check the
// cases where a rule must not match (constant padding, a let whose value is used twice, a map
// outside any work-group or work-item, a private array of a size unknown at compile time).
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
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

// The rule from the library when registered there, else from addStencilFusionRules.
const Rule& stencilRule(const std::string& name) {
  return testing::ruleNamedOrAdded(name, addStencilFusionRules);
}

std::optional<Definition> tryRule(const Definition& d, const std::string& name, const Expr& target,
                                  const RuleArguments& arguments = {}) {
  RewriteContext context;
  return applyAt(d, stencilRule(name), positionOf(d, target), arguments, context);
}

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

const Type kInt = Type::intType();
Type image(int width, int height) { return arrayOf(arrayOf(kInt, width), height); }

// Applies the rule at `target` (it must match), runs both programs on random inputs and asserts
// equal results; false (nothing checked) when the type checker or the interpreter rejects the
// original.
bool checkRewrite(const Definition& original, const std::string& rule, const Expr& target,
                  std::mt19937_64& rng, const RuleArguments& arguments = {}) {
  return testing::checkRewriteWhereRunnable(original, stencilRule(rule), target, rng, arguments);
}

Boundary copyingBoundary(std::mt19937_64& rng) {
  return chance(rng, 2) ? Boundary::Clamp : Boundary::Mirror;
}

Expr intFunction(std::mt19937_64& rng, bool allowIdentity = true) {
  return lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x, allowIdentity); });
}

// ---- random pixel stages ----

// The input of a stage: the image itself (elements int) or the windows of a slide2D over it
// (elements [[int]a2]a1). `height`/`width` are the sizes of the stage's input.
struct StageInput {
  Expr x;
  Type inputType;  // the definition's input
  bool windows;
};
StageInput randomStageInput(std::mt19937_64& rng, int width, int height) {
  if (chance(rng, 2)) {
    Expr input = Expr::param("input", image(width, height));
    return {input, image(width, height), false};
  }
  const int a1 = uniformInt(rng, 1, 2), a2 = uniformInt(rng, 1, 2);
  Type t = image(width + a2 - 1, height + a1 - 1);
  Expr input = Expr::param("input", t);
  return {slide2D(a1, a2, 1, 1, input), t, true};
}

// The sum of a window's ints as a one-element array: reduce(0, +, join(w)).
Expr windowSum(const Expr& w, bool nestedSingleton) {
  Expr flat = join(w);
  if (nestedSingleton) flat = join(flat);
  return reduce(lit(0), lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }), flat);
}

// A random pixel stage over `in`: (stage, whether its elements are [int]1 rather than int).
struct Stage {
  Expr expr;
  bool singletonElements;
};
Stage randomStage(std::mt19937_64& rng, const StageInput& in) {
  const int form = uniformInt(rng, 0, 2);  // 0 plain, 1 map(join) ∘ map2D, 2 map(join ∘ map)
  Expr f;
  bool resultIsSingleton;
  if (!in.windows) {
    if (form == 0) {
      f = intFunction(rng);
      resultIsSingleton = false;
    } else {
      Expr g = intFunction(rng);
      f = lam("x", [&](Expr x) { return map(g, fill(1, x)); });
      resultIsSingleton = true;
    }
  } else {
    Expr g = intFunction(rng);
    f = lam("w", [&](Expr w) { return map(g, windowSum(w, false)); });
    resultIsSingleton = true;
  }
  if (form == 0) {
    return {map(lam("row", [&](Expr row) { return map(f, row); }), in.x), resultIsSingleton};
  }
  if (form == 1) {
    Expr mapped = map(lam("row", [&](Expr row) { return map(f, row); }), in.x);
    return {map(lam("row", [](Expr row) { return join(row); }), mapped), false};
  }
  return {map(lam("row", [&](Expr row) { return join(map(f, row)); }), in.x), false};
}

// A definition over the stage input's param whose body is body(x) (x: the image or its windows).
Definition defOver(const StageInput& in, const std::function<Expr(const Expr&)>& body) {
  Expr param = in.x;
  while (!param.isParam()) param = param.args().back();  // slide2D(..., input): its innermost arg
  return Definition{"f", Expr::lambda({param}, body(in.x)), Type(), {}};
}

}  // namespace

TEST_CASE("let-inline preserves the interpreter's result") {
  checkRuleOverRandomPrograms("let-inline", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 6);
    Expr input = Expr::param("input", arrayOf(kInt, n));
    Expr value = map(intFunction(rng), input);
    Expr consumer = intFunction(rng);
    const int use = uniformInt(rng, 0, 2);
    Expr binder = lam("x", [&](Expr x) {
      if (use == 0) return map(consumer, x);
      if (use == 1) return pad(1, 2, copyingBoundary(rng), x);
      return x;
    });
    Expr let_ = let(binder, value);
    Definition d{"f", Expr::lambda({input}, map(intFunction(rng), let_)), Type(), {}};
    return checkRewrite(d, "let-inline", let_, rng);
  });
}

TEST_CASE("pad-map-interchange preserves the interpreter's result") {
  checkRuleOverRandomPrograms("pad-map-interchange", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 6);
    const bool nested = chance(rng, 3);
    Type element = nested ? arrayOf(kInt, uniformInt(rng, 1, 3)) : kInt;
    Expr input = Expr::param("input", arrayOf(element, n));
    Expr f = nested ? lam("r", [&](Expr r) { return map(intFunction(rng), r); }) : intFunction(rng);
    Expr target =
        pad(uniformInt(rng, 0, 3), uniformInt(rng, 0, 3), copyingBoundary(rng), map(f, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "pad-map-interchange", target, rng);
  });
}

TEST_CASE("pad2d-map2d-interchange preserves the interpreter's result") {
  checkRuleOverRandomPrograms("pad2d-map2d-interchange", [](std::mt19937_64& rng) {
    const StageInput in = randomStageInput(rng, uniformInt(rng, 1, 5), uniformInt(rng, 1, 5));
    const Boundary boundary = copyingBoundary(rng);
    const int l = uniformInt(rng, 0, 2), r = uniformInt(rng, 0, 2), t = uniformInt(rng, 0, 2),
              b = uniformInt(rng, 0, 2);
    Expr target;
    Definition d = defOver(in, [&](const Expr& x) {
      Stage stage = randomStage(rng, StageInput{x, in.inputType, in.windows});
      target = pad2D(l, r, t, b, boundary, stage.expr);
      return target;
    });
    return checkRewrite(d, "pad2d-map2d-interchange", target, rng);
  });
}

TEST_CASE("slide-map-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("slide-map-fusion", [](std::mt19937_64& rng) {
    const int size = uniformInt(rng, 1, 3), step = uniformInt(rng, 1, 3);
    const bool strict = chance(rng, 2);
    // Strict slides cover the input exactly: n = size + k·step.
    const int n = strict ? size + step * uniformInt(rng, 0, 3) : uniformInt(rng, size, size + 5);
    Expr input = Expr::param("input", arrayOf(kInt, n));
    Expr mapped = map(intFunction(rng), input);
    Expr target = strict ? slideStrict(size, step, mapped) : slide(size, step, mapped);
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "slide-map-fusion", target, rng);
  });
}

TEST_CASE("slide2d-map2d-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("slide2d-map2d-fusion", [](std::mt19937_64& rng) {
    const int s1 = uniformInt(rng, 1, 3), s2 = uniformInt(rng, 1, 3);
    const int t1 = uniformInt(rng, 1, 2), t2 = uniformInt(rng, 1, 2);
    const StageInput in =
        randomStageInput(rng, s2 + t2 * uniformInt(rng, 0, 3), s1 + t1 * uniformInt(rng, 0, 3));
    Expr target;
    Definition d = defOver(in, [&](const Expr& x) {
      Stage stage = randomStage(rng, StageInput{x, in.inputType, in.windows});
      target = slide2D(s1, s2, t1, t2, stage.expr);
      return target;
    });
    return checkRewrite(d, "slide2d-map2d-fusion", target, rng);
  });
}

TEST_CASE("overlapped-tiling-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("overlapped-tiling-fusion", [](std::mt19937_64& rng) {
    const int s1 = uniformInt(rng, 1, 3), s2 = uniformInt(rng, 1, 3);
    const int t1 = uniformInt(rng, 1, std::min(2, s1)), t2 = uniformInt(rng, 1, std::min(2, s2));
    // k windows per tile, m tiles: theta = s + (k - 1)·t, the tiles' step k·t, the input
    // theta + (m - 1)·k·t.
    const int k1 = uniformInt(rng, 1, 3), k2 = uniformInt(rng, 1, 3);
    const int m1 = uniformInt(rng, 1, 3), m2 = uniformInt(rng, 1, 3);
    const int theta1 = s1 + (k1 - 1) * t1, theta2 = s2 + (k2 - 1) * t2;
    const StageInput in =
        randomStageInput(rng, theta2 + (m2 - 1) * k2 * t2, theta1 + (m1 - 1) * k1 * t1);
    Expr target;
    Definition d = defOver(in, [&](const Expr& x) {
      Stage stage = randomStage(rng, StageInput{x, in.inputType, in.windows});
      Expr g0 = intFunction(rng);
      const bool singleton = stage.singletonElements;
      Expr g = lam("w", [&](Expr w) { return map(g0, windowSum(w, singleton)); });
      target = map(lam("row", [&](Expr row) { return map(g, row); }),
                   slide2D(s1, s2, t1, t2, stage.expr));
      return target;
    });
    return checkRewrite(d, "overlapped-tiling-fusion", target, rng,
                        {{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}});
  });
}

TEST_CASE("compute-to-local preserves the interpreter's result") {
  checkRuleOverRandomPrograms("compute-to-local", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 4);
    Expr input = Expr::param("input", image(width, height));
    Expr f = intFunction(rng, false);  // computes (x -> x would be a layout function)
    Expr target;
    Expr g = intFunction(rng);
    Expr body = mapWrg(0,
                       lam("row",
                           [&](Expr row) {
                             target = map(f, row);
                             return mapLcl(0, g, target);
                           }),
                       input);
    Definition d{"f", Expr::lambda({input}, body), Type(), {}};
    return checkRewrite(d, "compute-to-local", target, rng);
  });
}

TEST_CASE("compute-to-private preserves the interpreter's result") {
  checkRuleOverRandomPrograms("compute-to-private", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 4);
    const int images = uniformInt(rng, 1, 3);
    Expr f = intFunction(rng, false);  // computes (x -> x would be a layout function)
    Expr g = intFunction(rng);
    Expr target;
    if (uniformInt(rng, 0, 1) == 0) {
      // One row per work-item: map(f, row) in private memory, then g over it.
      Expr input = Expr::param("input", image(width, height));
      Expr body = mapGlb(0,
                         lam("row",
                             [&](Expr row) {
                               target = map(f, row);
                               return mapSeq(g, target);
                             }),
                         input);
      Definition d{"f", Expr::lambda({input}, body), Type(), {}};
      return checkRewrite(d, "compute-to-private", target, rng);
    }
    // One image per work-item (a tile): the 2D map over it in private memory.
    Expr input = Expr::param("input", arrayOf(image(width, height), images));
    Expr body =
        mapGlb(0,
               lam("tile",
                   [&](Expr tile) {
                     target = map(lam("row", [&](Expr row) { return map(f, row); }), tile);
                     return mapSeq(lam("row", [&](Expr row) { return mapSeq(g, row); }), target);
                   }),
               input);
    Definition d{"f", Expr::lambda({input}, body), Type(), {}};
    return checkRewrite(d, "compute-to-private", target, rng);
  });
}

TEST_CASE("the stencil-fusion rules refuse what they must not rewrite") {
  Expr input = Expr::param("input", arrayOf(kInt, 4));
  Expr f = lam("x", [](Expr x) { return x * lit(2) + lit(1); });
  SUBCASE("constant padding does not commute with a map") {
    Expr target = padConstant(1, 1, 0.0, map(f, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "pad-map-interchange", target));
  }
  SUBCASE("constant 2D padding does not commute with a map2D") {
    Expr images = Expr::param("input", image(3, 3));
    Expr target =
        pad2DConstant(1, 0.0, map(lam("row", [&](Expr row) { return map(f, row); }), images));
    Definition d{"f", Expr::lambda({images}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "pad2d-map2d-interchange", target));
  }
  SUBCASE("a let whose value is used twice is not inlined") {
    Expr target = let(lam("x", [](Expr x) { return zip(x, x); }), map(f, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "let-inline", target));
  }
  SUBCASE("a joined stage whose function gives more than one element is not a pixel stage") {
    Expr images = Expr::param("input", image(3, 3));
    Expr two = lam("x", [](Expr x) { return fill(2, x); });
    Expr stage = map(lam("row", [](Expr row) { return join(row); }),
                     map(lam("row", [&](Expr row) { return map(two, row); }), images));
    Expr target = slide2D(2, 2, 1, 1, stage);
    Definition d{"f", Expr::lambda({images}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "slide2d-map2d-fusion", target));
  }
  SUBCASE("compute-to-local only in work-group code") {
    Expr images = Expr::param("input", image(3, 3));
    Expr outside;
    Expr inLocal;
    Expr body = tuple(map(lam("row", [&](Expr row) { return map(f, row); }), images),
                      mapWrg(0,
                             lam("row",
                                 [&](Expr row) {
                                   return mapLcl(0,
                                                 lam("x",
                                                     [&](Expr x) {
                                                       inLocal = map(f, fill(2, x));
                                                       return inLocal;
                                                     }),
                                                 row);
                                 }),
                             images));
    outside = body.args()[0];
    Definition d{"f", Expr::lambda({images}, body), Type(), {}};
    CHECK_FALSE(tryRule(d, "compute-to-local", outside));
    CHECK_FALSE(tryRule(d, "compute-to-local", inLocal));
  }
  SUBCASE("compute-to-private only directly in a work-item, on constant sizes") {
    Expr images = Expr::param("input", image(3, 3));
    Expr outside, inSeq, inLocal;
    Expr body = tuple(map(lam("row", [&](Expr row) { return map(f, row); }), images),
                      mapGlb(0,
                             lam("row",
                                 [&](Expr row) {
                                   return mapSeq(lam("x",
                                                     [&](Expr x) {
                                                       inSeq = map(f, fill(2, x));
                                                       return inSeq;
                                                     }),
                                                 row);
                                 }),
                             images),
                      mapWrg(0,
                             lam("row",
                                 [&](Expr row) {
                                   return mapLcl(0,
                                                 lam("x",
                                                     [&](Expr x) {
                                                       inLocal = map(f, fill(2, x));
                                                       return inLocal;
                                                     }),
                                                 row);
                                 }),
                             images));
    outside = body.args()[0];
    Definition d{"f", Expr::lambda({images}, body), Type(), {}};
    CHECK_FALSE(tryRule(d, "compute-to-private", outside));
    CHECK_FALSE(tryRule(d, "compute-to-private", inSeq));
    CHECK_FALSE(tryRule(d, "compute-to-private", inLocal));
    // A row of symbolic length N cannot be a private array.
    Expr rows = Expr::param("input", Type::array(Type::array(kInt, Arith::size("N")), Arith(3)));
    Expr symbolic;
    Expr glb = mapGlb(0,
                      lam("row",
                          [&](Expr row) {
                            symbolic = map(f, row);
                            return mapSeq(f, symbolic);
                          }),
                      rows);
    Definition s{"f", Expr::lambda({rows}, glb), Type(), {}};
    CHECK_FALSE(tryRule(s, "compute-to-private", symbolic));
    // ... and the same row in a work-item is accepted (the rule is not refusing everything).
    Expr fixed;
    Expr ok = mapGlb(0,
                     lam("row",
                         [&](Expr row) {
                           fixed = map(f, row);
                           return mapSeq(f, fixed);
                         }),
                     images);
    Definition accepted{"f", Expr::lambda({images}, ok), Type(), {}};
    CHECK(tryRule(accepted, "compute-to-private", fixed));
  }
}

// ---- the rules that fuse pointwise stages reading a stencil's input (unsharp mask) ----------

namespace {

// The body of the one-param lambda f with its param replaced by x.
Expr applyScalar(const Expr& f, const Expr& x) {
  return substituteParams(f.body(), {{f.params()[0], x}});
}

// An int term that reads x exactly once.
Expr readOnce(std::mt19937_64& rng, const Expr& x) {
  switch (uniformInt(rng, 0, 2)) {
    case 0:
      return x;
    case 1:
      return x * lit(3) - lit(2);
    default:
      return max(x, lit(0)) + lit(1);
  }
}

// The sum of a window's ints (windows of windows `depth` deep) as a one-element array.
Expr nestedWindowSum(const Expr& w, int depth) {
  Expr flat = join(w);
  for (int i = 1; i < depth; ++i) flat = join(join(flat));
  return reduce(lit(0), lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }), flat);
}

}  // namespace

TEST_CASE("zip-map-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("zip-map-fusion", [](std::mt19937_64& rng) {
    const int n = uniformInt(rng, 1, 5);
    const bool nested = chance(rng, 3);  // arrays of rows: the functions map over a row
    Type element = nested ? arrayOf(kInt, uniformInt(rng, 1, 3)) : kInt;
    Expr a = Expr::param("a", arrayOf(element, n));
    Expr b = Expr::param("b", arrayOf(element, n));
    // The producer: g over zip(a, b), zip(b, a) or a alone.
    const int inputs = uniformInt(rng, 0, 2);
    Expr g0 = intFunction(rng);
    Expr g1 = intFunction(rng);
    auto scalarG = [&](const Expr& p) {
      if (inputs == 2) return applyScalar(g0, p);
      return applyScalar(g0, get(0, p)) + applyScalar(g1, get(1, p));
    };
    Expr g = lam("p", [&](Expr p) {
      if (!nested) return scalarG(p);
      if (inputs == 2) return map(lam("e", [&](Expr e) { return scalarG(e); }), p);
      return map(lam("e", [&](Expr e) { return scalarG(e); }), zip(get(0, p), get(1, p)));
    });
    Expr produced = inputs == 0   ? map(g, zip(a, b))
                    : inputs == 1 ? map(g, zip(b, a))
                                  : map(g, a);
    // The consumer: zip(a, b, produced) in a random order, reading the produced value once.
    std::vector<Expr> xs = {a, b, produced};
    std::shuffle(xs.begin(), xs.end(), rng);
    size_t k = 0;
    while (xs[k].node() != produced.node()) ++k;
    Expr f = lam("q", [&](Expr q) {
      auto scalarF = [&](const Expr& t) {
        Expr sum = readOnce(rng, get(Arith(int64_t(k)), t));
        for (size_t i = 0; i < 3; ++i) {
          if (i != k) sum = sum + get(Arith(int64_t(i)), t) * lit(static_cast<int>(i) + 2);
        }
        return sum;
      };
      if (!nested) return scalarF(q);
      return map(lam("t", [&](Expr t) { return scalarF(t); }),
                 zip(get(0, q), get(1, q), get(2, q)));
    });
    Expr target = map(f, zip(xs));
    Definition d{"f", Expr::lambda({a, b}, target), Type(), {}};
    return checkRewrite(d, "zip-map-fusion", target, rng);
  });
}

TEST_CASE("map2d-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("map2d-fusion", [](std::mt19937_64& rng) {
    const StageInput in = randomStageInput(rng, uniformInt(rng, 1, 5), uniformInt(rng, 1, 5));
    Expr target;
    Definition d = defOver(in, [&](const Expr& x) {
      // The inner stage plain (its elements f's results), the outer in any form.
      Expr f = in.windows ? lam("w", [&](Expr w) {
        return map(lam("s", [&](Expr s) { return randomTerm(rng, ScalarKind::Int, s); }),
                   windowSum(w, false));
      })
                          : intFunction(rng);
      Expr inner = map(lam("row", [&](Expr row) { return map(f, row); }), x);
      Stage outer = randomStage(rng, StageInput{inner, in.inputType, in.windows});
      target = outer.expr;
      return target;
    });
    return checkRewrite(d, "map2d-fusion", target, rng);
  });
}

namespace {

// An image's chain of 1 or 2 levels of centred windows, slide2D(s1, s2, 1, 1, pad2D(l, r, t,
// b, B, ..)) with t + b = s1 - 1 and l + r = s2 - 1, any boundary.
Expr randomCentredWindows(std::mt19937_64& rng, const Expr& input, int levels) {
  Expr windows = input;
  for (int level = 0; level < levels; ++level) {
    const int s1 = uniformInt(rng, 1, 3), s2 = uniformInt(rng, 1, 3);
    const int t = uniformInt(rng, 0, s1 - 1), l = uniformInt(rng, 0, s2 - 1);
    const int pick = uniformInt(rng, 0, 2);
    Expr padded = pick == 2 ? pad2DConstant(l, s2 - 1 - l, t, s1 - 1 - t, 0.0, windows)
                            : pad2D(l, s2 - 1 - l, t, s1 - 1 - t,
                                    pick == 0 ? Boundary::Clamp : Boundary::Mirror, windows);
    windows = slide2D(s1, s2, 1, 1, padded);
  }
  return windows;
}

// A joined pixel stage over `windows` (`levels` deep), in either joined form.
Expr randomJoinedStage(std::mt19937_64& rng, const Expr& windows, int levels) {
  Expr g0 = intFunction(rng);
  Expr g = lam("w", [&](Expr w) { return map(g0, nestedWindowSum(w, levels)); });
  if (uniformInt(rng, 0, 1) == 0) {
    return map(lam("row", [](Expr row) { return join(row); }),
               map(lam("row", [&](Expr row) { return map(g, row); }), windows));
  }
  return map(lam("row", [&](Expr row) { return join(map(g, row)); }), windows);
}

}  // namespace

TEST_CASE("zip-centre-tap preserves the interpreter's result") {
  checkRuleOverRandomPrograms("zip-centre-tap", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr input = Expr::param("input", image(width, height));
    const int levels = uniformInt(rng, 1, 2);
    Expr windows = randomCentredWindows(rng, input, levels);
    Expr g0 = intFunction(rng);
    Expr g = lam("w", [&](Expr w) { return map(g0, nestedWindowSum(w, levels)); });
    const int form = uniformInt(rng, 0, 1);
    Expr stage = form == 0 ? map(lam("row", [](Expr row) { return join(row); }),
                                 map(lam("row", [&](Expr row) { return map(g, row); }), windows))
                           : map(lam("row", [&](Expr row) { return join(map(g, row)); }), windows);
    const int c = uniformInt(rng, 1, 4);
    Expr h = lam("p", [&](Expr p) { return get(0, p) * lit(c) - readOnce(rng, get(1, p)); });
    Expr target = map(lam("row", [&](Expr row) { return map(h, zip(get(0, row), get(1, row))); }),
                      zip(input, stage));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "zip-centre-tap", target, rng);
  });
}

TEST_CASE("centre-tap-in-producer preserves the interpreter's result") {
  checkRuleOverRandomPrograms("centre-tap-in-producer", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr input = Expr::param("input", image(width, height));
    // The producer: a stencil over 1 or 2 levels of centred windows of the input.
    const int levels = uniformInt(rng, 1, 2);
    Expr producer = randomJoinedStage(rng, randomCentredWindows(rng, input, levels), levels);
    // The consumer: a stencil over the producer's centred windows, clamp or mirror padded.
    const int s1 = uniformInt(rng, 1, 3), s2 = uniformInt(rng, 1, 3);
    const int t = uniformInt(rng, 0, s1 - 1), l = uniformInt(rng, 0, s2 - 1);
    const Boundary boundary = chance(rng, 2) ? Boundary::Clamp : Boundary::Mirror;
    Expr consumer = randomJoinedStage(
        rng, slide2D(s1, s2, 1, 1, pad2D(l, s2 - 1 - l, t, s1 - 1 - t, boundary, producer)), 1);
    const int c = uniformInt(rng, 1, 4);
    Expr h = lam("p", [&](Expr p) { return get(0, p) * lit(c) - readOnce(rng, get(1, p)); });
    Expr target = map(lam("row", [&](Expr row) { return map(h, zip(get(0, row), get(1, row))); }),
                      zip(input, consumer));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "centre-tap-in-producer", target, rng);
  });
}

TEST_CASE("overlapped-tiling-fusion-with-input preserves the interpreter's result") {
  checkRuleOverRandomPrograms("overlapped-tiling-fusion-with-input", [](std::mt19937_64& rng) {
    const int s1 = uniformInt(rng, 1, 3), s2 = uniformInt(rng, 1, 3);
    const int t1 = uniformInt(rng, 1, std::min(2, s1)), t2 = uniformInt(rng, 1, std::min(2, s2));
    const int k1 = uniformInt(rng, 1, 3), k2 = uniformInt(rng, 1, 3);
    const int m1 = uniformInt(rng, 1, 3), m2 = uniformInt(rng, 1, 3);
    const int theta1 = s1 + (k1 - 1) * t1, theta2 = s2 + (k2 - 1) * t2;
    const int width = theta2 + (m2 - 1) * k2 * t2, height = theta1 + (m1 - 1) * k1 * t1;
    Expr input = Expr::param("input", image(width, height));
    // The consumer's window function reads the producer P(f, w) on its window w and w itself.
    const int c = uniformInt(rng, 1, 3);
    Expr g = lam("w", [&](Expr w) {
      Stage produced = randomStage(rng, StageInput{w, image(s2, s1), false});
      Expr both = zip(nestedWindowSum(produced.expr, 1), nestedWindowSum(w, 1));
      return map(lam("p", [&](Expr p) { return get(0, p) * lit(c) + readOnce(rng, get(1, p)); }),
                 both);
    });
    Expr target =
        map(lam("row", [&](Expr row) { return map(g, row); }), slide2D(s1, s2, t1, t2, input));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return checkRewrite(d, "overlapped-tiling-fusion-with-input", target, rng,
                        {{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}});
  });
}

TEST_CASE("the pointwise-fusion rules refuse what they must not rewrite") {
  Expr a = Expr::param("a", arrayOf(kInt, 4));
  Expr b = Expr::param("b", arrayOf(kInt, 4));
  SUBCASE("zip-map-fusion: the produced value read twice would be computed twice") {
    Expr produced = map(lam("p", [](Expr p) { return get(0, p) * get(1, p); }), zip(a, b));
    Expr target =
        map(lam("q", [](Expr q) { return get(2, q) * get(2, q) + get(0, q); }), zip(a, b, produced));
    Definition d{"f", Expr::lambda({a, b}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "zip-map-fusion", target));
  }
  SUBCASE("zip-map-fusion: the producer reads an array that is not zipped alongside") {
    Expr c = Expr::param("c", arrayOf(kInt, 4));
    Expr produced = map(lam("p", [](Expr p) { return get(0, p) * get(1, p); }), zip(a, c));
    Expr target = map(lam("q", [](Expr q) { return get(2, q) + get(0, q); }), zip(a, b, produced));
    Definition d{"f", Expr::lambda({a, b, c}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "zip-map-fusion", target));
  }
  Expr images = Expr::param("input", image(4, 4));
  Expr other = Expr::param("other", image(4, 4));
  auto pointwiseOver = [&](const Expr& x, const Expr& windows) {
    Expr g = lam("w", [](Expr w) {
      return map(lam("s", [](Expr s) { return s; }), nestedWindowSum(w, 1));
    });
    Expr stage = map(lam("row", [&](Expr row) { return join(map(g, row)); }), windows);
    Expr h = lam("p", [](Expr p) { return get(0, p) - get(1, p); });
    return map(lam("row", [&](Expr row) { return map(h, zip(get(0, row), get(1, row))); }),
               zip(x, stage));
  };
  SUBCASE("zip-centre-tap: windows that would change the image's shape are not centred") {
    // 3x3 windows padded by one pixel on one side only: the windows no longer hold one pixel
    // each at a fixed tap (the stage is smaller than the image).
    Expr target = pointwiseOver(
        images, slide2D(3, 3, 1, 1, pad2D(1, 1, 2, 0, Boundary::Clamp, images)));
    Definition d{"f", Expr::lambda({images}, target), Type(), {}};
    CHECK(tryRule(d, "zip-centre-tap", target));  // t + b = 2: centred (tap on the last row)
    Expr smaller = pointwiseOver(
        images, slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 0, Boundary::Clamp, images)));
    Definition s{"f", Expr::lambda({images}, smaller), Type(), {}};
    bool refused = true;
    try {
      refused = !tryRule(s, "zip-centre-tap", smaller);
    } catch (const std::exception&) {
      refused = true;  // the zip of a 4x4 image with a 3x4 stage is no program
    }
    CHECK(refused);
  }
  SUBCASE("zip-centre-tap: the windows are of another image") {
    Expr target =
        pointwiseOver(images, slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 1, Boundary::Clamp, other)));
    Definition d{"f", Expr::lambda({images, other}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "zip-centre-tap", target));
  }
  SUBCASE("centre-tap-in-producer: a constant pad, or windows of another image") {
    auto pipeline = [&](const Expr& x, const Expr& producerInput, bool constantPad) {
      Expr producer = map(lam("row", [](Expr row) { return join(row); }),
                          map(lam("row",
                                  [](Expr row) {
                                    return map(lam("w", [](Expr w) { return nestedWindowSum(w, 1); }),
                                               row);
                                  }),
                              slide2D(1, 3, 1, 1,
                                      pad2D(1, 1, 0, 0, Boundary::Clamp, producerInput))));
      Expr padded = constantPad ? pad2DConstant(0, 0, 1, 1, 0.0, producer)
                                : pad2D(0, 0, 1, 1, Boundary::Clamp, producer);
      return pointwiseOver(x, slide2D(3, 1, 1, 1, padded));
    };
    Expr fits = pipeline(images, images, false);
    Definition d{"f", Expr::lambda({images}, fits), Type(), {}};
    CHECK(tryRule(d, "centre-tap-in-producer", fits));
    // A constant pad would need a constant (value, pixel) pair: refused.
    Expr constant = pipeline(images, images, true);
    Definition c{"f", Expr::lambda({images}, constant), Type(), {}};
    CHECK_FALSE(tryRule(c, "centre-tap-in-producer", constant));
    // The producer reads another image: its centre tap is not the pointwise stage's pixel.
    Expr elsewhere = pipeline(images, other, false);
    Definition e{"f", Expr::lambda({images, other}, elsewhere), Type(), {}};
    CHECK_FALSE(tryRule(e, "centre-tap-in-producer", elsewhere));
  }
  SUBCASE("overlapped-tiling-fusion-with-input: no producer stage on the window") {
    Expr g = lam("w", [](Expr w) { return nestedWindowSum(w, 1); });
    Expr target = map(lam("row", [&](Expr row) { return map(g, row); }),
                      slide2D(2, 2, 1, 1, images));
    Definition d{"f", Expr::lambda({images}, target), Type(), {}};
    CHECK_FALSE(tryRule(d, "overlapped-tiling-fusion-with-input", target,
                        {{"theta1", Arith(3)}, {"theta2", Arith(3)}}));
  }
}
