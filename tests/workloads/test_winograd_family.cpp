// The conv workload's Winograd family (workloads/conv/conv_targets.h): offered for 3×3 stride-1
// layers only, with the tile sizes m no larger than the output and κ × σ menus derived from the
// device like the vector family's (σ up to the tile columns, within the registers; partial
// tiles where m does not divide the output or σ the tile columns);
// recorded with winograd_m, winograd_kappa and winograd_sigma and rebuilt from them; ordered by
// the cost model (workloads/conv/cost_model.h), which predicts its kernels.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/cost_model.h"

using namespace weft;
using namespace weft::explore;

TEST_CASE("Winograd tile sizes: 3x3 stride-1 layers, tiles no larger than the output") {
  CHECK(winogradTileSizes(vgg16Layers()[4]) == std::vector<int>{2, 4});   // conv3_1: 56x56
  CHECK(winogradTileSizes(vgg16Layers()[10]) == std::vector<int>{2, 4});  // conv5_1: 14x14
  CHECK(winogradTileSizes(parseConvLayer("3,15,15,8,3,1,1")) == std::vector<int>{2, 4});
  CHECK(winogradTileSizes(parseConvLayer("3,5,5,8,3,1,0")) == std::vector<int>{2});  // 3x3
  CHECK(winogradTileSizes(parseConvLayer("3,3,3,8,3,1,0")).empty());                 // 1x1
  // Partial tiles where m does not divide the output, or σ the tile columns.
  CHECK_FALSE(winogradTilesPartial(vgg16Layers()[10], 2, 7));  // 14 = 7 tiles of 2
  CHECK(winogradTilesPartial(vgg16Layers()[10], 2, 3));        // 7 tiles in blocks of 3
  CHECK(winogradTilesPartial(vgg16Layers()[10], 4, 1));        // 14 = 3.5 tiles of 4
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,3,2,1")).empty());   // stride 2
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,5,1,2")).empty());   // 5x5
  CHECK(winogradTileSizes(parseConvLayer("8,16,16,8,1,1,0")).empty());   // 1x1
}

TEST_CASE("Winograd sigmas: the fewest tiles per block for each block count, within registers") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  for (const ConvLayer& layer : {vgg16Layers()[4], parseConvLayer("512,7,7,512,3,1,1")}) {
    CAPTURE(layer.describe());
    for (int m : {2, 4}) {
      const int64_t columns = (layer.outW() + m - 1) / m;
      for (int kappa : vectorFamilyKappas(layer, cpu)) {
        const std::vector<int> sigmas = winogradSigmas(layer, m, kappa, cpu);
        REQUIRE(!sigmas.empty());
        CHECK(sigmas.front() == 1);
        for (int sigma : sigmas) {
          CHECK(sigma <= columns);
          CHECK(sigma * kappa + 2 * kappa <= cpu.registersPerWorkItem);
          // The fewest tiles per block for its number of blocks.
          const int64_t blocks = (columns + sigma - 1) / sigma;
          CHECK((columns + blocks - 1) / blocks == sigma);
        }
      }
    }
  }
}

TEST_CASE("Winograd structures are recorded and rebuilt by their fixed parameters") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const ConvLayer conv5_1 = vgg16Layers()[10];
  const std::vector<ExploreTarget::Structure> structures = layerWinogradStructures(conv5_1, cpu);
  REQUIRE(!structures.empty());
  std::set<int64_t> tiles;
  for (const ExploreTarget::Structure& structure : structures) {
    CHECK(structure.strategy == "conv-winograd");
    tiles.insert(structure.fixedParameters.at("winograd_m"));
  }
  // 14×14: tiles of 2, and partial tiles of 4.
  CHECK(tiles == std::set<int64_t>{2, 4});
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
  // The per-inference kernels only: the weights' transform runs once per set of weights (a
  // preparation kernel the measurement leaves out).
  std::vector<std::string> names;
  for (const PredictedKernel& kernel : prediction->kernels) names.push_back(kernel.name);
  CHECK(names == std::vector<std::string>{"products", "input transform", "output transform"});
  CHECK(prediction->seconds > 0);
  // F(4x4) does 36/16 of F(2x2)'s products per tile on a quarter of the tiles: fewer products.
  std::map<std::string, int64_t> four = two;
  four["winograd_m"] = 4;
  std::optional<CostPrediction> larger = predictLayerVariantCost(conv3_1, four, cpu);
  REQUIRE(larger.has_value());
  CHECK(larger->kernels[0].seconds < prediction->kernels[0].seconds);
  // On conv4_1 F(4x4) is predicted below the vector family's best block (measured on a 2-core
  // Xeon with AVX-512: 4.5 ms against 7.3 ms; counted with the weight transform, F(4x4) was
  // predicted 2.3x slower than that block).
  const ConvLayer conv4_1 = vgg16Layers()[7];
  const std::map<std::string, int64_t> block = {{"vector_kappa", 16}, {"vector_sigma", 14},
                                                {"rows", 4}, {"vector_row_unroll", 1}};
  std::optional<CostPrediction> f4 = predictLayerVariantCost(conv4_1, four, cpu);
  std::optional<CostPrediction> vector = predictLayerVariantCost(conv4_1, block, cpu);
  REQUIRE(f4.has_value());
  REQUIRE(vector.has_value());
  CHECK(f4->seconds < vector->seconds);
}
