// Tests of type inference: the result type of every primitive with symbolic sizes (a table
// of programs built with Expr::prim and their expected types, printed in weft notation), the
// side table of node types, shared nodes, user functions, declared result types, and the
// programs in examples/ (parsed from text).
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "ir/expr.h"
#include "ir/parser.h"
#include "typecheck/typecheck.h"
#include "tests/support/prim_shorthand.h"

using namespace weft;
using namespace weft::testing::shorthand;

namespace {

const Arith N = Arith::size("N");
const Arith M = Arith::size("M");
const Type F = Type::floatType();
const Type I = Type::intType();
const Type B = Type::boolType();
const Type F4 = Type::vector(ScalarKind::Float, 4);
const Type I4 = Type::vector(ScalarKind::Int, 4);

Expr lam2(const std::function<Expr(Expr, Expr)>& body) {
  Expr a = Expr::param("a");
  Expr b = Expr::param("b");
  return Expr::lambda({a, b}, body(a, b));
}
Expr fl(double v) { return Expr::floatLiteral(v); }

// A definition `def test(params) = body` type-checked.
TypedDefinition check(const std::vector<Expr>& params, const Expr& body,
                      const Type& declared = Type()) {
  Definition definition{"test", Expr::lambda(params, body), declared, {}};
  return typecheck(definition);
}

struct Case {
  const char* name;
  std::function<Expr(const std::vector<Expr>&)> build;  // from the params below
  const char* expected;
};

}  // namespace

TEST_CASE("every primitive's result type with symbolic sizes") {
  // Params: xs: [float]N, is: [int]N, m: [[float]M]N, v: [float4]N, f: float, i: int,
  // f4: float4, i4: int4, b: bool, ys: [float]M
  std::vector<Expr> ps = {Expr::param("xs", arr(F, N)),
                          Expr::param("is", arr(I, N)),
                          Expr::param("m", arr(arr(F, M), N)),
                          Expr::param("v", arr(F4, N)),
                          Expr::param("f", F),
                          Expr::param("i", I),
                          Expr::param("f4", F4),
                          Expr::param("i4", I4),
                          Expr::param("b", B),
                          Expr::param("ys", arr(F, M))};
  enum { xs, is, m, v, f, i, f4, i4, b, ys };
  auto plusOne = [] { return lam("x", [](Expr x) { return call(Op::Add, {x, fl(1)}); }); };
  auto sum = [] { return lam2([](Expr a, Expr b) { return call(Op::Add, {a, b}); }); };
  Expr mult = [] {
    Expr x = Expr::param("x", F);
    Expr y = Expr::param("y", F);
    return Expr::userFun("mult", {x, y}, F, call(Op::Mul, {x, y}));
  }();

  std::vector<Case> cases = {
      {"map", [&](auto& p) { return callF(Op::Map, plusOne(), {p[xs]}); }, "[float]N"},
      {"map to int",
       [&](auto& p) {
         return callF(Op::Map, lam("x", [](Expr x) { return call(Op::ToInt, {x}); }), {p[xs]});
       },
       "[int]N"},
      {"map over rows",
       [&](auto& p) {
         return callF(Op::Map,
                      lam("r", [](Expr r) { return call(Op::Join, {callN(Op::Split, {2}, {r})}); }),
                      {p[m]});
       },
       "[[float](2*(M/2))]N"},
      {"reduce",
       [&](auto& p) {
         return Expr::prim(Op::Reduce, {}, {sum()}, {fl(0), p[xs]});
       },
       "[float]1"},
      {"reduceSeq",
       [&](auto& p) {
         return Expr::prim(Op::ReduceSeq, {}, {sum()}, {fl(0), p[xs]});
       },
       "[float]1"},
      {"reduceSeqUnroll",
       [&](auto& p) {
         return Expr::prim(Op::ReduceSeqUnroll, {}, {sum()}, {fl(0), p[xs]});
       },
       "[float]1"},
      {"reduce to a tuple",
       [&](auto& p) {
         Expr a = Expr::param("a");
         Expr e = Expr::param("e");
         Expr body = call(Op::Tuple, {call(Op::Add, {callN(Op::Get, {0}, {a}), e}), e});
         return Expr::prim(Op::Reduce, {}, {Expr::lambda({a, e}, body)},
                           {call(Op::Tuple, {fl(0), fl(0)}), p[xs]});
       },
       "[(float, float)]1"},
      {"let",
       [&](auto& p) {
         return callF(Op::Let, lam("y", [](Expr y) { return call(Op::Transpose, {y}); }), {p[m]});
       },
       "[[float]N]M"},
      {"apply a user function",
       [&](auto& p) {
         return callF(Op::Apply, mult, {p[f], p[f]});
       },
       "float"},
      {"map of a user function",
       [&](auto& p) {
         return callF(Op::Map,
                      lam("x",
                          [&](Expr x) {
                            return callF(Op::Apply, mult, {x, x});
                          }),
                      {p[xs]});
       },
       "[float]N"},
      {"id", [&](auto& p) { return call(Op::Id, {p[m]}); }, "[[float]M]N"},
      {"vectorize",
       [&](auto& p) {
         return callF(Op::Vectorize, lam2([](Expr a, Expr b) {
                        return call(Op::Mul, {a, b});
                      }),
                      {p[f4], p[f]}, {4});
       },
       "float4"},
      {"vectorize to int",
       [&](auto& p) {
         return callF(Op::Vectorize, lam("x", [](Expr x) { return call(Op::ToInt, {x}); }), {p[f4]},
                      {4});
       },
       "int4"},
      {"fill symbolic", [&](auto& p) { return callN(Op::Fill, {M}, {p[f]}); }, "[float]M"},
      {"fill of arrays", [&](auto& p) { return callN(Op::Fill, {3}, {p[xs]}); }, "[[float]N]3"},
      {"zip",
       [&](auto& p) {
         return call(Op::Zip, {p[xs], p[is]});
       },
       "[(float, int)]N"},
      {"zip of three",
       [&](auto& p) {
         return call(Op::Zip, {p[xs], p[is], p[v]});
       },
       "[(float, int, float4)]N"},
      {"split", [&](auto& p) { return callN(Op::Split, {4}, {p[xs]}); }, "[[float]4](N/4)"},
      {"join", [&](auto& p) { return call(Op::Join, {p[m]}); }, "[float](M*N)"},
      {"split then join", [&](auto& p) { return call(Op::Join, {callN(Op::Split, {4}, {p[xs]})}); },
       "[float](4*(N/4))"},
      {"slide",
       [&](auto& p) {
         return callN(Op::Slide, {3, 1}, {p[xs]});
       },
       "[[float]3](N - 2)"},
      {"slide by 2",
       [&](auto& p) {
         return callN(Op::Slide, {3, 2}, {p[xs]});
       },
       "[[float]3]((N - 1)/2)"},
      {"slideStrict",
       [&](auto& p) {
         return callN(Op::SlideStrict, {4, 4}, {p[xs]});
       },
       "[[float]4](N/4)"},
      {"pad",
       [&](auto& p) {
         return callN(Op::Pad, {1, 2}, {p[xs]});
       },
       "[float](N + 3)"},
      {"crop",
       [&](auto& p) {
         return callN(Op::Crop, {1, 1}, {p[xs]});
       },
       "[float](N - 2)"},
      {"pad then crop",
       [&](auto& p) {
         return callN(Op::Crop, {1, 2}, {callN(Op::Pad, {1, 2}, {p[xs]})});
       },
       "[float]N"},
      {"transpose", [&](auto& p) { return call(Op::Transpose, {p[m]}); }, "[[float]N]M"},
      {"reorder",
       [&](auto& p) {
         PrimAttribute stride;
         stride.indexFunction = IndexFunction::Stride;
         stride.stride = 4;
         return Expr::prim(Op::Reorder, {}, {}, {p[xs]}, stride);
       },
       "[float]N"},
      {"asVector", [&](auto& p) { return callN(Op::AsVector, {4}, {p[xs]}); }, "[float4](N/4)"},
      {"asVector of ints", [&](auto& p) { return callN(Op::AsVector, {8}, {p[is]}); },
       "[int8](N/8)"},
      {"asScalar", [&](auto& p) { return call(Op::AsScalar, {p[v]}); }, "[float](4*N)"},
      {"asScalar of asVector",
       [&](auto& p) { return call(Op::AsScalar, {callN(Op::AsVector, {4}, {p[xs]})}); },
       "[float](4*(N/4))"},
      {"mapGlb", [&](auto& p) { return callF(Op::MapGlb, plusOne(), {p[xs]}, {0}); }, "[float]N"},
      {"mapWrg",
       [&](auto& p) {
         return callF(Op::MapWrg,
                      lam("r",
                          [](Expr r) {
                            return callF(Op::MapLcl,
                                         lam("x", [](Expr x) { return call(Op::Neg, {x}); }), {r},
                                         {0});
                          }),
                      {p[m]}, {1});
       },
       "[[float]M]N"},
      {"mapSeq", [&](auto& p) { return callF(Op::MapSeq, plusOne(), {p[xs]}); }, "[float]N"},
      {"mapSeqUnroll", [&](auto& p) { return callF(Op::MapSeqUnroll, plusOne(), {p[xs]}); },
       "[float]N"},
      {"toGlobal",
       [&](auto& p) {
         return callF(Op::ToGlobal,
                      lam("x",
                          [](Expr x) {
                            return callF(Op::MapSeq,
                                         lam("e", [](Expr e) { return call(Op::Id, {e}); }), {x});
                          }),
                      {p[xs]});
       },
       "[float]N"},
      {"toLocal",
       [&](auto& p) {
         return callF(Op::ToLocal, lam2([](Expr a, Expr b) {
                        return call(Op::Zip, {a, b});
                      }),
                      {p[xs], p[is]});
       },
       "[(float, int)]N"},
      {"toPrivate",
       [&](auto& p) {
         return callF(Op::ToPrivate, lam("x", [](Expr x) { return call(Op::Id, {x}); }), {p[f]});
       },
       "float"},
      {"tuple",
       [&](auto& p) {
         return call(Op::Tuple, {p[f], p[i], p[xs]});
       },
       "(float, int, [float]N)"},
      {"get",
       [&](auto& p) {
         return callN(Op::Get, {1}, {call(Op::Tuple, {p[f], p[i]})});
       },
       "int"},
      {"add",
       [&](auto& p) {
         return call(Op::Add, {p[f], p[f]});
       },
       "float"},
      {"sub of ints",
       [&](auto& p) {
         return call(Op::Sub, {p[i], Expr::intLiteral(1)});
       },
       "int"},
      {"mul vector by scalar",
       [&](auto& p) {
         return call(Op::Mul, {p[f4], p[f]});
       },
       "float4"},
      {"div scalar by vector",
       [&](auto& p) {
         return call(Op::Div, {p[f], p[f4]});
       },
       "float4"},
      {"mod",
       [&](auto& p) {
         return call(Op::Mod, {p[i4], p[i]});
       },
       "int4"},
      {"neg", [&](auto& p) { return call(Op::Neg, {p[i4]}); }, "int4"},
      {"lt",
       [&](auto& p) {
         return call(Op::Lt, {p[f], p[f]});
       },
       "bool"},
      {"le",
       [&](auto& p) {
         return call(Op::Le, {p[i], p[i]});
       },
       "bool"},
      {"gt",
       [&](auto& p) {
         return call(Op::Gt, {p[f], fl(0)});
       },
       "bool"},
      {"ge",
       [&](auto& p) {
         return call(Op::Ge, {p[i], p[i]});
       },
       "bool"},
      {"eq of bools",
       [&](auto& p) {
         return call(Op::Eq, {p[b], Expr::boolLiteral(true)});
       },
       "bool"},
      {"ne",
       [&](auto& p) {
         return call(Op::Ne, {p[f], p[f]});
       },
       "bool"},
      {"and",
       [&](auto& p) {
         return call(Op::And, {p[b], call(Op::Lt, {p[i], p[i]})});
       },
       "bool"},
      {"or",
       [&](auto& p) {
         return call(Op::Or, {p[b], p[b]});
       },
       "bool"},
      {"not", [&](auto& p) { return call(Op::Not, {p[b]}); }, "bool"},
      {"select",
       [&](auto& p) {
         return call(Op::Select, {p[b], p[f4], p[f4]});
       },
       "float4"},
      {"select of arrays",
       [&](auto& p) {
         return call(Op::Select, {p[b], p[xs], p[xs]});
       },
       "[float]N"},
      {"min",
       [&](auto& p) {
         return call(Op::Min, {p[f], p[f]});
       },
       "float"},
      {"max broadcast",
       [&](auto& p) {
         return call(Op::Max, {p[i4], p[i]});
       },
       "int4"},
      {"abs", [&](auto& p) { return call(Op::Abs, {p[i]}); }, "int"},
      {"sqrt", [&](auto& p) { return call(Op::Sqrt, {p[f4]}); }, "float4"},
      {"exp", [&](auto& p) { return call(Op::Exp, {p[f]}); }, "float"},
      {"fma",
       [&](auto& p) {
         return call(Op::Fma, {p[f4], p[f4], p[f4]});
       },
       "float4"},
      {"dot",
       [&](auto& p) {
         return call(Op::Dot, {p[f4], p[f4]});
       },
       "float"},
      {"dot of scalars",
       [&](auto& p) {
         return call(Op::Dot, {p[f], p[f]});
       },
       "float"},
      {"toFloat", [&](auto& p) { return call(Op::ToFloat, {p[i4]}); }, "float4"},
      {"toFloat of bool", [&](auto& p) { return call(Op::ToFloat, {p[b]}); }, "float"},
      {"toInt", [&](auto& p) { return call(Op::ToInt, {p[f]}); }, "int"},
      {"zip of different sizes",
       [&](auto& p) {
         return call(Op::Zip, {p[xs], p[ys]});
       },
       "[(float, float)]N"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    TypedDefinition typed = check(ps, c.build(ps));
    CHECK(typed.type.toString() == c.expected);
  }
}

TEST_CASE("every node gets a type in the side table") {
  Expr xs = Expr::param("xs", arr(F, N));
  Expr ws = Expr::param("ws", arr(F, N));
  Expr acc = Expr::param("acc");
  Expr p = Expr::param("p");
  Expr step = Expr::lambda(
      {acc, p},
      call(Op::Add, {acc, call(Op::Mul, {callN(Op::Get, {0}, {p}), callN(Op::Get, {1}, {p})})}));
  Expr zipped = call(Op::Zip, {xs, ws});
  Expr body = Expr::prim(Op::Reduce, {}, {step}, {fl(0), zipped});
  // The side table is keyed by node identity: the definition must outlive it.
  Definition definition{"test", Expr::lambda({xs, ws}, body), Type(), {}};
  TypedDefinition typed = typecheck(definition);
  CHECK(typed.type == arr(F, 1));
  CHECK(typed.typeOf(zipped) == arr(Type::tuple({F, F}), N));
  CHECK(typed.typeOf(step) == F);  // functions: their result type
  CHECK(typed.typeOf(p) == Type::tuple({F, F}));
  CHECK(typed.typeOf(acc) == F);
  CHECK(typed.typeOf(xs) == arr(F, N));
  size_t nodes = 0;
  forEachNode(body, [&](const Expr& e) {
    ++nodes;
    CHECK_NOTHROW(typed.typeOf(e));
  });
  CHECK(nodes == 15);
  CHECK_THROWS_AS(typed.typeOf(Expr::param("other")), std::out_of_range);
}

TEST_CASE("a node shared at the same type is fine and has one type") {
  Expr xs = Expr::param("xs", arr(F, N));
  Expr tiles = callN(Op::Split, {4}, {xs});
  TypedDefinition typed = check({xs}, call(Op::Zip, {tiles, tiles}));
  CHECK(typed.type.toString() == "[([float]4, [float]4)](N/4)");
  CHECK(typed.typeOf(tiles).toString() == "[[float]4](N/4)");
  CHECK(typed.constraints.size() == 1);

  // The same lambda used by two maps over arrays of the same element type.
  Expr ys = Expr::param("ys", arr(F, M));
  Expr twice = lam("x", [](Expr x) { return call(Op::Mul, {x, fl(2)}); });
  TypedDefinition both =
      check({xs, ys}, call(Op::Tuple, {callF(Op::Map, twice, {xs}), callF(Op::Map, twice, {ys})}));
  CHECK(both.type.toString() == "([float]N, [float]M)");
  CHECK(both.typeOf(twice) == F);
}

TEST_CASE("lambda params may declare their types") {
  Expr xs = Expr::param("xs", arr(arr(F, 3), N));
  Expr row = Expr::param("row", arr(F, 3));
  Expr body = callF(Op::Map, Expr::lambda({row}, call(Op::Zip, {row, row})), {xs});
  TypedDefinition typed = check({xs}, body);
  CHECK(typed.type.toString() == "[[(float, float)]3]N");
  CHECK(typed.constraints.empty());
  // A declared length that is only symbolically equal to the given one: a constraint.
  Expr sized = Expr::param("sized", arr(F, M));
  TypedDefinition symbolic =
      check({xs}, callF(Op::Map, Expr::lambda({sized}, call(Op::Id, {sized})), {xs}));
  REQUIRE(symbolic.constraints.size() == 1);
  CHECK(symbolic.constraints[0].formula() == "M = 3");
  CHECK(symbolic.constraints[0].origin == "map");
  CHECK(symbolic.type.toString() == "[[float]3]N");
}

TEST_CASE("user functions: declared types, results and shared use") {
  Expr x = Expr::param("x", F);
  Expr y = Expr::param("y", F);
  Expr mult = Expr::userFun("mult", {x, y}, F, call(Op::Mul, {x, y}));
  Expr xs = Expr::param("xs", arr(F, N));
  Expr ws = Expr::param("ws", arr(F, N));
  Expr p = Expr::param("p");
  Expr body = callF(Op::Map,
                    Expr::lambda({p}, callF(Op::Apply, mult,
                                            {callN(Op::Get, {0}, {p}), callN(Op::Get, {1}, {p})})),
                    {call(Op::Zip, {xs, ws})});
  TypedDefinition typed = check({xs, ws}, body);
  CHECK(typed.type == arr(F, N));
  CHECK(typed.typeOf(mult) == F);
  CHECK(typed.constraints.empty());

  // typecheckFunction applies a function to given types.
  TypedDefinition direct = typecheckFunction(mult, {F, F});
  CHECK(direct.type == F);
  Expr a = Expr::param("a");
  TypedDefinition lambda =
      typecheckFunction(Expr::lambda({a}, callN(Op::Split, {2}, {a})), {arr(I, 2 * M)});
  CHECK(lambda.type.toString() == "[[int]2]M");
}

TEST_CASE("declared result types") {
  Expr xs = Expr::param("xs", arr(F, N));
  // Equal after simplification: fine, no constraint.
  TypedDefinition same =
      check({xs}, callN(Op::Crop, {1, 1}, {callN(Op::Pad, {1, 1}, {xs})}), arr(F, N));
  CHECK(same.constraints.empty());
  CHECK(same.type == arr(F, N));
  // The same shape with lengths that are not provably equal: an Equal constraint.
  TypedDefinition symbolic = check({xs}, callN(Op::Slide, {3, 1}, {xs}), arr(arr(F, 3), M));
  CHECK(symbolic.type == arr(arr(F, 3), M));  // the declared type is the definition's type
  bool found = false;
  for (const Constraint& c : symbolic.constraints) {
    if (c.relation == Relation::Equal) {
      found = true;
      CHECK(c.formula() == "M = N - 2");
      CHECK(c.origin == "def test");
    }
  }
  CHECK(found);
}

TEST_CASE("user function bodies are checked by typecheckProgram") {
  Expr x = Expr::param("x", F);
  Program program;
  program.userFuns.push_back(Expr::userFun("half", {x}, F, call(Op::Mul, {x, fl(0.5)})));
  Expr xs = Expr::param("xs", arr(F, N));
  program.definitions.push_back(Definition{
      "halves", Expr::lambda({xs}, callF(Op::Map, program.userFuns[0], {xs})), Type(), {}});
  std::vector<TypedDefinition> typed = typecheckProgram(program);
  REQUIRE(typed.size() == 1);
  CHECK(typed[0].type == arr(F, N));
}

TEST_CASE("parsed programs type-check with symbolic sizes") {
  Program program = parseProgram(
      "fun mult(x: float, y: float): float = x * y\n"
      "def dot(a: [float]N, b: [float]N) =\n"
      "  reduce(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))\n"
      "def stencil2D(weights: [[float]3]3, input: [[float]W]H) =\n"
      "  map2D(nbh -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1,\n"
      "                      zip(join(nbh), join(weights))),\n"
      "        slide2D(3, 1, pad2D(1, 1, 1, 1, clamp, input)))\n",
      "prog.weft");
  std::vector<TypedDefinition> typed = typecheckProgram(program);
  REQUIRE(typed.size() == 2);
  CHECK(typed[0].type.toString() == "[float]1");
  CHECK(typed[0].constraints.empty());
  CHECK(typed[1].type.toString() == "[[[float]1]W]H");
  CHECK(typed[1].constraints.empty());
}

TEST_CASE("the examples type-check") {
  namespace fs = std::filesystem;
  const fs::path examples = "examples";
  REQUIRE(fs::is_directory(examples));
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(examples)) {
    if (entry.path().extension() != ".weft") continue;
    CAPTURE(entry.path().string());
    ++files;
    Program program = parseFile(entry.path().string());
    CHECK_NOTHROW(typecheckProgram(program));
  }
  CHECK(files >= 1);
}

TEST_CASE("conv.weft: the inferred type is the paper's output layout with symbolic sizes") {
  Program program = parseFile("examples/conv.weft");
  const Definition* conv = program.findDefinition("convLayer");
  REQUIRE(conv != nullptr);
  const Type expected = parseType("[[[float]((W + 2*P - K + S) / S)]((H + 2*P - K + S) / S)]M");
  // Without the declared result type, inference alone must arrive at it.
  Definition undeclared = *conv;
  undeclared.declaredType = Type();
  TypedDefinition inferred = typecheck(undeclared);
  CHECK(inferred.type == expected);
  std::vector<std::string> formulas;
  for (const Constraint& c : inferred.constraints) formulas.push_back(c.formula());
  CHECK(formulas == std::vector<std::string>{"K <= 2*P + W", "K <= H + 2*P"});
  for (const Constraint& c : inferred.constraints) {
    CHECK(c.origin == "slide");  // slide2D expands into two slides
    CHECK(c.loc.known());
  }
  // With the declared type: it matches, so no further constraint.
  TypedDefinition declared = typecheck(*conv);
  CHECK(declared.type == expected);
  CHECK(declared.constraints.size() == 2);
}
