// Property tests of the rules of rewrite/rules_convolution.cpp: pad-for-tiling-2d,
// partial-reduce-sum, reduce-reorder-stride, vectorize-dot, vectorize-sum and
// map-reduce-interchange-rows.
//
// For each rule, rapidcheck builds random well-typed programs where the rule applies (targeted
// generators: random concrete lengths chosen so that the rule's divisibility conditions hold,
// random functions g of the reduced element, zipped inputs, initial values that are literals,
// inputs or a component of the mapped row as the convolution's bias), applies the rule through
// the engine (applyAt, which re-type-checks the result) with random valid factor values, runs the
// original and the rewritten program in the interpreter on the same random inputs and compares:
// exactly for int data and for rewrites that keep the order of float operations; within 1e-4
// absolute + 1e-4 relative for float sums that the rule reassociates (real-valued inputs, so a
// wrong reassociation cannot hide behind exactly representable values). Each property counts its
// applications, reports them with MESSAGE and requires at least 50.
// The rules are also applied to examples/conv.weft (pad-for-tiling-2d alone, then the whole
// chain of the convolution strategy) and compared on a small layer; unit tests check the cases
// where a rule must not match.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/parser.h"
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
using testing::checkSameResult;
using testing::constantOf;
using testing::randomTerm;
using testing::divisorOf;
using testing::rewriteAt;
using testing::ruleNamed;
using testing::tryRuleAt;

int pick(std::mt19937_64& rng, int lo, int hi) { return testing::uniformInt(rng, lo, hi); }

constexpr double kTolerance = testing::kRuleTolerance;

int countPrims(const Definition& definition, Op op) {
  int count = 0;
  forEachNode(definition.function.body(), [&](const Expr& node) {
    if (node.isPrim(op)) ++count;
  });
  return count;
}

// A random term of a pair p = (a, b) of scalars.
Expr randomPairTerm(std::mt19937_64& rng, ScalarKind kind, const Expr& p) {
  switch (pick(rng, 0, 3)) {
    case 0:
      return get(0, p) * get(1, p);
    case 1:
      return get(1, p) * get(0, p);
    case 2:
      return get(0, p) - get(1, p) * constantOf(kind, 3);
    default:
      return max(get(0, p), get(1, p));
  }
}

// The generator shared by the rules over sums: a reduce(z, (acc, x) -> acc + g(x), xs) whose
// input length is `length`, in one of three settings (the convolution's shape among them).
struct SumProgram {
  Definition definition;
  Expr target;  // the reduce
  std::string setting;
};

SumProgram randomSumProgram(std::mt19937_64& rng, ScalarKind kind, int length,
                            bool allowTripleZip = false) {
  const Type t = Type::scalar(kind);
  const bool accFirst = pick(rng, 0, 1) == 0;
  auto sumStep = [&](const std::function<Expr(Expr)>& term) {
    return lam2("acc", "x", [&](Expr acc, Expr x) {
      Expr g = term(x);
      return accFirst ? acc + g : g + acc;
    });
  };
  SumProgram program;
  switch (pick(rng, 0, 3)) {
    case 0: {  // a plain array, z a literal
      program.setting = "array, literal z";
      Expr z = constantOf(kind, pick(rng, -4, 4));
      Expr f = sumStep([&](Expr x) { return randomTerm(rng, kind, x); });
      program.definition = definition("p", {{"xs", arrayOf(t, length)}}, [&](const auto& p) {
        program.target = reduce(z, f, p[0]);
        return program.target;
      });
      break;
    }
    case 1: {  // zipped arrays (two or three), z an input
      const bool triple = allowTripleZip && pick(rng, 0, 1) == 1;
      program.setting = triple ? "zip of three, input z" : "zip, input z";
      Expr f = sumStep([&](Expr x) {
        Expr term = randomPairTerm(rng, kind, x);
        return triple ? term + get(2, x) : term;
      });
      std::vector<ParamSpec> params = {{"a", arrayOf(t, length)}, {"b", arrayOf(t, length)}};
      if (triple) params.push_back({"c", arrayOf(t, length)});
      params.push_back({"z", t});
      program.definition = definition("p", params, [&](const auto& p) {
        Expr xs = triple ? zip(p[0], p[1], p[2]) : zip(p[0], p[1]);
        program.target = reduce(p.back(), f, xs);
        return program.target;
      });
      break;
    }
    case 2: {  // the convolution's shape: per kernel, z = kernel._1, zip(window, kernel._0)
      program.setting = "per kernel, z = bias";
      const int kernels = pick(rng, 1, 3);
      program.definition =
          definition("p",
                     {{"window", arrayOf(t, length)},
                      {"weights", arrayOf(arrayOf(t, length), kernels)},
                      {"biases", arrayOf(t, kernels)}},
                     [&](const auto& p) {
                       return join(map(lam("kernel",
                                           [&](Expr kernel) {
                                             // g mentions the outer kernel too.
                                             const bool scaled = pick(rng, 0, 1) == 1;
                                             Expr f = sumStep([&](Expr x) {
                                               Expr product = get(0, x) * get(1, x);
                                               return scaled ? product * get(1, kernel) : product;
                                             });
                                             program.target = reduce(get(1, kernel), f,
                                                                     zip(p[0], get(0, kernel)));
                                             return program.target;
                                           }),
                                       zip(p[1], p[2])));
                     });
      break;
    }
    default: {  // a computed input (a row of a 2D array flattened), z computed from an input
      program.setting = "join of rows, computed z";
      const int rows = pick(rng, 1, 3);
      Expr f = sumStep([&](Expr x) { return randomTerm(rng, kind, x); });
      program.definition = definition(
          "p", {{"xss", arrayOf(arrayOf(t, length), rows)}, {"z", t}}, [&](const auto& p) {
            return join(map(lam("row",
                                [&](Expr row) {
                                  program.target = reduce(p[1] * constantOf(kind, 2), f, row);
                                  return program.target;
                                }),
                            p[0]));
          });
      break;
    }
  }
  return program;
}

// A random kind, with float programs compared approximately.
ScalarKind randomKind(std::mt19937_64& rng) {
  return pick(rng, 0, 1) == 0 ? ScalarKind::Int : ScalarKind::Float;
}

// Builds slide2D's expansion with slideStrict (the 2D builder uses slide).
Expr slideStrict2D(int size1, int size2, int step1, int step2, Expr x) {
  return map(lam("w", [](Expr w) { return transpose(w); }),
             slideStrict(size1, step1,
                         map(lam("r", [&](Expr r) { return slideStrict(size2, step2, r); }),
                             std::move(x))));
}

}  // namespace

// ---- pad-for-tiling-2d ----------------------------------------------------------------------

// Random 2D sliding windows (padded with each boundary or not, strict or not, consumed by a
// map2D or not), rewritten by `rule` with factors from `factors`: the same values.
void checkPadSlide2DRule(const std::string& rule,
                         const std::function<RuleArguments(std::mt19937_64&)>& factors) {
  int applications = 0;
  CHECK(rc::check(rule, [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = randomKind(rng);
    const bool channels = pick(rng, 0, 1) == 1;
    const Type pixel = channels ? arrayOf(Type::scalar(kind), pick(rng, 1, 3)) : Type::scalar(kind);
    const bool strict = pick(rng, 0, 3) == 0;
    const int padding = pick(rng, 0, 3);  // 0: no pad2D; 1 clamp; 2 constant; 3 mirror
    const int height = pick(rng, 1, 6);
    const int width = pick(rng, 1, 6);
    int pads[4] = {0, 0, 0, 0};  // l r t b
    if (padding != 0) {
      for (int i = 0; i < 4; ++i) pads[i] = pick(rng, 0, padding == 3 ? 1 : 2);
    }
    const int paddedHeight = height + pads[2] + pads[3];
    const int paddedWidth = width + pads[0] + pads[1];
    const int size1 = pick(rng, 1, paddedHeight);
    const int size2 = pick(rng, 1, paddedWidth);
    int step1 = pick(rng, 1, 3);
    int step2 = pick(rng, 1, 3);
    if (strict) {
      // slideStrict needs step | (n - size): use a divisor-friendly step.
      step1 = (paddedHeight - size1) == 0 ? step1 : 1;
      step2 = (paddedWidth - size2) == 0 ? step2 : 1;
    }
    const RuleArguments arguments = factors(rng);
    const bool consumed = pick(rng, 0, 1) == 1;
    Expr target;
    Definition original =
        definition("p", {{"x", arrayOf(arrayOf(pixel, width), height)}}, [&](const auto& p) {
          Expr input = p[0];
          if (padding == 1)
            input = pad2D(pads[0], pads[1], pads[2], pads[3], Boundary::Clamp, input);
          if (padding == 2) {
            input = pad2D(pads[0], pads[1], pads[2], pads[3], padBoundary(Boundary::Constant, 2.0),
                          input);
          }
          if (padding == 3)
            input = pad2D(pads[0], pads[1], pads[2], pads[3], Boundary::Mirror, input);
          target = strict ? slideStrict2D(size1, size2, step1, step2, input)
                          : slide2D(size1, size2, step1, step2, input);
          if (!consumed) return target;
          // Reduce each window to one value (the sum of its flattened scalars).
          return map2D(lam("window",
                           [&](Expr window) {
                             Expr pixels = join(window);
                             if (channels) pixels = join(pixels);
                             return reduce(constantOf(kind, 0),
                                           lam2("a", "y", [](Expr a, Expr y) { return a + y; }),
                                           pixels);
                           }),
                       target);
        });
    Definition rewritten = rewriteAt(original, rule, target, arguments);
    // A clamp or constant pad2D is widened (still two pads); otherwise one pad2D is added.
    const int expectedPads = padding == 0 ? 2 : (padding == 3 ? 4 : 2);
    RC_ASSERT(countPrims(rewritten, Op::Pad) == expectedPads);
    RC_ASSERT(countPrims(rewritten, Op::Crop) == 2);
    RC_TAG(padding == 0   ? "no pad2D"
           : padding == 1 ? "clamp"
           : padding == 2 ? "constant"
                          : "mirror");
    checkSameResult(original, rewritten, rng, false);
    ++applications;
  }));
  MESSAGE(rule << ": " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("pad-for-tiling-2d preserves 2D sliding windows, padded or not") {
  checkPadSlide2DRule("pad-for-tiling-2d", [](std::mt19937_64& rng) {
    return RuleArguments{{"rho", Arith(pick(rng, 0, 3))}};
  });
}

TEST_CASE("pad-for-blocking-2d preserves 2D sliding windows, padded or not") {
  checkPadSlide2DRule("pad-for-blocking-2d", [](std::mt19937_64& rng) {
    return RuleArguments{{"rows_multiple", Arith(pick(rng, 1, 5))},
                         {"columns_multiple", Arith(pick(rng, 1, 5))}};
  });
}

TEST_CASE("pad-for-blocking-2d makes the window counts multiples, fewest extra windows") {
  // conv.weft's windows with symbolic sizes: after the rule, the slide2D inside the crop has
  // ⌈n/q⌉·q windows per dimension, for every size tried.
  Expr target;
  Definition d = definition(
      "p", {{"x", Type::array(Type::array(Type::floatType(), Arith::size("W")), Arith::size("H"))}},
      [&](const auto& p) {
        target = slide2D(3, 3, 2, 2, pad2D(1, 1, 1, 1, Boundary::Constant, p[0]));
        return target;
      });
  const RuleArguments multiples = {{"rows_multiple", Arith(3)}, {"columns_multiple", Arith(5)}};
  RewriteContext context;
  auto result = applyAt(d, ruleNamed("pad-for-blocking-2d"), positionOf(d, target), multiples,
                        context);
  REQUIRE(result.has_value());
  CHECK(context.tuningVariables().empty());
  const Expr& cropped = result->function.body();
  REQUIRE(cropped.isPrim(Op::Crop));
  const Type windows = typecheck(*result).typeOf(cropped.args()[0].args()[0]);
  for (int h : {4, 7, 12, 13}) {
    for (int w : {3, 9, 10, 21}) {
      const ArithBinding sizes{{"H", h}, {"W", w}};
      const int64_t rows = (h + 2 - 3) / 2 + 1, columns = (w + 2 - 3) / 2 + 1;
      CHECK(evaluate(windows.arrayLength(), sizes) == (rows + 2) / 3 * 3);
      CHECK(evaluate(windows.arrayElement().arrayLength(), sizes) == (columns + 4) / 5 * 5);
    }
  }
  // Without both multiples given the rule does not apply.
  RewriteContext other;
  CHECK_FALSE(applyAt(d, ruleNamed("pad-for-blocking-2d"), positionOf(d, target),
                      {{"rows_multiple", Arith(3)}}, other)
                  .has_value());
}

TEST_CASE("pad-for-tiling-2d matches only slide2D's expansion") {
  Type image = arrayOf(arrayOf(Type::intType(), 5), 5);
  auto matches = [&](const std::function<Expr(Expr)>& build) {
    Expr target;
    Definition d = definition("p", {{"x", image}}, [&](const auto& p) {
      target = build(p[0]);
      return target;
    });
    return tryRuleAt(d, "pad-for-tiling-2d", target, {{"rho", Arith(1)}}).has_value();
  };
  CHECK(matches([](Expr x) { return slide2D(3, 1, x); }));
  // A 1D slide of rows.
  CHECK_FALSE(matches([](Expr x) { return slide(3, 1, x); }));
  // map(transpose) over something that is not a slide.
  CHECK_FALSE(matches([](Expr x) {
    return map(lam("w", [](Expr w) { return transpose(w); }),
               map(lam("r", [](Expr r) { return split(1, r); }), x));
  }));
  // slide over rows that are not slid.
  CHECK_FALSE(matches([](Expr x) {
    return map(lam("w", [](Expr w) { return transpose(w); }),
               slide(2, 1, map(lam("r", [](Expr r) { return split(5, r); }), x)));
  }));
  // slide outside, slideStrict inside: not one slide2D.
  CHECK_FALSE(matches([](Expr x) {
    return map(lam("w", [](Expr w) { return transpose(w); }),
               slide(2, 1, map(lam("r", [](Expr r) { return slideStrict(2, 1, r); }), x)));
  }));
}

TEST_CASE("pad-for-tiling-2d with a symbolic rho gives a well-typed parametric program") {
  Expr target;
  Definition d = definition(
      "p", {{"x", Type::array(Type::array(Type::floatType(), Arith::size("W")), Arith::size("H"))}},
      [&](const auto& p) {
        target = slide2D(3, 3, 1, 1, pad2D(1, 1, 1, 1, Boundary::Constant, p[0]));
        return target;
      });
  RewriteContext context;
  auto result = applyAt(d, ruleNamed("pad-for-tiling-2d"), positionOf(d, target), {}, context);
  REQUIRE(result.has_value());
  REQUIRE(context.tuningVariables().size() == 1);
  const std::string rho = context.tuningVariables()[0].varName();
  CHECK(rho.rfind("rho", 0) == 0);
  // Same values as the original for a few sizes and values of rho.
  std::mt19937_64 rng(5);
  for (int h : {1, 3, 4}) {
    for (int w : {2, 5}) {
      for (int r : {0, 1, 3}) {
        ArithBinding sizes = {{"H", h}, {"W", w}};
        Value x = testing::randomValue(d.function.params()[0].paramType(), sizes, rng);
        ArithBinding rewrittenSizes = sizes;
        rewrittenSizes[rho] = r;
        CHECK(interpret(d, {x}, sizes) == interpret(*result, {x}, rewrittenSizes));
      }
    }
  }
}

// ---- partial-reduce-sum ---------------------------------------------------------------------

TEST_CASE("partial-reduce-sum preserves sums of g(x) with any initial value") {
  int applications = 0;
  CHECK(rc::check("partial-reduce-sum", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = randomKind(rng);
    const int omega = pick(rng, 1, 6);
    const int chunks = pick(rng, 1, 6);
    SumProgram program = randomSumProgram(rng, kind, omega * chunks, true);
    Definition rewritten =
        rewriteAt(program.definition, "partial-reduce-sum", program.target, {{"omega", omega}});
    RC_ASSERT(countPrims(rewritten, Op::Split) == 1);
    RC_ASSERT(countPrims(rewritten, Op::Reduce) == countPrims(program.definition, Op::Reduce) + 1);
    RC_TAG(program.setting);
    checkSameResult(program.definition, rewritten, rng, kind == ScalarKind::Float);
    ++applications;
  }));
  MESSAGE("partial-reduce-sum: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("partial-reduce-sum and reduce-reorder-stride match only sums acc + g(x)") {
  Type xsType = arrayOf(Type::intType(), 8);
  auto matches = [&](const std::string& rule, Expr init, Expr f, Type type) {
    Expr target;
    Definition d = definition("p", {{"xs", type}}, [&](const auto& p) {
      target = reduce(init, f, p[0]);
      return target;
    });
    return tryRuleAt(d, rule, target, {{"omega", Arith(2)}, {"s", Arith(2)}}).has_value();
  };
  for (const std::string rule : {"partial-reduce-sum", "reduce-reorder-stride"}) {
    CAPTURE(rule);
    CHECK(matches(rule, lit(7), lam2("a", "x", [](Expr a, Expr x) { return a + x * x; }), xsType));
    CHECK(matches(rule, lit(7), lam2("a", "x", [](Expr a, Expr x) { return x * x + a; }), xsType));
    // a product, a difference, g reading the accumulator, the accumulator left out
    CHECK_FALSE(
        matches(rule, lit(1), lam2("a", "x", [](Expr a, Expr x) { return a * x; }), xsType));
    CHECK_FALSE(
        matches(rule, lit(0), lam2("a", "x", [](Expr a, Expr x) { return x - a; }), xsType));
    CHECK_FALSE(
        matches(rule, lit(0), lam2("a", "x", [](Expr a, Expr x) { return a + a * x; }), xsType));
    CHECK_FALSE(matches(rule, lit(0), lam2("a", "x", [](Expr, Expr x) { return x + x; }), xsType));
    // a user function as the operator (its body is not inspected)
    Type t = Type::intType();
    CHECK_FALSE(matches(rule, lit(0),
                        userFun("plus", {{"a", t}, {"b", t}}, t,
                                [](const std::vector<Expr>& p) { return p[0] + p[1]; }),
                        xsType));
    // a vector accumulator is not a scalar sum
    Expr target;
    Definition vectors = definition(
        "p",
        {{"xs", arrayOf(Type::vector(ScalarKind::Float, 4), 8)},
         {"z", Type::vector(ScalarKind::Float, 4)}},
        [&](const auto& p) {
          target = reduce(p[1], lam2("a", "x", [](Expr a, Expr x) { return a + x; }), p[0]);
          return target;
        });
    CHECK_FALSE(tryRuleAt(vectors, rule, target, {{"omega", Arith(2)}, {"s", Arith(2)}}));
  }
}

TEST_CASE("partial-reduce-sum without omega creates a tuning variable") {
  Expr target;
  Definition d = definition(
      "p", {{"xs", Type::array(Type::floatType(), Arith::size("N"))}, {"z", Type::floatType()}},
      [&](const auto& p) {
        target = reduce(p[1], lam2("a", "x", [](Expr a, Expr x) { return a + x * x; }), p[0]);
        return target;
      });
  RewriteContext context;
  auto result = applyAt(d, ruleNamed("partial-reduce-sum"), positionOf(d, target), {}, context);
  REQUIRE(result.has_value());
  REQUIRE(context.tuningVariables().size() == 1);
  CHECK(printDefinition(*result).find("split(omega") != std::string::npos);
  CHECK(typecheck(*result).type == typecheck(d).type);
}

// ---- reduce-reorder-stride ------------------------------------------------------------------

TEST_CASE("reduce-reorder-stride preserves sums, zipped inputs included") {
  int applications = 0;
  int zipped = 0;
  CHECK(rc::check("reduce-reorder-stride", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = randomKind(rng);
    const int s = pick(rng, 1, 6);
    const int length = s * pick(rng, 1, 6);
    SumProgram program = randomSumProgram(rng, kind, length, true);
    Definition rewritten =
        rewriteAt(program.definition, "reduce-reorder-stride", program.target, {{"s", s}});
    const Expr& reducedInput = program.target.args()[1];
    if (reducedInput.isPrim(Op::Zip)) {
      // The reorder is pushed into the zip: one per zipped array.
      RC_ASSERT(countPrims(rewritten, Op::Reorder) == static_cast<int>(reducedInput.args().size()));
      ++zipped;
    } else {
      RC_ASSERT(countPrims(rewritten, Op::Reorder) == 1);
    }
    RC_TAG(program.setting);
    checkSameResult(program.definition, rewritten, rng, kind == ScalarKind::Float);
    ++applications;
  }));
  MESSAGE("reduce-reorder-stride: " << applications << " applications (" << zipped
                                    << " on zipped inputs)");
  CHECK(applications >= 50);
  CHECK(zipped >= 10);
}

TEST_CASE("reduce-reorder-stride really permutes: a non-commutative g order would show") {
  // The rewritten reduce reads reorder(stride(2), xs), and that is a real permutation (so the
  // property above tests commutativity, not an identity).
  Expr target;
  Definition d = definition("p", {{"xs", arrayOf(Type::intType(), 6)}}, [&](const auto& p) {
    target = reduce(lit(0), lam2("a", "x", [](Expr a, Expr x) { return a + x; }), p[0]);
    return target;
  });
  auto result = tryRuleAt(d, "reduce-reorder-stride", target, {{"s", Arith(2)}});
  REQUIRE(result.has_value());
  const Expr& reduced = result->function.body();
  REQUIRE(reduced.isPrim(Op::Reduce));
  REQUIRE(reduced.args()[1].isPrim(Op::Reorder));
  Expr xs = param("xs", arrayOf(Type::intType(), 6));
  std::vector<Value> elements;
  for (int i = 0; i < 6; ++i) elements.push_back(Value::ofInt(i));
  Value order = interpretExpr(reorderStride(2, xs), {}, {{xs, Value::array(elements)}});
  CHECK_FALSE(order == Value::array(elements));
  // s must divide the length: s = 4 on 6 elements is a type error the engine reports.
  CHECK_THROWS_AS(tryRuleAt(d, "reduce-reorder-stride", target, {{"s", Arith(4)}}), RewriteError);
}

// ---- vectorize-dot ------------------------------------------------------------------------

TEST_CASE("vectorize-dot preserves dot-product reductions") {
  int applications = 0;
  CHECK(rc::check("vectorize-dot", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int widths[] = {2, 3, 4, 8, 16};
    const int v = widths[pick(rng, 0, 4)];
    const int length = v * pick(rng, 1, 4);
    const bool accFirst = pick(rng, 0, 1) == 0;
    const bool swapped = pick(rng, 0, 1) == 1;
    const int setting = pick(rng, 0, 2);
    const bool userFunction = pick(rng, 0, 1) == 1;  // the product as mult(x, y) = x * y
    const Type f32 = Type::floatType();
    Expr mult = userFun("mult", {{"x", f32}, {"y", f32}}, f32,
                        [](const std::vector<Expr>& q) { return q[0] * q[1]; });
    Expr step = lam2("acc", "p", [&](Expr acc, Expr p) {
      Expr first = swapped ? get(1, p) : get(0, p);
      Expr second = swapped ? get(0, p) : get(1, p);
      Expr product = userFunction ? apply(mult, {first, second}) : first * second;
      return accFirst ? acc + product : product + acc;
    });
    Expr target;
    Definition original;
    if (setting == 0) {  // inputs directly, z an input
      original =
          definition("p", {{"a", arrayOf(f32, length)}, {"b", arrayOf(f32, length)}, {"z", f32}},
                     [&](const auto& p) {
                       target = reduce(p[2], step, zip(p[0], p[1]));
                       return target;
                     });
    } else if (setting == 1) {  // computed inputs: a flattened 2D array and a mapped array
      const int rows = length % 2 == 0 ? 2 : 1;
      original = definition(
          "p", {{"a", arrayOf(arrayOf(f32, length / rows), rows)}, {"b", arrayOf(f32, length)}},
          [&](const auto& p) {
            target =
                reduce(lit(0.25f), step,
                       zip(join(p[0]), map(lam("y", [](Expr y) { return y * lit(2.0f); }), p[1])));
            return target;
          });
    } else {  // per kernel with its bias, the convolution's shape
      const int kernels = pick(rng, 1, 3);
      original = definition("p",
                            {{"window", arrayOf(f32, length)},
                             {"weights", arrayOf(arrayOf(f32, length), kernels)},
                             {"biases", arrayOf(f32, kernels)}},
                            [&](const auto& p) {
                              return join(map(lam("kernel",
                                                  [&](Expr kernel) {
                                                    target = reduce(get(1, kernel), step,
                                                                    zip(p[0], get(0, kernel)));
                                                    return target;
                                                  }),
                                              zip(p[1], p[2])));
                            });
    }
    Definition rewritten = rewriteAt(original, "vectorize-dot", target, {{"v", v}});
    RC_ASSERT(countPrims(rewritten, Op::Dot) == 1);
    RC_ASSERT(countPrims(rewritten, Op::AsVector) == 2);
    RC_TAG("v = " + std::to_string(v) + (userFunction ? ", a user function" : ""));
    checkSameResult(original, rewritten, rng, true);
    ++applications;
  }));
  MESSAGE("vectorize-dot: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("vectorize-dot needs a given width, float pairs and a product of the pair") {
  const Type f32 = Type::floatType();
  auto matches = [&](Type element, const std::function<Expr(Expr)>& product,
                     const RuleArguments& arguments, bool zipped = true) {
    Expr target;
    Definition d = definition(
        "p", {{"a", arrayOf(element, 8)}, {"b", arrayOf(element, 8)}}, [&](const auto& p) {
          Expr zero = element == f32 ? lit(0.0f) : lit(0);
          Expr xs = zipped ? zip(p[0], p[1]) : zip(p[0], p[1], p[0]);
          target = reduce(zero,
                          lam2("acc", "q", [&](Expr acc, Expr q) { return acc + product(q); }), xs);
          return target;
        });
    return tryRuleAt(d, "vectorize-dot", target, arguments).has_value();
  };
  auto mul01 = [](Expr q) { return get(0, q) * get(1, q); };
  CHECK(matches(f32, mul01, {{"v", Arith(4)}}));
  CHECK_FALSE(matches(f32, mul01, {}));                             // no width
  CHECK_FALSE(matches(f32, mul01, {{"v", Arith(5)}}));              // not a vector width
  CHECK_FALSE(matches(f32, mul01, {{"v", Arith::size("V")}}));      // symbolic
  CHECK_FALSE(matches(Type::intType(), mul01, {{"v", Arith(4)}}));  // ints have no dot
  CHECK_FALSE(matches(f32, mul01, {{"v", Arith(4)}}, false));       // a zip of three
  CHECK_FALSE(matches(f32, [](Expr q) { return get(0, q) + get(1, q); }, {{"v", Arith(4)}}));
  CHECK_FALSE(matches(f32, [](Expr q) { return get(0, q) * get(0, q); }, {{"v", Arith(4)}}));
  // A user function counts when its body is the product of its two params.
  auto call = [&](const std::function<Expr(const std::vector<Expr>&)>& body) {
    Expr f = userFun("f", {{"x", f32}, {"y", f32}}, f32, body);
    return [f](Expr q) { return apply(f, {get(0, q), get(1, q)}); };
  };
  CHECK(matches(f32, call([](const std::vector<Expr>& x) { return x[1] * x[0]; }),
                {{"v", Arith(4)}}));
  CHECK_FALSE(matches(f32, call([](const std::vector<Expr>& x) { return x[0] + x[1]; }),
                      {{"v", Arith(4)}}));
  CHECK_FALSE(matches(f32, call([](const std::vector<Expr>& x) { return x[0] * x[0]; }),
                      {{"v", Arith(4)}}));
}

// ---- vectorize-sum ------------------------------------------------------------------------

TEST_CASE("vectorize-sum preserves sums") {
  int applications = 0;
  CHECK(rc::check("vectorize-sum", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const int widths[] = {2, 3, 4, 8, 16};
    const int v = widths[pick(rng, 0, 4)];
    const int length = v * pick(rng, 1, 4);
    const bool accFirst = pick(rng, 0, 1) == 0;
    const bool computed = pick(rng, 0, 1) == 1;  // the input a map's result, z an input
    const Type f32 = Type::floatType();
    Expr step = lam2("acc", "x", [&](Expr acc, Expr x) { return accFirst ? acc + x : x + acc; });
    Expr target;
    Definition original =
        definition("p", {{"a", arrayOf(f32, length)}, {"z", f32}}, [&](const auto& p) {
          Expr xs = computed ? map(lam("y", [](Expr y) { return y * lit(2.0f); }), p[0]) : p[0];
          target = reduce(computed ? p[1] : lit(0.5f), step, xs);
          return target;
        });
    Definition rewritten = rewriteAt(original, "vectorize-sum", target, {{"v", v}});
    RC_ASSERT(countPrims(rewritten, Op::AsVector) == 2);
    RC_TAG("v = " + std::to_string(v));
    checkSameResult(original, rewritten, rng, true);
    ++applications;
  }));
  MESSAGE("vectorize-sum: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("vectorize-sum needs a given width, floats, the elements themselves and v | n") {
  const Type f32 = Type::floatType();
  auto matches = [&](Type element, int length, bool plain, const RuleArguments& arguments) {
    Expr target;
    Definition d = definition("p", {{"a", arrayOf(element, length)}}, [&](const auto& p) {
      Expr zero = element == f32 ? lit(0.0f) : lit(0);
      target = reduce(zero, lam2("acc", "x", [&](Expr acc, Expr x) {
                        return acc + (plain ? x : x * x);
                      }),
                      p[0]);
      return target;
    });
    return tryRuleAt(d, "vectorize-sum", target, arguments).has_value();
  };
  CHECK(matches(f32, 8, true, {{"v", Arith(4)}}));
  CHECK_FALSE(matches(f32, 8, true, {}));                              // no width
  CHECK_FALSE(matches(f32, 6, true, {{"v", Arith(4)}}));               // 4 does not divide 6
  CHECK_FALSE(matches(Type::intType(), 8, true, {{"v", Arith(4)}}));   // floats only
  CHECK_FALSE(matches(f32, 8, false, {{"v", Arith(4)}}));              // a sum of squares
}

TEST_CASE("vectorize-sum does not apply where the length stays below v for every parameter") {
  // A partial sum's results: 7 / omega of them, omega a tuning parameter in [1, 7]. No value
  // of omega leaves 16 of them, so asVector(16, ...) could never hold; 2 may divide them.
  const Type f32 = Type::floatType();
  const Arith omega = Arith::var("omega", VarKind::Tuning, Arith(1), Arith(7));
  const Arith n = Arith::var("N", VarKind::Size, Arith(1), Arith(1 << 20));
  auto applies = [&](const Arith& length, int64_t v) {
    Expr target;
    Definition d = definition("p", {{"a", Type::array(f32, length)}}, [&](const auto& p) {
      target = reduce(lit(0.0f), lam2("acc", "x", [](Expr acc, Expr x) { return acc + x; }), p[0]);
      return target;
    });
    return tryRuleAt(d, "vectorize-sum", target, {{"v", Arith(v)}}).has_value();
  };
  CHECK_FALSE(applies(Arith(7) / omega, 16));
  CHECK_FALSE(applies(Arith(7) / omega, 8));
  CHECK(applies(Arith(7) / omega, 2));
  CHECK(applies(n, 16));  // a size: large enough for some values
}

// ---- map-reduce-interchange-rows ----------------------------------------------------------

TEST_CASE("map-reduce-interchange-rows preserves per-row reductions with row-dependent z and xs") {
  int applications = 0;
  CHECK(rc::check("map-reduce-interchange-rows", [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = randomKind(rng);
    const Type t = Type::scalar(kind);
    const int rows = pick(rng, 1, 5);
    const int length = pick(rng, 1, 5);
    // The reduction's function: any binary function (interchange keeps each row's order).
    const bool pairInput = pick(rng, 0, 1) == 1;
    Expr f;
    if (pairInput) {
      f = lam2("acc", "q", [&](Expr acc, Expr q) {
        return pick(rng, 0, 1) == 0 ? acc + get(0, q) * get(1, q)
                                    : acc * constantOf(kind, 2) - max(get(0, q), get(1, q));
      });
    } else {
      switch (pick(rng, 0, 3)) {
        case 0:
          f = lam2("acc", "x", [](Expr acc, Expr x) { return acc + x; });
          break;
        case 1:
          f = lam2("acc", "x", [&](Expr acc, Expr x) { return acc * constantOf(kind, 2) - x; });
          break;
        case 2:
          f = lam2("acc", "x", [&](Expr acc, Expr x) { return max(acc, x) + constantOf(kind, 1); });
          break;
        default:
          f = userFun("step", {{"acc", t}, {"x", t}}, t,
                      [](const std::vector<Expr>& p) { return p[0] - p[1] * p[1]; });
      }
    }
    const int initChoice = pick(rng, 0, 2);
    const int inputChoice = pick(rng, 0, 1);
    Expr target;
    Definition original = definition(
        "p",
        {{"weights", arrayOf(arrayOf(t, length), rows)},
         {"biases", arrayOf(t, rows)},
         {"window", arrayOf(t, length)}},
        [&](const auto& p) {
          target = map(lam("kernel",
                           [&](Expr kernel) {
                             Expr init = initChoice == 0   ? get(1, kernel)
                                         : initChoice == 1 ? get(1, kernel) * constantOf(kind, 3)
                                                           : constantOf(kind, 1);
                             Expr weights = get(0, kernel);
                             if (inputChoice == 1) {
                               Expr bias = get(1, kernel);
                               weights = map(lam("w", [&](Expr w) { return w + bias; }), weights);
                             }
                             Expr xs = pairInput ? zip(p[2], weights) : weights;
                             return reduce(init, f, xs);
                           }),
                       zip(p[0], p[1]));
          // Each kernel's [T]1 joined, as in examples/conv.weft.
          return join(target);
        });
    Definition rewritten = rewriteAt(original, "map-reduce-interchange-rows", target, {});
    RC_ASSERT(typecheck(rewritten).type == typecheck(original).type);
    RC_TAG(pairInput ? "zipped input" : "row input");
    checkSameResult(original, rewritten, rng, false);
    ++applications;
  }));
  MESSAGE("map-reduce-interchange-rows: " << applications << " applications");
  CHECK(applications >= 50);
}

TEST_CASE("map-reduce-interchange-rows does not match when f reads the row or there is no reduce") {
  Type rowsType = arrayOf(arrayOf(Type::intType(), 3), 4);
  auto matches = [&](const std::function<Expr(Expr)>& perRow) {
    Expr target;
    Definition d = definition("p", {{"xss", rowsType}}, [&](const auto& p) {
      target = map(lam("r", perRow), p[0]);
      return target;
    });
    return tryRuleAt(d, "map-reduce-interchange-rows", target, {}).has_value();
  };
  CHECK(matches([](Expr r) {
    return reduce(get(0, tuple(lit(1), lit(2))),
                  lam2("a", "x", [](Expr a, Expr x) { return a + x; }), r);
  }));
  // no reduce in the row function
  CHECK_FALSE(matches([](Expr r) { return map(lam("x", [](Expr x) { return x + lit(1); }), r); }));
  // a reduce that is not the whole body
  CHECK_FALSE(matches([](Expr r) {
    return map(lam("y", [](Expr y) { return y + lit(1); }),
               reduce(lit(0), lam2("a", "x", [](Expr a, Expr x) { return a + x; }), r));
  }));
  // f reads the row (rows are (scale, values) pairs): not independent.
  Expr target;
  Definition d = definition(
      "p", {{"scales", arrayOf(Type::intType(), 4)}, {"xss", rowsType}}, [&](const auto& p) {
        target =
            map(lam("r",
                    [](Expr r) {
                      return reduce(
                          lit(0), lam2("a", "x", [&](Expr a, Expr x) { return a + x * get(0, r); }),
                          get(1, r));
                    }),
                zip(p[0], p[1]));
        return target;
      });
  CHECK_FALSE(tryRuleAt(d, "map-reduce-interchange-rows", target, {}).has_value());
}

// ---- examples/conv.weft -------------------------------------------------------------------

namespace {

struct ConvLayer {
  std::vector<Value> inputs;
  ArithBinding sizes;
};

// Random inputs for conv.weft: C channels, M kernels of K×K, an H×W image; P and S given.
ConvLayer randomConvLayer(const Definition& conv, int channels, int kernels, int kernelSize,
                          int height, int width, int padding, int stride, std::mt19937_64& rng,
                          bool realFloats) {
  ArithBinding shapeSizes = {
      {"C", channels}, {"M", kernels}, {"K", kernelSize}, {"H", height}, {"W", width}};
  ConvLayer layer;
  for (const Expr& param : conv.function.params()) {
    layer.inputs.push_back(testing::randomValue(param.paramType(), shapeSizes, rng, {realFloats}));
  }
  layer.sizes = bindSizes(conv, layer.inputs, {{"P", padding}, {"S", stride}});
  return layer;
}

// Every position where `rule` applies with `arguments` (findMatches gives no arguments, and
// vectorize-dot needs its width).
std::vector<Position> matchesWith(const Definition& definition, const std::string& rule,
                                  const RuleArguments& arguments) {
  std::vector<Position> found;
  for (const Position& position : allPositions(definition.function.body())) {
    RewriteContext context;
    if (applyAt(definition, ruleNamed(rule), position, arguments, context)) {
      found.push_back(position);
    }
  }
  return found;
}

// The single position where `rule` applies in the definition (REQUIREs exactly one).
Position onlyMatch(const Definition& definition, const std::string& rule,
                   const RuleArguments& arguments = {}) {
  std::vector<Position> found = matchesWith(definition, rule, arguments);
  REQUIRE_MESSAGE(found.size() == 1, rule << " matches " << found.size() << " times in\n"
                                          << printDefinition(definition));
  return found[0];
}

}  // namespace

TEST_CASE("pad-for-tiling-2d on examples/conv.weft computes the same layer") {
  const Definition conv = parseFile("examples/conv.weft").definitions.back();
  const Position position = onlyMatch(conv, "pad-for-tiling-2d");
  std::mt19937_64 rng(11);
  for (int rho : {0, 1, 3}) {
    for (auto [padding, stride] : {std::pair{1, 1}, std::pair{0, 2}, std::pair{2, 1}}) {
      CAPTURE(rho);
      CAPTURE(padding);
      CAPTURE(stride);
      RewriteContext context;
      auto rewritten =
          applyAt(conv, ruleNamed("pad-for-tiling-2d"), position, {{"rho", Arith(rho)}}, context);
      REQUIRE(rewritten.has_value());
      // The layer's zero padding is widened, not wrapped: still two pads.
      CHECK(countPrims(*rewritten, Op::Pad) == 2);
      ConvLayer layer = randomConvLayer(conv, 2, 3, 3, 5, 6, padding, stride, rng, false);
      const Value expected = interpret(conv, layer.inputs, layer.sizes);
      const Value actual = interpret(*rewritten, layer.inputs, layer.sizes);
      CHECK_MESSAGE(actual == expected, "max difference " << maxAbsDifference(actual, expected));
    }
  }
  // With rho left symbolic the program stays well typed and parametric.
  RewriteContext context;
  auto parametric = applyAt(conv, ruleNamed("pad-for-tiling-2d"), position, {}, context);
  REQUIRE(parametric.has_value());
  REQUIRE(context.tuningVariables().size() == 1);
  ConvLayer layer = randomConvLayer(conv, 1, 2, 3, 4, 4, 1, 1, rng, false);
  ArithBinding sizes = layer.sizes;
  sizes[context.tuningVariables()[0].varName()] = 2;
  CHECK(interpret(*parametric, layer.inputs, sizes) == interpret(conv, layer.inputs, layer.sizes));
}

TEST_CASE("the convolution strategy's rules chained on examples/conv.weft compute the same layer") {
  // pad-for-tiling-2d, then per kernel: map-reduce-interchange-rows (one accumulator per
  // kernel), and on the window reduction reduce-reorder-stride, partial-reduce-sum and
  // vectorize-dot. Layer: C = 4, K = 3 (windows of 36 values), M = 3, 5×6 image, P = 1, S = 1.
  const Definition conv = parseFile("examples/conv.weft").definitions.back();
  std::mt19937_64 rng(23);
  auto applyOnly = [](const Definition& d, const std::string& rule,
                      const RuleArguments& arguments) {
    RewriteContext context;
    auto result = applyAt(d, ruleNamed(rule), onlyMatch(d, rule, arguments), arguments, context);
    REQUIRE(result.has_value());
    return *result;
  };
  Definition padded = applyOnly(conv, "pad-for-tiling-2d", {{"rho", Arith(2)}});
  // vectorize-dot first (the reduce still reads zip(a, b) directly), then the stride reorder
  // (pushed into the zip of vectors), then the partial reduction of the vector sums.
  Definition vectorized = applyOnly(padded, "vectorize-dot", {{"v", Arith(4)}});
  Definition reordered = applyOnly(vectorized, "reduce-reorder-stride", {{"s", Arith(3)}});
  // partial-reduce-sum matches the window reduction only (its operator is acc + dot(...)).
  Definition chunked = applyOnly(reordered, "partial-reduce-sum", {{"omega", Arith(3)}});
  // Now the map over kernels has a reduce body whose initial value is the kernel's bias.
  // It also matches the map over chunks (each chunk reduced from 0): both are checked.
  std::vector<Position> interchanges = matchesWith(chunked, "map-reduce-interchange-rows", {});
  REQUIRE(interchanges.size() == 2);
  std::vector<Definition> stages = {padded, vectorized, reordered, chunked};
  for (const Position& position : interchanges) {
    RewriteContext context;
    auto result = applyAt(chunked, ruleNamed("map-reduce-interchange-rows"), position, {}, context);
    REQUIRE(result.has_value());
    stages.push_back(*result);
  }
  for (bool realFloats : {false, true}) {
    ConvLayer layer = randomConvLayer(conv, 4, 3, 3, 5, 6, 1, 1, rng, realFloats);
    const Value expected = interpret(conv, layer.inputs, layer.sizes);
    for (size_t stage = 0; stage < stages.size(); ++stage) {
      CAPTURE(stage);
      CAPTURE(realFloats);
      const Value actual = interpret(stages[stage], layer.inputs, layer.sizes);
      CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                    "max difference " << maxAbsDifference(actual, expected) << "\n"
                                      << printDefinition(stages[stage]));
    }
  }
}
