// The pipeline-fused-local, -private and -private-pointwise strategies of
// strategy_pipeline_fusion.h: rules located by predicates on the binder names
// overlapped-tiling-fusion and compute-to-local give (tileRow, tile, windowRow, localTile), the
// inner map of a 2D nest by its position under the outer one. All three are one step list
// (fusedKernel): their fusion steps, the tile rows and tiles made parallel, the producer's tile
// placed, then what each does inside the work-items.
// pipeline-fused-private-tuples first makes Harris's producer one stencil giving a tuple per
// pixel (zip-stencil-fusion, let-inline-recompute, boxed-stage-fusion, horizontal-stencil-fusion,
// shared-window-fusion), then takes pipeline-fused-private's steps.
// Every rule, the stencil ones included, is taken from the rule library by name.
#include "rewrite/strategy_pipeline_fusion.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"
#include "typecheck/typecheck.h"

namespace weft::rewrite {

namespace {

const Rule& ruleFor(const std::string& name) {
  if (const Rule* r = findRule(name)) return *r;
  throw std::logic_error("pipeline fusion: no rule named " + name + " in the library");
}

StrategyResult failWith(const std::string& why) { return StrategyResult::fail(why); }

// `steps` whose failure is reported under the strategy's name.
Strategy named(const std::string& name, Strategy steps) {
  return [name, steps](const Definition& d, RewriteContext& c) {
    StrategyResult r = steps(d, c);
    if (!r.success()) r.failure = name + ": " + r.failure;
    return r;
  };
}

// A map whose function is not a pure layout function (it computes something).
bool computingMap(const Expr& node) {
  return node.isPrim(Op::Map) && !isLayoutFunction(node.funs()[0]);
}

// True when `e` only rearranges params (view primitives, isViewPrimitive, and maps of such
// functions, over any number of arrays): a view.
bool isViewExpression(const Expr& e) {
  if (e.isParam()) return true;
  if (!e.isPrim()) return false;
  if (e.isPrim(Op::Map)) {
    if (!e.funs()[0].isLambda() || !isViewExpression(e.funs()[0].body())) return false;
  } else if (!isViewPrimitive(e.primOp())) {
    return false;
  }
  for (const Expr& x : e.args()) {
    if (!isViewExpression(x)) return false;
  }
  return true;
}

// A computing map whose function is not a view of several arrays either (zip(r._0, r._1) over
// zipped windows stays a view: the strategies do not store tuples).
bool computingNonViewMap(const Expr& node) {
  return computingMap(node) &&
         !(node.funs()[0].isLambda() && isViewExpression(node.funs()[0].body()));
}

// A computing map whose function's param is named `name`.
NodePredicate computingMapOver(const std::string& name) {
  return [name](const Expr& node) {
    return computingMap(node) && node.funs()[0].isLambda() &&
           node.funs()[0].params()[0].paramName() == name;
  };
}

// A computing map applied directly to a param named `name`.
NodePredicate computingMapOn(const std::string& name) {
  return [name](const Expr& node) {
    return computingMap(node) && node.args()[0].isParam() && node.args()[0].paramName() == name;
  };
}

// `step` on its own, failing with `why` when it fails.
Strategy orFail(Strategy step, std::string why) {
  return [step, why](const Definition& d, RewriteContext& c) {
    StrategyResult r = step(d, c);
    if (!r.success()) return failWith(why + (r.failure.empty() ? "" : " (" + r.failure + ")"));
    return r;
  };
}

// map-to-maplcl dim 1 on the first map (top-down) where `outer` holds, then dim 0 on the map
// that is its function's body (the 2D nest map(row -> map(f, row), x)).
Strategy localNest(NodePredicate outer, std::string what) {
  return [outer, what](const Definition& definition, RewriteContext& context) {
    const Expr& body = definition.function.body();
    for (const Position& position : allPositions(body)) {
      if (!outer(nodeAt(body, position))) continue;
      const Rule& toLocalMap = ruleFor("map-to-maplcl");
      std::optional<Definition> rows =
          applyAt(definition, toLocalMap, position, {{"dim", Arith(1)}}, context);
      if (!rows) return failWith("map-to-maplcl dim 1 did not apply to " + what);
      Position inner = position;
      inner.push_back(0);  // the mapLcl's function
      inner.push_back(0);  // its body
      std::optional<Definition> elements =
          applyAt(*rows, toLocalMap, inner, {{"dim", Arith(0)}}, context);
      if (!elements) return failWith("map-to-maplcl dim 0 did not apply inside " + what);
      return StrategyResult::ok(*elements);
    }
    return failWith("no " + what);
  };
}

Strategy seqAll(const std::vector<Strategy>& steps) {
  Strategy all = identity();
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) all = seq(*it, all);
  return all;
}

// The theta1/theta2 arguments, checked.
RuleArguments tilingArguments(const RuleArguments& arguments, const std::string& strategy) {
  RuleArguments tiling;
  for (const auto& [name, value] : arguments) {
    if (name != "theta1" && name != "theta2") {
      throw std::invalid_argument(strategy + " takes theta1 and theta2, not " + name);
    }
    tiling.push_back({name, value});
  }
  return tiling;
}

RuleArguments dim(int d) { return RuleArguments{{"dim", Arith(d)}}; }

// Steps 2 and 3: pad2d-map2d-interchange at the first position (top-down) where
// overlapped-tiling-fusion then applies, and that fusion. Only the consumer the fusion tiles
// gets its pad moved: moved below another stage (Harris's Syy over Iyy), the pad would make
// that stage compute a padded image, (W + 2) x (H + 2), whose global size has no good
// work-group size (W + 2 = 4258 = 2 x 2129: work-groups of 2 or of 2129 work-items only).
Strategy interchangeAndFuse(const RuleArguments& tiling) {
  return [tiling](const Definition& definition, RewriteContext& context) {
    const Rule& interchange = ruleFor("pad2d-map2d-interchange");
    const Strategy fuse = topDown(ruleFor("overlapped-tiling-fusion"), tiling);
    const TypedDefinition typed = typecheck(definition);
    std::optional<StrategyResult> firstFailure;
    for (const Position& position : allPositions(definition.function.body())) {
      std::optional<Definition> interchanged =
          applyAt(definition, typed, interchange, position, {}, context);
      if (!interchanged) continue;
      StrategyResult fused = fuse(*interchanged, context);
      if (fused.success()) return fused;
      if (!firstFailure) firstFailure = fused;
    }
    // No pad to move, or no fusion after any move: the fusion as the program stands.
    return firstFailure ? *firstFailure : fuse(definition, context);
  };
}

// Steps 1 to 3 of both strategies: the stages fused by overlapped tiling.
Strategy fuseByOverlappedTiling(const RuleArguments& tiling) {
  return seqAll({
      repeat(topDown(ruleFor("let-inline")), 100),
      orFail(interchangeAndFuse(tiling),
             "no stencil stage over the windows of another stencil stage"),
  });
}

// True when the path from the root to `position` enters the function of a parallel map
// (mapGlb, mapWrg, mapLcl): the node is computed by a work-item of the fused kernel. A
// parallel map's arguments are not inside it (earlier kernels compute them).
bool insideWorkItem(const Expr& body, const Position& position) {
  Expr node = body;
  for (int child : position) {
    const bool parallel =
        node.isPrim(Op::MapGlb) || node.isPrim(Op::MapWrg) || node.isPrim(Op::MapLcl);
    if (parallel && child < static_cast<int>(node.funs().size())) {
      return true;
    }
    node = nodeAt(node, Position{child});
  }
  return false;
}

// `rule` at every node where `where` holds inside the fused kernel's work-items
// (insideWorkItem), top-down, until none is left. Stages the fusion left apart (Harris's
// other seven stages) stay high-level maps for the default lowering, one kernel each:
// unrolling them would unroll whole images (W x H iterations: gigabytes of code generation
// with specialised sizes, and no code at all with symbolic ones).
Strategy insideKernel(const Rule& rule, NodePredicate where) {
  return [&rule, where](const Definition& definition, RewriteContext& context) {
    Definition current = definition;
    for (int round = 0; round < 1000; ++round) {
      const Expr& body = current.function.body();
      bool applied = false;
      for (const Position& position : allPositions(body)) {
        if (!where(nodeAt(body, position)) || !insideWorkItem(body, position)) continue;
        std::optional<Definition> next = applyAt(current, rule, position, {}, context);
        if (!next) continue;
        current = std::move(*next);
        applied = true;
        break;
      }
      if (!applied) break;
    }
    return StrategyResult::ok(current);
  };
}

bool anyNode(const Expr&) { return true; }

// Step 7 of both: what is left inside the fused kernel sequential.
Strategy restSequential() {
  return seq(insideKernel(ruleFor("map-to-mapseq"), computingMap),
             insideKernel(ruleFor("reduce-to-reduceseq"), anyNode));
}

// A computing map whose function holds a map over tile rows (the map over image planes around
// the fused kernel) and is not that map itself.
bool mapAroundTiles(const Expr& node) {
  if (!computingMap(node) || computingMapOver("tileRow")(node)) return false;
  bool holdsTiles = false;
  forEachNode(node.funs()[0], [&](const Expr& e) {
    holdsTiles = holdsTiles || (e.isPrim(Op::Map) && computingMapOver("tileRow")(e));
  });
  return holdsTiles;
}

// map-fusion on maps over arrays of images (rank 3 and more: the planes of unsharp mask) that
// lie outside every function (not a stage's own maps), until none is left: the planes' stages
// become one map over the planes.
Strategy fusePlaneMaps() {
  return [](const Definition& definition, RewriteContext& context) {
    Definition current = definition;
    for (int round = 0; round < 100; ++round) {
      const TypedDefinition typed = typecheck(current);
      const Expr& body = current.function.body();
      bool applied = false;
      for (const Position& position : allPositions(body)) {
        const Expr& node = nodeAt(body, position);
        if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Map)) continue;
        // Only maps outside every function: those over the planes, not the stages' own maps.
        bool insideFunction = false;
        for (size_t length = 0; length < position.size() && !insideFunction; ++length) {
          const Position prefix(position.begin(), position.begin() + static_cast<long>(length));
          insideFunction = nodeAt(body, prefix).isLambda();
        }
        if (insideFunction) continue;
        const Type& type = typed.typeOf(node);
        if (!type.isArray() || !type.arrayElement().isArray() ||
            !type.arrayElement().arrayElement().isArray()) {
          continue;
        }
        std::optional<Definition> fused =
            applyAt(current, ruleFor("map-fusion"), position, {}, context);
        if (!fused) continue;
        current = *fused;
        applied = true;
        break;
      }
      if (!applied) break;
    }
    return StrategyResult::ok(current);
  };
}

// Steps 1 to 5 of pipeline-fused-private-pointwise (strategy_pipeline_fusion.h): the
// pointwise stages merged into one over the input and the second stencil stage, the planes'
// maps into one.
Strategy mergePointwiseStages() {
  return seqAll({
      repeat(topDown(ruleFor("let-inline")), 100),
      repeat(topDown(ruleFor("zip-map-fusion")), 100),
      repeat(topDown(ruleFor("let-inline")), 100),
      fusePlaneMaps(),
      repeat(topDown(ruleFor("zip-map-fusion")), 100),
  });
}

// Steps 1 to 6 of pipeline-fused-private-pointwise (strategy_pipeline_fusion.h).
Strategy fusePointwiseConsumer(const RuleArguments& tiling) {
  return seqAll({
      mergePointwiseStages(),
      repeat(topDown(ruleFor("pad2d-map2d-interchange")), 100),
      orFail(topDown(ruleFor("slide2d-map2d-fusion")),
             "no stencil stage over the windows of another stencil stage"),
      orFail(topDown(ruleFor("map2d-fusion")), "map2d-fusion of the consumer and producer"),
      orFail(topDown(ruleFor("zip-centre-tap")),
             "no pointwise stage over the input zipped with the stencil stages"),
      orFail(topDown(ruleFor("overlapped-tiling-fusion-with-input"), tiling),
             "overlapped-tiling-fusion-with-input"),
  });
}

// The step list every fusion strategy shares: `fusion` (the stages fused into tiles), then the
// maps over tile rows and over tiles become `tileMap`'s parallel maps (map-to-mapwrg or
// map-to-mapglb, dims 1 and 0), the producer's map over a tile is placed by `placeProducer`
// (compute-to-local or compute-to-private; "": not placed, as with a sliding window), then
// `rest`; a failure is reported under `name`.
Strategy fusedKernel(const std::string& name, const std::vector<Strategy>& fusion,
                     const std::string& tileMap, const std::string& placeProducer,
                     const std::vector<Strategy>& rest) {
  std::vector<Strategy> steps = fusion;
  steps.push_back(orFail(topDownWhere(ruleFor(tileMap), computingMapOver("tileRow"), dim(1)),
                         tileMap + " on the tile rows"));
  steps.push_back(orFail(topDownWhere(ruleFor(tileMap), computingMapOver("tile"), dim(0)),
                         tileMap + " on the tiles"));
  if (!placeProducer.empty()) {
    steps.push_back(orFail(topDownWhere(ruleFor(placeProducer), computingMapOn("tile")),
                           placeProducer + " on the producer's tile"));
  }
  steps.insert(steps.end(), rest.begin(), rest.end());
  return named(name, seqAll(steps));
}

// Steps 1 to 6 of pipeline-fused-private-tuples (strategy_pipeline_fusion.h): the stages that
// read the input's windows become one producer stencil giving a tuple per pixel, the stages that
// read the producer one consumer stencil over its windows.
Strategy producerAsOneTupleStencil() {
  return seqAll({
      repeat(topDown(ruleFor("let-inline")), 100),
      orFail(topDown(ruleFor("zip-stencil-fusion")),
             "no pointwise stage over zipped stencils of one window shape"),
      repeat(topDown(ruleFor("let-inline-recompute")), 100),
      repeat(topDown(ruleFor("let-inline")), 100),
      repeat(topDown(ruleFor("boxed-stage-fusion")), 100),
      repeat(topDown(ruleFor("horizontal-stencil-fusion")), 100),
      orFail(topDown(ruleFor("shared-window-fusion")),
             "the zipped stages are not stencils over one array of windows"),
  });
}

}  // namespace

Strategy pipelineFusedPrivateTuples(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-private-tuples");
  return fusedKernel("pipeline-fused-private-tuples",
                     {producerAsOneTupleStencil(), fuseByOverlappedTiling(tiling)}, "map-to-mapglb",
                     "compute-to-private",
                     {
                         insideKernel(ruleFor("map-to-mapseq-unroll"), computingMap),
                         restSequential(),
                     });
}

NamedStrategy pipelineFusedPrivateTuplesStrategy() {
  return NamedStrategy{
      "pipeline-fused-private-tuples",
      "stencils over the windows of several stages, whose stages in turn are stencils over one "
      "input's windows (Harris), fused into one kernel: lets inlined, the consumers' zip as one "
      "stencil over the windows of the zipped stages (zip-stencil-fusion), stages read twice "
      "recomputed (let-inline-recompute), pointwise stages merged into the stencils below them "
      "(boxed-stage-fusion, horizontal-stencil-fusion), the zipped producers as one stencil "
      "giving a tuple per pixel (shared-window-fusion); then pipeline-fused-private's steps: "
      "tiles theta1 x theta2, the tuple tile with its halo in private memory (one array per "
      "component), every loop unrolled; one kernel",
      {"theta1", "theta2"},
      pipelineFusedPrivateTuples};
}

Strategy pipelineFusedLocal(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-local");
  return fusedKernel("pipeline-fused-local", {fuseByOverlappedTiling(tiling)}, "map-to-mapwrg",
                     "compute-to-local",
                     {
                         localNest(computingMapOn("localTile"), "producer nest in local memory"),
                         localNest(computingMapOver("windowRow"), "consumer nest over windows"),
                         restSequential(),
                     });
}

Strategy pipelineFusedPrivate(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-private");
  return fusedKernel(
      "pipeline-fused-private", {fuseByOverlappedTiling(tiling)}, "map-to-mapglb",
      "compute-to-private",
      {
          // Every loop of the work-item has a constant trip count (the tile's rows and columns,
          // a window's taps): unrolled, the compiler keeps the private tile in registers and
          // vectorises along a row (bench/pipelines.cpp compares it with the loops).
          insideKernel(ruleFor("map-to-mapseq-unroll"), computingMap),
          restSequential(),
      });
}

Strategy pipelineFusedPrivatePointwise(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-private-pointwise");
  return fusedKernel(
      "pipeline-fused-private-pointwise",
      {
          fusePointwiseConsumer(tiling),
          tryS(topDownWhere(ruleFor("map-to-mapglb"), mapAroundTiles, dim(2))),
      },
      "map-to-mapglb", "compute-to-private",
      {
          repeat(topDownWhere(ruleFor("map-to-mapseq-unroll"), computingNonViewMap), 1000),
          repeat(topDown(ruleFor("reduce-to-reduceseq")), 1000),
      });
}

NamedStrategy pipelineFusedPrivatePointwiseStrategy() {
  return NamedStrategy{
      "pipeline-fused-private-pointwise",
      "two 2D stencil stages and pointwise stages that read the first stage's input pixel "
      "(unsharp mask), optionally over image planes, fused into one kernel: lets inlined, "
      "pointwise stages merged (zip-map-fusion), the planes' maps fused into one, the consumer's "
      "pad moved below the producer, the pointwise stages fused into the consumer stencil with "
      "the input pixel read as the centre tap of its window (slide2d-map2d-fusion, map2d-fusion, "
      "zip-centre-tap), tiles theta1 x theta2 (overlapped-tiling-fusion-with-input); planes, tile "
      "rows and tiles as global work-items (mapGlb 2/1/0), the producer's tile with its halo in "
      "private memory, every loop unrolled; one kernel",
      {"theta1", "theta2"},
      pipelineFusedPrivatePointwise};
}

NamedStrategy pipelineFusedLocalStrategy() {
  return NamedStrategy{
      "pipeline-fused-local",
      "two 2D stencil stages fused by overlapped tiling (Forma Algorithm 1): lets inlined, the "
      "consumer's clamp pad moved below the producer (pad2d-map2d-interchange), tiles theta1 x "
      "theta2 of the producer's input with its halo (overlapped-tiling-fusion), tile rows and "
      "tiles as work-groups (mapWrg 1/0), the producer computed per tile into local memory "
      "(compute-to-local, mapLcl 1/0), the consumer's windows as work-items (mapLcl 1/0); one "
      "kernel",
      {"theta1", "theta2"},
      pipelineFusedLocal};
}

namespace {

// The consumer's map over the windows of the producer's rows becomes a walk down the tile
// (sliding-window), applied inside the work-items only; it must apply at least once.
Strategy walkDownTile() {
  return [](const Definition& definition, RewriteContext& context) {
    StrategyResult r = insideKernel(ruleFor("sliding-window"), anyNode)(definition, context);
    if (!r.success()) return r;
    bool sliding = false;
    forEachNode(r.definition->function.body(),
                [&](const Expr& e) { sliding = sliding || e.isPrim(Op::MapSeqSlide); });
    if (!sliding) {
      return failWith("sliding-window: no map over the windows of the producer's rows");
    }
    return r;
  };
}

// `fusion`, a work-item per tile (mapGlb 1/0), the walk down the tile, then the loops over a
// row and a window unrolled and the rest sequential.
Strategy slidingWindowKernel(const std::string& name, const std::vector<Strategy>& fusion) {
  return fusedKernel(name, fusion, "map-to-mapglb", "",
                     {
                         walkDownTile(),
                         insideKernel(ruleFor("map-to-mapseq-unroll"), computingMap),
                         restSequential(),
                     });
}

}  // namespace

Strategy pipelineFusedSlidingWindow(const RuleArguments& arguments) {
  const std::string name = "pipeline-fused-sliding-window";
  return slidingWindowKernel(name, {fuseByOverlappedTiling(tilingArguments(arguments, name))});
}

Strategy pipelineFusedSlidingWindowTuples(const RuleArguments& arguments) {
  const std::string name = "pipeline-fused-sliding-window-tuples";
  return slidingWindowKernel(name, {producerAsOneTupleStencil(),
                                    fuseByOverlappedTiling(tilingArguments(arguments, name))});
}

Strategy pipelineFusedSlidingWindowPointwise(const RuleArguments& arguments) {
  const std::string name = "pipeline-fused-sliding-window-pointwise";
  return slidingWindowKernel(
      name, {
                mergePointwiseStages(),
                orFail(topDown(ruleFor("centre-tap-in-producer")),
                       "no pointwise stage over the input and a stencil over a stencil of it"),
                fuseByOverlappedTiling(tilingArguments(arguments, name)),
                tryS(topDownWhere(ruleFor("map-to-mapglb"), mapAroundTiles, dim(2))),
            });
}

NamedStrategy pipelineFusedSlidingWindowPointwiseStrategy() {
  return NamedStrategy{
      "pipeline-fused-sliding-window-pointwise",
      "two 2D stencil stages and pointwise stages that read the first stage's input pixel "
      "(unsharp mask), optionally over image planes: the pointwise stages merged and the planes' "
      "maps fused as in pipeline-fused-private-pointwise, then the first stencil carries its "
      "input's pixel (centre-tap-in-producer: a tuple per pixel), so the pointwise stages "
      "become part of the second stencil; tiles theta1 x theta2 by overlapped tiling, planes, "
      "tile rows and tiles as global work-items (mapGlb 2/1/0), and the work-item walks down "
      "its tile as in pipeline-fused-sliding-window (mapSeqSlide: the last rows of (value, "
      "pixel) pairs the window spans in private memory); the loops over a row and a window "
      "unrolled; one kernel",
      {"theta1", "theta2"},
      pipelineFusedSlidingWindowPointwise};
}

namespace {

// A map whose function is `row -> join(row)` (a joined stage's rows).
bool joinsRows(const Expr& node) {
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return false;
  const Expr& body = node.funs()[0].body();
  return body.isPrim(Op::Join) && isParamNode(body.args()[0], node.funs()[0].params()[0]);
}

// A slide or slideStrict of size more than 1 and step 1 over a computing map: the consumer's
// windows of the producer's rows.
bool windowsOfComputedRows(const Expr& node) {
  if (!node.isPrim(Op::Slide) && !node.isPrim(Op::SlideStrict)) return false;
  const std::optional<int64_t> size = node.nats()[0].constant();
  return size && *size > 1 && node.nats()[1].constant() == 1 && computingMap(node.args()[0]);
}

// A lambda whose body is a slide or slideStrict of its param (the strips' windows).
bool slidesItsParam(const Expr& f) {
  if (!isUnaryLambda(f)) return false;
  const Expr& body = f.body();
  return (body.isPrim(Op::Slide) || body.isPrim(Op::SlideStrict)) &&
         isParamNode(body.args()[0], f.params()[0]);
}

// map(f, join(map(strip -> slide(.., strip), ..))): the consumer over the strips' windows.
bool mapOverJoinedStripWindows(const Expr& node) {
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Join)) return false;
  const Expr& strips = node.args()[0].args()[0];
  return strips.isPrim(Op::Map) && slidesItsParam(strips.funs()[0]);
}

// A slideStrict over a computing map whose windows are longer than one (the strips of the
// producer's rows, not a one-row window of a view).
bool stripsOfComputedRows(const Expr& node) {
  if (!node.isPrim(Op::SlideStrict) || !computingMap(node.args()[0])) return false;
  const std::optional<int64_t> size = node.nats()[0].constant();
  return !size || *size > 1;
}

// map(f, map(g, x)) where f or g reads a strip's windows (slidesItsParam, or a map over them):
// the strips' consumer, windows and producer brought into one function per strip.
bool mapOverStripMap(const Expr& node) {
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Map)) return false;
  bool strips = false;
  for (const Expr& f : {node.funs()[0], node.args()[0].funs()[0]}) {
    forEachNode(f, [&](const Expr& e) {
      strips = strips || ((e.isPrim(Op::SlideStrict) || e.isPrim(Op::Slide)) &&
                          e.args()[0].isParam() && e.nats()[0].constant() > 1);
    });
  }
  return strips;
}

// A map over a zip of arrays none of which is already a vector view (vectorize-zip once per
// row map).
bool mapOverScalarZip(const Expr& node) {
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Zip)) return false;
  for (const Expr& x : node.args()[0].args()) {
    if (x.isPrim(Op::AsVector)) return false;
  }
  return true;
}

// A computing map whose function walks a strip (holds a mapSeqSlide).
bool mapOverStrips(const Expr& node) {
  if (!computingMap(node)) return false;
  bool walks = false;
  forEachNode(node.funs()[0], [&](const Expr& e) { walks = walks || e.isPrim(Op::MapSeqSlide); });
  return walks;
}

// The factors of a strategy along whole rows: the strip height, the vector width v, and
// whether rows the width does not divide are padded to whole vectors (pad = 1).
struct RowArguments {
  RuleArguments strip, vector;
  bool padded = false;
};

// A strategy's RowArguments, or std::invalid_argument: the strip height is the strategy's
// factor `stripFactor`, given to its tiling rule as `ruleFactor`; the width is v; pad is 0 or 1.
RowArguments rowArguments(const std::string& name, const RuleArguments& arguments,
                          const std::string& stripFactor = "theta",
                          const std::string& ruleFactor = "theta") {
  RowArguments out;
  for (const auto& [factor, value] : arguments) {
    if (factor == stripFactor) {
      out.strip.push_back({ruleFactor, value});
    } else if (factor == "v") {
      out.vector.push_back({factor, value});
    } else if (factor == "pad" && value.constant() &&
               (*value.constant() == 0 || *value.constant() == 1)) {
      out.padded = *value.constant() == 1;
    } else if (factor == "pad") {
      throw std::invalid_argument(name + ": pad is 0 or 1, not " + value.toString());
    } else {
      throw std::invalid_argument(name + " takes " + stripFactor + ", v and pad, not " + factor);
    }
  }
  if (out.vector.empty()) {
    throw std::invalid_argument(name + " needs the vector width v (2, 4, 8 or 16)");
  }
  return out;
}

// The rule that vectorises a row's map over zipped crops: vectorize-zip, or with padded rows
// vectorize-zip-padded (any row length: the last vector's surplus lanes dropped).
const char* rowVectorRule(bool padded) { return padded ? "vectorize-zip-padded" : "vectorize-zip"; }

// The steps every strategy along whole rows starts with, from two stencils (let-bound) to
// maps over zipped crops of whole rows: each stencil's taps as crops of whole rows, the
// consumer's clamp pad moved below the producer's map over rows.
std::vector<Strategy> stencilsAsRowsSteps() {
  return {
      repeat(topDown(ruleFor("let-inline")), 100),
      repeat(topDown(ruleFor("pad2d-one-axis")), 100),
      orFail(topDown(ruleFor("window-taps-as-shifted-rows")),
             "no stencil whose window function reads single taps"),
      repeat(topDown(ruleFor("window-taps-as-shifted-rows")), 10),
      repeat(topDownWhere(ruleFor("map-fusion"), joinsRows), 10),
      repeat(topDown(ruleFor("join-split-id")), 10),
      orFail(topDown(ruleFor("pad-map-interchange")),
             "the consumer's rows are not a clamp-padded computed array"),
  };
}

// The steps the line-buffered strategies share, from two stencils (let-bound) over whole rows
// to one walk per strip of theta rows in float<v> lanes: stencilsAsRowsSteps, the consumer's
// windows of rows cut into strips, producer and consumer fused per strip, the walk down the
// strip, the rows' maps vectorised.
std::vector<Strategy> lineBufferedSteps(const RowArguments& rows, bool byColumnBlocks = false) {
  const RuleArguments& strip = rows.strip;
  const RuleArguments& vector = rows.vector;
  std::vector<Strategy> steps = stencilsAsRowsSteps();
  std::vector<Strategy> walk = {
      orFail(topDownWhere(ruleFor("slide-tiling"), windowsOfComputedRows, strip),
             "no windows of computed rows to cut into strips"),
      orFail(topDownWhere(ruleFor("map-join-interchange"), mapOverJoinedStripWindows),
             "map-join-interchange on the strips' windows"),
      orFail(topDownWhere(ruleFor("slide-map-fusion"), stripsOfComputedRows),
             "slide-map-fusion on the strips of the producer's rows"),
      repeat(topDownWhere(ruleFor("map-fusion"), mapOverStripMap), 10),
      orFail(topDown(ruleFor("sliding-window")), "sliding-window down a strip"),
      repeat(topDown(ruleFor("zip-map-flatten")), 10),
  };
  // Blocks of columns are v wide, padded rows or not: their maps take vectorize-zip.
  if (byColumnBlocks) {
    const std::string walkRule = rows.padded ? "column-walk-padded" : "column-walk";
    walk.push_back(orFail(topDown(ruleFor(walkRule), vector),
                          walkRule + ": the strip walked by blocks of v columns"));
  }
  const char* vectorRule = rowVectorRule(rows.padded && !byColumnBlocks);
  walk.push_back(orFail(topDownWhere(ruleFor(vectorRule), mapOverScalarZip, vector),
                        std::string(vectorRule) + " on a row"));
  walk.push_back(repeat(topDownWhere(ruleFor(vectorRule), mapOverScalarZip, vector), 10));
  steps.insert(steps.end(), walk.begin(), walk.end());
  return steps;
}

}  // namespace

Strategy pipelineLineBufferedPointwise(const RuleArguments& arguments) {
  const std::string name = "pipeline-line-buffered-pointwise";
  const RowArguments rows = rowArguments(name, arguments);
  std::vector<Strategy> steps = {
      mergePointwiseStages(),
      orFail(topDown(ruleFor("centre-tap-in-producer")),
             "no pointwise stage over the input and a stencil over a stencil of it"),
  };
  for (Strategy& step : lineBufferedSteps(rows)) steps.push_back(std::move(step));
  steps.push_back(orFail(topDownWhere(ruleFor("map-to-mapglb"), computingMap, dim(1)),
                         "map-to-mapglb on the planes"));
  steps.push_back(orFail(topDownWhere(ruleFor("map-to-mapglb"), mapOverStrips, dim(0)),
                         "map-to-mapglb on the strips"));
  steps.push_back(restSequential());
  return named(name, seqAll(steps));
}

Strategy pipelineLineBuffered(const RuleArguments& arguments) {
  const std::string name = "pipeline-line-buffered";
  std::vector<Strategy> steps = lineBufferedSteps(rowArguments(name, arguments));
  steps.push_back(orFail(topDownWhere(ruleFor("map-to-mapglb"), mapOverStrips, dim(0)),
                         "map-to-mapglb on the strips"));
  steps.push_back(restSequential());
  return named(name, seqAll(steps));
}

Strategy pipelineColumnWalk(const RuleArguments& arguments) {
  const std::string name = "pipeline-column-walk";
  std::vector<Strategy> steps = lineBufferedSteps(rowArguments(name, arguments), true);
  steps.push_back(orFail(topDownWhere(ruleFor("map-to-mapglb"), mapOverStrips, dim(0)),
                         "map-to-mapglb on the strips"));
  steps.push_back(restSequential());
  return named(name, seqAll(steps));
}

namespace {

// map-to-mapglb dim 1 on the program's one stencil, then dim 0 on its inner map: the body,
// past layout maps (row -> join(row)), must be a 2D nest of computing maps (rows of windows)
// over a view of the input. Anything else (stages left apart, lets) is refused: the kernel
// would not be one stencil.
Strategy globalNest() {
  return [](const Definition& definition, RewriteContext& context) {
    const Expr& body = definition.function.body();
    Position position;
    Expr node = body;
    while (node.isPrim(Op::Map) && !computingMap(node)) {
      position.push_back(1);  // the map's array
      node = node.args()[0];
    }
    if (!computingMap(node) || !node.funs()[0].isLambda() || !computingMap(node.funs()[0].body()) ||
        !isViewExpression(node.args()[0])) {
      return failWith("the fused program is not one stencil over a view of the input");
    }
    const Rule& toGlobalMap = ruleFor("map-to-mapglb");
    std::optional<Definition> rows = applyAt(definition, toGlobalMap, position, dim(1), context);
    if (!rows) return failWith("map-to-mapglb dim 1 did not apply to the rows");
    Position inner = position;
    inner.push_back(0);  // the mapGlb's function
    inner.push_back(0);  // its body
    std::optional<Definition> pixels = applyAt(*rows, toGlobalMap, inner, dim(0), context);
    if (!pixels) return failWith("map-to-mapglb dim 0 did not apply to a row's pixels");
    return StrategyResult::ok(*pixels);
  };
}

}  // namespace

Strategy pipelineFusedInlined(const RuleArguments& arguments) {
  const std::string name = "pipeline-fused-inlined";
  if (!arguments.empty()) {
    throw std::invalid_argument(name + " takes no factors, not " + arguments.front().first);
  }
  return named(name, seqAll({
                         repeat(topDown(ruleFor("let-inline")), 100),
                         repeat(topDown(ruleFor("pad2d-map2d-interchange")), 100),
                         orFail(topDown(ruleFor("slide2d-map2d-fusion")),
                                "no stencil stage over the windows of another stencil stage"),
                         orFail(topDown(ruleFor("map2d-fusion")), "map2d-fusion of the two stages"),
                         orFail(globalNest(), "the fused stencil's rows and pixels as work-items"),
                         insideKernel(ruleFor("map-to-mapseq-unroll"), computingMap),
                         restSequential(),
                     }));
}

NamedStrategy pipelineFusedInlinedStrategy() {
  return NamedStrategy{
      "pipeline-fused-inlined",
      "two 2D stencil stages as one stencil (Halide's compute_inline): lets inlined, the "
      "consumer's clamp pad moved below the producer (pad2d-map2d-interchange), the producer "
      "recomputed inside each consumer window (slide2d-map2d-fusion, map2d-fusion: no "
      "intermediate image, each producer value computed once per window that reads it); a "
      "work-item per pixel (mapGlb 1/0), the window's loops unrolled; one kernel",
      {},
      pipelineFusedInlined};
}

namespace {

// A map over the windows (size more than 1) of a slide or slideStrict: a stencil's rows.
bool mapOverRowWindows(const Expr& node) {
  if (!computingMap(node)) return false;
  const Expr& windows = node.args()[0];
  if (!windows.isPrim(Op::Slide) && !windows.isPrim(Op::SlideStrict)) return false;
  const std::optional<int64_t> size = windows.nats()[0].constant();
  return size && *size > 1;
}

// A computing map over a split array (the strips split-join made).
bool mapOverStripsOfRows(const Expr& node) {
  return computingMap(node) && node.args()[0].isPrim(Op::Split);
}

}  // namespace

Strategy pipelineInlinedRows(const RuleArguments& arguments) {
  const std::string name = "pipeline-inlined-rows";
  // The strip height is split-join's factor n.
  const RowArguments rows = rowArguments(name, arguments, "rows", "n");
  const char* vectorRule = rowVectorRule(rows.padded);
  std::vector<Strategy> steps = stencilsAsRowsSteps();
  const std::vector<Strategy> rest = {
      orFail(topDownWhere(ruleFor("window-rows-inline"), mapOverRowWindows),
             "window-rows-inline: the consumer does not read whole rows of the producer"),
      repeat(topDown(ruleFor("zip-map-flatten")), 10),
      orFail(topDownWhere(ruleFor(vectorRule), mapOverScalarZip, rows.vector),
             std::string(vectorRule) + " on a row"),
      orFail(topDownWhere(ruleFor("split-join"), mapOverRowWindows, rows.strip),
             "split-join on the output rows"),
      orFail(topDownWhere(ruleFor("map-to-mapglb"), mapOverStripsOfRows, dim(0)),
             "map-to-mapglb on the strips"),
      restSequential(),
  };
  steps.insert(steps.end(), rest.begin(), rest.end());
  return named(name, seqAll(steps));
}

NamedStrategy pipelineInlinedRowsStrategy() {
  return NamedStrategy{
      "pipeline-inlined-rows",
      "a stencil over a stencil of one image (blur) along whole rows with the producer inlined "
      "(Halide's CPU schedule of blur: compute_inline, vectorised along x, strips of rows in "
      "parallel): each stencil's taps as crops of whole rows (pad2d-one-axis, "
      "window-taps-as-shifted-rows), the consumer's clamp pad moved below the producer "
      "(pad-map-interchange), the producer's rows recomputed where the consumer reads them "
      "(window-rows-inline: no intermediate row is stored), one element function over the "
      "zipped crops of the input's rows (zip-map-flatten) in float<v> lanes (vectorize-zip), "
      "the output rows cut into strips of `rows` (split-join), strips as global work-items "
      "(mapGlb 0), the rest sequential; one kernel; "
      "pad = 1: rows the width does not divide, padded to whole vectors (vectorize-zip-padded)",
      {"rows", "v", "pad"},
      pipelineInlinedRows};
}

NamedStrategy pipelineLineBufferedStrategy() {
  return NamedStrategy{
      "pipeline-line-buffered",
      "a stencil over a stencil of one image (blur) line-buffered along whole rows (Halide's CPU "
      "shape): each stencil's taps as crops of whole rows (pad2d-one-axis, "
      "window-taps-as-shifted-rows), the consumer's clamp pad moved below the producer "
      "(pad-map-interchange), its windows of rows cut into strips of theta rows with their halo "
      "(slide-tiling), each strip walked down with the producer's last rows in private memory "
      "(sliding-window), the rows' maps over zipped crops as float<v> lanes (zip-map-flatten, "
      "vectorize-zip); strips as global work-items (mapGlb 0), the rest sequential; one kernel; "
      "pad = 1: rows the width does not divide, padded to whole vectors (vectorize-zip-padded)",
      {"theta", "v", "pad"},
      pipelineLineBuffered};
}

NamedStrategy pipelineColumnWalkStrategy() {
  return NamedStrategy{
      "pipeline-column-walk",
      "pipeline-line-buffered's steps with the walk down each strip of theta rows cut into "
      "blocks of v columns (column-walk): a work-item walks each column block down its strip "
      "in turn with the producer's last rows of v values in registers, then the next block; "
      "the rows' maps over zipped crops as one float<v> lane function each (vectorize-zip); "
      "strips as global work-items (mapGlb 0), the rest sequential; one kernel; "
      "pad = 1: rows the width does not divide, padded to whole blocks (column-walk-padded)",
      {"theta", "v", "pad"},
      pipelineColumnWalk};
}

NamedStrategy pipelineLineBufferedPointwiseStrategy() {
  return NamedStrategy{
      "pipeline-line-buffered-pointwise",
      "unsharp mask line-buffered along whole rows (Halide's CPU shape): the pointwise stages "
      "merged and the planes' maps fused as in pipeline-fused-private-pointwise, the first "
      "stencil carrying its input pixel (centre-tap-in-producer), each stencil's taps as crops "
      "of whole rows (pad2d-one-axis, window-taps-as-shifted-rows), the consumer's clamp pad "
      "moved below the producer (pad-map-interchange), its windows of rows cut into strips of "
      "theta rows with their halo (slide-tiling), each strip walked down with the last 5 rows "
      "of (value, pixel) pairs in private memory (sliding-window), the rows' maps over zipped "
      "crops as float<v> lanes (zip-map-flatten, vectorize-zip); planes and strips as global "
      "work-items (mapGlb 1/0), the rest sequential; one kernel; "
      "pad = 1: rows the width does not divide, padded to whole vectors (vectorize-zip-padded)",
      {"theta", "v", "pad"},
      pipelineLineBufferedPointwise};
}

NamedStrategy pipelineFusedSlidingWindowTuplesStrategy() {
  return NamedStrategy{
      "pipeline-fused-sliding-window-tuples",
      "pipeline-fused-private-tuples' fusion (Harris: the stages over the input's windows as one "
      "stencil giving a tuple per pixel, the stages over those as one consumer stencil, tiles "
      "theta1 x theta2, a work-item per tile), but the work-item walks down its tile as in "
      "pipeline-fused-sliding-window: each row of tuples computed once, the last rows the "
      "consumer's window spans kept in private memory (mapSeqSlide); the loops over a row and a "
      "window unrolled; one kernel",
      {"theta1", "theta2"},
      pipelineFusedSlidingWindowTuples};
}

NamedStrategy pipelineFusedSlidingWindowStrategy() {
  return NamedStrategy{
      "pipeline-fused-sliding-window",
      "two 2D stencil stages fused by overlapped tiling as pipeline-fused-private (tiles theta1 "
      "x theta2, a work-item per tile, mapGlb 1/0), but the work-item walks down its tile: the "
      "consumer's map over the windows of the producer's rows becomes mapSeqSlide "
      "(sliding-window), which computes each producer row once and keeps the last rows the "
      "consumer's window spans in private memory (line buffering) instead of the whole "
      "theta1 x theta2 tile; the loops over a row and a window unrolled; one kernel",
      {"theta1", "theta2"},
      pipelineFusedSlidingWindow};
}

NamedStrategy pipelineFusedPrivateStrategy() {
  return NamedStrategy{
      "pipeline-fused-private",
      "two 2D stencil stages fused by overlapped tiling as pipeline-fused-local, but every "
      "work-item computes one tile on its own: tile rows and tiles as global work-items "
      "(mapGlb 1/0), the producer's tile with its halo (theta1 x theta2) in private memory "
      "(compute-to-private), then the consumer's theta1 - 2 x theta2 outputs, every loop "
      "unrolled (map-to-mapseq-unroll: constant trip counts); no local memory, no barrier; one "
      "kernel",
      {"theta1", "theta2"},
      pipelineFusedPrivate};
}

}  // namespace weft::rewrite
