// Counting and sampling the valid points of a parameter space (the LIFT paper's section 5.3).
//
// Parameter order. The paper sorts parameters topologically by their dependencies and breaks
// ties randomly. Here: a parameter whose range mentions another comes after it; among the
// parameters that may come next, the one whose constraints mention the fewest other parameters
// comes first, ties broken by name (deterministic, so a seed alone reproduces a run). Cheap,
// weakly linked parameters are fixed first; strongly linked ones later, when more of their
// constraints can be evaluated directly.
//
// Counting (count()): with a counting plan (below), the exact count when nothing is relaxed;
// otherwise a walk over the relaxed points that checks the relaxed constraints, exact if it ends
// within the node budget and the cap, else a lower bound, with the relaxed count as upper bound
// and an estimate from the acceptance rate of uniform draws. When that walk lists a space small
// enough to be sampled by enumeration, its points are kept for the next sample(), which then
// does not walk again (a Sampler that counted is meant to be kept for sampling). Without a plan
// (the older method, also used for order() and describeOrder()): a depth-first enumeration in that
// order. A parameter whose range depends on earlier ones iterates over that range evaluated for
// their values. At each level a value is kept only if the constraints that become fully assigned
// there hold (evaluated in C++); where the subtree below is large, Z3 also prunes values that
// cannot be completed. The enumeration stops after a budget of visited nodes, a budget of solver
// checks or a cap on points: the count is then a lower bound.
//
// Sampling, with a seeded std::mt19937_64 (the same seed gives the same samples), by the first
// method that applies:
//   - counting (explore/counting_sampler.h, the default): the valid points are counted by a
//     memoised dynamic programme with C++ evaluation only, constraints on many parameters
//     relaxed and checked by rejection; spaces whose relaxed count is at most `enumerationCap`
//     are listed completely and the samples drawn from the list without replacement
//     ("enumeration"), larger ones are sampled by weighted descent ("counting", or
//     "counting+rejection" when constraints are relaxed). Both are exactly uniform over the
//     valid points; duplicates are discarded, which keeps a uniform sample without
//     replacement. If rejection accepts too rarely, the remaining samples are drawn
//     incrementally (the method then ends in "+incremental");
//   - without a counting plan (too costly, or disabled by options): spaces of at most
//     `enumerationCap` points are enumerated by the solver-pruned enumeration below, larger
//     ones sampled incrementally: for each parameter in order, a value is drawn uniformly from
//     its domain and kept if it can be completed (the constraints assigned so far hold, and Z3
//     confirms the rest stays satisfiable), else it is struck out and another is drawn. That is
//     a uniform choice among the extendable values of each parameter (results per prefix are
//     cached), not uniform over points. Duplicates are retried up to a limit.
// Launch sizes (parameters with launchKernel >= 0, explore/launch_parameters.h) are a second
// stage: the other parameters are counted and sampled as above over the space without them,
// and each sampled point gets, per kernel, local sizes drawn uniformly among those valid for it
// (a small depth-first enumeration: a few powers of two per dimension). Points stay unique
// since their first-stage parts are. So sampling is uniform over the first-stage points and
// uniform over the launch sizes given those (not weighted by how many launch sizes a point
// has). count() counts the first-stage points (SpaceCount::launchSizesNotCounted), plus the full
// points when the first stage is small (withLaunchSizes). When more samples are asked for than
// the first stage has, the full points are listed and sampled without replacement instead.
// Non-emptiness: a space is non-empty when the counting sampler's walk finds a point that the
// C++ re-check accepts (no solver needed); otherwise Z3 decides, and proves a space empty with
// the unsat core naming the conflict. The Z3 encoding is only built when something needs it.
// Every sample is re-checked by ParameterSpace::violations (the original constraints evaluated
// in C++ with the full binding); a sample the solver accepted but the evaluator rejects throws
// std::logic_error (a bug).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "explore/counting_sampler.h"
#include "explore/parameter_space.h"
#include "explore/z3_encoding.h"

namespace weft::explore {

struct SamplerOptions {
  uint64_t enumerationCap = 100000;  // spaces up to this many points are sampled exactly
  uint64_t nodeBudget = 4000000;     // visited nodes before counting gives up
  // Solver checks (Z3 pruning) before the enumeration gives up: a node that asks the solver
  // costs far more than one evaluated in C++, so the node budget alone does not bound the time.
  uint64_t enumerationSolverChecks = 20000;
  uint64_t z3PruneAbove = 32;        // use Z3 to prune a subtree larger than this (unconstrained)
  int duplicateRetriesPerSample = 50;
  bool counting = true;  // use the counting sampler when a plan fits its budgets
  CountingOptions countingOptions;
  // Counting with rejection gives up (and goes on incrementally) after this many draws per
  // requested sample (plus 100000).
  uint64_t rejectionDrawsPerSample = 2000;
  uint64_t estimateDraws = 20000;  // relaxed draws that estimate the valid size in count()
  // Called in the calling process as the distinct spaces of many structures are counted
  // (explore/structure_sampling.h), with the number counted so far and the number to count:
  // progress for a preparation that can take a while. Not part of what is sampled.
  std::function<void(size_t counted, size_t spaces)> onSpaceCounted;
};

struct SpaceCount {
  uint64_t points = 0;  // valid points found
  bool exact = false;   // false: the space has more than `points` (budget or cap reached)
  uint64_t nodesVisited = 0;
  std::string method;                // "counting", "counting+walk" or "enumeration"
  std::optional<double> upperBound;  // the relaxed count, when constraints were relaxed
  std::optional<double> estimate;    // relaxed count x acceptance rate of uniform draws
  // The space has launch-size parameters and `points` counts the points without them (each
  // has one or more valid launch sizes): what sampling is uniform over.
  bool launchSizesNotCounted = false;
  // With launch-size parameters and a small first stage (at most 5000 points): the number of
  // full points, every valid launch size counted.
  std::optional<uint64_t> withLaunchSizes;
};

struct SampleSet {
  std::vector<std::vector<int64_t>> points;  // values in the order of space.parameters
  // "enumeration", "counting", "counting+rejection" or "incremental" (see above)
  std::string method;
  bool spaceSmallerThanRequested = false;  // fewer valid points exist than were asked for
  bool duplicateLimitReached = false;      // incremental: gave up after too many duplicates
  std::optional<uint64_t> spaceSize;       // known when enumerated or counted exactly
  std::optional<double> spaceUpperBound;   // counting with rejection: the relaxed count
  std::optional<double> spaceEstimate;     // ... times the acceptance rate
  uint64_t draws = 0;                      // counting: points drawn (accepted or not)
  uint64_t valuesTried = 0;                // incremental: parameter values drawn and checked
  uint64_t solverChecks = 0;
  double seconds = 0;
};

class Sampler {
 public:
  // Checks the space is non-empty (see the file comment): throws UnsatisfiableSpace naming the
  // conflicting constraints otherwise.
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

  // The Z3 encoding of the space, made on first use (the counting sampler often proves the
  // space non-empty with a point, and samples it, without the solver).
  SpaceSolver& solver();
  // The counting sampler, planned on first use; null when disabled or no plan fits. With
  // launch-size parameters: the first stage's (over the space without them).
  CountingSampler* counting();

 private:
  // What is known about the values of one level under one prefix of earlier values.
  struct LevelCache {
    std::unordered_map<int64_t, bool> extendable;
    uint64_t knownBad = 0;
    // divisorsOfDomain under this prefix, once decided (nullopt: the level's whole domain).
    bool divisorsDecided = false;
    std::optional<std::vector<int64_t>> divisors;
  };
  // The values a level can take once the earlier levels are bound: the static domain narrowed
  // by the parameter's own (dependent) range evaluated under `binding`.
  struct LevelDomain {
    int64_t lo = 0;      // unlisted ranges: the first value
    uint64_t first = 0;  // listed domains: index of the first value in domainValues_
    uint64_t size = 0;
  };
  // checkNonEmpty false: the caller checks (the launch-size stage's first-stage sampler).
  Sampler(const ParameterSpace& space, SamplerOptions options, bool checkNonEmpty);
  // A valid point found without the solver, if the counting sampler finds one quickly.
  std::optional<std::vector<int64_t>> witness();
  // Throws UnsatisfiableSpace (or SolverUnknown) unless the space has a valid point.
  void requireNonEmpty();
  LevelDomain domainAt(size_t level, const ArithBinding& binding) const;
  int64_t valueAt(size_t level, const LevelDomain& domain, uint64_t index) const;
  // For draws (drawOne): the values of `domain` that divide the level's dividends (constraints
  // p | X whose X earlier levels decide: a split of a padded length) evaluated under `binding`,
  // when listing them is cheaper than drawing from the whole domain; else nullopt. The
  // enumeration keeps the whole domain, where the node budget bounds the work.
  std::optional<std::vector<int64_t>> divisorsOfDomain(size_t level, const LevelDomain& domain,
                                                       const ArithBinding& binding) const;
  bool enumerateFrom(size_t level, std::vector<int64_t>& values, ArithBinding& binding,
                     uint64_t cap, SpaceCount& counted, std::vector<std::vector<int64_t>>* collect);
  // Starts an enumeration's budgets (nodes, solver checks).
  void startEnumeration();
  bool acceptableAt(size_t level, const ArithBinding& binding) const;
  std::optional<std::vector<int64_t>> drawOne(std::mt19937_64& rng, uint64_t& attempts);
  std::vector<std::pair<int, int64_t>> assignment(size_t level,
                                                  const std::vector<int64_t>& values) const;
  void recheck(const std::vector<int64_t>& values) const;
  void sampleByCounting(CountingSampler& exact, size_t k, std::mt19937_64& rng, SampleSet& result);
  // Draws points one by one with drawOne until result holds k, skipping those in seen (and adding
  // the new ones to it); stops early at too many duplicates in a row (duplicateLimitReached).
  // Returns false after too many dead ends (draws that found no point).
  bool drawIncrementally(size_t k, std::mt19937_64& rng, std::set<std::vector<int64_t>>& seen,
                         SampleSet& result);

  // The launch-size stage (see the file comment). launchGroups_ holds, per kernel with open
  // local sizes, its parameters (indices into space_.parameters) and the constraints that
  // mention them; base_ samples the space without them (baseSpace_), baseIndex_ maps its
  // parameters back.
  struct LaunchGroup {
    std::vector<int> params;
    std::vector<size_t> constraints;
  };
  void splitLaunchStage();
  std::vector<int64_t> fromBase(const std::vector<int64_t>& basePoint) const;
  // Visits the first-stage points (the counting sampler's walk, else the solver-pruned
  // enumeration) until `visit` returns false; false if they could not all be listed.
  bool forEachBasePoint(const std::function<bool(const std::vector<int64_t>&)>& visit);
  // Every valid assignment of group g's parameters given the rest of `point` (their slots in
  // `point` are ignored), each as values in the order of the group's params.
  std::vector<std::vector<int64_t>> launchChoices(const std::vector<int64_t>& point,
                                                  const LaunchGroup& group) const;
  std::unique_ptr<ParameterSpace> baseSpace_;
  std::unique_ptr<Sampler> base_;
  std::vector<int> baseIndex_;
  std::vector<LaunchGroup> launchGroups_;

  const ParameterSpace& space_;
  SamplerOptions options_;
  std::unique_ptr<SpaceSolver> solver_;
  std::vector<int> order_;
  std::vector<std::vector<int>> linked_;            // per parameter: linked parameters
  std::vector<std::vector<size_t>> completedAt_;    // per level: constraints fully assigned
  std::vector<bool> linkedBeyond_;                  // per level: a constraint spans it and later
  std::vector<uint64_t> subtreeSize_;               // per level: product of domains after it
  // Per level: whether its domain is listed in domainValues_ (powers of two, switches, the
  // divisors of a size the parameter must divide) rather than a range from lo to hi.
  std::vector<bool> listed_;
  std::vector<std::vector<int64_t>> domainValues_;  // per level (listed domains only)
  std::vector<std::pair<Arith, Arith>> bounds_;     // per level: range with sizes substituted
  // Per level: the X of each constraint p | X on its parameter p when earlier levels decide
  // them all and one is not a constant (sizes substituted); empty otherwise.
  std::vector<std::vector<Arith>> dividends_;
  uint64_t nodeBudget_ = 0;                         // of the enumeration under way
  uint64_t solverChecksBefore_ = 0;                 // the solver's checks when it started
  std::map<std::vector<int64_t>, LevelCache> cache_;
  std::unique_ptr<CountingSampler> counting_;
  bool countingPlanned_ = false;
  // The valid points count() walked (relaxed constraints, a space small enough to be listed):
  // the next sample() lists them from here instead of walking again.
  std::optional<std::vector<std::vector<int64_t>>> walkedValidPoints_;
};

}  // namespace weft::explore
