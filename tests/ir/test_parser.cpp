// Tests of the text-format parser (ir/parser.h): the examples parse to the trees the C++
// builders make; every syntax error names its file:line:column and what was expected; types
// and size expressions; size declarations and their ranges; operator precedence, literals,
// scoping, eta expansion and the 2D forms.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "ir/builders.h"
#include "ir/parser.h"
#include "tests/support/size_ranges.h"

using namespace weft;
using weft::testing::describeSizeDeclarations;
using weft::testing::describeVariableRanges;
using weft::testing::undeclaredRangeUse;

namespace {

Type f32() { return Type::floatType(); }
Type arrayOf(Type element, Arith length) {
  return Type::array(std::move(element), std::move(length));
}
Arith size(const char* name) { return Arith::size(name); }

// The product-sum reduction (acc, p) -> acc + p._0 * p._1 of the examples.
Expr multiplyAdd() {
  return lam2("acc", "p", [](Expr acc, Expr p) { return acc + get(0, p) * get(1, p); });
}

const Definition& onlyDefinition(const Program& program) {
  REQUIRE(program.definitions.size() == 1);
  return program.definitions[0];
}

void checkDefinition(const Definition& parsed, const Definition& expected) {
  CHECK(parsed.name == expected.name);
  CHECK(parsed.declaredType == expected.declaredType);
  CHECK(parsed.function == expected.function);
  CHECK(describeSizeDeclarations(parsed) == describeSizeDeclarations(expected));
  CHECK(undeclaredRangeUse(parsed) == "");
}

std::string parseErrorOf(const std::string& text) {
  try {
    parseProgram(text, "t.weft");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("examples/dot.weft parses to its builder form") {
  Program program = parseFile("examples/dot.weft");
  REQUIRE(program.userFuns.size() == 1);
  Expr mult = userFun("mult", {{"x", f32()}, {"y", f32()}}, f32(),
                      [](const std::vector<Expr>& p) { return p[0] * p[1]; });
  CHECK(program.userFuns[0] == mult);
  Type vectorN = arrayOf(f32(), size("N"));
  Definition expected = definition(
      "dot", {{"a", vectorN}, {"b", vectorN}},
      [&](const std::vector<Expr>& p) {
        Expr f = lam2("acc", "p", [&](Expr acc, Expr q) {
          return acc + apply(mult, {get(0, q), get(1, q)});
        });
        return reduce(lit(0.0f), f, zip(p[0], p[1]));
      },
      arrayOf(f32(), 1));
  checkDefinition(onlyDefinition(program), expected);
}

TEST_CASE("examples/stencil2d.weft parses to its builder form") {
  Program program = parseFile("examples/stencil2d.weft");
  Type weightsType = arrayOf(arrayOf(f32(), 3), 3);
  Type inputType = arrayOf(arrayOf(f32(), size("W")), size("H"));
  Definition expected = definition(
      "stencil2D", {{"weights", weightsType}, {"input", inputType}},
      [](const std::vector<Expr>& p) {
        Expr sum = lam("nbh", [&](Expr nbh) {
          return reduce(lit(0.0f), multiplyAdd(), zip(join(nbh), join(p[0])));
        });
        return map2D(sum, slide2D(3, 1, pad2D(1, Boundary::Clamp, p[1])));
      },
      arrayOf(arrayOf(arrayOf(f32(), 1), size("W")), size("H")));
  checkDefinition(onlyDefinition(program), expected);
}

TEST_CASE("examples/matmul.weft parses to its builder form") {
  Program program = parseFile("examples/matmul.weft");
  Arith m = size("M"), k = size("K"), n = size("N");
  Definition expected = definition(
      "matmul", {{"A", arrayOf(arrayOf(f32(), k), m)}, {"B", arrayOf(arrayOf(f32(), n), k)}},
      [](const std::vector<Expr>& p) {
        Expr b = p[1];
        Expr rowTimesB = lam("row", [&](Expr row) {
          Expr dotWithColumn =
              lam("col", [&](Expr col) { return reduce(lit(0.0f), multiplyAdd(), zip(row, col)); });
          return join(map(dotWithColumn, transpose(b)));
        });
        return map(rowTimesB, p[0]);
      },
      arrayOf(arrayOf(f32(), n), m));
  checkDefinition(onlyDefinition(program), expected);
}

TEST_CASE("examples/conv.weft parses to its builder form") {
  Program program = parseFile("examples/conv.weft");
  Arith c = size("C"), k = size("K"), m = size("M"), w = size("W"), h = size("H");
  // P and S are declared [P >= 0, S >= 1].
  Arith p = Arith::var("P", VarKind::Size, 0), s = Arith::var("S", VarKind::Size, 1);
  Type weights = arrayOf(arrayOf(arrayOf(arrayOf(f32(), c), k), k), m);
  Type input = arrayOf(arrayOf(arrayOf(f32(), c), w), h);
  Type output =
      arrayOf(arrayOf(arrayOf(f32(), (w + 2 * p - k + s) / s), (h + 2 * p - k + s) / s), m);
  Definition expected = definition(
      "convLayer", {{"weights", weights}, {"biases", arrayOf(f32(), m)}, {"input", input}},
      [&](const std::vector<Expr>& a) {
        Expr perWindow = lam("window", [&](Expr window) {
          Expr perKernel = lam("kernel", [&](Expr kernel) {
            return reduce(get(1, kernel), multiplyAdd(),
                          zip(join(join(window)), join(join(get(0, kernel)))));
          });
          return join(map(perKernel, zip(a[0], a[1])));
        });
        Expr windows = slide2D(k, k, s, s, pad2DConstant(p, 0.0, a[2]));
        Expr transposeRows = lam("rows", [](Expr rows) { return transpose(rows); });
        return transpose(map(transposeRows, map2D(perWindow, windows)));
      },
      output);
  expected.sizeDeclarations = {p, s};
  checkDefinition(onlyDefinition(program), expected);
  CHECK(describeSizeDeclarations(onlyDefinition(program)) == "P in [0, inf); S in [1, inf)");
}

TEST_CASE("syntax errors name file:line:column, what was expected and what was found") {
  struct Case {
    const char* what;
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"unknown name", "def f(x: [float]N) = map(y -> z, x)",
       "t.weft:1:31: error: unknown name 'z'"},
      {"unknown function", "def f(x: float) =\n  frobnicate(x)",
       "t.weft:2:3: error: unknown name 'frobnicate'"},
      {"missing paren at end of file", "def f(x: [float]N) = map(y -> y, x",
       "t.weft:1:35: error: expected ')', found end of file"},
      {"missing paren before the next definition",
       "def f(x: [float]N) = join(x\ndef g(x: float) = x",
       "t.weft:2:1: error: expected ')', found 'def'"},
      {"missing closing bracket in a type", "def f(x: [float N) = x",
       "t.weft:1:17: error: expected ']', found 'N'"},
      {"bad type", "def f(x: [flot]N) = x", "t.weft:1:11: error: expected a type, found 'flot'"},
      {"bad vector width", "def f(x: float5) = x",
       "t.weft:1:10: error: expected a type, found 'float5'"},
      {"untyped definition parameter", "def f(x, y: int) = x",
       "t.weft:1:8: error: expected ':', found ','"},
      {"bad array length", "def f(x: [float]+) = x",
       "t.weft:1:17: error: expected an array length (a number, a size name or a parenthesised "
       "expression), found '+'"},
      {"wrong argument count", "def f(x: [float]N) = split(4, 2, x)",
       "t.weft:1:22: error: split expects a size and an array, found 3 arguments"},
      {"too few arguments", "def f(x: [float]N) = map(x)",
       "t.weft:1:22: error: map expects a function and an array, found 1 argument"},
      {"variadic too few", "def f(x: [float]N) = zip(x)",
       "t.weft:1:22: error: zip expects two or more arrays, found 1 argument"},
      {"2D form argument count", "def f(x: [[float]N]M) = slide2D(3, x)",
       "t.weft:1:25: error: slide2D expects a size, a step and an array, or two sizes, two steps "
       "and an array, found 2 arguments"},
      {"user function arity", "fun g(a: float): float = a\ndef f(x: float) = g(x, x)",
       "t.weft:2:19: error: g expects 1 argument, found 2 arguments"},
      {"bad boundary", "def f(x: [float]N) = pad(1, 1, wrap, x)",
       "t.weft:1:32: error: expected a boundary (clamp, mirror or constant(v)), found 'wrap'"},
      {"constant boundary without a number", "def f(x: [float]N) = pad(1, 1, constant(x), x)",
       "t.weft:1:41: error: expected a number, found 'x'"},
      {"bad index function", "def f(x: [float]N) = reorder(strid(2), x)",
       "t.weft:1:30: error: expected an index function (stride(s) or reverse), found 'strid'"},
      {"unterminated comment", "def f(x: float) = x /* never\nends",
       "t.weft:1:21: error: expected '*/' to end this comment, found end of file"},
      {"bad number", "def f(x: float) = x + 1.5.3", "t.weft:1:23: error: invalid number '1.5.3'"},
      {"number running into letters", "def f(x: float) = x + 12abc",
       "t.weft:1:23: error: invalid number '12abc'"},
      {"exponent without digits", "def f(x: float) = x + 1e",
       "t.weft:1:23: error: invalid number '1e'"},
      {"f suffix on an integer", "def f(x: float) = 1f", "t.weft:1:19: error: invalid number '1f'"},
      {"integer out of range", "def f(x: int) = x + 9223372036854775808",
       "t.weft:1:21: error: integer literal '9223372036854775808' is out of range"},
      {"stray character", "def f(x: float) = x # 1",
       "t.weft:1:21: error: unexpected character '#'"},
      {"neither def nor fun", "let f(x: float) = x",
       "t.weft:1:1: error: expected 'def' or 'fun', found 'let'"},
      {"missing body",
       "def f(x: float) =", "t.weft:1:18: error: expected an expression, found end of file"},
      {"calling a parameter", "def f(x: float) = x(1)",
       "t.weft:1:19: error: 'x' is a parameter, not a function"},
      {"data where a function is expected", "def f(x: [float]N) = map(x, x)",
       "t.weft:1:26: error: expected a function, found 'x'"},
      {"a function where data is expected", "def f(x: float) = (a, b) -> a",
       "t.weft:1:19: error: expected a value, found a function"},
      {"function name used as a value", "def f(x: float) = x + id",
       "t.weft:1:23: error: 'id' is a function; call it with arguments here"},
      {"primitive used as a function without its size", "def f(x: [float]N) = map(split, x)",
       "t.weft:1:26: error: split used as a function expects a size, found 0 arguments"},
      {"bad tuple component", "def f(x: (float, float)) = x.0",
       "t.weft:1:30: error: expected a tuple component like _0, found '0'"},
      {"user function named like a primitive", "fun map(x: float): float = x",
       "t.weft:1:5: error: 'map' is a primitive; choose another name"},
      {"duplicate definition", "def f(x: float) = x\ndef f(y: float) = y",
       "t.weft:2:5: error: 'f' is already defined"},
      {"keyword as parameter", "def f(true: float) = 1",
       "t.weft:1:7: error: expected a parameter name, found 'true'"},
      {"trailing garbage in a lambda list", "def f(x: [float]N) = map((a b) -> a, x)",
       "t.weft:1:27: error: unknown name 'a'"},
      {"negative lower bound", "def f[P >= -1](x: [float]P) = x",
       "t.weft:1:12: error: size variable P: lower bound must be >= 0"},
      {"negative lower bound written first", "def f[N, -2 <= P](x: float) = x",
       "t.weft:1:10: error: size variable P: lower bound must be >= 0"},
      {"size declared twice", "def f[P >= 0, Q,\n      P](x: float) = x",
       "t.weft:2:7: error: size variable P is declared twice (first at t.weft:1:7)"},
      {"upper bound below the lower bound", "def f[2 <= P <= 1](x: float) = x",
       "t.weft:1:17: error: size variable P: upper bound 1 is below its lower bound 2"},
      {"upper bound below the default lower bound", "def f[P <= 0](x: float) = x",
       "t.weft:1:12: error: size variable P: upper bound 0 is below its lower bound 1"},
      {"unclosed size declarations", "def f[P >= 0(x: float) = x",
       "t.weft:1:13: error: expected ',' or ']' after a size declaration, found '('"},
      {"two lower bounds", "def f[0 <= P >= 1](x: float) = x",
       "t.weft:1:14: error: expected ',' or ']' after a size declaration, found '>='"},
      {"symbolic bound", "def f[P <= N](x: float) = x",
       "t.weft:1:12: error: expected an integer bound, found 'N'"},
      {"empty size declarations", "def f[](x: float) = x",
       "t.weft:1:7: error: expected a size variable name, found ']'"},
      {"keyword as a size name", "def f[true](x: float) = x",
       "t.weft:1:7: error: expected a size variable name, found 'true'"},
      {"bound out of range", "def f[P <= 99999999999999999999](x: float) = x",
       "t.weft:1:12: error: integer literal '99999999999999999999' is out of range"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(parseErrorOf(c.text) == c.message);
  }
}

TEST_CASE("size declarations give a definition's size variables their ranges") {
  // Every form of declaration; P, V and Z are used before the declared result type, in a
  // lambda's param type, in size arguments and in a stride; M is undeclared.
  Program program = parseProgram(
      "def f[P >= 0, 1 <= V <= 16, N, 0 <= Z, T <= 8, 2 <= Q](x: [float](P + V), y: [[int]M]N)\n"
      "    : [float](P + V + Z) =\n"
      "  map((a: [float]V) -> reorder(stride(Z + 1), a), split(V, pad(P, Z, clamp, x)))\n"
      "def g(x: [float]P) = split(V, x)\n",
      "t.weft");
  REQUIRE(program.definitions.size() == 2);
  const Definition& f = program.definitions[0];
  CHECK(describeSizeDeclarations(f) ==
        "P in [0, inf); V in [1, 16]; N in [1, inf); Z in [0, inf); T in [1, 8]; Q in [2, inf)");
  CHECK(describeVariableRanges(f) ==
        "M in [1, inf); N in [1, inf); P in [0, inf); V in [1, 16]; Z in [0, inf)");
  CHECK(undeclaredRangeUse(f) == "");
  for (const Arith& size : f.sizeDeclarations) CHECK(size.varKind() == VarKind::Size);
  // The declaration ends with its definition: g's P and V are plain sizes again.
  CHECK(program.definitions[1].sizeDeclarations.empty());
  CHECK(describeVariableRanges(program.definitions[1]) == "P in [1, inf); V in [1, inf)");

  // A declared variable is the one the type checker and simplifier see: with P >= 0 and
  // V <= 16, min(V, 16) is V, and P + 1 >= 1 is provable while P >= 1 is not.
  const Type& xType = f.function.params()[0].paramType();
  Arith p = xType.arrayLength().vars()[0];
  REQUIRE(p.varName() == "P");
  CHECK(proveNonNegative(p));
  CHECK_FALSE(provePositive(p));
  CHECK(provePositive(p + 1));
  Arith v = xType.arrayLength().vars()[1];
  REQUIRE(v.varName() == "V");
  CHECK(proveLessEqual(v, Arith(16)));
  CHECK_FALSE(proveLessEqual(v, Arith(15)));

  // Without a declaration a size is at least 1.
  Program plain = parseProgram("def h(x: [float]P) = x", "t.weft");
  CHECK(plain.definitions[0].sizeDeclarations.empty());
  CHECK(describeVariableRanges(plain.definitions[0]) == "P in [1, inf)");
}

TEST_CASE("ParseError keeps the location and the bare message") {
  try {
    parseProgram("def f(x: float) =\n  y", "file.weft");
    FAIL("no error");
  } catch (const ParseError& e) {
    CHECK(*e.loc.file == "file.weft");
    CHECK(e.loc.line == 2);
    CHECK(e.loc.column == 3);
    CHECK(e.message == "unknown name 'y'");
  }
  CHECK_THROWS_WITH_AS(parseFile("examples/does-not-exist.weft"),
                       "examples/does-not-exist.weft: error: cannot read the file", ParseError);
}

TEST_CASE("types") {
  Arith n = size("N");
  CHECK(parseType("float") == f32());
  CHECK(parseType("int") == Type::intType());
  CHECK(parseType("bool") == Type::boolType());
  CHECK(parseType("float4") == Type::vector(ScalarKind::Float, 4));
  CHECK(parseType("int16") == Type::vector(ScalarKind::Int, 16));
  CHECK(parseType("float3") == Type::vector(ScalarKind::Float, 3));
  CHECK(parseType("(float, int)") == Type::tuple({f32(), Type::intType()}));
  CHECK(parseType("(float)") == f32());
  CHECK(parseType("[[float]4](N/4)") == arrayOf(arrayOf(f32(), 4), n / 4));
  CHECK(parseType("[(float, [int]M)]N") ==
        arrayOf(Type::tuple({f32(), arrayOf(Type::intType(), size("M"))}), n));
  CHECK(parseType("[float](2*N + 1)") == arrayOf(f32(), 2 * n + 1));
  CHECK(parseType("[float](-1)") == arrayOf(f32(), -1));
  CHECK(parseType("[float]κ") == arrayOf(f32(), size("κ")));
  CHECK_THROWS_WITH_AS(parseType("[float]N/4"),
                       "<input>:1:9: error: expected end of input, found '/'", ParseError);
  CHECK_THROWS_WITH_AS(parseType("bool4"), "<input>:1:1: error: expected a type, found 'bool4'",
                       ParseError);
}

TEST_CASE("size expressions") {
  Arith n = size("n"), m = size("m");
  CHECK(parseArith("4") == Arith(4));
  CHECK(parseArith("n") == n);
  CHECK(parseArith("2*n + 1") == 2 * n + 1);
  CHECK(parseArith("1 + 2*n") == 2 * n + 1);
  CHECK(parseArith("n - m - 1") == n - m - 1);
  CHECK(parseArith("n - (m - 1)") == n - m + 1);
  CHECK(parseArith("(n + 3)/4") == (n + 3) / 4);
  CHECK(parseArith("n % 4 + n / 4 * 4") == n % 4 + (n / 4) * 4);
  CHECK(parseArith("-n + 2") == 2 - n);
  CHECK(parseArith("min(n, m) + max(n, 2)") == min(n, m) + max(n, Arith(2)));
  CHECK(parseArith("(n < m ? 1 : n)") == ifLess(n, m, 1, n));
  CHECK(parseArith("8/2") == Arith(4));
  CHECK(parseArith("n").varKind() == VarKind::Size);
  CHECK_THROWS_WITH_AS(parseArith("n / 0"), doctest::Contains("<input>:1:3: error:"), ParseError);
  CHECK_THROWS_WITH_AS(parseArith("1.5"),
                       "<input>:1:1: error: expected a size expression, found '1.5'", ParseError);
  CHECK_THROWS_WITH_AS(parseArith("min(n)"), "<input>:1:6: error: expected ',', found ')'",
                       ParseError);
}

TEST_CASE("literals") {
  CHECK(parseExpr("1.0f") == lit(1.0f));
  CHECK(parseExpr("1.5") == lit(1.5f));
  CHECK(parseExpr("1e-3f") == lit(1e-3f));
  CHECK(parseExpr("2.5E+2F") == lit(250.0f));
  CHECK(parseExpr("0.1f").literalFloat() == static_cast<double>(0.1f));
  CHECK(parseExpr("42") == lit(42));
  CHECK(parseExpr("-42") == lit(-42));
  CHECK(parseExpr("-1.5f") == lit(-1.5f));
  CHECK(parseExpr("-9223372036854775808") == lit(std::numeric_limits<int64_t>::min()));
  CHECK(parseExpr("9223372036854775807") == lit(std::numeric_limits<int64_t>::max()));
  CHECK(parseExpr("1e999f").literalFloat() == std::numeric_limits<double>::infinity());
  CHECK(parseExpr("true") == lit(true));
  CHECK(parseExpr("false") == lit(false));
  // A minus before anything but a number is negation.
  CHECK(parseExpr("-(1.0f)") == neg(lit(1.0f)));
  CHECK(parseExpr("- 2") == lit(-2));
  CHECK(parseExpr("-2").isLiteral());
  CHECK(parseExpr("-2._0") == neg(get(0, lit(2))));
  CHECK(parseExpr("(-2)._0") == get(0, lit(-2)));
}

TEST_CASE("operators follow C precedence and associativity") {
  auto parse = [](const std::string& body) { return parseExpr("(a, b, c) -> " + body); };
  auto expect = [](const std::function<Expr(Expr, Expr, Expr)>& body) {
    return lam3("a", "b", "c", body);
  };
  CHECK(parse("a + b * c") == expect([](Expr a, Expr b, Expr c) { return a + b * c; }));
  CHECK(parse("(a + b) * c") == expect([](Expr a, Expr b, Expr c) { return (a + b) * c; }));
  CHECK(parse("a - b - c") == expect([](Expr a, Expr b, Expr c) { return (a - b) - c; }));
  CHECK(parse("a / b % c") == expect([](Expr a, Expr b, Expr c) { return (a / b) % c; }));
  CHECK(parse("-a * b") == expect([](Expr a, Expr b, Expr) { return neg(a) * b; }));
  CHECK(parse("a * -1") == expect([](Expr a, Expr, Expr) { return a * lit(-1); }));
  CHECK(parse("a - -b") == expect([](Expr a, Expr b, Expr) { return a - neg(b); }));
  CHECK(parse("!a && b || c") ==
        expect([](Expr a, Expr b, Expr c) { return logicalOr(logicalAnd(logicalNot(a), b), c); }));
  CHECK(parse("a || b && c") ==
        expect([](Expr a, Expr b, Expr c) { return logicalOr(a, logicalAnd(b, c)); }));
  CHECK(parse("a < b == b >= c") ==
        expect([](Expr a, Expr b, Expr c) { return eq(lt(a, b), ge(b, c)); }));
  CHECK(parse("a <= b != a > c") ==
        expect([](Expr a, Expr b, Expr c) { return ne(le(a, b), gt(a, c)); }));
  CHECK(parse("a ? b : c ? a : b") ==
        expect([](Expr a, Expr b, Expr c) { return select(a, b, select(c, a, b)); }));
  CHECK(parse("a < b ? a + b : c") ==
        expect([](Expr a, Expr b, Expr c) { return select(lt(a, b), a + b, c); }));
  CHECK(parse("(a ? b : c) + 1") ==
        expect([](Expr a, Expr b, Expr c) { return select(a, b, c) + lit(1); }));
  CHECK(parse("a._1._0") == expect([](Expr a, Expr, Expr) { return get(0, get(1, a)); }));
  CHECK(parse("-a._0") == expect([](Expr a, Expr, Expr) { return neg(get(0, a)); }));
  CHECK(parse("(a, b)._1") == expect([](Expr a, Expr b, Expr) { return get(1, tuple(a, b)); }));
  CHECK(parse("(a, (b, c))") ==
        expect([](Expr a, Expr b, Expr c) { return tuple(a, tuple(b, c)); }));
  CHECK(parse("get(1, a)") == expect([](Expr a, Expr, Expr) { return get(1, a); }));
  CHECK(parse("select(a, b, c)") == expect([](Expr a, Expr b, Expr c) { return select(a, b, c); }));
  CHECK(parse("fma(a, b, c) + min(a, b) * dot(b, c)") ==
        expect([](Expr a, Expr b, Expr c) { return fma(a, b, c) + min(a, b) * dot(b, c); }));
}

TEST_CASE("primitive calls read their arguments by layout") {
  auto one = [](const std::string& body) { return parseExpr("x -> " + body); };
  auto expect = [](const std::function<Expr(Expr)>& body) { return lam("x", body); };
  CHECK(one("split(N/4, x)") == expect([](Expr x) { return split(size("N") / 4, x); }));
  CHECK(one("slide(3, 1, x)") == expect([](Expr x) { return slide(3, 1, x); }));
  CHECK(one("slideStrict(3, 2, x)") == expect([](Expr x) { return slideStrict(3, 2, x); }));
  CHECK(one("pad(1, 2, mirror, x)") ==
        expect([](Expr x) { return pad(1, 2, Boundary::Mirror, x); }));
  CHECK(one("pad(1, 2, constant(-1.5f), x)") ==
        expect([](Expr x) { return padConstant(1, 2, -1.5, x); }));
  CHECK(one("pad(0, 0, constant(3), x)") ==
        expect([](Expr x) { return padConstant(0, 0, 3.0, x); }));
  CHECK(one("crop(1, 1, x)") == expect([](Expr x) { return crop(1, 1, x); }));
  CHECK(one("reorder(stride(4), x)") == expect([](Expr x) { return reorderStride(4, x); }));
  CHECK(one("reorder(reverse, x)") == expect([](Expr x) { return reorderReverse(x); }));
  CHECK(one("asScalar(asVector(4, x))") == expect([](Expr x) { return asScalar(asVector(4, x)); }));
  CHECK(one("mapGlb(1, y -> y, x)") ==
        expect([](Expr x) { return mapGlb(1, lam("y", [](Expr y) { return y; }), x); }));
  CHECK(one("reduceSeqUnroll(0, (a, b) -> a + b, x)") == expect([](Expr x) {
          return reduceSeqUnroll(lit(0), lam2("a", "b", [](Expr a, Expr b) { return a + b; }), x);
        }));
  CHECK(one("toPrivate(y -> y, x, x)") == expect([](Expr x) {
          return toPrivate(lam("y", [](Expr y) { return y; }), {x, x});
        }));
  CHECK(one("vectorize(4, (a, b) -> a * b, x, x)") == expect([](Expr x) {
          return vectorize(4, lam2("a", "b", [](Expr a, Expr b) { return a * b; }), {x, x});
        }));
  CHECK(one("apply((a, b) -> a, x, x)") == expect([](Expr x) {
          return apply(lam2("a", "b", [](Expr a, Expr) { return a; }), {x, x});
        }));
  CHECK(one("let(y -> y + y, x)") ==
        expect([](Expr x) { return let(lam("y", [](Expr y) { return y + y; }), x); }));
  CHECK(one("zip(x, x, x)") == expect([](Expr x) { return zip(x, x, x); }));
  CHECK(one("fill(3, x)") == expect([](Expr x) { return fill(3, x); }));
  CHECK(one("map((y: float) -> y, x)") ==
        expect([](Expr x) { return map(lam("y", f32(), [](Expr y) { return y; }), x); }));
}

TEST_CASE("user functions: calls, function arguments, declarations") {
  Program program = parseProgram(
      "fun mult(x: float, y: float): float = x * y\n"
      "fun square(x: float): float = mult(x, x)\n"
      "def f(xs: [float]N) = map(square, xs)\n");
  REQUIRE(program.userFuns.size() == 2);
  const Expr& mult = program.userFuns[0];
  const Expr& square = program.userFuns[1];
  CHECK(mult.userFunName() == "mult");
  CHECK(mult.userFunResultType() == f32());
  CHECK(square.body() == apply(mult, {square.params()[0], square.params()[0]}));
  // A user function's name in function position is the UserFun itself.
  const Definition& f = program.definitions[0];
  CHECK(f.function.body().funs()[0].node() == square.node());
  CHECK(program.findUserFun("square") == &program.userFuns[1]);
  // parseExpr resolves names against the context's user functions.
  Expr e = parseExpr("x -> mult(x, 2.0f)", program);
  CHECK(e == lam("x", [&](Expr x) { return apply(mult, {x, lit(2.0f)}); }));
  CHECK_THROWS_WITH_AS(parseExpr("x -> mult(x, 2.0f)"), "<input>:1:6: error: unknown name 'mult'",
                       ParseError);
}

TEST_CASE("eta expansion of primitives written without their data arguments") {
  Expr idMap = parseExpr("xs -> map(id, xs)");
  CHECK(idMap ==
        lam("xs", [](Expr xs) { return map(lam("x", [](Expr x) { return id(x); }), xs); }));
  Expr splitMap = parseExpr("xs -> map(split(4), xs)");
  CHECK(splitMap ==
        lam("xs", [](Expr xs) { return map(lam("x", [](Expr x) { return split(4, x); }), xs); }));
  Expr sum = parseExpr("xs -> reduce(0.0f, add, xs)");
  CHECK(sum == lam("xs", [](Expr xs) {
          return reduce(lit(0.0f), lam2("x", "y", [](Expr x, Expr y) { return add(x, y); }), xs);
        }));
  Expr transposes = parseExpr("xs -> map(transpose(), xs)");
  CHECK(transposes ==
        lam("xs", [](Expr xs) { return map(lam("x", [](Expr x) { return transpose(x); }), xs); }));
  Expr nested = parseExpr("xs -> map(mapSeq(id), xs)");
  CHECK(nested == lam("xs", [](Expr xs) {
          return map(
              lam("x", [](Expr x) { return mapSeq(lam("y", [](Expr y) { return id(y); }), x); }),
              xs);
        }));
  Expr twoD = parseExpr("xs -> map(slide2D(3, 1), xs)");
  CHECK(twoD == lam("xs", [](Expr xs) {
          return map(lam("x", [](Expr x) { return slide2D(3, 1, x); }), xs);
        }));
  // The eta params are fresh: they do not capture a param of the same name.
  Expr capture = parseExpr("x -> map(y -> zip(y, x), map(id, x))");
  CHECK(capture == lam("x", [](Expr x) {
          return map(lam("y", [&](Expr y) { return zip(y, x); }),
                     map(lam("z", [](Expr z) { return id(z); }), x));
        }));
}

TEST_CASE("the 2D forms expand exactly as the builders do") {
  Expr f = parseExpr("x -> map2D(a -> a + 1.0f, x)");
  CHECK(f ==
        lam("x", [](Expr x) { return map2D(lam("a", [](Expr a) { return a + lit(1.0f); }), x); }));
  CHECK(parseExpr("x -> slide2D(3, 1, x)") == lam("x", [](Expr x) { return slide2D(3, 1, x); }));
  CHECK(parseExpr("x -> slide2D(3, 5, 1, 2, x)") ==
        lam("x", [](Expr x) { return slide2D(3, 5, 1, 2, x); }));
  CHECK(parseExpr("x -> pad2D(1, clamp, x)") ==
        lam("x", [](Expr x) { return pad2D(1, Boundary::Clamp, x); }));
  CHECK(parseExpr("x -> pad2D(1, 2, 3, 4, mirror, x)") ==
        lam("x", [](Expr x) { return pad2D(1, 2, 3, 4, Boundary::Mirror, x); }));
  CHECK(parseExpr("x -> pad2D(P, P, 0, 0, constant(0.5f), x)") ==
        lam("x", [](Expr x) { return pad2DConstant(size("P"), size("P"), 0, 0, 0.5, x); }));

  // And the builders are the paper's definitions (section 3.1.1) in 1D primitives.
  Expr input = param("input");
  Expr g = lam("v", [](Expr v) { return v * v; });
  CHECK(map2D(g, input) == map(lam("row", [&](Expr row) { return map(g, row); }), input));
  CHECK(slide2D(3, 4, 1, 2, input) ==
        map(lam("w", [](Expr w) { return transpose(w); }),
            slide(3, 1, map(lam("row", [](Expr row) { return slide(4, 2, row); }), input))));
  CHECK(slide2D(3, 1, input) == slide2D(3, 3, 1, 1, input));
  CHECK(pad2D(1, 2, 3, 4, Boundary::Clamp, input) ==
        transpose(
            map(lam("col", [](Expr col) { return pad(3, 4, Boundary::Clamp, col); }),
                transpose(map(lam("row", [](Expr row) { return pad(1, 2, Boundary::Clamp, row); }),
                              input)))));
  CHECK(pad2D(2, Boundary::Mirror, input) == pad2D(2, 2, 2, 2, Boundary::Mirror, input));
}

TEST_CASE("names: params shadow outer params, user functions and primitives") {
  CHECK(parseExpr("x -> map(x -> x, x)") ==
        lam("x", [](Expr x) { return map(lam("y", [](Expr y) { return y; }), x); }));
  CHECK(parseExpr("id -> id + 1") == lam("id", [](Expr p) { return p + lit(1); }));
  CHECK_THROWS_WITH_AS(parseExpr("id -> id(1)"),
                       "<input>:1:7: error: 'id' is a parameter, not a function", ParseError);
  Program program = parseProgram("fun g(x: float): float = x\ndef f(g: float) = g + 1.0f");
  const Definition& f = program.definitions[0];
  CHECK(f.function.body() == add(f.function.params()[0], lit(1.0f)));
  // A definition may share a primitive's name (definitions are not called).
  CHECK(parseProgram("def dot(x: float) = x").definitions[0].name == "dot");
}

TEST_CASE("nodes carry their source location") {
  Program program = parseProgram(
      "// a comment\n"
      "def f(xs: [float]N) =\n"
      "  /* block\n comment */ map(x -> x * 2.0f, xs)\n",
      "loc.weft");
  const Definition& f = program.definitions[0];
  CHECK(f.loc.toString() == "loc.weft:2:5");
  CHECK(f.function.params()[0].loc().toString() == "loc.weft:2:7");
  const Expr& mapCall = f.function.body();
  CHECK(mapCall.loc().toString() == "loc.weft:4:13");
  const Expr& lambda = mapCall.funs()[0];
  CHECK(lambda.loc().toString() == "loc.weft:4:17");
  CHECK(lambda.body().loc().toString() == "loc.weft:4:24");            // the '*'
  CHECK(lambda.body().args()[1].loc().toString() == "loc.weft:4:26");  // 2.0f
  // The expansion of a 2D form carries the location of its name.
  Expr e = parseExpr("x ->\n  map2D(a -> a, x)", {}, "m.weft");
  CHECK(e.body().loc().toString() == "m.weft:2:3");
  CHECK(e.body().funs()[0].body().loc().toString() == "m.weft:2:3");
}

TEST_CASE("comments and layout are free") {
  Program a = parseProgram("def f(x: [float]N) = map(y -> y + 1.0f, x)");
  Program b = parseProgram(
      "/* leading */ def f( x : [ float ] N ) = // trailing\n"
      "  map ( y ->\n y\n + 1.0f /* inside */ ,\n x )\n");
  CHECK(a.definitions[0].function == b.definitions[0].function);
  CHECK(parseProgram("").definitions.empty());
  CHECK(parseProgram("// only a comment").definitions.empty());
}
