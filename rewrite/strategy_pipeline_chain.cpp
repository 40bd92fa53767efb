// The pipeline-fused-private-chain strategies of strategy_pipeline_chain.h. Steps are located by
// predicates: lets by how often their value is read (and the let of pairs by the binder name
// let-tuple-fusion gives it, pairs), the tiles' maps by the binder names
// overlapped-tiling-fusion gives them (tileRow, tile), the work-items' code by its position
// under a mapGlb's function. Rules come from the rule library; the stencil-fusion and
// stencil-chain groups are looked up in their own lists when the library does not hold them.
#include "rewrite/strategy_pipeline_chain.h"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/engine.h"
#include "rewrite/library.h"

namespace weft::rewrite {

namespace {

const Rule& chainRule(const std::string& name) {
  if (const Rule* r = findRule(name)) return *r;
  static const std::vector<Rule> groups = [] {
    std::vector<Rule> rules;
    addStencilFusionRules(rules);
    addStencilChainRules(rules);
    return rules;
  }();
  for (const Rule& r : groups) {
    if (r.name == name) return r;
  }
  throw std::logic_error("pipeline-fused-private-chain: no rule named " + name);
}

// `steps` in order.
Strategy inOrder(const std::vector<Strategy>& steps) {
  Strategy all = identity();
  for (auto step = steps.rbegin(); step != steps.rend(); ++step) all = seq(*step, all);
  return all;
}

// `step`, its failure explained by `what`.
Strategy required(Strategy step, std::string what) {
  return [step, what](const Definition& d, RewriteContext& c) {
    StrategyResult r = step(d, c);
    if (!r.success()) {
      return StrategyResult::fail(what + (r.failure.empty() ? "" : " (" + r.failure + ")"));
    }
    return r;
  };
}

// `rule` at the first top-down position where it applies at least once, then wherever else it
// applies (up to `limit` times); fails with `what` when it never applies.
Strategy onceOrMore(const Rule& rule, const RuleArguments& arguments, std::string what) {
  return seq(required(topDown(rule, arguments), what), repeat(topDown(rule, arguments), 100));
}

// A map over slide2D windows (not the strict slides of a tile's windows, which
// overlapped-tiling-fusion builds and would match again).
bool overImageWindows(const Expr& node) {
  if (!node.isPrim(Op::Map) || !node.args()[0].isPrim(Op::Map)) return false;
  return node.args()[0].args()[0].isPrim(Op::Slide);
}

bool computes(const Expr& node) {
  return node.isPrim(Op::Map) && !isLayoutFunction(node.funs()[0]);
}

// A computing map whose function's param is named `name`.
NodePredicate mapBinding(const std::string& name) {
  return [name](const Expr& node) {
    return computes(node) && node.funs()[0].isLambda() &&
           node.funs()[0].params()[0].paramName() == name;
  };
}

// A computing map over the param named `name` itself.
NodePredicate mapOverParam(const std::string& name) {
  return [name](const Expr& node) {
    return computes(node) && node.args()[0].isParam() && node.args()[0].paramName() == name;
  };
}

// let(x -> S(f, x), e): the let's body is a map directly over its param (the suppression
// read only by the threshold).
bool letReadByOneStage(const Expr& node) {
  if (!node.isPrim(Op::Let) || !node.funs()[0].isLambda()) return false;
  const Expr& binder = node.funs()[0];
  const Expr& body = binder.body();
  return body.isPrim(Op::Map) && body.args()[0].isParam() &&
         body.args()[0].paramId() == binder.params()[0].paramId();
}

// The positions of `root` reached through a mapGlb's function (the code of its work-items).
std::vector<Position> workItemPositions(const Expr& root) {
  std::vector<Position> found;
  std::vector<std::pair<Position, bool>> pending{{Position{}, false}};
  while (!pending.empty()) {
    auto [position, inside] = pending.back();
    pending.pop_back();
    const Expr node = nodeAt(root, position);
    if (inside) found.push_back(position);
    if (!node.isPrim() && !node.isLambda()) continue;
    const int funs = node.isPrim() ? static_cast<int>(node.funs().size()) : 0;
    const int children =
        node.isPrim() ? funs + static_cast<int>(node.args().size()) : 1;  // a lambda: its body
    for (int child = children - 1; child >= 0; --child) {
      Position next = position;
      next.push_back(child);
      pending.push_back({next, inside || (node.isPrim(Op::MapGlb) && child < funs)});
    }
  }
  return found;
}

// `rule` wherever `where` holds in a work-item's code, outermost first, until it applies
// nowhere (the image-sized maps outside the kernels A stay for the default lowering).
Strategy inWorkItems(const Rule& rule, NodePredicate where) {
  return [&rule, where](const Definition& definition, RewriteContext& context) {
    Definition current = definition;
    for (int step = 0; step < 2000; ++step) {
      std::optional<Definition> next;
      const Expr& body = current.function.body();
      for (const Position& position : workItemPositions(body)) {
        if (!where(nodeAt(body, position))) continue;
        next = applyAt(current, rule, position, {}, context);
        if (next) break;
      }
      if (!next) break;
      current = std::move(*next);
    }
    return StrategyResult::ok(current);
  };
}

// A map whose function only rearranges (zip(r._0, r._1) over zipped windows): a view of
// several arrays, left a map (not stored: the strategy does not store tuples). Its body is
// maps and view primitives but reorder, asVector and asScalar (which Canny's windows are not
// made of): a map whose function holds one of those is unrolled.
bool viewFunction(const Expr& f) {
  if (!f.isLambda()) return false;
  bool onlyLayout = true;
  forEachNode(f.body(), [&](const Expr& e) {
    if (!e.isPrim()) return;
    const Op op = e.primOp();
    const bool layout = op == Op::Map || (isViewPrimitive(op) && op != Op::Reorder &&
                                          op != Op::AsVector && op != Op::AsScalar);
    onlyLayout = onlyLayout && layout;
  });
  return onlyLayout;
}

// map(g, let(w -> map(h, ...), e)): after boxed-stage-fusion, the merged stage's map over the
// one-element result of the window function (the threshold over the suppression's value).
// Left a map, the default lowering would make it a third parallel dimension of one work-item
// (global 1 x W x H: nothing for PoCL to vectorise, no interior fast path along x).
bool mapOverWindowResult(const Expr& node) {
  if (!computes(node) || !node.args()[0].isPrim(Op::Let)) return false;
  const Expr& binder = node.args()[0].funs()[0];
  return binder.isLambda() && computes(binder.body());
}

bool unrollable(const Expr& node) { return computes(node) && !viewFunction(node.funs()[0]); }
bool anyReduce(const Expr& node) { return node.isPrim(Op::Reduce); }

RuleArguments tileFactors(const std::string& strategy, const RuleArguments& arguments) {
  for (const auto& [name, value] : arguments) {
    if (name != "theta1" && name != "theta2") {
      throw std::invalid_argument(strategy + " takes theta1 and theta2, not " + name);
    }
  }
  return arguments;
}

RuleArguments dimension(int d) { return RuleArguments{{"dim", Arith(d)}}; }

}  // namespace

namespace {

// A let whose binder is not named `name`.
NodePredicate letNotBinding(const std::string& name) {
  return [name](const Expr& node) {
    return node.isPrim(Op::Let) && node.funs()[0].isLambda() &&
           node.funs()[0].params()[0].paramName() != name;
  };
}

// A let whose function's body binds `name` further in (a stage the let named `name` reads).
NodePredicate letAround(const std::string& name) {
  return [name](const Expr& node) {
    if (!node.isPrim(Op::Let) || !node.funs()[0].isLambda()) return false;
    bool binds = false;
    forEachNode(node.funs()[0].body(), [&](const Expr& e) {
      binds = binds || (e.isPrim(Op::Let) && e.funs()[0].isLambda() &&
                        e.funs()[0].params()[0].paramName() == name);
    });
    return binds;
  };
}

// The chain's steps after the stages read twice are recomputed; `firstSteps` before them.
Strategy chainSteps(const RuleArguments& tiles, std::vector<Strategy> firstSteps,
                    NodePredicate recomputed) {
  std::vector<Strategy> steps = std::move(firstSteps);
  const std::vector<Strategy> rest = {
      repeat(topDownWhere(chainRule("let-inline-recompute"), recomputed), 100),
      // Stages read once by the pairs (the Sobel derivatives after let-tuple-fusion) inlined.
      repeat(topDownWhere(chainRule("let-inline"), letAround("pairs")), 100),
      onceOrMore(chainRule("horizontal-stencil-fusion"), {},
                 "no pointwise stage over two stencil stages of the same windows"),
      repeat(topDown(chainRule("pad2d-map2d-interchange")), 100),
      required(topDownWhere(chainRule("overlapped-tiling-fusion"), overImageWindows, tiles),
               "no stencil stage over the windows of another stencil stage"),
      repeat(topDownWhere(chainRule("overlapped-tiling-fusion"), overImageWindows, tiles), 100),
      tryS(seq(
          topDownWhere(chainRule("let-inline"), letReadByOneStage),
          seq(topDown(chainRule("boxed-stage-fusion")),
              repeat(topDownWhere(chainRule("map-to-mapseq-unroll"), mapOverWindowResult), 100)))),
      required(topDownWhere(chainRule("map-to-mapglb"), mapBinding("tileRow"), dimension(1)),
               "map-to-mapglb on the tile rows"),
      repeat(topDownWhere(chainRule("map-to-mapglb"), mapBinding("tileRow"), dimension(1)), 100),
      required(topDownWhere(chainRule("map-to-mapglb"), mapBinding("tile"), dimension(0)),
               "map-to-mapglb on the tiles"),
      repeat(topDownWhere(chainRule("map-to-mapglb"), mapBinding("tile"), dimension(0)), 100),
      required(topDownWhere(chainRule("compute-to-private"), mapOverParam("tile")),
               "compute-to-private on the Gaussian's tile"),
      repeat(topDownWhere(chainRule("compute-to-private"), mapOverParam("tile")), 100),
      inWorkItems(chainRule("map-to-mapseq-unroll"), unrollable),
      inWorkItems(chainRule("reduce-to-reduceseq"), anyReduce),
  };
  steps.insert(steps.end(), rest.begin(), rest.end());
  return inOrder(steps);
}

Strategy namedChain(const std::string& name, Strategy steps) {
  return [name, steps](const Definition& d, RewriteContext& c) {
    StrategyResult r = steps(d, c);
    if (!r.success()) r.failure = name + ": " + r.failure;
    return r;
  };
}

}  // namespace

Strategy pipelineFusedPrivateChain(const RuleArguments& arguments) {
  // map-to-mapglb and compute-to-private located on the tiles' maps only.
  return namedChain("pipeline-fused-private-chain",
                    chainSteps(tileFactors("pipeline-fused-private-chain", arguments), {},
                               [](const Expr& node) { return node.isPrim(Op::Let); }));
}

Strategy pipelineFusedPrivateChainPairs(const RuleArguments& arguments) {
  // The two stages over the same array as one stage of pairs, bound to `pairs`, which stays a
  // let (stored, read by the suppression) while the stages below are recomputed per reader.
  return namedChain("pipeline-fused-private-chain-pairs",
                    chainSteps(tileFactors("pipeline-fused-private-chain-pairs", arguments),
                               {required(topDown(chainRule("let-tuple-fusion")),
                                         "no two stages over the same array")},
                               letNotBinding("pairs")));
}

NamedStrategy pipelineFusedPrivateChainPairsStrategy() {
  return NamedStrategy{
      "pipeline-fused-private-chain-pairs",
      "pipeline-fused-private-chain with the two pointwise stages over the same array (Canny's "
      "magnitude and direction over the Sobel pair) first made one stage giving pairs "
      "(let-tuple-fusion): one kernel computes the Gaussian's tile, the Sobel pair and both "
      "results, stored as a structure of arrays, instead of two kernels each recomputing the "
      "Gaussian and Sobel",
      {"theta1", "theta2"},
      pipelineFusedPrivateChainPairs};
}

NamedStrategy pipelineFusedPrivateChainStrategy() {
  return NamedStrategy{
      "pipeline-fused-private-chain",
      "a chain of stencil stages whose values are read more than once (Canny: Gaussian, Sobel "
      "gx and gy, magnitude, direction, suppression, threshold) fused partially: shared stages "
      "recomputed per reader (let-inline-recompute), two stencils over the same windows as one "
      "(horizontal-stencil-fusion), each pointwise stage over them fused with the stencil below "
      "it by overlapped tiling with theta1 x theta2 tiles (a work-item per tile, the producer's "
      "tile with its halo in private memory, loops unrolled: one kernel per pointwise result, "
      "the strategy does not store tuples), the last pointwise stage merged into the stencil that reads "
      "those results (boxed-stage-fusion, default lowering)",
      {"theta1", "theta2"},
      pipelineFusedPrivateChain};
}

}  // namespace weft::rewrite
