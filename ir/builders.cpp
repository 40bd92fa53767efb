// Implementation of the C++ builders (ir/builders.h): thin wrappers around Expr::prim that put
// size arguments, attributes, functions and data in the slots the primitive table expects, and
// the 2D forms expanded into 1D primitives as the paper defines them (section 3.1.1).
#include "ir/builders.h"

namespace weft {

namespace {

Expr prim(Op op, std::vector<Arith> nats, std::vector<Expr> funs, std::vector<Expr> args,
          PrimAttribute attribute = {}, const SourceLoc& loc = {}) {
  return Expr::prim(op, std::move(nats), std::move(funs), std::move(args), std::move(attribute),
                    loc);
}

Expr unary(Op op, Expr a) { return prim(op, {}, {}, {std::move(a)}); }
Expr binary(Op op, Expr a, Expr b) { return prim(op, {}, {}, {std::move(a), std::move(b)}); }

std::vector<Expr> makeParams(const std::vector<ParamSpec>& specs) {
  std::vector<Expr> params;
  params.reserve(specs.size());
  for (const auto& [name, type] : specs) params.push_back(Expr::param(name, type));
  return params;
}

}  // namespace

Expr lit(float value) { return Expr::floatLiteral(value); }
Expr lit(double value) { return Expr::floatLiteral(value); }
Expr lit(int value) { return Expr::intLiteral(value); }
Expr lit(long value) { return Expr::intLiteral(value); }
Expr lit(long long value) { return Expr::intLiteral(value); }
Expr lit(bool value) { return Expr::boolLiteral(value); }

Expr param(std::string name, Type type) { return Expr::param(std::move(name), std::move(type)); }

Expr lam(std::string name, const std::function<Expr(Expr)>& body) {
  return lam(std::move(name), Type(), body);
}

Expr lam(std::string name, Type type, const std::function<Expr(Expr)>& body) {
  Expr x = Expr::param(std::move(name), std::move(type));
  return Expr::lambda({x}, body(x));
}

Expr lam2(std::string first, std::string second, const std::function<Expr(Expr, Expr)>& body) {
  Expr a = Expr::param(std::move(first));
  Expr b = Expr::param(std::move(second));
  return Expr::lambda({a, b}, body(a, b));
}

Expr lam3(std::string first, std::string second, std::string third,
          const std::function<Expr(Expr, Expr, Expr)>& body) {
  Expr a = Expr::param(std::move(first));
  Expr b = Expr::param(std::move(second));
  Expr c = Expr::param(std::move(third));
  return Expr::lambda({a, b, c}, body(a, b, c));
}

Expr lamN(const std::vector<ParamSpec>& params,
          const std::function<Expr(const std::vector<Expr>&)>& body) {
  std::vector<Expr> ps = makeParams(params);
  Expr b = body(ps);
  return Expr::lambda(std::move(ps), std::move(b));
}

Expr userFun(std::string name, const std::vector<ParamSpec>& params, Type resultType,
             const std::function<Expr(const std::vector<Expr>&)>& body) {
  std::vector<Expr> ps = makeParams(params);
  Expr b = body(ps);
  return Expr::userFun(std::move(name), std::move(ps), std::move(resultType), std::move(b));
}

Definition definition(std::string name, const std::vector<ParamSpec>& params,
                      const std::function<Expr(const std::vector<Expr>&)>& body,
                      Type declaredType) {
  return Definition{std::move(name), lamN(params, body), std::move(declaredType), SourceLoc{}};
}

Expr map(Expr f, Expr x) { return prim(Op::Map, {}, {std::move(f)}, {std::move(x)}); }
Expr reduce(Expr init, Expr f, Expr x) {
  return prim(Op::Reduce, {}, {std::move(f)}, {std::move(init), std::move(x)});
}
Expr let(Expr f, Expr x) { return prim(Op::Let, {}, {std::move(f)}, {std::move(x)}); }
Expr apply(Expr f, std::vector<Expr> args) {
  return prim(Op::Apply, {}, {std::move(f)}, std::move(args));
}
Expr id(Expr x) { return unary(Op::Id, std::move(x)); }

Expr copyOf(const Type& type, const Expr& x) {
  if (!type.isArray()) return id(x);
  const Type element = type.arrayElement();
  return map(lam("e", [&](Expr e) { return copyOf(element, e); }), x);
}
Expr vectorize(Arith width, Expr f, std::vector<Expr> args) {
  return prim(Op::Vectorize, {std::move(width)}, {std::move(f)}, std::move(args));
}
Expr fill(Arith n, Expr x) { return prim(Op::Fill, {std::move(n)}, {}, {std::move(x)}); }

Expr zip(Expr a, Expr b) { return zip(std::vector<Expr>{std::move(a), std::move(b)}); }
Expr zip(Expr a, Expr b, Expr c) {
  return zip(std::vector<Expr>{std::move(a), std::move(b), std::move(c)});
}
Expr zip(std::vector<Expr> arrays) { return prim(Op::Zip, {}, {}, std::move(arrays)); }
Expr split(Arith n, Expr x) { return prim(Op::Split, {std::move(n)}, {}, {std::move(x)}); }
Expr join(Expr x) { return unary(Op::Join, std::move(x)); }
Expr slide(Arith size, Arith step, Expr x) {
  return prim(Op::Slide, {std::move(size), std::move(step)}, {}, {std::move(x)});
}
Expr slideStrict(Arith size, Arith step, Expr x) {
  return prim(Op::SlideStrict, {std::move(size), std::move(step)}, {}, {std::move(x)});
}

PrimAttribute padBoundary(Boundary boundary, double value) {
  PrimAttribute attribute;
  attribute.boundary = boundary;
  if (boundary == Boundary::Constant) attribute.padValue = value;
  return attribute;
}

Expr pad(Arith left, Arith right, const PrimAttribute& boundary, Expr x) {
  return prim(Op::Pad, {std::move(left), std::move(right)}, {}, {std::move(x)}, boundary);
}
Expr pad(Arith left, Arith right, Boundary boundary, Expr x) {
  return pad(std::move(left), std::move(right), padBoundary(boundary), std::move(x));
}
Expr padConstant(Arith left, Arith right, double value, Expr x) {
  return pad(std::move(left), std::move(right), padBoundary(Boundary::Constant, value),
             std::move(x));
}
Expr crop(Arith left, Arith right, Expr x) {
  return prim(Op::Crop, {std::move(left), std::move(right)}, {}, {std::move(x)});
}
Expr transpose(Expr x) { return unary(Op::Transpose, std::move(x)); }
Expr reorderStride(Arith stride, Expr x) {
  PrimAttribute attribute;
  attribute.indexFunction = IndexFunction::Stride;
  attribute.stride = std::move(stride);
  return prim(Op::Reorder, {}, {}, {std::move(x)}, std::move(attribute));
}
Expr reorderReverse(Expr x) {
  PrimAttribute attribute;
  attribute.indexFunction = IndexFunction::Reverse;
  return prim(Op::Reorder, {}, {}, {std::move(x)}, std::move(attribute));
}
Expr asVector(Arith width, Expr x) {
  return prim(Op::AsVector, {std::move(width)}, {}, {std::move(x)});
}
Expr asScalar(Expr x) { return unary(Op::AsScalar, std::move(x)); }

Expr mapGlb(Arith dim, Expr f, Expr x) {
  return prim(Op::MapGlb, {std::move(dim)}, {std::move(f)}, {std::move(x)});
}
Expr mapWrg(Arith dim, Expr f, Expr x) {
  return prim(Op::MapWrg, {std::move(dim)}, {std::move(f)}, {std::move(x)});
}
Expr mapLcl(Arith dim, Expr f, Expr x) {
  return prim(Op::MapLcl, {std::move(dim)}, {std::move(f)}, {std::move(x)});
}
Expr mapSeq(Expr f, Expr x) { return prim(Op::MapSeq, {}, {std::move(f)}, {std::move(x)}); }
Expr mapSeqUnroll(Expr f, Expr x) {
  return prim(Op::MapSeqUnroll, {}, {std::move(f)}, {std::move(x)});
}
Expr mapSeqSlide(Arith size, Expr f, Expr g, Expr x) {
  return prim(Op::MapSeqSlide, {std::move(size)}, {std::move(f), std::move(g)}, {std::move(x)});
}
Expr reduceSeq(Expr init, Expr f, Expr x) {
  return prim(Op::ReduceSeq, {}, {std::move(f)}, {std::move(init), std::move(x)});
}
Expr reduceSeqUnroll(Expr init, Expr f, Expr x) {
  return prim(Op::ReduceSeqUnroll, {}, {std::move(f)}, {std::move(init), std::move(x)});
}
Expr toGlobal(Expr f, Expr x) { return toGlobal(std::move(f), std::vector<Expr>{std::move(x)}); }
Expr toGlobal(Expr f, std::vector<Expr> args) {
  return prim(Op::ToGlobal, {}, {std::move(f)}, std::move(args));
}
Expr toLocal(Expr f, Expr x) { return toLocal(std::move(f), std::vector<Expr>{std::move(x)}); }
Expr toLocal(Expr f, std::vector<Expr> args) {
  return prim(Op::ToLocal, {}, {std::move(f)}, std::move(args));
}
Expr toPrivate(Expr f, Expr x) { return toPrivate(std::move(f), std::vector<Expr>{std::move(x)}); }
Expr toPrivate(Expr f, std::vector<Expr> args) {
  return prim(Op::ToPrivate, {}, {std::move(f)}, std::move(args));
}

Expr tuple(Expr a, Expr b) { return tuple(std::vector<Expr>{std::move(a), std::move(b)}); }
Expr tuple(Expr a, Expr b, Expr c) {
  return tuple(std::vector<Expr>{std::move(a), std::move(b), std::move(c)});
}
Expr tuple(std::vector<Expr> elements) { return prim(Op::Tuple, {}, {}, std::move(elements)); }
Expr arrayOf(std::vector<Expr> elements) {
  return prim(Op::ArrayOf, {}, {}, std::move(elements));
}
Expr get(Arith index, Expr t) { return prim(Op::Get, {std::move(index)}, {}, {std::move(t)}); }

Expr add(Expr a, Expr b) { return binary(Op::Add, std::move(a), std::move(b)); }
Expr sub(Expr a, Expr b) { return binary(Op::Sub, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return binary(Op::Mul, std::move(a), std::move(b)); }
Expr div(Expr a, Expr b) { return binary(Op::Div, std::move(a), std::move(b)); }
Expr mod(Expr a, Expr b) { return binary(Op::Mod, std::move(a), std::move(b)); }
Expr neg(Expr a) { return unary(Op::Neg, std::move(a)); }
Expr lt(Expr a, Expr b) { return binary(Op::Lt, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return binary(Op::Le, std::move(a), std::move(b)); }
Expr gt(Expr a, Expr b) { return binary(Op::Gt, std::move(a), std::move(b)); }
Expr ge(Expr a, Expr b) { return binary(Op::Ge, std::move(a), std::move(b)); }
Expr eq(Expr a, Expr b) { return binary(Op::Eq, std::move(a), std::move(b)); }
Expr ne(Expr a, Expr b) { return binary(Op::Ne, std::move(a), std::move(b)); }
Expr logicalAnd(Expr a, Expr b) { return binary(Op::And, std::move(a), std::move(b)); }
Expr logicalOr(Expr a, Expr b) { return binary(Op::Or, std::move(a), std::move(b)); }
Expr logicalNot(Expr a) { return unary(Op::Not, std::move(a)); }
Expr select(Expr condition, Expr then, Expr otherwise) {
  return prim(Op::Select, {}, {}, {std::move(condition), std::move(then), std::move(otherwise)});
}
Expr min(Expr a, Expr b) { return binary(Op::Min, std::move(a), std::move(b)); }
Expr max(Expr a, Expr b) { return binary(Op::Max, std::move(a), std::move(b)); }
Expr abs(Expr a) { return unary(Op::Abs, std::move(a)); }
Expr sqrt(Expr a) { return unary(Op::Sqrt, std::move(a)); }
Expr exp(Expr a) { return unary(Op::Exp, std::move(a)); }
Expr fma(Expr a, Expr b, Expr c) {
  return prim(Op::Fma, {}, {}, {std::move(a), std::move(b), std::move(c)});
}
Expr dot(Expr a, Expr b) { return binary(Op::Dot, std::move(a), std::move(b)); }
Expr toFloat(Expr a) { return unary(Op::ToFloat, std::move(a)); }
Expr toInt(Expr a) { return unary(Op::ToInt, std::move(a)); }

Expr operator+(const Expr& a, const Expr& b) { return add(a, b); }
Expr operator-(const Expr& a, const Expr& b) { return sub(a, b); }
Expr operator*(const Expr& a, const Expr& b) { return mul(a, b); }
Expr operator/(const Expr& a, const Expr& b) { return div(a, b); }
Expr operator%(const Expr& a, const Expr& b) { return mod(a, b); }
Expr operator-(const Expr& a) { return neg(a); }

Expr map2D(Expr f, Expr x, const SourceLoc& loc) {
  Expr row = Expr::param("row", Type(), loc);
  Expr inner = prim(Op::Map, {}, {std::move(f)}, {row}, {}, loc);
  return prim(Op::Map, {}, {Expr::lambda({row}, inner, loc)}, {std::move(x)}, {}, loc);
}

Expr slide2D(Arith size1, Arith size2, Arith step1, Arith step2, Expr x, const SourceLoc& loc) {
  Expr row = Expr::param("row", Type(), loc);
  Expr slideRow = prim(Op::Slide, {std::move(size2), std::move(step2)}, {}, {row}, {}, loc);
  Expr rowsSlid = prim(Op::Map, {}, {Expr::lambda({row}, slideRow, loc)}, {std::move(x)}, {}, loc);
  Expr slid = prim(Op::Slide, {std::move(size1), std::move(step1)}, {}, {rowsSlid}, {}, loc);
  Expr window = Expr::param("window", Type(), loc);
  Expr transposed = prim(Op::Transpose, {}, {}, {window}, {}, loc);
  return prim(Op::Map, {}, {Expr::lambda({window}, transposed, loc)}, {slid}, {}, loc);
}

Expr slide2D(Arith size, Arith step, Expr x, const SourceLoc& loc) {
  return slide2D(size, size, step, step, std::move(x), loc);
}

Expr pad2D(Arith left, Arith right, Arith top, Arith bottom, const PrimAttribute& boundary, Expr x,
           const SourceLoc& loc) {
  Expr row = Expr::param("row", Type(), loc);
  Expr padRow = prim(Op::Pad, {std::move(left), std::move(right)}, {}, {row}, boundary, loc);
  Expr rowsPadded = prim(Op::Map, {}, {Expr::lambda({row}, padRow, loc)}, {std::move(x)}, {}, loc);
  Expr columns = prim(Op::Transpose, {}, {}, {rowsPadded}, {}, loc);
  Expr col = Expr::param("col", Type(), loc);
  Expr padCol = prim(Op::Pad, {std::move(top), std::move(bottom)}, {}, {col}, boundary, loc);
  Expr columnsPadded = prim(Op::Map, {}, {Expr::lambda({col}, padCol, loc)}, {columns}, {}, loc);
  return prim(Op::Transpose, {}, {}, {columnsPadded}, {}, loc);
}

Expr pad2D(Arith left, Arith right, Arith top, Arith bottom, Boundary boundary, Expr x,
           const SourceLoc& loc) {
  return pad2D(std::move(left), std::move(right), std::move(top), std::move(bottom),
               padBoundary(boundary), std::move(x), loc);
}

Expr pad2D(Arith size, const PrimAttribute& boundary, Expr x, const SourceLoc& loc) {
  return pad2D(size, size, size, size, boundary, std::move(x), loc);
}

Expr pad2D(Arith size, Boundary boundary, Expr x, const SourceLoc& loc) {
  return pad2D(size, size, size, size, padBoundary(boundary), std::move(x), loc);
}

Expr pad2DConstant(Arith left, Arith right, Arith top, Arith bottom, double value, Expr x) {
  return pad2D(std::move(left), std::move(right), std::move(top), std::move(bottom),
               padBoundary(Boundary::Constant, value), std::move(x));
}

Expr pad2DConstant(Arith size, double value, Expr x) {
  return pad2D(size, size, size, size, padBoundary(Boundary::Constant, value), std::move(x));
}

}  // namespace weft
