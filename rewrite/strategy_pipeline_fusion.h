// The pipeline-fused-local strategy (issue 9): a pipeline of two 2D stencil stages, written
// unfused as in examples/pipelines/blur.weft (the producer let-bound, each stage a map2D over
// slide2D windows of its clamp-padded input), becomes ONE kernel computed by overlapped tiling
// (Forma's Algorithm 1): every work-group computes a tile of the producer, halo included, into
// local memory, waits at a barrier, and computes the consumer's tile from it.
//
// Steps (rules of rewrite/rules_stencil_fusion.cpp and the library):
//   1. let-inline until no let is left (a stage used once is substituted into its consumer);
//   2. pad2d-map2d-interchange: the consumer's clamp pad moved below the producer's map2D;
//   3. overlapped-tiling-fusion with theta1 x theta2 (the producer's tile, halo included; tuning
//      variables when not given): tiles of the producer's input, the producer and the consumer
//      inside each tile;
//   4. map-to-mapwrg dim 1 / dim 0 on the maps over tile rows and tiles;
//   5. compute-to-local on the producer's map over the tile, map-to-maplcl dim 1 / dim 0 on its
//      rows and elements (the work-group computes the tile cooperatively into local memory);
//   6. map-to-maplcl dim 1 / dim 0 on the consumer's rows of windows and windows;
//   7. every other computing map mapSeq, every reduce reduceSeq (views stay maps).
// Constraints from typecheck: slideStrict's exact coverage, (H + t - θ1) % (θ1 - (s1 - 1)) = 0
// and the same for the width (for blur: θ1 - 2 divides H, θ2 divides W).
#pragma once

#include "rewrite/rule.h"
#include "rewrite/strategies.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// The strategy for the given factors (theta1, theta2; absent ones become tuning variables).
Strategy pipelineFusedLocal(const RuleArguments& arguments);

// Its entry for the strategy library (name pipeline-fused-local, factors theta1 and theta2).
NamedStrategy pipelineFusedLocalStrategy();

}  // namespace weft::rewrite
