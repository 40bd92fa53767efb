// A cheap static cost model for sampled convolution-layer variants: the predicted time of one
// inference of a point, from the layer's sizes, the point's recorded parameters (the family's
// structure and tuning values, as parametersJson writes them) and the device profile — no code
// generation, no build, microseconds per point. The explorer measures its samples in
// ascending predicted cost (ExploreOptions::order) so that a fast variant sets the cut-offs
// (k × best: timeout; 10 × best: timed once) before the slow ones run; the set of samples is
// the same either way.
//
// The model is a throughput model of a CPU-like device with SIMD vector units (the facts are
// cited where they are used in cost_model.cpp): every kernel's time is the largest of its
// instruction issue time (FMA pipes, load ports), its dependency-chain time (FMA latency over
// the independent accumulators a work-item keeps) and its memory-copy time; penalties for
// spilled accumulators, unused vector lanes and work-groups that do not fill the compute
// units; one launch overhead per kernel. Preparation kernels (the vector family's weight
// re-layout) are left out, as the measurement leaves them out of the per-inference time.
// It ranks, it does not promise: the absolute figure is a nominal one for a 2-pipe FMA core at
// the profile's clock.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "host/device_profile.h"
#include "ir/arith.h"
#include "workloads/conv/conv_layer.h"

namespace weft::explore {

// One kernel's share of a prediction.
struct PredictedKernel {
  std::string name;    // "pad", "convolution", "partial convolution", "final reduction", "crop"
  double seconds = 0;  // predicted time of one launch, overhead included
  std::string limit;   // what bounds it: "fma issue", "loads", "fma latency", "memory copy"
};

struct CostPrediction {
  std::string family;  // "conv-direct", "register-blocked-vector", "winograd", "workgroup-tiled"
  double seconds = 0;  // predicted per-inference time (sum of the kernels)
  std::vector<PredictedKernel> kernels;
  // The factors applied to the main kernel (1 = no penalty), for reports and tests.
  double laneUse = 1;        // used lanes / native vector width
  double spillFactor = 1;    // > 1 when the accumulators exceed the register budget
  double balanceFactor = 1;  // > 1 when work-groups leave compute units idle at the end
  double flopsPerLoad = 0;   // floating-point operations per load instruction in the inner loop
};

// The layer of a Listing 3 size binding (C, H, W, M, K, P, S: workloads/conv/conv_layer.h
// convListing3Sizes), or nullopt when one is missing (a program that is not a layer).
std::optional<ConvLayer> convLayerFromSizes(const ArithBinding& sizes);

// The work-items of `registers` registers each that one compute unit of `device` holds at once:
// its registers per work-group over theirs, at most two work-groups of the largest size; one
// such work-group where the profile gives no register file. (What a GPU needs many of to hide
// memory latency; the split menus and the GPU latency bound both read it.)
double residentWorkItemsPerUnit(const host::DeviceProfile& device, double registers);

// The predicted cost of one variant of `layer` on `device`, or nullopt when the parameters name
// no family (conv-direct: v, unroll, theta, rho, kappa, sigma, omega; the vector family:
// vector_kappa, vector_sigma, rows; vector_pad_in_loads, vector_row_unroll, vector_interleave
// vector_channels_first absent = 0, vector_split absent = 1; Winograd: winograd_m,
// winograd_kappa, winograd_sigma, rows; the work-group-tiled family: tiled_rk, tiled_rp,
// tiled_staged, tk, th, tw, tc).
std::optional<CostPrediction> predictLayerVariantCost(
    const ConvLayer& layer, const std::map<std::string, int64_t>& parameters,
    const host::DeviceProfile& device);

}  // namespace weft::explore
