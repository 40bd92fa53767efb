// Property tests of the basic rules (rewrite/rules_basic.cpp) against the interpreter: for each
// rule, random well-typed programs (tests/support/random_program.h) in which the rule applies
// are rewritten at a random matching position with random valid factors, and the rewritten
// program must give the same result as the original on random inputs with random sizes.
//
// Programs come from the random generator directly, or, for rules whose left side it rarely
// builds (the layout identities, mapLcl inside a mapWrg), from a targeted left side over the
// input followed by a random program. Results must be equal exactly for programs without
// floats; with floats within 1e-4 (absolute and relative) — none of these rules reorders
// float operations, so they are in practice bitwise equal too. Each rule must actually be
// applied in at least 50 cases; the count is printed.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
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

bool containsFloat(const Type& t) {
  switch (t.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
      return t.scalarKind() == ScalarKind::Float;
    case TypeKind::Tuple:
      for (const Type& e : t.tupleElements()) {
        if (containsFloat(e)) return true;
      }
      return false;
    case TypeKind::Array:
      return containsFloat(t.arrayElement());
  }
  return false;
}

// A targeted left side over the input `p`, or null when the rule has none.
using LeftSide = std::function<Expr(const Expr& p, Type& inputType, std::mt19937_64& rng)>;

Type randomScalar(std::mt19937_64& rng) {
  return uniformInt(rng, 0, 2) == 0 ? Type::intType() : Type::floatType();
}

Arith randomLength(std::mt19937_64& rng) {
  switch (uniformInt(rng, 0, 3)) {
    case 0:
      return Arith::size("n");
    case 1:
      return 2 * Arith::size("m");
    default:
      return Arith(uniformInt(rng, 1, 6));
  }
}

std::map<std::string, LeftSide> leftSides() {
  std::map<std::string, LeftSide> sides;
  sides["join-split-id"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    int k = uniformInt(rng, 1, 4);
    t = Type::array(randomScalar(rng), k * randomLength(rng));
    return join(split(k, p));
  };
  sides["split-join-id"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    int k = uniformInt(rng, 1, 4);
    t = Type::array(Type::array(randomScalar(rng), k), randomLength(rng));
    return split(k, join(p));
  };
  sides["transpose-transpose-id"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    t = Type::array(Type::array(randomScalar(rng), randomLength(rng)), randomLength(rng));
    return transpose(transpose(p));
  };
  sides["asscalar-asvector-id"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    int v = uniformInt(rng, 0, 1) ? 2 : 4;
    t = Type::array(randomScalar(rng), v * randomLength(rng));
    return asScalar(asVector(v, p));
  };
  sides["asvector-asscalar-id"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    int v = uniformInt(rng, 0, 1) ? 2 : 4;
    ScalarKind kind = randomScalar(rng).scalarKind();
    t = Type::array(Type::vector(kind, v), randomLength(rng));
    return asVector(v, asScalar(p));
  };
  // mapLcl needs an enclosing mapWrg: the random program runs on each row inside one.
  sides["map-to-maplcl"] = [](const Expr& p, Type& t, std::mt19937_64& rng) {
    t = Type::array(Type::array(randomScalar(rng), randomLength(rng)), randomLength(rng));
    Expr row = Expr::param("row");
    RandomProgramOptions options;
    options.lowLevel = false;
    RandomProgramGenerator gen(rng(), options);
    weft::testing::RandomProgram inner = gen.program({t.arrayElement()});
    Expr body = substituteParams(inner.definition.function.body(),
                                 {{inner.definition.function.params()[0], row}});
    return mapWrg(Arith(uniformInt(rng, 0, 2)), Expr::lambda({row}, body), p);
  };
  return sides;
}

// A program for `rule`: random, or a targeted left side followed by a random program.
Definition makeProgram(const std::string& rule, std::mt19937_64& rng) {
  static const std::map<std::string, LeftSide> sides = leftSides();
  auto side = sides.find(rule);
  RandomProgramOptions options;
  options.lowLevel = uniformInt(rng, 0, 2) == 0;
  RandomProgramGenerator gen(rng(), options);
  if (side == sides.end() || uniformInt(rng, 0, 3) == 0) return gen.program().definition;
  Expr p = Expr::param("input");
  Type inputType;
  Expr left = side->second(p, inputType, rng);
  if (rule == "map-to-maplcl") {
    Expr input = Expr::param("input", inputType);
    return Definition{"f", Expr::lambda({input}, substituteParams(left, {{p, input}})), Type(), {}};
  }
  weft::testing::RandomProgram rest = gen.program({inputType});
  Expr restInput = rest.definition.function.params()[0];
  Expr typedInput = Expr::param("input", inputType);
  Expr body = substituteParams(rest.definition.function.body(),
                               {{restInput, substituteParams(left, {{p, typedInput}})}});
  return Definition{"f", Expr::lambda({typedInput}, body), Type(), {}};
}

// Rewrites `definition` with `rule` at a random matching position and compares results.
// Returns false (nothing checked) when the rule does not apply or the original cannot run.
bool checkOnce(const Rule& rule, const Definition& definition, std::mt19937_64& rng) {
  std::vector<Match> matches = findMatches(definition, {rule});
  if (matches.empty()) return false;
  const Match& match = matches[static_cast<size_t>(uniformInt(rng, 0, int(matches.size()) - 1))];

  // Sizes of the inputs, each in [1, 4].
  weft::testing::InputSizes inputs = weft::testing::randomInputSizes(definition, rng);
  const ArithBinding& sizes = inputs.sizes;

  // Factors.
  RuleArguments arguments;
  std::optional<int64_t> chunkForTuning;
  Expr node = nodeAt(definition.function.body(), match.position);
  if (rule.name == "split-join") {
    TypedDefinition typed = typecheck(definition);
    int64_t length = evaluate(typed.typeOf(node.args()[0]).arrayLength(), sizes);
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= length; ++d) {
      if (length % d == 0) divisors.push_back(d);
    }
    int64_t chosen = divisors[static_cast<size_t>(uniformInt(rng, 0, int(divisors.size()) - 1))];
    if (uniformInt(rng, 0, 1) == 0) {
      arguments.push_back({"n", Arith(chosen)});
    } else {
      chunkForTuning = chosen;
    }
  }
  bool dimRule = std::find(rule.factors.begin(), rule.factors.end(), "dim") != rule.factors.end();
  if (dimRule && uniformInt(rng, 0, 1) == 0) {
    arguments.push_back({"dim", Arith(uniformInt(rng, 0, 2))});
  }

  RewriteContext context;
  std::optional<Definition> rewritten =
      applyAt(definition, rule, match.position, arguments, context);
  if (!rewritten && dimRule) {  // that dimension is not legal here; the rule picks one
    rewritten = applyAt(definition, rule, match.position, {}, context);
  }
  RC_ASSERT(rewritten.has_value());
  ArithBinding tuned = sizes;
  if (chunkForTuning) {
    RC_ASSERT(context.tuningVariables().size() == 1u);
    tuned[context.tuningVariables()[0].varName()] = *chunkForTuning;
  }

  Type resultType = typecheck(definition).type;
  double tolerance = containsFloat(resultType) ? 1e-4 : 0.0;
  return weft::testing::sameResults(rule, match.position, definition, *rewritten, inputs, tuned,
                                    tolerance, tolerance, rng);
}

void checkRule(const std::string& name) {
  const Rule* rule = findRule(name);
  REQUIRE_MESSAGE(rule != nullptr, name);
  weft::testing::checkRuleOverRandomPrograms(
      name, [&](std::mt19937_64& rng) { return checkOnce(*rule, makeProgram(name, rng), rng); });
}

}  // namespace

TEST_CASE("map-fusion") { checkRule("map-fusion"); }
TEST_CASE("map-fission") { checkRule("map-fission"); }
TEST_CASE("split-join") { checkRule("split-join"); }
TEST_CASE("join-split-id") { checkRule("join-split-id"); }
TEST_CASE("split-join-id") { checkRule("split-join-id"); }
TEST_CASE("transpose-transpose-id") { checkRule("transpose-transpose-id"); }
TEST_CASE("asscalar-asvector-id") { checkRule("asscalar-asvector-id"); }
TEST_CASE("asvector-asscalar-id") { checkRule("asvector-asscalar-id"); }
TEST_CASE("map-to-mapglb") { checkRule("map-to-mapglb"); }
TEST_CASE("map-to-mapwrg") { checkRule("map-to-mapwrg"); }
TEST_CASE("map-to-maplcl") { checkRule("map-to-maplcl"); }
TEST_CASE("map-to-mapseq") { checkRule("map-to-mapseq"); }
TEST_CASE("map-to-mapseq-unroll") { checkRule("map-to-mapseq-unroll"); }
TEST_CASE("reduce-to-reduceseq") { checkRule("reduce-to-reduceseq"); }
TEST_CASE("reduce-to-reduceseq-unroll") { checkRule("reduce-to-reduceseq-unroll"); }
