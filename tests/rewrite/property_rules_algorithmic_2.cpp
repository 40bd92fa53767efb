// Property tests of the rules of rewrite/rules_algorithmic_2.cpp: partial-reduce,
// map-reduce-interchange, slide-tiling, slide-tiling-2d, pad-for-tiling, vectorize,
// vectorize-zip, vectorize-zip-padded and reorder-with-stride.
//
// For each rule, rapidcheck builds random well-typed programs where the rule applies (targeted
// generators: random concrete lengths chosen so that the rule's size conditions hold, random
// scalar functions from a small set, lambdas and user functions), applies the rule through the
// engine (applyAt, which re-type-checks the result) with random valid factor values, runs the
// original and the rewritten program in the interpreter on the same random inputs and compares:
// exactly for int data and for float programs whose float operations happen in the same order;
// within 1e-4 absolute + 1e-4 relative for float reductions that partial-reduce reassociates.
// Each property counts the applications it made, reports it with MESSAGE and checks it is at
// least 50. Unit tests check the cases where a rule must not match, and the stride identity
// reorder(stride(n/s), reorder(stride(s), x)) = x that reorder-with-stride relies on.
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
#include "rewrite/rule.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

using testing::arrayOf;
using testing::positionOf;
using testing::ruleNamed;

int pick(std::mt19937_64& rng, int lo, int hi) { return testing::uniformInt(rng, lo, hi); }

// Applies the rule at `target`; fails the property when it does not match.
Definition rewriteAt(const Definition& definition, const std::string& ruleName, const Expr& target,
                     const RuleArguments& arguments) {
  RewriteContext context;
  std::optional<Definition> result =
      applyAt(definition, ruleNamed(ruleName), positionOf(definition, target), arguments, context);
  RC_ASSERT(result.has_value());
  return *result;
}

// Runs both definitions on the same random inputs; exact when tolerance < 0.
void checkSameResult(const Definition& original, const Definition& rewritten, std::mt19937_64& rng,
                     double tolerance = -1.0, bool realFloats = false) {
  std::vector<Value> inputs;
  testing::RandomValueOptions options;
  options.realFloats = realFloats;
  for (const Expr& param : original.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), {}, rng, options));
  }
  Value expected = interpret(original, inputs, {});
  Value actual = interpret(rewritten, inputs, {});
  if (tolerance < 0) {
    if (!(expected == actual)) {
      RC_FAIL("results differ\noriginal:  " + printDefinition(original) +
              "\nrewritten: " + printDefinition(rewritten) + "\nexpected " + expected.toString() +
              "\nfound    " + actual.toString());
    }
  } else if (!approximatelyEqual(actual, expected, tolerance, tolerance)) {
    RC_FAIL("results differ beyond " + std::to_string(tolerance) +
            "\nrewritten: " + printDefinition(rewritten) + "\nexpected " + expected.toString() +
            "\nfound    " + actual.toString());
  }
}

// A random scalar -> scalar function over `kind`: a lambda from a small set or a user function.
Expr randomUnary(std::mt19937_64& rng, ScalarKind kind) {
  Type t = Type::scalar(kind);
  auto constant = [&](int c) { return kind == ScalarKind::Float ? lit(0.5f * c) : lit(c); };
  switch (pick(rng, 0, 4)) {
    case 0:
      return lam("x", [&](Expr x) { return x + constant(1); });
    case 1:
      return lam("x", [&](Expr x) { return x * x; });
    case 2:
      return lam("x", [&](Expr x) { return max(x, constant(0)); });
    case 3:
      return lam("x", [&](Expr x) { return x * constant(3) - constant(2); });
    default:
      return userFun("affine", {{"x", t}}, t,
                     [&](const std::vector<Expr>& p) { return p[0] * constant(2) + constant(1); });
  }
}

const char* opName(Op op) {
  switch (op) {
    case Op::Add:
      return "+";
    case Op::Mul:
      return "*";
    case Op::Min:
      return "min";
    default:
      return "max";
  }
}

Expr sumOf(Expr xs, ScalarKind kind) {
  Expr zero = kind == ScalarKind::Float ? lit(0.0f) : lit(0);
  return reduce(zero, lam2("a", "b", [](Expr a, Expr b) { return a + b; }), std::move(xs));
}

}  // namespace

TEST_CASE("partial-reduce preserves reductions by + * min max") {
  int applications = 0;
  CHECK(rc::check("partial-reduce", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const Op ops[] = {Op::Add, Op::Mul, Op::Min, Op::Max};
    const Op op = ops[pick(rng, 0, 3)];
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    const int n = pick(rng, 1, 6);
    // int products stay below 2^31: at most 12 factors of magnitude <= 5.
    const int chunks = pick(rng, 1, op == Op::Mul && kind == ScalarKind::Int ? 12 / n : 6);
    const int length = n * chunks;
    Expr init;
    if (op == Op::Add) init = kind == ScalarKind::Float ? lit(0.0f) : lit(0);
    if (op == Op::Mul) init = kind == ScalarKind::Float ? lit(1.0f) : lit(1);
    if (op == Op::Min || op == Op::Max) {
      int z = pick(rng, -6, 6);
      init = kind == ScalarKind::Float ? lit(0.5f * z) : lit(z);
    }
    const bool swapped = pick(rng, 0, 1) == 1;
    Expr f = lam2("acc", "x", [&](Expr acc, Expr x) {
      return swapped ? Expr::prim(op, {}, {}, {x, acc}) : Expr::prim(op, {}, {}, {acc, x});
    });
    Expr target;
    Definition original =
        definition("p", {{"xs", arrayOf(Type::scalar(kind), length)}}, [&](const auto& p) {
          target = reduce(init, f, p[0]);
          return target;
        });
    Definition rewritten = rewriteAt(original, "partial-reduce", target, {{"n", Arith(n)}});
    RC_TAG(opName(op));
    checkSameResult(original, rewritten, rng, kind == ScalarKind::Float ? 1e-4 : -1.0, true);
    ++applications;
  }));
  MESSAGE("partial-reduce: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("partial-reduce does not match non-associative or non-identity reductions") {
  Type xsType = arrayOf(Type::intType(), 8);
  auto tryRule = [&](Expr init, Expr f) {
    Expr target;
    Definition d = definition("p", {{"xs", xsType}}, [&](const auto& p) {
      target = reduce(init, f, p[0]);
      return target;
    });
    RewriteContext context;
    return applyAt(d, ruleNamed("partial-reduce"), positionOf(d, target), {{"n", Arith(2)}},
                   context);
  };
  auto plus = lam2("a", "b", [](Expr a, Expr b) { return a + b; });
  CHECK(tryRule(lit(0), plus).has_value());
  CHECK_FALSE(tryRule(lit(3), plus).has_value());  // 3 is not the identity of +
  CHECK_FALSE(tryRule(lit(0), lam2("a", "b", [](Expr a, Expr b) { return a - b; })).has_value());
  CHECK_FALSE(tryRule(lit(0), lam2("a", "b", [](Expr a, Expr) { return a + a; })).has_value());
  CHECK_FALSE(
      tryRule(lit(0), lam2("a", "b", [](Expr a, Expr b) { return a + b * b; })).has_value());
  CHECK_FALSE(tryRule(lit(0), lam2("a", "b", [](Expr a, Expr b) { return a * b; })).has_value());
}

TEST_CASE("map-reduce-interchange preserves row reductions") {
  int applications = 0;
  CHECK(rc::check("map-reduce-interchange", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    const int rows = pick(rng, 1, 6);
    const int columns = pick(rng, 1, 6);
    auto constant = [&](int c) { return kind == ScalarKind::Float ? lit(0.5f * c) : lit(c); };
    Type t = Type::scalar(kind);
    Expr g;
    switch (pick(rng, 0, 3)) {
      case 0:
        g = lam2("acc", "x", [](Expr acc, Expr x) { return acc + x; });
        break;
      case 1:
        g = lam2("acc", "x", [&](Expr acc, Expr x) { return acc * constant(2) - x; });
        break;
      case 2:
        g = lam2("acc", "x", [&](Expr acc, Expr x) { return max(acc, x) + constant(1); });
        break;
      default:
        g = userFun("step", {{"acc", t}, {"x", t}}, t,
                    [](const std::vector<Expr>& p) { return p[0] - p[1] * p[1]; });
    }
    Expr init = constant(pick(rng, -3, 3));
    Expr target;
    Definition original =
        definition("p", {{"xss", arrayOf(arrayOf(t, columns), rows)}}, [&](const auto& p) {
          target = map(lam("r", [&](Expr r) { return reduce(init, g, r); }), p[0]);
          return target;
        });
    Definition rewritten = rewriteAt(original, "map-reduce-interchange", target, {});
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("map-reduce-interchange: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("map-reduce-interchange does not match when the initial value depends on the row") {
  Expr target;
  Definition d =
      definition("p", {{"xss", arrayOf(arrayOf(Type::intType(), 3), 4)}}, [&](const auto& p) {
        target = map(lam("r", [](Expr r) { return sumOf(r, ScalarKind::Int); }), p[0]);
        return target;
      });
  RewriteContext context;
  CHECK(applyAt(d, ruleNamed("map-reduce-interchange"), positionOf(d, target), {}, context)
            .has_value());
  Expr dependent;
  Definition e =
      definition("p", {{"xss", arrayOf(arrayOf(Type::intType(), 3), 4)}}, [&](const auto& p) {
        // The initial value mentions the row: let(q -> 0, r) is 0 but reads r.
        dependent =
            map(lam("r",
                    [](Expr r) {
                      return reduce(let(lam("q", [](Expr) { return lit(0); }), r),
                                    lam2("a", "b", [](Expr a, Expr b) { return a + b; }), r);
                    }),
                p[0]);
        return dependent;
      });
  CHECK_FALSE(applyAt(e, ruleNamed("map-reduce-interchange"), positionOf(e, dependent), {}, context)
                  .has_value());
}

TEST_CASE("slide-tiling preserves 1D sliding windows") {
  int applications = 0;
  CHECK(rc::check("slide-tiling", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int size = pick(rng, 1, 4);
    const int step = pick(rng, 1, 3);
    const int windowsPerTile = pick(rng, 1, 3);
    const int tiles = pick(rng, 1, 4);
    // Exact coverage: tiles * windowsPerTile windows, the last ending at the input's end.
    const int length = tiles * windowsPerTile * step - step + size;
    const int theta = (windowsPerTile - 1) * step + size;
    const bool consumed = pick(rng, 0, 1) == 1;
    Expr target;
    Definition original =
        definition("p", {{"xs", arrayOf(Type::intType(), length)}}, [&](const auto& p) {
          target = slide(size, step, p[0]);
          if (!consumed) return target;
          return map(lam("w", [](Expr w) { return sumOf(w, ScalarKind::Int); }), target);
        });
    Definition rewritten = rewriteAt(original, "slide-tiling", target, {{"theta", Arith(theta)}});
    RC_TAG(consumed ? "inside a map" : "at the root");
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("slide-tiling: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("slide-tiling-2d preserves 2D sliding windows") {
  int applications = 0;
  CHECK(rc::check("slide-tiling-2d", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    int size[2], step[2], theta[2], length[2];
    for (int d = 0; d < 2; ++d) {
      size[d] = pick(rng, 1, 3);
      step[d] = pick(rng, 1, 2);
      const int windowsPerTile = pick(rng, 1, 3);
      const int tiles = pick(rng, 1, 3);
      length[d] = tiles * windowsPerTile * step[d] - step[d] + size[d];
      theta[d] = (windowsPerTile - 1) * step[d] + size[d];
    }
    Expr target;
    Definition original = definition(
        "p", {{"x", arrayOf(arrayOf(Type::intType(), length[1]), length[0])}}, [&](const auto& p) {
          target = slide2D(size[0], size[1], step[0], step[1], p[0]);
          return target;
        });
    Definition rewritten = rewriteAt(original, "slide-tiling-2d", target,
                                     {{"theta1", Arith(theta[0])}, {"theta2", Arith(theta[1])}});
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("slide-tiling-2d: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("pad-for-tiling preserves maps and slides") {
  int applications = 0;
  CHECK(rc::check("pad-for-tiling", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    const int length = pick(rng, 1, 12);
    const int rho = pick(rng, 0, length);
    const bool onSlide = pick(rng, 0, 1) == 1;
    const int size = pick(rng, 1, length);
    const int step = pick(rng, 1, 3);
    Expr f = randomUnary(rng, kind);
    Expr target;
    Definition original =
        definition("p", {{"xs", arrayOf(Type::scalar(kind), length)}}, [&](const auto& p) {
          if (onSlide) {
            target = slide(size, step, p[0]);
            return map(lam("w", [&](Expr w) { return sumOf(w, kind); }), target);
          }
          target = map(f, p[0]);
          return target;
        });
    Definition rewritten = rewriteAt(original, "pad-for-tiling", target, {{"rho", Arith(rho)}});
    RC_TAG(onSlide ? "slide" : "map");
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("pad-for-tiling: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("vectorize preserves maps of scalar functions") {
  int applications = 0;
  CHECK(rc::check("vectorize", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int widths[] = {2, 3, 4, 8, 16};
    const int v = widths[pick(rng, 0, 4)];
    const int vectors = pick(rng, 1, 4);
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    Expr f = randomUnary(rng, kind);
    const bool nested = pick(rng, 0, 1) == 1;
    Expr target;
    Type rowType = arrayOf(Type::scalar(kind), v * vectors);
    Definition original = nested ? definition("p", {{"xss", arrayOf(rowType, 3)}},
                                              [&](const auto& p) {
                                                return map(lam("row",
                                                               [&](Expr row) {
                                                                 target = map(f, row);
                                                                 return target;
                                                               }),
                                                           p[0]);
                                              })
                                 : definition("p", {{"xs", rowType}}, [&](const auto& p) {
                                     target = map(f, p[0]);
                                     return target;
                                   });
    Definition rewritten = rewriteAt(original, "vectorize", target, {{"v", Arith(v)}});
    RC_TAG(nested ? "inside a map" : "at the root");
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("vectorize: " << applications << " applications");
  CHECK(applications >= 50);
}

namespace {

// vectorize-zip (lengths a multiple of the width) or vectorize-zip-padded (`anyLength`: any
// length of at least one vector, padded to whole vectors and cropped back) on random maps over
// zipped arrays; returns how many were checked.
int checkVectorizeZip(const std::string& rule, bool anyLength) {
  int applications = 0;
  CHECK(rc::check(rule, [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int widths[] = {2, 3, 4, 8, 16};
    const int v = widths[pick(rng, 0, 4)];
    const int n = pick(rng, 2, 5);  // zipped arrays
    const int length = v * pick(rng, 1, 3) + (anyLength ? pick(rng, 0, v - 1) : 0);
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    const Type scalar = Type::scalar(kind);
    // The element function: a user function of the n components, or a sum of unary functions
    // of them (a component possibly read twice, another not at all).
    const bool user = pick(rng, 0, 1) == 1;
    std::vector<Expr> unary;
    for (int i = 0; i < n; ++i) unary.push_back(randomUnary(rng, kind));
    std::vector<std::pair<std::string, Type>> params;
    for (int i = 0; i < n; ++i) params.push_back({"p" + std::to_string(i), scalar});
    const Expr taps = userFun("taps", params, scalar, [&](const std::vector<Expr>& p) {
      Expr sum = p[0];
      for (int i = 1; i < n; ++i) {
        sum = sum + p[static_cast<size_t>(i)] *
                        (kind == ScalarKind::Float ? lit(0.5f * static_cast<float>(i)) : lit(i + 1));
      }
      return sum;
    });
    const int skipped = pick(rng, 0, n - 1);
    Expr f = lam("t", [&](Expr t) {
      std::vector<Expr> components;
      for (int i = 0; i < n; ++i) components.push_back(get(Arith(int64_t(i)), t));
      if (user) return apply(taps, components);
      Expr sum = apply(unary[0], {components[0]});
      for (int i = 1; i < n; ++i) {
        if (i != skipped) {
          sum = sum + apply(unary[static_cast<size_t>(i)], {components[static_cast<size_t>(i)]});
        }
      }
      return sum;
    });
    // The arrays: n parameters, or the taps of one row, crop(i, n - 1 - i, row).
    const bool stencil = pick(rng, 0, 1) == 1;
    Expr target;
    Definition original =
        stencil ? definition("p", {{"row", arrayOf(scalar, length + n - 1)}},
                             [&](const auto& p) {
                               std::vector<Expr> crops;
                               for (int i = 0; i < n; ++i) crops.push_back(crop(i, n - 1 - i, p[0]));
                               target = map(f, zip(crops));
                               return target;
                             })
                : [&] {
                    std::vector<std::pair<std::string, Type>> arrays;
                    for (int i = 0; i < n; ++i) {
                      arrays.push_back({"x" + std::to_string(i), arrayOf(scalar, length)});
                    }
                    return definition("p", arrays, [&](const auto& p) {
                      target = map(f, zip(std::vector<Expr>(p.begin(), p.end())));
                      return target;
                    });
                  }();
    Definition rewritten = rewriteAt(original, rule, target, {{"v", Arith(v)}});
    RC_TAG(stencil ? "a row's taps" : "zipped parameters");
    if (anyLength) RC_TAG(length % v == 0 ? "whole vectors" : "a partial last vector");
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE(rule << ": " << applications << " applications");
  return applications;
}

}  // namespace

TEST_CASE("vectorize-zip preserves maps over zipped arrays, a stencil's taps included") {
  CHECK(checkVectorizeZip("vectorize-zip", false) >= 50);
}

TEST_CASE("vectorize-zip-padded preserves them at any length, whole vectors or not") {
  CHECK(checkVectorizeZip("vectorize-zip-padded", true) >= 50);
}

TEST_CASE("vectorize-zip refuses a tuple used whole, and lengths the width does not divide") {
  Expr target;
  Definition whole = definition(
      "p", {{"a", arrayOf(Type::floatType(), 8)}, {"b", arrayOf(Type::floatType(), 8)}},
      [&](const auto& p) {
        // t handed whole to another function: its components are not known projections.
        Expr sum = lam("u", [](Expr u) { return get(0, u) + get(1, u); });
        target = map(lam("t", [&](Expr t) { return apply(sum, {t}); }), zip(p[0], p[1]));
        return target;
      });
  const Rule& rule = ruleNamed("vectorize-zip");
  RewriteContext context;
  CHECK_FALSE(applyAt(whole, rule, positionOf(whole, target), {{"v", Arith(4)}}, context));
  Definition odd = definition(
      "p", {{"a", arrayOf(Type::floatType(), 6)}, {"b", arrayOf(Type::floatType(), 6)}},
      [&](const auto& p) {
        target = map(lam("t", [](Expr t) { return get(0, t) + get(1, t); }), zip(p[0], p[1]));
        return target;
      });
  CHECK_FALSE(applyAt(odd, rule, positionOf(odd, target), {{"v", Arith(4)}}, context));
  CHECK(applyAt(odd, rule, positionOf(odd, target), {{"v", Arith(3)}}, context));
  // The padded form takes the odd length, but not arrays shorter than one vector.
  const Rule& padded = ruleNamed("vectorize-zip-padded");
  CHECK(applyAt(odd, padded, positionOf(odd, target), {{"v", Arith(4)}}, context));
  CHECK_FALSE(applyAt(odd, padded, positionOf(odd, target), {{"v", Arith(8)}}, context));
}

TEST_CASE("vectorize needs a given constant width") {
  Expr target;
  Definition d = definition("p", {{"xs", arrayOf(Type::floatType(), 8)}}, [&](const auto& p) {
    target = map(lam("x", [](Expr x) { return x * x; }), p[0]);
    return target;
  });
  const Rule& rule = ruleNamed("vectorize");
  RewriteContext context;
  Position position = positionOf(d, target);
  CHECK(applyAt(d, rule, position, {{"v", Arith(4)}}, context).has_value());
  CHECK_FALSE(applyAt(d, rule, position, {}, context).has_value());
  CHECK_FALSE(applyAt(d, rule, position, {{"v", Arith(5)}}, context).has_value());
  CHECK_FALSE(applyAt(d, rule, position, {{"v", Arith::size("V")}}, context).has_value());
}

TEST_CASE("reorder(stride(n/s)) undoes reorder(stride(s))") {
  for (int n = 1; n <= 24; ++n) {
    for (int s = 1; s <= n; ++s) {
      if (n % s != 0) continue;
      Expr x = param("x", arrayOf(Type::intType(), n));
      std::vector<Value> elements;
      for (int i = 0; i < n; ++i) elements.push_back(Value::ofInt(i * 7 + 1));
      Value input = Value::array(elements);
      Value inner = interpretExpr(reorderStride(s, x), {}, {{x, input}});
      Value roundTrip = interpretExpr(reorderStride(n / s, reorderStride(s, x)), {}, {{x, input}});
      CHECK(roundTrip == input);
      if (s != 1 && s != n) CHECK_FALSE(inner == input);  // a real permutation
    }
  }
}

TEST_CASE("reorder-with-stride preserves maps") {
  int applications = 0;
  CHECK(rc::check("reorder-with-stride", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int s = pick(rng, 1, 6);
    const int length = s * pick(rng, 1, 6);
    const ScalarKind kind = pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
    Expr f = randomUnary(rng, kind);
    Expr target;
    Definition original =
        definition("p", {{"xs", arrayOf(Type::scalar(kind), length)}}, [&](const auto& p) {
          target = map(f, p[0]);
          return target;
        });
    Definition rewritten = rewriteAt(original, "reorder-with-stride", target, {{"s", Arith(s)}});
    // Compared element by element: the output permutation must be exactly undone.
    checkSameResult(original, rewritten, rng);
    ++applications;
  }));
  MESSAGE("reorder-with-stride: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("rules with symbolic factors give parametric, well-typed programs") {
  // Factors left out become fresh tuning variables; applyAt re-type-checks the result.
  Expr reduceTarget;
  Definition d = definition(
      "p", {{"xs", Type::array(Type::floatType(), Arith::size("N"))}}, [&](const auto& p) {
        reduceTarget =
            reduce(lit(0.0f), lam2("a", "b", [](Expr a, Expr b) { return a + b; }), p[0]);
        return reduceTarget;
      });
  RewriteContext context;
  auto result = applyAt(d, ruleNamed("partial-reduce"), positionOf(d, reduceTarget), {}, context);
  REQUIRE(result.has_value());
  REQUIRE(context.tuningVariables().size() == 1);
  CHECK(printDefinition(*result).find("split(omega1") != std::string::npos);

  Expr slideTarget;
  Definition s =
      definition("p", {{"xs", Type::array(Type::intType(), Arith::size("N"))}}, [&](const auto& p) {
        slideTarget = slide(3, 1, p[0]);
        return slideTarget;
      });
  RewriteContext slideContext;
  CHECK(applyAt(s, ruleNamed("slide-tiling"), positionOf(s, slideTarget), {}, slideContext)
            .has_value());
  CHECK(slideContext.tuningVariables().size() == 1);
}
