// Stencils as shifted rows: a stencil whose window function reads single taps of its window
// (the taps idiom, zip(crop(0, n - 1, w), .., crop(n - 1, 0, w)), and the centre-tap picks of
// the fusion rules) computes, along a row, the same as that function applied once to the row's
// shifted copies. Then a row of the stencil is one map over zipped crops of whole rows, which
// vectorize-zip turns into overlapping vector reads, and a vertical stencil reads whole rows of
// its window, which a sliding window keeps (line buffering along rows, as Halide's CPU
// schedules compute blurs).
//
//  window-taps-as-shifted-rows
//    map(f, S(n, 1, r))                       => split(1, F(r))
//    map2D(f, slide2D(s1, s2, 1, 1, y))       => map(rows -> split(1, F(rows)), S(s1, 1, y))
//    map(row -> join(map(f, row)), slide2D(..)) and map(row -> join(row), map2D(f, slide2D(..)))
//                                             => map(rows -> F(rows), S(s1, 1, y))
//   S: slide or slideStrict (the same as the original's outer slide), steps 1, sizes constant;
//   f = w -> E(w), E built only from taps of the window w, zip and map(g, ·) with g not
//   mentioning w, so that E(w) is a one-element array. A tap is one element of the window:
//     1-D window [T]n:         crop(a, b, w)                                   (a + b + 1 = n)
//     2-D window [[T]s2]s1:    crop(a, b, join(w))    element (a / s2, a % s2)  (a + b + 1 = s1·s2)
//                              join(map(t -> crop(c, d, t), crop(a, b, w)))  element (a, c)
//   or, in the crop forms, one of the window's elements mapped by h: crop(a, b, map(h, w)),
//   crop(a, b, join(map2D(h, w))) (h not mentioning w). A let binding a view of the window
//   (let(v -> B, join(w)), the taps idiom's form) is read as B with v replaced by that view.
//   F replaces each tap by the row of all windows' taps: crop(a, b, r) for a 1-D window;
//   crop(j, s2 - 1 - j, join(crop(i, s1 - 1 - i, rows))) for element (i, j) of a 2-D window,
//   rows being the s1 rows the windows of one output row span; a mapped tap by map(h) of it.
//
// Why it holds (the interpreter is the reference, ir/interp.cpp): window k of slide(n, 1, r) is
// r[k .. k + n - 1], so its tap a is r[k + a], which is element k of crop(a, n - 1 - a, r): a
// tap of every window along the row is the crop. zip and map(g, ·) act element by element on
// equally long arrays, so applying them to the one-element taps of window k gives element k of
// applying them to the crops; a crop of a mapped window is the map of the crop. A 2-D window's
// rows are rows i .. i + s1 - 1 of y (element (i, j) of window (k, l) is y[k + i][l + j]): tap
// (i, j) of the windows of output row k is the crop of row i of the k-th window of
// S(s1, 1, y). The results keep the original's shapes: split(1) gives each window's
// one-element array back, and a joined stage drops it. slideStrict of step 1 covers any input
// exactly, so S(s1, 1, y) has the original's output rows. Checked against the interpreter on
// random stencils by tests/rewrite/property_rules_stencil_rows.cpp.
//
//  pad2d-one-axis   pad2D(0, 0, t, b, B, x) => pad(t, b, B, x)
//                   pad2D(l, r, 0, 0, B, x) => map(row -> pad(l, r, B, row), x)
//   A 2-D pad along one axis is a pad of the rows or of each row (a pad of width 0 is the
//   identity, and transpose ∘ map(pad) ∘ transpose pads the outer dimension): the rows a
//   stencil over whole rows reads, and the form pad-map-interchange and the vector reads of
//   clamped rows take.
//
//  zip-map-flatten   map(f, zip(x0, .., map(g, zip(y0, .., ym)), .., xn))
//                      => map(t -> f((t._0, .., g((t._i, .., t._(i+m))), ..)),
//                             zip(x0, .., y0, .., ym, .., xn))
//   A zipped array computed element by element from zipped arrays of the same length is
//   computed inside the outer map instead (element k of the map is g of the ys' elements k):
//   one element function over all the rows, which vectorize-zip turns into one lane function
//   (a row of the unsharp mask: the blur of five ring rows and the sharpening together). g is
//   evaluated where f reads its component (twice if f reads it twice).
//  window-rows-inline
//    map(x -> C(x), S(n, t, map(P, z)))
//      => map(w -> C[join(crop(i, n - 1 - i, x)) := P(join(crop(i, n - 1 - i, w)))], S(n, t, z))
//   S: slide or slideStrict, n constant; C reads its window x only by whole elements,
//   join(crop(i, n - 1 - i, x)) (element i of a window of arrays; also under crop(0, 0, .)), and
//   z's elements are arrays. The producer P is recomputed for every element of every window
//   that reads it (Halide's compute_inline of a stage over rows), a fresh copy per read, so
//   that zip-map-flatten and vectorize-zip see its map beside the consumer's: no producer row
//   is stored. Why it holds: window k of S(n, t, map(P, z)) is map(P, window k of S(n, t, z))
//   (a slide takes elements, which map computes one by one), and element i of map(P, w) is
//   P of element i of w; crop(i, n - 1 - i, .) is the one-element array holding element i, and
//   join of a one-element array of arrays is that array.
#include <functional>
#include <optional>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// The window's shape: s1 rows of s2 (a 1-D window is one row of n that is not nested).
struct WindowShape {
  int64_t rows = 1, columns = 1;
  bool oneDimensional = false;
};

// One tap: element (i, j) of the window, read through `g` when the window's elements are
// mapped by g before the pick (crop(a, b, join(map2D(g, w))), crop(a, b, map(g, w))).
struct Tap {
  int64_t i = 0, j = 0;
  std::optional<Expr> g;
};

// `x` is the window w, or map(g, w) (1-D) / map2D(g, w) (2-D) with g not mentioning w: sets
// `g` and returns true.
bool isWindowOrMapped(const Expr& x, const Expr& w, bool oneDimensional, std::optional<Expr>& g) {
  if (isParamNode(x, w)) return true;
  if (!x.isPrim(Op::Map) || !isParamNode(x.args()[0], w) || mentionsParam(x.funs()[0], w)) {
    return false;
  }
  if (oneDimensional) {
    g = x.funs()[0];
    return true;
  }
  std::optional<Expr> element = rowMapElement(x.funs()[0]);
  if (!element) return false;
  g = *element;
  return true;
}

// The tap `e` reads from the window `w`, or nullopt when it is not one element of it.
std::optional<Tap> tapOf(const Expr& e, const Expr& w, const WindowShape& shape) {
  if (e.isPrim(Op::Crop)) {
    const std::optional<int64_t> a = e.nats()[0].constant(), b = e.nats()[1].constant();
    if (!a || !b || *a < 0 || *b < 0) return std::nullopt;
    const Expr& x = e.args()[0];
    Tap tap;
    if (shape.oneDimensional) {
      if (!isWindowOrMapped(x, w, true, tap.g) || *a + *b + 1 != shape.columns) {
        return std::nullopt;
      }
      tap.j = *a;
      return tap;
    }
    // crop(a, b, join(w)): the window's elements row by row.
    if (!x.isPrim(Op::Join) || !isWindowOrMapped(x.args()[0], w, false, tap.g)) {
      return std::nullopt;
    }
    if (*a + *b + 1 != shape.rows * shape.columns) return std::nullopt;
    tap.i = *a / shape.columns;
    tap.j = *a % shape.columns;
    return tap;
  }
  // join(map(t -> crop(c, d, t), crop(a, b, w))): row a, column c.
  if (shape.oneDimensional || !e.isPrim(Op::Join)) return std::nullopt;
  const Expr& picked = e.args()[0];
  if (!picked.isPrim(Op::Map) || !isUnaryLambda(picked.funs()[0])) return std::nullopt;
  const Expr& column = picked.funs()[0];
  const Expr& columnCrop = column.body();
  if (!columnCrop.isPrim(Op::Crop) || !isParamNode(columnCrop.args()[0], column.params()[0])) {
    return std::nullopt;
  }
  const Expr& rowCrop = picked.args()[0];
  if (!rowCrop.isPrim(Op::Crop) || !isParamNode(rowCrop.args()[0], w)) return std::nullopt;
  const std::optional<int64_t> a = rowCrop.nats()[0].constant(), b = rowCrop.nats()[1].constant();
  const std::optional<int64_t> c = columnCrop.nats()[0].constant(),
                               d = columnCrop.nats()[1].constant();
  if (!a || !b || !c || !d || *a < 0 || *b < 0 || *c < 0 || *d < 0) return std::nullopt;
  if (*a + *b + 1 != shape.rows || *c + *d + 1 != shape.columns) return std::nullopt;
  return Tap{*a, *c, std::nullopt};
}

// E(w) with every tap replaced by the row of all windows' taps (`rowOf(i)` is row i of the
// windows' rows), or nullopt when E reads w other than through taps.
std::optional<Expr> lifted(const Expr& e, const Expr& w, const WindowShape& shape,
                           const std::function<Expr(int64_t)>& rowOf) {
  if (std::optional<Tap> tap = tapOf(e, w, shape)) {
    Expr row = crop(Arith(tap->j), Arith(shape.columns - 1 - tap->j), rowOf(tap->i));
    return tap->g ? map(*tap->g, std::move(row)) : row;
  }
  if (e.isPrim(Op::Zip)) {
    std::vector<Expr> arrays;
    for (const Expr& x : e.args()) {
      std::optional<Expr> l = lifted(x, w, shape, rowOf);
      if (!l) return std::nullopt;
      arrays.push_back(std::move(*l));
    }
    return zip(std::move(arrays));
  }
  if (e.isPrim(Op::Map) && !mentionsParam(e.funs()[0], w)) {
    std::optional<Expr> l = lifted(e.args()[0], w, shape, rowOf);
    if (!l) return std::nullopt;
    return map(e.funs()[0], std::move(*l));
  }
  // let(v -> B, x) with x a view of the window (the taps idiom binds join(w) once): B with v
  // replaced by x, whose taps are then the window's.
  if (e.isPrim(Op::Let) && isUnaryLambda(e.funs()[0]) && mentionsParam(e.args()[0], w)) {
    const Expr& f = e.funs()[0];
    return lifted(substituteParams(f.body(), {{f.params()[0], e.args()[0]}}), w, shape, rowOf);
  }
  return std::nullopt;
}

// The size of the slide or slideStrict `e` with step 1 and a constant size.
std::optional<int64_t> unitStepSlideSize(const Expr& e) {
  if (!e.isPrim(Op::Slide) && !e.isPrim(Op::SlideStrict)) return std::nullopt;
  const std::optional<int64_t> size = e.nats()[0].constant();
  if (!size || *size < 1 || e.nats()[1].constant() != 1) return std::nullopt;
  return size;
}

std::optional<Expr> windowTapsAsShiftedRows(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  // 1-D: map(f, S(n, 1, r)).
  if (std::optional<int64_t> size = unitStepSlideSize(node.args()[0])) {
    const Expr& f = node.funs()[0];
    if (!isUnaryLambda(f)) return std::nullopt;
    const Expr& r = node.args()[0].args()[0];
    const WindowShape shape{1, *size, true};
    std::optional<Expr> row =
        lifted(f.body(), f.params()[0], shape, [&](int64_t) { return r; });
    if (!row) return std::nullopt;
    return split(Arith(1), std::move(*row));
  }
  // 2-D: a per-pixel stage over slide2D windows of step 1.
  std::optional<PixelStage> stage = matchPixelStage(node, application.typeOf);
  if (!stage || !isUnaryLambda(stage->f)) return std::nullopt;
  std::optional<Slide2DExpansion> windows = matchSlide2D(stage->x);
  if (!windows || windows->step1.constant() != 1 || windows->step2.constant() != 1) {
    return std::nullopt;
  }
  const std::optional<int64_t> s1 = windows->size1.constant(), s2 = windows->size2.constant();
  if (!s1 || !s2 || *s1 < 1 || *s2 < 1) return std::nullopt;
  const WindowShape shape{*s1, *s2, false};
  const Expr& w = stage->f.params()[0];
  const Expr& body = stage->f.body();
  // The function of the s1 rows the windows of one output row span.
  const Expr rows = Expr::param("rows");
  std::optional<Expr> row = lifted(body, w, shape, [&](int64_t i) {
    return join(crop(Arith(i), Arith(*s1 - 1 - i), rows));
  });
  if (!row) return std::nullopt;
  Expr rowFunction =
      Expr::lambda({rows}, stage->joined ? std::move(*row) : split(Arith(1), std::move(*row)));
  return map(std::move(rowFunction),
             Expr::prim(windows->outerOp, {windows->size1, Arith(1)}, {}, {windows->x}));
}

// pad2D(0, 0, t, b, B, x) => pad(t, b, B, x);  pad2D(l, r, 0, 0, B, x) => map(row -> pad(l, r,
// B, row), x): a 2-D pad along one axis only (the other pad is of width 0, an identity).
std::optional<Expr> pad2DOneAxis(const RuleApplication& application) {
  std::optional<Pad2DExpansion> p = matchPad2DExpansion(application.node);
  if (!p) return std::nullopt;
  auto zero = [](const Arith& a) { return a.constant() == 0; };
  if (zero(p->left) && zero(p->right)) return pad(p->top, p->bottom, p->columnBoundary, p->x);
  if (zero(p->top) && zero(p->bottom)) {
    return map(lam("row", [&](Expr row) { return pad(p->left, p->right, p->rowBoundary, row); }),
               p->x);
  }
  return std::nullopt;
}

// map(f, zip(x0, .., map(g, zip(y0, .., ym)), .., xn))
//   => map(t -> f((t._0, .., g((t._i, .., t._(i+m))), .., t._(n+m))),
//          zip(x0, .., y0, .., ym, .., xn))
// at the first component that is a map over a zip (g a one-parameter lambda).
std::optional<Expr> zipMapFlatten(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!isUnaryLambda(f)) return std::nullopt;
  const std::vector<Expr>& xs = node.args()[0].args();
  if (xs.size() < 2) return std::nullopt;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Expr& inner = xs[i];
    if (!inner.isPrim(Op::Map) || !inner.args()[0].isPrim(Op::Zip) ||
        !isUnaryLambda(inner.funs()[0]) || inner.args()[0].args().size() < 2) {
      continue;
    }
    const Expr& g = inner.funs()[0];
    const std::vector<Expr>& ys = inner.args()[0].args();
    std::vector<Expr> arrays(xs.begin(), xs.begin() + static_cast<long>(i));
    arrays.insert(arrays.end(), ys.begin(), ys.end());
    arrays.insert(arrays.end(), xs.begin() + static_cast<long>(i) + 1, xs.end());
    const int64_t shift = static_cast<int64_t>(ys.size()) - 1;
    return map(lam("t",
                   [&](Expr t) {
                     std::vector<Expr> components;
                     for (size_t k = 0; k < xs.size(); ++k) {
                       const int64_t index = static_cast<int64_t>(k);
                       if (k < i) {
                         components.push_back(get(Arith(index), t));
                       } else if (k > i) {
                         components.push_back(get(Arith(index + shift), t));
                       } else {
                         std::vector<Expr> inputs;
                         for (size_t j = 0; j < ys.size(); ++j) {
                           inputs.push_back(get(Arith(index + static_cast<int64_t>(j)), t));
                         }
                         components.push_back(appliedToComponents(g, inputs));
                       }
                     }
                     return appliedToComponents(f, components);
                   }),
               zip(std::move(arrays)));
  }
  return std::nullopt;
}

// `e` with every read of element i of the window `x` (join(crop(i, n - 1 - i, x)), or that
// under crop(0, 0, .)) replaced by `element(i)`; nullopt when `e` reads x any other way.
std::optional<Expr> withWindowElementsReplaced(const Expr& e, const Expr& x, int64_t n,
                                               const std::function<Expr(int64_t)>& element) {
  auto elementIndex = [&](const Expr& read) -> std::optional<int64_t> {
    if (!read.isPrim(Op::Join) || !read.args()[0].isPrim(Op::Crop)) return std::nullopt;
    const Expr& picked = read.args()[0];
    const std::optional<int64_t> a = picked.nats()[0].constant(), b = picked.nats()[1].constant();
    if (!a || !b || *a < 0 || *b < 0 || *a + *b + 1 != n) return std::nullopt;
    if (!isParamNode(picked.args()[0], x)) return std::nullopt;
    return *a;
  };
  if (e.isPrim(Op::Crop) && e.nats()[0].constant() == 0 && e.nats()[1].constant() == 0) {
    if (std::optional<int64_t> i = elementIndex(e.args()[0])) return element(*i);
  }
  if (std::optional<int64_t> i = elementIndex(e)) return element(*i);
  if (isParamNode(e, x)) return std::nullopt;
  if (e.isLambda()) {
    std::optional<Expr> body = withWindowElementsReplaced(e.body(), x, n, element);
    if (!body) return std::nullopt;
    return e.withBody(std::move(*body));
  }
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) {
    std::optional<Expr> g = withWindowElementsReplaced(f, x, n, element);
    if (!g) return std::nullopt;
    funs.push_back(std::move(*g));
  }
  for (const Expr& arg : e.args()) {
    std::optional<Expr> y = withWindowElementsReplaced(arg, x, n, element);
    if (!y) return std::nullopt;
    args.push_back(std::move(*y));
  }
  return e.withChildren(e.nats(), funs, args);
}

// map(x -> C(x), S(n, t, map(P, z))) => map(w -> C[element i of x := P(element i of w)],
// S(n, t, z)), a fresh copy of P per read.
std::optional<Expr> windowRowsInline(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& windows = node.args()[0];
  if (!windows.isPrim(Op::Slide) && !windows.isPrim(Op::SlideStrict)) return std::nullopt;
  const std::optional<int64_t> n = windows.nats()[0].constant();
  const Expr& produced = windows.args()[0];
  if (!n || !produced.isPrim(Op::Map) || !isUnaryLambda(produced.funs()[0])) return std::nullopt;
  const Expr& z = produced.args()[0];
  const Type zType = application.typeOf(z);
  if (!zType.isArray() || !zType.arrayElement().isArray()) return std::nullopt;
  const Expr& consumer = node.funs()[0];
  const Expr& x = consumer.params()[0];
  const Expr& producer = produced.funs()[0];
  if (!mentionsParam(consumer.body(), x)) return std::nullopt;
  std::optional<Expr> result;
  Expr function = lam("window", [&](Expr w) {
    result = withWindowElementsReplaced(consumer.body(), x, *n, [&](int64_t i) {
      const Expr copy = withFreshBinders(producer);
      // The argument is a view of the window (nothing computed), so it may be read many times.
      return substituteParams(copy.body(),
                              {{copy.params()[0], join(crop(Arith(i), Arith(*n - 1 - i), w))}});
    });
    return result ? *result : w;
  });
  if (!result) return std::nullopt;
  return map(std::move(function), windows.withChildren(windows.nats(), {}, {z}));
}

}  // namespace

void addStencilRowRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{
      "window-taps-as-shifted-rows",
      "map(f) ∘ slide(n, 1) => split(1) ∘ F;  map2D(f) ∘ slide2D(s1, s2, 1, 1) => map(rows -> "
      "split(1, F(rows))) ∘ slide(s1, 1)   [f reads its window through single taps, zip and "
      "map only; F: each tap replaced by the crop of the row holding it for every window; a "
      "joined stage without the split]",
      RuleFamily::Fusion,
      {},
      windowTapsAsShiftedRows});
  rules.push_back(Rule{"pad2d-one-axis",
                       "pad2D(0, 0, t, b, B) => pad(t, b, B);  pad2D(l, r, 0, 0, B) => map(pad(l, "
                       "r, B))",
                       RuleFamily::Simplification,
                       {},
                       pad2DOneAxis});
  rules.push_back(Rule{"window-rows-inline",
                       "map(x -> C(x)) ∘ S(n, t) ∘ map(P) => map(w -> C[join(crop(i, n-1-i, x)) "
                       ":= P(join(crop(i, n-1-i, w)))]) ∘ S(n, t)   [S slide or slideStrict; C "
                       "reads its window only by whole elements; P recomputed per read]",
                       RuleFamily::Fusion,
                       {},
                       windowRowsInline});
  rules.push_back(Rule{"zip-map-flatten",
                       "map(f) ∘ zip(.., map(g) ∘ zip(y0, .., ym), ..) => map(t -> f(.., g(t._i, "
                       ".., t._(i+m)), ..)) ∘ zip(.., y0, .., ym, ..)",
                       RuleFamily::Fusion,
                       {},
                       zipMapFlatten});
}

}  // namespace weft::rewrite
