// Compiled constraints (explore/compiled_constraint.h): Arith trees flattened into postfix
// programs over parameter slots, evaluated with the overflow and division rules of
// weft::evaluate.
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
  compile(e, slotOf, 1);
  std::set<int> slots;
  for (const Instruction& i : program_) {
    if (i.op == Op::Var) slots.insert(i.slot);
  }
  slots_.assign(slots.begin(), slots.end());
}

// Appends the program of `e`, which leaves its value on the stack at height `depth`.
void CompiledArith::compile(const Arith& e, const std::function<int(const std::string&)>& slotOf,
                            int depth) {
  maxDepth_ = std::max(maxDepth_, depth);
  Instruction in;
  switch (e.kind()) {
    case ArithKind::Constant:
      in.op = Op::Constant;
      in.value = *e.constant();
      break;
    case ArithKind::Var:
      in.op = Op::Var;
      in.slot = slotOf(e.varName());
      if (in.slot < 0) {
        throw std::invalid_argument("CompiledArith: variable " + e.varName() + " has no slot");
      }
      break;
    case ArithKind::Sum: {
      in.op = Op::Sum;
      in.value = e.sumConstant();
      const auto terms = e.sumTerms();
      in.count = static_cast<int>(terms.size());
      std::vector<int64_t> coefficients;
      for (size_t i = 0; i < terms.size(); ++i) {
        compile(terms[i].second, slotOf, depth + static_cast<int>(i));
        coefficients.push_back(terms[i].first);
      }
      in.first = static_cast<int>(coefficients_.size());
      coefficients_.insert(coefficients_.end(), coefficients.begin(), coefficients.end());
      break;
    }
    case ArithKind::Product: {
      in.op = Op::Product;
      in.value = e.productCoefficient();
      const auto factors = e.productFactors();
      in.count = static_cast<int>(factors.size());
      for (size_t i = 0; i < factors.size(); ++i) {
        compile(factors[i], slotOf, depth + static_cast<int>(i));
      }
      break;
    }
    case ArithKind::Div:
    case ArithKind::Mod:
    case ArithKind::Min:
    case ArithKind::Max: {
      const auto& operands = e.operands();
      compile(operands[0], slotOf, depth);
      compile(operands[1], slotOf, depth + 1);
      in.op = e.kind() == ArithKind::Div   ? Op::Div
              : e.kind() == ArithKind::Mod ? Op::Mod
              : e.kind() == ArithKind::Min ? Op::Min
                                           : Op::Max;
      break;
    }
    case ArithKind::IfLess: {
      const auto& operands = e.operands();
      compile(operands[0], slotOf, depth);
      compile(operands[1], slotOf, depth + 1);
      const size_t test = program_.size();
      program_.push_back(Instruction{Op::JumpUnlessLess});
      compile(operands[2], slotOf, depth);
      const size_t skip = program_.size();
      program_.push_back(Instruction{Op::Jump});
      program_[test].target = static_cast<int>(program_.size());
      compile(operands[3], slotOf, depth);
      program_[skip].target = static_cast<int>(program_.size());
      return;
    }
  }
  program_.push_back(in);
}

bool CompiledArith::eval(const int64_t* values, int64_t& out) const {
  constexpr int kLocalStack = 64;
  if (maxDepth_ <= kLocalStack) {
    int64_t stack[kLocalStack];
    return run(values, stack, out);
  }
  std::vector<int64_t> stack(static_cast<size_t>(maxDepth_));
  return run(values, stack.data(), out);
}

// Any undefined operation makes the whole expression undefined (no operation ignores an
// undefined operand it evaluates), so the program stops at the first one.
bool CompiledArith::run(const int64_t* values, int64_t* stack, int64_t& out) const {
  int top = 0;  // values on the stack
  const Instruction* code = program_.data();
  const int size = static_cast<int>(program_.size());
  for (int pc = 0; pc < size; ++pc) {
    const Instruction& in = code[pc];
    switch (in.op) {
      case Op::Constant:
        stack[top++] = in.value;
        break;
      case Op::Var:
        stack[top++] = values[in.slot];
        break;
      case Op::Sum: {
        int64_t r = in.value;
        const int64_t* operands = stack + top - in.count;
        const int64_t* coefficients = coefficients_.data() + in.first;
        for (int i = 0; i < in.count; ++i) {
          int64_t term;
          if (!mulChecked(coefficients[i], operands[i], term) || !addChecked(r, term, r)) {
            return false;
          }
        }
        top -= in.count;
        stack[top++] = r;
        break;
      }
      case Op::Product: {
        int64_t r = in.value;
        const int64_t* operands = stack + top - in.count;
        for (int i = 0; i < in.count; ++i) {
          if (!mulChecked(r, operands[i], r)) return false;
        }
        top -= in.count;
        stack[top++] = r;
        break;
      }
      case Op::Div:
      case Op::Mod: {
        const int64_t b = stack[--top];
        const int64_t a = stack[top - 1];
        if (b == 0) return false;
        if (a == INT64_MIN && b == -1) {
          if (in.op == Op::Div) return false;
          stack[top - 1] = 0;
          break;
        }
        stack[top - 1] = in.op == Op::Div ? a / b : a % b;
        break;
      }
      case Op::Min:
      case Op::Max: {
        const int64_t b = stack[--top];
        const int64_t a = stack[top - 1];
        stack[top - 1] = in.op == Op::Min ? std::min(a, b) : std::max(a, b);
        break;
      }
      case Op::JumpUnlessLess: {
        const int64_t b = stack[--top];
        const int64_t a = stack[--top];
        if (!(a < b)) pc = in.target - 1;
        break;
      }
      case Op::Jump:
        pc = in.target - 1;
        break;
    }
  }
  out = stack[0];
  return true;
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
