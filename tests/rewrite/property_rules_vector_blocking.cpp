// Property tests of the macro rules of rewrite/rules_vector_blocking.cpp: map2d-kernel-blocking,
// vectorize-block-accumulators, map2d-split-reduction and hoist-relayout.
//
// For each rule, rapidcheck builds random well-typed programs where the rule applies (targeted
// generators: random concrete lengths chosen so that the rule's divisibility conditions hold,
// random int or float element types, random per-window and per-kernel functions, windows and
// kernels of one to three nested levels flattened with join, with and without the enclosing
// transposes or lets the rules look for), applies the rule through the engine (applyAt, which
// re-type-checks the result) with random valid factors, runs the original and the rewritten
// program in the interpreter on the same random inputs and compares the results exactly (none
// of these rules reorders a float operation: vectorize-block-accumulators keeps every lane's sum
// in the original order). Each property counts its applications, reports them with MESSAGE and
// requires at least 50. Unit tests check where a rule must not match and that factors left out
// become tuning variables.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "rewrite/engine.h"
#include "rewrite/rule_helpers.h"
#include "tests/support/blocking_rule_check.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing;

// ---- map2d-kernel-blocking ------------------------------------------------------------------

namespace {

// Both blockings (consecutive and interleaved windows per block) on the same random programs.
void checkKernelBlocking(const std::string& ruleName) {
  checkRuleApplications(ruleName, [&](std::mt19937_64& rng, const ScalarKind kind) {
    const Type t = Type::scalar(kind);
    const int channels = coin(rng) ? 0 : pick(rng, 1, 3);  // 0: scalar pixels
    const Type pixel = channels == 0 ? t : arrayOf(t, channels);
    const int height = pick(rng, 1, 6);
    const int width = pick(rng, 1, 6);
    const int kernels = pick(rng, 1, 6);
    const bool padded = coin(rng);  // a pad2D view between the input and the map2D
    const bool outerTransposes = coin(rng);
    const int shape = pick(rng, 0, 2);  // what f(w, k) is
    const bool computedKernels = coin(rng);
    const int rows = divisorOf(rng, height + (padded ? 2 : 0));
    const int sigma = divisorOf(rng, width + (padded ? 2 : 0));
    const int kappa = divisorOf(rng, kernels);
    Expr target;
    Definition original = definition(
        "p",
        {{"xs", arrayOf(arrayOf(pixel, width), height)}, {"ks", arrayOf(t, kernels)}, {"s", t}},
        [&](const auto& p) {
          Expr image = padded ? pad2D(1, 1, 1, 1, Boundary::Clamp, p[0]) : p[0];
          Expr ks = computedKernels
                        ? map(lam("kk", [&](Expr kk) { return randomTerm(rng, kind, kk); }), p[1])
                        : p[1];
          // f(w, k): [t]c for c = 1 (a reduce, a filled scalar), 2 (fill) or the channels.
          auto f = [&](Expr w, Expr k) -> Expr {
            if (channels == 0) {
              return fill(shape == 0 ? 2 : 1, randomTerm(rng, kind, w) * k + p[2]);
            }
            if (shape == 2) return map(lam("v", [&](Expr v) { return v * k + p[2]; }), w);
            if (shape == 1) return sumOf(w, kind);
            return map(lam("v", [&](Expr v) { return v * k; }), sumOf(w, kind));
          };
          Expr windowFunction = lam("w", [&](Expr w) {
            return join(map(lam("k", [&](Expr k) { return f(w, k); }), ks));
          });
          Expr mapped = map2D(windowFunction, image);
          target = outerTransposes
                       ? transpose(map(lam("r", [](Expr r) { return transpose(r); }), mapped))
                       : mapped;
          return target;
        });
    Definition rewritten =
        rewriteAt(original, ruleName, target,
                  {{"kappa", Arith(kappa)}, {"sigma", Arith(sigma)}, {"rows", Arith(rows)}});
    RC_TAG(outerTransposes ? "kernels outermost" : "kernels innermost");
    checkRewriteKeepsResult(original, rewritten, rng);
  });
}

}  // namespace

TEST_CASE("map2d-kernel-blocking preserves maps of kernels over 2D windows") {
  checkKernelBlocking("map2d-kernel-blocking");
}

TEST_CASE("map2d-kernel-blocking-interleaved preserves maps of kernels over 2D windows") {
  checkKernelBlocking("map2d-kernel-blocking-interleaved");
}

TEST_CASE("map2d-kernel-blocking: no match when the kernels depend on the window") {
  const Type t = Type::intType();
  Expr target;
  Definition d =
      definition("p", {{"xs", arrayOf(arrayOf(arrayOf(t, 2), 3), 3)}}, [&](const auto& p) {
        target = map2D(
            lam("w",
                [&](Expr w) { return join(map(lam("k", [](Expr k) { return fill(1, k); }), w)); }),
            p[0]);
        return target;
      });
  CHECK_FALSE(tryRuleAt(d, "map2d-kernel-blocking", target).has_value());
}

TEST_CASE("map2d-kernel-blocking with symbolic factors gives a parametric, well-typed program") {
  const Type t = Type::floatType();
  Expr target;
  Definition d = definition(
      "p", {{"xs", arrayOf(arrayOf(t, 6), 4)}, {"ks", arrayOf(t, 4)}}, [&](const auto& p) {
        Expr f = lam("w", [&](Expr w) {
          return join(map(lam("k", [&](Expr k) { return fill(1, w * k); }), p[1]));
        });
        target = transpose(map(lam("r", [](Expr r) { return transpose(r); }), map2D(f, p[0])));
        return target;
      });
  RewriteContext context;
  auto result = applyAt(d, testing::ruleNamed("map2d-kernel-blocking"),
                        testing::positionOf(d, target), {}, context);
  REQUIRE(result.has_value());
  REQUIRE(context.tuningVariables().size() == 3);
  std::mt19937_64 rng(3);
  std::vector<Value> inputs;
  for (const Expr& param : d.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), {}, rng));
  }
  const Value expected = interpret(d, inputs, {});
  for (auto [kappa, sigma, rows] : {std::tuple{1, 1, 1}, {2, 3, 2}, {4, 6, 4}, {2, 2, 1}}) {
    ArithBinding tuned{{context.tuningVariables()[0].varName(), kappa},
                       {context.tuningVariables()[1].varName(), sigma},
                       {context.tuningVariables()[2].varName(), rows}};
    CHECK(interpret(*result, inputs, tuned) == expected);
  }
}

// ---- vectorize-block-accumulators -----------------------------------------------------------

namespace {

// x's `levels` nested levels flattened to one.
Expr joinAll(Expr x, int levels) { return joinTimes(std::move(x), levels - 1); }

}  // namespace

TEST_CASE("vectorize-block-accumulators preserves blocks of dot products exactly") {
  checkRuleApplications(
      "vectorize-block-accumulators", [&](std::mt19937_64& rng, const ScalarKind kind) {
        const Type t = Type::scalar(kind);
        static const int widths[] = {2, 3, 4, 8, 16};
        const int kappa = widths[pick(rng, 0, 4)];
        const int sigma = pick(rng, 1, 4);
        const int groups = pick(rng, 1, 2);
        // The window's and the kernel's shapes: one to three levels, the same total length n; the
        // kernel's is sometimes shaped differently (only the common joins are kept as levels).
        const int levels = pick(rng, 1, 3);
        std::vector<int> windowShape;
        for (int i = 0; i < levels; ++i) windowShape.push_back(pick(rng, 1, 3));
        int n = 1;
        for (int length : windowShape) n *= length;
        std::vector<int> kernelShape = windowShape;
        const int kernelShapeKind = levels > 1 ? pick(rng, 0, 2) : 0;
        if (kernelShapeKind == 1) kernelShape = {n};
        if (kernelShapeKind == 2) kernelShape.assign(windowShape.rbegin(), windowShape.rend());
        const bool tupleKernels = coin(rng);  // kernels zipped with biases: z(k) = k._1
        const bool swappedZip = coin(rng);
        const bool swappedProduct = coin(rng);
        const bool accumulatorRight = coin(rng);
        const bool insideGroups = coin(rng);  // kg a param of an enclosing map over kernel groups
        Expr target;
        Definition original = definition(
            "p",
            {{"ws", arrayOf(nestedArray(t, windowShape), sigma)},
             {"ks", arrayOf(nestedArray(t, kernelShape), kappa * groups)},
             {"bs", arrayOf(t, kappa * groups)},
             {"s", t}},
            [&](const auto& p) {
              Expr kernels = tupleKernels ? zip(p[1], p[2]) : p[1];
              auto block = [&](Expr kg) {
                target = map(
                    lam("w",
                        [&](Expr w) {
                          return join(map(
                              lam("k",
                                  [&](Expr k) {
                                    Expr weights = tupleKernels ? get(0, k) : k;
                                    Expr z = tupleKernels ? get(1, k) : p[3];
                                    Expr a = joinAll(w, levels);
                                    Expr b = joinAll(weights, static_cast<int>(kernelShape.size()));
                                    Expr f = lam2("acc", "q", [&](Expr acc, Expr q) {
                                      Expr product = swappedProduct ? get(1, q) * get(0, q)
                                                                    : get(0, q) * get(1, q);
                                      return accumulatorRight ? product + acc : acc + product;
                                    });
                                    return reduce(z, f, swappedZip ? zip(b, a) : zip(a, b));
                                  }),
                              kg));
                        }),
                    p[0]);
                return target;
              };
              if (!insideGroups && groups == 1) return block(kernels);
              return map(lam("g", [&](Expr g) { return block(g); }), split(kappa, kernels));
            });
        Definition rewritten = rewriteAt(original, "vectorize-block-accumulators", target, {});
        RC_ASSERT(countPrims(rewritten.function.body(), Op::AsVector) == 2);
        RC_TAG(std::to_string(levels) + " levels, kernel shape " + std::to_string(kernelShapeKind));
        checkRewriteKeepsResult(original, rewritten, rng);
      });
}

TEST_CASE("vectorize-block-accumulators: no match for other widths, operators or dependences") {
  const Type t = Type::floatType();
  auto matches = [&](int kernels, bool product, bool windowKernels) {
    Expr target;
    Definition d = definition(
        "p", {{"ws", arrayOf(arrayOf(t, 3), 2)}, {"ks", arrayOf(arrayOf(t, 3), kernels)}},
        [&](const auto& p) {
          target = map(lam("w",
                           [&](Expr w) {
                             return join(map(lam("k",
                                                 [&](Expr k) {
                                                   Expr f = lam2("acc", "q", [&](Expr acc, Expr q) {
                                                     return product ? acc + get(0, q) * get(1, q)
                                                                    : acc + get(0, q) - get(1, q);
                                                   });
                                                   return reduce(lit(0.0f), f, zip(w, k));
                                                 }),
                                             windowKernels ? fill(4, w) : p[1]));
                           }),
                       p[0]);
          return target;
        });
    return tryRuleAt(d, "vectorize-block-accumulators", target).has_value();
  };
  CHECK(matches(4, true, false));
  CHECK_FALSE(matches(5, true, false));   // not a vector width
  CHECK_FALSE(matches(4, false, false));  // not acc + x * y
  CHECK_FALSE(matches(4, true, true));    // the kernels depend on the window
}

// ---- map2d-split-reduction ------------------------------------------------------------------

TEST_CASE("map2d-split-reduction preserves map2Ds of window x kernel sums of products") {
  checkRuleApplications("map2d-split-reduction", [&](std::mt19937_64& rng, const ScalarKind kind) {
    const Type t = Type::scalar(kind);
    // Windows and kernels of one to three levels with the same shape (Listing 3: [K][K][C]);
    // the innermost level is split into `parts`.
    const int levels = pick(rng, 1, 3);
    std::vector<int> shape;
    for (int i = 0; i + 1 < levels; ++i) shape.push_back(pick(rng, 1, 3));
    const int parts = pick(rng, 1, 3);
    shape.push_back(parts * pick(rng, 1, 2));
    const int height = pick(rng, 1, 3);
    const int width = pick(rng, 1, 3);
    const int kernels = pick(rng, 1, 4);
    const bool tupleKernels = coin(rng);  // kernels zipped with biases: z(k) = k._1
    const bool swappedZip = coin(rng);
    const bool swappedProduct = coin(rng);
    const bool accumulatorRight = coin(rng);
    const bool computedWindows = coin(rng);  // the windows a computed array, not an input
    Expr target;
    Definition original = definition(
        "p",
        {{"xs", arrayOf(arrayOf(nestedArray(t, shape), width), height)},
         {"ks", arrayOf(nestedArray(t, shape), kernels)},
         {"bs", arrayOf(t, kernels)},
         {"s", t}},
        [&](const auto& p) {
          Expr windows = p[0];
          if (computedWindows) {
            windows =
                map(lam("row",
                        [&](Expr row) {
                          return map(lam("w",
                                         [&](Expr w) {
                                           return rewrite::mapDeep(
                                               levels,
                                               [&](Expr x) { return randomTerm(rng, kind, x); }, w);
                                         }),
                                     row);
                        }),
                    windows);
          }
          Expr ks = tupleKernels ? zip(p[1], p[2]) : p[1];
          Expr perWindow = lam("w", [&](Expr w) {
            return join(map(lam("k",
                                [&](Expr k) {
                                  Expr weights = tupleKernels ? get(0, k) : k;
                                  Expr z = tupleKernels ? get(1, k) : p[3];
                                  Expr a = joinTimes(w, levels - 1);
                                  Expr b = joinTimes(weights, levels - 1);
                                  Expr f = lam2("acc", "q", [&](Expr acc, Expr q) {
                                    Expr product = swappedProduct ? get(1, q) * get(0, q)
                                                                  : get(0, q) * get(1, q);
                                    return accumulatorRight ? product + acc : acc + product;
                                  });
                                  return reduce(z, f, swappedZip ? zip(b, a) : zip(a, b));
                                }),
                            ks));
          });
          target = transpose(
              map(lam("r", [](Expr r) { return transpose(r); }), map2D(perWindow, windows)));
          return target;
        });
    Definition rewritten =
        rewriteAt(original, "map2d-split-reduction", target, {{"parts", Arith(parts)}});
    RC_TAG(std::to_string(levels) + " levels, " + std::to_string(parts) + " parts");
    // Float sums are re-associated (parts, then their sum): equal within the tolerance.
    checkRewriteKeepsResult(original, rewritten, rng, kind == ScalarKind::Float);
  });
}

TEST_CASE("map2d-split-reduction: no match without the outer transposes or a sum of products") {
  const Type t = Type::floatType();
  auto matches = [&](bool transposes, bool product) {
    Expr target;
    Definition d = definition(
        "p", {{"xs", arrayOf(arrayOf(arrayOf(t, 4), 2), 2)}, {"ks", arrayOf(arrayOf(t, 4), 3)}},
        [&](const auto& p) {
          Expr f = lam("w", [&](Expr w) {
            return join(map(lam("k",
                                [&](Expr k) {
                                  Expr op = lam2("acc", "q", [&](Expr acc, Expr q) {
                                    return product ? acc + get(0, q) * get(1, q)
                                                   : acc + get(0, q) - get(1, q);
                                  });
                                  return reduce(lit(0.0f), op, zip(w, k));
                                }),
                            p[1]));
          });
          Expr mapped = map2D(f, p[0]);
          target = transposes
                       ? transpose(map(lam("r", [](Expr r) { return transpose(r); }), mapped))
                       : mapped;
          return target;
        });
    return tryRuleAt(d, "map2d-split-reduction", target, {{"parts", Arith(2)}}).has_value();
  };
  CHECK(matches(true, true));
  CHECK_FALSE(matches(false, true));  // the kernels innermost: not the form it rewrites
  CHECK_FALSE(matches(true, false));  // not acc + x * y
}

// ---- hoist-relayout -------------------------------------------------------------------------

TEST_CASE("hoist-relayout preserves programs while copying a group's reordered view once") {
  checkRuleApplications("hoist-relayout", [&](std::mt19937_64& rng, const ScalarKind kind) {
    const Type t = Type::scalar(kind);
    const int groups = pick(rng, 1, 3);
    const int a = pick(rng, 1, 4);
    const int b = pick(rng, 1, 4);
    const int viewKind = pick(rng, 0, 2);
    const bool tupleGroups = coin(rng);  // groups zipped with a second input (g._0, g._1)
    const bool inLet = coin(rng);        // the map inside a top-level let's body
    const bool layoutAbove = coin(rng);  // a transpose between the body and the map
    const bool useGroupToo = coin(rng);  // the body also reads g besides the view
    // The map over the groups high-level (0), or already lowered: mapGlb (1), mapSeq (2).
    const int lowered = pick(rng, 0, 2);
    // The view is of a group of a group: 0 (g itself), 1 or 2 maps deep, each over g's
    // elements as they are or re-split (a view of the enclosing param).
    const int nesting = pick(rng, 0, 2);
    const int c = pick(rng, 1, 3);
    Type groupType = arrayOf(arrayOf(t, a), b);
    for (int level = 0; level < nesting; ++level) groupType = arrayOf(groupType, c);
    Definition original = definition(
        "p",
        {{"xs", arrayOf(groupType, groups)}, {"ys", arrayOf(t, groups)}, {"s", t}},
        [&](const auto& p) {
          auto body = [&](Expr input) {
            Expr data = tupleGroups ? zip(input, p[1]) : input;
            auto groupsMap = [&](Expr f, Expr x) {
              if (lowered == 1) return mapGlb(Arith(0), f, x);
              if (lowered == 2) return mapSeq(f, x);
              return map(f, x);
            };
            Expr mapped = groupsMap(
                lam("g",
                    [&](Expr g) {
                      // The innermost group's sums.
                      auto sumsOf = [&](Expr matrix) -> Expr {  // matrix: [b][a]
                        Expr view;
                        if (viewKind == 0) view = transpose(matrix);  // [a][b]
                        if (viewKind == 1) {
                          view = map(lam("c", [](Expr c) { return join(split(1, c)); }),
                                     transpose(matrix));
                        }
                        if (viewKind == 2) view = split(b, join(transpose(matrix)));
                        Expr g2 = randomTerm(rng, kind, p[2]);
                        Expr sums =
                            join(map(lam("c", [&](Expr c) { return sumOf(c, kind); }), view));
                        if (useGroupToo && tupleGroups) {
                          return map(lam("v", [&](Expr v) { return v * get(1, g) + g2; }), sums);
                        }
                        if (useGroupToo) {  // scaled by the sum of the group's values
                          return join(map(lam("total",
                                              [&](Expr total) {
                                                return map(lam("v", [&](Expr v) { return v * total; }),
                                                           sums);
                                              }),
                                          sumOf(join(matrix), kind)));
                        }
                        return map(lam("v", [&](Expr v) { return v + g2; }), sums);
                      };
                      // Nested in `levels` maps over groups of the group.
                      std::function<Expr(Expr, int)> nest = [&](Expr group, int levels) -> Expr {
                        if (levels == 0) return sumsOf(group);
                        // The group re-split to its own shape: [c][b][a] or [c][c]..
                        Expr elements =
                            coin(rng) ? group : split(levels == 1 ? b : c, join(group));
                        return map(lam("h", [&, levels](Expr h) { return nest(h, levels - 1); }),
                                   elements);
                      };
                      return nest(tupleGroups ? get(0, g) : g, nesting);
                    }),
                data);
            return layoutAbove ? transpose(mapped) : mapped;
          };
          if (!inLet) return body(p[0]);
          // The stage adds s to every scalar of xs (2 + nesting levels below the groups).
          std::function<Expr(Expr, int)> plusS = [&](Expr x, int levels) -> Expr {
            if (levels == 0) return x + p[2];
            return map(lam("e", [&, levels](Expr e) { return plusS(e, levels - 1); }), x);
          };
          return let(lam("stage", [&](Expr stage) { return body(stage); }),
                     plusS(p[0], 3 + nesting));
        });
    const Expr& root = original.function.body();
    const Expr target = inLet ? root.funs()[0].body() : root;
    Definition rewritten =
        rewriteAt(original, nesting > 0 ? "hoist-relayout-nested" : "hoist-relayout", target, {});
    RC_ASSERT(countPrims(rewritten.function.body(), Op::Let) ==
              countPrims(original.function.body(), Op::Let) + 1);
    RC_ASSERT(countPrims(rewritten.function.body(), Op::Id) == 1);
    // A lowered map over the groups stays lowered (the copy's maps are high-level).
    if (lowered != 0) {
      const Op groupsOp = lowered == 1 ? Op::MapGlb : Op::MapSeq;
      RC_ASSERT(countPrims(rewritten.function.body(), groupsOp) == 1);
    }
    RC_TAG(std::string(inLet ? "in a let" : "at the body") + ", view " + std::to_string(viewKind) +
           ", nested " + std::to_string(nesting) + ", groups map " + std::to_string(lowered));
    checkRewriteKeepsResult(original, rewritten, rng);
  });
}

TEST_CASE("hoist-relayout(-nested): no match without a reordering view, or below a map") {
  const Type t = Type::intType();
  auto build = [&](bool reorders, Expr* inner) {
    return definition("p", {{"xs", arrayOf(arrayOf(arrayOf(t, 2), 3), 2)}}, [&](const auto& p) {
      Expr mapped =
          map(lam("g",
                  [&](Expr g) {
                    Expr view = reorders ? transpose(g) : join(g);
                    Expr rows = reorders ? view : split(2, view);
                    return map(lam("c", [](Expr c) { return sumOf(c, ScalarKind::Int); }), rows);
                  }),
              p[0]);
      if (inner) *inner = mapped.funs()[0].body();
      return mapped;
    });
  };
  Expr inner;
  Definition withTranspose = build(true, &inner);
  CHECK(tryRuleAt(withTranspose, "hoist-relayout", withTranspose.function.body()).has_value());
  // The nested rule needs a view two maps deep.
  CHECK_FALSE(
      tryRuleAt(withTranspose, "hoist-relayout-nested", withTranspose.function.body()).has_value());
  CHECK_FALSE(tryRuleAt(withTranspose, "hoist-relayout", inner).has_value());
  Definition inOrder = build(false, nullptr);
  CHECK_FALSE(tryRuleAt(inOrder, "hoist-relayout", inOrder.function.body()).has_value());
}
