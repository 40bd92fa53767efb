// The program-file workload (see workloads/pipeline/pipeline_workload.h).
#include "workloads/pipeline/pipeline_workload.h"

#include <sstream>
#include <stdexcept>

#include "explore/variant_pick.h"
#include "workloads/pipeline/pipeline_target.h"

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

class PipelineWorkload final : public Workload {
 public:
  std::string name() const override { return "pipeline"; }

  std::string summary() const override {
    return "a program file with --size values (FILE): as written, and fused by the pipeline "
           "fusion strategies that apply (--fusion)";
  }

  bool accepts(const WorkloadRequest& request) const override {
    return request.program.has_value();
  }

  std::vector<ExploreTarget> targets(const WorkloadRequest& request,
                                     const host::DeviceProfile*) const override {
    const Definition& definition = *request.program;
    auto found = request.options.find("fusion");
    const std::string fusion = found == request.options.end() ? "auto" : found->second;
    if (fusion == "none") return {asWritten(definition, request.sizes)};
    // An image pipeline is explored as written and fused by every fusion strategy that
    // applies; a program none applies to is explored as written.
    PipelineTargetOptions options;
    if (fusion != "auto") options.strategies = commaSeparated(fusion);
    std::vector<std::string> notApplied;
    ExploreTarget target = pipelineTarget(definition, request.sizes, options, &notApplied);
    if (fusion != "auto" && !notApplied.empty()) {
      throw std::invalid_argument("--fusion: " + notApplied.front());
    }
    if (target.structures.size() <= 1) return {asWritten(definition, request.sizes)};
    return {target};
  }

  ExploreTarget structureTarget(const WorkloadRequest& request,
                                const std::map<std::string, int64_t>& fixed) const override {
    if (!request.program) throw std::invalid_argument("the program file is needed");
    return pipelineStructureTarget(*request.program, request.sizes, fixed);
  }

  std::vector<std::string> structuralParameters(
      const std::map<std::string, int64_t>& recorded) const override {
    if (recorded.count("fusion")) return {"fusion"};
    return {};
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
