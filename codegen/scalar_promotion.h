// Scalar promotion: private arrays that are only ever indexed with constants (after unrolling,
// or because their loops vanished) become separate scalar variables, which compilers keep in
// registers (as LIFT's UnrollValues does). Arrays indexed at run time, or used through a pointer
// (vload), stay arrays. It runs on a kernel's finished statement lines (codegen/kernel_text.cpp):
// a use of an array is its name as a whole C identifier, with a constant index when `[digits]`
// follows it.
#pragma once

#include <string>
#include <vector>

#include "codegen/gen_support.h"

namespace weft::opencl {

// Declares each promotable array of `arrays` as scalars (`float p1_0, p1_1;`) in `lines` and
// renames its uses (`p1[1]` -> `p1_1`).
void promotePrivateArrays(std::vector<std::string>& lines, const std::vector<PrivateArray>& arrays);

}  // namespace weft::opencl
