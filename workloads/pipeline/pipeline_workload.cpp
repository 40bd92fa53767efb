// The program-file workload (see workloads/pipeline/pipeline_workload.h).
#include "workloads/pipeline/pipeline_workload.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "explore/variant_pick.h"
#include "typecheck/flop_count.h"
#include "workloads/pipeline/pipeline_cost_model.h"
#include "workloads/pipeline/pipeline_target.h"
#include "workloads/pipeline/searched_structures.h"

namespace weft::explore {

namespace {

// "a,b,,c" -> {"a", "b", "c"}: the --fusion list, empty items dropped.
std::vector<std::string> commaSeparated(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// The program as written, recorded as such.
ExploreTarget asWritten(const Definition& definition, const ArithBinding& sizes) {
  ExploreTarget target = programTarget(definition, sizes);
  target.workload = "pipeline";
  target.strategy = "as-written";
  return target;
}

// The interpreter runs about two million multiply-adds a second: a reference larger than this
// is checked at smaller sizes of the program (ExploreTarget::referenceCheckSizes) instead.
constexpr int64_t kInterpreterCheckMultiplyAdds = 20'000'000;

// Whether the program's reductions read anything at these sizes (a program that does not
// count, e.g. with a size left open, is taken to have them).
bool hasReductions(const Definition& definition, const ArithBinding& sizes) {
  try {
    return countOperations(definition, sizes).reductionReads > 0;
  } catch (const std::exception&) {
    return true;
  }
}

// The option's value, or `otherwise` when it was not given.
std::string optionOr(const WorkloadRequest& request, const std::string& name,
                     const std::string& otherwise) {
  auto found = request.options.find(name);
  return found == request.options.end() ? otherwise : found->second;
}

// The cost model of a program with reductions: the reads model (searched_structures.h
// readsCostModel), which counts what the reductions read as if every value came from the
// cache, one per cycle, scaled on a CPU by the vector operations the global reads take per read
// (PipelineCostPrediction::readOperationsPerRead: 1/16 where the compiler vectorises every loop
// around them by 16); plus from the memory model (pipeline_cost_model.h) the larger of its two
// access terms, the lines loaded into the first-level cache (a buffer read again because what
// lies between two uses of a line no longer fits, explore/cache_footprint.h) at the memory
// bandwidth and every access executed at the cache's rate; plus its work-groups and launches.
// Added rather than overlapped: a reduction's loads feed its arithmetic directly. How each term
// changed the order of measured explorations is in bench/results/reduction_cost_model-*.md.
std::function<std::optional<double>(const std::map<std::string, int64_t>&,
                                    const host::DeviceProfile&)>
reductionCostModel(const std::vector<ExploreTarget::Structure>& structures,
                   const ArithBinding& sizes) {
  auto reads = readsCostModel(structures, sizes);
  auto memory = pipelineCostPredictor(structures, sizes, /*withCacheTraffic=*/true);
  return [reads, memory](const std::map<std::string, int64_t>& parameters,
                         const host::DeviceProfile& device) -> std::optional<double> {
    const std::optional<double> computed = reads(parameters, device);
    if (!computed) return std::nullopt;
    const std::optional<PipelineCostPrediction> moved = memory(parameters, device);
    if (!moved) return computed;
    return *computed * moved->readOperationsPerRead +
           std::max(moved->cacheSeconds, moved->accessSeconds) + moved->workGroupSeconds +
           moved->launchSeconds;
  };
}

// `target` with the structures of the rewrite-sequence search added (the program as written
// stays the unnamed structure it was before). Variants are checked against the program as
// written, default-lowered and run on the device, not each one in the interpreter.
ExploreTarget withSearchedStructures(ExploreTarget target, const Definition& definition,
                                     const ArithBinding& sizes,
                                     const rewrite::SearchOptions& options) {
  if (target.structures.empty()) {
    target.structures.push_back(
        {target.parametric, target.switches, target.fixedParameters, "as written", target.strategy});
  }
  target.reference = boundReference(definition, target);
  target.interpreterCheckLimit = kInterpreterCheckMultiplyAdds;
  // Searched structures re-associate reductions freely (partial reductions, split-K): with
  // whole-number inputs their results are exact and must equal the reference's.
  target.inputValues = InputValues::SmallIntegers;
  rewrite::SearchReport report;
  const std::vector<ExploreTarget::Structure> searched =
      searchedStructures(definition, sizes, options, &report);
  target.structures.insert(target.structures.end(), searched.begin(), searched.end());
  // The reads model ranks programs by what their reductions read, the memory that no cache
  // keeps between two uses added (reductionCostModel); a program without reductions (maps,
  // stencils written without reduce) computes the same values whatever the structure, and the
  // memory model ranks its structures by how they walk memory and divide the work: bytes moved
  // (lines a strided walk wastes), accesses work-items repeat, work-groups and launches.
  target.predictSeconds = hasReductions(definition, sizes)
                              ? reductionCostModel(target.structures, sizes)
                              : pipelineCostModel(target.structures, sizes);
  target.description += "; as written and " + std::to_string(searched.size()) +
                        " structures of the rewrite search (" + report.summary() + ")";
  return target;
}

class PipelineWorkload final : public Workload {
 public:
  std::string name() const override { return "pipeline"; }

  std::string summary() const override {
    return "a program file with --size values (FILE): as written, fused by the pipeline "
           "fusion strategies that apply (--fusion), and the programs the rewrite-sequence "
           "search reaches (--search)";
  }

  bool accepts(const WorkloadRequest& request) const override {
    return request.program.has_value();
  }

  std::vector<ExploreTarget> targets(const WorkloadRequest& request,
                                     const host::DeviceProfile* device) const override {
    const Definition& definition = *request.program;
    const std::string fusion = optionOr(request, "fusion", "auto");
    const std::string search = optionOr(request, "search", "auto");
    if (search != "auto" && search != "on" && search != "off") {
      throw std::invalid_argument("--search " + search + ": expected auto, on or off");
    }
    // An image pipeline is explored as written and fused by every fusion strategy that
    // applies; a program none applies to is explored as written and over the rewrite search's
    // structures (--search auto), or with them whatever applies (on), or without them (off).
    ExploreTarget target = asWritten(definition, request.sizes);
    if (fusion != "none") {
      PipelineTargetOptions options;
      if (fusion != "auto") options.strategies = commaSeparated(fusion);
      if (device) options.vectorWidth = device->preferredFloatVectorWidth;
      std::vector<std::string> notApplied;
      ExploreTarget fused = pipelineTarget(definition, request.sizes, options, &notApplied);
      if (fusion != "auto" && !notApplied.empty()) {
        throw std::invalid_argument("--fusion: " + notApplied.front());
      }
      if (fused.structures.size() > 1) target = fused;
    }
    const bool fusedSome = target.structures.size() > 1;
    if (search == "on" || (search == "auto" && fusion == "auto" && !fusedSome)) {
      rewrite::SearchOptions options = explorationSearchOptions(device);
      const std::string depth = optionOr(request, "search-depth", "");
      if (!depth.empty()) options.algorithmicDepth = std::stoi(depth);
      for (const std::string& name : commaSeparated(optionOr(request, "search-without", ""))) {
        options.disabledHeuristics.insert(name);
      }
      try {
        target = withSearchedStructures(target, definition, request.sizes, options);
      } catch (const rewrite::RewriteError& error) {
        throw std::invalid_argument(std::string("--search-without: ") + error.what());
      }
    }
    // A program explored only as written (over its local sizes) has no reference, so every
    // variant would be checked by the interpreter at full size: minutes each for a large one.
    // Beyond the interpreter's limit the program default-lowered on the device is the
    // reference instead, itself checked against the interpreter at smaller sizes.
    if (!target.reference && target.flops / 2 > kInterpreterCheckMultiplyAdds) {
      target.reference = boundReference(definition, target);
      target.interpreterCheckLimit = kInterpreterCheckMultiplyAdds;
    }
    // A program explored only as written (over its local sizes) is ordered by the memory
    // model: the work-groups a local size makes cost a CPU per group.
    if (!target.predictSeconds) {
      std::vector<ExploreTarget::Structure> structures = target.structures;
      if (structures.empty()) {
        structures.push_back({target.parametric, target.switches, target.fixedParameters,
                              "as written", target.strategy});
      }
      target.predictSeconds = pipelineCostModel(structures, request.sizes);
    }
    return {target};
  }

  ExploreTarget structureTarget(const WorkloadRequest& request,
                                const std::map<std::string, int64_t>& fixed,
                                const std::string& strategy) const override {
    if (!request.program) throw std::invalid_argument("the program file is needed");
    auto rewritten = fixed.find(kRewriteParameter);
    if (rewritten == fixed.end()) {
      return pipelineStructureTarget(*request.program, request.sizes, fixed);
    }
    ExploreTarget target = asWritten(*request.program, request.sizes);
    target.reference = boundReference(*request.program, target);
    ExploreTarget::Structure structure = recordedSearchedStructure(
        *request.program, request.sizes, rewritten->second, strategy);
    adoptStructure(target, structure);
    target.description += "; " + structure.strategy;
    return target;
  }

  std::vector<std::string> structuralParameters(
      const std::map<std::string, int64_t>& recorded) const override {
    if (recorded.count(kRewriteParameter)) return {kRewriteParameter};
    if (recorded.count(kFusionParameter)) {
      std::vector<std::string> structural = {kFusionParameter};
      for (const char* name : {kVectorWidthParameter, kVectorPadParameter}) {
        if (recorded.count(name)) structural.push_back(name);
      }
      return structural;
    }
    return {};
  }

  // The recorded parameters, and for a searched structure the rule sequence that made it.
  std::vector<ParameterRow> parameterTable(const VariantRecord& record) const override {
    std::vector<ParameterRow> rows = Workload::parameterTable(record);
    if (std::optional<rewrite::RewriteSequence> sequence = sequenceOfStrategy(record.strategy)) {
      rows.push_back({"rule sequence", rewrite::sequenceText(*sequence)});
    }
    return rows;
  }

  // Every record of a program that is not a named instance of another workload: registered
  // after those, this is the catch-all for rows written before records named their workload.
  bool ownsUnnamedRecord(const VariantRecord&) const override { return true; }
};

}  // namespace

std::shared_ptr<const Workload> pipelineWorkload() {
  static const std::shared_ptr<const Workload> instance = std::make_shared<PipelineWorkload>();
  return instance;
}

namespace {

WorkloadRequest programRequest(const Definition& program, const ArithBinding& sizes) {
  WorkloadRequest request;
  request.program = program;
  request.sizes = sizes;
  return request;
}

}  // namespace

Definition variantDefinition(const Definition& program, const ArithBinding& sizes,
                             const VariantRecord& record) {
  return variantDefinition(*pipelineWorkload(), programRequest(program, sizes), record);
}

CompiledProgram compileProgramVariant(const Definition& program, const ArithBinding& sizes,
                                      const VariantRecord& record) {
  return compileRecordedVariant(*pipelineWorkload(), programRequest(program, sizes), record);
}

}  // namespace weft::explore
