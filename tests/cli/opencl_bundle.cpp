// The measurement bundle end to end on this machine's OpenCL device: `weft bundle` for a tiny
// layer (6 samples, profile pocl-cpu) samples the same points as `weft explore` with the same
// profile and seed (the same keys in the same order), the bundle builds
// from its own CMakeLists.txt (C warnings as errors) with nothing from weft, its harness runs
// every variant to status ok, a second run skips them all, the results import into a fresh
// database under the fingerprint the local exploration recorded (the imported rows have its
// program, device, compiler and parameter keys) and `weft report` lists them with a non-empty
// Pareto front. A planted failure (one variant's .cl edited to write garbage into the output) comes
// out as wrong_answer while the others stay ok. A bundle for the mali-g72 profile holds the
// GPU-only structures of the vector family (interleaved, channels-first, split) and the
// work-group-tiled family (unstaged), and runs them correctly; one for the nvidia-hopper profile
// holds work-group tiles staged in local memory and runs them correctly.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "tests/support/bundle_harness_build.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::shellQuote;
using weft::testing::TempDir;

namespace weft {
namespace {

const char* kLayer = "4,8,8,4,3,1,1";
const char* kProgram = "conv_4_8_8_4_3_1_1";

nlohmann::json readJson(const fs::path& path) {
  nlohmann::json json = nlohmann::json::parse(readTextFile(path), nullptr, false);
  REQUIRE_MESSAGE(!json.is_discarded(), path.string() << " is not JSON");
  return json;
}

// Status of every variant in a results file, by id.
std::map<std::string, std::string> statuses(const nlohmann::json& results) {
  std::map<std::string, std::string> out;
  for (const nlohmann::json& v : results["variants"]) out[v["id"]] = v["status"];
  return out;
}

// The bundle's harness built in `build` from the bundle's own CMakeLists.txt, C warnings as
// errors; returns its path, quoted for the shell.
std::string buildHarness(const fs::path& bundle, const fs::path& build, const fs::path& log) {
  return shellQuote(testing::buildBundleHarness(bundle, build, log).string());
}

using testing::plantInKernel;

}  // namespace

TEST_CASE("a bundle for a tiny layer builds, runs on the device, imports and reports") {
  TempDir dir("weft_opencl_bundle");
  const fs::path bundle = dir.path / "bundle";
  const fs::path log = dir.path / "log.txt";
  CommandResult written =
      runWeft({"bundle", "--layer", kLayer, "--samples", "6", "--seed", "3", "--profile",
               "pocl-cpu", "--out", bundle.string(), "--min-time-ms", "1"});
  REQUIRE_MESSAGE(written.exitCode == 0, written.output);
  const nlohmann::json variants = readJson(bundle / "variants.json");
  REQUIRE(variants["variants"].size() == 6);

  // `weft explore` with the same profile, seed and sample count records the same keys, in the
  // same order when it measures in the sampled order, --order random (a time limit of 10 ms per
  // phase kills every variant at once: only the keys matter here; the explorer queries the device
  // in a child, which this process, having initialised OpenCL, could not fork).
  const std::string exploredDb = (dir.path / "explored.db").string();
  CommandResult explored = runWeft({"explore", "--layer", kLayer, "--samples", "6", "--seed", "3",
                                    "--profile", "pocl-cpu", "--db", exploredDb, "--timeout",
                                    "0.01", "--jobs", "1", "--order", "random", "--quiet"});
  REQUIRE_MESSAGE(explored.exitCode == 0, explored.output);
  std::vector<explore::VariantRecord> exploredRows = explore::ResultsDb(exploredDb).variants();
  {
    std::vector<std::string> exploredKeys, bundledKeys;
    for (const explore::VariantRecord& row : exploredRows)
      exploredKeys.push_back(row.key.parameters);
    for (const nlohmann::json& v : variants["variants"]) {
      bundledKeys.push_back(nlohmann::json::parse(v["parameters"].dump()).dump());
    }
    CHECK(exploredKeys == bundledKeys);
    REQUIRE(!exploredRows.empty());
    CHECK(exploredRows.front().key.program == variants["program"]);
  }

  // Built from its own CMakeLists.txt, C warnings as errors.
  const std::string harness = buildHarness(bundle, dir.path / "build", log);
  REQUIRE_MESSAGE(testing::runLogged(harness + " " + shellQuote(bundle.string()), log) == 0, readTextFile(log));
  nlohmann::json results = readJson(bundle / "results.json");
  CHECK(results["program"] == kProgram);
  CHECK(results["reference"]["status"] == "ok");
  REQUIRE(results["variants"].size() == 6);
  for (const nlohmann::json& v : results["variants"]) {
    CHECK_MESSAGE(v["status"] == "ok", v.dump());
    CHECK(v["medianNs"].get<uint64_t>() > 0);
    CHECK(v["samples"].size() >= 3);
    CHECK(v["maxError"].get<double>() <= v["allowedError"].get<double>());
  }
  const std::string firstRun = readTextFile(bundle / "results.json");

  // A second run skips every variant and keeps the file's results.
  REQUIRE_MESSAGE(testing::runLogged(harness + " " + shellQuote(bundle.string()), log) == 0, readTextFile(log));
  CHECK_MESSAGE(contains(readTextFile(log), "6 of 6 variants already in"), readTextFile(log));
  CHECK(readTextFile(bundle / "results.json") == firstRun);

  // Import into a fresh database under this device's fingerprint; report; import again.
  const std::string db = (dir.path / "results.db").string();
  CommandResult imported = runWeft({"import", (bundle / "results.json").string(), "--db", db});
  REQUIRE_MESSAGE(imported.exitCode == 0, imported.output);
  CHECK_MESSAGE(contains(imported.output, "6 added"), imported.output);
  // The fingerprint a local exploration of this device records, and weft's own query's.
  const std::string fingerprint = exploredRows.front().key.device;
  CHECK(fingerprint == host::queryProfile(host::selectDevice("")).fingerprint);
  {
    std::vector<explore::VariantRecord> rows = explore::ResultsDb(db).variants();
    REQUIRE(rows.size() == 6);
    for (size_t i = 0; i < rows.size(); ++i) {
      CHECK(rows[i].key.program == exploredRows[i].key.program);
      CHECK(rows[i].key.device == exploredRows[i].key.device);
      CHECK(rows[i].key.compiler == exploredRows[i].key.compiler);
      CHECK(rows[i].key.parameters == exploredRows[i].key.parameters);
    }
  }
  CHECK_MESSAGE(contains(imported.output, "fingerprint " + fingerprint), imported.output);
  CommandResult report = runWeft({"report", "--db", db});
  REQUIRE_MESSAGE(report.exitCode == 0, report.output);
  CHECK_MESSAGE(contains(report.output, std::string(kProgram) + " on device " + fingerprint),
                report.output);
  CHECK_MESSAGE(contains(report.output, "6 variants: ok 6"), report.output);
  std::smatch front;
  std::string reportText = report.output;
  REQUIRE_MESSAGE(std::regex_search(reportText, front,
                                    std::regex("Pareto front \\(time vs space\\), ([0-9]+) of 6")),
                  report.output);
  CHECK(std::stoi(front[1]) >= 1);
  CommandResult again = runWeft({"import", bundle.string(), "--db", db});
  REQUIRE_MESSAGE(again.exitCode == 0, again.output);
  CHECK_MESSAGE(contains(again.output, "0 added, 0 replaced a running marker, 6 already there"),
                again.output);

  // A planted failure: the last kernel that takes the output writes garbage into it.
  const nlohmann::json& victim = variants["variants"][1];
  const std::string output = victim["outputBuffer"];
  std::string kernelName;
  for (const nlohmann::json& kernel : victim["kernels"]) {
    for (const nlohmann::json& arg : kernel["arguments"]) {
      if (arg["kind"] == "buffer" && arg["buffer"] == output) kernelName = kernel["name"];
    }
  }
  REQUIRE(!kernelName.empty());
  const fs::path clFile = bundle / victim["file"].get<std::string>();
  std::string planted = plantInKernel(readTextFile(clFile), kernelName,
                                      "((global float*)" + output + ")[0] = 12345.0f;");
  std::ofstream(clFile) << planted;
  const fs::path plantedResults = dir.path / "planted.json";
  REQUIRE_MESSAGE(testing::runLogged(harness + " " + shellQuote(bundle.string()) + " --results " +
                            shellQuote(plantedResults.string()) + " --min-time-ms 0",
                        log) == 0,
                  readTextFile(log));
  std::map<std::string, std::string> after = statuses(readJson(plantedResults));
  REQUIRE(after.size() == 6);
  for (const auto& [id, status] : after) {
    CHECK_MESSAGE(status == (id == victim["id"] ? "wrong_answer" : "ok"), id << ": " << status);
  }
}

TEST_CASE("a Mali-G72 bundle holds the GPU structures and runs them correctly here") {
  // The GPU-only structures of the vector family (interleaved blocks, the channels-first copy,
  // splits over the channels) and the work-group-tiled family (unstaged on Mali) sampled for the
  // mali-g72 profile, so that anyone with such a
  // board can measure them: the bundle builds and every variant verifies on this machine's
  // device (PoCL runs local sizes within the profile's limits). Sampled uniformly (--candidates
  // 1) with a seed whose 30 samples hold every kind of structure.
  TempDir dir("weft_opencl_bundle_mali");
  const fs::path bundle = dir.path / "bundle";
  const fs::path log = dir.path / "log.txt";
  CommandResult written =
      runWeft({"bundle", "--layer", "16,8,8,8,3,1,1", "--samples", "30", "--seed", "3",
               "--candidates", "1", "--profile", "mali-g72", "--out", bundle.string(),
               "--min-time-ms", "1"});
  REQUIRE_MESSAGE(written.exitCode == 0, written.output);
  const nlohmann::json variants = readJson(bundle / "variants.json");
  REQUIRE(variants["variants"].size() == 30);
  size_t interleavedInPlace = 0, channelsFirst = 0, split = 0, tiled = 0;
  for (const nlohmann::json& v : variants["variants"]) {
    const nlohmann::json& p = v["parameters"];
    const bool first = p.contains("vector_channels_first");
    interleavedInPlace += p.contains("vector_interleave") && !first;
    channelsFirst += first;
    split += p.contains("vector_split");
    // Work-group tiles with nothing staged: Mali's local memory is ordinary memory.
    if (p.contains("tiled_staged")) {
      ++tiled;
      CHECK(p["tiled_staged"] == 0);
    }
  }
  CHECK(interleavedInPlace > 0);
  CHECK(channelsFirst > 0);
  CHECK(split > 0);
  CHECK(tiled > 0);

  const std::string harness = buildHarness(bundle, dir.path / "build", log);
  REQUIRE_MESSAGE(testing::runLogged(harness + " " + shellQuote(bundle.string()), log) == 0, readTextFile(log));
  const std::map<std::string, std::string> after = statuses(readJson(bundle / "results.json"));
  REQUIRE(after.size() == 30);
  for (const auto& [id, status] : after) CHECK_MESSAGE(status == "ok", id << ": " << status);
}

TEST_CASE("an H100/H200 bundle's work-group tiles staged in local memory run correctly here") {
  // The work-group-tiled family for the nvidia-hopper profile: input and weight tiles staged in
  // local memory with barriers, register tiles kept across the channel steps; the bundle's own
  // harness verifies every variant on this machine's device.
  TempDir dir("weft_opencl_bundle_hopper");
  const fs::path bundle = dir.path / "bundle";
  const fs::path log = dir.path / "log.txt";
  CommandResult written =
      runWeft({"bundle", "--layer", "16,8,8,8,3,1,1", "--samples", "8", "--seed", "3",
               "--profile", "nvidia-hopper", "--family", "workgroup-tiled", "--out",
               bundle.string(), "--min-time-ms", "1"});
  REQUIRE_MESSAGE(written.exitCode == 0, written.output);
  const nlohmann::json variants = readJson(bundle / "variants.json");
  REQUIRE(variants["variants"].size() == 8);
  for (const nlohmann::json& v : variants["variants"]) {
    CHECK(v["parameters"].value("tiled_staged", -1) == 1);  // --family: only work-group tiles
  }
  const std::string harness = buildHarness(bundle, dir.path / "build", log);
  REQUIRE_MESSAGE(testing::runLogged(harness + " " + shellQuote(bundle.string()), log) == 0, readTextFile(log));
  const std::map<std::string, std::string> after = statuses(readJson(bundle / "results.json"));
  REQUIRE(after.size() == variants["variants"].size());
  for (const auto& [id, status] : after) CHECK_MESSAGE(status == "ok", id << ": " << status);

  // Imported, each work-group-tiled row rebuilds from its record: a drop-in of one of them.
  const std::string db = (dir.path / "results.db").string();
  CommandResult imported = runWeft({"import", (bundle / "results.json").string(), "--db", db});
  REQUIRE_MESSAGE(imported.exitCode == 0, imported.output);
  std::string tiledParameters;
  for (const explore::VariantRecord& row : explore::ResultsDb(db).variants()) {
    if (row.key.parameters.find("tiled_rk") != std::string::npos) tiledParameters = row.key.parameters;
  }
  REQUIRE(!tiledParameters.empty());
  const nlohmann::json point = nlohmann::json::parse(tiledParameters);
  std::string params;
  for (const auto& [name, value] : point.items()) {
    params += (params.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int64_t>());
  }
  CommandResult emitted = runWeft({"emit", "--layer", "16,8,8,8,3,1,1", "--params", params,
                                   "--out", (dir.path / "dropin").string()});
  REQUIRE_MESSAGE(emitted.exitCode == 0, emitted.output);
  CHECK_MESSAGE(contains(emitted.output, "conv-workgroup-tiled"), emitted.output);
}

}  // namespace weft
