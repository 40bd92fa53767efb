// Scalar code under vectorize (codegen/scalar_gen.cpp, codegen/user_functions.cpp): a lambda's
// body is generated once with the lanes' vectors for its scalars, so conversions, abs of ints,
// conditions and private copies must be written for vectors (OpenCL's C casts do not convert
// vector types, abs(int4) is a uint4, a vector comparison gives an int vector of -1 and 0),
// also where an operand is a scalar from outside the vectorised lambda. Each program runs on
// the default device and must give the interpreter's values exactly (whole numbers). Label
// opencl.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

// Ints in [-9, 9] and floats of a quarter's steps in [-3, 3], n of each.
std::vector<Value> inputs(size_t n) {
  std::mt19937_64 rng(20261130);
  std::vector<Value> ints, floats;
  for (size_t i = 0; i < n; ++i) {
    ints.push_back(Value::ofInt(std::uniform_int_distribution<int>(-9, 9)(rng)));
    floats.push_back(Value::ofFloat(
        0.25f * static_cast<float>(std::uniform_int_distribution<int>(-12, 12)(rng))));
  }
  return {Value::array(ints), Value::array(floats)};
}

void checkLikeInterpreter(const std::string& text) {
  CAPTURE(text);
  const Definition definition = parseProgram(text, "lanes.weft").definitions.back();
  const std::vector<Value> in = inputs(16);
  const ArithBinding sizes = {{"N", 16}};
  const CompiledProgram compiled = generateOpenCL(definition, CodegenOptions{});
  CAPTURE(compiled.source);
  const Value expected = interpret(definition, in, sizes);
  const host::RunResult run = host::runProgram(context(), compiled, in, sizes);
  CHECK(run.output.toString() == expected.toString());
}

}  // namespace

TEST_CASE("conversions of vector lanes: ints, floats and conditions") {
  checkLikeInterpreter(R"(
def f(xs: [int]N, ys: [float]N) =
  asScalar(mapGlb(0,
    p -> vectorize(4, (x, y) -> toFloat(x) * 2.0f + toFloat(y > 0.0f) + toFloat(toInt(y * 3.0f)),
                   p._0, p._1),
    zip(asVector(4, xs), asVector(4, ys))))
)");
  checkLikeInterpreter(R"(
def f(xs: [int]N, ys: [float]N) =
  asScalar(mapGlb(0,
    p -> vectorize(4, (x, y) -> toInt(y * 2.0f) + toInt(x < 0) * 100, p._0, p._1),
    zip(asVector(4, xs), asVector(4, ys))))
)");
}

TEST_CASE("abs of int lanes stays an int vector") {
  checkLikeInterpreter(R"(
def f(xs: [int]N, ys: [float]N) =
  asScalar(mapGlb(0, v -> vectorize(4, x -> min(3, abs(x) * 2 - 5), v), asVector(4, xs)))
)");
}

TEST_CASE("private copies of lanes and of a condition's lanes") {
  checkLikeInterpreter(R"(
def f(xs: [int]N, ys: [float]N) =
  asScalar(mapGlb(0,
    v -> vectorize(4,
      y -> toPrivate(c -> id(c), y >= 0.5f || y == -1.0f) ? toPrivate(c -> id(c), y) + 1.0f : y,
      v),
    asVector(4, ys)))
)");
}

TEST_CASE("a scalar from outside the vectorised lambda is broadcast") {
  checkLikeInterpreter(R"(
def f(xs: [int]N, ys: [float]N) =
  join(mapGlb(0,
    row -> join(mapSeq(
      s -> asScalar(mapSeq(v -> vectorize(4, y -> y * toFloat(abs(s)) + toFloat(s > 0), v),
                           asVector(4, row._1))),
      reduceSeq(0, (a, b) -> a + b, row._0))),
    zip(split(4, xs), split(4, ys))))
)");
}
