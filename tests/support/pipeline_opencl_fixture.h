// What the OpenCL tests of the image pipelines (tests/pipelines/opencl_*.cpp) share: one
// OpenCL context and program cache per test executable, a pipeline (pipeline_programs.h loads
// it) rewritten by a fusion strategy of the registry, and a compiled program run
// on an image with the canary regions checked (a write past a buffer fails the test). Kept in one
// place so that the fused and unfused tests set up and run their programs the same way.
//
// Header-only (tests/support has no library); needs doctest for REQUIRE and FAIL.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "rewrite/strategies.h"
#include "tests/support/pipeline_programs.h"
#include "tests/support/pipeline_reference.h"

namespace weft::testing::pipelines {

// Small tile sizes and images for the fused kernels' OpenCL tests, with theta1 - 2 dividing the
// height and theta2 - 2 the width (whole tiles, border tiles at both ends).
struct SmallTiling {
  int theta1, theta2, width, height;
};
inline const std::vector<SmallTiling>& smallFusedTilings() {
  static const std::vector<SmallTiling> tilings = {{5, 5, 9, 15}, {6, 10, 16, 12}, {4, 7, 15, 8}};
  return tilings;
}

// The default OpenCL device's context, created on first use.
inline host::Context& pipelineContext() {
  static host::Context context(host::selectDevice(""));
  return context;
}

// Built programs, shared by every run of the test executable.
inline host::ProgramCache& pipelineCache() {
  static host::ProgramCache programs;
  return programs;
}

// The pipeline rewritten by the named fusion strategy with tiles theta1 x theta2 (compiled
// later by codegen/compile_pipeline.h, which lowers it); the test fails when the strategy does
// not apply.
inline Definition fusedPipeline(const std::string& pipeline, const std::string& strategyName,
                                int theta1, int theta2) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy(strategyName);
  REQUIRE_MESSAGE(strategy != nullptr, "no strategy " << strategyName);
  rewrite::RewriteContext rewriting;
  rewrite::StrategyResult result = strategy->make(
      {{"theta1", Arith(theta1)}, {"theta2", Arith(theta2)}})(loadPipeline(pipeline), rewriting);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

// The program with every kernel in work-groups of localX x 1 x 1 (explore's local_k<i>_d0).
inline CompiledProgram withLocalSizeX(CompiledProgram program, int localX) {
  for (KernelPlan& kernel : program.kernels) {
    kernel.hasLocalSize = true;
    kernel.localSize = {Arith(localX), Arith(1), Arith(1)};
  }
  return program;
}

// How runOnImage runs a program: timed repeats, canary regions around outputs and temporaries.
struct ImageRunSettings {
  int repeats = 1;
  bool guards = true;
};

// Runs `program` (compiled from `definition`) on `image` with the size binding `sizes`; a canary
// region overwritten fails the test.
inline host::RunResult runOnImage(const CompiledProgram& program, const Definition& definition,
                                  const Image& image, const ArithBinding& sizes,
                                  ImageRunSettings settings = {}) {
  const Value input =
      valueFromFlat(definition.function.params()[0].paramType(), sizes, image.data);
  host::RunOptions options;
  options.cache = &pipelineCache();
  options.repeats = settings.repeats;
  options.guards = settings.guards;
  host::RunResult result = host::runProgram(pipelineContext(), program, {input}, sizes, options);
  for (const host::GuardViolation& v : result.guardViolations) FAIL(v.describe());
  return result;
}

// `definition` compiled (sizes specialised to `sizes`, or left symbolic) and run on `image`;
// `localX` > 0 sets every kernel's local size to localX x 1 x 1.
inline host::RunResult compileAndRun(const Definition& definition, const Image& image,
                                     const ArithBinding& sizes, bool specialise,
                                     ImageRunSettings settings = {}, int localX = 0) {
  CodegenOptions options;
  if (specialise) options.specialize = sizes;
  CompiledProgram program = compileToOpenCL(definition, options);
  REQUIRE(program.kernels.size() >= 1);
  if (localX > 0) program = withLocalSizeX(std::move(program), localX);
  return runOnImage(program, definition, image, sizes, settings);
}

// The unfused pipeline (default lowering, sizes specialised) run on `image`: the output the
// fused programs must equal (checkSameAsUnfused).
inline std::vector<float> unfusedOutput(const std::string& pipeline, const Image& image,
                                        const ArithBinding& sizes) {
  return flattenToFloats(
      compileAndRun(loadPipeline(pipeline), image, sizes, true).output);
}

// Whether the test device compiles a fused kernel and the unfused ones to the same float
// arithmetic. They evaluate the same operations in the same order, and PoCL turns them into the
// same instructions: outputs equal bit for bit, and the tests hold them to that. NVIDIA's
// OpenCL does not (measured on an H100, 2026-11-23: privately fused blur and fused Harris
// outputs differ from the unfused kernels' in the last bits while agreeing with the C++
// references). OpenCL C allows both likely causes: with FP_CONTRACT on by default a product and
// a sum may become one fma where a fused kernel keeps the product in a register, and without
// -cl-fp32-correctly-rounded-divide-sqrt a division may be rounded within 2.5 ulp, not
// necessarily alike in two kernels.
inline bool kernelsRoundAlike() {
  const host::Device& device = pipelineContext().device();
  return device.platformVersion.find("PoCL") != std::string::npos;
}

// A fused program's output against the unfused kernels' (unfusedOutput): equal bit for bit
// where kernelsRoundAlike, else within compareFloats' relative 1e-5 (`scale`: the magnitude of
// each pixel's terms, where cancellation makes the value itself a poor scale).
inline void checkSameAsUnfused(const std::vector<float>& got, const std::vector<float>& unfused,
                               int width, int height, const std::vector<float>& scale = {}) {
  if (kernelsRoundAlike()) {
    CHECK(got == unfused);
    return;
  }
  const Agreement agreement = compareFloats(got, unfused, width, height, scale);
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.mismatches << " of " << agreement.compared
                                                                << " pixels differ from the unfused "
                                                                   "kernels', first "
                                                                << agreement.firstMismatch);
}

inline std::string milliseconds(uint64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(nanoseconds) / 1e6);
  return text;
}

}  // namespace weft::testing::pipelines
