// Z3 encoding of parameter spaces (explore/z3_encoding.h): Arith terms, the C truncating
// division and remainder through fresh quotient/remainder integers, constraints and domains
// as tracked assertions, and the solver queries of the sampler (satisfiability with an unsat
// core, extendability of a partial assignment, one constraint at a point).
#include "explore/z3_encoding.h"

#include <memory>
#include <optional>
#include <string>

#include "typecheck/feasibility.h"
#include "typecheck/typecheck.h"

namespace weft::explore {

z3::expr Z3Encoder::variable(const std::string& name) {
  auto found = variables_.find(name);
  if (found != variables_.end()) return found->second;
  z3::expr v = context_.int_const(name.c_str());
  variables_.emplace(name, v);
  return v;
}

const Z3Encoder::DivisionAtom& Z3Encoder::division(const Arith& dividend, const Arith& divisor) {
  auto key = std::make_pair(dividend, divisor);
  auto found = divisions_.find(key);
  if (found != divisions_.end()) return found->second;
  z3::expr_vector inner(context_);
  z3::expr a = term(dividend, inner);
  z3::expr b = term(divisor, inner);
  ++fresh_;
  z3::expr q = context_.int_const(("div_q!" + std::to_string(fresh_)).c_str());
  z3::expr r = context_.int_const(("div_r!" + std::to_string(fresh_)).c_str());
  z3::expr zero = context_.int_val(0);
  z3::expr magnitude = z3::ite(b >= zero, b, -b);
  // C99 truncating division: a = q*b + r, r takes the sign of a and |r| < |b|.
  z3::expr definition = b != zero && a == q * b + r &&
                        z3::implies(a >= zero, r >= zero && r < magnitude) &&
                        z3::implies(a < zero, r <= zero && r > -magnitude);
  if (!inner.empty()) definition = z3::mk_and(inner) && definition;
  return divisions_.emplace(key, DivisionAtom{q, r, definition}).first->second;
}

z3::expr Z3Encoder::term(const Arith& e, z3::expr_vector& definitions) {
  switch (e.kind()) {
    case ArithKind::Constant:
      return context_.int_val(static_cast<int64_t>(*e.constant()));
    case ArithKind::Var:
      return variable(e.varName());
    case ArithKind::Sum: {
      z3::expr sum = context_.int_val(static_cast<int64_t>(e.sumConstant()));
      for (const auto& [coefficient, monomial] : e.sumTerms()) {
        sum = sum + context_.int_val(static_cast<int64_t>(coefficient)) * term(monomial, definitions);
      }
      return sum;
    }
    case ArithKind::Product: {
      z3::expr product = context_.int_val(static_cast<int64_t>(e.productCoefficient()));
      for (const Arith& factor : e.productFactors()) product = product * term(factor, definitions);
      return product;
    }
    case ArithKind::Div:
    case ArithKind::Mod: {
      const DivisionAtom& atom = division(e.operands()[0], e.operands()[1]);
      definitions.push_back(atom.definition);
      return e.kind() == ArithKind::Div ? atom.quotient : atom.remainder;
    }
    case ArithKind::Min: {
      z3::expr a = term(e.operands()[0], definitions);
      z3::expr b = term(e.operands()[1], definitions);
      return z3::ite(a <= b, a, b);
    }
    case ArithKind::Max: {
      z3::expr a = term(e.operands()[0], definitions);
      z3::expr b = term(e.operands()[1], definitions);
      return z3::ite(a >= b, a, b);
    }
    case ArithKind::IfLess: {
      z3::expr a = term(e.operands()[0], definitions);
      z3::expr b = term(e.operands()[1], definitions);
      z3::expr then = term(e.operands()[2], definitions);
      z3::expr otherwise = term(e.operands()[3], definitions);
      return z3::ite(a < b, then, otherwise);
    }
  }
  throw std::logic_error("Z3Encoder: unknown Arith kind in " + e.toString());
}

z3::expr Z3Encoder::formula(const Constraint& constraint) {
  z3::expr_vector definitions(context_);
  z3::expr relation = context_.bool_val(true);
  const std::optional<int64_t> constantDividend = constraint.rhs.constant();
  if (constraint.relation == Relation::Divides && constantDividend && *constantDividend > 0 &&
      *constantDividend <= kMaxListedDividend) {
    // lhs | n for a constant n: lhs is one of n's divisors. The same condition as the
    // remainder below, but a finite choice; as a remainder with a variable divisor it is
    // non-linear, and for a prime n (a prime length split by a parameter) Z3 must in effect
    // prove n prime.
    z3::expr divisor = term(constraint.lhs, definitions);
    z3::expr_vector choices(context_);
    for (int64_t d : divisorsOf(*constantDividend)) {
      choices.push_back(divisor == context_.int_val(static_cast<int64_t>(d)));
    }
    relation = z3::mk_or(choices);
  } else if (constraint.relation == Relation::Divides) {
    // lhs | rhs: lhs > 0 and rhs % lhs == 0, as Constraint::evaluate decides it.
    z3::expr divisor = term(constraint.lhs, definitions);
    term(constraint.rhs, definitions);
    const DivisionAtom& atom = division(constraint.rhs, constraint.lhs);
    definitions.push_back(atom.definition);
    relation = divisor > context_.int_val(0) && atom.remainder == context_.int_val(0);
  } else {
    z3::expr lhs = term(constraint.lhs, definitions);
    z3::expr rhs = term(constraint.rhs, definitions);
    switch (constraint.relation) {
      case Relation::Equal:
        relation = lhs == rhs;
        break;
      case Relation::LessEqual:
        relation = lhs <= rhs;
        break;
      case Relation::Less:
        relation = lhs < rhs;
        break;
      case Relation::Divides:
        break;
    }
  }
  if (definitions.empty()) return relation;
  return z3::mk_and(definitions) && relation;
}

z3::expr Z3Encoder::domain(const Parameter& parameter) {
  z3::expr x = variable(parameter.name);
  if (parameter.kind == DomainKind::Range) {
    return x >= context_.int_val(static_cast<int64_t>(parameter.lo)) &&
           x <= context_.int_val(static_cast<int64_t>(parameter.hi));
  }
  z3::expr_vector choices(context_);
  for (int64_t value : parameter.values()) {
    choices.push_back(x == context_.int_val(static_cast<int64_t>(value)));
  }
  if (choices.empty()) return context_.bool_val(false);
  return z3::mk_or(choices);
}

// ---- SpaceSolver -------------------------------------------------------------------------

SpaceSolver::SpaceSolver(const ParameterSpace& space, unsigned timeoutMs)
    : space_(space), encoder_(context_), solver_(context_), single_(context_) {
  if (timeoutMs > 0) {
    z3::params params(context_);
    params.set("timeout", timeoutMs);
    solver_.set(params);
  }
  for (const Parameter& p : space.parameters) {
    parameters_.push_back(encoder_.variable(p.name));
    domainFormulas_.push_back(encoder_.domain(p));
    solver_.add(domainFormulas_.back());
  }
  for (const SpaceConstraint& c : space.constraints) {
    constraintFormulas_.push_back(encoder_.formula(c.constraint));
    solver_.add(constraintFormulas_.back());
  }
}

void SpaceSolver::requireSatisfiable() {
  z3::solver tracked(context_);
  z3::params params(context_);
  params.set("timeout", 60000u);
  tracked.set(params);
  for (size_t i = 0; i < domainFormulas_.size(); ++i) {
    tracked.add(domainFormulas_[i], ("domain!" + std::to_string(i)).c_str());
  }
  for (size_t i = 0; i < constraintFormulas_.size(); ++i) {
    tracked.add(constraintFormulas_[i], ("constraint!" + std::to_string(i)).c_str());
  }
  ++checks_;
  z3::check_result result = tracked.check();
  if (result == z3::sat) return;
  if (result == z3::unknown) {
    throw SolverUnknown("Z3 could not decide whether the parameter space is empty (" +
                        tracked.reason_unknown() + ")");
  }
  std::vector<std::string> conflicting;
  z3::expr_vector core = tracked.unsat_core();
  for (unsigned i = 0; i < core.size(); ++i) {
    std::string name = core[i].decl().name().str();
    size_t bang = name.find('!');
    size_t index = std::stoul(name.substr(bang + 1));
    if (name.rfind("domain!", 0) == 0) {
      const Parameter& p = space_.parameters[index];
      conflicting.push_back(p.name + " ranges over " + p.domainText());
    } else {
      conflicting.push_back(space_.constraints[index].constraint.describe());
    }
  }
  std::string message = "the parameter space of " + space_.definitionName +
                        " is empty: these constraints conflict:";
  for (const std::string& c : conflicting) message += "\n  - " + c;
  throw UnsatisfiableSpace(message, std::move(conflicting));
}

bool SpaceSolver::extendable(const std::vector<std::pair<int, int64_t>>& assigned) {
  solver_.push();
  for (const auto& [index, value] : assigned) {
    solver_.add(parameters_[index] == context_.int_val(static_cast<int64_t>(value)));
  }
  ++checks_;
  z3::check_result result = solver_.check();
  solver_.pop();
  return result != z3::unsat;
}

bool SpaceSolver::holdsAt(size_t constraintIndex, const std::vector<int64_t>& values) {
  single_.push();
  single_.add(constraintFormulas_.at(constraintIndex));
  for (size_t i = 0; i < values.size(); ++i) {
    single_.add(parameters_[i] == context_.int_val(static_cast<int64_t>(values[i])));
  }
  ++checks_;
  z3::check_result result = single_.check();
  single_.pop();
  if (result == z3::unknown) throw SolverUnknown("Z3 could not decide a constraint at a point");
  return result == z3::sat;
}

std::vector<int64_t> SpaceSolver::anyPoint() {
  ++checks_;
  if (solver_.check() != z3::sat) throw SolverUnknown("no point found");
  z3::model model = solver_.get_model();
  std::vector<int64_t> values;
  for (const z3::expr& p : parameters_) {
    values.push_back(model.eval(p, true).get_numeral_int64());
  }
  return values;
}

namespace {
// The partial assignments unrollCapsLeaveAPoint walks before it asks Z3.
constexpr int64_t kWalkedPoints = 20000;
}  // namespace

bool unrollCapsLeaveAPoint(const Definition& lowered, const ArithBinding& sizes,
                           const SpaceOptions& options, unsigned resourceLimit) {
  if (!options.device) return true;
  try {
    // Without unrolled loops there is no cap to check.
    // The search remembered the lowering's types when it made it.
    const std::shared_ptr<const TypedDefinition> typed = typecheckRemembered(lowered);
    std::vector<Constraint> constraints = unrolledLoopConstraints(lowered, *typed, options);
    if (constraints.empty()) return true;
    // A short walk decides most programs; Z3 the rest.
    constraints.insert(constraints.end(), typed->constraints.begin(), typed->constraints.end());
    const Feasibility walked = tuningFeasibility(constraints, sizes, kWalkedPoints);
    if (walked != Feasibility::Unknown) return walked == Feasibility::Feasible;
    SpaceOptions capsOnly = options;
    capsOnly.hardwareAnalysis = false;
    const ParameterSpace space = buildParameterSpace(lowered, sizes, capsOnly);
    z3::context context;
    Z3Encoder encoder(context);
    z3::solver solver(context);
    z3::params params(context);
    params.set("rlimit", resourceLimit);
    solver.set(params);
    for (const Parameter& p : space.parameters) solver.add(encoder.domain(p));
    for (const SpaceConstraint& c : space.constraints) solver.add(encoder.formula(c.constraint));
    return solver.check() != z3::unsat;
  } catch (const std::exception&) {
    return true;  // undecided, or a program the explorer reports on itself
  }
}

}  // namespace weft::explore
