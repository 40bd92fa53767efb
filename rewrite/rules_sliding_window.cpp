// The sliding-window rule: a map over the windows of step 1 of a computed array becomes one
// sequential loop that computes each element of the array once and keeps the last n of them in
// private memory (mapSeqSlide), instead of the array being computed whole and then read n times
// (LIFT's MapSeqSlide, Stoltzfus et al., "Data movement optimisation in point-free form for
// high-performance stencil code generation", CGO 2020; RISE's slideSeq, "circular buffering").
// For an image pipeline's overlapped tile it is line buffering: a work-item walks down its
// strip of rows, keeping only the producer's last n rows.
//
//  sliding-window   F(f, L1(... Lk(S(n, 1, H1(... Hm(G(g, xs)))))))
//                     => mapSeqSlide(n, w -> f(l1(... lk(map(h1 ∘ ... ∘ hm, w)))), g, xs)
//   F: map or mapSeq; S: slide or slideStrict with step 1 and a constant size n; G: map, mapSeq
//   or mapSeqUnroll of a function that computes (not a view: a view's elements are read, not
//   computed, and keeping them gains nothing); Li = map(li), Hj = map(hj) maps of layout
//   functions between them (transposes of the windows, the rows of a 2D window joined, ...).
//
// Why it holds (the interpreter is the reference, ir/interp.cpp): map(a, map(b, x)) =
// map(a ∘ b, x), so the layout maps above the slide compose into f; a slide's windows of
// map(h, ys) are map(map(h), slide(n, 1, ys)), so the maps below it compose into f as a map
// over each window; then map(f', slide(n, 1, map(g, xs))) is mapSeqSlide(n, f', g, xs) by
// mapSeqSlide's definition (ir/type_rules.cpp). The window keeps g's values, not a view of
// them, which would be copied into every slot. slideStrict(n, 1) is slide(n, 1): step 1
// always covers the input exactly. Checked against the interpreter on random programs by
// tests/rewrite/property_rules_sliding_window.cpp.
#include <optional>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

bool isPlainOrSequentialMap(const Expr& e) { return e.isPrim(Op::Map) || e.isPrim(Op::MapSeq); }

// A map of a layout function (a view of each element; isLayoutFunction requires a lambda).
bool isLayoutMap(const Expr& e) { return e.isPrim(Op::Map) && isLayoutFunction(e.funs()[0]); }

// f ∘ l, as one lambda.
Expr compose(const Expr& f, const Expr& l) {
  return lam("w", [&](Expr w) { return call(f, call(l, w)); });
}

std::optional<Expr> slidingWindow(const RuleApplication& a) {
  const Expr& e = a.node;
  if (!isPlainOrSequentialMap(e)) return std::nullopt;
  Expr f = e.funs()[0];
  Expr windows = e.args()[0];
  // The layout maps above the slide, composed into f (outermost first: f ∘ l1 ∘ l2 ...).
  while (isLayoutMap(windows)) {
    f = compose(f, windows.funs()[0]);
    windows = windows.args()[0];
  }
  if (!windows.isPrim(Op::Slide) && !windows.isPrim(Op::SlideStrict)) return std::nullopt;
  const std::optional<int64_t> size = windows.nats()[0].constant();
  const std::optional<int64_t> step = windows.nats()[1].constant();
  if (!size || *size < 1 || step != 1) return std::nullopt;
  // The layout maps below it (h1 ∘ h2 ... ∘ hm), read by f through each slot of the window:
  // the window keeps g's values as computed, and a view of them is index arithmetic, where a
  // view composed into g would be copied into every slot.
  std::optional<Expr> below;
  Expr produced = windows.args()[0];
  while (isLayoutMap(produced)) {
    below = below ? compose(*below, produced.funs()[0]) : produced.funs()[0];
    produced = produced.args()[0];
  }
  const bool computingMap = (produced.isPrim(Op::Map) || produced.isPrim(Op::MapSeq) ||
                             produced.isPrim(Op::MapSeqUnroll)) &&
                            !isLayoutFunction(produced.funs()[0]);
  if (!computingMap) return std::nullopt;
  if (below) {
    const Expr h = *below;
    f = lam("w", [&](Expr w) { return call(f, map(h, w)); });
  }
  return mapSeqSlide(Arith(*size), f, produced.funs()[0], produced.args()[0]);
}

}  // namespace

void addSlidingWindowRules(std::vector<Rule>& rules) {
  rules.push_back(Rule{"sliding-window",
                       "map(f) ∘ slide(n, 1) ∘ map(g) => mapSeqSlide(n, f, g)   [n constant; "
                       "slideStrict too; layout maps between them composed into f and g; the "
                       "last n values of g kept in private memory, each computed once]",
                       RuleFamily::Fusion,
                       {},
                       slidingWindow});
}

}  // namespace weft::rewrite
