// The drop-in example (examples/dropin) built by CMake against files `weft emit` wrote, run on
// the OpenCL device, and checked against the independent convolution oracle of
// tests/support/conv_layer_reference.h: for a small layer at two parameter points (scalar and
// float4 vectors), and for the fastest and the smallest variant of a results database written
// here (two recorded variants with made-up times and sizes, so that the picks differ and the
// device fingerprint in the emitted comments is known). The example links nothing from weft.
// These conv-direct variants have no preparation kernels (PREFIX_prepare does nothing);
// tests/cli/opencl_dropin_explored.cpp covers one with a weight re-layout.
// Also: an empty database and an impossible budget give clear errors.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/results_db.h"
#include "workloads/conv/conv_layer.h"
#include "ir/npy.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/dropin_example.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace weft {
namespace {

const char* kLayer = "8,16,16,8,3,1,1";
const char* kPrefix = "weft_conv_8_16_16_8_3_1_1";
const char* kScalarPoint = "v=1,unroll=0,coalesce=0,kappa=4,omega=4,rho=0,sigma=2,theta=10";
const char* kVectorPoint = "v=4,unroll=1,coalesce=0,kappa=4,omega=8,rho=8,sigma=24,theta=14";

// Builds the example against `emitted`, runs it twice on the inputs (the second run must give
// the same answer: no state left over; the preparation runs once before both) and compares
// y.npy with the reference.
void buildRunAndCompare(const fs::path& emitted, const fs::path& build, const fs::path& data,
                        const ConvLayer& layer, const testing::ConvLayerData& values) {
  testing::buildDropinExample(emitted, kPrefix, build);
  testing::DropinRun run = testing::runDropinExample(build, data, "--repeat 2");
  REQUIRE_MESSAGE(run.exitCode == 0, run.output);
  CHECK(contains(run.output, "run 2 of 2"));
  CHECK_MESSAGE(contains(run.output, "prepare "), run.output);
  testing::checkDropinOutput(data, layer, values);
}

std::string canonical(const nlohmann::json& object) { return object.dump(); }

explore::VariantRecord okRecord(const std::string& program, const std::string& device,
                                const nlohmann::json& parameters, uint64_t ns, int64_t bytes) {
  explore::VariantRecord record;
  record.key = {program, device, explore::compilerVersion(), canonical(parameters)};
  record.status = explore::VariantStatus::Ok;
  record.samplesNs = {ns, ns};
  record.medianNs = ns;
  record.spaceBytes = bytes;
  record.attempts = 1;
  return record;
}

}  // namespace

TEST_CASE("the drop-in example runs two emitted parameter points and matches the reference") {
  TempDir dir("weft_opencl_emit");
  ConvLayer layer = parseConvLayer(kLayer);
  testing::ConvLayerData values = testing::randomConvLayerData(layer, 7);
  testing::writeListing3Inputs(layer, values, dir.path);
  const fs::path emitted = dir.path / "emitted";
  const fs::path build = dir.path / "build";
  for (const char* point : {kScalarPoint, kVectorPoint}) {
    CAPTURE(point);
    // The same folder each time: the build folder is configured once and rebuilt.
    CommandResult result =
        runWeft({"emit", "--layer", kLayer, "--params", point, "--out", emitted.string()});
    REQUIRE_MESSAGE(result.exitCode == 0, result.output);
    buildRunAndCompare(emitted, build, dir.path, layer, values);
  }
}

TEST_CASE("weft emit --db --pick exports the fastest and the smallest variant with their device") {
  TempDir dir("weft_opencl_emit_pick");
  ConvLayer layer = parseConvLayer(kLayer);
  const std::string program = "conv_8_16_16_8_3_1_1";
  const std::string device = "feedc0ffee123456";
  const fs::path db = dir.path / "results.db";
  {
    explore::ResultsDb results(db);
    nlohmann::json scalar = {{"v", 1},     {"unroll", 0}, {"coalesce", 0}, {"kappa", 4},
                             {"omega", 4}, {"rho", 0},    {"sigma", 2},    {"theta", 10}};
    nlohmann::json vector = {{"v", 4},     {"unroll", 1}, {"coalesce", 0}, {"kappa", 4},
                             {"omega", 8}, {"rho", 8},    {"sigma", 24},   {"theta", 14}};
    results.record(okRecord(program, device, scalar, 1'000'000, 400'000));  // fast, big
    results.record(okRecord(program, device, vector, 3'000'000, 200'000));  // slow, small
  }
  testing::ConvLayerData values = testing::randomConvLayerData(layer, 11);
  testing::writeListing3Inputs(layer, values, dir.path);
  const fs::path emitted = dir.path / "emitted";
  const fs::path build = dir.path / "build";
  for (const std::string pick : {"fastest", "smallest"}) {
    CAPTURE(pick);
    CommandResult result = runWeft({"emit", "--db", db.string(), "--layer", kLayer, "--pick", pick,
                                    "--out", emitted.string()});
    REQUIRE_MESSAGE(result.exitCode == 0, result.output);
    std::string header = readTextFile(emitted / (std::string(kPrefix) + ".h"));
    CHECK(contains(header, "fingerprint " + device));
    CHECK(contains(header, "--pick " + pick));
    CHECK(contains(header, pick == "fastest" ? "v=1, unroll=0" : "v=4, unroll=1"));
    auto manifest = nlohmann::json::parse(readTextFile(emitted / (std::string(kPrefix) + ".json")));
    CHECK(manifest["device"]["fingerprint"] == device);
    buildRunAndCompare(emitted, build, dir.path, layer, values);
  }

  CommandResult tooSmall = runWeft({"emit", "--db", db.string(), "--layer", kLayer, "--pick",
                                    "budget=1KB", "--out", (dir.path / "none").string()});
  CHECK(tooSmall.exitCode == 1);
  CHECK_MESSAGE(contains(tooSmall.output, "the smallest"), tooSmall.output);
  CHECK(contains(tooSmall.output, "0.200 MB"));  // 200000 bytes: the smallest recorded

  const fs::path empty = dir.path / "empty.db";
  { explore::ResultsDb created(empty); }
  CommandResult none = runWeft({"emit", "--db", empty.string(), "--layer", kLayer, "--pick",
                                "fastest", "--out", (dir.path / "none").string()});
  CHECK(none.exitCode == 1);
  CHECK_MESSAGE(contains(none.output, "no variants"), none.output);
  CHECK_FALSE(fs::exists(dir.path / "none"));
}

}  // namespace weft
