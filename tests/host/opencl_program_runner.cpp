// Tests of host/program_runner.h on a real OpenCL device (label opencl; skipped where no
// platform exists). The CompiledPrograms are written by hand here, so the runner is tested
// independently of code generation: symbolic buffer and launch sizes evaluated with the
// binding, input flattening (float and int32), zero-filled outputs and temporaries, size and
// local-memory arguments, two kernels passing a temporary buffer, 2D launches with and
// without a local size, int and bool outputs rebuilt as values of the output type, timing,
// the program cache, inputs given flat (host::FlatInput) and the output read as floats or not
// at all, launches of one work-group per kernel with a local size (RunOptions::firstWorkGroupOnly),
// a kernel launched in parts (a local size that does not divide the global size, or none given
// at a prime length), and the messages for an unbound size variable, a wrong input size and a build
// failure.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "host/program_runner.h"
#include "ir/parser.h"
#include "tests/support/hand_written_programs.h"

using namespace weft;
using namespace weft::host;
using weft::testing::bufferArg;
using weft::testing::bufferOfType;
using weft::testing::floats;
using weft::testing::sizeArg;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

Context& context() {
  static Context ctx(selectDevice(""));
  return ctx;
}

Value ints(const std::vector<int32_t>& values) {
  std::vector<Value> elements;
  for (int32_t v : values) elements.push_back(Value::ofInt(v));
  return Value::array(std::move(elements));
}

// A program named `name` reading the input buffer `input` and writing the output buffer "out",
// both of `type`, in OpenCL `source`; its kernels are the caller's to add.
CompiledProgram inputToOutput(const std::string& name, const std::string& input,
                              const std::string& type, const std::string& source) {
  CompiledProgram program;
  program.definitionName = name;
  program.source = source;
  program.buffers = {bufferOfType(input, BufferPlan::Role::Input, type, 0),
                     bufferOfType("out", BufferPlan::Role::Output, type)};
  program.outputBuffer = 1;
  program.outputType = parseType(type);
  return program;
}

// out = scale(xs) + 1 through a temporary: two kernels over N work-items.
CompiledProgram twoKernels() {
  CompiledProgram program;
  program.definitionName = "twoKernels";
  program.source = R"CL(
kernel void scale(const global float* in_xs, global float* tmp, int N) {
  int i = get_global_id(0);
  if (i < N) tmp[i] = 2.0f * in_xs[i];
}
kernel void plusOne(const global float* tmp, global float* out) {
  int i = get_global_id(0);
  out[i] = tmp[i] + 1.0f;
}
)CL";
  program.buffers = {bufferOfType("in_xs", BufferPlan::Role::Input, "[float]N", 0),
                     bufferOfType("out", BufferPlan::Role::Output, "[float]N"),
                     bufferOfType("tmp", BufferPlan::Role::Temporary, "[float]N")};
  program.outputBuffer = 1;
  program.outputType = parseType("[float]N");
  KernelPlan scale;
  scale.name = "scale";
  scale.args = {bufferArg(0), bufferArg(2), sizeArg("N")};
  scale.globalSize[0] = Arith::size("N");
  KernelPlan plusOne;
  plusOne.name = "plusOne";
  plusOne.args = {bufferArg(2), bufferArg(1)};
  plusOne.globalSize[0] = Arith::size("N");
  program.kernels = {scale, plusOne};
  program.openSizes = {Arith::size("N")};
  return program;
}

}  // namespace

TEST_CASE("two kernels pass a temporary buffer; times come from cl_events") {
  CompiledProgram program = twoKernels();
  RunResult result = runProgram(context(), program, {floats({1, 2, 3, 4, 5})}, {{"N", 5}});
  CHECK(result.output == floats({3, 5, 7, 9, 11}));
  REQUIRE(result.kernels.size() == 2);
  CHECK(result.kernels[0].name == "scale");
  CHECK(result.kernels[1].name == "plusOne");
  CHECK(result.kernels[0].nanoseconds > 0);
  CHECK(result.kernels[1].nanoseconds > 0);
  CHECK(result.totalNanoseconds == result.kernels[0].nanoseconds + result.kernels[1].nanoseconds);
  REQUIRE(result.repeatNanoseconds.size() == 1);
  CHECK(result.repeatNanoseconds[0] == result.totalNanoseconds);
}

TEST_CASE("flat inputs run as their Values do; the output as floats, or not read") {
  CompiledProgram program = twoKernels();
  const Value input = floats({1, 2, 3, 4, 5});
  const FlatInput flat = flatInputOf(input);
  CHECK_FALSE(flat.ints);
  CHECK(flat.floats == std::vector<float>{1, 2, 3, 4, 5});
  RunResult fromFlat = runProgram(context(), program, std::vector<FlatInput>{flat}, {{"N", 5}});
  CHECK(fromFlat.output == floats({3, 5, 7, 9, 11}));
  // Int data for a float buffer is converted, as from a Value of ints.
  const FlatInput intData = flatInputOf(ints({1, 2, 3, 4, 5}));
  CHECK(intData.ints);
  CHECK(runProgram(context(), program, std::vector<FlatInput>{intData}, {{"N", 5}}).output ==
        floats({3, 5, 7, 9, 11}));
  RunOptions options;
  options.output = RunOptions::Output::Floats;
  RunResult asFloats = runProgram(context(), program, {input}, {{"N", 5}}, options);
  CHECK(asFloats.outputFloats == std::vector<float>{3, 5, 7, 9, 11});
  CHECK(asFloats.output.elements.empty());
  options.output = RunOptions::Output::None;
  RunResult unread = runProgram(context(), program, {input}, {{"N", 5}}, options);
  CHECK(unread.outputFloats.empty());
  CHECK(unread.totalNanoseconds > 0);
  CHECK(flatInputsOf({input, ints({7})}).size() == 2);
  CHECK_THROWS_AS(flatInputOf(Value::tuple({Value::ofFloat(1), Value::ofInt(2)})),
                  std::invalid_argument);
}

TEST_CASE("repeats run every kernel again and keep the best times") {
  CompiledProgram program = twoKernels();
  RunOptions options;
  options.repeats = 3;
  RunResult result = runProgram(context(), program, {floats({-1, 0.5f})}, {{"N", 2}}, options);
  CHECK(result.output == floats({-1, 2}));
  REQUIRE(result.repeatNanoseconds.size() == 3);
  for (uint64_t total : result.repeatNanoseconds) CHECK(total >= result.totalNanoseconds);
  options.repeats = 0;
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1})}, {{"N", 1}}, options),
                       doctest::Contains("repeats must be at least 1"), OpenCLError);
}

TEST_CASE("a program cache builds each source once per context") {
  ProgramCache cache;
  RunOptions options;
  options.cache = &cache;
  CompiledProgram program = twoKernels();
  for (int n = 1; n <= 3; ++n) {
    std::vector<float> input(static_cast<size_t>(n), 1.0f);
    RunResult result = runProgram(context(), program, {floats(input)}, {{"N", n}}, options);
    CHECK(result.output == floats(std::vector<float>(static_cast<size_t>(n), 3.0f)));
  }
  CHECK(cache.builds() == 1);
  CHECK(cache.size() == 1);
  program.source += "\n// another source\n";
  runProgram(context(), program, {floats({1})}, {{"N", 1}}, options);
  CHECK(cache.builds() == 2);
  options.buildOptions = "-cl-fast-relaxed-math";
  runProgram(context(), program, {floats({1})}, {{"N", 1}}, options);
  CHECK(cache.builds() == 3);
}

TEST_CASE("outputs and temporaries start at zero on every repeat") {
  // The kernel accumulates into its output: a run must see zeros, not the last run's data.
  CompiledProgram program = inputToOutput("accumulate", "in_x", "[float]4", R"CL(
kernel void acc(const global float* in_x, global float* out) {
  int i = get_global_id(0);
  out[i] += in_x[i];
}
)CL");
  KernelPlan kernel;
  kernel.name = "acc";
  kernel.args = {bufferArg(0), bufferArg(1)};
  kernel.globalSize[0] = Arith(4);
  program.kernels = {kernel};
  RunOptions options;
  options.repeats = 4;
  CHECK(runProgram(context(), program, {floats({1, 2, 3, 4})}, {}, options).output ==
        floats({1, 2, 3, 4}));
}

TEST_CASE("int and bool data travel as int32, exactly; 2D launches with a local size") {
  // out[y][x] = in[y][x] + 2^24 + 1, staged through local memory: ints above 2^24 must survive
  // (no float round trip).
  CompiledProgram program = inputToOutput("ints", "in_m", "[[int]W]H", R"CL(
kernel void big(const global int* in_m, global int* out, int W, local int* scratch) {
  int x = get_global_id(0), y = get_global_id(1);
  scratch[get_local_id(0)] = in_m[y * W + x] + 16777217;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[y * W + x] = scratch[get_local_id(0)];
}
)CL");
  KernelPlan kernel;
  kernel.name = "big";
  KernelArg local;
  local.kind = KernelArg::Kind::LocalBuffer;
  local.localBytes = Arith::size("W") * 4;
  kernel.args = {bufferArg(0), bufferArg(1), sizeArg("W"), local};
  kernel.dimensions = 2;
  kernel.globalSize = {Arith::size("W"), Arith::size("H"), Arith(1)};
  kernel.hasLocalSize = true;
  kernel.localSize = {Arith::size("W"), Arith(1), Arith(1)};
  program.kernels = {kernel};
  Value input = Value::array({ints({1, 2, 3}), ints({-4, 5, 0})});
  RunResult result = runProgram(context(), program, {input}, {{"W", 3}, {"H", 2}});
  CHECK(result.output ==
        Value::array({ints({16777218, 16777219, 16777220}), ints({16777213, 16777222, 16777217})}));

  // The same buffer read back as bools: nonzero is true.
  program.outputType = parseType("[[bool]W]H");
  RunResult asBools = runProgram(context(), program, {Value::array({ints({-16777217, 0, 1})})},
                                 {{"W", 3}, {"H", 1}});
  CHECK(asBools.output == Value::array({Value::array(
                              {Value::ofBool(false), Value::ofBool(true), Value::ofBool(true)})}));
}

TEST_CASE("first launches only: one work-group of each kernel with a local size, nothing read") {
  // Each work-item spins through `rounds` steps: a whole run of 2^18 work-items is long, one
  // work-group of 64 is not. The kernel without a local size of its own is not launched.
  CompiledProgram program = inputToOutput("spin", "in_xs", "[float]N", R"CL(
kernel void spin(const global float* in_xs, global float* out, int rounds) {
  int i = get_global_id(0);
  float x = in_xs[i];
  for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f;
  out[i] = x;
}
kernel void open(global float* out) { out[get_global_id(0)] += 1.0f; }
)CL");
  KernelPlan spin;
  spin.name = "spin";
  spin.args = {bufferArg(0), bufferArg(1), sizeArg("R")};
  spin.globalSize[0] = Arith::size("N");
  spin.hasLocalSize = true;
  spin.localSize[0] = Arith(64);
  KernelPlan open;
  open.name = "open";
  open.args = {bufferArg(1)};
  open.globalSize[0] = Arith::size("N");
  program.kernels = {spin, open};
  const size_t n = size_t{1} << 18;
  const std::vector<FlatInput> inputs = {FlatInput{false, std::vector<float>(n, 0.5f), {}}};
  ArithBinding sizes = {{"N", static_cast<int64_t>(n)}, {"R", 500}};
  ProgramCache cache;
  RunOptions whole;
  whole.cache = &cache;
  whole.output = RunOptions::Output::Floats;
  RunResult full = runProgram(context(), program, inputs, sizes, whole);
  // A GPU runs 500 rounds over 2^18 work-items in microseconds, no longer than a launch: the
  // rounds are raised until the whole spin takes 20 ms there too. All 2^18 work-items may be
  // resident at once there (one wave), so one group is faster only by the lanes it leaves idle.
  for (int raised = 0; full.kernels.at(0).nanoseconds < 20'000'000 && raised < 8; ++raised) {
    sizes["R"] *= 4;
    full = runProgram(context(), program, inputs, sizes, whole);
  }
  REQUIRE(full.outputFloats.size() == n);
  // Spun towards 1 (1 - 0.5 * 0.999^R), then 1 added by the second kernel.
  CHECK(
      full.outputFloats[0] ==
      doctest::Approx(2.0 - 0.5 * std::pow(0.999, static_cast<double>(sizes["R"]))).epsilon(1e-3));

  RunOptions first = whole;
  first.firstWorkGroupOnly = true;
  const auto start = std::chrono::steady_clock::now();
  const RunResult once = runProgram(context(), program, inputs, sizes, first);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(once.outputFloats.empty());
  CHECK(once.repeatNanoseconds.empty());
  REQUIRE(once.kernels.size() == 2);
  // The whole spin takes 20 ms at least; one group of 64 far less (on a CPU a few
  // microseconds, the input written and the launch included).
  MESSAGE("whole run " << full.totalNanoseconds * 1e-6 << " ms of kernels, first launches "
                       << seconds * 1e3 << " ms in all");
  CHECK(seconds * 1e9 < 0.5 * static_cast<double>(full.kernels[0].nanoseconds));
}

TEST_CASE(
    "a kernel launchable in parts runs every work-item once at local sizes that do not divide") {
  // Each work-item adds its place to its element (the output starts at zero): a work-item run
  // twice or not at all shows in the output. 13 x 11 in groups of 4 x 4: four parts (whole
  // groups, the right strip, the bottom strip, the corner).
  CompiledProgram program = inputToOutput("places", "in_x", "[[float]W]H", R"CL(
kernel void places(const global float* in_x, global float* out, int W) {
  int x = get_global_id(0), y = get_global_id(1);
  out[y * W + x] += in_x[y * W + x] + (float)x + 100.0f * (float)y;
}
)CL");
  KernelPlan kernel;
  kernel.name = "places";
  kernel.args = {bufferArg(0), bufferArg(1), sizeArg("W")};
  kernel.dimensions = 2;
  kernel.globalSize = {Arith::size("W"), Arith::size("H"), Arith(1)};
  kernel.hasLocalSize = true;
  kernel.localSize = {Arith(4), Arith(4), Arith(1)};
  kernel.launchableInParts = true;
  program.kernels = {kernel};
  const int64_t width = 13, height = 11;
  std::vector<float> input(static_cast<size_t>(width * height));
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 7) * 0.5f;
  RunOptions options;
  options.output = RunOptions::Output::Floats;
  options.repeats = 2;  // the output is zeroed before each repeat
  const RunResult result = runProgram(context(), program, {FlatInput{false, input, {}}},
                                      {{"W", width}, {"H", height}}, options);
  REQUIRE(result.outputFloats.size() == input.size());
  int wrong = 0;
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      const size_t i = static_cast<size_t>(y * width + x);
      const float expected = input[i] + static_cast<float>(x) + 100.0f * static_cast<float>(y);
      wrong += result.outputFloats[i] != expected;
    }
  }
  CHECK(wrong == 0);
  CHECK(result.kernels.at(0).nanoseconds > 0);  // the parts' times, summed

  // One work-group of each shape for the first launches: nothing fails, nothing read.
  RunOptions first;
  first.firstWorkGroupOnly = true;
  CHECK_NOTHROW(runProgram(context(), program, {FlatInput{false, input, {}}},
                           {{"W", width}, {"H", height}}, first));

  // The same sizes for a kernel not launchable in parts are refused, naming the launch.
  program.kernels[0].launchableInParts = false;
  try {
    runProgram(context(), program, {FlatInput{false, input, {}}}, {{"W", width}, {"H", height}});
    FAIL("a local size that does not divide the global size was launched");
  } catch (const OpenCLError& error) {
    CHECK(contains(error.what(), "is not a multiple of the local size"));
  }
}

TEST_CASE("a prime length without a local size gets one, launched in parts") {
  // Each work-item writes the size of its work-group. At 8191 work-items the OpenCL
  // implementation could only choose groups of one; the runner chooses a power of two within
  // the kernel's limit and launches the rest as a second part.
  CompiledProgram program;
  program.definitionName = "groups";
  program.source = R"CL(
kernel void groups(global float* out) {
  out[get_global_id(0)] = (float)get_local_size(0);
}
)CL";
  program.buffers = {bufferOfType("out", BufferPlan::Role::Output, "[float]N")};
  program.outputBuffer = 0;
  program.outputType = parseType("[float]N");
  KernelPlan kernel;
  kernel.name = "groups";
  kernel.args = {bufferArg(0)};
  kernel.globalSize[0] = Arith::size("N");
  kernel.launchableInParts = true;
  program.kernels = {kernel};
  RunOptions options;
  options.output = RunOptions::Output::Floats;
  const int64_t n = 8191;
  const RunResult result =
      runProgram(context(), program, std::vector<FlatInput>{}, {{"N", n}}, options);
  REQUIRE(result.outputFloats.size() == static_cast<size_t>(n));
  const auto local = static_cast<int64_t>(result.outputFloats.front());
  CHECK(local >= 2);
  CHECK((local & (local - 1)) == 0);  // a power of two
  const int64_t whole = n / local * local;
  int wrong = 0;
  for (int64_t i = 0; i < n; ++i) {
    wrong += static_cast<int64_t>(result.outputFloats[static_cast<size_t>(i)]) !=
             (i < whole ? local : n - whole);
  }
  CHECK(wrong == 0);

  // A length with a divisor that serves is left to the implementation, as before.
  const RunResult nice =
      runProgram(context(), program, std::vector<FlatInput>{}, {{"N", 8192}}, options);
  REQUIRE(nice.outputFloats.size() == 8192);
  CHECK(static_cast<int64_t>(8192) % static_cast<int64_t>(nice.outputFloats.back()) == 0);
}

TEST_CASE("vectors in buffers are stored lane by lane") {
  CompiledProgram program = inputToOutput("vectors", "in_v", "[float4]N", R"CL(
kernel void twice(const global float* in_v, global float* out) {
  int i = get_global_id(0);
  vstore4(2.0f * vload4(i, in_v), i, out);
}
)CL");
  KernelPlan kernel;
  kernel.name = "twice";
  kernel.args = {bufferArg(0), bufferArg(1)};
  kernel.globalSize[0] = Arith::size("N");
  program.kernels = {kernel};
  auto vec = [](float a, float b, float c, float d) {
    return Value::vector(
        {Value::ofFloat(a), Value::ofFloat(b), Value::ofFloat(c), Value::ofFloat(d)});
  };
  RunResult result = runProgram(context(), program,
                                {Value::array({vec(1, 2, 3, 4), vec(-1, 0, 0.5f, 8)})}, {{"N", 2}});
  CHECK(result.output == Value::array({vec(2, 4, 6, 8), vec(-2, 0, 1, 16)}));
}

TEST_CASE("binding mistakes are reported before OpenCL runs anything") {
  CompiledProgram program = twoKernels();
  // N is not bound: the first symbolic size that needs it names it.
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1, 2})}, {}),
                       doctest::Contains("size variable N is not bound"), OpenCLError);
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1, 2})}, {}),
                       doctest::Contains("in_xs"), OpenCLError);
  // The input has 2 elements, the binding says 3.
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1, 2})}, {{"N", 3}}),
                       doctest::Contains("input 0 (buffer in_xs, type [float]N) has 2 elements, "
                                         "but the compiled program expects N = 3"),
                       OpenCLError);
  CHECK_THROWS_WITH_AS(runProgram(context(), program, std::vector<Value>{}, {{"N", 3}}),
                       doctest::Contains("buffer in_xs holds input 0, but 0 input(s) were given"),
                       OpenCLError);
  // A size argument whose variable appears nowhere else.
  program.kernels[1].args.push_back(sizeArg("Q"));
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1})}, {{"N", 1}}),
                       doctest::Contains("argument 2 of kernel plusOne is size variable Q, which "
                                         "is not bound"),
                       OpenCLError);
  // A launch size that is not positive.
  program = twoKernels();
  program.kernels[0].globalSize[0] = Arith::size("N") - 1;
  CHECK_THROWS_WITH_AS(runProgram(context(), program, {floats({1})}, {{"N", 1}}),
                       doctest::Contains("the global size of kernel scale in dimension 0 is N - "
                                         "1 = 0, not positive"),
                       OpenCLError);
}

TEST_CASE("a build failure shows the OpenCL compiler's log") {
  CompiledProgram program = twoKernels();
  program.source += "\nkernel void broken(global float* p) { p[0] = undeclared_name; }\n";
  try {
    runProgram(context(), program, {floats({1})}, {{"N", 1}});
    FAIL("the build should have failed");
  } catch (const BuildError& error) {
    CHECK(contains(error.what(), "undeclared_name"));
  }
}
