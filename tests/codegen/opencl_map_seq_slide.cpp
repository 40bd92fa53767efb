// mapSeqSlide (a sliding window, codegen/statements.cpp genMapSeqSlide) generated and run on the
// default OpenCL device against the interpreter, sizes symbolic and specialised: a window of
// scalars over a 1-D array in one work-item, a window of rows walked down column strips (a work-
// item per strip, the line buffering of an image pipeline), a window of the rows of a 1x3 stencil
// (the producer itself reads windows), and a window of one element; output counts that the
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
