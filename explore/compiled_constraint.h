// Fast evaluation of a space's constraints at points: Arith expressions and constraints compiled
// to postfix programs over parameter slots, so that the counting sampler (counting_sampler.h)
// can test millions of candidate values without building name-keyed bindings.
//
// The meaning is exactly that of weft::evaluate and Constraint::evaluate (ir/arith.cpp,
// ir/constraint.cpp): 64-bit arithmetic where an overflow of a sum or product, a division or
// remainder by zero, or INT64_MIN / -1 makes the expression undefined; sums and products are
// folded in the same order; min and max evaluate both operands, a conditional only the branch
// it takes. An undefined side makes a constraint false, as the space treats it. The tests
// compare both evaluators on random points.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/constraint.h"

namespace weft::explore {

class CompiledArith {
 public:
  CompiledArith() = default;
  // `slotOf` maps a variable name to its index in the value arrays given to evaluate; it
  // returns -1 for a name it does not know, which makes compilation throw std::invalid_argument.
  CompiledArith(const Arith& e, const std::function<int(const std::string&)>& slotOf);

  // The value with variables read from values[slot]; nullopt when undefined.
  std::optional<int64_t> evaluate(const int64_t* values) const {
    int64_t out;
    if (!eval(values, out)) return std::nullopt;
    return out;
  }
  // The slots the expression reads, sorted, each once.
  const std::vector<int>& slots() const { return slots_; }
  bool isConstant() const { return slots_.empty(); }
  // Instructions in the program: a measure of the cost of one evaluation.
  size_t length() const { return program_.size(); }

 private:
  // The expression as a postfix program over a value stack: operands first, then the operation
  // (Sum and Product fold their `count` operands in order, as weft::evaluate does); a
  // conditional tests its first two operands and jumps over the branch it does not take.
  enum class Op : uint8_t {
    Constant,     // push value
    Var,          // push values[slot]
    Sum,          // pop count values v_i; push value + sum coefficients_[first + i] * v_i
    Product,      // pop count values; push value * their product
    Div,
    Mod,
    Min,
    Max,
    JumpUnlessLess,  // pop b, a; unless a < b continue at `target`
    Jump,            // continue at `target`
  };
  struct Instruction {
    Op op = Op::Constant;
    int64_t value = 0;  // Constant; Sum: the constant term; Product: the coefficient
    int slot = -1;      // Var
    int count = 0;      // Sum, Product: operands
    int first = 0;      // Sum: index of the first coefficient in coefficients_
    int target = 0;     // jumps
  };
  void compile(const Arith& e, const std::function<int(const std::string&)>& slotOf, int depth);
  bool eval(const int64_t* values, int64_t& out) const;
  bool run(const int64_t* values, int64_t* stack, int64_t& out) const;

  std::vector<Instruction> program_;
  std::vector<int64_t> coefficients_;
  int maxDepth_ = 0;
  std::vector<int> slots_;
};

class CompiledConstraint {
 public:
  CompiledConstraint() = default;
  CompiledConstraint(const Constraint& c, const std::function<int(const std::string&)>& slotOf);

  // Constraint::evaluate with an undefined side counted as false.
  bool holds(const int64_t* values) const;
  const std::vector<int>& slots() const { return slots_; }
  Relation relation() const { return relation_; }
  const CompiledArith& lhs() const { return lhs_; }
  const CompiledArith& rhs() const { return rhs_; }
  size_t length() const { return lhs_.length() + rhs_.length(); }

 private:
  Relation relation_ = Relation::Equal;
  CompiledArith lhs_;
  CompiledArith rhs_;
  std::vector<int> slots_;
};

}  // namespace weft::explore
