// The stencil-fusion rules: what it takes to fuse a stencil stage into the stencil stage that
// consumes it by overlapped tiling, Forma's Algorithm 1 (Ravishankar et al., "Forma: a DSL for
// image processing applications to target GPUs and multi-core CPUs", GPGPU 2015) in the terms
// of LIFT/RISE (Hagedorn et al., "High performance stencil code generation with Lift", CGO
// 2018: slide and pad commute with a pointwise map, the producer being recomputed per window).
//
// A "pixel stage" P(f, x) is a per-element function applied to a 2D array, in one of the forms
// the pipelines of examples/pipelines/ use:
//   plain   map(row -> map(f, row), x)                           (map2D(f, x))
//   joined  map(row -> join(row), map(row -> map(f, row), x))    f returns a one-element array
//           map(row -> join(map(f, row)), x)                     (the same after map fusion)
// (f never mentions the row). Rewritten stages are always built in the first two forms.
//
//  let-inline                let(x -> b, e) => b[x := e]     (x used at most once in b)
//  pad-map-interchange       pad(l, r, B) ∘ map(f) => map(f) ∘ pad(l, r, B)    [B clamp or mirror]
//  pad2d-map2d-interchange   pad2D(l, r, t, b, B) ∘ P(f) => P(f) ∘ pad2D(l, r, t, b, B)
//                            [B clamp or mirror]
//  slide-map-fusion          slide(s, t) ∘ map(f) => map(map(f)) ∘ slide(s, t)   (also strict)
//  slide2d-map2d-fusion      slide2D(s1, s2, t1, t2) ∘ P(f) => map2D(P(f)) ∘ slide2D(..)
//  overlapped-tiling-fusion  map2D(g) ∘ slide2D(s1, s2, t1, t2) ∘ P(f)
//                              => untile ∘ map2D(tile -> map2D(g)(slideStrict2D(s1, s2, t1, t2,
//                                 P(f, tile)))) ∘ slideStrict2D(θ1, θ2, θ1 - (s1 - t1),
//                                 θ2 - (s2 - t2))
//                            factors theta1, theta2: a tile's rows and columns of the producer's
//                            input (its halo included), as map2d-slide-tiling
//  zip-map-fusion            map(f, zip(.., map(g, zip(ys)), ..)) => map(v -> f(.., g(ys of v),
//                            ..), zip(..))   every y among the other zipped arrays (CSE: a
//                            pointwise stage merged into the pointwise stage that zips it with
//                            its own inputs, unsharp mask's sharpen into mask); g read once
//  map2d-fusion              P(g, map2D(f, x)) => P(g ∘ f, x)
//  zip-centre-tap            map2D(h) ∘ zip2D(x, P(g, W)) => P(w -> map(h, zip(centre(w), g(w))),
//                            W), W = slide2D(s1, s2, 1, 1, pad2D(l, r, t, b, B, ..)) repeated
//                            down to x with t + b = s1 - 1, l + r = s2 - 1 (window (i, j) holds
//                            x[i][j] at row t, column l; any boundary: that tap is never padding)
//  centre-tap-in-producer    map2D(h) ∘ zip2D(x, P(g, S)), S = slide2D(s1, s2, 1, 1,
//                            pad2D(l, r, t, b, B, P(f, V))) centred, V centred windows down to
//                            x => P(w -> map(h, zip(tap(w)._1, g(map2D(_0, w)))),
//                            S[P(f, V) := P(v -> (f(v), centre(v)), V)]: the producer carries
//                            x's pixel, so the pipeline is two stencils (B clamp or mirror)
//  overlapped-tiling-fusion-with-input
//                            map2D(w -> B(P(f, w), w), slide2D(s1, s2, t1, t2, y)) => untile ∘
//                            map2D(tile -> map2D(B) ∘ zip2D(slideStrict2D(..)(P(f, tile)),
//                            slideStrict2D(..)(tile))) ∘ slideStrict2D(θ1, θ2, ..)(y): as
//                            overlapped-tiling-fusion, the consumer also reading the raw window
//  compute-to-local          map(f, x) => toLocal(y -> map(f, y), x)    directly in a mapWrg
//  compute-to-private        map(f, x) => toPrivate(y -> map(f, y), x)  directly in a mapGlb
//                            (one work-item computes the whole array into private memory;
//                            its lengths constants or tuning variables)
//
// Why they hold (the interpreter is the reference, ir/interp.cpp): clamp and mirror padding
// only repeat elements of the array, so applying f before or after gives the same array;
// constant padding adds the value itself, which f would change, so pad-map-interchange and
// pad2d-map2d-interchange refuse it. A window of map(f, x) holds f of the elements of the same
// window of x, so slide commutes with a pointwise map when the windows' elements are mapped
// (slide-map-fusion is map-slide-interchange read backwards; applied to a producer stage it is
// recomputation: an element shared by k windows is computed k times). overlapped-tiling-fusion
// is map2d-slide-tiling followed by slide2d-map2d-fusion on the tiles' slide and two map
// fusions: the producer is computed once per element of each tile (halo included: the halo is
// computed by both neighbouring tiles), and the consumer's windows are taken inside that tile.
// compute-to-local changes nothing in the interpreter (toLocal(f, x) = f(x)); it asks code
// generation to keep the map's value in local memory, and is only offered where a work-group
// runs the code (inside a mapWrg's function, not inside a mapLcl or a sequential map).
// compute-to-private is the same for one work-item: offered directly in a mapGlb's function
// (no mapLcl, mapWrg or sequential loop in between) on an array of constant size (private
// arrays are sized at compile time), so a work-item's producer tile with its halo stays in
// registers instead of going through local memory and a barrier. centre-tap-in-producer: a
// centred window (i, j) holds its array's element (i, j) at row t, column l whatever the
// boundary, so V's centre tap in the producer's window (i, j) is x[i][j] and the consumer
// window's tap (t, l) is the producer's element (i, j), now paired with x[i][j]; clamp and
// mirror copy whole elements, so projecting ._0 out of the consumer's windows gives back the
// windows of P(f, V) padded as before.
// Each rule is checked against the interpreter by tests/rewrite/property_rules_stencil_fusion.cpp.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// ---- matching the 2D forms: PixelStage, Slide2DExpansion and Pad2DExpansion of
// rule_helpers.h ------------------------------------------------------------------------------

bool copiesElements(const PrimAttribute& boundary) {
  return boundary.boundary == Boundary::Clamp || boundary.boundary == Boundary::Mirror;
}

// ---- the rules ----------------------------------------------------------------------------

// let(x -> b, e) => b[x := e]
std::optional<Expr> letInline(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Let) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& f = node.funs()[0];
  // Inlining a value used twice would compute it twice and bind its params in two places.
  if (paramUses(f.body(), f.params()[0]) > 1) return std::nullopt;
  return substituteParams(f.body(), {{f.params()[0], node.args()[0]}});
}

// pad(l, r, B, map(f, x)) => map(f, pad(l, r, B, x))   for B clamp or mirror
std::optional<Expr> padMapInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Pad) || !node.args()[0].isPrim(Op::Map)) return std::nullopt;
  if (!copiesElements(node.attribute())) return std::nullopt;
  const Expr& mapped = node.args()[0];
  return map(mapped.funs()[0], node.withChildren(node.nats(), {}, {mapped.args()[0]}));
}

// pad2D(l, r, t, b, B, P(f, x)) => P(f, pad2D(l, r, t, b, B, x))   for B clamp or mirror
std::optional<Expr> pad2DMap2DInterchange(const RuleApplication& a) {
  std::optional<Pad2DExpansion> padded = matchPad2DExpansion(a.node);
  if (!padded) return std::nullopt;
  if (!copiesElements(padded->columnBoundary) || !copiesElements(padded->rowBoundary)) {
    return std::nullopt;
  }
  std::optional<PixelStage> stage = matchPixelStage(padded->x, a.typeOf);
  if (!stage) return std::nullopt;
  return buildPixelStage(*stage, buildPad2DExpansion(*padded, stage->x));
}

// slide(s, t, map(f, x)) => map(w -> map(f, w), slide(s, t, x))   (slide or slideStrict)
std::optional<Expr> slideMapFusion(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Slide) && !node.isPrim(Op::SlideStrict)) return std::nullopt;
  if (!node.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& mapped = node.args()[0];
  const Expr f = mapped.funs()[0];
  return map(lam("window", [&](Expr window) { return map(f, std::move(window)); }),
             node.withChildren(node.nats(), {}, {mapped.args()[0]}));
}

// slide2D(s1, s2, t1, t2, P(f, x)) => map2D(w -> P(f, w), slide2D(s1, s2, t1, t2, x))
std::optional<Expr> slide2DMap2DFusion(const RuleApplication& a) {
  std::optional<Slide2DExpansion> slid = matchSlide2D(a.node);
  if (!slid) return std::nullopt;
  std::optional<PixelStage> stage = matchPixelStage(slid->x, a.typeOf);
  if (!stage) return std::nullopt;
  Expr windows = buildSlide2D(slid->outerOp, slid->innerOp, slid->size1, slid->size2, slid->step1,
                              slid->step2, stage->x);
  return map2DOf(lam("window", [&](Expr window) { return buildPixelStage(*stage, window); }),
                 std::move(windows));
}

// map2D(g, slide2D(s1, s2, t1, t2, P(f, x)))
//   => untile(map2D(tile -> map2D(g, slideStrict2D(s1, s2, t1, t2, P(f, tile))),
//                   slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - (s2 - t2), x)))
std::optional<Expr> overlappedTilingFusion(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> g = rowMapElement(node.funs()[0]);
  if (!g) return std::nullopt;
  std::optional<Slide2DExpansion> slid = matchSlide2D(node.args()[0]);
  if (!slid) return std::nullopt;
  std::optional<PixelStage> stage = matchPixelStage(slid->x, a.typeOf);
  if (!stage) return std::nullopt;
  const Slide2DExpansion windowShape = *slid;
  const Expr consumer = *g;
  // Each tile: the producer on every element of the tile (halo included), then the consumer
  // on the windows of that.
  return tileOverlapped(a, windowShape, stage->x, [&](Expr tile) {
    Expr produced = buildPixelStage(*stage, std::move(tile));
    Expr windows =
        buildSlide2D(Op::SlideStrict, Op::SlideStrict, windowShape.size1, windowShape.size2,
                     windowShape.step1, windowShape.step2, std::move(produced));
    return map(
        lam("windowRow", [&](Expr windowRow) { return map(consumer, std::move(windowRow)); }),
        std::move(windows));
  });
}

// ---- pointwise stages over zips, centre taps, tiling with the producer's input ----------

// How often the element function `f` (param a tuple of n components, or the element when
// n == 1) reads component i: its projections ._i plus its uses of the whole param.
int componentUses(const Expr& f, size_t i, size_t n) {
  if (!isUnaryLambda(f)) return 2;  // unknown: treated as used more than once
  const Expr& p = f.params()[0];
  const int all = paramUses(f.body(), p);
  if (n == 1) return all;
  int projections = 0, projectionsOfI = 0;
  forEachNode(f.body(), [&](const Expr& node) {
    if (!node.isPrim(Op::Get) || !isParamNode(node.args()[0], p)) return;
    ++projections;
    std::optional<int64_t> index = node.nats()[0].constant();
    if (index && *index == static_cast<int64_t>(i)) ++projectionsOfI;
  });
  return projectionsOfI + (all - projections);
}

// The arrays a map runs over: zip's arguments, or the one array.
std::vector<Expr> mappedArrays(const Expr& x) {
  if (x.isPrim(Op::Zip)) return x.args();
  return {x};
}

// map(f, zip(x0, .., x(n-1))) where some xk = map(g, zip(y0, .., y(m-1))) (or map(g, y0)) and
// every yj is one of the other xi (alpha-equivalence)
//   => map(v -> f((v._0, .., g((v._i0, .., v._i(m-1))), ..)), zip(x0, .., x(n-1) without xk))
// The first such xk; refused when f reads xk's component more than once (g would be computed
// twice).
std::optional<Expr> zipMapFusion(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!isUnaryLambda(f)) return std::nullopt;
  const std::vector<Expr>& xs = node.args()[0].args();
  const size_t n = xs.size();
  for (size_t k = 0; k < n; ++k) {
    if (!xs[k].isPrim(Op::Map) || !xs[k].funs()[0].isFunction()) continue;
    const Expr& g = xs[k].funs()[0];
    const std::vector<Expr> ys = mappedArrays(xs[k].args()[0]);
    // Where each yj is among the other xs, as an index into the xs that remain.
    std::vector<size_t> source;
    for (const Expr& y : ys) {
      for (size_t i = 0; i < n; ++i) {
        if (i != k && xs[i] == y) {
          source.push_back(i < k ? i : i - 1);
          break;
        }
      }
    }
    if (source.size() != ys.size()) continue;
    if (componentUses(f, k, n) > 1) continue;
    std::vector<Expr> rest;
    for (size_t i = 0; i < n; ++i) {
      if (i != k) rest.push_back(xs[i]);
    }
    Expr v = Expr::param("v");
    auto component = [&](size_t i) { return rest.size() == 1 ? v : get(Arith(int64_t(i)), v); };
    std::vector<Expr> gComponents;
    for (size_t i : source) gComponents.push_back(component(i));
    std::vector<Expr> fComponents;
    for (size_t i = 0; i < n; ++i) {
      if (i == k) {
        fComponents.push_back(appliedToComponents(g, gComponents));
      } else {
        fComponents.push_back(component(i < k ? i : i - 1));
      }
    }
    Expr body = appliedToComponents(f, fComponents);
    return map(Expr::lambda({v}, body), rest.size() == 1 ? rest[0] : zip(rest));
  }
  return std::nullopt;
}

// P(g, map2D(f, x)) => P(v -> g(f(v)), x)   (the inner stage plain: its elements are f's)
std::optional<Expr> map2DFusion(const RuleApplication& a) {
  std::optional<PixelStage> outer = matchPixelStage(a.node, a.typeOf);
  if (!outer) return std::nullopt;
  std::optional<PixelStage> inner = matchPixelStage(outer->x, a.typeOf);
  if (!inner || inner->joined) return std::nullopt;
  Expr v = Expr::param("v");
  Expr composed = Expr::lambda({v}, call(outer->f, call(inner->f, v)));
  return buildPixelStage(PixelStage{composed, inner->x, outer->joined}, inner->x);
}

// One level of a chain of windows whose tap (top, left) is the pixel the window is centred
// on: slide2D(s1, s2, 1, 1, pad2D(l, r, t, b, B, z)) with t + b = s1 - 1 and l + r = s2 - 1
// (the windows keep z's shape; window (i, j) holds z[i][j] at row t, column l: the pad shifts
// z by (t, l) and the window at (i, j) starts at padded row i, column j).
struct CentreTap {
  Arith top, left, size1, size2;
};

bool provablyEqual(const Arith& a, const Arith& b) {
  std::optional<int64_t> d = (a - b).constant();
  return d && *d == 0;
}

// The taps from the windows `windows` down to `x` (outermost first), or nullopt when
// `windows` is not such a chain ending at x.
std::optional<std::vector<CentreTap>> centreTapsTo(const Expr& windows, const Expr& x) {
  std::optional<Slide2DExpansion> slid = matchSlide2D(windows);
  if (!slid) return std::nullopt;
  if (!provablyEqual(slid->step1, Arith(1)) || !provablyEqual(slid->step2, Arith(1))) {
    return std::nullopt;
  }
  std::optional<Pad2DExpansion> padded = matchPad2DExpansion(slid->x);
  if (!padded) return std::nullopt;
  if (!provablyEqual(padded->top + padded->bottom, slid->size1 - 1) ||
      !provablyEqual(padded->left + padded->right, slid->size2 - 1)) {
    return std::nullopt;
  }
  std::vector<CentreTap> taps{{padded->top, padded->left, slid->size1, slid->size2}};
  if (padded->x == x) return taps;
  std::optional<std::vector<CentreTap>> deeper = centreTapsTo(padded->x, x);
  if (!deeper) return std::nullopt;
  taps.insert(taps.end(), deeper->begin(), deeper->end());
  return taps;
}

// The element at row t, column l of a window w ([[E]s2]s1) as a one-element array [E]1:
// join(map(row -> crop(l, s2 - 1 - l, row), crop(t, s1 - 1 - t, w))) (views only).
Expr tapOf(const CentreTap& tap, const Expr& w) {
  return join(
      map(lam("tapRow", [&](Expr row) { return crop(tap.left, tap.size2 - 1 - tap.left, row); }),
          crop(tap.top, tap.size1 - 1 - tap.top, w)));
}

// The centre pixel of a window of the chain as [T]1: the tap of each level in turn.
Expr centreOf(const std::vector<CentreTap>& taps, const Expr& w) {
  Expr centre = tapOf(taps[0], w);
  for (size_t i = 1; i < taps.size(); ++i) {
    const CentreTap tap = taps[i];
    centre = join(map(lam("inner", [&](Expr e) { return tapOf(tap, e); }), centre));
  }
  return centre;
}

// A pointwise stage over an image and a joined pixel stage of the same shape,
// map(row -> map(h, zip(row._0, row._1)), zip(x, P(g, y))): h, x and the stage.
struct PointwiseOverStage {
  Expr h, x;
  PixelStage stage;
};

std::optional<PointwiseOverStage> matchPointwiseOverStage(const Expr& node,
                                                          const TypeLookup& typeOf) {
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& pair = node.args()[0].args();
  if (pair.size() != 2) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  if (!isUnaryLambda(rowFun)) return std::nullopt;
  const Expr& row = rowFun.params()[0];
  const Expr& rowBody = rowFun.body();
  if (!rowBody.isPrim(Op::Map) || !rowBody.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const std::vector<Expr>& rowParts = rowBody.args()[0].args();
  if (rowParts.size() != 2) return std::nullopt;
  for (int64_t i = 0; i < 2; ++i) {
    const Expr& part = rowParts[static_cast<size_t>(i)];
    if (!part.isPrim(Op::Get) || !isParamNode(part.args()[0], row) ||
        part.nats()[0].constant() != std::optional<int64_t>(i)) {
      return std::nullopt;
    }
  }
  const Expr h = rowBody.funs()[0];
  if (mentionsParam(h, row)) return std::nullopt;
  std::optional<PixelStage> stage = matchPixelStage(pair[1], typeOf);
  if (!stage || !stage->joined) return std::nullopt;
  return PointwiseOverStage{h, pair[0], *stage};
}

// map(row -> map(h, zip(row._0, row._1)), zip(x, P(g, W)))    (P joined: g gives [T]1)
//   => P(w -> map(h, zip(centre(w), g(w))), W)
// where W = slide2D(s1, s2, 1, 1, pad2D(l, r, t, b, B, ..)) is a chain of centred windows
// ending at x (centreTapsTo): x's pixel is read from the stage's own window.
std::optional<Expr> zipCentreTap(const RuleApplication& a) {
  std::optional<PointwiseOverStage> pointwise = matchPointwiseOverStage(a.node, a.typeOf);
  if (!pointwise) return std::nullopt;
  std::optional<std::vector<CentreTap>> taps = centreTapsTo(pointwise->stage.x, pointwise->x);
  if (!taps) return std::nullopt;
  const Expr g = pointwise->stage.f;
  const Expr h = pointwise->h;
  const std::vector<CentreTap> chain = *taps;
  Expr window = lam("w", [&](Expr w) { return map(h, zip(centreOf(chain, w), call(g, w))); });
  return buildPixelStage(PixelStage{window, pointwise->stage.x, true}, pointwise->stage.x);
}

// map(row -> map(h, zip(row._0, row._1)), zip(x, P(g, S)))    (P joined)
//   with S = slide2D(s1, s2, 1, 1, pad2D(l, r, t, b, B, P(f, V))), B clamp or mirror, P(f, V)
//   joined (f gives [T]1, as a window's taps do),
//   t + b = s1 - 1, l + r = s2 - 1, and V a chain of centred windows ending at x
//   => P(w -> map(h, zip(map(p -> p._1, tap(w)), g(map2D(p -> p._0, w)))),
//        slide2D(s1, s2, 1, 1, pad2D(l, r, t, b, B, P(v -> (f(v), centre(v)), V))))
// The producer carries x's pixel along with its own value (a tuple per pixel), so the
// consumer reads x's pixel from the centre tap of its window of the producer: the pipeline
// becomes two stencil stages, which overlapped tiling and the sliding window fuse, instead of
// two stencils beside a pointwise read of x. The centre tap is never padding (the pad puts
// P's element (i, j) at row t, column l of window (i, j)), so B only has to copy elements.
std::optional<Expr> centreTapInProducer(const RuleApplication& a) {
  std::optional<PointwiseOverStage> pointwise = matchPointwiseOverStage(a.node, a.typeOf);
  if (!pointwise) return std::nullopt;
  std::optional<Slide2DExpansion> slid = matchSlide2D(pointwise->stage.x);
  if (!slid || !provablyEqual(slid->step1, Arith(1)) || !provablyEqual(slid->step2, Arith(1))) {
    return std::nullopt;
  }
  std::optional<Pad2DExpansion> padded = matchPad2DExpansion(slid->x);
  if (!padded || !copiesElements(padded->columnBoundary) ||
      !copiesElements(padded->rowBoundary)) {
    return std::nullopt;
  }
  if (!provablyEqual(padded->top + padded->bottom, slid->size1 - 1) ||
      !provablyEqual(padded->left + padded->right, slid->size2 - 1)) {
    return std::nullopt;
  }
  std::optional<PixelStage> producer = matchPixelStage(padded->x, a.typeOf);
  if (!producer) return std::nullopt;
  std::optional<std::vector<CentreTap>> taps = centreTapsTo(producer->x, pointwise->x);
  if (!taps) return std::nullopt;
  if (!producer->joined) return std::nullopt;
  const std::vector<CentreTap> chain = *taps;
  const Expr f = producer->f;
  // v -> [(f(v), x's pixel)]1: the zip of two one-element arrays.
  Expr carrying = lam("v", [&](Expr v) { return zip(call(f, v), centreOf(chain, v)); });
  Expr carried = buildPixelStage(PixelStage{carrying, producer->x, true}, producer->x);
  Expr windows = buildSlide2D(slid->outerOp, slid->innerOp, slid->size1, slid->size2,
                              slid->step1, slid->step2, buildPad2DExpansion(*padded, carried));
  const CentreTap tap{padded->top, padded->left, slid->size1, slid->size2};
  const Expr g = pointwise->stage.f;
  const Expr h = pointwise->h;
  Expr window = lam("w", [&](Expr w) {
    Expr pixel = map(lam("p", [](Expr p) { return get(1, p); }), tapOf(tap, w));
    Expr values = map(
        lam("valueRow",
            [](Expr row) { return map(lam("p", [](Expr p) { return get(0, p); }), row); }),
        w);
    return map(h, zip(pixel, call(g, values)));
  });
  return buildPixelStage(PixelStage{window, windows, true}, windows);
}

// The first pixel stage P(f, w) over the window param w inside the window function's body
// (pre-order), f not depending on anything bound inside the window function.
std::optional<std::pair<Expr, PixelStage>> producerInWindow(const Expr& windowFun,
                                                            const TypeLookup& typeOf) {
  const Expr& w = windowFun.params()[0];
  std::vector<uint64_t> boundInside;
  forEachNode(windowFun, [&](const Expr& e) {
    if (e.isLambda()) {
      for (const Expr& p : e.params()) boundInside.push_back(p.paramId());
    }
  });
  std::optional<std::pair<Expr, PixelStage>> found;
  forEachNode(windowFun.body(), [&](const Expr& e) {
    if (found) return;
    std::optional<PixelStage> stage = matchPixelStage(e, typeOf);
    if (!stage || !isParamNode(stage->x, w) || mentionsParam(stage->f, w)) return;
    for (uint64_t id : freeParamsOf(stage->f)) {
      if (std::find(boundInside.begin(), boundInside.end(), id) != boundInside.end()) return;
    }
    found = std::make_pair(e, *stage);
  });
  return found;
}

// map2D(w -> B(P(f, w), w), slide2D(s1, s2, t1, t2, y))
//   => untile(map2D(tile -> map2D((pw, rw) -> B(pw, rw),
//                                 zip2D(slideStrict2D(s1, s2, t1, t2, P(f, tile)),
//                                       slideStrict2D(s1, s2, t1, t2, tile))),
//                   slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - (s2 - t2), y)))
// overlapped-tiling-fusion where the consumer also reads the producer's input window rw (the
// producer inlined into the consumer's window function, as slide2d-map2d-fusion and map
// fusion leave it): P(f) is computed once per element of a tile, halo included.
std::optional<Expr> overlappedTilingFusionWithInput(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> g = rowMapElement(node.funs()[0]);
  if (!g || !isUnaryLambda(*g)) return std::nullopt;
  std::optional<Slide2DExpansion> slid = matchSlide2D(node.args()[0]);
  if (!slid) return std::nullopt;
  std::optional<std::pair<Expr, PixelStage>> producer = producerInWindow(*g, a.typeOf);
  if (!producer) return std::nullopt;
  const PixelStage stage = producer->second;
  Expr pw = Expr::param("produced");
  Expr rw = Expr::param("raw");
  const Expr consumerBody = substituteParams(
      withNodeReplaced(g->body(), producer->first.node(), pw), {{g->params()[0], rw}});
  const Slide2DExpansion shape = *slid;
  auto windowsOf = [&](Expr x) {
    return buildSlide2D(Op::SlideStrict, Op::SlideStrict, shape.size1, shape.size2, shape.step1,
                        shape.step2, std::move(x));
  };
  return tileOverlapped(a, shape, slid->x, [&](Expr tile) {
    Expr produced = buildPixelStage(stage, tile);
    Expr pairs = map(lam("pairRow", [](Expr r) { return zip(get(0, r), get(1, r)); }),
                     zip(windowsOf(produced), windowsOf(tile)));
    return map(
        lam("windowRow",
            [&](Expr windowRow) {
              Expr both = Expr::param("windows");
              Expr body = substituteParams(consumerBody, {{pw, get(0, both)}, {rw, get(1, both)}});
              return map(Expr::lambda({both}, body), std::move(windowRow));
            }),
        std::move(pairs));
  });
}

bool isParallel(const Expr& e) {
  return e.isPrim(Op::MapGlb) || e.isPrim(Op::MapWrg) || e.isPrim(Op::MapLcl);
}
bool isSequentialOp(const Expr& e) {
  return e.isPrim(Op::MapSeq) || e.isPrim(Op::MapSeqUnroll) || e.isPrim(Op::ReduceSeq) ||
         e.isPrim(Op::ReduceSeqUnroll) || e.isPrim(Op::Reduce);
}

// map(f, x) => toLocal(y -> map(f, y), x), where the map runs in work-group code: some
// enclosing function is a mapWrg's, none is a mapLcl's or a sequential loop's, and it computes
// (f is not a pure layout function) and holds no parallel map already.
// The primitives whose function encloses a computing map that compute-to-local/private may
// place (a map whose function is not a pure layout function and holds no parallel map),
// outermost first; nullopt when the node is not such a map or an enclosing toLocal, toPrivate
// or toGlobal has placed it already.
std::optional<std::vector<Expr>> placeableMapOwners(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || isLayoutFunction(node.funs()[0])) return std::nullopt;
  bool parallelInside = false;
  forEachNode(node.funs()[0],
              [&](const Expr& e) { parallelInside = parallelInside || isParallel(e); });
  if (parallelInside) return std::nullopt;
  std::vector<Expr> owners;
  for (size_t i = 0; i < a.ancestors.size(); ++i) {
    const Expr& ancestor = a.ancestors[i];
    const Expr& child = i + 1 < a.ancestors.size() ? a.ancestors[i + 1] : a.node;
    if (!ancestor.isPrim()) continue;
    if (ancestor.isPrim(Op::ToLocal) || ancestor.isPrim(Op::ToPrivate) ||
        ancestor.isPrim(Op::ToGlobal)) {
      return std::nullopt;  // already placed
    }
    bool inFunction = false;
    for (const Expr& fun : ancestor.funs()) inFunction = inFunction || fun.node() == child.node();
    if (inFunction) owners.push_back(ancestor);
  }
  return owners;
}

std::optional<Expr> computeToLocal(const RuleApplication& a) {
  const Expr& node = a.node;
  std::optional<std::vector<Expr>> owners = placeableMapOwners(a);
  if (!owners) return std::nullopt;
  bool inWorkGroup = false;
  for (const Expr& ancestor : *owners) {
    if (ancestor.isPrim(Op::MapWrg)) inWorkGroup = true;
    if (ancestor.isPrim(Op::MapLcl) || ancestor.isPrim(Op::MapGlb) || isSequentialOp(ancestor) ||
        ancestor.isPrim(Op::Map)) {
      return std::nullopt;
    }
  }
  if (!inWorkGroup) return std::nullopt;
  const Expr f = node.funs()[0];
  return toLocal(lam("localTile", [&](Expr y) { return map(f, std::move(y)); }), node.args()[0]);
}

// map(f, x) => toPrivate(y -> map(f, y), x), where the map runs directly in a work-item (the
// nearest enclosing function is a mapGlb's; no map, mapLcl, mapWrg or sequential loop in
// between), computes, holds no parallel map, and its result has constant size.
std::optional<Expr> computeToPrivate(const RuleApplication& a) {
  const Expr& node = a.node;
  std::optional<std::vector<Expr>> owners = placeableMapOwners(a);
  if (!owners) return std::nullopt;
  bool inWorkItem = false;
  for (const Expr& ancestor : *owners) {
    inWorkItem = ancestor.isPrim(Op::MapGlb);
    if (ancestor.isPrim(Op::MapLcl) || ancestor.isPrim(Op::MapWrg) || isSequentialOp(ancestor) ||
        ancestor.isPrim(Op::Map)) {
      return std::nullopt;
    }
  }
  if (!inWorkItem) return std::nullopt;
  // Private arrays have sizes known at compile time: constants, or tuning variables (a
  // parametric program is generated once its parameters are chosen).
  auto knownLength = [](const Arith& n) {
    for (const Arith& v : n.vars()) {
      if (v.varKind() != VarKind::Tuning) return false;
    }
    return true;
  };
  std::function<bool(const Type&)> constantSized = [&](const Type& t) {
    if (t.isArray()) return knownLength(t.arrayLength()) && constantSized(t.arrayElement());
    if (t.isTuple()) {
      for (const Type& e : t.tupleElements()) {
        if (!constantSized(e)) return false;
      }
    }
    return true;
  };
  if (!constantSized(a.typeOf(node))) return std::nullopt;
  const Expr f = node.funs()[0];
  return toPrivate(lam("privateTile", [&](Expr y) { return map(f, std::move(y)); }),
                   node.args()[0]);
}

}  // namespace

void addStencilFusionRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"let-inline",
                       "let(x -> b, e) => b[x := e]   [x used at most once in b]",
                       RuleFamily::Fusion,
                       {},
                       letInline});
  rules.push_back(Rule{"pad-map-interchange",
                       "pad(l, r, B) ∘ map(f) => map(f) ∘ pad(l, r, B)   [B clamp or mirror]",
                       RuleFamily::Fusion,
                       {},
                       padMapInterchange});
  rules.push_back(Rule{"pad2d-map2d-interchange",
                       "pad2D(l, r, t, b, B) ∘ map2D(f) => map2D(f) ∘ pad2D(l, r, t, b, B)   "
                       "[B clamp or mirror; also map(join) ∘ map2D(f) with f giving [T]1]",
                       RuleFamily::Fusion,
                       {},
                       pad2DMap2DInterchange});
  rules.push_back(Rule{"slide-map-fusion",
                       "slide(s, t) ∘ map(f) => map(map(f)) ∘ slide(s, t)   [also slideStrict; "
                       "f recomputed per window]",
                       RuleFamily::Fusion,
                       {},
                       slideMapFusion});
  rules.push_back(Rule{"slide2d-map2d-fusion",
                       "slide2D(s1, s2, t1, t2) ∘ map2D(f) => map2D(map2D(f)) ∘ slide2D(s1, s2, "
                       "t1, t2)   [also map(join) ∘ map2D(f) with f giving [T]1]",
                       RuleFamily::Fusion,
                       {},
                       slide2DMap2DFusion});
  rules.push_back(Rule{"overlapped-tiling-fusion",
                       "map2D(g) ∘ slide2D(s1, s2, t1, t2) ∘ map2D(f) => untile ∘ "
                       "map2D(map2D(g) ∘ slideStrict2D(s1, s2, t1, t2) ∘ map2D(f)) ∘ "
                       "slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - (s2 - t2))   [Forma "
                       "Algorithm 1: f computed per tile with its halo]",
                       RuleFamily::Tiling,
                       {"theta1", "theta2"},
                       overlappedTilingFusion});
  rules.push_back(Rule{"zip-map-fusion",
                       "map(f) ∘ zip(.., map(g) ∘ zip(ys), ..) => map(v -> f(.., g(ys of v), "
                       "..)) ∘ zip(..)   [every y among the other zipped arrays; g's value read "
                       "once]",
                       RuleFamily::Fusion,
                       {},
                       zipMapFusion});
  rules.push_back(Rule{"map2d-fusion",
                       "map2D(g) ∘ map2D(f) => map2D(g ∘ f)   [also the joined forms of g]",
                       RuleFamily::Fusion,
                       {},
                       map2DFusion});
  rules.push_back(Rule{"zip-centre-tap",
                       "zip2D(x, P(g, W)) then map2D(h) => P(w -> map(h, zip(centre(w), g(w))), "
                       "W)   [W centred windows ending at x: slide2D(s1, s2, 1, 1) ∘ pad2D(l, r, "
                       "t, b) with t + b = s1 - 1, l + r = s2 - 1, repeated]",
                       RuleFamily::Fusion,
                       {},
                       zipCentreTap});
  rules.push_back(Rule{"centre-tap-in-producer",
                       "zip2D(x, P(g, slide2D(s1, s2, 1, 1, pad2D(.., P(f, V))))) then "
                       "map2D(h) => P(w -> map(h, zip(centre(w)._1, g(map2D(_0, w)))), "
                       "slide2D(..)(pad2D(..)(P(v -> (f(v), centre(v)), V))))   [V centred "
                       "windows ending at x; the pad centred, B clamp or mirror]",
                       RuleFamily::Fusion,
                       {},
                       centreTapInProducer});
  rules.push_back(Rule{"overlapped-tiling-fusion-with-input",
                       "map2D(w -> B(P(f, w), w)) ∘ slide2D(s1, s2, t1, t2) => untile ∘ "
                       "map2D(tile -> map2D(B) ∘ zip2D(slideStrict2D(..)(P(f, tile)), "
                       "slideStrict2D(..)(tile))) ∘ slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - "
                       "(s2 - t2))   [the consumer also reads the producer's input window]",
                       RuleFamily::Tiling,
                       {"theta1", "theta2"},
                       overlappedTilingFusionWithInput});
  rules.push_back(Rule{"compute-to-local",
                       "map(f)(x) => toLocal(map(f))(x)   (in a mapWrg, outside mapLcl)",
                       RuleFamily::AddressSpace,
                       {},
                       computeToLocal});
  rules.push_back(Rule{"compute-to-private",
                       "map(f)(x) => toPrivate(map(f))(x)   (directly in a mapGlb; constant size)",
                       RuleFamily::AddressSpace,
                       {},
                       computeToPrivate});
}

}  // namespace weft::rewrite
