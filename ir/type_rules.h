// Declarations of the type rule and signature of every primitive (implemented in
// ir/type_rules.cpp), used to build the primitive table in ir/primitives.cpp.
#pragma once

#include "ir/primitives.h"

namespace weft::type_rules {

#define WEFT_PRIM(Id, name, category, layout, infix) Type Id(TypeRuleContext& context);
#include "ir/primitives.def"
#undef WEFT_PRIM

// The dependent type of a primitive in weft notation, e.g.
// "split: (m: nat, [T](m*n)) -> [[T]m]n".
const char* signature(Op op);

}  // namespace weft::type_rules
