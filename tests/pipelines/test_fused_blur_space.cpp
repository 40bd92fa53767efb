// The parameter spaces of the fused blur (rewrite/strategy_pipeline_fusion.h) for the pocl-cpu
// device profile at 4096x4096 (explore/parameter_space.h), issue 9's point that tiles must fit
// the device: pipeline-fused-local runs a work-group of theta1 x theta2 work-items (the
// producer's tile with its halo, mapLcl over both dimensions), so its space carries the
// hardware constraint "work-group size <= maxWorkGroupSize" over theta1 and theta2 and rejects
// tiles over 4096 work-items that the algorithmic constraints alone allow (the previous
// measurements ran into launches that failed). pipeline-fused-private leaves the local size
// open: its space has no work-group constraint on the tile, and the tile sizes obey the
// algorithmic constraints (theta1 - 2 divides H, theta2 divides W); with a device its private
// tile (theta1 x theta2 floats) is held to the profile's registers per work-item.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "explore/launch_parameters.h"
#include "explore/parameter_space.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_programs.h"

using namespace weft;

namespace {

// The point (values in the space's parameter order) with theta1 = a, theta2 = b; every other
// parameter (there are none for these programs) at its lowest value.
std::vector<int64_t> point(const explore::ParameterSpace& space, int64_t a, int64_t b) {
  std::vector<int64_t> values;
  for (const explore::Parameter& p : space.parameters) {
    if (p.name == "theta1") {
      values.push_back(a);
    } else if (p.name == "theta2") {
      values.push_back(b);
    } else {
      values.push_back(p.lo);
    }
  }
  return values;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  return all;
}

}  // namespace

TEST_CASE("pipeline-fused-local's space keeps the work-group within the device's limit") {
  rewrite::RewriteContext context;
  rewrite::StrategyResult fused =
      rewrite::pipelineFusedLocal({})(testing::pipelines::loadPipeline("blur"), context);
  REQUIRE_MESSAGE(fused.success(), fused.failure);
  explore::SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  REQUIRE(options.device->maxWorkGroupSize == 4096);
  const explore::ParameterSpace space =
      explore::buildParameterSpace(*fused.definition, {{"W", 4096}, {"H", 4096}}, options);
  REQUIRE_MESSAGE(space.hardwareConstraints, space.hardwareNote);
  REQUIRE(space.find("theta1"));
  REQUIRE(space.find("theta2"));
  bool workGroupConstraint = false;
  for (const explore::SpaceConstraint& c : space.constraints) {
    const std::string text = c.constraint.formula();
    if (c.source == explore::ConstraintSource::Hardware && text.find("4096") != std::string::npos &&
        text.find("theta") != std::string::npos &&
        c.constraint.origin.find("work-group size") != std::string::npos) {
      workGroupConstraint = true;
    }
  }
  CHECK(workGroupConstraint);
  // 34 x 64 = 2176 work-items fit (32 | 4096 and 64 | 4096).
  CHECK(space.violations(point(space, 34, 64)).empty());
  // 66 x 128 = 8448 work-items: algorithmically fine (64 | 4096, 128 | 4096), too big a group.
  const std::vector<std::string> tooBig = space.violations(point(space, 66, 128));
  CAPTURE(joined(tooBig));
  CHECK_FALSE(tooBig.empty());
  bool namesGroup = false;
  for (const std::string& v : tooBig)
    namesGroup = namesGroup || v.find("work-group") != std::string::npos;
  CHECK(namesGroup);
}

TEST_CASE(
    "pipeline-fused-private's space has the tiling constraints and no work-group limit on the "
    "tile") {
  rewrite::RewriteContext context;
  rewrite::StrategyResult fused =
      rewrite::pipelineFusedPrivate({})(testing::pipelines::loadPipeline("blur"), context);
  REQUIRE_MESSAGE(fused.success(), fused.failure);
  const explore::ParameterSpace space =
      explore::buildParameterSpace(*fused.definition, {{"W", 4096}, {"H", 4096}}, {});
  REQUIRE(space.find("theta1"));
  REQUIRE(space.find("theta2"));
  CHECK(space.violations(point(space, 66, 128)).empty());
  CHECK(space.violations(point(space, 10, 16)).empty());
  CHECK_FALSE(space.violations(point(space, 11, 16)).empty());  // 9 does not divide 4096
  CHECK_FALSE(space.violations(point(space, 10, 24)).empty());  // 24 does not divide 4096
}

TEST_CASE("pipeline-fused-private's private tile is held to the device's register budget") {
  // The tile's length depends on theta1 and theta2, so code generation cannot size it; the
  // space's analysis counts it symbolically (CodegenOptions::symbolicPrivateArrays) and the
  // device profile's registers per work-item bound it (pocl-cpu: 384 floats).
  rewrite::RewriteContext context;
  rewrite::StrategyResult fused =
      rewrite::pipelineFusedPrivate({})(testing::pipelines::loadPipeline("blur"), context);
  REQUIRE_MESSAGE(fused.success(), fused.failure);
  explore::SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  REQUIRE(options.device->registersPerWorkItem == 384);
  const explore::ParameterSpace space =
      explore::buildParameterSpace(*fused.definition, {{"W", 4096}, {"H", 4096}}, options);
  REQUIRE_MESSAGE(space.hardwareConstraints, space.hardwareNote);
  // The local sizes of the fused kernel are open (parameters); any valid ones will do here.
  auto withLocal = [&](int64_t a, int64_t b) {
    std::vector<int64_t> values = point(space, a, b);
    for (size_t i = 0; i < space.parameters.size(); ++i) {
      if (space.parameters[i].launchKernel >= 0) values[i] = 1;
    }
    return values;
  };
  CHECK(space.violations(withLocal(6, 64)).empty());  // 6 x 64 = 384 floats
  const std::vector<std::string> tooBig = space.violations(withLocal(258, 256));
  CAPTURE(joined(tooBig));
  REQUIRE(tooBig.size() == 1);  // algorithmically valid: 256 | 4096 twice
  CHECK(tooBig.front().find("private values per work-item") != std::string::npos);
}

TEST_CASE("on a CPU, a private tile may fill the first-level data cache, not only the registers") {
  // A CPU's values past the registers spill to the work-item's stack, which stays in the
  // first-level data cache as the native vector's lanes share it (explore/launch_parameters.h
  // privateValuesBound): an AVX2 core's 64 registers and 32 KiB of L1 admit tiles up to
  // 32768 / 4 / 8 = 1024 floats. A GPU's registers still bound.
  rewrite::RewriteContext context;
  rewrite::StrategyResult fused =
      rewrite::pipelineFusedPrivate({})(testing::pipelines::loadPipeline("blur"), context);
  REQUIRE_MESSAGE(fused.success(), fused.failure);
  host::DeviceProfile avx2 = host::loadProfile("pocl-cpu");
  avx2.preferredFloatVectorWidth = avx2.nativeFloatVectorWidth = 8;
  avx2.registersPerWorkItem = 64;
  avx2.firstLevelCacheBytes = 32 << 10;
  CHECK(explore::privateValuesBound(avx2) == 1024);
  host::DeviceProfile gpuLike = avx2;
  gpuLike.deviceType = "gpu";
  CHECK(explore::privateValuesBound(gpuLike) == 64);
  host::DeviceProfile unknownCache = avx2;
  unknownCache.firstLevelCacheBytes = 0;
  CHECK(explore::privateValuesBound(unknownCache) == 64);

  auto violations = [&](const host::DeviceProfile& device, int64_t a, int64_t b) {
    explore::SpaceOptions options;
    options.device = device;
    const explore::ParameterSpace space =
        explore::buildParameterSpace(*fused.definition, {{"W", 4096}, {"H", 4096}}, options);
    REQUIRE_MESSAGE(space.hardwareConstraints, space.hardwareNote);
    std::vector<int64_t> values = point(space, a, b);
    for (size_t i = 0; i < space.parameters.size(); ++i) {
      if (space.parameters[i].launchKernel >= 0) values[i] = 1;
    }
    return space.violations(values);
  };
  CHECK(violations(avx2, 6, 64).empty());   // 384 floats: past the registers, within L1
  CHECK(violations(avx2, 10, 64).empty());  // 640 floats
  const std::vector<std::string> pastCache = violations(avx2, 18, 64);  // 1152 floats
  CAPTURE(joined(pastCache));
  REQUIRE(pastCache.size() == 1);
  CHECK(pastCache.front().find("first-level data cache") != std::string::npos);
  const std::vector<std::string> onGpu = violations(gpuLike, 6, 64);
  CAPTURE(joined(onGpu));
  REQUIRE(onGpu.size() == 1);
  CHECK(onGpu.front().find("at most the registers per work-item") != std::string::npos);
}
