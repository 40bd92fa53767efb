// Tests of explore::sampleTarget over a layer's structure union with three families (conv-direct,
// the register-blocked vector family and Winograd): each family present gets an equal share of
// the samples, or all its points when it has fewer
// (one family's far larger count must not crowd the other out), samples are valid points of
// their structure's space, distinct, and reproducible from the seed; vector structures record
// vector_kappa, vector_sigma and vector_pad_in_loads (both 0 and 1 offered) and rebuild through
// layerStructureTarget, also from records without vector_pad_in_loads (older ones: 0), and
// vector_row_unroll where it is 1 (both orders of the window's loops offered).
#include <doctest/doctest.h>

#include <map>
#include <set>

#include "explore/explorer.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;
using namespace weft::explore;

TEST_CASE("three families share the samples; points are valid, distinct and reproducible") {
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  ExploreTarget target = layerTargetStructures(layer, {4}, {0}, &cpu);
  REQUIRE(target.structures.size() > 1);
  size_t vectorStructures = 0;
  std::set<int64_t> padInLoadsSeen, rowUnrollSeen;
  for (const ExploreTarget::Structure& s : target.structures) {
    if (s.family == "register-blocked-vector") {
      ++vectorStructures;
      CHECK(s.fixedParameters.count("vector_kappa"));
      CHECK(s.fixedParameters.count("vector_sigma"));
      REQUIRE(s.fixedParameters.count("vector_pad_in_loads"));
      padInLoadsSeen.insert(s.fixedParameters.at("vector_pad_in_loads"));
      // vector_row_unroll is recorded only where it is 1 (absent: 0, as in older records).
      const bool rowUnroll = s.fixedParameters.count("vector_row_unroll") != 0;
      if (rowUnroll) CHECK(s.fixedParameters.at("vector_row_unroll") == 1);
      rowUnrollSeen.insert(rowUnroll ? 1 : 0);
      // The recorded fixed parameters rebuild the same structure.
      ExploreTarget rebuilt = layerStructureTarget(layer, s.fixedParameters);
      CHECK(rebuilt.fixedParameters == s.fixedParameters);
      CHECK(printDefinition(rebuilt.parametric) == printDefinition(s.parametric));
      if (s.fixedParameters.at("vector_pad_in_loads") == 0) {
        // A record made before pad_in_loads existed (no such key) means 0: the same program.
        std::map<std::string, int64_t> old = s.fixedParameters;
        old.erase("vector_pad_in_loads");
        ExploreTarget fromOld = layerStructureTarget(layer, old);
        CHECK(fromOld.fixedParameters == old);
        CHECK(printDefinition(fromOld.parametric) == printDefinition(s.parametric));
      }
    }
  }
  REQUIRE(vectorStructures > 0);
  // Both settings of pad_in_loads are structures of the family, for every (κ, σ).
  CHECK(padInLoadsSeen == std::set<int64_t>{0, 1});
  CHECK(rowUnrollSeen == std::set<int64_t>{0, 1});
  CHECK(vectorStructures % 4 == 0);
  host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  SampledTarget sampled = sampleTarget(target, profile, 60, 5);
  REQUIRE(sampled.points.size() == 60);
  size_t inVector = 0, inWinograd = 0;
  std::set<std::pair<size_t, std::vector<int64_t>>> distinct;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t space = sampled.pointSpace[j];
    const ExploreTarget::Structure& structure = target.structures[sampled.spaceStructure[space]];
    if (structure.family == "register-blocked-vector") ++inVector;
    if (structure.family == "winograd") ++inWinograd;
    CHECK(sampled.spaces[space].violations(sampled.points[j]).empty());
    distinct.insert({space, sampled.points[j]});
  }
  CHECK(distinct.size() == sampled.points.size());
  // Every family has more than 20 points here (Winograd's tiles of 2 and, partial, of 4, in
  // blocks of σ = 1 to 4 tiles): the three split the 60 samples equally.
  CHECK(inWinograd == 20);
  CHECK(inVector == 20);
  // A count the families do not divide: the extra samples go to some of them.
  SampledTarget odd = sampleTarget(target, profile, 7, 11);
  size_t oddVector = 0;
  for (size_t j = 0; j < odd.points.size(); ++j) {
    const ExploreTarget::Structure& structure =
        target.structures[odd.spaceStructure[odd.pointSpace[j]]];
    if (structure.family == "register-blocked-vector") ++oddVector;
  }
  CHECK(odd.points.size() == 7);
  CHECK((oddVector == 2 || oddVector == 3));
  SampledTarget again = sampleTarget(target, profile, 60, 5);
  CHECK(again.points == sampled.points);
  CHECK(again.pointSpace == sampled.pointSpace);
}

TEST_CASE("a family with fewer points than its share gives all of them, the rest go to others") {
  // A 2×2 output: Winograd has one tile of 2 (σ = 1, one tile row) per κ, a handful of points.
  ConvLayer layer = parseConvLayer("8,4,4,16,3,1,0");
  REQUIRE(layer.outW() == 2);
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  ExploreTarget target = layerTargetStructures(layer, {4}, {0}, &cpu);
  auto winogradCount = [&](const SampledTarget& sampled) {
    size_t count = 0;
    for (size_t j = 0; j < sampled.points.size(); ++j) {
      count += target.structures[sampled.spaceStructure[sampled.pointSpace[j]]].family == "winograd";
    }
    return count;
  };
  const SampledTarget sampled = sampleTarget(target, cpu, 60, 2);
  size_t winogradPoints = 0;  // its points without local sizes (what sampling is uniform over)
  for (size_t i = 0; i < sampled.spaces.size(); ++i) {
    if (target.structures[sampled.spaceStructure[i]].family == "winograd") {
      winogradPoints += sampled.counts[i].points;
    }
  }
  REQUIRE(winogradPoints > 0);
  REQUIRE(winogradPoints < 20);
  REQUIRE(sampled.validPoints > 60);  // more points than asked for: local sizes add none
  CHECK(sampled.points.size() == 60);
  CHECK(winogradCount(sampled) == winogradPoints);
}

TEST_CASE("structures whose spaces differ only in code share one count, and their samples") {
  // conv-direct's unroll switch changes the generated code, not the parameters or constraints:
  // both structures have the same sampling key, so sampleTarget counts that space once.
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  ExploreTarget target = layerTargetStructures(layer, {1, 4}, {0, 1});
  REQUIRE(target.structures.size() == 4);
  host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  SpaceOptions options;
  options.powerOfTwo = target.powerOfTwo;
  options.device = profile;
  std::map<int64_t, std::set<std::string>> keysByV;
  for (const ExploreTarget::Structure& s : target.structures) {
    options.switches = s.switches;
    keysByV[s.fixedParameters.at("v")].insert(
        buildParameterSpace(s.parametric, target.sizes, options).samplingKey());
  }
  REQUIRE(keysByV.size() == 2);
  CHECK(keysByV[1].size() == 1);  // unroll 0 and 1: one key
  CHECK(keysByV[4].size() == 1);
  CHECK(*keysByV[1].begin() != *keysByV[4].begin());  // v = 4 adds constraints
  // Sampling from the shared sampler still gives each structure valid, distinct points of its
  // own, reproducibly.
  SampledTarget sampled = sampleTarget(target, profile, 40, 9);
  REQUIRE(sampled.points.size() == 40);
  std::set<std::pair<size_t, std::vector<int64_t>>> distinct;
  std::set<size_t> spacesUsed;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    CHECK(sampled.spaces[sampled.pointSpace[j]].violations(sampled.points[j]).empty());
    distinct.insert({sampled.pointSpace[j], sampled.points[j]});
    spacesUsed.insert(sampled.pointSpace[j]);
  }
  CHECK(distinct.size() == sampled.points.size());
  CHECK(spacesUsed.size() == 4);
  CHECK(sampleTarget(target, profile, 40, 9).points == sampled.points);
}

TEST_CASE("unrolled reductions are capped at SpaceOptions::maxUnrolledIterations") {
  // conv-direct with unroll = 1 unrolls both reductions: the partial convolution over omega
  // window elements (v = 1: omega iterations) and the sum of the C*K*K/omega partial results.
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");  // C*K*K = 72
  ExploreTarget target = layerTargetStructures(layer, {1}, {0, 1});
  REQUIRE(target.structures.size() == 2);
  SpaceOptions options;
  options.powerOfTwo = target.powerOfTwo;
  options.device = host::loadProfile("pocl-cpu");
  auto capsOf = [](const ParameterSpace& space) {
    std::set<std::string> caps;
    for (const SpaceConstraint& c : space.constraints) {
      if (c.constraint.origin == "unrolled reduction") caps.insert(c.constraint.formula());
    }
    return caps;
  };
  for (const ExploreTarget::Structure& s : target.structures) {
    options.switches = s.switches;
    options.maxUnrolledIterations = 12;
    ParameterSpace capped = buildParameterSpace(s.parametric, target.sizes, options);
    options.maxUnrolledIterations = 0;
    ParameterSpace free = buildParameterSpace(s.parametric, target.sizes, options);
    CHECK(capsOf(free).empty());
    if (s.fixedParameters.at("unroll") == 0) {
      CHECK(capsOf(capped).empty());
      continue;
    }
    int omega = -1;  // the parameter is named after the rule's variable, e.g. omega6
    for (size_t p = 0; p < capped.parameters.size(); ++p) {
      if (capped.parameters[p].name.rfind("omega", 0) == 0) omega = static_cast<int>(p);
    }
    REQUIRE(omega >= 0);
    const std::string name = capped.parameters[static_cast<size_t>(omega)].name;
    CHECK(capsOf(capped) ==
          std::set<std::string>{name + " <= 12", "72/" + name + " <= 12"});
    Sampler cappedSampler(capped), freeSampler(free);
    const uint64_t cappedCount = cappedSampler.count(UINT64_MAX).points;
    CHECK(cappedCount > 0);
    CHECK(cappedCount < freeSampler.count(UINT64_MAX).points);
    for (const std::vector<int64_t>& point : cappedSampler.sample(20, 3).points) {
      const int64_t value = point[static_cast<size_t>(omega)];
      CHECK(value <= 12);
      CHECK(72 / value <= 12);
    }
  }
}

TEST_CASE("a recorded structure that names no family is refused") {
  ConvLayer layer = parseConvLayer("8,14,14,16,3,1,1");
  CHECK_THROWS_AS(layerStructureTarget(layer, {{"kappa", 4}}), std::runtime_error);
}

TEST_CASE(
    "unrolled maps that write memory are capped; on a CPU those that write registers only at "
    "SpaceOptions::maxUnrolledRegisterIterations") {
  // A row of N values mapped unrolled per work-item, written to the output (global memory), or
  // computed in registers (toPrivate) and copied out by a loop. Unrolled into memory, a row of
  // a size (a searched map of 32768 elements per work-item) made 3.4 MB of OpenCL that PoCL
  // built for 100 s; in registers on a GPU (a searched matmul's row of accumulators) NVIDIA's
  // compiler took 86-91 s and spilled, while on a CPU the register budget bounds the row.
  Program toMemory = parseProgram(
      "def f(xss: [[float]N]M): [[float]N]M = "
      "mapGlb(0, row -> mapSeqUnroll(x -> x * 2.0f, row), xss)\n");
  Program toRegisters = parseProgram(
      "def f(xss: [[float]N]M): [[float]N]M = "
      "mapGlb(0, row -> toGlobal(r -> mapSeq(x -> id(x), r), "
      "toPrivate(r -> mapSeqUnroll(x -> x * 2.0f, r), row)), xss)\n");
  // The space's caps on unrolled maps, as formulas (one that always holds is dropped).
  auto mapCaps = [&](const Program& program, const std::string& profile, int64_t n) {
    SpaceOptions options;
    options.device = host::loadProfile(profile);
    const ParameterSpace space =
        buildParameterSpace(program.definitions[0], {{"N", n}, {"M", 64}}, options);
    std::vector<std::string> caps;
    for (const SpaceConstraint& c : space.constraints) {
      if (c.constraint.origin == "unrolled map") caps.push_back(c.constraint.formula());
    }
    return caps;
  };
  CHECK(mapCaps(toRegisters, "pocl-cpu", 1024).empty());
  // A row of a size is not in registers when the accumulator is a computed array in global
  // memory (the search's let-hoist of a reduction's initial value): the register budget does
  // not see it, the code-size cap does (an unrolled map over 4M accumulators took minutes and
  // 20 GiB to generate).
  CHECK(mapCaps(toRegisters, "pocl-cpu", 8192) == std::vector<std::string>{"8192 <= 4096"});
  Program globalAccumulator = parseProgram(
      "def f(xss: [[float]N]M, zs: [float]N): [[float]N]1 = "
      "let(acc -> reduceSeq(acc, (a, row) -> mapSeqUnroll(p -> p._0 + p._1, zip(a, row)), xss), "
      "mapGlb(0, z -> z * 0.0f, zs))\n");
  CHECK(mapCaps(globalAccumulator, "pocl-cpu", 1024).empty());
  CHECK(mapCaps(globalAccumulator, "pocl-cpu", 1 << 22) ==
        std::vector<std::string>{"4194304 <= 4096"});
  for (const std::string profile : {"pocl-cpu", "nvidia-hopper", "mali-g72"}) {
    CAPTURE(profile);
    CHECK(mapCaps(toMemory, profile, 64).empty());
    CHECK(mapCaps(toMemory, profile, 1024) == std::vector<std::string>{"1024 <= 256"});
    if (profile != "pocl-cpu") {
      CHECK(mapCaps(toRegisters, profile, 1024) == std::vector<std::string>{"1024 <= 256"});
    }
  }
}

TEST_CASE(
    "a structure with a few points and open local sizes gives samples up to its full points") {
  // A 2-D kernel with no tuning parameter of its own: one first-stage point, whose valid local
  // sizes are the points to sample (each counted by SpaceCount::withLaunchSizes).
  ExploreTarget target;
  target.program = "transpose";
  target.sizes = {{"M", 64}, {"N", 32}};
  ExploreTarget::Structure structure;
  structure.parametric =
      parseProgram("def t(a: [[float]N]M) = transpose(a)\n", "t.weft").definitions.back();
  structure.family = "as-written";
  target.structures.push_back(structure);
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");
  const SampledTarget sampled = sampleTarget(target, cpu, 8, 3);
  REQUIRE(sampled.counts.size() == 1);
  CHECK(sampled.counts[0].points == 1);
  REQUIRE(sampled.counts[0].withLaunchSizes.has_value());
  CHECK(*sampled.counts[0].withLaunchSizes > 8);
  REQUIRE(sampled.points.size() == 8);
  CHECK(std::set<std::vector<int64_t>>(sampled.points.begin(), sampled.points.end()).size() == 8);
  for (const std::vector<int64_t>& point : sampled.points) {
    CHECK(sampled.spaces[0].violations(point).empty());
  }
  CHECK_FALSE(sampled.fewerThanRequested);
}
