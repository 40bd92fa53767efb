// Counting and sampling parameter spaces (explore/sampler.h): the parameter order, the
// depth-first enumeration with C++ evaluation and Z3 pruning, exact sampling from enumerated
// spaces and incremental sampling (uniform among extendable values per parameter) of larger
// ones, and the independent re-check of every sample.
#include "explore/sampler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <set>
#include <stdexcept>

namespace weft::explore {

namespace {

// First stages up to this many points have their launch choices listed (count's
// withLaunchSizes, and sampling more points than the first stage has).
constexpr uint64_t kLaunchSumLimit = 5000;

std::set<int> parametersOf(const ParameterSpace& space, const Constraint& c) {
  std::set<int> out;
  for (const Arith& v : c.vars()) {
    int index = space.indexOf(v.varName());
    if (index >= 0) out.insert(index);
  }
  return out;
}

// X when `c` says that the parameter named `p` divides X (p | X) and X does not mention p.
std::optional<Arith> dividendOf(const Constraint& c, const std::string& p) {
  if (c.relation == Relation::Divides && c.lhs.isVar() && c.lhs.varName() == p &&
      !c.rhs.mentions(p)) {
    return c.rhs;
  }
  return std::nullopt;
}

// The divisors of `n` > 0 in [lo, hi], in increasing order, or nullopt when listing them costs
// more than the range they would replace (about sqrt(n) trial divisions against hi - lo + 1).
std::optional<std::vector<int64_t>> divisorsIn(int64_t n, int64_t lo, int64_t hi) {
  if (n <= 0 || hi < lo) return std::nullopt;
  const int64_t root = static_cast<int64_t>(std::sqrt(static_cast<double>(n))) + 1;
  if (root >= hi - lo + 1) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t d : divisorsOf(n)) {
    if (d >= lo && d <= hi) out.push_back(d);
  }
  return out;
}

// A uniform sample of k of `points` without replacement (a partial Fisher-Yates shuffle: the
// first k after it), recorded in `result` with the space's size.
void takeUniformSample(std::vector<std::vector<int64_t>> points, size_t k, std::mt19937_64& rng,
                       SampleSet& result) {
  result.spaceSize = points.size();
  const size_t take = std::min(k, points.size());
  result.spaceSmallerThanRequested = k > points.size();
  for (size_t i = 0; i < take; ++i) {
    std::uniform_int_distribution<size_t> pick(i, points.size() - 1);
    std::swap(points[i], points[pick(rng)]);
  }
  points.resize(take);
  result.points = std::move(points);
}

}  // namespace

Sampler::Sampler(const ParameterSpace& space, SamplerOptions options)
    : Sampler(space, options, /*checkNonEmpty=*/true) {}

Sampler::Sampler(const ParameterSpace& space, SamplerOptions options, bool checkNonEmpty)
    : space_(space), options_(options) {
  const size_t n = space.parameters.size();

  // Links between parameters (sharing a constraint) and range dependencies.
  std::vector<std::set<int>> linked(n);
  std::vector<std::set<int>> before(n);  // parameters that must be decided earlier
  std::vector<std::set<int>> constraintParams;
  for (const SpaceConstraint& c : space.constraints) {
    std::set<int> params = parametersOf(space, c.constraint);
    for (int a : params) {
      for (int b : params) {
        if (a != b) linked[a].insert(b);
      }
    }
    constraintParams.push_back(params);
  }
  for (size_t i = 0; i < n; ++i) {
    const Arith& v = space.parameters[i].variable;
    std::vector<Arith> boundVars = v.varLo().vars();
    if (v.varHi()) {
      for (const Arith& b : v.varHi()->vars()) boundVars.push_back(b);
    }
    for (const Arith& b : boundVars) {
      int index = space.indexOf(b.varName());
      if (index >= 0 && index != static_cast<int>(i)) before[i].insert(index);
    }
  }
  std::vector<bool> placed(n, false);
  while (order_.size() < n) {
    int best = -1;
    for (size_t i = 0; i < n; ++i) {
      if (placed[i]) continue;
      bool ready =
          std::all_of(before[i].begin(), before[i].end(), [&](int b) { return placed[b]; });
      if (!ready) continue;
      if (best < 0 || linked[i].size() < linked[best].size()) best = static_cast<int>(i);
    }
    if (best < 0) {  // a cycle of range dependencies: buildParameterSpace rejects those
      for (size_t i = 0; i < n && best < 0; ++i) {
        if (!placed[i]) best = static_cast<int>(i);
      }
    }
    placed[best] = true;
    order_.push_back(best);
  }
  for (size_t i = 0; i < n; ++i) {
    linked_.push_back(std::vector<int>(linked[i].begin(), linked[i].end()));
  }

  std::vector<size_t> levelOf(n);
  for (size_t level = 0; level < n; ++level) levelOf[order_[level]] = level;
  completedAt_.assign(std::max<size_t>(n, 1), {});
  linkedBeyond_.assign(n, false);
  for (size_t c = 0; c < constraintParams.size(); ++c) {
    size_t first = n, last = 0;
    for (int p : constraintParams[c]) {
      first = std::min(first, levelOf[p]);
      last = std::max(last, levelOf[p]);
    }
    if (constraintParams[c].empty()) first = last = 0;
    completedAt_[last].push_back(c);
    for (size_t level = first; level < last; ++level) linkedBeyond_[level] = true;
  }
  subtreeSize_.assign(n, 1);
  for (size_t level = n; level-- > 1;) {
    uint64_t size = space.parameters[order_[level]].domainSize();
    uint64_t below = subtreeSize_[level];
    subtreeSize_[level - 1] = (size != 0 && below > UINT64_MAX / size) ? UINT64_MAX : below * size;
  }
  for (size_t level = 0; level < n; ++level) {
    const Parameter& p = space.parameters[order_[level]];
    domainValues_.push_back(p.kind == DomainKind::Range ? std::vector<int64_t>{} : p.values());
    ArithSubstitution sizes;
    for (const auto& [name, value] : space.sizes) sizes[name] = Arith(value);
    bounds_.push_back({substitute(p.variable.varLo(), sizes),
                       p.variable.varHi() ? substitute(*p.variable.varHi(), sizes) : Arith(p.hi)});
    // A size the parameter must divide (p | N, a split of a length): its domain is the
    // divisors of N, listed once, where they are fewer than the range. A length of millions
    // has a few dozen, which uniform draws from the range would rarely hit.
    int64_t dividend = 0;
    dividends_.push_back({});
    for (const SpaceConstraint& c : space.constraints) {
      std::optional<Arith> x = dividendOf(c.constraint, p.name);
      if (!x) continue;
      const Arith value = substitute(*x, sizes);
      dividends_.back().push_back(value);
      const std::optional<int64_t> constant = value.constant();
      if (constant && *constant != 0 && *constant != INT64_MIN) {
        dividend = std::gcd(dividend, std::abs(*constant));
      }
    }
    // Only dividends that earlier levels decide narrow draws (divisorsOfDomain).
    const bool decided =
        std::all_of(dividends_.back().begin(), dividends_.back().end(), [&](const Arith& x) {
          const std::vector<Arith> vars = x.vars();
          return std::all_of(vars.begin(), vars.end(), [&](const Arith& v) {
            const int index = space.indexOf(v.varName());
            return index >= 0 && levelOf[static_cast<size_t>(index)] < level;
          });
        });
    const bool constantOnly = std::all_of(dividends_.back().begin(), dividends_.back().end(),
                                          [](const Arith& x) { return x.isConstant(); });
    if (!decided || constantOnly) dividends_.back().clear();
    listed_.push_back(p.kind != DomainKind::Range);
    if (dividend > 0 && p.kind == DomainKind::Range) {
      if (std::optional<std::vector<int64_t>> divisors = divisorsIn(dividend, p.lo, p.hi)) {
        domainValues_.back() = std::move(*divisors);
        listed_.back() = true;
      }
    }
  }
  splitLaunchStage();
  if (checkNonEmpty) requireNonEmpty();
}

Sampler::~Sampler() = default;

SpaceSolver& Sampler::solver() {
  if (!solver_) solver_ = std::make_unique<SpaceSolver>(space_);
  return *solver_;
}

std::optional<std::vector<int64_t>> Sampler::witness() {
  // The first valid point of the counting sampler's walk (the first stage's, completed with
  // the first valid launch sizes); a bounded walk, as the relaxed constraints may reject many.
  constexpr uint64_t kWitnessLeafBudget = 100000;
  CountingSampler* exact = counting();
  if (!exact || (exact->exact() && exact->relaxedCount() == 0)) return std::nullopt;
  std::optional<std::vector<int64_t>> found;
  exact->forEachValid(
      [&](const std::vector<int64_t>& point) {
        found = point;
        return false;
      },
      kWitnessLeafBudget);
  if (!found || !base_) return found;
  std::vector<int64_t> point = fromBase(*found);
  for (const LaunchGroup& group : launchGroups_) {
    std::vector<std::vector<int64_t>> choices = launchChoices(point, group);
    if (choices.empty()) return std::nullopt;
    for (size_t d = 0; d < choices.front().size(); ++d) {
      point[static_cast<size_t>(group.params[d])] = choices.front()[d];
    }
  }
  return point;
}

void Sampler::requireNonEmpty() {
  // A point that the C++ evaluation of the original constraints accepts proves the space
  // non-empty without the solver; otherwise (no counting plan, no point found, or an empty
  // count) Z3 decides, and names the conflicting constraints when the space is empty.
  if (std::optional<std::vector<int64_t>> point = witness()) {
    if (space_.violations(*point).empty()) return;
  }
  solver().requireSatisfiable();
}

void Sampler::splitLaunchStage() {
  std::map<int, LaunchGroup> groups;
  std::map<int, int> kernelOfParam;
  for (size_t i = 0; i < space_.parameters.size(); ++i) {
    int kernel = space_.parameters[i].launchKernel;
    if (kernel < 0) continue;
    groups[kernel].params.push_back(static_cast<int>(i));
    kernelOfParam[static_cast<int>(i)] = kernel;
  }
  if (groups.empty()) return;
  baseSpace_ = std::make_unique<ParameterSpace>();
  ParameterSpace& base = *baseSpace_;
  base.definitionName = space_.definitionName;
  base.sizes = space_.sizes;
  base.droppedAsTrue = space_.droppedAsTrue;
  base.deviceName = space_.deviceName;
  base.hardwareConstraints = space_.hardwareConstraints;
  base.hardwareNote = space_.hardwareNote;
  base.notes = space_.notes;
  for (size_t i = 0; i < space_.parameters.size(); ++i) {
    if (kernelOfParam.count(static_cast<int>(i))) continue;
    base.parameters.push_back(space_.parameters[i]);
    baseIndex_.push_back(static_cast<int>(i));
  }
  for (size_t c = 0; c < space_.constraints.size(); ++c) {
    int kernel = -1;
    for (int param : parametersOf(space_, space_.constraints[c].constraint)) {
      auto found = kernelOfParam.find(param);
      if (found != kernelOfParam.end()) kernel = found->second;
    }
    if (kernel < 0) {
      base.constraints.push_back(space_.constraints[c]);
    } else {
      groups[kernel].constraints.push_back(c);
    }
  }
  for (auto& [kernel, group] : groups) launchGroups_.push_back(std::move(group));
  base_ = std::unique_ptr<Sampler>(new Sampler(base, options_, /*checkNonEmpty=*/false));
}

std::vector<int64_t> Sampler::fromBase(const std::vector<int64_t>& basePoint) const {
  std::vector<int64_t> point(space_.parameters.size(), 1);
  for (size_t i = 0; i < basePoint.size(); ++i) {
    point[static_cast<size_t>(baseIndex_[i])] = basePoint[i];
  }
  return point;
}

bool Sampler::forEachBasePoint(const std::function<bool(const std::vector<int64_t>&)>& visit) {
  if (CountingSampler* exact = base_->counting()) {
    return exact->forEachValid(visit, options_.nodeBudget) != CountingSampler::Walk::OutOfBudget;
  }
  auto all = base_->enumerate(options_.enumerationCap);
  if (!all) return false;
  for (const std::vector<int64_t>& basePoint : *all) {
    if (!visit(basePoint)) break;
  }
  return true;
}

std::vector<std::vector<int64_t>> Sampler::launchChoices(const std::vector<int64_t>& point,
                                                         const LaunchGroup& group) const {
  // Each constraint is checked as soon as the last of the group's parameters it mentions is
  // assigned (depth-first, so divisibility prunes every dimension on its own).
  std::vector<std::vector<size_t>> checkAt(group.params.size());
  for (size_t c : group.constraints) {
    std::set<int> mentioned = parametersOf(space_, space_.constraints[c].constraint);
    size_t last = 0;
    for (size_t d = 0; d < group.params.size(); ++d) {
      if (mentioned.count(group.params[d])) last = d;
    }
    checkAt[last].push_back(c);
  }
  ArithBinding binding = space_.binding(point);
  std::vector<std::vector<int64_t>> choices;
  std::vector<int64_t> values(group.params.size(), 0);
  std::function<void(size_t)> walk = [&](size_t depth) {
    if (depth == group.params.size()) {
      choices.push_back(values);
      return;
    }
    const Parameter& p = space_.parameters[static_cast<size_t>(group.params[depth])];
    for (int64_t value : p.values()) {
      binding[p.name] = value;
      values[depth] = value;
      bool holds = true;
      for (size_t c : checkAt[depth]) {
        std::optional<bool> result = space_.constraints[c].constraint.evaluate(binding);
        if (!result || !*result) {
          holds = false;
          break;
        }
      }
      if (holds) walk(depth + 1);
    }
  };
  walk(0);
  return choices;
}

Sampler::LevelDomain Sampler::domainAt(size_t level, const ArithBinding& binding) const {
  const Parameter& p = space_.parameters[order_[level]];
  int64_t lo = p.lo, hi = p.hi;
  // Earlier levels bind every parameter the bounds mention (the order guarantees it); an
  // unevaluable bound keeps the static one.
  if (auto dynamicLo = tryEvaluate(bounds_[level].first, binding)) lo = std::max(lo, *dynamicLo);
  if (auto dynamicHi = tryEvaluate(bounds_[level].second, binding)) hi = std::min(hi, *dynamicHi);
  LevelDomain domain;
  if (hi < lo) return domain;
  if (!listed_[level]) {
    domain.lo = lo;
    domain.size = static_cast<uint64_t>(hi - lo) + 1;
    return domain;
  }
  const std::vector<int64_t>& values = domainValues_[level];
  auto begin = std::lower_bound(values.begin(), values.end(), lo);
  auto end = std::upper_bound(values.begin(), values.end(), hi);
  domain.first = static_cast<uint64_t>(begin - values.begin());
  domain.size = end > begin ? static_cast<uint64_t>(end - begin) : 0;
  return domain;
}

std::optional<std::vector<int64_t>> Sampler::divisorsOfDomain(size_t level,
                                                              const LevelDomain& domain,
                                                              const ArithBinding& binding) const {
  if (dividends_[level].empty() || domain.size == 0) return std::nullopt;
  int64_t dividend = 0;
  for (const Arith& x : dividends_[level]) {
    const std::optional<int64_t> value = tryEvaluate(x, binding);
    if (!value || *value == INT64_MIN) return std::nullopt;
    dividend = std::gcd(dividend, std::abs(*value));
  }
  if (dividend == 0) return std::nullopt;  // every value divides 0
  // Listing them must cost less than the draws they save (about the domain's size).
  if (static_cast<double>(domain.size) < std::sqrt(static_cast<double>(dividend))) {
    return std::nullopt;
  }
  const Parameter& p = space_.parameters[order_[level]];
  const int64_t lo = valueAt(level, domain, 0), hi = valueAt(level, domain, domain.size - 1);
  std::optional<std::vector<int64_t>> divisors = divisorsIn(dividend, lo, hi);
  if (!divisors) return std::nullopt;
  std::vector<int64_t> inDomain;
  // A listed domain (in increasing order) must hold the divisor too.
  const auto first = domainValues_[level].begin() + static_cast<ptrdiff_t>(domain.first);
  for (int64_t d : *divisors) {
    const bool inListed = !listed_[level] ||
                          std::binary_search(first, first + static_cast<ptrdiff_t>(domain.size), d);
    if (inListed && p.contains(d)) inDomain.push_back(d);
  }
  return inDomain;
}

int64_t Sampler::valueAt(size_t level, const LevelDomain& domain, uint64_t index) const {
  if (!listed_[level]) return domain.lo + static_cast<int64_t>(index);
  return domainValues_[level][domain.first + index];
}

std::string Sampler::describeOrder() const {
  std::string text;
  if (base_) {
    text = base_->describeOrder();
    size_t level = baseIndex_.size();
    for (const LaunchGroup& group : launchGroups_) {
      for (int p : group.params) {
        text += std::to_string(++level) + ". " + space_.parameters[p].name +
                " (per sampled point: uniform among the valid local sizes of kernel " +
                std::to_string(space_.parameters[p].launchKernel) + ")\n";
      }
    }
    return text;
  }
  for (size_t level = 0; level < order_.size(); ++level) {
    int p = order_[level];
    text += std::to_string(level + 1) + ". " + space_.parameters[p].name + " (linked with: ";
    if (linked_[p].empty()) text += "none";
    for (size_t i = 0; i < linked_[p].size(); ++i) {
      text += (i ? ", " : "") + space_.parameters[linked_[p][i]].name;
    }
    text += ")\n";
  }
  return text;
}

bool Sampler::acceptableAt(size_t level, const ArithBinding& binding) const {
  if (completedAt_.empty() || level >= completedAt_.size()) return true;
  for (size_t c : completedAt_[level]) {
    std::optional<bool> holds = space_.constraints[c].constraint.evaluate(binding);
    if (!holds || !*holds) return false;
  }
  return true;
}

std::vector<std::pair<int, int64_t>> Sampler::assignment(size_t level,
                                                         const std::vector<int64_t>& values) const {
  std::vector<std::pair<int, int64_t>> out;
  for (size_t l = 0; l <= level; ++l) out.push_back({order_[l], values[order_[l]]});
  return out;
}

void Sampler::startEnumeration() {
  nodeBudget_ = options_.nodeBudget;
  solverChecksBefore_ = solver_ ? solver_->checks() : 0;
}

bool Sampler::enumerateFrom(size_t level, std::vector<int64_t>& values, ArithBinding& binding,
                            uint64_t cap, SpaceCount& counted,
                            std::vector<std::vector<int64_t>>* collect) {
  const size_t n = order_.size();
  if (level == n) {
    if (n == 0 && !acceptableAt(0, binding)) return true;
    ++counted.points;
    if (collect) collect->push_back(values);
    return counted.points <= cap;
  }
  const Parameter& p = space_.parameters[order_[level]];
  const LevelDomain domain = domainAt(level, binding);
  for (uint64_t index = 0; index < domain.size; ++index) {
    if (++counted.nodesVisited > nodeBudget_) return false;
    int64_t v = valueAt(level, domain, index);
    values[order_[level]] = v;
    binding[p.name] = v;
    if (!acceptableAt(level, binding)) continue;
    if (level + 1 < n && linkedBeyond_[level] && subtreeSize_[level] > options_.z3PruneAbove) {
      if (solver().checks() >= solverChecksBefore_ + options_.enumerationSolverChecks) {
        return false;
      }
      if (!solver().extendable(assignment(level, values))) continue;
    }
    if (!enumerateFrom(level + 1, values, binding, cap, counted, collect)) return false;
  }
  binding.erase(p.name);
  return true;
}

CountingSampler* Sampler::counting() {
  if (base_) return base_->counting();
  if (!countingPlanned_) {
    countingPlanned_ = true;
    if (options_.counting) {
      counting_ = std::make_unique<CountingSampler>(space_, options_.countingOptions);
    }
  }
  return counting_ && counting_->ok() ? counting_.get() : nullptr;
}

namespace {

std::optional<uint64_t> toUint64(PointCount count) {
  if (count > static_cast<PointCount>(UINT64_MAX)) return std::nullopt;
  return static_cast<uint64_t>(count);
}

}  // namespace

SpaceCount Sampler::count(uint64_t cap) {
  if (base_) {
    // The first stage's count (what sampling is uniform over); the full points with every
    // valid launch size are summed only for small first stages.
    SpaceCount counted = base_->count(cap);
    counted.launchSizesNotCounted = true;
    if (counted.exact && counted.points <= kLaunchSumLimit) {
      uint64_t total = 0;
      bool listed = forEachBasePoint([&](const std::vector<int64_t>& basePoint) {
        std::vector<int64_t> point = fromBase(basePoint);
        uint64_t combinations = 1;
        for (const LaunchGroup& group : launchGroups_) {
          combinations *= launchChoices(point, group).size();
        }
        total += combinations;
        return true;
      });
      if (listed) counted.withLaunchSizes = total;
    }
    return counted;
  }
  if (CountingSampler* exact = counting()) {
    SpaceCount counted;
    counted.nodesVisited = exact->nodesVisited();
    if (exact->exact()) {
      counted.method = "counting";
      auto points = toUint64(exact->relaxedCount());
      counted.points = points ? *points : UINT64_MAX;
      counted.exact = points.has_value();
      return counted;
    }
    // Relaxed constraints: walk the relaxed points (up to the node budget), and estimate.
    counted.method = "counting+walk";
    counted.upperBound = countToDouble(exact->relaxedCount());
    uint64_t found = 0;
    // Spaces that sampling would list in full keep the valid points walked here.
    const bool keep = exact->relaxedCount() <= options_.enumerationCap;
    std::vector<std::vector<int64_t>> listed;
    CountingSampler::Walk walked = exact->forEachValid(
        [&](const std::vector<int64_t>& point) {
          if (keep) listed.push_back(point);
          return ++found <= cap;
        },
        options_.nodeBudget);
    counted.exact = walked == CountingSampler::Walk::Complete;
    if (counted.exact && keep) walkedValidPoints_ = std::move(listed);
    counted.points = std::min(found, cap);
    if (counted.exact) {
      counted.estimate = static_cast<double>(found);
    } else if (exact->relaxedCount() > 0) {
      std::mt19937_64 rng(0x5eed);
      uint64_t accepted = 0;
      for (uint64_t i = 0; i < options_.estimateDraws; ++i) {
        if (exact->satisfiesRelaxed(exact->drawRelaxed(rng))) ++accepted;
      }
      counted.estimate = *counted.upperBound * static_cast<double>(accepted) /
                         static_cast<double>(std::max<uint64_t>(options_.estimateDraws, 1));
    }
    return counted;
  }
  SpaceCount counted;
  std::vector<int64_t> values(space_.parameters.size(), 0);
  ArithBinding binding;
  startEnumeration();
  bool complete = enumerateFrom(0, values, binding, cap, counted, nullptr);
  counted.exact = complete;
  if (!complete && counted.points > cap) counted.points = cap;
  return counted;
}

std::optional<std::vector<std::vector<int64_t>>> Sampler::enumerate(uint64_t cap) {
  if (base_) {
    std::vector<std::vector<int64_t>> points;
    bool listed = forEachBasePoint([&](const std::vector<int64_t>& basePoint) {
      std::vector<std::vector<int64_t>> partial{fromBase(basePoint)};
      for (const LaunchGroup& group : launchGroups_) {
        std::vector<std::vector<int64_t>> extended;
        for (const std::vector<int64_t>& point : partial) {
          for (const std::vector<int64_t>& choice : launchChoices(point, group)) {
            std::vector<int64_t> next = point;
            for (size_t d = 0; d < choice.size(); ++d) {
              next[static_cast<size_t>(group.params[d])] = choice[d];
            }
            extended.push_back(std::move(next));
          }
          // The launch sizes of several kernels multiply: stop before they outgrow the cap.
          if (points.size() + extended.size() > cap) return false;
        }
        partial = std::move(extended);
      }
      for (std::vector<int64_t>& point : partial) points.push_back(std::move(point));
      return points.size() <= cap;
    });
    if (!listed || points.size() > cap) return std::nullopt;
    return points;
  }
  SpaceCount counted;
  std::vector<std::vector<int64_t>> points;
  std::vector<int64_t> values(space_.parameters.size(), 0);
  ArithBinding binding;
  startEnumeration();
  if (!enumerateFrom(0, values, binding, cap, counted, &points)) return std::nullopt;
  return points;
}

std::optional<std::vector<int64_t>> Sampler::drawOne(std::mt19937_64& rng, uint64_t& attempts) {
  const size_t n = order_.size();
  std::vector<int64_t> values(space_.parameters.size(), 0);
  std::vector<int64_t> prefix;
  ArithBinding binding;
  for (size_t level = 0; level < n; ++level) {
    const Parameter& p = space_.parameters[order_[level]];
    LevelCache& cache = cache_[prefix];
    const LevelDomain domain = domainAt(level, binding);
    if (!cache.divisorsDecided) {
      cache.divisorsDecided = true;
      cache.divisors = divisorsOfDomain(level, domain, binding);
    }
    const uint64_t size = cache.divisors ? cache.divisors->size() : domain.size;
    std::uniform_int_distribution<uint64_t> pick(0, size == 0 ? 0 : size - 1);
    bool chosen = false;
    while (!chosen) {
      if (cache.knownBad >= size) {
        // No value completes this prefix: strike the previous choice out and start again.
        if (level > 0) {
          std::vector<int64_t> parent(prefix.begin(), prefix.end() - 1);
          LevelCache& above = cache_[parent];
          auto [it, inserted] = above.extendable.insert({prefix.back(), false});
          if (!inserted && it->second) {
            it->second = false;
            ++above.knownBad;
          } else if (inserted) {
            ++above.knownBad;
          }
        }
        return std::nullopt;
      }
      int64_t v = cache.divisors ? (*cache.divisors)[pick(rng)] : valueAt(level, domain, pick(rng));
      ++attempts;
      auto known = cache.extendable.find(v);
      if (known != cache.extendable.end()) {
        chosen = known->second;
        if (chosen) {
          values[order_[level]] = v;
          binding[p.name] = v;
        }
        continue;
      }
      values[order_[level]] = v;
      binding[p.name] = v;
      bool ok = acceptableAt(level, binding);
      if (ok && level + 1 < n && linkedBeyond_[level]) {
        ok = solver().extendable(assignment(level, values));
      }
      cache.extendable[v] = ok;
      if (!ok) ++cache.knownBad;
      chosen = ok;
    }
    prefix.push_back(values[order_[level]]);
  }
  if (n == 0 && !acceptableAt(0, binding)) return std::nullopt;
  return values;
}

void Sampler::sampleByCounting(CountingSampler& exact, size_t k, std::mt19937_64& rng,
                               SampleSet& result) {
  const PointCount total = exact.relaxedCount();
  if (total <= options_.enumerationCap || total <= k) {
    // Few points: list the valid ones and draw without replacement (partial Fisher-Yates).
    result.method = "enumeration";
    std::vector<std::vector<int64_t>> points;
    if (walkedValidPoints_) {
      // count() walked them already (the same walk, in the same order).
      points = std::move(*walkedValidPoints_);
      walkedValidPoints_.reset();
    } else {
      exact.forEachValid(
          [&](const std::vector<int64_t>& point) {
            points.push_back(point);
            return true;
          },
          UINT64_MAX);
    }
    takeUniformSample(std::move(points), k, rng, result);
    return;
  }
  result.method = exact.exact() ? "counting" : "counting+rejection";
  if (exact.exact()) result.spaceSize = toUint64(total);
  if (!exact.exact()) result.spaceUpperBound = countToDouble(total);
  std::set<std::vector<int64_t>> seen;
  const uint64_t maxDraws = options_.rejectionDrawsPerSample * k + 100000;
  uint64_t accepted = 0;
  while (result.points.size() < k && result.draws < maxDraws) {
    std::vector<int64_t> point = exact.drawRelaxed(rng);
    ++result.draws;
    if (!exact.satisfiesRelaxed(point)) continue;
    ++accepted;
    if (seen.insert(point).second) result.points.push_back(std::move(point));
  }
  if (!exact.exact() && result.draws > 0) {
    result.spaceEstimate =
        countToDouble(total) * static_cast<double>(accepted) / static_cast<double>(result.draws);
  }
  if (result.points.size() < k) {
    // Rejection accepts too rarely (or the space has about k points): go on incrementally.
    result.method += "+incremental";
    drawIncrementally(k, rng, seen, result);  // too many dead ends: return what was found
  }
}

bool Sampler::drawIncrementally(size_t k, std::mt19937_64& rng, std::set<std::vector<int64_t>>& seen,
                                SampleSet& result) {
  uint64_t attempts = 0;
  int duplicatesInARow = 0, deadEnds = 0;
  while (result.points.size() < k) {
    std::optional<std::vector<int64_t>> point = drawOne(rng, attempts);
    if (!point) {
      if (++deadEnds > 1000 + static_cast<int>(10 * k)) {
        result.valuesTried += attempts;
        return false;
      }
      continue;
    }
    if (!seen.insert(*point).second) {
      if (++duplicatesInARow >= options_.duplicateRetriesPerSample) {
        result.duplicateLimitReached = true;
        result.valuesTried += attempts;
        return true;
      }
      continue;
    }
    duplicatesInARow = 0;
    result.points.push_back(std::move(*point));
  }
  result.valuesTried += attempts;
  return true;
}

void Sampler::recheck(const std::vector<int64_t>& values) const {
  std::vector<std::string> violated = space_.violations(values);
  if (violated.empty()) return;
  std::string point;
  for (size_t i = 0; i < values.size(); ++i) {
    point += (i ? ", " : "") + space_.parameters[i].name + "=" + std::to_string(values[i]);
  }
  std::string message = "sampler bug: the solver accepted " + point + " but it violates:";
  for (const std::string& v : violated) message += "\n  - " + v;
  throw std::logic_error(message);
}

SampleSet Sampler::sample(size_t k, uint64_t seed) {
  auto start = std::chrono::steady_clock::now();
  if (base_) {
    // Small spaces are listed in full (first stage and every launch choice) and sampled
    // without replacement: exactly uniform over the full points.
    // Two stages are uniform over the first stage's points; when fewer of those exist than
    // were asked for, list the full points (if few enough) so that k distinct ones come back.
    SpaceCount firstStage = base_->count(kLaunchSumLimit + 1);
    if (firstStage.exact && firstStage.points < k && firstStage.points <= kLaunchSumLimit) {
      if (auto all = enumerate(options_.enumerationCap)) {
        SampleSet result;
        std::mt19937_64 rng(seed);
        result.method = "enumeration+launch sizes";
        takeUniformSample(std::move(*all), k, rng, result);
        for (const std::vector<int64_t>& point : result.points) recheck(point);
        result.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
      }
    }
    SampleSet result = base_->sample(k, seed);
    std::mt19937_64 rng(seed ^ 0x6c61756e6368ull);  // "launch": its own stream per seed
    std::vector<std::vector<int64_t>> points;
    for (const std::vector<int64_t>& basePoint : result.points) {
      std::vector<int64_t> point = fromBase(basePoint);
      for (const LaunchGroup& group : launchGroups_) {
        std::vector<std::vector<int64_t>> choices = launchChoices(point, group);
        if (choices.empty()) {
          throw std::logic_error("sampler bug: no valid local size for a point of " +
                                 space_.definitionName + " (a local size of 1 always divides)");
        }
        std::uniform_int_distribution<size_t> pick(0, choices.size() - 1);
        const std::vector<int64_t>& choice = choices[pick(rng)];
        for (size_t d = 0; d < choice.size(); ++d) {
          point[static_cast<size_t>(group.params[d])] = choice[d];
        }
      }
      recheck(point);
      points.push_back(std::move(point));
    }
    result.points = std::move(points);
    result.method += "+launch sizes";
    result.spaceSize.reset();  // the first stage's; count() gives the full one where it can
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  const uint64_t checksBefore = (solver_ ? solver_->checks() : 0);
  SampleSet result;
  std::mt19937_64 rng(seed);
  if (CountingSampler* exact = counting()) {
    sampleByCounting(*exact, k, rng, result);
    for (const std::vector<int64_t>& point : result.points) recheck(point);
    result.solverChecks = (solver_ ? solver_->checks() : 0) - checksBefore;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  }
  std::optional<std::vector<std::vector<int64_t>>> all = enumerate(options_.enumerationCap);
  if (all) {
    result.method = "enumeration";
    takeUniformSample(std::move(*all), k, rng, result);
  } else {
    result.method = "incremental";
    std::set<std::vector<int64_t>> seen;
    if (!drawIncrementally(k, rng, seen, result)) {
      throw std::logic_error("sampler: too many dead ends (Z3 answered unknown too often?)");
    }
  }
  for (const std::vector<int64_t>& point : result.points) recheck(point);
  result.solverChecks = (solver_ ? solver_->checks() : 0) - checksBefore;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace weft::explore
