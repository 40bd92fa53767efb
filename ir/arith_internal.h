// Private to ir/arith.cpp and ir/arith_simplify.cpp: the layout of an `Arith` node and the
// polynomial view the simplifier computes with. Nothing outside ir/arith*.cpp includes it.
//
// Every canonical expression is one of: a Constant; an atom (Var, Div, Mod, Min, Max,
// IfLess); a Product c*m of a coefficient c and a monomial m (c != 1 or m has >= 2 atoms); or
// a Sum k + c1*m1 + ... + cn*mn of a constant and >= 1 terms with distinct monomials, where
// either n >= 2 or k != 0. A monomial is an atom or a Product with coefficient 1 of >= 2 atoms
// sorted by the structural order (with repetition for powers). Arithmetic works on `Poly`, the
// (constant, terms) view of any expression, and converts back with `fromPoly`, which is the one
// place that decides the canonical shape.
#pragma once

#include <span>

#include "ir/arith.h"

namespace weft {

struct ArithNode {
  ArithKind kind = ArithKind::Constant;
  size_t hash = 0;
  // Constant: its value. Product: the coefficient. Sum: the constant term.
  int64_t value = 0;
  // True when every variable in the expression is a size or tuning variable with constant
  // bounds: range reasoning keeps such variables symbolic (they are what bounds are written in).
  bool onlyKeptVars = true;
  // Number of nodes of the expression as a tree (saturating): orders atoms by size cheaply.
  uint32_t size = 1;
  // Var: name, kind and inclusive range (hi absent: unbounded above).
  std::string name;
  VarKind varKind = VarKind::Size;
  std::optional<Arith> lo;
  std::optional<Arith> hi;
  // Product: the atom factors, sorted. Div/Mod/Min/Max: two operands. IfLess: four.
  std::vector<Arith> ops;
  // Sum: the (coefficient, monomial) terms in monomial order.
  std::vector<std::pair<int64_t, Arith>> terms;
  // Product with coefficient != 1 and >= 2 atoms: the monomial (same atoms, coefficient 1).
  std::optional<Arith> mono;
};

// The only code that wraps nodes into `Arith` values (friend of Arith).
struct ArithBuilder {
  static Arith wrap(std::shared_ptr<const ArithNode> node) { return Arith(std::move(node)); }
};

namespace arith_detail {

// ---- checked 64-bit arithmetic (throws ArithError on overflow) ----
int64_t addChecked(int64_t a, int64_t b);
int64_t mulChecked(int64_t a, int64_t b);
int64_t negChecked(int64_t a);

// ---- raw node construction (no simplification) ----
Arith makeConstant(int64_t value);
// An atom of kind Div, Mod, Min, Max or IfLess with the given (canonical) operands.
Arith makeAtom(ArithKind kind, std::vector<Arith> operands);
// A monomial from sorted atoms: the atom itself for one, a coefficient-1 Product for more.
Arith makeMono(std::vector<Arith> sortedAtoms);

// ---- orders ----
// The structural total order: kind first, then contents; variables by name.
int compare(const Arith& a, const Arith& b);
// The atoms of a monomial (a span of one for an atom). The span lives as long as `mono`.
std::span<const Arith> monoAtoms(const Arith& mono);
// Monomial order (graded lexicographic): negative when `a` comes first in a sum, i.e. has the
// higher degree, or equal degree and the smaller first differing atom.
int compareMono(const Arith& a, const Arith& b);
bool isAtomKind(ArithKind kind);

// ---- polynomial view ----
struct Term {
  int64_t coef;
  Arith mono;
};
struct Poly {
  int64_t constant = 0;
  std::vector<Term> terms;  // sorted by compareMono, distinct monomials, non-zero coefficients
  bool isZero() const { return constant == 0 && terms.empty(); }
};

Poly toPoly(const Arith& e);
// Sorts, merges equal monomials and drops zero coefficients.
Poly normalize(int64_t constant, std::vector<Term> terms);
Poly addPoly(const Poly& a, const Poly& b);
Poly negPoly(const Poly& a);
Poly scalePoly(const Poly& a, int64_t factor);
Poly mulPoly(const Poly& a, const Poly& b);
Arith monoMul(const Arith& a, const Arith& b);
// Builds the canonical expression of a polynomial; sums with / or % terms go through
// refoldDivMod, so that (x/b)*b + x%b -> x, x - (x/b)*b -> x%b, x - x%b -> (x/b)*b.
Arith fromPoly(Poly p);

// True while a proof or bound computation runs. Expressions built there only serve the proof,
// so fromPoly skips the (costly) refolding of / and % in sums: that keeps nested proofs from
// multiplying work. Everything a caller gets back is built outside proofs.
bool insideProof();

// ---- simplifying constructors of atoms (arith_simplify.cpp) ----
Arith simplifyDivMod(const Arith& a, const Arith& b, bool isMod);
Arith simplifyMinMax(const Arith& a, const Arith& b, bool isMax);
Arith simplifyIfLess(const Arith& a, const Arith& b, const Arith& then, const Arith& otherwise);
// The canonical treatment of / and % in sums (see fromPoly): expands every top-level x%b to
// x - b*(x/b), then folds divisions back into remainders while that shrinks the sum.
bool refoldDivMod(Poly& p);

// Division of polynomials: a = q*b + r where no term of r is divisible by the leading term of
// b. nullopt when the divisor is zero or the division did not finish within its step limit.
struct QuotientRemainder {
  Poly q;
  Poly r;
};
std::optional<QuotientRemainder> polyDivide(const Poly& a, const Poly& b);

}  // namespace arith_detail
}  // namespace weft
