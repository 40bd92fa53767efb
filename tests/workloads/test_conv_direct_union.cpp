// Tests of a layer's conv-direct structures sampled as one union (workloads/conv/conv_targets.h
// layerTargetStructures, explore/explorer.h sampleTarget) for a small layer: the union's count
// is the sum of the structures' exact counts, empty structures are reported, samples are
// unique, reproducible and spread over the structures in proportion to their sizes (chi-square
// with a fixed seed), and instantiated samples compute the layer (the interpreter on the
// instantiated program equals the interpreter on Listing 3).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "codegen/compile_pipeline.h"
#include "explore/explorer.h"
#include "host/device_profile.h"
#include "ir/interp.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"

using namespace weft;
using namespace weft::explore;

namespace {

// C=2, H=W=6, M=4, K=3, stride 1, pad 1: windows of 18 values, so v = 4, 8, 16 have no ω.
ConvLayer smallLayer() { return ConvLayer{2, 6, 6, 4, 3, 1, 1, ""}; }

ExploreTarget convDirectUnion() {
  return layerTargetStructures(smallLayer(), kConvDirectVectorWidths, kConvDirectUnrolls);
}

SampledTarget sampled(size_t samples, uint64_t seed) {
  return sampleTarget(convDirectUnion(), host::loadProfile("pocl-cpu"), samples, seed);
}

// "v=1 unroll=0 {...parameters...}": a point with its structure.
std::string describe(const SampledTarget& s, const ExploreTarget& target, size_t j) {
  const size_t space = s.pointSpace[j];
  const auto& fixed = target.structures[s.spaceStructure[space]].fixedParameters;
  return parametersJson(s.spaces[space], s.points[j], fixed);
}

}  // namespace

TEST_CASE("the conv-direct space of a layer is the union of its structures") {
  const ExploreTarget target = convDirectUnion();
  const SampledTarget s = sampled(0, 1);
  // Only v = 1 and v = 2 have valid points: ω divides 18 and v must divide ω.
  std::set<int64_t> widths;
  for (size_t structure : s.spaceStructure) {
    widths.insert(target.structures[structure].fixedParameters.at("v"));
  }
  CHECK(widths == std::set<int64_t>{1, 2});
  CHECK(s.spaces.size() == 4);
  CHECK(s.emptyStructures.size() == 6);
  REQUIRE(s.counts.size() == s.spaces.size());
  uint64_t sum = 0;
  for (const SpaceCount& count : s.counts) {
    CHECK(count.exact);
    CHECK(count.points > 0);
    sum += count.points;
  }
  CHECK(s.validPoints == sum);
}

TEST_CASE("conv-direct samples are unique, reproducible, spread by size and compute the layer") {
  const ExploreTarget target = convDirectUnion();
  const size_t n = 400;
  const SampledTarget s = sampled(n, 42);
  REQUIRE(s.points.size() == n);
  std::set<std::string> seen;
  for (size_t j = 0; j < n; ++j) seen.insert(describe(s, target, j));
  CHECK(seen.size() == n);
  const SampledTarget again = sampled(n, 42);
  REQUIRE(again.points.size() == n);
  for (size_t j = 0; j < n; ++j) CHECK(describe(again, target, j) == describe(s, target, j));

  // Structures are chosen in proportion to their counts: chi-square over the structures with
  // a generous bound (3 degrees of freedom; 30 is far in the tail).
  std::map<size_t, double> observed;
  for (size_t space : s.pointSpace) observed[space] += 1;
  double chiSquare = 0;
  for (size_t i = 0; i < s.spaces.size(); ++i) {
    double expected = static_cast<double>(n) * static_cast<double>(s.counts[i].points) /
                      static_cast<double>(s.validPoints);
    chiSquare += (observed[i] - expected) * (observed[i] - expected) / expected;
  }
  CAPTURE(chiSquare);
  CHECK(chiSquare < 30);

  // A few instantiated variants compute the layer.
  const Definition listing3 = convListing3Definition();
  std::mt19937_64 rng(3);
  std::vector<Value> inputs;
  for (const Expr& param : listing3.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), target.sizes, rng));
  }
  const Value expected = interpret(listing3, inputs, target.sizes);
  for (size_t j = 0; j < 6; ++j) {
    CAPTURE(describe(s, target, j));
    const size_t space = s.pointSpace[j];
    ArithBinding tuning;
    for (const auto& [name, value] : s.spaces[space].binding(s.points[j])) {
      if (!target.sizes.count(name)) tuning[name] = value;
    }
    const Definition concrete =
        instantiate(target.structures[s.spaceStructure[space]].parametric, tuning);
    CHECK_NOTHROW(typecheck(concrete));
    Value actual = interpret(concrete, inputs, target.sizes);
    CHECK(approximatelyEqual(expected, actual, 1e-4, 1e-4));
  }
}
