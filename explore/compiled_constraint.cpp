// Compiled constraints (explore/compiled_constraint.h): Arith trees flattened into node arrays
// over parameter slots, evaluated with the overflow and division rules of weft::evaluate.
#include "explore/compiled_constraint.h"

#include <algorithm>
#include <climits>
#include <set>
#include <stdexcept>

namespace weft::explore {

namespace {

bool addChecked(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
bool mulChecked(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

}  // namespace

CompiledArith::CompiledArith(const Arith& e, const std::function<int(const std::string&)>& slotOf) {
  root_ = compile(e, slotOf);
  std::set<int> slots;
  for (const Node& n : nodes_) {
    if (n.kind == ArithKind::Var) slots.insert(n.slot);
  }
  slots_.assign(slots.begin(), slots.end());
}

int CompiledArith::compile(const Arith& e, const std::function<int(const std::string&)>& slotOf) {
  Node node;
  node.kind = e.kind();
  switch (e.kind()) {
    case ArithKind::Constant:
      node.value = *e.constant();
      break;
    case ArithKind::Var:
      node.slot = slotOf(e.varName());
      if (node.slot < 0) {
        throw std::invalid_argument("CompiledArith: variable " + e.varName() + " has no slot");
      }
      break;
    case ArithKind::Sum:
      node.value = e.sumConstant();
      for (const auto& [coefficient, monomial] : e.sumTerms()) {
        node.children.push_back({coefficient, compile(monomial, slotOf)});
      }
      break;
    case ArithKind::Product:
      node.value = e.productCoefficient();
      for (const Arith& factor : e.productFactors()) {
        node.children.push_back({0, compile(factor, slotOf)});
      }
      break;
    case ArithKind::Div:
    case ArithKind::Mod:
    case ArithKind::Min:
    case ArithKind::Max:
    case ArithKind::IfLess:
      for (const Arith& operand : e.operands()) {
        node.children.push_back({0, compile(operand, slotOf)});
      }
      break;
  }
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size()) - 1;
}

bool CompiledArith::eval(int index, const int64_t* values, int64_t& out) const {
  const Node& n = nodes_[index];
  switch (n.kind) {
    case ArithKind::Constant:
      out = n.value;
      return true;
    case ArithKind::Var:
      out = values[n.slot];
      return true;
    case ArithKind::Sum: {
      int64_t r = n.value;
      for (const auto& [coefficient, child] : n.children) {
        int64_t v, term;
        if (!eval(child, values, v) || !mulChecked(coefficient, v, term) ||
            !addChecked(r, term, r)) {
          return false;
        }
      }
      out = r;
      return true;
    }
    case ArithKind::Product: {
      int64_t r = n.value;
      for (const auto& [unused, child] : n.children) {
        int64_t v;
        if (!eval(child, values, v) || !mulChecked(r, v, r)) return false;
      }
      out = r;
      return true;
    }
    case ArithKind::Div:
    case ArithKind::Mod: {
      int64_t a, b;
      if (!eval(n.children[0].second, values, a) || !eval(n.children[1].second, values, b)) {
        return false;
      }
      if (b == 0) return false;
      if (a == INT64_MIN && b == -1) {
        if (n.kind == ArithKind::Mod) {
          out = 0;
          return true;
        }
        return false;
      }
      out = n.kind == ArithKind::Div ? a / b : a % b;
      return true;
    }
    case ArithKind::Min:
    case ArithKind::Max: {
      int64_t a, b;
      if (!eval(n.children[0].second, values, a) || !eval(n.children[1].second, values, b)) {
        return false;
      }
      out = n.kind == ArithKind::Min ? std::min(a, b) : std::max(a, b);
      return true;
    }
    case ArithKind::IfLess: {
      int64_t a, b;
      if (!eval(n.children[0].second, values, a) || !eval(n.children[1].second, values, b)) {
        return false;
      }
      return eval(n.children[a < b ? 2 : 3].second, values, out);
    }
  }
  return false;
}

CompiledConstraint::CompiledConstraint(const Constraint& c,
                                       const std::function<int(const std::string&)>& slotOf)
    : relation_(c.relation), lhs_(c.lhs, slotOf), rhs_(c.rhs, slotOf) {
  std::set<int> slots(lhs_.slots().begin(), lhs_.slots().end());
  slots.insert(rhs_.slots().begin(), rhs_.slots().end());
  slots_.assign(slots.begin(), slots.end());
}

bool CompiledConstraint::holds(const int64_t* values) const {
  std::optional<int64_t> left = lhs_.evaluate(values);
  if (!left) return false;
  std::optional<int64_t> right = rhs_.evaluate(values);
  if (!right) return false;
  switch (relation_) {
    case Relation::Equal:
      return *left == *right;
    case Relation::LessEqual:
      return *left <= *right;
    case Relation::Less:
      return *left < *right;
    case Relation::Divides:
      return *left > 0 && *right % *left == 0;
  }
  return false;
}

}  // namespace weft::explore
