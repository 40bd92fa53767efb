// Tests of the canary regions of host/program_runner.h (RunOptions::guards) on the default
// OpenCL device, with CompiledPrograms written by hand: a kernel that writes one value past the
// end of its output, one that writes before the start of a temporary, and correct ones. The
// out-of-bounds writes are reported with the buffer, the kernel and the number of values, and
// the output is still read correctly; correct programs (one or two kernels, several repeats)
// have no violation; without guards nothing is checked. The written index comes in as a kernel
// argument, so the same source writes inside the buffer (no violation) or one past its end
// (a violation): the check depends on where the kernel writes, not on the source.
// Passes with a message where there is no OpenCL device.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "host/program_runner.h"
#include "ir/parser.h"
#include "tests/support/hand_written_programs.h"

using namespace weft;
using namespace weft::host;
using weft::testing::bufferArg;
using weft::testing::floats;
using weft::testing::sizeArg;

namespace {

Context* context() {
  static std::optional<Context> ctx = []() -> std::optional<Context> {
    try {
      return Context(selectDevice(""));
    } catch (const OpenCLError& error) {
      MESSAGE("no OpenCL device: " << error.what());
      return std::nullopt;
    }
  }();
  return ctx ? &*ctx : nullptr;
}

BufferPlan floatBuffer(std::string name, BufferPlan::Role role, int inputIndex = -1) {
  return testing::bufferOfType(std::move(name), role, "[float]N", inputIndex);
}

// out = 2 * xs + 1 through a temporary; the first kernel also writes tmp[BEFORE] = 7 and the
// second out[AT] = 9 when work-item 0 runs (BEFORE and AT are size arguments: an index inside
// the buffer is harmless, -1 and N are outside).
CompiledProgram program() {
  CompiledProgram program;
  program.definitionName = "canary";
  program.source = R"CL(
kernel void scale(const global float* in_xs, global float* tmp, int N, int BEFORE) {
  int i = get_global_id(0);
  if (i < N) tmp[i] = 2.0f * in_xs[i];
  if (i == 0 && BEFORE != 0) tmp[BEFORE] = 7.0f;
}
kernel void plusOne(const global float* tmp, global float* out, int N, int AT) {
  int i = get_global_id(0);
  if (i < N) out[i] = tmp[i] + 1.0f;
  if (i == 0 && AT >= N) out[AT] = 9.0f;
}
)CL";
  program.buffers = {floatBuffer("in_xs", BufferPlan::Role::Input, 0),
                     floatBuffer("out", BufferPlan::Role::Output),
                     floatBuffer("tmp", BufferPlan::Role::Temporary)};
  program.outputBuffer = 1;
  program.outputType = parseType("[float]N");
  KernelPlan scale;
  scale.name = "scale";
  scale.args = {bufferArg(0), bufferArg(2), sizeArg("N"), sizeArg("BEFORE")};
  scale.globalSize[0] = Arith::size("N");
  KernelPlan plusOne;
  plusOne.name = "plusOne";
  plusOne.args = {bufferArg(2), bufferArg(1), sizeArg("N"), sizeArg("AT")};
  plusOne.globalSize[0] = Arith::size("N");
  program.kernels = {scale, plusOne};
  program.openSizes = {Arith::size("N"), Arith::size("BEFORE"), Arith::size("AT")};
  return program;
}

const std::vector<float> kInput = {1, 2, 3, 4, 5};
const Value kExpected = floats({3, 5, 7, 9, 11});

RunResult run(int64_t before, int64_t at, bool guards, int repeats = 1) {
  RunOptions options;
  options.guards = guards;
  options.repeats = repeats;
  return runProgram(*context(), program(), {floats(kInput)},
                    {{"N", 5}, {"BEFORE", before}, {"AT", at}}, options);
}

}  // namespace

TEST_CASE("a correct program has no guard violation, with one or several repeats") {
  if (!context()) return;
  for (int repeats : {1, 3}) {
    CAPTURE(repeats);
    RunResult result = run(0, 0, true, repeats);
    CHECK(result.output == kExpected);
    CHECK(result.guardViolations.empty());
    CHECK(result.repeatNanoseconds.size() == static_cast<size_t>(repeats));
  }
  // Writes inside the buffers (the last element) are not violations either.
  RunResult inside = run(4, 4, true);
  CHECK(inside.guardViolations.empty());
}

TEST_CASE("a kernel writing one value past the end of the output is caught") {
  if (!context()) return;
  RunResult result = run(0, 5, true);
  CHECK(result.output == kExpected);  // the data itself is right: only the guard shows it
  REQUIRE(result.guardViolations.size() == 1);
  const GuardViolation& violation = result.guardViolations.front();
  CHECK(violation.buffer == "out");
  CHECK(violation.kernel == "plusOne");
  CHECK(violation.wordsAfter == 1);
  CHECK(violation.wordsBefore == 0);
  CHECK(violation.describe() == "kernel plusOne wrote 1 value past the end of buffer out");
  // Further past the end, still inside the guard region.
  RunResult further = run(0, 5 + 100, true);
  REQUIRE(further.guardViolations.size() == 1);
  CHECK(further.guardViolations.front().wordsAfter == 1);
}

TEST_CASE("a kernel writing before the start of a temporary is caught and named") {
  if (!context()) return;
  RunResult result = run(-1, 0, true, 2);
  REQUIRE(result.guardViolations.size() == 1);
  const GuardViolation& violation = result.guardViolations.front();
  CHECK(violation.buffer == "tmp");
  CHECK(violation.kernel == "scale");
  CHECK(violation.wordsBefore == 1);
  CHECK(violation.wordsAfter == 0);
  CHECK(violation.describe() == "kernel scale wrote 1 value before the start of buffer tmp");
  // Both buffers at once: each reported with the kernel that wrote it.
  RunResult both = run(-3, 6, true);
  REQUIRE(both.guardViolations.size() == 2);
  CHECK(both.guardViolations[0].buffer == "tmp");
  CHECK(both.guardViolations[1].buffer == "out");
  CHECK(both.guardViolations[1].kernel == "plusOne");
}

TEST_CASE("without guards nothing is checked") {
  if (!context()) return;
  // The write past the end lands in memory the runner does not own: keep it inside a buffer
  // here (AT = N would be undefined behaviour without guards), and check nothing is reported.
  RunResult result = run(0, 0, false);
  CHECK(result.output == kExpected);
  CHECK(result.guardViolations.empty());
  CHECK(kGuardPattern == 0x7FC0DEADu);
}
