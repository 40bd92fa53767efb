// Macro rules for tiling and blocking whole loop nests: each is a composition of smaller rules
// (slide tiling, interchange, split-join, partial reduction, fission) packaged as one rewrite
// so that the convolution and stencil strategies can name a step of paper section 4.2 in one
// move instead of a dozen positional micro-steps. Each is checked against the interpreter on
// random programs by tests/rewrite/property_rules_blocking.cpp.
//
//  map2d-crop2d-interchange  map2D(f) ∘ crop2D(a, b) => crop2D(a, b) ∘ map2D(f)
//  crop2d-kernels-outermost  transpose ∘ map(transpose) ∘ crop2D(a, b, c, d) => map(crop2D(a, b,
//                            c, d)) ∘ transpose ∘ map(transpose)   ([H][W][M] cropped and laid
//                            out [M][H][W]: the layout first, then each kernel's map cropped, so
//                            that the rules matching Listing 3's outer transposes still match)
//  map2d-slide-tiling        map2D(f) ∘ slide2D(s, t) => untile ∘ map2D(map2D(f) ∘
//                            slideStrict2D(s, t)) ∘ slideStrict2D(θ, θ - (s - t))
//                            (paper 3.4.1 overlapped tiling, with the computation moved into
//                            the tiles: slide tiling + map/join and map/transpose interchange +
//                            map fusion)
//  map-map-blocking          map(w -> map(k -> g(w, k), ks), ws) => layout ∘ map(kg -> map(wg ->
//                            map(k -> map(w -> g(w, k), wg), kg), split(σ, ws)), split(κ, ks))
//                            (paper 4.2.2 kernel grouping κ and window grouping σ: two
//                            split-joins and a map/map interchange)
//  chunked-reduce            map(k -> map(w -> reduce(z(k), acc + g(p), zip(a(w), b(k))))) =>
//                            final ∘ map over chunks of ω (paper 4.2.2-4.2.3: the sequential
//                            chunk ω of a window, partial sums per chunk, then a final sum that
//                            starts from z; with the coalesce switch c the elements are first
//                            reordered with stride 1 + c·(n/ω - 1), i.e. chunk j holds elements
//                            j, j + n/ω, ... when c = 1 (paper 4.2.2's reorder(stride)))
//  map-fission-deep          map(x -> C[e(x)]) => map(y -> C[y]) ∘ map(x -> e(x)) where e is the
//                            first computation under the body's layout (zip, transpose, join,
//                            split, get, layout-only maps); when C itself mentions x, the
//                            elements are zipped: map(p -> C[p._0, p._1]) ∘ zip(xs, map(e, xs)).
//                            It separates the kernels of a nest (partial and final reduction).
//  let-hoist                 C[e] => let(y -> C[y], e) at the body, for the earliest stage e (a
//                            computing map over the inputs only): code generation makes each
//                            let-bound stage a kernel of its own writing a global buffer.
//  materialize               x => map(..map(id)..)(x): a copy of a view (the pad and crop
//                            kernels of paper 4.2.1 and 4.2.4).
//  materialize-innermost-first
//                            x => map(transpose) ∘ transpose ∘ copy ∘ transpose ∘ map(transpose)
//                            (x): [a][b][c] stored as [c][a][b] and read back through the inverse
//                            view — a padded [H][W][C] image copied channels-first, so that
//                            neighbouring pixels of one channel are neighbours in memory.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// map(r -> map(f, r), x) with f not mentioning r: returns f and x.
struct Map2D {
  Expr f;
  Expr x;
};
std::optional<Map2D> matchMap2D(const Expr& node) {
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  if (!isUnaryLambda(rowFun)) return std::nullopt;
  const Expr& row = rowFun.params()[0];
  const Expr& inner = rowFun.body();
  if (!inner.isPrim(Op::Map) || !isParamNode(inner.args()[0], row)) return std::nullopt;
  if (mentionsParam(inner.funs()[0], row)) return std::nullopt;
  return Map2D{inner.funs()[0], node.args()[0]};
}

// crop(a, b, map(q -> crop(c, d, q), x)): the four sizes and x.
struct Crop2D {
  Arith top, bottom, left, right;
  Expr x;
};
std::optional<Crop2D> matchCrop2D(const Expr& node) {
  if (!node.isPrim(Op::Crop)) return std::nullopt;
  const Expr& rows = node.args()[0];
  if (!rows.isPrim(Op::Map) || !isUnaryLambda(rows.funs()[0])) return std::nullopt;
  const Expr& rowFun = rows.funs()[0];
  const Expr& inner = rowFun.body();
  if (!inner.isPrim(Op::Crop) || !isParamNode(inner.args()[0], rowFun.params()[0])) {
    return std::nullopt;
  }
  return Crop2D{node.nats()[0], node.nats()[1], inner.nats()[0], inner.nats()[1], rows.args()[0]};
}


Expr slideStrict2D(Arith size1, Arith size2, Arith step1, Arith step2, Expr x) {
  Expr rows = map(lam("row", [&](Expr row) { return slideStrict(size2, step2, std::move(row)); }),
                  std::move(x));
  return map(lam("windowRows", [](Expr w) { return transpose(std::move(w)); }),
             slideStrict(size1, step1, std::move(rows)));
}

// ---- map2d-crop2d-interchange ----

std::optional<Expr> map2DCrop2DInterchange(const RuleApplication& a) {
  auto m = matchMap2D(a.node);
  if (!m) return std::nullopt;
  auto c = matchCrop2D(m->x);
  if (!c) return std::nullopt;
  Expr f = m->f;
  return crop2D(c->top, c->bottom, c->left, c->right,
                map(lam("row", [&](Expr row) { return map(f, std::move(row)); }), c->x));
}

// ---- crop2d-kernels-outermost ----

// transpose(map(transpose, crop2D(a, b, c, d, y))) => map(crop2D(a, b, c, d),
// transpose(map(transpose, y))): y [H][W][M] cropped then laid out [M][H'][W'] is y laid out
// [M][H][W] with each kernel's map cropped.
std::optional<Expr> crop2DKernelsOutermost(const RuleApplication& a) {
  std::optional<Expr> inner = matchTransposeOfMapTranspose(a.node);
  if (!inner) return std::nullopt;
  auto c = matchCrop2D(*inner);
  if (!c) return std::nullopt;
  const Type yType = a.typeOf(c->x);
  if (!yType.isArray() || !yType.arrayElement().isArray() ||
      !yType.arrayElement().arrayElement().isArray()) {
    return std::nullopt;
  }
  Expr kernelsFirst =
      transpose(map(lam("outRow", [](Expr r) { return transpose(std::move(r)); }), c->x));
  return map(lam("kernelMap",
                 [&](Expr k) { return crop2D(c->top, c->bottom, c->left, c->right, std::move(k)); }),
             std::move(kernelsFirst));
}

// ---- map2d-slide-tiling ----

std::optional<Expr> map2DSlideTiling(const RuleApplication& a) {
  auto m = matchMap2D(a.node);
  if (!m) return std::nullopt;
  auto s = matchSlide2D(m->x);
  if (!s) return std::nullopt;
  const Type xType = a.typeOf(s->x);
  if (!xType.isArray() || !xType.arrayElement().isArray()) return std::nullopt;
  const Arith height = xType.arrayLength();
  const Arith width = xType.arrayElement().arrayLength();
  Arith theta1 = a.factor("theta1", [&](RewriteContext& context) {
    return context.freshTuning("theta", s->size1, height);
  });
  Arith theta2 = a.factor("theta2", [&](RewriteContext& context) {
    return context.freshTuning("theta", s->size2, width);
  });
  Expr tiles = slideStrict2D(theta1, theta2, theta1 - (s->size1 - s->step1),
                             theta2 - (s->size2 - s->step2), s->x);
  Expr f = m->f;
  // Each tile: its windows, and f on every window.
  Expr computedTiles = map(
      lam("tileRow",
          [&](Expr tileRow) {
            return map(lam("tile",
                           [&](Expr tile) {
                             return map(lam("windowRow",
                                            [&](Expr windowRow) {
                                              return map(f, std::move(windowRow));
                                            }),
                                        slideStrict2D(s->size1, s->size2, s->step1, s->step2,
                                                      std::move(tile)));
                           }),
                       std::move(tileRow));
          }),
      std::move(tiles));
  return untileWindowResults(std::move(computedTiles));
}

// ---- map-map-blocking ----

std::optional<Expr> mapMapBlocking(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& outerFun = node.funs()[0];
  const Expr& w = outerFun.params()[0];
  const Expr& inner = outerFun.body();
  if (!inner.isPrim(Op::Map)) return std::nullopt;
  const Expr& ks = inner.args()[0];
  if (mentionsParam(ks, w)) return std::nullopt;
  const Expr& innerFun = inner.funs()[0];
  if (!innerFun.isFunction() || innerFun.params().size() != 1) return std::nullopt;
  const Expr& ws = node.args()[0];
  const Arith windows = a.typeOf(ws).arrayLength();
  const Arith kernels = a.typeOf(ks).arrayLength();
  Arith kappa = a.factor(
      "kappa", [&](RewriteContext& context) { return context.freshTuning("kappa", Arith(1), kernels); });
  Arith sigma = a.factor(
      "sigma", [&](RewriteContext& context) { return context.freshTuning("sigma", Arith(1), windows); });
  // g(w', k') for fresh w', k'.
  auto g = [&](const Expr& wNew, const Expr& kNew) {
    Expr withK = call(innerFun, kNew);  // kNew is a param: innerFun's body with it substituted
    return substituteParams(withK, {{w, wNew}});
  };
  Expr blocks = map(
      lam("kernelGroup",
          [&](Expr kernelGroup) {
            return map(lam("windowGroup",
                           [&](Expr windowGroup) {
                             return map(lam("k",
                                            [&](Expr k) {
                                              return map(lam("w", [&](Expr wNew) { return g(wNew, k); }),
                                                         windowGroup);
                                            }),
                                        kernelGroup);
                           }),
                       split(sigma, ws));
          }),
      split(kappa, ks));
  // blocks[kg][wg][k][w] -> result[wg·σ + w][kg·κ + k].
  return transpose(join(map(
      lam("groupRow",
          [](Expr groupRow) {
            return transpose(join(map(lam("block", [](Expr b) { return transpose(std::move(b)); }),
                                      std::move(groupRow))));
          }),
      std::move(blocks))));
}

// ---- chunked-reduce ----

// (acc, p) -> acc + g(p) (or g(p) + acc) with g not mentioning acc: returns g's lambda p -> g(p).
std::optional<Expr> sumBody(const Expr& f) {
  if (!f.isLambda() || f.params().size() != 2) return std::nullopt;
  const Expr& acc = f.params()[0];
  const Expr& p = f.params()[1];
  const Expr& body = f.body();
  if (!body.isPrim(Op::Add) || body.args().size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const Expr& accSide = body.args()[static_cast<size_t>(side)];
    const Expr& other = body.args()[static_cast<size_t>(1 - side)];
    if (isParamNode(accSide, acc) && !mentionsParam(other, acc)) return Expr::lambda({p}, other);
  }
  return std::nullopt;
}

std::optional<Expr> chunkedReduce(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& k = node.funs()[0].params()[0];
  const Expr& ks = node.args()[0];
  const Expr& windowsMap = node.funs()[0].body();
  if (!windowsMap.isPrim(Op::Map) || !isUnaryLambda(windowsMap.funs()[0])) return std::nullopt;
  const Expr& w = windowsMap.funs()[0].params()[0];
  const Expr& ws = windowsMap.args()[0];
  if (mentionsParam(ws, k)) return std::nullopt;
  const Expr& r = windowsMap.funs()[0].body();
  if (!r.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& z = r.args()[0];
  const Expr& f = r.funs()[0];
  const Expr& zipped = r.args()[1];
  if (mentionsParam(z, w) || mentionsParam(f, w) || mentionsParam(f, k)) return std::nullopt;
  if (!zipped.isPrim(Op::Zip) || zipped.args().size() != 2) return std::nullopt;
  const Expr& aw = zipped.args()[0];
  const Expr& bk = zipped.args()[1];
  if (mentionsParam(aw, k) || mentionsParam(bk, w)) return std::nullopt;
  if (!sumBody(f)) return std::nullopt;
  const std::optional<Expr> zeroOfZ = zeroOfScalar(a.typeOf(z));
  if (!zeroOfZ) return std::nullopt;
  const Expr& zero = *zeroOfZ;
  const Arith n = a.typeOf(aw).arrayLength();
  Arith omega = a.factor(
      "omega", [&](RewriteContext& context) { return context.freshTuning("omega", Arith(1), n); });
  Arith coalesce = a.factor("coalesce", [&](RewriteContext& context) {
    return context.freshSwitch("coalesce");
  });
  const Arith chunks = n / omega;
  const Arith stride = Arith(1) + coalesce * (chunks - Arith(1));
  auto chunked = [&](const Expr& param, const Expr& body, const Expr& xs) {
    Expr fresh = Expr::param(param.paramName());
    Expr b = substituteParams(body, {{param, fresh}});
    return map(Expr::lambda({fresh}, split(omega, reorderStride(stride, b))), xs);
  };
  // [σ][n/ω][ω] and [κ][n/ω][ω], then per chunk: ([σ][ω], [κ][ω]).
  Expr windowChunks = transpose(chunked(w, aw, ws));
  Expr kernelChunks = transpose(chunked(k, bk, ks));
  Expr partials = map(
      lam("chunk",
          [&](Expr chunk) {
            return map(lam("kernelChunk",
                           [&](Expr kernelChunk) {
                             return map(lam("windowChunk",
                                            [&](Expr windowChunk) {
                                              return reduce(zero, f, zip(windowChunk, kernelChunk));
                                            }),
                                        get(Arith(0), chunk));
                           }),
                       get(Arith(1), chunk));
          }),
      zip(windowChunks, kernelChunks));
  // partials [n/ω][κ][σ][1] -> [κ][σ][n/ω][1]; each window's sums added to z(k).
  Expr kFresh = Expr::param(k.paramName());
  Expr inits = map(Expr::lambda({kFresh}, substituteParams(z, {{k, kFresh}})), ks);
  return map(lam("kernelSums",
                 [&](Expr kernelSums) {
                   Expr init = get(Arith(1), kernelSums);
                   return map(lam("sums",
                                  [&](Expr sums) {
                                    return reduce(init,
                                                  lam2("acc", "partial",
                                                       [](Expr acc, Expr partial) {
                                                         return add(std::move(acc),
                                                                    std::move(partial));
                                                       }),
                                                  join(std::move(sums)));
                                  }),
                              get(Arith(0), kernelSums));
                 }),
             zip(map(lam("kernelPartials", [](Expr p) { return transpose(std::move(p)); }),
                     transpose(std::move(partials))),
                 std::move(inits)));
}

// ---- map-fission-deep ----

// Views (isViewPrimitive, or maps of layout functions), which the fission looks through and
// which are not stages of their own.
bool isLayoutOnly(const Expr& e);


}  // namespace

bool isLayoutFunction(const Expr& f) {
  if (!isUnaryLambda(f)) return false;
  const Expr& p = f.params()[0];
  // The body is layout primitives applied to p only.
  Expr current = f.body();
  while (true) {
    if (isParamNode(current, p)) return true;
    if (!current.isPrim() || !isLayoutOnly(current) || current.args().size() != 1) return false;
    current = current.args()[0];
  }
}

namespace {

bool isLayoutOnly(const Expr& e) {
  if (!e.isPrim()) return false;
  if (isViewPrimitive(e.primOp())) return true;
  return e.isPrim(Op::Map) && isLayoutFunction(e.funs()[0]);
}

// Rebuilds `root` with the node at `path` (argument indices) replaced by `replacement`.
Expr replaceAlongArgs(const Expr& root, const std::vector<size_t>& path, size_t depth,
                      const Expr& replacement) {
  if (depth == path.size()) return replacement;
  std::vector<Expr> args = root.args();
  args[path[depth]] = replaceAlongArgs(args[path[depth]], path, depth + 1, replacement);
  return root.withChildren(root.nats(), root.funs(), args);
}

std::optional<Expr> mapFissionDeep(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& x = node.funs()[0].params()[0];
  const Expr& body = node.funs()[0].body();
  if (!body.isPrim()) return std::nullopt;
  // Descend from the body through the one x-dependent argument, then through layout.
  std::vector<size_t> path;
  Expr current = body;
  while (true) {
    int dependent = -1;
    for (size_t i = 0; i < current.args().size(); ++i) {
      if (!mentionsParam(current.args()[i], x)) continue;
      if (dependent >= 0) return std::nullopt;  // two arguments depend on x
      dependent = static_cast<int>(i);
    }
    if (dependent < 0) return std::nullopt;
    path.push_back(static_cast<size_t>(dependent));
    current = current.args()[static_cast<size_t>(dependent)];
    if (isParamNode(current, x)) return std::nullopt;  // nothing to compute separately
    if (!isLayoutOnly(current)) break;
  }
  const Expr& hole = current;
  const Type holeType = a.typeOf(hole);
  if (!holeType.isArray()) return std::nullopt;  // a separate map needs array elements
  Expr y = Expr::param("y");
  Expr context = replaceAlongArgs(body, path, 0, y);
  Expr computed = map(Expr::lambda({x}, hole), node.args()[0]);
  if (!mentionsParam(context, x)) return map(Expr::lambda({y}, context), computed);
  Expr p = Expr::param("p");
  Expr zipped = substituteParams(context, {{x, get(Arith(0), p)}, {y, get(Arith(1), p)}});
  // The map over xs is rebuilt with a fresh x so that the two uses of xs do not share params.
  Expr xFresh = Expr::param(x.paramName());
  Expr computedFresh = map(Expr::lambda({xFresh}, substituteParams(hole, {{x, xFresh}})),
                           node.args()[0]);
  return map(Expr::lambda({p}, zipped), zip(node.args()[0], computedFresh));
}

// ---- materialize ----

// x => copyOf(x) (rule_helpers.h: map(map(..map(id)..)) over every array level of x): a copy,
// which code generation computes in a kernel of its own when x is a view it cannot write through
// (crop, pad, slide), as the pad and crop kernels of paper 4.2.1 and 4.2.4.
std::optional<Expr> materialize(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim() || node.isPrim(Op::Map) || node.isPrim(Op::Id)) return std::nullopt;
  const Type type = a.typeOf(node);
  if (!type.isArray()) return std::nullopt;
  // Only arrays of scalars (or vectors) can be copied element by element.
  Type inner = type;
  while (inner.isArray()) inner = inner.arrayElement();
  if (inner.isTuple()) return std::nullopt;
  return copyOf(type, node);
}

// x => map(transpose, transpose(copyOf(transpose(map(transpose, x))))) for x: [a][b][c] of
// scalars or vectors: the copy holds [c][a][b]; the views around it read it as [a][b][c].
std::optional<Expr> materializeInnermostFirst(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim() || node.isPrim(Op::Map) || node.isPrim(Op::Id)) return std::nullopt;
  const Type type = a.typeOf(node);
  if (!type.isArray() || !type.arrayElement().isArray() ||
      !type.arrayElement().arrayElement().isArray()) {
    return std::nullopt;
  }
  const Type element = type.arrayElement().arrayElement().arrayElement();
  if (element.isArray() || element.isTuple()) return std::nullopt;
  auto transposeEach = [](Expr x) {
    return map(lam("plane", [](Expr plane) { return transpose(std::move(plane)); }),
               std::move(x));
  };
  Expr innermostFirst = transpose(transposeEach(node));
  const Type copied = Type::array(
      Type::array(Type::array(element, type.arrayElement().arrayLength()), type.arrayLength()),
      type.arrayElement().arrayElement().arrayLength());
  return transposeEach(transpose(copyOf(copied, innermostFirst)));
}

// ---- let-hoist ----

bool isMapKind(const Expr& e) {
  return e.isPrim(Op::Map) || e.isPrim(Op::MapGlb) || e.isPrim(Op::MapWrg) ||
         e.isPrim(Op::MapLcl) || e.isPrim(Op::MapSeq) || e.isPrim(Op::MapSeqUnroll);
}

bool computes(const Expr& e) {
  bool found = false;
  forEachNode(e, [&](const Expr& n) {
    if (n.isPrim(Op::Reduce) || n.isPrim(Op::ReduceSeq) || n.isPrim(Op::ReduceSeqUnroll) ||
        n.isPrim(Op::Id)) {
      found = true;
    }
    if (isMapKind(n) && !isLayoutFunction(n.funs()[0])) found = true;
  });
  return found;
}

// The first (post-order) map that computes, is closed up to the definition's inputs, is not on
// the root's write-through spine and is not already the value of a let: the earliest stage not
// yet bound.
// Layouts the result of a stage can be written through (code generation writes a kernel's
// result through them into the buffer they describe).
bool writesThrough(const Expr& e) {
  if (e.isPrim(Op::Map)) return isLayoutFunction(e.funs()[0]);
  return e.isPrim(Op::Transpose) || e.isPrim(Op::Join) || e.isPrim(Op::Split) ||
         e.isPrim(Op::AsVector) || e.isPrim(Op::AsScalar);
}

// `onSpine`: the node is the root or reached from it through write-through layouts only; such a
// node is already written where the result goes and is not hoisted.
std::optional<std::vector<size_t>> stageToHoist(const Expr& node,
                                                const std::vector<uint64_t>& inputs,
                                                std::vector<size_t>& path, bool letValue,
                                                bool onSpine) {
  if (!node.isPrim()) {
    if (node.isLambda()) {
      path.push_back(0);
      auto found = stageToHoist(node.body(), inputs, path, false, false);
      if (found) return found;
      path.pop_back();
    }
    return std::nullopt;
  }
  size_t index = 0;
  for (const Expr& f : node.funs()) {
    path.push_back(index++);
    if (auto found = stageToHoist(f, inputs, path, false, false)) return found;
    path.pop_back();
  }
  for (const Expr& a : node.args()) {
    path.push_back(index++);
    if (auto found = stageToHoist(a, inputs, path, node.isPrim(Op::Let),
                                  onSpine && writesThrough(node))) {
      return found;
    }
    path.pop_back();
  }
  if (onSpine || letValue || !isMapKind(node) || !computes(node)) return std::nullopt;
  for (uint64_t id : freeParamsOf(node)) {
    if (std::find(inputs.begin(), inputs.end(), id) == inputs.end()) return std::nullopt;
  }
  return path;
}

Expr replaceAtPath(const Expr& e, const std::vector<size_t>& path, size_t depth,
                   const Expr& replacement) {
  if (depth == path.size()) return replacement;
  if (e.isLambda()) return e.withBody(replaceAtPath(e.body(), path, depth + 1, replacement));
  std::vector<Expr> funs = e.funs();
  std::vector<Expr> args = e.args();
  size_t i = path[depth];
  if (i < funs.size()) {
    funs[i] = replaceAtPath(funs[i], path, depth + 1, replacement);
  } else {
    args[i - funs.size()] = replaceAtPath(args[i - funs.size()], path, depth + 1, replacement);
  }
  return e.withChildren(e.nats(), funs, args);
}

std::optional<Expr> letHoist(const RuleApplication& a) {
  // Only at the definition's body or the body of a let at the top (its stages), never at a
  // function (the let's lambda itself).
  if (a.node.isFunction()) return std::nullopt;
  if (!isTopLevelStage(a)) return std::nullopt;
  // The inputs of this stage are the params free in it (the definition's inputs and the
  // values of the enclosing lets).
  const std::vector<uint64_t> inputs = freeParamsOf(a.node);
  std::vector<size_t> path;
  auto found = stageToHoist(a.node, inputs, path, false, true);
  if (!found) return std::nullopt;
  Expr stage = a.node;
  for (size_t i = 0; i < found->size(); ++i) {
    size_t index = (*found)[i];
    if (stage.isLambda()) {
      stage = stage.body();
    } else if (index < stage.funs().size()) {
      stage = stage.funs()[index];
    } else {
      stage = stage.args()[index - stage.funs().size()];
    }
  }
  Expr value = Expr::param("stage");
  return let(Expr::lambda({value}, replaceAtPath(a.node, *found, 0, value)), stage);
}

}  // namespace

void addBlockingRules(std::vector<Rule>& rules) {
  rules.push_back({"map2d-crop2d-interchange",
                   "map2D(f) ∘ crop2D(a, b, c, d) => crop2D(a, b, c, d) ∘ map2D(f)",
                   RuleFamily::Tiling,
                   {},
                   map2DCrop2DInterchange});
  rules.push_back({"crop2d-kernels-outermost",
                   "transpose ∘ map(transpose) ∘ crop2D(a, b, c, d) => map(crop2D(a, b, c, d)) ∘ "
                   "transpose ∘ map(transpose)",
                   RuleFamily::Tiling,
                   {},
                   crop2DKernelsOutermost});
  rules.push_back({"map2d-slide-tiling",
                   "map2D(f) ∘ slide2D(s1, s2, t1, t2) => join ∘ map(map(join) ∘ transpose) ∘ "
                   "map2D(map2D(f) ∘ slideStrict2D(s1, s2, t1, t2)) ∘ slideStrict2D(θ1, θ2, "
                   "θ1 - (s1 - t1), θ2 - (s2 - t2))",
                   RuleFamily::Tiling,
                   {"theta1", "theta2"},
                   map2DSlideTiling});
  rules.push_back({"map-map-blocking",
                   "map(w -> map(k -> g(w, k), ks), ws) => transpose ∘ join ∘ map(transpose ∘ "
                   "join ∘ map(transpose)) ∘ map(kg -> map(wg -> map(k -> map(w -> g(w, k), wg), "
                   "kg), split(σ, ws)), split(κ, ks))   [ks independent of w]",
                   RuleFamily::Tiling,
                   {"kappa", "sigma"},
                   mapMapBlocking});
  rules.push_back({"chunked-reduce",
                   "map(k -> map(w -> reduce(z(k), acc + g(p), zip(a(w), b(k))), ws), ks) => "
                   "map(s -> map(reduce(s._1, +) ∘ join, s._0)) ∘ zip(map(transpose) ∘ "
                   "transpose ∘ map(c -> map(kc -> map(wc -> reduce(0, acc + g(p), zip(wc, kc)), "
                   "c._0), c._1)) ∘ zip(transpose(map(split(ω) ∘ reorder(stride(1 + c·(n/ω - 1))) "
                   "∘ a, ws)), transpose(map(split(ω) ∘ reorder(..) ∘ b, ks))), map(z, ks))",
                   RuleFamily::Reduction,
                   {"omega", "coalesce"},
                   chunkedReduce});
  rules.push_back({"map-fission-deep",
                   "map(x -> C[e(x)]) => map(y -> C[y]) ∘ map(x -> e(x))   [e: the first "
                   "computation under the body's layout; if C mentions x: map(p -> C[p._0, "
                   "p._1]) ∘ zip(xs, map(x -> e(x), xs))]",
                   RuleFamily::Fusion,
                   {},
                   mapFissionDeep});
  rules.push_back({"materialize",
                   "x => map(..map(id)..)(x)   [x an array of scalars, not already a map or id: "
                   "a copy into memory of its own]",
                   RuleFamily::AddressSpace,
                   {},
                   materialize});
  rules.push_back({"materialize-innermost-first",
                   "x => map(transpose) ∘ transpose ∘ map(map(map(id))) ∘ transpose ∘ "
                   "map(transpose) (x)   [x: [a][b][c] of scalars: a copy stored [c][a][b], read "
                   "back as [a][b][c]]",
                   RuleFamily::AddressSpace,
                   {},
                   materializeInnermostFirst});
  rules.push_back({"let-hoist",
                   "C[e] => let(y -> C[y], e)   [at the body or a top-level let's body: e the "
                   "earliest map that computes and uses only the inputs and earlier stages: a "
                   "stage of its own (a kernel)]",
                   RuleFamily::AddressSpace,
                   {},
                   letHoist});
}

}  // namespace weft::rewrite
