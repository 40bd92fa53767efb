// The fusion structures of a pipeline target (pipeline_target.h): each strategy is applied to
// the definition with its tile sizes left open, so they become tuning variables with the
// ranges the rules give them (theta1 in [3, H + 2], ...) and the constraints the typechecker
// infers; the parameter space (parameter_space.h) bounds them with the bound sizes.
#include "workloads/pipeline/pipeline_target.h"

#include <algorithm>
#include <stdexcept>
#include <variant>

#include "rewrite/strategies.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "typecheck/feasibility.h"
#include "typecheck/typecheck.h"
#include "workloads/pipeline/pipeline_cost_model.h"

namespace weft::explore {

namespace {

// Whether a strategy vectorises with a width it must be given (its factor v): a vector type's
// width is part of the program, so it is a fixed parameter of the structure, not sampled.
bool takesVectorWidth(const rewrite::NamedStrategy& strategy) {
  return std::find(strategy.factors.begin(), strategy.factors.end(), "v") !=
         strategy.factors.end();
}

// The structure of strategy number `fusion` (1-based), or why it does not apply (without the
// strategy's name). A strategy that takes a vector width gets `vectorWidth` (0: none known, the
// strategy does not apply), with `padRows` its rows padded to whole vectors.
std::variant<ExploreTarget::Structure, std::string> fusedStructure(const Definition& definition,
                                                                   const ArithBinding& sizes,
                                                                   int fusion, int64_t vectorWidth,
                                                                   bool padRows = false) {
  const std::string& name = pipelineFusionStrategies().at(static_cast<size_t>(fusion - 1));
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy(name);
  if (!strategy) return std::string("no such strategy");
  std::map<std::string, int64_t> fixed = {{kFusionParameter, fusion}};
  rewrite::RuleArguments factors;
  if (takesVectorWidth(*strategy)) {
    if (vectorWidth < 2) {
      return "needs a vector width of 2 or more (the device's preferred float vector width; " +
             std::to_string(vectorWidth) + " here)";
    }
    factors.push_back({"v", Arith(vectorWidth)});
    fixed[kVectorWidthParameter] = vectorWidth;
    if (padRows) {
      factors.push_back({"pad", Arith(1)});
      fixed[kVectorPadParameter] = 1;
    }
  }
  rewrite::RewriteContext context;
  rewrite::StrategyResult fused;
  try {
    fused = strategy->make(factors)(definition, context);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  if (!fused.success()) return fused.failure;
  ExploreTarget one = programTarget(*fused.definition, sizes);
  return ExploreTarget::Structure{one.parametric, one.switches, fixed, name, name};
}

// Whether the type checker's conditions on the structure's tuning parameters leave it a value
// at `sizes` (typecheck/feasibility.h; "maybe" counts as yes): false for a vector width the
// rows do not divide.
bool mayHaveValidPoint(const ExploreTarget::Structure& structure, const ArithBinding& sizes) {
  return tuningFeasibility(typecheckRemembered(structure.parametric)->constraints, sizes) !=
         Feasibility::Infeasible;
}

// Images up to this many pixels (the product of the sizes) have the reference run checked
// against the interpreter too; a full-size image would take it minutes and gigabytes.
constexpr int64_t kInterpreterCheckPixels = int64_t{1} << 18;

ExploreTarget unfusedTarget(const Definition& definition, const ArithBinding& sizes) {
  ExploreTarget target = programTarget(definition, sizes);
  target.workload = "pipeline";
  target.strategy = "as-written";
  target.reference = boundReference(definition, target);
  int64_t pixels = 1;
  for (const auto& [name, value] : sizes) pixels *= std::max<int64_t>(value, 1);
  // The explorer compares the target's multiply-adds (0 here: flops unknown) with the limit.
  if (pixels > kInterpreterCheckPixels) target.interpreterCheckLimit = -1;
  return target;
}

}  // namespace

const std::vector<std::string>& pipelineFusionStrategies() {
  // Appended only: a recorded fusion=N keeps naming the same strategy.
  static const std::vector<std::string> names = {"pipeline-fused-private",
                                                 "pipeline-fused-local",
                                                 "pipeline-fused-private-pointwise",
                                                 "pipeline-fused-private-chain",
                                                 "pipeline-fused-private-tuples",
                                                 "pipeline-fused-sliding-window",
                                                 "pipeline-fused-sliding-window-tuples",
                                                 "pipeline-fused-sliding-window-pointwise",
                                                 "pipeline-line-buffered-pointwise",
                                                 "pipeline-line-buffered",
                                                 "pipeline-fused-inlined",
                                                 "pipeline-inlined-rows",
                                                 "pipeline-fused-private-chain-pairs",
                                                 "pipeline-column-walk"};
  return names;
}

ExploreTarget pipelineTarget(const Definition& definition, const ArithBinding& sizes,
                             const PipelineTargetOptions& options,
                             std::vector<std::string>* notApplied) {
  ExploreTarget target = unfusedTarget(definition, sizes);
  if (options.includeUnfused) {
    target.structures.push_back(
        {target.parametric, target.switches, {{kFusionParameter, 0}}, "unfused", "as-written"});
  }
  const std::vector<std::string>& all = pipelineFusionStrategies();
  for (const std::string& wanted : options.strategies) {
    if (std::find(all.begin(), all.end(), wanted) == all.end()) {
      throw std::invalid_argument("no fusion strategy named " + wanted);
    }
  }
  for (size_t i = 0; i < all.size(); ++i) {
    if (!options.strategies.empty() &&
        std::find(options.strategies.begin(), options.strategies.end(), all[i]) ==
            options.strategies.end()) {
      continue;
    }
    const int fusion = static_cast<int>(i + 1);
    auto structure = fusedStructure(definition, sizes, fusion, options.vectorWidth);
    if (auto* why = std::get_if<std::string>(&structure)) {
      if (notApplied) notApplied->push_back(all[i] + ": " + *why);
      continue;
    }
    // A vector width the image's rows do not divide leaves the structure no valid point. Two
    // take its place where they have valid points: the same width with the rows padded to
    // whole vectors (the last one's surplus lanes dropped), and the widest narrower width
    // that divides the rows (an image 1000 wide: float8 where the device prefers float16).
    // Where neither has, the preferred width stays, and the explorer reports its empty space
    // with the reason.
    const ExploreTarget::Structure& built = std::get<ExploreTarget::Structure>(structure);
    if (built.fixedParameters.count(kVectorWidthParameter) && !mayHaveValidPoint(built, sizes)) {
      std::vector<ExploreTarget::Structure> replacements;
      auto padded = fusedStructure(definition, sizes, fusion, options.vectorWidth, true);
      if (auto* p = std::get_if<ExploreTarget::Structure>(&padded);
          p && mayHaveValidPoint(*p, sizes)) {
        replacements.push_back(std::move(*p));
      }
      for (int64_t width = options.vectorWidth / 2; width >= 2; width /= 2) {
        auto narrower = fusedStructure(definition, sizes, fusion, width);
        auto* narrow = std::get_if<ExploreTarget::Structure>(&narrower);
        if (narrow && mayHaveValidPoint(*narrow, sizes)) {
          replacements.push_back(std::move(*narrow));
          break;
        }
      }
      if (!replacements.empty()) {
        for (ExploreTarget::Structure& r : replacements) target.structures.push_back(std::move(r));
        continue;
      }
    }
    target.structures.push_back(std::get<ExploreTarget::Structure>(std::move(structure)));
  }
  if (target.structures.empty()) {
    throw std::invalid_argument("no structure of " + definition.name + " to explore");
  }
  target.predictSeconds = pipelineCostModel(target.structures, sizes);
  target.description +=
      "; " + std::to_string(target.structures.size()) + " structures (unfused and fused)";
  return target;
}

ExploreTarget pipelineStructureTarget(const Definition& definition, const ArithBinding& sizes,
                                      const std::map<std::string, int64_t>& fixed) {
  ExploreTarget target = unfusedTarget(definition, sizes);
  auto found = fixed.find(kFusionParameter);
  const int64_t fusion = found == fixed.end() ? 0 : found->second;
  if (fusion == 0) {
    if (found != fixed.end()) target.fixedParameters = {{kFusionParameter, 0}};
    return target;
  }
  if (fusion < 0 || fusion > static_cast<int64_t>(pipelineFusionStrategies().size())) {
    throw std::invalid_argument("fusion = " + std::to_string(fusion) + " names no strategy (0 to " +
                                std::to_string(pipelineFusionStrategies().size()) + ")");
  }
  auto width = fixed.find(kVectorWidthParameter);
  auto padRows = fixed.find(kVectorPadParameter);
  auto structure = fusedStructure(definition, sizes, static_cast<int>(fusion),
                                  width == fixed.end() ? 0 : width->second,
                                  padRows != fixed.end() && padRows->second == 1);
  if (auto* why = std::get_if<std::string>(&structure)) {
    throw std::invalid_argument("the recorded fusion does not apply: " +
                                pipelineFusionStrategies().at(static_cast<size_t>(fusion - 1)) +
                                ": " + *why);
  }
  const ExploreTarget::Structure& s = std::get<ExploreTarget::Structure>(structure);
  adoptStructure(target, s);
  target.description += "; " + s.family;
  return target;
}

}  // namespace weft::explore
