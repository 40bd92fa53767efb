// The harness the rewrite-rule property tests share: bind random sizes for a definition's
// inputs, compare a rewritten definition with the original in the interpreter on random inputs,
// and run a rule over many random programs counting how often it applied (each rule must be
// applied and checked in at least 50 cases). Header-only: every .cpp under tests/<folder>/ is a
// test executable of its own.
#pragma once

#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "tests/support/random_values.h"

namespace weft::testing {

inline int uniformInt(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
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
