// Tests of the reference interpreter (ir/interp.h) and runtime values (ir/value.h): every
// primitive on small concrete inputs against hand-computed results, the boundary modes of
// pad at both ends, slide and its strict form, reorder, vector casts, reduce's one-element
// result, C semantics of int and single-precision float operators, every InterpError path
// with its message, and the binding of size variables from input shapes within their ranges.
#include <doctest/doctest.h>

#include <climits>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <memory>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"

using namespace weft;

namespace {

// ---- building programs --------------------------------------------------------------------

Expr fun1(const std::function<Expr(const Expr&)>& body) {
  Expr x = Expr::param("x");
  return Expr::lambda({x}, body(x));
}

Expr fun2(const std::function<Expr(const Expr&, const Expr&)>& body) {
  Expr a = Expr::param("a");
  Expr b = Expr::param("b");
  return Expr::lambda({a, b}, body(a, b));
}

Expr call(Op op, std::vector<Expr> args) { return Expr::prim(op, {}, {}, std::move(args)); }
Expr sized(Op op, std::vector<Arith> nats, std::vector<Expr> args) {
  return Expr::prim(op, std::move(nats), {}, std::move(args));
}
Expr withFun(Op op, std::vector<Arith> nats, Expr function, std::vector<Expr> args) {
  return Expr::prim(op, std::move(nats), {std::move(function)}, std::move(args));
}
Expr lit(float value) { return Expr::floatLiteral(value); }
Expr lit(int value) { return Expr::intLiteral(value); }
Expr lit(bool value) { return Expr::boolLiteral(value); }

PrimAttribute boundary(Boundary mode, double value = 0.0) {
  PrimAttribute attribute;
  attribute.boundary = mode;
  attribute.padValue = value;
  return attribute;
}

Expr pad(int64_t left, int64_t right, PrimAttribute attribute, const Expr& xs) {
  return Expr::prim(Op::Pad, {left, right}, {}, {xs}, attribute);
}

Expr reorderStride(Arith stride, const Expr& xs) {
  PrimAttribute attribute;
  attribute.indexFunction = IndexFunction::Stride;
  attribute.stride = stride;
  return Expr::prim(Op::Reorder, {}, {}, {xs}, attribute);
}

Expr reorderReverse(const Expr& xs) {
  PrimAttribute attribute;
  attribute.indexFunction = IndexFunction::Reverse;
  return Expr::prim(Op::Reorder, {}, {}, {xs}, attribute);
}

SourceLoc at(int line, int column) {
  SourceLoc loc;
  loc.file = std::make_shared<const std::string>("prog.weft");
  loc.line = line;
  loc.column = column;
  return loc;
}

// ---- values --------------------------------------------------------------------------------

Value F(float v) { return Value::ofFloat(v); }
Value I(int32_t v) { return Value::ofInt(v); }
Value B(bool v) { return Value::ofBool(v); }

Value floats(std::initializer_list<float> values) {
  std::vector<Value> elements;
  for (float v : values) elements.push_back(F(v));
  return Value::array(std::move(elements));
}

Value ints(std::initializer_list<int32_t> values) {
  std::vector<Value> elements;
  for (int32_t v : values) elements.push_back(I(v));
  return Value::array(std::move(elements));
}

Value floatVector(std::initializer_list<float> values) {
  std::vector<Value> lanes;
  for (float v : values) lanes.push_back(F(v));
  return Value::vector(std::move(lanes));
}

Value intVector(std::initializer_list<int32_t> values) {
  std::vector<Value> lanes;
  for (int32_t v : values) lanes.push_back(I(v));
  return Value::vector(std::move(lanes));
}

Value range(int32_t count) {
  std::vector<Value> elements;
  for (int32_t v = 0; v < count; ++v) elements.push_back(I(v));
  return Value::array(std::move(elements));
}

Value arrays(std::vector<Value> rows) { return Value::array(std::move(rows)); }

// Evaluates `e` with one param `xs` bound (the usual shape of these tests).
Value run(const Expr& e, const std::vector<std::pair<Expr, Value>>& bindings = {},
          const ArithBinding& sizes = {}) {
  return interpretExpr(e, sizes, bindings);
}

// The message of the InterpError that `action` throws ("" and a failed check when none).
std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const InterpError& error) {
    return error.what();
  }
  FAIL_CHECK("expected an InterpError");
  return "";
}

std::string errorOf(const Expr& e, const std::vector<std::pair<Expr, Value>>& bindings = {},
                    const ArithBinding& sizes = {}) {
  return errorOf([&] { run(e, bindings, sizes); });
}

const Expr xs = Expr::param("xs");
const Expr ys = Expr::param("ys");

}  // namespace

// ---- algorithmic primitives --------------------------------------------------------------

TEST_CASE("map and its low-level forms apply the function to every element") {
  Expr twice = fun1([](const Expr& x) { return call(Op::Mul, {x, lit(2)}); });
  Value input = ints({1, 2, 3});
  CHECK(run(withFun(Op::Map, {}, twice, {xs}), {{xs, input}}) == ints({2, 4, 6}));
  CHECK(run(withFun(Op::MapSeq, {}, twice, {xs}), {{xs, input}}) == ints({2, 4, 6}));
  CHECK(run(withFun(Op::MapSeqUnroll, {}, twice, {xs}), {{xs, input}}) == ints({2, 4, 6}));
  for (Op op : {Op::MapGlb, Op::MapWrg, Op::MapLcl}) {
    CHECK(run(withFun(op, {0}, twice, {xs}), {{xs, input}}) == ints({2, 4, 6}));
    CHECK(run(withFun(op, {2}, twice, {xs}), {{xs, input}}) == ints({2, 4, 6}));
  }
  CHECK(errorOf(withFun(Op::MapGlb, {3}, twice, {xs}), {{xs, input}}) ==
        "mapGlb: dimension must be 0, 1 or 2, found 3");
  // Nested: map over rows.
  Expr rows = withFun(
      Op::Map, {}, fun1([&](const Expr& row) { return withFun(Op::Map, {}, twice, {row}); }), {xs});
  CHECK(run(rows, {{xs, arrays({ints({1, 2}), ints({3, 4})})}}) ==
        arrays({ints({2, 4}), ints({6, 8})}));
}

TEST_CASE("reduce is a left fold in index order giving a one-element array") {
  // (acc, x) -> acc * 10 + x distinguishes every order: 0, 1, 12, 123.
  Expr digits = fun2([](const Expr& acc, const Expr& x) {
    return call(Op::Add, {call(Op::Mul, {acc, lit(10)}), x});
  });
  for (Op op : {Op::Reduce, Op::ReduceSeq, Op::ReduceSeqUnroll}) {
    CHECK(run(withFun(op, {}, digits, {lit(0), xs}), {{xs, ints({1, 2, 3})}}) == ints({123}));
  }
  Expr minus = fun2([](const Expr& acc, const Expr& x) { return call(Op::Sub, {acc, x}); });
  CHECK(run(withFun(Op::Reduce, {}, minus, {lit(10.0f), xs}), {{xs, floats({1, 2, 3})}}) ==
        floats({4}));
  // A reduction of one element and a tuple accumulator.
  Expr sumAndCount = fun2([](const Expr& acc, const Expr& x) {
    return call(Op::Tuple, {call(Op::Add, {sized(Op::Get, {0}, {acc}), x}),
                            call(Op::Add, {sized(Op::Get, {1}, {acc}), lit(1)})});
  });
  CHECK(run(withFun(Op::Reduce, {}, sumAndCount, {call(Op::Tuple, {lit(0.5f), lit(0)}), xs}),
            {{xs, floats({1.5f, 2.0f})}}) == arrays({Value::tuple({F(4.0f), I(2)})}));
  CHECK(run(withFun(Op::Reduce, {}, minus, {lit(7), xs}), {{xs, ints({7})}}) == ints({0}));
}

TEST_CASE("let, apply, id and the address-space primitives apply their function") {
  Expr doubleIt = fun1([](const Expr& x) { return call(Op::Add, {x, x}); });
  CHECK(run(withFun(Op::Let, {}, doubleIt, {lit(3)})) == I(6));
  CHECK(run(call(Op::Id, {xs}), {{xs, ints({1, 2})}}) == ints({1, 2}));
  Expr sub = fun2([](const Expr& a, const Expr& b) { return call(Op::Sub, {a, b}); });
  CHECK(run(withFun(Op::Apply, {}, sub, {lit(5), lit(3)})) == I(2));
  for (Op op : {Op::ToGlobal, Op::ToLocal, Op::ToPrivate}) {
    CHECK(run(withFun(op, {}, sub, {lit(5), lit(3)})) == I(2));
    CHECK(run(withFun(op, {}, fun1([](const Expr& x) { return call(Op::Id, {x}); }), {xs}),
              {{xs, floats({1, 2})}}) == floats({1, 2}));
  }
  // A user function: its body is a scalar expression over its params.
  Expr x = Expr::param("x", Type::floatType());
  Expr y = Expr::param("y", Type::floatType());
  Expr mult = Expr::userFun("mult", {x, y}, Type::floatType(), call(Op::Mul, {x, y}));
  CHECK(run(withFun(Op::Apply, {}, mult, {lit(1.5f), lit(4.0f)})) == F(6.0f));
  CHECK(applyFunction(mult, {F(2.0f), F(3.0f)}, {}) == F(6.0f));
  CHECK(errorOf(withFun(Op::Apply, {}, mult, {lit(1.5f)})) ==
        "apply: function 'mult' takes 2 argument(s), given 1");
}

TEST_CASE("a function takes exactly as many arguments as it has params; a tuple is one") {
  Expr product = fun2([](const Expr& a, const Expr& b) { return call(Op::Mul, {a, b}); });
  Expr pairProduct = fun1([](const Expr& p) {
    return call(Op::Mul, {sized(Op::Get, {0}, {p}), sized(Op::Get, {1}, {p})});
  });
  Value left = ints({1, 2, 3});
  Value right = ints({4, 5, 6});
  CHECK(run(withFun(Op::Map, {}, pairProduct, {call(Op::Zip, {xs, ys})}),
            {{xs, left}, {ys, right}}) == ints({4, 10, 18}));
  CHECK(applyFunction(product, {I(3), I(7)}, {}) == I(21));
  CHECK(errorOf(withFun(Op::Map, {}, product, {call(Op::Zip, {xs, ys})}),
                {{xs, left}, {ys, right}}) == "map: lambda takes 2 argument(s), given 1");
  CHECK(errorOf([&] {
          applyFunction(product, {Value::tuple({I(3), I(7)})}, {});
        }) == "lambda takes 2 argument(s), given 1");
}

TEST_CASE("vectorize applies a scalar function lane by lane, broadcasting scalars") {
  Expr product = fun2([](const Expr& a, const Expr& b) { return call(Op::Mul, {a, b}); });
  Expr v = Expr::param("v");
  Expr e = withFun(Op::Vectorize, {4}, product, {v, lit(2.0f)});
  CHECK(run(e, {{v, floatVector({1, 2, 3, 4})}}) == floatVector({2, 4, 6, 8}));
  Expr both = withFun(Op::Vectorize, {2}, product, {v, v});
  CHECK(run(both, {{v, intVector({3, -4})}}) == intVector({9, 16}));
  // All scalars: every lane gets the same value.
  CHECK(run(withFun(Op::Vectorize, {3}, product, {lit(2), lit(5)})) == intVector({10, 10, 10}));
  CHECK(errorOf(e, {{v, floatVector({1, 2})}}) ==
        "vectorize: argument 1: expected a vector of width 4, found vector of width 2 <1.0, 2.0>");
  CHECK(errorOf(withFun(Op::Vectorize, {5}, product, {v, v}), {{v, floatVector({1})}}) ==
        "vectorize: invalid vector width 5 (expected 2, 3, 4, 8 or 16)");
  Expr less = fun2([](const Expr& a, const Expr& b) { return call(Op::Lt, {a, b}); });
  CHECK(errorOf(withFun(Op::Vectorize, {2}, less, {v, v}), {{v, floatVector({1, 2})}}) ==
        "vectorize: the function must give an int or a float for each lane, found bool false");
  CHECK(errorOf(withFun(Op::Vectorize, {2}, product, {xs, xs}), {{xs, floats({1, 2})}}) ==
        "vectorize: argument 1: expected a vector or a scalar, found array of length 2");
}

TEST_CASE("fill repeats a value") {
  CHECK(run(sized(Op::Fill, {3}, {lit(1.5f)})) == floats({1.5f, 1.5f, 1.5f}));
  CHECK(run(sized(Op::Fill, {Arith::size("N")}, {xs}), {{xs, ints({1})}}, {{"N", 2}}) ==
        arrays({ints({1}), ints({1})}));
  CHECK(errorOf(sized(Op::Fill, {0}, {lit(1)})) == "fill: length must be at least 1, found 0");
}

// ---- data layout ---------------------------------------------------------------------------

TEST_CASE("zip pairs equal-length arrays") {
  CHECK(run(call(Op::Zip, {xs, ys}), {{xs, ints({1, 2})}, {ys, floats({3, 4})}}) ==
        arrays({Value::tuple({I(1), F(3)}), Value::tuple({I(2), F(4)})}));
  CHECK(run(call(Op::Zip, {xs, ys, xs}), {{xs, ints({1})}, {ys, ints({2})}}) ==
        arrays({Value::tuple({I(1), I(2), I(1)})}));
  CHECK(errorOf(call(Op::Zip, {xs, ys}), {{xs, ints({1, 2, 3})}, {ys, ints({1, 2})}}) ==
        "zip: arrays of different lengths: argument 1 has 3 elements, argument 2 has 2");
}

TEST_CASE("split and join") {
  CHECK(run(sized(Op::Split, {2}, {xs}), {{xs, range(6)}}) ==
        arrays({ints({0, 1}), ints({2, 3}), ints({4, 5})}));
  CHECK(run(sized(Op::Split, {6}, {xs}), {{xs, range(6)}}) == arrays({range(6)}));
  CHECK(run(call(Op::Join, {sized(Op::Split, {3}, {xs})}), {{xs, range(6)}}) == range(6));
  CHECK(run(call(Op::Join, {xs}), {{xs, arrays({ints({1}), ints({2})})}}) == ints({1, 2}));
  // Symbolic split size under a binding.
  CHECK(run(sized(Op::Split, {Arith::size("K")}, {xs}), {{xs, range(4)}}, {{"K", 2}}) ==
        arrays({ints({0, 1}), ints({2, 3})}));
  CHECK(errorOf(sized(Op::Split, {4}, {xs}), {{xs, range(6)}}) ==
        "split: split size 4 does not divide the length 6");
  CHECK(errorOf(sized(Op::Split, {0}, {xs}), {{xs, range(6)}}) ==
        "split: split size must be positive, found 0");
  CHECK(errorOf(call(Op::Join, {xs}), {{xs, range(2)}}) ==
        "join: expected an array of arrays, found int 0");
  CHECK(errorOf(call(Op::Join, {xs}), {{xs, arrays({ints({1}), ints({2, 3})})}}) ==
        "join: inner arrays of different lengths: element 0 has 1, element 1 has 2");
}

TEST_CASE("an unbound size argument is an error naming the primitive") {
  std::string message = errorOf(sized(Op::Split, {Arith::size("K")}, {xs}), {{xs, range(4)}});
  CHECK(message.rfind("split: size argument K: ", 0) == 0);
}

TEST_CASE("slide gives windows of a size at a step, dropping what does not fit") {
  CHECK(run(sized(Op::Slide, {3, 1}, {xs}), {{xs, range(5)}}) ==
        arrays({ints({0, 1, 2}), ints({1, 2, 3}), ints({2, 3, 4})}));
  // n = 6, size 3, step 2: (6 - 3 + 2) / 2 = 2 windows; element 5 is in none.
  CHECK(run(sized(Op::Slide, {3, 2}, {xs}), {{xs, range(6)}}) ==
        arrays({ints({0, 1, 2}), ints({2, 3, 4})}));
  CHECK(run(sized(Op::Slide, {2, 2}, {xs}), {{xs, range(4)}}) ==
        arrays({ints({0, 1}), ints({2, 3})}));
  CHECK(run(sized(Op::Slide, {4, 1}, {xs}), {{xs, range(4)}}) == arrays({range(4)}));
  // Strict: n = 7, size 3, step 2 covers exactly: 3 windows.
  CHECK(run(sized(Op::SlideStrict, {3, 2}, {xs}), {{xs, range(7)}}) ==
        arrays({ints({0, 1, 2}), ints({2, 3, 4}), ints({4, 5, 6})}));
  CHECK(errorOf(sized(Op::SlideStrict, {3, 2}, {xs}), {{xs, range(6)}}) ==
        "slideStrict: windows of size 3 and step 2 do not cover the length 6 exactly "
        "((6 - 3) % 2 != 0)");
  CHECK(errorOf(sized(Op::Slide, {5, 1}, {xs}), {{xs, range(4)}}) ==
        "slide: window size 5 is larger than the length 4");
  CHECK(errorOf(sized(Op::Slide, {2, 0}, {xs}), {{xs, range(4)}}) ==
        "slide: step must be positive, found 0");
  CHECK(errorOf(sized(Op::Slide, {0, 1}, {xs}), {{xs, range(4)}}) ==
        "slide: window size must be positive, found 0");
}

TEST_CASE("pad with clamp, mirror and constant boundaries at both ends") {
  Value input = floats({1, 2, 3});
  CHECK(run(pad(2, 2, boundary(Boundary::Clamp), xs), {{xs, input}}) ==
        floats({1, 1, 1, 2, 3, 3, 3}));
  // Mirror repeats the edge: -1 -> 0, -2 -> 1, n -> n-1, n+1 -> n-2, n+2 -> n-3.
  CHECK(run(pad(2, 3, boundary(Boundary::Mirror), xs), {{xs, input}}) ==
        floats({2, 1, 1, 2, 3, 3, 2, 1}));
  CHECK(run(pad(3, 0, boundary(Boundary::Mirror), xs), {{xs, input}}) ==
        floats({3, 2, 1, 1, 2, 3}));
  CHECK(run(pad(2, 1, boundary(Boundary::Constant, 0.5), xs), {{xs, input}}) ==
        floats({0.5f, 0.5f, 1, 2, 3, 0.5f}));
  CHECK(run(pad(1, 1, boundary(Boundary::Constant, -2), xs), {{xs, ints({7})}}) ==
        ints({-2, 7, -2}));
  CHECK(run(pad(0, 0, boundary(Boundary::Clamp), xs), {{xs, input}}) == input);
  // Padding an array of rows with a constant pads with whole rows of that constant.
  CHECK(run(pad(1, 0, boundary(Boundary::Constant, 9), xs), {{xs, arrays({ints({1, 2})})}}) ==
        arrays({ints({9, 9}), ints({1, 2})}));
  CHECK(errorOf(pad(4, 0, boundary(Boundary::Mirror), xs), {{xs, input}}) ==
        "pad: mirror padding of 4 and 0 needs at most the length 3 on each side "
        "(a single reflection)");
  CHECK(errorOf(pad(-1, 0, boundary(Boundary::Clamp), xs), {{xs, input}}) ==
        "pad: padding must not be negative, found left -1 right 0");
  CHECK(errorOf(pad(1, 1, boundary(Boundary::Clamp), xs), {{xs, Value::array({})}}) ==
        "pad: cannot pad an empty array");
}

TEST_CASE("crop drops elements at both ends") {
  CHECK(run(sized(Op::Crop, {1, 2}, {xs}), {{xs, range(6)}}) == ints({1, 2, 3}));
  CHECK(run(sized(Op::Crop, {0, 0}, {xs}), {{xs, range(2)}}) == range(2));
  CHECK(run(sized(Op::Crop, {2, 1}, {xs}), {{xs, range(4)}}) == ints({2}));
  CHECK(errorOf(sized(Op::Crop, {2, 2}, {xs}), {{xs, range(4)}}) ==
        "crop: cropping 2 + 2 elements from an array of length 4 leaves nothing");
  CHECK(errorOf(sized(Op::Crop, {-1, 0}, {xs}), {{xs, range(4)}}) ==
        "crop: crop amounts must not be negative, found left -1 right 0");
}

TEST_CASE("transpose swaps the two outer dimensions") {
  Value matrix = arrays({ints({1, 2, 3}), ints({4, 5, 6})});
  CHECK(run(call(Op::Transpose, {xs}), {{xs, matrix}}) ==
        arrays({ints({1, 4}), ints({2, 5}), ints({3, 6})}));
  CHECK(run(call(Op::Transpose, {call(Op::Transpose, {xs})}), {{xs, matrix}}) == matrix);
  CHECK(errorOf(call(Op::Transpose, {xs}), {{xs, arrays({ints({1, 2}), ints({3})})}}) ==
        "transpose: rows of different lengths: row 0 has 2, row 1 has 1");
  CHECK(errorOf(call(Op::Transpose, {xs}), {{xs, range(3)}}) ==
        "transpose: expected an array of arrays, found int 0");
}

TEST_CASE("reorder by stride and reverse") {
  // n = 6, s = 2: result[i] = xs[i / 3 + 2 * (i % 3)].
  CHECK(run(reorderStride(2, xs), {{xs, range(6)}}) == ints({0, 2, 4, 1, 3, 5}));
  CHECK(run(reorderStride(3, xs), {{xs, range(6)}}) == ints({0, 3, 1, 4, 2, 5}));
  CHECK(run(reorderStride(1, xs), {{xs, range(4)}}) == range(4));
  CHECK(run(reorderStride(Arith::size("S"), xs), {{xs, range(4)}}, {{"S", 2}}) ==
        ints({0, 2, 1, 3}));
  CHECK(run(reorderReverse(xs), {{xs, range(4)}}) == ints({3, 2, 1, 0}));
  CHECK(errorOf(reorderStride(4, xs), {{xs, range(6)}}) ==
        "reorder: stride 4 does not divide the length 6");
}

TEST_CASE("asVector and asScalar") {
  CHECK(run(sized(Op::AsVector, {2}, {xs}), {{xs, floats({1, 2, 3, 4})}}) ==
        Value::array({floatVector({1, 2}), floatVector({3, 4})}));
  CHECK(run(sized(Op::AsVector, {4}, {xs}), {{xs, range(4)}}) ==
        Value::array({intVector({0, 1, 2, 3})}));
  CHECK(run(call(Op::AsScalar, {sized(Op::AsVector, {2}, {xs})}), {{xs, range(6)}}) == range(6));
  CHECK(run(call(Op::AsScalar, {xs}), {{xs, Value::array({intVector({5, 6, 7})})}}) ==
        ints({5, 6, 7}));
  CHECK(errorOf(sized(Op::AsVector, {4}, {xs}), {{xs, range(6)}}) ==
        "asVector: vector width 4 does not divide the length 6");
  CHECK(errorOf(sized(Op::AsVector, {5}, {xs}), {{xs, range(5)}}) ==
        "asVector: invalid vector width 5 (expected 2, 3, 4, 8 or 16)");
  CHECK(errorOf(call(Op::AsScalar, {xs}), {{xs, range(2)}}) ==
        "asScalar: expected an array of vectors, found int 0");
}

TEST_CASE("tuple and get") {
  Expr t = call(Op::Tuple, {lit(1), lit(2.5f), lit(true)});
  CHECK(run(t) == Value::tuple({I(1), F(2.5f), B(true)}));
  CHECK(run(sized(Op::Get, {1}, {t})) == F(2.5f));
  CHECK(run(sized(Op::Get, {2}, {t})) == B(true));
  CHECK(errorOf(sized(Op::Get, {3}, {t})) == "get: component 3 out of range for a tuple of 3");
  CHECK(errorOf(sized(Op::Get, {0}, {lit(1)})) == "get: expected a tuple, found int 1");
}

// ---- scalar operators ----------------------------------------------------------------------

TEST_CASE("int operators follow C: truncating division, wrapping, division by zero") {
  auto binary = [](Op op, int a, int b) { return run(call(op, {lit(a), lit(b)})); };
  CHECK(binary(Op::Add, 2, 3) == I(5));
  CHECK(binary(Op::Sub, 2, 3) == I(-1));
  CHECK(binary(Op::Mul, -4, 3) == I(-12));
  CHECK(binary(Op::Div, 7, 2) == I(3));
  CHECK(binary(Op::Div, -7, 2) == I(-3));
  CHECK(binary(Op::Mod, -7, 2) == I(-1));
  CHECK(binary(Op::Mod, 7, -2) == I(1));
  CHECK(binary(Op::Min, -7, 2) == I(-7));
  CHECK(binary(Op::Max, -7, 2) == I(2));
  CHECK(binary(Op::Add, INT_MAX, 1) == I(INT_MIN));
  CHECK(run(call(Op::Neg, {lit(5)})) == I(-5));
  CHECK(run(call(Op::Abs, {lit(-5)})) == I(5));
  CHECK(errorOf(call(Op::Div, {lit(1), lit(0)})) == "div: integer division by zero");
  CHECK(errorOf(call(Op::Mod, {lit(1), lit(0)})) == "mod: integer division by zero");
  CHECK(errorOf(call(Op::Div, {lit(INT_MIN), lit(-1)})) == "div: integer overflow in INT_MIN / -1");
}

TEST_CASE("float operators work in single precision") {
  auto binary = [](Op op, float a, float b) { return run(call(op, {lit(a), lit(b)})); };
  CHECK(binary(Op::Add, 1.5f, 2.25f) == F(3.75f));
  CHECK(binary(Op::Sub, 1.5f, 2.25f) == F(-0.75f));
  CHECK(binary(Op::Mul, 1.5f, -2.0f) == F(-3.0f));
  CHECK(binary(Op::Div, 1.0f, 4.0f) == F(0.25f));
  CHECK(binary(Op::Div, 1.0f, 0.0f) == F(INFINITY));
  CHECK(binary(Op::Min, 1.0f, -2.0f) == F(-2.0f));
  CHECK(binary(Op::Max, 1.0f, -2.0f) == F(1.0f));
  // 2^24 + 1 is not a float: in double it would survive.
  CHECK(binary(Op::Add, 16777216.0f, 1.0f) == F(16777216.0f));
  CHECK(binary(Op::Div, 1.0f, 3.0f) == F(1.0f / 3.0f));
  CHECK(run(call(Op::Neg, {lit(2.5f)})) == F(-2.5f));
  CHECK(run(call(Op::Abs, {lit(-2.5f)})) == F(2.5f));
  CHECK(run(call(Op::Sqrt, {lit(6.25f)})) == F(2.5f));
  CHECK(run(call(Op::Exp, {lit(1.0f)})) == F(std::exp(1.0f)));
  CHECK(run(call(Op::Fma, {lit(2.0f), lit(3.0f), lit(1.0f)})) == F(7.0f));
  // fma rounds once: (1 + 2^-12)^2 - (1 + 2^-11) = 2^-24 exactly, lost by a*b rounded first.
  float a = 1.0f + std::ldexp(1.0f, -12);
  CHECK(run(call(Op::Fma, {lit(a), lit(a), lit(-(1.0f + std::ldexp(1.0f, -11)))})) ==
        F(std::ldexp(1.0f, -24)));
  CHECK(errorOf(call(Op::Mod, {lit(1.0f), lit(2.0f)})) ==
        "mod: expected int operands, found float 1.0");
  CHECK(errorOf(call(Op::Sqrt, {lit(4)})) == "sqrt: expected float operands, found int 4");
  CHECK(errorOf(call(Op::Fma, {lit(1), lit(2), lit(3)})) ==
        "fma: expected float operands, found int 1");
}

TEST_CASE("comparisons and logical operators") {
  CHECK(run(call(Op::Lt, {lit(1), lit(2)})) == B(true));
  CHECK(run(call(Op::Le, {lit(2), lit(2)})) == B(true));
  CHECK(run(call(Op::Gt, {lit(1.0f), lit(2.0f)})) == B(false));
  CHECK(run(call(Op::Ge, {lit(2.0f), lit(2.0f)})) == B(true));
  CHECK(run(call(Op::Eq, {lit(true), lit(true)})) == B(true));
  CHECK(run(call(Op::Ne, {lit(3), lit(3)})) == B(false));
  CHECK(run(call(Op::And, {lit(true), lit(false)})) == B(false));
  CHECK(run(call(Op::Or, {lit(false), lit(true)})) == B(true));
  CHECK(run(call(Op::Not, {lit(false)})) == B(true));
  // && and || do not evaluate their second operand when the first decides (as C).
  Expr failing = call(Op::Eq, {call(Op::Div, {lit(1), lit(0)}), lit(0)});
  CHECK(run(call(Op::And, {lit(false), failing})) == B(false));
  CHECK(run(call(Op::Or, {lit(true), failing})) == B(true));
  CHECK(errorOf(call(Op::And, {lit(true), failing})) == "div: integer division by zero");
  CHECK(errorOf(call(Op::Lt, {lit(true), lit(false)})) ==
        "lt: expected int or float operands, found bool true");
  CHECK(errorOf(call(Op::And, {lit(1), lit(true)})) == "and: expected bool operands, found int 1");
  CHECK(errorOf(call(Op::Not, {lit(1)})) == "not: expected bool operands, found int 1");
  Expr v = Expr::param("v");
  CHECK(errorOf(call(Op::Lt, {v, v}), {{v, intVector({1, 2})}}) ==
        "lt: operand 1: expected a scalar, found vector of width 2 <1, 2>");
}

TEST_CASE("select evaluates only the chosen branch") {
  Expr failing = call(Op::Div, {lit(1), lit(0)});
  CHECK(run(call(Op::Select, {lit(true), lit(1), failing})) == I(1));
  CHECK(run(call(Op::Select, {lit(false), failing, lit(2)})) == I(2));
  CHECK(run(call(Op::Select, {lit(false), xs, ys}), {{xs, range(2)}, {ys, range(3)}}) == range(3));
  CHECK(errorOf(call(Op::Select, {lit(1), lit(1), lit(2)})) ==
        "select: condition: expected a bool, found int 1");
}

TEST_CASE("scalar operators act lane-wise on vectors and broadcast scalars") {
  Expr v = Expr::param("v");
  Expr w = Expr::param("w");
  CHECK(run(call(Op::Add, {v, w}), {{v, floatVector({1, 2})}, {w, floatVector({10, 20})}}) ==
        floatVector({11, 22}));
  CHECK(run(call(Op::Mul, {v, lit(3.0f)}), {{v, floatVector({1, 2, 3})}}) ==
        floatVector({3, 6, 9}));
  CHECK(run(call(Op::Sub, {lit(10), v}), {{v, intVector({1, 2})}}) == intVector({9, 8}));
  CHECK(run(call(Op::Mod, {v, lit(3)}), {{v, intVector({7, -7})}}) == intVector({1, -1}));
  CHECK(run(call(Op::Max, {v, lit(0.0f)}), {{v, floatVector({-1, 2})}}) == floatVector({0, 2}));
  CHECK(run(call(Op::Neg, {v}), {{v, intVector({1, -2})}}) == intVector({-1, 2}));
  CHECK(run(call(Op::Sqrt, {v}), {{v, floatVector({4, 9})}}) == floatVector({2, 3}));
  CHECK(run(call(Op::Fma, {v, v, lit(1.0f)}), {{v, floatVector({2, 3})}}) == floatVector({5, 10}));
  CHECK(run(call(Op::ToFloat, {v}), {{v, intVector({1, -2})}}) == floatVector({1, -2}));
  CHECK(run(call(Op::ToInt, {v}), {{v, floatVector({1.9f, -2.9f})}}) == intVector({1, -2}));
  CHECK(errorOf(call(Op::Add, {v, w}), {{v, floatVector({1, 2})}, {w, floatVector({1, 2, 3})}}) ==
        "add: vectors of different widths 2 and 3");
  CHECK(errorOf(call(Op::Add, {lit(1), lit(2.0f)})) ==
        "add: operands of different kinds: int and float");
  CHECK(errorOf(call(Op::Add, {xs, lit(1)}), {{xs, range(2)}}) ==
        "add: operand 1: expected a scalar or a vector, found array of length 2");
}

TEST_CASE("dot, toFloat and toInt") {
  Expr v = Expr::param("v");
  Expr w = Expr::param("w");
  CHECK(run(call(Op::Dot, {v, w}),
            {{v, floatVector({1, 2, 3, 4})}, {w, floatVector({5, 6, 7, 8})}}) == F(70.0f));
  CHECK(run(call(Op::Dot, {lit(1.5f), lit(2.0f)})) == F(3.0f));
  CHECK(errorOf(call(Op::Dot, {v, w}), {{v, floatVector({1, 2})}, {w, floatVector({1, 2, 3})}}) ==
        "dot: vectors of different widths 2 and 3");
  CHECK(errorOf(call(Op::Dot, {v, v}), {{v, intVector({1, 2})}}) == "dot: expected float vectors");
  CHECK(run(call(Op::ToFloat, {lit(3)})) == F(3.0f));
  CHECK(run(call(Op::ToFloat, {lit(true)})) == F(1.0f));
  CHECK(run(call(Op::ToInt, {lit(-2.7f)})) == I(-2));
  CHECK(run(call(Op::ToInt, {lit(2.7f)})) == I(2));
  CHECK(run(call(Op::ToInt, {lit(false)})) == I(0));
  CHECK(errorOf(call(Op::ToInt, {lit(3e9f)})) == "toInt: float 3e+09 is out of the range of int");
}

// ---- errors: kinds, locations, unbound names ----------------------------------------------

TEST_CASE("errors carry the primitive's source location") {
  Expr split = Expr::prim(Op::Split, {4}, {}, {xs}, {}, at(3, 5));
  CHECK(errorOf(split, {{xs, range(6)}}) ==
        "prog.weft:3:5: split: split size 4 does not divide the length 6");
  // The innermost failing primitive is named, inside a map's function.
  Expr x = Expr::param("x");
  Expr divideAll = Expr::prim(
      Op::Map, {}, {Expr::lambda({x}, Expr::prim(Op::Div, {}, {}, {lit(1), x}, {}, at(7, 12)))},
      {xs}, {}, at(7, 3));
  CHECK(errorOf(divideAll, {{xs, ints({1, 0})}}) ==
        "prog.weft:7:12: div: integer division by zero");
}

TEST_CASE("wrong value kinds are reported") {
  Expr twice = fun1([](const Expr& x) { return call(Op::Add, {x, x}); });
  CHECK(errorOf(withFun(Op::Map, {}, twice, {lit(3)})) ==
        "map: argument 1: expected an array, found int 3");
  CHECK(errorOf(withFun(Op::Reduce, {}, fun2([](const Expr& a, const Expr&) { return a; }),
                        {lit(0), lit(1)})) == "reduce: argument 2: expected an array, found int 1");
  CHECK(errorOf(call(Op::Id, {Expr::param("nowhere")})) == "unbound variable 'nowhere'");
  CHECK(errorOf(call(Op::Id, {twice})) ==
        "a function cannot be used as a value (it must be applied)");
  CHECK(errorOf(call(Op::Id, {Expr::intLiteral(int64_t{1} << 40)})) ==
        "integer literal 1099511627776 does not fit in 32 bits");
}

// ---- definitions and size binding ----------------------------------------------------------

namespace {

// def dot(a: [float]N, b: [float]N) = reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
Definition dotDefinition() {
  Arith n = Arith::size("N");
  Expr a = Expr::param("a", Type::array(Type::floatType(), n));
  Expr b = Expr::param("b", Type::array(Type::floatType(), n));
  Expr acc = Expr::param("acc");
  Expr p = Expr::param("p");
  Expr step = Expr::lambda(
      {acc, p},
      call(Op::Add, {acc, call(Op::Mul, {sized(Op::Get, {0}, {p}), sized(Op::Get, {1}, {p})})}));
  Definition definition;
  definition.name = "dot";
  definition.function =
      Expr::lambda({a, b}, withFun(Op::Reduce, {}, step, {lit(0.0f), call(Op::Zip, {a, b})}));
  return definition;
}

Definition definitionOf(const std::string& name, std::vector<Expr> params, Expr body) {
  Definition definition;
  definition.name = name;
  definition.function = Expr::lambda(std::move(params), std::move(body));
  return definition;
}

std::string bindError(const Definition& definition, const std::vector<Value>& inputs,
                      const ArithBinding& given = {}) {
  return errorOf([&] { bindSizes(definition, inputs, given); });
}

}  // namespace

TEST_CASE("interpret runs a definition on inputs") {
  Definition dot = dotDefinition();
  std::vector<Value> inputs = {floats({1, 2, 3}), floats({4, 5, 6})};
  ArithBinding sizes = bindSizes(dot, inputs);
  CHECK(sizes == ArithBinding{{"N", 3}});
  CHECK(interpret(dot, inputs, sizes) == floats({32}));
  CHECK(errorOf([&] { interpret(dot, {floats({1})}, sizes); }) ==
        "definition 'dot' takes 2 parameter(s), given 1 input(s)");
}

TEST_CASE("bindSizes binds single-variable lengths and checks the others") {
  Definition dot = dotDefinition();
  CHECK(bindError(dot, {floats({1, 2, 3}), floats({4, 5})}) ==
        "definition 'dot': parameter 'b' dimension 1: expected length N = 3 from parameter 'a' "
        "dimension 1, found 2");
  CHECK(bindError(dot, {floats({1, 2}), floats({4, 5})}, {{"N", 3}}) ==
        "definition 'dot': parameter 'a' dimension 1: expected length N = 3 from the given sizes, "
        "found 2");
  CHECK(bindError(dot, {ints({1, 2}), floats({4, 5})}) ==
        "definition 'dot': parameter 'a': expected float, found int 1");
  CHECK(bindError(dot, {F(1), floats({4, 5})}) ==
        "definition 'dot': parameter 'a' dimension 1: expected an array of type [float]N, found "
        "float 1.0");
  CHECK(bindError(dot, {Value::array({}), Value::array({})}) ==
        "definition 'dot': parameter 'a' dimension 1: size N = 0 is outside its range [1, inf); "
        "sizes are at least 1 unless declared otherwise, e.g. def dot[N >= 0](...)");
  CHECK(bindError(dot, {floats({1})}) ==
        "definition 'dot': takes 2 parameter(s), given 1 input(s)");

  // [[float]W]H: the second dimension of every row is compared.
  Arith w = Arith::size("W");
  Arith h = Arith::size("H");
  Expr image = Expr::param("input", Type::array(Type::array(Type::floatType(), w), h));
  Expr weights = Expr::param("weights", Type::array(Type::floatType(), w));
  Definition rows = definitionOf("rows", {weights, image}, call(Op::Id, {image}));
  CHECK(
      bindSizes(rows, {floats({1, 2}), arrays({floats({1, 2}), floats({3, 4}), floats({5, 6})})}) ==
      ArithBinding{{"H", 3}, {"W", 2}});
  CHECK(bindError(rows, {floats({1, 2}), arrays({floats({1, 2}), floats({3, 4, 5})})}) ==
        "definition 'rows': parameter 'input' dimension 2: the rows of this array have different "
        "lengths (2 and 3)");
  CHECK(bindError(rows, {floats({1, 2, 3}), arrays({floats({1, 2}), floats({3, 4})})}) ==
        "definition 'rows': parameter 'input' dimension 2: expected length W = 3 from parameter "
        "'weights' dimension 1, found 2");
}

TEST_CASE("bindSizes evaluates compound lengths and solves linear ones") {
  Arith n = Arith::size("N");
  Expr a = Expr::param("a", Type::array(Type::floatType(), n));
  Expr quarter = Expr::param("q", Type::array(Type::floatType(), n / 4));
  Definition both = definitionOf("both", {a, quarter}, call(Op::Id, {a}));
  CHECK(bindSizes(both, {floats({1, 2, 3, 4, 5, 6, 7, 8}), floats({1, 2})}) ==
        ArithBinding{{"N", 8}});
  CHECK(bindError(both, {floats({1, 2, 3, 4, 5, 6, 7, 8}), floats({1, 2, 3})}) ==
        "definition 'both': parameter 'q' dimension 1: expected length N/4 = 2 (N = 8 from "
        "parameter 'a' dimension 1), found 3");

  // [float](2*N + 1) alone determines N = 3 from length 7.
  Expr odd = Expr::param("odd", Type::array(Type::floatType(), 2 * n + 1));
  Definition solved = definitionOf("solved", {odd}, call(Op::Id, {odd}));
  CHECK(bindSizes(solved, {floats({1, 2, 3, 4, 5, 6, 7})}) == ArithBinding{{"N", 3}});
  CHECK(bindError(solved, {floats({1, 2, 3, 4})}) ==
        "definition 'solved': parameter 'odd' dimension 1: the length 2*N + 1 cannot be 4 for "
        "any integer N");

  // N/4 alone does not determine N.
  Definition unsolved = definitionOf("unsolved", {quarter}, call(Op::Id, {quarter}));
  std::string message = bindError(unsolved, {floats({1, 2})});
  CHECK(message.find("parameter 'q' dimension 1: cannot determine N from the length N/4 = 2") !=
        std::string::npos);
  CHECK(bindSizes(unsolved, {floats({1, 2})}, {{"N", 9}}) == ArithBinding{{"N", 9}});

  // Constant lengths and vector element types.
  Expr three = Expr::param("t", Type::array(Type::vector(ScalarKind::Float, 2), 3));
  Definition constant = definitionOf("constant", {three}, call(Op::Id, {three}));
  Value vectors = Value::array({floatVector({1, 2}), floatVector({3, 4}), floatVector({5, 6})});
  CHECK(bindSizes(constant, {vectors}).empty());
  CHECK(bindError(constant, {Value::array({floatVector({1, 2})})}) ==
        "definition 'constant': parameter 't' dimension 1: expected length 3, found 1");
  CHECK(bindError(constant, {Value::array({floatVector({1, 2, 3}), floatVector({1, 2, 3}),
                                           floatVector({1, 2, 3})})}) ==
        "definition 'constant': parameter 't': expected float2, found vector of width 3 "
        "<1.0, 2.0, 3.0>");
}

TEST_CASE("bindSizes checks every bound size against its declared range") {
  // P is declared [0, inf) and S [1, 3]; N is undeclared, so [1, inf).
  Program program =
      parseProgram("def shift[P >= 0, S <= 3](xs: [float]N) = slide(1, S, pad(P, P, clamp, xs))\n",
                   "shift.weft");
  const Definition& shift = program.definitions[0];
  std::vector<Value> inputs = {floats({1, 2, 3})};
  CHECK(bindSizes(shift, inputs, {{"P", 0}, {"S", 1}}) ==
        ArithBinding{{"N", 3}, {"P", 0}, {"S", 1}});
  CHECK(interpret(shift, inputs, {{"N", 3}, {"P", 0}, {"S", 1}}) ==
        arrays({floats({1}), floats({2}), floats({3})}));
  CHECK(bindSizes(shift, inputs, {{"P", 2}, {"S", 3}}).at("S") == 3);
  CHECK(bindError(shift, inputs, {{"P", -1}, {"S", 1}}) ==
        "shift.weft:1:5: definition 'shift': size P = -1 is outside its declared range [0, inf)");
  CHECK(bindError(shift, inputs, {{"P", 0}, {"S", 4}}) ==
        "shift.weft:1:5: definition 'shift': size S = 4 is outside its declared range [1, 3]");
  CHECK(bindError(shift, inputs, {{"P", 0}, {"S", 0}}) ==
        "shift.weft:1:5: definition 'shift': size S = 0 is outside its declared range [1, 3]");
  // An undeclared size is at least 1, whether given or found in an input's shape.
  CHECK(bindError(shift, inputs, {{"N", 0}, {"P", 0}, {"S", 1}}) ==
        "shift.weft:1:5: definition 'shift': size N = 0 is outside its range [1, inf); sizes are "
        "at least 1 unless declared otherwise, e.g. def shift[N >= 0](...)");
  CHECK(bindError(shift, {Value::array({})}, {{"P", 0}, {"S", 1}}) ==
        "shift.weft:1:5: definition 'shift': parameter 'xs' dimension 1: size N = 0 is outside "
        "its range [1, inf); sizes are at least 1 unless declared otherwise, e.g. def "
        "shift[N >= 0](...)");

  // A declared size found in an input's shape: [N >= 0] accepts an empty array, [N <= 2] does
  // not accept three elements.
  Program empty = parseProgram("def copy[N >= 0](xs: [float]N) = map(x -> x, xs)\n", "e.weft");
  CHECK(bindSizes(empty.definitions[0], {Value::array({})}) == ArithBinding{{"N", 0}});
  CHECK(interpret(empty.definitions[0], {Value::array({})}, {{"N", 0}}) == Value::array({}));
  Program small = parseProgram("def copy[N <= 2](xs: [float]N) = map(x -> x, xs)\n", "s.weft");
  CHECK(bindError(small.definitions[0], inputs) ==
        "s.weft:1:5: definition 'copy': parameter 'xs' dimension 1: size N = 3 is outside its "
        "declared range [1, 2]");
  // Solved from a compound length, then checked.
  Program odd = parseProgram("def odd[N <= 2](xs: [float](2*N + 1)) = xs\n", "o.weft");
  CHECK(bindError(odd.definitions[0], {floats({1, 2, 3, 4, 5, 6, 7})}) ==
        "o.weft:1:5: definition 'odd': parameter 'xs' dimension 1 (2*N + 1 = 7): size N = 3 is "
        "outside its declared range [1, 2]");

  // A tuning parameter with a symbolic bound is checked once the bound's variables are bound.
  Arith n = Arith::size("N");
  Arith tile = Arith::var("T", VarKind::Tuning, Arith(1), n);
  Expr xs = Expr::param("xs", Type::array(Type::floatType(), n));
  Definition tiled = definitionOf("tiled", {xs}, sized(Op::Split, {tile}, {xs}));
  CHECK(bindSizes(tiled, {floats({1, 2, 3, 4})}, {{"T", 4}}) == ArithBinding{{"N", 4}, {"T", 4}});
  CHECK(bindError(tiled, {floats({1, 2, 3, 4})}, {{"T", 8}}) ==
        "definition 'tiled': tuning parameter T = 8 is outside its range [1, N] (N = 4 from "
        "parameter 'xs' dimension 1)");
}

// ---- values --------------------------------------------------------------------------------

TEST_CASE("values print, compare and convert") {
  CHECK(floats({1, 2.5f}).toString() == "[1.0, 2.5]");
  CHECK(Value::tuple({F(1.5f), I(2)}).toString() == "(1.5, 2)");
  CHECK(intVector({1, 2, 3, 4}).toString() == "<1, 2, 3, 4>");
  CHECK(B(true).toString() == "true");
  CHECK(F(NAN) == F(NAN));
  CHECK(!(F(1) == I(1)));
  CHECK(!(floats({1}) == floats({1, 2})));

  CHECK(maxAbsDifference(floats({1, 2}), floats({1.5f, 1})) == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(maxAbsDifference(arrays({floats({1})}), arrays({floats({1, 2})})),
                       "values differ in length at [0]: 1 vs 2", std::invalid_argument);
  CHECK(approximatelyEqual(floats({1000.0f}), floats({1000.05f})));
  CHECK(!approximatelyEqual(floats({1.0f}), floats({1.01f})));
  CHECK(!approximatelyEqual(floats({1.0f}), floats({1.0f, 2.0f})));
  CHECK(!approximatelyEqual(ints({1}), ints({2})));

  Arith n = Arith::size("N");
  Type matrix = Type::array(Type::array(Type::floatType(), 2), n);
  Value built = valueFromFlat(matrix, {{"N", 2}}, {1, 2, 3, 4});
  CHECK(built == arrays({floats({1, 2}), floats({3, 4})}));
  CHECK(flattenToFloats(built) == std::vector<float>{1, 2, 3, 4});
  CHECK(shapeOf(built) == std::vector<int64_t>{2, 2});
  CHECK(shapeOf(Value::array({floatVector({1, 2})})) == std::vector<int64_t>{1});
  CHECK(flattenToFloats(Value::array({floatVector({1, 2})})) == std::vector<float>{1, 2});
  CHECK_THROWS_AS(valueFromFlat(matrix, {{"N", 2}}, {1, 2, 3}), std::invalid_argument);
  CHECK(valueFromFlat(Type::array(Type::intType(), 2), {}, {3, 4}) == ints({3, 4}));
}
