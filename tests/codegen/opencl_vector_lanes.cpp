// Lanes of an array of vectors read at an index known only at run time: OpenCL C allows only
// constant components (.s0 .. .sf), so the vectors are read as an array of their scalars
// through a cast pointer (codegen/views.cpp). A vectorised sum (vectorize-sum) lowered by
// default reads its vector accumulator's lanes in a loop this way; before, such programs failed
// to generate (146 of the 269 structures the search gave a row-wise softmax). Each program is
// checked against the interpreter on random inputs, sizes symbolic and specialised. Label
// opencl.
#include <doctest/doctest.h>

#include <string>

#include "codegen/compile_pipeline.h"
#include "host/program_runner.h"
#include "ir/parser.h"
#include "tests/support/opencl_program_check.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

std::string sourceOf(const std::string& text, const ArithBinding& sizes) {
  const Definition definition = parseProgram(text, "lanes.weft").definitions.back();
  return compileToOpenCL(definition, sizes).source;
}

}  // namespace

TEST_CASE("a vectorised sum reads its accumulator's lanes in a loop") {
  // vectorize-sum's result: float4 partial sums, then their lanes summed.
  const std::string text =
      "def vsum(x: [float]N): [float]1 =\n"
      "  reduce(0.0f, (a, y) -> a + y,\n"
      "         asScalar(join(reduce(asVector(4, fill(4, 0.0f)),\n"
      "                              (accs, ys) -> map(q -> q._0 + q._1, zip(accs, ys)),\n"
      "                              split(1, asVector(4, x))))))\n";
  for (int64_t n : {4, 64, 1028}) {
    CAPTURE(n);
    testing::checkProgramTextAgainstInterpreter(context(), text, "lanes.weft", {{"N", n}}, 3);
  }
  CHECK(sourceOf(text, {{"N", 64}}).find("((private float*)") != std::string::npos);
}

TEST_CASE("lanes of several vector accumulators, read row by row") {
  // Each row's sum from float4 partial sums: the lane loop runs inside a parallel map, over
  // an array of two vectors (8 lanes) per row.
  const std::string text =
      "def rows(x: [[float]N]M): [[float]1]M =\n"
      "  map(row -> reduce(0.0f, (a, y) -> a + y,\n"
      "                    asScalar(join(reduce(asVector(4, fill(8, 0.0f)),\n"
      "                                         (accs, ys) -> map(q -> q._0 + q._1, zip(accs, "
      "ys)),\n"
      "                                         split(2, asVector(4, row)))))),\n"
      "      x)\n";
  testing::checkProgramTextAgainstInterpreter(context(), text, "lanes.weft", {{"M", 5}, {"N", 24}},
                                              3);
  CHECK(sourceOf(text, {{"M", 5}, {"N", 24}}).find("((private float*)") != std::string::npos);
}
