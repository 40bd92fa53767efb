// The pipeline-fused-private-chain strategy: Canny without hysteresis
// (examples/pipelines/canny.weft: Gaussian, Sobel gx and gy, magnitude, direction, non-maximum
// suppression, double threshold; seven stages, seven kernels unfused) fused PARTIALLY by rules.
//
//   kernels A (two of them): Gaussian -> Sobel gx, gy -> magnitude, and Gaussian -> Sobel gx,
//     gy -> direction. Each is a stencil (the Sobel pair fused horizontally into one stencil
//     giving both derivatives) over a stencil (the Gaussian), plus a pointwise stage, computed
//     by overlapped tiling (Forma's Algorithm 1): a work-item per tile, the Gaussian's tile
//     (theta1 x theta2, halo included) in private memory, every loop unrolled. Magnitude and
//     direction are two kernels, not one writing both: the strategy does not store arrays of
//     tuples (code generation can, as a structure of arrays), so the Gaussian and Sobel are
//     computed by both.
//   kernel B: non-maximum suppression -> double threshold, the threshold merged into the
//     suppression's window function (one stencil stage, default lowering). Kernels A store
//     their results in image order (code generation writes a temporary whose tile views
//     transpose through their inverse), so kernel B reads them as row * W + column.
//
// Steps (rules of rules_stencil_chain.cpp, rules_stencil_fusion.cpp and the library):
//   1. let-inline-recompute until no let's value is read twice (blurred into gx and gy, gx and
//      gy into magnitude and direction: copies, each with its own params);
//   2. horizontal-stencil-fusion (at least once): magnitude's and direction's map over
//      zip2D(gx, gy) becomes one stencil over the Sobel windows of blurred;
//   3. pad2d-map2d-interchange: the Sobel's clamp pad moved below the Gaussian;
//   4. overlapped-tiling-fusion (at least once) with theta1 x theta2 (tuning variables when not
//      given; both kernels A then get their own pair);
//   5. let-inline of the suppression into the threshold, boxed-stage-fusion, map-to-mapseq-unroll
//      on the threshold's map over the window's one-element result (so the default lowering
//      gives kernel B W x H work-items, not 1 x W x H, and the interior fast path along x);
//   6. map-to-mapglb dim 1 / dim 0 on the maps over tile rows and tiles, compute-to-private on
//      the Gaussian's map over a tile, map-to-mapseq-unroll on every computing map and
//      reduce-to-reduceseq on every reduce inside those work-items. The lets binding magnitude
//      and direction stay: kernel B reads them from global buffers.
// Constraints from typecheck (slideStrict's exact coverage): (H + 2 - theta1) % (theta1 - 2) = 0
// and (W + 2 - theta2) % (theta2 - 2) = 0 for each kernel A, i.e. theta1 - 2 divides H and
// theta2 - 2 divides W.
#pragma once

#include "rewrite/rule.h"
#include "rewrite/strategies.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// The strategy for the given factors (theta1, theta2; absent ones become tuning variables).
Strategy pipelineFusedPrivateChain(const RuleArguments& arguments);

// Its entry for the strategy library (name pipeline-fused-private-chain).
NamedStrategy pipelineFusedPrivateChainStrategy();

// pipeline-fused-private-chain-pairs: let-tuple-fusion first (Canny's magnitude and direction,
// two pointwise stages over zip2D(gx, gy), as one stage giving (magnitude, direction) per
// pixel, bound to `pairs`), then the chain's steps with every let but `pairs` recomputed per
// reader: kernel A computes the Gaussian's tile, the Sobel pair and both results once, stored
// as a structure of arrays (codegen/tuple_memory.h); kernel B (suppression and threshold)
// reads the two components. Two kernels where the chain has three.
Strategy pipelineFusedPrivateChainPairs(const RuleArguments& arguments);
NamedStrategy pipelineFusedPrivateChainPairsStrategy();

}  // namespace weft::rewrite
