// Counting sampler (explore/counting_sampler.h): candidate values per level (filtered domains,
// dynamic ranges, divisor sets), the choice of kept constraints and order by a cost estimate,
// the memoised count per level and frontier, uniform descent, rejection on relaxed constraints
// and the walk over all valid points.
#include "explore/counting_sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace weft::explore {

std::string countToString(PointCount count) {
  if (count == 0) return "0";
  std::string digits;
  while (count > 0) {
    digits.push_back(static_cast<char>('0' + static_cast<int>(count % 10)));
    count /= 10;
  }
  return std::string(digits.rbegin(), digits.rend());
}

double countToDouble(PointCount count) { return static_cast<double>(count); }

namespace {

struct BudgetExceeded {};

// a*p + b when `e` is that linear form of the variable `name` alone.
bool linearIn(const Arith& e, const std::string& name, int64_t& a, int64_t& b) {
  if (e.isVar() && e.varName() == name) {
    a = 1;
    b = 0;
    return true;
  }
  if (e.kind() != ArithKind::Sum) return false;
  auto terms = e.sumTerms();
  if (terms.size() != 1 || !terms[0].second.isVar() || terms[0].second.varName() != name) {
    return false;
  }
  a = terms[0].first;
  b = e.sumConstant();
  return a != 0;
}

// What a*p + b (p: the variable `name`) must divide for it to divide `e`, when `e` is k*p + X
// with X free of p and a | k: X - (k/a)*b, since e = (k/a)*(a*p + b) + X - (k/a)*b. A slide's
// step condition (L - theta) % (theta - c) = 0 becomes (theta - c) | L - c this way.
std::optional<Arith> divisorTarget(const Arith& e, const std::string& name, int64_t a, int64_t b) {
  if (!e.mentions(name)) return e;
  int64_t k = 0;
  Arith rest(0);
  int64_t constant = 0;
  if (e.isVar() && e.varName() == name) {
    k = 1;
  } else if (e.kind() == ArithKind::Sum) {
    constant = e.sumConstant();
    for (const auto& [coefficient, term] : e.sumTerms()) {
      if (term.isVar() && term.varName() == name) {
        if (__builtin_add_overflow(k, coefficient, &k)) return std::nullopt;
      } else if (term.mentions(name)) {
        return std::nullopt;
      } else {
        rest = rest + Arith(coefficient) * term;
      }
    }
  } else {
    return std::nullopt;
  }
  if (k % a != 0) return std::nullopt;
  int64_t shift, adjusted;
  if (__builtin_mul_overflow(k / a, b, &shift) ||
      __builtin_sub_overflow(constant, shift, &adjusted)) {
    return std::nullopt;
  }
  return rest + Arith(adjusted);
}

// A value uniform in [0, n), n > 0.
PointCount uniformBelow(std::mt19937_64& rng, PointCount n) {
  if (n <= static_cast<PointCount>(UINT64_MAX)) {
    std::uniform_int_distribution<uint64_t> pick(0, static_cast<uint64_t>(n - 1));
    return pick(rng);
  }
  const PointCount all = ~static_cast<PointCount>(0);
  const PointCount limit = all - all % n;  // accept below a multiple of n
  while (true) {
    PointCount r = (static_cast<PointCount>(rng()) << 64) | rng();
    if (r < limit) return r % n;
  }
}

}  // namespace

size_t CountingSampler::KeyHash::operator()(const std::vector<int64_t>& key) const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : key) {
    h ^= static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  }
  return static_cast<size_t>(h);
}

// ---- set-up -------------------------------------------------------------------------------

// Per parameter: the constraints that could list its candidates as divisors.
void CountingSampler::findGenerators() {
  generators_.assign(n_, {});
  auto slotsOf = [&](const Arith& e) {
    std::vector<int> slots;
    for (const Arith& v : e.vars()) slots.push_back(space_.indexOf(v.varName()));
    return slots;
  };
  for (size_t c = 0; c < space_.constraints.size(); ++c) {
    const Constraint& constraint = space_.constraints[c].constraint;
    for (size_t p = 0; p < n_; ++p) {
      const std::string& name = space_.parameters[p].name;
      int64_t a, b;
      if (constraint.relation == Relation::Divides && linearIn(constraint.lhs, name, a, b)) {
        if (std::optional<Arith> target = divisorTarget(constraint.rhs, name, a, b)) {
          generators_[p].push_back({c, false, a, b, *target, slotsOf(*target)});
        }
      } else if (constraint.relation == Relation::Equal) {
        const Arith* mod = nullptr;
        if (constraint.lhs == Arith(0)) mod = &constraint.rhs;
        if (constraint.rhs == Arith(0)) mod = &constraint.lhs;
        if (mod && mod->kind() == ArithKind::Mod && linearIn(mod->operands()[1], name, a, b)) {
          if (std::optional<Arith> target = divisorTarget(mod->operands()[0], name, a, b)) {
            generators_[p].push_back({c, true, a, b, *target, slotsOf(*target)});
          }
        }
      }
    }
  }
}

CountingSampler::CountingSampler(const ParameterSpace& space, CountingOptions options)
    : space_(space), options_(options), n_(space.parameters.size()) {
  auto slotOf = [&](const std::string& name) { return space.indexOf(name); };
  try {
    for (const SpaceConstraint& c : space.constraints) {
      compiled_.emplace_back(c.constraint, slotOf);
      arity_.push_back(static_cast<int>(compiled_.back().slots().size()));
    }
    ArithSubstitution sizes;
    for (const auto& [name, value] : space.sizes) sizes[name] = Arith(value);
    for (const Parameter& p : space.parameters) {
      lo_.emplace_back(substitute(p.variable.varLo(), sizes), slotOf);
      hi_.emplace_back(p.variable.varHi() ? substitute(*p.variable.varHi(), sizes) : Arith(p.hi),
                       slotOf);
      std::set<int> deps(lo_.back().slots().begin(), lo_.back().slots().end());
      deps.insert(hi_.back().slots().begin(), hi_.back().slots().end());
      deps.erase(static_cast<int>(before_.size()));
      before_.push_back(std::vector<int>(deps.begin(), deps.end()));
    }
  } catch (const std::exception& error) {
    failure_ = std::string("constraints mention something other than parameters: ") + error.what();
    return;
  }

  // Constraints on no parameter decide the space alone.
  std::vector<int64_t> zeros(std::max<size_t>(n_, 1), 0);
  for (size_t c = 0; c < compiled_.size(); ++c) {
    if (arity_[c] == 0 && !compiled_[c].holds(zeros.data())) constantFalse_ = true;
  }
  if (constantFalse_ || n_ == 0) {
    ok_ = true;
    total_ = constantFalse_ ? 0 : 1;
    return;
  }

  // Domains filtered by the constraints on the parameter alone.
  for (size_t p = 0; p < n_; ++p) {
    const Parameter& parameter = space.parameters[p];
    if (parameter.domainSize() > options_.largestListedDomain) {
      listed_.emplace_back();
      isListed_.push_back(false);
      continue;
    }
    std::vector<int64_t> values = parameter.values();
    std::vector<int64_t> point(n_, 0);
    std::vector<int64_t> kept;
    for (int64_t v : values) {
      point[p] = v;
      bool holds = true;
      for (size_t c = 0; c < compiled_.size() && holds; ++c) {
        if (arity_[c] == 1 && compiled_[c].slots()[0] == static_cast<int>(p)) {
          holds = compiled_[c].holds(point.data());
        }
      }
      if (holds) kept.push_back(v);
    }
    listed_.push_back(std::move(kept));
    isListed_.push_back(true);
  }

  findGenerators();
  const int maxArity =
      arity_.empty() ? 1 : std::max(1, *std::max_element(arity_.begin(), arity_.end()));
  std::string reasons;
  const int firstArity = std::min(maxArity, std::max(options_.maxKeptArity, 1));
  for (int arity = firstArity; arity >= 1; --arity) {
    if (arity < firstArity &&
        std::none_of(arity_.begin(), arity_.end(), [&](int a) { return a == arity + 1; })) {
      continue;  // relaxing nothing more than the previous try
    }
    if (plan(arity)) {
      ok_ = true;
      return;
    }
    reasons += (reasons.empty() ? "" : "; ") + failure_;
  }
  failure_ = "no counting plan fits the budget (" + reasons + ")";
}

// ---- planning -----------------------------------------------------------------------------

double CountingSampler::estimateCost(const std::vector<int>& order) const {
  std::vector<size_t> levelOf(n_);
  for (size_t l = 0; l < n_; ++l) levelOf[order[l]] = l;
  std::vector<double> size(n_);
  for (size_t p = 0; p < n_; ++p) {
    size[p] = isListed_[p] ? static_cast<double>(std::max<size_t>(listed_[p].size(), 1))
                           : static_cast<double>(space_.parameters[p].domainSize());
  }
  // A parameter with a usable divisor generator has few candidates.
  std::vector<double> levelSize(n_);
  std::vector<bool> generated(n_, false);  // a divisor set lists the level's candidates
  for (size_t l = 0; l < n_; ++l) {
    int p = order[l];
    levelSize[l] = size[p];
    for (const auto& [c, modulus, a, b, target, slots] : generators_[p]) {
      if (!kept_[c]) continue;
      bool earlier = std::all_of(slots.begin(), slots.end(), [&](int s) { return levelOf[s] < l; });
      if (earlier) {
        levelSize[l] = std::min(levelSize[l], 64.0);
        generated[l] = true;
      }
    }
  }
  // Frontier of each level: earlier parameters read at that level or later.
  std::vector<size_t> lastRead(n_, 0);  // the last level that reads each parameter
  for (size_t c = 0; c < compiled_.size(); ++c) {
    if (!kept_[c] || arity_[c] == 0) continue;
    size_t last = 0;
    for (int s : compiled_[c].slots()) last = std::max(last, levelOf[s]);
    for (int s : compiled_[c].slots()) lastRead[s] = std::max(lastRead[s], last);
  }
  for (size_t p = 0; p < n_; ++p) {
    for (int s : before_[p]) lastRead[s] = std::max(lastRead[s], levelOf[p]);
  }
  // Levels counted without visiting their values (free_ in analyse) cost one node per state.
  std::vector<bool> checked(n_, false);
  for (size_t c = 0; c < compiled_.size(); ++c) {
    if (!kept_[c] || arity_[c] == 0) continue;
    size_t last = 0;
    for (int s : compiled_[c].slots()) last = std::max(last, levelOf[s]);
    bool pOnLeft;
    if (!boundOn(c, order[last], pOnLeft)) checked[last] = true;
  }
  double cost = 0;
  for (size_t l = 0; l < n_; ++l) {
    double states = 1;
    for (size_t p = 0; p < n_; ++p) {
      if (levelOf[p] < l && lastRead[p] >= l) states *= levelSize[levelOf[p]];
    }
    const int p = order[l];
    const bool free = !checked[l] && !generated[l] && lastRead[p] <= l && countableByRange(p);
    cost += states * (free ? 1.0 : levelSize[l]);
  }
  return cost;
}

bool CountingSampler::countableByRange(int p) const {
  return isListed_[p] || space_.parameters[p].kind == DomainKind::Range;
}

bool CountingSampler::boundOn(size_t c, int p, bool& pOnLeft) const {
  const Constraint& constraint = space_.constraints[c].constraint;
  if (constraint.relation == Relation::Divides) return false;
  const std::string& name = space_.parameters[p].name;
  if (constraint.lhs.isVar() && constraint.lhs.varName() == name &&
      !constraint.rhs.mentions(name)) {
    pOnLeft = true;
    return true;
  }
  if (constraint.rhs.isVar() && constraint.rhs.varName() == name &&
      !constraint.lhs.mentions(name)) {
    pOnLeft = false;
    return true;
  }
  return false;
}

void CountingSampler::analyse(const std::vector<int>& order) {
  order_ = order;
  std::vector<size_t> levelOf(n_);
  for (size_t l = 0; l < n_; ++l) levelOf[order[l]] = l;
  checkAt_.assign(n_, {});
  generator_.assign(n_, std::nullopt);
  frontier_.assign(n_ + 1, {});
  std::vector<size_t> lastRead(n_, 0);
  for (size_t c = 0; c < compiled_.size(); ++c) {
    if (!kept_[c] || arity_[c] == 0) continue;
    size_t last = 0;
    for (int s : compiled_[c].slots()) last = std::max(last, levelOf[s]);
    checkAt_[last].push_back(c);
    for (int s : compiled_[c].slots()) lastRead[s] = std::max(lastRead[s], last);
  }
  for (size_t p = 0; p < n_; ++p) {
    for (int s : before_[p]) lastRead[s] = std::max(lastRead[s], levelOf[p]);
  }
  auto slotOf = [&](const std::string& name) { return space_.indexOf(name); };
  for (size_t l = 0; l < n_; ++l) {
    int p = order[l];
    for (const auto& [c, modulus, a, b, target, slots] : generators_[p]) {
      if (!kept_[c]) continue;
      bool earlier = std::all_of(slots.begin(), slots.end(), [&](int s) { return levelOf[s] < l; });
      if (!earlier) continue;
      Generator g;
      g.constraint = c;
      g.modulusForm = modulus;
      g.a = a;
      g.b = b;
      g.target = CompiledArith(target, slotOf);
      generator_[l] = std::move(g);
      break;
    }
  }
  for (size_t l = 0; l <= n_; ++l) {
    for (size_t p = 0; p < n_; ++p) {
      if (levelOf[p] < l && lastRead[p] >= l) frontier_[l].push_back(static_cast<int>(p));
    }
  }
  // Checks that bound the level's parameter become bounds of its candidate range.
  boundsAt_.assign(n_, {});
  free_.assign(n_, false);
  for (size_t l = 0; l < n_; ++l) {
    const int p = order[l];
    std::vector<size_t> checks;
    for (size_t c : checkAt_[l]) {
      bool pOnLeft;
      if (boundOn(c, p, pOnLeft)) {
        boundsAt_[l].push_back({c, pOnLeft});
      } else {
        checks.push_back(c);
      }
    }
    checkAt_[l] = std::move(checks);
    free_[l] = checkAt_[l].empty() && !generator_[l] && lastRead[p] <= l && countableByRange(p);
  }
  // A candidate is kept when all of its level's checks hold: the cheapest are tried first.
  for (std::vector<size_t>& checks : checkAt_) sortByCost(checks);
  memo_.assign(n_ + 1, {});
  choices_.assign(n_, {});
}

bool CountingSampler::plan(int keptArity) {
  keptArity_ = keptArity;
  kept_.assign(compiled_.size(), false);
  relaxed_.clear();
  for (size_t c = 0; c < compiled_.size(); ++c) {
    kept_[c] = arity_[c] <= keptArity;
    if (!kept_[c]) relaxed_.push_back(c);
  }

  // The order: every permutation respecting range dependencies up to 8 parameters, greedy
  // beyond; the cheapest estimate wins, the first found on ties.
  auto respects = [&](const std::vector<int>& order) {
    std::vector<bool> placed(n_, false);
    for (int p : order) {
      for (int b : before_[p]) {
        if (!placed[b]) return false;
      }
      placed[p] = true;
    }
    return true;
  };
  std::vector<int> best;
  double bestCost = INFINITY;
  if (n_ <= 8) {
    std::vector<int> order(n_);
    std::iota(order.begin(), order.end(), 0);
    do {
      if (!respects(order)) continue;
      double cost = estimateCost(order);
      if (cost < bestCost) {
        bestCost = cost;
        best = order;
      }
    } while (std::next_permutation(order.begin(), order.end()));
  } else {
    std::vector<int> prefix;
    std::vector<bool> placed(n_, false);
    while (prefix.size() < n_) {
      int choice = -1;
      double choiceCost = INFINITY;
      for (size_t p = 0; p < n_; ++p) {
        if (placed[p]) continue;
        std::vector<int> trial = prefix;
        trial.push_back(static_cast<int>(p));
        for (size_t q = 0; q < n_; ++q) {
          if (!placed[q] && q != p) trial.push_back(static_cast<int>(q));
        }
        bool ready =
            std::all_of(before_[p].begin(), before_[p].end(), [&](int b) { return placed[b]; });
        if (!ready) continue;
        double cost = estimateCost(trial);
        if (cost < choiceCost) {
          choiceCost = cost;
          choice = static_cast<int>(p);
        }
      }
      if (choice < 0) {  // a cycle of range dependencies (buildParameterSpace rejects those)
        for (size_t p = 0; p < n_ && choice < 0; ++p) {
          if (!placed[p]) choice = static_cast<int>(p);
        }
      }
      placed[choice] = true;
      prefix.push_back(choice);
    }
    best = prefix;
    bestCost = estimateCost(best);
  }
  if (best.empty()) {
    failure_ = "no order respects the range dependencies";
    return false;
  }
  if (bestCost > options_.maxEstimatedCost) {
    failure_ = "keeping constraints of up to " + std::to_string(keptArity) +
               " parameters: estimated cost " + std::to_string(bestCost) + " too high";
    return false;
  }
  analyse(best);
  // Each relaxed constraint is checked by the walk at the level of its last parameter.
  std::vector<size_t> levelOf(n_);
  for (size_t l = 0; l < n_; ++l) levelOf[order_[l]] = l;
  relaxedAt_.assign(n_, {});
  for (size_t c : relaxed_) {
    size_t last = compiled_[c].slots().empty() ? n_ - 1 : 0;
    for (int slot : compiled_[c].slots()) last = std::max(last, levelOf[slot]);
    if (n_ > 0) relaxedAt_[last].push_back(c);
  }
  for (std::vector<size_t>& checks : relaxedAt_) sortByCost(checks);
  nodes_ = 0;
  budget_ = options_.nodeBudget;
  try {
    std::vector<int64_t> values(n_, 0);
    total_ = countFrom(0, values);
  } catch (const BudgetExceeded&) {
    failure_ = "keeping constraints of up to " + std::to_string(keptArity) +
               " parameters: counting exceeded " + std::to_string(options_.nodeBudget) + " nodes";
    memo_.assign(n_ + 1, {});
    return false;
  }
  budget_ = UINT64_MAX;
  return true;
}

// ---- counting -----------------------------------------------------------------------------

const std::vector<int64_t>& CountingSampler::divisorsOf(int64_t n) {
  auto found = divisors_.find(n);
  if (found != divisors_.end()) return found->second;
  std::vector<int64_t> small, large;
  for (int64_t d = 1; d <= n / d; ++d) {
    if (n % d == 0) {
      small.push_back(d);
      if (d != n / d) large.push_back(n / d);
    }
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  if (divisors_.size() > 200000) divisors_.clear();
  return divisors_.emplace(n, std::move(small)).first->second;
}

bool CountingSampler::bounded(size_t level, const std::vector<int64_t>& values, int64_t& lo,
                              int64_t& hi) const {
  const int p = order_[level];
  const Parameter& parameter = space_.parameters[p];
  lo = parameter.lo;
  hi = parameter.hi;
  if (!lo_[p].isConstant()) {
    if (auto v = lo_[p].evaluate(values.data())) lo = std::max(lo, *v);
  }
  if (!hi_[p].isConstant()) {
    if (auto v = hi_[p].evaluate(values.data())) hi = std::min(hi, *v);
  }
  for (const auto& [c, pOnLeft] : boundsAt_[level]) {
    const CompiledConstraint& constraint = compiled_[c];
    // An undefined side makes the constraint false for every value.
    std::optional<int64_t> limit =
        (pOnLeft ? constraint.rhs() : constraint.lhs()).evaluate(values.data());
    if (!limit) return false;
    const bool strict = constraint.relation() == Relation::Less;
    if (constraint.relation() == Relation::Equal || pOnLeft) {  // p <= limit, p < limit
      if (strict && *limit == INT64_MIN) return false;
      hi = std::min(hi, strict ? *limit - 1 : *limit);
    }
    if (constraint.relation() == Relation::Equal || !pOnLeft) {  // limit <= p, limit < p
      if (strict && *limit == INT64_MAX) return false;
      lo = std::max(lo, strict ? *limit + 1 : *limit);
    }
  }
  return lo <= hi;
}

PointCount CountingSampler::candidateCount(size_t level, int64_t lo, int64_t hi) const {
  const int p = order_[level];
  if (isListed_[p]) {
    const std::vector<int64_t>& list = listed_[p];
    return static_cast<PointCount>(std::upper_bound(list.begin(), list.end(), hi) -
                                   std::lower_bound(list.begin(), list.end(), lo));
  }
  return static_cast<PointCount>(static_cast<__int128>(hi) - lo + 1);
}

int64_t CountingSampler::candidateAt(size_t level, int64_t lo, PointCount index) const {
  const int p = order_[level];
  if (isListed_[p]) {
    const std::vector<int64_t>& list = listed_[p];
    return *(std::lower_bound(list.begin(), list.end(), lo) + static_cast<ptrdiff_t>(index));
  }
  return static_cast<int64_t>(static_cast<__int128>(lo) + static_cast<__int128>(index));
}

template <typename Visit>
void CountingSampler::candidates(size_t level, std::vector<int64_t>& values, Visit&& visit) {
  const int p = order_[level];
  const Parameter& parameter = space_.parameters[p];
  int64_t lo, hi;
  if (!bounded(level, values, lo, hi)) return;
  const std::vector<size_t>& checks = checkAt_[level];
  // Returns whether to go on.
  auto consider = [&](int64_t v) -> bool {
    if (++nodes_ > budget_) throw BudgetExceeded{};
    values[p] = v;
    for (size_t c : checks) {
      if (!compiled_[c].holds(values.data())) return true;
    }
    return visit(v);
  };
  if (generator_[level]) {
    const Generator& g = *generator_[level];
    std::optional<int64_t> target = g.target.evaluate(values.data());
    if (!target) return;  // the generating constraint is undefined, hence false, for every value
    if (*target != 0 && *target != INT64_MIN &&
        std::abs(*target) <= options_.largestDivisorTarget) {
      std::vector<int64_t> found;
      for (int64_t d : divisorsOf(std::abs(*target))) {
        for (int64_t s : {d, -d}) {
          if (s < 0 && !g.modulusForm) continue;
          int64_t shifted;
          if (__builtin_sub_overflow(s, g.b, &shifted) || shifted % g.a != 0) continue;
          int64_t v = shifted / g.a;
          if (v < lo || v > hi || !parameter.contains(v)) continue;
          if (isListed_[p] && !std::binary_search(listed_[p].begin(), listed_[p].end(), v)) {
            continue;
          }
          found.push_back(v);
        }
      }
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      for (int64_t v : found) {
        if (!consider(v)) return;
      }
      return;
    }
  }
  if (isListed_[p]) {
    const std::vector<int64_t>& list = listed_[p];
    for (auto it = std::lower_bound(list.begin(), list.end(), lo); it != list.end() && *it <= hi;
         ++it) {
      if (!consider(*it)) return;
    }
    return;
  }
  for (int64_t v = lo; v <= hi; ++v) {
    if (parameter.contains(v) && !consider(v)) return;
    if (v == INT64_MAX) break;
  }
}

std::vector<int64_t> CountingSampler::keyAt(size_t level,
                                            const std::vector<int64_t>& values) const {
  std::vector<int64_t> key;
  key.reserve(frontier_[level].size());
  for (int p : frontier_[level]) key.push_back(values[p]);
  return key;
}

PointCount CountingSampler::countFrom(size_t level, std::vector<int64_t>& values) {
  if (level == n_) return 1;
  std::vector<int64_t> key = keyAt(level, values);
  auto found = memo_[level].find(key);
  if (found != memo_[level].end()) return found->second;
  PointCount sum = 0;
  if (free_[level]) {
    // Every candidate has the same count below: no later level reads this one.
    int64_t lo, hi;
    if (bounded(level, values, lo, hi)) {
      const PointCount candidates = candidateCount(level, lo, hi);
      if (candidates > 0) {
        if (++nodes_ > budget_) throw BudgetExceeded{};
        values[order_[level]] = candidateAt(level, lo, 0);
        sum = candidates * countFrom(level + 1, values);
      }
    }
  } else {
    candidates(level, values, [&](int64_t) {
      sum += countFrom(level + 1, values);
      return true;
    });
  }
  memo_[level].emplace(std::move(key), sum);
  return sum;
}

// ---- sampling -----------------------------------------------------------------------------

std::vector<int64_t> CountingSampler::drawRelaxed(std::mt19937_64& rng) {
  std::vector<int64_t> values(n_, 0);
  for (size_t level = 0; level < n_; ++level) {
    if (free_[level]) {
      // The subtree is not empty, so neither are the candidates nor the count below them.
      int64_t lo, hi;
      const PointCount candidates =
          bounded(level, values, lo, hi) ? candidateCount(level, lo, hi) : 0;
      if (candidates == 0) {
        throw std::logic_error("counting sampler: drawing from an empty subtree");
      }
      values[order_[level]] = candidateAt(level, lo, uniformBelow(rng, candidates));
      continue;
    }
    std::vector<int64_t> key = keyAt(level, values);
    auto found = choices_[level].find(key);
    if (found == choices_[level].end()) {
      Choices list;
      PointCount cumulative = 0;
      candidates(level, values, [&](int64_t v) {
        PointCount below = countFrom(level + 1, values);
        if (below > 0) {
          cumulative += below;
          list.push_back({v, cumulative});
        }
        return true;
      });
      found = choices_[level].emplace(std::move(key), std::move(list)).first;
    }
    const Choices& list = found->second;
    if (list.empty()) throw std::logic_error("counting sampler: drawing from an empty subtree");
    PointCount r = uniformBelow(rng, list.back().second);
    auto pick = std::upper_bound(
        list.begin(), list.end(), r,
        [](PointCount x, const std::pair<int64_t, PointCount>& entry) { return x < entry.second; });
    values[order_[level]] = pick->first;
  }
  return values;
}

bool CountingSampler::satisfiesRelaxed(const std::vector<int64_t>& point) const {
  for (size_t c : relaxed_) {
    if (!compiled_[c].holds(point.data())) return false;
  }
  return true;
}

bool CountingSampler::satisfiesAll(const std::vector<int64_t>& point) const {
  for (size_t p = 0; p < n_; ++p) {
    if (!space_.parameters[p].contains(point[p])) return false;
  }
  for (const CompiledConstraint& c : compiled_) {
    if (!c.holds(point.data())) return false;
  }
  return true;
}

void CountingSampler::sortByCost(std::vector<size_t>& constraints) const {
  std::stable_sort(constraints.begin(), constraints.end(), [&](size_t a, size_t b) {
    return compiled_[a].length() < compiled_[b].length();
  });
}

bool CountingSampler::holdsAll(const std::vector<size_t>& constraints,
                               const std::vector<int64_t>& values) const {
  for (size_t c : constraints) {
    if (!compiled_[c].holds(values.data())) return false;
  }
  return true;
}

// The relaxed points in order, each counted against the budget. A relaxed constraint that
// fails once its last parameter is fixed fails on every relaxed point below: such a subtree
// is skipped whole, its points counted from the memo, unless that would cross the budget
// (then it is walked point by point, so the walk stops exactly where a point-by-point walk
// would). `prefixChecked`: the relaxed constraints of the levels above all held.
bool CountingSampler::walk(size_t level, std::vector<int64_t>& values,
                           const std::function<bool(const std::vector<int64_t>&)>& visit,
                           uint64_t& leaves, uint64_t budget, Walk& result, bool prefixChecked) {
  if (level == n_) {
    if (++leaves > budget) {
      result = Walk::OutOfBudget;
      return false;
    }
    const bool valid =
        prefixChecked ? holdsAll(relaxedAt_[n_ - 1], values) : satisfiesRelaxed(values);
    if (valid && !visit(values)) {
      result = Walk::Stopped;
      return false;
    }
    return true;
  }
  const bool checkHere = prefixChecked && level + 1 < n_ && !relaxedAt_[level].empty();
  bool go = true;
  candidates(level, values, [&](int64_t) {
    const PointCount below = countFrom(level + 1, values);
    if (below == 0) return true;
    bool childChecked = prefixChecked;
    if (checkHere && !holdsAll(relaxedAt_[level], values)) {
      if (below <= static_cast<PointCount>(budget - std::min(budget, leaves))) {
        leaves += static_cast<uint64_t>(below);
        return true;
      }
      childChecked = false;
    }
    go = walk(level + 1, values, visit, leaves, budget, result, childChecked);
    return go;
  });
  return go;
}

CountingSampler::Walk CountingSampler::forEachValid(
    const std::function<bool(const std::vector<int64_t>&)>& visit, uint64_t leafBudget) {
  if (!ok_) throw std::logic_error("counting sampler: no plan");
  if (total_ == 0) return Walk::Complete;
  std::vector<int64_t> values(n_, 0);
  if (n_ == 0) {
    if (!visit(values)) return Walk::Stopped;
    return Walk::Complete;
  }
  uint64_t leaves = 0;
  Walk result = Walk::Complete;
  walk(0, values, visit, leaves, leafBudget, result, /*prefixChecked=*/true);
  return result;
}

std::string CountingSampler::describePlan() const {
  if (!ok_) return "no counting plan: " + failure_;
  std::string text;
  for (size_t level = 0; level < order_.size(); ++level) {
    const Parameter& p = space_.parameters[order_[level]];
    text += std::to_string(level + 1) + ". " + p.name;
    if (generator_[level]) {
      text += " (divisors, from: " +
              space_.constraints[generator_[level]->constraint].constraint.requirement() + ")";
    }
    for (const auto& [c, pOnLeft] : boundsAt_[level]) {
      text += " (bounded by: " + space_.constraints[c].constraint.requirement() + ")";
    }
    if (free_[level]) text += " (counted by its range: no later level reads it)";
    text += "; state:";
    if (frontier_[level].empty()) text += " none";
    for (int f : frontier_[level]) text += " " + space_.parameters[f].name;
    text += "; " + std::to_string(memo_[level].size()) + " states\n";
  }
  text += "kept: constraints of at most " + std::to_string(keptArity_) + " parameters; relaxed (" +
          std::to_string(relaxed_.size()) + ", checked by rejection):";
  for (size_t c : relaxed_) text += "\n  - " + space_.constraints[c].constraint.requirement();
  return text;
}

}  // namespace weft::explore
