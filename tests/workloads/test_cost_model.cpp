// Tests of the static cost model (workloads/conv/cost_model.h) and of the explorer's measuring
// order (explore/explorer.h measurementOrder, predictedCosts), without OpenCL: orderByPredictedCost
// is a stable ascending permutation with unknown (and NaN) costs last; orderFamiliesTakingTurns
// lets the families take turns near the cheapest; selectCandidates keeps the cheapest half and a
// seeded draw from the rest; the model prefers what
// issue 8 measured fast (wide vectors, enough accumulators, no pad kernel) and penalises
// spills; convLayerFromSizes inverts convListing3Sizes; and on a real sampled layer target the
// cost order measures the same points as the sampled order, shard by shard.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include "explore/explorer.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/conv/cost_model.h"

using namespace weft;
using namespace weft::explore;

namespace {

std::map<std::string, int64_t> vectorPoint(int64_t kappa, int64_t sigma, int64_t rows,
                                           int64_t padInLoads = 0) {
  return {{"vector_kappa", kappa}, {"vector_sigma", sigma},
          {"rows", rows},          {"vector_pad_in_loads", padInLoads},
          {"local_k0_d0", 1},      {"local_k1_d0", 1}};
}

double cost(const ConvLayer& layer, const std::map<std::string, int64_t>& point,
            const host::DeviceProfile& profile) {
  std::optional<CostPrediction> prediction = predictLayerVariantCost(layer, point, profile);
  REQUIRE(prediction);
  REQUIRE(std::isfinite(prediction->seconds));
  REQUIRE(prediction->seconds > 0);
  return prediction->seconds;
}

}  // namespace

TEST_CASE("selectCandidates: the cheapest half and a seeded draw from the rest") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 60;
    const size_t wanted = rng() % 30;
    std::vector<std::optional<double>> costs;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 5 == 0) {
        costs.push_back(std::nullopt);
      } else {
        costs.push_back(static_cast<double>(rng() % 50));
      }
    }
    const uint64_t seed = rng();
    const std::vector<size_t> kept = selectCandidates(costs, wanted, seed);
    CHECK(kept.size() == std::min(n, wanted));
    CHECK(std::is_sorted(kept.begin(), kept.end()));
    CHECK(std::adjacent_find(kept.begin(), kept.end()) == kept.end());
    for (size_t i : kept) CHECK(i < n);
    CHECK(selectCandidates(costs, wanted, seed) == kept);  // reproducible
    if (n <= wanted) continue;
    // The ⌈wanted/2⌉ first of the cost order are all kept.
    const std::vector<size_t> order = orderByPredictedCost(costs);
    for (size_t k = 0; k < (wanted + 1) / 2; ++k) {
      CHECK(std::binary_search(kept.begin(), kept.end(), order[k]));
    }
  }
  // The other half is a draw: with enough candidates, some seed keeps a point the cost order
  // would not.
  std::vector<std::optional<double>> ramp;
  for (int i = 0; i < 100; ++i) ramp.push_back(static_cast<double>(i));
  std::set<size_t> seen;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    for (size_t i : selectCandidates(ramp, 10, seed)) seen.insert(i);
  }
  for (size_t i = 0; i < 5; ++i) CHECK(seen.count(i) == 1);
  CHECK(*seen.rbegin() >= 10);
}

TEST_CASE("selectCandidates: families share the cheap half, each with its cheapest") {
  // Family 0 predicted far cheaper than family 1: the cheap half still takes family 1's
  // cheapest, in turn with family 0's.
  std::vector<std::optional<double>> costs;
  std::vector<size_t> families;
  for (int i = 0; i < 40; ++i) {
    costs.push_back(i % 2 == 0 ? static_cast<double>(i) : 1000.0 + i);
    families.push_back(static_cast<size_t>(i % 2));
  }
  const std::vector<size_t> kept = selectCandidates(costs, 10, 3, families);
  REQUIRE(kept.size() == 10);
  for (size_t i : {0, 2, 4, 1, 3}) CHECK(std::binary_search(kept.begin(), kept.end(), i));
  // One family only: the same as without families.
  const std::vector<size_t> one(costs.size(), 0);
  CHECK(selectCandidates(costs, 10, 3, one) == selectCandidates(costs, 10, 3));
  // A family with fewer candidates than its turn gives the rest to the others.
  std::vector<size_t> lonely(costs.size(), 0);
  lonely[39] = 1;
  const std::vector<size_t> keptLonely = selectCandidates(costs, 20, 3, lonely);
  CHECK(keptLonely.size() == 20);
  CHECK(std::binary_search(keptLonely.begin(), keptLonely.end(), size_t{39}));
}

TEST_CASE("selectCandidates: with more families than cheap places, the cheapest families") {
  // Ten families of four candidates, numbered against their costs (family f's cheapest is
  // 100 * (10 - f)): the cheap half's places go to the families with the cheapest candidates,
  // one each, whatever their numbers.
  std::vector<std::optional<double>> costs;
  std::vector<size_t> families;
  for (size_t f = 0; f < 10; ++f) {
    for (int k = 0; k < 4; ++k) {
      costs.push_back(100.0 * static_cast<double>(10 - f) + k);
      families.push_back(f);
    }
  }
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const std::vector<size_t> kept = selectCandidates(costs, 8, seed, families);
    REQUIRE(kept.size() == 8);
    for (size_t cheapest : {36, 32, 28, 24}) {
      CHECK(std::binary_search(kept.begin(), kept.end(), cheapest));
    }
  }
}

TEST_CASE("orderByPredictedCost: a stable ascending permutation, unknown costs last") {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 40;
    std::vector<std::optional<double>> costs;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t kind = rng() % 6;
      if (kind == 0) {
        costs.push_back(std::nullopt);
      } else if (kind == 1) {
        costs.push_back(std::numeric_limits<double>::quiet_NaN());
      } else {
        costs.push_back(static_cast<double>(rng() % 5));  // many ties
      }
    }
    std::vector<size_t> order = orderByPredictedCost(costs);
    REQUIRE(order.size() == n);
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<size_t> identity(n);
    std::iota(identity.begin(), identity.end(), size_t{0});
    CHECK(sorted == identity);
    auto known = [&](size_t i) { return costs[i] && std::isfinite(*costs[i]); };
    for (size_t k = 1; k < n; ++k) {
      const size_t a = order[k - 1], b = order[k];
      if (known(a) && known(b)) {
        CHECK(*costs[a] <= *costs[b]);
        if (*costs[a] == *costs[b]) CHECK(a < b);  // ties keep the sampled order
      } else if (!known(a) && !known(b)) {
        CHECK(a < b);
      } else {
        CHECK(known(a));  // never an unknown before a known
      }
    }
  }
}

TEST_CASE("the model prefers issue 8's fast shapes") {
  const host::DeviceProfile pocl = host::loadProfile("pocl-cpu");
  const ConvLayer conv3_1 = parseConvLayer("vgg16:10");
  // Wide vectors with enough independent accumulators beat narrow ones with few.
  CHECK(cost(conv3_1, vectorPoint(16, 4, 7), pocl) < cost(conv3_1, vectorPoint(4, 4, 7), pocl));
  CHECK(cost(conv3_1, vectorPoint(4, 4, 7), pocl) < cost(conv3_1, vectorPoint(4, 2, 7), pocl));
  CHECK(cost(conv3_1, vectorPoint(8, 8, 7), pocl) < cost(conv3_1, vectorPoint(8, 2, 7), pocl));
  // No pad kernel with pad_in_loads: one kernel fewer, and cheaper on a large image.
  std::optional<CostPrediction> padded =
      predictLayerVariantCost(conv3_1, vectorPoint(16, 4, 7, 0), pocl);
  std::optional<CostPrediction> inLoads =
      predictLayerVariantCost(conv3_1, vectorPoint(16, 4, 7, 1), pocl);
  REQUIRE(padded);
  REQUIRE(inLoads);
  CHECK(inLoads->kernels.size() + 1 == padded->kernels.size());
  CHECK(inLoads->family == "register-blocked-vector");
  CHECK(inLoads->laneUse == doctest::Approx(1.0));
  CHECK(predictLayerVariantCost(conv3_1, vectorPoint(4, 4, 7), pocl)->laneUse ==
        doctest::Approx(0.25));
  // Any vector point beats the paper's conv-direct points (scalar accumulators, partial sums).
  const std::map<std::string, int64_t> direct{{"v", 4},      {"unroll", 1},  {"theta", 8},
                                              {"rho", 0},    {"kappa", 8},   {"sigma", 4},
                                              {"omega", 96}, {"coalesce", 0}};
  std::optional<CostPrediction> directCost = predictLayerVariantCost(conv3_1, direct, pocl);
  REQUIRE(directCost);
  CHECK(directCost->family == "conv-direct");
  CHECK(directCost->kernels.size() == 4);
  CHECK(cost(conv3_1, vectorPoint(4, 2, 2), pocl) < directCost->seconds);
  // Fewer, longer chunks (larger ω) mean fewer partial sums for the final reduction.
  std::map<std::string, int64_t> longChunks = direct;
  longChunks["omega"] = 1152;
  CHECK(cost(conv3_1, longChunks, pocl) < directCost->seconds);
  // More extra windows (ρ) is more work.
  std::map<std::string, int64_t> padded2 = direct;
  padded2["rho"] = 40;
  CHECK(cost(conv3_1, padded2, pocl) > directCost->seconds);
  // Neither family named: no prediction.
  CHECK_FALSE(predictLayerVariantCost(conv3_1, {{"theta1", 4}}, pocl));
}

TEST_CASE("on a GPU, blocks whose work-items read neighbouring addresses are predicted faster") {
  // What an H200 measured through NVIDIA's OpenCL (bench/results/nvidia-h200): interleaved
  // blocks over the channels-first padded copy 2-3x faster than blocks that read [H][W][C] in
  // place, with or without the pad kernel; the copy itself a small part of the time.
  const host::DeviceProfile gpu = host::loadProfile("nvidia-generic");
  const ConvLayer conv1_2 = vgg16Layers()[1];
  auto point = [](int64_t kappa, int64_t sigma, int64_t padInLoads, int64_t interleave,
                  int64_t channelsFirst) {
    std::map<std::string, int64_t> p = vectorPoint(kappa, sigma, 7, padInLoads);
    if (interleave) p["vector_interleave"] = 1;
    if (channelsFirst) p["vector_channels_first"] = 1;
    return p;
  };
  const double channelsFirst = cost(conv1_2, point(8, 4, 0, 1, 1), gpu);
  CHECK(channelsFirst * 1.5 < cost(conv1_2, point(8, 4, 0, 0, 0), gpu));
  CHECK(channelsFirst * 1.5 < cost(conv1_2, point(8, 4, 1, 0, 0), gpu));
  CHECK(channelsFirst * 1.5 < cost(conv1_2, point(8, 4, 1, 1, 0), gpu));
  CHECK(channelsFirst * 1.5 < cost(conv1_2, point(16, 2, 1, 0, 0), gpu));
  std::optional<CostPrediction> parts = predictLayerVariantCost(conv1_2, point(8, 4, 0, 1, 1), gpu);
  REQUIRE(parts);
  REQUIRE(parts->kernels.size() == 2);
  CHECK(parts->kernels[0].name == "pad");
  CHECK(parts->kernels[0].seconds < 0.25 * parts->kernels[1].seconds);
  // The same switches change nothing on a CPU but the interleaved blocks' strided loads.
  const host::DeviceProfile pocl = host::loadProfile("pocl-cpu");
  CHECK(cost(conv1_2, point(8, 4, 0, 0, 0), pocl) == cost(conv1_2, point(8, 4, 0, 0, 1), pocl));
  CHECK(cost(conv1_2, point(8, 4, 0, 0, 0), pocl) <= cost(conv1_2, point(8, 4, 0, 1, 0), pocl));
}

TEST_CASE("on a GPU, a split over the channels pays where the blocks are too few") {
  // Measured on an H200 (bench/results/nvidia-h200): conv5_1's best unsplit blocks (κ 4, σ 2,
  // about three warps per SM) ran at 3 % of peak, each work-item's 4608 steps one after the
  // other; conv1_2's blocks fill the device without a split.
  const host::DeviceProfile gpu = host::loadProfile("nvidia-hopper");
  auto point = [](int64_t kappa, int64_t sigma, int64_t rows, int64_t split) {
    std::map<std::string, int64_t> p = vectorPoint(kappa, sigma, rows, 0);
    p["vector_interleave"] = 1;
    p["vector_channels_first"] = 1;
    if (split > 1) p["vector_split"] = split;
    return p;
  };
  const ConvLayer conv5_1 = vgg16Layers()[10];
  REQUIRE(conv5_1.name == "conv5_1");
  CHECK(cost(conv5_1, point(4, 2, 14, 8), gpu) * 3 < cost(conv5_1, point(4, 2, 14, 1), gpu));
  std::optional<CostPrediction> split = predictLayerVariantCost(conv5_1, point(4, 2, 14, 8), gpu);
  REQUIRE(split);
  REQUIRE(split->kernels.size() == 3);
  CHECK(split->kernels[2].name == "final sum");
  const ConvLayer conv1_2 = vgg16Layers()[1];
  CHECK(cost(conv1_2, point(4, 7, 2, 4), gpu) > cost(conv1_2, point(4, 7, 2, 1), gpu));
}

TEST_CASE("accumulators past the register budget spill") {
  host::DeviceProfile small = host::loadProfile("pocl-cpu");
  const ConvLayer conv3_1 = parseConvLayer("vgg16:10");
  std::optional<CostPrediction> fits =
      predictLayerVariantCost(conv3_1, vectorPoint(16, 8, 7), small);
  REQUIRE(fits);
  CHECK(fits->spillFactor == 1);
  small.registersPerWorkItem = 4 * small.nativeFloatVectorWidth;  // 4 vector accumulators
  std::optional<CostPrediction> spills =
      predictLayerVariantCost(conv3_1, vectorPoint(16, 8, 7), small);
  REQUIRE(spills);
  CHECK(spills->spillFactor > 1);
  CHECK(spills->seconds > fits->seconds);
}

TEST_CASE("a window row's unrolled taps load each input value once") {
  const host::DeviceProfile pocl = host::loadProfile("pocl-cpu");
  const ConvLayer conv3_2 = parseConvLayer("vgg16:12");
  std::map<std::string, int64_t> rowUnrolled = vectorPoint(16, 8, 2);
  rowUnrolled["vector_row_unroll"] = 1;
  std::optional<CostPrediction> plain =
      predictLayerVariantCost(conv3_2, vectorPoint(16, 8, 2), pocl);
  std::optional<CostPrediction> unrolled = predictLayerVariantCost(conv3_2, rowUnrolled, pocl);
  REQUIRE(plain);
  REQUIRE(unrolled);
  // σ = 8, K = 3: (8 + 2) / 3 broadcasts per window element instead of 8, one weight vector.
  CHECK(unrolled->flopsPerLoad == doctest::Approx(2.0 * 8 * 16 / (10.0 / 3 + 1)));
  CHECK(plain->flopsPerLoad == doctest::Approx(2.0 * 8 * 16 / 9.0));
  CHECK(unrolled->seconds <= plain->seconds);
  // Where the loads are the limit (κ = 4: one FMA per pixel and window element), it is faster.
  std::map<std::string, int64_t> narrowUnrolled = vectorPoint(4, 8, 2);
  narrowUnrolled["vector_row_unroll"] = 1;
  std::optional<CostPrediction> narrow =
      predictLayerVariantCost(conv3_2, vectorPoint(4, 8, 2), pocl);
  std::optional<CostPrediction> narrowRow = predictLayerVariantCost(conv3_2, narrowUnrolled, pocl);
  REQUIRE(narrow);
  REQUIRE(narrowRow);
  CHECK(narrow->kernels.back().limit == "loads");
  CHECK(narrowRow->seconds < narrow->seconds);
}

TEST_CASE("output planes 4 KiB-multiples apart conflict past the probe's store streams") {
  host::DeviceProfile probed = host::loadProfile("pocl-cpu");
  probed.conflictFreeStoreStreams = 12;
  probed.conflictingStoreCycles = 8;
  const host::DeviceProfile unknown = host::loadProfile("pocl-cpu");
  REQUIRE(unknown.conflictingStoreCycles == 0);
  const ConvLayer conv1_1 = parseConvLayer("vgg16:0");  // 224 x 224 x 4 bytes = 49 x 4 KiB
  const ConvLayer conv2_1 = parseConvLayer("vgg16:5");  // 112 x 112 x 4 bytes: 12.25 x 4 KiB
  // κ 16 stores into 16 planes, more than 12: every one of the 64 x 224 x 224 stores loses
  // 8 cycles over 2 compute units at the profile's clock.
  const double extra = 64.0 * 224 * 224 * 8 / 2 / (probed.maxClockMHz * 1e6);
  std::optional<CostPrediction> wide = predictLayerVariantCost(conv1_1, vectorPoint(16, 8, 7), probed);
  REQUIRE(wide);
  CHECK(wide->seconds == doctest::Approx(cost(conv1_1, vectorPoint(16, 8, 7), unknown) + extra));
  CHECK(wide->kernels.back().limit == "conflicting output stores");
  // κ 8 stays within the streams; other planes do not alias; an unknown profile counts nothing.
  CHECK(cost(conv1_1, vectorPoint(8, 8, 7), probed) ==
        doctest::Approx(cost(conv1_1, vectorPoint(8, 8, 7), unknown)));
  CHECK(cost(conv2_1, vectorPoint(16, 8, 7), probed) ==
        doctest::Approx(cost(conv2_1, vectorPoint(16, 8, 7), unknown)));
  // So on conv1_1 (3 input channels, few FMAs per output) κ 8 comes first, as measured.
  CHECK(cost(conv1_1, vectorPoint(8, 8, 7), probed) < cost(conv1_1, vectorPoint(16, 8, 7), probed));
  CHECK(cost(conv1_1, vectorPoint(8, 8, 7), unknown) > cost(conv1_1, vectorPoint(16, 8, 7), unknown));
}

TEST_CASE("work-groups that leave a compute unit idle cost more") {
  const host::DeviceProfile pocl = host::loadProfile("pocl-cpu");  // 2 compute units
  const ConvLayer tiny = parseConvLayer("8,14,14,16,3,1,1");
  // κ = 16, rows = 14: one work-group for 2 compute units.
  std::optional<CostPrediction> one = predictLayerVariantCost(tiny, vectorPoint(16, 7, 14), pocl);
  std::optional<CostPrediction> two = predictLayerVariantCost(tiny, vectorPoint(16, 7, 7), pocl);
  REQUIRE(one);
  REQUIRE(two);
  CHECK(one->balanceFactor == doctest::Approx(2.0));
  CHECK(two->balanceFactor == doctest::Approx(1.0));
}

TEST_CASE("orderFamiliesTakingTurns: families in turn near the cheapest, the rest by cost") {
  // Family 0: 1, 2, 2.5, 10; family 1: 2.8, 2.9, 5 (near: within 3x of 1).
  const std::vector<std::optional<double>> costs = {10.0, 2.8, 1.0, 5.0, 2.5, 2.9, 2.0};
  const std::vector<size_t> families = {0, 1, 0, 1, 0, 1, 0};
  CHECK(orderFamiliesTakingTurns(costs, families) == std::vector<size_t>{2, 1, 6, 5, 4, 3, 0});
  CHECK(orderFamiliesTakingTurns(costs, {}) == orderByPredictedCost(costs));
  // Random costs and families: a permutation; each family's points in ascending cost; every
  // point within the factor of the cheapest before every other; unknown costs last.
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 40;
    std::vector<std::optional<double>> random;
    std::vector<size_t> randomFamilies;
    for (size_t i = 0; i < n; ++i) {
      if (rng() % 8 == 0) {
        random.push_back(std::nullopt);
      } else {
        random.push_back(1.0 + static_cast<double>(rng() % 100) / 10.0);
      }
      randomFamilies.push_back(rng() % 3);
    }
    const std::vector<size_t> order = orderFamiliesTakingTurns(random, randomFamilies);
    std::vector<size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<size_t> identity(n);
    std::iota(identity.begin(), identity.end(), size_t{0});
    REQUIRE(sorted == identity);
    double cheapest = std::numeric_limits<double>::infinity();
    for (const auto& c : random) {
      if (c) cheapest = std::min(cheapest, *c);
    }
    auto near = [&](size_t i) {
      return random[i].has_value() && *random[i] <= kFamiliesTakeTurnsWithin * cheapest;
    };
    for (size_t a = 0; a < n; ++a) {
      for (size_t b = a + 1; b < n; ++b) {
        const size_t i = order[a], j = order[b];
        CHECK_FALSE((near(j) && !near(i)));
        if (!random[i]) {
          CHECK_FALSE(random[j].has_value());  // never an unknown before a known
          continue;
        }
        if (!random[j]) continue;
        if (randomFamilies[i] == randomFamilies[j]) CHECK(*random[i] <= *random[j]);
        if (!near(i)) CHECK(*random[i] <= *random[j]);
      }
    }
  }
}

TEST_CASE("layer sizes and recorded parameters") {
  for (const ConvLayer& layer : vgg16Layers()) {
    std::optional<ConvLayer> back = convLayerFromSizes(convListing3Sizes(layer));
    REQUIRE(back);
    CHECK(back->C == layer.C);
    CHECK(back->H == layer.H);
    CHECK(back->W == layer.W);
    CHECK(back->M == layer.M);
    CHECK(back->K == layer.K);
    CHECK(back->pad == layer.pad);
    CHECK(back->stride == layer.stride);
  }
  ArithBinding missing = convListing3Sizes(parseConvLayer("vgg16:0"));
  missing.erase("M");
  CHECK_FALSE(convLayerFromSizes(missing));
  CHECK_FALSE(convLayerFromSizes({{"N", 1024}}));
  std::map<std::string, int64_t> parsed =
      parseRecordedParameters(R"({"kappa":4,"v":2,"note":"x","f":1.5})");
  CHECK(parsed == std::map<std::string, int64_t>{{"kappa", 4}, {"v", 2}});
  CHECK_THROWS_AS(parseRecordedParameters("[1,2]"), std::invalid_argument);
}

TEST_CASE("predictions are cheap") {
  const host::DeviceProfile pocl = host::loadProfile("pocl-cpu");
  const ConvLayer conv1_2 = parseConvLayer("vgg16:2");
  const auto start = std::chrono::steady_clock::now();
  double sum = 0;
  for (int i = 0; i < 10000; ++i) sum += cost(conv1_2, vectorPoint(16, 4 + i % 4, 7), pocl);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(sum > 0);
  CHECK(seconds / 10000 < 1e-3);  // far below a millisecond per point even on a loaded machine
}

TEST_CASE("measuring in cost order measures the same points, shard by shard") {
  const ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  ExploreTarget target = layerTargetStructures(layer, {1, 4}, {0}, &profile);
  SampledTarget sampled = sampleTarget(target, profile, 40, 3);
  REQUIRE(sampled.points.size() == 40);
  Preparation prep;
  prep.target = target;
  prep.device = profile;
  prep.spaces = sampled.spaces;
  prep.spaceStructure = sampled.spaceStructure;
  prep.pointSpace = sampled.pointSpace;
  prep.points = sampled.points;
  prep.space = prep.spaces.front();
  const std::vector<std::optional<double>> costs = predictedCosts(prep);
  REQUIRE(costs.size() == prep.points.size());
  for (const std::optional<double>& c : costs) CHECK(c.has_value());
  // Pending points as after a resume: some already done (every third).
  std::vector<size_t> pending;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    if (i % 3 != 0) pending.push_back(i);
  }
  CHECK(measurementOrder(pending, costs, SampleOrder::Random) == pending);
  std::vector<size_t> ordered = measurementOrder(pending, costs, SampleOrder::Cost);
  // With the points' families: the same set, each family in ascending cost.
  const std::vector<size_t> families = pointFamilies(prep);
  std::vector<size_t> inTurns = measurementOrder(pending, costs, SampleOrder::Cost, families);
  std::vector<size_t> inTurnsSorted = inTurns;
  std::sort(inTurnsSorted.begin(), inTurnsSorted.end());
  CHECK(inTurnsSorted == pending);
  for (size_t a = 0; a < inTurns.size(); ++a) {
    for (size_t b = a + 1; b < inTurns.size(); ++b) {
      if (families[inTurns[a]] == families[inTurns[b]]) {
        CHECK(*costs[inTurns[a]] <= *costs[inTurns[b]]);
      }
    }
  }
  std::vector<size_t> sortedBack = ordered;
  std::sort(sortedBack.begin(), sortedBack.end());
  CHECK(sortedBack == pending);  // the same set: nothing re-measured, nothing lost
  for (size_t k = 1; k < ordered.size(); ++k) CHECK(*costs[ordered[k - 1]] <= *costs[ordered[k]]);
  // The vector family (far cheaper) comes first.
  const ExploreTarget::Structure& first =
      target.structures[prep.spaceStructure[prep.pointSpace[ordered.front()]]];
  CHECK(first.family == "register-blocked-vector");
  // Shards split the sampled list before ordering: each shard's cost order is a permutation of
  // exactly its share, and the shards together are the whole list.
  std::set<size_t> covered;
  for (size_t shard = 0; shard < 3; ++shard) {
    std::vector<size_t> share;
    for (size_t i = shard; i < prep.points.size(); i += 3) share.push_back(i);
    std::vector<size_t> shardOrder = measurementOrder(share, costs, SampleOrder::Cost);
    std::vector<size_t> back = shardOrder;
    std::sort(back.begin(), back.end());
    CHECK(back == share);
    covered.insert(shardOrder.begin(), shardOrder.end());
  }
  CHECK(covered.size() == prep.points.size());
  // A target without a cost model (a workload that has none): no prediction, the sampled
  // order kept.
  Preparation notLayer = prep;
  notLayer.target.predictSeconds = nullptr;
  for (const std::optional<double>& c : predictedCosts(notLayer)) CHECK_FALSE(c.has_value());
  CHECK(measurementOrder(pending, predictedCosts(notLayer), SampleOrder::Cost) == pending);
}

TEST_CASE("order names") {
  CHECK(parseSampleOrder("cost") == SampleOrder::Cost);
  CHECK(parseSampleOrder("random") == SampleOrder::Random);
  CHECK_FALSE(parseSampleOrder("fastest"));
  CHECK(std::string(sampleOrderName(SampleOrder::Cost)) == "cost");
  CHECK(std::string(sampleOrderName(SampleOrder::Random)) == "random");
  CHECK(ExploreOptions{}.order == SampleOrder::Cost);
}
