// Unit tests of weft's symbolic integer arithmetic (ir/arith.h): tables of expressions built
// through the operators next to the text the canonical form must print as (constant folding,
// term order, / and % elimination with ranges and divisibility, min/max/conditionals), then
// canonical equality and hashing, substitution, evaluation with C's truncating semantics,
// error messages, C output and range queries. The rows are the simplifications that make
// generated OpenCL indices readable, so a changed row is a visible change in generated code.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "ir/arith.h"

using namespace weft;

namespace {

// The variables every test uses: sizes n, m (>= 1, unbounded), a tuning parameter t in
// [1, 64], indices i in [0, n - 1], j in [0, 3], k in [0, m - 1], l in [0, i], x >= 0
// unbounded, and a of either sign in [-8, 8].
struct Vars {
  Arith n = Arith::size("n");
  Arith m = Arith::size("m");
  Arith t = Arith::var("t", VarKind::Tuning, 1, Arith(64));
  Arith i = Arith::var("i", VarKind::LoopIndex, 0, n - 1);
  Arith j = Arith::var("j", VarKind::LoopIndex, 0, Arith(3));
  Arith k = Arith::var("k", VarKind::ThreadIndex, 0, m - 1);
  Arith l = Arith::var("l", VarKind::LoopIndex, 0, i);
  Arith x = Arith::var("x", VarKind::LoopIndex, 0);
  Arith a = Arith::var("a", VarKind::LoopIndex, -8, Arith(8));
};

struct Row {
  const char* what;
  Arith got;
  const char* expected;
};

void checkRows(const std::vector<Row>& rows) {
  for (const Row& row : rows) {
    CAPTURE(row.what);
    CHECK(row.got.toString() == row.expected);
  }
}

}  // namespace

TEST_CASE("canonical sums and products print as a careful human writes them") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  checkRows({
      {"n + n", n + n, "2*n"},
      {"n - n", n - n, "0"},
      {"n + 1 + 2", n + 1 + 2, "n + 3"},
      {"2*(n + 3)", 2 * (n + 3), "2*n + 6"},
      {"(n + 1)*m", (n + 1) * m, "m*n + m"},
      {"(n + 1)*(n - 1)", (n + 1) * (n - 1), "n*n - 1"},
      {"j + 1 + i*4", j + 1 + i * 4, "4*i + j + 1"},
      {"-i + n - 1", -i + n - 1, "n - i - 1"},
      {"3 - i", 3 - i, "3 - i"},
      {"-i - 1", -i - 1, "-i - 1"},
      {"-(n*m)", -(n * m), "-m*n"},
      {"k + m*i", k + m * i, "i*m + k"},
      {"n*n*n - n*n", n * n * n - n * n, "n*n*n - n*n"},
      {"2*n - 2*n + 5", 2 * n - 2 * n + 5, "5"},
      {"4*(n/4)", 4 * (n / 4), "4*(n/4)"},
      {"n - x/4", n - x / 4, "n - x/4"},
      {"-(x/4) - 1", -(x / 4) - 1, "-(x/4) - 1"},
  });
}

TEST_CASE("division and remainder are simplified with ranges and divisibility") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  checkRows({
      {"(4*i + j)/4", (4 * i + j) / 4, "i"},
      {"(4*i + j)%4", (4 * i + j) % 4, "j"},
      {"(n*m)/m", (n * m) / m, "n"},
      {"(n*4 + 3)/4", (n * 4 + 3) / 4, "n"},
      {"(n*m + k)/m", (n * m + k) / m, "n"},
      {"(i*m + k)%m", (i * m + k) % m, "k"},
      {"(2*n)/2", (2 * n) / 2, "n"},
      {"(t*n)/t", (t * n) / t, "n"},
      {"(n + 3)/4 stays", (n + 3) / 4, "(n + 3)/4"},
      {"(n + 4)/4", (n + 4) / 4, "n/4 + 1"},
      {"(4*i + j)/2", (4 * i + j) / 2, "2*i + j/2"},
      {"(4*i + 2)%4", (4 * i + 2) % 4, "2"},
      {"(6*i + 4)/4", (6 * i + 4) / 4, "(3*i)/2 + 1"},
      {"(i + n)/n", (i + n) / n, "1"},
      {"j/4", j / 4, "0"},
      {"j%4", j % 4, "j"},
      {"(x%4)/4", (x % 4) / 4, "0"},
      {"(x/4)/2", (x / 4) / 2, "x/8"},
      {"(x%8)%4", (x % 8) % 4, "x%4"},
      {"(x + 7)%8 stays", (x + 7) % 8, "(x + 7)%8"},
      {"(x%16)/4", (x % 16) / 4, "(x/4)%4"},
      {"(x%(4*m))/4", (x % (4 * m)) / 4, "(x/4)%m"},
      {"(x%16)/3 stays", (x % 16) / 3, "(x%16)/3"},
      {"(x/4)%2 stays", (x / 4) % 2, "(x/4)%2"},
      {"(n - 1 - i)/4", (n - 1 - i) / 4, "(n - i - 1)/4"},
      {"(3 - t)/100: |a| < b", (3 - t) / 100, "0"},
      {"(3 - t)/10 + (t - 3)/10", (3 - t) / 10 + (t - 3) / 10, "0"},
      {"(a - 3)/4: sign normalised", (3 - a) / 4, "-((a - 3)/4)"},
      {"(n*(m + 1))/(m + 1)", (n * (m + 1)) / (m + 1), "n"},
      {"(n*m + n + k)/(m + 1)", (n * m + n + k) / (m + 1), "n"},
      {"(i*n + l)/n", (i * n + l) / n, "i"},
      {"l%(i + 1)", l % (i + 1), "l"},
      {"(-4*i)/4", (-4 * i) / 4, "-i"},
      {"(-x)/4", (-x) / 4, "-(x/4)"},
      {"a/4: sign unknown", a / 4, "a/4"},
      {"(4*a + 1)/4: not split, a may be negative", (4 * a + 1) / 4, "(4*a + 1)/4"},
      {"(4*a)/4: exact", (4 * a) / 4, "a"},
      {"n/1", n / 1, "n"},
      {"n%1", n % 1, "0"},
      {"0/n", Arith(0) / n, "0"},
      {"n/n", n / n, "1"},
      {"n%n", n % n, "0"},
      {"x/x: x may be 0", x / x, "x/x"},
      {"ceilDiv(n, 4)", ceilDiv(n, 4), "(n + 3)/4"},
      {"ceilDiv(4*n, 4)", ceilDiv(4 * n, 4), "n"},
      {"n/(m*t)", n / (m * t), "n/(m*t)"},
      {"(n + 1)/(m + 1)", (n + 1) / (m + 1), "(n + 1)/(m + 1)"},
  });
}

TEST_CASE("a/b*b + a%b and its rearrangements are recognised when adding") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  checkRows({
      {"(x/4)*4 + x%4", (x / 4) * 4 + x % 4, "x"},
      {"x%8 + 8*(x/8)", x % 8 + 8 * (x / 8), "x"},
      {"(x/m)*m + x%m", (x / m) * m + x % m, "x"},
      {"(n/t)*t + n%t + 1", (n / t) * t + n % t + 1, "n + 1"},
      {"2*((x/4)*4 + x%4)", 2 * ((x / 4) * 4) + 2 * (x % 4), "2*x"},
      {"x - 4*(x/4)", x - 4 * (x / 4), "x%4"},
      {"x - x%4", x - x % 4, "4*(x/4)"},
      {"(a/4)*4 + a%4 (any sign)", (a / 4) * 4 + a % 4, "a"},
      {"4*(x/4) - x", 4 * (x / 4) - x, "-(x%4)"},
      {"x%(n + 1) + (n + 1)*(x/(n + 1))", x % (n + 1) + (n + 1) * (x / (n + 1)), "x"},
      {"x%4 + l%4 stays", x % 4 + l % 4, "l%4 + x%4"},
      {"(x%4)*(l%4) stays", (x % 4) * (l % 4), "(l%4)*(x%4)"},
      {"x + 2*(x%4) stays", x + 2 * (x % 4), "x + 2*(x%4)"},
      {"n*(x%4) + x/4 stays", n * (x % 4) + x / 4, "n*(x%4) + x/4"},
      {"(x + 1)%4 + x", (x + 1) % 4 + x, "x + (x + 1)%4"},
      // A remainder whose quotient simplifies ((x/128)/3 is x/384) in a sum of its neighbours.
      {"6144*(x/384) + 2048*((x/128)%3) + 16*(x%128)",
       6144 * (x / 384) + 2048 * ((x / 128) % 3) + 16 * (x % 128), "16*x"},
      {"3*(x/384) + (x/128)%3", 3 * (x / 384) + (x / 128) % 3, "x/128"},
      {"(x/128)%3 stays", (x / 128) % 3, "(x/128)%3"},
      {"(x/128)%3 + x stays", (x / 128) % 3 + x, "x + (x/128)%3"},
  });
}

TEST_CASE("min, max and conditionals are decided by range reasoning") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  checkRows({
      {"min(i, n)", min(i, n), "i"},
      {"max(i, n)", max(i, n), "n"},
      {"min(n, m)", min(n, m), "min(m, n)"},
      {"max(m, n)", max(n, m), "max(m, n)"},
      {"min(n, n)", min(n, n), "n"},
      {"min(3, 5)", min(Arith(3), Arith(5)), "3"},
      {"max(-2, 7)", max(Arith(-2), Arith(7)), "7"},
      {"min(j, 4)", min(j, Arith(4)), "j"},
      {"max(l, i)", max(l, i), "i"},
      {"min(t, 100)", min(t, Arith(100)), "t"},
      {"ifLess(i, n, j, k)", ifLess(i, n, j, k), "j"},
      {"ifLess(n, i + 1, j, k)", ifLess(n, i + 1, j, k), "k"},
      {"ifLess(i, j, n, n)", ifLess(i, j, n, n), "n"},
      {"ifLess(i, j, i, j)", ifLess(i, j, i, j), "min(i, j)"},
      {"ifLess(i, j, j, i)", ifLess(i, j, j, i), "max(i, j)"},
      {"ifLess(x, j, n, m)", ifLess(x, j, n, m), "(x < j ? n : m)"},
      {"ifLess(2, 3, n, m)", ifLess(Arith(2), Arith(3), n, m), "n"},
  });
}

TEST_CASE("equal expressions compare and hash equal however they were built") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  auto same = [](const Arith& p, const Arith& q) {
    CAPTURE(p.toString());
    CAPTURE(q.toString());
    CHECK(p == q);
    CHECK(p.hash() == q.hash());
    CHECK_FALSE(p < q);
    CHECK_FALSE(q < p);
    CHECK(std::hash<Arith>{}(p) == std::hash<Arith>{}(q));
  };
  same(n + m, m + n);
  same((n + m) * t, n * t + m * t);
  same((n + 1) * m, n * m + m);
  same((n + 1) * (n + 1), n * n + 2 * n + 1);
  same(n * (m * t), (t * n) * m);
  same(i * 4 + j, j + 4 * i);
  same(n - (m - t), t + n - m);
  same(min(x, n) + 1, 1 + min(n, x));
  same((x + 1) / 4 + n, n + (1 + x) / 4);
  same(Arith(2) * (x / 4), x / 4 + x / 4);
  CHECK(n != m);
  CHECK(n + 1 != n);
  CHECK((n < m) != (m < n));
  // Variables are identified by name only.
  CHECK(Arith::size("n") == Arith::var("n", VarKind::Tuning, 1, Arith(8)));
  // Canonical shapes.
  CHECK((n + 1).kind() == ArithKind::Sum);
  CHECK((4 * n).kind() == ArithKind::Product);
  CHECK((n * m).kind() == ArithKind::Product);
  CHECK((n - n).kind() == ArithKind::Constant);
  CHECK((x / 3).kind() == ArithKind::Div);
  CHECK((4 * i + j + 1).sumConstant() == 1);
  CHECK((4 * i + j + 1).sumTerms().size() == 2);
  CHECK((4 * i + j + 1).sumTerms()[0].first == 4);
  CHECK((4 * i + j + 1).sumTerms()[0].second == i);
  CHECK((-3 * n * m).productCoefficient() == -3);
  CHECK((-3 * n * m).productFactors() == std::vector<Arith>{m, n});
  CHECK((x % 5).operands() == std::vector<Arith>{x, Arith(5)});
}

TEST_CASE("variables, substitution and evaluation") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  Arith e = k + n * i + min(t, m);
  std::vector<std::string> names;
  for (const Arith& var : e.vars()) names.push_back(var.varName());
  CHECK(names == std::vector<std::string>{"i", "k", "m", "n", "t"});
  CHECK(e.mentions("t"));
  CHECK_FALSE(e.mentions("j"));
  CHECK(i.varKind() == VarKind::LoopIndex);
  CHECK(i.varLo() == Arith(0));
  CHECK(*i.varHi() == n - 1);
  CHECK_FALSE(x.varHi().has_value());
  CHECK(std::string(varKindName(VarKind::Tuning)) == "tuning");

  CHECK(substitute(i * m + k, {{"i", Arith(2)}, {"k", Arith(3)}}).toString() == "2*m + 3");
  CHECK(substitute(n * m, {{"n", m}}).toString() == "m*m");
  // Substitution re-simplifies: x := 4*y + j makes x/4 exact.
  Arith y = Arith::var("y", VarKind::LoopIndex, 0);
  CHECK(substitute(x / 4, {{"x", 4 * y + j}}) == y);
  CHECK(substitute(x % 4, {{"x", 4 * y + j}}) == j);
  // Substituted sizes reach the ranges of the indices that mention them.
  CHECK(constantUpperBound(substitute(4 * i + j, {{"n", Arith(8)}})) == 31);
  CHECK(substitute((n + 3) / 4, {{"n", Arith(9)}}) == Arith(3));
  CHECK(substitute(e, {}) == e);

  CHECK(evaluate(4 * i + j, {{"i", 2}, {"j", 3}}) == 11);
  CHECK(evaluate(a / 2, {{"a", -7}}) == -3);
  CHECK(evaluate(a % 2, {{"a", -7}}) == -1);
  CHECK(evaluate(Arith(7) / a, {{"a", -2}}) == -3);
  CHECK(evaluate(Arith(7) % a, {{"a", -2}}) == 1);
  CHECK(Arith(-7) / 2 == Arith(-3));
  CHECK(Arith(-7) % 2 == Arith(-1));
  CHECK(evaluate(ifLess(a, x, n, m), {{"a", 1}, {"x", 2}, {"n", 10}, {"m", 20}}) == 10);
  CHECK(evaluate(min(a, x) + max(a, x), {{"a", 1}, {"x", 5}}) == 6);
  CHECK(tryEvaluate(n + m, {{"n", 1}}) == std::nullopt);
  CHECK(tryEvaluate(n + m, {{"n", 1}, {"m", 2}}) == 3);
}

TEST_CASE("errors name what went wrong") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  CHECK_THROWS_WITH_AS(evaluate(n + m, {{"n", 1}}), doctest::Contains("variable `m` is unbound"),
                       ArithError);
  CHECK_THROWS_WITH_AS(evaluate(n / (m - 4), {{"n", 1}, {"m", 4}}),
                       doctest::Contains("divisor `m - 4` is 0 with m = 4"), ArithError);
  CHECK_THROWS_WITH_AS(evaluate(x % a, {{"x", 1}, {"a", 0}}), doctest::Contains("division by zero"),
                       ArithError);
  CHECK_THROWS_WITH_AS(n / 0, doctest::Contains("division by zero: `n/0`"), ArithError);
  CHECK_THROWS_WITH_AS(n % (m - m), doctest::Contains("division by zero"), ArithError);
  CHECK_THROWS_WITH_AS(Arith::var("q", VarKind::Tuning, 4, Arith(2)),
                       doctest::Contains("`q` has an empty range [4, 2]"), ArithError);
  CHECK_THROWS_WITH_AS(Arith(INT64_MAX) + 1, doctest::Contains("overflow"), ArithError);
  CHECK_THROWS_WITH_AS(Arith(INT64_MAX / 2) * n * 3, doctest::Contains("overflow"), ArithError);
  CHECK_THROWS_WITH_AS(evaluate(n * n, {{"n", int64_t(1) << 40}}), doctest::Contains("overflow"),
                       ArithError);
}

TEST_CASE("C output") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  CHECK((4 * i + j).toC() == "4*i + j");
  CHECK(((n + 3) / 4).toC() == "(n + 3)/4");
  CHECK(min(n, m).toC() == "min(m, n)");
  CHECK(max(x, j).toC() == "max(j, x)");
  CHECK(ifLess(x, j, n, m).toC() == "((x < j) ? n : m)");
  CHECK((n * (x % 4)).toC() == "n*(x%4)");
  CHECK((x / (m * t)).toC() == "x/(m*t)");
  CHECK((x / (a - 3)).toC() == "x/(a - 3)");
  CHECK((x / (a - 9)).toC() == "-(x/(9 - a))");  // a - 9 < 0: the sign moves out
  CHECK((Arith(1) - x / 4).toC() == "1 - x/4");
  std::ostringstream os;
  os << 4 * i + j;
  CHECK(os.str() == "4*i + j");
}

TEST_CASE("range queries") {
  Vars v;
  auto& [n, m, t, i, j, k, l, x, a] = v;
  CHECK(proveLess(i, n));
  CHECK_FALSE(proveLess(n, i));
  CHECK(proveLessEqual(i + 1, n));
  CHECK(proveLess(i * m + k, n * m));
  CHECK(proveLess(4 * i + j, 4 * n));
  CHECK(proveLessEqual(l, i));
  CHECK(proveLess(l, n));
  CHECK(proveNonNegative(n * m - n));
  CHECK(proveNonNegative(n - 1));
  CHECK(proveNonNegative(x / 4));
  CHECK(proveNonNegative(a % 3 + 2));
  CHECK_FALSE(proveNonNegative(a));
  CHECK_FALSE(proveNonNegative(n - 2));
  CHECK(provePositive(n));
  CHECK(provePositive(t));
  CHECK_FALSE(provePositive(x));
  CHECK(proveDivides(Arith(4), 8 * n + 4));
  CHECK(proveDivides(m, n * m + m));
  CHECK(proveDivides(m + 1, n * m + n));
  CHECK_FALSE(proveDivides(Arith(4), n));
  CHECK_FALSE(proveDivides(m, n));

  CHECK(lowerBound(n - i) == Arith(1));
  CHECK(upperBound(4 * i + j) == 4 * n - 1);
  CHECK(upperBound(i * m + k) == n * m - 1);
  CHECK(lowerBound(x) == Arith(0));
  CHECK(upperBound(x) == std::nullopt);
  CHECK(upperBound(n) == n);
  CHECK(upperBound(l) == n - 1);
  CHECK(upperBound(i / 4) == (n - 1) / 4);
  CHECK(upperBound(x % 8) == Arith(7));
  CHECK(upperBound(min(i, j)) == min(n - 1, Arith(3)));
  CHECK(constantUpperBound(min(i, j)) == 3);
  CHECK(constantUpperBound(4 * j + 3) == 15);
  CHECK(constantLowerBound(n - i) == 1);
  CHECK(constantUpperBound(i) == std::nullopt);
  CHECK(constantUpperBound(2 * t) == 128);
  CHECK(constantLowerBound(a - j) == -11);
  CHECK(constantUpperBound(a % 3) == 2);
  CHECK(constantLowerBound(a % 3) == -2);
  CHECK(constantLowerBound(-x) == std::nullopt);
}

TEST_CASE("bounds of x % y where y can only be 0 stay intervals (found by fuzz/fuzz_arith)") {
  // z in [0, 0]: z % z has no defined value; its bound was the empty interval [0, -1], and the
  // bound of a division by a sum holding it divided by zero.
  const Arith z = Arith::var("z", VarKind::Tuning, Arith(0), Arith(0));
  const Arith divisor = (z % z) + (z % Arith(-8));
  const Arith quotient = Arith(15) / divisor;
  CHECK_FALSE(tryEvaluate(quotient, {{"z", 0}}).has_value());
  const Arith x = Arith::var("x", VarKind::Tuning, Arith(1), Arith(39));
  CHECK(tryEvaluate((x + quotient) % Arith(-8), {{"x", 3}, {"z", 0}}) == std::nullopt);
}
