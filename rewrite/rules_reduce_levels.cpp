// Rules on the nested levels of a reduction over a flattened array (reduce(z, f, join(join(w)))
// or a zip of such arrays with the same nested lengths, as Listing 3's window [K][K][C] after
// vectorize-block-accumulators). They let a strategy choose the order of the window's loops and
// unroll the innermost one, so that code generation emits, for a convolution, the loop over
// channels outside the unrolled taps of a window row: the σ pixels' input values are then loaded
// once and used by the K taps of the row (LLVM merges the unrolled loads of one address), σ + K
// - 1 loads for K·σ multiply-adds instead of one load per multiply-add, the order of oneDNN's
// direct convolution (its kw loop innermost, jit_avx512_common_conv_kernel).
//
//  reduce-swap-inner-levels  reduce(z, f, zip(join^d(a1), .., join^d(am)))
//                            => reduce(z, f, zip(join^d(T(a1)), .., join^d(T(am))))
//                            with T = map^(d-1)(transpose) (the two innermost of the d + 1 nested
//                            levels exchanged; also without zip) when f adds to its accumulator a
//                            term that does not read it: f = (acc, p) -> acc + t(p), or, for an
//                            array of accumulators, (accs, p) -> map(q -> q._0 + t(q._1, p),
//                            zip(accs, x(p))). The sum's terms are reordered: exact for int,
//                            re-associated (not bit-equal) for float, as every partial reduction.
//  reduce-nest-inner-level   reduce(z, f, zip(join^d(a1), .., join^d(am)))
//                            => reduce(z, (acc, rows) -> join(reduce(acc, f, zip(rows._0, ..,
//                            rows._m-1))), zip(join^(d-1)(a1), .., join^(d-1)(am)))   [z an
//                            array, so that the inner reduce's [T]1 joins back to T; also
//                            without zip] — folding a concatenation row by row: the same
//                            operations in the same order, exact. A strategy then unrolls the
//                            inner reduce (reduce-to-reduceseq-unroll).
//
// Both are checked against the interpreter on random programs by
// tests/rewrite/property_rules_reduce_levels.cpp.
#include <optional>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// The components of a reduce's data peeled of the joins they all share: xs = join^d(a) or
// zip(join^d(a1), .., join^d(am)) with every a_i of the same lengths at its d + 1 outer levels.
struct JoinedLevels {
  std::vector<Expr> components;  // a1 .. am
  bool zipped = false;
  int depth = 0;  // d
};

// The length of each of the `levels` outer levels of `t` (fewer when t is not that deep).
std::vector<Arith> outerLengths(Type t, int levels) {
  std::vector<Arith> lengths;
  for (int i = 0; i < levels && t.isArray(); ++i) {
    lengths.push_back(t.arrayLength());
    t = t.arrayElement();
  }
  return lengths;
}

std::optional<JoinedLevels> matchJoinedLevels(const Expr& xs, const TypeLookup& typeOf) {
  JoinedLevels levels;
  levels.zipped = xs.isPrim(Op::Zip);
  levels.components = levels.zipped ? xs.args() : std::vector<Expr>{xs};
  while (true) {
    bool allJoins = true;
    for (const Expr& c : levels.components) allJoins = allJoins && c.isPrim(Op::Join);
    if (!allJoins) break;
    std::vector<Expr> inner;
    for (const Expr& c : levels.components) inner.push_back(c.args()[0]);
    // The nested lengths must agree level by level so that the zip pairs stay aligned.
    const int levelsNeeded = levels.depth + 2;
    const std::vector<Arith> first = outerLengths(typeOf(inner[0]), levelsNeeded);
    if (static_cast<int>(first.size()) < levelsNeeded) break;
    bool agree = true;
    for (const Expr& c : inner) agree = agree && outerLengths(typeOf(c), levelsNeeded) == first;
    if (!agree) break;
    levels.components = std::move(inner);
    ++levels.depth;
  }
  if (levels.depth == 0) return std::nullopt;
  return levels;
}

Expr rebuildData(const JoinedLevels& levels, int depth,
                 const std::function<Expr(const Expr&)>& component) {
  std::vector<Expr> parts;
  for (const Expr& c : levels.components) parts.push_back(joinDeep(depth, component(c)));
  return levels.zipped ? zip(std::move(parts)) : parts[0];
}

// True when every use of `q` in `e` is q._index.
bool readsOnlyComponent(const Expr& e, const Expr& q, int64_t index) {
  if (isGetOf(e, index, q)) return true;
  if (isParamNode(e, q)) return false;
  if (e.isLambda()) return readsOnlyComponent(e.body(), q, index);
  if (!e.isPrim()) return true;
  for (const Expr& f : e.funs()) {
    if (!readsOnlyComponent(f, q, index)) return false;
  }
  for (const Expr& a : e.args()) {
    if (!readsOnlyComponent(a, q, index)) return false;
  }
  return true;
}

// acc + t or t + acc with t not reading acc; returns t.
std::optional<Expr> addedTerm(const Expr& body, const Expr& acc) {
  if (!body.isPrim(Op::Add)) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Expr& accSide = body.args()[static_cast<size_t>(side)];
    const Expr& term = body.args()[static_cast<size_t>(1 - side)];
    if (isParamNode(accSide, acc) && !mentionsParam(term, acc)) return term;
  }
  return std::nullopt;
}

// f = (acc, p) -> acc + t(p), or (accs, p) -> map(q -> q._0 + t(q._1, p), zip(accs, x(p))):
// each accumulator grows by a term that does not read it, so the order of the steps changes
// only how the sum associates.
bool isAdditiveUpdate(const Expr& f) {
  if (!f.isLambda() || f.params().size() != 2) return false;
  const Expr& acc = f.params()[0];
  const Expr& body = f.body();
  if (addedTerm(body, acc)) return true;
  if (!body.isPrim(Op::Map) || !isUnaryLambda(body.funs()[0])) return false;
  const Expr& pairs = body.args()[0];
  if (!pairs.isPrim(Op::Zip) || pairs.args().size() != 2 || !isParamNode(pairs.args()[0], acc) ||
      mentionsParam(pairs.args()[1], acc) || mentionsParam(body.funs()[0], acc)) {
    return false;
  }
  const Expr& q = body.funs()[0].params()[0];
  const Expr& element = body.funs()[0].body();
  if (!element.isPrim(Op::Add)) return false;
  for (int side = 0; side < 2; ++side) {
    const Expr& accSide = element.args()[static_cast<size_t>(side)];
    const Expr& term = element.args()[static_cast<size_t>(1 - side)];
    if (isGetOf(accSide, 0, q) && readsOnlyComponent(term, q, 1)) return true;
  }
  return false;
}

std::optional<Expr> reduceSwapInnerLevels(const RuleApplication& a) {
  if (!a.node.isPrim(Op::Reduce) || !isAdditiveUpdate(a.node.funs()[0])) return std::nullopt;
  std::optional<JoinedLevels> levels = matchJoinedLevels(a.node.args()[1], a.typeOf);
  if (!levels) return std::nullopt;
  const int depth = levels->depth;
  // map^(depth-1)(transpose): the levels depth - 1 and depth (from 0) exchanged.
  Expr data = rebuildData(*levels, depth, [&](const Expr& c) {
    return mapDeep(depth - 1, [](Expr x) { return transpose(std::move(x)); }, c);
  });
  return reduce(a.node.args()[0], a.node.funs()[0], std::move(data));
}

std::optional<Expr> reduceNestInnerLevel(const RuleApplication& a) {
  if (!a.node.isPrim(Op::Reduce) || !a.typeOf(a.node.args()[0]).isArray()) return std::nullopt;
  std::optional<JoinedLevels> levels = matchJoinedLevels(a.node.args()[1], a.typeOf);
  if (!levels) return std::nullopt;
  const Expr& f = a.node.funs()[0];
  Expr outerData = rebuildData(*levels, levels->depth - 1, [](const Expr& c) { return c; });
  Expr step = lam2("acc", "rows", [&](Expr acc, Expr rows) {
    Expr row = rows;
    if (levels->zipped) {
      std::vector<Expr> parts;
      for (size_t i = 0; i < levels->components.size(); ++i) {
        parts.push_back(get(Arith(static_cast<int64_t>(i)), rows));
      }
      row = zip(std::move(parts));
    }
    return join(reduce(std::move(acc), f, std::move(row)));
  });
  return reduce(a.node.args()[0], step, std::move(outerData));
}

}  // namespace

void addReduceLevelRules(std::vector<Rule>& rules) {
  rules.push_back({"reduce-swap-inner-levels",
                   "reduce(z, f, zip(join^d(a1), .., join^d(am))) => reduce(z, f, "
                   "zip(join^d(map^(d-1)(transpose)(a1)), ..))   [the nested levels' lengths "
                   "agree; f adds a term that does not read the accumulator: (acc, p) -> acc + "
                   "t(p) or (accs, p) -> map(q -> q._0 + t(q._1, p), zip(accs, x(p))); the sum "
                   "re-associated]",
                   RuleFamily::Reduction,
                   {},
                   reduceSwapInnerLevels});
  rules.push_back({"reduce-nest-inner-level",
                   "reduce(z, f, zip(join^d(a1), .., join^d(am))) => reduce(z, (acc, rows) -> "
                   "join(reduce(acc, f, zip(rows._0, .., rows._m-1))), zip(join^(d-1)(a1), ..))"
                   "   [the nested levels' lengths agree; z an array]",
                   RuleFamily::Reduction,
                   {},
                   reduceNestInnerLevel});
}

}  // namespace weft::rewrite
