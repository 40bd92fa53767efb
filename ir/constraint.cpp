// Constraints on size variables and tuning parameters (ir/constraint.h): how they print as
// formulas and sentences, which variables they mention, their truth under a binding and what
// can be decided about them without one.
//
// Sentences read in the words of the program: a divisibility constraint from split reads
// "split by 4 requires N % 4 = 0 (...)", one from asVector "asVector to width 4 requires ...",
// so an unsatisfiable parameter space can be explained to the user without mentioning the
// internal relation names. Deciding uses the sound but incomplete range reasoning of
// ir/arith.h: `true`/`false` only when proven, constants always fold.
#include "ir/constraint.h"

#include <algorithm>
#include <set>

namespace weft {

namespace {

// Operands of % (and of the sides of a relation) are parenthesised when they are not atomic,
// so that "(N - 3) % 2 = 0" cannot be misread. Products are parenthesised on the right of %
// only: "2*N % 4" reads correctly with C precedence, "N % (2*v)" needs them.
bool isAtomic(const Arith& e) {
  switch (e.kind()) {
    case ArithKind::Constant:
      return *e.constant() >= 0;
    case ArithKind::Var:
    case ArithKind::Min:
    case ArithKind::Max:
    case ArithKind::IfLess:
      return true;
    default:
      return false;
  }
}

std::string leftOperand(const Arith& e) {
  if (isAtomic(e) || e.kind() == ArithKind::Product) return e.toString();
  return "(" + e.toString() + ")";
}

std::string rightOperand(const Arith& e) {
  if (isAtomic(e)) return e.toString();
  return "(" + e.toString() + ")";
}

// How the origin reads in a sentence. Divisibility constraints name the divisor the way the
// program spells it: "split by 4", "asVector to width v", "reorder with stride s",
// "slideStrict with step 2".
std::string originPhrase(const Constraint& c) {
  if (c.origin.empty()) return "the program";
  if (c.relation != Relation::Divides) return c.origin;
  const std::string divisor = c.lhs.toString();
  if (c.origin == "split") return "split by " + divisor;
  if (c.origin == "asVector") return "asVector to width " + divisor;
  if (c.origin == "reorder") return "reorder with stride " + divisor;
  if (c.origin == "slideStrict") return "slideStrict with step " + divisor;
  return c.origin;
}

}  // namespace

const char* relationSymbol(Relation relation) {
  switch (relation) {
    case Relation::Equal:
      return "=";
    case Relation::LessEqual:
      return "<=";
    case Relation::Less:
      return "<";
    case Relation::Divides:
      return "|";
  }
  return "?";
}

std::string Constraint::formula() const {
  if (relation == Relation::Divides) {
    return leftOperand(rhs) + " % " + rightOperand(lhs) + " = 0";
  }
  return lhs.toString() + " " + relationSymbol(relation) + " " + rhs.toString();
}

std::string Constraint::requirement() const {
  return originPhrase(*this) + " requires " + formula();
}

std::string Constraint::describe() const {
  std::string sentence = requirement();
  if (!reason.empty()) sentence += " (" + reason + ")";
  return sentence;
}

std::vector<Arith> Constraint::vars() const {
  std::vector<Arith> out;
  std::set<std::string> seen;
  for (const Arith* side : {&lhs, &rhs}) {
    for (const Arith& v : side->vars()) {
      if (seen.insert(v.varName()).second) out.push_back(v);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Arith& a, const Arith& b) { return a.varName() < b.varName(); });
  return out;
}

std::optional<bool> Constraint::evaluate(const ArithBinding& binding) const {
  std::optional<int64_t> left = tryEvaluate(lhs, binding);
  std::optional<int64_t> right = tryEvaluate(rhs, binding);
  if (!left || !right) return std::nullopt;
  switch (relation) {
    case Relation::Equal:
      return *left == *right;
    case Relation::LessEqual:
      return *left <= *right;
    case Relation::Less:
      return *left < *right;
    case Relation::Divides:
      return *left > 0 && *right % *left == 0;
  }
  return std::nullopt;
}

std::optional<bool> Constraint::decide() const {
  if (lhs.isConstant() && rhs.isConstant()) return evaluate({});
  switch (relation) {
    case Relation::Equal: {
      Arith difference = lhs - rhs;
      if (difference.isConstant()) return *difference.constant() == 0;
      if (proveLess(lhs, rhs) || proveLess(rhs, lhs)) return false;
      return std::nullopt;
    }
    case Relation::LessEqual:
      if (proveLessEqual(lhs, rhs)) return true;
      if (proveLess(rhs, lhs)) return false;
      return std::nullopt;
    case Relation::Less:
      if (proveLess(lhs, rhs)) return true;
      if (proveLessEqual(rhs, lhs)) return false;
      return std::nullopt;
    case Relation::Divides: {
      if (proveLessEqual(lhs, Arith(0))) return false;  // a divisor must be positive
      const bool positive = provePositive(lhs);
      if (positive && proveDivides(lhs, rhs)) return true;
      // The remainder folds to a constant, e.g. (4*n + 2) % 4 -> 2.
      Arith remainder = rhs % lhs;
      if (positive && remainder.isConstant()) return *remainder.constant() == 0;
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool Constraint::operator==(const Constraint& other) const {
  return relation == other.relation && lhs == other.lhs && rhs == other.rhs;
}

}  // namespace weft
