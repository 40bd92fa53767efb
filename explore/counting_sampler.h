// Exact counting and exactly uniform sampling of a parameter space, with C++ evaluation only
// (no solver): the fast path of explore/sampler.h.
//
// The valid points are the leaves of a tree that fixes one parameter per level in an order.
// At each level the candidate values of the parameter are
//   - its domain, narrowed by the constraints that mention it alone (filtered once), by its
//     range evaluated for the earlier values (a rule's σ <= windows per tile) and by the kept
//     constraints that bound it by the earlier values (p <= e, e < p, p = e with e free of p:
//     applied as bounds, not checked value by value), or
//   - when a kept constraint says that a linear form a*p + b of the parameter divides (or is a
//     modulus leaving 0 of) a quantity the earlier values fix, the divisors of that quantity
//     mapped back to p: the divisor set is enumerated directly instead of the whole range (a
//     quantity k*p + X with a | k counts as X - (k/a)*b, which a*p + b divides exactly when it
//     divides k*p + X);
// and a candidate is kept when every kept constraint whose last parameter it is holds
// (explore/compiled_constraint.h). The number of leaves below a node depends only on the
// earlier values that later levels read (the level's frontier), so counts are memoised per
// level and frontier values: a dynamic programme over the order. Independent groups of
// parameters (connected components of the constraint graph) need no special case: a level
// whose frontier is empty is counted once. A level whose candidates are only bounded (no
// check, no divisor set) and whose value no later level reads contributes (its candidate count)
// x (the count below one of them), found without visiting each value; sampling picks its value
// uniformly among the candidates. Padding parameters have such ranges (up to a size each, and
// often unread by the rest), where a walk over every value would cost as much as the size.
//
// Sampling descends from the root choosing each value with probability (leaves below it) /
// (leaves below the node): every leaf is equally likely.
//
// Relaxation. A constraint that mentions many parameters (a buffer's bytes read off the
// generated code mention all of them) makes every frontier after its first parameter large,
// so that the programme degenerates into plain enumeration. The planner therefore keeps the
// constraints of at most A parameters, trying A from the largest arity down, and takes the
// first plan whose estimated cost (a product of candidate counts over frontiers) is small and
// whose counting ends within a node budget. The other, relaxed, constraints are checked on each
// drawn point, which is rejected if one fails: a uniform draw from the relaxed space
// conditioned on the relaxed constraints is uniform over the valid space, so rejection keeps
// sampling exact; the acceptance rate estimates the valid size, and the relaxed count bounds it.
// The walk over the valid points (forEachValid) checks each relaxed constraint as soon as its
// last parameter is fixed and skips the subtree below when it fails, counting the subtree's
// relaxed points (known from the memo) against its budget, so that it visits and stops exactly
// as a point-by-point walk would. A level's constraints are checked cheapest first (shortest
// compiled program): the outcome is the same in any order.
//
// The order: parameters whose range mentions another come after it; among the orders that
// respect that, the one with the smallest estimated cost (all permutations up to 8
// parameters, greedy beyond), ties broken by the order of space.parameters (by name).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "explore/compiled_constraint.h"
#include "explore/parameter_space.h"

namespace weft::explore {

using PointCount = unsigned __int128;
std::string countToString(PointCount count);
double countToDouble(PointCount count);

struct CountingOptions {
  uint64_t nodeBudget = 4000000;  // candidate values examined while counting one plan
  double maxEstimatedCost = 2e8;  // plans estimated above this are not tried
  int64_t largestDivisorTarget = 1000000000000;  // divisor sets of larger numbers: iterate
  uint64_t largestListedDomain = 2000000;        // larger ranges are iterated, not listed
  int maxKeptArity = 1 << 30;  // relax every constraint on more parameters than this
};

class CountingSampler {
 public:
  // Plans and counts; ok() tells whether a plan fitted the budgets (why not: failure()).
  explicit CountingSampler(const ParameterSpace& space, CountingOptions options = {});

  bool ok() const { return ok_; }
  const std::string& failure() const { return failure_; }
  // Points satisfying the domains and the kept constraints: the valid count when nothing is
  // relaxed, an upper bound on it otherwise.
  PointCount relaxedCount() const { return total_; }
  bool exact() const { return relaxed_.empty(); }
  // Indices into space.constraints of the constraints checked by rejection.
  const std::vector<size_t>& relaxedConstraints() const { return relaxed_; }
  const std::vector<int>& order() const { return order_; }
  int keptArity() const { return keptArity_; }
  uint64_t nodesVisited() const { return nodes_; }
  // The plan in words: the order, the generators, the kept arity and relaxed constraints.
  std::string describePlan() const;

  // A point drawn uniformly from the relaxed space (values in parameter order); requires
  // ok() and relaxedCount() > 0.
  std::vector<int64_t> drawRelaxed(std::mt19937_64& rng);
  bool satisfiesRelaxed(const std::vector<int64_t>& point) const;
  bool satisfiesAll(const std::vector<int64_t>& point) const;

  enum class Walk { Complete, Stopped, OutOfBudget };
  // Visits the valid points (relaxed points that satisfy the relaxed constraints) in order,
  // skipping empty subtrees; stops when `visit` returns false (Stopped) or after `leafBudget`
  // relaxed points (OutOfBudget).
  Walk forEachValid(const std::function<bool(const std::vector<int64_t>&)>& visit,
                    uint64_t leafBudget);

 private:
  struct Generator {
    size_t constraint = 0;
    bool modulusForm = false;  // `x % (a*p + b) = 0` rather than `a*p + b | x`
    int64_t a = 1, b = 0;      // the linear form of the parameter
    CompiledArith target;      // the quantity it must divide
  };
  struct GeneratorEntry {  // a constraint that could generate a parameter's candidates
    size_t constraint = 0;
    bool modulusForm = false;
    int64_t a = 1, b = 0;
    Arith target;
    std::vector<int> targetSlots;
  };
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& key) const;
  };
  using Memo = std::unordered_map<std::vector<int64_t>, PointCount, KeyHash>;
  using Choices = std::vector<std::pair<int64_t, PointCount>>;  // value, cumulative count

  void findGenerators();
  bool plan(int keptArity);
  double estimateCost(const std::vector<int>& order) const;
  void analyse(const std::vector<int>& order);
  template <typename Visit>
  void candidates(size_t level, std::vector<int64_t>& values, Visit&& visit);
  // Whether kept constraint `c` bounds parameter `p` by the other parameters: one side is p
  // alone, the other does not mention it, the relation is =, <= or <. pOnLeft: p is the lhs.
  bool boundOn(size_t c, int p, bool& pOnLeft) const;
  // The level's candidate range [lo, hi] for the earlier values: the domain's bounds, its
  // range and its bounding constraints; false when empty or a bound is undefined.
  bool bounded(size_t level, const std::vector<int64_t>& values, int64_t& lo, int64_t& hi) const;
  // Whether the values of parameter p in a range can be counted and indexed without a walk:
  // its domain is listed, or every integer of the range.
  bool countableByRange(int p) const;
  // For a level whose candidates are its domain's values in [lo, hi] (free_ levels): how many,
  // and the index-th of them.
  PointCount candidateCount(size_t level, int64_t lo, int64_t hi) const;
  int64_t candidateAt(size_t level, int64_t lo, PointCount index) const;
  PointCount countFrom(size_t level, std::vector<int64_t>& values);
  std::vector<int64_t> keyAt(size_t level, const std::vector<int64_t>& values) const;
  const std::vector<int64_t>& divisorsOf(int64_t n);
  bool walk(size_t level, std::vector<int64_t>& values,
            const std::function<bool(const std::vector<int64_t>&)>& visit, uint64_t& leaves,
            uint64_t budget, Walk& result, bool prefixChecked);
  bool holdsAll(const std::vector<size_t>& constraints, const std::vector<int64_t>& values) const;
  // Orders constraints by the length of their compiled programs (the order they are checked).
  void sortByCost(std::vector<size_t>& constraints) const;

  const ParameterSpace& space_;
  CountingOptions options_;
  size_t n_ = 0;
  std::vector<CompiledConstraint> compiled_;  // per space constraint
  std::vector<int> arity_;                    // per space constraint
  std::vector<std::vector<int64_t>> listed_;  // per parameter: filtered domain (or empty)
  std::vector<bool> isListed_;
  std::vector<CompiledArith> lo_, hi_;    // per parameter: range with sizes substituted
  std::vector<std::vector<int>> before_;  // per parameter: range dependencies
  bool constantFalse_ = false;            // a constraint on no parameter fails
  std::vector<std::vector<GeneratorEntry>> generators_;  // per parameter

  // The plan.
  int keptArity_ = 0;
  std::vector<bool> kept_;  // per space constraint
  std::vector<size_t> relaxed_;
  // Per level: the relaxed constraints whose last parameter is decided there (the walk checks
  // them there).
  std::vector<std::vector<size_t>> relaxedAt_;
  std::vector<int> order_;                           // level -> parameter
  std::vector<std::vector<size_t>> checkAt_;         // per level: kept constraints completed there
  std::vector<std::optional<Generator>> generator_;  // per level
  // Per level: the kept constraints applied as bounds on its parameter (not in checkAt_), with
  // whether the parameter is their lhs.
  std::vector<std::vector<std::pair<size_t, bool>>> boundsAt_;
  // Per level: counted without visiting its values (see the file comment).
  std::vector<bool> free_;
  std::vector<std::vector<int>> frontier_;           // per level: parameters the rest reads
  std::vector<Memo> memo_;
  std::vector<std::unordered_map<std::vector<int64_t>, Choices, KeyHash>> choices_;
  std::unordered_map<int64_t, std::vector<int64_t>> divisors_;
  PointCount total_ = 0;
  uint64_t nodes_ = 0;
  uint64_t budget_ = 0;
  bool ok_ = false;
  std::string failure_;
};

}  // namespace weft::explore
