// The reduction and convolution rules the direct-convolution strategy needs (paper: "Lift-based
// direct convolution on Mali", sections 3.4 and 4.2, Listings 3 and 4): optimisation padding
// for 2D sliding windows (ρ extra windows for tiles; or the fewest that make the window counts
// multiples of a block's, so that blocks need not divide the output), partial reduction and strided (coalesced) traversal of a sum-reduction
// whose operator is `acc + g(x)` (the convolution's `acc + x * w` with the kernel's bias as the
// initial value), vectorisation of a dot-product reduction with `dot`, and the general
// map/reduce interchange that gives every thread one private accumulator per kernel.
//
// Each rule rewrites one node into an equal computation (checked against the interpreter by
// tests/rewrite/property_rules_convolution.cpp); sums of floats are reassociated by
// partial-reduce-sum, reduce-reorder-stride and vectorize-dot, so those are equal up to
// rounding. Size conditions (divisibility, exact coverage) are left to the type rules of the
// primitives the rules emit (split, reorder, asVector record them as constraints); conditions on
// the program (the operator is a sum, g does not read the accumulator, the reduction's function
// does not read the mapped row) are checked here, and the rule does not match when they fail.
// Every rewritten lambda gets fresh params (substituteParams), so no param is bound twice.
#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

namespace {

// A one-param lambda whose body is `op(param)`-shaped: `param -> prim(param)` for a one-argument
// primitive `op`; returns the primitive node.
std::optional<Expr> unaryPrimOnParam(const Expr& f, Op op) {
  if (!isUnaryLambda(f)) return std::nullopt;
  const Expr& body = f.body();
  if (!body.isPrim(op) || body.args().empty()) return std::nullopt;
  if (!isParamNode(body.args().back(), f.params()[0])) return std::nullopt;
  return body;
}

// ---- pad-for-tiling-2d --------------------------------------------------------------------


// The parts of pad2D's expansion
//   transpose(map(col -> pad(t, b, B, col), transpose(map(row -> pad(l, r, B, row), x))))
// (one boundary B for both pads).
struct Pad2DParts {
  Arith left, right, top, bottom;
  PrimAttribute boundary;
  Expr input;
};

std::optional<Pad2DParts> matchPad2D(const Expr& node) {
  if (!node.isPrim(Op::Transpose)) return std::nullopt;
  const Expr& columns = node.args()[0];
  if (!columns.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> columnPad = unaryPrimOnParam(columns.funs()[0], Op::Pad);
  if (!columnPad) return std::nullopt;
  const Expr& inner = columns.args()[0];
  if (!inner.isPrim(Op::Transpose)) return std::nullopt;
  const Expr& rows = inner.args()[0];
  if (!rows.isPrim(Op::Map)) return std::nullopt;
  std::optional<Expr> rowPad = unaryPrimOnParam(rows.funs()[0], Op::Pad);
  if (!rowPad) return std::nullopt;
  if (!(columnPad->attribute() == rowPad->attribute())) return std::nullopt;
  return Pad2DParts{rowPad->nats()[0],    rowPad->nats()[1],   columnPad->nats()[0],
                    columnPad->nats()[1], rowPad->attribute(), rows.args()[0]};
}

// slide2D(s1, s2, t1, t2, pad2D(l, r, t, b, B, x))
//   => crop2D(0, ρ1, 0, ρ2, slide2D(s1, s2, t1, t2, pad2D(l, r + ρ2·t2, t, b + ρ1·t1, B, x)))
// slide2D(s1, s2, t1, t2, x)
//   => crop2D(0, ρ1, 0, ρ2, slide2D(s1, s2, t1, t2, pad2D(0, ρ2·t2, 0, ρ1·t1, clamp, x)))
// The ρ extra windows per dimension lie entirely right of / below the original windows (the
// kept windows end at row (n1-1)·t1 + s1 <= H), so the added padding is never read by a kept
// window and its boundary does not matter. Mirror padding may reflect at most once, so a
// mirror pad2D is kept and a clamp pad2D added around it instead of widened. `extraWindows`
// gives ρ1 and ρ2 from the window counts n1 and n2, or nothing when the rule does not apply.
std::optional<Expr> padSlide2D(
    const RuleApplication& application,
    const std::function<std::optional<std::pair<Arith, Arith>>(const Arith&, const Arith&)>&
        extraWindows) {
  // slide2D's expansion with the same slide primitive in both dimensions.
  std::optional<Slide2DExpansion> slide2D = matchSlide2D(application.node);
  if (slide2D && slide2D->outerOp != slide2D->innerOp) slide2D.reset();
  if (!slide2D) return std::nullopt;
  const Type inputType = application.typeOf(slide2D->x);
  if (!inputType.isArray() || !inputType.arrayElement().isArray()) return std::nullopt;
  const Type windowsType = application.typeOf(application.node);
  std::optional<std::pair<Arith, Arith>> rho =
      extraWindows(windowsType.arrayLength(), windowsType.arrayElement().arrayLength());
  if (!rho) return std::nullopt;
  const auto& [rhoRows, rhoColumns] = *rho;
  const Arith extraRight = rhoColumns * slide2D->step2;
  const Arith extraBottom = rhoRows * slide2D->step1;
  Expr padded;
  std::optional<Pad2DParts> pad2DParts = matchPad2D(slide2D->x);
  if (pad2DParts && pad2DParts->boundary.boundary != Boundary::Mirror) {
    padded = pad2D(pad2DParts->left, pad2DParts->right + extraRight, pad2DParts->top,
                   pad2DParts->bottom + extraBottom, pad2DParts->boundary, pad2DParts->input);
  } else {
    padded = pad2D(Arith(0), extraRight, Arith(0), extraBottom, Boundary::Clamp, slide2D->x);
  }
  return crop2D(0, rhoRows, 0, rhoColumns,
                buildSlide2D(slide2D->outerOp, slide2D->innerOp, slide2D->size1, slide2D->size2,
                             slide2D->step1, slide2D->step2, std::move(padded)));
}

// pad-for-tiling-2d: ρ extra windows in both dimensions, a tuning variable (paper 4.2.1).
std::optional<Expr> padForTiling2D(const RuleApplication& application) {
  return padSlide2D(application, [&](const Arith& rows, const Arith&) {
    const Type inputType = application.typeOf(matchSlide2D(application.node)->x);
    const Arith height = inputType.arrayLength();
    Arith rho = application.factor(
        "rho", [&](RewriteContext& context) { return context.freshTuning("rho", 0, height); });
    (void)rows;
    return std::optional<std::pair<Arith, Arith>>({rho, rho});
  });
}

// pad-for-blocking-2d: the fewest extra windows that make the window counts multiples of q1
// (rows) and q2 (columns), both given: ρ = (q - n mod q) mod q. Blocks of q windows then cover
// the padded windows exactly, and the surplus of the last block is cropped.
std::optional<Expr> padForBlocking2D(const RuleApplication& application) {
  const std::optional<Arith> rowsMultiple = application.given("rows_multiple");
  const std::optional<Arith> columnsMultiple = application.given("columns_multiple");
  if (!rowsMultiple || !columnsMultiple) return std::nullopt;
  return padSlide2D(application, [&](const Arith& rows, const Arith& columns) {
    auto extra = [](const Arith& n, const Arith& q) { return (q - n % q) % q; };
    return std::optional<std::pair<Arith, Arith>>(
        {extra(rows, *rowsMultiple), extra(columns, *columnsMultiple)});
  });
}

// ---- sums: reduce(z, (acc, x) -> acc + g(x), xs) -------------------------------------------

// A reduction whose function is (acc, x) -> acc + g(x) or g(x) + acc, with g not reading acc
// and the accumulator an int or float scalar.
struct SumReduction {
  Expr init;
  Expr accumulator;  // acc, the function's first param
  Expr element;      // x, its second param
  Expr term;         // g(x)
  Expr input;        // xs
  ScalarKind kind;
};

std::optional<SumReduction> matchSumReduction(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!f.isLambda() || f.params().size() != 2) return std::nullopt;
  const Expr& acc = f.params()[0];
  const Expr& body = f.body();
  if (!body.isPrim(Op::Add) || body.args().size() != 2) return std::nullopt;
  Expr term;
  if (isParamNode(body.args()[0], acc)) {
    term = body.args()[1];
  } else if (isParamNode(body.args()[1], acc)) {
    term = body.args()[0];
  } else {
    return std::nullopt;
  }
  if (mentionsParam(term, acc)) return std::nullopt;
  const Type initType = application.typeOf(node.args()[0]);
  if (!initType.isScalar() || initType.scalarKind() == ScalarKind::Bool) return std::nullopt;
  return SumReduction{node.args()[0],       acc, f.params()[1], term, node.args()[1],
                      initType.scalarKind()};
}

Expr zeroOf(ScalarKind kind) { return kind == ScalarKind::Float ? lit(0.0f) : lit(0); }

// A fresh copy of (acc, x) -> acc + g(x): new params, g's x replaced by the new x.
Expr freshSumFunction(const SumReduction& sum) {
  return lam2("acc", "x", [&](Expr acc, Expr x) {
    return std::move(acc) + substituteParams(sum.term, {{sum.element, std::move(x)}});
  });
}

// reduce(z, (acc, x) -> acc + g(x), xs)
//   => reduce(z, (a, y) -> a + y,
//             join(map(chunk -> reduce(0, (acc, x) -> acc + g(x), chunk), split(ω, xs))))
// Sound for any z: z + Σ g(x) = z + Σ_chunks (0 + Σ_chunk g(x)) (reassociated for floats).
std::optional<Expr> partialReduceSum(const RuleApplication& application) {
  std::optional<SumReduction> sum = matchSumReduction(application);
  if (!sum) return std::nullopt;
  const Type inputType = application.typeOf(sum->input);
  if (!inputType.isArray()) return std::nullopt;
  const Arith length = inputType.arrayLength();
  Arith omega = application.factor(
      "omega", [&](RewriteContext& context) { return context.freshTuning("omega", 1, length); });
  Expr chunkSums =
      map(lam("chunk",
              [&](Expr chunk) {
                return reduce(zeroOf(sum->kind), freshSumFunction(*sum), std::move(chunk));
              }),
          split(omega, sum->input));
  // Each chunk's reduce is a one-element array: [[T]1]chunks, joined to [T]chunks.
  return reduce(sum->init, lam2("a", "y", [](Expr a, Expr y) { return a + y; }),
                join(std::move(chunkSums)));
}

// reduce(z, (acc, x) -> acc + g(x), xs) => reduce(z, same f, reorder(stride(s), xs))   [s | n]
// reduce(z, f, zip(a, b, ...)) => reduce(z, f, zip(reorder(stride(s), a), reorder(stride(s), b),
// ...)): reordering a zip is zipping the reordered arrays; the reorder is pushed into the zip
// so that each array keeps its own layout (as Listing 4 reorders windows and kernels apart).
std::optional<Expr> reduceReorderStride(const RuleApplication& application) {
  std::optional<SumReduction> sum = matchSumReduction(application);
  if (!sum) return std::nullopt;
  const Type inputType = application.typeOf(sum->input);
  if (!inputType.isArray()) return std::nullopt;
  const Arith length = inputType.arrayLength();
  Arith s = application.factor(
      "s", [&](RewriteContext& context) { return context.freshTuning("stride", 1, length); });
  Expr reordered;
  if (sum->input.isPrim(Op::Zip)) {
    std::vector<Expr> arrays;
    for (const Expr& array : sum->input.args()) arrays.push_back(reorderStride(s, array));
    reordered = zip(std::move(arrays));
  } else {
    reordered = reorderStride(s, sum->input);
  }
  return reduce(sum->init, freshSumFunction(*sum), std::move(reordered));
}

// ---- vectorize-dot ------------------------------------------------------------------------


// The two factors of a product: x * y, or a call of a user function whose body is the
// product of its two params (examples/dot.weft's mult), with the call's arguments in the
// body's order.
std::optional<std::pair<Expr, Expr>> productFactors(const Expr& term) {
  if (term.isPrim(Op::Mul) && term.args().size() == 2) {
    return std::make_pair(term.args()[0], term.args()[1]);
  }
  if (!term.isPrim(Op::Apply) || term.funs().empty() || !term.funs()[0].isUserFun() ||
      term.args().size() != 2) {
    return std::nullopt;
  }
  const Expr& f = term.funs()[0];
  const Expr& body = f.body();
  if (f.params().size() != 2 || !body.isPrim(Op::Mul) || body.args().size() != 2) {
    return std::nullopt;
  }
  auto argumentOf = [&](const Expr& factor) -> std::optional<Expr> {
    if (!factor.isParam()) return std::nullopt;
    for (size_t i = 0; i < 2; ++i) {
      if (factor.paramId() == f.params()[i].paramId()) return term.args()[i];
    }
    return std::nullopt;
  };
  std::optional<Expr> left = argumentOf(body.args()[0]);
  std::optional<Expr> right = argumentOf(body.args()[1]);
  if (!left || !right) return std::nullopt;
  return std::make_pair(*left, *right);
}

// reduce(z, (acc, p) -> acc + p._0 * p._1, zip(a, b))   [a, b : [float]n; v given; the
// product may be a user function's: mult(p._0, p._1) with mult(x, y) = x * y]
//   => reduce(z, (acc, p) -> acc + dot(p._0, p._1), zip(asVector(v, a), asVector(v, b)))
std::optional<Expr> vectorizeDot(const RuleApplication& application) {
  std::optional<SumReduction> sum = matchSumReduction(application);
  if (!sum || sum->kind != ScalarKind::Float) return std::nullopt;
  const std::optional<int64_t> width = givenVectorWidth(application);
  if (!width) return std::nullopt;
  const std::optional<std::pair<Expr, Expr>> factors = productFactors(sum->term);
  if (!factors) return std::nullopt;
  const Expr& p = sum->element;
  const bool direct = isGetOf(factors->first, 0, p) && isGetOf(factors->second, 1, p);
  const bool swapped = isGetOf(factors->first, 1, p) && isGetOf(factors->second, 0, p);
  if (!direct && !swapped) return std::nullopt;
  const Expr& input = sum->input;
  if (!input.isPrim(Op::Zip) || input.args().size() != 2) return std::nullopt;
  for (const Expr& array : input.args()) {
    const Type type = application.typeOf(array);
    if (!type.isArray() || !(type.arrayElement() == Type::floatType())) return std::nullopt;
    if (!mayHoldVectors(type.arrayLength(), *width)) return std::nullopt;
  }
  const Arith v(*width);
  Expr f = lam2("acc", "p", [](Expr acc, Expr pair) {
    return std::move(acc) + dot(get(0, pair), get(1, pair));
  });
  return reduce(sum->init, f, zip(asVector(v, input.args()[0]), asVector(v, input.args()[1])));
}

// ---- vectorize-sum ------------------------------------------------------------------------

// reduce(z, (acc, x) -> acc + x, xs)   [xs : [float]n; v given, v | n when n is a number]
//   => reduce(z, (a, y) -> a + y, asScalar(join(reduce(asVector(v, fill(v, 0.0f)),
//        (accs, ys) -> map(q -> q._0 + q._1, zip(accs, ys)), split(1, asVector(v, xs))))))
// Lane l of one vector accumulator sums elements l, l + v, ...; its v lanes are then added to
// z (re-associated for floats). The accumulator is a one-vector array so that the search's
// accumulator unrolling keeps it in a register, as for the register blocks.
std::optional<Expr> vectorizeSum(const RuleApplication& application) {
  std::optional<SumReduction> sum = matchSumReduction(application);
  if (!sum || sum->kind != ScalarKind::Float) return std::nullopt;
  if (!isParamNode(sum->term, sum->element)) return std::nullopt;
  const std::optional<int64_t> width = givenVectorWidth(application);
  if (!width) return std::nullopt;
  const Type type = application.typeOf(sum->input);
  if (!type.isArray() || !(type.arrayElement() == Type::floatType())) return std::nullopt;
  if (!mayHoldVectors(type.arrayLength(), *width)) return std::nullopt;
  const Arith v(*width);
  Expr step = lam2("accs", "ys", [](Expr accs, Expr ys) {
    return map(lam("q", [](Expr q) { return get(0, q) + get(1, q); }),
               zip(std::move(accs), std::move(ys)));
  });
  Expr lanes = asScalar(join(reduce(asVector(v, fill(v, lit(0.0f))), step,
                                    split(Arith(1), asVector(v, sum->input)))));
  return reduce(sum->init, lam2("a", "y", [](Expr a, Expr y) { return a + y; }),
                std::move(lanes));
}

// ---- map-reduce-interchange-rows ----------------------------------------------------------

// `f` applied to (a, b): a two-param lambda's body with its params replaced, else apply(f, ...).
Expr applyBinary(const Expr& f, const Expr& a, const Expr& b) {
  if (f.isLambda() && f.params().size() == 2) {
    return substituteParams(f.body(), {{f.params()[0], a}, {f.params()[1], b}});
  }
  return apply(f, {a, b});
}

// A fresh lambda r' -> e[r := r'].
Expr freshRowLambda(const Expr& row, const Expr& e) {
  return lam(row.paramName(), [&](Expr fresh) { return substituteParams(e, {{row, fresh}}); });
}

// map(r -> reduce(z(r), f, xs(r)), rows) : [[T]1]m
//   => transpose(reduce(map(r -> z(r), rows),
//                       (accs, ys) -> map(p -> f(p._0, p._1), zip(accs, ys)),
//                       transpose(map(r -> xs(r), rows))))
// [f does not mention r]. Types: map(z): [T]m; map(xs): [[X]n]m, transposed [[X]m]n; the
// reduction steps all m accumulators at once and returns [[T]m]1, transposed to [[T]1]m.
std::optional<Expr> mapReduceInterchangeRows(const RuleApplication& application) {
  const Expr& node = application.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& mapped = node.funs()[0];
  if (!isUnaryLambda(mapped)) return std::nullopt;
  const Expr& row = mapped.params()[0];
  const Expr& body = mapped.body();
  if (!body.isPrim(Op::Reduce)) return std::nullopt;
  const Expr& f = body.funs()[0];
  if (!f.isFunction() || f.params().size() != 2) return std::nullopt;
  if (mentionsParam(f, row)) return std::nullopt;
  const Expr& init = body.args()[0];
  const Expr& xs = body.args()[1];
  const Expr& rows = node.args()[0];
  const Type xsType = application.typeOf(xs);
  if (!xsType.isArray()) return std::nullopt;
  Expr inits = map(freshRowLambda(row, init), rows);
  Expr columns = transpose(map(freshRowLambda(row, xs), rows));
  Expr step = lam2("accs", "ys", [&](Expr accs, Expr ys) {
    return map(lam("p", [&](Expr pair) { return applyBinary(f, get(0, pair), get(1, pair)); }),
               zip(std::move(accs), std::move(ys)));
  });
  return transpose(reduce(std::move(inits), step, std::move(columns)));
}

}  // namespace

void addConvolutionRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"pad-for-tiling-2d",
                       "slide2D(s1, s2, t1, t2) ∘ pad2D(l, r, t, b, B) => crop2D(0, ρ) ∘ "
                       "slide2D(s1, s2, t1, t2) ∘ pad2D(l, r + ρ·t2, t, b + ρ·t1, B); "
                       "slide2D(s1, s2, t1, t2) => crop2D(0, ρ) ∘ slide2D(s1, s2, t1, t2) ∘ "
                       "pad2D(0, ρ·t2, 0, ρ·t1, clamp)   [crop2D(a, b) = crop(a, b) ∘ "
                       "map(crop(a, b)); mirror pads get an outer clamp pad]",
                       RuleFamily::Tiling,
                       {"rho"},
                       padForTiling2D});
  rules.push_back(Rule{"pad-for-blocking-2d",
                       "slide2D(s1, s2, t1, t2) ∘ pad2D(l, r, t, b, B) => crop2D(0, ρ1, 0, ρ2) ∘ "
                       "slide2D(s1, s2, t1, t2) ∘ pad2D(l, r + ρ2·t2, t, b + ρ1·t1, B) with "
                       "ρi = (qi - ni mod qi) mod qi, the fewest extra windows that make the "
                       "window counts n1 × n2 multiples of q1 = rows_multiple and q2 = "
                       "columns_multiple (both given); without a pad2D as pad-for-tiling-2d",
                       RuleFamily::Tiling,
                       {"rows_multiple", "columns_multiple"},
                       padForBlocking2D});
  rules.push_back(Rule{"partial-reduce-sum",
                       "reduce(z, (acc, x) -> acc + g(x)) => reduce(z, +) ∘ join ∘ "
                       "map(reduce(0, (acc, x) -> acc + g(x))) ∘ split(ω)   "
                       "[int or float; g does not read acc]",
                       RuleFamily::Reduction,
                       {"omega"},
                       partialReduceSum});
  rules.push_back(Rule{"reduce-reorder-stride",
                       "reduce(z, (acc, x) -> acc + g(x)) => reduce(z, (acc, x) -> acc + g(x)) "
                       "∘ reorder(stride(s))   [s | n; a zip's arrays are reordered each]",
                       RuleFamily::Coalescing,
                       {"s"},
                       reduceReorderStride});
  rules.push_back(
      Rule{"vectorize-dot",
           "reduce(z, (acc, p) -> acc + p._0 * p._1) ∘ zip(a, b) => "
           "reduce(z, (acc, p) -> acc + dot(p._0, p._1)) ∘ "
           "zip(asVector(v, a), asVector(v, b))   [float; v given, in {2, 3, 4, 8, 16}]",
           RuleFamily::Vectorization,
           {"v"},
           vectorizeDot});
  rules.push_back(Rule{"vectorize-sum",
                       "reduce(z, (acc, x) -> acc + x, xs) => reduce(z, +) ∘ asScalar ∘ join ∘ "
                       "reduce(asVector(v, fill(v, 0)), (accs, ys) -> map(+) ∘ zip(accs, ys)) ∘ "
                       "split(1) ∘ asVector(v, xs)   [float; v given, in {2, 3, 4, 8, 16}; one "
                       "vector accumulator, its lanes added last]",
                       RuleFamily::Vectorization,
                       {"v"},
                       vectorizeSum});
  rules.push_back(Rule{"map-reduce-interchange-rows",
                       "map(r -> reduce(z(r), f, xs(r))) => transpose ∘ "
                       "reduce(map(r -> z(r)), (accs, ys) -> map(f) ∘ zip(accs, ys)) ∘ "
                       "transpose ∘ map(r -> xs(r))   [f independent of the row r]",
                       RuleFamily::Reduction,
                       {},
                       mapReduceInterchangeRows});
}

}  // namespace weft::rewrite
