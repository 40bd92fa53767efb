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
//  - Launch overhead per kernel: tens of microseconds on PoCL, a few on a GPU driver (as the
//    convolution model).
#include "workloads/pipeline/pipeline_cost_model.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "explore/launch_parameters.h"
#include "explore/parameter_space.h"
#include "typecheck/flop_count.h"
#include "typecheck/typecheck.h"
#include "workloads/pipeline/pipeline_target.h"

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
constexpr int64_t kBytesPerValue = 4;  // float and int buffers

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
};

int64_t parameterOr(const std::map<std::string, int64_t>& parameters, const std::string& name,
                    int64_t fallback) {
  auto found = parameters.find(name);
  return found == parameters.end() ? fallback : found->second;
}

struct KernelFacts {
  double workItems = 1;
  double workGroups = 1;  // 0: the implementation's choice
  double privateValues = 0;
  double bytes = 0;
  double writtenBytes = 0;  // of the buffers it writes
  double localWidth = 1;  // work-items of a group along dimension 0
};

KernelFacts kernelFacts(const CompiledProgram& program, size_t index,
                        const ArithBinding& binding,
                        const std::map<std::string, int64_t>& parameters,
                        const host::DeviceProfile& device) {
  const KernelPlan& kernel = program.kernels.at(index);
  KernelFacts facts;
  double groupSize = 1;
  bool open = false;
  for (int d = 0; d < kernel.dimensions; ++d) {
    const double global = static_cast<double>(evaluate(kernel.globalSize[d], binding));
    facts.workItems *= global;
    double local = 1;
    if (kernel.hasLocalSize) {
      local = static_cast<double>(evaluate(kernel.localSize[d], binding));
    } else {
      // explore/launch_parameters.h names an open local size local_k<kernel>_d<dimension>.
      const std::string name =
          "local_k" + std::to_string(index) + "_d" + std::to_string(d);
      const int64_t value = parameterOr(parameters, name, 0);
      if (value > 0) {
        local = static_cast<double>(value);
      } else if (global > 1) {
        open = true;
      }
    }
    if (d == 0) facts.localWidth = local;
    groupSize *= local;
  }
  facts.workGroups = open ? 0 : facts.workItems / std::max(groupSize, 1.0);
  facts.privateValues =
      static_cast<double>(evaluate(registerResidentPrivateScalars(kernel, device), binding));
  for (const KernelArg& arg : kernel.args) {
    if (arg.kind != KernelArg::Kind::Buffer || arg.buffer < 0) continue;
    const BufferPlan& buffer = program.buffers.at(static_cast<size_t>(arg.buffer));
    const double bytes =
        static_cast<double>(evaluate(buffer.elementCount, binding)) * kBytesPerValue;
    facts.bytes += bytes;
    if (arg.written) facts.writtenBytes += bytes;
  }
  return facts;
}

std::optional<PipelineCostPrediction> predict(StructureFacts& structure, const ArithBinding& sizes,
                                              const std::map<std::string, int64_t>& parameters,
                                              const host::DeviceProfile& device) {
  std::call_once(structure.compiled, [&] {
    try {
      structure.program = analysisProgram(structure.parametric, sizes);
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
    for (size_t k = 0; k < program.kernels.size(); ++k) {
      const KernelFacts facts = kernelFacts(program, k, binding, parameters, device);
      out.bytes += facts.bytes + (readAmplification - 1) * (facts.bytes - facts.writtenBytes) +
                   (readForOwnership ? facts.writtenBytes : 0);
      if (!main || facts.privateValues > main->privateValues ||
          (facts.privateValues == main->privateValues && facts.workItems > main->workItems)) {
        main = facts;
      }
    }
    out.kernels = static_cast<int>(program.kernels.size());

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
    out.launchSeconds = out.kernels * (cpu ? kCpuLaunchSeconds : kGpuLaunchSeconds);
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
    out.seconds = std::max(out.computeSeconds, out.memorySeconds) + out.launchSeconds +
                  out.storeConflictSeconds;
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
                      const ArithBinding& sizes) {
  // By fusion number; the structure without one is the program as written (0).
  auto byFusion = std::make_shared<std::map<int64_t, std::shared_ptr<StructureFacts>>>();
  for (const ExploreTarget::Structure& s : structures) {
    const int64_t fusion = parameterOr(s.fixedParameters, kFusionParameter, 0);
    if (byFusion->count(fusion)) continue;
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
    byFusion->emplace(fusion, std::move(facts));
  }
  return [byFusion, sizes](const std::map<std::string, int64_t>& parameters,
                           const host::DeviceProfile& device)
             -> std::optional<PipelineCostPrediction> {
    auto found = byFusion->find(parameterOr(parameters, kFusionParameter, 0));
    if (found == byFusion->end()) return std::nullopt;
    return predict(*found->second, sizes, parameters, device);
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
