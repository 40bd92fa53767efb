// Writing a computed crop through its inverse: a kernel's result computed over more elements
// than are kept (crop(l, r, mapGlb(...)), in one dimension and in two, under transposes and
// inside a map of rows) is stored straight into the smaller destination, each store guarded so
// that the surplus elements are dropped, instead of being computed into a temporary and copied
// by a crop kernel. A vector stored through a crop of its scalars is one vector store where no
// lane's guard fires, and lane by lane, each under its own guard, where one does. Each program is checked against the interpreter on random inputs, with
// sizes symbolic and specialised, and the output buffer's surroundings are not written (the
// runner's output is exactly the cropped size). Stores provably outside the crop (unrolled
// updates of padded accumulators) are not emitted. Label opencl.
#include <doctest/doctest.h>

#include <random>
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

// Runs the program, symbolic and specialised, against the interpreter, as one kernel (the crop
// is written through, not copied by a kernel of its own); returns the sources.
std::vector<std::string> checkRuns(const std::string& text, const ArithBinding& sizes) {
  return testing::checkProgramTextAgainstInterpreter(context(), text, "crop_write.weft", sizes, 17);
}

}  // namespace

TEST_CASE("a 1-D crop of a kernel's result is written through guarded stores") {
  const auto sources = checkRuns(R"(
def f(xs: [float]N) =
  crop(2, 3, mapGlb(0, x -> x * 2.0f + 1.0f, pad(0, 5, clamp, xs)))
)",
                                 {{"N", 37}});
  for (const std::string& source : sources) CHECK(source.find("if (!(") != std::string::npos);
}

TEST_CASE("a 2-D crop under transposes, written through a map of rows") {
  // [H+2][W+3] computed per pixel, cropped to [H][W] (the bottom rows, the right columns),
  // then stored transposed: the crop sits between the kernel and two layout steps.
  checkRuns(R"(
def g(xs: [[float]W]H) =
  transpose(crop(0, 2, map(row -> crop(0, 3, row),
    mapGlb(1, row -> mapGlb(0, x -> x * x, row),
           pad(0, 2, clamp, map(row -> pad(0, 3, clamp, row), xs))))))
)",
            {{"H", 13}, {"W", 11}});
}

TEST_CASE("vectors stored through a crop of their scalars: whole inside, lane by lane past it") {
  // Rows of 4·(⌈N/4⌉) values computed as float4 vectors, the last few cropped.
  const auto sources = checkRuns(R"(
def h(xs: [float]N) =
  crop(0, 3, asScalar(mapGlb(0, v -> v * 3.0f, asVector(4, pad(0, 3, clamp, xs)))))
)",
                                 {{"N", 21}});
  for (const std::string& source : sources) {
    // One vector store under the guard of the lanes that may lie past the end, else the lanes.
    const size_t whole = source.find("vstore4(");
    const size_t otherwise = source.find("} else {");
    CHECK(whole != std::string::npos);
    CHECK(otherwise != std::string::npos);
    CHECK(whole < otherwise);
    CHECK(source.find(".s3;", otherwise) != std::string::npos);
  }
}

TEST_CASE("a crop that provably keeps every written element needs no guard") {
  // crop(0, 0): the written range is the destination's.
  const auto sources = checkRuns(R"(
def k(xs: [float]N) =
  crop(0, 0, mapGlb(0, x -> x + 1.0f, xs))
)",
                                 {{"N", 9}});
  for (const std::string& source : sources) CHECK(source.find("if (!(") == std::string::npos);
}

TEST_CASE("unrolled stores provably outside a crop are dropped, not guarded") {
  // Four accumulators updated by an unrolled map over the padded pairs (as pad-for-tiling
  // leaves a register block): the two padded updates write past the crop, into accumulators
  // that do not exist, so they are not emitted at all.
  const auto sources = checkRuns(R"(
def u(xs: [[float]4]N, ys: [float]M) =
  mapGlb(0, y -> reduceSeq(fill(4, 0.0f),
    (accs, x) -> crop(0, 2, mapSeqUnroll(q -> q._0 + q._1 * y, pad(0, 2, clamp, zip(accs, x)))),
    xs), ys)
)",
                                 {{"N", 5}, {"M", 3}});
  for (const std::string& source : sources) CHECK(source.find("if (!(") == std::string::npos);
}
