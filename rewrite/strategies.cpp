// The named strategies of strategies.h, built from library rules and strategy.h combinators.
// Steps name the node they are for by a predicate (the binder names the tiling and blocking
// rules give, "holds a reduce", "is a copy nest") rather than by a fixed position.
//
// stencil-tiled-local (a map2D over slide2D, e.g. examples/stencil2d.weft):
//   1. map2d-slide-tiling with theta1/theta2: overlapped strict tiles, the stencil function
//      applied to the windows of each tile (paper 3.4.1);
//   2. map-to-mapwrg dim 1 / dim 0 on the maps over tile rows and tiles;
//   3. to-local on the tile: the work-group copies it to local memory (mapLcl 1/0 copy);
//   4. map-to-maplcl dim 1 / dim 0 on the maps over rows of windows and windows;
//   5. every other map that computes to mapSeq, every reduce to reduceSeq (views stay maps).
//   One kernel; the result is written through the tiles' join/transpose view.
//
// conv-direct (paper Listing 3, examples/conv.weft, to the four kernels of section 4.2):
//   1. pad-for-tiling-2d (ρ) and map2d-crop2d-interchange: ρ extra windows, cropped at the end;
//   2. map2d-slide-tiling (θ for both dimensions): tiles with the convolution inside;
//   3. map-flatten: the windows of a tile as one list;
//   4. map-fission-deep and map-map-blocking (κ, σ): kernel groups × window groups, each
//      work-item a κ × σ block;
//   5. chunked-reduce (ω, coalesce): chunks of ω elements of a window, partial sums, the final
//      sum from the bias;
//   6. map-fission-deep until nothing splits: the partial convolution, the final reduction and
//      the rearrangement become separate nests;
//   7. vectorize-dot (v, when v > 1): the chunk's products as dot products of float vectors;
//   8. mapWrg 2/1/0 over tile rows, tiles, kernel groups; mapLcl 1/0 over window groups, chunks
//      (paper Table 1);
//   9. materialize the padded input and the cropped result, lower the copies to mapGlb 1/0 +
//      mapSeq (the pad and crop kernels);
//  10. reduceSeqUnroll for every reduce when unroll = 1;
//  11. let-hoist until every stage is let-bound: pad, partial convolution, final reduction and
//      crop are four kernels; the final transposes are written through.
// The final-reduction nest is left high-level; code generation's default lowering maps it.
//
// conv-register-blocked (κ, σ and unroll are numbers):
//   1-4. as conv-direct 1-4 (ρ, θ, map-flatten, map-fission-deep, map-map-blocking κ × σ);
//   5. map-map-interchange: per block, windows outside, kernels inside;
//   6. map-reduce-interchange-rows on the map over the κ kernels, map-fission-deep to move its
//      transpose out of the map over the σ windows, map-reduce-interchange-rows on that map:
//      one reduce over the whole window (ω = K·K·C, no chunks, no final reduction) whose
//      accumulator is a [σ][κ] array initialised from the biases;
//   7. mapWrg 2/1/0 over tile rows, tiles, kernel groups; mapLcl 0 over window groups;
//   8. pad and crop kernels as conv-direct 9;
//   9. the maps inside the reduce's initial value and function mapSeqUnroll (constant indices,
//      so the accumulators can become scalars); let-hoist; reduceSeq, or reduceSeqUnroll when
//      unroll = 1 (the whole window: only sensible for small K·K·C).
//   Three kernels: pad, convolution, crop.
//
// conv-register-blocked-vector (κ and σ numbers, R = rows optional):
//   1. map2d-kernel-blocking (κ, σ, R): kernel groups outermost, groups of R output rows,
//      blocks of σ windows of a row (the output written [M][outH][outW] through layouts);
//   2. vectorize-block-accumulators: the block's σ × κ sums as σ float<κ> accumulators
//      initialised with the κ biases, each step one vector of weights times a broadcast input
//      value (the window's [K][K][C] levels kept);
//   3. materialize the padded input and let-hoist it (the pad kernel) — skipped when
//      pad_in_loads = 1: the convolution then reads the unpadded input through the pad view,
//      whose loads code generation guards (no pad kernel, no padded buffer);
//   4. hoist-relayout: the kernel groups' weights [M/κ][K][K][C][κ] copied once (first kernel);
//   5. mapWrg 2/1 over kernel groups and row groups, mapLcl 1/0 over rows and blocks (an
//      explicit local size outW/σ × R);
//   6. the copy nests: mapGlb 1 and 0 over their outer levels, mapSeq below;
//   7. the accumulators' update mapSeqUnroll (each vector a variable), the reduce reduceSeq.
//   With row_unroll = 1, after 2: reduce-swap-inner-levels ([K][K][C] -> [K][C][K]) and
//   reduce-nest-inner-level (a row's K taps an inner reduce, made reduceSeqUnroll in 7).
//   Three kernels: re-layout, pad, convolution (code generation emits the update as fma);
//   two with pad_in_loads = 1. With interleave = 1, step 1 is map2d-kernel-blocking-interleaved:
//   block b of a row holds its windows b, b + outW/σ, …, so the work-items of a row read
//   neighbouring pixels at each step (a GPU's coalesced loads). With channels_first = 1, step 3
//   is materialize-innermost-first: the pad kernel stores the padded input [C][H'][W'], so that
//   those neighbouring pixels are neighbours in memory.
#include "rewrite/strategies.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "ir/builders.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/strategy_conv_winograd.h"
#include "rewrite/strategy_conv_workgroup_tiled.h"
#include "rewrite/strategy_pipeline_chain.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "rewrite/strategy_steps.h"

namespace weft::rewrite {

const Rule& rule(const std::string& name) {
  const Rule* r = findRule(name);
  if (!r) throw std::logic_error("strategy library: no rule named " + name);
  return *r;
}

namespace {

bool containsOp(const Expr& e, Op op) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    if (node.isPrim(op)) found = true;
  });
  return found;
}

Strategy stencilTiledLocal(const RuleArguments& arguments) {
  RuleArguments tiling;
  for (const auto& [name, value] : arguments) {
    if (name != "theta1" && name != "theta2") {
      throw std::invalid_argument("stencil-tiled-local takes theta1 and theta2, not " + name);
    }
    tiling.push_back({name, value});
  }
  return [tiling](const Definition& definition, RewriteContext& context) -> StrategyResult {
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    auto computingMapOver = [](const std::string& name) {
      return [name](const Expr& node) {
        return node.isPrim(Op::Map) && node.funs()[0].isLambda() &&
               node.funs()[0].params()[0].paramName() == name &&
               containsOp(node.funs()[0], Op::Reduce);
      };
    };
    // The stencil function's map over a row of windows (its argument is the row).
    auto windowMap = [](const Expr& node) {
      return node.isPrim(Op::Map) && node.args()[0].isParam() &&
             node.args()[0].paramName() == "windowRow";
    };
    auto tileParam = [](const Expr& node) { return node.isParam() && node.paramName() == "tile"; };
    // Maps that compute (not views such as map(transpose)), which become sequential loops.
    auto computes = [](const Expr& node) {
      return node.isPrim(Op::Map) && !isLayoutFunction(node.funs()[0]);
    };
    Strategy tileStencil = leftChoice(
        topDown(rule("map2d-slide-tiling"), tiling), [](const Definition&, RewriteContext&) {
          return StrategyResult::fail("stencil-tiled-local: no map2D over a slide2D to tile");
        });
    Strategy steps = seq(
        tileStencil,
        seq(topDownWhere(rule("map-to-mapwrg"), computingMapOver("tileRow"), dim(1)),
            seq(topDownWhere(rule("map-to-mapwrg"), computingMapOver("tile"), dim(0)),
                seq(topDownWhere(rule("to-local"), tileParam),
                    seq(topDownWhere(rule("map-to-maplcl"), computingMapOver("windowRow"), dim(1)),
                        seq(topDownWhere(rule("map-to-maplcl"), windowMap, dim(0)),
                            seq(repeat(topDownWhere(rule("map-to-mapseq"), computes), 1000),
                                repeat(topDown(rule("reduce-to-reduceseq")), 1000))))))));
    return steps(definition, context);
  };
}

// ---- conv-direct ----

// A map whose function's parameter is named `name` (the binders the blocking rules create:
// tileRow, tile, kernelGroup, windowGroup, chunk) that computes (holds a reduce): the
// rearranging maps of the result reuse some of those names.
NodePredicate mapOver(const std::string& name) {
  return [name](const Expr& node) {
    if (!node.isPrim(Op::Map) || !node.funs()[0].isLambda()) return false;
    const std::string& p = node.funs()[0].params()[0].paramName();
    return p == name && containsOp(node.funs()[0], Op::Reduce);
  };
}

// A high-level map nest of `depth` levels that copies its input (map(e -> map(.. id ..), x),
// as the materialize rule makes).
NodePredicate copyNest(int depth) {
  return [depth](const Expr& node) { return copyNestDepth(node) == depth; };
}

}  // namespace

std::optional<Arith> factorValue(const RuleArguments& arguments, const std::string& name) {
  for (const auto& [n, value] : arguments) {
    if (n == name) return value;
  }
  return std::nullopt;
}

namespace {

Strategy convDirect(const RuleArguments& arguments) {
  static const std::vector<std::string> known = {"theta", "rho",      "kappa", "sigma",
                                                 "omega", "coalesce", "v",     "unroll"};
  for (const auto& [name, value] : arguments) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument(
          "conv-direct takes theta, rho, kappa, sigma, omega, coalesce, "
          "v and unroll, not " +
          name);
    }
  }
  auto given = [&](const std::string& name) {
    RuleArguments out;
    if (auto value = factorValue(arguments, name)) out.push_back({name, *value});
    return out;
  };
  // v and unroll choose the program's structure (vector types have constant widths), so they
  // must be given as numbers; the explorer enumerates them.
  auto structural = [&](const std::string& name, int64_t absent) -> int64_t {
    std::optional<Arith> value = factorValue(arguments, name);
    if (!value) return absent;
    if (!value->constant()) {
      throw std::invalid_argument("conv-direct: " + name + " must be a number");
    }
    return *value->constant();
  };
  const int64_t vectorWidth = structural("v", 1);
  const int64_t unroll = structural("unroll", 0);
  RuleArguments kappaSigma = given("kappa");
  for (auto& a : given("sigma")) kappaSigma.push_back(a);
  RuleArguments omegaCoalesce = given("omega");
  for (auto& a : given("coalesce")) omegaCoalesce.push_back(a);
  std::optional<Arith> theta = factorValue(arguments, "theta");

  return [=](const Definition& definition, RewriteContext& context) -> StrategyResult {
    // One tile size θ for both dimensions (paper Table 2): given, or the rule's fresh theta for
    // the height (range [K, padded height]) also used for the width.
    RuleArguments tiling;
    if (theta) tiling = {{"theta1", *theta}, {"theta2", *theta}};
    Strategy squareTiles = [](const Definition& d, RewriteContext& c) -> StrategyResult {
      const std::vector<Arith>& created = c.tuningVariables();
      if (created.size() < 2) return StrategyResult::fail("conv-direct: no tile sizes created");
      const Arith& height = created[created.size() - 2];
      const Arith& width = created[created.size() - 1];
      Definition square = d;
      square.function = substituteArith(d.function, {{width.varName(), height}});
      return StrategyResult::ok(std::move(square));
    };
    auto computing = [](const Expr& node) { return containsOp(node, Op::Reduce); };
    // The map over a tile's windows (the deepest map that computes, over a layout).
    auto windowsOfTile = [](const Expr& node) {
      return node.isPrim(Op::Map) && containsOp(node.funs()[0], Op::Reduce) &&
             !containsOp(node.args()[0], Op::Reduce) && node.args()[0].isPrim(Op::Map);
    };
    std::vector<Strategy> steps = {
        // 4.2.1 optimisation padding ρ, so that tiles cover the padded input exactly.
        topDown(rule("pad-for-tiling-2d"), given("rho")),
        topDown(rule("map2d-crop2d-interchange")),
        // 3.4.1 overlapped tiles θ × θ with the convolution moved into them.
        theta ? topDown(rule("map2d-slide-tiling"), tiling)
              : seq(topDown(rule("map2d-slide-tiling")), squareTiles),
        // The windows of a tile as one list (so that σ groups windows across rows).
        bottomUpWhere(rule("map-flatten"), windowsOfTile),
        // Per window: the map over kernels, separated from the join of its results.
        bottomUpWhere(rule("map-fission-deep"), computing),
        // 4.2.2 kernel groups κ × window groups σ.
        bottomUp(rule("map-map-blocking"), kappaSigma),
        // 4.2.2-4.2.3 chunks of ω (coalesced or not), partial sums and their final sum.
        topDown(rule("chunked-reduce"), omegaCoalesce),
        // Separate the kernels: partial convolution, final reduction, rearrangement.
        repeat(bottomUp(rule("map-fission-deep")), 64),
    };
    if (vectorWidth > 1) {
      steps.push_back(topDown(rule("vectorize-dot"), {{"v", Arith(vectorWidth)}}));
    }
    // Table 1: work-groups over tiles (dims 2, 1) and kernel groups (dim 0), work-items over
    // window groups (dim 1) and chunks (dim 0).
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    steps.push_back(topDownWhere(rule("map-to-mapwrg"), mapOver("tileRow"), dim(2)));
    steps.push_back(topDownWhere(rule("map-to-mapwrg"), mapOver("tile"), dim(1)));
    steps.push_back(topDownWhere(rule("map-to-mapwrg"), mapOver("kernelGroup"), dim(0)));
    steps.push_back(topDownWhere(rule("map-to-maplcl"), mapOver("windowGroup"), dim(1)));
    steps.push_back(topDownWhere(rule("map-to-maplcl"), mapOver("chunk"), dim(0)));
    // 4.2.1 and 4.2.4: the padded input and the cropped result are copied by kernels of
    // their own (the partial convolution reads the padded copy; the crop cannot be written
    // through).
    steps.push_back(
        topDownWhere(rule("materialize"), [](const Expr& n) { return n.isPrim(Op::Crop); }));
    steps.push_back(topDownWhere(rule("materialize"), [](const Expr& n) {
      // pad2D's expansion: transpose(map(col -> pad(..), transpose(map(row -> pad(..), x))))
      return n.isPrim(Op::Transpose) && n.args()[0].isPrim(Op::Map) &&
             n.args()[0].funs()[0].isLambda() && n.args()[0].funs()[0].body().isPrim(Op::Pad);
    }));
    // The copies run as kernels: mapGlb(1) over rows, mapGlb(0) over pixels, mapSeq over
    // channels (as Listing 4's pad kernel).
    steps.push_back(repeat(topDownWhere(rule("map-to-mapglb"), copyNest(3), dim(1)), 4));
    steps.push_back(repeat(topDownWhere(rule("map-to-mapglb"), copyNest(2), dim(0)), 4));
    steps.push_back(repeat(topDownWhere(rule("map-to-mapseq"), copyNest(1)), 4));
    // Each stage (pad, partial convolution, final reduction) bound by a let: a kernel each.
    steps.push_back(repeat(topDown(rule("let-hoist")), 16));
    if (unroll != 0) {
      steps.push_back(repeat(topDown(rule("reduce-to-reduceseq-unroll")), 64));
    }
    Strategy all = identity();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) all = seq(*it, all);
    return all(definition, context);
  };
}

// ---- conv-register-blocked ----

// A map whose function's parameter is named `name` and whose body is a reduce (optionally
// under a transpose): the per-window and per-kernel maps map-map-blocking creates (w, k).
NodePredicate mapOfReduce(const std::string& name, bool underTranspose) {
  return [name, underTranspose](const Expr& node) {
    if (!node.isPrim(Op::Map) || !node.funs()[0].isLambda()) return false;
    const Expr& f = node.funs()[0];
    if (f.params()[0].paramName() != name) return false;
    const Expr& body = f.body();
    if (underTranspose) return body.isPrim(Op::Transpose) && body.args()[0].isPrim(Op::Reduce);
    return body.isPrim(Op::Reduce);
  };
}

// One map-to-mapseq-unroll inside the initial value or the function of a reduce (the maps
// that write its array accumulator; those of its input are views and stay maps), or failure.
Strategy unrollAccumulatorMaps() {
  return [](const Definition& definition, RewriteContext& context) -> StrategyResult {
    const Rule& unrollRule = rule("map-to-mapseq-unroll");
    for (const Match& m : findMatches(definition, {unrollRule})) {
      // Walk the path: some reduce on it must be left through child 0 (its function) or 1
      // (its initial value).
      bool underAccumulator = false;
      Expr node = definition.function.body();
      for (int index : m.position) {
        if (node.isPrim(Op::Reduce) && (index == 0 || index == 1)) underAccumulator = true;
        node = nodeAt(node, {index});
      }
      if (!underAccumulator) continue;
      if (auto result = applyAt(definition, unrollRule, m.position, {}, context)) {
        return StrategyResult::ok(std::move(*result));
      }
    }
    return StrategyResult::fail("no map of a reduce's accumulator left to unroll");
  };
}

Strategy convRegisterBlocked(const RuleArguments& arguments) {
  static const std::vector<std::string> known = {"theta", "rho", "kappa", "sigma", "unroll"};
  for (const auto& [name, value] : arguments) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument(
          "conv-register-blocked takes theta, rho, kappa, sigma and unroll, not " + name);
    }
  }
  // κ and σ size the private accumulator array and the unrolled loops over it, so they must be
  // numbers, as must unroll (a structural switch).
  auto number = [&](const std::string& name, std::optional<int64_t> absent) -> int64_t {
    std::optional<Arith> value = factorValue(arguments, name);
    if (!value) {
      if (absent) return *absent;
      throw std::invalid_argument("conv-register-blocked: " + name + " must be given");
    }
    if (!value->constant()) {
      throw std::invalid_argument("conv-register-blocked: " + name + " must be a number");
    }
    return *value->constant();
  };
  const int64_t kappa = number("kappa", std::nullopt);
  const int64_t sigma = number("sigma", std::nullopt);
  const int64_t unroll = number("unroll", 0);
  std::optional<Arith> theta = factorValue(arguments, "theta");
  std::optional<Arith> rho = factorValue(arguments, "rho");

  return [=](const Definition& definition, RewriteContext& context) -> StrategyResult {
    RuleArguments tiling;
    if (theta) tiling = {{"theta1", *theta}, {"theta2", *theta}};
    RuleArguments padding;
    if (rho) padding = {{"rho", *rho}};
    Strategy squareTiles = [](const Definition& d, RewriteContext& c) -> StrategyResult {
      const std::vector<Arith>& created = c.tuningVariables();
      if (created.size() < 2) {
        return StrategyResult::fail("conv-register-blocked: no tile sizes created");
      }
      const Arith& height = created[created.size() - 2];
      const Arith& width = created[created.size() - 1];
      Definition square = d;
      square.function = substituteArith(d.function, {{width.varName(), height}});
      return StrategyResult::ok(std::move(square));
    };
    auto computing = [](const Expr& node) { return containsOp(node, Op::Reduce); };
    auto windowsOfTile = [](const Expr& node) {
      return node.isPrim(Op::Map) && containsOp(node.funs()[0], Op::Reduce) &&
             !containsOp(node.args()[0], Op::Reduce) && node.args()[0].isPrim(Op::Map);
    };
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    std::vector<Strategy> steps = {
        // As conv-direct steps 1-4: optimisation padding, tiles, flattened windows, blocks.
        topDown(rule("pad-for-tiling-2d"), padding),
        topDown(rule("map2d-crop2d-interchange")),
        theta ? topDown(rule("map2d-slide-tiling"), tiling)
              : seq(topDown(rule("map2d-slide-tiling")), squareTiles),
        bottomUpWhere(rule("map-flatten"), windowsOfTile),
        bottomUpWhere(rule("map-fission-deep"), computing),
        bottomUp(rule("map-map-blocking"), {{"kappa", Arith(kappa)}, {"sigma", Arith(sigma)}}),
        // One reduce over the whole window per block: the κ kernels' accumulators first
        // (map(k -> reduce) => transpose ∘ reduce over [κ] accumulators), the transpose moved
        // out of the map over the block's σ windows, then the σ windows' ([σ][κ] accumulators).
        // Windows outside, kernels inside (the accumulators [σ][κ]): codegen's kernel
        // arguments are found through the reduce input's outer map (the windows, the padded
        // input), and the weights through the biases that initialise the accumulators.
        topDownWhere(rule("map-map-interchange"),
                     [](const Expr& n) {
                       return n.isPrim(Op::Map) && n.funs()[0].isLambda() &&
                              n.funs()[0].params()[0].paramName() == "k" &&
                              mapOfReduce("w", false)(n.funs()[0].body());
                     }),
        topDownWhere(rule("map-reduce-interchange-rows"), mapOfReduce("k", false)),
        topDownWhere(rule("map-fission-deep"), mapOfReduce("w", true)),
        topDownWhere(rule("map-reduce-interchange-rows"), mapOfReduce("w", false)),
        // Work-groups over tile rows, tiles and kernel groups, work-items over window groups.
        topDownWhere(rule("map-to-mapwrg"), mapOver("tileRow"), dim(2)),
        topDownWhere(rule("map-to-mapwrg"), mapOver("tile"), dim(1)),
        topDownWhere(rule("map-to-mapwrg"), mapOver("kernelGroup"), dim(0)),
        topDownWhere(rule("map-to-maplcl"), mapOver("windowGroup"), dim(0)),
        // The padded input and the cropped result as kernels of their own (as conv-direct).
        topDownWhere(rule("materialize"), [](const Expr& n) { return n.isPrim(Op::Crop); }),
        topDownWhere(rule("materialize"),
                     [](const Expr& n) {
                       return n.isPrim(Op::Transpose) && n.args()[0].isPrim(Op::Map) &&
                              n.args()[0].funs()[0].isLambda() &&
                              n.args()[0].funs()[0].body().isPrim(Op::Pad);
                     }),
        repeat(topDownWhere(rule("map-to-mapglb"), copyNest(3), dim(1)), 4),
        repeat(topDownWhere(rule("map-to-mapglb"), copyNest(2), dim(0)), 4),
        repeat(topDownWhere(rule("map-to-mapseq"), copyNest(1)), 4),
        // The maps over the κ × σ accumulators (their initialisation from the biases and the
        // update of every step) unrolled, so that the accumulators are indexed by constants
        // and become scalars (registers).
        repeat(unrollAccumulatorMaps(), 64),
        repeat(topDown(rule("let-hoist")), 16),
        repeat(topDown(rule(unroll != 0 ? "reduce-to-reduceseq-unroll" : "reduce-to-reduceseq")),
               64),
    };
    Strategy all = identity();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) all = seq(*it, all);
    return all(definition, context);
  };
}

// ---- conv-register-blocked-vector ----

Strategy convRegisterBlockedVector(const RuleArguments& arguments) {
  static const std::vector<std::string> known = {
      "kappa",      "sigma",          "rows",  "pad_in_loads",  "row_unroll",
      "interleave", "channels_first", "split", "partial_blocks"};
  for (const auto& [name, value] : arguments) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument(
          "conv-register-blocked-vector takes kappa, sigma, rows, pad_in_loads, row_unroll, "
          "interleave, channels_first, split and partial_blocks, not " +
          name);
    }
  }
  // κ is the accumulators' vector width and σ the number of unrolled accumulators: numbers.
  auto number = [&](const std::string& name) -> int64_t {
    std::optional<Arith> value = factorValue(arguments, name);
    if (!value)
      throw std::invalid_argument("conv-register-blocked-vector: " + name + " must be given");
    if (!value->constant()) {
      throw std::invalid_argument("conv-register-blocked-vector: " + name + " must be a number");
    }
    return *value->constant();
  };
  const int64_t kappa = number("kappa");
  const int64_t sigma = number("sigma");
  if (!isValidVectorWidth(kappa)) {
    throw std::invalid_argument("conv-register-blocked-vector: kappa must be 2, 3, 4, 8 or 16");
  }
  if (sigma < 1) throw std::invalid_argument("conv-register-blocked-vector: sigma must be >= 1");
  // A 0/1 switch, 0 when not given.
  auto switchValue = [&](const std::string& name) -> int64_t {
    if (!factorValue(arguments, name)) return 0;
    const int64_t value = number(name);
    if (value != 0 && value != 1) {
      throw std::invalid_argument("conv-register-blocked-vector: " + name + " must be 0 or 1");
    }
    return value;
  };
  // pad_in_loads = 1: no pad kernel, the convolution reads the unpadded input through the pad
  // view (guarded loads); 0: the padded input materialized by a kernel of its own.
  const int64_t padInLoads = switchValue("pad_in_loads");
  // row_unroll = 1: the window's loops ordered (window row, channel, tap of the row) with the
  // taps unrolled, so that a row's σ + K - 1 input values are loaded once for its K·σ
  // multiply-adds; 0: (row, tap, channel), one load per multiply-add.
  const int64_t rowUnroll = switchValue("row_unroll");
  // interleave = 1: block b of a row holds the windows b, b + W/σ, …, so that neighbouring
  // work-items read neighbouring pixels at each step (coalesced on a GPU); 0: σ consecutive
  // windows per block (each work-item's loads contiguous, as a CPU's vector units want).
  const int64_t interleave = switchValue("interleave");
  // channels_first = 1: the pad kernel stores the padded input [C][H'][W'] (the convolution
  // reads it through the inverse view), so that neighbouring pixels of a channel are
  // neighbours in memory; needs the pad kernel (pad_in_loads = 0).
  const int64_t channelsFirst = switchValue("channels_first");
  if (channelsFirst != 0 && padInLoads != 0) {
    throw std::invalid_argument(
        "conv-register-blocked-vector: channels_first = 1 needs the pad kernel (pad_in_loads = 0)");
  }
  // split = S > 1: the window's sum split into S parts of the channels (c, c + S, …), each
  // part's block a work-group of its own (more work-items where a layer has few outputs), and
  // the S partial sums added by a final kernel.
  const int64_t split = factorValue(arguments, "split") ? number("split") : 1;
  if (split < 1) throw std::invalid_argument("conv-register-blocked-vector: split must be >= 1");
  // partial_blocks = 1: σ (and rows, when a number) need not divide the output: the windows
  // are padded to whole blocks and the surplus outputs dropped by guarded stores.
  const bool partialBlocks = switchValue("partial_blocks") != 0;
  const std::string blockingRule =
      interleave != 0 ? "map2d-kernel-blocking-interleaved" : "map2d-kernel-blocking";
  RuleArguments blocking = {{"kappa", Arith(kappa)}, {"sigma", Arith(sigma)}};
  std::optional<Arith> rows = factorValue(arguments, "rows");
  if (rows) blocking.push_back({"rows", *rows});
  // A tuning variable's rows still divide the output height.
  const Arith rowsMultiple = rows && rows->constant() ? *rows : Arith(1);

  return [=](const Definition& definition, RewriteContext& context) -> StrategyResult {
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    auto required = [](Strategy s, const std::string& what) {
      return requiredStep(std::move(s), "conv-register-blocked-vector", what);
    };
    std::vector<Strategy> steps = {
        partialBlocks ? padToWholeBlocks(rowsMultiple, Arith(sigma), "conv-register-blocked-vector")
                      : identity(),
        // split: a map over the parts of the partial sums, then their sum.
        split == 1 ? identity()
                   : required(topDown(rule("map2d-split-reduction"), {{"parts", Arith(split)}}),
                              "the window's reduction is not a sum of products"),
        // Kernel groups outermost, groups of R output rows, blocks of σ windows of a row.
        required(topDown(rule(blockingRule), blocking),
                 "no map2D over windows of a map over kernels (Listing 3)"),
        // split: the parts and the kernel groups as one map of (part, kernel group) pairs.
        split == 1 ? identity()
                   : required(topDownWhere(rule("map-flatten-nested"), mapOver("part")),
                              "the parts' kernel groups cannot be flattened"),
        // The block's σ × κ scalar accumulators as σ vectors of width κ.
        required(topDown(rule("vectorize-block-accumulators")),
                 "the block's reduction is not acc + window * weight"),
        // row_unroll: [K][K][C] -> [K][C][K] (the sum re-associated), then the taps of a row
        // as an inner reduce of their own (unrolled below).
        rowUnroll == 0 ? identity()
                       : required(topDown(rule("reduce-swap-inner-levels")),
                                  "the window's reduction has no two nested levels to exchange"),
        rowUnroll == 0 ? identity()
                       : required(topDown(rule("reduce-nest-inner-level")),
                                  "the window's reduction has no inner level to nest"),
        // The padded input as a kernel of its own (as conv-direct), unless it is read through
        // the pad view by the convolution (pad_in_loads = 1).
        padInLoads != 0
            ? identity()
            : topDownWhere(rule(channelsFirst != 0 ? "materialize-innermost-first" : "materialize"),
                           [](const Expr& n) {
                             return n.isPrim(Op::Transpose) && n.args()[0].isPrim(Op::Map) &&
                                    n.args()[0].funs()[0].isLambda() &&
                                    n.args()[0].funs()[0].body().isPrim(Op::Pad);
                           }),
        repeat(topDown(rule("let-hoist")), 4),
        // The kernel groups' weights re-laid out once, [M/κ][K][K][C][κ], by a first kernel.
        required(topDown(rule("hoist-relayout")), "no weight view to re-lay out"),
        // Work-groups over kernel groups and row groups, work-items over rows and blocks.
        topDownWhere(rule("map-to-mapwrg"), computingMapOver("kernelGroup"), dim(2)),
        topDownWhere(rule("map-to-mapwrg"), computingMapOver("rowGroup"), dim(1)),
        topDownWhere(rule("map-to-maplcl"), computingMapOver("row"), dim(1)),
        topDownWhere(rule("map-to-maplcl"), computingMapOver("windowBlock"), dim(0)),
        // The copies (re-layout, padding): mapGlb 1/0 and sequential inner loops; with the
        // channels-first copy, mapGlb 2/1/0 (its stores to neighbouring pixels coalesced).
        lowerCopyNests(channelsFirst != 0 ? 3 : 2),
        // split: the final sums, one work-item per output (kernel, row, pixel).
        split == 1 ? identity()
                   : seq(topDownWhere(rule("map-to-mapglb"), mapOver("kernelSums"), dim(2)),
                         seq(topDownWhere(rule("map-to-mapglb"), mapOver("sumRow"), dim(1)),
                             topDownWhere(rule("map-to-mapglb"), mapOver("sums"), dim(0)))),
        // The update of the σ vector accumulators unrolled, so that each is a variable.
        repeat(unrollComputingAccumulatorMaps(), 16),
        // The reduce over a row's taps (its initial value the enclosing accumulator) unrolled.
        rowUnroll == 0 ? identity()
                       : topDownWhere(rule("reduce-to-reduceseq-unroll"),
                                      [](const Expr& n) {
                                        return n.isPrim(Op::Reduce) && n.args()[0].isParam();
                                      }),
        repeat(topDown(rule("reduce-to-reduceseq")), 16),
    };
    Strategy all = identity();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) all = seq(*it, all);
    return all(definition, context);
  };
}
}  // namespace

// One map-to-mapseq-unroll on a map that computes (not a view) inside the initial value or the
// function of a reduce: the update of the vector accumulators, unrolled so that each becomes a
// variable (the biases' view initialising them stays a view), or failure.
Strategy requiredStep(Strategy step, const std::string& strategy, const std::string& what) {
  return leftChoice(std::move(step), [message = strategy + ": " + what](const Definition&,
                                                                        RewriteContext&) {
    return StrategyResult::fail(message);
  });
}

Strategy unrollComputingAccumulatorMaps() {
  return [](const Definition& definition, RewriteContext& context) -> StrategyResult {
    const Rule& unrollRule = rule("map-to-mapseq-unroll");
    for (const Match& m : findMatches(definition, {unrollRule})) {
      bool underAccumulator = false;
      Expr node = definition.function.body();
      for (int index : m.position) {
        if (node.isPrim(Op::Reduce) && (index == 0 || index == 1)) underAccumulator = true;
        node = nodeAt(node, {index});
      }
      if (!underAccumulator || isLayoutFunction(node.funs()[0])) continue;
      if (auto result = applyAt(definition, unrollRule, m.position, {}, context)) {
        return StrategyResult::ok(std::move(*result));
      }
    }
    return StrategyResult::fail("no computing map of a reduce's accumulator left to unroll");
  };
}

// A high-level copy nest map(e -> map(.. id ..), x) of any depth >= 2 over data x that is not a
// param (the outermost level: inner levels map over their parent's element).
static bool isOuterCopyNest(const Expr& node) {
  if (!node.isPrim(Op::Map) || node.args()[0].isParam()) return false;
  const int depth = copyNestDepth(node);
  return depth >= 2 && depth <= 8;
}

// Every copy nest (the materialized re-layout and padding) as mapGlb over its outer
// `globalLevels` levels (the outermost in the highest dimension: mapGlb 1 and 0 for two) and
// mapSeq below: one rule application per level, outermost first. Three levels put a copy's
// rows in dimension 0, so that neighbouring work-items write neighbouring elements (a GPU's
// coalesced stores).
Strategy lowerCopyNests(int globalLevels) {
  return [globalLevels](const Definition& definition, RewriteContext& context) -> StrategyResult {
    Definition current = definition;
    int lowered = 0;
    while (true) {
      std::optional<Position> outer;
      for (const PositionedNode& entry : positionedNodes(current.function.body())) {
        if (isOuterCopyNest(entry.node)) {
          outer = entry.position;
          break;
        }
      }
      if (!outer) break;
      Position level = *outer;
      int depth = 0;
      while (nodeAt(current.function.body(), level).isPrim(Op::Map)) {
        const Rule& r = rule(depth < globalLevels ? "map-to-mapglb" : "map-to-mapseq");
        RuleArguments arguments;
        if (depth < globalLevels) arguments = {{"dim", Arith(globalLevels - 1 - depth)}};
        std::optional<Definition> next = applyAt(current, r, level, arguments, context);
        if (!next)
          return StrategyResult::fail("lowering a copy nest: " + r.name + " did not apply");
        current = std::move(*next);
        level.push_back(0);  // the map's function
        level.push_back(0);  // its body: the next level
        ++depth;
      }
      ++lowered;
    }
    if (lowered == 0) return StrategyResult::fail("no copy nest to lower");
    return StrategyResult::ok(std::move(current));
  };
}

// A map whose function's parameter is named `name` (the binders map2d-kernel-blocking creates:
// kernelGroup, rowGroup, row, windowBlock) that computes (holds a reduce).
Strategy padToWholeBlocks(const Arith& rowsMultiple, const Arith& columnsMultiple,
                          const std::string& strategy) {
  return seq(requiredStep(topDown(rule("pad-for-blocking-2d"),
                                  {{"rows_multiple", rowsMultiple},
                                   {"columns_multiple", columnsMultiple}}),
                          strategy, "no 2D sliding windows to pad to whole blocks"),
             seq(requiredStep(topDown(rule("map2d-crop2d-interchange")), strategy,
                              "the padded windows are not mapped by a map2D"),
                 requiredStep(topDown(rule("crop2d-kernels-outermost")), strategy,
                              "the cropped output is not laid out kernels first (Listing 3)")));
}

NodePredicate computingMapOver(const std::string& name) {
  return [name](const Expr& node) {
    if (!node.isPrim(Op::Map) || !node.funs()[0].isLambda()) return false;
    return node.funs()[0].params()[0].paramName() == name && containsOp(node.funs()[0], Op::Reduce);
  };
}

Definition convRegisterBlockedVectorDefinition(const Definition& listing3, int64_t kappaValue,
                                               int64_t sigmaValue, const Arith& rowsValue,
                                               bool padInLoads) {
  const auto& params = listing3.function.params();
  const Expr& weights = params[0];
  const Expr& biases = params[1];
  const Expr& input = params[2];
  const Type& weightsType = weights.paramType();
  const Arith M = weightsType.arrayLength();
  const Arith K = weightsType.arrayElement().arrayLength();
  std::optional<Arith> declaredP, declaredS;
  for (const Arith& v : listing3.sizeDeclarations) {
    if (v.varName() == "P") declaredP = v;
    if (v.varName() == "S") declaredS = v;
  }
  const Arith kappa(kappaValue), sigma(sigmaValue), rows = rowsValue;
  (void)M;
  if (!declaredP || !declaredS) {
    throw std::invalid_argument(
        "convRegisterBlockedVectorDefinition: the definition declares no P and S (Listing 3)");
  }
  const Arith P = *declaredP, S = *declaredS;
  auto copy1 = [](Expr row) { return mapSeq(lam("x", [](Expr x) { return id(x); }), row); };
  // [M/κ][K·K][C·κ]: per kernel group, window position (i, j), then channel c and kernel k.
  Expr relayoutView = map(
      lam("kernelGroup",
          [&](Expr g) {
            return join(map(lam("a",
                                [](Expr a) {
                                  return map(lam("b", [](Expr b) { return join(transpose(b)); }),
                                             transpose(a));
                                }),
                            transpose(g)));
          }),
      split(kappa, weights));
  Expr relayout =
      mapGlb(1, lam("g", [&](Expr g) { return mapGlb(0, lam("r", copy1), g); }), relayoutView);
  Expr padView = pad2DConstant(P, P, P, P, 0.0, input);
  Expr body = let(
      lam("relaid",
          [&](Expr relaid) {
            auto convolution = [&](Expr padded) {
              Expr windows = slide2D(K, K, S, S, padded);  // [OH][OW][K][K][C]
              auto block = [&](Expr group, Expr wb) {
                // [K][K][C][σ]: the σ windows' values at each window position.
                Expr byPosition = map(
                    lam("a",
                        [](Expr a) {
                          return map(lam("b", [](Expr b) { return transpose(b); }), transpose(a));
                        }),
                    transpose(wb));
                // [K][K][C] of float<κ>.
                Expr weightVectors =
                    map(lam("r",
                            [&](Expr r) {
                              return map(lam("q", [&](Expr q) { return asVector(kappa, q); }), r);
                            }),
                        split(K, get(0, group)));
                Expr xs = zip(join(join(byPosition)), join(join(weightVectors)));
                Expr init = join(fill(sigma, asVector(kappa, get(1, group))));
                Expr step = lam2("acc", "p", [](Expr acc, Expr p) {
                  return mapSeqUnroll(
                      lam("q", [&](Expr q) { return get(0, q) + get(1, q) * get(1, p); }),
                      zip(acc, get(0, p)));
                });
                return map(lam("v", [](Expr v) { return asScalar(v); }),
                           split(1, join(reduceSeq(init, step, xs))));
              };
              Expr groups = zip(relaid, split(kappa, biases));
              Expr computed = mapWrg(
                  2,
                  lam("group",
                      [&](Expr group) {
                        return join(mapWrg(
                            1,
                            lam("rowGroup",
                                [&](Expr rowGroup) {
                                  return mapLcl(1,
                                                lam("row",
                                                    [&](Expr row) {
                                                      return mapLcl(0,
                                                                    lam("wb",
                                                                        [&](Expr wb) {
                                                                          return block(group, wb);
                                                                        }),
                                                                    split(sigma, row));
                                                    }),
                                                rowGroup);
                                }),
                            split(rows, windows)));
                      }),
                  groups);
              // [M/κ][OH][OW/σ][σ][κ] -> [M][OH][OW].
              return join(map(lam("cg",
                                  [](Expr cg) {
                                    return transpose(map(
                                        lam("r", [](Expr r) { return transpose(join(r)); }), cg));
                                  }),
                              computed));
            };
            // pad_in_loads: the convolution reads the input through the pad view.
            if (padInLoads) return convolution(padView);
            Expr padCopy = mapGlb(
                1, lam("row", [&](Expr row) { return mapGlb(0, lam("px", copy1), row); }), padView);
            return let(lam("padded", convolution), padCopy);
          }),
      relayout);
  Definition byHand = listing3;
  byHand.function = Expr::lambda(params, body);
  return byHand;
}

const std::vector<NamedStrategy>& strategyLibrary() {
  static const std::vector<NamedStrategy> strategies = {
      {"stencil-tiled-local",
       "2D stencil: overlapped slide2D tiles theta1 x theta2 with the stencil computed inside "
       "them (map2d-slide-tiling), tile rows and tiles as work-groups (mapWrg 1/0), each tile "
       "staged in local memory (to-local), its rows of windows and windows as work-items "
       "(mapLcl 1/0), other maps mapSeq, reduces reduceSeq",
       {"theta1", "theta2"},
       stencilTiledLocal},
      {"conv-direct",
       "direct convolution (paper 4.2, Listing 3 to Listing 4): optimisation padding rho, "
       "overlapped tiles theta, kernel groups kappa x window groups sigma, chunks omega of a "
       "window (coalesced when coalesce = 1), float vectors of width v (given; 1 = none), "
       "unrolled reductions when unroll = 1; kernels: partial convolution (mapWrg 2/1/0 over "
       "tile rows, tiles, kernel groups; mapLcl 1/0 over window groups, chunks), final "
       "reduction, rearrangement and crop",
       {"theta", "rho", "kappa", "sigma", "omega", "coalesce", "v", "unroll"},
       convDirect},
      {"conv-register-blocked",
       "direct convolution with register blocking: optimisation "
       "padding rho, overlapped tiles theta, each work-item a block of kappa kernels x sigma "
       "windows (numbers) whose kappa x sigma accumulators are private scalars, one reduce over "
       "the whole window (no chunks, no final-reduction kernel), unrolled when unroll = 1; "
       "kernels: pad, convolution (mapWrg 2/1/0 over tile rows, tiles, kernel groups; mapLcl 0 "
       "over window groups), crop",
       {"theta", "rho", "kappa", "sigma", "unroll"},
       convRegisterBlocked},
      {"conv-register-blocked-vector",
       "direct convolution with vector register blocks (built from "
       "map2d-kernel-blocking, vectorize-block-accumulators and hoist-relayout): each "
       "work-item sigma output pixels of a row x kappa kernels (numbers; kappa a vector width) "
       "in sigma float<kappa> accumulators over the whole window (fma with the input value "
       "broadcast), rows output rows per work-group (a number or a tuning variable); kernels: "
       "weights re-laid out [M/kappa][K][K][C][kappa], pad, convolution (mapWrg 2/1 over kernel "
       "groups and row groups, mapLcl 1/0 over rows and pixel blocks); pad_in_loads = 1 (0 by "
       "default): no pad kernel, the convolution reads the input through guarded loads; "
       "row_unroll = 1 (0 by default): the window's loops ordered row, channel, tap with the "
       "taps unrolled (reduce-swap-inner-levels, reduce-nest-inner-level), each input value "
       "loaded once per row for its K taps; interleave = 1 (0 by default): block b of a row "
       "holds its windows b, b + outW/sigma, ... (map2d-kernel-blocking-interleaved), so that "
       "neighbouring work-items read neighbouring pixels; channels_first = 1 (0 by default; "
       "with pad_in_loads = 0): the pad kernel stores the padded input channels-first "
       "(materialize-innermost-first); split = S > 1 (1 by default): the window's sum split "
       "into S parts of the channels (map2d-split-reduction), parts and kernel groups one "
       "map of work-groups (map-flatten-nested), and a final kernel adding the partial sums; "
       "partial_blocks = 1 (0 by default): sigma (and rows when a number) need not divide the "
       "output, the windows padded to whole blocks (pad-for-blocking-2d, "
       "map2d-crop2d-interchange, crop2d-kernels-outermost) and the surplus outputs dropped by "
       "guarded stores",
       {"kappa", "sigma", "rows", "pad_in_loads", "row_unroll", "interleave", "channels_first",
        "split", "partial_blocks"},
       convRegisterBlockedVector},
      {"conv-winograd",
       "3x3 stride-1 convolution by Winograd's minimal filtering F(m x m, 3 x 3), m = 2 or 4 "
       "(conv-winograd-2x2/4x4): the weights' and the input's transforms, (m+2)^2 products over "
       "the channels blocked like conv-register-blocked-vector's 1x1 case (kappa kernels x sigma "
       "tiles in sigma float<kappa> accumulators, rows tile rows per work-group; kappa, sigma "
       "numbers, rows a number or a tuning variable), each product's weights re-laid out "
       "(hoist-relayout), the output's transform plus the bias; the transforms' constant "
       "matrices unrolled; partial_tiles = 1 (0 by default): m and sigma need not divide the "
       "output, which is padded to whole blocks of tiles and cropped by guarded stores",
       {"m", "kappa", "sigma", "rows", "partial_tiles"},
       convWinograd},
      {"conv-workgroup-tiled",
       "direct convolution in work-group tiles (conv-workgroup-tiles): a work-group computes "
       "kernels_per_group kernels x tile_rows x tile_cols output pixels; each step of a "
       "reduction over channels_per_step input channels, its work-items stage the input tile "
       "(with its halo) and the weight tile in local memory together (barriers placed by code "
       "generation), then each work-item accumulates kernels_per_item x pixels_per_item "
       "outputs (numbers; pixels interleaved across work-items) in private registers kept "
       "across the steps; stage_input = 0 / stage_weights = 0 read that operand from global "
       "memory instead (Mali); one kernel, mapWrg 2/1/0 over tile rows, tile columns and "
       "kernel groups, mapLcl 1/0 over the register tiles",
       {"kernels_per_group", "kernels_per_item", "tile_rows", "tile_cols", "pixels_per_item",
        "channels_per_step", "stage_input", "stage_weights"},
       convWorkgroupTiled},
      pipelineFusedLocalStrategy(),
      pipelineFusedPrivateStrategy(),
      pipelineFusedPrivatePointwiseStrategy(),
      pipelineFusedPrivateChainStrategy(),
      pipelineFusedPrivateTuplesStrategy(),
      pipelineFusedSlidingWindowStrategy(),
      pipelineFusedSlidingWindowTuplesStrategy(),
      pipelineFusedSlidingWindowPointwiseStrategy(),
      pipelineLineBufferedPointwiseStrategy(),
      pipelineLineBufferedStrategy(),
      pipelineFusedInlinedStrategy(),
      pipelineInlinedRowsStrategy(),
      pipelineFusedPrivateChainPairsStrategy(),
      pipelineColumnWalkStrategy(),
  };
  return strategies;
}

const NamedStrategy* findStrategy(const std::string& name) {
  for (const NamedStrategy& s : strategyLibrary()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace weft::rewrite
