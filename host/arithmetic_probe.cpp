// The arithmetic probe (see host/arithmetic_probe.h).
#include "host/arithmetic_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

namespace weft::host {

namespace {

// Independent accumulator chains of the throughput kernels: more than pipes × latency on the
// CPUs weft targets (2 × 4 on AMD Zen 4 and Intel Skylake, 2 × 5 on Haswell), few enough that
// they, a and b stay in 16 vector registers (AVX2).
constexpr int kChains = 12;
// Vectors in the load kernel's buffer (4 KiB at float16: within any first-level cache).
constexpr int kLoadBufferVectors = 64;
// Rounds of the chains per loop iteration, so that the loop's own instructions are few.
constexpr int kRounds = 4;
// Dependent FMAs per loop iteration of the latency kernel.
constexpr int kLatencySteps = 8;
// Each kernel runs long enough to time (about 20 ms), the best of this many rounds.
constexpr double kTargetSeconds = 0.02;
constexpr int kRuns = 5;
// The store-stream kernels: the stream counts tried, the streams' distance in floats (17 times
// 4 KiB: in the same set of a cache whose sets span 4 KiB, in different sets of larger spans)
// and the distance one 64-byte line further (different sets), the floats each stream's stores
// walk over (4 KiB, so that every kernel's data stays within the second-level cache), and how
// much slower the aliased streams must be to count as conflicting (twice: a few aliased streams
// short of the ways already slow the stores a little, as the set also holds other lines).
constexpr std::array<int, 6> kStoreStreams = {4, 8, 12, 16, 24, 32};
constexpr int kAliasedStrideFloats = 17 * 1024;
constexpr int kPaddedStrideFloats = kAliasedStrideFloats + 16;
constexpr int kStreamFloats = 1024;
constexpr int kStoresPerStep = 8;
constexpr double kConflictRatio = 2.0;
// The bandwidth kernel's buffers: this many times the global memory cache each, at least
// kMinStreamBytes (a cache the device does not report is taken as 16 MiB), at most a quarter of
// the largest allocation and kMaxStreamBytes (so that the probe, which runs whenever weft
// explores, stays a fraction of a second and of the memory).
constexpr std::size_t kStreamCacheMultiple = 4;
constexpr std::size_t kMinStreamBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxStreamBytes = std::size_t{1} << 30;

// The work-group kernel: this many work-items per compute unit (a few milliseconds in groups of
// one), and the large work-groups compared with groups of one.
constexpr std::size_t kWorkGroupProbeItems = std::size_t{1} << 16;
constexpr std::size_t kWorkGroupItems = 256;

std::string vectorType(int width) { return width == 1 ? "float" : fmt::format("float{}", width); }

// A kernel whose work-item updates `chains` float<width> accumulators by fma, `rounds` times
// per iteration, then stores their sum (so that nothing is dead code). a and b are arguments,
// so that the compiler cannot fold the chains.
std::string fmaKernel(const std::string& name, int width, int chains, int rounds) {
  const std::string type = vectorType(width);
  std::string text = fmt::format(
      "__kernel void {}(__global float* out, float a, float b, int iterations) {{\n"
      "  const {} va = ({})(a), vb = ({})(b);\n",
      name, type, type, type);
  for (int c = 0; c < chains; ++c) {
    text += fmt::format("  {} acc{} = ({})((float)get_global_id(0) + {}.0f);\n", type, c, type, c);
  }
  text += "  for (int i = 0; i < iterations; ++i) {\n";
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < chains; ++c) text += fmt::format("    acc{0} = fma(acc{0}, va, vb);\n", c);
  }
  text += "  }\n  " + type + " sum = acc0";
  for (int c = 1; c < chains; ++c) text += fmt::format(" + acc{}", c);
  text += ";\n";
  if (width == 1) {
    text += "  out[get_global_id(0)] = sum;\n}\n";
  } else {
    text += "  float total = 0.0f;\n";
    for (int lane = 0; lane < width; ++lane) text += fmt::format("  total += sum.s{:x};\n", lane);
    text += "  out[get_global_id(0)] = total;\n}\n";
  }
  return text;
}

// The end of a kernel whose uint<width> `all` holds what it read: its lanes OR-ed together and
// stored as the work-item's float of `out`, so that none of the reads is dead code.
std::string storedLanes(int width) {
  if (width == 1) return "  out[get_global_id(0)] = (float)all;\n}\n";
  std::string text = "  uint total = 0u;\n";
  for (int lane = 0; lane < width; ++lane) text += fmt::format("  total |= all.s{:x};\n", lane);
  return text + "  out[get_global_id(0)] = (float)total;\n}\n";
}

// A kernel whose work-item loads float<width> vectors from `in` (one of two overlapping blocks
// of chains × rounds vectors of its kLoadBufferVectors, alternately) into `chains` integer
// accumulators by OR, `rounds` times per iteration.
std::string loadKernel(const std::string& name, int width, int chains, int rounds) {
  const std::string type = width == 1 ? "uint" : fmt::format("uint{}", width);
  const std::string floats = vectorType(width);
  std::string text = fmt::format(
      "__kernel void {}(__global float* out, __global const {}* in, int iterations) {{\n",
      name, floats);
  for (int c = 0; c < chains; ++c) text += fmt::format("  {} acc{} = ({})({}u);\n", type, c, type, c);
  text += "  for (int i = 0; i < iterations; ++i) {\n";
  // The block read depends on the data read before (one bit of it, 0 for this buffer), so
  // that the compiler cannot hoist the loads out of the loop.
  text += fmt::format(
      "    __global const {}* p = in + ((((uint)i) ^ ({} & 1u)) & 1u) * {};\n", floats,
      width == 1 ? "acc0" : "acc0.s0", kLoadBufferVectors - chains * rounds);
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < chains; ++c) {
      text += fmt::format("    acc{0} |= as_{1}(p[{2}]);\n", c, type, r * chains + c);
    }
  }
  text += "  }\n  " + type + " all = acc0";
  for (int c = 1; c < chains; ++c) text += fmt::format(" | acc{}", c);
  text += ";\n";
  return text + storedLanes(width);
}

// A kernel whose work-item adds up `vectors` consecutive uint<width> vectors of one of the two
// halves of its own part of `in` (2 × vectors), alternately, per iteration, into four
// accumulators: a contiguous read of half the part, which the second-level cache keeps when the
// part is half its size, while the first-level cache keeps a small share of it.
std::string secondLevelReadKernel(const std::string& name, int width) {
  const std::string type = width == 1 ? "uint" : fmt::format("uint{}", width);
  std::string text = fmt::format(
      "__kernel void {0}(__global float* out, __global const {1}* in, int vectors,\n"
      "                  int iterations) {{\n"
      "  __global const {1}* own = in + get_global_id(0) * (size_t)(2 * vectors);\n"
      "  {1} acc0 = ({1})(0u), acc1 = acc0, acc2 = acc0, acc3 = acc0;\n"
      "  for (int i = 0; i < iterations; ++i) {{\n"
      // Which half depends on the data read before (0 for this buffer), so that the compiler
      // cannot hoist the reads out of the loop.
      "    __global const {1}* p = own + ((((uint)i) ^ ({2} & 1u)) & 1u) * vectors;\n"
      "    for (int v = 0; v < vectors; v += 4) {{\n"
      "      acc0 += p[v]; acc1 += p[v + 1]; acc2 += p[v + 2]; acc3 += p[v + 3];\n"
      "    }}\n"
      "  }}\n"
      "  const {1} all = acc0 + acc1 + acc2 + acc3;\n",
      name, type, width == 1 ? "acc0" : "acc0.s0");
  return text + storedLanes(width);
}

// A kernel whose work-item stores, per step, kStoresPerStep floats two apart into each of
// `streams` streams `stride` floats apart, stream after stream for each float (a convolution
// work-item's pixel-by-pixel stores of its channels); each step moves 16 floats on, within
// kStreamFloats. The stores two floats apart are not merged into vector stores by the compiler.
std::string storeKernel(const std::string& name, int streams, int stride) {
  std::string text = fmt::format(
      "__kernel void {}(__global float* out, int iterations) {{\n"
      "  __global float* base = out + get_global_id(0) * {};\n"
      "  for (int i = 0; i < iterations; ++i) {{\n"
      "    const int offset = (i * {}) & {};\n"
      "    const float v = (float)i;\n"
      "    for (int j = 0; j < {}; ++j) {{\n",
      name, streams * stride + kStreamFloats, 2 * kStoresPerStep, kStreamFloats - 1,
      kStoresPerStep);
  for (int s = 0; s < streams; ++s) {
    text += fmt::format("      base[{} + offset + 2 * j] = v + {}.0f;\n", s * stride, s);
  }
  text += "    }\n  }\n}\n";
  return text;
}

// A kernel whose work-item copies `vectors` consecutive uint<width> vectors, its own part of
// `in`, to the same place in `out`, each with one bit flipped (so that the compiler cannot turn
// the loop into a call of memcpy, whose stores may bypass the cache).
std::string copyKernel(const std::string& name, int width) {
  const std::string type = width == 1 ? "uint" : fmt::format("uint{}", width);
  return fmt::format(
      "__kernel void {0}(__global {1}* out, __global const {1}* in, int vectors) {{\n"
      "  const size_t first = get_global_id(0) * (size_t)vectors;\n"
      "  for (int i = 0; i < vectors; ++i) out[first + i] = in[first + i] ^ ({1})(1u);\n"
      "}}\n",
      name, type);
}

// Bytes per cycle and compute unit that `units` work-items (one per compute unit) move between
// memory and the cores while copying a buffer far larger than the device's caches with ordinary
// stores: the read, and the written lines each read for ownership and written back, so three
// times the buffer (as the pipeline cost model counts a kernel's bytes). The best of kRuns
// copies after one that warms up.
double copyBytesPerCycle(Context& context, const Program& program, int width, int units,
                         double cyclesPerSecond, std::int64_t largestAllocation) {
  std::size_t cacheBytes = std::size_t{16} << 20;
  try {
    const auto reported =
        deviceInfo<cl_ulong>(context.device().id, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE);
    if (reported > 0) cacheBytes = static_cast<std::size_t>(reported);
  } catch (const OpenCLError&) {
  }
  const std::size_t vectorBytes = sizeof(std::uint32_t) * static_cast<std::size_t>(width);
  const std::size_t chunk = vectorBytes * static_cast<std::size_t>(units);
  std::size_t bytes = std::min(
      {std::max(kStreamCacheMultiple * cacheBytes, kMinStreamBytes),
       largestAllocation > 0 ? static_cast<std::size_t>(largestAllocation / 4) : kMaxStreamBytes,
       kMaxStreamBytes});
  bytes = std::max(bytes / chunk, std::size_t{1}) * chunk;
  const Buffer in = context.createBuffer(bytes);
  const Buffer out = context.createBuffer(bytes);
  context.fillZero(in);
  context.fillZero(out);
  Kernel kernel(program, "streamCopy");
  kernel.setArg(0, out);
  kernel.setArg(1, in);
  kernel.setArg(2, static_cast<std::int32_t>(bytes / chunk));
  double best = 0;
  for (int run = 0; run <= kRuns; ++run) {
    const double seconds = static_cast<double>(context.launch(
                               kernel, NDRange(static_cast<std::size_t>(units)), NDRange(1))) *
                           1e-9;
    if (run == 1 || (run > 1 && seconds < best)) best = seconds;
  }
  return 3.0 * static_cast<double>(bytes) / (std::max(best, 1e-9) * cyclesPerSecond * units);
}

// Cycles a compute unit spends per work-group beyond its work-items' work: one float stored
// per work-item over kWorkGroupProbeItems work-items per compute unit, in work-groups of one
// against work-groups of kWorkGroupItems (or the device's largest, when smaller). The best of
// kRuns launches of each after one that warms up.
double workGroupCyclesOf(Context& context, const Program& program, int units,
                         double cyclesPerSecond, std::int64_t maxWorkGroupSize) {
  const std::size_t items = kWorkGroupProbeItems * static_cast<std::size_t>(units);
  std::size_t large = kWorkGroupItems;
  while (large > 1 && static_cast<std::int64_t>(large) > maxWorkGroupSize) large /= 2;
  if (large <= 1) return 0;
  const Buffer out = context.createBuffer(items * sizeof(float));
  Kernel kernel(program, "workGroupStep");
  kernel.setArg(0, out);
  auto best = [&](std::size_t local) {
    double fastest = 0;
    for (int run = 0; run <= kRuns; ++run) {
      const double seconds =
          static_cast<double>(context.launch(kernel, NDRange(items), NDRange(local))) * 1e-9;
      if (run == 1 || (run > 1 && seconds < fastest)) fastest = seconds;
    }
    return fastest;
  };
  const double ones = best(1);
  const double grouped = best(large);
  const double extraGroups =
      static_cast<double>(items) - static_cast<double>(items) / static_cast<double>(large);
  return std::max(0.0, ones - grouped) * cyclesPerSecond * units / extraGroups;
}

// Seconds of one run of the kernel with `iterations`, one work-item per compute unit; its
// arguments other than the iteration count (the last) are set by `setArguments`.
double runSeconds(Context& context, const Kernel& kernel,
                  const std::function<void(Kernel&)>& setArguments, int computeUnits,
                  int iterations) {
  Kernel k = kernel;
  setArguments(k);
  k.setArg(k.argCount() - 1, static_cast<std::int32_t>(iterations));
  return static_cast<double>(context.launch(k, NDRange(static_cast<std::size_t>(computeUnits)),
                                            NDRange(1))) *
         1e-9;
}

// One of the probe's kernels: its arguments, the events (lanes, FMAs, loads) a work-item
// counts per loop iteration, the iterations that take about kTargetSeconds, and its best time.
struct TimedKernel {
  Kernel kernel;
  std::function<void(Kernel&)> setArguments;
  double perIteration = 0;
  int iterations = 20000;
  double best = 0;
};

}  // namespace

ArithmeticFacts probeArithmetic(Context& context, const DeviceProfile& profile) {
  const auto start = std::chrono::steady_clock::now();
  if (profile.maxClockMHz <= 0) {
    throw std::runtime_error("the arithmetic probe needs the device's clock (maxClockMHz)");
  }
  const int width = std::max(1, profile.nativeFloatVectorWidth);
  const int half = std::max(1, width / 2);
  const int units = std::max(1, profile.computeUnits);
  std::string source =
      fmaKernel("fmaFull", width, kChains, kRounds) + fmaKernel("fmaHalf", half, kChains, kRounds) +
      fmaKernel("fmaChain", width, 1, kLatencySteps) +
      loadKernel("vectorLoads", width, kChains, kRounds) + copyKernel("streamCopy", width) +
      secondLevelReadKernel("secondLevelReads", width) +
      "__kernel void workGroupStep(__global float* out) { out[get_global_id(0)] = 1.0f; }\n";
  for (const int streams : kStoreStreams) {
    source += storeKernel(fmt::format("storesAliased{}", streams), streams, kAliasedStrideFloats);
    source += storeKernel(fmt::format("storesPadded{}", streams), streams, kPaddedStrideFloats);
  }
  const Program program = context.build(source);
  const Buffer out = context.createBuffer(static_cast<std::size_t>(units) * sizeof(float));
  const std::vector<float> ones(static_cast<std::size_t>(kLoadBufferVectors * width), 1.0f);
  const Buffer in = context.createBuffer(std::span<const float>(ones));
  const double cyclesPerSecond = static_cast<double>(profile.maxClockMHz) * 1e6;
  const auto fmaArguments = [&](Kernel& k) {
    k.setArg(0, out);
    k.setArg(1, 0.999f);
    k.setArg(2, 0.001f);
  };
  const auto loadArguments = [&](Kernel& k) {
    k.setArg(0, out);
    k.setArg(1, in);
  };
  const Buffer streamsOut = context.createBuffer(
      static_cast<std::size_t>(units) *
      static_cast<std::size_t>(kStoreStreams.back() * kPaddedStrideFloats + kStreamFloats) *
      sizeof(float));
  const auto storeArguments = [&](Kernel& k) { k.setArg(0, streamsOut); };
  std::vector<TimedKernel> kernels = {
      {Kernel(program, "fmaFull"), fmaArguments, double{kChains} * kRounds * width},
      {Kernel(program, "fmaHalf"), fmaArguments, double{kChains} * kRounds * half},
      {Kernel(program, "fmaChain"), fmaArguments, double{kLatencySteps}},
      {Kernel(program, "vectorLoads"), loadArguments, double{kChains} * kRounds}};
  // The second-level reads: each compute unit's part half the cache (its halves a quarter),
  // in whole groups of four vectors.
  const std::size_t vectorBytes = sizeof(float) * static_cast<std::size_t>(width);
  const int halfVectors =
      static_cast<int>(profile.secondLevelCacheBytes / 4 / static_cast<std::int64_t>(vectorBytes)) /
      4 * 4;
  std::optional<Buffer> secondLevelIn;
  std::optional<std::size_t> secondLevelKernel;
  if (halfVectors >= 4) {
    secondLevelIn = context.createBuffer(static_cast<std::size_t>(units) * 2 *
                                         static_cast<std::size_t>(halfVectors) * vectorBytes);
    context.fillZero(*secondLevelIn);
    secondLevelKernel = kernels.size();
    kernels.push_back({Kernel(program, "secondLevelReads"),
                       [&](Kernel& k) {
                         k.setArg(0, out);
                         k.setArg(1, *secondLevelIn);
                         k.setArg(2, static_cast<std::int32_t>(halfVectors));
                       },
                       static_cast<double>(halfVectors) * static_cast<double>(vectorBytes)});
  }
  const std::size_t firstStoreKernel = kernels.size();
  for (const int streams : kStoreStreams) {
    const double stores = double{kStoresPerStep} * streams;
    kernels.push_back({Kernel(program, fmt::format("storesAliased{}", streams)), storeArguments,
                       stores});
    kernels.push_back({Kernel(program, fmt::format("storesPadded{}", streams)), storeArguments,
                       stores});
  }
  // Calibration (which also wakes the cores up to their working clock), then kRuns rounds over
  // all kernels, so that a slow moment of the machine does not fall on one kernel's every run.
  for (TimedKernel& k : kernels) {
    const double seconds =
        std::max(1e-6, runSeconds(context, k.kernel, k.setArguments, units, k.iterations));
    k.iterations =
        static_cast<int>(std::clamp(k.iterations * kTargetSeconds / seconds, 1e4, 1e8));
  }
  for (int run = 0; run < kRuns; ++run) {
    for (TimedKernel& k : kernels) {
      const double seconds = runSeconds(context, k.kernel, k.setArguments, units, k.iterations);
      if (run == 0 || seconds < k.best) k.best = seconds;
    }
  }
  // Events per cycle and compute unit.
  auto perCycle = [&](const TimedKernel& k) {
    return static_cast<double>(k.iterations) * k.perIteration / (k.best * cyclesPerSecond);
  };
  ArithmeticFacts facts;
  facts.fmaLanesPerCycle = perCycle(kernels[0]);
  facts.fmaHalfWidthLanesPerCycle = perCycle(kernels[1]);
  facts.fmaLatencyCycles = 1.0 / perCycle(kernels[2]);
  facts.vectorLoadsPerCycle = perCycle(kernels[3]);
  if (secondLevelKernel) facts.secondLevelBytesPerCycle = perCycle(kernels[*secondLevelKernel]);
  // Store streams: the most streams before the first count whose aliased stores are
  // kConflictRatio times slower than the padded ones, and the cycles per store lost at the largest
  // count tried up to twice that (the first conflicting count when none is).
  std::vector<double> aliasedCycles, paddedCycles;
  for (std::size_t i = 0; i < kStoreStreams.size(); ++i) {
    aliasedCycles.push_back(1.0 / perCycle(kernels[firstStoreKernel + 2 * i]));
    paddedCycles.push_back(1.0 / perCycle(kernels[firstStoreKernel + 2 * i + 1]));
  }
  std::size_t firstConflict = kStoreStreams.size();
  for (std::size_t i = 0; i < kStoreStreams.size(); ++i) {
    if (aliasedCycles[i] > kConflictRatio * paddedCycles[i]) {
      firstConflict = i;
      break;
    }
  }
  if (firstConflict == kStoreStreams.size()) {
    facts.conflictFreeStoreStreams = kStoreStreams.back();
  } else {
    const int freeStreams = firstConflict == 0 ? 0 : kStoreStreams[firstConflict - 1];
    std::size_t measured = firstConflict;
    for (std::size_t i = firstConflict; i < kStoreStreams.size(); ++i) {
      if (kStoreStreams[i] <= 2 * std::max(freeStreams, 1)) measured = i;
    }
    facts.conflictFreeStoreStreams = freeStreams;
    facts.conflictingStoreCycles = std::max(0.0, aliasedCycles[measured] - paddedCycles[measured]);
  }
  facts.memoryBytesPerCycle = copyBytesPerCycle(context, program, width, units, cyclesPerSecond,
                                                profile.maxAllocationBytes);
  facts.workGroupCycles =
      workGroupCyclesOf(context, program, units, cyclesPerSecond, profile.maxWorkGroupSize);
  // A CPU retires at most a few FMA instructions and loads per cycle, even at a turbo clock far
  // above the nominal one; more means the kernels were not run as written.
  const double instructionsPerCycle =
      std::max({facts.fmaLanesPerCycle / width, facts.fmaHalfWidthLanesPerCycle / half,
                facts.vectorLoadsPerCycle});
  if (facts.fmaLatencyCycles < 0.25 || instructionsPerCycle > 16) {
    throw std::runtime_error(fmt::format(
        "the arithmetic probe's timings make no sense: latency {:.2f} cycles, {:.1f} FMA or load "
        "instructions per cycle",
        facts.fmaLatencyCycles, instructionsPerCycle));
  }
  facts.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return facts;
}

bool acceptsNontemporalStores(Context& context) {
  const char* source =
      "__kernel void streaming_store(__global float16* out) {\n"
      "  __builtin_nontemporal_store((float16)(1.0f), out + get_global_id(0));\n"
      "}\n";
  try {
    context.build(source);
    return true;
  } catch (const OpenCLError&) {
    return false;
  }
}

DeviceProfile withProbedArithmetic(Context& context, DeviceProfile profile) {
  if (profile.deviceType != "cpu") return profile;
  profile.nontemporalStores = acceptsNontemporalStores(context);
  const ArithmeticFacts facts = probeArithmetic(context, profile);
  auto tenth = [](double value) { return std::round(value * 10) / 10; };
  profile.fmaLanesPerCycle = tenth(facts.fmaLanesPerCycle);
  profile.fmaHalfWidthLanesPerCycle = tenth(facts.fmaHalfWidthLanesPerCycle);
  profile.fmaLatencyCycles = tenth(facts.fmaLatencyCycles);
  profile.vectorLoadsPerCycle = tenth(facts.vectorLoadsPerCycle);
  profile.conflictFreeStoreStreams = facts.conflictFreeStoreStreams;
  profile.conflictingStoreCycles = tenth(facts.conflictingStoreCycles);
  profile.memoryBytesPerCycle = tenth(facts.memoryBytesPerCycle);
  profile.secondLevelBytesPerCycle = tenth(facts.secondLevelBytesPerCycle);
  profile.workGroupCycles = tenth(facts.workGroupCycles);
  profile.source +=
      "; fmaLanesPerCycle, fmaHalfWidthLanesPerCycle, fmaLatencyCycles, vectorLoadsPerCycle, "
      "conflictFreeStoreStreams, conflictingStoreCycles, memoryBytesPerCycle, "
      "secondLevelBytesPerCycle and workGroupCycles measured by the arithmetic probe, "
      "nontemporalStores found by a build (host/arithmetic_probe.h)";
  return profile;
}

DeviceProfile withoutProbedRates(DeviceProfile profile) {
  profile.fmaLanesPerCycle = 0;
  profile.fmaHalfWidthLanesPerCycle = 0;
  profile.fmaLatencyCycles = 0;
  profile.vectorLoadsPerCycle = 0;
  profile.conflictFreeStoreStreams = 0;
  profile.conflictingStoreCycles = 0;
  profile.memoryBytesPerCycle = 0;
  profile.secondLevelBytesPerCycle = 0;
  profile.workGroupCycles = 0;
  return profile;
}

}  // namespace weft::host
