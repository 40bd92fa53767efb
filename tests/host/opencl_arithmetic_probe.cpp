// The arithmetic probe (host/arithmetic_probe.h) on the default device (label opencl): its
// rates are within what any CPU can have, with room for a turbo clock up to twice the nominal
// one (half to eight FMA instructions and loads per cycle, no more lanes at half width than at
// full width, a latency of one to a few tens of cycles, store streams up to 32 and a conflict
// costing cycles, not thousands, a work-group costing some cycles but not a millisecond), the
// profile it fills names them as
// measured and survives a JSON round trip, and a device that is not a CPU is left alone. A
// profile without a clock is refused.
#include "host/arithmetic_probe.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "host/device_profile.h"

using namespace weft::host;

namespace {

Context& context() {
  static Context ctx(selectDevice(""));
  return ctx;
}

}  // namespace

TEST_CASE("the arithmetic probe measures a CPU's FMA pipes, their width and the latency") {
  const DeviceProfile queried = queryProfile(context().device());
  if (queried.deviceType != "cpu" || queried.maxClockMHz <= 0) {
    MESSAGE("the default device is not a CPU with a known clock: nothing to probe");
    return;
  }
  const ArithmeticFacts facts = probeArithmetic(context(), queried);
  MESSAGE(facts.fmaLanesPerCycle << " / " << facts.fmaHalfWidthLanesPerCycle
                                  << " FMA lanes per cycle at full / half width, latency "
                                  << facts.fmaLatencyCycles << " cycles, "
                                  << facts.vectorLoadsPerCycle << " loads per cycle; "
                                  << facts.seconds << " s");
  const double width = queried.nativeFloatVectorWidth;
  CHECK(facts.fmaLanesPerCycle >= 0.5 * width / 2);
  CHECK(facts.fmaLanesPerCycle <= 8 * width);
  CHECK(facts.fmaHalfWidthLanesPerCycle <= 1.2 * facts.fmaLanesPerCycle);
  CHECK(facts.fmaLatencyCycles >= 1);
  CHECK(facts.fmaLatencyCycles <= 40);
  CHECK(facts.vectorLoadsPerCycle >= 0.5);
  CHECK(facts.vectorLoadsPerCycle <= 8);
  CHECK(facts.seconds < 10);
  // A first-level cache has a few ways to a few tens; past them a store loses cycles, not
  // thousands. 32 streams without conflicts means none seen (and no cycles lost).
  MESSAGE(facts.conflictFreeStoreStreams << " store streams without conflicts, "
                                         << facts.conflictingStoreCycles << " cycles past them");
  CHECK(facts.conflictFreeStoreStreams >= 0);
  CHECK(facts.conflictFreeStoreStreams <= 32);
  CHECK(facts.conflictingStoreCycles >= 0);
  CHECK(facts.conflictingStoreCycles < 1000);
  CHECK((facts.conflictFreeStoreStreams == 32) == (facts.conflictingStoreCycles == 0));
  // Memory bandwidth: more than 1 GB/s in all and less than what the core's loads could take
  // from its first-level cache.
  MESSAGE(facts.memoryBytesPerCycle << " bytes per cycle and compute unit from memory");
  CHECK(facts.memoryBytesPerCycle * queried.computeUnits * queried.maxClockMHz * 1e6 > 1e9);
  CHECK(facts.memoryBytesPerCycle < facts.vectorLoadsPerCycle * width * 4);

  // A work-group of one costs a CPU's scheduler a call at least (a few cycles), not a
  // millisecond.
  MESSAGE(facts.workGroupCycles << " cycles per work-group");
  CHECK(facts.workGroupCycles >= 1);
  CHECK(facts.workGroupCycles < 1e-3 * queried.maxClockMHz * 1e6);

  // The second-level cache, where its size is known: faster than memory (a core's share of
  // it), slower than the first-level cache's loads.
  if (queried.secondLevelCacheBytes > 0) {
    MESSAGE(facts.secondLevelBytesPerCycle << " bytes per cycle from the second-level cache");
    CHECK(facts.secondLevelBytesPerCycle > facts.memoryBytesPerCycle);
    CHECK(facts.secondLevelBytesPerCycle <= facts.vectorLoadsPerCycle * width * 4);
  } else {
    CHECK(facts.secondLevelBytesPerCycle == 0);
  }

  const DeviceProfile probed = withProbedArithmetic(context(), queried);
  CHECK(probed.fmaLanesPerCycle > 0);
  CHECK(probed.workGroupCycles > 0);
  CHECK(probed.fmaHalfWidthLanesPerCycle > 0);
  CHECK(probed.fmaLatencyCycles >= 1);
  CHECK(probed.vectorLoadsPerCycle > 0);
  CHECK(probed.memoryBytesPerCycle > 0);
  CHECK(probed.source.find("arithmetic probe") != std::string::npos);
  CHECK(profileFromJson(profileToJson(probed), "probed") == probed);
  // PoCL compiles with clang, which takes non-temporal stores.
  const bool pocl =
      context().device().platformName.find("Portable Computing Language") != std::string::npos;
  if (pocl) CHECK(probed.nontemporalStores);
  CHECK(probed.nontemporalStores == acceptsNontemporalStores(context()));
}

TEST_CASE("the arithmetic probe leaves other devices alone and needs a clock") {
  DeviceProfile gpu = queryProfile(context().device());
  gpu.deviceType = "gpu";
  CHECK(withProbedArithmetic(context(), gpu) == gpu);
  DeviceProfile noClock = queryProfile(context().device());
  noClock.maxClockMHz = 0;
  CHECK_THROWS_WITH_AS(probeArithmetic(context(), noClock),
                       doctest::Contains("needs the device's clock"), std::runtime_error);
}
