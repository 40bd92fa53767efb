// The interchange rules: moving an element-wise map across the layout primitives (join, split,
// transpose, crop, slide, pad), flattening a nest of maps, and interchanging two nested maps.
//
// Every rule matches one node syntactically (a map whose function is `row -> map(f, row)`, a
// layout primitive under it, ...) and returns an equal computation, or nothing. An element-wise
// map commutes with a layout primitive because the primitive only moves (or drops, or repeats)
// elements without looking at them; the nested form `row -> map(f, row)` is required where the
// primitive works one level down (transpose, split, slide), and f must then not mention the
// row, since the rule moves it out of the row's scope. map-map-interchange moves the inner
// map's data `ys` out of the outer lambda, so ys must not mention the outer param; the element
// function is rebuilt over fresh params with substituteParams (as rules_basic.cpp does), so no
// binder is shared between the two sides.
//
// map-pad-interchange swaps a per-row pad with a pad of rows (2D padding is made of the two).
// In the interpreter (ir/interp.cpp), clamp and mirror padding copies existing rows, so it
// commutes with any per-row function; constant padding of rows adds rows filled with the value
// (constantLike), which a per-row pad turns into a row of that value when the row pad is
// clamp, mirror or constant with the same value, and into a different row when the row pad is
// a constant with another value. So the rule matches unless both pads are constants with
// different values (values compared exactly as written, so it may refuse a pair that would be
// equal after conversion to int).
//
// map-flatten-nested flattens a map over p whose result is a layout E of a computing map over
// G(p): the computing map runs over all (p, g) pairs (zip with fill(n, p) carries p to each),
// so that both levels can become one parallel dimension (the parts of a split reduction and
// the kernel groups of a blocked convolution).
//
// Families: moving a map across a layout primitive is Fusion (it brings maps next to each
// other, or apart); map-flatten and join-map-interchange remove a level of nesting
// (Simplification); map-map-interchange reorders a loop nest (Tiling). The rules follow the
// algebra of LIFT (Steuwer et al., ICFP 2015, figure 5: map/join, map/split, transpose) and
// the 2D padding of the direct convolution paper, section 3.1.1. Each rule is checked against
// the interpreter by tests/rewrite/property_rules_interchange.cpp.
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// The element function f of `row -> map(f, row)` when f does not mention row.
std::optional<Expr> rowMapFunction(const Expr& function) {
  if (!isUnaryLambda(function)) return std::nullopt;
  const Expr& row = function.params()[0];
  const Expr& body = function.body();
  if (!body.isPrim(Op::Map) || !isParamNode(body.args()[0], row)) return std::nullopt;
  const Expr& f = body.funs()[0];
  if (mentionsParam(f, row)) return std::nullopt;
  return f;
}

// row -> map(f, row) over a fresh param.
Expr rowMapOf(const Expr& f, const std::string& name) {
  Expr row = Expr::param(name);
  return Expr::lambda({row}, map(f, row));
}

// map(f, join(x)) => join(map(row -> map(f, row), x))
std::optional<Expr> mapJoinInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Join)) return std::nullopt;
  const Expr& x = node.args()[0].args()[0];
  return join(map(rowMapOf(node.funs()[0], "row"), x));
}

// join(map(row -> map(f, row), x)) => map(f, join(x))
std::optional<Expr> joinMapInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Join) || !node.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& rows = node.args()[0];
  std::optional<Expr> f = rowMapFunction(rows.funs()[0]);
  if (!f) return std::nullopt;
  return map(*f, join(rows.args()[0]));
}

// map(row -> map(f, row), x) => split(m, map(f, join(x)))  (m = the inner length of x)
std::optional<Expr> mapFlatten(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> f = rowMapFunction(node.funs()[0]);
  if (!f) return std::nullopt;
  const Expr& x = node.args()[0];
  const Type xType = a.typeOf(x);
  if (!xType.isArray() || !xType.arrayElement().isArray()) return std::nullopt;
  return split(xType.arrayElement().arrayLength(), map(*f, join(x)));
}

// map(p -> E[map(g -> B(g, p), G(p))], ps) => map(x -> E[x], split(n, map(q -> B(q._0, q._1),
// join(map(p -> zip(G(p), fill(n, p)), ps))))), where E is a chain of layout primitives and
// maps of layout functions that mentions p only through its hole, and n = |G(p)|: the inner
// computing map over all (p, g) pairs at once, each pair carrying its p.
std::optional<Expr> mapFlattenNested(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& p = node.funs()[0].params()[0];
  // Down E's chain, through the first argument, to the first map that computes.
  Expr hole = node.funs()[0].body();
  while (true) {
    if (hole.isPrim(Op::Map) && isUnaryLambda(hole.funs()[0]) &&
        !isLayoutFunction(hole.funs()[0])) {
      break;
    }
    if (!hole.isPrim() || !isViewPrimitive(hole.primOp()) || hole.args().empty()) {
      if (!(hole.isPrim(Op::Map) && isLayoutFunction(hole.funs()[0]))) return std::nullopt;
    }
    for (const Expr& f : hole.funs()) {
      if (mentionsParam(f, p)) return std::nullopt;
    }
    for (size_t i = 1; i < hole.args().size(); ++i) {
      if (mentionsParam(hole.args()[i], p)) return std::nullopt;
    }
    hole = hole.args()[0];
  }
  const Expr& g = hole.funs()[0].params()[0];
  const Expr& gs = hole.args()[0];
  const Type gsType = a.typeOf(gs);
  if (!gsType.isArray()) return std::nullopt;
  const Arith n = gsType.arrayLength();
  Expr x = Expr::param("x");
  Expr outer = withNodeReplaced(node.funs()[0].body(), hole.node(), x);
  Expr pairs = join(map(lam(p.paramName(),
                            [&](Expr fresh) {
                              return zip(substituteParams(gs, {{p, fresh}}), fill(n, fresh));
                            }),
                        node.args()[0]));
  Expr flat =
      map(lam(g.paramName(),
              [&](Expr q) {
                return substituteParams(hole.funs()[0].body(), {{g, get(0, q)}, {p, get(1, q)}});
              }),
          std::move(pairs));
  return map(Expr::lambda({x}, std::move(outer)), split(n, std::move(flat)));
}

// map(row -> map(f, row), transpose(x)) => transpose(map(row -> map(f, row), x))
std::optional<Expr> mapTransposeInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Transpose)) return std::nullopt;
  std::optional<Expr> f = rowMapFunction(node.funs()[0]);
  if (!f) return std::nullopt;
  // A fresh row param: the old one may declare the type of a column, not of a row of x.
  return transpose(map(rowMapOf(*f, "row"), node.args()[0].args()[0]));
}

// map(x -> map(y -> g(x, y), ys), xs) => transpose(map(y' -> map(x' -> g(x', y'), xs), ys))
// when ys does not mention x; an inner function F that is not a lambda (a user function) and
// does not mention x gives g(x, y) = F(y).
std::optional<Expr> mapMapInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& outerFun = node.funs()[0];
  if (!isUnaryLambda(outerFun)) return std::nullopt;
  const Expr& x = outerFun.params()[0];
  const Expr& inner = outerFun.body();
  if (!inner.isPrim(Op::Map)) return std::nullopt;
  const Expr& innerFun = inner.funs()[0];
  const Expr& ys = inner.args()[0];
  if (mentionsParam(ys, x)) return std::nullopt;
  const Expr& xs = node.args()[0];
  Expr freshX = Expr::param(x.paramName(), x.paramType());
  Expr freshY;
  Expr body;
  if (isUnaryLambda(innerFun)) {
    const Expr& y = innerFun.params()[0];
    freshY = Expr::param(y.paramName(), y.paramType());
    body = substituteParams(innerFun.body(), {{x, freshX}, {y, freshY}});
  } else if (innerFun.isFunction() && innerFun.params().size() == 1 &&
             !mentionsParam(innerFun, x)) {
    freshY = Expr::param("y");
    body = apply(innerFun, {freshY});
  } else {
    return std::nullopt;
  }
  return transpose(map(Expr::lambda({freshY}, map(Expr::lambda({freshX}, body), xs)), ys));
}

// map(f, crop(a, b, x)) => crop(a, b, map(f, x))
std::optional<Expr> mapCropInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Crop)) return std::nullopt;
  const Expr& cropped = node.args()[0];
  return cropped.withChildren(cropped.nats(), {}, {map(node.funs()[0], cropped.args()[0])});
}

// map(chunk -> map(f, chunk), split(n, x)) => split(n, map(f, x))
std::optional<Expr> mapSplitInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Split)) return std::nullopt;
  std::optional<Expr> f = rowMapFunction(node.funs()[0]);
  if (!f) return std::nullopt;
  const Expr& splitNode = node.args()[0];
  return splitNode.withChildren(splitNode.nats(), {}, {map(*f, splitNode.args()[0])});
}

// split(n, map(f, x)) => map(chunk -> map(f, chunk), split(n, x))
std::optional<Expr> splitMapInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Split) || !node.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& mapped = node.args()[0];
  return map(rowMapOf(mapped.funs()[0], "chunk"),
             node.withChildren(node.nats(), {}, {mapped.args()[0]}));
}

// map(w -> map(f, w), slide(s, t, x)) => slide(s, t, map(f, x)), also for slideStrict
std::optional<Expr> mapSlideInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& slid = node.args()[0];
  if (!slid.isPrim(Op::Slide) && !slid.isPrim(Op::SlideStrict)) return std::nullopt;
  std::optional<Expr> f = rowMapFunction(node.funs()[0]);
  if (!f) return std::nullopt;
  return slid.withChildren(slid.nats(), {}, {map(*f, slid.args()[0])});
}

// Padding rows with `outer` commutes with padding each row with `inner` (see the file comment).
bool padsCommute(const PrimAttribute& outer, const PrimAttribute& inner) {
  if (outer.boundary == Boundary::Constant && inner.boundary == Boundary::Constant) {
    return outer.padValue == inner.padValue;
  }
  return true;
}

// map(r -> pad(a, b, B, r), pad(c, d, B2, x)) => pad(c, d, B2, map(r -> pad(a, b, B, r), x))
std::optional<Expr> mapPadInterchange(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Pad)) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  if (!isUnaryLambda(rowFun)) return std::nullopt;
  const Expr& rowPad = rowFun.body();
  if (!rowPad.isPrim(Op::Pad) || !isParamNode(rowPad.args()[0], rowFun.params()[0])) {
    return std::nullopt;
  }
  const Expr& padded = node.args()[0];
  if (!padsCommute(padded.attribute(), rowPad.attribute())) return std::nullopt;
  Expr row = Expr::param(rowFun.params()[0].paramName());
  Expr freshRowFun = Expr::lambda({row}, rowPad.withChildren(rowPad.nats(), {}, {row}));
  return padded.withChildren(padded.nats(), {}, {map(freshRowFun, padded.args()[0])});
}

}  // namespace

void addInterchangeRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"map-join-interchange",
                       "map(f) ∘ join => join ∘ map(map(f))",
                       RuleFamily::Fusion,
                       {},
                       mapJoinInterchange});
  rules.push_back(Rule{"join-map-interchange",
                       "join ∘ map(map(f)) => map(f) ∘ join   [f independent of the row]",
                       RuleFamily::Simplification,
                       {},
                       joinMapInterchange});
  rules.push_back(Rule{"map-flatten",
                       "map(map(f)) => split(m) ∘ map(f) ∘ join   [m = the inner length; f "
                       "independent of the row]",
                       RuleFamily::Simplification,
                       {},
                       mapFlatten});
  rules.push_back(Rule{"map-flatten-nested",
                       "map(p -> E[map(g -> B(g, p), G(p))], ps) => map(x -> E[x], split(n, "
                       "map(q -> B(q._0, q._1), join(map(p -> zip(G(p), fill(n, p)), ps)))))   "
                       "[E layout primitives and layout maps, mentioning p only in its hole; n = "
                       "|G(p)|]",
                       RuleFamily::Simplification,
                       {},
                       mapFlattenNested});
  rules.push_back(Rule{"map-transpose-interchange",
                       "map(map(f)) ∘ transpose => transpose ∘ map(map(f))   [f independent of "
                       "the row]",
                       RuleFamily::Fusion,
                       {},
                       mapTransposeInterchange});
  rules.push_back(Rule{"map-map-interchange",
                       "map(x -> map(y -> g(x, y), ys), xs) => "
                       "transpose(map(y -> map(x -> g(x, y), xs), ys))   [ys independent of x]",
                       RuleFamily::Tiling,
                       {},
                       mapMapInterchange});
  rules.push_back(Rule{"map-crop-interchange",
                       "map(f) ∘ crop(a, b) => crop(a, b) ∘ map(f)",
                       RuleFamily::Fusion,
                       {},
                       mapCropInterchange});
  rules.push_back(Rule{"map-split-interchange",
                       "map(map(f)) ∘ split(n) => split(n) ∘ map(f)   [f independent of the "
                       "chunk]",
                       RuleFamily::Fusion,
                       {},
                       mapSplitInterchange});
  rules.push_back(Rule{"split-map-interchange",
                       "split(n) ∘ map(f) => map(map(f)) ∘ split(n)",
                       RuleFamily::Fusion,
                       {},
                       splitMapInterchange});
  rules.push_back(Rule{"map-slide-interchange",
                       "map(map(f)) ∘ slide(size, step) => slide(size, step) ∘ map(f)   [also "
                       "slideStrict; f independent of the window]",
                       RuleFamily::Fusion,
                       {},
                       mapSlideInterchange});
  rules.push_back(Rule{"map-pad-interchange",
                       "map(pad(a, b, B)) ∘ pad(c, d, B2) => pad(c, d, B2) ∘ map(pad(a, b, B))   "
                       "[not when B and B2 are constants of different values]",
                       RuleFamily::Fusion,
                       {},
                       mapPadInterchange});
}

}  // namespace weft::rewrite
