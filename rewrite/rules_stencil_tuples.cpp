// Stencil rules over tuple arrays: stencils that read the components of ONE tuple array become
// one stencil over the windows of that array, giving the tuple of their results. Harris's three
// box sums (Sxx, Sxy, Syy over Ixx, Ixy, Iyy) are its use: once the products are one array P of
// (Ixx, Ixy, Iyy) triples, the three box-sum stages and the response read one window of P per
// pixel, and code generation can keep a tile of P in private memory as a structure of arrays.
//
// A pixel stage S(f, x) is flat (map2D(f, x)) or boxed (f gives one-element arrays, as
// map(join) ∘ map2D(f) or map(row -> join(map(f, row)))), as in rules_stencil_chain.cpp.
// W(x) is the windows slide2D(a1, a2, s1, s2, pad2D(l, r, t, b, B, x)) with B clamp or mirror.
//
//  tuple-stencil-fusion   map(r -> map(h, zip(r._0, .., r._m)),
//                             zip(S(f_0, W(map2D(_c0, P))), .., S(f_m, W(map2D(_cm, P)))))
//                           => S(w -> h((f_0(map2D(_c0, w)), .., f_m(map2D(_cm, w)))), W(P))
//                         (all stages flat; all boxed: map(h, zip(f_0(..), .., f_m(..))))
//                         m >= 1, P the same array in every stage (alpha-equivalence), W the same
//                         slide and pad sizes and boundaries in every stage
//  zip-stencil-fusion     the same over windows of different arrays Q_k of one shape:
//                         map(r -> map(h, zip(r._0, .., r._m)),
//                             zip(S(f_0, W(Q_0)), .., S(f_m, W(Q_m))))
//                           => S(w -> h((f_0(map2D(_0, w)), .., f_m(map2D(_m, w)))),
//                                W(zip2D(Q_0, .., Q_m)))
//                         zip2D(Q_0, ..) = map(r -> zip(r._0, ..), zip(Q_0, ..))
//                         (Harris: the sums over Ixx, Ixy, Iyy read one array of triples)
//  shared-window-fusion   stages over ONE array X (alpha-equivalence), zipped as they are:
//                         map(r -> zip(r._0, .., r._m), zip(S(f_0, X), .., S(f_m, X)))
//                           => S(w -> map(p -> (p._0, .., p._m), zip(f_0(w), .., f_m(w))), X)
//                                                                          (all boxed)
//                           => S(w -> (f_0(w), .., f_m(w)), X)             (all flat)
//                         m >= 1 (Harris: once Ix and Iy are recomputed per reader, Ixx, Ixy and
//                         Iyy are three boxed Sobel stages over the same input windows; this makes
//                         them one stencil giving (Ixx, Ixy, Iyy) per pixel, the producer that
//                         overlapped-tiling-fusion takes; the boxed form spells the result as
//                         horizontal-stencil-fusion does, a map over the zip of the one-element
//                         results, which code generation computes component by component)
//
// Why it holds (the interpreter is the reference, ir/interp.cpp): clamp and mirror padding and
// sliding only choose which elements of their input go where (index functions that do not look
// at the values), so they commute with the elementwise map2D(_c): W(map2D(_c, P)) =
// map2D(w -> map2D(_c, w), W(P)); a constant pad would insert a scalar where P has tuples and
// is refused. Likewise W(Q_k) = map2D(w -> map2D(_k, w), W(zip2D(Q_0, .., Q_m))). Then pixel (i, j)
// of stage k is f_k(map2D(_{c_k}, W(P)[i][j])), and the zip of the stages followed by h is h of the
// tuple of these, computed from the one window W(P)[i][j] (in the boxed form each f_k gives a
// one-element array; zip and map(h) keep one element). Checked against the interpreter on random
// programs by tests/rewrite/property_rules_stencil_tuples.cpp. shared-window-fusion: element
// (i, j) of zip2D(S(f_0, X), .., S(f_m, X)) is the tuple (f_0(X[i][j]), .., f_m(X[i][j])) (flat),
// or in the boxed form the one-element array zip(f_0(X[i][j]), .., f_m(X[i][j])), and
// map(p -> (p._0, .., p._m)) over a zip rebuilds each tuple as it is; the stages only read X.
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// One stage's windows over a component: W(map2D(_component, tuples)).
struct ComponentWindows {
  Slide2DExpansion slide;
  Pad2DExpansion pad;
  int64_t component = 0;
  Expr tuples;
};

bool isIndexOnlyBoundary(const PrimAttribute& attribute) {
  return attribute.boundary == Boundary::Clamp || attribute.boundary == Boundary::Mirror;
}

// The component index c of `p -> p._c`.
std::optional<int64_t> componentOfGetter(const Expr& f) {
  if (!isUnaryLambda(f)) return std::nullopt;
  const Expr& body = f.body();
  if (!body.isPrim(Op::Get) || !isParamNode(body.args()[0], f.params()[0])) return std::nullopt;
  return body.nats()[0].constant();
}

std::optional<ComponentWindows> matchComponentWindows(const Expr& node) {
  std::optional<Slide2DExpansion> slide = matchSlide2D(node);
  if (!slide) return std::nullopt;
  std::optional<Pad2DExpansion> pad = matchPad2DExpansion(slide->x);
  if (!pad || !isIndexOnlyBoundary(pad->rowBoundary) || !isIndexOnlyBoundary(pad->columnBoundary)) {
    return std::nullopt;
  }
  const Expr& components = pad->x;
  if (!components.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> getter = rowMapElement(components.funs()[0]);
  if (!getter) return std::nullopt;
  std::optional<int64_t> component = componentOfGetter(*getter);
  if (!component) return std::nullopt;
  return ComponentWindows{*slide, *pad, *component, components.args()[0]};
}

// Any stage's windows W(x) (component = -1, tuples = x): the zip-stencil-fusion form.
std::optional<ComponentWindows> matchWindows(const Expr& node) {
  std::optional<Slide2DExpansion> slide = matchSlide2D(node);
  if (!slide) return std::nullopt;
  std::optional<Pad2DExpansion> pad = matchPad2DExpansion(slide->x);
  if (!pad || !isIndexOnlyBoundary(pad->rowBoundary) || !isIndexOnlyBoundary(pad->columnBoundary)) {
    return std::nullopt;
  }
  return ComponentWindows{*slide, *pad, -1, pad->x};
}

bool sameWindowing(const ComponentWindows& a, const ComponentWindows& b) {
  return a.slide.outerOp == b.slide.outerOp && a.slide.innerOp == b.slide.innerOp &&
         a.slide.size1 == b.slide.size1 && a.slide.step1 == b.slide.step1 &&
         a.slide.size2 == b.slide.size2 && a.slide.step2 == b.slide.step2 &&
         a.pad.left == b.pad.left && a.pad.right == b.pad.right && a.pad.top == b.pad.top &&
         a.pad.bottom == b.pad.bottom && a.pad.rowBoundary == b.pad.rowBoundary &&
         a.pad.columnBoundary == b.pad.columnBoundary;
}

// The rows function r -> map(h, zip(r._0, .., r._{n-1})): h, when it has that form.
std::optional<Expr> pointwiseOverZippedRows(const Expr& rowFunction, size_t n) {
  if (!isUnaryLambda(rowFunction)) return std::nullopt;
  const Expr& row = rowFunction.params()[0];
  const Expr& body = rowFunction.body();
  if (!body.isPrim(Op::Map) || !body.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& parts = body.args()[0].args();
  if (parts.size() != n) return std::nullopt;
  for (size_t i = 0; i < n; ++i) {
    const Expr& part = parts[i];
    if (!part.isPrim(Op::Get) || !isParamNode(part.args()[0], row) ||
        part.nats()[0].constant() != std::optional<int64_t>(static_cast<int64_t>(i))) {
      return std::nullopt;
    }
  }
  if (mentionsParam(body.funs()[0], row)) return std::nullopt;
  return body.funs()[0];
}

// Both rules: `overComponents` (tuple-stencil-fusion) wants W(map2D(_c, P)) with one P in every
// stage; otherwise (zip-stencil-fusion) any W(Q_k), fused over W(zip2D(Q_0, .., Q_m)).
std::optional<Expr> fuseStagesOverOneWindowing(const RuleApplication& a, bool overComponents) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& stages = node.args()[0].args();
  if (stages.size() < 2) return std::nullopt;
  std::optional<Expr> h = pointwiseOverZippedRows(node.funs()[0], stages.size());
  if (!h) return std::nullopt;
  std::vector<PixelStage> pixelStages;
  std::vector<ComponentWindows> windows;
  for (const Expr& stage : stages) {
    std::optional<PixelStage> pixel = matchPixelStage(stage, a.typeOf);
    if (!pixel) return std::nullopt;
    std::optional<ComponentWindows> w =
        overComponents ? matchComponentWindows(pixel->x) : matchWindows(pixel->x);
    if (!w) return std::nullopt;
    if (!overComponents) w->component = static_cast<int64_t>(windows.size());
    if (!pixelStages.empty()) {
      if (pixel->joined != pixelStages[0].joined) return std::nullopt;
      if (!sameWindowing(*w, windows[0])) return std::nullopt;
      if (overComponents && !(w->tuples == windows[0].tuples)) return std::nullopt;
    }
    pixelStages.push_back(*pixel);
    windows.push_back(*w);
  }
  const bool boxed = pixelStages[0].joined;
  Expr fused = lam("window", [&](Expr window) {
    std::vector<Expr> results;
    for (size_t k = 0; k < pixelStages.size(); ++k) {
      const int64_t component = windows[k].component;
      Expr componentWindow = map2DOf(
          lam("p", [component](Expr p) { return get(Arith(component), std::move(p)); }), window);
      results.push_back(call(pixelStages[k].f, componentWindow));
    }
    if (boxed) return map(*h, zip(std::move(results)));
    return call(*h, tuple(std::move(results)));
  });
  const ComponentWindows& w = windows[0];
  Expr tuples = w.tuples;
  if (!overComponents) {
    std::vector<Expr> arrays;
    for (const ComponentWindows& stageWindows : windows) arrays.push_back(stageWindows.tuples);
    const size_t n = arrays.size();
    tuples = map(lam("rows",
                     [n](Expr rows) {
                       std::vector<Expr> parts;
                       for (size_t k = 0; k < n; ++k) {
                         parts.push_back(get(static_cast<int64_t>(k), rows));
                       }
                       return zip(std::move(parts));
                     }),
                 zip(std::move(arrays)));
  }
  Expr tupleWindows =
      buildSlide2D(w.slide.outerOp, w.slide.innerOp, w.slide.size1, w.slide.size2, w.slide.step1,
                   w.slide.step2, buildPad2DExpansion(w.pad, std::move(tuples)));
  return buildPixelStage(PixelStage{fused, Expr(), boxed}, std::move(tupleWindows));
}

// map(r -> zip(r._0, .., r._m), zip(S(f_0, X), .., S(f_m, X))) => one stage over X.
std::optional<Expr> sharedWindowFusion(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& stages = node.args()[0].args();
  const size_t n = stages.size();
  if (n < 2) return std::nullopt;
  const Expr& rowFunction = node.funs()[0];
  if (!isUnaryLambda(rowFunction)) return std::nullopt;
  const Expr& row = rowFunction.params()[0];
  const Expr& rowBody = rowFunction.body();
  if (!rowBody.isPrim(Op::Zip) || rowBody.args().size() != n) return std::nullopt;
  for (size_t k = 0; k < n; ++k) {
    const Expr& part = rowBody.args()[k];
    if (!part.isPrim(Op::Get) || !isParamNode(part.args()[0], row) ||
        part.nats()[0].constant() != std::optional<int64_t>(static_cast<int64_t>(k))) {
      return std::nullopt;
    }
  }
  std::vector<PixelStage> pixelStages;
  for (const Expr& stage : stages) {
    std::optional<PixelStage> pixel = matchPixelStage(stage, a.typeOf);
    if (!pixel) return std::nullopt;
    if (!pixelStages.empty()) {
      if (pixel->joined != pixelStages[0].joined) return std::nullopt;
      if (!(pixel->x == pixelStages[0].x)) return std::nullopt;
    }
    pixelStages.push_back(*pixel);
  }
  const bool boxed = pixelStages[0].joined;
  Expr fused = lam("window", [&](Expr window) {
    std::vector<Expr> results;
    for (const PixelStage& stage : pixelStages) results.push_back(call(stage.f, window));
    if (!boxed) return tuple(std::move(results));
    Expr rebuild = lam("p", [n](Expr p) {
      std::vector<Expr> parts;
      for (size_t k = 0; k < n; ++k) parts.push_back(get(static_cast<int64_t>(k), p));
      return tuple(std::move(parts));
    });
    return map(rebuild, zip(std::move(results)));
  });
  return buildPixelStage(PixelStage{fused, Expr(), boxed}, pixelStages[0].x);
}

std::optional<Expr> tupleStencilFusion(const RuleApplication& a) {
  return fuseStagesOverOneWindowing(a, true);
}

std::optional<Expr> zipStencilFusion(const RuleApplication& a) {
  return fuseStagesOverOneWindowing(a, false);
}

}  // namespace

void addStencilTupleRules(std::vector<Rule>& rules) {
  rules.push_back(
      Rule{"tuple-stencil-fusion",
           "map2D(h) ∘ zip2D(S(f_0, W(map2D(_c0, P))), .., S(f_n-1, W(map2D(_cn-1, P)))) => "
           "S(w -> h(f_0(map2D(_c0, w)), .., f_n-1(map2D(_cn-1, w))), W(P))   [W = slide2D ∘ pad2D "
           "with clamp or mirror, the same in every stage; stages all flat, or all boxed: "
           "map(h, zip(f_0(..), ..))]",
           RuleFamily::Fusion,
           {},
           tupleStencilFusion});
  rules.push_back(
      Rule{"zip-stencil-fusion",
           "map2D(h) ∘ zip2D(S(f_0, W(Q_0)), .., S(f_m, W(Q_m))) => "
           "S(w -> h(f_0(map2D(_0, w)), .., f_m(map2D(_m, w))), W(zip2D(Q_0, .., Q_m)))   "
           "[W = slide2D ∘ pad2D with clamp or mirror, the same in every stage; stages all flat, "
           "or all boxed: map(h, zip(f_0(..), ..))]",
           RuleFamily::Fusion,
           {},
           zipStencilFusion});
  rules.push_back(
      Rule{"shared-window-fusion",
           "zip2D(S(f_0, X), .., S(f_m, X)) => S(w -> (f_0(w), .., f_m(w)), X)   [stages over one "
           "array X, all flat; or all boxed (map(join) ∘ map2D, f_k giving [T]1): "
           "map(p -> (p._0, .., p._m), zip(f_0(w), .., f_m(w)))]",
           RuleFamily::Fusion,
           {},
           sharedWindowFusion});
}

}  // namespace weft::rewrite
