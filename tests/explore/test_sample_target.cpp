// Tests of explore::sampleTarget over a layer's structure union with two families (conv-direct
// and the register-blocked vector family): each family present gets about half the samples
// (one family's far larger count must not crowd the other out), samples are valid points of
// their structure's space, distinct, and reproducible from the seed; vector structures record
// vector_kappa and vector_sigma and rebuild through layerStructureTarget.
#include <doctest/doctest.h>

#include <set>

#include "explore/explorer.h"
#include "host/device_profile.h"
#include "ir/conv_layer.h"

using namespace weft;
using namespace weft::explore;

TEST_CASE("two families share the samples; points are valid, distinct and reproducible") {
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  ExploreTarget target = layerTargetStructures(layer, {4}, {0}, /*vectorFamily=*/true);
  REQUIRE(target.structures.size() > 1);
  size_t vectorStructures = 0;
  for (const ExploreTarget::Structure& s : target.structures) {
    if (s.family == "register-blocked-vector") {
      ++vectorStructures;
      CHECK(s.fixedParameters.count("vector_kappa"));
      CHECK(s.fixedParameters.count("vector_sigma"));
      // The recorded fixed parameters rebuild the same structure.
      ExploreTarget rebuilt = layerStructureTarget(layer, s.fixedParameters);
      CHECK(rebuilt.fixedParameters == s.fixedParameters);
    }
  }
  REQUIRE(vectorStructures > 0);
  host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  SampledTarget sampled = sampleTarget(target, profile, 60, 5);
  REQUIRE(sampled.points.size() == 60);
  size_t inVector = 0;
  std::set<std::pair<size_t, std::vector<int64_t>>> distinct;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t space = sampled.pointSpace[j];
    const ExploreTarget::Structure& structure = target.structures[sampled.spaceStructure[space]];
    if (structure.family == "register-blocked-vector") ++inVector;
    CHECK(sampled.spaces[space].violations(sampled.points[j]).empty());
    distinct.insert({space, sampled.points[j]});
  }
  CHECK(distinct.size() == sampled.points.size());
  // A multinomial split with equal family weights: 30 expected of 60; allow a wide margin.
  CHECK(inVector >= 15);
  CHECK(inVector <= 45);
  SampledTarget again = sampleTarget(target, profile, 60, 5);
  CHECK(again.points == sampled.points);
  CHECK(again.pointSpace == sampled.pointSpace);
}

TEST_CASE("a recorded structure that names no family is refused") {
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  CHECK_THROWS_AS(layerStructureTarget(layer, {{"kappa", 4}}), std::runtime_error);
}
