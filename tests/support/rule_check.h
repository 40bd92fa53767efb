// The harness the rewrite-rule property tests share: look rules up, find a node's position, bind
// random sizes for a definition's inputs, compare a rewritten definition with the original in the interpreter on random inputs,
// and run a rule over many random programs counting how often it applied (each rule must be
// applied and checked in at least 50 cases). Header-only: every .cpp under tests/<folder>/ is a
// test executable of its own.
#pragma once

#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

namespace weft::testing {

// The rule from the library (so a test also checks that it is registered there).
inline const rewrite::Rule& ruleNamed(const std::string& name) {
  const rewrite::Rule* rule = rewrite::findRule(name);
  if (rule == nullptr) throw std::runtime_error("no rule " + name + " in the library");
  return *rule;
}

// The rule from the library when it is registered there, else from the rules `addRules` adds
// (a family's adder, e.g. rewrite::addStencilChainRules: rules a test checks whether or not a
// strategy registers them).
inline const rewrite::Rule& ruleNamedOrAdded(const std::string& name,
                                             void (*addRules)(std::vector<rewrite::Rule>&)) {
  if (const rewrite::Rule* rule = rewrite::findRule(name)) return *rule;
  static std::map<void (*)(std::vector<rewrite::Rule>&), std::vector<rewrite::Rule>> added;
  auto [entry, fresh] = added.try_emplace(addRules);
  if (fresh) addRules(entry->second);
  for (const rewrite::Rule& rule : entry->second) {
    if (rule.name == name) return rule;
  }
  throw std::runtime_error("no rule " + name);
}

inline Type arrayOf(Type element, int64_t length) {
  return Type::array(std::move(element), Arith(length));
}

// The position of `target` (by node identity) in the definition's body.
inline rewrite::Position positionOf(const Definition& definition, const Expr& target) {
  const Expr& body = definition.function.body();
  for (const rewrite::Position& position : rewrite::allPositions(body)) {
    if (rewrite::nodeAt(body, position).node() == target.node()) return position;
  }
  throw std::runtime_error("target not found in the body");
}

inline int uniformInt(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// A scalar literal of `kind` derived from c (c / 2 for float, c for int).
inline Expr constantOf(ScalarKind kind, int c) {
  return kind == ScalarKind::Float ? lit(0.5f * static_cast<float>(c)) : lit(c);
}

// A random scalar term of x over `kind`: x itself (unless !allowIdentity), arithmetic, a select,
// or a user function call.
inline Expr randomTerm(std::mt19937_64& rng, ScalarKind kind, const Expr& x,
                       bool allowIdentity = true) {
  Type t = Type::scalar(kind);
  switch (uniformInt(rng, allowIdentity ? 0 : 1, 5)) {
    case 0:
      return x;
    case 1:
      return x * x;
    case 2:
      return max(x, constantOf(kind, 0)) + constantOf(kind, 1);
    case 3:
      return x * constantOf(kind, 3) - constantOf(kind, 2);
    case 4:
      return apply(userFun("affine", {{"y", t}}, t,
                           [&](const std::vector<Expr>& p) {
                             return p[0] * constantOf(kind, 2) + constantOf(kind, 1);
                           }),
                   {x});
    default:
      return select(lt(x, constantOf(kind, 0)), neg(x), x * constantOf(kind, 2));
  }
}

// A random divisor of n.
inline int divisorOf(std::mt19937_64& rng, int n) {
  std::vector<int> divisors;
  for (int d = 1; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  return divisors[static_cast<size_t>(uniformInt(rng, 0, static_cast<int>(divisors.size()) - 1))];
}

// The rule applied at `target` (by node identity), or nullopt when it does not match there.
inline std::optional<Definition> tryRuleAt(const Definition& definition,
                                           const std::string& ruleName, const Expr& target,
                                           const rewrite::RuleArguments& arguments = {}) {
  rewrite::RewriteContext context;
  return rewrite::applyAt(definition, ruleNamed(ruleName), positionOf(definition, target),
                          arguments, context);
}

// Applies the rule at `target`; fails the property when it does not match (an ill-typed result
// throws RewriteError from applyAt, which fails the property too).
inline Definition rewriteAt(const Definition& definition, const std::string& ruleName,
                            const Expr& target, const rewrite::RuleArguments& arguments) {
  std::optional<Definition> result = tryRuleAt(definition, ruleName, target, arguments);
  if (!result) RC_FAIL(ruleName + " did not match\n" + printDefinition(definition));
  return *result;
}

constexpr double kRuleTolerance = 1e-4;

// Runs both definitions (no size variables) on the same random inputs and fails the property
// unless the results are equal: exactly, or within kRuleTolerance absolute + relative when
// `approximate` (then the floats are real-valued).
inline void checkSameResult(const Definition& original, const Definition& rewritten,
                            std::mt19937_64& rng, bool approximate = false) {
  std::vector<Value> inputs;
  RandomValueOptions options;
  options.realFloats = approximate;
  for (const Expr& param : original.function.params()) {
    inputs.push_back(randomValue(param.paramType(), {}, rng, options));
  }
  Value expected = interpret(original, inputs, {});
  Value actual = interpret(rewritten, inputs, {});
  const bool same = approximate
                        ? approximatelyEqual(actual, expected, kRuleTolerance, kRuleTolerance)
                        : expected == actual;
  if (!same) {
    RC_FAIL("results differ\noriginal:  " + printDefinition(original) +
            "\nrewritten: " + printDefinition(rewritten) + "\nexpected " + expected.toString() +
            "\nfound    " + actual.toString());
  }
}

// Applies `rule` at `target` (it must match, else the property fails), runs both programs (no
// size variables) on the same random inputs and fails the property unless the results are
// exactly equal. Returns false, checking nothing, when the type checker or the interpreter
// rejects the original (e.g. mirror padding wider than the array: not a program).
inline bool checkRewriteWhereRunnable(const Definition& original, const rewrite::Rule& rule,
                                      const Expr& target, std::mt19937_64& rng,
                                      const rewrite::RuleArguments& arguments = {}) {
  try {
    typecheck(original);
  } catch (const std::exception&) {
    return false;
  }
  rewrite::RewriteContext context;
  std::optional<Definition> rewritten =
      rewrite::applyAt(original, rule, positionOf(original, target), arguments, context);
  if (!rewritten) RC_FAIL(rule.name + " did not match\n" + printDefinition(original));
  std::vector<Value> inputs;
  for (const Expr& p : original.function.params()) {
    inputs.push_back(randomValue(p.paramType(), {}, rng));
  }
  Value expected;
  try {
    expected = interpret(original, inputs, {});
  } catch (const InterpError&) {
    return false;
  }
  Value actual = interpret(*rewritten, inputs, {});
  if (!(expected == actual)) {
    RC_FAIL("results differ\noriginal:  " + printDefinition(original) +
            "\nrewritten: " + printDefinition(*rewritten) + "\nexpected " + expected.toString() +
            "\nfound    " + actual.toString());
  }
  return true;
}

// Random values in [1, 4] for the size variables of a definition's parameter types.
struct InputSizes {
  ArithBinding sizes;
  std::vector<Type> inputTypes;
};
inline InputSizes randomInputSizes(const Definition& definition, std::mt19937_64& rng) {
  InputSizes result;
  for (const Expr& param : definition.function.params()) {
    result.inputTypes.push_back(param.paramType());
    for (const Arith& v : typeVars(param.paramType())) {
      if (!result.sizes.count(v.varName())) result.sizes[v.varName()] = uniformInt(rng, 1, 4);
    }
  }
  return result;
}

// Runs both definitions on the same random inputs and asserts (RC_ASSERT) that the results are
// equal: exactly, or within absolute + relative * |expected| when a tolerance is given. `rewrittenSizes`
// also binds the tuning variables the rewrite created. Returns false, checking nothing, when the
// original cannot run on the inputs.
inline bool sameResults(const rewrite::Rule& rule, const rewrite::Position& position,
                        const Definition& original, const Definition& rewritten,
                        const InputSizes& inputs, const ArithBinding& rewrittenSizes,
                        double absolute, double relative, std::mt19937_64& rng) {
  std::vector<Value> values;
  for (const Type& t : inputs.inputTypes) values.push_back(randomValue(t, inputs.sizes, rng));
  Value expected;
  try {
    expected = interpret(original, values, inputs.sizes);
  } catch (const InterpError&) {
    return false;
  }
  Value actual = interpret(rewritten, values, rewrittenSizes);
  bool equal = expected == actual ||
               ((absolute > 0 || relative > 0) &&
                approximatelyEqual(expected, actual, absolute, relative));
  if (!equal) {
    RC_LOG() << "rule " << rule.name << " at " << rewrite::positionToString(position) << "\n"
             << printDefinition(original) << "\n=>\n"
             << printDefinition(rewritten) << "\nexpected " << expected.toString()
             << "\nactual   " << actual.toString() << "\n";
  }
  RC_ASSERT(equal);
  return true;
}

// Runs `checkOnce` (which builds a program, rewrites it and compares, returning whether the rule
// applied) up to 40 times per rapidcheck case, prints how many cases were checked, and requires
// at least 50.
inline void checkRuleOverRandomPrograms(const std::string& name,
                                        const std::function<bool(std::mt19937_64&)>& checkOnce) {
  int applied = 0;
  int cases = 0;
  bool ok = rc::check(name + " preserves the interpreter's result", [&] {
    std::mt19937_64 rng(*rc::gen::arbitrary<uint64_t>());
    ++cases;
    for (int attempt = 0; attempt < 40; ++attempt) {
      if (checkOnce(rng)) {
        ++applied;
        return;
      }
    }
  });
  CHECK(ok);
  MESSAGE(name << ": applied and checked in " << applied << " of " << cases << " cases");
  CHECK(applied >= 50);
}

}  // namespace weft::testing
