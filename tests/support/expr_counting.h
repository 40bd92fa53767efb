// Counting the primitives of an expression: the tests of rules and strategies check the shape of
// what a rewrite produced (how many maps, lets, ids, ...) with it.
#pragma once

#include "ir/expr.h"

namespace weft::testing {

// How many nodes of `e` are the primitive `op`.
inline int countPrims(const Expr& e, Op op) {
  int count = 0;
  forEachNode(e, [&](const Expr& node) {
    if (node.isPrim(op)) ++count;
  });
  return count;
}

}  // namespace weft::testing
