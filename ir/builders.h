// C++ builders for weft programs that read like the paper's notation:
//
//   Expr dot = reduce(lit(0.0f), lam2("acc", "p", [](Expr acc, Expr p) {
//                       return acc + get(0, p) * get(1, p);
//                     }),
//                     zip(a, b));
//
// Every primitive of ir/primitives.def has a builder named like it in the text format
// (reorder and pad have one per index function / boundary kind). Lambda helpers create fresh
// params, so builders never capture anything by accident. The 2D forms map2D, slide2D and
// pad2D are not primitives: they expand into 1D primitives exactly as in the paper's section
// 3.1.1, and the parser expands the text forms with these same functions.
//
// Arithmetic operators + - * / % and unary - are overloaded on Expr (Expr has no others), so
// `acc + x * w` builds Add/Mul nodes. Comparisons and logic have named builders (lt, eq,
// logicalAnd, ...): Expr's == is structural equality and its bool conversion tests for null,
// so overloading < == && ! would silently change the meaning of existing code.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace weft {

// ---- literals and params -----------------------------------------------------------------
Expr lit(float value);
Expr lit(double value);
Expr lit(int value);
Expr lit(long value);
Expr lit(long long value);
Expr lit(bool value);

// A fresh param (a new identity) with an optional type.
Expr param(std::string name, Type type = Type());

// Lambdas with fresh params: lam("x", [](Expr x) { return x + x; }).
Expr lam(std::string name, const std::function<Expr(Expr)>& body);
Expr lam(std::string name, Type type, const std::function<Expr(Expr)>& body);
Expr lam2(std::string first, std::string second, const std::function<Expr(Expr, Expr)>& body);
Expr lam3(std::string first, std::string second, std::string third,
          const std::function<Expr(Expr, Expr, Expr)>& body);
// Any number of (optionally typed) params.
using ParamSpec = std::pair<std::string, Type>;
Expr lamN(const std::vector<ParamSpec>& params,
          const std::function<Expr(const std::vector<Expr>&)>& body);

// A user function: userFun("mult", {{"x", float}, {"y", float}}, float,
//                           [](const std::vector<Expr>& p) { return p[0] * p[1]; }).
Expr userFun(std::string name, const std::vector<ParamSpec>& params, Type resultType,
             const std::function<Expr(const std::vector<Expr>&)>& body);
// A top-level definition whose params all carry types.
Definition definition(std::string name, const std::vector<ParamSpec>& params,
                      const std::function<Expr(const std::vector<Expr>&)>& body,
                      Type declaredType = Type());

// ---- algorithmic primitives --------------------------------------------------------------
Expr map(Expr f, Expr x);
Expr reduce(Expr init, Expr f, Expr x);
Expr let(Expr f, Expr x);
Expr apply(Expr f, std::vector<Expr> args);
Expr id(Expr x);
// x => map(map(..map(id)..)) over every array level of x (of type `type`): a copy, which code
// generation computes in a kernel of its own.
Expr copyOf(const Type& type, const Expr& x);
Expr vectorize(Arith width, Expr f, std::vector<Expr> args);
Expr fill(Arith n, Expr x);

// ---- data layout -------------------------------------------------------------------------
Expr zip(Expr a, Expr b);
Expr zip(Expr a, Expr b, Expr c);
Expr zip(std::vector<Expr> arrays);
Expr split(Arith n, Expr x);
Expr join(Expr x);
Expr slide(Arith size, Arith step, Expr x);
Expr slideStrict(Arith size, Arith step, Expr x);
// pad with clamp or mirror (Boundary::Constant pads with 0.0).
Expr pad(Arith left, Arith right, Boundary boundary, Expr x);
Expr padConstant(Arith left, Arith right, double value, Expr x);
// pad with a boundary given as an attribute (as the parser reads it).
Expr pad(Arith left, Arith right, const PrimAttribute& boundary, Expr x);
Expr crop(Arith left, Arith right, Expr x);
Expr transpose(Expr x);
Expr reorderStride(Arith stride, Expr x);
Expr reorderReverse(Expr x);
Expr asVector(Arith width, Expr x);
Expr asScalar(Expr x);

// The attribute of a pad with this boundary (value only for Boundary::Constant).
PrimAttribute padBoundary(Boundary boundary, double value = 0.0);

// ---- OpenCL (low level) ------------------------------------------------------------------
Expr mapGlb(Arith dim, Expr f, Expr x);
Expr mapWrg(Arith dim, Expr f, Expr x);
Expr mapLcl(Arith dim, Expr f, Expr x);
Expr mapSeq(Expr f, Expr x);
Expr mapSeqUnroll(Expr f, Expr x);
// mapSeqSlide(n, f, g, x) = map(f, slide(n, 1, map(g, x))) with a sliding window in private memory.
Expr mapSeqSlide(Arith size, Expr f, Expr g, Expr x);
Expr reduceSeq(Expr init, Expr f, Expr x);
Expr reduceSeqUnroll(Expr init, Expr f, Expr x);
Expr toGlobal(Expr f, Expr x);
Expr toGlobal(Expr f, std::vector<Expr> args);
Expr toLocal(Expr f, Expr x);
Expr toLocal(Expr f, std::vector<Expr> args);
Expr toPrivate(Expr f, Expr x);
Expr toPrivate(Expr f, std::vector<Expr> args);

// ---- tuples ------------------------------------------------------------------------------
Expr tuple(Expr a, Expr b);
Expr tuple(Expr a, Expr b, Expr c);
Expr tuple(std::vector<Expr> elements);
// array(e0, ..., en-1): the values as an array (a constant matrix is an array of arrays of
// literals).
Expr arrayOf(std::vector<Expr> elements);
Expr get(Arith index, Expr t);

// ---- scalar operators --------------------------------------------------------------------
Expr add(Expr a, Expr b);
Expr sub(Expr a, Expr b);
Expr mul(Expr a, Expr b);
Expr div(Expr a, Expr b);
Expr mod(Expr a, Expr b);
Expr neg(Expr a);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr logicalAnd(Expr a, Expr b);
Expr logicalOr(Expr a, Expr b);
Expr logicalNot(Expr a);
Expr select(Expr condition, Expr then, Expr otherwise);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr abs(Expr a);
Expr sqrt(Expr a);
Expr exp(Expr a);
Expr fma(Expr a, Expr b, Expr c);
Expr dot(Expr a, Expr b);
Expr toFloat(Expr a);
Expr toInt(Expr a);

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);

// ---- 2D forms (paper section 3.1.1); `loc` is given to every node they create ------------
// map2D(f, x) = map(row -> map(f, row), x)
Expr map2D(Expr f, Expr x, const SourceLoc& loc = {});
// slide2D(size1, size2, step1, step2, x) =
//   map(window -> transpose(window), slide(size1, step1, map(row -> slide(size2, step2, row), x)))
// (size1/step1 along the outer dimension)
Expr slide2D(Arith size1, Arith size2, Arith step1, Arith step2, Expr x, const SourceLoc& loc = {});
// slide2D(size, step, x) = slide2D(size, size, step, step, x)
Expr slide2D(Arith size, Arith step, Expr x, const SourceLoc& loc = {});
// pad2D(l, r, t, b, boundary, x) =
//   transpose(map(col -> pad(t, b, boundary, col), transpose(map(row -> pad(l, r, boundary,
//   row), x)))); l/r pad the inner (width) dimension, t/b the outer.
Expr pad2D(Arith left, Arith right, Arith top, Arith bottom, const PrimAttribute& boundary, Expr x,
           const SourceLoc& loc = {});
Expr pad2D(Arith left, Arith right, Arith top, Arith bottom, Boundary boundary, Expr x,
           const SourceLoc& loc = {});
// pad2D(p, boundary, x) = pad2D(p, p, p, p, boundary, x)
Expr pad2D(Arith size, const PrimAttribute& boundary, Expr x, const SourceLoc& loc = {});
Expr pad2D(Arith size, Boundary boundary, Expr x, const SourceLoc& loc = {});
Expr pad2DConstant(Arith left, Arith right, Arith top, Arith bottom, double value, Expr x);
Expr pad2DConstant(Arith size, double value, Expr x);

}  // namespace weft
