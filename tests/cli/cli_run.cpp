// End-to-end tests of `weft run`: the binary ($WEFT_BINARY) runs examples/dot.weft,
// examples/conv.weft (with its declared padding P = 0 and 1) and small programs written here
// on .npy inputs (written with ir/npy.h in a temporary directory); the result file is read
// back and checked, and every user error is checked for exit code 1 and a message that says
// what is wrong.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ir/npy.h"
#include "tests/support/npy_inputs.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;
using weft::testing::writeFloats;
using weft::testing::writeInts;

namespace {

const char* const kDotExample = "examples/dot.weft";

}  // namespace

TEST_CASE("weft run computes examples/dot.weft on .npy inputs") {
  REQUIRE(fs::exists(kDotExample));
  TempDir dir("weft_cli_run");
  std::string a = writeFloats(dir, "a.npy", {4}, {1, 2, 3, 4});
  std::string b = writeFloats(dir, "b.npy", {4}, {0.5f, -1, 2, 3});
  std::string y = dir.file("y.npy");
  CommandResult result = runWeft({"run", kDotExample, "--in", a, "--in", b, "--out", y});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output, "result shape (1,) float32"));
  CHECK(contains(result.output, "N=4"));
  CHECK(contains(result.output, "written to " + y));
  NpyArray output = readNpy(y);
  CHECK(output.dtype == NpyDType::Float32);
  CHECK(output.shape == std::vector<int64_t>{1});
  REQUIRE(output.f32.size() == 1);
  CHECK(output.f32[0] == doctest::Approx(0.5 - 2 + 6 + 12));

  // Several files after one --in, and --print.
  CommandResult printed = runWeft({"run", kDotExample, "--in", a, b, "--print"});
  INFO(printed.output);
  CHECK(printed.exitCode == 0);
  CHECK(contains(printed.output, "[16.5]"));
}

TEST_CASE("weft run reports user errors with exit code 1 and a clear message") {
  REQUIRE(fs::exists(kDotExample));
  TempDir dir("weft_cli_run");
  std::string a = writeFloats(dir, "a.npy", {4}, {1, 2, 3, 4});
  std::string shortB = writeFloats(dir, "short.npy", {3}, {1, 2, 3});
  std::string matrix = writeFloats(dir, "matrix.npy", {2, 2}, {1, 2, 3, 4});
  std::string integers = writeInts(dir, "ints.npy", {4}, {1, 2, 3, 4});

  auto expectError = [](const std::vector<std::string>& args, const std::string& message) {
    CommandResult result = runWeft(args);
    INFO(result.output);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "weft: "));
    CHECK(contains(result.output, message));
  };
  SUBCASE("missing input file") {
    expectError({"run", kDotExample, "--in", a, "--in", dir.file("missing.npy")},
                dir.file("missing.npy") + ": cannot open");
  }
  SUBCASE("wrong rank") {
    expectError({"run", kDotExample, "--in", a, "--in", matrix},
                "parameter 'b' of type [float]N: expected an array with 1 dimension(s), found "
                "shape (2, 2)");
  }
  SUBCASE("lengths that disagree") {
    expectError({"run", kDotExample, "--in", a, "--in", shortB},
                "parameter 'b' dimension 1: expected length N = 4 from parameter 'a' dimension 1, "
                "found 3");
  }
  SUBCASE("wrong dtype") {
    expectError({"run", kDotExample, "--in", a, "--in", integers},
                "expected float32 data, found int32");
  }
  SUBCASE("wrong number of inputs") {
    expectError({"run", kDotExample, "--in", a}, "takes 2 input(s)");
  }
  SUBCASE("unknown definition") {
    expectError({"run", kDotExample, "--def", "nope", "--in", a, "--in", a},
                "no definition named 'nope'; the file defines: dot");
  }
  SUBCASE("a --size that contradicts the inputs") {
    expectError({"run", kDotExample, "--in", a, "--in", a, "--size", "N=5"},
                "expected length N = 5");
  }
  SUBCASE("a --size that is not a size of the program") {
    expectError({"run", kDotExample, "--in", a, "--in", a, "--size", "Q=5"},
                "has no size variable Q");
  }
  SUBCASE("a malformed --size") {
    expectError({"run", kDotExample, "--in", a, "--in", a, "--size", "N"}, "expected NAME=INTEGER");
  }
  SUBCASE("a file that does not exist") {
    expectError({"run", dir.file("nothing.weft"), "--in", a}, "nothing.weft");
  }
}

TEST_CASE("weft run binds declared sizes: examples/conv.weft with padding 0 and 1") {
  // One 2x2 kernel of ones with bias 0.5 over a 3x3 one-channel image holding 1..9.
  const char* const conv = "examples/conv.weft";
  REQUIRE(fs::exists(conv));
  TempDir dir("weft_cli_run");
  std::string weights = writeFloats(dir, "w.npy", {1, 2, 2, 1}, {1, 1, 1, 1});
  std::string biases = writeFloats(dir, "b.npy", {1}, {0.5f});
  std::string input = writeFloats(dir, "in.npy", {3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  std::string y = dir.file("y.npy");

  // P = 0 is in the declared range [P >= 0]: no padding, 2x2 windows give a 2x2 result.
  CommandResult unpadded = runWeft(
      {"run", conv, "--in", weights, biases, input, "--size", "P=0", "--size", "S=1", "--out", y});
  INFO(unpadded.output);
  REQUIRE(unpadded.exitCode == 0);
  CHECK(contains(unpadded.output, "P=0"));
  NpyArray output = readNpy(y);
  CHECK(output.shape == std::vector<int64_t>{1, 2, 2});
  CHECK(output.f32 == std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f});

  // P = 1: a border of zeros, 4x4 windows; the corner window sees only the 1.
  CommandResult padded = runWeft(
      {"run", conv, "--in", weights, biases, input, "--size", "P=1", "--size", "S=1", "--out", y});
  INFO(padded.output);
  REQUIRE(padded.exitCode == 0);
  output = readNpy(y);
  CHECK(output.shape == std::vector<int64_t>{1, 4, 4});
  REQUIRE(output.f32.size() == 16);
  CHECK(output.f32[0] == 1.5f);
  CHECK(output.f32[5] == 12.5f);
  CHECK(output.f32[15] == 9.5f);

  // Values outside the declared ranges are refused with the range.
  CommandResult negative =
      runWeft({"run", conv, "--in", weights, biases, input, "--size", "P=-1", "--size", "S=1"});
  INFO(negative.output);
  CHECK(negative.exitCode == 1);
  CHECK(contains(negative.output, "size P = -1 is outside its declared range [0, inf)"));
  CommandResult zeroStride =
      runWeft({"run", conv, "--in", weights, biases, input, "--size", "P=0", "--size", "S=0"});
  INFO(zeroStride.output);
  CHECK(zeroStride.exitCode == 1);
  CHECK(contains(zeroStride.output, "size S = 0 is outside its declared range [1, inf)"));

  // An undeclared size stays at least 1.
  std::string program = dir.write("pad.weft", "def padded(xs: [float]N) = pad(P, P, clamp, xs)\n");
  CommandResult undeclared =
      runWeft({"run", program, "--in", writeFloats(dir, "x.npy", {2}, {1, 2}), "--size", "P=0"});
  INFO(undeclared.output);
  CHECK(undeclared.exitCode == 1);
  CHECK(contains(undeclared.output,
                 "size P = 0 is outside its range [1, inf); sizes are at least 1 unless declared "
                 "otherwise, e.g. def padded[P >= 0](...)"));
}

TEST_CASE("weft run picks a definition and converts nested, int and vector types") {
  TempDir dir("weft_cli_run");
  std::string program = dir.write("prog.weft",
                                  "def flip(m: [[float]W]H) = transpose(m)\n"
                                  "def squares(v: [float4]N) = map(x -> dot(x, x), v)\n"
                                  "def ints(xs: [int]N) = map(x -> x * 3 - 1, xs)\n"
                                  "def chunks(xs: [float]N) = split(K, xs)\n"
                                  "def scale(s: float, xs: [float]N) = map(x -> x * s, xs)\n"
                                  "def vectors(xs: [float]N) = asVector(4, xs)\n"
                                  "def total(xs: [int]N) = reduce(0, (a, x) -> a + x, xs)\n");
  std::string matrix = writeFloats(dir, "matrix.npy", {2, 3}, {1, 2, 3, 4, 5, 6});
  std::string y = dir.file("y.npy");

  SUBCASE("the last definition is the default") {
    std::string xs = writeInts(dir, "xs.npy", {3}, {1, 2, 3});
    CommandResult result = runWeft({"run", program, "--in", xs, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    NpyArray output = readNpy(y);
    CHECK(output.dtype == NpyDType::Int32);
    CHECK(output.shape == std::vector<int64_t>{1});
    CHECK(output.i32 == std::vector<int32_t>{6});
  }
  SUBCASE("a 2D input: shape (H, W)") {
    CommandResult result = runWeft({"run", program, "--def", "flip", "--in", matrix, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    CHECK(contains(result.output, "H=2 W=3"));
    NpyArray output = readNpy(y);
    CHECK(output.shape == std::vector<int64_t>{3, 2});
    CHECK(output.f32 == std::vector<float>{1, 4, 2, 5, 3, 6});
  }
  SUBCASE("a vector element type takes a trailing dimension") {
    std::string v = writeFloats(dir, "v.npy", {2, 4}, {1, 1, 1, 1, 1, 2, 3, 4});
    CommandResult result = runWeft({"run", program, "--def", "squares", "--in", v, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    NpyArray output = readNpy(y);
    CHECK(output.shape == std::vector<int64_t>{2});
    CHECK(output.f32 == std::vector<float>{4, 30});

    std::string wrongWidth = writeFloats(dir, "w.npy", {2, 3}, {1, 1, 1, 1, 1, 1});
    CommandResult error = runWeft({"run", program, "--def", "squares", "--in", wrongWidth});
    INFO(error.output);
    CHECK(error.exitCode == 1);
    CHECK(contains(error.output,
                   "the last dimension holds the lanes of float4 and must be 4, "
                   "found shape (2, 3)"));
  }
  SUBCASE("int inputs and results") {
    std::string xs = writeInts(dir, "xs.npy", {3}, {0, 1, -2});
    CommandResult result = runWeft({"run", program, "--def", "ints", "--in", xs, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    NpyArray output = readNpy(y);
    CHECK(output.dtype == NpyDType::Int32);
    CHECK(output.i32 == std::vector<int32_t>{-1, 2, -7});
  }
  SUBCASE("a scalar parameter takes a 0-d array") {
    std::string factor = writeFloats(dir, "s.npy", {}, {2.5f});
    std::string xs = writeFloats(dir, "xs.npy", {2}, {1, -2});
    CommandResult result =
        runWeft({"run", program, "--def", "scale", "--in", factor, xs, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    CHECK(readNpy(y).f32 == std::vector<float>{2.5f, -5.0f});

    CommandResult error = runWeft({"run", program, "--def", "scale", "--in", xs, xs});
    INFO(error.output);
    CHECK(error.exitCode == 1);
    CHECK(contains(error.output,
                   "parameter 's' of type float: expected a single value (a "
                   "0-d array), found shape (2,)"));
  }
  SUBCASE("vector results become a trailing dimension") {
    std::string xs = writeFloats(dir, "xs.npy", {8}, {0, 1, 2, 3, 4, 5, 6, 7});
    CommandResult result = runWeft({"run", program, "--def", "vectors", "--in", xs, "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    NpyArray output = readNpy(y);
    CHECK(output.shape == std::vector<int64_t>{2, 4});
    CHECK(output.f32 == std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  }
  SUBCASE("a size not bound by the inputs comes from --size") {
    std::string xs = writeFloats(dir, "xs.npy", {6}, {0, 1, 2, 3, 4, 5});
    CommandResult result =
        runWeft({"run", program, "--def", "chunks", "--in", xs, "--size", "K=2", "--out", y});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    NpyArray output = readNpy(y);
    CHECK(output.shape == std::vector<int64_t>{3, 2});

    CommandResult missing = runWeft({"run", program, "--def", "chunks", "--in", xs});
    INFO(missing.output);
    CHECK(missing.exitCode == 1);
    CHECK(contains(missing.output, "split: size argument K"));

    CommandResult notDividing =
        runWeft({"run", program, "--def", "chunks", "--in", xs, "--size", "K=4"});
    INFO(notDividing.output);
    CHECK(notDividing.exitCode == 1);
    CHECK(contains(notDividing.output, "split: split size 4 does not divide the length 6"));
  }
}

TEST_CASE("weft run --help explains the command with an example") {
  CommandResult result = runWeft({"run", "--help"});
  CHECK(result.exitCode == 0);
  CHECK(contains(result.output, "--in"));
  CHECK(contains(result.output, "--size"));
  CHECK(contains(result.output, "Example:"));
  CHECK(contains(result.output, "weft run examples/dot.weft"));
}
