// mapSeqSlide (a sliding window, codegen/statements.cpp genMapSeqSlide) generated and run on the
// default OpenCL device against the interpreter, sizes symbolic and specialised: a window of
// scalars over a 1-D array in one work-item, a window of rows walked down column strips (a work-
// item per strip, the line buffering of an image pipeline), a window of the rows of a 1x3 stencil
// (the producer itself reads windows), a window of whole rows computed as vectors (line
// buffering along rows: a ring of rows in a private array, vector stores into it and loads
// from it, the clamp-padded row's taps as guarded vector reads), and a window of one element;
// output counts that the
// window size divides and that leave a remainder. Where every use of the window
// has a constant index (the taps unrolled), it lives in registers: no private array is declared
// for it, and each producer value is computed once per work-item (one producer call per window
// step in the loop). Label opencl.
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/opencl_program_check.h"
#include "tests/support/random_values.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

std::vector<std::string> checkRuns(const std::string& text, const ArithBinding& sizes) {
  return testing::checkProgramTextAgainstInterpreter(context(), text, "map_seq_slide.weft", sizes, 23);
}

// Occurrences of `pattern` in `text`.
size_t count(const std::string& text, const std::string& pattern) {
  size_t n = 0;
  for (size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1)) {
    ++n;
  }
  return n;
}

// Whether the window is declared as a private array (float winN[...]), not as variables.
bool windowArray(const std::string& source) {
  return std::regex_search(source, std::regex(R"(float win[0-9]+\[)"));
}

// `definition` (one image parameter) generated with its sizes specialised (a ring of whole
// rows is a private array of their length) and run against the interpreter on random inputs
// (seed `seed`); the compiled program.
CompiledProgram checkSpecialisedRun(const Definition& definition, const ArithBinding& sizes,
                                    uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::vector<Value> inputs = {
      testing::randomValue(definition.function.params()[0].paramType(), sizes, rng, {true})};
  const Value expected = interpret(definition, inputs, sizes);
  CodegenOptions options;
  options.specialize = sizes;
  const CompiledProgram compiled = generateOpenCL(definition, options);
  CAPTURE(compiled.source);
  const host::RunResult run = host::runProgram(context(), compiled, inputs, sizes);
  CHECK_MESSAGE(approximatelyEqual(run.output, expected, 1e-5, 1e-5),
                "max difference " << maxAbsDifference(run.output, expected));
  return compiled;
}

}  // namespace

TEST_CASE("a window of scalars over a 1-D array") {
  const auto sources = checkRuns(R"(
fun triple(x: float): float = x * 3.0f - 1.0f
def f(xs: [float]N): [float](N - 4) =
  join(mapSeqSlide(5, w -> reduceSeqUnroll(0.0f, (a, v) -> a + v * v, w), x -> triple(x), xs))
)",
                                 {{"N", 29}});
  for (const std::string& source : sources) CHECK(!windowArray(source));
  // triple: its definition, 4 calls before the loop and, with symbolic sizes, 1 in the loop
  // (the window shifted after each output); specialised, 5 in the loop body unrolled over the
  // ring's 5 slots (25 outputs: 5 iterations, no remainder).
  REQUIRE(sources.size() == 2);
  CHECK(count(sources[0], "uf_triple(") == 6);
  CHECK(count(sources[1], "uf_triple(") == 10);
  CHECK(sources[1].find("< 5;") != std::string::npos);
}

TEST_CASE("a window of rows walked down column strips, a work-item per strip") {
  const auto sources = checkRuns(R"(
def colsum(img: [[float]W]H): [[float]W](H - 2) =
  map(row -> join(row), transpose(
    mapGlb(0,
      strip -> mapSeqSlide(3,
        win -> join(mapSeqUnroll(c -> reduceSeqUnroll(0.0f, (a, v) -> a + v, c), transpose(win))),
        row -> mapSeqUnroll(x -> x * 2.0f + 1.0f, row),
        strip),
      transpose(map(row -> split(4, row), img)))))
)",
                                 {{"W", 24}, {"H", 19}});
  for (const std::string& source : sources) {
    CHECK(!windowArray(source));
    CHECK(source.find("for (") != std::string::npos);  // the walk down the strip is a loop
  }
}

TEST_CASE("a window of the rows of a 1x3 stencil, clamp-padded (blur's two stages)") {
  checkRuns(R"(
fun mean3(a: float, b: float, c: float): float = (a + b + c) / 3.0f
def blur(img: [[float]W]H): [[float]W]H =
  map(row -> join(row), transpose(
    mapGlb(0,
      strip -> mapSeqSlide(3,
        win -> join(mapSeqUnroll(
          c -> mapSeqUnroll(t -> mean3(t._0, t._1, t._2),
                            zip(crop(0, 2, c), crop(1, 1, c), crop(2, 0, c))),
          transpose(win))),
        row -> mapSeqUnroll(
          t -> mean3(t._0, t._1, t._2),
          zip(crop(0, 2, row), crop(1, 1, row), crop(2, 0, row))),
        strip),
      transpose(map(row -> slide(6, 4, row),
                    pad(1, 1, clamp, map(row -> pad(1, 1, clamp, row), img)))))))
)",
            {{"W", 20}, {"H", 11}});
}

TEST_CASE("a window of one element is a map of g then f") {
  checkRuns(R"(
def one(xs: [float]N): [float]N =
  join(mapSeqSlide(1, w -> mapSeqUnroll(v -> v + 1.0f, w), x -> x * x, xs))
)",
            {{"N", 7}});
}

TEST_CASE("a window of whole rows computed as vectors: line buffering along rows") {
  // A 5x5 separable blur over C planes, strips of 4 rows a work-item: each row of the 1x5 blur
  // computed once, 8 pixels at a time (its taps as overlapping vectors of the clamp-padded
  // row), into a ring of 5 whole rows; the 5x1 blur of each output row read from the ring as
  // vectors too. The ring is a private array the vectors are stored into and loaded from, so
  // its rows' length must be known: the sizes are specialised (symbolic, code generation says
  // so).
  const std::string text = (R"(
fun gauss5(a: float, b: float, c: float, d: float, e: float): float =
  (a + 4.0f * b + 6.0f * c + 4.0f * d + e) / 16.0f
def blur5(input: [[[float]W]H]C): [[[float]W]H]C =
  mapGlb(1, plane ->
    join(mapGlb(0, strip ->
      mapSeqSlide(5,
        w -> asScalar(mapSeq(
               lanes -> vectorize(8, (a, b, c, d, e) -> gauss5(a, b, c, d, e),
                                  lanes._0, lanes._1, lanes._2, lanes._3, lanes._4),
               zip(asVector(8, join(crop(0, 4, w))), asVector(8, join(crop(1, 3, w))),
                   asVector(8, join(crop(2, 2, w))), asVector(8, join(crop(3, 1, w))),
                   asVector(8, join(crop(4, 0, w)))))),
        row -> let(p -> asScalar(mapSeq(
                          lanes -> vectorize(8, (a, b, c, d, e) -> gauss5(a, b, c, d, e),
                                             lanes._0, lanes._1, lanes._2, lanes._3, lanes._4),
                          zip(asVector(8, crop(0, 4, p)), asVector(8, crop(1, 3, p)),
                              asVector(8, crop(2, 2, p)), asVector(8, crop(3, 1, p)),
                              asVector(8, crop(4, 0, p))))),
                   pad(2, 2, clamp, row)),
        strip),
      slideStrict(8, 4, pad2D(0, 0, 2, 2, clamp, plane)))),
  input)
)");
  const Definition definition = parseProgram(text, "map_seq_slide.weft").definitions.back();
  const CompiledProgram compiled =
      checkSpecialisedRun(definition, {{"W", 32}, {"H", 12}, {"C", 2}}, 23);
  CHECK(windowArray(compiled.source));
  CHECK(compiled.source.find("vstore8(uf_gauss5_v8(") != std::string::npos);
  // The row's taps: one vector read where the clamps stay inside, lanes one by one at the ends.
  CHECK(compiled.source.find(") ? vload8(0, in_input") != std::string::npos);
  CHECK_THROWS_WITH_AS(generateOpenCL(definition, CodegenOptions{}),
                       doctest::Contains("a private array needs a size known at compile time"),
                       std::exception);
}

TEST_CASE("a window of whole rows of (value, pixel) pairs: the zip written into the ring") {
  // Unsharp mask line-buffered: each row gives the 1x5 blur and the input pixel as a pair of
  // rows (zip), stored into the ring's two component arrays directly (no temporary in global
  // memory); the output row is the mask of the pixel, the 5x1 blur and its sharpening.
  const std::string text = (R"(
fun gauss5(a: float, b: float, c: float, d: float, e: float): float =
  (a + 4.0f * b + 6.0f * c + 4.0f * d + e) / 16.0f
fun sharpen(pixel: float, blurred: float): float = pixel * 4.0f - blurred * 3.0f
fun mask(pixel: float, blurred: float, sharpened: float): float =
  abs(pixel - blurred) < 0.001f ? pixel : sharpened
def unsharp(input: [[[float]W]H]C): [[[float]W]H]C =
  mapGlb(1, plane ->
    join(mapGlb(0, strip ->
      mapSeqSlide(5,
        w -> asScalar(mapSeq(
               lanes -> vectorize(8,
                 (a, b, c, d, e, p) -> mask(p, gauss5(a, b, c, d, e), sharpen(p, gauss5(a, b, c, d, e))),
                 lanes._0, lanes._1, lanes._2, lanes._3, lanes._4, lanes._5),
               zip(asVector(8, map(q -> q._0, join(crop(0, 4, w)))),
                   asVector(8, map(q -> q._0, join(crop(1, 3, w)))),
                   asVector(8, map(q -> q._0, join(crop(2, 2, w)))),
                   asVector(8, map(q -> q._0, join(crop(3, 1, w)))),
                   asVector(8, map(q -> q._0, join(crop(4, 0, w)))),
                   asVector(8, map(q -> q._1, join(crop(2, 2, w))))))),
        row -> let(p -> zip(asScalar(mapSeq(
                          lanes -> vectorize(8, (a, b, c, d, e) -> gauss5(a, b, c, d, e),
                                             lanes._0, lanes._1, lanes._2, lanes._3, lanes._4),
                          zip(asVector(8, crop(0, 4, p)), asVector(8, crop(1, 3, p)),
                              asVector(8, crop(2, 2, p)), asVector(8, crop(3, 1, p)),
                              asVector(8, crop(4, 0, p))))),
                        crop(2, 2, p)),
                   pad(2, 2, clamp, row)),
        strip),
      slideStrict(8, 4, pad2D(0, 0, 2, 2, clamp, plane)))),
  input)
)");
  const CompiledProgram compiled =
      checkSpecialisedRun(parseProgram(text, "map_seq_slide.weft").definitions.back(),
                          {{"W", 24}, {"H", 8}, {"C", 2}}, 29);
  CHECK(compiled.buffers.size() == 2);  // the input and the output: no temporary
  CHECK(compiled.source.find("vstore8(uf_gauss5_v8(") != std::string::npos);
}
