// The conv workload's Winograd family (workloads/conv/conv_targets.h): offered for 3×3 stride-1
// layers only, with the tile sizes m that divide the output and κ × σ menus derived from the
// device like the vector family's (σ dividing the tile columns, within the registers);
// recorded with winograd_m, winograd_kappa and winograd_sigma and rebuilt from them; ordered by
// the cost model (workloads/conv/cost_model.h), which predicts its kernels.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/cost_model.h"

using namespace weft;
using namespace weft::explore;

TEST_CASE("Winograd tile sizes: 3x3 stride-1 layers whose output the tile divides") {
  CHECK(winogradTileSizes(vgg16Layers()[4]) == std::vector<int>{2, 4});  // conv3_1: 56x56
  CHECK(winogradTileSizes(vgg16Layers()[10]) == std::vector<int>{2});    // conv5_1: 14x14
  CHECK(winogradTileSizes(parseConvLayer("3,15,15,8,3,1,1")).empty());   // 15x15
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,3,2,1")).empty());   // stride 2
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,5,1,2")).empty());   // 5x5
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,1,1,0")).empty());   // 1x1
}

TEST_CASE("Winograd sigmas divide the tile columns within the registers") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const ConvLayer conv3_1 = vgg16Layers()[4];
  for (int m : {2, 4}) {
    const int64_t columns = conv3_1.outW() / m;
    for (int kappa : vectorFamilyKappas(conv3_1, cpu)) {
      const std::vector<int> sigmas = winogradSigmas(conv3_1, m, kappa, cpu);
      REQUIRE(!sigmas.empty());
      for (int sigma : sigmas) {
        CHECK(columns % sigma == 0);
        CHECK(sigma * kappa + 2 * kappa <= cpu.registersPerWorkItem);
      }
    }
  }
}

TEST_CASE("Winograd structures are recorded and rebuilt by their fixed parameters") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const ConvLayer conv5_1 = vgg16Layers()[10];
  const std::vector<ExploreTarget::Structure> structures = layerWinogradStructures(conv5_1, cpu);
  REQUIRE(!structures.empty());
  for (const ExploreTarget::Structure& structure : structures) {
    CHECK(structure.strategy == "conv-winograd");
    CHECK(structure.fixedParameters.at("winograd_m") == 2);
  }
  const ExploreTarget rebuilt = layerStructureTarget(conv5_1, structures.front().fixedParameters);
  CHECK(rebuilt.strategy == "conv-winograd");
  CHECK(rebuilt.fixedParameters == structures.front().fixedParameters);
  // The whole layer target offers them next to the direct families.
  const ExploreTarget all = layerTargetStructures(conv5_1, {1}, {0}, &cpu);
  size_t winograd = 0;
  for (const ExploreTarget::Structure& structure : all.structures) {
    winograd += structure.strategy == "conv-winograd";
  }
  CHECK(winograd == structures.size());
  CHECK(all.description.find("Winograd") != std::string::npos);
  // No Winograd structure for a strided layer.
  CHECK(layerWinogradStructures(parseConvLayer("8,16,16,8,3,2,1"), cpu).empty());
}

TEST_CASE("the cost model predicts the Winograd family's kernels") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const ConvLayer conv3_1 = vgg16Layers()[4];
  std::map<std::string, int64_t> two = {
      {"winograd_m", 2}, {"winograd_kappa", 16}, {"winograd_sigma", 7}, {"rows", 4}};
  std::optional<CostPrediction> prediction = predictLayerVariantCost(conv3_1, two, cpu);
  REQUIRE(prediction.has_value());
  CHECK(prediction->family == "winograd");
  REQUIRE(prediction->kernels.size() == 4);
  CHECK(prediction->kernels[0].name == "products");
  CHECK(prediction->seconds > 0);
  // F(4x4) does 36/16 of F(2x2)'s products per tile on a quarter of the tiles: fewer products.
  std::map<std::string, int64_t> four = two;
  four["winograd_m"] = 4;
  std::optional<CostPrediction> larger = predictLayerVariantCost(conv3_1, four, cpu);
  REQUIRE(larger.has_value());
  CHECK(larger->kernels[0].seconds < prediction->kernels[0].seconds);
}
