// A static cost model for an image pipeline's structures (pipeline_target.h: the program as
// written and its fusions with open tile sizes), so that `weft explore FILE` keeps and
// measures the promising tiles and local sizes first (the explorer's candidates and cost
// order, explore/explorer.h) instead of in sampled order. It also orders the structures the
// rewrite search reaches from a program without reductions (named by their rewrite hash), which
// differ in how they walk memory and divide work, not in what they compute.
//
// Per point, from the structure's analysis program (explore/parameter_space.h
// analysisProgram: launch sizes, buffers and private values as expressions in the tile
// sizes) and the device profile:
//   - compute: the floating-point operations of the point's program (typecheck/flop_count.h;
//     overlapped tiles recompute their halo, so smaller tiles count more) over the lanes in
//     use, times a spill factor when the work-item's private values (a fused tile, a sliding
//     window's rows) exceed the profile's registers, and the imbalance of the last round of
//     work-groups over the compute units;
//   - memory: every kernel reads and writes its global buffers once (the unfused program's
//     intermediate images count, the fused ones do not have them), at the bandwidth of the
//     units its work-groups keep busy (the same balance factor);
//   - a launch overhead per kernel, and on a CPU one per work-group (a kernel in groups of a
//     few work-items pays it per item);
// the time is the larger of compute and memory plus the launches and work-groups. It ranks, it does
// not promise: the rates are nominal (see pipeline_cost_model.cpp for their sources).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "explore/explorer.h"
#include "host/device_profile.h"
#include "ir/arith.h"
#include "ir/expr.h"

namespace weft::explore {

struct PipelineCostPrediction {
  double seconds = 0;         // max(compute, memory) + launches
  double computeSeconds = 0;  // flops over the lanes in use, spill and balance included
  // the bytes the kernels move through global memory (below) at the bandwidth, balance included
  double memorySeconds = 0;
  double launchSeconds = 0;
  // the work-groups' scheduling on a CPU (the profile's workGroupCycles per group)
  double workGroupSeconds = 0;
  // every global access executed (work-items that repeat an access included) at the
  // first-level cache's rate
  double accessSeconds = 0;
  // On a CPU, the lines the accesses load into a core's first-level cache
  // (explore/cache_footprint.h), balance included: data read again because what lies between
  // two uses of a line no longer fits. Those the second-level cache keeps (the same analysis at
  // its size) come back at the profile's secondLevelBytesPerCycle, the rest at the memory
  // bandwidth (all of them where the profile does not know that cache or its rate). Not in
  // `seconds` (on the pipelines' explorations it ranked worse than the bytes above); the cost model
  // of programs with reductions adds it (pipeline_workload.cpp). 0 on a GPU.
  double cacheSeconds = 0;
  double cacheBytes = 0;  // those lines' bytes
  // On a CPU, the vector operations the global reads take per read executed: 1 where none is
  // in a loop the OpenCL compiler vectorises, 1/lanes where all are (pipeline_cost_model.cpp
  // vectorLanes). The cost model of programs with reductions scales what they read by it.
  double readOperationsPerRead = 1;
  // a CPU's first-level cache conflicts of a walk by column blocks: the strip's output rows,
  // a multiple of 4 KiB apart, are as many store streams; past the profile's conflict-free
  // streams each vector store loses the probe's cycles (added to `seconds`)
  double storeConflictSeconds = 0;
  int64_t flops = 0;
  // every buffer a kernel takes, once (those it reads once more per strip of a walk down
  // strips: their halo rows); on a CPU those it writes once more (read for ownership) unless
  // the point streams its stores
  double bytes = 0;
  int kernels = 0;
  // The factors of the kernel with the most private values (the fused one), 1 = no penalty.
  double laneUse = 1;        // lanes in use over the native vector width
  double spillFactor = 1;    // > 1 when its private values exceed the registers
  double balanceFactor = 1;  // > 1 when the last round of work-groups leaves units idle
};

// The cache line and a CPU core's first-level data cache the model takes: the profile's, else
// the nominal 64 bytes and 32 KiB.
double cacheLineBytesOf(const host::DeviceProfile& device);
double firstLevelCacheBytesOf(const host::DeviceProfile& device);

// The local sizes kernel `index` of an analysis program launches with at a point: its own, else
// the point's open local sizes (codegen/compile_pipeline.h localSizeParameterName); 0 where
// the implementation chooses.
std::array<int64_t, 3> kernelLocalSizes(const KernelPlan& kernel, size_t index,
                                        const ArithBinding& binding,
                                        const std::map<std::string, int64_t>& parameters);

// The binding of a point: `sizes`, the recorded parameters, and each tuning variable of
// `structure` whose record names it by its stem (chunk1 recorded as chunk:
// explore::parametersJson) where that is unambiguous.
ArithBinding pointBinding(const Definition& structure, const ArithBinding& sizes,
                          const std::map<std::string, int64_t>& parameters);

// The model for the union of pipeline structures (each named by its "fusion" parameter, or a
// structure of the rewrite search by its "rewrite" parameter; neither: the program as
// written). Each structure is compiled for analysis once, when a point
// of it is first predicted. A point the model cannot evaluate (its structure does not compile,
// a size it cannot bind) gets nullopt. `cacheSeconds` is computed only `withCacheTraffic`
// (it is not part of `seconds`).
std::function<std::optional<PipelineCostPrediction>(const std::map<std::string, int64_t>&,
                                                    const host::DeviceProfile&)>
pipelineCostPredictor(const std::vector<ExploreTarget::Structure>& structures,
                      const ArithBinding& sizes, bool withCacheTraffic = false);

// The same as an ExploreTarget::predictSeconds.
std::function<std::optional<double>(const std::map<std::string, int64_t>&,
                                    const host::DeviceProfile&)>
pipelineCostModel(const std::vector<ExploreTarget::Structure>& structures,
                  const ArithBinding& sizes);

}  // namespace weft::explore
