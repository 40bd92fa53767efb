// The registry of workloads (see explore/workload.h).
#include "explore/workload.h"

#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace weft::explore {

namespace {

struct Registry {
  std::mutex mutex;
  std::vector<std::shared_ptr<const Workload>> workloads;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

// Each recorded name and value, in the record's (sorted) order.
std::vector<ParameterRow> rawParameterTable(const VariantRecord& record) {
  nlohmann::json parameters = nlohmann::json::parse(record.key.parameters, nullptr, false);
  if (!parameters.is_object()) return {{"parameters", record.key.parameters}};
  std::vector<ParameterRow> rows;
  for (const auto& [name, value] : parameters.items()) rows.push_back({name, value.dump()});
  return rows;
}

}  // namespace

std::vector<ParameterRow> Workload::parameterTable(const VariantRecord& record) const {
  return rawParameterTable(record);
}

void registerWorkload(std::shared_ptr<const Workload> workload) {
  if (!workload) throw std::invalid_argument("registerWorkload: no workload");
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (auto& existing : r.workloads) {
    if (existing->name() == workload->name()) {
      existing = std::move(workload);
      return;
    }
  }
  r.workloads.push_back(std::move(workload));
}

std::vector<std::shared_ptr<const Workload>> registeredWorkloads() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.workloads;
}

std::shared_ptr<const Workload> findWorkload(const std::string& name) {
  for (const auto& workload : registeredWorkloads()) {
    if (workload->name() == name) return workload;
  }
  return nullptr;
}

std::shared_ptr<const Workload> workloadFor(const WorkloadRequest& request) {
  const auto all = registeredWorkloads();
  for (const auto& workload : all) {
    if (workload->accepts(request)) return workload;
  }
  std::string known;
  for (const auto& workload : all) {
    known += "\n  " + workload->name() + ": " + workload->summary();
  }
  throw std::invalid_argument("no workload explores this request" +
                              (known.empty() ? std::string(" (none is registered)")
                                             : "; the workloads are:" + known));
}

std::shared_ptr<const Workload> workloadOf(const VariantRecord& record) {
  if (!record.workload.empty()) return findWorkload(record.workload);
  for (const auto& workload : registeredWorkloads()) {
    if (workload->ownsUnnamedRecord(record)) return workload;
  }
  return nullptr;
}

std::vector<ParameterRow> parameterTable(const VariantRecord& record) {
  if (auto workload = workloadOf(record)) return workload->parameterTable(record);
  return rawParameterTable(record);
}

std::string parameterLayout(const VariantRecord& record) {
  if (auto workload = workloadOf(record)) return workload->parameterLayout(record);
  return "";
}

}  // namespace weft::explore
