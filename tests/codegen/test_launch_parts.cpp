// Launches in parts (codegen/launch_parts.h): the parts of a launch whose local size does not
// divide its global size cover every work-item exactly once, whole work-groups first, and in
// groups no larger than the local size; a launch whose local size divides is one part. And
// which generated kernels may be launched so (KernelPlan::launchableInParts): a kernel of
// mapGlb whose work-items read their place only from get_global_id may; one with work-groups
// (mapWrg/mapLcl) or the interior fast path (get_group_id) may not.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "codegen/compile_pipeline.h"
#include "codegen/launch_parts.h"
#include "ir/parser.h"

using namespace weft;

namespace {

// How often each work-item of `global` is run by `parts` (1D to 3D, flattened row-major).
std::map<int64_t, int> coverage(const std::vector<LaunchPart>& parts,
                                const std::array<int64_t, 3>& global) {
  std::map<int64_t, int> seen;
  for (const LaunchPart& part : parts) {
    for (int64_t z = 0; z < part.global[2]; ++z) {
      for (int64_t y = 0; y < part.global[1]; ++y) {
        for (int64_t x = 0; x < part.global[0]; ++x) {
          const int64_t gx = part.offset[0] + x, gy = part.offset[1] + y, gz = part.offset[2] + z;
          ++seen[(gz * global[1] + gy) * global[0] + gx];
        }
      }
    }
  }
  return seen;
}

const KernelPlan& onlyKernel(const CompiledProgram& program) {
  REQUIRE(program.kernels.size() == 1);
  return program.kernels.front();
}

}  // namespace

TEST_CASE("a launch in parts covers every work-item once, whole work-groups first") {
  const std::array<int64_t, 3> global{13, 11, 3};
  const std::array<int64_t, 3> local{4, 4, 2};
  for (int dimensions = 1; dimensions <= 3; ++dimensions) {
    CAPTURE(dimensions);
    std::array<int64_t, 3> g = global, l = local;
    for (int d = dimensions; d < 3; ++d) g[static_cast<size_t>(d)] = l[static_cast<size_t>(d)] = 1;
    CHECK(needsLaunchParts(dimensions, g, l));
    const std::vector<LaunchPart> parts = launchParts(dimensions, g, l);
    CHECK(parts.size() == (size_t{1} << dimensions));
    // The first part is every whole work-group, at offset 0.
    for (size_t d = 0; d < 3; ++d) {
      CHECK(parts[0].offset[d] == 0);
      CHECK(parts[0].local[d] == l[d]);
      CHECK(parts[0].global[d] == g[d] / l[d] * l[d]);
    }
    for (const LaunchPart& part : parts) {
      for (size_t d = 0; d < 3; ++d) {
        CHECK(part.global[d] % part.local[d] == 0);  // each part is a valid OpenCL 1.2 launch
        CHECK(part.local[d] <= l[d]);
        CHECK(part.offset[d] + part.global[d] <= g[d]);
      }
    }
    const std::map<int64_t, int> seen = coverage(parts, g);
    CHECK(static_cast<int64_t>(seen.size()) == g[0] * g[1] * g[2]);
    for (const auto& [item, times] : seen) CHECK(times == 1);
  }
}

TEST_CASE("a local size that divides, or exceeds, the global size") {
  CHECK_FALSE(needsLaunchParts(2, {64, 8, 1}, {16, 4, 1}));
  const std::vector<LaunchPart> one = launchParts(2, {64, 8, 1}, {16, 4, 1});
  REQUIRE(one.size() == 1);
  CHECK(one[0].global == std::array<int64_t, 3>{64, 8, 1});
  CHECK(one[0].local == std::array<int64_t, 3>{16, 4, 1});
  // A local size above the global size leaves no whole work-group: one part, the rest.
  const std::vector<LaunchPart> rest = launchParts(1, {5, 1, 1}, {8, 1, 1});
  REQUIRE(rest.size() == 1);
  CHECK(rest[0].global == std::array<int64_t, 3>{5, 1, 1});
  CHECK(rest[0].local == std::array<int64_t, 3>{5, 1, 1});
  // A prime length in groups of 512: 8191 = 15 * 512 + 511.
  const std::vector<LaunchPart> prime = launchParts(1, {8191, 1, 1}, {512, 1, 1});
  REQUIRE(prime.size() == 2);
  CHECK(prime[1].offset[0] == 7680);
  CHECK(prime[1].global[0] == 511);
  CHECK(prime[1].local[0] == 511);
}

TEST_CASE("which generated kernels can be launched in parts") {
  auto compile = [](const std::string& text, const ArithBinding& sizes) {
    return compileToOpenCL(parseProgram(text).definitions.back(), sizes);
  };
  // The default lowering of a map: one work-item per element, its place from get_global_id.
  const CompiledProgram map =
      compile("def f(x: [float]N): [float]N = map(a -> a * 2.0f, x)", {{"N", 8191}});
  CHECK(onlyKernel(map).launchableInParts);
  // Two dimensions of mapGlb.
  const CompiledProgram grid =
      compile("def f(x: [[float]W]H): [[float]W]H = mapGlb(1, r -> mapGlb(0, a -> a + 1.0f, r), x)",
              {{"W", 13}, {"H", 11}});
  CHECK(onlyKernel(grid).launchableInParts);
  // Work-groups: mapWrg and mapLcl read get_group_id and get_local_id.
  const CompiledProgram groups = compile(
      "def f(x: [float]N): [float]N = join(mapWrg(0, c -> mapLcl(0, a -> a * 2.0f, c), "
      "split(16, x)))",
      {{"N", 8192}});
  CHECK_FALSE(onlyKernel(groups).launchableInParts);
  // A clamped 1D stencil: the interior fast path bounds the group by get_group_id.
  const CompiledProgram clamped = compile(
      "def f(x: [float]N): [float]N = join(mapGlb(0, w -> toGlobal(r -> mapSeq(y -> id(y), r),\n"
      "  reduceSeqUnroll(toPrivate(z -> id(z), 0.0f), (acc, p) -> acc + p, w)),\n"
      "  slide(3, 1, pad(1, 1, clamp, x))))",
      {{"N", 8191}});
  CHECK(clamped.source.find("get_group_id") != std::string::npos);
  CHECK_FALSE(onlyKernel(clamped).launchableInParts);
}
