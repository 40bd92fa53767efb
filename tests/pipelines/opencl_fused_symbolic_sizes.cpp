// Fused pipelines generated with SYMBOLIC sizes (W, H, C left open, as `weft explore FILE
// --size` and bench/pipelines' probes generate them), issue 9's regression tests:
//   - unsharp mask fused by pipeline-fused-private-pointwise: code generation used to take
//     1.6 GB and 7 s for a 6x4 tile and over 8 GB for the bench's 12x16 (codegen noted every
//     read's whole view tree, a DAG walked as a tree, and promoted private arrays with
//     std::regex). Each generation runs first in a forked child under a 2 GiB address-space
//     limit and a 30 s alarm, so that a regression fails here instead of exhausting the
//     machine; then the source must stay under a size bound and the call under 5 s.
//   - Harris fused by pipeline-fused-private and pipeline-fused-local: the strategies used to
//     unroll (or make sequential) the seven stages they do not fuse, whole images (no code
//     with symbolic sizes; gigabytes with specialised ones), and the local one failed ("a
//     value computed by mapGlb ... cannot be read back in the same kernel"). Now those stages
//     keep the default lowering, one kernel each, and none computes a padded image (the
//     strategies used to move every stage's pad below its producer, not only the fused one's).
// Every fused program generated with symbolic sizes then runs on OpenCL on small images
// (borders included) and must equal the unfused program bit for bit, and the C++ reference of
// tests/support/pipeline_reference.h (unsharp's threshold ties counted apart, the tolerance
// not loosened). Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "tests/support/bounded_child.h"
#include "tests/support/pipeline_opencl_fixture.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::testing::pipelines;

namespace {

// Runs `work` in a forked child limited to `bytes` of address space and `seconds` of time;
// the empty string when it returned, otherwise what stopped it.
std::string inBoundedChild(const std::function<void()>& work, size_t bytes, unsigned seconds) {
  using Kind = testing::BoundedChildOutcome::Kind;
  const testing::BoundedChildOutcome outcome = testing::runInBoundedChild(work, bytes, seconds);
  switch (outcome.kind) {
    case Kind::Returned:
      return "";
    case Kind::TimedOut:
      return "over " + std::to_string(seconds) + " s";
    case Kind::OutOfMemory:
      return "ran out of its " + std::to_string(bytes >> 20) + " MiB of address space";
    case Kind::Threw:
      return "threw";
    case Kind::NotForked:
      return "could not fork";
    case Kind::Stopped:
      break;
  }
  return "stopped (status " + std::to_string(outcome.status) + ")";
}

// Generates `lowered` with every size symbolic: bounded first in a child, then here, timed.
CompiledProgram generateSymbolic(const Definition& lowered, size_t maxSourceChars) {
  const std::string stopped =
      inBoundedChild([&] { compileToOpenCL(lowered, CodegenOptions{}); }, size_t(2) << 30, 30);
  REQUIRE_MESSAGE(stopped.empty(), "code generation with symbolic sizes " << stopped);
  const auto start = std::chrono::steady_clock::now();
  CompiledProgram program = compileToOpenCL(lowered, CodegenOptions{});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE(program.kernels.size() << " kernels, " << program.source.size() << " characters in "
                                 << seconds << " s");
  CHECK(seconds < 5.0);
  CHECK(program.source.size() < maxSourceChars);
  CHECK(program.openSizes.size() >= 2);  // W and H stayed symbolic
  return program;
}

// The fused definition's constraints (from typecheck) hold for these sizes.
bool tilesFit(const Definition& lowered, const ArithBinding& sizes) {
  for (const Constraint& c : typecheck(lowered).constraints) {
    if (c.evaluate(sizes) == std::optional<bool>(false)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("fused unsharp mask: symbolic-size generation is bounded and equals the unfused") {
  struct Tiling {
    int theta1, theta2, width, height;
    size_t maxSourceChars;
  };
  // theta1 - 4 divides H, theta2 divides W. 12x16 is the bench's tile (it took over 8 GB).
  const std::vector<Tiling> tilings = {{6, 4, 12, 8, 60000}, {12, 16, 32, 16, 500000}};
  for (const Tiling& t : tilings) {
    CAPTURE(t.theta1);
    CAPTURE(t.theta2);
    const Definition lowered =
        fusedPipeline("unsharp", "pipeline-fused-private-pointwise", t.theta1, t.theta2);
    const CompiledProgram program = generateSymbolic(lowered, t.maxSourceChars);
    CHECK(program.kernels.size() == 1);
    for (int seed : {5, 6}) {
      CAPTURE(seed);
      const Image image =
          seed == 5 ? blockyImage(t.width, t.height, 3, 5) : randomImage(t.width, t.height, 3, 6);
      const ArithBinding sizes{{"W", image.width}, {"H", image.height}, {"C", image.channels}};
      REQUIRE(tilesFit(lowered, sizes));
      const std::vector<float> got =
          flattenToFloats(runOnImage(program, lowered, image, sizes).output);
      CHECK(got == unfusedOutput("unsharp", image, sizes));
      const UnsharpResult reference = unsharpReference(image);
      const Agreement agreement = compareFloats(got, reference.output.data, image.width,
                                                image.height, reference.scale, reference.fragile);
      CHECK_MESSAGE(agreement.mismatches == 0,
                    agreement.mismatches << " pixels differ, first " << agreement.firstMismatch);
    }
  }
}

TEST_CASE("fused Harris (private and local): symbolic-size generation, equal to the unfused") {
  struct Variant {
    const char* strategy;
    int theta1, theta2, width, height;
  };
  // Ixx fused into Sxx (the first pair the strategies find); the seven other stages keep one
  // kernel each: 8 kernels instead of 9.
  const std::vector<Variant> variants = {{"pipeline-fused-private", 6, 4, 12, 8},
                                         {"pipeline-fused-private", 10, 18, 32, 16},
                                         {"pipeline-fused-local", 6, 4, 12, 8},
                                         {"pipeline-fused-local", 10, 10, 16, 16}};
  for (const Variant& v : variants) {
    CAPTURE(std::string(v.strategy));
    CAPTURE(v.theta1);
    CAPTURE(v.theta2);
    const Definition lowered = fusedPipeline("harris", v.strategy, v.theta1, v.theta2);
    // 200 000: the interior fast path emits the fused work-item body twice (checked, fast).
    const CompiledProgram program = generateSymbolic(lowered, 200000);
    CHECK(program.kernels.size() == 8);
    for (int seed : {7, 8}) {
      CAPTURE(seed);
      const Image image =
          seed == 7 ? blockyImage(v.width, v.height, 1, 7) : randomImage(v.width, v.height, 1, 8);
      const ArithBinding sizes{{"W", image.width}, {"H", image.height}};
      REQUIRE(tilesFit(lowered, sizes));
      // Only the fused consumer's pad moves below its producer: no stage left apart computes a
      // padded (W + 2) x (H + 2) image (Iyy did, 20x slower at full size on PoCL).
      // (Kernels with a local size are the fused-local one: a work-group per tile, halo included.)
      for (const KernelPlan& kernel : program.kernels) {
        if (kernel.hasLocalSize) continue;
        CAPTURE(kernel.name);
        CHECK(evaluate(kernel.globalSize[0], sizes) * evaluate(kernel.globalSize[1], sizes) <=
              int64_t(image.width) * image.height);
      }
      const std::vector<float> got =
          flattenToFloats(runOnImage(program, lowered, image, sizes).output);
      const HarrisResult reference = harrisReference(image);
      checkSameAsUnfused(got, unfusedOutput("harris", image, sizes), image.width, image.height,
                         reference.scale);
      const Agreement agreement =
          compareFloats(got, reference.output.data, image.width, image.height, reference.scale);
      CHECK_MESSAGE(agreement.mismatches == 0,
                    agreement.mismatches << " pixels differ, first " << agreement.firstMismatch);
    }
  }
}
