// The simplifier of symbolic integer arithmetic: range reasoning (proofs, symbolic and numeric
// bounds), polynomial division, the simplifying constructors of / % min max and conditionals,
// and the canonical treatment of / and % inside sums.
//
// Range reasoning is sound but incomplete. To prove e >= 0 it first computes a symbolic lower
// bound of e in which every variable that is not a size or tuning parameter with a constant
// range (loop and thread indices, variables with symbolic ranges) is replaced by its bound,
// sign-aware and term by term, in rounds that follow the dependencies between ranges (j in
// [0, i] is replaced before i in [0, n - 1]), re-canonicalising after each round so that terms
// cancel: n - i - 1 with i in [0, n - 1] becomes n - (n - 1) - 1 = 0. What remains is checked
// syntactically (non-negative coefficients over non-negative atoms), by interval arithmetic,
// and by a small search that replaces one remaining size/tuning variable at a time
// (n*m - n >= 0 needs m := 1 but not n := 1). Proofs run under a depth limit, so they
// terminate and cost little when they fail, which they often do, and are memoised per node.
// Divisions are memoised too, by their operands' structure and ranges: code generation divides
// the same index again and again (the reads of both operands of an unrolled reduction, every
// lane of a vector, the partner x%b of every x/b the sum refolding asks for). The refolding
// tries each division of a sum in turn and rebuilds the sum only for one it changes (most
// leave it as it is); ir/arith_testing.h selects the earlier path, which rebuilt it each time.
//
// / and % are C's truncating operators; they are only rewritten when that is sound: exact
// polynomial division by a provably non-zero divisor ((n*m)/m -> n, (2*n)/2 -> n); division of
// a common constant factor; sign normalisation (truncation is odd in both operands); and, for
// a >= 0 and b > 0, splitting a into the terms divisible by b (q*b) and the rest r: if
// 0 <= r < b then a/b = q and a%b = r ((4*i + j)/4 -> i for j in [0, 3]); if only r >= 0 then
// a/b = q + r/b. In sums, x%b is expanded to x - b*(x/b) so that equal sums are equal
// polynomials, then divisions are folded back into remainders while that shrinks the sum
// ((x/4)*4 + x%4 -> x, x - 4*(x/4) -> x%4).
//
// The approach (ranges on variables drive /, % and min/max elimination) follows LIFT's
// ArithExpr (lift-project/arithexpr, simplifier/SimplifyIntDiv.scala, SimplifyMod.scala); the
// code here is weft's own.
#include <algorithm>
#include <numeric>
#include <set>
#include <tuple>
#include <unordered_map>

#include "ir/arith.h"
#include "ir/arith_internal.h"
#include "ir/arith_testing.h"

namespace weft {

using namespace arith_detail;

namespace {

// ---------------------------------------------------------------------------------------------
// Proof depth: every proof or bound computation increments it; beyond the limit they give up.

thread_local int proofDepth = 0;
constexpr int kMaxProofDepth = 8;

}  // namespace

bool arith_detail::insideProof() { return proofDepth > 0; }

namespace {

struct DepthGuard {
  DepthGuard() { ++proofDepth; }
  ~DepthGuard() { --proofDepth; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool exceeded() const { return proofDepth > kMaxProofDepth; }
};

// ---------------------------------------------------------------------------------------------
// Interval arithmetic over 128-bit integers with saturating infinities.

using i128 = __int128;
constexpr i128 kInf = static_cast<i128>(1) << 100;

struct Interval {
  i128 lo = -kInf;
  i128 hi = kInf;
};

i128 clampInf(i128 v) { return v >= kInf ? kInf : (v <= -kInf ? -kInf : v); }

i128 addB(i128 a, i128 b) {
  if (a == kInf || a == -kInf) return a;
  if (b == kInf || b == -kInf) return b;
  return clampInf(a + b);
}

i128 mulB(i128 a, i128 b) {
  if (a == 0 || b == 0) return 0;
  bool negative = (a < 0) != (b < 0);
  if (a == kInf || a == -kInf || b == kInf || b == -kInf) return negative ? -kInf : kInf;
  i128 r;
  if (__builtin_mul_overflow(a, b, &r)) return negative ? -kInf : kInf;
  return clampInf(r);
}

i128 absB(i128 a) { return a < 0 ? -a : a; }

Interval mulI(const Interval& x, const Interval& y) {
  i128 c[4] = {mulB(x.lo, y.lo), mulB(x.lo, y.hi), mulB(x.hi, y.lo), mulB(x.hi, y.hi)};
  return Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval scaleI(const Interval& x, int64_t c) {
  if (c >= 0) return Interval{mulB(x.lo, c), mulB(x.hi, c)};
  return Interval{mulB(x.hi, c), mulB(x.lo, c)};
}

// x / y (truncating) for every x in X, y in Y with y != 0.
Interval divI(const Interval& x, const Interval& y) {
  // No y but 0 (an empty interval where a bound below is of an undefined x % 0): no finite
  // bound either.
  if (y.lo > y.hi) return Interval{-kInf, kInf};
  if (y.lo >= 1) {
    i128 lo = x.lo >= 0 ? (y.hi == kInf ? 0 : x.lo / y.hi) : (x.lo == -kInf ? -kInf : x.lo / y.lo);
    i128 hi = x.hi >= 0 ? (x.hi == kInf ? kInf : x.hi / y.lo) : (y.hi == kInf ? 0 : x.hi / y.hi);
    return Interval{lo, hi};
  }
  if (y.hi <= -1) {
    Interval r = divI(x, Interval{-y.hi, -y.lo});
    return Interval{-r.hi, -r.lo};
  }
  i128 m = std::max(absB(x.lo), absB(x.hi));
  return Interval{-m, m};
}

// x % y (truncating): the sign of x, magnitude below |y|.
Interval modI(const Interval& x, const Interval& y) {
  i128 big = std::max(absB(y.lo), absB(y.hi));
  // y can only be 0: x % y is undefined wherever it is evaluated; x's own range stands for it
  // (else the magnitude bound below would be the empty interval [0, -1]).
  if (big == 0) return Interval{std::min<i128>(x.lo, 0), std::max<i128>(x.hi, 0)};
  i128 m = big >= kInf ? kInf : big - 1;
  if (x.lo >= 0) return Interval{0, std::min(x.hi, m)};
  if (x.hi <= 0) return Interval{std::max(x.lo, -m), 0};
  return Interval{std::max(x.lo, -m), std::min(x.hi, m)};
}

// Interval arithmetic over the expression DAG, each node once (nodes are shared: a tree walk
// can be exponential). Variable ranges are followed; they cannot be cyclic because a node only
// refers to nodes built before it.
using IntervalMemo = std::unordered_map<const ArithNode*, Interval>;

Interval intervalRec(const Arith& e, IntervalMemo& memo) {
  const ArithNode* n = e.node();
  if (n->kind == ArithKind::Constant) return Interval{n->value, n->value};
  if (auto it = memo.find(n); it != memo.end()) return it->second;
  Interval r;
  switch (n->kind) {
    case ArithKind::Var:
      r = Interval{intervalRec(*n->lo, memo).lo, n->hi ? intervalRec(*n->hi, memo).hi : kInf};
      break;
    case ArithKind::Sum:
      r = Interval{n->value, n->value};
      for (const auto& [coef, mono] : n->terms) {
        Interval t = scaleI(intervalRec(mono, memo), coef);
        r = Interval{addB(r.lo, t.lo), addB(r.hi, t.hi)};
      }
      break;
    case ArithKind::Product:
      r = Interval{1, 1};
      for (const Arith& a : n->ops) r = mulI(r, intervalRec(a, memo));
      r = scaleI(r, n->value);
      break;
    case ArithKind::Div:
      r = divI(intervalRec(n->ops[0], memo), intervalRec(n->ops[1], memo));
      break;
    case ArithKind::Mod:
      r = modI(intervalRec(n->ops[0], memo), intervalRec(n->ops[1], memo));
      break;
    case ArithKind::Min:
    case ArithKind::Max: {
      Interval x = intervalRec(n->ops[0], memo);
      Interval y = intervalRec(n->ops[1], memo);
      r = n->kind == ArithKind::Min ? Interval{std::min(x.lo, y.lo), std::min(x.hi, y.hi)}
                                    : Interval{std::max(x.lo, y.lo), std::max(x.hi, y.hi)};
      break;
    }
    case ArithKind::IfLess: {
      Interval x = intervalRec(n->ops[2], memo);
      Interval y = intervalRec(n->ops[3], memo);
      r = Interval{std::min(x.lo, y.lo), std::max(x.hi, y.hi)};
      break;
    }
    default:
      break;
  }
  memo.emplace(n, r);
  return r;
}

Interval intervalOf(const Arith& e) {
  IntervalMemo memo;
  return intervalRec(e, memo);
}

std::optional<Arith> constantOf(i128 v) {
  if (v >= kInf || v <= -kInf || v > INT64_MAX || v < INT64_MIN) return std::nullopt;
  return Arith(static_cast<int64_t>(v));
}

// ---------------------------------------------------------------------------------------------
// Proofs and symbolic bounds

bool proveNonNeg(const Arith& e);
bool provePos(const Arith& e) {
  if (auto c = e.constant()) return *c > 0;
  return proveNonNeg(e - 1);
}
std::optional<Arith> symbolicBound(const Arith& e, bool upper);

bool atomNonNeg(const Arith& a) {
  const ArithNode* n = a.node();
  switch (n->kind) {
    case ArithKind::Var:
      return n->lo->isConstant() ? *n->lo->constant() >= 0 : proveNonNeg(*n->lo);
    case ArithKind::Div:
      return proveNonNeg(n->ops[0]) && provePos(n->ops[1]);
    case ArithKind::Mod:
      return proveNonNeg(n->ops[0]);
    case ArithKind::Min:
      return proveNonNeg(n->ops[0]) && proveNonNeg(n->ops[1]);
    case ArithKind::Max:
      return proveNonNeg(n->ops[0]) || proveNonNeg(n->ops[1]);
    case ArithKind::IfLess:
      return proveNonNeg(n->ops[2]) && proveNonNeg(n->ops[3]);
    default:
      return proveNonNeg(a);
  }
}

// Non-negative coefficients and constant over provably non-negative atoms.
bool obviouslyNonNeg(const Poly& p) {
  if (p.constant < 0) return false;
  for (const Term& t : p.terms) {
    if (t.coef < 0) return false;
  }
  for (const Term& t : p.terms) {
    for (const Arith& a : monoAtoms(t.mono)) {
      if (!atomNonNeg(a)) return false;
    }
  }
  return true;
}

// A bound of a single atom. With `constantMode`, from interval arithmetic (a constant);
// otherwise symbolic (a variable's range bound; / % min max from their operands' bounds).
std::optional<Arith> atomBound(const Arith& a, bool upper, bool constantMode) {
  const ArithNode* n = a.node();
  if (constantMode) {
    Interval r = intervalOf(a);
    return constantOf(upper ? r.hi : r.lo);
  }
  auto bound = [&](const Arith& x, bool up) { return symbolicBound(x, up); };
  switch (n->kind) {
    case ArithKind::Var:
      return upper ? n->hi : n->lo;
    case ArithKind::Div: {
      const Arith& x = n->ops[0];
      const Arith& y = n->ops[1];
      if (!provePos(y)) return std::nullopt;
      // y >= 1 is known, so 1 stands in for a missing or unprovably positive lower bound.
      auto yLower = [&]() -> Arith {
        auto ly = bound(y, false);
        return ly && provePos(*ly) ? *ly : Arith(1);
      };
      if (upper) {
        auto ux = bound(x, true);
        if (!ux || !proveNonNeg(*ux)) return std::nullopt;
        return *ux / yLower();  // x/y <= max(x, 0)/y <= ux/ly
      }
      auto lx = bound(x, false);
      if (!lx) return std::nullopt;
      if (proveNonNeg(*lx)) {
        auto uy = bound(y, true);
        return uy ? *lx / *uy : Arith(0);
      }
      if (proveNonNeg(-*lx)) return -((-*lx) / yLower());  // x/y >= -((-lx)/y) >= -((-lx)/ly)
      return std::nullopt;
    }
    case ArithKind::Mod: {
      const Arith& x = n->ops[0];
      const Arith& y = n->ops[1];
      if (!provePos(y)) return std::nullopt;
      bool xNonNeg = proveNonNeg(x);
      auto uy = bound(y, true);
      if (!upper) {
        if (xNonNeg) return Arith(0);
        if (uy) return 1 - *uy;
        return std::nullopt;
      }
      std::optional<Arith> byDivisor;
      if (uy) byDivisor = *uy - 1;
      std::optional<Arith> byDividend;
      if (xNonNeg) byDividend = bound(x, true);
      if (byDivisor && byDividend && byDivisor->isConstant() && byDividend->isConstant()) {
        return std::min(*byDivisor->constant(), *byDividend->constant());
      }
      return byDivisor ? byDivisor : byDividend;
    }
    case ArithKind::Min:
    case ArithKind::Max: {
      auto x = bound(n->ops[0], upper);
      auto y = bound(n->ops[1], upper);
      bool isMin = n->kind == ArithKind::Min;
      if (x && y) return isMin ? min(*x, *y) : max(*x, *y);
      // min(a, b) <= a and max(a, b) >= a: one side suffices for those directions.
      if (isMin == upper) return x ? x : y;
      return std::nullopt;
    }
    case ArithKind::IfLess: {
      auto x = bound(n->ops[2], upper);
      auto y = bound(n->ops[3], upper);
      if (!x || !y) return std::nullopt;
      return upper ? max(*x, *y) : min(*x, *y);
    }
    default:
      return std::nullopt;
  }
}

bool containsAtom(const std::vector<Arith>& set, const Arith& a) {
  return std::any_of(set.begin(), set.end(), [&](const Arith& s) { return s == a; });
}

// Replaces, in each term of p, the atoms of `atoms` by their bounds: a lower bound of p when
// !upper. A term c*m is bounded on its own: with c > 0 by the same-direction bound of m, else
// the opposite one; a product of several atoms only when all are provably non-negative (then
// it is monotone in each). nullopt when some needed bound does not exist.
std::optional<Arith> eliminate(const Poly& p, const std::vector<Arith>& atoms, bool upper,
                               bool constantMode) {
  Poly acc{p.constant, {}};
  for (const Term& t : p.terms) {
    auto factors = monoAtoms(t.mono);
    bool touches = std::any_of(factors.begin(), factors.end(),
                               [&](const Arith& a) { return containsAtom(atoms, a); });
    if (!touches) {
      acc = addPoly(acc, Poly{0, {t}});
      continue;
    }
    bool dirUpper = upper != (t.coef < 0);
    if (factors.size() == 1) {
      auto b = atomBound(factors[0], dirUpper, constantMode);
      if (!b) return std::nullopt;
      acc = addPoly(acc, scalePoly(toPoly(*b), t.coef));
      continue;
    }
    for (const Arith& a : factors) {
      if (!atomNonNeg(a)) return std::nullopt;
    }
    Poly prod{t.coef, {}};
    for (const Arith& a : factors) {
      Arith f = a;
      if (containsAtom(atoms, a)) {
        auto b = atomBound(a, dirUpper, constantMode);
        if (!b) return std::nullopt;
        f = !dirUpper && !proveNonNeg(*b) ? Arith(0) : *b;  // a >= 0 anyway
      }
      prod = mulPoly(prod, toPoly(f));
    }
    acc = addPoly(acc, prod);
  }
  return fromPoly(std::move(acc));
}

bool isKeptVar(const ArithNode* n) { return n->kind == ArithKind::Var && n->onlyKeptVars; }

// A symbolic bound of e over size and tuning variables with constant ranges (those stay).
std::optional<Arith> symbolicBoundImpl(const Arith& e, bool upper) {
  Arith cur = e;
  for (int round = 0; round < 8; ++round) {
    if (cur.node()->onlyKeptVars) return cur;
    Poly p = toPoly(cur);
    std::vector<Arith> elim;
    for (const Term& t : p.terms) {
      for (const Arith& a : monoAtoms(t.mono)) {
        if (!a.node()->onlyKeptVars && !containsAtom(elim, a)) elim.push_back(a);
      }
    }
    if (elim.empty()) return cur;
    // Variables whose range mentions another eliminated variable go first (j in [0, i]
    // before i), so that the replacement can cancel against terms in that variable.
    std::set<std::string> dependedOn;
    for (const Arith& a : elim) {
      for (const Arith& v : a.vars()) {
        if (isKeptVar(v.node())) continue;
        for (const Arith& w : v.varLo().vars()) dependedOn.insert(w.varName());
        if (v.varHi()) {
          for (const Arith& w : v.varHi()->vars()) dependedOn.insert(w.varName());
        }
      }
    }
    std::vector<Arith> top;
    for (const Arith& a : elim) {
      if (!(a.isVar() && dependedOn.count(a.varName()))) top.push_back(a);
    }
    if (top.empty()) top = elim;
    auto next = eliminate(p, top, upper, false);
    if (!next) return std::nullopt;
    cur = *next;
  }
  return std::nullopt;
}

// Memo tables for proofs and bounds. A result depends only on the expression (its structure
// and its variables with their ranges) and on the proof depth it is computed at (deeper proofs
// give up sooner), so keying on both keeps results independent of what was computed before,
// while shared subexpressions are reasoned about once. Keys compare by structure, variable
// ranges included (Arith's own equality identifies variables by name only), so that an equal
// expression built again — code generation rebuilds the same index expressions for every
// unrolled iteration and every kernel — finds the result too; the same node is the fast path.
// Entries keep their node alive; the tables are simply emptied when they grow large.
bool sameWithRanges(const ArithNode* a, const ArithNode* b) {
  if (a == b) return true;
  if (a->hash != b->hash || a->kind != b->kind || a->value != b->value || a->size != b->size ||
      a->onlyKeptVars != b->onlyKeptVars) {
    return false;
  }
  if (a->kind == ArithKind::Var) {
    if (a->name != b->name || a->varKind != b->varKind || a->lo.has_value() != b->lo.has_value() ||
        a->hi.has_value() != b->hi.has_value()) {
      return false;
    }
    if (a->lo && !sameWithRanges(a->lo->node(), b->lo->node())) return false;
    if (a->hi && !sameWithRanges(a->hi->node(), b->hi->node())) return false;
    return true;
  }
  if (a->ops.size() != b->ops.size() || a->terms.size() != b->terms.size()) return false;
  for (size_t i = 0; i < a->ops.size(); ++i) {
    if (!sameWithRanges(a->ops[i].node(), b->ops[i].node())) return false;
  }
  for (size_t i = 0; i < a->terms.size(); ++i) {
    if (a->terms[i].first != b->terms[i].first ||
        !sameWithRanges(a->terms[i].second.node(), b->terms[i].second.node())) {
      return false;
    }
  }
  return true;
}

struct MemoKey {
  const ArithNode* node;
  int depth;
  int flavour;
  bool operator==(const MemoKey& other) const {
    return depth == other.depth && flavour == other.flavour && sameWithRanges(node, other.node);
  }
};
struct MemoKeyHash {
  size_t operator()(const MemoKey& k) const {
    return k.node->hash ^ (static_cast<size_t>(k.depth) * 0x9e3779b9u) ^
           (static_cast<size_t>(k.flavour) * 0x85ebca6bu);
  }
};
template <typename V>
struct Memo {
  std::unordered_map<MemoKey, std::pair<Arith, V>, MemoKeyHash> table;
  const V* find(const Arith& e, int flavour) const {
    auto it = table.find(MemoKey{e.node(), proofDepth, flavour});
    return it == table.end() ? nullptr : &it->second.second;
  }
  void put(const Arith& e, int flavour, V value) {
    if (table.size() > 65536) table.clear();
    table.emplace(MemoKey{e.node(), proofDepth, flavour}, std::pair<Arith, V>{e, std::move(value)});
  }
};
thread_local Memo<bool> nonNegMemo;
thread_local Memo<std::optional<Arith>> boundMemo;

// Memo of simplifyDivMod: the result of a/b or a%b depends only on the operands (structure and
// ranges, as above) and the proof depth, so an equal division built again finds its result.
// Unrolled loops divide the same index in the reads of both operands of a reduction (the
// input window and the weights share the reduction index) and in every lane of a vector read.
struct DivModKey {
  const ArithNode* dividend;
  const ArithNode* divisor;
  int depth;
  bool isMod;
  bool operator==(const DivModKey& other) const {
    return depth == other.depth && isMod == other.isMod &&
           sameWithRanges(dividend, other.dividend) && sameWithRanges(divisor, other.divisor);
  }
};
struct DivModKeyHash {
  size_t operator()(const DivModKey& k) const {
    return k.dividend->hash ^ (k.divisor->hash * 0x9e3779b97f4a7c15ull) ^
           (static_cast<size_t>(k.depth) * 0x85ebca6bu) ^ (k.isMod ? 0xc2b2ae35u : 0u);
  }
};
struct DivModEntry {
  Arith dividend;  // keep the key's nodes alive
  Arith divisor;
  Arith result;
};
thread_local std::unordered_map<DivModKey, DivModEntry, DivModKeyHash> divModMemo;

std::optional<Arith> symbolicBound(const Arith& e, bool upper) {
  if (e.node()->onlyKeptVars) return e;
  if (auto hit = boundMemo.find(e, upper)) return *hit;
  std::optional<Arith> result;
  {
    DepthGuard guard;
    if (!guard.exceeded()) {
      try {
        result = symbolicBoundImpl(e, upper);
      } catch (const ArithError&) {
        result = std::nullopt;
      }
    }
  }
  boundMemo.put(e, upper, result);
  return result;
}

// The last stage of a proof that L >= 0, where L mentions (mostly) size/tuning variables.
bool proveNonNegFinal(const Arith& l, int& budget) {
  if (auto c = l.constant()) return *c >= 0;
  if (--budget < 0) return false;
  Poly p = toPoly(l);
  if (obviouslyNonNeg(p)) return true;
  if (intervalOf(l).lo >= 0) return true;
  std::vector<Arith> atoms;
  for (const Term& t : p.terms) {
    for (const Arith& a : monoAtoms(t.mono)) {
      if (!containsAtom(atoms, a)) atoms.push_back(a);
    }
  }
  if (atoms.size() > 4) return false;
  for (const Arith& a : atoms) {
    auto next = eliminate(p, {a}, false, true);
    if (!next || *next == l) continue;
    if (proveNonNegFinal(*next, budget)) return true;
  }
  return false;
}

bool proveNonNegUncached(const Arith& e) {
  DepthGuard guard;
  if (guard.exceeded()) return false;
  try {
    if (obviouslyNonNeg(toPoly(e))) return true;
    Arith l = e;
    if (!e.node()->onlyKeptVars) {
      if (auto b = symbolicBoundImpl(e, false)) l = *b;
    }
    int budget = 12;
    return proveNonNegFinal(l, budget);
  } catch (const ArithError&) {
    return false;
  }
}

bool proveNonNeg(const Arith& e) {
  if (auto c = e.constant()) return *c >= 0;
  if (const bool* hit = nonNegMemo.find(e, 0)) return *hit;
  bool result = proveNonNegUncached(e);
  nonNegMemo.put(e, 0, result);
  return result;
}

// ---------------------------------------------------------------------------------------------
// Polynomial helpers for division

// The atoms of `mono` minus those of `divisor` (as multisets), or nullopt when `divisor`'s
// atoms are not all there. Both are sorted.
std::optional<std::vector<Arith>> subtractAtoms(std::span<const Arith> mono,
                                                std::span<const Arith> divisor) {
  std::vector<Arith> rest;
  size_t j = 0;
  for (const Arith& a : mono) {
    if (j < divisor.size() && a == divisor[j]) {
      ++j;
    } else {
      rest.push_back(a);
    }
  }
  if (j != divisor.size()) return std::nullopt;
  return rest;
}

bool coefDivides(int64_t divisor, int64_t value) {
  if (divisor == 0) return false;
  if (divisor == -1 || divisor == 1) return true;
  return value % divisor == 0;
}

int64_t coefQuotient(int64_t value, int64_t divisor) {
  if (divisor == -1) return negChecked(value);
  return value / divisor;
}

// c * (product of atoms) as a polynomial.
Poly monoPoly(int64_t c, std::vector<Arith> atoms) {
  if (c == 0) return Poly{};
  if (atoms.empty()) return Poly{c, {}};
  return Poly{0, {Term{c, makeMono(std::move(atoms))}}};
}

uint64_t gcd64(uint64_t a, uint64_t b) { return std::gcd(a, b); }
uint64_t absU(int64_t v) {
  return v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
}

// gcd of all coefficients and the constant (0 for the zero polynomial).
uint64_t content(const Poly& p) {
  uint64_t g = absU(p.constant);
  for (const Term& t : p.terms) g = gcd64(g, absU(t.coef));
  return g;
}

Poly divideContent(const Poly& p, int64_t g) {
  Poly out{p.constant / g, {}};
  for (const Term& t : p.terms) out.terms.push_back(Term{t.coef / g, t.mono});
  return out;
}

// The orientation a polynomial of unknown sign is normalised to: the one with more positive
// than negative coefficients (so (W + 2*P + S - K)/S stays readable), the first term's sign
// on a tie. p and -p always get opposite signs, so exactly one of them is canonical.
int leadingSign(const Poly& p) {
  int balance = (p.constant > 0) - (p.constant < 0);
  for (const Term& t : p.terms) balance += (t.coef > 0) - (t.coef < 0);
  if (balance != 0) return balance > 0 ? 1 : -1;
  int64_t c = p.terms.empty() ? p.constant : p.terms[0].coef;
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

Poly minus(const Poly& a, const Poly& b) { return addPoly(a, negPoly(b)); }

}  // namespace

namespace arith_detail {

std::optional<QuotientRemainder> polyDivide(const Poly& a, const Poly& b) {
  if (b.isZero()) return std::nullopt;
  QuotientRemainder out;
  if (b.terms.empty()) {  // constant divisor: term by term
    int64_t c = b.constant;
    for (const Term& t : a.terms) {
      if (coefDivides(c, t.coef)) {
        out.q.terms.push_back(Term{coefQuotient(t.coef, c), t.mono});
      } else {
        out.r.terms.push_back(t);
      }
    }
    if (coefDivides(c, a.constant)) {
      out.q.constant = coefQuotient(a.constant, c);
    } else {
      out.r.constant = a.constant;
    }
    return out;
  }
  if (b.terms.size() == 1 && b.constant == 0) {  // a single term c*m: term by term
    const Term& d = b.terms[0];
    std::vector<Term> q;
    for (const Term& t : a.terms) {
      std::optional<std::vector<Arith>> rest;
      if (coefDivides(d.coef, t.coef)) rest = subtractAtoms(monoAtoms(t.mono), monoAtoms(d.mono));
      if (!rest) {
        out.r.terms.push_back(t);
      } else if (rest->empty()) {
        out.q.constant = addChecked(out.q.constant, coefQuotient(t.coef, d.coef));
      } else {
        q.push_back(Term{coefQuotient(t.coef, d.coef), makeMono(std::move(*rest))});
      }
    }
    out.r.constant = a.constant;
    out.q = normalize(out.q.constant, std::move(q));
    return out;
  }
  // A sum divisor: multivariate division by the leading term, with a step limit.
  const Term& lead = b.terms[0];
  Poly p = a;
  Poly q;
  for (int step = 0; step < 32; ++step) {
    const Term* pick = nullptr;
    std::optional<std::vector<Arith>> rest;
    for (const Term& t : p.terms) {
      if (!coefDivides(lead.coef, t.coef)) continue;
      rest = subtractAtoms(monoAtoms(t.mono), monoAtoms(lead.mono));
      if (rest) {
        pick = &t;
        break;
      }
    }
    if (!pick) {
      out.q = std::move(q);
      out.r = std::move(p);
      return out;
    }
    Poly qt = monoPoly(coefQuotient(pick->coef, lead.coef), std::move(*rest));
    q = addPoly(q, qt);
    p = minus(p, mulPoly(qt, b));
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Simplifying constructors

static Arith simplifyDivModUncached(const Arith& a, const Arith& b, bool isMod);

Arith simplifyDivMod(const Arith& a, const Arith& b, bool isMod) {
  const std::optional<int64_t> cb = b.constant();
  if (a.isConstant() || (cb && (*cb == 1 || *cb == -1 || *cb == 0))) {
    return simplifyDivModUncached(a, b, isMod);  // folded at once, nothing to remember
  }
  const DivModKey key{a.node(), b.node(), proofDepth, isMod};
  if (auto it = divModMemo.find(key); it != divModMemo.end()) return it->second.result;
  Arith result = simplifyDivModUncached(a, b, isMod);
  if (divModMemo.size() > 2048) divModMemo.clear();
  divModMemo.emplace(DivModKey{a.node(), b.node(), proofDepth, isMod}, DivModEntry{a, b, result});
  return result;
}

static Arith simplifyDivModUncached(const Arith& a, const Arith& b, bool isMod) {
  auto ca = a.constant();
  auto cb = b.constant();
  const char* op = isMod ? "%" : "/";
  if (cb && *cb == 0) throw ArithError("division by zero: `" + a.toString() + op + "0`");
  if (ca && cb) {
    if (*ca == INT64_MIN && *cb == -1) {
      if (isMod) return Arith(0);
      throw ArithError("integer overflow in " + std::to_string(*ca) + "/-1");
    }
    return Arith(isMod ? *ca % *cb : *ca / *cb);
  }
  if (ca && *ca == 0) return Arith(0);
  if (cb && (*cb == 1 || *cb == -1)) return isMod ? Arith(0) : (*cb == 1 ? a : -a);

  bool bPositive = provePositive(b);
  bool bNegative = !bPositive && provePositive(-b);
  Poly pa = toPoly(a);
  Poly pb = toPoly(b);

  // Exact division (sign-independent): a == q*b as polynomials, b != 0.
  if (bPositive || bNegative) {
    if (a == b) return Arith(isMod ? 0 : 1);
    auto qr = polyDivide(pa, pb);
    if (qr && qr->r.isZero()) return isMod ? Arith(0) : fromPoly(qr->q);
  }

  // A common constant factor: (g*x)/(g*y) == x/y and (g*x)%(g*y) == g*(x%y).
  uint64_t g = gcd64(content(pa), content(pb));
  if (g > 1 && g <= static_cast<uint64_t>(INT64_MAX)) {
    int64_t gi = static_cast<int64_t>(g);
    Arith a2 = fromPoly(divideContent(pa, gi));
    Arith b2 = fromPoly(divideContent(pb, gi));
    // Both / and % divide it out, so that the atoms x/y and x%y always come in pairs with the
    // same operands (the sum refolding relies on that).
    return isMod ? gi * simplifyDivMod(a2, b2, true) : simplifyDivMod(a2, b2, false);
  }

  auto raw = [&] { return makeAtom(isMod ? ArithKind::Mod : ArithKind::Div, {a, b}); };

  // Signs. Truncation is odd in both operands: a/(-b) == -(a/b), a%(-b) == a%b,
  // (-a)/b == -(a/b), (-a)%b == -(a%b), for all values. So each operand is made non-negative
  // where that is provable, and otherwise given a positive leading coefficient, which makes
  // x/b and (-x)/b share one atom: (3 - t)/10 + (t - 3)/10 == 0.
  if (bNegative || (!bPositive && leadingSign(pb) < 0)) {
    return isMod ? simplifyDivMod(a, -b, true) : -simplifyDivMod(a, -b, false);
  }
  bool aNonNegative = proveNonNegative(a);
  if (!aNonNegative && (proveNonNegative(-a) || leadingSign(pa) < 0)) {
    return -simplifyDivMod(-a, b, isMod);
  }
  if (!bPositive) return raw();
  if (!aNonNegative) {
    // |a| < b: the quotient truncates to 0.
    if (proveLess(a, b) && proveLess(-a, b)) return isMod ? a : Arith(0);
    return raw();
  }

  // From here a >= 0 and b > 0.
  if (cb) {
    // Bounds that fall in one quotient: (i + 30)/24 == 1 and (i + 30)%24 == i + 6 for i in
    // [0, 5].
    auto lo = constantLowerBound(a);
    auto hi = constantUpperBound(a);
    if (lo && hi && *lo / *cb == *hi / *cb) {
      int64_t q = *lo / *cb;
      return isMod ? a - Arith(q * *cb) : Arith(q);
    }
  }
  if (!isMod && a.kind() == ArithKind::Div && provePositive(a.node()->ops[1])) {
    // (x/c)/b == x/(c*b) for c, b > 0.
    return simplifyDivMod(a.node()->ops[0], a.node()->ops[1] * b, false);
  }
  if (!isMod && a.kind() == ArithKind::Mod && provePositive(a.node()->ops[1]) &&
      proveNonNegative(a.node()->ops[0])) {
    // (x%(c*b))/b == (x/b)%c for x >= 0 and b, c > 0: the digit of x in base b inside x%(c*b).
    auto qr = polyDivide(toPoly(a.node()->ops[1]), pb);
    if (qr && qr->r.isZero()) {
      Arith c = fromPoly(qr->q);
      if (provePositive(c))
        return simplifyDivMod(simplifyDivMod(a.node()->ops[0], b, false), c, true);
    }
  }
  if (isMod && a.kind() == ArithKind::Mod && provePositive(a.node()->ops[1]) &&
      proveDivides(b, a.node()->ops[1])) {
    // (x%c)%b == x%b when b divides c.
    return simplifyDivMod(a.node()->ops[0], b, true);
  }
  auto qr = polyDivide(pa, pb);
  if (!qr) return raw();
  Arith q = fromPoly(qr->q);
  Arith r = fromPoly(qr->r);
  if (r.constant() == 0) return isMod ? Arith(0) : q;
  if (!proveNonNegative(r)) return raw();
  // a = q*b + r with r >= 0: a/b = q + r/b and a%b = r%b; with r < b, a/b = q and a%b = r.
  if (proveLessEqual(r, b - 1)) return isMod ? r : q;
  bool singleTermDivisor = pb.terms.empty() || (pb.terms.size() == 1 && pb.constant == 0);
  if (q.constant() == 0 || !singleTermDivisor) return raw();
  return isMod ? simplifyDivMod(r, b, true) : q + simplifyDivMod(r, b, false);
}

Arith simplifyMinMax(const Arith& first, const Arith& second, bool isMax) {
  // min and max are commutative: order the operands first, so that min(a, b) and min(b, a)
  // take the same path (when both a <= b and b <= a are provable, the first proof wins).
  bool swap = compare(second, first) < 0;
  const Arith& a = swap ? second : first;
  const Arith& b = swap ? first : second;
  if (a == b) return a;
  auto ca = a.constant();
  auto cb = b.constant();
  if (ca && cb) return Arith(isMax ? std::max(*ca, *cb) : std::min(*ca, *cb));
  if (proveLessEqual(a, b)) return isMax ? b : a;
  if (proveLessEqual(b, a)) return isMax ? a : b;
  return makeAtom(isMax ? ArithKind::Max : ArithKind::Min, {a, b});
}

Arith simplifyIfLess(const Arith& a, const Arith& b, const Arith& then, const Arith& otherwise) {
  if (then == otherwise) return then;
  auto ca = a.constant();
  auto cb = b.constant();
  if (ca && cb) return *ca < *cb ? then : otherwise;
  if (proveLess(a, b)) return then;
  if (proveLessEqual(b, a)) return otherwise;
  if (then == a && otherwise == b) return simplifyMinMax(a, b, false);
  if (then == b && otherwise == a) return simplifyMinMax(a, b, true);
  return makeAtom(ArithKind::IfLess, {a, b, then, otherwise});
}

namespace {

bool isTopDiv(const Arith& a) { return a.kind() == ArithKind::Div; }

// What the refolding below minimises, in order: the number of terms, of terms with a /
// factor, and the sum of the coefficients' magnitudes (x%8 + x/8 rather than x - 7*(x/8)).
std::tuple<size_t, size_t, uint64_t> sumCost(const Poly& p) {
  size_t divTerms = 0;
  uint64_t coefs = 0;
  for (const Term& t : p.terms) {
    auto atoms = monoAtoms(t.mono);
    if (std::any_of(atoms.begin(), atoms.end(), isTopDiv)) ++divTerms;
    coefs += absU(t.coef);
  }
  return {p.terms.size(), divTerms, coefs};
}

// q, r with c = q*d + r and |r| minimal (ties towards zero quotient), for d != 0.
std::pair<int64_t, int64_t> nearestQuotient(int64_t c, int64_t d) {
  if (d == -1) return {negChecked(c), 0};
  int64_t q = c / d;
  int64_t r = c % d;
  if (r != 0 && absU(r) * 2 > absU(d)) {
    bool sameSign = (r < 0) == (d < 0);
    q += sameSign ? 1 : -1;
    r = sameSign ? r - d : r + d;
  }
  return {q, r};
}

// Q = q*divisor + r for the refolding: term by term with nearest coefficient quotients when the
// divisor is a single term (so that -7*(x/8) can become -8*(x/8) + x/8), else polyDivide.
std::optional<QuotientRemainder> refoldDivide(const Poly& q, const Poly& divisor) {
  if (divisor.isZero()) return std::nullopt;
  if (!(divisor.terms.empty() || (divisor.terms.size() == 1 && divisor.constant == 0))) {
    return polyDivide(q, divisor);
  }
  int64_t cd = divisor.terms.empty() ? divisor.constant : divisor.terms[0].coef;
  std::vector<Arith> dAtoms;
  if (!divisor.terms.empty()) {
    auto s = monoAtoms(divisor.terms[0].mono);
    dAtoms.assign(s.begin(), s.end());
  }
  QuotientRemainder out;
  std::vector<Term> quotient;
  auto divideTerm = [&](int64_t coef, std::span<const Arith> atoms, const Term* term) {
    auto rest = subtractAtoms(atoms, dAtoms);
    auto [qc, rc] = rest ? nearestQuotient(coef, cd) : std::pair<int64_t, int64_t>{0, coef};
    if (qc != 0) {
      if (rest->empty()) {
        out.q.constant = addChecked(out.q.constant, qc);
      } else {
        quotient.push_back(Term{qc, makeMono(std::move(*rest))});
      }
    }
    if (rc != 0) {
      if (term) {
        out.r.terms.push_back(Term{rc, term->mono});
      } else {
        out.r.constant = rc;
      }
    }
  };
  for (const Term& t : q.terms) divideTerm(t.coef, monoAtoms(t.mono), &t);
  if (q.constant != 0) divideTerm(q.constant, {}, nullptr);
  out.q = normalize(out.q.constant, std::move(quotient));
  return out;
}

Poly power(const Poly& p, int k) {
  Poly r{1, {}};
  for (int i = 0; i < k; ++i) r = mulPoly(r, p);
  return r;
}

// The partner of an atom x%b (or x/b): the atom x/b (or x%b) when that does not simplify, else
// nullopt. Memoised per atom: the refolding asks for the same atoms over and over (sums built
// while simplifying share them), and recomputing would redo their proofs each time.
thread_local Memo<std::optional<Arith>> partnerMemo;

std::optional<Arith> partner(const Arith& atom) {
  bool isMod = atom.kind() == ArithKind::Mod;
  if (auto hit = partnerMemo.find(atom, isMod)) return *hit;
  const Arith& x = atom.node()->ops[0];
  const Arith& b = atom.node()->ops[1];
  Arith other = simplifyDivMod(x, b, !isMod);
  std::optional<Arith> result;
  if (other.kind() == (isMod ? ArithKind::Div : ArithKind::Mod) && other.node()->ops[0] == x &&
      other.node()->ops[1] == b) {
    result = other;
  }
  partnerMemo.put(atom, isMod, result);
  return result;
}

std::optional<Arith> partnerDiv(const Arith& mod) { return partner(mod); }
std::optional<Arith> partnerMod(const Arith& div) { return partner(div); }

// Replaces every top-level x%b whose partner x/b is an atom by x - b*(x/b), recursively in x
// and b (which are smaller), so that the result has no expandable % at the top level. With
// `throughSimplifiedQuotients`, an x%b whose quotient x/b simplifies to something else is
// expanded too, by x - b*Q with Q that simplified quotient (C's x%b = x - b*(x/b) holds
// whatever form x/b takes): (i/128)%3 becomes i/128 - 3*(i/384), in the atoms its neighbours
// in an index sum use. `depth` bounds that expansion of Q in turn.
Poly expandMods(const Poly& p, bool throughSimplifiedQuotients = false, int depth = 0) {
  constexpr int kMaxQuotientDepth = 4;
  Poly out{p.constant, {}};
  for (const Term& t : p.terms) {
    auto atoms = monoAtoms(t.mono);
    if (std::none_of(atoms.begin(), atoms.end(),
                     [](const Arith& a) { return a.kind() == ArithKind::Mod; })) {
      out = addPoly(out, Poly{0, {t}});
      continue;
    }
    Poly prod{t.coef, {}};
    for (const Arith& a : atoms) {
      std::optional<Arith> div;
      bool simplifiedQuotient = false;
      if (a.kind() == ArithKind::Mod) {
        div = partnerDiv(a);
        if (!div && throughSimplifiedQuotients && depth < kMaxQuotientDepth) {
          div = simplifyDivMod(a.node()->ops[0], a.node()->ops[1], false);
          simplifiedQuotient = true;
        }
      }
      if (div) {
        const Arith& x = a.node()->ops[0];
        const Arith& b = a.node()->ops[1];
        Poly quotient = simplifiedQuotient
                            ? expandMods(toPoly(*div), throughSimplifiedQuotients, depth + 1)
                            : toPoly(*div);
        prod = mulPoly(prod, minus(expandMods(toPoly(x), throughSimplifiedQuotients, depth),
                                   mulPoly(expandMods(toPoly(b), throughSimplifiedQuotients, depth),
                                           quotient)));
      } else {
        prod = mulPoly(prod, toPoly(a));
      }
    }
    out = addPoly(out, prod);
  }
  return out;
}

// b with its % expanded, and x - x%b likewise (nullopt when x%b is not the partner of x/b), for
// a division atom d = x/b. Memoised per atom (each computed only when first needed, as
// before): the refolding of every sum that contains d asks for them again.
thread_local Memo<Poly> divisorExpansionMemo;
thread_local Memo<std::optional<Poly>> numeratorMinusRemainderMemo;

Poly divisorExpanded(const Arith& d) {
  if (const Poly* hit = divisorExpansionMemo.find(d, 0)) return *hit;
  Poly result = expandMods(toPoly(d.node()->ops[1]));
  divisorExpansionMemo.put(d, 0, result);
  return result;
}

std::optional<Poly> numeratorMinusRemainder(const Arith& d) {
  if (const std::optional<Poly>* hit = numeratorMinusRemainderMemo.find(d, 0)) return *hit;
  std::optional<Poly> result;
  if (auto r = partnerMod(d)) result = minus(expandMods(toPoly(d.node()->ops[0])), toPoly(*r));
  numeratorMinusRemainderMemo.put(d, 0, result);
  return result;
}

// p as sum_k Q_k*D^k for the atom D: (k, Q_k) in ascending k, for the powers that occur.
// Built in one pass: the terms with d lose d^k and are sorted once (normalize), which is what
// adding them one by one gave. Q_0 holds p's terms without d when `withTermsWithoutD` (p's
// terms are sorted with distinct monomials, so they stay a polynomial as they are), otherwise
// it is empty and the caller takes them from p only if it needs them. Indexed by k (small: the
// highest power of d in p) and visited in ascending k, as an ordered map would be, without a
// map's node per power; `present`: the powers that occur.
std::vector<std::pair<int, Poly>> termsByPowerOf(const Poly& p, const Arith& d,
                                                 bool withTermsWithoutD) {
  struct Collected {
    bool present = false;
    int64_t constant = 0;
    std::vector<Term> terms;
  };
  std::vector<Collected> collected;
  for (const Term& t : p.terms) {
    auto atoms = monoAtoms(t.mono);
    size_t occurrences = 0;
    for (const Arith& a : atoms) occurrences += a == d ? 1 : 0;
    if (collected.size() <= occurrences) collected.resize(occurrences + 1);
    Collected& entry = collected[occurrences];
    entry.present = true;
    if (occurrences == 0) {
      if (withTermsWithoutD) entry.terms.push_back(t);
      continue;
    }
    if (occurrences == atoms.size()) {
      entry.constant = addChecked(entry.constant, t.coef);
      continue;
    }
    std::vector<Arith> rest;
    rest.reserve(atoms.size() - occurrences);
    for (const Arith& a : atoms) {
      if (!(a == d)) rest.push_back(a);
    }
    entry.terms.push_back(Term{t.coef, makeMono(std::move(rest))});
  }
  std::vector<std::pair<int, Poly>> byPower;
  byPower.reserve(collected.size());
  for (size_t k = 0; k < collected.size(); ++k) {
    Collected& entry = collected[k];
    if (!entry.present) continue;
    byPower.emplace_back(static_cast<int>(k),
                         k == 0 ? Poly{entry.constant, std::move(entry.terms)}
                                : normalize(entry.constant, std::move(entry.terms)));
  }
  return byPower;
}

// substituteDiv without the shortcut that skips rebuilding unchanged sums: the reference the
// property test compares with (ir/arith_testing.h switches it on). Same results.
thread_local bool referencePaths = false;

std::optional<Poly> substituteDivReference(const Poly& p, const Arith& d) {
  std::vector<std::pair<int, Poly>> byPower = termsByPowerOf(p, d, true);
  Poly out{p.constant, {}};
  // In the expanded space p lives in: b and x - x%b with their own % expanded.
  std::optional<Poly> bExpanded;
  std::optional<Poly> xMinusR;
  bool changed = false;
  bool noPartner = false;
  for (const auto& [k, q] : byPower) {
    Poly dk = k == 0 ? Poly{1, {}} : monoPoly(1, std::vector<Arith>(static_cast<size_t>(k), d));
    std::optional<QuotientRemainder> qr;
    if (k > 0) {
      if (!bExpanded) bExpanded = divisorExpanded(d);
      qr = refoldDivide(q, power(*bExpanded, k));
    }
    if (!qr || qr->q.isZero()) {
      out = addPoly(out, mulPoly(q, dk));
      continue;
    }
    if (!xMinusR && !noPartner) {
      xMinusR = numeratorMinusRemainder(d);
      noPartner = !xMinusR;
    }
    if (noPartner) {
      out = addPoly(out, mulPoly(q, dk));
      continue;
    }
    out = addPoly(out, addPoly(mulPoly(qr->q, power(*xMinusR, k)), mulPoly(qr->r, dk)));
    changed = true;
  }
  if (!changed) return std::nullopt;
  return out;
}

// Writes p as sum_k Q_k*D^k for the atom D = x/b and replaces, where b^k divides Q_k (or the
// divisible part of it), b^k*D^k by (x - x%b)^k (b and x with their % expanded, as in p).
// nullopt when nothing is divisible or x%b is not the partner of x/b.
std::optional<Poly> substituteDiv(const Poly& p, const Arith& d) {
  if (referencePaths) return substituteDivReference(p, d);
  std::vector<std::pair<int, Poly>> byPower = termsByPowerOf(p, d, false);
  // In the expanded space p lives in: b and x - x%b with their own % expanded. The quotients
  // first: most calls change nothing (no Q_k divisible, or x%b no partner), and then the sum
  // is not rebuilt at all (the rebuilt sum would only be thrown away; rebuilding it adds and
  // multiplies nothing that could overflow when nothing changes).
  std::optional<Poly> bExpanded;
  std::optional<Poly> xMinusR;
  bool noPartner = false;
  std::vector<std::optional<QuotientRemainder>> quotients(byPower.size());
  bool changed = false;
  for (size_t e = 0; e < byPower.size(); ++e) {
    const auto& [k, q] = byPower[e];
    if (k == 0) continue;
    if (!bExpanded) bExpanded = divisorExpanded(d);
    std::optional<QuotientRemainder>& qr = quotients[e];
    qr = refoldDivide(q, power(*bExpanded, k));
    if (!qr || qr->q.isZero()) continue;
    if (!xMinusR && !noPartner) {
      xMinusR = numeratorMinusRemainder(d);
      noPartner = !xMinusR;
    }
    changed = changed || !noPartner;  // without the partner no power is replaced
  }
  if (!changed) return std::nullopt;
  Poly out{p.constant, {}};
  for (size_t e = 0; e < byPower.size(); ++e) {
    auto& [k, q] = byPower[e];
    if (k == 0) {
      // Q_0 * d^0: p's terms without d, in p's order (sorted and distinct).
      std::vector<Term> withoutD;
      withoutD.reserve(p.terms.size());
      for (const Term& t : p.terms) {
        auto atoms = monoAtoms(t.mono);
        if (std::none_of(atoms.begin(), atoms.end(), [&](const Arith& a) { return a == d; })) {
          withoutD.push_back(t);
        }
      }
      out = Poly{addChecked(out.constant, q.constant), std::move(withoutD)};
      continue;
    }
    Poly dk = monoPoly(1, std::vector<Arith>(static_cast<size_t>(k), d));
    const std::optional<QuotientRemainder>& qr = quotients[e];
    if (!qr || qr->q.isZero()) {
      out = addPoly(out, mulPoly(q, dk));
      continue;
    }
    out = addPoly(out, addPoly(mulPoly(qr->q, power(*xMinusR, k)), mulPoly(qr->r, dk)));
  }
  return out;
}

}  // namespace

// Folds divisions of the (expanded) sum back into remainders while that shrinks it.
static void refoldDivisions(Poly& cur);

// Whether p has a top-level x%b whose quotient x/b simplifies to something other than x/b.
static bool hasRemainderWithoutPartner(const Poly& p) {
  for (const Term& t : p.terms) {
    for (const Arith& a : monoAtoms(t.mono)) {
      if (a.kind() == ArithKind::Mod && !partnerDiv(a)) return true;
    }
  }
  return false;
}

bool refoldDivMod(Poly& p) {
  // Canonical first: with every x%b written as x - b*(x/b), equal sums are equal polynomials
  // (in the remaining atoms) however they were built. Then, deterministically, fold divisions
  // back into remainders while that makes the sum smaller: x - 4*(x/4) -> x%4,
  // (x/4)*4 + x%4 -> x, m*(i%n) + i/n stays as it is.
  bool hasMod = false;
  for (const Term& t : p.terms) {
    for (const Arith& a : monoAtoms(t.mono)) hasMod = hasMod || a.kind() == ArithKind::Mod;
  }
  try {
    Poly cur = hasMod ? expandMods(p) : p;
    refoldDivisions(cur);
    // A remainder whose quotient simplifies ((i/128)%3, quotient i/384) has no partner and
    // stays as it is above, so a sum that is the expansion of something simpler in other atoms
    // (6144*(i/384) + 2048*((i/128)%3) + 16*(i%128), which is 16*i for i < 1152) would keep
    // all its terms. Expanding those remainders through their simplified quotients as well
    // finds it; that form is taken only when it is smaller, since the refolding cannot fold
    // such a remainder back ((i/128)%3 alone would become i/128 - 3*(i/384)).
    if (hasMod && hasRemainderWithoutPartner(p)) {
      Poly deeper = expandMods(p, true);
      refoldDivisions(deeper);
      if (sumCost(deeper) < sumCost(cur)) cur = std::move(deeper);
    }
    bool changed = hasMod || cur.terms.size() != p.terms.size();
    p = std::move(cur);
    return changed;
  } catch (const ArithError&) {
    return false;  // 64-bit overflow while expanding: leave the sum as it was built
  }
}

static void refoldDivisions(Poly& cur) {
  for (int iteration = 0; iteration < 8; ++iteration) {
    std::vector<Arith> divs;
    for (const Term& t : cur.terms) {
      for (const Arith& a : monoAtoms(t.mono)) {
        if (isTopDiv(a) && !containsAtom(divs, a)) divs.push_back(a);
      }
    }
    if (divs.empty()) break;
    // Outer divisions first: x/b with % inside x or b (expanded in cur) folds only while those
    // are still expanded.
    std::vector<std::pair<size_t, Arith>> bySize;
    for (const Arith& d : divs) bySize.emplace_back(d.node()->size, d);
    std::stable_sort(bySize.begin(), bySize.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    for (size_t i = 0; i < divs.size(); ++i) divs[i] = bySize[i].second;
    auto cost = sumCost(cur);
    std::optional<Poly> next;
    std::optional<Poly> firstCandidate;  // substituteDiv(cur, divs[0]), which `all` starts with
    for (const Arith& d : divs) {
      auto candidate = substituteDiv(cur, d);
      if (candidate && sumCost(*candidate) < cost) {
        next = std::move(candidate);
        break;
      }
      if (&d == &divs.front()) firstCandidate = std::move(candidate);
    }
    if (!next && divs.size() > 1) {
      Poly all = firstCandidate ? std::move(*firstCandidate) : cur;
      for (size_t i = 1; i < divs.size(); ++i) {
        if (auto c = substituteDiv(all, divs[i])) all = std::move(*c);
      }
      if (sumCost(all) < cost) next = std::move(all);
    }
    if (!next) break;
    cur = std::move(*next);
  }
}

}  // namespace arith_detail

// ---------------------------------------------------------------------------------------------
// Public range reasoning

bool proveNonNegative(const Arith& e) { return proveNonNeg(e); }
bool provePositive(const Arith& e) {
  try {
    return provePos(e);
  } catch (const ArithError&) {
    return false;
  }
}
bool proveLess(const Arith& a, const Arith& b) {
  try {
    return proveNonNeg(b - a - 1);
  } catch (const ArithError&) {
    return false;
  }
}
bool proveLessEqual(const Arith& a, const Arith& b) {
  try {
    return proveNonNeg(b - a);
  } catch (const ArithError&) {
    return false;
  }
}

bool proveDivides(const Arith& divisor, const Arith& dividend) {
  if (dividend.constant() == 0) return true;
  if (auto c = divisor.constant(); c && (*c == 1 || *c == -1)) return true;
  if (divisor.constant() == 0) return false;
  if (divisor == dividend) return true;
  try {
    auto qr = polyDivide(toPoly(dividend), toPoly(divisor));
    return qr && qr->r.isZero();
  } catch (const ArithError&) {
    return false;
  }
}

// Bounds are built inside the proof machinery, where sums are not refolded: re-simplify them
// here so that they come out in the same canonical form as everything else.
std::optional<Arith> lowerBound(const Arith& e) {
  auto b = symbolicBound(e, false);
  if (b && !insideProof()) return substitute(*b, {});
  return b;
}
std::optional<Arith> upperBound(const Arith& e) {
  auto b = symbolicBound(e, true);
  if (b && !insideProof()) return substitute(*b, {});
  return b;
}

std::optional<int64_t> constantLowerBound(const Arith& e) {
  i128 lo = intervalOf(e).lo;
  if (auto l = lowerBound(e)) lo = std::max(lo, intervalOf(*l).lo);
  if (auto c = constantOf(lo)) return c->constant();
  return std::nullopt;
}

std::optional<int64_t> constantUpperBound(const Arith& e) {
  i128 hi = intervalOf(e).hi;
  if (auto u = upperBound(e)) hi = std::min(hi, intervalOf(*u).hi);
  if (auto c = constantOf(hi)) return c->constant();
  return std::nullopt;
}

void setArithReferencePaths(bool enabled) { arith_detail::referencePaths = enabled; }

void clearArithMemos() {
  nonNegMemo.table.clear();
  boundMemo.table.clear();
  divModMemo.clear();
  arith_detail::partnerMemo.table.clear();
  arith_detail::divisorExpansionMemo.table.clear();
  arith_detail::numeratorMinusRemainderMemo.table.clear();
}

}  // namespace weft
