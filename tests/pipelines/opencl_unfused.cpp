// The unfused lowering of the four image pipelines (examples/pipelines/): the default lowering
// (codegen/lowering.h) gives one kernel per stage, each writing its stage's image to a global
// buffer that the next kernels read (Halide's compute_root, the baseline fusion is measured
// against). Compiled with every size symbolic and specialised, run on the default OpenCL device
// (PoCL here), the results equal the C++ references of tests/support/pipeline_reference.h on
// small images (borders included), within a relative 1e-5 of each pixel's terms, with near-tie
// decisions counted apart (full-size images: opencl_full_size.cpp). Label opencl: skipped
// where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "tests/support/pipeline_opencl_fixture.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

// A pipeline, default-lowered and compiled with symbolic sizes.
struct Unfused {
  Definition original;
  Definition lowered;
  CompiledProgram symbolic;
};

Unfused compilePipeline(const std::string& name) {
  Unfused u;
  u.original = loadPipeline(name);
  u.lowered = u.original;
  u.symbolic = compileToOpenCL(u.lowered);
  return u;
}

// Runs `program` on `image` (canary regions checked); the output as a Value of the program's
// output type.
host::RunResult runOn(const Unfused& u, const CompiledProgram& program, const Image& image,
                      bool planes) {
  return runOnImage(program, u.lowered, image, imageSizes(image, planes));
}

struct Case {
  int width;
  int height;
  uint64_t seed;
  bool blocky;
};

const std::vector<Case>& smallCases() {
  static const std::vector<Case> cases = {{13, 9, 1, false}, {32, 32, 2, false}, {13, 9, 3, true},
                                          {32, 32, 4, true}, {1, 1, 5, false},   {2, 5, 6, false},
                                          {37, 3, 7, true}};
  return cases;
}

Image makeImage(const Case& c, int channels) {
  return c.blocky ? blockyImage(c.width, c.height, channels, c.seed)
                  : randomImage(c.width, c.height, channels, c.seed);
}

std::string describe(const Case& c) {
  return std::to_string(c.width) + "x" + std::to_string(c.height) + " seed " +
         std::to_string(c.seed) + (c.blocky ? " blocky" : " random");
}

void checkAgreement(const Agreement& agreement, const std::string& what) {
  CAPTURE(what);
  CHECK_MESSAGE(agreement.mismatches == 0, agreement.mismatches << " of " << agreement.compared
                                                                << " pixels differ, first "
                                                                << agreement.firstMismatch);
  CHECK(agreement.tieFlips * 100 <= agreement.compared);
}

// Compiles `name`, checks it has `stages` kernels, and runs every small case with symbolic sizes
// and the first one also specialised (each specialisation is one more OpenCL
// build), through `compare(output, image, label)`.
template <class Compare>
void checkSmallImages(const std::string& name, size_t stages, int channels, Compare compare) {
  const Unfused u = compilePipeline(name);
  CAPTURE(name);
  CAPTURE(u.symbolic.source);
  CHECK(u.symbolic.kernels.size() == stages);
  for (const Case& c : smallCases()) {
    const Image image = makeImage(c, channels);
    const bool planes = channels > 1;
    compare(runOn(u, u.symbolic, image, planes).output, image, name + " symbolic " + describe(c));
    if (&c != &smallCases().front()) continue;
    CodegenOptions specialised;
    specialised.specialize = imageSizes(image, planes);
    const CompiledProgram fixed = compileToOpenCL(u.lowered, specialised);
    CHECK(fixed.openSizes.empty());
    compare(runOn(u, fixed, image, planes).output, image, name + " specialised " + describe(c));
  }
}

}  // namespace

TEST_CASE("blur: two kernels on OpenCL equal the reference on small images") {
  checkSmallImages("blur", 2, 1, [](const Value& out, const Image& image, const std::string& what) {
    checkAgreement(
        compareFloats(flattenToFloats(out), blurReference(image).data, image.width, image.height),
        what);
  });
}

TEST_CASE("unsharp mask: four kernels on OpenCL equal the reference on small images") {
  size_t flips = 0;
  checkSmallImages("unsharp", 4, 3,
                   [&](const Value& out, const Image& image, const std::string& what) {
                     const UnsharpResult expected = unsharpReference(image);
                     const Agreement agreement =
                         compareFloats(flattenToFloats(out), expected.output.data, image.width,
                                       image.height, expected.scale, expected.fragile);
                     flips += agreement.tieFlips;
                     checkAgreement(agreement, what);
                   });
  MESSAGE("unsharp mask on OpenCL: " << flips << " threshold tie flips");
}

TEST_CASE("Harris: nine kernels on OpenCL equal the reference on small images") {
  checkSmallImages("harris", 9, 1,
                   [](const Value& out, const Image& image, const std::string& what) {
                     const HarrisResult expected = harrisReference(image);
                     checkAgreement(compareFloats(flattenToFloats(out), expected.output.data,
                                                  image.width, image.height, expected.scale),
                                    what);
                   });
}

TEST_CASE("Canny: seven kernels on OpenCL equal the reference on small images") {
  size_t flips = 0;
  checkSmallImages(
      "canny", 7, 1, [&](const Value& out, const Image& image, const std::string& what) {
        const CannyResult expected = cannyReference(image);
        const Agreement agreement = compareInts(flattenToInts(out), expected.labels.data,
                                                image.width, expected.labelFragile);
        flips += agreement.tieFlips;
        checkAgreement(agreement, what);
      });
  MESSAGE("canny on OpenCL: " << flips << " label tie flips");
}
