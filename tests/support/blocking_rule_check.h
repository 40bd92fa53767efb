// What the property tests of the blocking macro rules (rewrite/rules_blocking.cpp and
// rewrite/rules_vector_blocking.cpp) share on top of tests/support/rule_check.h: small random
// choices (pick, coin, an int or float scalar kind), nested array types and joins of them, the sum
// of a 1D array, counting primitives,
// the check of one rewrite (same type, same interpreter result) and the loop that runs a
// property over random programs, counts the applications and requires at least 50.
// Header-only: every .cpp under tests/<folder>/ is a test executable of its own.
#pragma once

#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "tests/support/expr_counting.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

namespace weft::testing {

inline int pick(std::mt19937_64& rng, int lo, int hi) { return uniformInt(rng, lo, hi); }

inline bool coin(std::mt19937_64& rng) { return pick(rng, 0, 1) == 1; }

inline ScalarKind randomKind(std::mt19937_64& rng) {
  return coin(rng) ? ScalarKind::Int : ScalarKind::Float;
}

inline Expr zeroOf(ScalarKind kind) { return kind == ScalarKind::Float ? lit(0.0f) : lit(0); }

// The sum of a 1D array of scalars, as a one-element array.
inline Expr sumOf(Expr xs, ScalarKind kind) {
  return reduce(zeroOf(kind), lam2("a", "b", [](Expr a, Expr b) { return a + b; }), std::move(xs));
}

// [t] nested with the given lengths (outermost first).
inline Type nestedArray(Type t, const std::vector<int>& lengths) {
  for (auto it = lengths.rbegin(); it != lengths.rend(); ++it) t = arrayOf(t, *it);
  return t;
}

// x joined `times` times.
inline Expr joinTimes(Expr x, int times) {
  for (int i = 0; i < times; ++i) x = join(std::move(x));
  return x;
}

// Fails the property unless the rewritten definition has the original's type and computes its
// result on the same random inputs (within kRuleTolerance when `approximate`).
inline void checkRewriteKeepsResult(const Definition& original, const Definition& rewritten,
                                    std::mt19937_64& rng, bool approximate = false) {
  RC_ASSERT(typecheck(rewritten).type == typecheck(original).type);
  checkSameResult(original, rewritten, rng, approximate);
}

// Runs `property(rng, kind)` as a rapidcheck property (rng seeded by rapidcheck, kind a random
// int or float scalar kind); every case that returns counts as one application of `ruleName`.
// Reports the count with MESSAGE and requires at least 50.
inline void checkRuleApplications(
    const std::string& ruleName,
    const std::function<void(std::mt19937_64&, ScalarKind)>& property) {
  int applications = 0;
  CHECK(rc::check(ruleName, [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    const ScalarKind kind = randomKind(rng);
    property(rng, kind);
    ++applications;
  }));
  MESSAGE(ruleName << ": " << applications << " applications");
  CHECK(applications >= 50);
}

}  // namespace weft::testing
