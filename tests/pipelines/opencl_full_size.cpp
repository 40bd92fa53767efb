// The unfused lowering of the image pipelines (examples/pipelines/) on full-size images, the
// issue's sizes: blur 4096×4096 (with symbolic and with specialised sizes), Harris 4256×2832
// (unsharp mask at 4256×2832×3 and Canny at 4096×4096 pass too but need 7 and 4 GB for the
// interpreter values that runProgram takes and returns, and over 20 s, so they are not here).
// The default lowering gives one kernel per stage with every intermediate in a global buffer;
// the results equal the C++ references of tests/support/pipeline_reference.h at every pixel,
// interior and border, within a relative 1e-5 of each pixel's terms. The kernel times (best of
// 5 runs of the whole kernel sequence, from cl_events) are printed with MESSAGE, with the
// effective bandwidth over the pipeline's own input and output bytes (the traffic a fully
// fused pipeline cannot go below). Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "tests/support/pipeline_opencl_fixture.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

// Runs `lowered` (the pipeline `name` as `how`) on `image` (sizes specialised unless
// `symbolic`; `fusedLocalX` > 0: work-groups of fusedLocalX x 1 for the kernels that keep a
// tile in private memory), prints its times per kernel and returns its output.
Value runTimedProgram(const std::string& name, const std::string& how, const Definition& lowered,
                      const Image& image, bool symbolic, double ioBytes, int fusedLocalX = 0) {
  const ArithBinding sizes = imageSizes(image, image.channels > 1);
  CodegenOptions options;
  if (!symbolic) options.specialize = sizes;
  CompiledProgram program = compileToOpenCL(lowered, options);
  for (KernelPlan& kernel : program.kernels) {
    if (fusedLocalX <= 0 || kernel.privateScalars == 0) continue;
    kernel.hasLocalSize = true;
    kernel.localSize = {Arith(fusedLocalX), Arith(1), Arith(1)};
  }
  const host::RunResult result = runOnImage(program, lowered, image, sizes, {5, false});
  std::string perKernel;
  for (size_t k = 0; k < result.kernels.size(); ++k) {
    perKernel += (perKernel.empty() ? "" : ", ") + result.kernels[k].name + " " +
                 milliseconds(result.kernels[k].nanoseconds);
    if (program.kernels[k].privateScalars > 0) {
      perKernel += " [" + std::to_string(program.kernels[k].privateScalars) + " private]";
    }
  }
  const double seconds = static_cast<double>(result.totalNanoseconds) / 1e9;
  MESSAGE(name << " " << image.width << "x" << image.height << "x" << image.channels << " " << how
               << ", " << program.kernels.size() << " kernels, "
               << std::string(symbolic ? "symbolic sizes" : "specialised")
               << ", best of 5: " << milliseconds(result.totalNanoseconds) << " (" << perKernel
               << "); " << ioBytes / seconds / 1e9 << " GB/s over input + output");
  CHECK(result.totalNanoseconds > 0);
  return result.output;
}

// The default-lowered pipeline `name`, timed as runTimedProgram.
Value runTimed(const std::string& name, const Image& image, bool symbolic, double ioBytes) {
  return runTimedProgram(name, "unfused", loadPipeline(name), image, symbolic,
                         ioBytes);
}

void checkAgreement(const Agreement& agreement, const std::string& what) {
  CAPTURE(what);
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.mismatches << " of " << agreement.compared
                                                                << " pixels differ, first "
                                                                << agreement.firstMismatch);
  CHECK(agreement.tieFlips * 1000 <= agreement.compared);
}

}  // namespace

TEST_CASE("blur at 4096x4096: the unfused kernels equal the reference") {
  const Image image = randomImage(4096, 4096, 1, 2024);
  const Image expected = blurReference(image);
  const double ioBytes = 2.0 * 4.0 * image.width * image.height;
  for (bool symbolic : {true, false}) {
    const Value out = runTimed("blur", image, symbolic, ioBytes);
    checkAgreement(compareFloats(flattenToFloats(out), expected.data, image.width, image.height),
                   symbolic ? "blur symbolic" : "blur specialised");
  }
}

TEST_CASE("Harris at 4256x2832: the unfused kernels equal the reference") {
  const Image image = randomImage(4256, 2832, 1, 2025);
  const HarrisResult expected = harrisReference(image);
  const Value out = runTimed("harris", image, false, 2.0 * 4.0 * image.width * image.height);
  checkAgreement(compareFloats(flattenToFloats(out), expected.output.data, image.width,
                               image.height, expected.scale),
                 "harris");
}

// A measurement, not a test (skipped unless asked for: `test_pipelines_opencl_full_size
// --no-skip -tc='*fused-private*'`): Harris fused by pipeline-fused-private (Ixx fused into
// Sxx, 8 kernels) against the unfused 9, per kernel, for a few tiles and local sizes (theta2 = 18
// and 34: 16 and 32 output columns per tile, so that the response stage reads the fused
// kernel's tile-major output with power-of-two divisions; 14 columns for theta2 = 16).
TEST_CASE("measurement: Harris at 4256x2832 by pipeline-fused-private, per kernel" *
          doctest::skip()) {
  const Image image = randomImage(4256, 2832, 1, 2025);
  const HarrisResult expected = harrisReference(image);
  const double ioBytes = 2.0 * 4.0 * image.width * image.height;
  runTimed("harris", image, false, ioBytes);
  struct Variant {
    int theta1, theta2, localX;
  };
  for (const Variant& v :
       std::vector<Variant>{{10, 16, 0}, {10, 16, 16}, {10, 18, 0}, {10, 34, 0}}) {
    const std::string how = "pipeline-fused-private theta1=" + std::to_string(v.theta1) +
                            " theta2=" + std::to_string(v.theta2) +
                            " local=" + std::to_string(v.localX);
    const Value out = runTimedProgram(
        "harris", how, fusedPipeline("harris", "pipeline-fused-private", v.theta1, v.theta2), image,
        false, ioBytes, v.localX);
    checkAgreement(compareFloats(flattenToFloats(out), expected.output.data, image.width,
                                 image.height, expected.scale),
                   how);
  }
}
