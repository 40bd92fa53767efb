// Tests of type errors: every way a program can be ill-typed is reported with a message that
// names the primitive, the expected and the found type, and the location file:line:column
// of the primitive (or of the nearest enclosing node with a known location).
#include <doctest/doctest.h>

#include <functional>

#include "ir/expr.h"
#include "ir/parser.h"
#include "typecheck/typecheck.h"
#include "tests/support/prim_shorthand.h"

using namespace weft;
using namespace weft::testing::shorthand;

namespace {

const Arith N = Arith::size("N");
const Type F = Type::floatType();
const Type I = Type::intType();
const Type B = Type::boolType();
const Type F4 = Type::vector(ScalarKind::Float, 4);
const Type F8 = Type::vector(ScalarKind::Float, 8);

Expr identity() {
  return lam("x", [](Expr x) { return x; });
}
Expr fl(double v) { return Expr::floatLiteral(v); }
Expr in(const char* name, const Type& type) { return Expr::param(name, type); }

// The type error message (without location) of `def test(params) = body`, or "no error".
std::string errorOf(const std::vector<Expr>& params, const Expr& body,
                    const Type& declared = Type()) {
  try {
    typecheck(Definition{"test", Expr::lambda(params, body), declared, {}});
  } catch (const TypeError& error) {
    return error.message;
  }
  return "no error";
}

std::string errorOf(const Expr& param, const Expr& body) {
  return errorOf(std::vector<Expr>{param}, body);
}

SourceLoc at(int line, int column) {
  return SourceLoc{std::make_shared<const std::string>("t.weft"), line, column};
}

}  // namespace

TEST_CASE("array primitives given the wrong kind of argument") {
  Expr f = in("f", F);
  Expr xs = in("xs", arr(F, N));
  CHECK(errorOf(f, callF(Op::Map, identity(), {f})) ==
        "map: argument 2: expected an array [T]n, found float");
  CHECK(errorOf(f, callF(Op::MapGlb, identity(), {f}, {0})) ==
        "mapGlb: argument 3: expected an array [T]n, found float");
  CHECK(errorOf({f, xs}, call(Op::Zip, {xs, f})) ==
        "zip: argument 2: expected an array [T]n, found float");
  CHECK(errorOf(xs, call(Op::Join, {xs})) ==
        "join: argument 1: expected an array of arrays [[T]n]m, found [float]N");
  CHECK(errorOf(xs, call(Op::Transpose, {xs})) ==
        "transpose: argument 1: expected an array of arrays [[T]n]m, found [float]N");
  CHECK(errorOf(f, callN(Op::Split, {2}, {f})) ==
        "split: argument 2: expected an array [T]n, found float");
  CHECK(errorOf(f, callN(Op::Pad, {1, 1}, {f})) ==
        "pad: argument 4: expected an array [T]n, found float");
  CHECK(
      errorOf(xs, call(Op::AsScalar, {xs})) ==
      "asScalar: argument 1: expected an array of vectors [S<v>]n, e.g. [float4]n, found [float]N");
  Expr bs = in("bs", arr(B, N));
  CHECK(errorOf(bs, callN(Op::AsVector, {4}, {bs})) ==
        "asVector: argument 2: expected an array of scalars [float]n or [int]n, found [bool]N");
  CHECK(errorOf(f, Expr::prim(Op::Reduce, {}, {identity()}, {fl(0), f})) ==
        "reduce: argument 3: expected an array [T]n, found float");
}

TEST_CASE("function arguments: arity, declared params, results") {
  Expr xs = in("xs", arr(F, N));
  Expr a = Expr::param("a");
  Expr b = Expr::param("b");
  CHECK(errorOf(xs, callF(Op::Map, Expr::lambda({a, b}, a), {xs})) ==
        "map: expected a function of 1 parameter, found a function of 2 parameters (a, b)");
  CHECK(errorOf(xs, Expr::prim(Op::Reduce, {}, {identity()}, {fl(0), xs})) ==
        "reduce: expected a function of 2 parameters, found a function of 1 parameter (x)");
  Expr declared = Expr::param("v", I);
  CHECK(errorOf(xs, callF(Op::Map, Expr::lambda({declared}, declared), {xs})) ==
        "map: parameter v is declared int but given float");
  // reduce: the function's result must be the initial value's type
  CHECK(errorOf(xs,
                Expr::prim(Op::Reduce, {}, {Expr::lambda({a, b}, b)}, {Expr::intLiteral(0), xs})) ==
        "reduce: the function returns float but the initial value has type int; the "
        "accumulator, the initial value and the result must have one type");
  Expr acc = Expr::param("acc");
  Expr e = Expr::param("e");
  CHECK(errorOf(xs, Expr::prim(Op::ReduceSeq, {},
                               {Expr::lambda({acc, e}, call(Op::Tuple, {acc, e}))}, {fl(0), xs})) ==
        "reduceSeq: the function returns (float, float) but the initial value has type float; "
        "the accumulator, the initial value and the result must have one type");
}

TEST_CASE("user functions: argument types, arity and body") {
  Expr x = Expr::param("x", F);
  Expr y = Expr::param("y", F);
  Expr mult = Expr::userFun("mult", {x, y}, F, call(Op::Mul, {x, y}));
  Expr i = in("i", I);
  Expr f = in("f", F);
  CHECK(errorOf({i, f}, callF(Op::Apply, mult, {i, f})) ==
        "mult: argument 1 (x): expected float, found int");
  CHECK(errorOf({i, f}, callF(Op::Apply, mult, {f})) == "mult: takes 2 arguments (x, y), given 1");
  Expr is = in("is", arr(I, N));
  Expr z = Expr::param("z", F);
  Expr half = Expr::userFun("half", {z}, F, call(Op::Mul, {z, fl(0.5)}));
  CHECK(errorOf(is, callF(Op::Map, half, {is})) ==
        "map: function half: argument 1 (z): expected float, found int");
  Expr w = Expr::param("w", F);
  Expr bad = Expr::userFun("bad", {w}, I, call(Op::Add, {w, fl(1)}));
  CHECK(errorOf(f, callF(Op::Apply, bad, {f})) ==
        "fun bad: the body has type float but the declared result type is int");
  Program program;
  program.userFuns.push_back(bad);
  CHECK_THROWS_WITH_AS(typecheckProgram(program),
                       "type error: fun bad: the body has type float but the declared result "
                       "type is int",
                       TypeError);
}

TEST_CASE("declared result type mismatches") {
  Expr xs = in("xs", arr(F, N));
  CHECK(errorOf({xs}, callN(Op::Split, {4}, {xs}), arr(F, N)) ==
        "def test: the declared result type [float]N does not match the inferred type "
        "[[float]4](N/4)");
  CHECK(errorOf({xs}, call(Op::Id, {xs}), arr(F, N + 1)) ==
        "def test: the declared result type [float](N + 1) does not match the inferred type "
        "[float]N: def test requires N + 1 = N, which is false (the declared result type must "
        "match the inferred one)");
  Expr fixed = in("fixed", arr(F, 8));
  CHECK(errorOf({fixed}, call(Op::Id, {fixed}), arr(F, 6)) ==
        "def test: the declared result type [float]6 does not match the inferred type [float]8");
  CHECK(errorOf({xs}, call(Op::Id, {xs}), arr(I, N)) ==
        "def test: the declared result type [int]N does not match the inferred type [float]N");
}

TEST_CASE("tuples") {
  Expr t = in("t", Type::tuple({F, I}));
  CHECK(errorOf(t, callN(Op::Get, {2}, {t})) ==
        "get: component 2 is out of range for the tuple (float, int) of 2 components (0 to 1)");
  CHECK(errorOf(t, callN(Op::Get, {-1}, {t})) ==
        "get: component -1 is out of range for the tuple (float, int) of 2 components (0 to 1)");
  CHECK(errorOf(t, callN(Op::Get, {N}, {t})) ==
        "get: the component index must be a constant, found N");
  Expr f = in("f", F);
  CHECK(errorOf(f, callN(Op::Get, {0}, {f})) ==
        "get: argument 2: expected a tuple (T0, T1, ...), found float");
}

TEST_CASE("provably false size constraints") {
  Expr x8 = in("x", arr(F, 8));
  CHECK(errorOf(x8, callN(Op::Split, {3}, {x8})) ==
        "split by 3 requires 8 % 3 = 0, which is false (the split size must divide the length)");
  CHECK(errorOf(x8, callN(Op::Split, {0}, {x8})) ==
        "split by 0 requires 8 % 0 = 0, which is false (the split size must divide the length)");
  Expr xs = in("xs", arr(F, N));
  CHECK(
      errorOf(xs, callN(Op::Split, {4}, {callN(Op::Pad, {1, 1}, {callN(Op::Split, {2}, {xs})})})) ==
      "no error");  // 4 | N/2 + 2 cannot be decided: a constraint
  CHECK(errorOf(xs, callN(Op::Split, {3}, {call(Op::Join, {callN(Op::Fill, {6}, {xs})})})) ==
        "no error");  // 3 | 6*N is provable: no error and no constraint
  Expr x3 = in("x", arr(F, 3));
  CHECK(errorOf(x3, callN(Op::Slide, {5, 1}, {x3})) ==
        "slide requires 5 <= 3, which is false (the window must fit in the input)");
  CHECK(errorOf(xs, callN(Op::Slide, {3, 0}, {xs})) ==
        "slide requires 1 <= 0, which is false (the step must be at least 1)");
  CHECK(errorOf(xs, callN(Op::Slide, {0, 1}, {xs})) ==
        "slide requires 1 <= 0, which is false (the window size must be at least 1)");
  CHECK(errorOf(x8, callN(Op::SlideStrict, {3, 2}, {x8})) ==
        "slideStrict with step 2 requires 5 % 2 = 0, which is false (the windows must cover the "
        "input exactly)");
  CHECK(errorOf(xs, callN(Op::Pad, {-1, 0}, {xs})) ==
        "pad requires 0 <= -1, which is false (padding cannot be negative)");
  PrimAttribute mirror;
  mirror.boundary = Boundary::Mirror;
  CHECK(errorOf(x3, Expr::prim(Op::Pad, {4, 0}, {}, {x3}, mirror)) ==
        "pad requires 4 <= 3, which is false (mirror padding reflects the input at most once)");
  Expr x4 = in("x", arr(F, 4));
  CHECK(errorOf(x4, callN(Op::Crop, {2, 2}, {x4})) ==
        "crop requires 4 <= 3, which is false (crop must leave at least one element)");
  CHECK(errorOf(xs, callN(Op::Crop, {0, -2}, {xs})) ==
        "crop requires 0 <= -2, which is false (cropping cannot be negative)");
  PrimAttribute stride;
  stride.indexFunction = IndexFunction::Stride;
  stride.stride = 3;
  CHECK(errorOf(x8, Expr::prim(Op::Reorder, {}, {}, {x8}, stride)) ==
        "reorder with stride 3 requires 8 % 3 = 0, which is false (the stride must divide the "
        "length)");
  CHECK(errorOf({x3, x4}, call(Op::Zip, {x3, x4})) ==
        "zip requires 3 = 4, which is false (zipped arrays must have the same length)");
  CHECK(errorOf({xs}, call(Op::Zip, {xs, callN(Op::Pad, {0, 1}, {xs})})) ==
        "zip requires N = N + 1, which is false (zipped arrays must have the same length)");
  CHECK(errorOf(x8, callN(Op::AsVector, {16}, {x8})) ==
        "asVector to width 16 requires 8 % 16 = 0, which is false (the vector width must divide "
        "the length)");
  Expr f = in("f", F);
  CHECK(errorOf(f, callN(Op::Fill, {0}, {f})) ==
        "fill requires 1 <= 0, which is false (the length must be at least 1)");
  Expr shorter = in("shorter", arr(F, N - 3));
  CHECK(errorOf(shorter, call(Op::Id, {shorter})) == "no error");  // 1 <= N - 3: a constraint
  Expr empty = in("empty", arr(F, N - N));
  CHECK(errorOf(empty, call(Op::Id, {empty})) ==
        "def test requires 1 <= 0, which is false (array lengths must be positive)");
}

TEST_CASE("vector widths") {
  Expr xs = in("xs", arr(F, N));
  CHECK(errorOf(xs, callN(Op::AsVector, {5}, {xs})) ==
        "asVector: invalid vector width 5 (expected 2, 3, 4, 8 or 16)");
  Arith v = Arith::var("v", VarKind::Tuning, 2, Arith(16));
  CHECK(errorOf(xs, callN(Op::AsVector, {v}, {xs})) ==
        "asVector: the vector width must be a constant (2, 3, 4, 8 or 16), found v; symbolic "
        "vector widths are not supported");
  Expr f4 = in("f4", F4);
  CHECK(errorOf(f4, callF(Op::Vectorize, identity(), {f4}, {32})) ==
        "vectorize: invalid vector width 32 (expected 2, 3, 4, 8 or 16)");
  CHECK(errorOf(f4, callF(Op::Vectorize, identity(), {f4}, {8})) ==
        "vectorize: argument 3: expected a scalar or a vector of width 8, found float4");
  CHECK(errorOf(f4, callF(Op::Vectorize,
                          lam("x",
                              [](Expr x) {
                                return call(Op::Lt, {x, x});
                              }),
                          {f4}, {4})) ==
        "vectorize: the vectorized function must return int or float, found bool");
}

TEST_CASE("scalar operators") {
  Expr f = in("f", F);
  Expr i = in("i", I);
  Expr b = in("b", B);
  Expr f4 = in("f4", F4);
  Expr f8 = in("f8", F8);
  CHECK(errorOf({f, i}, call(Op::Add, {f, i})) ==
        "add (+): right operand: expected float or a float vector, found int");
  CHECK(errorOf({f4, f8}, call(Op::Mul, {f4, f8})) ==
        "mul (*): right operand: expected float4 or float, found float8");
  CHECK(errorOf({b, f}, call(Op::Sub, {b, f})) ==
        "sub (-): left operand: expected int, float or a vector of them, found bool");
  CHECK(errorOf({f, i}, call(Op::Mod, {f, i})) ==
        "mod (%): left operand: expected int or an int vector, found float");
  CHECK(errorOf({b}, call(Op::Neg, {b})) ==
        "neg (-): operand: expected int, float or a vector of them, found bool");
  CHECK(errorOf({f4}, call(Op::Lt, {f4, f4})) ==
        "lt (<): left operand: expected int or float (vectors cannot be compared), found float4");
  CHECK(errorOf({f, i}, call(Op::Ge, {f, i})) ==
        "ge (>=): right operand: expected float, found int");
  CHECK(errorOf({f4}, call(Op::Eq, {f4, f4})) ==
        "eq (==): left operand: expected a scalar: int, float or bool (vectors cannot be "
        "compared), found float4");
  CHECK(errorOf({b, i}, call(Op::And, {b, i})) ==
        "and (&&): right operand: expected bool, found int");
  CHECK(errorOf({i}, call(Op::Not, {i})) == "not (!): operand: expected bool, found int");
  CHECK(errorOf({i, f}, call(Op::Select, {i, f, f})) ==
        "select: argument 1: expected bool, found int");
  CHECK(errorOf({b, f, i}, call(Op::Select, {b, f, i})) ==
        "select: argument 3: expected float (the type of argument 2), found int");
  CHECK(errorOf({i}, call(Op::Sqrt, {i})) ==
        "sqrt: argument 1: expected float or a float vector, found int");
  CHECK(errorOf({f4, f8}, call(Op::Dot, {f4, f8})) ==
        "dot: argument 2: expected float4 (the type of argument 1), found float8");
  CHECK(errorOf({f4, f}, call(Op::Fma, {f4, f4, f})) ==
        "fma: argument 3: expected float4 (the type of argument 1), found float");
  Expr xs = in("xs", arr(F, N));
  CHECK(errorOf({xs}, call(Op::ToFloat, {xs})) ==
        "toFloat: argument 1: expected a scalar or a vector, found [float]N");
}

TEST_CASE("low-level primitives") {
  Expr xs = in("xs", arr(F, N));
  CHECK(errorOf(xs, callF(Op::MapGlb, identity(), {xs}, {3})) ==
        "mapGlb: the thread dimension must be 0, 1 or 2, found 3");
  CHECK(errorOf(xs, callF(Op::MapLcl, identity(), {xs}, {N})) ==
        "mapLcl: the thread dimension must be 0, 1 or 2, found N");
  PrimAttribute constant;
  constant.boundary = Boundary::Constant;
  constant.padValue = 0.5;
  Expr is = in("is", arr(I, N));
  CHECK(errorOf(is, Expr::prim(Op::Pad, {1, 1}, {}, {is}, constant)) ==
        "pad: the padding constant 0.5 is not an int, but the elements are int");
}

TEST_CASE("a node shared at two different types") {
  Expr xs = in("xs", arr(F, N));
  Expr is = in("is", arr(I, N));
  Expr shared = identity();
  CHECK(errorOf({xs, is},
                call(Op::Zip, {callF(Op::Map, shared, {xs}), callF(Op::Map, shared, {is})})) ==
        "parameter x: this node is shared at two different types, float and int");
}

TEST_CASE("errors carry file:line:column") {
  Expr f = in("f", F);
  Expr map = Expr::prim(Op::Map, {}, {identity()}, {f}, {}, at(3, 7));
  try {
    typecheck(Definition{"test", Expr::lambda({f}, map), Type(), at(1, 1)});
    FAIL("expected a type error");
  } catch (const TypeError& error) {
    CHECK(std::string(error.what()) ==
          "t.weft:3:7: type error: map: argument 2: expected an array [T]n, found float");
    CHECK(error.loc.line == 3);
    CHECK(error.loc.column == 7);
    CHECK(error.message == "map: argument 2: expected an array [T]n, found float");
  }
  // A node without a location is reported at the nearest enclosing node that has one.
  Expr xs = in("xs", arr(F, 8));
  Expr inner = callN(Op::Split, {3}, {xs});
  Expr outer = Expr::prim(Op::Map, {}, {identity()}, {inner}, {}, at(5, 2));
  CHECK_THROWS_WITH_AS(typecheck(Definition{"test", Expr::lambda({xs}, outer), Type(), at(4, 1)}),
                       "t.weft:5:2: type error: split by 3 requires 8 % 3 = 0, which is false "
                       "(the split size must divide the length)",
                       TypeError);
}

TEST_CASE("parsed programs: errors point at the primitive in the source") {
  Program program = parseProgram(
      "def bad(x: [float]8) =\n"
      "  map(y -> y + 1.0f,\n"
      "      split(3, x))\n",
      "bad.weft");
  CHECK_THROWS_WITH_AS(typecheckProgram(program),
                       "bad.weft:3:7: type error: split by 3 requires 8 % 3 = 0, which is false "
                       "(the split size must divide the length)",
                       TypeError);
  Program wrong = parseProgram(
      "def wrong(a: [float]N, b: [int]N) =\n"
      "  map(p -> p._0 + p._1, zip(a, b))\n",
      "wrong.weft");
  try {
    typecheckProgram(wrong);
    FAIL("expected a type error");
  } catch (const TypeError& error) {
    CHECK(error.message == "add (+): right operand: expected float or a float vector, found int");
    CHECK(error.loc.line == 2);
    CHECK(error.loc.toString().rfind("wrong.weft:2:", 0) == 0);
  }
}

TEST_CASE("a reduce's one-element result used as a number: the error says how to use it") {
  Program program = parseProgram(
      "def mean(x: [float]N) =\n"
      "  reduce(0.0f, (acc, v) -> acc + v, x) / 9.0f\n",
      "mean.weft");
  try {
    typecheckProgram(program);
    FAIL("expected a type error");
  } catch (const TypeError& error) {
    CHECK(error.message ==
          "div (/): left operand: expected int, float or a vector of them (a reduce gives a "
          "one-element array, [float]1: map over it, as in map(s -> s * 2.0f, reduce(...)), then "
          "join the results), found [float]1");
    CHECK(error.loc.line == 2);
  }
  // Other arrays get no such hint.
  Program rows = parseProgram("def f(x: [float]N) = -x\n", "rows.weft");
  CHECK_THROWS_WITH_AS(typecheckProgram(rows),
                       "rows.weft:1:22: type error: neg (-): operand: expected int, float or a "
                       "vector of them, found [float]N",
                       TypeError);
}
