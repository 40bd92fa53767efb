// Tests of countFlops (typecheck/flop_count.h) against the operation counts written out by hand
// for small programs: a dot product (a user function and a lambda), matrix multiplication from
// examples/matmul.weft, float vectors, fma and dot, integer arithmetic left out, a let counted
// once, a reduce's initial value once, lowered maps and reduces like high-level ones, and an
// unbound size refused.
#include <doctest/doctest.h>

#include <stdexcept>

#include "ir/builders.h"
#include "ir/parser.h"
#include "typecheck/flop_count.h"

using namespace weft;

namespace {

Definition parsed(const std::string& text) {
  return parseProgram(text, "<test>").definitions.back();
}

}  // namespace

TEST_CASE("a dot product: one multiply and one add per element") {
  const Definition dot = parsed(R"(
fun mult(x: float, y: float): float = x * y
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))
)");
  CHECK(countFlops(dot, {{"N", 1000}}) == 2000);
  const Definition lambdaDot = parsed(R"(
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
)");
  CHECK(countFlops(lambdaDot, {{"N", 7}}) == 14);
}

TEST_CASE("matrix multiplication: 2 M N K") {
  const Definition matmul = parsed(R"(
def matmul(A: [[float]K]M, B: [[float]N]K): [[float]N]M =
  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, col)),
                      transpose(B))),
      A)
)");
  CHECK(countFlops(matmul, {{"M", 3}, {"N", 5}, {"K", 7}}) == 2 * 3 * 5 * 7);
  CHECK(countFlops(matmul, {{"M", 256}, {"N", 256}, {"K", 256}}) == 2 * 256 * 256 * 256);
}

TEST_CASE("integer arithmetic, negation and comparisons are not floating-point operations") {
  const Definition ints = parsed(R"(
def f(xs: [int]N): [int]N = map(x -> x * 3 + 1, xs)
)");
  CHECK(countFlops(ints, {{"N", 10}}) == 0);
  const Definition mixed = parsed(R"(
def f(xs: [float]N): [float]N = map(x -> select(x < 0.0f, -x, x / 2.0f), xs)
)");
  CHECK(countFlops(mixed, {{"N", 10}}) == 10);  // the division only
}

TEST_CASE("vectors count their lanes; fma counts two; a let once; a reduce's initial value once") {
  const Type f4 = Type::vector(ScalarKind::Float, 4);
  Definition vectors = definition("v", {{"xs", Type::array(f4, Arith(6))}}, [](const auto& p) {
    return map(lam("x", [](Expr x) { return fma(x, x, x) + x; }), p[0]);
  });
  CHECK(countFlops(vectors, {}) == 6 * 4 * 3);
  Definition shared = definition(
      "s", {{"x", Type::floatType()}, {"ys", Type::array(Type::floatType(), Arith(5))}},
      [](const auto& p) {
        return let(
            lam("t", [&](Expr t) { return map(lam("y", [&](Expr y) { return y * t; }), p[1]); }),
            p[0] * p[0] + p[0]);
      });
  CHECK(countFlops(shared, {}) == 2 + 5);
  Definition sums = definition(
      "r", {{"x", Type::floatType()}, {"ys", Type::array(Type::floatType(), Arith(4))}},
      [](const auto& p) {
        return reduce(p[0] * p[0], lam2("a", "b", [](Expr a, Expr b) { return a + b; }), p[1]);
      });
  CHECK(countFlops(sums, {}) == 1 + 4);
}

TEST_CASE("lowered maps and reduces count like high-level ones") {
  Definition lowered = definition(
      "l", {{"xs", Type::array(Type::array(Type::floatType(), Arith(3)), Arith(4))}},
      [](const auto& p) {
        return mapGlb(0,
                      lam("row",
                          [](Expr row) {
                            return reduceSeq(
                                lit(0.0f), lam2("a", "b", [](Expr a, Expr b) { return a + b * b; }),
                                row);
                          }),
                      p[0]);
      });
  CHECK(countFlops(lowered, {}) == 4 * 3 * 2);
}

TEST_CASE("a size left unbound is refused") {
  const Definition dot = parsed(R"(
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
)");
  CHECK_THROWS_AS(countFlops(dot, {}), std::invalid_argument);
}

TEST_CASE("reduction reads and intensity: scalars, vectors, and a block of accumulators") {
  // One step reads a pair of floats for two operations.
  const Definition scalar = parsed(R"(
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
)");
  OperationCounts plain = countOperations(scalar, {{"N", 64}});
  CHECK(plain.flops == 128);
  CHECK(plain.reductionReads == doctest::Approx(128));
  CHECK(plain.intensity() == doctest::Approx(1.0));
  // A pair of float4 per step: dot (7) and the add (1) for two reads.
  const Definition vector = parsed(R"(
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + dot(p._0, p._1), zip(asVector(4, a), asVector(4, b)))
)");
  OperationCounts vectorised = countOperations(vector, {{"N", 64}});
  CHECK(vectorised.reductionReads == doctest::Approx(32));
  CHECK(vectorised.intensity() == doctest::Approx(4.0));
  // Each step reads S scalars and one float4 and updates S float4 accumulators (8 operations
  // each): 8 S / (S + 1).
  const Definition block = parsed(R"(
def block(xs: [[float]S]K, ws: [float4]K): [[float4]S]1 =
  reduce(join(fill(S, asVector(4, fill(4, 0.0f)))),
         (accs, p) -> map(q -> q._0 + q._1 * p._1, zip(accs, p._0)), zip(xs, ws))
)");
  OperationCounts blocked = countOperations(block, {{"S", 4}, {"K", 16}});
  CHECK(blocked.reductionReads == doctest::Approx(16 * 5));
  CHECK(blocked.intensity() == doctest::Approx(32.0 / 5.0));
  // No reduction: intensity 0.
  const Definition none = parsed("def f(x: [float]N): [float]N = map(v -> v * 2.0f, x)");
  CHECK(countOperations(none, {{"N", 8}}).intensity() == 0.0);
}

TEST_CASE("reduction reads through a transposing view are counted apart") {
  // Each step reads one column's element of every row: through transpose.
  const Definition strided = parsed(R"(
def f(xs: [[float]S]K): [[float]K]1 =
  reduce(fill(K, 0.0f), (accs, col) -> map(q -> q._0 + q._1, zip(accs, col)), transpose(xs))
)");
  OperationCounts throughTranspose = countOperations(strided, {{"S", 4}, {"K", 8}});
  CHECK(throughTranspose.reductionReads == doctest::Approx(4 * 8));
  CHECK(throughTranspose.transposedReductionReads == doctest::Approx(4 * 8));
  // The same sums over rows laid out as they are read: none.
  const Definition inOrder = parsed(R"(
def f(xs: [[float]K]S): [[float]K]1 =
  reduce(fill(K, 0.0f), (accs, row) -> map(q -> q._0 + q._1, zip(accs, row)), xs)
)");
  OperationCounts laidOut = countOperations(inOrder, {{"S", 4}, {"K", 8}});
  CHECK(laidOut.reductionReads == doctest::Approx(4 * 8));
  CHECK(laidOut.transposedReductionReads == 0.0);
  // A param bound to a transposed view's elements (matmul's columns of B) is read through it;
  // a zip's components are told apart.
  const Definition columns = parsed(R"(
def f(A: [[float]K]M, B: [[float]N]K): [[float]N]M =
  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, col)),
                      transpose(B))), A)
)");
  const ArithBinding sizes = {{"M", 2}, {"N", 3}, {"K", 4}};
  CHECK(countOperations(columns, sizes).transposedReductionReads == doctest::Approx(2 * 3 * 4 * 2));
  const Definition pairs = parsed(R"(
def f(A: [[float]K]M, B: [[float]K]M): [[float]1]M =
  map(p -> reduce(0.0f, (acc, v) -> acc + v, p._0), zip(A, transpose(transpose(B))))
)");
  CHECK(countOperations(pairs, {{"M", 2}, {"K", 4}}).transposedReductionReads == 0.0);
  // A let's value that is a copy nest is stored in order: reading it is not strided.
  const Definition copied = parsed(R"(
def f(xs: [[float]S]K): [[float]1]S =
  let(t -> map(row -> reduce(0.0f, (acc, v) -> acc + v, row), t),
      map(r -> map(e -> id(e), r), transpose(xs)))
)");
  OperationCounts relaid = countOperations(copied, {{"S", 4}, {"K", 8}});
  CHECK(relaid.reductionReads == doctest::Approx(4 * 8));
  CHECK(relaid.transposedReductionReads == 0.0);
  // The copy stores every value once.
  CHECK(relaid.copiedValues == doctest::Approx(4 * 8));
  CHECK(countOperations(columns, sizes).copiedValues == 0.0);
}

TEST_CASE("windows of a padded image are not read through a transposing view") {
  // pad2D pads the columns between two transposes, which cancel; slide2D transposes each
  // window's rows of columns, and overlapping windows lie close together in memory.
  const Definition stencil = parsed(R"(
def f(x: [[float]W]H): [[[float]1]W]H =
  map2D(w -> reduce(0.0f, (acc, v) -> acc + v, join(w)),
        slide2D(3, 1, pad2D(1, 1, 1, 1, constant(0.0f), x)))
)");
  OperationCounts windows = countOperations(stencil, {{"W", 5}, {"H", 4}});
  CHECK(windows.reductionReads == doctest::Approx(9 * 5 * 4));
  CHECK(windows.transposedReductionReads == 0.0);
  // The padded image summed row by row: in order too.
  const Definition padded = parsed(R"(
def f(x: [[float]W]H): [float]1 =
  reduce(0.0f, (acc, v) -> acc + v, join(pad2D(1, 1, 1, 1, constant(0.0f), x)))
)");
  CHECK(countOperations(padded, {{"W", 5}, {"H", 4}}).transposedReductionReads == 0.0);
  // Its columns, though, are strided.
  const Definition paddedColumns = parsed(R"(
def f(x: [[float]W]H): [float]1 =
  reduce(0.0f, (acc, v) -> acc + v, join(transpose(pad2D(1, 1, 1, 1, constant(0.0f), x))))
)");
  CHECK(countOperations(paddedColumns, {{"W", 5}, {"H", 4}}).transposedReductionReads ==
        doctest::Approx(7 * 6));
}

TEST_CASE("a block of columns transposed back is read in order; vectors of a column gather") {
  // Column sums with the columns in blocks of C, each block's sums as a row of accumulators
  // walking its rows (split-join, then map-reduce-interchange-rows): each step reads C values
  // of one row.
  const Definition blocks = parsed(R"(
def f(A: [[float]N]M): [float]N =
  join(join(map(chunk -> transpose(reduce(map(c -> 0.0f, chunk),
                                          (accs, ys) -> map(p -> p._0 + p._1, zip(accs, ys)),
                                          transpose(map(c -> c, chunk)))),
                split(4, transpose(A)))))
)");
  const ArithBinding sizes = {{"M", 8}, {"N", 16}};
  OperationCounts rows = countOperations(blocks, sizes);
  CHECK(rows.reductionReads == doctest::Approx(8 * 16));
  CHECK(rows.transposedReductionReads == 0.0);
  // The same sums down each column: every value from another row.
  const Definition columns = parsed(R"(
def f(A: [[float]N]M): [float]N =
  join(map(c -> reduce(0.0f, (acc, v) -> acc + v, c), transpose(A)))
)");
  CHECK(countOperations(columns, sizes).transposedReductionReads == doctest::Approx(8 * 16));
  // Columns read as vectors: one read per vector, but its lanes come from four rows.
  const Definition vectorColumns = parsed(R"(
def f(A: [[float]N]M): [float]N =
  join(map(c -> reduce(0.0f, (acc, v) -> acc + dot(v, v), asVector(4, c)), transpose(A)))
)");
  OperationCounts gathered = countOperations(vectorColumns, sizes);
  CHECK(gathered.reductionReads == doctest::Approx(8 * 16 / 4));
  CHECK(gathered.transposedReductionReads == doctest::Approx(8 * 16));
  // Two transposes around a map that groups each column into vectors do not cancel: step k
  // reads, for every column, a vector of four rows.
  const Definition groupedBack = parsed(R"(
def f(A: [[float]N]M): [[float]N]1 =
  reduce(map(c -> 0.0f, transpose(A)),
         (accs, ys) -> map(p -> p._0 + dot(p._1, p._1), zip(accs, ys)),
         transpose(map(c -> asVector(4, c), transpose(A))))
)");
  CHECK(countOperations(groupedBack, sizes).transposedReductionReads == doctest::Approx(8 * 16));
  // Nor does a block of columns grouped so.
  const Definition groupedBlocks = parsed(R"(
def f(A: [[float]N]M): [float]N =
  join(join(map(chunk -> transpose(reduce(map(c -> 0.0f, chunk),
                                          (accs, ys) -> map(p -> p._0 + dot(p._1, p._1),
                                                            zip(accs, ys)),
                                          transpose(map(c -> asVector(4, c), chunk)))),
                split(4, transpose(A)))))
)");
  CHECK(countOperations(groupedBlocks, sizes).transposedReductionReads == doctest::Approx(8 * 16));
}

TEST_CASE("accumulators updated in a loop are counted; unrolled, they are not") {
  // S float4 accumulators over K steps: a looped update reads and writes all S each step.
  const char* text = R"(
def block(xs: [[float]S]K, ws: [float4]K): [[float4]S]1 =
  reduce(join(fill(S, asVector(4, fill(4, 0.0f)))),
         (accs, p) -> MAP(q -> q._0 + q._1 * p._1, zip(accs, p._0)), zip(xs, ws))
)";
  const ArithBinding sizes = {{"S", 4}, {"K", 16}};
  auto with = [&](const std::string& map) {
    std::string program = text;
    program.replace(program.find("MAP"), 3, map);
    return countOperations(parsed(program), sizes);
  };
  CHECK(with("map").loopedAccumulatorValues == doctest::Approx(16 * 4));
  CHECK(with("mapSeq").loopedAccumulatorValues == doctest::Approx(16 * 4));
  CHECK(with("mapSeqUnroll").loopedAccumulatorValues == 0.0);
  // A scalar accumulator is a register.
  const Definition dot = parsed(R"(
def dot(a: [float]N, b: [float]N): [float]1 =
  reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
)");
  CHECK(countOperations(dot, {{"N", 64}}).loopedAccumulatorValues == 0.0);
}
