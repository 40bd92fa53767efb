// Launches in parts end to end on this machine's OpenCL device, at a prime length whose only
// work-groups that divide it are of one work-item: `weft explore` samples local sizes that do
// not divide the length (the map's kernel is launchable in parts) and verifies every variant;
// `weft emit` exports such a variant and the drop-in example (examples/dropin), built against it,
// computes the right values; a bundle whose variant is launched in parts lists its parts, and its
// harness runs it to status ok against the reference launched whole.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "export/bundle_export.h"
#include "ir/npy.h"
#include "tests/support/bundle_harness_build.h"
#include "tests/support/dropin_example.h"
#include "tests/support/export_check.h"
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

const char* kSaxpy =
    "def saxpy(x: [float]N, y: [float]N): [float]N =\n"
    "  map(p -> 2.5f * p._0 + p._1, zip(x, y))\n";

fs::path writeProgram(const TempDir& dir) {
  const fs::path file = dir.path / "saxpy.weft";
  std::ofstream(file) << kSaxpy;
  return file;
}

}  // namespace

TEST_CASE("explore at a prime length samples local sizes launched in parts and verifies them") {
  TempDir dir("weft_launch_parts_explore");
  const fs::path file = writeProgram(dir);
  const std::string db = (dir.path / "results.db").string();
  // 8191 is prime: on pocl-cpu the local sizes are the powers of two up to 4096, none dividing.
  CommandResult explored =
      runWeft({"explore", file.string(), "--size", "N=8191", "--samples", "6", "--search", "off",
               "--profile", "pocl-cpu", "--db", db, "--quiet", "--min-time", "1"});
  REQUIRE_MESSAGE(explored.exitCode == 0, explored.output);
  const std::vector<explore::VariantRecord> rows = explore::ResultsDb(db).variants();
  REQUIRE(rows.size() == 6);
  int inParts = 0;
  for (const explore::VariantRecord& row : rows) {
    CHECK_MESSAGE(row.status == explore::VariantStatus::Ok, row.key.parameters);
    const nlohmann::json parameters = nlohmann::json::parse(row.key.parameters);
    REQUIRE(parameters.contains("local_k0_d0"));
    inParts += 8191 % parameters["local_k0_d0"].get<int64_t>() != 0;
  }
  CHECK(inParts >= 4);  // at most 1 of the 13 powers of two divides (1)

  // The fastest exports; its run function launches the kernel in parts.
  const fs::path emitted = dir.path / "fastest";
  CommandResult emit = runWeft({"emit", file.string(), "--size", "N=8191", "--db", db, "--pick",
                                "fastest", "--out", emitted.string()});
  REQUIRE_MESSAGE(emit.exitCode == 0, emit.output);
}

TEST_CASE("a drop-in launched in parts computes the program's values") {
  TempDir dir("weft_launch_parts_dropin");
  const fs::path file = writeProgram(dir);
  const fs::path emitted = dir.path / "emitted";
  CommandResult emit = runWeft({"emit", file.string(), "--size", "N=1021", "--params",
                                "local_k0_d0=64", "--out", emitted.string()});
  REQUIRE_MESSAGE(emit.exitCode == 0, emit.output);
  const std::string host = readTextFile(emitted / "weft_saxpy.c");
  CHECK(contains(host, "launched in 2 parts"));
  const nlohmann::json manifest = nlohmann::json::parse(readTextFile(emitted / "weft_saxpy.json"));
  const nlohmann::json& parts = manifest["kernels"][0]["launchParts"];
  REQUIRE(parts.size() == 2);
  CHECK(parts[1]["offset"] == std::vector<int64_t>{960});
  CHECK(parts[1]["globalSize"] == std::vector<int64_t>{61});

  // 1021 = 15 * 64 + 61: the example runs both parts twice on the same buffers.
  NpyArray x{NpyDType::Float32, {1021}, {}, {}}, y{NpyDType::Float32, {1021}, {}, {}};
  for (int i = 0; i < 1021; ++i) {
    x.f32.push_back(static_cast<float>(i % 13) * 0.25f);
    y.f32.push_back(static_cast<float>(i) * 0.5f);
  }
  writeNpy((dir.path / "x.npy").string(), x);
  writeNpy((dir.path / "y.npy").string(), y);
  const fs::path build = dir.path / "build";
  testing::buildDropinExample(emitted, "weft_saxpy", build);
  const fs::path log = dir.path / "run.log";
  REQUIRE_MESSAGE(testing::runLogged(shellQuote((build / "dropin").string()) + " --repeat 2 " +
                                         shellQuote((dir.path / "x.npy").string()) + " " +
                                         shellQuote((dir.path / "y.npy").string()) + " " +
                                         shellQuote((dir.path / "out.npy").string()),
                                     log) == 0,
                  readTextFile(log));
  const NpyArray out = readNpy((dir.path / "out.npy").string());
  REQUIRE(out.f32.size() == 1021);
  int wrong = 0;
  for (size_t i = 0; i < out.f32.size(); ++i) wrong += out.f32[i] != 2.5f * x.f32[i] + y.f32[i];
  CHECK(wrong == 0);
}

TEST_CASE("a bundle's harness runs a variant launched in parts") {
  TempDir dir("weft_launch_parts_bundle");
  const char* source =
      "kernel void r0(global const float* a, global const float* b, global float* out) {\n"
      "  int i = get_global_id(0);\n  out[i] = a[i] + b[i];\n}\n";
  exporting::BundleProgram reference;
  reference.id = "reference";
  reference.program = testing::addProgram(1021, source);
  exporting::BundleProgram variant;
  variant.id = "v0001";
  variant.key = R"({"local_k0_d0":64})";
  variant.parameters = {{"local_k0_d0", 64}};
  variant.program = testing::addProgram(1021, source);
  variant.program->kernels[0].hasLocalSize = true;
  variant.program->kernels[0].localSize = {Arith(64), Arith(1), Arith(1)};
  variant.program->kernels[0].launchableInParts = true;
  exporting::BundleMetadata metadata;
  metadata.program = "add_1021";
  metadata.description = "out = a + b";
  metadata.flops = 1021;
  metadata.compilerVersion = "weft test";
  metadata.profile = "pocl-cpu";
  metadata.inputNames = {"a", "b"};
  metadata.minTimeMs = 1;
  const fs::path bundle = dir.path / "bundle";
  exporting::writeBundle(bundle, exporting::emitBundle(reference, {variant}, metadata));
  const std::string text = readTextFile(bundle / "variants.txt");
  CHECK(contains(text, "parts 2\npart 0 0 0 960 1 1 64 1 1\npart 960 0 0 61 1 1 61 1 1\n"));

  const fs::path log = dir.path / "log.txt";
  const fs::path harness = testing::buildBundleHarness(bundle, dir.path / "build", log);
  REQUIRE_MESSAGE(testing::runLogged(
                      shellQuote(harness.string()) + " " + shellQuote(bundle.string()), log) == 0,
                  readTextFile(log));
  const nlohmann::json results = nlohmann::json::parse(readTextFile(bundle / "results.json"));
  CHECK(results["reference"]["status"] == "ok");
  REQUIRE(results["variants"].size() == 1);
  CHECK_MESSAGE(results["variants"][0]["status"] == "ok", results["variants"][0].dump());

  // The same variant with its remainder part left out writes 61 elements fewer: wrong_answer.
  std::string cut = text;
  const std::string parts = "parts 2\npart 0 0 0 960 1 1 64 1 1\npart 960 0 0 61 1 1 61 1 1\n";
  cut.replace(cut.find(parts), parts.size(), "parts 1\npart 0 0 0 960 1 1 64 1 1\n");
  std::ofstream(bundle / "variants.txt") << cut;
  fs::remove(bundle / "results.json");
  REQUIRE_MESSAGE(testing::runLogged(
                      shellQuote(harness.string()) + " " + shellQuote(bundle.string()), log) == 0,
                  readTextFile(log));
  const nlohmann::json cutResults = nlohmann::json::parse(readTextFile(bundle / "results.json"));
  CHECK(cutResults["variants"][0]["status"] == "wrong_answer");
}

}  // namespace weft
