// Small predicates on expressions that the rule files share (which param a node is, whether a
// subtree mentions a param, one-parameter lambdas). Only rules_*.cpp include it.
#pragma once

#include "ir/expr.h"

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

}  // namespace weft::rewrite
