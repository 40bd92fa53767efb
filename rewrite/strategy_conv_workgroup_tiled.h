// The conv-workgroup-tiled strategy: a convolution (Listing 3) computed in work-group tiles
// with the input tile and the weight tile staged in local memory each step of a reduction over
// channel chunks, and a register tile per work-item (rewrite/rules_workgroup_tiling.cpp's
// conv-workgroup-tiles, which emits the mapWrg/mapLcl nest, the local copies and the unrolled
// register tile itself). The shape of the fast GPU kernels; with staging switched off for both
// operands it is the Mali shape (small register tiles read straight from global memory).
//
// Kernels: one. mapWrg 2/1/0 over output tile rows, tile columns and kernel groups; local size
// TK/RK × TH·TW/RP (mapLcl 1/0 over the register tiles); the copies into local memory loop over
// the work-group; code generation places the barriers. The padding is a view: the input copy
// (or, unstaged, the register tile's loads) reads it through guarded loads.
// Constraints from typecheck: TK | M, RK | TK, TC | C, RP | TH·TW, TH | OH, TW | OW; from the
// device (explore/parameter_space.h): the work-group size, local memory, the register estimate.
#pragma once

#include "rewrite/rule.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// Factors: kernels_per_item RK and pixels_per_item RP (numbers), kernels_per_group TK,
// tile_rows TH, tile_cols TW, channels_per_step TC (numbers or tuning variables when absent),
// stage_input and stage_weights (0 or 1, default 1). Throws std::invalid_argument for other
// factors or values.
Strategy convWorkgroupTiled(const RuleArguments& arguments);

}  // namespace weft::rewrite
