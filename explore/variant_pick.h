// Picking one explored variant from a results database: the fastest, the smallest, the knee of
// the time/space Pareto front, or the fastest within a memory budget — what `weft run --pick`
// and `weft emit` use to turn a row of the database back into a program.
//
// pickVariant looks up the target (a layer or program name as recorded, e.g. "conv1_2" or
// "conv_4_8_8_4_3_1_1") and a device fingerprint ("" = the only device that explored it) in a
// snapshot, and chooses among its ok variants with the helpers of explore/pareto.h. Every way
// it can fail throws PickError with a message that says what is there instead: the layers
// present, the devices present, the statuses of the variants when none is ok, the smallest
// variant and its size when nothing fits a budget.
//
// variantDefinition rebuilds a picked layer variant: the recorded parameters hold conv-direct's
// structural choices (v, unroll) and the tuning values under their names without the numeric
// suffix the rewrite gave them (explore/explorer.h parametersJson), so the parametric program
// of that structure is built again (rewrite/strategies.h via explore/conv_direct_space.h) and
// the values substituted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"

#include "explore/results_db.h"
#include "ir/conv_layer.h"
#include "ir/expr.h"

namespace weft::explore {

struct PickError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct PickSpec {
  enum class Kind { Fastest, Smallest, Knee, Budget } kind = Kind::Fastest;
  int64_t budgetBytes = 0;  // Kind::Budget
  std::string describe() const;  // "fastest", "smallest", "knee", "budget=25000000 bytes"
};

// "fastest", "smallest", "knee" or "budget=SIZE" (SIZE as explore/pareto.h parseByteSize
// reads it: 25MB, 1.5GiB, 1000000). Throws PickError saying what was expected.
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

// The instantiated definition (every tuning parameter bound, the layer's sizes still symbolic:
// bind them with convListing3Sizes(layer)) of a variant recorded for `layer`. Throws PickError
// when the record's parameters do not describe a conv-direct variant of the layer (missing v or
// unroll, unknown or missing tuning parameters, values outside the space).
Definition variantDefinition(const ConvLayer& layer, const VariantRecord& record);

// The picked layer variant compiled as the explorer measured it (explore/measurement.h
// compileVariant: every size and parameter specialised). Throws PickError as above, or the
// code generator's error.
CompiledProgram compileLayerVariant(const ConvLayer& layer, const VariantRecord& record);

// The same for a program explored from a file (`weft explore FILE --size ...`) at `sizes`: the
// program as written, or the fusion structure its "fusion" parameter names
// (explore/pipeline_target.h). Throws PickError.
Definition variantDefinition(const Definition& program, const ArithBinding& sizes,
                             const VariantRecord& record);
CompiledProgram compileProgramVariant(const Definition& program, const ArithBinding& sizes,
                                      const VariantRecord& record);

// The layer a recorded program name stands for: a VGG-16 layer ("conv1_2") or
// "conv_C_H_W_M_K_stride_pad" as parseConvLayer names a C,H,W,M,K,stride,pad spec; nullopt
// for other programs.
std::optional<ConvLayer> layerOfProgram(const std::string& program);

// A variant's parameters for people. A conv-direct variant of a layer is laid out like the
// LIFT paper's Table 4 (input tile size θ×θ, kernels per work-group κ, windows per thread σ,
// sequentially processed input elements ω, optimisation padding ρ, vector size v, unrolling,
// coalescing), followed by each generated kernel's local size; any other program gets its raw
// parameter names and values.
struct ParameterRow {
  std::string name;
  std::string value;
};
std::vector<ParameterRow> parameterTable(const VariantRecord& record);

}  // namespace weft::explore
