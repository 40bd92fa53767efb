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

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/pipeline_reference.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

Definition loadPipeline(const std::string& name) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/pipelines/" + name + ".weft")
      .definitions.back();
}

std::string milliseconds(uint64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", static_cast<double>(nanoseconds) / 1e6);
  return text;
}

// Runs the default-lowered pipeline `name` on `image` (sizes specialised unless `symbolic`),
// prints its times and returns its output.
Value runTimed(const std::string& name, const Image& image, bool symbolic, double ioBytes) {
  const Definition original = loadPipeline(name);
  const Definition lowered = lowerDefault(original);
  ArithBinding sizes{{"W", image.width}, {"H", image.height}};
  if (image.channels > 1) sizes["C"] = image.channels;
  CodegenOptions options;
  if (!symbolic) options.specialize = sizes;
  const CompiledProgram program = generateOpenCL(lowered, options);
  const Value input = valueFromFlat(original.function.params()[0].paramType(), sizes, image.data);
  host::RunOptions run;
  run.repeats = 5;
  const host::RunResult result = host::runProgram(context(), program, {input}, sizes, run);
  std::string perKernel;
  for (const host::KernelTime& k : result.kernels) {
    perKernel += (perKernel.empty() ? "" : ", ") + k.name + " " + milliseconds(k.nanoseconds);
  }
  const double seconds = static_cast<double>(result.totalNanoseconds) / 1e9;
  MESSAGE(name << " " << image.width << "x" << image.height << "x" << image.channels << " unfused, "
               << program.kernels.size() << " kernels, "
               << std::string(symbolic ? "symbolic sizes" : "specialised")
               << ", best of 5: " << milliseconds(result.totalNanoseconds) << " (" << perKernel
               << "); " << ioBytes / seconds / 1e9 << " GB/s over input + output");
  CHECK(result.totalNanoseconds > 0);
  return result.output;
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
