// Picking one explored variant from a results database: the fastest, the smallest, the knee of
// the time/space Pareto front, the fastest within a memory budget, or the N-th sample in
// measuring order — what `weft run --pick` and `weft emit` use to turn a row of the database
// back into a program.
//
// pickVariant looks up the target (a program name as recorded, or a named instance that a
// registered workload records under such a name, Workload::programNameOf) and a device
// fingerprint ("" = the only device that explored it) in a snapshot, and chooses among its ok
// variants with the helpers of explore/pareto.h. Every way it can fail throws PickError with a
// message that says what is there instead: the layers present, the devices present, the statuses of
// the variants when none is ok, the smallest variant and its size when nothing fits a budget.
//
// variantDefinition rebuilds a picked variant: the recorded parameters hold its structure's
// choices (which the workload names) and the tuning values under their names without the
// numeric suffix the rewrite gave them (explore/explorer.h parametersJson), so the workload
// builds the parametric program of that structure again and the values are substituted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"

#include "explore/results_db.h"
#include "explore/workload.h"
#include "ir/expr.h"

namespace weft::explore {

struct PickError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PickSpec {
  enum class Kind { Fastest, Smallest, Knee, Budget, Sample } kind = Kind::Fastest;
  int64_t budgetBytes = 0;  // Kind::Budget
  int64_t sample = 0;       // Kind::Sample: 1 = the first variant recorded
  // "fastest", "smallest", "knee", "budget=25000000 bytes", "sample=27"
  std::string describe() const;
};

// "fastest", "smallest", "knee", "budget=SIZE" (SIZE as explore/pareto.h parseByteSize reads
// it: 25MB, 1.5GiB, 1000000) or "sample=N" (the N-th variant of the program on the device in
// the order the exploration recorded them, whatever the weft version; it must be ok). Throws
// PickError saying what was expected.
PickSpec parsePickSpec(const std::string& text);

struct PickedVariant {
  VariantRecord record;
  std::string why;  // "fastest of 37 ok variants", "knee of the Pareto front (5 points) ..."
};

// The variant of `programOrLayerName` on `deviceFingerprint` ("" = the only device in the
// snapshot that has variants of that program) chosen by `spec`. Throws PickError.
PickedVariant pickVariant(const ResultsSnapshot& snapshot, const std::string& programOrLayerName,
                          const std::string& deviceFingerprint, const PickSpec& spec);
// The same, reading the database at `db` read-only (ResultsDbError for a bad file).
PickedVariant pickVariant(const std::filesystem::path& db, const std::string& programOrLayerName,
                          const std::string& deviceFingerprint, const PickSpec& spec);

// A recorded variant rebuilt by `workload` for `request` (the instance it was explored for: a
// layer, a program file with its sizes): the structure its parameters name
// (Workload::structuralParameters, Workload::structureTarget) with the recorded tuning values
// substituted (the sizes still symbolic). Throws PickError when the parameters do not describe
// a variant of that structure (unknown or missing tuning parameters, values outside the space).
Definition variantDefinition(const Workload& workload, const WorkloadRequest& request,
                             const VariantRecord& record);

// The same compiled as the explorer measured it (codegen/compile_pipeline.h compileVariant:
// every size and parameter specialised, the recorded local sizes applied). Throws PickError as
// above, or the code generator's error.
CompiledProgram compileRecordedVariant(const Workload& workload, const WorkloadRequest& request,
                                       const VariantRecord& record);

}  // namespace weft::explore
