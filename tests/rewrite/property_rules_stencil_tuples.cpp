// Property tests of the tuple-stencil rules (rewrite/rules_stencil_tuples.cpp) against the
// interpreter: tuple-stencil-fusion turns stencils over the components of one tuple array
// (Harris's three box sums over (Ixx, Ixy, Iyy)) into one stencil over the tuple array's windows;
// zip-stencil-fusion does the same for stencils over different arrays, over the windows of their
// zip (generated as below, but over 2 to 4 int images, each stage reading one of them, directly
// or through a random pointwise stage).
//
// The generator builds a random well-typed left side over int data with random concrete sizes:
// an image P of 2- or 3-tuples of ints; 2 to 4 stages, each over the windows
// slide2D(a1, a2, 1, 1, pad2D(.., clamp or mirror, map2D(_c, P))) of a random component c (the
// same window shape and boundary in every stage, components may repeat); each stage boxed (a
// random function of the window sum, [int]1, in either spelling of a boxed stage) or flat (the
// window sum itself kept as [int]1 per pixel); a random pointwise h combining the stages. The
// rule is applied through the engine (applyAt re-type-checks the result), both programs run in
// the interpreter on the same random inputs and must agree exactly; a left side the interpreter
// rejects (mirror padding wider than the image) is not counted. Each property runs 100
// rapidcheck cases and counts its applications (at least 50; printed with MESSAGE). Unit tests
// check what the rules must refuse (different tuple arrays, different pads or window sizes, a
// constant pad, a stage over a map that is not a component getter), and accept the plain case.
// shared-window-fusion: 2 to 4 stages (all boxed, either spelling, or all flat) over separately
// built, alpha-equal copies of one windows array (slide2D ∘ pad2D of an int image, any
// boundary, constant included: the rule does not look at the windows) zipped as they are
// (map(r -> zip(r._0, ..), zip(..))); 100 cases, checked like the others. Its unit test refuses
// stages over different arrays, a boxed stage zipped with a flat one, and zipped rows reordered.
#include <doctest/doctest.h>
#include <rapidcheck.h>

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

const Rule& tupleRule(const std::string& name) {
  return testing::ruleNamedOrAdded(name, addStencilTupleRules);
}

// Whether rule `name` rewrites `target` inside f(first, second) = target.
bool ruleApplies(const std::string& name, const Expr& first, const Expr& second,
                 const Expr& target) {
  Definition d{"f", Expr::lambda({first, second}, target), Type(), {}};
  typecheck(d);
  RewriteContext context;
  return applyAt(d, tupleRule(name), positionOf(d, target), {}, context).has_value();
}

const Type kInt = Type::intType();

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

Expr intFunction(std::mt19937_64& rng) {
  return lam("x", [&](Expr x) { return randomTerm(rng, ScalarKind::Int, x); });
}

// The windows of one component: slide2D(a1, a2, 1, 1, pad2D(.., map2D(_component, tuples))).
struct Windowing {
  int a1, a2, top, left;
  Boundary boundary;
  Expr build(const Expr& tuples, int component) const {
    Expr getter = lam("p", [component](Expr p) { return get(component, std::move(p)); });
    Expr components = map(lam("row", [&](Expr row) { return map(getter, row); }), tuples);
    return slide2D(a1, a2, 1, 1,
                   pad2D(left, a2 - 1 - left, top, a1 - 1 - top, boundary, components));
  }
};
Windowing randomWindowing(std::mt19937_64& rng) {
  Windowing w{};
  w.a1 = uniformInt(rng, 1, 3);
  w.a2 = uniformInt(rng, 1, 3);
  w.top = uniformInt(rng, 0, w.a1 - 1);
  w.left = uniformInt(rng, 0, w.a2 - 1);
  w.boundary = chance(rng, 2) ? Boundary::Clamp : Boundary::Mirror;
  return w;
}

// The sum of a window's ints: reduce(0, +, join(w)), an [int]1.
Expr windowSum(const Expr& w) {
  return reduce(lit(0), lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }), join(w));
}

// A stage over windows `x`: boxed (a random function of the sum, either spelling) or flat (the
// sum itself as the pixel's [int]1 value).
Expr stageOf(std::mt19937_64& rng, bool boxed, Expr x) {
  if (!boxed) {
    Expr f = lam("w", [](Expr w) { return windowSum(w); });
    return map(lam("row", [&](Expr row) { return map(f, row); }), std::move(x));
  }
  Expr k = intFunction(rng);
  Expr f = lam("w", [&](Expr w) { return map(k, windowSum(w)); });
  if (chance(rng, 2)) {
    return map(lam("row", [&](Expr row) { return join(map(f, row)); }), std::move(x));
  }
  Expr mapped = map(lam("row", [&](Expr row) { return map(f, row); }), std::move(x));
  return map(lam("row", [](Expr row) { return join(row); }), std::move(mapped));
}

// h over the tuple of n stage values: a random int combination (boxed: of ints; flat: of the
// [int]1 sums, zipped and combined elementwise).
Expr combination(std::mt19937_64& rng, size_t n, bool boxed) {
  auto combineScalars = [&rng, n](const Expr& t) {
    Expr sum = randomTerm(rng, ScalarKind::Int, get(0, t));
    for (size_t k = 1; k < n; ++k) {
      Expr term = randomTerm(rng, ScalarKind::Int, get(static_cast<int64_t>(k), t));
      sum = chance(rng, 2) ? sum - term : sum * lit(3) + term;
    }
    return sum;
  };
  if (boxed) return lam("t", [&](Expr t) { return combineScalars(t); });
  return lam("t", [&](Expr t) {
    std::vector<Expr> parts;
    for (size_t k = 0; k < n; ++k) parts.push_back(get(static_cast<int64_t>(k), t));
    Expr scalar = lam("s", [&](Expr s) { return combineScalars(s); });
    return map(scalar, zip(std::move(parts)));
  });
}

// map(r -> map(h, zip(r._0, .., r._{n-1})), zip(stages..))
Expr zippedStages(const Expr& h, std::vector<Expr> stages) {
  const size_t n = stages.size();
  return map(lam("r",
                 [&](Expr r) {
                   std::vector<Expr> parts;
                   for (size_t k = 0; k < n; ++k) parts.push_back(get(static_cast<int64_t>(k), r));
                   return map(h, zip(std::move(parts)));
                 }),
             zip(std::move(stages)));
}

Type tupleImage(int arity, int width, int height) {
  return arrayOf(arrayOf(Type::tuple(std::vector<Type>(static_cast<size_t>(arity), kInt)), width),
                 height);
}

}  // namespace

TEST_CASE("tuple-stencil-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("tuple-stencil-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    const int arity = uniformInt(rng, 2, 3);
    Expr input = Expr::param("input", tupleImage(arity, width, height));
    const Windowing windowing = randomWindowing(rng);
    const size_t n = static_cast<size_t>(uniformInt(rng, 2, 4));
    const bool boxed = !chance(rng, 3);
    std::vector<Expr> stages;
    for (size_t k = 0; k < n; ++k) {
      const int component = uniformInt(rng, 0, arity - 1);
      stages.push_back(stageOf(rng, boxed, windowing.build(input, component)));
    }
    Expr target = zippedStages(combination(rng, n, boxed), std::move(stages));
    Definition d{"f", Expr::lambda({input}, target), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, tupleRule("tuple-stencil-fusion"), target, rng);
  });
}

TEST_CASE("zip-stencil-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("zip-stencil-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    const Windowing windowing = randomWindowing(rng);
    const size_t n = static_cast<size_t>(uniformInt(rng, 2, 4));
    const bool boxed = !chance(rng, 3);
    // n images, a stage reading one of them (some may be read twice, some not at all) or a
    // pointwise stage over one of them (Harris's products under the box sums).
    std::vector<Expr> images;
    for (size_t k = 0; k < n; ++k) {
      images.push_back(
          Expr::param("image" + std::to_string(k), arrayOf(arrayOf(kInt, width), height)));
    }
    std::vector<Expr> stages;
    for (size_t k = 0; k < n; ++k) {
      Expr source = images[static_cast<size_t>(uniformInt(rng, 0, static_cast<int>(n) - 1))];
      if (chance(rng, 2)) {
        Expr f = intFunction(rng);
        source = map(lam("row", [&](Expr row) { return map(f, row); }), source);
      }
      Expr windows = slide2D(windowing.a1, windowing.a2, 1, 1,
                             pad2D(windowing.left, windowing.a2 - 1 - windowing.left, windowing.top,
                                   windowing.a1 - 1 - windowing.top, windowing.boundary, source));
      stages.push_back(stageOf(rng, boxed, windows));
    }
    Expr target = zippedStages(combination(rng, n, boxed), std::move(stages));
    Definition d{"f", Expr::lambda(images, target), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, tupleRule("zip-stencil-fusion"), target, rng);
  });
}

namespace {

// map(r -> zip(r._0, .., r._{n-1}), zip(stages..)): the stages zipped as they are.
Expr zippedAsTheyAre(std::vector<Expr> stages) {
  const size_t n = stages.size();
  return map(lam("r",
                 [n](Expr r) {
                   std::vector<Expr> parts;
                   for (size_t k = 0; k < n; ++k) parts.push_back(get(static_cast<int64_t>(k), r));
                   return zip(std::move(parts));
                 }),
             zip(std::move(stages)));
}

}  // namespace

TEST_CASE("shared-window-fusion preserves the interpreter's result") {
  checkRuleOverRandomPrograms("shared-window-fusion", [](std::mt19937_64& rng) {
    const int width = uniformInt(rng, 1, 5), height = uniformInt(rng, 1, 5);
    Expr image = Expr::param("image", arrayOf(arrayOf(kInt, width), height));
    const Windowing windowing = randomWindowing(rng);
    const Boundary boundary = chance(rng, 4) ? Boundary::Constant : windowing.boundary;
    // A fresh copy of the windows per stage (alpha-equal, not the same node).
    auto windows = [&] {
      return slide2D(windowing.a1, windowing.a2, 1, 1,
                     pad2D(windowing.left, windowing.a2 - 1 - windowing.left, windowing.top,
                           windowing.a1 - 1 - windowing.top, boundary, image));
    };
    const size_t n = static_cast<size_t>(uniformInt(rng, 2, 4));
    const bool boxed = !chance(rng, 3);
    std::vector<Expr> stages;
    for (size_t k = 0; k < n; ++k) stages.push_back(stageOf(rng, boxed, windows()));
    Expr target = zippedAsTheyAre(std::move(stages));
    Definition d{"f", Expr::lambda({image}, target), Type(), {}};
    return testing::checkRewriteWhereRunnable(d, tupleRule("shared-window-fusion"), target, rng);
  });
}

TEST_CASE("shared-window-fusion refuses what it must not rewrite") {
  std::mt19937_64 rng(17);
  Expr first = Expr::param("first", arrayOf(arrayOf(kInt, 4), 3));
  Expr second = Expr::param("second", arrayOf(arrayOf(kInt, 4), 3));
  auto applies = [&](const Expr& target) {
    return ruleApplies("shared-window-fusion", first, second, target);
  };
  auto windows = [](const Expr& x) {
    return slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 1, Boundary::Clamp, x));
  };
  // The accepted forms, as controls: boxed and flat stages over copies of the same windows.
  CHECK(applies(
      zippedAsTheyAre({stageOf(rng, true, windows(first)), stageOf(rng, true, windows(first))})));
  CHECK(applies(
      zippedAsTheyAre({stageOf(rng, false, windows(first)), stageOf(rng, false, windows(first)),
                       stageOf(rng, false, windows(first))})));
  // Different arrays.
  CHECK_FALSE(applies(
      zippedAsTheyAre({stageOf(rng, true, windows(first)), stageOf(rng, true, windows(second))})));
  // A boxed stage zipped with a flat one.
  CHECK_FALSE(applies(
      zippedAsTheyAre({stageOf(rng, true, windows(first)), stageOf(rng, false, windows(first))})));
  // The rows zipped in another order (r._1, r._0).
  Expr swapped = map(lam("r", [](Expr r) { return zip(get(1, r), get(0, r)); }),
                     zip(stageOf(rng, true, windows(first)), stageOf(rng, true, windows(first))));
  CHECK_FALSE(applies(swapped));
}

TEST_CASE("tuple-stencil-fusion refuses what it must not rewrite") {
  std::mt19937_64 rng(11);
  Expr input = Expr::param("input", tupleImage(3, 4, 3));
  Expr other = Expr::param("other", tupleImage(3, 4, 3));
  auto refuses = [&](const Expr& target) {
    Definition d{"f", Expr::lambda({input, other}, target), Type(), {}};
    typecheck(d);
    RewriteContext context;
    CHECK_FALSE(applyAt(d, tupleRule("tuple-stencil-fusion"), positionOf(d, target), {}, context)
                    .has_value());
  };
  const Windowing clamp{3, 3, 1, 1, Boundary::Clamp};
  Windowing mirror = clamp;
  mirror.boundary = Boundary::Mirror;
  auto sum2 = lam("t", [](Expr t) { return get(0, t) + get(1, t); });
  // The accepted form, as a control: the same windows of two components of one array.
  {
    Expr target = zippedStages(sum2, {stageOf(rng, true, clamp.build(input, 0)),
                                      stageOf(rng, true, clamp.build(input, 2))});
    Definition d{"f", Expr::lambda({input, other}, target), Type(), {}};
    typecheck(d);
    RewriteContext context;
    CHECK(applyAt(d, tupleRule("tuple-stencil-fusion"), positionOf(d, target), {}, context)
              .has_value());
  }
  // Components of two different tuple arrays.
  refuses(zippedStages(sum2, {stageOf(rng, true, clamp.build(input, 0)),
                              stageOf(rng, true, clamp.build(other, 1))}));
  // Different pads.
  refuses(zippedStages(sum2, {stageOf(rng, true, clamp.build(input, 0)),
                              stageOf(rng, true, mirror.build(input, 1))}));
  // A boxed and a flat stage (h adds the int to the flat stage's [int]1).
  auto intPlusBox = lam(
      "t", [](Expr t) { return map(lam("s", [&](Expr s) { return get(0, t) + s; }), get(1, t)); });
  refuses(zippedStages(intPlusBox, {stageOf(rng, true, clamp.build(input, 0)),
                                    stageOf(rng, false, clamp.build(input, 1))}));
  // A constant pad (it would put a scalar where the array has tuples).
  {
    auto constantWindows = [&](int component) {
      Expr getter = lam("p", [component](Expr p) { return get(component, std::move(p)); });
      Expr components = map(lam("row", [&](Expr row) { return map(getter, row); }), input);
      return slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 1, Boundary::Constant, components));
    };
    refuses(zippedStages(
        sum2, {stageOf(rng, true, constantWindows(0)), stageOf(rng, true, constantWindows(1))}));
  }
  // A stage over a map that is not a component getter.
  {
    Expr notGetter = lam("p", [](Expr p) { return get(0, p) + get(1, p); });
    Expr mapped = map(lam("row", [&](Expr row) { return map(notGetter, row); }), input);
    Expr windows = slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 1, Boundary::Clamp, mapped));
    refuses(zippedStages(sum2,
                         {stageOf(rng, true, clamp.build(input, 0)), stageOf(rng, true, windows)}));
  }
}

TEST_CASE("zip-stencil-fusion refuses what it must not rewrite") {
  std::mt19937_64 rng(13);
  Expr first = Expr::param("first", arrayOf(arrayOf(kInt, 4), 3));
  Expr second = Expr::param("second", arrayOf(arrayOf(kInt, 4), 3));
  auto applies = [&](const Expr& target) {
    return ruleApplies("zip-stencil-fusion", first, second, target);
  };
  auto windows = [](const Expr& x, Boundary boundary, int size) {
    return slide2D(size, size, 1, 1, pad2D(1, size - 2, 1, size - 2, boundary, x));
  };
  auto sum2 = lam("t", [](Expr t) { return get(0, t) + get(1, t); });
  // The accepted form, as a control.
  CHECK(applies(zippedStages(sum2, {stageOf(rng, true, windows(first, Boundary::Clamp, 3)),
                                    stageOf(rng, true, windows(second, Boundary::Clamp, 3))})));
  // Different boundaries, different window sizes, a constant pad.
  CHECK_FALSE(
      applies(zippedStages(sum2, {stageOf(rng, true, windows(first, Boundary::Clamp, 3)),
                                  stageOf(rng, true, windows(second, Boundary::Mirror, 3))})));
  CHECK_FALSE(
      applies(zippedStages(sum2, {stageOf(rng, true, windows(first, Boundary::Clamp, 3)),
                                  stageOf(rng, true, windows(second, Boundary::Clamp, 2))})));
  CHECK_FALSE(
      applies(zippedStages(sum2, {stageOf(rng, true, windows(first, Boundary::Constant, 3)),
                                  stageOf(rng, true, windows(second, Boundary::Constant, 3))})));
}
