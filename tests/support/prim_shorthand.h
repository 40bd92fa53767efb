// Short constructors the type-checker tests build programs with: arr(T, n) for [T]n, call /
// callN / callF for primitives with data, size and function arguments, lam for a one-parameter
// lambda. Header-only (every .cpp under tests/<folder>/ is a test executable of its own).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/expr.h"

namespace weft::testing::shorthand {

inline Type arr(const Type& element, const Arith& length) { return Type::array(element, length); }
inline Expr call(Op op, std::vector<Expr> args) { return Expr::prim(op, {}, {}, std::move(args)); }
inline Expr callN(Op op, std::vector<Arith> nats, std::vector<Expr> args) {
  return Expr::prim(op, std::move(nats), {}, std::move(args));
}
inline Expr callF(Op op, Expr fun, std::vector<Expr> args, std::vector<Arith> nats = {}) {
  return Expr::prim(op, std::move(nats), {std::move(fun)}, std::move(args));
}
inline Expr lam(const std::string& name, const std::function<Expr(Expr)>& body) {
  Expr p = Expr::param(name);
  return Expr::lambda({p}, body(p));
}

}  // namespace weft::testing::shorthand
