// Small predicates and builders on expressions that the rule files share (which param a node is,
// whether a subtree mentions a param, one-parameter lambdas, whether a rule applies at a
// top-level stage, the params free in a subtree, an element-by-element copy of an array, slide2D's
// expansion matched and built). Only
// rules_*.cpp include it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/builders.h"
#include "ir/expr.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

// True when `e` mentions `param` anywhere (bound params are distinct: they have their own ids).
inline bool mentionsParam(const Expr& e, const Expr& param) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    if (node.isParam() && node.paramId() == param.paramId()) found = true;
  });
  return found;
}

// True when `e` is `param` itself.
inline bool isParamNode(const Expr& e, const Expr& param) {
  return e.isParam() && e.paramId() == param.paramId();
}

inline bool isUnaryLambda(const Expr& f) { return f.isLambda() && f.params().size() == 1; }

// True when the rule is applied at the definition's body or at the body of a let at the top
// (a stage): every ancestor is a top-level let whose function leads to the node, or that
// function's lambda.
inline bool isTopLevelStage(const RuleApplication& a) {
  for (size_t i = 0; i < a.ancestors.size(); ++i) {
    const Expr& ancestor = a.ancestors[i];
    const Expr& child = i + 1 < a.ancestors.size() ? a.ancestors[i + 1] : a.node;
    bool letFunction = ancestor.isPrim(Op::Let) && ancestor.funs()[0].node() == child.node();
    bool letLambda = ancestor.isLambda() && i > 0 && a.ancestors[i - 1].isPrim(Op::Let);
    if (!letFunction && !letLambda) return false;
  }
  return true;
}

// Adds to `free` (once each, in first-occurrence order) the ids of the params free in `e`: not
// bound by a lambda inside e nor listed in `bound`.
inline void collectFreeParams(const Expr& e, std::vector<uint64_t>& bound,
                              std::vector<uint64_t>& free) {
  if (e.isParam()) {
    if (std::find(bound.begin(), bound.end(), e.paramId()) == bound.end() &&
        std::find(free.begin(), free.end(), e.paramId()) == free.end()) {
      free.push_back(e.paramId());
    }
    return;
  }
  if (e.isLambda()) {
    size_t mark = bound.size();
    for (const Expr& p : e.params()) bound.push_back(p.paramId());
    collectFreeParams(e.body(), bound, free);
    bound.resize(mark);
    return;
  }
  if (!e.isPrim()) return;
  for (const Expr& f : e.funs()) collectFreeParams(f, bound, free);
  for (const Expr& arg : e.args()) collectFreeParams(arg, bound, free);
}

// The ids of the params free in `e` (those bound inside e excluded), in first-occurrence order.
// Definition parameters count as free: they are not bound by a lambda of e.
inline std::vector<uint64_t> freeParamsOf(const Expr& e) {
  std::vector<uint64_t> bound, free;
  collectFreeParams(e, bound, free);
  return free;
}

// x => map(map(..map(id)..)) over every array level of x (of type `type`): a copy, which code
// generation computes in a kernel of its own.
inline Expr copyOf(const Type& type, const Expr& x) {
  if (!type.isArray()) return id(x);
  const Type element = type.arrayElement();
  return map(lam("e", [&](Expr e) { return copyOf(element, e); }), x);
}

// slide2D's expansion (ir/builders.h):
//   map(w -> transpose(w), S1(size1, step1, map(row -> S2(size2, step2, row), x)))
// with S1 and S2 each slide or slideStrict.
struct Slide2DExpansion {
  Op outerOp, innerOp;
  Arith size1, step1, size2, step2;
  Expr x;
};
inline std::optional<Slide2DExpansion> matchSlide2D(const Expr& node) {
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& windowFun = node.funs()[0];
  if (!isUnaryLambda(windowFun) || !windowFun.body().isPrim(Op::Transpose) ||
      !isParamNode(windowFun.body().args()[0], windowFun.params()[0])) {
    return std::nullopt;
  }
  const Expr& slid = node.args()[0];
  if (!slid.isPrim(Op::Slide) && !slid.isPrim(Op::SlideStrict)) return std::nullopt;
  const Expr& rows = slid.args()[0];
  if (!rows.isPrim(Op::Map) || !isUnaryLambda(rows.funs()[0])) return std::nullopt;
  const Expr& rowFun = rows.funs()[0];
  const Expr& rowSlide = rowFun.body();
  if ((!rowSlide.isPrim(Op::Slide) && !rowSlide.isPrim(Op::SlideStrict)) ||
      !isParamNode(rowSlide.args()[0], rowFun.params()[0])) {
    return std::nullopt;
  }
  return Slide2DExpansion{slid.primOp(),      rowSlide.primOp(),  slid.nats()[0], slid.nats()[1],
                          rowSlide.nats()[0], rowSlide.nats()[1], rows.args()[0]};
}

// The same expansion built with fresh params.
inline Expr buildSlide2D(Op outerOp, Op innerOp, Arith size1, Arith size2, Arith step1,
                         Arith step2, Expr x) {
  Expr rows = map(lam("row",
                      [&](Expr row) {
                        return Expr::prim(innerOp, {size2, step2}, {}, {std::move(row)});
                      }),
                  std::move(x));
  return map(lam("window", [](Expr w) { return transpose(std::move(w)); }),
             Expr::prim(outerOp, {size1, step1}, {}, {std::move(rows)}));
}

}  // namespace weft::rewrite
