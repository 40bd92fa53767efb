// Small predicates and builders on expressions that the rule files share (which param a node is,
// whether a subtree mentions a param (how often: ir's paramUses), one-parameter lambdas applied
// without computing their argument twice (call), whether a rule applies at a top-level stage,
// the params free in a subtree, an element-by-element copy of an array, a node replaced by
// identity; the 2D forms matched and built: a map over rows, a per-pixel stage in its
// plain and joined forms, slide2D's and pad2D's expansions; overlapped tiling of 2D windows with
// its theta1 x theta2 factors; a function mapped or a join applied several levels deep; the
// Listing 3 convolution's map2D of windows against kernels). Only rules_*.cpp include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ir/arith.h"
#include "ir/builders.h"
#include "ir/expr.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

// True when `e` mentions `param` anywhere (bound params are distinct: they have their own ids).
inline bool mentionsParam(const Expr& e, const Expr& param) { return paramUses(e, param) > 0; }

// True when `e` is `param` itself.
inline bool isParamNode(const Expr& e, const Expr& param) {
  return e.isParam() && e.paramId() == param.paramId();
}

// True when `e` is param._index.
inline bool isGetOf(const Expr& e, int64_t index, const Expr& param) {
  return e.isPrim(Op::Get) && e.nats()[0].constant() == index && isParamNode(e.args()[0], param);
}

inline bool isUnaryLambda(const Expr& f) { return f.isLambda() && f.params().size() == 1; }

// map applied `depth` times: f itself at depth 0, map(x -> f(x)) at 1, map(map(f)) at 2, ...
inline Expr mapDeep(int depth, const std::function<Expr(Expr)>& f, Expr x) {
  if (depth == 0) return f(std::move(x));
  return map(lam("level", [&](Expr level) { return mapDeep(depth - 1, f, std::move(level)); }),
             std::move(x));
}

// The zero of a scalar int or float type (a sum's identity), or nothing for other types.
inline std::optional<Expr> zeroOfScalar(const Type& t) {
  if (!t.isScalar()) return std::nullopt;
  if (t.scalarKind() == ScalarKind::Float) return lit(0.0f);
  if (t.scalarKind() == ScalarKind::Int) return lit(0);
  return std::nullopt;
}

// x joined `depth` times.
inline Expr joinDeep(int depth, Expr x) {
  for (int i = 0; i < depth; ++i) x = join(std::move(x));
  return x;
}

// `e` with every lambda's params replaced by new ones (same names and types); user functions
// are declared outside and left alone.
inline Expr withFreshBinders(const Expr& e) {
  if (e.isLambda()) {
    std::vector<Expr> params;
    std::vector<std::pair<Expr, Expr>> renaming;
    for (const Expr& p : e.params()) {
      Expr fresh = Expr::param(p.paramName(), p.paramType());
      renaming.push_back({p, fresh});
      params.push_back(fresh);
    }
    return Expr::lambda(params, withFreshBinders(substituteParams(e.body(), renaming)));
  }
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) funs.push_back(withFreshBinders(f));
  for (const Expr& x : e.args()) args.push_back(withFreshBinders(x));
  return e.withChildren(e.nats(), funs, args);
}

// f(x): f's body with its param replaced by x when x is a param or f reads it at most once
// (nothing is computed twice), else let(f, x); a user function becomes a call.
inline Expr call(const Expr& f, const Expr& x) {
  if (!isUnaryLambda(f)) return apply(f, {x});
  if (x.isParam() || paramUses(f.body(), f.params()[0]) <= 1) {
    return substituteParams(f.body(), {{f.params()[0], x}});
  }
  return let(f, x);
}

// True when the rule is applied at the definition's body or at the body of a let at the top
// (a stage): every ancestor is a top-level let whose function leads to the node, or that
// function's lambda.
// The vector width a vectorising rule was given as its factor "v": a number in {2, 3, 4, 8,
// 16} (OpenCL's widths; vector types need constant widths), else none, and the rule does not
// apply.
inline std::optional<int64_t> givenVectorWidth(const RuleApplication& a) {
  std::optional<int64_t> width;
  for (const auto& [name, value] : a.arguments) {
    if (name == "v") width = value.constant();
  }
  if (!width) return std::nullopt;
  for (int64_t allowed : {2, 3, 4, 8, 16}) {
    if (*width == allowed) return width;
  }
  return std::nullopt;
}

// Whether asVector(width, xs) of an array of `length` elements can hold its vectors: not when the
// length is a constant `width` does not divide (asVector's condition is false), nor when it is
// below `width` whatever its variables (a partial sum's 7/omega results), where no point of the
// space would satisfy the condition.
inline bool mayHoldVectors(const Arith& length, int64_t width) {
  if (std::optional<int64_t> n = length.constant()) return *n % width == 0;
  return !proveLess(length, Arith(width));
}

inline bool isTopLevelStage(const RuleApplication& a) {
  for (size_t i = 0; i < a.ancestors.size(); ++i) {
    const Expr& ancestor = a.ancestors[i];
    const Expr& child = i + 1 < a.ancestors.size() ? a.ancestors[i + 1] : a.node;
    bool letFunction = ancestor.isPrim(Op::Let) && ancestor.funs()[0].node() == child.node();
    bool letLambda = ancestor.isLambda() && i > 0 && a.ancestors[i - 1].isPrim(Op::Let);
    if (!letFunction && !letLambda) return false;
  }
  return true;
}

// Adds to `free` (once each, in first-occurrence order) the ids of the params free in `e`: not
// bound by a lambda inside e nor listed in `bound`.
inline void collectFreeParams(const Expr& e, std::vector<uint64_t>& bound,
                              std::vector<uint64_t>& free) {
  if (e.isParam()) {
    if (std::find(bound.begin(), bound.end(), e.paramId()) == bound.end() &&
        std::find(free.begin(), free.end(), e.paramId()) == free.end()) {
      free.push_back(e.paramId());
    }
    return;
  }
  if (e.isLambda()) {
    size_t mark = bound.size();
    for (const Expr& p : e.params()) bound.push_back(p.paramId());
    collectFreeParams(e.body(), bound, free);
    bound.resize(mark);
    return;
  }
  if (!e.isPrim()) return;
  for (const Expr& f : e.funs()) collectFreeParams(f, bound, free);
  for (const Expr& arg : e.args()) collectFreeParams(arg, bound, free);
}

// The ids of the params free in `e` (those bound inside e excluded), in first-occurrence order.
// Definition parameters count as free: they are not bound by a lambda of e.
inline std::vector<uint64_t> freeParamsOf(const Expr& e) {
  std::vector<uint64_t> bound, free;
  collectFreeParams(e, bound, free);
  return free;
}

// slide2D's expansion (ir/builders.h):
//   map(w -> transpose(w), S1(size1, step1, map(row -> S2(size2, step2, row), x)))
// with S1 and S2 each slide or slideStrict.
struct Slide2DExpansion {
  Op outerOp, innerOp;
  Arith size1, step1, size2, step2;
  Expr x;
};
inline std::optional<Slide2DExpansion> matchSlide2D(const Expr& node) {
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& windowFun = node.funs()[0];
  if (!isUnaryLambda(windowFun) || !windowFun.body().isPrim(Op::Transpose) ||
      !isParamNode(windowFun.body().args()[0], windowFun.params()[0])) {
    return std::nullopt;
  }
  const Expr& slid = node.args()[0];
  if (!slid.isPrim(Op::Slide) && !slid.isPrim(Op::SlideStrict)) return std::nullopt;
  const Expr& rows = slid.args()[0];
  if (!rows.isPrim(Op::Map) || !isUnaryLambda(rows.funs()[0])) return std::nullopt;
  const Expr& rowFun = rows.funs()[0];
  const Expr& rowSlide = rowFun.body();
  if ((!rowSlide.isPrim(Op::Slide) && !rowSlide.isPrim(Op::SlideStrict)) ||
      !isParamNode(rowSlide.args()[0], rowFun.params()[0])) {
    return std::nullopt;
  }
  return Slide2DExpansion{slid.primOp(),      rowSlide.primOp(),  slid.nats()[0], slid.nats()[1],
                          rowSlide.nats()[0], rowSlide.nats()[1], rows.args()[0]};
}

// The same expansion built with fresh params.
inline Expr buildSlide2D(Op outerOp, Op innerOp, Arith size1, Arith size2, Arith step1, Arith step2,
                         Expr x) {
  Expr rows = map(lam("row",
                      [&](Expr row) {
                        return Expr::prim(innerOp, {size2, step2}, {}, {std::move(row)});
                      }),
                  std::move(x));
  return map(lam("window", [](Expr w) { return transpose(std::move(w)); }),
             Expr::prim(outerOp, {size1, step1}, {}, {std::move(rows)}));
}

// `e` rebuilt with every occurrence of the node `target` (by identity) replaced.
inline Expr withNodeReplaced(const Expr& e, const ExprNode* target, const Expr& replacement) {
  if (e.node() == target) return replacement;
  if (e.isLambda()) return e.withBody(withNodeReplaced(e.body(), target, replacement));
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) funs.push_back(withNodeReplaced(f, target, replacement));
  for (const Expr& arg : e.args()) args.push_back(withNodeReplaced(arg, target, replacement));
  return e.withChildren(e.nats(), funs, args);
}

// The element function f of `row -> map(f, row)` when f does not mention the row.
inline std::optional<Expr> rowMapElement(const Expr& rowFun) {
  if (!isUnaryLambda(rowFun)) return std::nullopt;
  const Expr& row = rowFun.params()[0];
  const Expr& body = rowFun.body();
  if (!body.isPrim(Op::Map) || !isParamNode(body.args()[0], row)) return std::nullopt;
  if (mentionsParam(body.funs()[0], row)) return std::nullopt;
  return body.funs()[0];
}

// map(row -> map(f, row), x) (map2D(f, x)) with a fresh row param.
inline Expr map2DOf(const Expr& f, Expr x) {
  return map(lam("row", [&](Expr row) { return map(f, std::move(row)); }), std::move(x));
}

// A per-pixel stage P(f, x) over a 2D array x, in one of the forms the image pipelines use:
//   plain   map(row -> map(f, row), x)                           (map2D(f, x))
//   joined  map(row -> join(row), map(row -> map(f, row), x))    f returns a one-element array
//           map(row -> join(map(f, row)), x)                     (the same after map fusion)
// (f never mentions the row). buildPixelStage builds the first two forms.
struct PixelStage {
  Expr f;
  Expr x;
  bool joined = false;
};

// True when the array type `t` has length 1 (f's result in a joined stage).
inline bool isLengthOneArray(const Type& t) {
  if (!t.isArray()) return false;
  std::optional<int64_t> n = t.arrayLength().constant();
  return n && *n == 1;
}

// One of PixelStage's forms. `typeOf` checks that a joined stage's f returns one-element arrays
// (row -> join(row) on longer arrays would change the shape).
inline std::optional<PixelStage> matchPixelStage(const Expr& node, const TypeLookup& typeOf) {
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  if (!isUnaryLambda(rowFun)) return std::nullopt;
  if (std::optional<Expr> f = rowMapElement(rowFun)) return PixelStage{*f, node.args()[0], false};
  const Expr& row = rowFun.params()[0];
  const Expr& body = rowFun.body();
  if (!body.isPrim(Op::Join)) return std::nullopt;
  const Expr& joined = body.args()[0];
  if (isParamNode(joined, row)) {
    // map(row -> join(row), map(row' -> map(f, row'), x))
    const Expr& inner = node.args()[0];
    if (!inner.isPrim(Op::Map)) return std::nullopt;
    std::optional<Expr> f = rowMapElement(inner.funs()[0]);
    if (!f) return std::nullopt;
    const Type innerType = typeOf(inner);
    if (!innerType.isArray() || !innerType.arrayElement().isArray() ||
        !isLengthOneArray(innerType.arrayElement().arrayElement())) {
      return std::nullopt;
    }
    return PixelStage{*f, inner.args()[0], true};
  }
  // map(row -> join(map(f, row)), x)
  if (!joined.isPrim(Op::Map) || !isParamNode(joined.args()[0], row)) return std::nullopt;
  const Expr& f = joined.funs()[0];
  if (mentionsParam(f, row)) return std::nullopt;
  const Type joinedType = typeOf(joined);
  if (!joinedType.isArray() || !isLengthOneArray(joinedType.arrayElement())) return std::nullopt;
  return PixelStage{f, node.args()[0], true};
}

// The stage's f applied to `x` in the stage's form (plain, or joined by map(row -> join(row))).
inline Expr buildPixelStage(const PixelStage& stage, Expr x) {
  Expr mapped = map2DOf(stage.f, std::move(x));
  if (!stage.joined) return mapped;
  return map(lam("row", [](Expr row) { return join(std::move(row)); }), std::move(mapped));
}

// pad2D's expansion (ir/builders.h):
//   transpose(map(col -> pad(t, b, B, col), transpose(map(row -> pad(l, r, B', row), x))))
// with the column and row boundaries B and B' kept apart.
struct Pad2DExpansion {
  Arith left, right, top, bottom;
  PrimAttribute columnBoundary, rowBoundary;
  Expr x;
};
inline std::optional<Pad2DExpansion> matchPad2DExpansion(const Expr& node) {
  auto padOfParam = [](const Expr& fun) -> const Expr* {
    if (!isUnaryLambda(fun)) return nullptr;
    const Expr& body = fun.body();
    if (!body.isPrim(Op::Pad) || !isParamNode(body.args()[0], fun.params()[0])) return nullptr;
    return &body;
  };
  if (!node.isPrim(Op::Transpose)) return std::nullopt;
  const Expr& columns = node.args()[0];
  if (!columns.isPrim(Op::Map)) return std::nullopt;
  const Expr* columnPad = padOfParam(columns.funs()[0]);
  if (!columnPad || !columns.args()[0].isPrim(Op::Transpose)) return std::nullopt;
  const Expr& rows = columns.args()[0].args()[0];
  if (!rows.isPrim(Op::Map)) return std::nullopt;
  const Expr* rowPad = padOfParam(rows.funs()[0]);
  if (!rowPad) return std::nullopt;
  return Pad2DExpansion{rowPad->nats()[0],    rowPad->nats()[1],      columnPad->nats()[0],
                        columnPad->nats()[1], columnPad->attribute(), rowPad->attribute(),
                        rows.args()[0]};
}

// The same expansion of `p`'s sizes and boundaries over `x`, with fresh params.
inline Expr buildPad2DExpansion(const Pad2DExpansion& p, Expr x) {
  Expr rows = map(lam("row", [&](Expr row) { return pad(p.left, p.right, p.rowBoundary, row); }),
                  std::move(x));
  return transpose(
      map(lam("col", [&](Expr col) { return pad(p.top, p.bottom, p.columnBoundary, col); }),
          transpose(std::move(rows))));
}

// Tiles of per-window results put back in place: tile (a, b), window (i, j) -> output
// (a·w1 + i, b·w2 + j), for a 2D array of tiles each holding a 2D array of results (as
// map2d-slide-tiling and tileOverlapped build them). The map that untiles binds params named
// tileRow and windowRow (strategies locate them by these names).
inline Expr untileWindowResults(Expr computedTiles) {
  return join(map(lam("tileRow",
                      [](Expr tileRow) {
                        return map(lam("windowRow", [](Expr row) { return join(std::move(row)); }),
                                   transpose(std::move(tileRow)));
                      }),
                  std::move(computedTiles)));
}

// Overlapped tiling of the 2D windows `windows` (slide2D's expansion, size s1 x s2, steps t1,
// t2) taken over an array of x's shape: x cut by slideStrict2D into tiles of theta1 x theta2
// elements that overlap by the windows' halo (steps theta1 - (s1 - t1), theta2 - (s2 - t2);
// factors theta1 and theta2 of the application, fresh tuning variables in [s, length] when not
// given), `perTile(tile)` giving each tile's 2D array of results (one per window of the tile),
// and those put back in place: tile (a, b), window (i, j) -> output (a·w1 + i, b·w2 + j), as
// map2d-slide-tiling. The maps over tiles bind params named tileRow and tile, the map that
// untiles tileRow and windowRow (strategies locate them by these names). Nullopt when x is not
// a 2D array.
inline std::optional<Expr> tileOverlapped(const RuleApplication& a, const Slide2DExpansion& windows,
                                          const Expr& x, const std::function<Expr(Expr)>& perTile) {
  const Type xType = a.typeOf(x);
  if (!xType.isArray() || !xType.arrayElement().isArray()) return std::nullopt;
  const Arith height = xType.arrayLength();
  const Arith width = xType.arrayElement().arrayLength();
  Arith theta1 = a.factor("theta1", [&](RewriteContext& context) {
    return context.freshTuning("theta", windows.size1, height);
  });
  Arith theta2 = a.factor("theta2", [&](RewriteContext& context) {
    return context.freshTuning("theta", windows.size2, width);
  });
  Expr tiles = buildSlide2D(Op::SlideStrict, Op::SlideStrict, theta1, theta2,
                            theta1 - (windows.size1 - windows.step1),
                            theta2 - (windows.size2 - windows.step2), x);
  Expr computedTiles = map(
      lam("tileRow", [&](Expr tileRow) { return map(lam("tile", perTile), std::move(tileRow)); }),
      std::move(tiles));
  return untileWindowResults(std::move(computedTiles));
}

// crop2D(top, bottom, left, right, x) = crop(top, bottom, map(row -> crop(left, right, row), x)).
inline Expr crop2D(Arith top, Arith bottom, Arith left, Arith right, Expr x) {
  return crop(std::move(top), std::move(bottom),
              map(lam("row", [&](Expr row) { return crop(left, right, std::move(row)); }),
                  std::move(x)));
}

// transpose(map(r -> transpose(r), x)): returns x.
inline std::optional<Expr> matchTransposeOfMapTranspose(const Expr& node) {
  if (!node.isPrim(Op::Transpose) || !node.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& m = node.args()[0];
  const Expr& f = m.funs()[0];
  if (!isUnaryLambda(f) || !f.body().isPrim(Op::Transpose) ||
      !isParamNode(f.body().args()[0], f.params()[0])) {
    return std::nullopt;
  }
  return m.args()[0];
}

// f = (acc, p) -> acc + p._0 * p._1 (either order of the sum and of the product).
inline bool isSumOfProductsLambda(const Expr& f) {
  if (!f.isLambda() || f.params().size() != 2) return false;
  const Expr& acc = f.params()[0];
  const Expr& p = f.params()[1];
  const Expr& sum = f.body();
  if (!sum.isPrim(Op::Add)) return false;
  const Expr* product = nullptr;
  if (isParamNode(sum.args()[0], acc)) product = &sum.args()[1];
  if (isParamNode(sum.args()[1], acc)) product = &sum.args()[0];
  if (!product || !product->isPrim(Op::Mul)) return false;
  const Expr& x = product->args()[0];
  const Expr& y = product->args()[1];
  return (isGetOf(x, 0, p) && isGetOf(y, 1, p)) || (isGetOf(x, 1, p) && isGetOf(y, 0, p));
}

// The Listing 3 convolution: map(row -> map(w -> join(map(k -> reduce(z(k), sum of products,
// zip(join(join(w)), join(join(b(k))))), ks)), row), windows).
struct ConvMap2D {
  Expr kernelParam;  // k
  Expr init;         // z(k)
  Expr kernel;       // b(k): [3][3][C]
  Expr kernels;      // ks
  Expr windows;      // slide2D(K, S, X)
};

inline bool isJoinJoinOf(const Expr& e, const Expr& param) {
  return e.isPrim(Op::Join) && e.args()[0].isPrim(Op::Join) &&
         isParamNode(e.args()[0].args()[0], param);
}

inline std::optional<ConvMap2D> matchConvMap2D(const Expr& node) {
  if (!node.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> perWindow = rowMapElement(node.funs()[0]);
  if (!perWindow || !isUnaryLambda(*perWindow)) return std::nullopt;
  const Expr& w = perWindow->params()[0];
  const Expr& joined = perWindow->body();
  if (!joined.isPrim(Op::Join) || !joined.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& kernelMap = joined.args()[0];
  const Expr& kf = kernelMap.funs()[0];
  const Expr& ks = kernelMap.args()[0];
  if (!isUnaryLambda(kf) || mentionsParam(ks, w)) return std::nullopt;
  const Expr& k = kf.params()[0];
  const Expr& sum = kf.body();
  if (!sum.isPrim(Op::Reduce) || !isSumOfProductsLambda(sum.funs()[0])) return std::nullopt;
  const Expr& init = sum.args()[0];
  const Expr& pairs = sum.args()[1];
  if (!pairs.isPrim(Op::Zip) || pairs.args().size() != 2) return std::nullopt;
  if (!isJoinJoinOf(pairs.args()[0], w) || mentionsParam(init, w)) return std::nullopt;
  const Expr& kernelJoined = pairs.args()[1];
  if (!kernelJoined.isPrim(Op::Join) || !kernelJoined.args()[0].isPrim(Op::Join)) {
    return std::nullopt;
  }
  const Expr& kernel = kernelJoined.args()[0].args()[0];
  if (mentionsParam(kernel, w)) return std::nullopt;
  return ConvMap2D{k, init, kernel, ks, node.args()[0]};
}

// e with every get(i, tuple(a0, .., an)) folded to ai (bottom-up; user functions untouched).
inline Expr foldTupleGets(const Expr& e) {
  if (e.isLambda()) return e.withBody(foldTupleGets(e.body()));
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) funs.push_back(foldTupleGets(f));
  for (const Expr& x : e.args()) args.push_back(foldTupleGets(x));
  if (e.isPrim(Op::Get) && args[0].isPrim(Op::Tuple)) {
    std::optional<int64_t> index = e.nats()[0].constant();
    if (index && *index >= 0 && *index < static_cast<int64_t>(args[0].args().size())) {
      return args[0].args()[static_cast<size_t>(*index)];
    }
  }
  return e.withChildren(e.nats(), funs, args);
}

// The element function `f` of a map over zip(x0, .., x(n-1)) (n >= 2: its param is the tuple)
// or over one array (n == 1: its param is the element) applied to the components: the param
// replaced by tuple(components) and the projections folded, so no tuple is left where f only
// projects.
inline Expr appliedToComponents(const Expr& f, const std::vector<Expr>& components) {
  const Expr argument = components.size() == 1 ? components[0] : tuple(components);
  if (!isUnaryLambda(f)) return apply(f, {argument});
  return foldTupleGets(substituteParams(f.body(), {{f.params()[0], argument}}));
}

}  // namespace weft::rewrite
