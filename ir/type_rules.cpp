// The type rule and dependent signature of every primitive (ir/type_rules.h), one function per
// row of ir/primitives.def, in the style of RISE's primitives.rise where each primitive's
// type is one line (e.g. split: "(m: nat, [T]n) -> [[T]m](n/m), m | n").
//
// A rule validates its argument types through the TypeRuleContext (reporting the expected
// type in words, e.g. "an array of arrays [[T]n]m"), records the side conditions on sizes the
// result type needs (split divisibility, slide window fits, pad/crop bounds, ...) with
// context.require, and returns the result type with simplified lengths. Conditions are
// required before the result length is built, so that e.g. split by 0 is reported as an
// unsatisfiable constraint rather than as a division by zero.
//
// The semantics these rules follow are the project's fixed ones (see the preamble of
// ir/interp.h and the LIFT paper, section 3.1.1); choices that the semantics leave open:
//  - comparisons (< <= > >= == !=) take scalars only and give bool; there are no bool vectors
//    in weft, so OpenCL's vector comparisons (int vectors of 0/-1) are not offered;
//  - % takes int or int vectors only, as in C;
//  - asVector and vectorize need a constant vector width, because vector types carry a
//    constant width (Type::vector); a symbolic width is reported as an error.
#include "ir/type_rules.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>

#include "ir/expr.h"

namespace weft::type_rules {

namespace {

const char* const kAnArray = "an array [T]n";
const char* const kAnArrayOfArrays = "an array of arrays [[T]n]m";

const Type& arrayArg(TypeRuleContext& context, size_t index) {
  const Type& type = context.argType(index);
  if (!type.isArray()) context.failArg(index, kAnArray);
  return type;
}

const Type& arrayOfArraysArg(TypeRuleContext& context, size_t index) {
  const Type& type = context.argType(index);
  if (!type.isArray() || !type.arrayElement().isArray()) {
    context.failArg(index, kAnArrayOfArrays);
  }
  return type;
}

bool isNumeric(const Type& type) {
  return (type.isScalar() || type.isVector()) && type.scalarKind() != ScalarKind::Bool;
}

bool isFloatish(const Type& type) {
  return (type.isScalar() || type.isVector()) && type.scalarKind() == ScalarKind::Float;
}

bool isIntish(const Type& type) {
  return (type.isScalar() || type.isVector()) && type.scalarKind() == ScalarKind::Int;
}

// "float or a float vector", "int or an int vector".
std::string scalarOrVector(ScalarKind kind) {
  std::string name = scalarKindName(kind);
  return name + (kind == ScalarKind::Int ? " or an int vector" : " or a " + name + " vector");
}

// Two operands of an element-wise operator: equal types, or a scalar and a vector of that
// scalar (the scalar is broadcast over the lanes). Returns the result type.
Type elementwisePair(TypeRuleContext& context, size_t left, size_t right) {
  const Type& a = context.argType(left);
  const Type& b = context.argType(right);
  if (a == b) return a;
  if (a.scalarKind() == b.scalarKind()) {
    if (a.isScalar() && b.isVector()) return b;
    if (a.isVector() && b.isScalar()) return a;
  }
  context.failArg(right, a.isVector() ? a.toString() + " or " + scalarKindName(a.scalarKind())
                                      : scalarOrVector(a.scalarKind()));
  throw std::logic_error("TypeRuleContext::failArg returned");
}

// What a numeric operand must be, with a hint when `found` is a one-element array of numbers:
// most often a reduce's result, which is [T]1 as in LIFT, used as if it were its element.
std::string numericExpected(const Type& found) {
  std::string expected = "int, float or a vector of them";
  if (found.isArray() && found.arrayLength() == Arith(1) && isNumeric(found.arrayElement())) {
    expected += " (a reduce gives a one-element array, " + found.toString() +
                ": map over it, as in map(s -> s * 2.0f, reduce(...)), then join the results)";
  }
  return expected;
}

Type numericBinary(TypeRuleContext& context) {
  if (!isNumeric(context.argType(0))) context.failArg(0, numericExpected(context.argType(0)));
  if (!isNumeric(context.argType(1))) context.failArg(1, numericExpected(context.argType(1)));
  return elementwisePair(context, 0, 1);
}

Type numericUnary(TypeRuleContext& context) {
  if (!isNumeric(context.argType(0))) context.failArg(0, numericExpected(context.argType(0)));
  return context.argType(0);
}

Type floatUnary(TypeRuleContext& context) {
  if (!isFloatish(context.argType(0))) context.failArg(0, "float or a float vector");
  return context.argType(0);
}

// < <= > >=: two scalars of the same numeric type.
Type ordering(TypeRuleContext& context) {
  const char* expected = "int or float (vectors cannot be compared)";
  const Type& a = context.argType(0);
  if (!a.isScalar() || a.scalarKind() == ScalarKind::Bool) context.failArg(0, expected);
  if (context.argType(1) != a) context.failArg(1, a.toString());
  return Type::boolType();
}

// == !=: two scalars of the same type (bool included).
Type equality(TypeRuleContext& context) {
  const Type& a = context.argType(0);
  if (!a.isScalar())
    context.failArg(0, "a scalar: int, float or bool (vectors cannot be compared)");
  if (context.argType(1) != a) context.failArg(1, a.toString());
  return Type::boolType();
}

Type logical(TypeRuleContext& context) {
  for (size_t i = 0; i < context.argCount(); ++i) {
    if (context.argType(i) != Type::boolType()) context.failArg(i, "bool");
  }
  return Type::boolType();
}

void requireEqualLengths(TypeRuleContext& context, const Type& a, const Type& b,
                         const std::string& reason) {
  if (a.isTuple()) {
    for (size_t i = 0; i < a.tupleElements().size(); ++i) {
      requireEqualLengths(context, a.tupleElements()[i], b.tupleElements()[i], reason);
    }
  } else if (a.isArray()) {
    if (a.arrayLength() != b.arrayLength()) {
      context.require(Relation::Equal, a.arrayLength(), b.arrayLength(), reason);
    }
    requireEqualLengths(context, a.arrayElement(), b.arrayElement(), reason);
  }
}

Type mapLike(TypeRuleContext& context) {
  const Type& input = arrayArg(context, 0);
  Type element = context.applyFun(0, {input.arrayElement()});
  return Type::array(element, input.arrayLength());
}

void checkDimension(TypeRuleContext& context) {
  const Arith& dimension = context.nats()[0];
  std::optional<int64_t> value = dimension.constant();
  if (!value || *value < 0 || *value > 2) {
    context.fail("the thread dimension must be 0, 1 or 2, found " + dimension.toString());
  }
}

Type reduceLike(TypeRuleContext& context) {
  const Type& init = context.argType(0);
  const Type& input = arrayArg(context, 1);
  Type result = context.applyFun(0, {init, input.arrayElement()});
  if (!sameShape(init, result)) {
    context.fail("the function returns " + result.toString() + " but the initial value has type " +
                 init.toString() +
                 "; the accumulator, the initial value and the result must have one type");
  }
  requireEqualLengths(context, init, result,
                      "the function's result must have the accumulator's type");
  return Type::array(init, Arith(1));
}

// Every function argument applied to all data arguments: apply, toGlobal, toLocal, toPrivate.
Type applyToAll(TypeRuleContext& context) {
  std::vector<Type> types;
  for (size_t i = 0; i < context.argCount(); ++i) types.push_back(context.argType(i));
  return context.applyFun(0, types);
}

int64_t constantVectorWidth(TypeRuleContext& context) {
  const Arith& width = context.nats()[0];
  std::optional<int64_t> value = width.constant();
  if (!value) {
    context.fail("the vector width must be a constant (2, 3, 4, 8 or 16), found " +
                 width.toString() + "; symbolic vector widths are not supported");
  }
  if (!isValidVectorWidth(*value)) {
    context.fail("invalid vector width " + std::to_string(*value) + " (expected 2, 3, 4, 8 or 16)");
  }
  return *value;
}

Type slideLike(TypeRuleContext& context, bool strict) {
  const Arith& size = context.nats()[0];
  const Arith& step = context.nats()[1];
  const Type& input = arrayArg(context, 0);
  const Arith& n = input.arrayLength();
  context.require(Relation::LessEqual, Arith(1), size, "the window size must be at least 1");
  context.require(Relation::LessEqual, Arith(1), step, "the step must be at least 1");
  context.require(Relation::LessEqual, size, n, "the window must fit in the input");
  if (strict) {
    context.require(Relation::Divides, step, n - size, "the windows must cover the input exactly");
  }
  return Type::array(Type::array(input.arrayElement(), size), (n - size + step) / step);
}

// The scalar kinds at the leaves of a type (vector lanes included).
void leafKinds(const Type& type, std::vector<ScalarKind>& out) {
  if (type.isScalar() || type.isVector()) {
    out.push_back(type.scalarKind());
  } else if (type.isTuple()) {
    for (const Type& element : type.tupleElements()) leafKinds(element, out);
  } else if (type.isArray()) {
    leafKinds(type.arrayElement(), out);
  }
}

}  // namespace

// ---- algorithmic -----------------------------------------------------------------------

Type Map(TypeRuleContext& context) { return mapLike(context); }

Type Reduce(TypeRuleContext& context) { return reduceLike(context); }

Type Let(TypeRuleContext& context) { return context.applyFun(0, {context.argType(0)}); }

Type Apply(TypeRuleContext& context) { return applyToAll(context); }

Type Id(TypeRuleContext& context) { return context.argType(0); }

Type Vectorize(TypeRuleContext& context) {
  const int64_t width = constantVectorWidth(context);
  std::vector<Type> laneTypes;
  for (size_t i = 0; i < context.argCount(); ++i) {
    const Type& type = context.argType(i);
    if (type.isScalar()) {
      laneTypes.push_back(type);  // broadcast over the lanes
    } else if (type.isVector() && type.vectorWidth() == width) {
      laneTypes.push_back(Type::scalar(type.scalarKind()));
    } else {
      context.failArg(i, "a scalar or a vector of width " + std::to_string(width));
    }
  }
  Type lane = context.applyFun(0, laneTypes);
  if (!lane.isScalar() || lane.scalarKind() == ScalarKind::Bool) {
    context.fail("the vectorized function must return int or float, found " + lane.toString());
  }
  return Type::vector(lane.scalarKind(), width);
}

Type Fill(TypeRuleContext& context) {
  const Arith& n = context.nats()[0];
  context.require(Relation::LessEqual, Arith(1), n, "the length must be at least 1");
  return Type::array(context.argType(0), n);
}

// ---- data layout -------------------------------------------------------------------------

Type Zip(TypeRuleContext& context) {
  std::vector<Type> elements;
  for (size_t i = 0; i < context.argCount(); ++i)
    elements.push_back(arrayArg(context, i).arrayElement());
  const Arith& n = context.argType(0).arrayLength();
  for (size_t i = 1; i < context.argCount(); ++i) {
    const Arith& m = context.argType(i).arrayLength();
    if (m != n) context.require(Relation::Equal, n, m, "zipped arrays must have the same length");
  }
  return Type::array(Type::tuple(std::move(elements)), n);
}

// array(e0, ..., en-1): the n values as an array; they must have one type (a constant matrix
// is an array of arrays of literals).
Type ArrayOf(TypeRuleContext& context) {
  const Type& element = context.argType(0);
  for (size_t i = 1; i < context.argCount(); ++i) {
    if (context.argType(i) != element) {
      context.fail("the elements of an array must have one type: element 0 is " +
                   element.toString() + ", element " + std::to_string(i) + " is " +
                   context.argType(i).toString());
    }
  }
  return Type::array(element, static_cast<int64_t>(context.argCount()));
}

Type Split(TypeRuleContext& context) {
  const Arith& m = context.nats()[0];
  const Type& input = arrayArg(context, 0);
  const Arith& n = input.arrayLength();
  context.require(Relation::Divides, m, n, "the split size must divide the length");
  return Type::array(Type::array(input.arrayElement(), m), n / m);
}

Type Join(TypeRuleContext& context) {
  const Type& input = arrayOfArraysArg(context, 0);
  const Type& inner = input.arrayElement();
  return Type::array(inner.arrayElement(), inner.arrayLength() * input.arrayLength());
}

Type Slide(TypeRuleContext& context) { return slideLike(context, false); }

Type SlideStrict(TypeRuleContext& context) { return slideLike(context, true); }

Type Pad(TypeRuleContext& context) {
  const Arith& l = context.nats()[0];
  const Arith& r = context.nats()[1];
  const Type& input = arrayArg(context, 0);
  const Arith& n = input.arrayLength();
  const PrimAttribute& attribute = context.attribute();
  context.require(Relation::LessEqual, Arith(0), l, "padding cannot be negative");
  context.require(Relation::LessEqual, Arith(0), r, "padding cannot be negative");
  if (attribute.boundary == Boundary::Mirror) {
    context.require(Relation::LessEqual, l, n, "mirror padding reflects the input at most once");
    context.require(Relation::LessEqual, r, n, "mirror padding reflects the input at most once");
  } else if (attribute.boundary == Boundary::Constant) {
    // The constant fills every scalar of a padded element, so it must be one of their values.
    const double value = attribute.padValue;
    std::ostringstream valueText;
    valueText << value;
    std::vector<ScalarKind> kinds;
    leafKinds(input.arrayElement(), kinds);
    for (ScalarKind kind : kinds) {
      if (kind == ScalarKind::Int && value != std::trunc(value)) {
        context.fail("the padding constant " + valueText.str() +
                     " is not an int, but the elements are " + input.arrayElement().toString());
      }
      if (kind == ScalarKind::Bool && value != 0.0 && value != 1.0) {
        context.fail("the padding constant " + valueText.str() +
                     " is not a bool (0 or 1), but the elements are " +
                     input.arrayElement().toString());
      }
    }
  }
  return Type::array(input.arrayElement(), l + n + r);
}

Type Crop(TypeRuleContext& context) {
  const Arith& l = context.nats()[0];
  const Arith& r = context.nats()[1];
  const Type& input = arrayArg(context, 0);
  const Arith& n = input.arrayLength();
  context.require(Relation::LessEqual, Arith(0), l, "cropping cannot be negative");
  context.require(Relation::LessEqual, Arith(0), r, "cropping cannot be negative");
  context.require(Relation::LessEqual, l + r, n - 1, "crop must leave at least one element");
  return Type::array(input.arrayElement(), n - l - r);
}

Type Transpose(TypeRuleContext& context) {
  const Type& input = arrayOfArraysArg(context, 0);
  const Type& inner = input.arrayElement();
  return Type::array(Type::array(inner.arrayElement(), input.arrayLength()), inner.arrayLength());
}

Type Reorder(TypeRuleContext& context) {
  const Type& input = arrayArg(context, 0);
  const PrimAttribute& attribute = context.attribute();
  if (attribute.indexFunction == IndexFunction::Stride) {
    context.require(Relation::Divides, attribute.stride, input.arrayLength(),
                    "the stride must divide the length");
  }
  return input;
}

Type AsVector(TypeRuleContext& context) {
  const Type& input = context.argType(0);
  if (!input.isArray() || !input.arrayElement().isScalar() ||
      input.arrayElement().scalarKind() == ScalarKind::Bool) {
    context.failArg(0, "an array of scalars [float]n or [int]n");
  }
  const int64_t width = constantVectorWidth(context);
  const Arith& n = input.arrayLength();
  context.require(Relation::Divides, Arith(width), n, "the vector width must divide the length");
  return Type::array(Type::vector(input.arrayElement().scalarKind(), width), n / Arith(width));
}

Type AsScalar(TypeRuleContext& context) {
  const Type& input = context.argType(0);
  if (!input.isArray() || !input.arrayElement().isVector()) {
    context.failArg(0, "an array of vectors [S<v>]n, e.g. [float4]n");
  }
  const Type& vector = input.arrayElement();
  return Type::array(Type::scalar(vector.scalarKind()),
                     input.arrayLength() * Arith(vector.vectorWidth()));
}

// ---- OpenCL: thread mapping, sequential loops, address spaces ------------------------------

Type MapGlb(TypeRuleContext& context) {
  checkDimension(context);
  return mapLike(context);
}

Type MapWrg(TypeRuleContext& context) {
  checkDimension(context);
  return mapLike(context);
}

Type MapLcl(TypeRuleContext& context) {
  checkDimension(context);
  return mapLike(context);
}

Type MapSeq(TypeRuleContext& context) { return mapLike(context); }

Type MapSeqUnroll(TypeRuleContext& context) { return mapLike(context); }

// mapSeqSlide(n, f, g, xs) = map(f, slide(n, 1, map(g, xs))), computed by one loop that keeps
// the last n values of g in private memory (a sliding window: each g(x) computed once).
Type MapSeqSlide(TypeRuleContext& context) {
  const Arith& size = context.nats()[0];
  const std::optional<int64_t> constant = size.constant();
  if (!constant || *constant < 1) {
    context.fail("the window size must be a constant of at least 1, found " + size.toString() +
                 " (the window lives in private memory)");
  }
  const Type& input = arrayArg(context, 0);
  const Arith& n = input.arrayLength();
  context.require(Relation::LessEqual, size, n, "the window must fit in the input");
  const Type produced = context.applyFun(1, {input.arrayElement()});
  const Type element = context.applyFun(0, {Type::array(produced, size)});
  return Type::array(element, n - size + 1);
}

Type ReduceSeq(TypeRuleContext& context) { return reduceLike(context); }

Type ReduceSeqUnroll(TypeRuleContext& context) { return reduceLike(context); }

Type ToGlobal(TypeRuleContext& context) { return applyToAll(context); }

Type ToLocal(TypeRuleContext& context) { return applyToAll(context); }

Type ToPrivate(TypeRuleContext& context) { return applyToAll(context); }

// ---- tuples --------------------------------------------------------------------------------

Type Tuple(TypeRuleContext& context) {
  std::vector<Type> elements;
  for (size_t i = 0; i < context.argCount(); ++i) elements.push_back(context.argType(i));
  return Type::tuple(std::move(elements));
}

Type Get(TypeRuleContext& context) {
  const Type& tuple = context.argType(0);
  if (!tuple.isTuple()) context.failArg(0, "a tuple (T0, T1, ...)");
  const Arith& index = context.nats()[0];
  std::optional<int64_t> value = index.constant();
  const size_t count = tuple.tupleElements().size();
  if (!value) context.fail("the component index must be a constant, found " + index.toString());
  if (*value < 0 || static_cast<size_t>(*value) >= count) {
    context.fail("component " + std::to_string(*value) + " is out of range for the tuple " +
                 tuple.toString() + " of " + std::to_string(count) + " components (0 to " +
                 std::to_string(count - 1) + ")");
  }
  return tuple.tupleElements()[static_cast<size_t>(*value)];
}

// ---- scalar operators --------------------------------------------------------------------

Type Add(TypeRuleContext& context) { return numericBinary(context); }
Type Sub(TypeRuleContext& context) { return numericBinary(context); }
Type Mul(TypeRuleContext& context) { return numericBinary(context); }
Type Div(TypeRuleContext& context) { return numericBinary(context); }

Type Mod(TypeRuleContext& context) {
  if (!isIntish(context.argType(0))) context.failArg(0, "int or an int vector");
  if (!isIntish(context.argType(1))) context.failArg(1, "int or an int vector");
  return elementwisePair(context, 0, 1);
}

Type Neg(TypeRuleContext& context) { return numericUnary(context); }

Type Lt(TypeRuleContext& context) { return ordering(context); }
Type Le(TypeRuleContext& context) { return ordering(context); }
Type Gt(TypeRuleContext& context) { return ordering(context); }
Type Ge(TypeRuleContext& context) { return ordering(context); }
Type Eq(TypeRuleContext& context) { return equality(context); }
Type Ne(TypeRuleContext& context) { return equality(context); }

Type And(TypeRuleContext& context) { return logical(context); }
Type Or(TypeRuleContext& context) { return logical(context); }
Type Not(TypeRuleContext& context) { return logical(context); }

Type Select(TypeRuleContext& context) {
  if (context.argType(0) != Type::boolType()) context.failArg(0, "bool");
  const Type& a = context.argType(1);
  const Type& b = context.argType(2);
  if (!sameShape(a, b)) context.failArg(2, a.toString() + " (the type of argument 2)");
  requireEqualLengths(context, a, b, "both branches of select must have one type");
  return a;
}

Type Min(TypeRuleContext& context) { return numericBinary(context); }
Type Max(TypeRuleContext& context) { return numericBinary(context); }
Type Abs(TypeRuleContext& context) { return numericUnary(context); }
Type Sqrt(TypeRuleContext& context) { return floatUnary(context); }
Type Exp(TypeRuleContext& context) { return floatUnary(context); }

Type Fma(TypeRuleContext& context) {
  const Type& a = context.argType(0);
  if (!isFloatish(a)) context.failArg(0, "float or a float vector");
  for (size_t i = 1; i < 3; ++i) {
    if (context.argType(i) != a) context.failArg(i, a.toString() + " (the type of argument 1)");
  }
  return a;
}

Type Dot(TypeRuleContext& context) {
  const Type& a = context.argType(0);
  if (!isFloatish(a)) context.failArg(0, "float or a float vector");
  if (context.argType(1) != a) context.failArg(1, a.toString() + " (the type of argument 1)");
  return Type::floatType();
}

namespace {

Type convert(TypeRuleContext& context, ScalarKind to) {
  const Type& a = context.argType(0);
  if (a.isScalar()) return Type::scalar(to);
  if (a.isVector()) return Type::vector(to, a.vectorWidth());
  context.failArg(0, "a scalar or a vector");
  throw std::logic_error("TypeRuleContext::failArg returned");
}

}  // namespace

Type ToFloat(TypeRuleContext& context) { return convert(context, ScalarKind::Float); }
Type ToInt(TypeRuleContext& context) { return convert(context, ScalarKind::Int); }

// ---- signatures ----------------------------------------------------------------------------
// Notation: T, U types; S a scalar type; S<v> a vector of v lanes (float4 for v = 4); N int,
// float or a vector of them; F float or a float vector; [T]n an array of length n. After the
// result come the constraints the type checker records ("m | n": m divides n).

const char* signature(Op op) {
  switch (op) {
    case Op::Map:
      return "map: (T -> U, [T]n) -> [U]n";
    case Op::Reduce:
      return "reduce: (U, (U, T) -> U, [T]n) -> [U]1";
    case Op::Let:
      return "let: (T -> U, T) -> U";
    case Op::Apply:
      return "apply: ((T1, ..., Tk) -> U, T1, ..., Tk) -> U";
    case Op::Id:
      return "id: (T) -> T";
    case Op::Vectorize:
      return "vectorize: (v: nat, (S1, ..., Sk) -> S, S1 | S1<v>, ..., Sk | Sk<v>) -> S<v>, "
             "v in {2, 3, 4, 8, 16} constant";
    case Op::Fill:
      return "fill: (n: nat, T) -> [T]n, 1 <= n";
    case Op::Zip:
      return "zip: ([T1]n, ..., [Tk]n) -> [(T1, ..., Tk)]n, k >= 2";
    case Op::ArrayOf:
      return "array: (T, ..., T) -> [T]n, n values";
    case Op::Split:
      return "split: (m: nat, [T]n) -> [[T]m](n/m), m | n";
    case Op::Join:
      return "join: ([[T]m]n) -> [T](m*n)";
    case Op::Slide:
      return "slide: (size: nat, step: nat, [T]n) -> [[T]size]((n-size+step)/step), "
             "1 <= size, 1 <= step, size <= n";
    case Op::SlideStrict:
      return "slideStrict: (size: nat, step: nat, [T]n) -> [[T]size]((n-size+step)/step), "
             "1 <= size, 1 <= step, size <= n, step | (n-size)";
    case Op::Pad:
      return "pad: (l: nat, r: nat, clamp | mirror | constant(c), [T]n) -> [T](l+n+r), "
             "0 <= l, 0 <= r, mirror: l <= n, r <= n";
    case Op::Crop:
      return "crop: (l: nat, r: nat, [T]n) -> [T](n-l-r), 0 <= l, 0 <= r, l+r <= n-1";
    case Op::Transpose:
      return "transpose: ([[T]n]m) -> [[T]m]n";
    case Op::Reorder:
      return "reorder: (stride(s) | reverse, [T]n) -> [T]n, stride: s | n";
    case Op::AsVector:
      return "asVector: (v: nat, [S]n) -> [S<v>](n/v), v | n, v in {2, 3, 4, 8, 16} constant";
    case Op::AsScalar:
      return "asScalar: ([S<v>]n) -> [S](n*v)";
    case Op::MapGlb:
      return "mapGlb: (dim: nat, T -> U, [T]n) -> [U]n, dim in {0, 1, 2}";
    case Op::MapWrg:
      return "mapWrg: (dim: nat, T -> U, [T]n) -> [U]n, dim in {0, 1, 2}";
    case Op::MapLcl:
      return "mapLcl: (dim: nat, T -> U, [T]n) -> [U]n, dim in {0, 1, 2}";
    case Op::MapSeq:
      return "mapSeq: (T -> U, [T]n) -> [U]n";
    case Op::MapSeqUnroll:
      return "mapSeqUnroll: (T -> U, [T]n) -> [U]n";
    case Op::ReduceSeq:
      return "reduceSeq: (U, (U, T) -> U, [T]n) -> [U]1";
    case Op::ReduceSeqUnroll:
      return "reduceSeqUnroll: (U, (U, T) -> U, [T]n) -> [U]1";
    case Op::MapSeqSlide:
      return "mapSeqSlide: (size: nat, [U]size -> V, T -> U, [T]n) -> [V](n-size+1), size >= 1 "
             "constant, size <= n";
    case Op::ToGlobal:
      return "toGlobal: ((T1, ..., Tk) -> U, T1, ..., Tk) -> U";
    case Op::ToLocal:
      return "toLocal: ((T1, ..., Tk) -> U, T1, ..., Tk) -> U";
    case Op::ToPrivate:
      return "toPrivate: ((T1, ..., Tk) -> U, T1, ..., Tk) -> U";
    case Op::Tuple:
      return "tuple: (T0, ..., Tk) -> (T0, ..., Tk), k >= 1";
    case Op::Get:
      return "get: (i: nat, (T0, ..., Tk)) -> Ti, 0 <= i <= k constant";
    case Op::Add:
      return "add (+): (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Sub:
      return "sub (-): (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Mul:
      return "mul (*): (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Div:
      return "div (/): (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Mod:
      return "mod (%): (I, I) -> I | (int, int<v>) -> int<v> | (int<v>, int) -> int<v>, "
             "I = int | int<v>";
    case Op::Neg:
      return "neg (-): (N) -> N";
    case Op::Lt:
      return "lt (<): (S, S) -> bool, S = int | float";
    case Op::Le:
      return "le (<=): (S, S) -> bool, S = int | float";
    case Op::Gt:
      return "gt (>): (S, S) -> bool, S = int | float";
    case Op::Ge:
      return "ge (>=): (S, S) -> bool, S = int | float";
    case Op::Eq:
      return "eq (==): (S, S) -> bool, S = int | float | bool";
    case Op::Ne:
      return "ne (!=): (S, S) -> bool, S = int | float | bool";
    case Op::And:
      return "and (&&): (bool, bool) -> bool";
    case Op::Or:
      return "or (||): (bool, bool) -> bool";
    case Op::Not:
      return "not (!): (bool) -> bool";
    case Op::Select:
      return "select: (bool, T, T) -> T";
    case Op::Min:
      return "min: (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Max:
      return "max: (N, N) -> N | (S, S<v>) -> S<v> | (S<v>, S) -> S<v>";
    case Op::Abs:
      return "abs: (N) -> N";
    case Op::Sqrt:
      return "sqrt: (F) -> F, F = float | float<v>";
    case Op::Exp:
      return "exp: (F) -> F, F = float | float<v>";
    case Op::Fma:
      return "fma: (F, F, F) -> F, F = float | float<v>";
    case Op::Dot:
      return "dot: (F, F) -> float, F = float | float<v>";
    case Op::ToFloat:
      return "toFloat: (S) -> float | (S<v>) -> float<v>";
    case Op::ToInt:
      return "toInt: (S) -> int | (S<v>) -> int<v>";
  }
  return "?";
}

}  // namespace weft::type_rules
