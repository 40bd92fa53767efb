// Property tests of the interchange rules (rewrite/rules_interchange.cpp) against the
// interpreter: map-join-interchange, join-map-interchange, map-flatten, map-flatten-nested,
// map-transpose-interchange, map-map-interchange, map-crop-interchange, map-split-interchange,
// split-map-interchange, map-slide-interchange and map-pad-interchange.
//
// For each rule a targeted generator builds a random well-typed left side over int data with
// random concrete lengths chosen so that the rule's size conditions hold (split divides, slide
// windows fit, mirror padding stays within one reflection). Element functions are random: small
// scalar lambdas, user functions, and lambdas whose bodies come from the random program
// generator (tests/support/random_program.h), so they may contain nested maps, reductions,
// zips and layout primitives over array elements. The left side sits at the root, or inside an
// enclosing map whose param the element functions capture (so the rules must keep free params
// of the functions they move). The rule is applied through the engine (applyAt, which
// re-type-checks the result), both programs run in the interpreter on the same random inputs,
// and the results must be equal exactly. Each property counts its applications (at least 50,
// printed with MESSAGE). A further property applies every interchange rule wherever it matches
// in programs of the random generator (with symbolic sizes), and unit tests check the cases
// where a rule must not match.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using weft::testing::RandomProgramGenerator;
using weft::testing::RandomProgramOptions;
using weft::testing::uniformInt;

namespace {

const Rule& ruleNamed(const std::string& name) {
  const Rule* rule = findRule(name);
  if (rule == nullptr) throw std::runtime_error("no rule " + name + " in the library");
  return *rule;
}

bool chance(std::mt19937_64& rng, int oneIn) { return uniformInt(rng, 1, oneIn) == 1; }

Type arrayOf(Type element, int64_t length) {
  return Type::array(std::move(element), Arith(length));
}

// The position of `target` (by node identity) in the definition's body.
Position positionOf(const Definition& definition, const Expr& target) {
  const Expr& body = definition.function.body();
  for (const Position& position : allPositions(body)) {
    if (nodeAt(body, position).node() == target.node()) return position;
  }
  throw std::runtime_error("target not found in the body");
}

// A random element type: int, or a small array of ints (1 or 2 dimensions).
Type randomElementType(std::mt19937_64& rng) {
  switch (uniformInt(rng, 0, 9)) {
    case 0:
    case 1:
    case 2:
      return arrayOf(Type::intType(), uniformInt(rng, 1, 4));
    case 3:
      return arrayOf(arrayOf(Type::intType(), uniformInt(rng, 1, 3)), uniformInt(rng, 1, 3));
    default:
      return Type::intType();
  }
}

// A random function of one argument of type `in`: for ints a small lambda or a user function
// sometimes, otherwise a lambda whose body is a random program over its param.
Expr randomFunction(const Type& in, std::mt19937_64& rng) {
  if (in == Type::intType() && chance(rng, 3)) {
    switch (uniformInt(rng, 0, 3)) {
      case 0:
        return lam("x", [](Expr x) { return x * lit(3) - lit(2); });
      case 1:
        return lam("x", [](Expr x) { return select(lt(x, lit(0)), -x, x * x); });
      case 2:
        return lam("x", [](Expr x) { return tuple(max(x, lit(1)), x % lit(3)); });
      default:
        return userFun("affine", {{"x", Type::intType()}}, Type::intType(),
                       [](const std::vector<Expr>& p) { return p[0] * lit(2) + lit(1); });
    }
  }
  RandomProgramOptions options;
  options.lowLevel = false;
  options.symbolicSizes = false;
  options.maxDepth = 2;
  options.vectors = chance(rng, 2);
  RandomProgramGenerator generator(rng(), options);
  return generator.program({in}).definition.function;
}

// `f` applied to `x`: a lambda's body with its param replaced, a call otherwise.
Expr applyTo(const Expr& f, const Expr& x) {
  if (f.isLambda()) return substituteParams(f.body(), {{f.params()[0], x}});
  return apply(f, {x});
}

// `f` that also returns the captured value of an enclosing lambda (none at the root).
Expr withCapture(const Expr& f, const Expr& captured) {
  if (!captured) return f;
  Expr v = Expr::param("v");
  return Expr::lambda({v}, tuple(applyTo(f, v), captured));
}

// row -> map(f, row) over a fresh param, declared of type `rowType` when one is given.
Expr rowMap(const Expr& f, const Type& rowType = Type()) {
  Expr row = Expr::param("row", rowType);
  return Expr::lambda({row}, map(f, row));
}

// A left side: the type of the data it reads, and a builder that makes the node to rewrite from
// the data and the captured value (null at the root).
struct LeftSide {
  Type input;
  std::function<Expr(const Expr& data, const Expr& captured)> build;
  std::string variant = "";  // reported with the counts
};
using LeftSideGenerator = std::function<LeftSide(std::mt19937_64&)>;

// The counts of how often each variant of a generator was checked, reported per rule.
std::map<std::string, int>& variantCounts() {
  static std::map<std::string, int> counts;
  return counts;
}

// The outcome of one attempt: the rule applied and the results were compared.
bool checkLeftSide(const std::string& ruleName, const LeftSide& side, std::mt19937_64& rng,
                   const std::string& variant = "") {
  // At the root, or inside map(p -> ..., zip(data, cs)) with the functions capturing p._1.
  const bool nested = chance(rng, 3);
  Expr target;
  Definition original;
  if (!nested) {
    Expr data = Expr::param("data", side.input);
    target = side.build(data, Expr());
    original = Definition{"f", Expr::lambda({data}, target), Type(), {}};
  } else {
    int64_t k = uniformInt(rng, 1, 3);
    Expr data = Expr::param("data", arrayOf(side.input, k));
    Expr cs = Expr::param("cs", arrayOf(Type::intType(), k));
    Expr p = Expr::param("p");
    target = side.build(get(0, p), get(1, p));
    original = Definition{
        "f", Expr::lambda({data, cs}, map(Expr::lambda({p}, target), zip(data, cs))), Type(), {}};
  }
  RewriteContext context;
  std::optional<Definition> rewritten =
      applyAt(original, ruleNamed(ruleName), positionOf(original, target), {}, context);
  if (!rewritten) {
    RC_FAIL("rule " + ruleName + " did not match\n" + printDefinition(original));
  }
  std::vector<Value> inputs;
  for (const Expr& param : original.function.params()) {
    inputs.push_back(weft::testing::randomValue(param.paramType(), {}, rng));
  }
  Value expected;
  try {
    expected = interpret(original, inputs, {});
  } catch (const InterpError&) {
    return false;  // the random element function cannot run on these inputs
  }
  Value actual = interpret(*rewritten, inputs, {});
  if (!(expected == actual)) {
    RC_FAIL("results differ\noriginal:  " + printDefinition(original) +
            "\nrewritten: " + printDefinition(*rewritten) + "\nexpected " + expected.toString() +
            "\nfound    " + actual.toString());
  }
  ++variantCounts()[ruleName + (variant.empty() ? "" : " / " + variant) +
                    (nested ? " (nested)" : " (root)")];
  return true;
}

void checkRule(const std::string& ruleName, const LeftSideGenerator& generate) {
  ruleNamed(ruleName);  // registered in the library
  weft::testing::checkRuleOverRandomPrograms(ruleName, [&](std::mt19937_64& rng) {
    LeftSide side = generate(rng);
    return checkLeftSide(ruleName, side, rng, side.variant);
  });
  for (const auto& [variant, count] : variantCounts()) {
    if (variant.rfind(ruleName, 0) == 0) MESSAGE("  " << variant << ": " << count);
  }
}

// A 2D input [[E]m]n with random E, m, n.
Type random2D(std::mt19937_64& rng, Type element) {
  return arrayOf(arrayOf(std::move(element), uniformInt(rng, 1, 4)), uniformInt(rng, 1, 4));
}

}  // namespace

TEST_CASE("map-join-interchange") {
  checkRule("map-join-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    return LeftSide{random2D(rng, element), [f](const Expr& data, const Expr& captured) {
                      return map(withCapture(f, captured), join(data));
                    }};
  });
}

TEST_CASE("join-map-interchange") {
  checkRule("join-map-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    Type input = random2D(rng, element);
    Type row = chance(rng, 2) ? input.arrayElement() : Type();
    return LeftSide{input, [=](const Expr& data, const Expr& captured) {
                      return join(map(rowMap(withCapture(f, captured), row), data));
                    }};
  });
}

TEST_CASE("map-flatten") {
  checkRule("map-flatten", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    Type input = random2D(rng, element);
    Type row = chance(rng, 2) ? input.arrayElement() : Type();
    return LeftSide{input, [=](const Expr& data, const Expr& captured) {
                      return map(rowMap(withCapture(f, captured), row), data);
                    }};
  });
}

TEST_CASE("map-flatten-nested") {
  checkRule("map-flatten-nested", [](std::mt19937_64& rng) {
    const int64_t n = uniformInt(rng, 1, 3), d = uniformInt(rng, 1, 2);
    const int64_t m = d * uniformInt(rng, 1, 2);
    // G(p): the row itself, or its chunks of d (then g is an array, summed).
    const bool chunks = chance(rng, 2);
    // E: nothing, join, transpose, a layout map, or transpose then join.
    const int layout = uniformInt(rng, 0, 4);
    return LeftSide{
        arrayOf(arrayOf(Type::intType(), m), n),
        [=](const Expr& data, const Expr& captured) {
          Expr perRow = lam("p", [&](Expr p) {
            Expr gs = chunks ? split(d, p) : p;
            Expr computed =
                map(lam("g",
                        [&](Expr g) {
                          auto sumOf = [](Expr xs) {
                            return reduce(lit(0),
                                          lam2("a", "b", [](Expr a, Expr b) { return a + b; }), xs);
                          };
                          // B(g, p): [1] from g and a sum over all of p.
                          Expr value = chunks ? sumOf(g) : fill(1, g);
                          Expr out = map(lam("q",
                                             [&](Expr q) {
                                               Expr v = get(0, q) * lit(3) - get(1, q);
                                               return captured ? tuple(v, captured) : v;
                                             }),
                                         zip(sumOf(p), value));
                          return out;
                        }),
                    gs);
            switch (layout) {
              case 1:
                return join(computed);
              case 2:
                return transpose(computed);
              case 3:
                return map(lam("r", [](Expr r) { return join(split(1, r)); }), computed);
              case 4:
                return join(transpose(computed));
              default:
                return computed;
            }
          });
          return map(perRow, data);
        },
        std::string(chunks ? "chunks" : "elements") + ", layout " + std::to_string(layout)};
  });
}

TEST_CASE("map-transpose-interchange") {
  checkRule("map-transpose-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    Type input = random2D(rng, element);
    // Sometimes the row param declares its type (a column of the input).
    Type column = chance(rng, 2) ? Type::array(element, input.arrayLength()) : Type();
    return LeftSide{input, [=](const Expr& data, const Expr& captured) {
                      return map(rowMap(withCapture(f, captured), column), transpose(data));
                    }};
  });
}

namespace {

// One of the arrays map-map-interchange iterates over, made from the data [[int]m]n.
struct Iterated {
  std::function<Expr(const Expr& data)> build;
  Type element;
};
Iterated randomIterated(std::mt19937_64& rng, int64_t m, int64_t n) {
  switch (uniformInt(rng, 0, 4)) {
    case 0:
      return {[](const Expr& data) { return data; }, arrayOf(Type::intType(), m)};
    case 1:
      return {[](const Expr& data) { return transpose(data); }, arrayOf(Type::intType(), n)};
    case 2:
      return {[](const Expr& data) { return join(data); }, Type::intType()};
    case 3:
      return {[](const Expr& data) {
                return map(lam("r",
                               [](Expr r) {
                                 return reduce(
                                     lit(1),
                                     lam2("a", "b", [](Expr a, Expr b) { return a * lit(2) - b; }),
                                     r);
                               }),
                           data);
              },
              arrayOf(Type::intType(), 1)};
    default:
      return {[](const Expr& data) { return reorderReverse(join(data)); }, Type::intType()};
  }
}

Expr plusLambda() {
  return lam2("a", "b", [](Expr a, Expr b) { return a + b; });
}

// g(x, y) for x: X and y: Y, mentioning both (or only y when `onlyY`); may nest lambdas that
// capture x or y. (reduce gives [T]1, so sums are used as arrays.)
Expr randomG(std::mt19937_64& rng, const Expr& x, const Type& xType, const Expr& y,
             const Type& yType, bool onlyY) {
  if (onlyY) return applyTo(randomFunction(yType, rng), y);
  const bool xInt = xType == Type::intType();
  const bool yInt = yType == Type::intType();
  auto plus = [] { return lam2("a", "b", [](Expr a, Expr b) { return a + b; }); };
  switch (uniformInt(rng, 0, 2)) {
    case 0:
      return tuple(applyTo(randomFunction(xType, rng), x), applyTo(randomFunction(yType, rng), y));
    case 1:
      if (xInt && yInt) return select(lt(x, y), x * y - lit(1), y - x);
      if (!xInt && yInt) return map(lam("e", [&](Expr e) { return e * y + lit(1); }), x);
      if (xInt && !yInt) return map(lam("e", [&](Expr e) { return max(e - x, lit(0)) * e; }), y);
      return map(lam("e", [&](Expr e) { return reduce(e, plus(), x); }), y);
    default:
      if (xInt && yInt) return max(x, y) * lit(2) + x % lit(3);
      if (!xInt && yInt) {
        return reduce(y, lam2("a", "e", [](Expr a, Expr e) { return a * lit(3) + e; }), x);
      }
      if (xInt && !yInt) {
        return reduce(x, lam2("a", "e", [](Expr a, Expr e) { return a - e * e; }), y);
      }
      return map(lam("s", [&](Expr s) { return map(lam("e", [&](Expr e) { return e * s; }), y); }),
                 reduce(lit(0), plus(), x));
  }
}

}  // namespace

TEST_CASE("map-map-interchange") {
  checkRule("map-map-interchange", [](std::mt19937_64& rng) {
    const int64_t m = uniformInt(rng, 1, 4), n = uniformInt(rng, 1, 4);
    Iterated xsSide = randomIterated(rng, m, n);
    Iterated ysSide = randomIterated(rng, m, n);
    // 0: g mentions x and y; 1: only y (a lambda); 2: a user function (not a lambda), over
    // int elements of ys.
    const int draw = uniformInt(rng, 0, 9);
    const int kind = draw < 5 ? 0 : draw < 7 ? 1 : 2;
    while (kind == 2 && !(ysSide.element == Type::intType())) ysSide = randomIterated(rng, m, n);
    Expr x = Expr::param("x", chance(rng, 4) ? xsSide.element : Type());
    Expr y = Expr::param("y", chance(rng, 4) ? ysSide.element : Type());
    Expr g = kind == 2 ? Expr() : randomG(rng, x, xsSide.element, y, ysSide.element, kind == 1);
    Expr userF = userFun("scale", {{"v", Type::intType()}}, Type::intType(),
                         [](const std::vector<Expr>& p) { return p[0] * lit(5) - lit(3); });
    return LeftSide{arrayOf(arrayOf(Type::intType(), m), n),
                    [=](const Expr& data, const Expr& captured) {
                      Expr inner;
                      if (kind == 2 && !captured) {
                        inner = userF;
                      } else {
                        Expr body = kind == 2 ? apply(userF, {y}) : g;
                        if (captured) body = tuple(body, captured);
                        inner = Expr::lambda({y}, body);
                      }
                      return map(Expr::lambda({x}, map(inner, ysSide.build(data))),
                                 xsSide.build(data));
                    },
                    kind == 0   ? "g(x, y)"
                    : kind == 1 ? "g(y) lambda"
                                : "user function"};
  });
}

TEST_CASE("map-crop-interchange") {
  checkRule("map-crop-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    const int64_t left = uniformInt(rng, 0, 2), right = uniformInt(rng, 0, 2);
    const int64_t length = left + right + uniformInt(rng, 1, 4);
    return LeftSide{arrayOf(element, length), [=](const Expr& data, const Expr& captured) {
                      return map(withCapture(f, captured), crop(left, right, data));
                    }};
  });
}

TEST_CASE("map-split-interchange") {
  checkRule("map-split-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    const int64_t chunk = uniformInt(rng, 1, 4);
    const int64_t length = chunk * uniformInt(rng, 1, 4);
    const bool typedRow = chance(rng, 2);
    return LeftSide{arrayOf(element, length), [=](const Expr& data, const Expr& captured) {
                      Type row = typedRow ? arrayOf(element, chunk) : Type();
                      return map(rowMap(withCapture(f, captured), row), split(chunk, data));
                    }};
  });
}

TEST_CASE("split-map-interchange") {
  checkRule("split-map-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    const int64_t chunk = uniformInt(rng, 1, 4);
    const int64_t length = chunk * uniformInt(rng, 1, 4);
    return LeftSide{arrayOf(element, length), [=](const Expr& data, const Expr& captured) {
                      return split(chunk, map(withCapture(f, captured), data));
                    }};
  });
}

TEST_CASE("map-slide-interchange") {
  checkRule("map-slide-interchange", [](std::mt19937_64& rng) {
    Type element = randomElementType(rng);
    Expr f = randomFunction(element, rng);
    const int64_t size = uniformInt(rng, 1, 3), step = uniformInt(rng, 1, 3);
    const bool strict = chance(rng, 2);
    const bool typedRow = chance(rng, 2);
    const int64_t length =
        strict ? size + step * uniformInt(rng, 0, 3) : size + uniformInt(rng, 0, 5);
    return LeftSide{arrayOf(element, length),
                    [=](const Expr& data, const Expr& captured) {
                      Expr windows =
                          strict ? slideStrict(size, step, data) : slide(size, step, data);
                      Type row = typedRow ? arrayOf(element, size) : Type();
                      return map(rowMap(withCapture(f, captured), row), windows);
                    },
                    strict ? "slideStrict" : "slide"};
  });
}

namespace {

const char* boundaryName(Boundary b) {
  switch (b) {
    case Boundary::Clamp:
      return "clamp";
    case Boundary::Mirror:
      return "mirror";
    case Boundary::Constant:
      return "constant";
  }
  return "?";
}

// A boundary of kind 0 (clamp), 1 (mirror) or 2 (constant with a random value in [-1, 2]).
PrimAttribute boundaryOfKind(int kind, std::mt19937_64& rng) {
  if (kind == 0) return padBoundary(Boundary::Clamp);
  if (kind == 1) return padBoundary(Boundary::Mirror);
  return padBoundary(Boundary::Constant, uniformInt(rng, -1, 2));
}

}  // namespace

TEST_CASE("map-pad-interchange") {
  std::map<std::string, int> combinations;
  int declined = 0;
  int attempt = 0;
  weft::testing::checkRuleOverRandomPrograms("map-pad-interchange", [&](std::mt19937_64& rng) {
    // The nine combinations of boundary kinds in turn, then two constants of different values.
    const int combination = attempt++ % 10;
    Type element = randomElementType(rng);
    const int64_t m = uniformInt(rng, 1, 4), n = uniformInt(rng, 1, 4);
    const int rowKind = combination < 9 ? combination / 3 : 2;
    const int outerKind = combination < 9 ? combination % 3 : 2;
    // Mirror padding reflects once at most: at most the length on each side.
    const int64_t a = uniformInt(rng, 0, rowKind == 1 ? std::min<int64_t>(m, 2) : 2);
    const int64_t b = uniformInt(rng, 0, rowKind == 1 ? std::min<int64_t>(m, 2) : 2);
    const int64_t c = uniformInt(rng, 0, outerKind == 1 ? std::min<int64_t>(n, 2) : 2);
    const int64_t d = uniformInt(rng, 0, outerKind == 1 ? std::min<int64_t>(n, 2) : 2);
    const bool typedRow = chance(rng, 2);
    PrimAttribute rowBoundary = boundaryOfKind(rowKind, rng);
    PrimAttribute outerBoundary = boundaryOfKind(outerKind, rng);
    if (combination == 8) outerBoundary.padValue = rowBoundary.padValue;
    if (combination == 9 && outerBoundary.padValue == rowBoundary.padValue) {
      outerBoundary.padValue = rowBoundary.padValue + 1.0;
    }
    auto build = [=](const Expr& data, const Expr&) {
      Expr r = Expr::param("r", typedRow ? arrayOf(element, m) : Type());
      Expr rowPad = Expr::lambda({r}, pad(a, b, rowBoundary, r));
      return map(rowPad, pad(c, d, outerBoundary, data));
    };
    if (combination == 9) {
      // Different constants: the corners differ, so the rule must not match.
      Expr data = Expr::param("data", arrayOf(arrayOf(element, m), n));
      Expr target = build(data, Expr());
      Definition d0{"f", Expr::lambda({data}, target), Type(), {}};
      RewriteContext context;
      RC_ASSERT(!applyAt(d0, ruleNamed("map-pad-interchange"), positionOf(d0, target), {}, context)
                     .has_value());
      ++declined;
      return false;
    }
    std::string variant = std::string(boundaryName(rowBoundary.boundary)) + " rows, " +
                          boundaryName(outerBoundary.boundary) + " outer";
    bool checked = checkLeftSide("map-pad-interchange",
                                 LeftSide{arrayOf(arrayOf(element, m), n), build}, rng, variant);
    if (checked) ++combinations[variant];
    return checked;
  });
  for (const auto& [variant, count] : combinations) MESSAGE("  " << variant << ": " << count);
  MESSAGE("  declined (constants of different values): " << declined);
  CHECK(combinations.size() == 9u);
  CHECK(declined >= 5);
}

TEST_CASE("interchange rules on random generator programs") {
  static const std::vector<std::string> names{
      "map-join-interchange",      "join-map-interchange",  "map-flatten",
      "map-transpose-interchange", "map-map-interchange",   "map-crop-interchange",
      "map-split-interchange",     "split-map-interchange", "map-slide-interchange",
      "map-pad-interchange",       "map-flatten-nested"};
  std::vector<Rule> rules;
  for (const std::string& name : names) rules.push_back(ruleNamed(name));
  std::map<std::string, int> applied;
  bool ok = rc::check("every interchange rule preserves random programs where it matches", [&] {
    std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
    RandomProgramOptions options;
    options.lowLevel = false;
    RandomProgramGenerator generator(rng(), options);
    for (int program = 0; program < 5; ++program) {
      Definition definition = generator.program().definition;
      for (const Match& match : findMatches(definition, rules)) {
        RewriteContext context;
        std::optional<Definition> rewritten =
            applyAt(definition, *match.rule, match.position, {}, context);
        RC_ASSERT(rewritten.has_value());
        weft::testing::InputSizes inputs = weft::testing::randomInputSizes(definition, rng);
        if (weft::testing::sameResults(*match.rule, match.position, definition, *rewritten, inputs,
                                       inputs.sizes, 0.0, 0.0, rng)) {
          ++applied[match.rule->name];
        }
      }
    }
  });
  CHECK(ok);
  for (const auto& [name, count] : applied) MESSAGE("  " << name << ": " << count);
}

namespace {

// Whether the rule matches at `target` in a definition over one input.
bool matches(const std::string& ruleName, const Type& inputType,
             const std::function<Expr(const Expr&)>& build) {
  Expr data = Expr::param("data", inputType);
  Expr target = build(data);
  Definition d{"f", Expr::lambda({data}, target), Type(), {}};
  RewriteContext context;
  return applyAt(d, ruleNamed(ruleName), positionOf(d, target), {}, context).has_value();
}

}  // namespace

TEST_CASE("map-map-interchange does not match when ys mentions x") {
  Type t = arrayOf(arrayOf(Type::intType(), 3), 4);
  auto plain = [](const Expr& data) {
    return map(lam("x",
                   [&](Expr x) {
                     return map(lam("y", [&](Expr y) { return reduce(y, plusLambda(), x); }),
                                join(data));
                   }),
               data);
  };
  CHECK(matches("map-map-interchange", t, plain));
  // ys = x itself.
  CHECK_FALSE(matches("map-map-interchange", t, [](const Expr& data) {
    return map(lam("x", [](Expr x) { return map(lam("y", [](Expr y) { return y * lit(2); }), x); }),
               data);
  }));
  // ys computed from x.
  CHECK_FALSE(matches("map-map-interchange", t, [](const Expr& data) {
    return map(
        lam("x", [&](Expr x) { return map(lam("y", [](Expr y) { return y; }), crop(1, 0, x)); }),
        data);
  }));
  // The outer function is not a lambda over a map.
  CHECK_FALSE(matches("map-map-interchange", t, [](const Expr& data) {
    return map(lam("x", [](Expr x) { return reduce(lit(0), plusLambda(), x); }), data);
  }));
}

TEST_CASE("map-pad-interchange does not match constants of different values") {
  Type t = arrayOf(arrayOf(Type::intType(), 3), 4);
  auto padded = [](PrimAttribute rows, PrimAttribute outer) {
    return [=](const Expr& data) {
      return map(lam("r", [&](Expr r) { return pad(1, 2, rows, r); }), pad(2, 1, outer, data));
    };
  };
  CHECK(matches("map-pad-interchange", t,
                padded(padBoundary(Boundary::Clamp), padBoundary(Boundary::Clamp))));
  CHECK(matches("map-pad-interchange", t,
                padded(padBoundary(Boundary::Mirror), padBoundary(Boundary::Mirror))));
  CHECK(
      matches("map-pad-interchange", t,
              padded(padBoundary(Boundary::Constant, 2.0), padBoundary(Boundary::Constant, 2.0))));
  CHECK_FALSE(
      matches("map-pad-interchange", t,
              padded(padBoundary(Boundary::Constant, 0.0), padBoundary(Boundary::Constant, 1.0))));
  CHECK_FALSE(
      matches("map-pad-interchange", t,
              padded(padBoundary(Boundary::Constant, 2.0), padBoundary(Boundary::Constant, -1.0))));
  // Mixed kinds are exact in the interpreter's semantics (the property above checks all nine
  // combinations), so they match.
  CHECK(matches("map-pad-interchange", t,
                padded(padBoundary(Boundary::Constant, 1.0), padBoundary(Boundary::Clamp))));
  CHECK(matches("map-pad-interchange", t,
                padded(padBoundary(Boundary::Clamp), padBoundary(Boundary::Constant, 1.0))));
  // The row function must pad its own param.
  CHECK_FALSE(matches("map-pad-interchange", t, [](const Expr& data) {
    return map(
        lam("r", [](Expr r) { return pad(1, 1, padBoundary(Boundary::Clamp), reorderReverse(r)); }),
        pad(1, 1, padBoundary(Boundary::Clamp), data));
  }));
}

TEST_CASE("row rules do not match when the element function mentions the row") {
  Type t = arrayOf(arrayOf(Type::intType(), 4), 4);
  auto rowDependent = [](const Expr& rows) {
    return map(lam("row",
                   [](Expr row) {
                     return map(lam("e", [&](Expr e) { return reduce(e, plusLambda(), row); }),
                                row);
                   }),
               rows);
  };
  auto rowIndependent = [](const Expr& rows) {
    return map(
        lam("row", [](Expr row) { return map(lam("e", [](Expr e) { return e + lit(1); }), row); }),
        rows);
  };
  // A row function whose body maps over something other than the row.
  auto notTheRow = [](const Expr& rows) {
    return map(lam("row",
                   [](Expr row) {
                     return map(lam("e", [](Expr e) { return e + lit(1); }), reorderReverse(row));
                   }),
               rows);
  };
  using Wrap = std::function<Expr(const Expr&)>;
  struct Case {
    std::string rule;
    Wrap around;  // builds the left side from the row map (applied to the prepared rows)
  };
  const std::vector<Case> cases{
      {"join-map-interchange", [](const Expr& e) { return join(e); }},
      {"map-flatten", [](const Expr& e) { return e; }},
      {"map-transpose-interchange", [](const Expr& e) { return e; }},
      {"map-split-interchange", [](const Expr& e) { return e; }},
      {"map-slide-interchange", [](const Expr& e) { return e; }},
  };
  auto rowsFor = [](const std::string& rule, const Expr& data) -> Expr {
    if (rule == "map-transpose-interchange") return transpose(data);
    if (rule == "map-split-interchange") return split(2, join(data));
    if (rule == "map-slide-interchange") return slide(2, 1, join(data));
    return data;
  };
  for (const Case& c : cases) {
    CAPTURE(c.rule);
    for (int variant = 0; variant < 3; ++variant) {
      CAPTURE(variant);
      bool expected = variant == 0;
      bool got = matches(c.rule, t, [&](const Expr& data) {
        Expr rows = rowsFor(c.rule, data);
        Expr mapped = variant == 0   ? rowIndependent(rows)
                      : variant == 1 ? rowDependent(rows)
                                     : notTheRow(rows);
        return c.around(mapped);
      });
      CHECK(got == expected);
    }
  }
  // The layout primitive under the map must be the one the rule moves.
  CHECK_FALSE(matches("map-crop-interchange", arrayOf(Type::intType(), 4), [](const Expr& data) {
    return map(lam("e", [](Expr e) { return e; }), reorderReverse(data));
  }));
  CHECK_FALSE(matches("map-join-interchange", arrayOf(Type::intType(), 4), [](const Expr& data) {
    return map(lam("e", [](Expr e) { return e; }), data);
  }));
  CHECK_FALSE(matches("split-map-interchange", arrayOf(Type::intType(), 4),
                      [](const Expr& data) { return split(2, reorderReverse(data)); }));
}
