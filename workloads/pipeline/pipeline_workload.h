// The program-file workload ("pipeline"): a definition from a .weft file at given sizes,
// explored as written (its unbound size variables and open local sizes are the tuning
// parameters, explore/explorer.h programTarget) and, for an image pipeline, fused by every
// fusion strategy that applies (workloads/pipeline/pipeline_target.h), each a structure
// recorded with its "fusion" number. Verified against the program as written run on the
// device (or, for a program no fusion applies to, against the interpreter per variant).
//
// Options (WorkloadRequest::options): "fusion": auto (default: every strategy that applies),
// none (as written only) or a comma-separated list of strategy names.
#pragma once

#include <memory>

#include "codegen/compiled_program.h"
#include "explore/workload.h"
#include "ir/expr.h"

namespace weft::explore {

std::shared_ptr<const Workload> pipelineWorkload();

// A variant recorded for `program` at `sizes` rebuilt (the program as written, or the fusion
// structure its "fusion" parameter names) and compiled as the explorer measured it. Throw
// PickError.
Definition variantDefinition(const Definition& program, const ArithBinding& sizes,
                             const VariantRecord& record);
CompiledProgram compileProgramVariant(const Definition& program, const ArithBinding& sizes,
                                      const VariantRecord& record);

}  // namespace weft::explore
