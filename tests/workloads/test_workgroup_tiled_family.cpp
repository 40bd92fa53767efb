// The conv workload's work-group-tiled family (workloads/conv/conv_targets.h): offered on GPU
// profiles only, with register tiles (RK, RP) from the profile's registers and local staging
// where the profile's local memory is dedicated; recorded with tiled_rk, tiled_rp and
// tiled_staged and rebuilt from them; its space (TK, TH, TW, TC sampled) holds points for
// VGG-16's layers on the Hopper and Mali profiles, each within the device's work-group size and
// local memory; the cost model predicts its kernel and prefers the register tiles local memory's
// bandwidth can feed.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/conv/cost_model.h"

using namespace weft;
using namespace weft::explore;

TEST_CASE("work-group-tiled menus come from the profile, on GPUs only") {
  const ConvLayer conv3_1 = vgg16Layers()[4];
  CHECK(workgroupTiledRegisterTiles(conv3_1, host::loadProfile("pocl-cpu")).empty());
  const host::DeviceProfile hopper = host::loadProfile("nvidia-hopper");
  const host::DeviceProfile mali = host::loadProfile("mali-g72");
  const std::vector<std::pair<int, int>> big = workgroupTiledRegisterTiles(conv3_1, hopper);
  const std::vector<std::pair<int, int>> small = workgroupTiledRegisterTiles(conv3_1, mali);
  CHECK(std::find(big.begin(), big.end(), std::pair<int, int>{8, 8}) != big.end());
  CHECK(std::find(small.begin(), small.end(), std::pair<int, int>{4, 4}) != small.end());
  CHECK(std::find(small.begin(), small.end(), std::pair<int, int>{8, 8}) == small.end());
  for (const auto* tiles : {&big, &small}) {
    for (const auto& [rk, rp] : *tiles) {
      CHECK(rk * rp >= 4);
      CHECK(conv3_1.M % rk == 0);
    }
  }
  for (const auto& [rk, rp] : small) CHECK(2 * (rk * rp + rk + rp) <= mali.registersPerWorkItem);
  CHECK(workgroupTiledStaging(hopper) == 1);
  CHECK(workgroupTiledStaging(mali) == 0);
  // Kernels that RK must divide: 6 kernels take RK = 1 and 2 only.
  for (const auto& [rk, rp] : workgroupTiledRegisterTiles(parseConvLayer("3,8,8,6,3,1,1"), hopper)) {
    CHECK(6 % rk == 0);
  }
}

TEST_CASE("work-group-tiled structures are recorded, rebuilt and joined to a GPU's layer target") {
  const host::DeviceProfile hopper = host::loadProfile("nvidia-hopper");
  const ConvLayer conv5_1 = vgg16Layers()[10];
  const std::vector<ExploreTarget::Structure> structures =
      layerWorkgroupTiledStructures(conv5_1, hopper);
  REQUIRE(structures.size() == workgroupTiledRegisterTiles(conv5_1, hopper).size());
  for (const ExploreTarget::Structure& structure : structures) {
    CHECK(structure.strategy == "conv-workgroup-tiled");
    CHECK(structure.fixedParameters.at("tiled_staged") == 1);
  }
  const ExploreTarget rebuilt = layerStructureTarget(conv5_1, structures.back().fixedParameters);
  CHECK(rebuilt.strategy == "conv-workgroup-tiled");
  CHECK(rebuilt.fixedParameters == structures.back().fixedParameters);
  size_t onGpu = 0, onCpu = 0;
  for (const ExploreTarget::Structure& s : layerTargetStructures(conv5_1, {1}, {0}, &hopper).structures) {
    onGpu += s.strategy == "conv-workgroup-tiled";
  }
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  for (const ExploreTarget::Structure& s : layerTargetStructures(conv5_1, {1}, {0}, &cpu).structures) {
    onCpu += s.strategy == "conv-workgroup-tiled";
  }
  CHECK(onGpu == structures.size());
  CHECK(onCpu == 0);
  // A recorded variant names its structure by them (report, run --pick and emit --pick rebuild it).
  std::map<std::string, int64_t> recorded = structures.back().fixedParameters;
  recorded.insert({{"tk", 64}, {"th", 7}, {"tw", 7}, {"tc", 8}});
  CHECK(convWorkload()->structuralParameters(recorded) ==
        std::vector<std::string>{"tiled_rk", "tiled_rp", "tiled_staged"});
}

TEST_CASE("--family keeps one family's structures, and says what a device offers") {
  const host::DeviceProfile hopper = host::loadProfile("nvidia-hopper");
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  WorkloadRequest request;
  request.instance = "16,8,8,8,3,1,1";
  request.options["family"] = "workgroup-tiled";
  const ExploreTarget tiled = convWorkload()->targets(request, &hopper).front();
  REQUIRE(!tiled.structures.empty());
  for (const ExploreTarget::Structure& s : tiled.structures) CHECK(s.family == "workgroup-tiled");
  request.options["family"] = "winograd,workgroup-tiled";
  std::set<std::string> families;
  for (const ExploreTarget::Structure& s : convWorkload()->targets(request, &hopper).front().structures) {
    families.insert(s.family);
  }
  CHECK(families == std::set<std::string>{"winograd", "workgroup-tiled"});
  request.options["family"] = "workgroup-tiled";
  CHECK_THROWS_WITH_AS(convWorkload()->targets(request, &cpu),
                       doctest::Contains("its families: conv-direct, register-blocked-vector, winograd"),
                       std::invalid_argument);
  request.options["family"] = "tiles";
  CHECK_THROWS_WITH_AS(convWorkload()->targets(request, &hopper),
                       doctest::Contains("--family tiles: not a family"), std::invalid_argument);
}

TEST_CASE("work-group-tiled spaces hold points within the device's limits") {
  for (const char* profileName : {"nvidia-hopper", "mali-g72"}) {
    const host::DeviceProfile device = host::loadProfile(profileName);
    for (size_t index : {1u, 4u, 10u}) {  // conv1_2, conv3_1, conv5_1
      const ConvLayer layer = vgg16Layers()[index];
      CAPTURE(profileName);
      CAPTURE(layer.describe());
      const std::vector<ExploreTarget::Structure> structures =
          layerWorkgroupTiledStructures(layer, device);
      REQUIRE(!structures.empty());
      const ExploreTarget::Structure& s = structures.front();
      SpaceOptions options;
      options.switches = s.switches;
      options.device = device;
      const ParameterSpace space = buildParameterSpace(s.parametric, convListing3Sizes(layer), options);
      INFO(space.hardwareNote);
      CHECK(space.hardwareConstraints);
      Sampler sampler(space);
      const std::vector<std::vector<int64_t>> points = sampler.sample(10, 1).points;
      CHECK(points.size() == 10);
      const int rk = static_cast<int>(s.fixedParameters.at("tiled_rk"));
      const int rp = static_cast<int>(s.fixedParameters.at("tiled_rp"));
      for (const std::vector<int64_t>& point : points) {
        CHECK(space.violations(point).empty());
        std::map<std::string, int64_t> values;
        for (size_t p = 0; p < point.size(); ++p) {
          const std::string& name = space.parameters[p].name;
          values[name.substr(0, 2)] = point[p];
        }
        const int64_t tk = values.at("tk"), th = values.at("th"), tw = values.at("tw"),
                      tc = values.at("tc");
        CHECK(layer.M % tk == 0);
        CHECK(tk % rk == 0);
        CHECK(layer.C % tc == 0);
        CHECK(layer.outH() % th == 0);
        CHECK(layer.outW() % tw == 0);
        CHECK((th * tw) % rp == 0);
        CHECK((tk / rk) * (th * tw / rp) <= device.maxWorkGroupSize);
        if (s.fixedParameters.at("tiled_staged") != 0) {
          const int64_t localFloats = ((th - 1) * layer.stride + layer.K) *
                                          ((tw - 1) * layer.stride + layer.K) * tc +
                                      tk * layer.K * layer.K * tc;
          CHECK(4 * localFloats <= device.localMemoryBytes);
        }
      }
    }
  }
}

TEST_CASE("the cost model predicts the work-group-tiled kernel and prefers fed register tiles") {
  const host::DeviceProfile hopper = host::loadProfile("nvidia-hopper");
  const ConvLayer conv3_1 = vgg16Layers()[4];
  auto predict = [&](int rk, int rp, int staged) {
    std::optional<CostPrediction> p = predictLayerVariantCost(
        conv3_1,
        {{"tiled_rk", rk}, {"tiled_rp", rp}, {"tiled_staged", staged}, {"tk", 64}, {"th", 8},
         {"tw", 8}, {"tc", 8}},
        hopper);
    REQUIRE(p.has_value());
    CHECK(p->family == "workgroup-tiled");
    CHECK(p->kernels.size() == 1);
    return p->seconds;
  };
  // 8×8 tiles issue as many FMAs as local loads can feed; 4×4 and 2×2 are load-bound.
  CHECK(predict(8, 8, 1) < predict(4, 4, 1));
  CHECK(predict(4, 4, 1) < predict(2, 2, 1));
  // Unstaged, neighbouring work-items read pixels C floats apart in [H][W][C].
  CHECK(predict(4, 4, 1) < predict(4, 4, 0));
}
