// Encoding a parameter space for Z3, and the solver queries the sampler needs.
//
// Parameters become Z3 integer constants; each domain becomes a tracked assertion
// (lo <= p <= hi, or p in {1, 2, 4, ...} for powers of two, p in {0, 1} for switches), and
// each constraint a tracked assertion named after its index, so that an unsatisfiable space is
// explained by Z3's unsat core in the words of the program (Constraint::describe()).
//
// Arithmetic is exact integer arithmetic (Z3 Int, unbounded). Division and modulo are C's
// truncating operators, encoded soundly for any operand signs: for an atom a / b or a % b the
// encoding introduces fresh integers q and r with
//     b != 0,  a = q*b + r,  (a >= 0 -> 0 <= r < |b|),  (a < 0 -> -|b| < r <= 0),
// so q is a / b and r is a % b as C computes them; b may be a parameter (the products make the
// problem non-linear, which Z3 decides here because every parameter is bounded). The
// definitions of the atoms a constraint uses are part of that constraint's tracked assertion,
// so a division by zero makes the constraint false, as Constraint::evaluate does (it returns
// nullopt, which the space treats as violated). Values the C++ evaluator computes must fit in
// 64 bits; the domains are 64-bit, and the quantities of real programs (sizes, bytes) are far
// below 2^63, so Z3's unbounded integers and the evaluator agree. A divisibility p | n by a
// constant n (up to kMaxListedDividend) is encoded as the choice of n's divisors instead: Z3
// decides a remainder by a variable as a non-linear problem, which is factoring n.
#pragma once

#include <z3++.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "explore/parameter_space.h"
#include "ir/arith.h"
#include "ir/constraint.h"

namespace weft::explore {

// Translates Arith expressions and constraints into Z3 terms over one context. Division and
// modulo atoms are shared: the same atom gets the same q and r wherever it occurs.

class Z3Encoder {
 public:
  explicit Z3Encoder(z3::context& context) : context_(context) {}

  // The integer constant named `name` (created on first use).
  z3::expr variable(const std::string& name);
  // The term for `e`; the definitions of the / and % atoms it uses are appended to
  // `definitions` (each once per call chain that passes the same vector).
  z3::expr term(const Arith& e, z3::expr_vector& definitions);
  // The formula for a constraint, definitions of its / and % atoms included.
  z3::expr formula(const Constraint& constraint);
  // The formula for a parameter's domain.
  z3::expr domain(const Parameter& parameter);

 private:
  struct DivisionAtom {
    z3::expr quotient;
    z3::expr remainder;
    z3::expr definition;
  };
  const DivisionAtom& division(const Arith& dividend, const Arith& divisor);

  z3::context& context_;
  std::map<std::string, z3::expr> variables_;
  std::map<std::pair<Arith, Arith>, DivisionAtom> divisions_;
  int fresh_ = 0;
};

// An empty space. `conflicting` lists the constraints (and domains) of Z3's unsat core as
// sentences; what() is "the parameter space is empty: these constraints conflict: ...".
struct UnsatisfiableSpace : std::runtime_error {
  UnsatisfiableSpace(const std::string& message, std::vector<std::string> conflicting)
      : std::runtime_error(message), conflicting(std::move(conflicting)) {}
  std::vector<std::string> conflicting;
};

// Z3 could not decide a query (unknown); a limitation, not an empty space.
struct SolverUnknown : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A solver holding a whole space: every domain and constraint asserted.
class SpaceSolver {
 public:
  // `timeoutMs` bounds each check (0: no bound).
  explicit SpaceSolver(const ParameterSpace& space, unsigned timeoutMs = 20000);
  SpaceSolver(const SpaceSolver&) = delete;
  SpaceSolver& operator=(const SpaceSolver&) = delete;

  // Throws UnsatisfiableSpace naming the unsat core when no point satisfies everything, and
  // SolverUnknown when Z3 cannot decide.
  void requireSatisfiable();
  // Whether the parameters given as (index into space.parameters, value) can be completed to
  // a valid point. Z3's `unknown` counts as extendable (the sampler re-checks every point).
  bool extendable(const std::vector<std::pair<int, int64_t>>& assigned);
  // Z3's verdict on one constraint at a complete point (values in parameter order): whether
  // the constraint's formula is satisfiable with every parameter fixed. For tests: it must
  // agree with Constraint::evaluate.
  bool holdsAt(size_t constraintIndex, const std::vector<int64_t>& values);
  // A model of the whole space (values in parameter order).
  std::vector<int64_t> anyPoint();

  uint64_t checks() const { return checks_; }

 private:
  const ParameterSpace& space_;
  z3::context context_;
  Z3Encoder encoder_;
  z3::solver solver_;    // domains and constraints asserted plainly (for extendability)
  z3::solver single_;    // nothing asserted outside push/pop (for holdsAt)
  std::vector<z3::expr> parameters_;
  std::vector<z3::expr> constraintFormulas_;
  std::vector<z3::expr> domainFormulas_;
  uint64_t checks_ = 0;
};

// Whether `lowered` has a point at `sizes` that meets its type conditions and the caps
// options.device's space puts on its unrolled loops (SpaceOptions::maxUnrolledIterations), the
// other hardware constraints left out: false only when it is proven that there is none (a map
// unrolled over a whole row of a size). The rewrite search asks it of each lowering it might
// keep (rewrite::SearchOptions::withinLimits). A walk over the parameters' ranges
// (typecheck/feasibility.h) decides most; Z3 those it cannot, such as a padding ranging over
// millions of values.
// Z3's work is bounded by `resourceLimit` (its rlimit, deterministic, unlike a timeout: the
// search must reach the same structures on every machine); undecided counts as a point.
bool unrollCapsLeaveAPoint(const Definition& lowered, const ArithBinding& sizes,
                           const SpaceOptions& options, unsigned resourceLimit = 1000000);

}  // namespace weft::explore
