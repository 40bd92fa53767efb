// Tests of explore::StructureSampling: counting and sampling a layer's structures in forked
// workers gives exactly what one process gives (the same counts, errors and points, whatever
// the number of workers), spaces that share a sampling key share their count, and sampleTarget
// draws the same points as before with workers.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include "explore/explorer.h"
#include "explore/parameter_space.h"
#include "explore/structure_sampling.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"

using namespace weft;
using namespace weft::explore;

namespace {

struct Spaces {
  std::vector<std::unique_ptr<ParameterSpace>> owned;
  std::vector<const ParameterSpace*> pointers;
};

// Every structure's space of a small layer on a GPU profile (three families, launch sizes).
Spaces layerSpaces() {
  static const host::DeviceProfile gpu = host::loadProfile("nvidia-hopper");
  const ConvLayer layer = parseConvLayer("16,14,14,32,3,1,1");
  const ExploreTarget target = layerTargetStructures(layer, {4}, {0}, &gpu);
  Spaces spaces;
  for (const ExploreTarget::Structure& structure : target.structures) {
    SpaceOptions options;
    options.switches = structure.switches;
    options.powerOfTwo = target.powerOfTwo;
    options.device = gpu;
    try {
      spaces.owned.push_back(std::make_unique<ParameterSpace>(
          buildParameterSpace(structure.parametric, target.sizes, options)));
      spaces.pointers.push_back(spaces.owned.back().get());
    } catch (const std::exception&) {
      // a structure the profile rules out: not counted
    }
  }
  return spaces;
}

}  // namespace

TEST_CASE("workers count and sample exactly what one process does") {
  Spaces spaces = layerSpaces();
  REQUIRE(spaces.pointers.size() > 8);
  StructureSampling alone(spaces.pointers, {}, 1);
  StructureSampling shared(spaces.pointers, {}, 3);
  const std::vector<CountedSpace> one = alone.count();
  const std::vector<CountedSpace> three = shared.count();
  REQUIRE(one.size() == spaces.pointers.size());
  REQUIRE(three.size() == one.size());
  CHECK(alone.workersThatCounted() == 0);
  CHECK(shared.workersThatCounted() == 3);
  std::vector<size_t> wanted(one.size(), 0);
  std::vector<uint64_t> seeds(one.size(), 0);
  size_t counted = 0;
  for (size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].error == three[i].error);
    REQUIRE(one[i].count.has_value() == three[i].count.has_value());
    if (!one[i].count) continue;
    CHECK(one[i].count->points == three[i].count->points);
    CHECK(one[i].count->exact == three[i].count->exact);
    CHECK(one[i].count->method == three[i].count->method);
    CHECK(one[i].count->nodesVisited == three[i].count->nodesVisited);
    CHECK(one[i].count->withLaunchSizes == three[i].count->withLaunchSizes);
    if (one[i].count->points == 0) continue;
    ++counted;
    wanted[i] = 1 + i % 3;  // some spaces get none, most a few
    if (i % 5 == 0) wanted[i] = 0;
    seeds[i] = 1000 + i;
  }
  REQUIRE(counted > 4);
  const std::vector<SampleSet> a = alone.sample(wanted, seeds);
  const std::vector<SampleSet> b = shared.sample(wanted, seeds);
  REQUIRE(a.size() == b.size());
  size_t drawn = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].points == b[i].points);
    CHECK(a[i].method == b[i].method);
    if (wanted[i] == 0) CHECK(a[i].points.empty());
    drawn += a[i].points.size();
  }
  CHECK(drawn > 0);
}

TEST_CASE("each distinct space counted is reported as it comes, with or without workers") {
  Spaces spaces = layerSpaces();
  REQUIRE(spaces.pointers.size() > 8);
  for (size_t workers : {size_t(1), size_t(3)}) {
    CAPTURE(workers);
    std::vector<std::pair<size_t, size_t>> reports;
    SamplerOptions options;
    options.onSpaceCounted = [&](size_t counted, size_t all) { reports.push_back({counted, all}); };
    StructureSampling sampling(spaces.pointers, options, workers);
    const std::vector<CountedSpace> counted = sampling.count();
    CHECK(sampling.workersThatCounted() == (workers == 1 ? 0 : workers));
    REQUIRE(!reports.empty());
    const size_t distinct = reports.front().second;
    CHECK(distinct <= spaces.pointers.size());
    REQUIRE(reports.size() == distinct);  // once per distinct space, in order
    for (size_t i = 0; i < reports.size(); ++i) {
      CHECK(reports[i].first == i + 1);
      CHECK(reports[i].second == distinct);
    }
    CHECK(counted.size() == spaces.pointers.size());
  }
}

TEST_CASE("sampling without workers left running (count not called) draws in this process") {
  Spaces spaces = layerSpaces();
  StructureSampling withWorkers(spaces.pointers, {}, 2);
  StructureSampling alone(spaces.pointers, {}, 1);
  std::vector<size_t> wanted(spaces.pointers.size(), 0);
  std::vector<uint64_t> seeds(spaces.pointers.size(), 7);
  const std::vector<CountedSpace> counts = alone.count();
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i].count && counts[i].count->points > 0) wanted[i] = 2;
  }
  const std::vector<SampleSet> a = alone.sample(wanted, seeds);
  const std::vector<SampleSet> b = withWorkers.sample(wanted, seeds);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i].points == b[i].points);
}

TEST_CASE("workers: none for a few spaces, at most the cores and 16") {
  const size_t cores = std::max<size_t>(std::thread::hardware_concurrency(), 1);
  CHECK(samplingWorkers(3) == 1);
  CHECK(samplingWorkers(1000) == std::min<size_t>(cores, 16));
  CHECK(samplingWorkers(8) == std::min<size_t>(cores, 2));  // four spaces a worker at least
}
