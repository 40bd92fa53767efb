// Macro rules for the vector register-blocked convolution: output-stationary register blocks
// of κ kernels × σ consecutive output pixels (× R rows per work-group) whose κ-wide accumulators
// are float vectors updated with one vector of weights and a broadcast input value, the weights
// re-laid out once by a kernel of their own. The conv-register-blocked-vector strategy
// (rewrite/strategies.cpp) is made of these and of library rules; each is checked against the
// interpreter on random programs by tests/rewrite/property_rules_vector_blocking.cpp.
//
//  map2d-kernel-blocking   transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> f(w, k), ks)), xs)
//                          => join ∘ map(cg -> transpose(map(transpose ∘ join, cg))) ∘
//                          map(kg -> join(map(rg -> map(row -> map(wb -> map(w -> join(map(k ->
//                          f(w, k), kg)), wb), split(σ, row)), rg), split(R, xs))), split(κ, ks))
//                          (kernel groups outermost, groups of R rows, blocks of σ windows; a
//                          map/map interchange and three split-joins. Without the outer
//                          transposes the result is map(transpose) ∘ transpose of the same.)
//  map2d-kernel-blocking-interleaved
//                          the same with interleaved blocks: block b of a row holds its windows
//                          b, b + W/σ, b + 2·W/σ, … (transpose(split(W/σ, row)) for split(σ,
//                          row), join ∘ transpose of the blocks for join), so that work-items
//                          mapped over neighbouring blocks read neighbouring pixels together
//                          (coalesced loads on a GPU; TVM's virtual threads and myGEMM's strided
//                          per-thread tiles do the same).
//  vectorize-block-accumulators
//                          map(w -> join(map(k -> reduce(z(k), (acc, p) -> acc + p._0 * p._1,
//                          zip(a(w), b(k))), kg)), wb) => map(asScalar) ∘ split(1) ∘ join ∘
//                          reduce(join(fill(σ, asVector(κ, map(k -> z(k), kg)))), (accs, p) ->
//                          map(q -> q._0 + q._1 * p._1, zip(accs, p._0)), zip(transpose(map(w ->
//                          a(w), wb)), join(map(asVector(κ), transpose(map(k -> b(k), kg))))))
//                          (the σ × κ scalar accumulators as σ vectors of width κ = |kg|, a
//                          number in {2, 3, 4, 8, 16}: each step multiplies the σ windows'
//                          values, broadcast, by one vector of the κ kernels' weights. The order
//                          of every lane's sum is the original's, so the result is exactly equal.
//                          When a(w) = join^d(a'(w)) and b(k) = join^d(b'(k)) with the same
//                          nested lengths (Listing 3: join(join(window)), [K][K][C]), the d
//                          levels are kept on both sides — transposes move σ and κ innermost
//                          level by level, asVector(κ) ∘ join makes the innermost level's
//                          vectors, join^d flattens — so that code generation loops over the
//                          window with one loop per level, without divisions.)
//  map2d-split-reduction   the same map2D of window × kernel sums of products split into S
//                          parts of the innermost level a and b share (Listing 3: the channels;
//                          part s holds elements s, s + S, …): a map over the parts of the same
//                          map2D over the part's windows and kernels summing from 0, then each
//                          output's S partial sums added to its initial value z(k). More work-items
//                          where a layer has few outputs (split-K); the sums are re-associated.
//  hoist-relayout          C[map(g -> B[v(g)], xs)] => let(r -> C[map(p -> B[p._1][g := p._0],
//                          zip(xs, r))], map(..map(id)..)(map(g -> v(g), xs)))
//                          (a view v of a group g that reorders it — a layout of g alone with a
//                          transpose, of scalars — copied once for all groups into memory of its
//                          own; at the definition's body or a top-level let's body, for xs
//                          closed there: code generation makes the copy a first kernel, the
//                          one-off re-layout of the weights as [M/κ][K][K][C][κ]. The maps
//                          may already be lowered: mapGlb and the like stay as they are.)
//  hoist-relayout-nested   the same for a group of a group: a chain of maps from one over
//                          closed data, each over a view of the enclosing map's param, the
//                          deepest view of the last map's param copied nested as deep as the
//                          chain, e.g. a blocked matmul's blocks of σ rows of A as [M/σ][K][σ],
//                          so that each step of the reduction reads σ neighbouring values (the
//                          packing of GotoBLAS).
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// ---- map2d-kernel-blocking ----

// map(row -> map(f, row), xs) with f = w -> join(map(kf, ks)), ks and f independent of row, ks
// independent of w.
struct KernelMap2D {
  Expr window;     // w
  Expr kernelFun;  // kf
  Expr kernels;    // ks
  Expr windows;    // xs
};

std::optional<KernelMap2D> matchKernelMap2D(const Expr& node) {
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  const Expr& row = rowFun.params()[0];
  const Expr& inner = rowFun.body();
  if (!inner.isPrim(Op::Map) || !isParamNode(inner.args()[0], row)) return std::nullopt;
  const Expr& f = inner.funs()[0];
  if (!isUnaryLambda(f) || mentionsParam(f, row)) return std::nullopt;
  const Expr& w = f.params()[0];
  const Expr& joined = f.body();
  if (!joined.isPrim(Op::Join) || !joined.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& kernelMap = joined.args()[0];
  const Expr& kf = kernelMap.funs()[0];
  if (!kf.isFunction() || kf.params().size() != 1) return std::nullopt;
  const Expr& ks = kernelMap.args()[0];
  if (mentionsParam(ks, w)) return std::nullopt;
  return KernelMap2D{w, kf, ks, node.args()[0]};
}

// Blocks of σ windows of a row: consecutive windows (split(σ)), or interleaved windows
// b, b + W/σ, b + 2·W/σ, … (transpose ∘ split(W/σ)), so that neighbouring blocks — neighbouring
// work-items once the blocks are mapped to mapLcl — read neighbouring pixels at each step.
std::optional<Expr> kernelBlocking(const RuleApplication& a, bool interleaved) {
  std::optional<Expr> inner = matchTransposeOfMapTranspose(a.node);
  const bool kernelsOutermost = inner.has_value();
  std::optional<KernelMap2D> m = matchKernelMap2D(kernelsOutermost ? *inner : a.node);
  if (!m) return std::nullopt;
  const Type xsType = a.typeOf(m->windows);
  const Type ksType = a.typeOf(m->kernels);
  if (!xsType.isArray() || !xsType.arrayElement().isArray() || !ksType.isArray()) {
    return std::nullopt;
  }
  const Arith height = xsType.arrayLength();
  const Arith width = xsType.arrayElement().arrayLength();
  const Arith kernels = ksType.arrayLength();
  Arith kappa = a.factor("kappa", [&](RewriteContext& context) {
    return context.freshTuning("kappa", Arith(1), kernels);
  });
  Arith sigma = a.factor("sigma", [&](RewriteContext& context) {
    return context.freshTuning("sigma", Arith(1), width);
  });
  Arith rows = a.factor("rows", [&](RewriteContext& context) {
    return context.freshTuning("rows", Arith(1), height);
  });
  // The kernels' function and the window param are used once each in the result (the
  // original lambdas disappear), so they keep their params.
  const Expr kf = m->kernelFun;
  const Expr w = m->window;
  Expr blocks = map(
      lam("kernelGroup",
          [&](Expr kernelGroup) {
            Expr perWindow = Expr::lambda({w}, join(map(kf, kernelGroup)));
            return join(map(
                lam("rowGroup",
                    [&](Expr rowGroup) {
                      return map(lam("row",
                                     [&](Expr row) {
                                       return map(lam("windowBlock",
                                                      [&](Expr windowBlock) {
                                                        return map(perWindow, windowBlock);
                                                      }),
                                                  interleaved ? transpose(split(width / sigma, row))
                                                              : split(sigma, row));
                                     }),
                                 rowGroup);
                    }),
                split(rows, m->windows)));
          }),
      split(kappa, m->kernels));
  // blocks [M/κ][OH][OW/σ][σ][κ·c] -> [M·c][OH][OW] (interleaved blocks: the row's windows in
  // order are join ∘ transpose of its blocks).
  Expr kernelsFirst = join(map(
      lam("channelGroup",
          [interleaved](Expr cg) {
            return transpose(map(
                lam("outRow",
                    [interleaved](Expr r) {
                      return transpose(join(interleaved ? transpose(std::move(r)) : std::move(r)));
                    }),
                cg));
          }),
      std::move(blocks)));
  if (kernelsOutermost) return kernelsFirst;
  // [M·c][OH][OW] -> [OH][OW][M·c].
  return map(lam("outRow", [](Expr r) { return transpose(std::move(r)); }),
             transpose(std::move(kernelsFirst)));
}

std::optional<Expr> map2DKernelBlocking(const RuleApplication& a) {
  return kernelBlocking(a, false);
}

std::optional<Expr> map2DKernelBlockingInterleaved(const RuleApplication& a) {
  return kernelBlocking(a, true);
}

// ---- vectorize-block-accumulators ----

// zipped = zip(a(w), b(k)) (0) or zip(b(k), a(w)) (1): the side of the window's values, or -1.
int windowSideOf(const Expr& zipped, const Expr& w, const Expr& k) {
  if (!zipped.isPrim(Op::Zip) || zipped.args().size() != 2) return -1;
  int windowSide = -1;
  for (int side = 0; side < 2; ++side) {
    const Expr& windowPart = zipped.args()[static_cast<size_t>(side)];
    const Expr& kernelPart = zipped.args()[static_cast<size_t>(1 - side)];
    if (!mentionsParam(windowPart, k) && !mentionsParam(kernelPart, w)) windowSide = side;
  }
  return windowSide;
}

// The levels aw = join^d(a') and bk = join^d(b') share (the same nested lengths): d, a', b'.
struct CommonLevels {
  int depth = 0;
  Expr window, kernel;
};
CommonLevels commonJoinLevels(const RuleApplication& a, const Expr& aw, const Expr& bk) {
  CommonLevels levels{0, aw, bk};
  while (levels.window.isPrim(Op::Join) && levels.kernel.isPrim(Op::Join)) {
    const Type windowInner = a.typeOf(levels.window.args()[0]);
    const Type kernelInner = a.typeOf(levels.kernel.args()[0]);
    if (!(windowInner.arrayLength() == kernelInner.arrayLength()) ||
        !(windowInner.arrayElement().arrayLength() == kernelInner.arrayElement().arrayLength())) {
      break;
    }
    levels.window = levels.window.args()[0];
    levels.kernel = levels.kernel.args()[0];
    ++levels.depth;
  }
  return levels;
}

// [a][n1]..[n_levels]... -> [n1]..[n_levels][a]...: the outer dimension moved `levels` down.
Expr outerInnermost(int levels, Expr x) {
  Expr result = transpose(std::move(x));
  for (int i = 1; i < levels; ++i) {
    result = mapDeep(
        i, [](Expr y) { return transpose(std::move(y)); }, std::move(result));
  }
  return result;
}

// A fresh lambda x' -> e[x := x'].
Expr freshLambda(const Expr& x, const Expr& e) {
  return lam(x.paramName(), [&](Expr fresh) { return substituteParams(e, {{x, fresh}}); });
}

std::optional<Expr> vectorizeBlockAccumulators(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& w = node.funs()[0].params()[0];
  const Expr& wb = node.args()[0];
  const Expr& joined = node.funs()[0].body();
  if (!joined.isPrim(Op::Join) || !joined.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& kernelMap = joined.args()[0];
  if (!isUnaryLambda(kernelMap.funs()[0])) return std::nullopt;
  const Expr& k = kernelMap.funs()[0].params()[0];
  const Expr& kg = kernelMap.args()[0];
  if (mentionsParam(kg, w)) return std::nullopt;
  const Expr& r = kernelMap.funs()[0].body();
  if (!r.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& z = r.args()[0];
  const Expr& f = r.funs()[0];
  const Expr& zipped = r.args()[1];
  if (mentionsParam(z, w) || mentionsParam(f, w) || mentionsParam(f, k)) return std::nullopt;
  if (!isSumOfProductsLambda(f)) return std::nullopt;
  const int windowSide = windowSideOf(zipped, w, k);
  if (windowSide < 0) return std::nullopt;
  const Expr& aw = zipped.args()[static_cast<size_t>(windowSide)];
  const Expr& bk = zipped.args()[static_cast<size_t>(1 - windowSide)];
  // κ = |kg| must be a vector width; the accumulator a scalar int or float.
  const Type kgType = a.typeOf(kg);
  const Type zType = a.typeOf(z);
  if (!kgType.isArray() || !zType.isScalar() || zType.scalarKind() == ScalarKind::Bool) {
    return std::nullopt;
  }
  std::optional<int64_t> width = kgType.arrayLength().constant();
  if (!width || !isValidVectorWidth(*width)) return std::nullopt;
  const Type awType = a.typeOf(aw);
  const Type bkType = a.typeOf(bk);
  if (!awType.isArray() || !(awType.arrayElement() == zType) || !bkType.isArray() ||
      !(bkType.arrayElement() == zType)) {
    return std::nullopt;
  }
  const Arith kappa(*width);
  const Arith sigma = a.typeOf(wb).arrayLength();
  // Joins both sides flatten alike (join(join(window)) and join(join(kernel)): [K][K][C]) are
  // kept as the outer levels of both, so that the loop over the window can be one loop per
  // level (code generation's flattenFactors) instead of one with divisions.
  const CommonLevels levels = commonJoinLevels(a, aw, bk);
  const Expr& windowPart = levels.window;
  const Expr& kernelPart = levels.kernel;
  const int depth = levels.depth;
  // The same initial value for every kernel (a split reduction's 0): filled, not computed.
  Expr inits = mentionsParam(z, k) ? asVector(kappa, map(freshLambda(k, z), kg))
                                   : asVector(kappa, fill(kappa, z));
  // [σ][n1]..[n_d+1] -> [n1]..[n_d+1][σ] -> [n][σ].
  Expr windowColumns =
      joinDeep(depth, outerInnermost(depth + 1, map(freshLambda(w, windowPart), wb)));
  // [κ][n1]..[n_d+1] -> [n1]..[n_d+1][κ] -> [n1]..[n_d][n_d+1 of <κ>] -> [n] of <κ>.
  Expr weightVectors =
      joinDeep(depth, mapDeep(
                          depth, [&](Expr q) { return asVector(kappa, join(std::move(q))); },
                          outerInnermost(depth + 1, map(freshLambda(k, kernelPart), kg))));
  Expr step = lam2("accs", "p", [](Expr accs, Expr pair) {
    return map(lam("q", [&](Expr q) { return get(0, q) + get(1, q) * get(1, pair); }),
               zip(std::move(accs), get(0, pair)));
  });
  Expr vectors = join(reduce(join(fill(sigma, std::move(inits))), step,
                             zip(std::move(windowColumns), std::move(weightVectors))));
  return map(lam("lanes", [](Expr v) { return asScalar(std::move(v)); }),
             split(Arith(1), std::move(vectors)));
}

// ---- map2d-split-reduction ----

// x of type [n1]..[nd][L] -> [S][n1]..[nd][L/S], part s holding the innermost elements s,
// s + S, s + 2·S, … (split(S) and a transpose at the innermost level, then the parts moved out
// level by level).
Expr innermostParts(int depth, const Arith& parts, Expr x) {
  Expr result = mapDeep(
      depth, [&](Expr y) { return transpose(split(parts, std::move(y))); }, std::move(x));
  for (int i = depth - 1; i >= 0; --i) {
    result = mapDeep(
        i, [](Expr y) { return transpose(std::move(y)); }, std::move(result));
  }
  return result;
}

std::optional<Expr> map2DSplitReduction(const RuleApplication& a) {
  std::optional<Expr> inner = matchTransposeOfMapTranspose(a.node);
  if (!inner) return std::nullopt;
  std::optional<KernelMap2D> m = matchKernelMap2D(*inner);
  if (!m || !isUnaryLambda(m->kernelFun)) return std::nullopt;
  const Expr& k = m->kernelFun.params()[0];
  const Expr& w = m->window;
  const Expr& r = m->kernelFun.body();
  if (!r.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& z = r.args()[0];
  const Expr& f = r.funs()[0];
  const Expr& zipped = r.args()[1];
  if (mentionsParam(z, w) || !isSumOfProductsLambda(f)) return std::nullopt;
  const int windowSide = windowSideOf(zipped, w, k);
  if (windowSide < 0) return std::nullopt;
  const std::optional<Expr> zeroOfZ = zeroOfScalar(a.typeOf(z));
  if (!zeroOfZ) return std::nullopt;
  const Expr& zero = *zeroOfZ;
  const Expr& aw = zipped.args()[static_cast<size_t>(windowSide)];
  const Expr& bk = zipped.args()[static_cast<size_t>(1 - windowSide)];
  const CommonLevels levels = commonJoinLevels(a, aw, bk);
  const int depth = levels.depth;
  // The innermost level (Listing 3: the channels) is what is split.
  Type innermost = a.typeOf(levels.window);
  for (int i = 0; i < depth; ++i) innermost = innermost.arrayElement();
  if (!innermost.isArray()) return std::nullopt;
  const Arith length = innermost.arrayLength();
  Arith parts = a.factor("parts", [&](RewriteContext& context) {
    return context.freshTuning("parts", Arith(1), length);
  });
  // [S][OH][OW][n1]..[L/S] and [S][M][n1]..[L/S]: every window's and kernel's parts, views.
  Expr windowParts = transpose(map(
      lam("r", [](Expr row) { return transpose(std::move(row)); }),
      map2DOf(
          lam(w.paramName(),
              [&](Expr fresh) {
                return innermostParts(depth, parts, substituteParams(levels.window, {{w, fresh}}));
              }),
          m->windows)));
  Expr kernelParts = transpose(
      map(lam(k.paramName(),
              [&](Expr fresh) {
                return innermostParts(depth, parts, substituteParams(levels.kernel, {{k, fresh}}));
              }),
          m->kernels));
  // Per part: the same map2D of the window × kernel sums over the part's elements, from 0.
  Expr partials = map(
      lam("part",
          [&](Expr part) {
            Expr perWindow = lam("window", [&](Expr window) {
              return join(map(lam("kernel",
                                  [&](Expr kernel) {
                                    Expr x = joinDeep(depth, window);
                                    Expr y = joinDeep(depth, kernel);
                                    return reduce(zero, f, windowSide == 0 ? zip(x, y) : zip(y, x));
                                  }),
                              get(1, part)));
            });
            return transpose(map(lam("r", [](Expr row) { return transpose(std::move(row)); }),
                                 map2DOf(perWindow, get(0, part))));
          }),
      zip(windowParts, kernelParts));
  // [S][M][OH][OW] -> [M][OH][OW][S]: each output's partial sums added to z(k).
  Expr inits = map(freshLambda(k, z), m->kernels);
  Expr total = lam("partials", [&](Expr all) {
    return map(lam("kernelSums",
                   [&](Expr kernelSums) {
                     return map(lam("sumRow",
                                    [&](Expr sumRow) {
                                      return join(map(
                                          lam("sums",
                                              [&](Expr sums) {
                                                return reduce(get(1, kernelSums),
                                                              lam2("acc", "partial",
                                                                   [](Expr acc, Expr partial) {
                                                                     return add(std::move(acc),
                                                                                std::move(partial));
                                                                   }),
                                                              sums);
                                              }),
                                          sumRow));
                                    }),
                                get(0, kernelSums));
                   }),
               zip(outerInnermost(3, std::move(all)), std::move(inits)));
  });
  return let(std::move(total), std::move(partials));
}

// ---- hoist-relayout ----

// The primitives a re-laid-out view of g is made of: the view primitives (isViewPrimitive) that
// select and rearrange g's scalars as they are; pad (it adds boundary elements) and
// asVector/asScalar (they regroup scalars into vectors and back) are left out. Zip needs no
// exception: it takes two or more arrays, and isViewOf follows one-argument primitives only.
bool isRelayoutPrimitive(Op op) {
  return isViewPrimitive(op) && op != Op::Pad && op != Op::AsVector && op != Op::AsScalar;
}

// A view of the param g alone: layout primitives and maps of layout functions over g (no
// other free param).
bool isViewOf(const Expr& e, const Expr& g) {
  if (isParamNode(e, g)) return true;
  if (!e.isPrim() || e.args().size() != 1) return false;
  if (e.isPrim(Op::Map)) {
    if (!isLayoutFunction(e.funs()[0]) || mentionsParam(e.funs()[0], g)) return false;
    const std::vector<uint64_t> free = freeParamsOf(e.funs()[0]);
    if (!free.empty()) return false;
  } else if (!isRelayoutPrimitive(e.primOp())) {
    return false;
  }
  return isViewOf(e.args()[0], g);
}

bool containsTranspose(const Expr& e) {
  bool found = false;
  forEachNode(e, [&](const Expr& n) { found = found || n.isPrim(Op::Transpose); });
  return found;
}

// An array whose innermost elements are scalars, of at least two dimensions.
bool isScalarArray(const Type& t) {
  if (!t.isArray() || !t.arrayElement().isArray()) return false;
  Type inner = t;
  while (inner.isArray()) inner = inner.arrayElement();
  return inner.isScalar();
}

bool typedScalarArray(const Expr& e, const RuleApplication& a) {
  try {
    return isScalarArray(a.typeOf(e));
  } catch (const std::exception&) {
    return false;
  }
}

// The first (pre-order) maximal view of g under `e` that is an array of scalars and reorders g
// (holds a transpose); `insideView` says whether e's parent is such a view of scalars already.
std::optional<Expr> relayoutView(const Expr& e, const Expr& g, const RuleApplication& a,
                                 bool insideView) {
  const bool view = !isParamNode(e, g) && isViewOf(e, g) && typedScalarArray(e, a);
  if (view && !insideView && containsTranspose(e)) return e;
  if (e.isLambda()) return relayoutView(e.body(), g, a, false);
  if (!e.isPrim()) return std::nullopt;
  for (const Expr& f : e.funs()) {
    if (auto found = relayoutView(f, g, a, false)) return found;
  }
  for (const Expr& arg : e.args()) {
    if (auto found = relayoutView(arg, g, a, view)) return found;
  }
  return std::nullopt;
}

// Rebuilds `e` with every occurrence of the node `target` (by identity) replaced.
Expr replaceNode(const Expr& e, const ExprNode* target, const Expr& replacement) {
  if (e.node() == target) return replacement;
  if (e.isLambda()) return e.withBody(replaceNode(e.body(), target, replacement));
  if (!e.isPrim()) return e;
  std::vector<Expr> funs, args;
  for (const Expr& f : e.funs()) funs.push_back(replaceNode(f, target, replacement));
  for (const Expr& arg : e.args()) args.push_back(replaceNode(arg, target, replacement));
  return e.withChildren(e.nats(), funs, args);
}

// A map that computes (a unary lambda that is not a layout function), high-level or already
// lowered to a loop or to work-items (mapSeqUnroll aside: its body is inlined per index), so
// that a re-layout can be hoisted out of a structure whose thread mapping is chosen.
bool isComputingMap(const Expr& e) {
  const bool mapLike = e.isPrim(Op::Map) || e.isPrim(Op::MapGlb) || e.isPrim(Op::MapWrg) ||
                       e.isPrim(Op::MapLcl) || e.isPrim(Op::MapSeq);
  return mapLike && isUnaryLambda(e.funs()[0]) && !isLayoutFunction(e.funs()[0]);
}

// Where a re-layout view is hoisted from: a chain of computing maps, maps[0] over data closed
// at the stage and each further map over a view of the previous map's param alone (the groups
// of a group: map2D's rows of a block of rows, a row's blocks), and the view, of the last
// map's param. With one map the copy is [n][view]; with d maps it is nested d deep, one view
// per innermost group, so that a view of a group of a group of the input (a block of A's rows
// in a blocked matmul) is copied as well as one of a group of the input.
struct HoistSite {
  std::vector<Expr> maps;
  Expr view;
};

// The chain under `body`, the body of maps.back(), whose last map's body holds a re-layout
// view. With `nested` false only maps.back() itself is tried. With `nested` the deepest view
// is taken first (pre-order among maps): a view of a group whose elements are read through a
// further view (a row's interleaved blocks, each transposed) is copied with both, so that the
// reduction reads the copy in order.
bool findHoistChain(const Expr& body, std::vector<Expr>& maps, Expr& view,
                    const RuleApplication& a, bool nested) {
  const Expr& g = maps.back().funs()[0].params()[0];
  if (nested) {
    bool done = false;
    forEachNode(body, [&](const Expr& n) {
      if (done || !isComputingMap(n) || !isViewOf(n.args()[0], g)) return;
      maps.push_back(n);
      if (findHoistChain(n.funs()[0].body(), maps, view, a, nested)) {
        done = true;
      } else {
        maps.pop_back();
      }
    });
    if (done) return true;
  }
  if (auto found = relayoutView(body, g, a, false)) {
    view = *found;
    return true;
  }
  return false;
}

// The first computing map (pre-order) under `e` whose data is closed over `inputs` and from
// which a chain reaches a re-layout view.
std::optional<HoistSite> hoistSite(const Expr& e, const std::vector<uint64_t>& inputs,
                                   const RuleApplication& a, bool nested) {
  if (isComputingMap(e)) {
    bool closed = true;
    for (uint64_t id : freeParamsOf(e.args()[0])) {
      closed = closed && std::find(inputs.begin(), inputs.end(), id) != inputs.end();
    }
    HoistSite site{{e}, Expr()};
    if (closed && findHoistChain(e.funs()[0].body(), site.maps, site.view, a, nested) &&
        (!nested || site.maps.size() >= 2)) {
      return site;
    }
  }
  if (e.isLambda()) return hoistSite(e.body(), inputs, a, nested);
  if (!e.isPrim()) return std::nullopt;
  for (const Expr& f : e.funs()) {
    if (auto found = hoistSite(f, inputs, a, nested)) return found;
  }
  for (const Expr& arg : e.args()) {
    if (auto found = hoistSite(arg, inputs, a, nested)) return found;
  }
  return std::nullopt;
}

// maps[i] rebuilt over zip(its data, its part of the copy), its param the pair: the maps
// inside it rebuilt likewise over the pair's second half, the view replaced by the copy's
// element. Each map keeps its primitive and dimension (a mapGlb stays one).
Expr overRelaid(const HoistSite& site, size_t i, const Expr& relaidPart) {
  const Expr& m = site.maps[i];
  const Expr& g = m.funs()[0].params()[0];
  Expr pair = Expr::param(g.paramName());
  Expr body = m.funs()[0].body();
  if (i + 1 < site.maps.size()) {
    body = replaceNode(body, site.maps[i + 1].node(), overRelaid(site, i + 1, get(1, pair)));
  } else {
    body = replaceNode(body, site.view.node(), get(1, pair));
  }
  body = substituteParams(body, {{g, get(0, pair)}});
  return m.withChildren(m.nats(), {Expr::lambda({pair}, body)}, {zip(m.args()[0], relaidPart)});
}

// hoist-relayout (`nested` false: a view of a closed map's own param) and
// hoist-relayout-nested (`nested`: a view of a group of a group, two maps deep or more).
std::optional<Expr> hoistRelayout(const RuleApplication& a, bool nested) {
  if (a.node.isFunction()) return std::nullopt;
  // Only at the definition's body or the body of a let at the top (as let-hoist).
  if (!isTopLevelStage(a)) return std::nullopt;
  const std::vector<uint64_t> inputs = freeParamsOf(a.node);
  std::optional<HoistSite> site = hoistSite(a.node, inputs, a, nested);
  if (!site) return std::nullopt;
  // The copy of every innermost group's view, [n0][n1]..[view], as layout maps over the chain.
  Expr views = site->view;
  Type viewsType = a.typeOf(site->view);
  for (size_t i = site->maps.size(); i-- > 0;) {
    const Expr& m = site->maps[i];
    views = map(freshLambda(m.funs()[0].params()[0], views), m.args()[0]);
    viewsType = Type::array(viewsType, a.typeOf(m.args()[0]).arrayLength());
  }
  Expr copied = copyOf(viewsType, views);
  Expr relaid = Expr::param("relaid");
  Expr context = replaceNode(a.node, site->maps[0].node(), overRelaid(*site, 0, relaid));
  return let(Expr::lambda({relaid}, context), copied);
}

}  // namespace

void addVectorBlockingRules(std::vector<Rule>& rules) {
  rules.push_back({"map2d-kernel-blocking",
                   "transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> f(w, k), ks))) => "
                   "join ∘ map(cg -> transpose(map(transpose ∘ join, cg))) ∘ map(kg -> "
                   "join(map(rg -> map(row -> map(wb -> map(w -> join(map(k -> f(w, k), kg)), "
                   "wb), split(σ, row)), rg), split(R, xs))), split(κ, ks))   [ks independent "
                   "of w; without the outer transposes: map(transpose) ∘ transpose ∘ the same]",
                   RuleFamily::Tiling,
                   {"kappa", "sigma", "rows"},
                   map2DKernelBlocking});
  rules.push_back({"map2d-kernel-blocking-interleaved",
                   "as map2d-kernel-blocking, but a block holds the windows b, b + W/σ, "
                   "b + 2·W/σ, … of its row: transpose(split(W/σ, row)) for split(σ, row), and "
                   "join ∘ transpose of the row's blocks for join   [σ | W]",
                   RuleFamily::Tiling,
                   {"kappa", "sigma", "rows"},
                   map2DKernelBlockingInterleaved});
  rules.push_back({"vectorize-block-accumulators",
                   "map(w -> join(map(k -> reduce(z(k), (acc, p) -> acc + p._0 * p._1, "
                   "zip(a(w), b(k))), kg)), wb) => map(asScalar) ∘ split(1) ∘ join ∘ "
                   "reduce(join(fill(σ, asVector(κ, map(z, kg)))), (accs, p) -> map(q -> q._0 + "
                   "q._1 * p._1, zip(accs, p._0)), zip(transpose(map(a, wb)), "
                   "join(map(asVector(κ), transpose(map(b, kg))))))   [κ = |kg| in {2, 3, 4, 8, "
                   "16}; int or float; joins common to a and b kept as nested levels]",
                   RuleFamily::Vectorization,
                   {},
                   vectorizeBlockAccumulators});
  rules.push_back({"map2d-split-reduction",
                   "transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(z(k), (acc, p) "
                   "-> acc + p._0 * p._1, zip(a(w), b(k))), ks))) => let(t -> map(zs -> "
                   "map2D'(sum from zs._1 of zs._0), zip(t', map(z, ks))), map(part -> "
                   "transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(0, +·, zip(w, "
                   "k)), part._1)), part._0), zip(parts(a, xs), parts(b, ks))))   [S parts of the "
                   "innermost level common to a and b, elements s, s + S, …: partial sums, then "
                   "their sum per output (t' = t with the parts innermost)]",
                   RuleFamily::Reduction,
                   {"parts"},
                   map2DSplitReduction});
  rules.push_back({"hoist-relayout",
                   "C[map(g -> B[v(g)], xs)] => let(r -> C[map(p -> B[p._1][g := p._0], "
                   "zip(xs, r))], map(..map(id)..)(map(g -> v(g), xs)))   [at the body or a "
                   "top-level let's body; xs closed there; v a view of g alone with a transpose, "
                   "an array of scalars: copied once, by a kernel of its own]",
                   RuleFamily::AddressSpace,
                   {},
                   [](const RuleApplication& a) { return hoistRelayout(a, false); }});
  rules.push_back({"hoist-relayout-nested",
                   "C[map(g0 -> ..map(g -> B[v(g)], ys(g0)).., xs)] => let(r -> C[the maps over "
                   "zip(their data, their part of r), v(g) the copy's element], "
                   "map(..map(id)..)(map(g0 -> ..map(g -> v(g), ys(g0)).., xs)))   [as "
                   "hoist-relayout for a group of a group: each map's data a view of the "
                   "enclosing map's param alone; the deepest view taken; copied nested]",
                   RuleFamily::AddressSpace,
                   {},
                   [](const RuleApplication& a) { return hoistRelayout(a, true); }});
}

}  // namespace weft::rewrite
