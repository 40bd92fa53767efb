// Symbolic integer arithmetic: node construction, the canonical polynomial form, structural
// order/equality/hashing, substitution, evaluation and printing (weft notation and C).
//
// Every operator builds its result through `fromPoly`, so expressions are always canonical:
// sums of (coefficient, monomial) terms with constants folded and terms in a fixed order,
// products distributed over sums, and atoms (/, %, min, max, conditionals) simplified by the
// constructors in arith_simplify.cpp. Hashes are computed once per node. Constant folding
// checks for 64-bit overflow and throws ArithError instead of wrapping. A canonical sum plus or
// minus a constant keeps its terms as they are (sumPlusConstant: what fromPoly would give,
// without refolding them; checked against the full path in tests/ir/property_arith.cpp).
#include "ir/arith.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <ostream>
#include <unordered_set>

#include "ir/arith_internal.h"

namespace weft {

using namespace arith_detail;

const char* varKindName(VarKind kind) {
  switch (kind) {
    case VarKind::Size:
      return "size";
    case VarKind::Tuning:
      return "tuning";
    case VarKind::LoopIndex:
      return "loop index";
    case VarKind::ThreadIndex:
      return "thread index";
  }
  return "?";
}

namespace arith_detail {

// ---------------------------------------------------------------------------------------------
// Checked arithmetic

int64_t addChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    throw ArithError("integer overflow in " + std::to_string(a) + " + " + std::to_string(b));
  }
  return r;
}

int64_t mulChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    throw ArithError("integer overflow in " + std::to_string(a) + "*" + std::to_string(b));
  }
  return r;
}

int64_t negChecked(int64_t a) {
  if (a == INT64_MIN) throw ArithError("integer overflow in -(" + std::to_string(a) + ")");
  return -a;
}

// ---------------------------------------------------------------------------------------------
// Node construction

namespace {

size_t mix(size_t h, size_t v) {
  // boost::hash_combine-style mixing with a 64-bit odd constant.
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

size_t kindSeed(ArithKind kind) { return 0x51ed27a3u * (static_cast<size_t>(kind) + 1); }

uint32_t addSize(uint32_t a, uint32_t b) {
  uint64_t s = uint64_t(a) + b;
  return s > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(s);
}

Arith wrap(std::shared_ptr<ArithNode> node) { return ArithBuilder::wrap(std::move(node)); }

Arith makeConstantNode(int64_t value) {
  auto node = std::make_shared<ArithNode>();
  node->kind = ArithKind::Constant;
  node->value = value;
  node->hash = mix(kindSeed(ArithKind::Constant), std::hash<int64_t>{}(value));
  return wrap(std::move(node));
}

// Small constants are shared: most expressions mention 0, 1 and small coefficients.
constexpr int64_t kCachedMin = -64;
constexpr int64_t kCachedMax = 1024;

const std::vector<Arith>& constantCache() {
  static const std::vector<Arith> cache = [] {
    std::vector<Arith> out;
    out.reserve(kCachedMax - kCachedMin + 1);
    for (int64_t v = kCachedMin; v <= kCachedMax; ++v) out.push_back(makeConstantNode(v));
    return out;
  }();
  return cache;
}

bool isKeptVarNode(const ArithNode& n) {
  return (n.varKind == VarKind::Size || n.varKind == VarKind::Tuning) && n.lo->isConstant() &&
         (!n.hi || n.hi->isConstant());
}

Arith makeProduct(int64_t coef, std::vector<Arith> atoms, std::optional<Arith> mono) {
  auto node = std::make_shared<ArithNode>();
  node->kind = ArithKind::Product;
  node->value = coef;
  size_t h = mix(kindSeed(ArithKind::Product), std::hash<int64_t>{}(coef));
  for (const Arith& a : atoms) {
    h = mix(h, a.hash());
    node->onlyKeptVars = node->onlyKeptVars && a.node()->onlyKeptVars;
    node->size = addSize(node->size, a.node()->size);
  }
  node->hash = h;
  node->ops = std::move(atoms);
  if (coef != 1 && node->ops.size() >= 2) node->mono = std::move(mono);
  return wrap(std::move(node));
}

Arith makeSum(int64_t constant, std::vector<std::pair<int64_t, Arith>> terms) {
  auto node = std::make_shared<ArithNode>();
  node->kind = ArithKind::Sum;
  node->value = constant;
  size_t h = mix(kindSeed(ArithKind::Sum), std::hash<int64_t>{}(constant));
  for (const auto& [coef, mono] : terms) {
    h = mix(mix(h, std::hash<int64_t>{}(coef)), mono.hash());
    node->onlyKeptVars = node->onlyKeptVars && mono.node()->onlyKeptVars;
    node->size = addSize(node->size, mono.node()->size);
  }
  node->hash = h;
  node->terms = std::move(terms);
  return wrap(std::move(node));
}

}  // namespace

Arith makeConstant(int64_t value) {
  if (value >= kCachedMin && value <= kCachedMax) return constantCache()[value - kCachedMin];
  return makeConstantNode(value);
}

Arith makeAtom(ArithKind kind, std::vector<Arith> operands) {
  auto node = std::make_shared<ArithNode>();
  node->kind = kind;
  size_t h = kindSeed(kind);
  for (const Arith& a : operands) {
    h = mix(h, a.hash());
    node->onlyKeptVars = node->onlyKeptVars && a.node()->onlyKeptVars;
    node->size = addSize(node->size, a.node()->size);
  }
  node->hash = h;
  node->ops = std::move(operands);
  return wrap(std::move(node));
}

Arith makeMono(std::vector<Arith> sortedAtoms) {
  if (sortedAtoms.size() == 1) return sortedAtoms[0];
  return makeProduct(1, std::move(sortedAtoms), std::nullopt);
}

bool isAtomKind(ArithKind kind) {
  return kind != ArithKind::Constant && kind != ArithKind::Sum && kind != ArithKind::Product;
}

// ---------------------------------------------------------------------------------------------
// Orders

namespace {
int cmp64(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }
}  // namespace

int compare(const Arith& a, const Arith& b) {
  const ArithNode* x = a.node();
  const ArithNode* y = b.node();
  if (x == y) return 0;
  if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
  switch (x->kind) {
    case ArithKind::Constant:
      return cmp64(x->value, y->value);
    case ArithKind::Var: {
      int c = x->name.compare(y->name);
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case ArithKind::Sum: {
      size_t n = std::min(x->terms.size(), y->terms.size());
      for (size_t i = 0; i < n; ++i) {
        if (int c = compareMono(x->terms[i].second, y->terms[i].second)) return c;
        if (int c = cmp64(x->terms[i].first, y->terms[i].first)) return c;
      }
      if (x->terms.size() != y->terms.size()) return x->terms.size() < y->terms.size() ? -1 : 1;
      return cmp64(x->value, y->value);
    }
    case ArithKind::Product:
    case ArithKind::Div:
    case ArithKind::Mod:
    case ArithKind::Min:
    case ArithKind::Max:
    case ArithKind::IfLess: {
      size_t n = std::min(x->ops.size(), y->ops.size());
      for (size_t i = 0; i < n; ++i) {
        if (int c = compare(x->ops[i], y->ops[i])) return c;
      }
      if (x->ops.size() != y->ops.size()) return x->ops.size() < y->ops.size() ? -1 : 1;
      return cmp64(x->value, y->value);  // Product coefficient (0 for atoms)
    }
  }
  return 0;
}

std::span<const Arith> monoAtoms(const Arith& mono) {
  if (mono.kind() == ArithKind::Product) return {mono.node()->ops.data(), mono.node()->ops.size()};
  return {&mono, 1};
}

int compareMono(const Arith& a, const Arith& b) {
  if (a.node() == b.node()) return 0;
  auto x = monoAtoms(a);
  auto y = monoAtoms(b);
  if (x.size() != y.size()) return x.size() > y.size() ? -1 : 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (int c = compare(x[i], y[i])) return c;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Polynomial view

Poly toPoly(const Arith& e) {
  const ArithNode* n = e.node();
  switch (n->kind) {
    case ArithKind::Constant:
      return Poly{n->value, {}};
    case ArithKind::Sum: {
      Poly p{n->value, {}};
      p.terms.reserve(n->terms.size());
      for (const auto& [coef, mono] : n->terms) p.terms.push_back(Term{coef, mono});
      return p;
    }
    case ArithKind::Product: {
      Arith mono = n->ops.size() == 1 ? n->ops[0] : (n->value == 1 ? e : *n->mono);
      return Poly{0, {Term{n->value, mono}}};
    }
    default:
      return Poly{0, {Term{1, e}}};
  }
}

Poly normalize(int64_t constant, std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return compareMono(a.mono, b.mono) < 0; });
  Poly out{constant, {}};
  out.terms.reserve(terms.size());
  for (Term& t : terms) {
    if (!out.terms.empty() && compareMono(out.terms.back().mono, t.mono) == 0) {
      out.terms.back().coef = addChecked(out.terms.back().coef, t.coef);
    } else {
      out.terms.push_back(std::move(t));
    }
  }
  std::erase_if(out.terms, [](const Term& t) { return t.coef == 0; });
  return out;
}

Poly addPoly(const Poly& a, const Poly& b) {
  Poly out{addChecked(a.constant, b.constant), {}};
  out.terms.reserve(a.terms.size() + b.terms.size());
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    int c = i == a.terms.size()   ? 1
            : j == b.terms.size() ? -1
                                  : compareMono(a.terms[i].mono, b.terms[j].mono);
    if (c < 0) {
      out.terms.push_back(a.terms[i++]);
    } else if (c > 0) {
      out.terms.push_back(b.terms[j++]);
    } else {
      int64_t coef = addChecked(a.terms[i].coef, b.terms[j].coef);
      if (coef != 0) out.terms.push_back(Term{coef, a.terms[i].mono});
      ++i;
      ++j;
    }
  }
  return out;
}

Poly negPoly(const Poly& a) { return scalePoly(a, -1); }

Poly scalePoly(const Poly& a, int64_t factor) {
  if (factor == 0) return Poly{};
  Poly out{mulChecked(a.constant, factor), {}};
  out.terms.reserve(a.terms.size());
  for (const Term& t : a.terms) out.terms.push_back(Term{mulChecked(t.coef, factor), t.mono});
  return out;
}

Arith monoMul(const Arith& a, const Arith& b) {
  auto x = monoAtoms(a);
  auto y = monoAtoms(b);
  std::vector<Arith> atoms;
  atoms.reserve(x.size() + y.size());
  std::merge(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(atoms),
             [](const Arith& p, const Arith& q) { return compare(p, q) < 0; });
  return makeMono(std::move(atoms));
}

Poly mulPoly(const Poly& a, const Poly& b) {
  if (a.isZero() || b.isZero()) return Poly{};
  if (a.terms.empty()) return scalePoly(b, a.constant);
  if (b.terms.empty()) return scalePoly(a, b.constant);
  std::vector<Term> terms;
  terms.reserve((a.terms.size() + 1) * (b.terms.size() + 1));
  for (const Term& s : a.terms) {
    for (const Term& t : b.terms)
      terms.push_back(Term{mulChecked(s.coef, t.coef), monoMul(s.mono, t.mono)});
    if (b.constant != 0) terms.push_back(Term{mulChecked(s.coef, b.constant), s.mono});
  }
  if (a.constant != 0) {
    for (const Term& t : b.terms) terms.push_back(Term{mulChecked(a.constant, t.coef), t.mono});
  }
  return normalize(mulChecked(a.constant, b.constant), std::move(terms));
}

Arith fromPoly(Poly p) {
  // Sums with / or % factors are refolded. A single term whose factors include % but not / is
  // skipped: refolding gives it back unchanged.
  bool hasDiv = false;
  bool hasMod = false;
  for (const Term& t : p.terms) {
    for (const Arith& a : monoAtoms(t.mono)) {
      hasDiv = hasDiv || a.kind() == ArithKind::Div;
      hasMod = hasMod || a.kind() == ArithKind::Mod;
    }
  }
  if ((hasDiv || (hasMod && p.terms.size() >= 2)) && !insideProof()) refoldDivMod(p);
  if (p.terms.empty()) return makeConstant(p.constant);
  if (p.constant == 0 && p.terms.size() == 1) {
    const Term& t = p.terms[0];
    if (t.coef == 1) return t.mono;
    auto atoms = monoAtoms(t.mono);
    return makeProduct(t.coef, std::vector<Arith>(atoms.begin(), atoms.end()), t.mono);
  }
  std::vector<std::pair<int64_t, Arith>> terms;
  terms.reserve(p.terms.size());
  for (Term& t : p.terms) terms.emplace_back(t.coef, std::move(t.mono));
  return makeSum(p.constant, std::move(terms));
}

}  // namespace arith_detail

// ---------------------------------------------------------------------------------------------
// Arith: construction and access

Arith::Arith() : Arith(makeConstant(0)) {}
Arith::Arith(int64_t value) : Arith(makeConstant(value)) {}

Arith Arith::var(std::string name, VarKind kind, Arith lo, std::optional<Arith> hi) {
  if (name.empty()) throw ArithError("a variable needs a name");
  if (hi && lo.isConstant() && hi->isConstant() && *hi->constant() < *lo.constant()) {
    throw ArithError("variable `" + name + "` has an empty range [" + lo.toString() + ", " +
                     hi->toString() + "]");
  }
  auto node = std::make_shared<ArithNode>();
  node->kind = ArithKind::Var;
  node->hash = mix(kindSeed(ArithKind::Var), std::hash<std::string>{}(name));
  node->name = std::move(name);
  node->varKind = kind;
  node->lo = std::move(lo);
  node->hi = std::move(hi);
  node->onlyKeptVars = isKeptVarNode(*node);
  return wrap(std::move(node));
}

Arith Arith::size(std::string name) { return var(std::move(name), VarKind::Size, Arith(1)); }

ArithKind Arith::kind() const { return node_->kind; }

std::optional<int64_t> Arith::constant() const {
  if (node_->kind == ArithKind::Constant) return node_->value;
  return std::nullopt;
}

namespace {
const ArithNode& requireVar(const ArithNode* n, const char* what) {
  if (n->kind != ArithKind::Var) throw std::logic_error(std::string(what) + " of a non-variable");
  return *n;
}
}  // namespace

const std::string& Arith::varName() const { return requireVar(node_.get(), "varName").name; }
VarKind Arith::varKind() const { return requireVar(node_.get(), "varKind").varKind; }
const Arith& Arith::varLo() const { return *requireVar(node_.get(), "varLo").lo; }
const std::optional<Arith>& Arith::varHi() const { return requireVar(node_.get(), "varHi").hi; }

// The structural accessors view any expression as a sum / product, which is what printers and
// encoders want: a lone term is a sum with constant 0, an atom is a product with coefficient 1.
int64_t Arith::sumConstant() const { return toPoly(*this).constant; }

std::vector<std::pair<int64_t, Arith>> Arith::sumTerms() const {
  if (node_->kind == ArithKind::Sum) return node_->terms;
  std::vector<std::pair<int64_t, Arith>> out;
  for (Term& t : toPoly(*this).terms) out.emplace_back(t.coef, std::move(t.mono));
  return out;
}

int64_t Arith::productCoefficient() const {
  if (node_->kind == ArithKind::Product || node_->kind == ArithKind::Constant) return node_->value;
  return 1;
}

std::vector<Arith> Arith::productFactors() const {
  if (node_->kind == ArithKind::Product) return node_->ops;
  if (node_->kind == ArithKind::Constant) return {};
  return {*this};
}

const std::vector<Arith>& Arith::operands() const {
  static const std::vector<Arith> none;
  if (node_->kind == ArithKind::Constant || node_->kind == ArithKind::Var ||
      node_->kind == ArithKind::Sum) {
    return none;
  }
  return node_->ops;
}

bool Arith::operator==(const Arith& other) const {
  if (node_ == other.node_) return true;
  if (node_->hash != other.node_->hash || node_->kind != other.node_->kind) return false;
  return compare(*this, other) == 0;
}

bool Arith::operator<(const Arith& other) const { return compare(*this, other) < 0; }

size_t Arith::hash() const { return node_->hash; }

// ---------------------------------------------------------------------------------------------
// Variables

namespace {

template <typename F>
void forEachChild(const ArithNode* n, F&& f) {
  for (const Arith& a : n->ops) f(a);
  for (const auto& term : n->terms) f(term.second);
}

// Expressions are DAGs (shared subexpressions): traversals remember the nodes they visited so
// that they stay linear in the number of distinct nodes.
void collectVars(const Arith& e, std::map<std::string, Arith>& out,
                 std::unordered_set<const ArithNode*>& seen) {
  const ArithNode* n = e.node();
  if (n->kind == ArithKind::Var) {
    out.emplace(n->name, e);
    return;
  }
  if (n->kind == ArithKind::Constant || !seen.insert(n).second) return;
  forEachChild(n, [&](const Arith& c) { collectVars(c, out, seen); });
}

bool mentionsName(const Arith& e, const std::string& name,
                  std::unordered_set<const ArithNode*>& seen) {
  const ArithNode* n = e.node();
  if (n->kind == ArithKind::Var) return n->name == name;
  if (n->kind == ArithKind::Constant || !seen.insert(n).second) return false;
  bool found = false;
  forEachChild(n, [&](const Arith& c) { found = found || mentionsName(c, name, seen); });
  return found;
}

}  // namespace

std::vector<Arith> Arith::vars() const {
  std::map<std::string, Arith> found;
  std::unordered_set<const ArithNode*> seen;
  collectVars(*this, found, seen);
  std::vector<Arith> out;
  out.reserve(found.size());
  for (auto& [name, v] : found) out.push_back(v);
  return out;
}

bool Arith::mentions(const std::string& name) const {
  std::unordered_set<const ArithNode*> seen;
  return mentionsName(*this, name, seen);
}

// ---------------------------------------------------------------------------------------------
// Operators

namespace {

// A canonical sum k + T plus a constant c: T as it is with k + c. The refolding of / and % in
// sums (refoldDivMod) never looks at a sum's constant: it carries it along and only adds
// constants made from the terms, and what it minimises counts terms. A canonical sum's terms
// are their own refolding (simplification is idempotent: tests/ir/property_arith.cpp, which
// also checks this shortcut against the full path). So this is what fromPoly gives, without
// refolding the terms again: index arithmetic adds constants to long address sums all the time
// (pad and crop offsets, unrolled iterations, vector lanes, `(p + (rest))[c]` addressing).
// nullopt where the shortcut does not apply (not a sum, or one term left without a constant).
std::optional<Arith> sumPlusConstant(const Arith& sum, int64_t c) {
  const ArithNode* n = sum.node();
  if (n->kind != ArithKind::Sum) return std::nullopt;
  const int64_t constant = addChecked(n->value, c);
  // Without a constant a single term stands alone (a product or an atom): the full path.
  if (constant == 0 && n->terms.size() < 2) return std::nullopt;
  return makeSum(constant, n->terms);
}

}  // namespace

Arith operator+(const Arith& a, const Arith& b) {
  auto ca = a.constant();
  auto cb = b.constant();
  if (ca && cb) return Arith(addChecked(*ca, *cb));
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  if (cb) {
    if (auto shifted = sumPlusConstant(a, *cb)) return *shifted;
  } else if (ca) {
    if (auto shifted = sumPlusConstant(b, *ca)) return *shifted;
  }
  return fromPoly(addPoly(toPoly(a), toPoly(b)));
}

Arith operator-(const Arith& a) {
  if (auto c = a.constant()) return Arith(negChecked(*c));
  return fromPoly(negPoly(toPoly(a)));
}

Arith operator-(const Arith& a, const Arith& b) {
  auto ca = a.constant();
  auto cb = b.constant();
  if (ca && cb) {
    int64_t r;
    if (__builtin_sub_overflow(*ca, *cb, &r)) {
      throw ArithError("integer overflow in " + std::to_string(*ca) + " - " + std::to_string(*cb));
    }
    return Arith(r);
  }
  if (cb && *cb == 0) return a;
  if (cb) {
    if (auto shifted = sumPlusConstant(a, negChecked(*cb))) return *shifted;
  }
  if (a == b) return Arith(0);
  return fromPoly(addPoly(toPoly(a), negPoly(toPoly(b))));
}

Arith operator*(const Arith& a, const Arith& b) {
  auto ca = a.constant();
  auto cb = b.constant();
  if (ca && cb) return Arith(mulChecked(*ca, *cb));
  if ((ca && *ca == 0) || (cb && *cb == 0)) return Arith(0);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return fromPoly(mulPoly(toPoly(a), toPoly(b)));
}

// Every canonical sum is the refolding of its polynomial with the top-level remainders
// expanded (x%b -> x - b*(x/b), refoldDivMod), and that expansion is additive and
// multiplicative while refolding leaves it unchanged, so the polynomial of the whole sum,
// canonicalised once, is what the operators above give step by step.
Arith sumOfProducts(const Arith& start, const std::vector<std::pair<Arith, Arith>>& products) {
  if (products.empty()) return start;
  if (products.size() == 1 && start.isConstant() && start.constant() == 0) {
    return products[0].first * products[0].second;
  }
  Poly sum = toPoly(start);
  for (const auto& [a, b] : products) sum = addPoly(sum, mulPoly(toPoly(a), toPoly(b)));
  return fromPoly(std::move(sum));
}

Arith operator/(const Arith& a, const Arith& b) { return simplifyDivMod(a, b, false); }
Arith operator%(const Arith& a, const Arith& b) { return simplifyDivMod(a, b, true); }
Arith min(const Arith& a, const Arith& b) { return simplifyMinMax(a, b, false); }
Arith max(const Arith& a, const Arith& b) { return simplifyMinMax(a, b, true); }
Arith ifLess(const Arith& a, const Arith& b, const Arith& then, const Arith& otherwise) {
  return simplifyIfLess(a, b, then, otherwise);
}
Arith ceilDiv(const Arith& a, const Arith& b) { return (a + b - 1) / b; }

// ---------------------------------------------------------------------------------------------
// Substitution

namespace {

// Rebuilds `e` through the simplifying constructors with variables replaced. Unchanged
// subtrees are shared, except with `force` (an empty substitution), which re-simplifies every
// node: that is how tests check that simplification is idempotent.
Arith rebuild(const Arith& e, const ArithSubstitution& s, bool force) {
  const ArithNode* n = e.node();
  switch (n->kind) {
    case ArithKind::Constant:
      return e;
    case ArithKind::Var: {
      if (auto it = s.find(n->name); it != s.end()) return it->second;
      // The range may mention substituted variables (i in [0, n - 1] with n := 8).
      Arith lo = rebuild(*n->lo, s, false);
      std::optional<Arith> hi;
      if (n->hi) hi = rebuild(*n->hi, s, false);
      bool same = lo.node() == n->lo->node() && (!hi || hi->node() == n->hi->node());
      if (same) return e;
      try {
        return Arith::var(n->name, n->varKind, lo, hi);
      } catch (const ArithError&) {
        return e;  // the substituted range is empty: the variable takes no value anyway
      }
    }
    case ArithKind::Sum: {
      bool changed = force;
      std::vector<Arith> monos;
      monos.reserve(n->terms.size());
      for (const auto& term : n->terms) {
        monos.push_back(rebuild(term.second, s, force));
        changed = changed || monos.back().node() != term.second.node();
      }
      if (!changed) return e;
      Arith out(n->value);
      for (size_t i = 0; i < monos.size(); ++i) out = out + Arith(n->terms[i].first) * monos[i];
      return out;
    }
    default: {
      bool changed = force;
      std::vector<Arith> ops;
      ops.reserve(n->ops.size());
      for (const Arith& op : n->ops) {
        ops.push_back(rebuild(op, s, force));
        changed = changed || ops.back().node() != op.node();
      }
      if (!changed) return e;
      switch (n->kind) {
        case ArithKind::Product: {
          Arith out(n->value);
          for (const Arith& op : ops) out = out * op;
          return out;
        }
        case ArithKind::Div:
          return ops[0] / ops[1];
        case ArithKind::Mod:
          return ops[0] % ops[1];
        case ArithKind::Min:
          return min(ops[0], ops[1]);
        case ArithKind::Max:
          return max(ops[0], ops[1]);
        case ArithKind::IfLess:
          return ifLess(ops[0], ops[1], ops[2], ops[3]);
        default:
          return e;
      }
    }
  }
}

}  // namespace

Arith substitute(const Arith& e, const ArithSubstitution& substitution) {
  return rebuild(e, substitution, substitution.empty());
}

// ---------------------------------------------------------------------------------------------
// Evaluation

namespace {

std::string bindingOf(const Arith& e, const ArithBinding& binding) {
  std::string out;
  for (const Arith& v : e.vars()) {
    auto it = binding.find(v.varName());
    if (it == binding.end()) continue;
    out += (out.empty() ? " with " : ", ") + v.varName() + " = " + std::to_string(it->second);
  }
  return out;
}

int64_t eval(const Arith& e, const ArithBinding& binding, const Arith& whole) {
  const ArithNode* n = e.node();
  switch (n->kind) {
    case ArithKind::Constant:
      return n->value;
    case ArithKind::Var: {
      auto it = binding.find(n->name);
      if (it == binding.end()) {
        throw ArithError("cannot evaluate `" + whole.toString() + "`: variable `" + n->name +
                         "` is unbound");
      }
      return it->second;
    }
    case ArithKind::Sum: {
      int64_t r = n->value;
      for (const auto& [coef, mono] : n->terms) {
        r = addChecked(r, mulChecked(coef, eval(mono, binding, whole)));
      }
      return r;
    }
    case ArithKind::Product: {
      int64_t r = n->value;
      for (const Arith& a : n->ops) r = mulChecked(r, eval(a, binding, whole));
      return r;
    }
    case ArithKind::Div:
    case ArithKind::Mod: {
      int64_t a = eval(n->ops[0], binding, whole);
      int64_t b = eval(n->ops[1], binding, whole);
      if (b == 0) {
        throw ArithError("division by zero in `" + whole.toString() + "`: divisor `" +
                         n->ops[1].toString() + "` is 0" + bindingOf(n->ops[1], binding));
      }
      if (a == INT64_MIN && b == -1) {
        if (n->kind == ArithKind::Mod) return 0;
        throw ArithError("integer overflow in `" + whole.toString() + "`");
      }
      return n->kind == ArithKind::Div ? a / b : a % b;
    }
    case ArithKind::Min:
      return std::min(eval(n->ops[0], binding, whole), eval(n->ops[1], binding, whole));
    case ArithKind::Max:
      return std::max(eval(n->ops[0], binding, whole), eval(n->ops[1], binding, whole));
    case ArithKind::IfLess: {
      bool less = eval(n->ops[0], binding, whole) < eval(n->ops[1], binding, whole);
      return eval(n->ops[less ? 2 : 3], binding, whole);
    }
  }
  return 0;
}

}  // namespace

int64_t evaluate(const Arith& e, const ArithBinding& binding) { return eval(e, binding, e); }

std::optional<int64_t> tryEvaluate(const Arith& e, const ArithBinding& binding) {
  try {
    return evaluate(e, binding);
  } catch (const ArithError&) {
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------
// Printing

namespace {

std::string magnitude(int64_t v) {
  uint64_t m = v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return std::to_string(m);
}

void print(std::string& out, const Arith& e, bool c);

// An atom as a factor of a product: / and % are parenthesised so that `4*(n/4)` is not read
// as `(4*n)/4`.
void printFactor(std::string& out, const Arith& a, bool c) {
  if (a.kind() == ArithKind::Div || a.kind() == ArithKind::Mod) {
    out += '(';
    print(out, a, c);
    out += ')';
  } else {
    print(out, a, c);
  }
}

// |coef| * mono, e.g. `4*i*n`, `n`, `2*(x/4)`; a lone / or % atom (`x/4` in `n + x/4`) needs
// no parentheses unless it follows a unary minus (`-(x/4)`: `-x/4` would read as `(-x)/4`).
void printTermMagnitude(std::string& out, int64_t coef, const Arith& mono, bool c,
                        bool afterUnaryMinus) {
  auto atoms = monoAtoms(mono);
  if (coef != 1 && coef != -1) {
    out += magnitude(coef);
    out += '*';
  } else if (atoms.size() == 1 && !afterUnaryMinus) {
    print(out, atoms[0], c);
    return;
  }
  bool first = true;
  for (const Arith& a : atoms) {
    if (!first) out += '*';
    first = false;
    printFactor(out, a, c);
  }
}

// Operands of / and %: the left one is parenthesised unless it is a variable, constant or
// call-like atom; so is the right one, and a negative constant on the right.
bool needsParens(const Arith& a, bool right) {
  switch (a.kind()) {
    case ArithKind::Var:
    case ArithKind::Min:
    case ArithKind::Max:
    case ArithKind::IfLess:
      return false;
    case ArithKind::Constant:
      return right && *a.constant() < 0;
    default:
      return true;
  }
}

void printOperand(std::string& out, const Arith& a, bool right, bool c) {
  bool parens = needsParens(a, right);
  if (parens) out += '(';
  print(out, a, c);
  if (parens) out += ')';
}

void print(std::string& out, const Arith& e, bool c) {
  const ArithNode* n = e.node();
  switch (n->kind) {
    case ArithKind::Constant:
      out += std::to_string(n->value);
      return;
    case ArithKind::Var:
      out += n->name;
      return;
    case ArithKind::Product: {
      if (n->value < 0) out += '-';
      printTermMagnitude(out, n->value,
                         n->ops.size() == 1 ? n->ops[0] : (n->value == 1 ? e : *n->mono), c,
                         n->value < 0);
      return;
    }
    case ArithKind::Sum: {
      // Positive terms first (in monomial order), then negative ones as subtractions, the
      // constant last: `n - i - 1`; a positive constant leads when every term is negative:
      // `3 - i`.
      std::vector<const std::pair<int64_t, Arith>*> order;
      for (const auto& t : n->terms)
        if (t.first > 0) order.push_back(&t);
      bool anyPositive = !order.empty();
      for (const auto& t : n->terms)
        if (t.first < 0) order.push_back(&t);
      bool first = true;
      if (!anyPositive && n->value > 0) {
        out += std::to_string(n->value);
        first = false;
      }
      for (const auto* t : order) {
        bool unaryMinus = first && t->first < 0;
        if (first) {
          if (unaryMinus) out += '-';
        } else {
          out += t->first < 0 ? " - " : " + ";
        }
        first = false;
        printTermMagnitude(out, t->first, t->second, c, unaryMinus);
      }
      if (n->value != 0 && (anyPositive || n->value < 0)) {
        out += n->value < 0 ? " - " : " + ";
        out += magnitude(n->value);
      }
      return;
    }
    case ArithKind::Div:
    case ArithKind::Mod:
      printOperand(out, n->ops[0], false, c);
      out += n->kind == ArithKind::Div ? '/' : '%';
      printOperand(out, n->ops[1], true, c);
      return;
    case ArithKind::Min:
    case ArithKind::Max:
      out += n->kind == ArithKind::Min ? "min(" : "max(";
      print(out, n->ops[0], c);
      out += ", ";
      print(out, n->ops[1], c);
      out += ')';
      return;
    case ArithKind::IfLess:
      out += c ? "((" : "(";
      print(out, n->ops[0], c);
      out += " < ";
      print(out, n->ops[1], c);
      out += c ? ") ? " : " ? ";
      print(out, n->ops[2], c);
      out += " : ";
      print(out, n->ops[3], c);
      out += ')';
      return;
  }
}

}  // namespace

std::string Arith::toString() const {
  std::string out;
  print(out, *this, false);
  return out;
}

std::string Arith::toC() const {
  std::string out;
  print(out, *this, true);
  return out;
}

std::ostream& operator<<(std::ostream& os, const Arith& e) { return os << e.toString(); }

std::vector<int64_t> divisorsOf(int64_t n) {
  std::vector<int64_t> small, large;
  for (int64_t d = 1; n > 0 && d <= n / d; ++d) {
    if (n % d != 0) continue;
    small.push_back(d);
    if (d != n / d) large.push_back(n / d);
  }
  small.insert(small.end(), large.rbegin(), large.rend());
  return small;
}

bool hasDivisorBetween(int64_t n, int64_t lo, int64_t hi) {
  for (int64_t d = std::max<int64_t>(lo, 1); d <= hi && d <= n; ++d) {
    if (n % d == 0) return true;
  }
  return false;
}

}  // namespace weft
