// The basic rules: map fusion and fission, split-join (strip-mining), the layout identities
// (join ∘ split, split ∘ join, transpose ∘ transpose, asScalar ∘ asVector, asVector ∘ asScalar)
// and the lowering rules (map => mapGlb / mapWrg / mapLcl / mapSeq(Unroll), reduce =>
// reduceSeq(Unroll)), plus the library lookup of library.h.
//
// The rules are those of LIFT (Steuwer et al., "Generating performance portable code using
// rewrite rules", ICFP 2015, figure 5) and of the direct convolution paper, section 3.4. Each is
// checked against the interpreter by tests/rewrite/property_rules_basic.cpp.
//
// Lowering legality: within one nest of parallel maps (a map nested in another's function),
// mapLcl appears only inside a mapWrg, each dimension is used once per kind, and mapGlb is not
// mixed with mapWrg/mapLcl. Parallel maps are also not placed inside sequential
// code (mapSeq, reduce, reduceSeq), whose body one thread runs alone. The checks look at the
// enclosing nodes (RuleApplication::ancestors) and at the map's own function.
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

bool isUnaryFunction(const Expr& f) { return f.isFunction() && f.params().size() == 1; }

// ---- fusion ----

std::optional<Expr> mapFusion(const RuleApplication& a) {
  const Expr& outer = a.node;
  if (!outer.isPrim(Op::Map)) return std::nullopt;
  const Expr& inner = outer.args()[0];
  if (!inner.isPrim(Op::Map)) return std::nullopt;
  const Expr& f = outer.funs()[0];
  const Expr& g = inner.funs()[0];
  if (!isUnaryFunction(f) || !isUnaryFunction(g)) return std::nullopt;
  Expr x = Expr::param("x");
  Expr body = call(f, call(g, x));
  return map(Expr::lambda({x}, body), inner.args()[0]);
}

// map(x -> P(.., e(x), ..)) => map(y -> P(.., y, ..)) ∘ map(x -> e(x)) where e is the only
// part of the call P that mentions x, and e is not x itself.
std::optional<Expr> mapFission(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& f = node.funs()[0];
  if (!f.isLambda() || f.params().size() != 1) return std::nullopt;
  const Expr& x = f.params()[0];
  const Expr& call = f.body();
  if (!call.isPrim()) return std::nullopt;
  for (const Expr& fun : call.funs()) {
    if (mentionsParam(fun, x)) return std::nullopt;
  }
  int dependent = -1;
  for (size_t i = 0; i < call.args().size(); ++i) {
    if (!mentionsParam(call.args()[i], x)) continue;
    if (dependent >= 0) return std::nullopt;  // two arguments depend on x
    dependent = static_cast<int>(i);
  }
  if (dependent < 0) return std::nullopt;
  const Expr& argument = call.args()[static_cast<size_t>(dependent)];
  if (isParamNode(argument, x)) return std::nullopt;  // nothing to split off
  Expr y = Expr::param("y");
  std::vector<Expr> args = call.args();
  args[static_cast<size_t>(dependent)] = y;
  Expr rest = call.withChildren(call.nats(), call.funs(), args);
  Expr first = Expr::lambda({x}, argument);
  return map(Expr::lambda({y}, rest), map(first, node.args()[0]));
}

// ---- tiling ----

std::optional<Expr> splitJoin(const RuleApplication& a) {
  const Expr& node = a.node;
  if (!node.isPrim(Op::Map)) return std::nullopt;
  const Expr& xs = node.args()[0];
  Arith length = a.typeOf(xs).arrayLength();
  Arith n = a.factor(
      "n", [&](RewriteContext& context) { return context.freshTuning("chunk", Arith(1), length); });
  Expr chunk = Expr::param("chunk");
  return join(map(Expr::lambda({chunk}, map(node.funs()[0], chunk)), split(n, xs)));
}

// ---- identities ----

std::optional<Expr> joinSplitId(const RuleApplication& a) {
  if (!a.node.isPrim(Op::Join) || !a.node.args()[0].isPrim(Op::Split)) return std::nullopt;
  return a.node.args()[0].args()[0];
}

std::optional<Expr> splitJoinId(const RuleApplication& a) {
  if (!a.node.isPrim(Op::Split) || !a.node.args()[0].isPrim(Op::Join)) return std::nullopt;
  const Expr& x = a.node.args()[0].args()[0];
  Type inner = a.typeOf(x).arrayElement();
  if (!inner.isArray() || inner.arrayLength() != a.node.nats()[0]) return std::nullopt;
  return x;
}

std::optional<Expr> transposeTransposeId(const RuleApplication& a) {
  if (!a.node.isPrim(Op::Transpose) || !a.node.args()[0].isPrim(Op::Transpose)) {
    return std::nullopt;
  }
  return a.node.args()[0].args()[0];
}

std::optional<Expr> asScalarAsVectorId(const RuleApplication& a) {
  if (!a.node.isPrim(Op::AsScalar) || !a.node.args()[0].isPrim(Op::AsVector)) {
    return std::nullopt;
  }
  return a.node.args()[0].args()[0];
}

std::optional<Expr> asVectorAsScalarId(const RuleApplication& a) {
  if (!a.node.isPrim(Op::AsVector) || !a.node.args()[0].isPrim(Op::AsScalar)) {
    return std::nullopt;
  }
  const Expr& x = a.node.args()[0].args()[0];
  Type element = a.typeOf(x).arrayElement();
  std::optional<int64_t> width = a.node.nats()[0].constant();
  if (!element.isVector() || !width || element.vectorWidth() != *width) return std::nullopt;
  return x;
}

// ---- lowering ----

bool isParallelMap(const Expr& e) {
  return e.isPrim(Op::MapGlb) || e.isPrim(Op::MapWrg) || e.isPrim(Op::MapLcl);
}

bool isSequential(const Expr& e) {
  return e.isPrim(Op::MapSeq) || e.isPrim(Op::MapSeqUnroll) || e.isPrim(Op::Reduce) ||
         e.isPrim(Op::ReduceSeq) || e.isPrim(Op::ReduceSeqUnroll);
}

// A parallel map of kind `op` and dimension `dim` replacing `node`: legal in its nest?
bool legalParallelMap(Op op, int64_t dim, const RuleApplication& a) {
  if (dim < 0 || dim > 2) return false;
  std::vector<Expr> nest;  // parallel maps enclosing or inside the node, in the same nest
  bool sequentialAbove = false;
  const std::vector<Expr>& up = a.ancestors;
  for (size_t i = 0; i < up.size(); ++i) {
    const Expr& child = i + 1 < up.size() ? up[i + 1] : a.node;
    const Expr& ancestor = up[i];
    if (!ancestor.isPrim()) continue;
    // Only the function arguments run once per element; data arguments are computed before.
    bool inFunction = false;
    for (const Expr& fun : ancestor.funs()) inFunction = inFunction || fun.node() == child.node();
    if (!inFunction) continue;
    if (isParallelMap(ancestor)) nest.push_back(ancestor);
    if (isSequential(ancestor)) sequentialAbove = true;
  }
  if (sequentialAbove) return false;
  bool enclosingWrg = false;
  for (const Expr& m : nest) enclosingWrg = enclosingWrg || m.isPrim(Op::MapWrg);
  forEachNode(a.node.funs()[0], [&](const Expr& e) {
    if (isParallelMap(e)) nest.push_back(e);
  });
  std::set<std::pair<Op, int64_t>> used;
  bool glb = op == Op::MapGlb, workGroup = op != Op::MapGlb;
  for (const Expr& m : nest) {
    std::optional<int64_t> d = m.nats()[0].constant();
    if (!d) return false;  // a symbolic dimension: cannot decide
    used.insert({m.primOp(), *d});
    if (m.isPrim(Op::MapGlb))
      glb = true;
    else
      workGroup = true;
  }
  if (glb && workGroup) return false;
  if (used.count({op, dim})) return false;
  if (op == Op::MapLcl && !enclosingWrg) return false;
  if (op == Op::MapWrg) {
    // A mapWrg never sits inside a mapLcl.
    for (size_t i = 0; i < a.ancestors.size(); ++i) {
      const Expr& anc = a.ancestors[i];
      const Expr& child = i + 1 < a.ancestors.size() ? a.ancestors[i + 1] : a.node;
      if (anc.isPrim(Op::MapLcl) && anc.funs()[0].node() == child.node()) return false;
    }
  }
  if (op == Op::MapLcl) {
    bool wrgInside = false;
    forEachNode(a.node.funs()[0],
                [&](const Expr& e) { wrgInside = wrgInside || e.isPrim(Op::MapWrg); });
    if (wrgInside) return false;
  }
  return true;
}

std::function<std::optional<Expr>(const RuleApplication&)> lowerToParallel(Op op) {
  return [op](const RuleApplication& a) -> std::optional<Expr> {
    if (!a.node.isPrim(Op::Map)) return std::nullopt;
    bool given = false;
    for (const auto& [name, value] : a.arguments) given = given || name == "dim";
    if (given) {
      Arith dim = a.factor("dim", [](RewriteContext&) { return Arith(0); });
      std::optional<int64_t> d = dim.constant();
      if (!d) throw std::invalid_argument("the factor dim of a thread mapping must be 0, 1 or 2");
      if (!legalParallelMap(op, *d, a)) return std::nullopt;
      return Expr::prim(op, {Arith(*d)}, a.node.funs(), a.node.args());
    }
    // No dimension given: the lowest one that is legal here.
    for (int64_t d = 0; d <= 2; ++d) {
      if (legalParallelMap(op, d, a))
        return Expr::prim(op, {Arith(d)}, a.node.funs(), a.node.args());
    }
    return std::nullopt;
  };
}

// Sequential lowering (mapSeq, reduceSeq): one thread runs the function, so it must not contain
// a parallel map.
std::function<std::optional<Expr>(const RuleApplication&)> replaceOp(Op from, Op to) {
  return [from, to](const RuleApplication& a) -> std::optional<Expr> {
    if (!a.node.isPrim(from)) return std::nullopt;
    bool parallelInside = false;
    forEachNode(a.node.funs()[0],
                [&](const Expr& e) { parallelInside = parallelInside || isParallelMap(e); });
    if (parallelInside) return std::nullopt;
    return Expr::prim(to, a.node.nats(), a.node.funs(), a.node.args(), a.node.attribute());
  };
}

}  // namespace

void addBasicRules(std::vector<Rule>& rules) {
  rules.push_back(
      {"map-fusion", "map(f) ∘ map(g) => map(f ∘ g)", RuleFamily::Fusion, {}, mapFusion});
  rules.push_back({"map-fission",
                   "map(x -> f(g(x))) => map(f) ∘ map(g)  (g: the one argument of the call "
                   "that depends on x)",
                   RuleFamily::Fusion,
                   {},
                   mapFission});
  rules.push_back({"split-join",
                   "map(f) => join ∘ map(map(f)) ∘ split(n)",
                   RuleFamily::Tiling,
                   {"n"},
                   splitJoin});
  rules.push_back(
      {"join-split-id", "join ∘ split(n) => id", RuleFamily::Simplification, {}, joinSplitId});
  rules.push_back({"split-join-id",
                   "split(n) ∘ join => id  (n = the inner length)",
                   RuleFamily::Simplification,
                   {},
                   splitJoinId});
  rules.push_back({"transpose-transpose-id",
                   "transpose ∘ transpose => id",
                   RuleFamily::Simplification,
                   {},
                   transposeTransposeId});
  rules.push_back({"asscalar-asvector-id",
                   "asScalar ∘ asVector(v) => id",
                   RuleFamily::Simplification,
                   {},
                   asScalarAsVectorId});
  rules.push_back({"asvector-asscalar-id",
                   "asVector(v) ∘ asScalar => id  (v = the vector width)",
                   RuleFamily::Simplification,
                   {},
                   asVectorAsScalarId});
  rules.push_back({"map-to-mapglb",
                   "map(f) => mapGlb(dim, f)",
                   RuleFamily::Lowering,
                   {"dim"},
                   lowerToParallel(Op::MapGlb)});
  rules.push_back({"map-to-mapwrg",
                   "map(f) => mapWrg(dim, f)",
                   RuleFamily::Lowering,
                   {"dim"},
                   lowerToParallel(Op::MapWrg)});
  rules.push_back({"map-to-maplcl",
                   "map(f) => mapLcl(dim, f)  (inside a mapWrg)",
                   RuleFamily::Lowering,
                   {"dim"},
                   lowerToParallel(Op::MapLcl)});
  rules.push_back({"map-to-mapseq",
                   "map(f) => mapSeq(f)",
                   RuleFamily::Lowering,
                   {},
                   replaceOp(Op::Map, Op::MapSeq)});
  rules.push_back({"map-to-mapseq-unroll",
                   "map(f) => mapSeqUnroll(f)",
                   RuleFamily::Lowering,
                   {},
                   replaceOp(Op::Map, Op::MapSeqUnroll)});
  rules.push_back({"reduce-to-reduceseq",
                   "reduce(z, f) => reduceSeq(z, f)",
                   RuleFamily::Lowering,
                   {},
                   replaceOp(Op::Reduce, Op::ReduceSeq)});
  rules.push_back({"reduce-to-reduceseq-unroll",
                   "reduce(z, f) => reduceSeqUnroll(z, f)",
                   RuleFamily::Lowering,
                   {},
                   replaceOp(Op::Reduce, Op::ReduceSeqUnroll)});
}

const std::vector<Rule>& ruleLibrary() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> all;
    addBasicRules(all);
    addAlgorithmicRules2(all);
    addAddressSpaceRules(all);
    addInterchangeRules(all);
    addConvolutionRules(all);
    addBlockingRules(all);
    addVectorBlockingRules(all);
    addReduceLevelRules(all);
    addStencilFusionRules(all);
    addStencilChainRules(all);
    addStencilTupleRules(all);
    addWinogradRules(all);
    addWorkgroupTilingRules(all);
    addSlidingWindowRules(all);
    addStencilRowRules(all);
    addColumnWalkRules(all);
    std::set<std::string> names;
    for (const Rule& rule : all) {
      if (!names.insert(rule.name).second) {
        throw std::logic_error("rule library: two rules are named " + rule.name);
      }
    }
    return all;
  }();
  return rules;
}

const Rule* findRule(const std::string& name) {
  for (const Rule& rule : ruleLibrary()) {
    if (rule.name == name) return &rule;
  }
  return nullptr;
}

}  // namespace weft::rewrite
