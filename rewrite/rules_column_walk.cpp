// The column-walk rule: a sliding window down rows whose producer and consumer act column by
// column (each output column reads the same columns of its input rows, give or take a fixed
// horizontal halo) walks down one block of v columns at a time instead of whole rows. The
// window then holds n rows of v values (a few vector registers) instead of n whole rows, and
// each input row is read in pieces that stay in the L1 cache while the walk goes down the
// strip: the loop order of a hand-written CPU blur that walks column vectors down short strips
// (Halide's schedules tile x as well for the same reason: Ragan-Kelley et al., PLDI 2013).
//
//  column-walk   mapSeqSlide(n, C, P, X)
//                  => map(r -> join(r), transpose(map(b -> mapSeqSlide(n, C, P, b),
//                       transpose(map(x -> B(x), X)))))
//   factor v (given): the block's width in output columns. X's elements are rows [T]m or
//   windows of rows [[T]m]s; B(x) cuts them into overlapping blocks of v + k columns at step v:
//   slideStrict(v + k, v, x) for a row, transpose(map(row -> slideStrict(v + k, v, row), x))
//   for a window of rows. P and C are column-local: r -> map(h, zip(t1, .., tq)) (or
//   map(h, t1)), h not mentioning r, each tap ti = crop(a, b, R) with a + b the same for every
//   tap, and R a row of r: r itself when r is one row, join(crop(i, j, r)) (one row of a window
//   of rows, i + j + 1 rows in it) when it is a window. P's halo is k = a + b (the columns its
//   taps read beyond an output column); C's must be 0 (it reads exactly the columns P wrote,
//   so a block of P's output is all a block of C needs). v must divide the output width (the
//   slideStrict's condition, recorded as a constraint).
//
//  column-walk-padded   as column-walk, for any output width w: each row of X (of each window)
//   is first padded on the right by ρ = v·⌈w/v⌉ − w clamped columns, pad(0, ρ, clamp, row), so
//   that whole blocks cover it, and each output row is cropped back, crop(0, ρ, join(r)).
//   Output columns below w read only columns of the original rows (column c reads c .. c + k,
//   and c + k < w + k, the rows' length), so they are unchanged; the ρ extra columns are
//   computed from clamped values and dropped.
//
// Why it holds (the interpreter is the reference, ir/interp.cpp): for a column-local function
// F with halo k, column c of F(r) is h of the taps' elements c, which are the elements c + a of
// rows of r; so columns [jv, jv + v) of F(r) are F applied to columns [jv, jv + v + k) of r's
// rows, i.e. to block j of B(r). Both P and C being column-local, column block j of every row
// the walk produces depends only on block j of every row of X: the walk over X's block-j
// columns (element j of transpose(map(B, X))) gives block j of every output row, and
// transposing the blocks back and joining each row's blocks restores the rows. The walk keeps
// its order down the rows and computes each producer value once per block, as before.
// Checked against the interpreter on random programs by
// tests/rewrite/property_rules_column_walk.cpp.
#include <optional>
#include <utility>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// True when `e` is one row of the function's param `r`: r itself when r is a row (`window`
// false), join(crop(i, j, r)) with i + j + 1 = `windowRows` when r is a window of rows.
bool isRowOf(const Expr& e, const Expr& r, bool window, int64_t windowRows) {
  if (!window) return isParamNode(e, r);
  if (!e.isPrim(Op::Join)) return false;
  const Expr& picked = e.args()[0];
  if (!picked.isPrim(Op::Crop) || !isParamNode(picked.args()[0], r)) return false;
  const std::optional<int64_t> i = picked.nats()[0].constant(), j = picked.nats()[1].constant();
  return i && j && *i >= 0 && *j >= 0 && *i + *j + 1 == windowRows;
}

// The halo of a column-local function (see the top of the file) whose param is a row (`window`
// false) or a window of `windowRows` rows, or none when `f` is not one.
std::optional<int64_t> columnHalo(const Expr& f, bool window, int64_t windowRows) {
  if (!isUnaryLambda(f)) return std::nullopt;
  const Expr& r = f.params()[0];
  const Expr& body = f.body();
  if (!(body.isPrim(Op::Map) || body.isPrim(Op::MapSeq)) || mentionsParam(body.funs()[0], r)) {
    return std::nullopt;
  }
  const Expr& data = body.args()[0];
  const std::vector<Expr> taps = data.isPrim(Op::Zip) ? data.args() : std::vector<Expr>{data};
  std::optional<int64_t> halo;
  for (const Expr& tap : taps) {
    if (!tap.isPrim(Op::Crop)) return std::nullopt;
    const std::optional<int64_t> a = tap.nats()[0].constant(), b = tap.nats()[1].constant();
    if (!a || !b || *a < 0 || *b < 0 || !isRowOf(tap.args()[0], r, window, windowRows)) {
      return std::nullopt;
    }
    if (halo && *halo != *a + *b) return std::nullopt;
    halo = *a + *b;
  }
  return halo;
}

std::optional<Expr> columnWalk(const RuleApplication& a, bool padded) {
  const Expr& e = a.node;
  if (!e.isPrim(Op::MapSeqSlide)) return std::nullopt;
  const std::optional<Arith> v = a.given("v");
  if (!v) return std::nullopt;
  if (const std::optional<int64_t> width = v->constant(); width && *width < 1) return std::nullopt;
  const std::optional<int64_t> n = e.nats()[0].constant();
  if (!n) return std::nullopt;
  const Expr& consumer = e.funs()[0];
  const Expr& producer = e.funs()[1];
  const Expr& xs = e.args()[0];
  // X's elements: rows, or windows of rows with a constant count.
  const Type element = a.typeOf(xs).arrayElement();
  if (!element.isArray()) return std::nullopt;
  const bool window = element.arrayElement().isArray();
  int64_t windowRows = 1;
  if (window) {
    const std::optional<int64_t> rows = element.arrayLength().constant();
    if (!rows) return std::nullopt;
    windowRows = *rows;
  }
  const std::optional<int64_t> producerHalo = columnHalo(producer, window, windowRows);
  const std::optional<int64_t> consumerHalo = columnHalo(consumer, true, *n);
  if (!producerHalo || consumerHalo != 0) return std::nullopt;
  const Arith blockWidth = *v + Arith(*producerHalo);
  const Arith step = *v;
  // With `padded`, each row first gains rho clamped columns, rho = v·⌈w/v⌉ − w for the output
  // width w (the rows' length less the halo): whole blocks of v cover it.
  const Arith rowLength = window ? element.arrayElement().arrayLength() : element.arrayLength();
  const Arith outputWidth = rowLength - Arith(*producerHalo);
  const Arith rho = *v * ceilDiv(outputWidth, *v) - outputWidth;
  auto blocksOf = [&](Expr row) {
    return slideStrict(blockWidth, step,
                       padded ? pad(0, rho, Boundary::Clamp, std::move(row)) : std::move(row));
  };
  Expr blocked = map(lam("x",
                         [&](Expr x) {
                           if (!window) return blocksOf(std::move(x));
                           return transpose(map(lam("row", blocksOf), std::move(x)));
                         }),
                     xs);
  Expr walked = map(lam("block",
                        [&](Expr block) {
                          return mapSeqSlide(Arith(*n), withFreshBinders(consumer),
                                             withFreshBinders(producer), block);
                        }),
                    transpose(blocked));
  return map(
      lam("r",
          [&](Expr r) { return padded ? crop(0, rho, join(std::move(r))) : join(std::move(r)); }),
      transpose(walked));
}

}  // namespace

void addColumnWalkRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"column-walk",
                       "mapSeqSlide(n, C, P, X) => map(join) ∘ transpose ∘ map(b -> "
                       "mapSeqSlide(n, C, P, b)) ∘ transpose ∘ map(x -> blocks(v + k, v, x))   "
                       "[P, C column-local (crops of rows zipped, halos k and 0), v given, "
                       "v | the output width]",
                       RuleFamily::Tiling,
                       {"v"},
                       [](const RuleApplication& a) { return columnWalk(a, false); }});
  rules.push_back(Rule{"column-walk-padded",
                       "mapSeqSlide(n, C, P, X) => map(crop(0, ρ) ∘ join) ∘ transpose ∘ map(b -> "
                       "mapSeqSlide(n, C, P, b)) ∘ transpose ∘ map(x -> blocks(v + k, v, "
                       "pad(0, ρ, clamp, x)))   [as column-walk, any output width w: ρ = "
                       "v·⌈w/v⌉ − w]",
                       RuleFamily::Tiling,
                       {"v"},
                       [](const RuleApplication& a) { return columnWalk(a, true); }});
}

}  // namespace weft::rewrite
