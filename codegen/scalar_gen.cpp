// Scalar expressions: genScalar(e) returns the C expression of a scalar or vector value (reads
// through views, operators, built-in functions, lets, calls). Two rewrites keep the text fast:
// a float division by a float literal c is a multiplication by the float nearest 1/c
// (gen_support.h's reciprocalOfDivisor), and a float sum with a product (a + b*c) drops a
// product with a literal zero factor and becomes fma on vectors (floatSumWithProduct). dot is
// built in for widths up to 4; wider vectors add the halves.
#include "codegen/generator.h"

namespace weft::opencl {

// ---- scalar expressions -------------------------------------------------------------------
std::string Generator::literal(const Expr& e) {
  switch (e.literalKind()) {
    case ScalarKind::Float:
      return floatLiteralC(e.literalFloat());
    case ScalarKind::Int:
      return std::to_string(e.literalInt());
    case ScalarKind::Bool:
      return e.literalBool() ? "true" : "false";
  }
  return "0";
}

std::string Generator::laneTypeName(ScalarKind kind) const {
  return cTypeName(Type::vector(kind, laneWidth_));
}

std::string Generator::laneSelect(const std::string& condition, ScalarKind kind,
                                  const std::string& whenTrue, const std::string& whenFalse) const {
  const std::string lanes = laneTypeName(kind);
  return "(" + condition + ") ? (" + lanes + ")(" + whenTrue + ") : (" + lanes + ")(" + whenFalse +
         ")";
}

std::string Generator::genScalar(const Expr& e) {
  if (e.isLiteral()) return literal(e);
  if (e.isParam()) return read(lookup(e), e);
  if (!e.isPrim()) fail(e, "a function is not a value");
  if (!computes(e)) return read(genView(e), e);
  const auto& args = e.args();
  auto arg = [&](size_t i) { return genScalar(args[i]); };
  auto binary = [&](const char* op) { return "(" + arg(0) + " " + op + " " + arg(1) + ")"; };
  const Type& type = typeOf(e);
  bool isFloat = (type.isScalar() || type.isVector()) && type.scalarKind() == ScalarKind::Float;
  switch (e.primOp()) {
    case Op::Add:
      if (isFloat) {
        if (std::optional<std::string> sum = floatSumWithProduct(e, type)) return *sum;
      }
      return binary("+");
    case Op::Sub:
      return binary("-");
    case Op::Mul:
      return binary("*");
    case Op::Div:
      if (isFloat && args[1].isLiteral() && args[1].literalKind() == ScalarKind::Float) {
        if (std::optional<float> reciprocal = reciprocalOfDivisor(args[1].literalFloat())) {
          return "(" + arg(0) + " * " + floatLiteralC(*reciprocal) + ")";
        }
      }
      return binary("/");
    case Op::Mod:
      return binary("%");
    case Op::Lt:
      return binary("<");
    case Op::Le:
      return binary("<=");
    case Op::Gt:
      return binary(">");
    case Op::Ge:
      return binary(">=");
    case Op::Eq:
      return binary("==");
    case Op::Ne:
      return binary("!=");
    case Op::And:
      return binary("&&");
    case Op::Or:
      return binary("||");
    case Op::Neg:
      return "(-" + arg(0) + ")";
    case Op::Not:
      return "(!" + arg(0) + ")";
    case Op::Select:
      return "(" + arg(0) + " ? " + arg(1) + " : " + arg(2) + ")";
    case Op::Min:
      return std::string(isFloat ? "fmin(" : "min(") + arg(0) + ", " + arg(1) + ")";
    case Op::Max:
      return std::string(isFloat ? "fmax(" : "max(") + arg(0) + ", " + arg(1) + ")";
    case Op::Abs: {
      if (isFloat) return "fabs(" + arg(0) + ")";
      // OpenCL's abs of an int gives a uint of the same width: back to int by its bits (abs of
      // INT_MIN stays INT_MIN). Vector lanes (an int vector, or the lanes of vectorize, where a
      // scalar from outside is broadcast first) are reinterpreted with as_intN: C casts do not
      // convert between vector types.
      if (!type.isVector() && laneWidth_ == 0)
        return "((" + cTypeName(type) + ")abs(" + arg(0) + "))";
      const std::string lanes = type.isVector() ? cTypeName(type) : laneTypeName(type.scalarKind());
      return "as_" + lanes + "(abs((" + lanes + ")(" + arg(0) + ")))";
    }
    case Op::Sqrt:
      return "sqrt(" + arg(0) + ")";
    case Op::Exp:
      return "exp(" + arg(0) + ")";
    case Op::Fma: {
      const size_t linesBefore = emitter_.lines.size(), namedBefore = emitter_.named.mark();
      std::string a = arg(0), b = arg(1);
      if (isFloatZeroText(a) || isFloatZeroText(b)) {  // see floatSumWithProduct
        forgetDropped(linesBefore, namedBefore);
        return arg(2);
      }
      return "fma(" + a + ", " + b + ", " + arg(2) + ")";
    }
    case Op::Dot:
      return dot(arg(0), arg(1), typeOf(args[0]));
    case Op::ToFloat:
    case Op::ToInt: {
      if (type.isVector()) return "convert_" + cTypeName(type) + "(" + arg(0) + ")";
      if (laneWidth_ == 0) return "((" + cTypeName(type) + ")" + arg(0) + ")";
      // Lanes of vectorize: converted with convert_<type>N (C casts do not convert vector
      // types), a scalar from outside broadcast first; a condition's lanes (-1 and 0) become
      // 1 and 0 by a select, which a scalar bool takes too.
      const ScalarKind to = type.scalarKind(), from = typeOf(args[0]).scalarKind();
      if (from == ScalarKind::Bool) {
        const bool toFloat = to == ScalarKind::Float;
        return "(" + laneSelect(arg(0), to, toFloat ? "1.0f" : "1", toFloat ? "0.0f" : "0") + ")";
      }
      return "convert_" + laneTypeName(to) + "((" + laneTypeName(from) + ")(" + arg(0) + "))";
    }
    case Op::Let: {
      const Expr& f = e.funs()[0];
      bind(f.params()[0], genView(args[0]));
      return genScalar(f.body());
    }
    case Op::Apply:
      return genCall(e.funs()[0], args, laneWidth_, e);
    case Op::ToGlobal:
    case Op::ToLocal:
    case Op::ToPrivate:
      return genCall(e.funs()[0], args, 0, e);
    case Op::Vectorize: {
      auto width = e.nats()[0].constant();
      if (!width) fail(e, "vectorize needs a constant width");
      return genCall(e.funs()[0], args, *width, e);
    }
    case Op::Id:
      return genScalar(args[0]);
    case Op::Get: {
      // A component of a tuple built right here: (a, b)._1 is b.
      const Expr& tuple = args[0];
      size_t index = static_cast<size_t>(*e.nats()[0].constant());
      if (tuple.isPrim(Op::Tuple)) return genScalar(tuple.args().at(index));
      if (!computes(tuple)) return read(genView(e), e);
      break;
    }
    default:
      break;
  }
  fail(e, std::string(e.primInfo().name) + " does not give a scalar here");
}

// a + b * c (or b * c + a) on floats. A product with a literal zero factor (a firing
// zero-pad read) adds nothing: the sum is a, and a border copy of a convolution's loop skips
// the padded taps instead of multiplying by 0. That is exact for a finite other factor (up to
// the sign of a zero sum, which reordered reductions do not keep either) but not for inf or
// NaN, whose product with 0 is NaN: weft's floats follow Halide's default (non-strict float
// simplification, x * 0 -> 0) and what oneDNN's direct convolution computes (it skips padded
// taps), not the letter of pad-then-multiply. On float vectors the sum is fma(b, c, a), a
// scalar operand broadcast with (floatN)(x): one vector multiply-add instruction whatever the
// compiler's contraction setting (the register-blocked convolution's inner statement); on
// scalars the text binary + would give. nullopt when neither operand is a product.
std::optional<std::string> Generator::floatSumWithProduct(const Expr& e, const Type& type) {
  for (size_t side = 0; side < 2; ++side) {
    const Expr& product = e.args()[side];
    if (!product.isPrim(Op::Mul)) continue;
    const Expr& addend = e.args()[1 - side];
    const size_t linesBefore = emitter_.lines.size(), namedBefore = emitter_.named.mark();
    std::string a = genScalar(product.args()[0]);
    std::string b = genScalar(product.args()[1]);
    if (isFloatZeroText(a) || isFloatZeroText(b)) {
      forgetDropped(linesBefore, namedBefore);
      return genScalar(addend);
    }
    if (!type.isVector()) {
      std::string c = genScalar(addend);
      std::string times = "(" + a + " * " + b + ")";
      return side == 0 ? "(" + times + " + " + c + ")" : "(" + c + " + " + times + ")";
    }
    auto broadcast = [&](const Expr& x, const std::string& value) {
      if (typeOf(x).isVector()) return value;
      return "(" + cTypeName(type) + ")(" + value + ")";
    };
    a = broadcast(product.args()[0], a);
    b = broadcast(product.args()[1], b);
    std::string c = broadcast(addend, genScalar(addend));
    noteTemporary(type);
    return "fma(" + a + ", " + b + ", " + c + ")";
  }
  return std::nullopt;
}

// dot is built in for widths up to 4; wider vectors add the halves.
std::string Generator::dot(const std::string& a, const std::string& b, const Type& type) {
  if (!type.isVector()) return "(" + a + " * " + b + ")";
  int64_t width = type.vectorWidth();
  noteTemporary(type);
  if (width <= 4) return "dot(" + a + ", " + b + ")";
  std::string left = fresh("dl"), right = fresh("dr");
  emitter_.line(cTypeName(type) + " " + left + " = " + a + ";");
  emitter_.line(cTypeName(type) + " " + right + " = " + b + ";");
  Type half = Type::vector(type.scalarKind(), width / 2);
  return "(" + dot(left + ".lo", right + ".lo", half) + " + " +
         dot(left + ".hi", right + ".hi", half) + ")";
}

// A product with a literal zero factor is dropped after its factors were generated, so the
// arrays their text named are taken back from what the kernel names. When the factors emitted
// statements of their own meanwhile, everything noted since stays (those statements' arrays
// cannot be told apart from the dropped text's): a kernel then keeps as named an array only
// the dropped product read.
void Generator::forgetDropped(size_t linesBefore, size_t namedBefore) {
  if (emitter_.lines.size() == linesBefore) emitter_.named.undoTo(namedBefore);
}

}  // namespace weft::opencl
