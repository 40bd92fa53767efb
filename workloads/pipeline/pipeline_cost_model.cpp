// The pipeline cost model of workloads/pipeline/pipeline_cost_model.h.
//
// Facts and their sources:
//  - Arithmetic: one vector instruction of the native width per cycle and compute unit where
//    the profile has no measured FMA rate (DeviceProfile::fmaLanesPerCycle, from
//    host/arithmetic_probe.h), as the convolution model assumes (workloads/conv/cost_model.cpp).
//  - Lanes in use: a fused tile's row of theta2 pixels is unrolled in the work-item and the
//    OpenCL compiler vectorises along it (rewrite/strategy_pipeline_fusion.h); other kernels
//    are vectorised across the work-items of a group along dimension 0 (PoCL's work-group
//    vectoriser, GPUs' warps); a structure that vectorises explicitly (its fixed parameter
//    vector_width) uses that many lanes. Measured on PoCL (AVX-512,
//    bench/results/pipelines-explore.db): blur's fused tiles 1-4 pixels wide ran 3-15x slower than
//    16-32 wide.
//  - Spilling: private values beyond what the space allows a work-item (its bound,
//    explore/launch_parameters.h privateValuesBound: the registers on a GPU, a vector lane's
//    share of the first-level data cache on a CPU whose cache the profile knows) slow it down
//    (arrays no register file holds, a line buffer's ring, are not counted: they are meant to
//    live in the cache). kSpillSlope is fitted to Harris's private-tuples tiles on PoCL
//    (AVX-512, 384 registers, a lane's share of 32 KiB 512 values;
//    bench/results/pipelines-harris-sliding.md): 480 values ran 30 ms, about 1040 values 34-44
//    ms, 1740 values 77 ms. On a CPU the slowdown follows the values, not the register file:
//    the same tiles compiled for AVX2 (bench/avx2_proxy.sh: 64 registers, AMD Zen 4, one run
//    each) ran as fast as with AVX-512 code (6x16 and 10x16 tiles 16.4 and 17.0 ms against 17.8
//    and 18.2; 18x16 39 against 30).
//  - Memory: the profile's memoryBytesPerCycle (measured by the arithmetic probe with a copy
//    whose written lines count twice, as here), else a nominal kCpuBytesPerCycle or
//    kGpuBytesPerCycle per compute unit. The nominal CPU figure: the copy
//    floor weft_bench_pipelines measured (clEnqueueCopyBuffer, input and output bytes over the
//    time) on 2-core AVX-512 and AVX2 machines read 18-20 GB/s at 2.5-3 GHz, about 4 bytes per
//    cycle and core, and on the 2-core AMD Zen 4 at 2.6 GHz 26-44 GB/s, 5-8.5; 6 is taken, with
//    which blur's privately fused tiles (ordinary stores, 3 images moved with the read for
//    ownership below) are predicted at 6.5 ms where they ran 6.0 on that AMD. A GPU's 4-5 TB/s
//    over 132 SMs at about 2 GHz is about 16 per SM-cycle (as workloads/conv/cost_model.cpp).
//  - Stores on a CPU: a cache line written with ordinary stores is first read for ownership,
//    so a written buffer moves twice its bytes; with streaming stores (the point's
//    streaming_stores, CodegenOptions::streamingStores) once. The copy floor above is measured
//    with clEnqueueCopyBuffer, whose memcpy streams its stores, so the bandwidth is per byte
//    actually moved. Measured on PoCL (AMD Zen 4, 2 cores): a float16 copy kernel ran 3.3-4.7 ms
//    with ordinary stores and 2.5-3.6 ms with streaming ones (128 MiB moved).
//  - Halo rows: a walk down strips of theta rows (a sliding window of n rows) reads the n - 1
//    rows its strip shares with the next one again, so its inputs move theta / (theta - n + 1)
//    times. Measured on PoCL (AMD Zen 4, blur 4096² by column blocks, one run): strips of 3,
//    4, 6 and 10 rows ran 7.8, 6.3, 6.4 and 5.0 ms, where the inputs and the streamed output
//    at the bandwidth below predict 8.6, 6.4, 5.4 and 4.8.
//  - Store streams (the profile's conflictFreeStoreStreams and conflictingStoreCycles, measured
//    by the arithmetic probe, as the convolution model uses them): a walk by column blocks
//    (pipeline-column-walk) stores into every output row of its strip in turn, so its strip's
//    output rows are that many store streams, 4 KiB-multiples apart when a row's bytes are.
//    Past the conflict-free streams each vector store loses the probe's cycles. Measured on
//    PoCL (AMD Zen 4, 12 conflict-free streams, 7.8 cycles; blur 4096², one run): strips of 8
//    output rows 5.1 ms, of 16 5.9, of 32 6.6, of 128 6.8.
//  - Launch overhead per launch: tens of microseconds on PoCL, a few on a GPU driver (as the
//    convolution model); a kernel whose local size does not divide its global size is two
//    launches per such dimension (codegen/launch_parts.h), its groups counted whole.
//  - Work-groups: a CPU implementation schedules each work-group as a call of the work-group
//    function, so a kernel in small groups pays per group: the profile's workGroupCycles
//    (measured by the arithmetic probe), else a nominal kCpuWorkGroupCycles, spread over the
//    compute units. The nominal figure is the probe's on PoCL 3.1 (AMD Zen 4, 2.6 GHz): 22
//    cycles. The same machine ran `map(a -> a * 2.0f)` over 2^24 floats in work-groups of 2, 4,
//    16 and 512 in 42.4, 22.2, 7.4 and 3.4 ms: 4.5 ns per group over both cores, 23 cycles.
//    A GPU launches blocks in hardware: none counted there.
//  - Access patterns (each kernel's global accesses, KernelPlan::globalAccesses): a walk whose
//    consecutive iterations lie a stride apart uses a vector (or a scalar) of each cache line
//    it loads, so its buffer moves up to line / value times its bytes; on a CPU the walk is
//    the access's innermost loop (the OpenCL compiler vectorises it), else the work-items
//    along dimension 0, and a walk whose lines fit the first-level cache wastes none (the next
//    iteration of an outer loop uses the rest of them); on a GPU it is the work-items along
//    dimension 0 (a warp's lanes, coalesced or not). Work-items that do not divide an access
//    among themselves repeat it: every access executed is counted at the first-level cache's
//    rate (the probe's vector loads per cycle on a CPU; on a GPU 128 bytes per cycle and
//    multiprocessor, the 32 four-byte banks its L1 and shared memory serve per cycle in
//    NVIDIA's CUDA C++ Programming Guide). Replayed on 28 measured
//    variants of `map(a -> a * 2.0f)` over 2^24 floats (PoCL, AMD Zen 4, 2 cores, 2.7 ms to
//    1.5 s), Spearman's rho between predicted and measured went from 0.67 (bytes, work-groups
//    and launches only) to 0.93.
#include "workloads/pipeline/pipeline_cost_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <mutex>

#include "codegen/compile_pipeline.h"
#include "explore/cache_footprint.h"
#include "explore/launch_parameters.h"
#include "explore/parameter_space.h"
#include "typecheck/flop_count.h"
#include "typecheck/typecheck.h"
#include "workloads/pipeline/pipeline_target.h"
#include "workloads/pipeline/searched_structures.h"

namespace weft::explore {

namespace {

constexpr const char* kTileWidthParameter = "theta2";
constexpr const char* kStripParameter = "theta";  // the strip height of walks along rows
constexpr const char* kColumnWalkFamily = "pipeline-column-walk";
constexpr double kSpillSlope = 0.3;
constexpr double kCpuBytesPerCycle = 6;
constexpr double kGpuBytesPerCycle = 16;
constexpr double kCpuLaunchSeconds = 20e-6;
constexpr double kGpuLaunchSeconds = 5e-6;
constexpr double kCpuWorkGroupCycles = 22;
constexpr double kLineBytes = 64;
constexpr double kCpuFirstLevelCacheBytes = 32 * 1024;
constexpr double kGpuFirstLevelBytesPerCycle = 128;
constexpr int64_t kBytesPerValue = 4;  // float and int buffers

}  // namespace

double cacheLineBytesOf(const host::DeviceProfile& device) {
  return device.cacheLineBytes > 0 ? device.cacheLineBytes : kLineBytes;
}

double firstLevelCacheBytesOf(const host::DeviceProfile& device) {
  return device.firstLevelCacheBytes > 0 ? static_cast<double>(device.firstLevelCacheBytes)
                                         : kCpuFirstLevelCacheBytes;
}

std::array<int64_t, 3> kernelLocalSizes(const KernelPlan& kernel, size_t index,
                                        const ArithBinding& binding,
                                        const std::map<std::string, int64_t>& parameters) {
  std::array<int64_t, 3> local{0, 0, 0};
  for (int d = 0; d < kernel.dimensions; ++d) {
    if (kernel.hasLocalSize) {
      local[d] = evaluate(kernel.localSize[d], binding);
      continue;
    }
    auto found = parameters.find(localSizeParameterName(static_cast<int>(index), d));
    if (found != parameters.end() && found->second > 0) local[d] = found->second;
  }
  return local;
}

namespace {

// One structure and, once compiled, its analysis program (or why it has none).
struct StructureFacts {
  Definition parametric;
  // A walk down strips (a sliding window): the window of its walk (its rows less one are the
  // strip's halo), 0 otherwise; whether it walks by column blocks, and the output's row length
  // and rows.
  int64_t walkWindow = 0;
  bool columnWalk = false;
  Arith outputRow = Arith(0), outputRows = Arith(0);
  std::once_flag compiled;
  std::optional<CompiledProgram> program;
  std::vector<bool> barriers;  // per kernel of `program`: whether it uses barriers
};

int64_t parameterOr(const std::map<std::string, int64_t>& parameters, const std::string& name,
                    int64_t fallback) {
  auto found = parameters.find(name);
  return found == parameters.end() ? fallback : found->second;
}

// What names a point's structure: its rewrite hash (a structure of the rewrite search,
// workloads/pipeline/searched_structures.h), else its fusion number (0: as written).
std::pair<int, int64_t> structureKey(const std::map<std::string, int64_t>& parameters) {
  auto rewrite = parameters.find(kRewriteParameter);
  if (rewrite != parameters.end()) return {1, rewrite->second};
  return {0, parameterOr(parameters, kFusionParameter, 0)};
}

struct KernelFacts {
  double workItems = 1;
  double workGroups = 1;  // 0: the implementation's choice
  int launches = 1;       // more where its local size does not divide (codegen/launch_parts.h)
  double privateValues = 0;
  double bytes = 0;
  double writtenBytes = 0;  // of the buffers it writes
  double localWidth = 1;  // work-items of a group along dimension 0
  double accessBytes = 0;  // the bytes its global accesses execute, repeated ones included
  double cacheLineLoads = 0;  // lines its accesses load into a CPU core's first-level cache
  // Of those, the lines the second-level cache does not keep either (all of them where the
  // profile does not know that cache or its rate): they come from memory.
  double memoryLineLoads = 0;
  // Its global reads executed (repeated ones included), and the vector operations they take
  // where the compiler vectorises the loop around them (vectorLanes).
  double readsExecuted = 0;
  double readOperations = 0;
};

// The bytes a global access takes from memory per byte it uses: a walk whose consecutive
// iterations lie `stride` scalars apart uses one vector of `width` scalars of each line it
// loads. 1 for a contiguous walk (and a repeated address); up to a line over a scalar.
double lineWaste(double stride, int width, double lineBytes) {
  const double used = kBytesPerValue * std::max(1, width);
  if (stride == 0) return 1;
  return std::max(used, std::min(std::abs(stride) * kBytesPerValue, lineBytes)) / used;
}

// One global access of a kernel under a binding: how often it runs (every work-item that does
// not divide a dimension among its loops repeats it), how often it runs for distinct work
// (those repetitions left out), and the bytes memory moves per byte it uses along the loop
// that runs fastest: on a CPU its innermost loop, else the work-items along dimension 0 (the
// OpenCL compiler vectorises that loop); on a GPU the work-items along dimension 0 (a warp's
// lanes). A CPU keeps a strided walk's lines in the first-level cache while that loop's lines
// fit in it, so that the next iteration of an outer loop uses the rest of them.
struct AccessFacts {
  double executions = 1;
  double distinct = 1;
  double waste = 1;
};

// The access's step along `walk` (explore/cache_footprint.h offsetStepAlong), every other loop
// of the access at its second iteration; nullopt when it does not evaluate.
std::optional<double> strideAlong(const GlobalAccess& access, const AccessLoop& walk,
                                  const ArithBinding& binding) {
  if (!walk.index.isVar()) return std::nullopt;
  ArithBinding at = binding;
  for (const AccessLoop& loop : access.loops) {
    if (!loop.index.isVar()) continue;
    at[loop.index.varName()] = std::min<int64_t>(1, evaluate(loop.tripCount, binding) - 1);
  }
  return offsetStepAlong(access.offset, walk.index.varName(), evaluate(walk.tripCount, binding),
                         at);
}

// Whether `offset` steps along `variable` by affine arithmetic only: no division or remainder
// of it, nor (unless `clampsAllowed`) a minimum or maximum of it (a clamped border read),
// which a compiler's dependence analysis cannot see through.
bool affineIn(const Arith& offset, const std::string& variable, bool clampsAllowed) {
  switch (offset.kind()) {
    case ArithKind::Constant:
    case ArithKind::Var:
      return true;
    case ArithKind::Sum:
      for (const auto& [coefficient, term] : offset.sumTerms()) {
        if (!affineIn(term, variable, clampsAllowed)) return false;
      }
      return true;
    case ArithKind::Product:
      for (const Arith& factor : offset.productFactors()) {
        if (!affineIn(factor, variable, clampsAllowed)) return false;
      }
      return true;
    case ArithKind::Min:
    case ArithKind::Max:
      if (clampsAllowed) {
        return affineIn(offset.operands()[0], variable, true) &&
               affineIn(offset.operands()[1], variable, true);
      }
      return !offset.mentions(variable);
    default:
      return !offset.mentions(variable);
  }
}

// Per global access of `kernel`, the executions one vector operation makes on a CPU (1: none,
// the access runs scalar). PoCL runs a work-group's work-items in a loop that it marks
// parallel, around the kernel body, or in a kernel with barriers inside the body's uniform
// loops; the compiler vectorises it whatever the accesses' strides, `width` items of it (0:
// the implementation's choice, taken as the native width), when no loop of the body hides it
// (unrolled loops do not); but an access whose offset divides the item's index, or takes its
// remainder, is counted unvectorised: its lanes are gathered
// (bench/results/reduction_cost_model-s66-amd.md). So is one that clamps a mapLcl's index (a
// minimum or maximum at the border): code generation's interior copy, which reads a mapGlb's
// constant offsets without their clamps away from the border, is for mapGlb only
// (bench/results/candidate-coverage-s69-amd.md). Otherwise a loop of the body is vectorised when
// its iterations are independent, every access it runs walks memory contiguously along it or stays
// put, and one walks, by affine arithmetic where the loop is real; a loop the kernel proper unrolls
// (rolled here) is straight-line code there, whose contiguous copies the compiler packs into
// vectors (superword-level parallelism, Larsen and Amarasinghe, PLDI 2000) once their indices are
// constants. A reduction's loop is vectorised by neither: floating-point sums are not reassociated.
std::vector<double> vectorLanes(const KernelPlan& kernel, bool hasBarriers, double width,
                                const ArithBinding& binding, const host::DeviceProfile& device) {
  const double native = std::max(1, device.nativeFloatVectorWidth);
  const double items = width > 0 ? std::min(native, width) : native;
  std::vector<double> lanes(kernel.globalAccesses.size(), 1);
  if (hasBarriers || kernel.workItemLoops == 0) {
    for (size_t a = 0; a < kernel.globalAccesses.size(); ++a) {
      const GlobalAccess& access = kernel.globalAccesses[a];
      const AccessLoop* item = nullptr;
      for (const AccessLoop& loop : access.loops) {
        if (loop.parallel && !loop.groupIndex && loop.dimension == 0 && loop.index.isVar()) {
          item = &loop;
        }
      }
      if (access.vectorWidth <= 1 && item &&
          affineIn(access.offset, item->index.varName(), /*clampsAllowed=*/!item->localIndex)) {
        lanes[a] = items;
      }
    }
    return lanes;
  }
  // Each access's innermost loop of the body, and per loop whether everything in it vectorises.
  std::vector<const AccessLoop*> innermost(kernel.globalAccesses.size(), nullptr);
  // Per loop: whether every access it runs allows vectors, and whether one walks along it.
  std::map<std::string, std::pair<bool, bool>> vectorises;
  for (size_t a = 0; a < kernel.globalAccesses.size(); ++a) {
    const GlobalAccess& access = kernel.globalAccesses[a];
    for (const AccessLoop& loop : access.loops) {
      if (!loop.parallel && !loop.unrolled && loop.index.isVar() &&
          evaluate(loop.tripCount, binding) > 1) {
        innermost[a] = &loop;
      }
    }
    const AccessLoop* loop = innermost[a];
    if (!loop) continue;
    const std::optional<double> stride = strideAlong(access, *loop, binding);
    const bool contiguous =
        access.vectorWidth <= 1 && stride && std::abs(*stride) <= 1 && !loop->reduction &&
        (loop->rolled || affineIn(access.offset, loop->index.varName(), /*clampsAllowed=*/false));
    const bool walks = contiguous && std::abs(*stride) == 1;
    auto [it, inserted] = vectorises.emplace(loop->index.varName(), std::pair{contiguous, walks});
    if (!inserted) it->second = {it->second.first && contiguous, it->second.second || walks};
  }
  for (size_t a = 0; a < kernel.globalAccesses.size(); ++a) {
    if (kernel.globalAccesses[a].vectorWidth > 1) continue;
    if (!innermost[a]) continue;
    const auto [allow, walk] = vectorises[innermost[a]->index.varName()];
    if (allow && walk) lanes[a] = native;
  }
  return lanes;
}

AccessFacts accessFacts(const GlobalAccess& access, const KernelPlan& kernel,
                        const ArithBinding& binding, const host::DeviceProfile& device) {
  AccessFacts facts;
  const bool cpu = device.deviceType == "cpu";
  std::array<double, 3> covered{1, 1, 1};
  const AccessLoop* fastest = nullptr;
  const AccessLoop* lanes = nullptr;
  for (const AccessLoop& loop : access.loops) {
    if (loop.unrolled) continue;
    const double trips = static_cast<double>(evaluate(loop.tripCount, binding));
    if (loop.parallel) {
      if (loop.dimension >= 0 && loop.dimension < 3) covered[loop.dimension] *= trips;
      if (loop.dimension == 0 && !loop.groupIndex && !loop.index.isConstant()) lanes = &loop;
    } else {
      facts.executions *= trips;
      if (trips > 1) fastest = &loop;
    }
  }
  double repeated = 1;
  for (int d = 0; d < kernel.dimensions; ++d) {
    const double global = static_cast<double>(evaluate(kernel.globalSize[d], binding));
    facts.executions *= std::max(global, covered[d]);
    repeated *= std::max(1.0, global / covered[d]);
  }
  facts.distinct = facts.executions / repeated;
  const AccessLoop* walk = cpu && fastest ? fastest : lanes;
  if (!walk || !walk->index.isVar()) return facts;
  const int64_t trips = evaluate(walk->tripCount, binding);
  if (trips < 2) return facts;
  const std::optional<double> stride = strideAlong(access, *walk, binding);
  if (!stride) return facts;
  const double lineBytes = cacheLineBytesOf(device);
  if (cpu) {
    const double cacheBytes = firstLevelCacheBytesOf(device);
    if (static_cast<double>(trips) * lineBytes <= cacheBytes) return facts;
  }
  facts.waste = lineWaste(*stride, access.vectorWidth, lineBytes);
  return facts;
}

KernelFacts kernelFacts(const CompiledProgram& program, size_t index, bool hasBarriers,
                        const ArithBinding& binding,
                        const std::map<std::string, int64_t>& parameters,
                        const host::DeviceProfile& device, bool withCacheTraffic) {
  const KernelPlan& kernel = program.kernels.at(index);
  KernelFacts facts;
  const bool cpu = device.deviceType == "cpu";
  const bool barriers = cpu && hasBarriers;
  double groups = 1;
  bool open = false;
  const std::array<int64_t, 3> localSizes = kernelLocalSizes(kernel, index, binding, parameters);
  for (int d = 0; d < kernel.dimensions; ++d) {
    const double global = static_cast<double>(evaluate(kernel.globalSize[d], binding));
    facts.workItems *= global;
    double local = 1;
    if (localSizes[d] > 0) {
      local = static_cast<double>(localSizes[d]);
    } else if (global > 1) {
      open = true;
    }
    if (d == 0) facts.localWidth = local;
    // A local size that does not divide launches a remainder part: one more, smaller group.
    groups *= std::ceil(global / local);
    if (std::fmod(global, local) != 0) facts.launches *= 2;
  }
  facts.workGroups = open ? 0 : groups;
  if (withCacheTraffic && cpu) {
    const double firstLevel = firstLevelCacheBytesOf(device);
    const CacheTraffic first =
        cacheTraffic(kernel, barriers, binding, localSizes, firstLevel, cacheLineBytesOf(device));
    facts.cacheLineLoads = first.lineLoads;
    facts.memoryLineLoads = facts.cacheLineLoads;
    const double secondLevel = static_cast<double>(device.secondLevelCacheBytes);
    if (secondLevel > firstLevel && device.secondLevelBytesPerCycle > 0) {
      // What the second-level cache keeps comes back from it, except lines a walk takes a page
      // apart: those cost what memory's do.
      const CacheTraffic second = cacheTraffic(kernel, barriers, binding, localSizes, secondLevel,
                                               cacheLineBytesOf(device));
      facts.memoryLineLoads =
          std::min(facts.cacheLineLoads,
                   second.lineLoads - second.pageWalkLineLoads + first.pageWalkLineLoads);
    }
  }
  facts.privateValues =
      static_cast<double>(evaluate(registerResidentPrivateScalars(kernel, device), binding));
  // Per buffer, the bytes memory moves per byte its accesses use (their line waste, weighted by
  // the distinct bytes each uses).
  std::map<std::string, std::pair<double, double>> wasteByBuffer;  // moved, used
  const std::vector<double> lanes =
      cpu ? vectorLanes(kernel, barriers, static_cast<double>(localSizes[0]), binding, device)
          : std::vector<double>(kernel.globalAccesses.size(), 1.0);
  for (size_t i = 0; i < kernel.globalAccesses.size(); ++i) {
    const GlobalAccess& access = kernel.globalAccesses[i];
    const AccessFacts a = accessFacts(access, kernel, binding, device);
    const double width = kBytesPerValue * std::max(1, access.vectorWidth);
    facts.accessBytes += a.executions * width;
    if (cpu && !access.written) {
      facts.readsExecuted += a.executions;
      facts.readOperations += a.executions / lanes[i];
    }
    auto& [moved, used] = wasteByBuffer[access.buffer];
    moved += a.distinct * width * a.waste;
    used += a.distinct * width;
  }
  for (const KernelArg& arg : kernel.args) {
    if (arg.kind != KernelArg::Kind::Buffer || arg.buffer < 0) continue;
    const BufferPlan& buffer = program.buffers.at(static_cast<size_t>(arg.buffer));
    double bytes = static_cast<double>(evaluate(buffer.elementCount, binding)) * kBytesPerValue;
    if (auto found = wasteByBuffer.find(buffer.name);
        found != wasteByBuffer.end() && found->second.second > 0) {
      bytes *= found->second.first / found->second.second;
    }
    facts.bytes += bytes;
    if (arg.written) facts.writtenBytes += bytes;
  }
  return facts;
}

std::optional<PipelineCostPrediction> predict(StructureFacts& structure, const ArithBinding& sizes,
                                              const std::map<std::string, int64_t>& parameters,
                                              const host::DeviceProfile& device,
                                              bool withCacheTraffic) {
  std::call_once(structure.compiled, [&] {
    try {
      structure.program = analysisProgram(structure.parametric, sizes);
      for (const KernelPlan& kernel : structure.program->kernels) {
        structure.barriers.push_back(kernelHasBarriers(*structure.program, kernel));
      }
    } catch (const std::exception&) {
      structure.program.reset();
    }
  });
  if (!structure.program || structure.program->kernels.empty()) return std::nullopt;
  try {
    const ArithBinding binding = pointBinding(structure.parametric, sizes, parameters);
    PipelineCostPrediction out;
    out.flops = countFlops(structure.parametric, binding);
    const bool cpu = device.deviceType == "cpu";
    const double units = std::max(1, device.computeUnits);
    const double cyclesPerSecond = (device.maxClockMHz > 0 ? device.maxClockMHz : 1000) * 1e6;
    const double nativeLanes = std::max(1, device.nativeFloatVectorWidth);
    const double lanesPerCycle =
        device.fmaLanesPerCycle > 0 ? device.fmaLanesPerCycle : nativeLanes;
    // The private values a work-item keeps without the spill slowdown: what the space allows it
    // (on a CPU a vector lane's share of the first-level cache, explore/launch_parameters.h).
    const double valuesWithoutSpill =
        static_cast<double>(std::max<int64_t>(1, privateValuesBound(device)));
    const bool readForOwnership = cpu && parameterOr(parameters, kStreamingStoresParameter, 0) == 0;

    // The kernel whose work-items hold the most private values (a fused tile) sets the
    // factors; ties go to the one with the most work-items.
    const CompiledProgram& program = *structure.program;
    // A walk down strips of `theta` rows reads each strip's halo rows again (the next strip's
    // first rows): its inputs move theta / (theta - window + 1) times.
    const int64_t stripRows = parameterOr(parameters, kStripParameter, 0);
    const double halo = static_cast<double>(structure.walkWindow - 1);
    const double readAmplification =
        structure.walkWindow > 1 && stripRows > halo
            ? static_cast<double>(stripRows) / (static_cast<double>(stripRows) - halo)
            : 1.0;
    std::optional<KernelFacts> main;
    double accessBytes = 0;
    double cacheLineLoads = 0, memoryLineLoads = 0;
    double readsExecuted = 0, readOperations = 0;
    int launches = 0;
    const double workGroupCycles = device.workGroupCycles > 0 ? device.workGroupCycles
                                   : cpu                      ? kCpuWorkGroupCycles
                                                              : 0.0;
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const KernelFacts facts = kernelFacts(program, k, structure.barriers[k], binding, parameters,
                                            device, withCacheTraffic);
      out.workGroupSeconds += facts.workGroups * workGroupCycles / (units * cyclesPerSecond);
      launches += facts.launches;
      accessBytes += facts.accessBytes;
      cacheLineLoads += facts.cacheLineLoads;
      memoryLineLoads += facts.memoryLineLoads;
      readsExecuted += facts.readsExecuted;
      readOperations += facts.readOperations;
      out.bytes += facts.bytes + (readAmplification - 1) * (facts.bytes - facts.writtenBytes) +
                   (readForOwnership ? facts.writtenBytes : 0);
      if (!main || facts.privateValues > main->privateValues ||
          (facts.privateValues == main->privateValues && facts.workItems > main->workItems)) {
        main = facts;
      }
    }
    out.kernels = static_cast<int>(program.kernels.size());
    if (readsExecuted > 0) out.readOperationsPerRead = readOperations / readsExecuted;

    const int64_t tileWidth = parameterOr(parameters, kTileWidthParameter, 0);
    const int64_t vectorWidth = parameterOr(parameters, kVectorWidthParameter, 0);
    const double width = vectorWidth > 0 ? static_cast<double>(vectorWidth)
                         : tileWidth > 0  ? static_cast<double>(tileWidth)
                                          : main->localWidth;
    out.laneUse = std::min(width, nativeLanes) / nativeLanes;
    out.spillFactor = 1 + kSpillSlope * std::max(0.0, main->privateValues / valuesWithoutSpill - 1);
    if (main->workGroups > 0) {
      out.balanceFactor = std::ceil(main->workGroups / units) / (main->workGroups / units);
    }
    out.computeSeconds = static_cast<double>(out.flops) /
                         (units * cyclesPerSecond * lanesPerCycle * out.laneUse) *
                         out.spillFactor * out.balanceFactor;
    // Bandwidth comes with the units that stream: a last round of work-groups that leaves
    // units idle (one strip of a row-walking kernel on two cores) reads at their share.
    const double bytesPerCycle = device.memoryBytesPerCycle > 0 ? device.memoryBytesPerCycle
                                 : cpu                          ? kCpuBytesPerCycle
                                                                : kGpuBytesPerCycle;
    out.memorySeconds = out.bytes / (units * cyclesPerSecond * bytesPerCycle) * out.balanceFactor;
    // Every access executed, repeated ones included, at the first-level cache's rate: the
    // profile's vector loads per cycle at the native width on a CPU, a nominal 128 bytes per
    // cycle on a GPU's multiprocessor.
    const double firstLevelBytesPerCycle =
        cpu ? std::max(device.vectorLoadsPerCycle, 1.0) * nativeLanes * kBytesPerValue
            : kGpuFirstLevelBytesPerCycle;
    out.accessSeconds = accessBytes / (units * cyclesPerSecond * firstLevelBytesPerCycle);
    // Lines the second-level cache keeps come back at its probed rate, the rest from memory.
    out.cacheBytes = cacheLineLoads * cacheLineBytesOf(device);
    const double memoryLineBytes = memoryLineLoads * cacheLineBytesOf(device);
    out.cacheSeconds = (memoryLineBytes / bytesPerCycle +
                        (device.secondLevelBytesPerCycle > 0
                             ? (out.cacheBytes - memoryLineBytes) / device.secondLevelBytesPerCycle
                             : 0.0)) /
                       (units * cyclesPerSecond) * out.balanceFactor;
    out.launchSeconds = launches * (cpu ? kCpuLaunchSeconds : kGpuLaunchSeconds);
    const int64_t strip = parameterOr(parameters, kStripParameter, 0);
    if (cpu && structure.columnWalk && strip > 0 && device.conflictingStoreCycles > 0 &&
        vectorWidth > 0) {
      const double streams = static_cast<double>(strip - (structure.walkWindow - 1));
      const int64_t row = evaluate(structure.outputRow, binding);
      if (row * kBytesPerValue % 4096 == 0 && streams > device.conflictFreeStoreStreams) {
        const double stores = static_cast<double>(row) *
                              static_cast<double>(evaluate(structure.outputRows, binding)) /
                              static_cast<double>(vectorWidth);
        out.storeConflictSeconds = stores * device.conflictingStoreCycles / units / cyclesPerSecond;
      }
    }
    out.seconds = std::max({out.computeSeconds, out.memorySeconds, out.accessSeconds}) +
                  out.launchSeconds + out.workGroupSeconds + out.storeConflictSeconds;
    return out;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

ArithBinding pointBinding(const Definition& structure, const ArithBinding& sizes,
                          const std::map<std::string, int64_t>& parameters) {
  ArithBinding binding = sizes;
  for (const auto& [name, value] : parameters) binding.emplace(name, value);
  std::map<std::string, std::vector<std::string>> byStem;
  for (const Arith& v : variableOccurrences(structure)) {
    if (!v.isVar() || v.varKind() != VarKind::Tuning) continue;
    const std::string& name = v.varName();
    const std::string stem = name.substr(0, name.find_last_not_of("0123456789") + 1);
    auto& names = byStem[stem];
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const auto& [stem, names] : byStem) {
    auto recorded = parameters.find(stem);
    if (names.size() == 1 && recorded != parameters.end()) {
      binding.emplace(names.front(), recorded->second);
    }
  }
  return binding;
}

std::function<std::optional<PipelineCostPrediction>(const std::map<std::string, int64_t>&,
                                                    const host::DeviceProfile&)>
pipelineCostPredictor(const std::vector<ExploreTarget::Structure>& structures,
                      const ArithBinding& sizes, bool withCacheTraffic) {
  // By fusion number or rewrite hash; the structure without either is the program as written.
  auto byKey =
      std::make_shared<std::map<std::pair<int, int64_t>, std::shared_ptr<StructureFacts>>>();
  for (const ExploreTarget::Structure& s : structures) {
    const std::pair<int, int64_t> key = structureKey(s.fixedParameters);
    if (byKey->count(key)) continue;
    auto facts = std::make_shared<StructureFacts>();
    facts->parametric = s.parametric;
    forEachNode(s.parametric.function.body(), [&](const Expr& e) {
      if (e.isPrim(Op::MapSeqSlide) && facts->walkWindow == 0) {
        facts->walkWindow = e.nats()[0].constant().value_or(0);
      }
    });
    if (s.family == kColumnWalkFamily) {
      Type result;
      try {
        result = typecheck(s.parametric).type;
      } catch (const std::exception&) {
      }
      if (result.isArray() && result.arrayElement().isArray()) {
        facts->columnWalk = true;
        facts->outputRows = result.arrayLength();
        facts->outputRow = result.arrayElement().arrayLength();
      }
    }
    byKey->emplace(key, std::move(facts));
  }
  return [byKey, sizes, withCacheTraffic](
             const std::map<std::string, int64_t>& parameters,
             const host::DeviceProfile& device) -> std::optional<PipelineCostPrediction> {
    auto found = byKey->find(structureKey(parameters));
    if (found == byKey->end()) return std::nullopt;
    return predict(*found->second, sizes, parameters, device, withCacheTraffic);
  };
}

std::function<std::optional<double>(const std::map<std::string, int64_t>&,
                                    const host::DeviceProfile&)>
pipelineCostModel(const std::vector<ExploreTarget::Structure>& structures,
                  const ArithBinding& sizes) {
  auto predictor = pipelineCostPredictor(structures, sizes);
  return [predictor](const std::map<std::string, int64_t>& parameters,
                     const host::DeviceProfile& device) -> std::optional<double> {
    std::optional<PipelineCostPrediction> prediction = predictor(parameters, device);
    if (!prediction) return std::nullopt;
    return prediction->seconds;
  };
}

}  // namespace weft::explore
