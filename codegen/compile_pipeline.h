// The passes from a program and one point of its space to OpenCL kernels, in order. This is the
// one place that lists them; every command that turns a point into kernels (run, compile,
// explore, emit, bundle) goes through compileToOpenCL:
//
//   1. instantiate      the point's tuning values substituted into the definition (its size
//                       variables stay, unless the point binds them);
//   2. lowerDefault     maps and reduces that rewrite rules left high-level become mapGlb /
//                       mapSeq / reduceSeq (codegen/lowering.h);
//   3. generateOpenCL   kernels, buffers and launches, with the sizes in
//                       CodegenOptions::specialize fixed and the code generation choice the
//                       point makes (streaming_stores) on (codegen/codegen.h);
//   4. local sizes      kernels that leave their local size open take the point's
//                       `local_k<kernel>_d<dimension>` values (the explorer samples them as
//                       tuning parameters, explore/launch_parameters.h).
#pragma once

#include <string>

#include "codegen/codegen.h"
#include "codegen/compiled_program.h"
#include "ir/arith.h"
#include "ir/expr.h"

namespace weft {

struct CompilePipelineOptions {
  CodegenOptions codegen;
  // false: the definition is already low-level and is generated as it is (`weft compile
  // --no-lower`, and the explorer's analysis of a program lowered by its strategy).
  bool lower = true;
};

// Step 1: `parametric` with every variable `point` binds replaced by its value; size
// declarations the point binds are dropped.
Definition instantiate(const Definition& parametric, const ArithBinding& point);

// Steps 1 to 4 for `definition` at `point` (which may be empty: a program without tuning
// parameters).
CompiledProgram compileToOpenCL(const Definition& definition, const ArithBinding& point,
                                const CompilePipelineOptions& options = {});

// Steps 2 and 3 for a program without tuning parameters.
CompiledProgram compileToOpenCL(const Definition& definition, const CodegenOptions& codegen = {});

// The instantiated program with every entry of `binding` (sizes and tuning values) both
// substituted and specialised: what the explorer's verification and `weft emit` build.
CompiledProgram compileVariant(const Definition& parametric, const ArithBinding& binding);

// Step 3's choices: `streaming_stores` set to 1 in `point` turns on
// CodegenOptions::streamingStores, `aligned_reads` CodegenOptions::alignedVectorReads (absent
// or 0 leaves each as it is).
void applyCodegenParameters(CodegenOptions& codegen, const ArithBinding& point);
// Whether `name` is such a parameter.
bool isCodegenChoiceParameter(const std::string& name);

// "local_k1_d0": the name of the tuning parameter holding kernel 1's (launch order) local size
// in dimension 0.
std::string localSizeParameterName(int kernelIndex, int dimension);

// Step 4: gives every kernel without a local size the one `binding` holds (dimensions it does
// not hold get 1, as only 1 was possible there; kernels with no dimension bound keep the
// implementation's choice). Returns how many kernels it set.
int applyLocalSizeParameters(CompiledProgram& program, const ArithBinding& binding);

}  // namespace weft
