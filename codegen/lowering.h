// The default lowering: turns any high-level definition into a low-level one that code
// generation accepts, without optimising (the unoptimised baseline every example runs as).
//
// Maps at the top of the definition (not inside another map's function) become mapGlb; a map
// directly inside such a map's function (possibly under layout primitives such as join) becomes
// mapGlb of the next lower dimension, up to three dimensions, so that the innermost parallel
// map is dimension 0; every other map becomes mapSeq and every reduce becomes reduceSeq.
// Already low-level primitives are left as they are. A let's value that is a copy nest (maps
// down to id, as hoist-relayout makes) is a kernel of its own, so that the copy is stored; so
// is a body that computes nothing (a view of the inputs, e.g. a transpose), copied in parallel.
#pragma once

#include "ir/expr.h"

namespace weft {

Definition lowerDefault(const Definition& highLevel);

}  // namespace weft
