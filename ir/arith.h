// Symbolic integer arithmetic: the lengths in array types, the tuning parameters that rewrite
// rules introduce and every index expression the code generator prints are `Arith` values.
//
// An `Arith` is an immutable, shared, always-canonical expression. Every constructor
// simplifies, so two expressions that are equal as polynomials compare and hash equal however
// they were built: sums are flattened into (coefficient, monomial) terms with constants folded,
// monomials are sorted products of atoms, and atoms (variables, /, %, min, max, conditionals)
// are ordered by a fixed structural order. Division and modulo are C's truncating operators
// (the code generator prints them as C); they are simplified using variable ranges and
// divisibility, e.g. (4*i + j) / 4 -> i and (4*i + j) % 4 -> j when 0 <= j < 4, (n*m)/m -> n.
//
// Variables carry a name (a name denotes one variable: equality and hashing use the name), an
// inclusive range whose bounds may be symbolic (a loop index i in [0, n-1]) and a kind.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace weft {

// What a variable stands for. Sizes come from program inputs, tuning parameters from rewrite
// rules, indices from loops and OpenCL thread ids in generated code.
enum class VarKind { Size, Tuning, LoopIndex, ThreadIndex };

const char* varKindName(VarKind kind);

enum class ArithKind {
  Constant,  // a 64-bit integer
  Var,       // a named variable with a range
  Sum,       // constant + sum of coefficient * monomial terms
  Product,   // coefficient * product of atoms (a single term of a sum)
  Div,       // truncating division a / b (an atom)
  Mod,       // truncating remainder a % b (an atom)
  Min,       // min(a, b) (an atom)
  Max,       // max(a, b) (an atom)
  IfLess,    // (a < b) ? c : d (an atom)
};

struct ArithNode;

// Thrown when an expression cannot be evaluated (unbound variable, division by zero) or an
// operation is meaningless (a variable with an empty range).
struct ArithError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Arith {
 public:
  Arith();  // the constant 0
  Arith(int64_t value);  // NOLINT: implicit so that n + 1 and 2 * n read naturally
  Arith(int value) : Arith(static_cast<int64_t>(value)) {}  // NOLINT

  // A variable. `lo`/`hi` are the inclusive bounds; `hi` absent means unbounded above.
  static Arith var(std::string name, VarKind kind, Arith lo = Arith(0),
                   std::optional<Arith> hi = std::nullopt);
  // A size variable: a positive length of unbounded size.
  static Arith size(std::string name);

  ArithKind kind() const;
  bool isConstant() const { return kind() == ArithKind::Constant; }
  std::optional<int64_t> constant() const;
  bool isVar() const { return kind() == ArithKind::Var; }

  // Variable accessors (only valid when isVar()).
  const std::string& varName() const;
  VarKind varKind() const;
  const Arith& varLo() const;
  const std::optional<Arith>& varHi() const;

  // Structural access to the canonical form, for printers and encoders (Z3, C).
  // Sum: constant term, then (coefficient, monomial) pairs where each monomial is a Product
  // with coefficient 1 or an atom. Product: coefficient and atom factors (with repetition).
  // Div/Mod/Min/Max: operands(0..1); IfLess: operands(0..3).
  int64_t sumConstant() const;
  std::vector<std::pair<int64_t, Arith>> sumTerms() const;
  int64_t productCoefficient() const;
  std::vector<Arith> productFactors() const;
  const std::vector<Arith>& operands() const;

  bool operator==(const Arith& other) const;
  bool operator!=(const Arith& other) const { return !(*this == other); }
  // A total order on canonical forms (used for sorting terms and for std::map keys).
  bool operator<(const Arith& other) const;
  size_t hash() const;

  // The variables the expression mentions (including those in ranges of its variables? no:
  // only the ones that occur in the expression itself), sorted by name, each once.
  std::vector<Arith> vars() const;
  bool mentions(const std::string& varName) const;

  // Printing: `toString()` is weft's own notation (also valid C for +-*/% and min/max).
  // `toC()` prints C/OpenCL: min/max as min(a, b), conditionals as ((a < b) ? c : d).
  std::string toString() const;
  std::string toC() const;

  const ArithNode* node() const { return node_.get(); }

 private:
  friend struct ArithBuilder;
  explicit Arith(std::shared_ptr<const ArithNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const ArithNode> node_;
};

Arith operator+(const Arith& a, const Arith& b);
Arith operator-(const Arith& a, const Arith& b);
Arith operator-(const Arith& a);
Arith operator*(const Arith& a, const Arith& b);
Arith operator/(const Arith& a, const Arith& b);  // truncating, simplified
Arith operator%(const Arith& a, const Arith& b);  // truncating, simplified
Arith min(const Arith& a, const Arith& b);
Arith max(const Arith& a, const Arith& b);
// (a < b) ? then : otherwise
Arith ifLess(const Arith& a, const Arith& b, const Arith& then, const Arith& otherwise);
// start + a1*b1 + ... + an*bn, the same expression as adding the products one by one, but
// canonicalised once instead of after every operation (sums with / and % are refolded each
// time, which makes computing a long address term by term costly: views build such sums).
Arith sumOfProducts(const Arith& start, const std::vector<std::pair<Arith, Arith>>& products);
// Ceiling division for non-negative a and positive b: (a + b - 1) / b.
Arith ceilDiv(const Arith& a, const Arith& b);

// Substitution: replaces variables by name and re-simplifies.
using ArithSubstitution = std::map<std::string, Arith>;
Arith substitute(const Arith& e, const ArithSubstitution& substitution);

// Evaluation under a binding of variable names to values. Throws ArithError for an unbound
// variable or a division/modulo by zero.
using ArithBinding = std::map<std::string, int64_t>;
int64_t evaluate(const Arith& e, const ArithBinding& binding);
// Like evaluate, but returns nullopt instead of throwing.
std::optional<int64_t> tryEvaluate(const Arith& e, const ArithBinding& binding);

// Range reasoning. These are sound but incomplete: `false` means "could not prove".
// Bounds use each variable's range; symbolic bounds are expressed in terms of variables
// whose ranges do not depend on others (sizes and tuning parameters).
bool proveNonNegative(const Arith& e);
bool provePositive(const Arith& e);
bool proveLess(const Arith& a, const Arith& b);       // a < b
bool proveLessEqual(const Arith& a, const Arith& b);  // a <= b
// b divides a exactly (a % b == 0) for every value of the variables.
bool proveDivides(const Arith& divisor, const Arith& dividend);
// Symbolic lower and upper bounds (nullopt: unbounded or unknown).
std::optional<Arith> lowerBound(const Arith& e);
std::optional<Arith> upperBound(const Arith& e);
// Numeric bounds where they exist.
std::optional<int64_t> constantLowerBound(const Arith& e);
std::optional<int64_t> constantUpperBound(const Arith& e);

std::ostream& operator<<(std::ostream& os, const Arith& e);

// The divisors of `n` > 0 in increasing order (sqrt(n) trial divisions); none for n <= 0.
std::vector<int64_t> divisorsOf(int64_t n);
// Whether `n` > 0 has a divisor in [lo, hi] (trial division over the range: for short ranges,
// such as work-group sizes).
bool hasDivisorBetween(int64_t n, int64_t lo, int64_t hi);
// The largest n whose divisors the feasibility walk and the Z3 encoding list instead of
// reasoning about a remainder by a variable (at most 2^20 trial divisions).
inline constexpr int64_t kMaxListedDividend = int64_t{1} << 40;

}  // namespace weft

template <>
struct std::hash<weft::Arith> {
  size_t operator()(const weft::Arith& e) const { return e.hash(); }
};
