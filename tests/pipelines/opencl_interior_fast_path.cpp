// The interior fast path of code generation (codegen/interior_fast_path.cpp, withInteriorFastPath): a
// work-item of mapGlb(0) whose clamp or mirror pad reads are affine in its index is emitted
// twice under one work-group-uniform check, unclamped when the whole group reads inside the
// array. These tests make both branches run: work-groups of a few work-items (localX = 1, 2,
// 4, ...) on small odd images (37x23: groups wholly inside and groups on a border both occur)
// must compute bit for bit what the same program computes with one work-group spanning the
// whole row (the general branch only), and the C++ references of the pipelines; fused
// kernels (private tiles) what the unfused program computes; 1D stencils with random
// clamp/mirror pads and windows what the interpreter computes, in every group size. The source
// checks need no device: the fast branch is present and reads without min/max, and programs without
// clamp/mirror pads are generated as before. Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <optional>
#include <random>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/pipeline_opencl_fixture.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

// The text of a kernel's fast branch: from the interior check to its `} else {`.
std::string fastBranch(const std::string& source, size_t from = 0) {
  const size_t check = source.find("_first - ", from);
  if (check == std::string::npos) return "";
  const size_t end = source.find("} else {", check);
  return source.substr(check, end == std::string::npos ? std::string::npos : end - check);
}

// Every kernel of `program` in work-groups of localX x 1 x 1.
CompiledProgram withLocalX(CompiledProgram program, int localX) {
  return withLocalSizeX(std::move(program), localX);
}

// Whether localX divides every kernel's global size in dimension 0 (sizes specialised).
bool dividesEveryKernel(const CompiledProgram& program, int localX) {
  for (const KernelPlan& kernel : program.kernels) {
    const std::optional<int64_t> global = kernel.globalSize[0].constant();
    if (!global || *global % localX != 0) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("blur's clamped kernel gets an unclamped fast branch, a zero-padded one does not") {
  const Definition lowered = loadPipeline("blur");
  CodegenOptions options;
  options.specialize = {{"W", 37}, {"H", 23}};
  const CompiledProgram program = compileToOpenCL(lowered, options);
  CAPTURE(program.source);
  const std::string fast = fastBranch(program.source);
  REQUIRE_FALSE(fast.empty());
  // blurx: x-1 and x+1 clamped in the general branch, read directly in the fast one.
  CHECK(fast.find("min(") == std::string::npos);
  CHECK(fast.find("max(") == std::string::npos);
  CHECK(program.source.find("min(36, gl") != std::string::npos);
  // blury clamps rows (uniform within a row of work-items): no fast path there.
  CHECK(program.source.find("_first", program.source.find("weft_blur_k1")) == std::string::npos);

  // The same stencil over a zero (constant) pad keeps its guards and gets no interior check.
  const Program zeroPadded = parseProgram(
      "fun mean3(a: float, b: float, c: float): float = (a + b + c) / 3.0f\n"
      "def blurx(input: [float]N) = map(w -> reduce(0.0f, (acc, x) -> acc + x, w),"
      " slide(3, 1, pad(1, 1, constant(0.0f), input)))\n");
  const CompiledProgram constant = compileToOpenCL(zeroPadded.definitions.back());
  CAPTURE(constant.source);
  CHECK(constant.source.find("_first") == std::string::npos);
}

TEST_CASE("pipelines with small work-groups equal the whole-row run and the reference (37x23)") {
  struct Pipe {
    std::string name;
    int channels;
  };
  for (const Pipe& pipe :
       std::vector<Pipe>{{"blur", 1}, {"unsharp", 3}, {"harris", 1}, {"canny", 1}}) {
    CAPTURE(pipe.name);
    const Definition lowered = loadPipeline(pipe.name);
    for (const auto& [width, height] : std::vector<std::pair<int, int>>{{37, 23}, {40, 9}}) {
      const Image image = randomImage(width, height, pipe.channels, 11);
      const ArithBinding sizes = imageSizes(image, pipe.channels > 1);
      for (bool specialise : {true, false}) {
        CAPTURE(width);
        CAPTURE(specialise);
        CodegenOptions options;
        if (specialise) options.specialize = sizes;
        const CompiledProgram program = compileToOpenCL(lowered, options);
        CHECK_FALSE(fastBranch(program.source).empty());
        // One group per row: every group touches both borders, only the general branch runs.
        const std::vector<float> general =
            flattenToFloats(runOnImage(withLocalX(program, width), lowered, image, sizes).output);
        for (int localX : {1, 2, 4, 8}) {
          if (width % localX != 0) continue;
          CAPTURE(localX);
          const Value out = runOnImage(withLocalX(program, localX), lowered, image, sizes).output;
          CHECK(flattenToFloats(out) == general);
          if (pipe.name == "blur") {
            const Agreement a =
                compareFloats(flattenToFloats(out), blurReference(image).data, width, height);
            CHECK(a.mismatches == 0);
          } else if (pipe.name == "harris") {
            const HarrisResult expected = harrisReference(image);
            const Agreement a = compareFloats(flattenToFloats(out), expected.output.data, width,
                                              height, expected.scale);
            CHECK(a.mismatches == 0);
          }
        }
      }
    }
  }
}

TEST_CASE("privately fused blur and unsharp mask with small work-groups equal the unfused run") {
  struct Fused {
    std::string pipeline, strategy;
    int theta1, theta2, width, height, channels;
  };
  const std::vector<Fused> cases = {
      {"blur", "pipeline-fused-private", 6, 4, 36, 24, 1},
      {"blur", "pipeline-fused-private", 3, 1, 39, 7, 1},
      {"unsharp", "pipeline-fused-private-pointwise", 6, 4, 36, 8, 3}};
  for (const Fused& f : cases) {
    CAPTURE(f.pipeline);
    CAPTURE(f.theta1);
    const Definition fused = fusedPipeline(f.pipeline, f.strategy, f.theta1, f.theta2);
    const Image image = randomImage(f.width, f.height, f.channels, 3);
    const ArithBinding sizes = imageSizes(image, f.channels > 1);
    const std::vector<float> expected = unfusedOutput(f.pipeline, image, sizes);
    CodegenOptions options;
    options.specialize = sizes;
    const CompiledProgram program = compileToOpenCL(fused, options);
    CAPTURE(program.source);
    CHECK_FALSE(fastBranch(program.source).empty());
    for (int localX : {1, 2, 3}) {
      if (!dividesEveryKernel(program, localX)) continue;
      CAPTURE(localX);
      const Value out = runOnImage(withLocalX(program, localX), fused, image, sizes).output;
      checkSameAsUnfused(flattenToFloats(out), expected, f.width, f.height);
    }
  }
}

TEST_CASE("1D stencils over random clamp and mirror pads equal the interpreter in any group") {
  std::mt19937_64 rng(2026);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  host::Context& context = pipelineContext();
  int withFastPath = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int left = uniform(0, 3), right = uniform(0, 3);
    const int window = uniform(1, left + right + 1);
    const bool mirror = uniform(0, 1) == 1;
    const int n = uniform(std::max({left, right, 1}), 40);  // mirror needs n >= the pad
    const std::string text =
        "def stencil(input: [float]N) = map(w -> reduce(0.0f, (acc, x) -> "
        "acc + x * 1.5f, w), slide(" +
        std::to_string(window) + ", 1, pad(" + std::to_string(left) + ", " + std::to_string(right) +
        ", " + (mirror ? "mirror" : "clamp") + ", input)))\n";
    CAPTURE(text);
    CAPTURE(n);
    const Definition definition = parseProgram(text).definitions.back();
    const ArithBinding sizes{{"N", n}};
    std::vector<float> data(static_cast<size_t>(n));
    for (float& x : data) x = static_cast<float>(uniform(-1000, 1000)) / 64.0f;
    const Value input = valueFromFlat(definition.function.params()[0].paramType(), sizes, data);
    const Value expected = interpret(definition, {input}, sizes);
    CodegenOptions options;
    if (trial % 2 == 0) options.specialize = sizes;
    const CompiledProgram program = compileToOpenCL(definition, options);
    CAPTURE(program.source);
    withFastPath += fastBranch(program.source).empty() ? 0 : 1;
    const int outputs = n + left + right - window + 1;
    for (int localX = 1; localX <= outputs; localX *= 2) {
      if (outputs % localX != 0) continue;
      CAPTURE(localX);
      host::RunOptions run;
      run.guards = true;
      const host::RunResult result =
          host::runProgram(context, withLocalX(program, localX), {input}, sizes, run);
      for (const host::GuardViolation& v : result.guardViolations) FAIL(v.describe());
      CHECK(approximatelyEqual(result.output, expected, 1e-5, 1e-5));
    }
  }
  MESSAGE(withFastPath << " of 40 stencils got a fast path");
  CHECK(withFastPath >= 20);
}
