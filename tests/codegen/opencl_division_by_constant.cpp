// Code generation of a float division by a float literal (codegen/scalar_gen.cpp): emitted as a
// multiplication by the float nearest the reciprocal when the divisor and its reciprocal are
// normal floats, as a division otherwise (a zero, subnormal or non-literal divisor, integers).
// On PoCL the kernels' quotients are compared with C++'s correctly rounded division, value by
// value: bit-exact for a power of two, within 1.5 ulp otherwise (OpenCL 1.2 allows 2.5 ulp
// for x / y). Label opencl.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "host/program_runner.h"
#include "ir/parser.h"
#include "ir/value.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

CompiledProgram compile(const std::string& text) {
  return generateOpenCL(parseProgram(text, "division.weft").definitions.back(), CodegenOptions{});
}

// The distance between a and b in units in the last place of b (the correctly rounded
// quotient): how many floats lie between them.
double ulpDistance(float a, float b) {
  if (a == b) return 0;
  const float magnitude = std::fabs(b);
  const float ulp =
      std::nextafter(magnitude, std::numeric_limits<float>::infinity()) - magnitude;
  return std::fabs(static_cast<double>(a) - static_cast<double>(b)) / ulp;
}

// Random floats over many binades, both signs, and a few special ones.
std::vector<float> dividends(size_t count) {
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-60, 60);
  std::vector<float> xs{0.0f, -0.0f, 1.0f, 3.0f, 9.0f, -27.0f, 1e-30f, 3e30f,
                        std::numeric_limits<float>::infinity()};
  while (xs.size() < count) {
    const float x = std::ldexp(mantissa(rng), exponent(rng));
    xs.push_back(xs.size() % 2 ? -x : x);
  }
  return xs;
}

// The kernel's x / divisor for every x against C++'s; returns the largest ulp distance.
double largestUlpError(const std::string& divisorText, float divisor) {
  const CompiledProgram program =
      compile("def divide(xs: [float]N) = mapGlb(0, x -> x / " + divisorText + ", xs)");
  const std::vector<float> xs = dividends(4096);
  const ArithBinding sizes{{"N", static_cast<int64_t>(xs.size())}};
  std::vector<Value> elements;
  for (float x : xs) elements.push_back(Value::ofFloat(x));
  const host::RunResult run =
      host::runProgram(context(), program, {Value::array(std::move(elements))}, sizes);
  const std::vector<float> got = flattenToFloats(run.output);
  REQUIRE(got.size() == xs.size());
  double largest = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float expected = xs[i] / divisor;
    CAPTURE(xs[i]);
    CAPTURE(got[i]);
    CAPTURE(expected);
    REQUIRE(std::isinf(got[i]) == std::isinf(expected));
    if (!std::isinf(expected)) largest = std::max(largest, ulpDistance(got[i], expected));
  }
  return largest;
}

}  // namespace

TEST_CASE("a float division by a literal becomes a multiplication by its reciprocal") {
  CHECK(compile("def d(xs: [float]N) = mapGlb(0, x -> x / 3.0f, xs)").source.find(
            "* 0.333333343f)") != std::string::npos);
  CHECK(compile("def d(xs: [float]N) = mapGlb(0, x -> x / 4.0f, xs)").source.find("* 0.25f)") !=
        std::string::npos);
}

TEST_CASE("divisions that stay divisions: by zero, by a subnormal, by a variable, of integers") {
  CHECK(compile("def d(xs: [float]N) = mapGlb(0, x -> x / 0.0f, xs)").source.find("/ 0.0f)") !=
        std::string::npos);
  // 1 / 1e-39 overflows to infinity: the multiplication would give inf for every x.
  CHECK(compile("def d(xs: [float]N) = mapGlb(0, x -> x / 1e-39f, xs)").source.find(" / ") !=
        std::string::npos);
  // 1 / 1e38 is subnormal.
  CHECK(compile("def d(xs: [float]N) = mapGlb(0, x -> x / 1e38f, xs)").source.find(" / ") !=
        std::string::npos);
  CHECK(compile("def d(xs: [float]N, ys: [float]N) = mapGlb(0, p -> p._0 / p._1, zip(xs, ys))")
            .source.find(" / ") != std::string::npos);
  CHECK(compile("def d(xs: [int]N) = mapGlb(0, x -> x / 3, xs)").source.find(" / 3)") !=
        std::string::npos);
}

TEST_CASE("on OpenCL: exact for powers of two, within 1.5 ulp otherwise") {
  CHECK(largestUlpError("4.0f", 4.0f) == 0);
  CHECK(largestUlpError("0.125f", 0.125f) == 0);
  for (const auto& [text, divisor] :
       std::vector<std::pair<std::string, float>>{{"3.0f", 3.0f}, {"7.0f", 7.0f},
                                                  {"-0.1f", -0.1f}, {"159.0f", 159.0f}}) {
    CAPTURE(text);
    const double error = largestUlpError(text, divisor);
    CHECK(error <= 1.5);
  }
}
