// Counting and sampling the valid points of a parameter space (the LIFT paper's section 5.3).
//
// Parameter order. The paper sorts parameters topologically by their dependencies and breaks
// ties randomly. Here: a parameter whose range mentions another comes after it; among the
// parameters that may come next, the one whose constraints mention the fewest other parameters
// comes first, ties broken by name (deterministic, so a seed alone reproduces a run). Cheap,
// weakly linked parameters are fixed first; strongly linked ones later, when more of their
// constraints can be evaluated directly.
//
// Counting: a depth-first enumeration in that order. A parameter whose range depends on earlier
// ones iterates over that range evaluated for their values. At each level a value is kept only if the
// constraints that become fully assigned there hold (evaluated in C++); where the subtree
// below is large, Z3 also prunes values that cannot be completed. The enumeration stops after
// a budget of visited nodes or a cap on points: the count is then a lower bound.
//
// Sampling, with a seeded std::mt19937_64 (the same seed gives the same samples):
//   - spaces of at most `enumerationCap` points are enumerated and the samples drawn from the
//     list without replacement: exactly uniform over the valid points;
//   - larger spaces are sampled incrementally: for each parameter in order, a value is drawn
//     uniformly from its domain and kept if it can be completed (the constraints assigned so
//     far hold, and Z3 confirms the rest stays satisfiable), else it is struck out and another
//     is drawn. That is a uniform choice among the extendable values of each parameter
//     (results per prefix are cached), not uniform over points: a value with few completions
//     is as likely as one with many. Duplicates are retried up to a limit.
// Every sample is re-checked by ParameterSpace::violations (the original constraints evaluated
// in C++ with the full binding); a sample the solver accepted but the evaluator rejects throws
// std::logic_error (a bug).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <string>
#include <vector>

#include "explore/parameter_space.h"
#include "explore/z3_encoding.h"

namespace weft::explore {

struct SamplerOptions {
  uint64_t enumerationCap = 100000;  // spaces up to this many points are sampled exactly
  uint64_t nodeBudget = 4000000;     // visited nodes before counting gives up
  uint64_t z3PruneAbove = 32;        // use Z3 to prune a subtree larger than this (unconstrained)
  int duplicateRetriesPerSample = 50;
};

struct SpaceCount {
  uint64_t points = 0;  // valid points found
  bool exact = false;   // false: the space has more than `points` (budget or cap reached)
  uint64_t nodesVisited = 0;
};

struct SampleSet {
  std::vector<std::vector<int64_t>> points;  // values in the order of space.parameters
  std::string method;                        // "enumeration" or "incremental"
  bool spaceSmallerThanRequested = false;    // fewer valid points exist than were asked for
  bool duplicateLimitReached = false;        // incremental: gave up after too many duplicates
  std::optional<uint64_t> spaceSize;         // known when enumerated
  uint64_t solverChecks = 0;
  double seconds = 0;
};

class Sampler {
 public:
  // Checks the space is satisfiable: throws UnsatisfiableSpace naming the conflicting
  // constraints otherwise.
  explicit Sampler(const ParameterSpace& space, SamplerOptions options = {});
  ~Sampler();

  // Indices into space.parameters, in the order parameters are decided.
  const std::vector<int>& order() const { return order_; }
  // One line per parameter: its position, name and the parameters it is linked with.
  std::string describeOrder() const;

  // Counts valid points, up to `cap` points and options.nodeBudget visited nodes.
  SpaceCount count(uint64_t cap);
  // Every valid point, in enumeration order (nullopt if more than `cap`).
  std::optional<std::vector<std::vector<int64_t>>> enumerate(uint64_t cap);
  // Up to k unique valid points.
  SampleSet sample(size_t k, uint64_t seed);

  SpaceSolver& solver() { return *solver_; }

 private:
  // What is known about the values of one level under one prefix of earlier values.
  struct LevelCache {
    std::unordered_map<int64_t, bool> extendable;
    uint64_t knownBad = 0;
  };
  // The values a level can take once the earlier levels are bound: the static domain narrowed
  // by the parameter's own (dependent) range evaluated under `binding`.
  struct LevelDomain {
    int64_t lo = 0;      // Range: the first value
    uint64_t first = 0;  // other kinds: index of the first value in domainValues_
    uint64_t size = 0;
  };
  LevelDomain domainAt(size_t level, const ArithBinding& binding) const;
  int64_t valueAt(size_t level, const LevelDomain& domain, uint64_t index) const;
  bool enumerateFrom(size_t level, std::vector<int64_t>& values, ArithBinding& binding,
                     uint64_t cap, SpaceCount& counted,
                     std::vector<std::vector<int64_t>>* collect);
  bool acceptableAt(size_t level, const ArithBinding& binding) const;
  std::optional<std::vector<int64_t>> drawOne(std::mt19937_64& rng, uint64_t& attempts);
  std::vector<std::pair<int, int64_t>> assignment(size_t level,
                                                  const std::vector<int64_t>& values) const;
  void recheck(const std::vector<int64_t>& values) const;

  const ParameterSpace& space_;
  SamplerOptions options_;
  std::unique_ptr<SpaceSolver> solver_;
  std::vector<int> order_;
  std::vector<std::vector<int>> linked_;             // per parameter: linked parameters
  std::vector<std::vector<size_t>> completedAt_;     // per level: constraints fully assigned
  std::vector<bool> linkedBeyond_;                   // per level: a constraint spans it and later
  std::vector<uint64_t> subtreeSize_;                // per level: product of domains after it
  std::vector<std::vector<int64_t>> domainValues_;   // per level (non-range domains only)
  std::vector<std::pair<Arith, Arith>> bounds_;      // per level: range with sizes substituted
  uint64_t nodeBudget_ = 0;                          // of the enumeration under way
  std::map<std::vector<int64_t>, LevelCache> cache_;
};

}  // namespace weft::explore
