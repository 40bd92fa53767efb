// Bounded exhaustive search for values of the tuning parameters that meet a program's
// constraints (feasibility.h).
#include "typecheck/feasibility.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace weft {

namespace {

class FeasibilityWalk {
 public:
  FeasibilityWalk(const std::vector<Constraint>& constraints, const ArithBinding& sizes,
                  int64_t maxPoints)
      : constraints_(constraints), binding_(sizes), pointsLeft_(maxPoints) {}

  Feasibility run() {
    // The tuning parameters the constraints mention, and those their ranges mention.
    std::map<std::string, Arith> parameters;
    std::vector<Arith> pending;
    for (const Constraint& c : constraints_) {
      for (const Arith& v : c.vars()) pending.push_back(v);
    }
    while (!pending.empty()) {
      const Arith v = pending.back();
      pending.pop_back();
      if (v.varKind() == VarKind::Size) {
        if (!binding_.count(v.varName())) return Feasibility::Unknown;
        continue;
      }
      if (v.varKind() != VarKind::Tuning) return Feasibility::Unknown;
      if (!parameters.emplace(v.varName(), v).second) continue;
      if (!v.varHi()) return Feasibility::Unknown;  // unbounded: no exhaustive walk
      for (const Arith& bound : {v.varLo(), *v.varHi()}) {
        for (const Arith& w : bound.vars()) pending.push_back(w);
      }
    }
    // An order in which each parameter's range mentions only sizes and earlier parameters.
    std::set<std::string> placed;
    while (order_.size() < parameters.size()) {
      bool progressed = false;
      for (const auto& [name, v] : parameters) {
        if (placed.count(name)) continue;
        bool ready = true;
        for (const Arith& bound : {v.varLo(), *v.varHi()}) {
          for (const Arith& w : bound.vars()) {
            ready = ready && (w.varKind() == VarKind::Size || placed.count(w.varName()));
          }
        }
        if (!ready) continue;
        order_.push_back(v);
        placed.insert(name);
        progressed = true;
      }
      if (!progressed) return Feasibility::Unknown;  // ranges that depend on each other
    }
    // Each constraint is tested at the depth where its last parameter is bound.
    std::map<std::string, size_t> depthOf;
    for (size_t i = 0; i < order_.size(); ++i) depthOf[order_[i].varName()] = i + 1;
    checksAt_.assign(order_.size() + 1, {});
    for (const Constraint& c : constraints_) {
      size_t depth = 0;
      for (const Arith& v : c.vars()) {
        if (v.varKind() == VarKind::Tuning) depth = std::max(depth, depthOf.at(v.varName()));
      }
      checksAt_[depth].push_back(&c);
    }
    if (!holdsAt(0)) return Feasibility::Infeasible;
    const std::optional<bool> found = walk(0);
    if (!found) return Feasibility::Unknown;
    return *found ? Feasibility::Feasible : Feasibility::Infeasible;
  }

 private:
  // Whether the constraints tested at `depth` hold (one that does not evaluate, a division by
  // zero, counts as not holding: the type checker's conditions exclude such values).
  bool holdsAt(size_t depth) const {
    for (const Constraint* c : checksAt_[depth]) {
      const std::optional<bool> holds = c->evaluate(binding_);
      if (!holds || !*holds) return false;
    }
    return true;
  }

  // A value that the parameter `v` bound at `depth` must divide, fixed by what is bound before
  // it: a condition n % v = 0 (a split's) or v | n at that depth, n evaluating to a non-zero
  // constant up to kMaxListedDividend. The walk then visits n's divisors only, which decides a
  // split of a prime length over millions of values in two steps.
  std::optional<int64_t> fixedDividend(const Arith& v, size_t depth) const {
    for (const Constraint* c : checksAt_[depth]) {
      std::optional<Arith> dividend;
      if (c->relation == Relation::Divides && c->lhs == v) dividend = c->rhs;
      if (c->relation == Relation::Equal) {
        for (const auto& [side, other] : {std::pair{&c->lhs, &c->rhs}, {&c->rhs, &c->lhs}}) {
          if (other->constant() == 0 && side->kind() == ArithKind::Mod &&
              side->operands()[1] == v) {
            dividend = side->operands()[0];
          }
        }
      }
      if (!dividend) continue;
      const std::optional<int64_t> n = tryEvaluate(*dividend, binding_);
      if (n && *n != 0 && std::abs(*n) <= kMaxListedDividend) return std::abs(*n);
    }
    return std::nullopt;
  }

  // true: a complete assignment meets everything; false: none below this prefix does;
  // nullopt: the walk's bound was reached.
  std::optional<bool> walk(size_t depth) {
    if (depth == order_.size()) return true;
    const Arith& v = order_[depth];
    const std::optional<int64_t> lo = tryEvaluate(v.varLo(), binding_);
    const std::optional<int64_t> hi = tryEvaluate(*v.varHi(), binding_);
    if (!lo || !hi) return std::nullopt;
    const std::optional<int64_t> dividend = fixedDividend(v, depth + 1);
    const std::vector<int64_t>* divisors = nullptr;
    if (dividend) {
      auto [listed, added] = divisors_.try_emplace(*dividend);
      if (added) listed->second = divisorsOf(*dividend);
      divisors = &listed->second;
    }
    const int64_t count = divisors ? static_cast<int64_t>(divisors->size()) : *hi - *lo + 1;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t value = divisors ? (*divisors)[static_cast<size_t>(i)] : *lo + i;
      if (value < *lo || value > *hi) continue;
      if (--pointsLeft_ < 0) return std::nullopt;
      binding_[v.varName()] = value;
      if (!holdsAt(depth + 1)) continue;
      const std::optional<bool> below = walk(depth + 1);
      if (!below || *below) {
        binding_.erase(v.varName());
        return below;
      }
    }
    binding_.erase(v.varName());
    return false;
  }

  const std::vector<Constraint>& constraints_;
  ArithBinding binding_;
  int64_t pointsLeft_;
  std::vector<Arith> order_;
  std::vector<std::vector<const Constraint*>> checksAt_;
  std::map<int64_t, std::vector<int64_t>> divisors_;  // divisorsOf, once per dividend
};

}  // namespace

Feasibility tuningFeasibility(const std::vector<Constraint>& constraints, const ArithBinding& sizes,
                              int64_t maxPoints) {
  return FeasibilityWalk(constraints, sizes, maxPoints).run();
}

}  // namespace weft
