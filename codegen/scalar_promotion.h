// Scalar promotion: private arrays that are only ever indexed with constants (after unrolling,
// or because their loops vanished) become separate scalar variables, which compilers keep in
// registers (as LIFT's UnrollValues does). Arrays indexed at run time, or used through a pointer
// (vload), stay arrays. Which arrays are indexed at run time is recorded while the kernel's
// elements are emitted (gen_support.h's EmittedArrays); once the kernel is complete
// (codegen/kernel_text.cpp), the others are renamed in its lines: the declaration becomes one
// scalar per element and each use `name[k]` (the name as a whole C identifier) becomes `name_k`.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "codegen/gen_support.h"

namespace weft::opencl {

// Declares each array of `arrays` that is not in `indexedAtRunTime` as scalars
// (`float p1_0, p1_1;`) in `lines` and renames its uses (`p1[1]` -> `p1_1`).
void promotePrivateArrays(std::vector<std::string>& lines, const std::vector<PrivateArray>& arrays,
                          const std::set<std::string>& indexedAtRunTime);

}  // namespace weft::opencl
