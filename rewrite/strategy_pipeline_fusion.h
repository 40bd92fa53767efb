// The pipeline-fused-local and pipeline-fused-private strategies. pipeline-fused-local:
// a pipeline of two 2D stencil stages, written unfused as in examples/pipelines/blur.weft (the
// producer let-bound, each stage a map2D over slide2D windows of its clamp-padded input),
// becomes ONE kernel computed by overlapped tiling (Forma's Algorithm 1): every work-group computes
// a tile of the producer, halo included, into local memory, waits at a barrier, and computes the
// consumer's tile from it.
//
// Steps (rules of rewrite/rules_stencil_fusion.cpp and the library):
//   1. let-inline until no let is left (a stage used once is substituted into its consumer);
//   2. pad2d-map2d-interchange: the consumer's clamp pad moved below the producer's map2D, at
//      the first consumer (top-down) that step 3 then fuses, and only there (moved below a stage
//      left apart, a pad makes it compute a padded image, whose size has no good work-group
//      size: Harris's Iyy);
//   3. overlapped-tiling-fusion with theta1 x theta2 (the producer's tile, halo included; tuning
//      variables when not given): tiles of the producer's input, the producer and the consumer
//      inside each tile;
//   4. map-to-mapwrg dim 1 / dim 0 on the maps over tile rows and tiles;
//   5. compute-to-local on the producer's map over the tile, map-to-maplcl dim 1 / dim 0 on its
//      rows and elements (the work-group computes the tile cooperatively into local memory);
//   6. map-to-maplcl dim 1 / dim 0 on the consumer's rows of windows and windows;
//   7. every other computing map of the fused kernel mapSeq, every reduce reduceSeq (views
//      stay maps). Steps 6' and 7 touch only the work-items' functions (nodes inside a
//      mapGlb/mapWrg/mapLcl's function): stages the fusion leaves apart (Harris's seven other
//      stages) keep plain maps and get the default lowering, one kernel each.
//
// The pipeline-fused-private strategy (the shape that is fast on CPUs, bench/pipelines.cpp):
// steps 1 to 3 as above, then
//   4'. map-to-mapglb dim 1 / dim 0 on the maps over tile rows and tiles (a work-item a tile);
//   5'. compute-to-private on the producer's map over the tile: the theta1 x theta2 producer
//       tile with its halo is a private array of the work-item (no local memory, no barrier);
//   6'. map-to-mapseq-unroll on every computing map left in the kernel (the work-item's loops
//       over the tile's rows and columns and a window's taps all have constant trip counts:
//       unrolled, the private tile stays in registers and the OpenCL compiler vectorises along
//       a row);
//   7.  every reduce reduceSeq.
// The local size is left open (explore makes it a launch parameter, local_k0_d<d>). Measured
// on PoCL (bench/pipelines.cpp) the best tiles are a few rows by 16-32 columns with 4-16
// work-items per work-group, as fast as hand-written float16 code with the same tile.
// Constraints from typecheck: slideStrict's exact coverage, (H + t - θ1) % (θ1 - (s1 - 1)) = 0
// and the same for the width (for blur: θ1 - 2 divides H, θ2 divides W).
//
// The pipeline-fused-private-pointwise strategy (unsharp mask: two stencil stages, then
// pointwise stages over the first stage's input and the second's output, optionally over C
// image planes): 1. let-inline; 2. zip-map-fusion (sharpen merged into mask: blury then used
// once); 3. let-inline; 4. map-fusion of the maps over the planes outside every function; 5.
// zip-map-fusion (zip(input, map(s, input)) becomes one map over the planes); 6.
// pad2d-map2d-interchange; slide2d-map2d-fusion, map2d-fusion (the producer inlined into the
// consumer's window function), zip-centre-tap (the pointwise stages fused into the consumer,
// the input pixel read as the centre tap of its window), overlapped-tiling-fusion-with-input
// (theta1 x theta2 tiles); then mapGlb 2/1/0 on planes, tile rows, tiles, compute-to-private
// on the producer's tile, every computing map unrolled (views of zipped windows stay maps).
// Constraints: theta1 - 4 divides H, theta2 divides W for unsharp mask.
//
// The pipeline-fused-sliding-window strategy (line buffering, LIFT's MapSeqSlide): steps 1 to
// 4' of pipeline-fused-private, then sliding-window (rules_sliding_window.cpp) inside the
// work-item: the consumer's map over the windows of the producer's rows becomes mapSeqSlide,
// a walk down the tile that computes each producer row once and keeps only the rows one
// consumer window spans (3 x theta2 values for blur) in private memory, not the theta1 x
// theta2 tile; then every computing map left in the kernel unrolled (a row, a window's taps)
// and the rest sequential. Tall tiles (theta1 large) cost little recomputation at the tile's
// edges and no more registers. Same constraints as pipeline-fused-private.
#pragma once

#include "rewrite/rule.h"
#include "rewrite/strategies.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// The strategy for the given factors (theta1, theta2; absent ones become tuning variables).
Strategy pipelineFusedLocal(const RuleArguments& arguments);

// Its entry for the strategy library (name pipeline-fused-local, factors theta1 and theta2).
NamedStrategy pipelineFusedLocalStrategy();

// The pipeline-fused-private strategy for the given factors (theta1, theta2 as above).
Strategy pipelineFusedPrivate(const RuleArguments& arguments);

// Its entry for the strategy library (name pipeline-fused-private, factors theta1, theta2).
NamedStrategy pipelineFusedPrivateStrategy();

// The pipeline-fused-private-pointwise strategy for the given factors (theta1, theta2 as above).
Strategy pipelineFusedPrivatePointwise(const RuleArguments& arguments);

// Its entry for the strategy library (name pipeline-fused-private-pointwise).
NamedStrategy pipelineFusedPrivatePointwiseStrategy();

// The pipeline-fused-private-tuples strategy (Harris: nine stages, one kernel): 1. let-inline;
// 2. zip-stencil-fusion (the response's zip of the three box sums: one stencil over the windows
// of zip2D(Ixx, Ixy, Iyy)); 3. let-inline-recompute, let-inline (Ix and Iy copied into each
// reader); 4. boxed-stage-fusion (Ixx, Iyy merged into their Sobel stencil); 5.
// horizontal-stencil-fusion (Ixy: the two Sobel stencils over the same windows as one); 6.
// shared-window-fusion (the three stencils over the input's windows as one giving (Ixx, Ixy,
// Iyy) per pixel); then pipeline-fused-private's steps 2 to 7 (the consumer's pad moved below the
// producer, overlapped tiling, mapGlb 1/0, compute-to-private on the tuple tile, every loop
// unrolled). Fails (naming the step) on a program without that shape.
Strategy pipelineFusedPrivateTuples(const RuleArguments& arguments);

// pipeline-fused-sliding-window (see the top of this file).
Strategy pipelineFusedSlidingWindow(const RuleArguments& arguments);
NamedStrategy pipelineFusedSlidingWindowStrategy();

// pipeline-fused-sliding-window-tuples: steps 1 to 6 of pipeline-fused-private-tuples (the
// producer one stencil giving a tuple per pixel, one consumer stencil over its windows), then
// overlapped tiling and a work-item per tile as pipeline-fused-sliding-window, the consumer's
// map over the windows of the tuple rows made a walk down the tile (sliding-window), the loops
// over a row and a window unrolled. Fails (naming the step) where either part does not apply.
Strategy pipelineFusedSlidingWindowTuples(const RuleArguments& arguments);
NamedStrategy pipelineFusedSlidingWindowTuplesStrategy();

// pipeline-fused-sliding-window-pointwise: unsharp mask walked down its tiles. Steps 1 to 5 of
// pipeline-fused-private-pointwise (the pointwise stages merged, the planes' maps fused), then
// centre-tap-in-producer (the first stencil gives (value, input pixel) per pixel, so the
// pointwise stages become part of the second stencil's window function), overlapped tiling as
// pipeline-fused-private, mapGlb 2 on the planes, and pipeline-fused-sliding-window's walk
// down the tile (5 rows of pairs in private memory for unsharp mask's 5x1 window). Same
// constraints as pipeline-fused-private-pointwise.
Strategy pipelineFusedSlidingWindowPointwise(const RuleArguments& arguments);
NamedStrategy pipelineFusedSlidingWindowPointwiseStrategy();

// Its entry for the strategy library (name pipeline-fused-private-tuples, factors theta1, theta2).
NamedStrategy pipelineFusedPrivateTuplesStrategy();

// pipeline-line-buffered-pointwise: unsharp mask computed along whole rows, the way Halide's
// CPU schedules line-buffer it (examples/lowlevel/unsharp_line_buffered.weft is the same
// program written by hand). Steps 1 to 5 of pipeline-fused-private-pointwise and
// centre-tap-in-producer as pipeline-fused-sliding-window-pointwise; pad2d-one-axis and
// window-taps-as-shifted-rows (rules_stencil_rows.cpp): both stencils become maps over zipped
// crops of whole rows; pad-map-interchange moves the consumer's vertical clamp pad below the
// producer's map over rows; slide-tiling cuts the consumer's windows of rows into strips of
// theta rows (halo included; theta - 4 divides H for a 5-row window), map-join-interchange,
// slide-map-fusion and map-fusion give one function per strip, and sliding-window walks down it
// with the last 5 rows of pairs in private memory; zip-map-flatten and vectorize-zip (width v,
// which must divide W) make each row one loop of float<v> lane functions over overlapping
// vector reads; mapGlb 1/0 on planes and strips, everything else sequential. Fails (naming the
// step) on a program without that shape.
Strategy pipelineLineBufferedPointwise(const RuleArguments& arguments);
NamedStrategy pipelineLineBufferedPointwiseStrategy();

// pipeline-line-buffered: the same walk for a stencil over a stencil of one image with nothing
// after them (blur): the steps of pipeline-line-buffered-pointwise from let-inline to
// vectorize-zip (the producer's last rows of values in private memory), then mapGlb 0 on the
// strips, everything else sequential. Fails (naming the step) on a program without that shape.
Strategy pipelineLineBuffered(const RuleArguments& arguments);
NamedStrategy pipelineLineBufferedStrategy();

// pipeline-column-walk: blur walked down its strips one block of v columns at a time (a
// hand-written CPU blur's loop order): pipeline-line-buffered's steps to zip-map-flatten, then
// column-walk (rules_column_walk.cpp) cuts the walk down a strip into a walk per block of v
// columns (v must divide W), each with the producer's last rows of v values in private memory
// (registers), and vectorize-zip makes each block's row one float<v> lane function over
// overlapping vector reads; mapGlb 0 on the strips, the blocks and the walk sequential. Fails
// (naming the step) on a program without that shape.
Strategy pipelineColumnWalk(const RuleArguments& arguments);
NamedStrategy pipelineColumnWalkStrategy();

// pipeline-fused-inlined: two stencil stages as one stencil, the producer recomputed inside
// every consumer window (Halide's compute_inline; for blur 9 reads and no intermediate image,
// against 6 reads and an intermediate for the separable stages). let-inline,
// pad2d-map2d-interchange, slide2d-map2d-fusion and map2d-fusion as the first steps of
// pipeline-fused-private-pointwise; then the fused stencil's rows and pixels as work-items
// (mapGlb 1/0: the OpenCL compiler vectorises neighbouring pixels of a work-group), the
// window's loops unrolled, the rest sequential. Takes no factors: only the local size is
// open. Fails unless the result is one stencil over a view of the input (not Harris, whose
// other stages would stay apart).
Strategy pipelineFusedInlined(const RuleArguments& arguments);
NamedStrategy pipelineFusedInlinedStrategy();

// pipeline-inlined-rows: blur computed along whole rows with the producer inlined, Halide's CPU
// schedule of it (compute_inline, vectorised along x, strips of rows in parallel). The steps of
// pipeline-line-buffered from let-inline to pad-map-interchange (both stencils as maps over
// zipped crops of whole rows, the consumer's clamp pad below the producer); window-rows-inline
// (rules_stencil_rows.cpp): the producer's rows recomputed where the consumer reads them, so no
// row is stored; zip-map-flatten: one element function over the nine zipped crops of three
// input rows; vectorize-zip (width v, which must divide W); split-join cuts the output rows into
// strips of `rows` (a tuning variable when not given), mapGlb 0 on the strips, the rest
// sequential. Each input row is read three times (from cache) and each output written once.
// Fails (naming the step) on a program without that shape.
Strategy pipelineInlinedRows(const RuleArguments& arguments);
NamedStrategy pipelineInlinedRowsStrategy();

}  // namespace weft::rewrite
