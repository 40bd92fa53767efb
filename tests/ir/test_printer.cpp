// Tests of the text-format printer (ir/printer.h): golden output for operators, literals,
// names, calls, the 2D forms, size declarations and whole programs, and the round trip of every
// example (parse, print, parse again gives the same program; printing is a fixpoint).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "ir/builders.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/size_ranges.h"

using namespace weft;
using weft::testing::describeSizeDeclarations;
using weft::testing::undeclaredRangeUse;

namespace {

Type f32() { return Type::floatType(); }

void checkSameProgram(const Program& a, const Program& b) {
  REQUIRE(a.userFuns.size() == b.userFuns.size());
  for (size_t i = 0; i < a.userFuns.size(); ++i) CHECK(a.userFuns[i] == b.userFuns[i]);
  REQUIRE(a.definitions.size() == b.definitions.size());
  for (size_t i = 0; i < a.definitions.size(); ++i) {
    CHECK(a.definitions[i].name == b.definitions[i].name);
    CHECK(a.definitions[i].declaredType == b.definitions[i].declaredType);
    CHECK(a.definitions[i].function == b.definitions[i].function);
    CHECK(describeSizeDeclarations(a.definitions[i]) == describeSizeDeclarations(b.definitions[i]));
    CHECK(undeclaredRangeUse(b.definitions[i]) == "");
  }
}

}  // namespace

TEST_CASE("operators print with the fewest parentheses C precedence needs") {
  Expr a = param("a"), b = param("b"), c = param("c");
  CHECK(printExpr(a + b * c) == "a + b * c");
  CHECK(printExpr((a + b) * c) == "(a + b) * c");
  CHECK(printExpr((a - b) - c) == "a - b - c");
  CHECK(printExpr(a - (b - c)) == "a - (b - c)");
  CHECK(printExpr(a * (b / c)) == "a * (b / c)");
  CHECK(printExpr((a / b) % c) == "a / b % c");
  CHECK(printExpr(-(a + b)) == "-(a + b)");
  CHECK(printExpr(-a * b) == "-a * b");
  CHECK(printExpr(neg(neg(a))) == "-(-a)");
  CHECK(printExpr(a - neg(b)) == "a - -b");
  CHECK(printExpr(logicalNot(logicalAnd(a, b))) == "!(a && b)");
  CHECK(printExpr(logicalAnd(logicalNot(a), b)) == "!a && b");
  CHECK(printExpr(logicalOr(a, logicalAnd(b, c))) == "a || b && c");
  CHECK(printExpr(logicalAnd(logicalOr(a, b), c)) == "(a || b) && c");
  CHECK(printExpr(eq(lt(a, b), c)) == "a < b == c");
  CHECK(printExpr(lt(a, eq(b, c))) == "a < (b == c)");
  CHECK(printExpr(select(lt(a, b), a, b)) == "a < b ? a : b");
  CHECK(printExpr(select(a, b, select(c, a, b))) == "a ? b : c ? a : b");
  CHECK(printExpr(select(select(a, b, c), a, b)) == "(a ? b : c) ? a : b");
  CHECK(printExpr(select(a, select(b, c, a), b)) == "a ? b ? c : a : b");
  CHECK(printExpr(select(a, b, c) + lit(1)) == "(a ? b : c) + 1");
  CHECK(printExpr(get(0, a) * get(1, get(0, b))) == "a._0 * b._0._1");
  CHECK(printExpr(get(1, tuple(a, b))) == "(a, b)._1");
  CHECK(printExpr(get(0, a + b)) == "(a + b)._0");
  CHECK(printExpr(neg(get(0, a))) == "-a._0");
  CHECK(printExpr(get(Arith::size("n"), a)) == "get(n, a)");
  CHECK(printExpr(tuple(a, tuple(b, c))) == "(a, (b, c))");
  CHECK(printExpr(fma(a, b, c) + min(a, b) * dot(b, c)) == "fma(a, b, c) + min(a, b) * dot(b, c)");
}

TEST_CASE("nested negations and parenthesised operands print in time linear in their depth") {
  // Each level once printed its operand two or three times (found by fuzz/fuzz_text_format:
  // 36 minus signs took minutes).
  Expr a = param("a");
  Expr negated = a;
  for (int i = 0; i < 200; ++i) negated = neg(negated);
  std::string expected = "a";
  for (int i = 0; i < 200; ++i) expected = i == 0 ? "-a" : "-(" + expected + ")";
  CHECK(printExpr(negated) == expected);
  CHECK(printExpr(negated, true) == expected);
  Expr sum = a;
  for (int i = 0; i < 200; ++i) sum = param("b") - sum;
  CHECK(printExpr(sum).size() > 800);
}

TEST_CASE("literals print so that they parse back to the same value") {
  CHECK(printExpr(lit(1.0f)) == "1.0f");
  CHECK(printExpr(lit(0.5f)) == "0.5f");
  CHECK(printExpr(lit(0.1f)) == "0.1f");
  CHECK(printExpr(lit(1e-3f)) == "0.001f");
  CHECK(printExpr(lit(1e10f)) == "1e+10f");
  CHECK(printExpr(lit(3.14159265f)) == "3.1415927f");
  CHECK(printExpr(lit(std::numeric_limits<float>::max())) == "3.4028235e+38f");
  CHECK(printExpr(lit(std::numeric_limits<float>::denorm_min())) == "1e-45f");
  CHECK(printExpr(lit(std::numeric_limits<double>::infinity())) == "1e999f");
  CHECK(printExpr(lit(-std::numeric_limits<double>::infinity())) == "-1e999f");
  CHECK(printExpr(lit(-2.0f)) == "-2.0f");
  CHECK(printExpr(lit(-0.0f)) == "-0.0f");
  CHECK(printExpr(lit(7)) == "7");
  CHECK(printExpr(lit(-7)) == "-7");
  CHECK(printExpr(lit(std::numeric_limits<int64_t>::min())) == "-9223372036854775808");
  CHECK(printExpr(lit(true)) == "true");
  // A negated literal keeps its negation: -1.0f would read back as one literal.
  CHECK(printExpr(neg(lit(1.0f))) == "-(1.0f)");
  CHECK(printExpr(neg(lit(-1))) == "-(-1)");
  Expr x = param("x");
  CHECK(printExpr(x * lit(-1)) == "x * -1");
  CHECK(printExpr(lit(-1) * x) == "-1 * x");
  CHECK(printExpr(get(0, lit(-1))) == "(-1)._0");
  CHECK(printExpr(neg(get(0, lit(1)))) == "-1._0");
  CHECK(printExpr(lit(2.0f) - x) == "2.0f - x");
  CHECK_THROWS_AS(printExpr(lit(std::nan(""))), std::invalid_argument);

  for (float value : {0.1f, 1.0f / 3.0f, 123456.789f, -2.5e-30f, 16777217.0f,
                      std::numeric_limits<float>::min(), std::numeric_limits<float>::max()}) {
    CAPTURE(value);
    Expr parsed = parseExpr(printExpr(lit(value)));
    CHECK(parsed.literalFloat() == static_cast<double>(value));
  }
  // Pad constants are doubles and keep all their digits.
  Expr padded = padConstant(1, 1, 0.1, x);
  CHECK(printExpr(padded) == "pad(1, 1, constant(0.1f), x)");
  double awkward = 0.1 + 1e-17 * 3;
  Expr reparsed =
      parseExpr(printExpr(lam("x", [&](Expr x) { return padConstant(1, 1, awkward, x); })));
  CHECK(reparsed.body().attribute().padValue == awkward);
}

TEST_CASE("calls print in layout order") {
  Expr x = param("x");
  Expr idLambda = lam("y", [](Expr y) { return y; });
  CHECK(printExpr(split(Arith::size("N") / 4, x)) == "split(N/4, x)");
  CHECK(printExpr(slide(3, 1, x)) == "slide(3, 1, x)");
  CHECK(printExpr(slideStrict(2 * Arith::size("n") + 1, 2, x)) == "slideStrict(2*n + 1, 2, x)");
  CHECK(printExpr(pad(1, 2, Boundary::Mirror, x)) == "pad(1, 2, mirror, x)");
  CHECK(printExpr(pad(1, 2, Boundary::Clamp, x)) == "pad(1, 2, clamp, x)");
  CHECK(printExpr(padConstant(0, 1, -1.5, x)) == "pad(0, 1, constant(-1.5f), x)");
  CHECK(printExpr(reorderStride(4, x)) == "reorder(stride(4), x)");
  CHECK(printExpr(reorderReverse(x)) == "reorder(reverse, x)");
  CHECK(printExpr(reduce(lit(0.0f), lam2("acc", "v", [](Expr acc, Expr v) { return acc + v; }),
                         x)) == "reduce(0.0f, (acc, v) -> acc + v, x)");
  CHECK(printExpr(mapWrg(0, idLambda, x)) == "mapWrg(0, y -> y, x)");
  CHECK(printExpr(toPrivate(idLambda, {x, x})) == "toPrivate(y -> y, x, x)");
  CHECK(printExpr(vectorize(4, idLambda, {x})) == "vectorize(4, y -> y, x)");
  CHECK(printExpr(apply(idLambda, {x})) == "apply(y -> y, x)");
  CHECK(printExpr(map(lam("y", f32(), [](Expr y) { return y; }), x)) == "map((y: float) -> y, x)");
  CHECK(printExpr(lam3("a", "b", "c", [](Expr a, Expr, Expr) { return a; })) == "(a, b, c) -> a");
  Expr mult = userFun("mult", {{"a", f32()}, {"b", f32()}}, f32(),
                      [](const std::vector<Expr>& p) { return p[0] * p[1]; });
  CHECK(printExpr(apply(mult, {x, lit(2.0f)})) == "mult(x, 2.0f)");
  CHECK(printExpr(reduce(lit(0.0f), mult, x)) == "reduce(0.0f, mult, x)");
  CHECK(printUserFun(mult) == "fun mult(a: float, b: float): float = a * b");
}

TEST_CASE("bound params get unique names that are not primitives, user functions or free") {
  // Nested binders of the same name: the inner one is renamed.
  Expr e = lam(
      "x", [](Expr x) { return map(lam("x", [&](Expr inner) { return inner + get(0, x); }), x); });
  CHECK(printExpr(e) == "x -> map(x_1 -> x_1 + x._0, x)");
  // Sibling binders keep their names.
  Expr siblings = lam("x", [](Expr x) {
    Expr f = lam("y", [](Expr y) { return y; });
    Expr g = lam("y", [](Expr y) { return -y; });
    return zip(map(f, x), map(g, x));
  });
  CHECK(printExpr(siblings) == "x -> zip(map(y -> y, x), map(y -> -y, x))");
  // A param named like a primitive or keyword, or not an identifier at all.
  CHECK(printExpr(lam("map", [](Expr m) { return m; })) == "map_1 -> map_1");
  CHECK(printExpr(lam("true", [](Expr m) { return m; })) == "true_1 -> true_1");
  CHECK(printExpr(lam("a b", [](Expr m) { return m; })) == "a_b -> a_b");
  CHECK(printExpr(lam("2d", [](Expr m) { return m; })) == "p2d -> p2d");
  CHECK(printExpr(lam("", [](Expr m) { return m; })) == "x -> x");
  // Two params of one lambda with the same name.
  CHECK(printExpr(lam2("a", "a", [](Expr a, Expr b) { return a - b; })) == "(a, a_1) -> a - a_1");
  // A binder does not take the name of a free param it would capture.
  Expr free = param("x");
  CHECK(printExpr(lam("x", [&](Expr x) { return x + free; })) == "x_1 -> x_1 + x");
  // A binder does not take a user function's name.
  Expr g = userFun("g", {{"a", f32()}}, f32(), [](const std::vector<Expr>& p) { return p[0]; });
  CHECK(printExpr(lam("g", [&](Expr x) { return apply(g, {x}); })) == "g_1 -> g(g_1)");
  // The same param id bound twice in nested lambdas still reads back correctly.
  Expr p = param("p");
  Expr inner = Expr::lambda({p}, p + lit(1));
  Expr outer = Expr::lambda({p}, map(inner, p));
  CHECK(printExpr(outer) == "p -> map(p_1 -> p_1 + 1, p)");
  CHECK(parseExpr(printExpr(outer)) == outer);
}

TEST_CASE("the 2D forms print short when the tree is exactly their expansion") {
  Expr x = param("x");
  Expr f = lam("v", [](Expr v) { return v * v; });
  CHECK(printExpr(map2D(f, x)) == "map2D(v -> v * v, x)");
  CHECK(printExpr(slide2D(3, 1, x)) == "slide2D(3, 1, x)");
  CHECK(printExpr(slide2D(3, 5, 1, 2, x)) == "slide2D(3, 5, 1, 2, x)");
  CHECK(printExpr(pad2D(1, Boundary::Clamp, x)) == "pad2D(1, clamp, x)");
  CHECK(printExpr(pad2D(1, 2, 1, 2, Boundary::Mirror, x)) == "pad2D(1, 2, 1, 2, mirror, x)");
  CHECK(printExpr(pad2DConstant(2, 0.0, x)) == "pad2D(2, constant(0.0f), x)");
  // The same shape with a function that uses the row is not a map2D.
  Expr notMap2D = map(
      lam("row", [](Expr row) { return map(lam("v", [&](Expr v) { return zip(v, row); }), row); }),
      x);
  CHECK(printExpr(notMap2D) == "map(row -> map(v -> zip(v, row), row), x)");
  // Different boundaries in the two passes are not a pad2D.
  Expr mixed = transpose(
      map(lam("c", [](Expr c) { return pad(1, 1, Boundary::Clamp, c); }),
          transpose(map(lam("r", [](Expr r) { return pad(1, 1, Boundary::Mirror, r); }), x))));
  CHECK(printExpr(mixed) ==
        "transpose(map(c -> pad(1, 1, clamp, c), transpose(map(r -> pad(1, 1, mirror, r), x))))");
}

TEST_CASE("definitions and programs") {
  Expr mult = userFun("mult", {{"x", f32()}, {"y", f32()}}, f32(),
                      [](const std::vector<Expr>& p) { return p[0] * p[1]; });
  Type vectorN = Type::array(f32(), Arith::size("N"));
  Definition dot = definition(
      "dot", {{"a", vectorN}, {"b", vectorN}},
      [&](const std::vector<Expr>& p) {
        Expr f = lam2("acc", "p", [&](Expr acc, Expr q) {
          return acc + apply(mult, {get(0, q), get(1, q)});
        });
        return reduce(lit(0.0f), f, zip(p[0], p[1]));
      },
      Type::array(f32(), 1));
  CHECK(printDefinition(dot) ==
        "def dot(a: [float]N, b: [float]N): [float]1 =\n"
        "  reduce(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))");
  // A program lists the user functions its definitions use even if they are not in its list.
  Program program;
  program.definitions.push_back(dot);
  CHECK(printProgram(program) ==
        "fun mult(x: float, y: float): float = x * y\n"
        "\n"
        "def dot(a: [float]N, b: [float]N): [float]1 =\n"
        "  reduce(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))\n");
  // Short definitions stay on one line; a typed param without declared result.
  Definition small = definition("twice", {{"v", Type::intType()}},
                                [](const std::vector<Expr>& p) { return p[0] + p[0]; });
  CHECK(printDefinition(small) == "def twice(v: int) = v + v");
  // User functions that call others come after them.
  Expr square = userFun("square", {{"v", f32()}}, f32(), [&](const std::vector<Expr>& p) {
    return apply(mult, {p[0], p[0]});
  });
  Program ordered;
  ordered.userFuns.push_back(square);
  CHECK(printProgram(ordered) ==
        "fun mult(x: float, y: float): float = x * y\n"
        "fun square(v: float): float = mult(v, v)\n");
  // Two different user functions with one name cannot be printed.
  Expr otherMult =
      userFun("mult", {{"x", f32()}}, f32(), [](const std::vector<Expr>& p) { return p[0]; });
  Program clash;
  clash.userFuns = {mult, otherMult};
  CHECK_THROWS_WITH_AS(printProgram(clash), "two different user functions are named 'mult'",
                       std::invalid_argument);
}

TEST_CASE("size declarations print with the bounds that differ from [1, inf)") {
  Arith p = Arith::var("P", VarKind::Size, 0);
  Arith v = Arith::var("V", VarKind::Size, 1, Arith(16));
  Arith n = Arith::size("N");
  Arith q = Arith::var("Q", VarKind::Size, 2);
  Arith z = Arith::var("Z", VarKind::Size, 0, Arith(4));
  Definition padded = definition(
      "padded", {{"x", Type::array(f32(), n)}},
      [&](const std::vector<Expr>& a) { return split(v, pad(p, z, Boundary::Clamp, a[0])); });
  padded.sizeDeclarations = {p, v, n, q, z};
  std::string text = printDefinition(padded);
  CHECK(text ==
        "def padded[P >= 0, V <= 16, N, Q >= 2, 0 <= Z <= 4](x: [float]N) =\n"
        "  split(V, pad(P, Z, clamp, x))");
  Program program;
  program.definitions.push_back(padded);
  std::string printed = printProgram(program);
  Program reparsed = parseProgram(printed, "printed.weft");
  checkSameProgram(program, reparsed);
  CHECK(printProgram(reparsed) == printed);

  // No declarations, no brackets; what the text format cannot say is refused.
  padded.sizeDeclarations.clear();
  CHECK(printDefinition(padded).rfind("def padded(x: [float]N)", 0) == 0);
  padded.sizeDeclarations = {Arith::var("T", VarKind::Tuning, 1, Arith(8))};
  CHECK_THROWS_WITH_AS(printDefinition(padded),
                       "definition 'padded': size declaration T is not a size variable with "
                       "constant bounds",
                       std::invalid_argument);
  padded.sizeDeclarations = {Arith::var("M", VarKind::Size, 1, n)};
  CHECK_THROWS_AS(printDefinition(padded), std::invalid_argument);
  padded.sizeDeclarations = {Arith::var("M", VarKind::Size, -1)};
  CHECK_THROWS_WITH_AS(printDefinition(padded),
                       "definition 'padded': size variable M has a negative lower bound",
                       std::invalid_argument);
}

TEST_CASE("multiline printing breaks long calls and indents their arguments") {
  Program program = parseFile("examples/stencil2d.weft");
  CHECK(printDefinition(program.definitions[0]) ==
        "def stencil2D(weights: [[float]3]3, input: [[float]W]H): [[[float]1]W]H =\n"
        "  map2D(\n"
        "    nbh -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(join(nbh), join(weights))),\n"
        "    slide2D(3, 1, pad2D(1, clamp, input)))");
  // Leading sizes stay on the call's line; a single remaining argument follows them.
  Expr x = param("xs");
  Expr deep = split(
      4, map(lam("element",
                 [](Expr e) {
                   return reduce(lit(0.0f),
                                 lam2("accumulator", "value",
                                      [](Expr a, Expr v) { return a + v * v * v * v * v * v * v; }),
                                 e);
                 }),
             x));
  CHECK(printExpr(deep, true) ==
        "split(4, map(\n"
        "  element -> reduce(\n"
        "    0.0f,\n"
        "    (accumulator, value) -> accumulator + value * value * value * value * value * value * "
        "value,\n"
        "    element),\n"
        "  xs))");
  CHECK(printExpr(deep) ==
        "split(4, map(element -> reduce(0.0f, (accumulator, value) -> accumulator + value * value "
        "* value * value * value * value * value, element), xs))");
  CHECK(parseExpr("xs -> " + printExpr(deep, true)) == lam("xs", [&](Expr xs) {
          return substituteParams(deep, {{x, xs}});
        }));
}

TEST_CASE("every example round-trips: parse, print, parse gives the same program") {
  size_t examples = 0;
  for (const auto& entry : std::filesystem::directory_iterator("examples")) {
    if (entry.path().extension() != ".weft") continue;
    ++examples;
    CAPTURE(entry.path().string());
    Program original = parseFile(entry.path().string());
    std::string printed = printProgram(original);
    Program reparsed = parseProgram(printed, "printed.weft");
    checkSameProgram(original, reparsed);
    CHECK(printProgram(reparsed) == printed);
  }
  CHECK(examples >= 4);
}
