// The pipeline-fused-local and pipeline-fused-private strategies of strategy_pipeline_fusion.h:
// rules located by predicates on the binder names overlapped-tiling-fusion and
// compute-to-local give (tileRow, tile, windowRow, localTile), the inner map of a 2D nest by
// its position under the outer one. Both share the fusion steps (1 to 3) and the last one.
// The stencil-fusion rules are taken from the rule library when it lists them, otherwise from
// addStencilFusionRules directly (so the strategy works before they are registered).
#include "rewrite/strategy_pipeline_fusion.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/engine.h"
#include "rewrite/library.h"

namespace weft::rewrite {

namespace {

const Rule& ruleFor(const std::string& name) {
  if (const Rule* r = findRule(name)) return *r;
  static const std::vector<Rule> stencilFusion = [] {
    std::vector<Rule> rules;
    addStencilFusionRules(rules);
    return rules;
  }();
  for (const Rule& r : stencilFusion) {
    if (r.name == name) return r;
  }
  throw std::logic_error("pipeline fusion: no rule named " + name);
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

// Steps 1 to 3 of both strategies: the stages fused by overlapped tiling.
Strategy fuseByOverlappedTiling(const RuleArguments& tiling) {
  return seqAll({
      repeat(topDown(ruleFor("let-inline")), 100),
      repeat(topDown(ruleFor("pad2d-map2d-interchange")), 100),
      orFail(topDown(ruleFor("overlapped-tiling-fusion"), tiling),
             "no stencil stage over the windows of another stencil stage"),
  });
}

// Step 7 of both: what is left sequential.
Strategy restSequential() {
  return seq(repeat(topDownWhere(ruleFor("map-to-mapseq"), computingMap), 1000),
             repeat(topDown(ruleFor("reduce-to-reduceseq")), 1000));
}

}  // namespace

Strategy pipelineFusedLocal(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-local");
  return named(
      "pipeline-fused-local",
      seqAll({
          fuseByOverlappedTiling(tiling),
          orFail(topDownWhere(ruleFor("map-to-mapwrg"), computingMapOver("tileRow"), dim(1)),
                 "map-to-mapwrg on the tile rows"),
          orFail(topDownWhere(ruleFor("map-to-mapwrg"), computingMapOver("tile"), dim(0)),
                 "map-to-mapwrg on the tiles"),
          orFail(topDownWhere(ruleFor("compute-to-local"), computingMapOn("tile")),
                 "compute-to-local on the producer's tile"),
          localNest(computingMapOn("localTile"), "producer nest in local memory"),
          localNest(computingMapOver("windowRow"), "consumer nest over windows"),
          restSequential(),
      }));
}

Strategy pipelineFusedPrivate(const RuleArguments& arguments) {
  const RuleArguments tiling = tilingArguments(arguments, "pipeline-fused-private");
  return named(
      "pipeline-fused-private",
      seqAll({
          fuseByOverlappedTiling(tiling),
          orFail(topDownWhere(ruleFor("map-to-mapglb"), computingMapOver("tileRow"), dim(1)),
                 "map-to-mapglb on the tile rows"),
          orFail(topDownWhere(ruleFor("map-to-mapglb"), computingMapOver("tile"), dim(0)),
                 "map-to-mapglb on the tiles"),
          orFail(topDownWhere(ruleFor("compute-to-private"), computingMapOn("tile")),
                 "compute-to-private on the producer's tile"),
          // Every loop of the work-item has a constant trip count (the tile's rows and columns, a
          // window's taps): unrolled, the compiler keeps the private tile in registers and
          // vectorises along a row (bench/pipelines.cpp: 2-6x faster than loops on PoCL).
          repeat(topDownWhere(ruleFor("map-to-mapseq-unroll"), computingMap), 1000),
          restSequential(),
      }));
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
