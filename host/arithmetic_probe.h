// The arithmetic probe: a CPU device's arithmetic rates measured by running small kernels on
// it, for the facts OpenCL does not report (how many FMA lanes it retires per cycle at full and
// at half vector width, an FMA's latency, and how many vector loads it issues per cycle). The
// cost model of a convolution variant needs them; without a probe it would assume one CPU's
// organisation for every CPU.
//
// Four kernels, each over one work-item per compute unit (work-groups of one, so that the
// explicit vectors are executed as written, not re-vectorised across work-items), timed by
// their cl_events, each the best of a few runs of about 20 ms:
//   - FMA throughput at the native width W: 12 independent float<W> accumulator chains updated
//     by fma in a loop (more chains than pipes × latency on the CPUs weft targets, so that no
//     chain waits for its previous result);
//   - the same at half that width (a CPU whose pipes are half the vector, AMD Zen 4, retires as
//     many lanes; one whose pipes are the whole vector, Zen 5 or Intel Skylake-SP, half as many);
//   - FMA latency: one float<W> chain, each fma waiting for the previous one;
//   - vector loads: float<W> loads from a 4 KiB buffer (in the first-level cache) OR-ed into 12
//     integer accumulators (integer ORs have more ports than loads, so the loads bound it);
//   - store streams: scalar stores into S streams 17 x 4 KiB apart, each step one store to every
//     stream (as a convolution work-item stores its κ output channels pixel by pixel into planes
//     of the output), against the same with the streams one 64-byte line further apart each.
//     Streams a multiple of 4 KiB apart fall into the same set of a first-level cache (its size
//     over its ways is 4 KiB on the x86 cores weft targets: Intel's and AMD's optimization
//     manuals); past the set's ways each store misses the cache. S in {4, 8, 12, 16, 24, 32}:
//     the most streams that do not make the stores twice as slow, and the cycles a store loses
//     past them.
// And the second-level cache's read rate, where the profile knows that cache's size: one
// work-item per compute unit adds up uint<W> vectors of its own buffer half the cache's size,
// a half of it per iteration, alternately (each half many times the first-level cache).
// And memory bandwidth: one work-item per compute unit copies its part of a buffer several
// times larger than the device's global memory cache (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, the last
// level on a CPU; at least 64 MiB) into another with ordinary vector stores, each buffer written
// before so that its pages are real. A copy moves three times its buffer: the read, and each
// written line read for ownership and written back. The best of a few copies gives the bytes
// per cycle and compute unit that streaming code moves, counted as a cost model counts them.
// And the cost of a work-group: a kernel that stores one float per work-item, over the same
// work-items in work-groups of one and of kWorkGroupItems, timed by its events; the difference
// over the difference in work-groups gives the cycles a compute unit spends per work-group
// beyond its work-items' work (PoCL runs each work-group as a call of the work-group function
// from its thread pool's task queue).
// Besides the rates, whether the compiler accepts clang's __builtin_nontemporal_store (a
// one-line kernel built; a build error means no), for DeviceProfile::nontemporalStores.
// Every rate is per compute unit and per cycle of the profile's clock (maxClockMHz, the nominal
// clock): a turbo clock shows as more per cycle, consistently in every rate, which the cost
// model multiplies by the same clock.
#pragma once

#include "host/device_profile.h"
#include "host/opencl_runtime.h"

namespace weft::host {

struct ArithmeticFacts {
  double fmaLanesPerCycle = 0;           // float<W> FMAs: lanes per cycle per compute unit
  double fmaHalfWidthLanesPerCycle = 0;  // float<W/2> FMAs
  double fmaLatencyCycles = 0;           // from an FMA to the next one using its result
  double vectorLoadsPerCycle = 0;        // float<W> loads from the first-level cache
  double conflictFreeStoreStreams = 0;   // store streams 4 KiB-multiples apart without conflicts
  double conflictingStoreCycles = 0;     // cycles a store loses past them (0: none up to 32)
  double memoryBytesPerCycle = 0;        // bytes moved to and from memory while all units copy
  double secondLevelBytesPerCycle = 0;   // bytes read from the second-level cache (0: unknown)
  double workGroupCycles = 0;            // cycles a compute unit spends per work-group
  double seconds = 0;                    // the probe's own time, its build included
};

// Runs the probe on the context's device with the profile's native width, compute units and
// clock. Throws OpenCLError when a kernel cannot be built or run, std::runtime_error when the
// profile has no clock or a timing makes no sense.
ArithmeticFacts probeArithmetic(Context& context, const DeviceProfile& profile);

// Whether the context's device builds a kernel using __builtin_nontemporal_store.
bool acceptsNontemporalStores(Context& context);

// The profile with the probe's rates and nontemporalStores filled in (rounded to 0.1) and its
// source saying so; profiles of other than CPU devices are returned unchanged.
DeviceProfile withProbedArithmetic(Context& context, DeviceProfile profile);

// The profile with every rate the probe measures unknown (0), so that a cost model uses its
// defaults: what must not move with the probe's run-to-run noise (the points an exploration
// keeps for a seed) is predicted with it. nontemporalStores, found by a build, stays.
DeviceProfile withoutProbedRates(DeviceProfile profile);

}  // namespace weft::host
