// A workload added from outside the engine (tests/support/scale_workload/) is registered with
// one call and explored end to end through the registry, as `weft explore` does: the registry
// finds it for its request, the explorer samples, builds, runs, verifies and times its
// variants on the default OpenCL device (PoCL), every row names the workload and strategy, and
// a recorded variant is rebuilt and compiled through the workload the registry says made it.
//
// Not an opencl_* test (see test_explorer_pocl.cpp): the explorer forks, so this process must
// not initialise OpenCL; `weft devices` looks for a device, and the exploration is skipped
// with a message where there is none.
#include <doctest/doctest.h>
#include <memory>
#include <set>
#include <string>

#include "explore/explorer.h"
#include "explore/variant_pick.h"
#include "explore/workload.h"
#include "tests/support/run_weft.h"
#include "tests/support/scale_workload/scale_workload.h"
#include "workloads/builtin_workloads.h"

using namespace weft;
using namespace weft::explore;

namespace {

void registerAll() {
  workloads::registerBuiltinWorkloads();
  registerWorkload(std::make_shared<testing::ScaleWorkload>());  // the one registration
}

}  // namespace

TEST_CASE("the registry serves a request by the workload that accepts it") {
  registerAll();
  WorkloadRequest scale;
  scale.instance = "scale:256";
  CHECK(workloadFor(scale)->name() == "test-scale");
  WorkloadRequest layer;
  layer.instance = "vgg16:2";
  CHECK(workloadFor(layer)->name() == "conv");
  WorkloadRequest nothing;
  CHECK_THROWS_WITH_AS(workloadFor(nothing), doctest::Contains("test-scale: scale:N"),
                       std::invalid_argument);
  CHECK(findWorkload("test-scale") != nullptr);
  CHECK(findWorkload("no-such-workload") == nullptr);
}

TEST_CASE("a test workload explored end to end through the registry") {
  registerAll();
  if (!testing::haveOpenCLDevice()) return;  // asked of `weft devices`, in a child
  WorkloadRequest request;
  request.instance = "scale:4096";
  const auto workload = workloadFor(request);
  const std::vector<ExploreTarget> targets = workload->targets(request, nullptr);
  REQUIRE(targets.size() == 1);

  testing::TempDir folder("weft_workload_plugin");
  ExploreOptions options;
  options.samples = 4;
  options.seed = 5;
  options.db = folder.path / "results.db";
  options.timeoutSeconds = 30;
  options.marginSeconds = 1;
  options.measurement.minMeasuredNs = 1'000'000;
  options.measurement.maxRepeats = 10;
  const ExploreSummary summary = explore::explore(targets.front(), options);
  CHECK(summary.sampled == 4);
  CHECK(summary.ran == 4);

  const ResultsSnapshot snapshot = readResultsSnapshot(options.db);
  REQUIRE(snapshot.variants.size() == 4);
  std::set<int64_t> chunks;
  for (const VariantRecord& row : snapshot.variants) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    CHECK(row.status == VariantStatus::Ok);
    CHECK(row.workload == "test-scale");
    CHECK(row.strategy == "chunked");
    CHECK(workloadOf(row) == workload);
    const auto parameters = parseRecordedParameters(row.key.parameters);
    REQUIRE(parameters.count("T"));
    chunks.insert(parameters.at("T"));
    // Its rows in reports come from the workload.
    const std::vector<ParameterRow> table = parameterTable(row);
    REQUIRE(table.size() == 1);
    CHECK(table.front().name == "Chunk length (T)");
  }
  CHECK(chunks.size() == 4);  // four different points

  // The fastest variant, picked by the instance's name and rebuilt by its workload.
  const PickedVariant picked = pickVariant(snapshot, "scale:4096", "", PickSpec{});
  CHECK(picked.record.key.program == "scale_4096");
  const CompiledProgram compiled = compileRecordedVariant(*workload, request, picked.record);
  CHECK(compiled.kernels.size() == 1);
  CHECK(compiled.source.find("3.0f") != std::string::npos);
}
