// Launch planning: which parallel maps one kernel runs, and its global and local sizes.
//
// A kernel's parallel maps (mapGlb, or mapWrg with mapLcl inside) are collected per dimension
// before its statements are generated: the launch size of a dimension is the largest trip count
// of its maps (the number of work-groups times the local size when groups are used), so that a
// map whose trip count equals it needs no loop (codegen/loops.cpp). Where the work-items own
// the levels of an accumulator (a reduction whose step is a mapLcl nest, gen_support.h), the
// local size is that level's length, one work-item per element; the kernel's other mapLcl
// (the cooperative copies into local memory) then loop over it. A kernel's outermost map
// counts with the maps of its function only: its input is computed by earlier kernels.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "ir/arith.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace weft::opencl {

// What one kernel launches: per dimension, the trip counts of its parallel maps.
struct LaunchPlan {
  bool usesGroups = false;
  int dimensions = 1;
  std::array<std::vector<Arith>, 3> glb, wrg, lcl;
  // Per dimension, the lengths of accumulator levels that the work-items own
  // (workItemOwnedDims): one work-item per element, so they set the local size.
  std::array<std::vector<Arith>, 3> owned;
  std::array<Arith, 3> globalSize{Arith(1), Arith(1), Arith(1)};
  std::array<Arith, 3> groups{Arith(1), Arith(1), Arith(1)};
  std::array<Arith, 3> localSize{Arith(1), Arith(1), Arith(1)};
};

// The launch of the kernel that computes `e` (`typeOf` gives each node's type). Fails for a
// kernel that mixes mapGlb with mapWrg/mapLcl, a mapLcl outside every mapWrg, and a dimension
// other than 0, 1 or 2.
LaunchPlan planLaunch(const Expr& e, const std::function<const Type&(const Expr&)>& typeOf);

}  // namespace weft::opencl
