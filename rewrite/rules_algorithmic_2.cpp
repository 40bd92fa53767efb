// The second half of the algorithmic rules: partial reduction, map/reduce interchange, overlapped
// slide tiling in 1D and 2D, padding for tiling, vectorization (of a map over one array or over
// zipped arrays, such as a stencil row's taps, the latter also at lengths the width does not
// divide, by a clamped pad cropped off again) and reorder-with-stride.
//
// Each rule rewrites one node into an equal computation (checked against the interpreter by
// tests/rewrite/property_rules_algorithmic_2.cpp). Where equality needs a condition on sizes
// (divisibility, exact coverage of a strict slide) the rule emits a primitive whose type rule
// records that condition as a constraint (split, slideStrict, asVector, reorder), so a parametric
// result stays correct for every parameter value the constraint solver accepts. Conditions on the
// program itself (an associative operator, a row-independent initial value) are checked here, and
// the rule does not match when they fail. The rules follow LIFT (Steuwer et al., ICFP 2015:
// partial reduction, Map(Reduce) interchange, reorderBothSidesWithStride) and the direct
// convolution paper (sections 3.4.1 slide tiling and optimisation padding, 3.4.2 vectorization).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

namespace {

// The operator of a binary function whose body is `op(a, b)` or `op(b, a)` on its own two params,
// for op one of + * min max (associative; min and max also idempotent).
std::optional<Op> associativeOperator(const Expr& f) {
  if (!f.isFunction() || f.params().size() != 2) return std::nullopt;
  const Expr& body = f.body();
  if (!body.isPrim()) return std::nullopt;
  const Op op = body.primOp();
  if (op != Op::Add && op != Op::Mul && op != Op::Min && op != Op::Max) return std::nullopt;
  if (body.args().size() != 2) return std::nullopt;
  const Expr& a = f.params()[0];
  const Expr& b = f.params()[1];
  bool direct = isParamNode(body.args()[0], a) && isParamNode(body.args()[1], b);
  bool swapped = isParamNode(body.args()[0], b) && isParamNode(body.args()[1], a);
  if (!direct && !swapped) return std::nullopt;
  return op;
}

bool isLiteralValue(const Expr& e, double value) {
  if (!e.isLiteral()) return false;
  switch (e.literalKind()) {
    case ScalarKind::Float:
      return e.literalFloat() == value;
    case ScalarKind::Int:
      return static_cast<double>(e.literalInt()) == value;
    case ScalarKind::Bool:
      return false;
  }
  return false;
}

// A fresh lambda (a, b) -> op(a, b), so the rewritten program binds no param twice.
Expr freshOperatorLambda(Op op) {
  return lam2("acc", "x", [op](Expr acc, Expr x) {
    return Expr::prim(op, {}, {}, {std::move(acc), std::move(x)});
  });
}

// reduce(z, f, xs) => reduce(z, f, join(map(chunk -> reduce(z, f, chunk), split(n, xs))))
std::optional<Expr> partialReduce(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& f = node.funs()[0];
  const Expr& init = node.args()[0];
  const Expr& xs = node.args()[1];
  std::optional<Op> op = associativeOperator(f);
  if (!op) return std::nullopt;
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray() || !xsType.arrayElement().isScalar()) return std::nullopt;
  if (!(application.typeOf(init) == xsType.arrayElement())) return std::nullopt;
  // + and * need z to be their identity; min and max are idempotent, so any z works
  // (min(z, min(z, a), min(z, b)) = min(z, a, b)).
  if (*op == Op::Add && !isLiteralValue(init, 0.0)) return std::nullopt;
  if (*op == Op::Mul && !isLiteralValue(init, 1.0)) return std::nullopt;
  const Arith length = xsType.arrayLength();
  Arith n = application.factor(
      "n", [&](RewriteContext& context) { return context.freshTuning("omega", 1, length); });
  Expr partial =
      map(lam("chunk",
              [&](Expr chunk) { return reduce(init, freshOperatorLambda(*op), std::move(chunk)); }),
          split(n, xs));
  return reduce(init, freshOperatorLambda(*op), join(std::move(partial)));
}

// map(r -> reduce(z, g, r), xss) : [[U]1]m
//   => transpose(reduce(fill(m, z), (accs, col) -> map(p -> g(p._0, p._1), zip(accs, col)),
//                       transpose(xss)))
std::optional<Expr> mapReduceInterchange(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!f.isLambda() || f.params().size() != 1) return std::nullopt;
  const Expr& row = f.params()[0];
  const Expr& body = f.body();
  if (!body.isPrim(Op::Reduce) || !isParamNode(body.args()[1], row)) return std::nullopt;
  const Expr& g = body.funs()[0];
  const Expr& init = body.args()[0];
  if (mentionsParam(init, row) || mentionsParam(g, row)) return std::nullopt;
  const Expr& xss = node.args()[0];
  const Type xssType = application.typeOf(xss);
  if (!xssType.isArray() || !xssType.arrayElement().isArray()) return std::nullopt;
  const Arith rows = xssType.arrayLength();
  Expr step = lam2("accs", "column", [&](Expr accs, Expr column) {
    return map(lam("pair",
                   [&](Expr pair) {
                     return apply(g, {get(0, pair), get(1, pair)});
                   }),
               zip(std::move(accs), std::move(column)));
  });
  return transpose(reduce(fill(rows, init), step, transpose(xss)));
}

// The slide2D expansion map(w -> transpose(w), slide(s1, t1, map(r -> slide(s2, t2, r), x)))
// built from one slide primitive (slide or slideStrict).
Expr slide2DWith(Op slideOp, Arith size1, Arith size2, Arith step1, Arith step2, Expr x) {
  Expr rows = map(lam("row",
                      [&](Expr row) {
                        return Expr::prim(slideOp, {size2, step2}, {}, {std::move(row)});
                      }),
                  std::move(x));
  Expr slid = Expr::prim(slideOp, {size1, step1}, {}, {std::move(rows)});
  return map(lam("window", [](Expr window) { return transpose(std::move(window)); }),
             std::move(slid));
}

// slide(size, step, xs)
//   => join(map(tile -> slideStrict(size, step, tile),
//               slideStrict(θ, θ - (size - step), xs)))
std::optional<Expr> slideTiling(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Slide) && !node.isPrim(Op::SlideStrict)) return std::nullopt;
  const Arith size = node.nats()[0];
  const Arith step = node.nats()[1];
  const Expr& xs = node.args()[0];
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray()) return std::nullopt;
  const Arith length = xsType.arrayLength();
  Arith theta = application.factor(
      "theta", [&](RewriteContext& context) { return context.freshTuning("theta", size, length); });
  Expr tiles = slideStrict(theta, theta - (size - step), xs);
  return join(map(lam("tile", [&](Expr tile) { return slideStrict(size, step, std::move(tile)); }),
                  std::move(tiles)));
}

// slide2D(s1, s2, t1, t2, x) (its expansion)
//   => join(map(tileRow -> map(tile -> join(tile), transpose(tileRow)),
//               map2D(tile -> slideStrict2D(s1, s2, t1, t2, tile),
//                     slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - (s2 - t2), x))))
std::optional<Expr> slideTiling2D(const RuleApplication& application) {
  const Expr& node = application.node;
  // map(window -> transpose(window), slide(s1, t1, map(row -> slide(s2, t2, row), x)))
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& outerFun = node.funs()[0];
  if (!outerFun.isLambda() || outerFun.params().size() != 1) return std::nullopt;
  if (!outerFun.body().isPrim(Op::Transpose) ||
      !isParamNode(outerFun.body().args()[0], outerFun.params()[0])) {
    return std::nullopt;
  }
  const Expr& slid = node.args()[0];
  if (!slid.isPrim(Op::Slide) && !slid.isPrim(Op::SlideStrict)) return std::nullopt;
  const Expr& rows = slid.args()[0];
  if (!rows.isPrim(Op::Map)) return std::nullopt;
  const Expr& rowFun = rows.funs()[0];
  if (!rowFun.isLambda() || rowFun.params().size() != 1) return std::nullopt;
  const Expr& rowSlide = rowFun.body();
  if ((!rowSlide.isPrim(Op::Slide) && !rowSlide.isPrim(Op::SlideStrict)) ||
      !isParamNode(rowSlide.args()[0], rowFun.params()[0])) {
    return std::nullopt;
  }
  const Arith size1 = slid.nats()[0];
  const Arith step1 = slid.nats()[1];
  const Arith size2 = rowSlide.nats()[0];
  const Arith step2 = rowSlide.nats()[1];
  const Expr& x = rows.args()[0];
  const Type xType = application.typeOf(x);
  if (!xType.isArray() || !xType.arrayElement().isArray()) return std::nullopt;
  const Arith height = xType.arrayLength();
  const Arith width = xType.arrayElement().arrayLength();
  Arith theta1 = application.factor("theta1", [&](RewriteContext& context) {
    return context.freshTuning("theta", size1, height);
  });
  Arith theta2 = application.factor("theta2", [&](RewriteContext& context) {
    return context.freshTuning("theta", size2, width);
  });
  Expr tiles = slide2DWith(Op::SlideStrict, theta1, theta2, theta1 - (size1 - step1),
                           theta2 - (size2 - step2), x);
  // [[ [[window]w2]w1 ]tiles2]tiles1: the windows of each tile.
  Expr windowsPerTile =
      map2D(lam("tile",
                [&](Expr tile) {
                  return slide2DWith(Op::SlideStrict, size1, size2, step1, step2, std::move(tile));
                }),
            std::move(tiles));
  // Row of tiles a: [[[[window]w2]w1]]tiles2 indexed [b][i][j] -> [i][b*w2 + j]; then join
  // over a gives [a*w1 + i][b*w2 + j].
  return join(map(lam("tileRow",
                      [](Expr tileRow) {
                        return map(lam("windowRow", [](Expr windowRow) { return join(windowRow); }),
                                   transpose(std::move(tileRow)));
                      }),
                  std::move(windowsPerTile)));
}

// map(f, xs) => crop(0, ρ, map(f, pad(0, ρ, clamp, xs)))
// slide(size, step, xs) => crop(0, ρ, slide(size, step, pad(0, ρ·step, clamp, xs)))
std::optional<Expr> padForTiling(const RuleApplication& application) {
  const Expr& node = application.node;
  const bool isMap = node.isPrim(Op::Map);
  const bool isSlide = node.isPrim(Op::Slide);
  if (!isMap && !isSlide) return std::nullopt;
  const Expr& xs = node.args()[0];
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray()) return std::nullopt;
  const Arith length = xsType.arrayLength();
  Arith rho = application.factor(
      "rho", [&](RewriteContext& context) { return context.freshTuning("rho", 0, length); });
  if (isMap) {
    return crop(0, rho, map(node.funs()[0], pad(0, rho, Boundary::Clamp, xs)));
  }
  const Arith size = node.nats()[0];
  const Arith step = node.nats()[1];
  return crop(0, rho, slide(size, step, pad(0, rho * step, Boundary::Clamp, xs)));
}

// map(f, xs) => asScalar(map(x -> vectorize(v, f, x), asVector(v, xs)))
std::optional<Expr> vectorizeMap(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!f.isFunction() || f.params().size() != 1) return std::nullopt;
  const std::optional<int64_t> width = givenVectorWidth(application);
  if (!width) return std::nullopt;
  const Expr& xs = node.args()[0];
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray() || !xsType.arrayElement().isScalar()) return std::nullopt;
  const Type resultType = application.typeOf(f);
  auto numeric = [](const Type& t) { return t.isScalar() && t.scalarKind() != ScalarKind::Bool; };
  if (!numeric(xsType.arrayElement()) || !numeric(resultType)) return std::nullopt;
  if (!mayHoldVectors(xsType.arrayLength(), *width)) return std::nullopt;
  const Arith v(*width);
  return asScalar(map(lam("lanes", [&](Expr lanes) { return vectorize(v, f, {std::move(lanes)}); }),
                      asVector(v, xs)));
}

// map(f, zip(x0, .., xn)) => asScalar(map(l -> vectorize(v, f', l._0, .., l._n),
//                                          zip(asVector(v, x0), .., asVector(v, xn))))
// for zipped arrays of numbers and f giving a number from the tuple's components only
// (projections t._i, each a constant i): f' = (a0, .., an) -> f with t._i := ai, applied lane
// by lane. A stencil's taps written as zip(crop(0, n - 1, row), crop(1, n - 2, row), ..)
// become n overlapping vector reads of the row.
// With `padded` (vectorize-zip-padded), arrays of any length N: each xi is first extended by
// ρ = v·⌈N/v⌉ − N clamped elements, pad(0, ρ, clamp, xi), and the result cropped back,
// crop(0, ρ, asScalar(..)): elements below N are f of the same components as before (a pad
// leaves them alone), the ρ extra lanes compute f of repeated last elements and are dropped.
// The last vector's reads are clamped (code generation reads it lane by lane at the end, one
// vector load elsewhere) and its stores guarded.
std::optional<Expr> vectorizedZipMap(const RuleApplication& application, bool padded) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!isUnaryLambda(f)) return std::nullopt;
  const std::optional<int64_t> width = givenVectorWidth(application);
  if (!width) return std::nullopt;
  auto numeric = [](const Type& t) { return t.isScalar() && t.scalarKind() != ScalarKind::Bool; };
  if (!numeric(application.typeOf(f))) return std::nullopt;
  const std::vector<Expr>& xs = node.args()[0].args();
  if (xs.size() < 2) return std::nullopt;  // the element of a zip of one array is no tuple
  for (const Expr& x : xs) {
    const Type type = application.typeOf(x);
    if (!type.isArray() || !numeric(type.arrayElement())) return std::nullopt;
    if (!padded && !mayHoldVectors(type.arrayLength(), *width)) return std::nullopt;
    // Padding an array shorter than one vector (a window's one-element taps) only adds lanes.
    if (padded && proveLess(type.arrayLength(), Arith(*width))) return std::nullopt;
  }
  // The tuple is read through constant projections only.
  const Expr& t = f.params()[0];
  int projections = 0;
  bool constantIndices = true;
  forEachNode(f.body(), [&](const Expr& e) {
    if (!e.isPrim(Op::Get) || !isParamNode(e.args()[0], t)) return;
    ++projections;
    std::optional<int64_t> i = e.nats()[0].constant();
    constantIndices = constantIndices && i && *i >= 0 && *i < static_cast<int64_t>(xs.size());
  });
  if (!constantIndices || projections != paramUses(f.body(), t)) return std::nullopt;
  std::vector<Expr> lanes;
  for (size_t i = 0; i < xs.size(); ++i) lanes.push_back(Expr::param("a" + std::to_string(i)));
  const Expr laneFunction = Expr::lambda(lanes, appliedToComponents(f, lanes));
  const Arith v(*width);
  const Arith length = application.typeOf(xs.front()).arrayLength();
  const Arith rho = v * ceilDiv(length, v) - length;
  std::vector<Expr> vectors;
  for (const Expr& x : xs) {
    vectors.push_back(asVector(v, padded ? pad(0, rho, Boundary::Clamp, x) : x));
  }
  Expr result = asScalar(map(lam("lanes",
                                 [&](Expr l) {
                                   std::vector<Expr> components;
                                   for (size_t i = 0; i < xs.size(); ++i) {
                                     components.push_back(get(Arith(static_cast<int64_t>(i)), l));
                                   }
                                   return vectorize(v, laneFunction, std::move(components));
                                 }),
                             zip(std::move(vectors))));
  return padded ? crop(0, rho, std::move(result)) : result;
}

std::optional<Expr> vectorizeZipMap(const RuleApplication& application) {
  return vectorizedZipMap(application, /*padded=*/false);
}

std::optional<Expr> vectorizeZipPaddedMap(const RuleApplication& application) {
  return vectorizedZipMap(application, /*padded=*/true);
}

// map(f, xs) => reorder(stride(n/s), map(f, reorder(stride(s), xs)))   for s | n
std::optional<Expr> reorderWithStride(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& xs = node.args()[0];
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray()) return std::nullopt;
  const Arith length = xsType.arrayLength();
  Arith s = application.factor(
      "s", [&](RewriteContext& context) { return context.freshTuning("stride", 1, length); });
  return reorderStride(length / s, map(node.funs()[0], reorderStride(s, xs)));
}

}  // namespace

void addAlgorithmicRules2(std::vector<Rule>& rules) {
  rules.push_back(Rule{"partial-reduce",
                       "reduce(z, f) => reduce(z, f) ∘ join ∘ map(reduce(z, f)) ∘ split(n)   "
                       "[f = + or * with z its identity literal, or f = min or max]",
                       RuleFamily::Reduction,
                       {"n"},
                       partialReduce});
  rules.push_back(
      Rule{"map-reduce-interchange",
           "map(reduce(z, f)) => transpose ∘ reduce(fill(m, z), map(f) ∘ zip) ∘ transpose   "
           "[z and f independent of the row]",
           RuleFamily::Reduction,
           {},
           mapReduceInterchange});
  rules.push_back(Rule{"slide-tiling",
                       "slide(size, step) => join ∘ map(slideStrict(size, step)) ∘ "
                       "slideStrict(θ, θ - (size - step))",
                       RuleFamily::Tiling,
                       {"theta"},
                       slideTiling});
  rules.push_back(Rule{"slide-tiling-2d",
                       "slide2D(s1, s2, t1, t2) => join ∘ map(map(join) ∘ transpose) ∘ "
                       "map2D(slideStrict2D(s1, s2, t1, t2)) ∘ "
                       "slideStrict2D(θ1, θ2, θ1 - (s1 - t1), θ2 - (s2 - t2))",
                       RuleFamily::Tiling,
                       {"theta1", "theta2"},
                       slideTiling2D});
  rules.push_back(
      Rule{"pad-for-tiling",
           "map(f) => crop(0, ρ) ∘ map(f) ∘ pad(0, ρ, clamp); "
           "slide(size, step) => crop(0, ρ) ∘ slide(size, step) ∘ pad(0, ρ·step, clamp)",
           RuleFamily::Tiling,
           {"rho"},
           padForTiling});
  rules.push_back(Rule{"vectorize",
                       "map(f) => asScalar ∘ map(vectorize(v, f)) ∘ asVector(v)   "
                       "[f scalar -> scalar, v given, in {2, 3, 4, 8, 16}]",
                       RuleFamily::Vectorization,
                       {"v"},
                       vectorizeMap});
  rules.push_back(Rule{"vectorize-zip",
                       "map(f) ∘ zip(x0, .., xn) => asScalar ∘ map(l -> vectorize(v, f', l._0, "
                       ".., l._n)) ∘ zip(asVector(v, x0), .., asVector(v, xn))   [numbers; f "
                       "reads the tuple's components only; v given]",
                       RuleFamily::Vectorization,
                       {"v"},
                       vectorizeZipMap});
  rules.push_back(Rule{"vectorize-zip-padded",
                       "map(f) ∘ zip(x0, .., xn) => crop(0, ρ) ∘ asScalar ∘ map(l -> "
                       "vectorize(v, f', l._0, .., l._n)) ∘ zip(asVector(v) ∘ pad(0, ρ, clamp, "
                       "x0), ..)   [as vectorize-zip, any length n: ρ = v·⌈n/v⌉ − n]",
                       RuleFamily::Vectorization,
                       {"v"},
                       vectorizeZipPaddedMap});
  rules.push_back(Rule{"reorder-with-stride",
                       "map(f) => reorder(stride(n/s)) ∘ map(f) ∘ reorder(stride(s))   [s | n]",
                       RuleFamily::Coalescing,
                       {"s"},
                       reorderWithStride});
}

}  // namespace weft::rewrite
