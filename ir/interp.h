// The reference interpreter: gives every primitive its meaning.
//
// It evaluates a definition on concrete values given a binding of the size variables (and
// tuning parameters) that occur in the program. Low-level primitives mean their high-level
// counterparts: mapGlb/mapWrg/mapLcl/mapSeq/mapSeqUnroll mean map, reduceSeq(Unroll) means
// reduce, toGlobal/toLocal/toPrivate and id mean identity on values. This is the oracle every
// rewrite rule and every generated kernel is tested against, so it is written to be obviously
// right rather than fast: it works directly on the expression tree with an environment.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ir/arith.h"
#include "ir/expr.h"
#include "ir/value.h"

namespace weft {

// A run-time failure (index out of range, wrong value kind, unbound size variable, ...).
// The message names the primitive and its source location when known.
struct InterpError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Binds size variables by matching the definition's parameter types against input shapes
// (a length that is a single variable binds it; other lengths are checked after binding).
// Starts from `given` (e.g. --size N=4) and throws InterpError on a mismatch, naming the
// parameter, the dimension, the expected length and the found one. Every bound value, given or
// found, must lie in its variable's range (the definition's size declarations, else the
// variable's own range, [1, inf) for plain sizes): "size P = -1 is outside its declared range
// [0, inf)".
ArithBinding bindSizes(const Definition& definition, const std::vector<Value>& inputs,
                       const ArithBinding& given = {});

// Runs `definition` on `inputs` (one per parameter) with `sizes` bound.
Value interpret(const Definition& definition, const std::vector<Value>& inputs,
                const ArithBinding& sizes);

// Applies a function expression (Lambda or UserFun) to argument values; `sizes` binds the size
// variables its body may mention.
Value applyFunction(const Expr& function, const std::vector<Value>& args,
                    const ArithBinding& sizes);

// Evaluates any data expression with the given params bound to values (for tests and for
// comparing a rewritten subexpression with the original).
Value interpretExpr(const Expr& expression, const ArithBinding& sizes,
                    const std::vector<std::pair<Expr, Value>>& bindings = {});

}  // namespace weft
