// The static cost model of workloads/conv/cost_model.h: per kernel, the largest of FMA issue time,
// load time and FMA dependency-chain time over the work-items, times penalties, plus the
// memory-copy kernels (pad, final reduction, crop) and a launch overhead per kernel.
//
// Facts used (the sources are named where the numbers are used):
//  - The profile's arithmetic rates (DeviceProfile::fmaLanesPerCycle,
//    fmaHalfWidthLanesPerCycle, fmaLatencyCycles, vectorLoadsPerCycle: measured on the device
//    by host/arithmetic_probe.h, or given in a profile file): an FMA of more than half the
//    native width takes its lanes over the full-width rate, a narrower one at least half the
//    width over the half-width rate (it may occupy a whole pipe); a chain of FMAs into one
//    accumulator completes one per latency, so a work-item needs enough independent
//    accumulators to cover it; loads issue at the load rate. Where the profile does not know
//    them, the model assumes AMD Zen 4's (AMD's Software Optimization Guide for Family 19h
//    processors, Agner Fog's instruction tables): two 256-bit FMA pipes (a 512-bit FMA
//    occupies both for one cycle), so the native width's lanes per cycle at full and at half
//    width, a latency of 4 cycles and two vector loads per cycle.
//  - Measurements of the register-blocked vector family on PoCL (AVX-512): 14–16 float16
//  accumulators per work-item are best, at
//    ~28 the compiler spills and the speed halves (the profile's registersPerWorkItem, 384
//    floats = 24 float16 registers, is that budget); explicit vectors are needed (PoCL does not
//    vectorize a scalar reduction: ≈ 3.7 GFLOP/s); a separate pad kernel costs 4–7 ms on
//    conv1_2 (3.3 M padded elements: ≈ 6 cycles per element on 2 cores at 2.6 GHz).
//  - The profile's store streams (conflictFreeStoreStreams, conflictingStoreCycles: measured by
//    the arithmetic probe): a vector work-item's κ output planes, 4 KiB-multiples apart, conflict
//    in the first-level cache past that many streams (measured with 224×224 output planes on an
//    8-way cache: κ 16 slower than κ 8 at the same σ, though it issues half the FMAs).
//  - Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks" (CVPR 2016): the
//    Winograd family's (m+2)² products over the channels per m×m output tile.
//  - The LIFT direct-convolution paper (section 4.2): conv-direct's four kernels (pad, partial
//    convolution over chunks of ω window elements, final reduction over the chunks, crop) and
//    its parameters θ, ρ (extra windows per dimension), κ × σ blocks per work-item, ω, v.
#include "workloads/conv/cost_model.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

namespace weft::explore {

namespace {

// The nominal core the model assumes, from the profile and the facts above.
struct CoreModel {
  double clockHz = 1e9;
  double cores = 1;
  int64_t nativeLanes = 1;          // the profile's native float vector width
  double fmaLanesPerCycle = 1;      // FMA lanes per cycle at the native width (profile)
  double fmaHalfWidthLanesPerCycle = 1;  // at half the native width (profile)
  double fmaLatency = 4;            // cycles from an FMA to the next one using its result (profile)
  double loadsPerCycle = 2;         // vector or scalar loads per cycle (profile)
  int64_t registerBudget = 1;       // accumulators (one vector register each) before spilling
  double copyCyclesPerElement = 6;  // a generated copy kernel (pad, crop) per element
  double launchSeconds = 20e-6;     // per kernel launch (PoCL's overhead is tens of µs)
  bool cpu = true;
  double gpuLanes = 1;  // a GPU compute unit's FP32 lanes (4 schedulers × the warp width)
  const host::DeviceProfile* device = nullptr;  // for what a compute unit holds (GPU)
  double stepLatencyCycles = 200;               // a lone GPU work-item's cycles per window element
  double conflictFreeStoreStreams = 0;  // store streams 4 KiB-multiples apart, no conflicts (profile)
  double conflictingStoreCycles = 0;    // cycles a store loses past them (profile; 0: unknown)
};

CoreModel coreModel(const host::DeviceProfile& device) {
  CoreModel core;
  core.clockHz = device.maxClockMHz > 0 ? device.maxClockMHz * 1e6 : 1e9;
  core.cores = std::max(1, device.computeUnits);
  core.nativeLanes = std::max(1, device.nativeFloatVectorWidth);
  core.fmaLanesPerCycle = static_cast<double>(core.nativeLanes);
  core.fmaHalfWidthLanesPerCycle = static_cast<double>(core.nativeLanes);
  if (device.fmaLanesPerCycle > 0) core.fmaLanesPerCycle = device.fmaLanesPerCycle;
  if (device.fmaHalfWidthLanesPerCycle > 0) {
    core.fmaHalfWidthLanesPerCycle = device.fmaHalfWidthLanesPerCycle;
  }
  if (device.fmaLatencyCycles > 0) core.fmaLatency = device.fmaLatencyCycles;
  if (device.vectorLoadsPerCycle > 0) core.loadsPerCycle = device.vectorLoadsPerCycle;
  core.conflictFreeStoreStreams = device.conflictFreeStoreStreams;
  core.conflictingStoreCycles = device.conflictingStoreCycles;
  core.registerBudget = std::max<int64_t>(1, device.registersPerWorkItem / core.nativeLanes);
  core.cpu = device.deviceType == "cpu";
  if (!core.cpu) {
    // A GPU compute unit runs 4 warps' instructions per cycle (NVIDIA since Maxwell: four
    // schedulers per SM; the profile's work-group multiple is the warp width). A copy kernel
    // is bound by memory bandwidth: 8 bytes moved per element at about 16 bytes per SM-cycle
    // (an H100/H200's 4-5 TB/s over 132 SMs at about 2 GHz; the profile has no bandwidth yet),
    // and a launch costs microseconds, not tens.
    core.gpuLanes = 4.0 * std::max(1, device.workGroupMultiple);
    core.copyCyclesPerElement = 0.5;
    core.launchSeconds = 5e-6;
    core.device = &device;
  }
  return core;
}

int64_t ceilDiv(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

// Cycles one FMA instruction of `lanes` (at most the native width) occupies a compute unit's
// FMA pipes: more than half the width at the full-width rate, a narrower one as a half-width
// one at the half-width rate.
double fmaInstructionCycles(int64_t lanes, const CoreModel& core) {
  if (2 * lanes > core.nativeLanes) return static_cast<double>(lanes) / core.fmaLanesPerCycle;
  const int64_t halfWidth = std::max<int64_t>(1, core.nativeLanes / 2);
  return static_cast<double>(std::max(lanes, halfWidth)) / core.fmaHalfWidthLanesPerCycle;
}

int64_t valueOr(const std::map<std::string, int64_t>& parameters, const std::string& name,
                int64_t fallback) {
  auto it = parameters.find(name);
  return it == parameters.end() ? fallback : it->second;
}

// A copy-like kernel over `elements` values spread over the cores.
PredictedKernel copyKernel(const std::string& name, double elements, const CoreModel& core) {
  return {name,
          elements * core.copyCyclesPerElement / core.cores / core.clockHz + core.launchSeconds,
          "memory copy"};
}

// How much longer the last round of work-groups makes a kernel: ceil(g / cores) / (g / cores).
double balance(double workGroups, const CoreModel& core) {
  if (workGroups <= 0) return 1;
  return std::ceil(workGroups / core.cores) / (workGroups / core.cores);
}

// The register-blocked vector family: σ float<κ> accumulators per work-item, one weight
// vector load and σ broadcast input loads per window element (K·K·C of them), R output rows per
// work-group; a pad kernel unless the convolution pads in its loads. A σ that does not divide
// the output width computes ⌈outW/σ⌉·σ pixels per row (the surplus of the last block dropped). With row_unroll the taps of
// a window row are unrolled inside the channel loop: a row's (σ - 1)·stride + K distinct input
// values are loaded once for its K taps (the compiler merges the loads of one address), so a
// window element costs ((σ - 1)·stride + K) / K broadcasts instead of σ. A split into S parts
// of the channels gives S times the work-items, each over K·K·C/S elements, and a final kernel
// adding the partial sums.
CostPrediction vectorFamilyCost(const ConvLayer& layer, int64_t kappa, int64_t sigma, int64_t rows,
                                int64_t padInLoads, int64_t rowUnroll, int64_t interleave,
                                int64_t channelsFirst, int64_t split, const CoreModel& core) {
  CostPrediction out;
  out.family = "register-blocked-vector";
  const int64_t outH = layer.outH(), outW = layer.outW();
  const int64_t registersPerVector = ceilDiv(kappa, core.nativeLanes);
  const int64_t lanes = std::min(kappa, core.nativeLanes);
  out.laneUse = static_cast<double>(lanes) / static_cast<double>(core.nativeLanes);
  double broadcasts = rowUnroll != 0 ? static_cast<double>((sigma - 1) * layer.stride + layer.K) /
                                           static_cast<double>(layer.K)
                                     : static_cast<double>(sigma);
  double fmaCycles = 0, loadCycles = 0, latencyCycles = 0, loads = 0;
  if (core.cpu) {
    // One window element: σ × (vector registers per accumulator) FMAs, each taking
    // ceil(lanes / pipe lanes) pipe slots; σ broadcasts and one weight vector loaded; every
    // accumulator's chain advances by one FMA (the latency bound). A CPU work-item walks its
    // own loop: consecutive windows are one contiguous run, interleaved ones strided.
    if (interleave != 0) broadcasts *= 1.25;
    fmaCycles = static_cast<double>(sigma * registersPerVector) * fmaInstructionCycles(lanes, core);
    loads = broadcasts + static_cast<double>(registersPerVector);
    loadCycles = loads / core.loadsPerCycle;
    latencyCycles = core.fmaLatency;
  } else {
    // A GPU issues the loads of a row's work-items together: neighbouring work-items read
    // pixels σ·stride (consecutive blocks) or stride (interleaved) apart, times C floats unless
    // the padded input is stored channels-first; at d floats apart a warp's load touches
    // min(8, d) times the 32-byte sectors of neighbouring addresses (CUDA C++ Best Practices
    // Guide, "Coalesced Access to Global Memory"). Per work-item (one lane) and window
    // element: σ·κ scalar FMAs; those input loads and the κ weights, the same for every
    // work-item of the group (one float4 load per four), through load/store units with a
    // quarter of the FP32 lanes (Hopper SM: 32 FP32 and 8 LD/ST lanes per partition). Other
    // warps hide the latency. Measured on an H200 through NVIDIA's OpenCL
    // (bench/results/nvidia-h200): channels-first interleaved blocks 2-3× faster than blocks
    // that read [H][W][C] in place.
    const int64_t apart =
        (interleave != 0 ? 1 : sigma) * layer.stride * (channelsFirst != 0 ? 1 : layer.C);
    broadcasts *= static_cast<double>(std::min<int64_t>(8, apart));
    fmaCycles = static_cast<double>(sigma * kappa);
    loads = broadcasts + static_cast<double>(ceilDiv(kappa, 4));
    loadCycles = 4 * loads;
  }
  double stepCycles = std::max({fmaCycles, loadCycles, latencyCycles});
  std::string limit = stepCycles == latencyCycles ? "fma latency"
                      : stepCycles == fmaCycles   ? "fma issue"
                                                  : "loads";
  out.flopsPerLoad = 2.0 * static_cast<double>(sigma * kappa) / loads;
  // Past the register budget the accumulators spill and the speed halves (measured on PoCL).
  if (sigma * registersPerVector > core.registerBudget) out.spillFactor = 2;
  // A split into S parts of the channels: S times the work-items, each over C/S channels.
  const double workItems =
      static_cast<double>(layer.M / std::max<int64_t>(kappa, 1)) * static_cast<double>(outH) *
      static_cast<double>(ceilDiv(outW, std::max<int64_t>(sigma, 1))) * static_cast<double>(split);
  const double steps =
      static_cast<double>(layer.K * layer.K * layer.C) / static_cast<double>(split);
  const double workGroups = static_cast<double>(layer.M / std::max<int64_t>(kappa, 1)) *
                            static_cast<double>(ceilDiv(outH, std::max<int64_t>(rows, 1))) *
                            static_cast<double>(split);
  out.balanceFactor = balance(workGroups, core);
  // Guarded loads (pad_in_loads): code generation unswitches the guards, so only work-items
  // whose window reaches the border pay them (about one extra compare per load).
  double guardFactor = 1;
  if (padInLoads != 0 && layer.pad > 0) {
    const double borderRows = std::min(1.0, 2.0 * static_cast<double>(layer.pad) / outH);
    const double borderBlocks =
        std::min(1.0, 2.0 / std::max<double>(1.0, static_cast<double>(ceilDiv(outW, sigma))));
    const double border = 1 - (1 - borderRows) * (1 - borderBlocks);
    guardFactor = 1 + 0.5 * border;
  }
  const double cycles =
      workItems * steps * stepCycles * out.spillFactor * guardFactor * out.balanceFactor;
  if (padInLoads == 0) {
    out.kernels.push_back(copyKernel(
        "pad", static_cast<double>(layer.C * (layer.H + 2 * layer.pad) * (layer.W + 2 * layer.pad)),
        core));
  }
  double seconds = cycles / core.cores / core.gpuLanes / core.clockHz;
  if (core.cpu) {
    // A work-item stores its κ channels pixel by pixel into κ planes of the output. When a
    // plane's bytes are a multiple of 4 KiB, those stores fall into one set of the first-level
    // cache, and past the streams the probe found free of conflicts every store loses the
    // probe's cycles (the stores of the partial sums of a split alike).
    const int64_t planeBytes = outH * outW * static_cast<int64_t>(sizeof(float));
    if (core.conflictingStoreCycles > 0 && planeBytes % 4096 == 0 &&
        static_cast<double>(kappa) > core.conflictFreeStoreStreams) {
      const double stores = static_cast<double>(layer.M) * static_cast<double>(outH) *
                            static_cast<double>(outW) * static_cast<double>(split);
      const double storeSeconds =
          stores * core.conflictingStoreCycles / core.cores / core.clockHz;
      if (storeSeconds > seconds) limit = "conflicting output stores";
      seconds += storeSeconds;
    }
  } else {
    // Too few work-items to hide memory latency: each work-item's steps run one after the
    // other at about 200 cycles each (measured on an H200: conv5_1 with κ 4, σ 2, about three
    // warps per SM, 0.475 ms for 4608 steps), in as many rounds as the device needs to hold
    // them all (residentWorkItemsPerUnit).
    const double perUnit =
        residentWorkItemsPerUnit(*core.device, static_cast<double>(sigma * kappa + 2 * kappa));
    const double rounds = std::ceil(workItems / std::max(1.0, perUnit * core.cores));
    const double latencySeconds = rounds * steps * core.stepLatencyCycles / core.clockHz;
    if (latencySeconds > seconds) {
      seconds = latencySeconds;
      limit = "latency (few work-items)";
    }
  }
  out.kernels.push_back({"convolution", seconds + core.launchSeconds, limit});
  if (split > 1) {
    // The S partial sums of every output written, read back and added by a final kernel.
    out.kernels.push_back(copyKernel(
        "final sum",
        static_cast<double>(layer.M * outH * outW) * static_cast<double>(split + 1) / 2, core));
  }
  return out;
}

// conv-direct (the paper's section 4.2): κ × σ scalar accumulators (dot products of float<v>
// over chunks of ω window elements), partial sums per chunk reduced by a second kernel; pad
// and crop kernels around them.
CostPrediction convDirectCost(const ConvLayer& layer, const std::map<std::string, int64_t>& p,
                              const CoreModel& core) {
  CostPrediction out;
  out.family = "conv-direct";
  const int64_t v = std::max<int64_t>(1, valueOr(p, "v", 1));
  const bool unrolled = valueOr(p, "unroll", 0) != 0;
  const int64_t rho = std::max<int64_t>(0, valueOr(p, "rho", 0));
  const int64_t kappa = std::max<int64_t>(1, valueOr(p, "kappa", 1));
  const int64_t sigma = std::max<int64_t>(1, valueOr(p, "sigma", 1));
  const int64_t windowElements = layer.K * layer.K * layer.C;
  const int64_t omega = std::clamp<int64_t>(valueOr(p, "omega", windowElements), 1, windowElements);
  const bool coalesce = valueOr(p, "coalesce", 0) != 0;
  const int64_t outH = layer.outH(), outW = layer.outW();
  // ρ extra windows per dimension, computed and cropped away.
  const double windows = static_cast<double>(outH + rho) * static_cast<double>(outW + rho);
  const double chunks = static_cast<double>(ceilDiv(windowElements, omega));
  const double dots =
      static_cast<double>(layer.M) * windows * static_cast<double>(ceilDiv(windowElements, v));

  const int64_t registersPerVector = ceilDiv(v, core.nativeLanes);
  const int64_t lanes = std::min(v, core.nativeLanes);
  out.laneUse = static_cast<double>(lanes) / static_cast<double>(core.nativeLanes);
  // One dot product: the v-wide multiply(-add), a horizontal sum of log2(v) shuffle + add
  // steps (each step one shuffle and one add), one scalar add into the accumulator.
  const double log2v = std::log2(static_cast<double>(v));
  const double issueCycles =
      static_cast<double>(registersPerVector) * fmaInstructionCycles(lanes, core) + log2v + 0.5;
  // Loads per dot: the block's κ weight rows and σ inputs once per step when the block is
  // unrolled and they fit the registers, two per dot otherwise; κ·σ scalar accumulators past
  // the register budget live in memory (a load and a store per update).
  const bool operandsHeld = unrolled && (kappa + sigma) * registersPerVector <= core.registerBudget;
  double loadsPerDot =
      operandsHeld ? static_cast<double>(kappa + sigma) / static_cast<double>(kappa * sigma) : 2.0;
  loadsPerDot *= registersPerVector;
  if (kappa * sigma > core.registerBudget) {
    loadsPerDot += 2;
    out.spillFactor = 1 + 2 / std::max(loadsPerDot - 2, 1.0);
  }
  const double loadCycles = loadsPerDot / core.loadsPerCycle;
  // The chain of one accumulator: multiply (FMA latency), log2(v) shuffle+add steps of about
  // 3 cycles each, the final add; spread over the κ·σ independent accumulators.
  const double chainCycles = core.fmaLatency + 3 * log2v + 3;
  const double latencyCycles = chainCycles / static_cast<double>(kappa * sigma);
  double dotCycles = std::max({issueCycles, loadCycles, latencyCycles});
  const std::string limit = dotCycles == latencyCycles ? "fma latency"
                            : dotCycles == issueCycles ? "fma issue"
                                                       : "loads";
  out.flopsPerLoad = 2.0 * static_cast<double>(v) / loadsPerDot;
  // coalesce = 1 interleaves the chunks' elements across work-items: contiguous for a GPU's
  // lock-step work-items, strided within one CPU work-item's loop (and the reverse).
  const double layoutFactor = core.cpu == coalesce ? 1.25 : 1.0;
  const double partialCycles = dots * dotCycles * layoutFactor;
  out.kernels.push_back(
      copyKernel("pad",
                 static_cast<double>(layer.C) *
                     static_cast<double>(layer.H + 2 * layer.pad + rho * layer.stride) *
                     static_cast<double>(layer.W + 2 * layer.pad + rho * layer.stride),
                 core));
  out.kernels.push_back({"partial convolution",
                         partialCycles / core.cores / core.clockHz + core.launchSeconds, limit});
  // The final reduction reads every partial sum (M · windows · chunks) once.
  out.kernels.push_back(
      copyKernel("final reduction", static_cast<double>(layer.M) * windows * chunks, core));
  out.kernels.push_back(copyKernel("crop", static_cast<double>(layer.M * outH * outW), core));
  return out;
}

// The Winograd family F(m×m, 3×3) (rewrite/strategy_conv_winograd.h): its α² = (m+2)²
// products over the channels are α² 1×1 convolutions of the tiles ([⌈outH/m⌉][⌈outW/m⌉]) with the
// vector family's blocks, each predicted like that family's convolution kernel; the transforms
// (the input's α² values per tile and channel, the output's α² reads per tile and kernel) are
// predicted as copies of the values they write or read.
CostPrediction winogradCost(const ConvLayer& layer, int64_t m, int64_t kappa, int64_t sigma,
                            int64_t rows, const CoreModel& core) {
  const int64_t alpha = m + 2;
  const double products = static_cast<double>(alpha * alpha);
  // Partial tiles: the output padded to whole tiles (and the vector family's ceilDiv pads the
  // tile columns to whole blocks of σ), every padded output computed.
  const ConvLayer tiles{layer.C, ceilDiv(layer.outH(), m), ceilDiv(layer.outW(), m), layer.M, 1,
                        1, 0, ""};
  CostPrediction out =
      vectorFamilyCost(tiles, kappa, sigma, rows, /*padInLoads=*/1, 0, 0, 0, 1, core);
  out.family = "winograd";
  for (PredictedKernel& kernel : out.kernels) {
    kernel.seconds = (kernel.seconds - core.launchSeconds) * products + core.launchSeconds;
    kernel.name = "products";
  }
  const double tileCount = static_cast<double>(tiles.H * tiles.W);
  out.kernels.push_back(
      copyKernel("input transform", products * static_cast<double>(layer.C) * tileCount, core));
  out.kernels.push_back(
      copyKernel("output transform", products * static_cast<double>(layer.M) * tileCount, core));
  // The weights' transform and re-layout are preparation kernels: run once per set of weights,
  // left out of the per-inference time the explorer measures, so left out here too.
  return out;
}

// The work-group-tiled family (rewrite/strategy_conv_workgroup_tiled.h): work-groups of TK
// kernels × TH×TW pixels, each work-item an RK × RP register tile, reductions over chunks of TC
// channels. Per work-item (one lane) and window element: RK·RP FMAs and RK + RP loads (from
// local memory when staged; a GPU's load/store units have a quarter of the FP32 lanes, so an
// RK × RP tile issues as many load cycles as FMA cycles only from RK·RP/(RK+RP) = 4 on:
// gpu-conv.md §2.2). Unstaged, the pixels of neighbouring work-items are stride·C floats apart
// in the [H][W][C] input (the sectors a warp's load touches, as in vectorFamilyCost). Staged,
// each chunk's input tile and weight tile are copied by the group's work-items (a load and a
// store each), the tiles read from global memory once per work-group (the copy kernels' bytes
// per cycle); a chunk costs two barriers. Too few work-items to hide latency: each walks its
// chunks one after the other (about 600 cycles per chunk for the global loads and barriers, 30
// per window element), in as many rounds as the device needs to hold them.
CostPrediction workgroupTiledCost(const ConvLayer& layer, int64_t rk, int64_t rp, int64_t staged,
                                  int64_t tk, int64_t th, int64_t tw, int64_t tc,
                                  const CoreModel& core) {
  CostPrediction out;
  out.family = "workgroup-tiled";
  const int64_t outH = layer.outH(), outW = layer.outW();
  rk = std::max<int64_t>(1, rk);
  rp = std::max<int64_t>(1, rp);
  tk = std::max(rk, tk);
  th = std::clamp<int64_t>(th, 1, outH);
  tw = std::clamp<int64_t>(tw, 1, outW);
  tc = std::clamp<int64_t>(tc, 1, layer.C);
  const double fmaCycles = static_cast<double>(rk * rp);
  double inputLoads = static_cast<double>(rp);
  if (staged == 0) inputLoads *= static_cast<double>(std::min<int64_t>(8, layer.stride * layer.C));
  const double loads = inputLoads + static_cast<double>(rk);
  const double loadCycles = 4 * loads;
  out.flopsPerLoad = 2.0 * fmaCycles / loads;
  const double workItems = static_cast<double>(layer.M / rk) *
                           static_cast<double>(ceilDiv(outH * outW, rp));
  const double steps = static_cast<double>(layer.K * layer.K * layer.C);
  const double chunks = static_cast<double>(ceilDiv(layer.C, tc));
  const double workGroups = static_cast<double>(ceilDiv(layer.M, tk)) *
                            static_cast<double>(ceilDiv(outH, th) * ceilDiv(outW, tw));
  out.balanceFactor = balance(workGroups, core);
  double stepCycles = std::max(fmaCycles, loadCycles);
  std::string limit = stepCycles == fmaCycles ? "fma issue" : "loads";
  double cycles = workItems * steps * stepCycles;
  if (staged != 0) {
    // Per chunk, the group's copies: a load and a store per value, spread over its work-items.
    const double tileValues =
        static_cast<double>(((th - 1) * layer.stride + layer.K) * ((tw - 1) * layer.stride + layer.K) *
                            tc) +
        static_cast<double>(tk * layer.K * layer.K * tc);
    const double groupSize = static_cast<double>((tk / rk) * ceilDiv(th * tw, rp));
    const double copyCycles = 8 * tileValues / std::max(1.0, groupSize);
    cycles += workItems * chunks * copyCycles;
    const double bytesCycles = workGroups * chunks * tileValues * core.copyCyclesPerElement;
    if (bytesCycles * core.gpuLanes > cycles) {
      cycles = bytesCycles * core.gpuLanes;
      limit = "global memory";
    }
  }
  cycles *= out.balanceFactor;
  double seconds = cycles / core.cores / core.gpuLanes / core.clockHz;
  if (!core.cpu) {
    const double registers = static_cast<double>(rk * rp + rk + rp);
    const double perUnit = residentWorkItemsPerUnit(*core.device, registers);
    const double rounds = std::ceil(workItems / std::max(1.0, perUnit * core.cores));
    const double latencySeconds = rounds * (chunks * 600 + steps * 30) / core.clockHz;
    if (latencySeconds > seconds) {
      seconds = latencySeconds;
      limit = "latency (few work-items)";
    }
  }
  out.kernels.push_back({"convolution", seconds + core.launchSeconds, limit});
  return out;
}

}  // namespace

std::optional<ConvLayer> convLayerFromSizes(const ArithBinding& sizes) {
  ConvLayer layer;
  const std::pair<const char*, int64_t*> fields[] = {
      {"C", &layer.C}, {"H", &layer.H},   {"W", &layer.W},     {"M", &layer.M},
      {"K", &layer.K}, {"P", &layer.pad}, {"S", &layer.stride}};
  for (const auto& [name, field] : fields) {
    auto it = sizes.find(name);
    if (it == sizes.end()) return std::nullopt;
    *field = it->second;
  }
  if (layer.C < 1 || layer.H < 1 || layer.W < 1 || layer.M < 1 || layer.K < 1 || layer.stride < 1 ||
      layer.pad < 0 || layer.outH() < 1 || layer.outW() < 1) {
    return std::nullopt;
  }
  return layer;
}

double residentWorkItemsPerUnit(const host::DeviceProfile& device, double registers) {
  const double largest = static_cast<double>(std::max<std::int64_t>(1, device.maxWorkGroupSize));
  if (device.registersPerWorkGroup <= 0) return largest;
  return std::min(2 * largest,
                  static_cast<double>(device.registersPerWorkGroup) / std::max(1.0, registers));
}

std::optional<CostPrediction> predictLayerVariantCost(
    const ConvLayer& layer, const std::map<std::string, int64_t>& parameters,
    const host::DeviceProfile& device) {
  const CoreModel core = coreModel(device);
  std::optional<CostPrediction> out;
  if (parameters.count("vector_kappa") && parameters.count("vector_sigma")) {
    out = vectorFamilyCost(
        layer, std::max<int64_t>(1, parameters.at("vector_kappa")),
        std::max<int64_t>(1, parameters.at("vector_sigma")), valueOr(parameters, "rows", 1),
        valueOr(parameters, "vector_pad_in_loads", 0), valueOr(parameters, "vector_row_unroll", 0),
        valueOr(parameters, "vector_interleave", 0),
        valueOr(parameters, "vector_channels_first", 0),
        std::max<int64_t>(1, valueOr(parameters, "vector_split", 1)), core);
  } else if (parameters.count("winograd_m") && parameters.count("winograd_kappa") &&
             parameters.count("winograd_sigma")) {
    out = winogradCost(layer, std::max<int64_t>(2, parameters.at("winograd_m")),
                       std::max<int64_t>(1, parameters.at("winograd_kappa")),
                       std::max<int64_t>(1, parameters.at("winograd_sigma")),
                       valueOr(parameters, "rows", 1), core);
  } else if (parameters.count("tiled_rk") && parameters.count("tiled_rp") &&
             parameters.count("tiled_staged")) {
    out = workgroupTiledCost(layer, parameters.at("tiled_rk"), parameters.at("tiled_rp"),
                             parameters.at("tiled_staged"), valueOr(parameters, "tk", layer.M),
                             valueOr(parameters, "th", 1), valueOr(parameters, "tw", 1),
                             valueOr(parameters, "tc", layer.C), core);
  } else if (parameters.count("v") && parameters.count("kappa") && parameters.count("sigma")) {
    out = convDirectCost(layer, parameters, core);
  }
  if (!out) return std::nullopt;
  out->seconds = 0;
  for (const PredictedKernel& kernel : out->kernels) out->seconds += kernel.seconds;
  return out;
}

}  // namespace weft::explore
