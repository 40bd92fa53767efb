// Property tests of weft's symbolic arithmetic (ir/arith.h) against a reference: random
// expression trees are kept raw (a test-only tree evaluated directly with C's truncating / and
// %, no simplification) and also built through the Arith operators, which simplify. For random
// bindings inside the variables' ranges the simplified expression must evaluate like the raw
// tree whenever the raw tree is defined; simplification must be idempotent; equal-by-
// construction rearrangements must compare and hash equal; printing must be stable; and every
// proof and bound the range reasoning gives must hold for the drawn values; an index written as
// its digits in two nested bases (x/(a*b), (x/a)%b, x%a) must sum back to the index. Each
// property runs inside a doctest test case, so a failure fails ctest.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/arith_testing.h"

using namespace weft;

namespace {

// ---- the raw reference tree ----

enum class Op { Const, Var, Add, Sub, Mul, Div, Mod, Min, Max, IfLess };

struct Raw;
using RawP = std::shared_ptr<const Raw>;
struct Raw {
  Op op;
  int64_t value = 0;  // Const
  int var = 0;        // Var: index into the variable table
  std::vector<RawP> kids;
};

// The variables, in binding order (a range only mentions variables before it):
// sizes n, m in [1, 20] (declared unbounded above), a tuning parameter t in [1, 8], indices
// i in [0, n - 1], k in [0, m - 1], j in [0, 3], and a triangular index l in [0, i].
struct VarTable {
  std::vector<Arith> vars;
  VarTable() {
    Arith n = Arith::size("n");
    Arith m = Arith::size("m");
    Arith t = Arith::var("t", VarKind::Tuning, 1, Arith(8));
    Arith i = Arith::var("i", VarKind::LoopIndex, 0, n - 1);
    Arith k = Arith::var("k", VarKind::ThreadIndex, 0, m - 1);
    Arith j = Arith::var("j", VarKind::LoopIndex, 0, Arith(3));
    Arith l = Arith::var("l", VarKind::LoopIndex, 0, i);
    vars = {n, m, t, i, k, j, l};
  }
};

const VarTable& table() {
  static const VarTable t;
  return t;
}

RawP leaf() {
  if (*rc::gen::inRange(0, 3) == 0) {
    return std::make_shared<Raw>(Raw{Op::Const, *rc::gen::inRange<int64_t>(-10, 11), 0, {}});
  }
  int var = *rc::gen::inRange<int>(0, static_cast<int>(table().vars.size()));
  return std::make_shared<Raw>(Raw{Op::Var, 0, var, {}});
}

RawP genTree(int depth) {
  if (depth == 0 || *rc::gen::inRange(0, 4) == 0) return leaf();
  // Division-heavy on purpose: / and % are where the simplifier can go wrong.
  static const Op ops[] = {Op::Add, Op::Add, Op::Sub, Op::Mul, Op::Mul, Op::Div,
                           Op::Div, Op::Mod, Op::Mod, Op::Min, Op::Max, Op::IfLess};
  Op op = ops[*rc::gen::inRange<int>(0, std::size(ops))];
  int arity = op == Op::IfLess ? 4 : 2;
  std::vector<RawP> kids;
  for (int a = 0; a < arity; ++a) kids.push_back(genTree(depth - 1));
  return std::make_shared<Raw>(Raw{op, 0, 0, std::move(kids)});
}

// rapidcheck's default of 100 cases per property runs in milliseconds here: use 1000 unless
// RC_PARAMS is set (e.g. to reproduce a failure).
const bool kMoreCases = [] {
  setenv("RC_PARAMS", "max_success=1000", /*overwrite=*/0);
  return true;
}();

using Values = std::vector<int64_t>;  // one per variable of the table

// C semantics; nullopt for a division by zero or a value beyond 2^40 (no overflow anywhere).
std::optional<int64_t> rawEval(const RawP& r, const Values& values) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  auto ok = [&](int64_t v) -> std::optional<int64_t> {
    if (v > kLimit || v < -kLimit) return std::nullopt;
    return v;
  };
  switch (r->op) {
    case Op::Const:
      return r->value;
    case Op::Var:
      return values[r->var];
    case Op::IfLess: {
      auto a = rawEval(r->kids[0], values);
      auto b = rawEval(r->kids[1], values);
      if (!a || !b) return std::nullopt;
      return rawEval(r->kids[*a < *b ? 2 : 3], values);
    }
    default:
      break;
  }
  auto a = rawEval(r->kids[0], values);
  auto b = rawEval(r->kids[1], values);
  if (!a || !b) return std::nullopt;
  switch (r->op) {
    case Op::Add:
      return ok(*a + *b);
    case Op::Sub:
      return ok(*a - *b);
    case Op::Mul:
      return ok(*a * *b);
    case Op::Div:
      return *b == 0 ? std::nullopt : ok(*a / *b);
    case Op::Mod:
      return *b == 0 ? std::nullopt : ok(*a % *b);
    case Op::Min:
      return std::min(*a, *b);
    case Op::Max:
      return std::max(*a, *b);
    default:
      return std::nullopt;
  }
}

// Builds through the operators with `vars` standing for the table's variables.
Arith buildWith(const RawP& r, const std::vector<Arith>& vars) {
  switch (r->op) {
    case Op::Const:
      return Arith(r->value);
    case Op::Var:
      return vars[r->var];
    case Op::IfLess:
      return ifLess(buildWith(r->kids[0], vars), buildWith(r->kids[1], vars),
                    buildWith(r->kids[2], vars), buildWith(r->kids[3], vars));
    default:
      break;
  }
  Arith a = buildWith(r->kids[0], vars);
  Arith b = buildWith(r->kids[1], vars);
  switch (r->op) {
    case Op::Add:
      return a + b;
    case Op::Sub:
      return a - b;
    case Op::Mul:
      return a * b;
    case Op::Div:
      return a / b;
    case Op::Mod:
      return a % b;
    case Op::Min:
      return min(a, b);
    case Op::Max:
      return max(a, b);
    default:
      return Arith(0);
  }
}

Arith build(const RawP& r) { return buildWith(r, table().vars); }

// Builds through the operators; nullopt when construction divides by a constant zero (the
// raw tree then divides by zero too, or the division sits in an untaken conditional branch).
std::optional<Arith> tryBuild(const RawP& r) {
  try {
    return build(r);
  } catch (const ArithError& e) {
    RC_ASSERT(std::string(e.what()).find("division by zero") != std::string::npos);
    return std::nullopt;
  }
}

// Draws values inside the ranges, in dependency order.
Values drawValues() {
  int64_t n = *rc::gen::inRange<int64_t>(1, 21);
  int64_t m = *rc::gen::inRange<int64_t>(1, 21);
  int64_t t = *rc::gen::inRange<int64_t>(1, 9);
  int64_t i = *rc::gen::inRange<int64_t>(0, n);
  int64_t k = *rc::gen::inRange<int64_t>(0, m);
  int64_t j = *rc::gen::inRange<int64_t>(0, 4);
  int64_t l = *rc::gen::inRange<int64_t>(0, i + 1);
  return {n, m, t, i, k, j, l};
}

ArithBinding bindingOf(const Values& values) {
  ArithBinding b;
  for (size_t v = 0; v < values.size(); ++v) b[table().vars[v].varName()] = values[v];
  return b;
}

}  // namespace

TEST_CASE("property: simplified expressions evaluate like the raw trees") {
  CHECK(rc::check("evaluate(simplified) == raw evaluation", [] {
    RawP raw = genTree(4);
    auto e = tryBuild(raw);
    if (!e) return;
    for (int draw = 0; draw < 4; ++draw) {
      Values values = drawValues();
      auto want = rawEval(raw, values);
      if (!want) continue;
      RC_ASSERT(tryEvaluate(*e, bindingOf(values)) == want);
    }
  }));
  CHECK(rc::check("substituting every variable by its value folds to the raw value", [] {
    RawP raw = genTree(3);
    auto e = tryBuild(raw);
    if (!e) return;
    Values values = drawValues();
    auto want = rawEval(raw, values);
    if (!want) return;
    ArithSubstitution s;
    for (size_t v = 0; v < values.size(); ++v) s[table().vars[v].varName()] = Arith(values[v]);
    try {
      Arith folded = substitute(*e, s);
      RC_ASSERT(folded.constant() == want);
    } catch (const ArithError& err) {
      // Only a division by zero in a conditional branch the raw tree did not take.
      RC_ASSERT(std::string(err.what()).find("division by zero") != std::string::npos);
    }
  }));
}

TEST_CASE("property: simplification is idempotent and printing is stable") {
  CHECK(rc::check("re-simplifying gives an equal expression", [] {
    auto e = tryBuild(genTree(4));
    if (!e) return;
    Arith again = substitute(*e, {});
    RC_ASSERT(again == *e);
    RC_ASSERT(again.hash() == e->hash());
    RC_ASSERT(again.toString() == e->toString());
  }));
  CHECK(rc::check("building the same tree twice prints the same", [] {
    RawP raw = genTree(4);
    auto e1 = tryBuild(raw);
    if (!e1) return;
    Arith e2 = build(raw);
    RC_ASSERT(e1->toString() == e2.toString());
    RC_ASSERT(e1->toC() == e2.toC());
    RC_ASSERT(*e1 == e2);
  }));
}

TEST_CASE("property: sums of an index's nested quotients and remainders") {
  // x = q*a*b + r with digits (x/a)%b and x%a: c*(a*b)*(x/(a*b)) + c*a*((x/a)%b) + c*(x%a) is
  // c*x for x >= 0, whichever quotient (x/a)/b simplifies to, and any other mix of the terms
  // evaluates like its raw tree and re-simplifies to itself. (For x = 4*i + j, j in [0, 3], the
  // digits simplify on their own, (4*i + j)/4 to i, and the sum is not recombined: it evaluates
  // right but keeps (4*i + j)%8.)
  auto node = [](Op op, RawP a, RawP b) {
    return std::make_shared<Raw>(Raw{op, 0, 0, {std::move(a), std::move(b)}});
  };
  auto constant = [](int64_t v) { return std::make_shared<Raw>(Raw{Op::Const, v, 0, {}}); };
  CHECK(rc::check("the digits of an index recombine, and mixes evaluate like the raw sum", [&] {
    // The index: i, i + j, or 4*i + j (non-negative); a, b in [1, 12].
    const RawP i = std::make_shared<Raw>(Raw{Op::Var, 0, 3, {}});
    const RawP j = std::make_shared<Raw>(Raw{Op::Var, 0, 5, {}});
    const int shape = *rc::gen::inRange(0, 3);
    const RawP x = shape == 0   ? i
                   : shape == 1 ? node(Op::Add, i, j)
                                : node(Op::Add, node(Op::Mul, constant(4), i), j);
    const int64_t a = *rc::gen::inRange<int64_t>(1, 13);
    const int64_t b = *rc::gen::inRange<int64_t>(1, 13);
    const int64_t c = *rc::gen::inRange<int64_t>(1, 17);
    const RawP high = node(Op::Div, x, constant(a * b));
    const RawP nestedHigh = node(Op::Div, node(Op::Div, x, constant(a)), constant(b));
    const RawP middle = node(Op::Mod, node(Op::Div, x, constant(a)), constant(b));
    const RawP low = node(Op::Mod, x, constant(a));
    const RawP whole =
        node(Op::Add,
             node(Op::Add, node(Op::Mul, constant(c * a * b), *rc::gen::element(high, nestedHigh)),
                  node(Op::Mul, constant(c * a), middle)),
             node(Op::Mul, constant(c), low));
    const Arith recombined = build(whole);
    if (shape < 2) RC_ASSERT(recombined == Arith(c) * build(x));
    // A mix: random coefficients in [-3, 3] on the three digits and on x itself.
    RawP mix = constant(0);
    for (const RawP& term : {high, middle, low, x}) {
      mix = node(Op::Add, mix, node(Op::Mul, constant(*rc::gen::inRange<int64_t>(-3, 4)), term));
    }
    const Arith e = build(mix);
    RC_ASSERT(substitute(e, {}) == e);
    for (int draw = 0; draw < 4; ++draw) {
      const Values values = drawValues();
      RC_ASSERT(tryEvaluate(e, bindingOf(values)) == rawEval(mix, values));
      RC_ASSERT(tryEvaluate(recombined, bindingOf(values)) == rawEval(whole, values));
    }
  }));
}

TEST_CASE("property: rearrangements compare and hash equal") {
  CHECK(rc::check("a + b, a*(b + c), (a + b) + c, a*b, min/max", [] {
    auto a = tryBuild(genTree(2));
    auto b = tryBuild(genTree(2));
    auto c = tryBuild(genTree(2));
    if (!a || !b || !c) return;
    RC_LOG() << "a = " << *a << ", b = " << *b << ", c = " << *c << "\n";
    auto same = [](const Arith& p, const Arith& q) {
      RC_ASSERT(p == q);
      RC_ASSERT(p.hash() == q.hash());
      RC_ASSERT(!(p < q) && !(q < p));
    };
    same(*a + *b, *b + *a);
    same(*a * *b, *b * *a);
    same(*a * (*b + *c), *a * *b + *a * *c);
    same((*a + *b) + *c, *a + (*b + *c));
    same((*a * *b) * *c, *a * (*b * *c));
    same(*a - *a, Arith(0));
    same(*a - *b, -(*b - *a));
    same(min(*a, *b), min(*b, *a));
    same(max(*a, *b), max(*b, *a));
    // The structural order is a strict total order.
    bool ab = *a < *b;
    bool ba = *b < *a;
    RC_ASSERT(int(ab) + int(ba) + int(*a == *b) == 1);
  }));
}

TEST_CASE("property: proofs and bounds hold for every value in the ranges") {
  CHECK(rc::check("proofs and bounds are sound", [] {
    RawP raw = genTree(3);
    auto e = tryBuild(raw);
    if (!e) return;
    bool nonNegative = proveNonNegative(*e);
    bool positive = provePositive(*e);
    auto lo = constantLowerBound(*e);
    auto hi = constantUpperBound(*e);
    auto symLo = lowerBound(*e);
    auto symHi = upperBound(*e);
    bool divisibleBy3 = proveDivides(Arith(3), *e);
    for (int draw = 0; draw < 4; ++draw) {
      Values values = drawValues();
      if (!rawEval(raw, values)) continue;
      ArithBinding binding = bindingOf(values);
      auto value = tryEvaluate(*e, binding);
      RC_ASSERT(value.has_value());
      if (nonNegative) RC_ASSERT(*value >= 0);
      if (positive) RC_ASSERT(*value > 0);
      if (lo) RC_ASSERT(*lo <= *value);
      if (hi) RC_ASSERT(*value <= *hi);
      if (divisibleBy3) RC_ASSERT(*value % 3 == 0);
      if (symLo) {
        if (auto b = tryEvaluate(*symLo, binding)) RC_ASSERT(*b <= *value);
      }
      if (symHi) {
        if (auto b = tryEvaluate(*symHi, binding)) RC_ASSERT(*value <= *b);
      }
    }
  }));
  CHECK(rc::check("proveLess and proveLessEqual are sound", [] {
    RawP ra = genTree(2);
    RawP rb = genTree(2);
    auto a = tryBuild(ra);
    auto b = tryBuild(rb);
    if (!a || !b) return;
    bool less = proveLess(*a, *b);
    bool lessEqual = proveLessEqual(*a, *b);
    for (int draw = 0; draw < 4; ++draw) {
      Values values = drawValues();
      auto va = rawEval(ra, values);
      auto vb = rawEval(rb, values);
      if (!va || !vb) continue;
      if (less) RC_ASSERT(*va < *vb);
      if (lessEqual) RC_ASSERT(*va <= *vb);
    }
  }));
}

// sumOfProducts (addresses in codegen/views.cpp) must give exactly what the operators give step
// by step: the same canonical expression, the same weft text and C.
TEST_CASE("property: sumOfProducts is the sum built operation by operation") {
  CHECK(rc::check("start + a*b + c*d, canonicalised once", [] {
    auto s = tryBuild(genTree(2));
    auto a = tryBuild(genTree(2));
    auto b = tryBuild(genTree(2));
    auto c = tryBuild(genTree(2));
    auto d = tryBuild(genTree(2));
    if (!s || !a || !b || !c || !d) return;
    Arith stepByStep = *s + *a * *b + *c * *d;
    Arith once = sumOfProducts(*s, {{*a, *b}, {*c, *d}});
    RC_ASSERT(once == stepByStep);
    RC_ASSERT(once.toString() == stepByStep.toString());
    RC_ASSERT(once.toC() == stepByStep.toC());
  }));
}

// A canonical sum plus or minus a constant keeps its terms (ir/arith.cpp, sumPlusConstant):
// that must be exactly what the full path gives, the whole sum refolded. sumOfProducts with a
// non-zero start takes the full path (one polynomial, canonicalised once).
TEST_CASE("property: adding a constant to a sum is the sum refolded with that constant") {
  CHECK(rc::check("e + c, c + e and e - c against the refolded polynomial", [] {
    auto e = tryBuild(genTree(4));
    if (!e) return;
    const int64_t drawn = *rc::gen::inRange<int64_t>(-40, 40);
    const int64_t c = drawn >= 0 ? drawn + 1 : drawn;  // never 0 (a + 0 returns a itself)
    const Arith one(1);
    Arith plus = *e + Arith(c);
    Arith plusReference = sumOfProducts(Arith(c), {{*e, one}});
    RC_ASSERT(plus == plusReference);
    RC_ASSERT(plus.toString() == plusReference.toString());
    RC_ASSERT(plus.toC() == plusReference.toC());
    RC_ASSERT((Arith(c) + *e).toString() == plusReference.toString());
    Arith minus = *e - Arith(c);
    Arith minusReference = sumOfProducts(Arith(-c), {{*e, one}});
    RC_ASSERT(minus == minusReference);
    RC_ASSERT(minus.toString() == minusReference.toString());
    RC_ASSERT(minus.toC() == minusReference.toC());
  }));
}

// Divisions are memoised by their operands' structure and ranges (ir/arith_simplify.cpp): an
// equal division built from separately built operands must give what the first one gave.
TEST_CASE("property: a division built again gives the same expression") {
  CHECK(rc::check("(x / y, x % y) twice from separately built trees", [] {
    RawP x = genTree(3);
    RawP y = genTree(2);
    auto x1 = tryBuild(x);
    auto y1 = tryBuild(y);
    if (!x1 || !y1 || y1->constant() == 0) return;
    std::optional<Arith> q1, r1;
    try {
      q1 = *x1 / *y1;
      r1 = *x1 % *y1;
    } catch (const ArithError&) {
      return;
    }
    Arith x2 = build(x);
    Arith y2 = build(y);
    RC_ASSERT((x2 / y2).toString() == q1->toString());
    RC_ASSERT((x2 % y2).toString() == r1->toString());
    RC_ASSERT((x2 / y2).toC() == q1->toC());
  }));
}

// The refolding of / and % in sums skips rebuilding a sum that a division leaves as it is
// (ir/arith_simplify.cpp, substituteDiv; issue 6): every expression must be exactly what the
// reference path (which rebuilt it each time) gives, each built with every memo emptied — for
// address-like sums, the same sum plus a constant (unrolled iterations), and variables of the
// same names with other ranges (i in [0, 3], j in [0, n - 1], l in [0, j]).
namespace {
struct ReferencePaths {
  ReferencePaths() { setArithReferencePaths(true); }
  ~ReferencePaths() { setArithReferencePaths(false); }
};
std::optional<std::string> printedCold(const RawP& r, const std::vector<Arith>& vars) {
  clearArithMemos();
  try {
    Arith e = buildWith(r, vars);
    return e.toString() + " | " + e.toC();
  } catch (const ArithError&) {
    return std::nullopt;
  }
}
}  // namespace

TEST_CASE("property: refolding sums gives what the reference path gives") {
  const Arith n = Arith::size("n");
  const Arith m = Arith::size("m");
  const Arith t = Arith::var("t", VarKind::Tuning, 1, Arith(8));
  const Arith i = Arith::var("i", VarKind::LoopIndex, 0, Arith(3));
  const Arith k = Arith::var("k", VarKind::ThreadIndex, 0, m - 1);
  const Arith j = Arith::var("j", VarKind::LoopIndex, 0, n - 1);
  const Arith l = Arith::var("l", VarKind::LoopIndex, 0, j);
  const std::vector<Arith> otherRanges = {n, m, t, i, k, j, l};
  CHECK(rc::check("start + a*b + c*d + e (and + a constant), fast and reference paths", [&] {
    auto add = [](RawP x, RawP y) { return std::make_shared<Raw>(Raw{Op::Add, 0, 0, {x, y}}); };
    auto mul = [](RawP x, RawP y) { return std::make_shared<Raw>(Raw{Op::Mul, 0, 0, {x, y}}); };
    const RawP sum = add(add(mul(genTree(3), genTree(1)), mul(genTree(3), genTree(1))),
                         genTree(4));
    const int64_t shift = *rc::gen::inRange<int64_t>(-40, 41);
    const RawP shifted = add(sum, std::make_shared<Raw>(Raw{Op::Const, shift, 0, {}}));
    for (const RawP& x : {sum, shifted}) {
      for (const std::vector<Arith>* vars : {&table().vars, &otherRanges}) {
        std::optional<std::string> reference;
        {
          ReferencePaths on;
          reference = printedCold(x, *vars);
        }
        std::optional<std::string> fast = printedCold(x, *vars);
        RC_ASSERT(fast.has_value() == reference.has_value());
        if (fast) RC_ASSERT(*fast == *reference);
      }
    }
  }));
}
