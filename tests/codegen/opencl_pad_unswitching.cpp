// Code generation's loop unswitching of constant-pad guards on OpenCL: a channel loop whose
// body reads a window of rows through pad(constant(2.5f)) is emitted once per outcome of the
// window's guards when there are at most four of them (a firing guard's reads become the pad
// value itself, none is guarded inside a loop), and as an unguarded plus a guarded copy
// beyond. Each is checked against the interpreter on random inputs, with sizes symbolic and
// specialised; the pad value is not 0, so a firing copy that dropped or zeroed its reads
// would show. Label opencl.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/codegen.h"
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

// out[i] = Σ_c Σ_k rows[i + k][c] over the 2P+1 rows around i of xs padded by P rows of 2.5
// (row i + k - P of xs; components k != P have a guard each that does not depend on c).
std::string windowSum(int padding) {
  const std::string padded = "pad(" + std::to_string(padding) + ", " + std::to_string(padding) +
                             ", constant(2.5f), xs)";
  std::string sum = "acc", rows, components;
  for (int k = 0; k <= 2 * padding; ++k) {
    sum += " + p._" + std::to_string(k);
    components += std::string(k ? ", " : "") + "t._" + std::to_string(k);
    rows += std::string(k ? ", " : "") + "crop(" + std::to_string(k) + ", " +
            std::to_string(2 * padding - k) + ", " + padded + ")";
  }
  return "def windowSum(xs: [[float]C]N) =\n"
         "  mapGlb(0, t -> reduceSeq(0.0f, (acc, p) -> " +
         sum + ", zip(" + components + ")), zip(" + rows + "))\n";
}

// Runs the program for N rows of C channels, symbolic and specialised; returns the sources.
std::vector<std::string> checkRuns(const std::string& text, int64_t rows, int64_t channels) {
  const Definition definition = parseProgram(text, "window_sum.weft").definitions.back();
  const ArithBinding sizes{{"N", rows}, {"C", channels}};
  std::mt19937_64 rng(static_cast<uint64_t>(rows * 131 + channels));
  const std::vector<Value> inputs{
      testing::randomValue(definition.function.params()[0].paramType(), sizes, rng, {true})};
  const Value expected = interpret(definition, inputs, sizes);
  return testing::checkSymbolicAndSpecialised(context(), definition, inputs, sizes, expected,
                                              1e-4);
}

}  // namespace

TEST_CASE("two guards per window: one copy of the channel loop per outcome, none guarded") {
  for (const auto& [rows, channels] : std::vector<std::pair<int64_t, int64_t>>{{9, 5}, {1, 3}}) {
    CAPTURE(rows);
    for (const std::string& source : checkRuns(windowSum(1), rows, channels)) {
      CHECK(source.find("? 2.5f :") == std::string::npos);  // no guard inside a loop
      CHECK(source.find("+ 2.5f)") != std::string::npos);   // a firing copy adds the pad value
      CHECK(source.find("} else {") != std::string::npos);
    }
  }
}

TEST_CASE("six guards per window: an unguarded copy and a guarded one") {
  for (const auto& [rows, channels] : std::vector<std::pair<int64_t, int64_t>>{{11, 4}, {2, 3}}) {
    CAPTURE(rows);
    for (const std::string& source : checkRuns(windowSum(3), rows, channels)) {
      CHECK(source.find("? 2.5f :") != std::string::npos);
      CHECK(source.find("} else {") != std::string::npos);
    }
  }
}
