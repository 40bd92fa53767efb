// Golden and error tests of OpenCL generation: the structure of generated kernels (checked in
// the manner of LLVM's FileCheck: lines that must appear in order, and text that must not
// appear), the simplicity of index expressions for the paper's stencil (Listing 2), vector
// loads and stores, multi-kernel programs, launch sizes, every "cannot map" error, and the global
// accesses each kernel lists for cost models (their offsets and the loops around them, and the
// loops a work-item runs, with unrolled ones generated as loops for analysis).
// Whether the kernels compute the right values is checked on PoCL against the interpreter in
// tests/codegen/opencl_*.cpp.
#include <doctest/doctest.h>

#include <algorithm>

#include <sstream>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/parser.h"

using namespace weft;

namespace {

CompiledProgram compile(const std::string& text, const ArithBinding& sizes = {}) {
  Program program = parseProgram(text, "test.weft");
  CodegenOptions options;
  options.specialize = sizes;
  return generateOpenCL(program.definitions.back(), options);
}

std::string trim(const std::string& line) {
  size_t start = line.find_first_not_of(' ');
  return start == std::string::npos ? "" : line.substr(start);
}

// FileCheck in miniature: each expected line must match (after leading spaces) a later line of
// `text` exactly, in order; a pattern starting with "NEXT: " must be on the very next line.
void checkLines(const std::string& text, const std::vector<std::string>& expected) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(trim(line));
  size_t position = 0;
  for (const std::string& pattern : expected) {
    bool next = pattern.rfind("NEXT: ", 0) == 0;
    std::string wanted = next ? pattern.substr(6) : pattern;
    size_t found = lines.size();
    if (next) {
      if (position < lines.size() && lines[position] == wanted) found = position;
    } else {
      for (size_t i = position; i < lines.size(); ++i) {
        if (lines[i] == wanted) {
          found = i;
          break;
        }
      }
    }
    INFO("looking for: " << wanted << "\nin:\n" << text);
    REQUIRE(found < lines.size());
    position = found + 1;
  }
}

std::string errorOf(const std::string& text) {
  try {
    compile(text);
  } catch (const CodegenError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("the paper's 2D stencil (Listing 1) gives Listing 2's simple indices") {
  CompiledProgram program = compile(R"(
def stencil2D(weights: [[float]3]3, input: [[float]W]H) =
  mapWrg(0, row -> mapLcl(0, nbh -> reduceSeq(0.0f, (acc, p) -> acc + p._0 * p._1,
                                              zip(join(nbh), join(weights))), row),
         slide2D(3, 1, pad2D(1, 1, 1, 1, clamp, input)))
)",
                                    {{"W", 64}, {"H", 32}});
  REQUIRE(program.kernels.size() == 1);
  checkLines(program.source,
             {"kernel void weft_stencil2D_k0(const global float* restrict in_weights,",
              "NEXT: const global float* restrict in_input,",
              "NEXT: global float* restrict out) {",
              // The launch covers every row and column: no loops over groups or items.
              "NEXT: const int wg1_d0 = get_group_id(0);",
              "NEXT: const int lc2_d0 = get_local_id(0);",
              "NEXT: float acc3 = 0.0f;",
              // The flattened 3x3 window is walked as two loops, so unlike Listing 2 (i%3,
              // i/3) no index needs division or modulo; clamping is min/max.
              "NEXT: for (int i4 = 0; i4 < 3; ++i4) {",
              "NEXT: for (int i5 = 0; i5 < 3; ++i5) {",
              "NEXT: acc3 = (acc3 + (in_input[64*min(31, max(0, i4 + wg1_d0 - 1)) + "
              "min(63, max(0, i5 + lc2_d0 - 1))] * in_weights[3*i4 + i5]));",
              "NEXT: }",
              "NEXT: }",
              // The output index has no division or modulo.
              "NEXT: out[lc2_d0 + 64*wg1_d0] = acc3;",
              "NEXT: }"});
  // Ranges make every division and modulo unnecessary here.
  std::istringstream lines(program.source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("//", 0) == 0) continue;
    INFO(line);
    CHECK(line.find('/') == std::string::npos);
    CHECK(line.find('%') == std::string::npos);
  }
  const KernelPlan& kernel = program.kernels[0];
  CHECK(kernel.hasLocalSize);
  CHECK(kernel.globalSize[0] == Arith(64 * 32));
  CHECK(kernel.localSize[0] == Arith(64));
}

TEST_CASE("symbolic sizes become kernel arguments and loops appear where launch sizes differ") {
  CompiledProgram program = compile(R"(
def scale(xs: [[float]W]H) = mapGlb(1, row -> mapGlb(0, x -> x * 2.0f, row), xs)
)");
  checkLines(program.source, {"global float* restrict out,", "NEXT: int H,", "NEXT: int W) {",
                              "const int gl1_d1 = get_global_id(1);",
                              "NEXT: const int gl2_d0 = get_global_id(0);",
                              "NEXT: out[W*gl1_d1 + gl2_d0] = (in_xs[W*gl1_d1 + gl2_d0] * 2.0f);"});
  REQUIRE(program.openSizes.size() == 2);
  CHECK(program.kernels[0].globalSize[0] == Arith::size("W"));
  CHECK(program.kernels[0].globalSize[1] == Arith::size("H"));
  CHECK_FALSE(program.kernels[0].hasLocalSize);
}

TEST_CASE("a reduction at the top runs as one work-item; sequential loops of one trip vanish") {
  CompiledProgram program = compile(R"(
def dot(a: [float]N, b: [float]N) = reduceSeq(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))
)");
  checkLines(program.source, {"float acc1 = 0.0f;", "NEXT: for (int i2 = 0; i2 < N; ++i2) {",
                              "NEXT: acc1 = (acc1 + (in_a[i2] * in_b[i2]));", "NEXT: }",
                              "NEXT: out[0] = acc1;"});
  CHECK(program.kernels[0].globalSize[0] == Arith(1));
}

TEST_CASE("streaming stores: vector stores to global memory at aligned offsets only") {
  const std::string text = R"(
fun twice(x: float): float = x + x
def vec(xs: [float]N) = asScalar(mapGlb(0, v -> vectorize(4, twice, v), asVector(4, xs)))
)";
  CodegenOptions options;
  options.streamingStores = true;
  const CompiledProgram streaming =
      generateOpenCL(parseProgram(text, "test.weft").definitions.back(), options);
  checkLines(streaming.source, {"__builtin_nontemporal_store(uf_twice_v4(vload4(0, in_xs + "
                                "4*gl1_d0)), (global float4*)(out + 4*gl1_d0));"});
  CHECK(streaming.alignedVectorStoreSites == 1);
  // Off: the same site counted, an ordinary vstore.
  const CompiledProgram plain = compile(text);
  CHECK(plain.alignedVectorStoreSites == 1);
  CHECK(plain.source.find("__builtin_nontemporal_store") == std::string::npos);
  // Rows of a symbolic length M read as vectors: the output is M / 4 vectors per row, so every
  // store is at a multiple of 4 whatever M.
  const CompiledProgram rows = generateOpenCL(parseProgram(R"(
fun twice(x: float): float = x + x
def vec(xs: [[float]M]N) = mapGlb(1, row -> asScalar(mapGlb(0, v -> vectorize(4, twice, v), asVector(4, row))), xs)
)",
                                                           "test.weft")
                                                  .definitions.back(),
                                              options);
  CHECK(rows.alignedVectorStoreSites == 1);
  checkLines(rows.source, {"__builtin_nontemporal_store(uf_twice_v4(vload4(0, in_xs + M*gl1_d1 + "
                           "4*gl2_d0)), (global float4*)(out + 4*gl1_d1*(M/4) + 4*gl2_d0));"});
  // Scalar stores never stream.
  const CompiledProgram scalars = generateOpenCL(
      parseProgram("def scale(xs: [float]N) = mapGlb(0, x -> x * 2.0f, xs)", "test.weft")
          .definitions.back(),
      options);
  CHECK(scalars.alignedVectorStoreSites == 0);
  CHECK(scalars.source.find("__builtin_nontemporal_store") == std::string::npos);
}

TEST_CASE("vectors: asVector reads with vload, asScalar writes with vstore, dot is built in") {
  CompiledProgram program = compile(R"(
fun twice(x: float): float = x + x
def vec(xs: [float]N) = asScalar(mapGlb(0, v -> vectorize(4, twice, v), asVector(4, xs)))
)");
  checkLines(program.source,
             {"static float4 uf_twice_v4(float4 p_x) {", "NEXT: return (p_x + p_x);",
              "vstore4(uf_twice_v4(vload4(0, in_xs + 4*gl1_d0)), 0, out + 4*gl1_d0);"});
  Program both = parseProgram(R"(
def dots(xs: [float]N, ys: [float]N) =
  mapGlb(0, p -> dot(p._0, p._1), zip(asVector(4, xs), asVector(4, ys)))
)");
  CompiledProgram dots = generateOpenCL(both.definitions[0]);
  checkLines(dots.source,
             {"out[gl1_d0] = dot(vload4(0, in_xs + 4*gl1_d0), vload4(0, in_ys + 4*gl1_d0));"});
}

TEST_CASE("layout-only maps and layout steps cost nothing: transposed output, padded input") {
  CompiledProgram program = compile(R"(
def t(xs: [[float]W]H) =
  transpose(map(r -> r, mapGlb(1, row -> mapGlb(0, x -> x + 1.0f, row), pad(1, 1, constant(0.0f), xs))))
)");
  REQUIRE(program.kernels.size() == 1);
  CHECK(program.buffers.size() == 2);  // input and output only
  checkLines(program.source,
             {"out[H*gl2_d0 + gl1_d1 + 2*gl2_d0] = ((((gl1_d1 - 1) < 0 || (gl1_d1 - 1) >= H) ? "
              "0.0f : in_xs[W*gl1_d1 + gl2_d0 - W]) + 1.0f);"});
}

TEST_CASE("a computed kernel input becomes an earlier kernel writing a temporary buffer") {
  CompiledProgram program = compile(R"(
def twoStages(xs: [float]N) =
  mapGlb(0, w -> reduceSeq(0.0f, (a, x) -> a + x, w),
         slide(3, 1, mapGlb(0, x -> x * x, xs)))
)");
  REQUIRE(program.kernels.size() == 2);
  REQUIRE(program.buffers.size() == 3);
  CHECK(program.buffers[2].role == BufferPlan::Role::Temporary);
  CHECK(program.buffers[2].elementCount == Arith::size("N"));
  checkLines(program.source, {"kernel void weft_twoStages_k0(const global float* restrict in_xs,",
                              "tmp1[gl2_d0] = (in_xs[gl2_d0] * in_xs[gl2_d0]);",
                              "kernel void weft_twoStages_k1(global float* restrict out,",
                              // The second kernel is launched for its own trip count: no loop.
                              "const int gl3_d0 = get_global_id(0);",
                              "acc4 = (acc4 + tmp1[gl3_d0 + i5]);"});
  CHECK(program.kernels[1].globalSize[0] == Arith::size("N") - 2);
}

TEST_CASE("local memory written by mapLcl is followed by a barrier") {
  CompiledProgram program = compile(R"(
def blur(input: [[float]W]H) =
  mapWrg(0, rows -> let(tile -> mapLcl(0, nbh -> reduceSeq(0.0f, (acc, x) -> acc + x, join(nbh)),
                                       slide(3, 1, tile)),
                        toLocal(t -> mapLcl(0, x -> reduceSeq(0.0f, (a, y) -> a + y, x), t),
                                transpose(rows))),
         slide(3, 1, pad(1, 1, clamp, map(r -> pad(1, 1, clamp, r), input))))
)",
                                    {{"W", 16}, {"H", 8}});
  checkLines(program.source, {"local float l2[18];", "l2[lc3_d0] = acc4;",
                              "NEXT: barrier(CLK_LOCAL_MEM_FENCE);",
                              "for (int lc6_d0 = get_local_id(0); lc6_d0 < 16; lc6_d0 += "
                              "get_local_size(0)) {"});
  CHECK(program.kernels[0].localSize[0] == Arith(18));
}

TEST_CASE("programs the generator cannot map are rejected with a clear message") {
  CHECK(errorOf("def f(xs: [float]N) = mapLcl(0, x -> x + 1.0f, xs)") ==
        "test.weft:1:23: codegen error: mapLcl must be nested in a mapWrg");
  CHECK(errorOf("def f(xs: [[float]N]M) = mapGlb(0, r -> mapGlb(0, x -> x, r), xs)") ==
        "test.weft:1:41: codegen error: mapGlb(0) is nested in another mapGlb of the same "
        "dimension");
  CHECK(errorOf("def f(xs: [[float]N]M) = mapGlb(0, r -> mapLcl(0, x -> x, r), xs)") ==
        "test.weft:1:26: codegen error: a kernel cannot mix mapGlb with mapWrg/mapLcl");
  // Local memory written by a mapLcl nested in another mapLcl: no barrier can be placed.
  std::string nested = errorOf(R"(
def f(xs: [[[float]4]N]M) =
  mapWrg(0, rows -> mapLcl(1, row -> let(t -> mapLcl(0, x -> x, t),
                                          toLocal(r -> mapLcl(0, x -> x + 1.0f, r), row)), rows), xs)
)");
  CHECK(nested.find("needs a barrier, but here it is written inside another mapLcl") !=
        std::string::npos);
  CHECK(errorOf("def f(xs: [[float]N]M) = mapGlb(0, r -> reduceSeq(0.0f, (a, x) -> a + x, "
                "toPrivate(y -> mapSeq(x -> x * 2.0f, y), r)), xs)") ==
        "test.weft:1:74: codegen error: a private array needs a size known at compile time, "
        "found [float]N");
}

TEST_CASE("an accumulator of symbolic size lives in global memory, one region per work-item") {
  CompiledProgram program = compile(R"(
def colSums(x: [[[float]N]M]B) =
  mapGlb(0, m -> reduceSeq(fill(N, 0.0f), (acc, r) -> mapSeq(p -> p._0 + p._1, zip(acc, r)), m), x)
)");
  REQUIRE(program.buffers.size() == 3);
  CHECK(program.buffers[2].elementCount == Arith::size("B") * Arith::size("N"));
  checkLines(program.source, {"g2[N*gl1_d0 + i3] = 0.0f;",
                              "g2[N*gl1_d0 + i5] = (g2[N*gl1_d0 + i5] + in_x[M*N*gl1_d0 + N*i4 + i5]);"});
}

TEST_CASE("an accumulator a mapLcl nest updates is split among the work-items, in registers") {
  // Per work-group: a reduction over 6 chunks of [4][2]; each chunk staged in local memory by
  // the group, then work-item i adds row i of it to its own part [2] of the accumulator [4][2].
  const std::string tiled = R"(
def f(xs: [[[[float]2]4]6]G) =
  mapWrg(0, g -> join(reduceSeq(
      mapLcl(0, z -> mapSeqUnroll(v -> id(v), z), fill(4, fill(2, 0.0f))),
      (acc, chunk) -> let(t -> mapLcl(0, a -> mapSeqUnroll(p -> p._0 + p._1, zip(a._0, a._1)),
                                     zip(acc, t)),
                          toLocal(c -> mapLcl(0, r -> mapSeqUnroll(x -> id(x), r), c), chunk)),
      g)), xs)
)";
  CompiledProgram program = compile(tiled);
  REQUIRE(program.kernels.size() == 1);
  CHECK(program.kernels[0].localSize[0] == Arith(4));
  // Each work-item's part is two registers, initialised, updated and stored without its index.
  checkLines(program.source, {"float acc2_0, acc2_1;", "acc2_0 = 0.0f;", "barrier(CLK_LOCAL_MEM_FENCE);",
                              "barrier(CLK_LOCAL_MEM_FENCE);", "acc2_0 = (acc2_0 + l5[2*lc7_d0]);",
                              "out[2*lc8_d0 + 8*wg1_d0] = acc2_0;"});
  CHECK(program.source.find("acc2[") == std::string::npos);
  // The work-items own the accumulator: reading another's part is refused.
  const std::string otherPart = errorOf(R"(
def f(xs: [[[[float]2]4]6]G) =
  mapWrg(0, g -> join(reduceSeq(
      mapLcl(0, z -> mapSeqUnroll(v -> id(v), z), fill(4, fill(2, 0.0f))),
      (acc, chunk) -> mapLcl(0, a -> mapSeqUnroll(p -> p._0 + p._1, zip(a._0, a._1)),
                             zip(reorder(reverse, acc), chunk)),
      g)), xs)
)");
  CHECK(otherPart.find("holds each work-item's own part of dimension 0: it is indexed only by the "
                       "work-item's mapLcl(0) index") != std::string::npos);
  // Two accumulators owned in one dimension with different lengths: no local size fits both.
  const std::string twoLengths = errorOf(R"(
def f(xs: [[[[float]2]4]6]G, ys: [[[[float]2]8]6]G) =
  mapWrg(0, p -> let(first ->
      join(reduceSeq(mapLcl(0, z -> mapSeqUnroll(v -> id(v), z), fill(8, fill(2, 0.0f))),
                (acc, c) -> mapLcl(0, a -> mapSeqUnroll(q -> q._0 + q._1, zip(a._0, a._1)), zip(acc, c)),
                p._1)),
      join(reduceSeq(mapLcl(0, z -> mapSeqUnroll(v -> id(v), z), fill(4, fill(2, 0.0f))),
                (acc, c) -> mapLcl(0, a -> mapSeqUnroll(q -> q._0 + q._1, zip(a._0, a._1)), zip(acc, c)),
                p._0))), zip(xs, ys))
)");
  CHECK(twoLengths.find("own accumulators of different lengths (8 and 4)") != std::string::npos);
}

TEST_CASE("generated names never clash with the program's size variables") {
  CompiledProgram program = compile("def f(x: [float]i2) = mapGlb(0, a -> a + 1.0f, x)");
  CHECK(program.source.find("int i2)") != std::string::npos);
  CHECK(program.source.find("const int gl1_d0") != std::string::npos);
}

TEST_CASE("private arrays indexed only by constants become scalar registers") {
  CompiledProgram program = compile(R"(
def f(xs: [[float]4]N) =
  mapGlb(0, row -> let(t -> reduceSeqUnroll(0.0f, (a, x) -> a + x, t),
                       toPrivate(y -> mapSeqUnroll(x -> x * 2.0f, y), row)), xs)
)");
  checkLines(program.source, {"float p2_0, p2_1, p2_2, p2_3;", "p2_0 = (in_xs[4*gl1_d0] * 2.0f);",
                              "acc3 = (acc3 + p2_3);"});
  CHECK(program.source.find("p2[") == std::string::npos);
  // Indexed at run time, the array stays an array.
  CompiledProgram loop = compile(R"(
def f(xs: [[float]4]N) =
  mapGlb(0, row -> let(t -> reduceSeq(0.0f, (a, x) -> a + x, t),
                       toPrivate(y -> mapSeq(x -> x * 2.0f, y), row)), xs)
)");
  CHECK(loop.source.find("float p2[4];") != std::string::npos);
}

TEST_CASE("each kernel estimates the private values a work-item keeps") {
  // One scalar accumulator live at a time.
  CHECK(compile("def sums(xs: [[float]8]N) = mapGlb(0, row -> reduceSeq(0.0f, (a, x) -> a + x, "
                "row), xs)")
            .kernels.at(0)
            .privateScalars == 1);
  // Reductions one after another: their accumulators are not live at once.
  CHECK(compile("def sums(xs: [[[float]4]8]N) = mapGlb(0, m -> mapSeq(row -> reduceSeq(0.0f, "
                "(b, x) -> b + x, row), m), xs)")
            .kernels.at(0)
            .privateScalars == 1);
  // A dot of float8 values: two vector operands (2 x 8) and the scalar accumulator.
  CHECK(compile("def dots(xs: [[float]16]N, ys: [[float]16]N) = mapGlb(0, p -> reduceSeq(0.0f, "
                "(a, q) -> a + dot(q._0, q._1), zip(asVector(8, p._0), asVector(8, p._1))), "
                "zip(xs, ys))")
            .kernels.at(0)
            .privateScalars == 17);
  // A private array of 6 values (an accumulator array of known size) counts in full.
  CompiledProgram withArray = compile(
      "def rows(xs: [[float]6]N) = mapGlb(0, m -> reduceSeq(mapSeq(z -> id(z), fill(6, 0.0f)), "
      "(acc, x) -> mapSeq(p -> p._0 + p._1, zip(acc, x)), m), map(r -> split(6, r), xs))");
  CHECK(withArray.kernels.at(0).privateScalars >= 6);
  // Each private array of constant size is listed with its scalars (a parameter space tells
  // arrays no register file holds from the rest by them).
  const std::vector<int64_t>& arrays = withArray.kernels.at(0).privateArrayScalars;
  CHECK(std::count(arrays.begin(), arrays.end(), int64_t{6}) >= 1);
  CHECK(compile("def sums(xs: [[float]8]N) = mapGlb(0, row -> reduceSeq(0.0f, (a, x) -> a + x, "
                "row), xs)")
            .kernels.at(0)
            .privateArrayScalars.empty());
  CompiledProgram row = compile(R"(
def f(xs: [[float]1000]N) =
  mapGlb(0, row -> let(t -> reduceSeq(0.0f, (a, x) -> a + x, t),
                       toPrivate(y -> mapSeq(x -> x * 2.0f, y), row)), xs)
)");
  CHECK(row.kernels.at(0).privateArrayScalars == std::vector<int64_t>{1000});
}

TEST_CASE("a user function named directly in a map over an earlier kernel's temporary gets it as an argument") {
  // Regression: genApplyViews read the element without noting its buffer, so the second
  // kernel used tmp1 without declaring it.
  const char* text =
      "fun twice(m: float): float = m * 2.0f\n"
      "def f(x: [[float]W]H): [[float]W]H = let(t -> map2D(twice, t), map2D(v -> v + 1.0f, x))\n";
  Definition definition = parseProgram(text).definitions.back();
  CompiledProgram program = compileToOpenCL(definition);
  REQUIRE(program.kernels.size() == 2);
  const KernelPlan& second = program.kernels[1];
  bool hasTemporary = false;
  for (const KernelArg& arg : second.args) {
    if (arg.kind == KernelArg::Kind::Buffer &&
        program.buffers[static_cast<size_t>(arg.buffer)].role == BufferPlan::Role::Temporary) {
      hasTemporary = true;
    }
  }
  CHECK(hasTemporary);
}

TEST_CASE("an accumulator every work-item keeps whole is not initialised by mapLcl") {
  // A searched matmul structure: the rows' accumulators staged by a mapLcl copy, then updated
  // by every work-item of the group on its own (no mapLcl around the reduction). Each
  // work-item would have written one element of its private accumulator and read the others
  // uninitialised: every variant gave a wrong answer on PoCL.
  const std::string error = errorOf(R"(
def matmul(A: [[float]16]16, B: [[float]16]16): [[float]16]16 =
  mapWrg(0,
    row -> join(transpose(reduceSeq(
      toLocal(copy -> mapLcl(0, x -> id(x), copy),
              join(map2D(col -> 0.0f, split(4, transpose(B))))),
      (accs, ys) -> mapSeqUnroll(p -> p._0 + dot(p._1._0, p._1._1), zip(accs, ys)),
      transpose(map(col -> zip(asVector(4, row), asVector(4, col)), transpose(B)))))),
    A)
)");
  CHECK(error.find("cannot be initialised by mapLcl") != std::string::npos);
}

TEST_CASE("a private copy under vectorize holds the lanes' vector") {
  // Found by searched variants of random programs (opencl_searched_variants): to-private on a
  // value inside a vectorised lambda declared a scalar for a float4 (a build error).
  const CompiledProgram copy = compile(R"(
def f(input: [float]8) =
  asScalar(mapGlb(0,
    lanes -> vectorize(4, x -> max(min(toPrivate(c -> id(c), x), x) + 4.0f, x), lanes),
    asVector(4, input)))
)");
  checkLines(copy.source, {"float4 a2 = vload4(0, in_input + 4*gl1_d0);", "NEXT: float4 a3 = a2;"});
  // A condition's lanes are an int vector of -1 and 0, like OpenCL's vector comparisons.
  const CompiledProgram condition = compile(R"(
def f(input: [float]8) =
  asScalar(mapGlb(0,
    lanes -> vectorize(4, x -> toPrivate(c -> id(c), x >= 1.0f) ? x : 3.0f, lanes),
    asVector(4, input)))
)");
  checkLines(condition.source, {"int4 a3 = ((a2 >= 1.0f)) ? (int4)(-1) : (int4)(0);",
                                "vstore4((a3 ? a2 : 3.0f), 0, out + 4*gl1_d0);"});
}

TEST_CASE("abs of int vectors and lanes keeps int vectors") {
  // OpenCL's abs(int4) is a uint4, which no C cast turns into an int4: its bits are taken.
  const CompiledProgram lanes = compile(R"(
def f(input: [int]8) =
  asScalar(mapGlb(0, v -> vectorize(4, x -> abs(x) * 2, v), asVector(4, input)))
)");
  CHECK(lanes.source.find("(as_int4(abs((int4)(a2))) * 2)") != std::string::npos);
  const CompiledProgram scalar = compile(R"(
def f(input: [int]8) = mapGlb(0, x -> abs(x), input)
)");
  CHECK(scalar.source.find("((int)abs(") != std::string::npos);
}

TEST_CASE("each kernel lists its global accesses with the loops around them") {
  // Work-item i maps 16 rows of 64: out and in_x at 1024 i + 64 j + k.
  CompiledProgram chunked = compile(
      "def f(x: [float]N) = join(join(mapGlb(0, chunk -> mapSeq(row -> mapSeq(a -> a * 2.0f, "
      "row), chunk), split(16, split(64, x)))))",
      {{"N", 1 << 20}});
  REQUIRE(chunked.kernels.size() == 1);
  const std::vector<GlobalAccess>& accesses = chunked.kernels[0].globalAccesses;
  REQUIRE(accesses.size() == 2);
  for (const GlobalAccess& access : accesses) {
    CAPTURE(access.buffer);
    CHECK(access.written == (access.buffer == "out"));
    CHECK(access.vectorWidth == 0);
    REQUIRE(access.loops.size() == 3);
    CHECK(access.loops[0].parallel);
    CHECK(access.loops[0].dimension == 0);
    CHECK(access.loops[0].tripCount == Arith(1024));
    CHECK_FALSE(access.loops[1].parallel);
    CHECK(access.loops[1].tripCount == Arith(16));
    CHECK(access.loops[2].tripCount == Arith(64));
    ArithBinding at = {{access.loops[0].index.varName(), 2},
                       {access.loops[1].index.varName(), 3},
                       {access.loops[2].index.varName(), 5}};
    CHECK(evaluate(access.offset, at) == 1024 * 2 + 64 * 3 + 5);
  }
  CHECK(accesses[0].buffer != accesses[1].buffer);

  // Unrolled, each copy of the body is an access of its own, its loop's index a constant.
  CompiledProgram unrolled = compile(
      "def f(x: [float]N) = join(mapGlb(0, row -> mapSeqUnroll(a -> a * 2.0f, row), "
      "split(4, x)))",
      {{"N", 64}});
  REQUIRE(unrolled.kernels.size() == 1);
  CHECK(unrolled.kernels[0].globalAccesses.size() == 8);
  for (const GlobalAccess& access : unrolled.kernels[0].globalAccesses) {
    REQUIRE(access.loops.size() == 2);
    CHECK(access.loops[1].unrolled);
    CHECK(access.loops[1].index.isConstant());
  }

  // Private and local memory are not global accesses.
  CompiledProgram staged = compile(
      "def f(x: [float]N) = join(mapWrg(0, chunk -> mapLcl(0, a -> a * 2.0f, toLocal(copy -> "
      "mapLcl(0, c -> id(c), copy), chunk)), split(64, x)))",
      {{"N", 1024}});
  REQUIRE(staged.kernels.size() == 1);
  REQUIRE(staged.kernels[0].globalAccesses.size() == 2);
  for (const GlobalAccess& access : staged.kernels[0].globalAccesses) {
    CHECK((access.buffer == "in_x" || access.buffer == "out"));
    REQUIRE(access.loops.size() == 2);
    CHECK(access.loops[0].groupIndex);
    CHECK_FALSE(access.loops[1].groupIndex);
  }
}

TEST_CASE("for analysis, unrolled loops are generated as loops and marked, not counted") {
  // A work-item doubles a row of `n` values (n a size, as a tuning parameter is for analysis).
  const std::string rows =
      "def f(x: [float]N) = join(mapGlb(0, row -> MAP(a -> a * 2.0f, row), split(n, x)))";
  auto withMap = [&](const std::string& map) {
    std::string text = rows;
    text.replace(text.find("MAP"), 3, map);
    return parseProgram(text, "test.weft").definitions.back();
  };
  CodegenOptions analysis;
  analysis.specialize = {{"N", 1024}};
  analysis.unrolledAsLoops = true;
  const CompiledProgram rolled = generateOpenCL(withMap("mapSeqUnroll"), analysis);
  const CompiledProgram looped = generateOpenCL(withMap("mapSeq"), analysis);
  CHECK(rolled.source == looped.source);
  REQUIRE(rolled.kernels.size() == 1);
  REQUIRE(looped.kernels.size() == 1);
  CHECK(rolled.kernels[0].workItemLoops == 0);
  CHECK(looped.kernels[0].workItemLoops == 1);
  for (const CompiledProgram* program : {&rolled, &looped}) {
    for (const GlobalAccess& access : program->kernels[0].globalAccesses) {
      REQUIRE(access.loops.size() == 2);
      CHECK(access.loops[1].rolled == (program == &rolled));
      CHECK_FALSE(access.loops[1].unrolled);
      CHECK_FALSE(access.loops[1].reduction);
    }
  }
  // Without the option a symbolic trip count cannot be unrolled.
  CodegenOptions kernelProper = analysis;
  kernelProper.unrolledAsLoops = false;
  CHECK_THROWS_WITH_AS(generateOpenCL(withMap("mapSeqUnroll"), kernelProper),
                       doctest::Contains("an unrolled loop needs a constant trip count"),
                       CodegenError);
  // A reduction's loop is marked as one.
  const CompiledProgram sums = compile(
      "def f(x: [float]N) = join(mapGlb(0, row -> toGlobal(r -> mapSeq(y -> id(y), r), "
      "reduceSeq(toPrivate(z -> id(z), 0.0f), (acc, p) -> acc + p, row)), split(8, x)))",
      {{"N", 64}});
  REQUIRE(sums.kernels.size() == 1);
  bool reductionRead = false;
  for (const GlobalAccess& access : sums.kernels[0].globalAccesses) {
    if (access.written) continue;
    REQUIRE(access.loops.size() == 2);
    reductionRead = access.loops[1].reduction;
  }
  CHECK(reductionRead);
  CHECK(sums.kernels[0].workItemLoops == 1);
}

TEST_CASE("a gathered vector lists what its lanes read; an unswitched copy of a loop lists none") {
  // Columns of m read as vectors of 4: each lane is a scalar read 8 values after the last.
  const CompiledProgram gathered = compile(R"(
def f(m: [[float]8]8) =
  mapGlb(0, col -> asScalar(mapSeq(v -> vectorize(4, x -> x * 2.0f, v), asVector(4, col))),
         transpose(m))
)");
  REQUIRE(gathered.kernels.size() == 1);
  std::vector<int64_t> lanes;
  for (const GlobalAccess& access : gathered.kernels[0].globalAccesses) {
    if (access.buffer != "in_m") continue;
    CHECK_FALSE(access.written);
    CHECK(access.vectorWidth == 0);
    REQUIRE(access.loops.size() == 2);
    lanes.push_back(evaluate(access.offset, {{access.loops[0].index.varName(), 1},
                                             {access.loops[1].index.varName(), 1}}));
  }
  std::sort(lanes.begin(), lanes.end());
  CHECK(lanes == std::vector<int64_t>{33, 41, 49, 57});

  // Three rows of a constant pad: the channel loop is emitted once per outcome of the two
  // guards, and a launch runs one of those copies: the reads are listed once.
  const CompiledProgram unswitched = compile(R"(
def windowSum(xs: [[float]C]N) =
  mapGlb(0, t -> reduceSeq(0.0f, (acc, p) -> acc + p._0 + p._1 + p._2, zip(t._0, t._1, t._2)),
         zip(crop(0, 2, pad(1, 1, constant(2.5f), xs)), crop(1, 1, pad(1, 1, constant(2.5f), xs)),
             crop(2, 0, pad(1, 1, constant(2.5f), xs))))
)",
                                             {{"N", 16}, {"C", 8}});
  REQUIRE(unswitched.kernels.size() == 1);
  CHECK(unswitched.source.find("} else {") != std::string::npos);
  int reads = 0;
  for (const GlobalAccess& access : unswitched.kernels[0].globalAccesses) {
    if (!access.written) ++reads;
  }
  CHECK(reads == 3);
}
