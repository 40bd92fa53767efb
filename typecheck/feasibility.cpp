// Bounded exhaustive search for values of the tuning parameters that meet a program's
// constraints (feasibility.h).
#include "typecheck/feasibility.h"

#include <algorithm>
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

  // true: a complete assignment meets everything; false: none below this prefix does;
  // nullopt: the walk's bound was reached.
  std::optional<bool> walk(size_t depth) {
    if (depth == order_.size()) return true;
    const Arith& v = order_[depth];
    const std::optional<int64_t> lo = tryEvaluate(v.varLo(), binding_);
    const std::optional<int64_t> hi = tryEvaluate(*v.varHi(), binding_);
    if (!lo || !hi) return std::nullopt;
    for (int64_t value = *lo; value <= *hi; ++value) {
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
};

}  // namespace

Feasibility tuningFeasibility(const std::vector<Constraint>& constraints, const ArithBinding& sizes,
                              int64_t maxPoints) {
  return FeasibilityWalk(constraints, sizes, maxPoints).run();
}

}  // namespace weft
