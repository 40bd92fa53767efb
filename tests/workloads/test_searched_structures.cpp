// Tests of the program workload's searched structures (workloads/pipeline/searched_structures.h):
// each records its canonical hash and rule sequence and is rebuilt from them; exploring on a
// device gives register blocks numbers from its registers; the reads cost model predicts every
// sampled point of matmul's register-blocked vector structures (their tuning values recorded
// under their stems, chunk1 as chunk) and predicts them cheaper than the program as written;
// a point of no known structure gets no prediction. A program without reductions explored by
// the program workload gets the memory model instead (workloads/pipeline/pipeline_cost_model.h):
// every sampled point predicted, small work-groups slower than large ones, and the candidates it
// keeps the same whatever the probe measured. A program with reductions explored by it adds to
// its reads the cache lines loaded again (an untiled matmul at 1024³: a line of B per
// multiply-add).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "host/device_profile.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "workloads/pipeline/pipeline_workload.h"
#include "workloads/pipeline/searched_structures.h"

using namespace weft;
using namespace weft::explore;

namespace {

Definition matmul() {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/matmul.weft").definitions.back();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("on a device, register blocks get σ from its registers, and the search keeps them") {
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  rewrite::SearchOptions options = explorationSearchOptions(&profile);
  // 384 registers, float16: (384 - 32) / 16 = 22 blocks at most: 16 and 8.
  const auto& blocks = options.argumentChoices.at("map2d-kernel-blocking");
  bool sixteen = false, eight = false;
  for (const rewrite::RuleArguments& arguments : blocks) {
    std::map<std::string, int64_t> values;
    for (const auto& [name, value] : arguments) values[name] = *value.constant();
    CHECK(values.at("sigma") * values.at("kappa") + 2 * values.at("kappa") <= 384);
    sixteen = sixteen || (values.at("kappa") == 16 && values.at("sigma") == 16);
    eight = eight || (values.at("kappa") == 16 && values.at("sigma") == 8);
  }
  CHECK(sixteen);
  CHECK(eight);

  const ArithBinding sizes = {{"M", 256}, {"N", 256}, {"K", 256}};
  options.maxLoweringsPerProgram = 1;
  std::vector<ExploreTarget::Structure> structures = searchedStructures(matmul(), sizes, options);
  int blocked = 0;
  for (const ExploreTarget::Structure& s : structures) {
    CHECK(s.needsGeneration);
    CHECK(s.strategy.rfind("rewrite: ", 0) == 0);
    if (contains(s.strategy, "vectorize-block-accumulators")) ++blocked;
  }
  CHECK(blocked >= 2);
}

TEST_CASE("the reads cost model predicts sampled points and ranks blocked vectors first") {
  const Definition program = matmul();
  const ArithBinding sizes = {{"M", 256}, {"N", 256}, {"K", 256}};
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  rewrite::SearchOptions options = explorationSearchOptions(&profile);
  options.maxLoweringsPerProgram = 0;
  ExploreTarget target = programTarget(program, sizes);
  target.structures.push_back({target.parametric, target.switches, {}, "as written", "as-written"});
  for (ExploreTarget::Structure& s : searchedStructures(program, sizes, options)) {
    target.structures.push_back(std::move(s));
  }
  auto predict = readsCostModel(target.structures, sizes);
  const std::optional<double> asWritten = predict({}, profile);
  REQUIRE(asWritten);
  // 2·M·N·K values read at one per cycle per compute unit, each counted twice: the pairs zip
  // a row of A with a column of B, read through transpose(B).
  CHECK(*asWritten == doctest::Approx(2 * 2.0 * 256 * 256 * 256 /
                                      (profile.computeUnits * profile.maxClockMHz * 1e6)));
  SampledTarget sampled = sampleTarget(target, profile, 60, 3);
  int blockedPoints = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const ExploreTarget::Structure& structure =
        target.structures.at(sampled.spaceStructure.at(sampled.pointSpace.at(j)));
    const std::map<std::string, int64_t> parameters =
        parseRecordedParameters(parametersJson(sampled.spaces.at(sampled.pointSpace.at(j)),
                                               sampled.points[j], structure.fixedParameters));
    if (!contains(structure.strategy, "vectorize-block-accumulators")) continue;
    CAPTURE(structure.strategy);
    const std::optional<double> seconds = predict(parameters, profile);
    REQUIRE(seconds);
    CHECK(*seconds < *asWritten / 4);
    ++blockedPoints;
  }
  CHECK(blockedPoints > 0);
  CHECK_FALSE(predict({{"rewrite", 12345}}, profile).has_value());
}

TEST_CASE("the search starts from the program with its window shapes bound") {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const Definition conv =
      parseFile(std::string(root ? root : ".") + "/examples/conv.weft").definitions.back();
  const ArithBinding sizes = {{"C", 8}, {"H", 6}, {"W", 6}, {"M", 4}, {"K", 3}, {"P", 1}, {"S", 1}};
  const Definition bound = windowShapeSpecialised(conv, sizes);
  // K and S shape its windows: bound, each declared with its one value; the others stay.
  const std::string text = printDefinition(bound);
  CAPTURE(text);
  CHECK(text.find("slide2D(3, 1,") != std::string::npos);
  bool kDeclared = false;
  for (const Arith& declared : bound.sizeDeclarations) {
    if (declared.varName() == "K") {
      kDeclared = true;
      CHECK(declared.varLo() == Arith(3));
      CHECK(*declared.varHi() == Arith(3));
    }
  }
  CHECK(kDeclared);
  CHECK(text.find("[float]C") != std::string::npos);
  // A program without a symbolic window comes back as it is.
  const Definition product = matmul();
  CHECK(printDefinition(windowShapeSpecialised(product, {{"M", 4}, {"N", 4}, {"K", 4}})) ==
        printDefinition(product));
}

TEST_CASE("a program without reductions is ordered by the memory model") {
  WorkloadRequest request;
  request.program = parseProgram("def f(x: [float]N) = map(a -> a * 2.0f, x)").definitions.back();
  request.sizes = {{"N", 1 << 16}};
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  const std::vector<ExploreTarget> targets = pipelineWorkload()->targets(request, &profile);
  REQUIRE(targets.size() == 1);
  const ExploreTarget& target = targets.front();
  REQUIRE(target.predictSeconds);
  REQUIRE(target.structures.size() > 1);
  SampledTarget sampled = sampleTarget(target, profile, 20, 5);
  REQUIRE(sampled.points.size() > 10);
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const ExploreTarget::Structure& structure =
        target.structures.at(sampled.spaceStructure.at(sampled.pointSpace.at(j)));
    CAPTURE(structure.strategy);
    const std::optional<double> seconds = target.predictSeconds(
        parseRecordedParameters(parametersJson(sampled.spaces.at(sampled.pointSpace.at(j)),
                                               sampled.points[j], structure.fixedParameters)),
        profile);
    REQUIRE(seconds);
    CHECK(std::isfinite(*seconds));
    CHECK(*seconds > 0);
  }
  // The program as written, one work-item per element: groups of 2 cost more than of 256.
  const std::optional<double> pairs = target.predictSeconds({{"local_k0_d0", 2}}, profile);
  const std::optional<double> wide = target.predictSeconds({{"local_k0_d0", 256}}, profile);
  REQUIRE(pairs);
  REQUIRE(wide);
  CHECK(*pairs > 3 * *wide);

  // The kept candidates do not depend on what the probe measured (its rates are noise from run
  // to run): the same seed keeps the same points whatever the profile's measured figures.
  host::DeviceProfile probed = profile;
  probed.workGroupCycles = 5000;
  probed.memoryBytesPerCycle = 0.01;
  probed.vectorLoadsPerCycle = 0.5;
  const SampledTarget kept = sampleCandidates(target, profile, 20, 1, 8);
  const SampledTarget keptProbed = sampleCandidates(target, probed, 20, 1, 8);
  CHECK(kept.candidatesDrawn > 20);
  CHECK(kept.points == keptProbed.points);
  CHECK(kept.pointSpace == keptProbed.pointSpace);

  // Explored as written only, its local sizes are ordered by the same model.
  request.options["search"] = "off";
  const std::vector<ExploreTarget> asWritten = pipelineWorkload()->targets(request, &profile);
  REQUIRE(asWritten.size() == 1);
  REQUIRE(asWritten.front().predictSeconds);
  CHECK(*asWritten.front().predictSeconds({{"local_k0_d0", 2}}, profile) >
        3 * *asWritten.front().predictSeconds({{"local_k0_d0", 256}}, profile));
}

TEST_CASE("a program with reductions adds the memory that no cache keeps to its reads") {
  // At 1024³ a column of B (1024 lines) does not fit in a first-level cache between two
  // work-items: the program as written loads a line of B per multiply-add.
  WorkloadRequest request;
  request.program = matmul();
  request.sizes = {{"M", 1024}, {"N", 1024}, {"K", 1024}};
  request.options["search-depth"] = "1";
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  const std::vector<ExploreTarget> targets = pipelineWorkload()->targets(request, &profile);
  REQUIRE(targets.size() == 1);
  const ExploreTarget& target = targets.front();
  REQUIRE(target.predictSeconds);
  auto reads = readsCostModel(target.structures, request.sizes);
  const std::optional<double> readsOnly = reads({}, profile);
  const std::optional<double> withMemory = target.predictSeconds({}, profile);
  REQUIRE(readsOnly);
  REQUIRE(withMemory);
  // 2^30 lines of 64 bytes at the nominal 6 bytes per cycle and compute unit.
  const double reloads =
      1024.0 * 1024 * 1024 * 64 / (6.0 * profile.computeUnits * profile.maxClockMHz * 1e6);
  CHECK(*withMemory - *readsOnly == doctest::Approx(reloads).epsilon(0.05));
}
