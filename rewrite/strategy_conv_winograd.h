// The conv-winograd strategy: a 3×3 stride-1 convolution (Listing 3) by Winograd's minimal
// filtering F(m×m, 3×3), m = 2 or 4 (rewrite/rules_winograd.cpp), its α² = (m+2)² products
// over the channels computed like the register-blocked vector convolution's 1×1 case.
//
// Steps, each a library rule unless said otherwise:
//   1. K = 3 and S = 1 substituted into Listing 3 (a step of its own: the rules see constant
//      windows, and fail on a layer whose kernel or stride differs);
//   2. with partial_tiles = 1, the windows padded so that the output is whole blocks of σ tiles
//      (m·σ columns) and of R tiles (m·R rows when R is a number, else m), the surplus cropped
//      and dropped by guarded stores (padToWholeBlocks: pad-for-blocking-2d,
//      map2d-crop2d-interchange, crop2d-kernels-outermost);
//   3. conv-winograd-2x2 or conv-winograd-4x4;
//   4. map2d-kernel-blocking on each product's map2D over tiles (κ kernels, σ tiles of a tile
//      row, R tile rows per work-group: a number or a tuning variable), and on the output's
//      transform per tile (κ kernels × a row of m pixels, m rows);
//   5. map-flatten-nested: the products and their kernel groups one map of (ξ, group) pairs;
//   6. vectorize-block-accumulators on both: σ float<κ> accumulators for a product's block, m
//      for an output row (each step a literal of Aᵀ⊗Aᵀ times a vload of κ kernels' products);
//   7. let-hoist, then hoist-relayout until none applies: the weights re-laid out [M][C][9] for
//      their transform, and each product's weights re-laid out [C][κ] per group, so that a
//      group's κ weights at a channel are one vector load;
//   8. lowering: mapWrg 2/1 over (ξ, group) pairs and tile-row groups, mapLcl 1/0 over tile
//      rows and blocks; the re-layout copies as mapGlb 1/0; the output transform's blocks, the
//      transforms' maps over a constant matrix's rows, the accumulators' updates and the sums
//      over a matrix row unrolled (the entries become literals, the zero terms vanish); other
//      reduces reduceSeq. The transforms' maps over tile rows and tiles are left to the default
//      lowering (mapGlb).
// Kernels: three that read only the weights and biases (preparation, which a drop-in runs once:
// the weights re-laid out, their transform U, U re-laid out per kernel group), then per inference
// the input's transform, the products and the output's transform. Constraints from typecheck: m |
// the output's height and width, κ | M, σ | the output's width / m, R | its height / m (of the
// padded output with partial_tiles).
#pragma once

#include "rewrite/rule.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// Factors: m (2 or 4), kappa (2, 3, 4, 8 or 16), sigma (a number), rows (optional: a number,
// else a tuning variable), partial_tiles (optional, 0 or 1). Throws std::invalid_argument for other factors or values.
Strategy convWinograd(const RuleArguments& arguments);

}  // namespace weft::rewrite
