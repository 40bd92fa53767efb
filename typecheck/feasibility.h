// Whether a program's constraints leave its tuning parameters any value at given sizes.
//
// A rewrite introduces tuning parameters with ranges and conditions (split by omega needs omega
// to divide the length; asVector to 4 needs 4 to divide omega), and a sequence of rewrites can
// leave conditions no value meets: a 5-tap window split by omega (1 or 5) and then read as
// vectors of 4. Such a program has an empty parameter space at every device; the rewrite search
// drops it (rewrite/sequence_search.h, empty-space) so that it does not take the place of one
// that can run. The check is an exhaustive walk over the parameters' ranges, each parameter's
// range evaluated at the values before it, conditions tested as soon as their variables are
// bound; it gives up (and answers "maybe") on a walk longer than a bound, a size not given or a
// range it cannot evaluate, so that it never drops a program with a valid point. Only the type
// checker's conditions count: a device's limits are the explorer's (explore/parameter_space.h).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/arith.h"
#include "ir/constraint.h"

namespace weft {

enum class Feasibility {
  Feasible,    // a value of every tuning parameter meets every constraint
  Infeasible,  // the walk covered every value and none does
  Unknown,     // an unbound size, a range that does not evaluate, or the walk's bound reached
};

// The constraints' tuning parameters (and those their ranges mention) walked at `sizes`, at most
// `maxPoints` partial assignments visited.
Feasibility tuningFeasibility(const std::vector<Constraint>& constraints, const ArithBinding& sizes,
                              int64_t maxPoints = 200000);

}  // namespace weft
