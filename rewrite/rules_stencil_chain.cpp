// The stencil-chain rules: what Canny's chain (examples/pipelines/canny.weft) needs beyond the
// stencil-fusion rules of rules_stencil_fusion.cpp to be fused: a stage whose value several
// later stages read (blurred read by gx and gy, gx and gy by magnitude and direction) is
// recomputed per reader, two stencils over the same windows become one stencil giving both
// results (horizontal fusion: gx and gy as one Sobel pass whose pair feeds the pointwise
// magnitude or direction), and a pointwise stage is merged into a stencil stage that gives
// one-element arrays per pixel (the double threshold into the non-maximum suppression).
//
// A pixel stage is written here S(f, x), in one of two forms (f never mentions the row):
//   flat    map(row -> map(f, row), x)                             (map2D(f, x))
//   boxed   map(row -> join(row), map(row -> map(f, row), x))      f gives one-element arrays
//           or map(row -> join(map(f, row)), x)                    (the same, map-fused)
// Rewritten stages are built in the first form of each.
//
//  let-inline-recompute       let(x -> b, e) => b[x := e]   (x used twice or more: each use gets
//                             its own copy of e, with its own bound params; only a let at the
//                             top of the definition, a pipeline's stage: lets inside a stage's
//                             function name values its formula reads several times)
//  horizontal-stencil-fusion  map(r -> map(h, zip(r._0, r._1)), zip(S(f, W), S(g, W)))
//                               => S(w -> map(h, zip(f(w), g(w))), W)    (both boxed)
//                               => S(w -> h((f(w), g(w))), W)             (both flat)
//                             W the same array for both (alpha-equivalence: two copies of a
//                             recomputed stage are the same)
//  boxed-stage-fusion         S(g, S_boxed(f, x)) => S_boxed(v -> map(g, f(v)), x)   (S flat)
//                                                 => S_boxed(v -> join(map(g, f(v))), x) (boxed)
//
//  let-tuple-fusion           let(a -> let(b -> B, map(g, X)), map(f, X))
//                               => let(t -> B[a := P0(t), b := P1(t)], map(pair(f, g), X))
//                             two stages that map the same array X (magnitude and direction
//                             over zip2D(gx, gy)) as one stage giving pairs; pair(f, g) is
//                             r -> map(pair(f', g'), Y(r)) when f = r -> map(f', Y(r)) and g =
//                             r -> map(g', Y(r)) over the same Y(r) (pairs per pixel, not pairs
//                             of rows), else x -> (f(x), g(x)); Pk maps p -> p._k over as many
//                             levels as were paired (a fresh copy per use); g must not read a
//
// Why they hold (the interpreter is the reference, ir/interp.cpp): weft expressions have no
// effects, so a let-bound value may be substituted for its param any number of times (only
// the work is repeated); copies get fresh bound params so that every binder stays unique, as
// the engine and code generation expect. Element (i, j) of zip2D(S(f, W), S(g, W)) is the pair
// of f(W[i][j]) and g(W[i][j]), so h of it is h of the pair computed from the one window; in
// the boxed form f(w), g(w) are one-element arrays and zip, then map(h), keep it so. Element
// (i, j) of a boxed stage is f(x[i][j])[0], so g of it is the only element of map(g, f(x[i][j])).
// Element i of map(pair(f, g), X) is (f(X[i]), g(X[i])) (or, paired deeper, the array of pairs
// of f's and g's elements over the same Y), so its components are map(f, X) and map(g, X).
// Each rule is checked against the interpreter on random programs by
// tests/rewrite/property_rules_stencil_chain.cpp.
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// ---- pixel stages ---------------------------------------------------------------------------

struct PixelwiseStage {
  Expr element;  // f
  Expr source;   // x
  bool boxed = false;
};

// f when `rowFunction` is row -> map(f, row) with f not mentioning row.
std::optional<Expr> elementOfRowMap(const Expr& rowFunction) {
  if (!isUnaryLambda(rowFunction)) return std::nullopt;
  const Expr& body = rowFunction.body();
  const Expr& row = rowFunction.params()[0];
  if (!body.isPrim(Op::Map) || !isParamNode(body.args()[0], row)) return std::nullopt;
  if (mentionsParam(body.funs()[0], row)) return std::nullopt;
  return body.funs()[0];
}

bool hasLengthOne(const Type& t) {
  return t.isArray() && t.arrayLength().constant() == std::optional<int64_t>(1);
}

// The stage `node` is, in one of the forms of the file comment. A boxed stage's rows must be
// arrays of one-element arrays (otherwise row -> join(row) reshapes).
std::optional<PixelwiseStage> asPixelwise(const Expr& node, const TypeLookup& typeOf) {
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& rowFunction = node.funs()[0];
  if (std::optional<Expr> f = elementOfRowMap(rowFunction)) {
    return PixelwiseStage{*f, node.args()[0], false};
  }
  const Expr& body = rowFunction.body();
  const Expr& row = rowFunction.params()[0];
  if (!body.isPrim(Op::Join)) return std::nullopt;
  const Expr& joined = body.args()[0];
  if (isParamNode(joined, row)) {
    const Expr& rows = node.args()[0];
    if (!rows.isPrim(Op::Map)) return std::nullopt;
    std::optional<Expr> f = elementOfRowMap(rows.funs()[0]);
    const Type rowsType = typeOf(rows);
    if (!f || !rowsType.isArray() || !rowsType.arrayElement().isArray() ||
        !hasLengthOne(rowsType.arrayElement().arrayElement())) {
      return std::nullopt;
    }
    return PixelwiseStage{*f, rows.args()[0], true};
  }
  if (!joined.isPrim(Op::Map) || !isParamNode(joined.args()[0], row)) return std::nullopt;
  if (mentionsParam(joined.funs()[0], row)) return std::nullopt;
  const Type joinedType = typeOf(joined);
  if (!joinedType.isArray() || !hasLengthOne(joinedType.arrayElement())) return std::nullopt;
  return PixelwiseStage{joined.funs()[0], node.args()[0], true};
}

Expr pixelwise(const Expr& element, Expr source, bool boxed) {
  Expr flat =
      map(lam("row", [&](Expr row) { return map(element, std::move(row)); }), std::move(source));
  if (!boxed) return flat;
  return map(lam("row", [](Expr row) { return join(std::move(row)); }), std::move(flat));
}

// ---- fresh copies and substitution ----------------------------------------------------------

// `e` with each occurrence of `param` replaced by its own fresh copy of `value`.
Expr substituteCopies(const Expr& e, const Expr& param, const Expr& value) {
  if (isParamNode(e, param)) return withFreshBinders(value);
  if (e.isLambda()) return e.withBody(substituteCopies(e.body(), param, value));
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) funs.push_back(substituteCopies(f, param, value));
  for (const Expr& x : e.args()) args.push_back(substituteCopies(x, param, value));
  return e.withChildren(e.nats(), funs, args);
}

// ---- the rules ------------------------------------------------------------------------------

// let(x -> b, e) => b[x := e], a fresh copy of e per use (x used at least twice).
std::optional<Expr> letInlineRecompute(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Let) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  if (!isTopLevelStage(a)) return std::nullopt;
  const Expr& binder = node.funs()[0];
  if (paramUses(binder.body(), binder.params()[0]) < 2) return std::nullopt;
  return substituteCopies(binder.body(), binder.params()[0], node.args()[0]);
}

// map(r -> map(h, zip(r._0, r._1)), zip(S(f, W), S(g, W))) => S(w -> .., W)
std::optional<Expr> horizontalStencilFusion(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& stages = node.args()[0].args();
  if (stages.size() != 2) return std::nullopt;
  const Expr& rowFunction = node.funs()[0];
  if (!isUnaryLambda(rowFunction)) return std::nullopt;
  const Expr& row = rowFunction.params()[0];
  const Expr& rowBody = rowFunction.body();
  if (!rowBody.isPrim(Op::Map) || !rowBody.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& halves = rowBody.args()[0].args();
  if (halves.size() != 2) return std::nullopt;
  for (size_t i = 0; i < 2; ++i) {
    const Expr& half = halves[i];
    if (!half.isPrim(Op::Get) || !isParamNode(half.args()[0], row) ||
        half.nats()[0].constant() != std::optional<int64_t>(static_cast<int64_t>(i))) {
      return std::nullopt;
    }
  }
  const Expr h = rowBody.funs()[0];
  if (mentionsParam(h, row)) return std::nullopt;
  std::optional<PixelwiseStage> first = asPixelwise(stages[0], a.typeOf);
  std::optional<PixelwiseStage> second = asPixelwise(stages[1], a.typeOf);
  if (!first || !second || first->boxed != second->boxed) return std::nullopt;
  if (!(first->source == second->source)) return std::nullopt;
  const Expr f = first->element, g = second->element;
  const bool boxed = first->boxed;
  Expr both = lam("window", [&](Expr w) {
    if (boxed) return map(h, zip(call(f, w), call(g, w)));
    return call(h, tuple(call(f, w), call(g, w)));
  });
  return pixelwise(both, first->source, boxed);
}

// S(g, S_boxed(f, x)) => S_boxed(v -> map(g, f(v)), x)  (or join(map(g, f(v))) when S is boxed)
std::optional<Expr> boxedStageFusion(const RuleApplication& a) {
  std::optional<PixelwiseStage> outer = asPixelwise(a.node, a.typeOf);
  if (!outer) return std::nullopt;
  std::optional<PixelwiseStage> inner = asPixelwise(outer->source, a.typeOf);
  if (!inner || !inner->boxed) return std::nullopt;
  const Expr f = inner->element, g = outer->element;
  const bool outerBoxed = outer->boxed;
  Expr composed = lam("v", [&](Expr v) {
    Expr mapped = map(g, call(f, v));
    return outerBoxed ? join(std::move(mapped)) : mapped;
  });
  return pixelwise(composed, inner->source, true);
}

// map(f, X) and map(g, X) (the same X) as one map giving pairs, paired as deep as both
// functions map the same array (see the top of the file); `levels` counts the map levels
// paired. nullopt when the two are not maps over the same array.
std::optional<Expr> pairedMaps(const Expr& p, const Expr& q, int& levels) {
  if (!p.isPrim(Op::Map) || !q.isPrim(Op::Map) || !(p.args()[0] == q.args()[0])) {
    return std::nullopt;
  }
  const Expr& f = p.funs()[0];
  const Expr& g = q.funs()[0];
  if (!isUnaryLambda(f) || !isUnaryLambda(g)) return std::nullopt;
  const Expr& x = f.params()[0];
  const Expr gBody = substituteParams(g.body(), {{g.params()[0], x}});
  int inner = 0;
  std::optional<Expr> deeper = pairedMaps(f.body(), gBody, inner);
  levels += 1 + (deeper ? inner : 0);
  return map(Expr::lambda({x}, deeper ? std::move(*deeper) : tuple(f.body(), gBody)), p.args()[0]);
}

// Component k of every pair `levels` map levels down in t.
Expr pairComponent(int64_t k, int levels, const Expr& t) {
  if (levels == 0) return get(Arith(k), t);
  return map(lam("p", [&](Expr p) { return pairComponent(k, levels - 1, p); }), t);
}

// let(a -> let(b -> B, map(g, X)), map(f, X))
//   => let(t -> B[a := P0(t), b := P1(t)], map(pair(f, g), X))
std::optional<Expr> letTupleFusion(const RuleApplication& application) {
  const Expr& outer = application.node;
  if (!outer.isPrim(Op::Let) || !isUnaryLambda(outer.funs()[0])) return std::nullopt;
  const Expr& aBinder = outer.funs()[0];
  const Expr& inner = aBinder.body();
  if (!inner.isPrim(Op::Let) || !isUnaryLambda(inner.funs()[0])) return std::nullopt;
  const Expr& bBinder = inner.funs()[0];
  const Expr& a = aBinder.params()[0];
  const Expr& b = bBinder.params()[0];
  const Expr& aValue = outer.args()[0];
  const Expr& bValue = inner.args()[0];
  if (mentionsParam(bValue, a)) return std::nullopt;
  int levels = 0;
  std::optional<Expr> paired = pairedMaps(aValue, bValue, levels);
  if (!paired) return std::nullopt;
  // Named pairs: pipeline-fused-private-chain-pairs finds the let by its binder's name.
  const Expr t = Expr::param("pairs");
  Expr body = substituteCopies(bBinder.body(), a, pairComponent(0, levels, t));
  body = substituteCopies(body, b, pairComponent(1, levels, t));
  return let(Expr::lambda({t}, std::move(body)), std::move(*paired));
}

}  // namespace

void addStencilChainRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"let-inline-recompute",
                       "let(x -> b, e) => b[x := e]   [a top-level let (a stage), x used twice or "
                       "more: e recomputed per use, each copy with fresh bound params]",
                       RuleFamily::Fusion,
                       {},
                       letInlineRecompute});
  rules.push_back(Rule{"horizontal-stencil-fusion",
                       "map2D(h) ∘ zip2D(S(f, W), S(g, W)) => S(w -> h(f(w), g(w)), W)   [two "
                       "stages over the same array as one; also map(join) ∘ map2D with f, g "
                       "giving [T]1: map(h, zip(f(w), g(w)))]",
                       RuleFamily::Fusion,
                       {},
                       horizontalStencilFusion});
  rules.push_back(Rule{"let-tuple-fusion",
                       "let(a -> let(b -> B, map(g, X)), map(f, X)) => let(t -> B[a := P0(t), b "
                       ":= P1(t)], map(pair(f, g), X))   [two stages over the same array as one "
                       "giving pairs, paired per element as deep as both map the same array; g "
                       "does not read a]",
                       RuleFamily::Fusion,
                       {},
                       letTupleFusion});
  rules.push_back(Rule{"boxed-stage-fusion",
                       "map2D(g) ∘ map(join) ∘ map2D(f) => map(join) ∘ map2D(v -> map(g, f(v)))   "
                       "[f giving [T]1; also g boxed: join(map(g, f(v)))]",
                       RuleFamily::Fusion,
                       {},
                       boxedStageFusion});
}

}  // namespace weft::rewrite
