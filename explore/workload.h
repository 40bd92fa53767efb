// Workloads: the kinds of program weft explores, plugged into one exploration engine.
//
// The engine (sampling, measurement, the results database, reports) works on ExploreTargets and
// knows nothing about convolution or image pipelines. A workload turns what the user asked for
// (a layer spec, a program file with sizes) into targets, and a recorded variant back into the
// program it measured. It supplies:
//   - the structures it offers for given sizes and a device profile, each a parametric program
//     with its strategy's name (ExploreTarget::structures), sampled as a union;
//   - the reference every variant is verified against (ExploreTarget::reference; none: the
//     interpreter checks each variant) and its constant inputs, prepared once
//     (ExploreTarget::constantInputs);
//   - optionally a cost model that orders the sampled points (ExploreTarget::predictSeconds);
//   - how its variants appear in reports (parameterTable) and in a drop-in (dropinNotes).
// Every variant is recorded with its workload's name and its structure's strategy, so that a
// record is rebuilt by the workload that made it (workloadOf).
//
// The registry holds the workloads by name. The built-in ones are registered by
// workloads/builtin_workloads.h (one line each); a test or a tool registers its own with
// registerWorkload.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/results_db.h"
#include "host/device_profile.h"
#include "ir/expr.h"

namespace weft::explore {

// What the user asked to explore or rebuild. A workload reads the fields it understands and
// rejects a request it cannot serve with std::invalid_argument naming the option at fault.
struct WorkloadRequest {
  // A named instance (e.g. "64,56,56,64,3,1,1" for a convolution layer); empty for a
  // program file.
  std::string instance;
  // A program file's definition and its --size values.
  std::optional<Definition> program;
  ArithBinding sizes;
  // Workload options from the command line by name ("vector-width" -> "4", "fusion" -> "auto").
  std::map<std::string, std::string> options;
};

// One row of a variant's parameters for people.
struct ParameterRow {
  std::string name;
  std::string value;
};

class Workload {
 public:
  virtual ~Workload() = default;

  // The name recorded with each variant and used on the command line ("conv", "pipeline").
  virtual std::string name() const = 0;
  // One line for people: what it explores and how it is asked for.
  virtual std::string summary() const = 0;

  // Whether the request is of this workload's kind (a layer spec, a program file, ...).
  virtual bool accepts(const WorkloadRequest& request) const = 0;

  // The targets to explore for a request (several when the request names several instances,
  // e.g. every layer of a network). `device` is the profile the space is built against when
  // the structures depend on it (null: the workload's device-independent set). Throws
  // std::invalid_argument for a request it cannot serve.
  virtual std::vector<ExploreTarget> targets(const WorkloadRequest& request,
                                             const host::DeviceProfile* device) const = 0;

  // The one structure a recorded variant came from, given the structural parameters in its
  // record (ExploreTarget::fixedParameters) and its recorded strategy (Structure::strategy:
  // a workload whose structures are not all named by numbers reads it), with the reference and
  // sizes of `request`.
  virtual ExploreTarget structureTarget(const WorkloadRequest& request,
                                        const std::map<std::string, int64_t>& fixed,
                                        const std::string& strategy) const = 0;

  // The request a recorded program name stands for, when the name alone says it (a layer's
  // name); nullopt when the user must give it (a program file).
  virtual std::optional<WorkloadRequest> requestOfProgram(const std::string& program) const {
    (void)program;
    return std::nullopt;
  }

  // The name a named instance's variants are recorded under (e.g. a layer's name); nullopt
  // when `instance` is not one of this workload's.
  virtual std::optional<std::string> programNameOf(const std::string& instance) const {
    (void)instance;
    return std::nullopt;
  }

  // Which of a record's parameters name its structure (ExploreTarget::fixedParameters), the
  // rest being tuning and launch values. Throws std::invalid_argument when the parameters are
  // not those of one of this workload's structures.
  virtual std::vector<std::string> structuralParameters(
      const std::map<std::string, int64_t>& recorded) const = 0;

  // Whether a record written before records named their workload is one of this workload's
  // (decided from its program name and parameters).
  virtual bool ownsUnnamedRecord(const VariantRecord& record) const = 0;

  // A variant's parameters for people; by default each recorded name and value.
  virtual std::vector<ParameterRow> parameterTable(const VariantRecord& record) const;
  // The published layout parameterTable follows for this record ("the LIFT paper's Table 4"),
  // or "" for the raw names and values.
  virtual std::string parameterLayout(const VariantRecord& record) const {
    (void)record;
    return "";
  }

  // What a drop-in's README says about the layouts of a request's inputs and output.
  virtual std::vector<std::string> dropinNotes(const WorkloadRequest& request) const {
    (void)request;
    return {};
  }
};

// Adds a workload to the registry (replacing one of the same name).
void registerWorkload(std::shared_ptr<const Workload> workload);
// The registered workloads in registration order.
std::vector<std::shared_ptr<const Workload>> registeredWorkloads();
// The workload of that name; nullptr when none is registered.
std::shared_ptr<const Workload> findWorkload(const std::string& name);
// The first registered workload that accepts the request; throws std::invalid_argument listing
// the registered workloads when none does.
std::shared_ptr<const Workload> workloadFor(const WorkloadRequest& request);
// The workload a record was made by: the one it names, else (records written before records
// named their workload) the first that owns it. nullptr when none does.
std::shared_ptr<const Workload> workloadOf(const VariantRecord& record);

// A variant's parameters for people, laid out by the workload that made it (each recorded name
// and value when no registered workload did).
std::vector<ParameterRow> parameterTable(const VariantRecord& record);
// The layout that table follows (Workload::parameterLayout), "" when raw.
std::string parameterLayout(const VariantRecord& record);

}  // namespace weft::explore
