// conv_direct_space.h: the union over (v, unroll) of conv-direct's parameter spaces, sampled
// uniformly over all valid variants.
#include "workloads/conv/conv_direct_space.h"

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>

#include "explore/z3_encoding.h"
#include "workloads/conv/conv_targets.h"
#include "rewrite/strategies.h"

namespace weft::explore {

std::string ConvDirectStructure::describe() const {
  return "v=" + std::to_string(vectorWidth) + " unroll=" + std::to_string(unroll);
}

uint64_t ConvDirectSpace::validPoints() const {
  uint64_t total = 0;
  for (const ConvDirectSubspace& s : subspaces) total += s.count.points;
  return total;
}

bool ConvDirectSpace::exact() const {
  return std::all_of(subspaces.begin(), subspaces.end(),
                     [](const ConvDirectSubspace& s) { return s.count.exact; });
}

std::string ConvDirectPoint::describe(const ConvDirectSpace& space) const {
  std::string text = space.subspaces.at(subspace).structure.describe();
  for (const auto& [name, value] : parameters) text += " " + name + "=" + std::to_string(value);
  return text;
}

ConvDirectSpace buildConvDirectSpace(const ConvLayer& layer, const SpaceOptions& options,
                                     const std::vector<ConvDirectStructure>& structures) {
  std::vector<ConvDirectStructure> choices = structures;
  if (choices.empty()) {
    for (int v : kConvDirectVectorWidths) {
      for (int unroll : kConvDirectUnrolls) choices.push_back({v, unroll});
    }
  }
  ConvDirectSpace result;
  result.layer = layer;
  result.sizes = convListing3Sizes(layer);
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-direct");
  if (strategy == nullptr) throw std::logic_error("the conv-direct strategy is missing");
  const Definition listing3 = convListing3Definition();
  for (const ConvDirectStructure& structure : choices) {
    rewrite::RewriteContext context;
    rewrite::StrategyResult rewritten =
        strategy->make({{"v", Arith(structure.vectorWidth)}, {"unroll", Arith(structure.unroll)}})(
            listing3, context);
    if (!rewritten.success()) {
      result.emptyStructures.push_back(structure.describe() + ": " + rewritten.failure);
      continue;
    }
    SpaceOptions structureOptions = options;
    for (const Arith& v : context.tuningVariables()) {
      if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
        structureOptions.switches.insert(v.varName());
      }
    }
    ConvDirectSubspace subspace;
    subspace.structure = structure;
    subspace.parametric = *rewritten.definition;
    try {
      subspace.space = std::make_unique<ParameterSpace>(
          buildParameterSpace(subspace.parametric, result.sizes, structureOptions));
      subspace.sampler = std::make_unique<Sampler>(*subspace.space);
      subspace.count = subspace.sampler->count(UINT64_MAX);
    } catch (const UnsatisfiableSpace& empty) {
      result.emptyStructures.push_back(structure.describe() + ": " + empty.what());
      continue;
    }
    if (subspace.count.points == 0) {
      result.emptyStructures.push_back(structure.describe() + ": no valid point");
      continue;
    }
    result.subspaces.push_back(std::move(subspace));
  }
  return result;
}

std::vector<ConvDirectPoint> sampleConvDirect(ConvDirectSpace& space, size_t count,
                                              uint64_t seed) {
  if (space.subspaces.empty()) {
    throw std::runtime_error("no structure of conv-direct has a valid point for " +
                             space.layer.describe());
  }
  // How many samples each structure gives: each sample picks a structure with probability
  // proportional to its count (a multinomial draw), capped at the structure's size.
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (const ConvDirectSubspace& s : space.subspaces) {
    weights.push_back(static_cast<double>(s.count.points));
  }
  std::vector<size_t> wanted(space.subspaces.size(), 0);
  const uint64_t total = space.validPoints();
  const size_t target = static_cast<size_t>(std::min<uint64_t>(count, total));
  size_t assigned = 0;
  while (assigned < target) {
    std::discrete_distribution<size_t> pick(weights.begin(), weights.end());
    size_t i = pick(rng);
    if (wanted[i] >= space.subspaces[i].count.points) {
      weights[i] = 0;  // full: its remaining probability goes to the others
      continue;
    }
    ++wanted[i];
    ++assigned;
  }
  std::vector<ConvDirectPoint> points;
  for (size_t i = 0; i < space.subspaces.size(); ++i) {
    if (wanted[i] == 0) continue;
    ConvDirectSubspace& s = space.subspaces[i];
    SampleSet set = s.sampler->sample(wanted[i], seed * 1000003u + i);
    for (const std::vector<int64_t>& values : set.points) {
      ConvDirectPoint point;
      point.subspace = i;
      for (size_t p = 0; p < values.size(); ++p) {
        point.parameters[s.space->parameters[p].name] = values[p];
      }
      points.push_back(std::move(point));
    }
  }
  // Interleave the structures in a seeded order so that a prefix of the list is a sample too.
  std::shuffle(points.begin(), points.end(), rng);
  return points;
}

Definition instantiate(const ConvDirectSpace& space, const ConvDirectPoint& point) {
  const ConvDirectSubspace& s = space.subspaces.at(point.subspace);
  ArithSubstitution values;
  for (const auto& [name, value] : point.parameters) values[name] = Arith(value);
  Definition concrete = s.parametric;
  concrete.function = substituteArith(s.parametric.function, values);
  return concrete;
}

}  // namespace weft::explore
