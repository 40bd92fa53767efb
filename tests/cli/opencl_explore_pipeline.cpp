// `weft explore FILE --size ...` on an image pipeline (issue 9): the blur pipeline of
// examples/pipelines/ at 32×32 is explored as written (fusion=0) and by the fusion strategies
// that apply to it (fusion=1 pipeline-fused-private, fusion=2 pipeline-fused-local, fusion=6
// pipeline-fused-sliding-window, their tile sizes sampled; fusion=11 pipeline-fused-inlined,
// its local size sampled; 10 and 12 with a vector width); every variant is verified against the
// program as written run on the device and comes out ok (no wrong answer, crash or timeout: the
// register budget keeps the unrolled private tiles small enough to build and run in time) and each
// structure has ok variants; `weft emit FILE --db --pick fastest` rebuilds the picked structure and
// writes the drop-in, whose manifest names the fusion; `--fusion none` explores the program as
// written only, and a strategy that does not exist is a clear error. The unsharp mask line-buffered
// along whole rows (fusion=9) is explored with the device's vector width recorded as vector_width,
// its variants ok and rebuilt by `weft emit --params` (on a device whose preferred float width is
// 1, a clear error says the strategy needs a vector width). On a device whose compiler takes
// non-temporal stores (PoCL) the row-inlined blur's space has streaming_stores, and a variant
// recorded with it is rebuilt by `weft emit --params` with its stores streaming. Label opencl:
// needs an OpenCL device.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/run_weft.h"

using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::haveOpenCLDevice;
using weft::testing::jsonLines;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

std::string pipelineFile(const std::string& name) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return std::string(root ? root : ".") + "/examples/pipelines/" + name + ".weft";
}

std::string blurFile() { return pipelineFile("blur"); }

// The lines `weft devices` prints for the default device: from its "[default]" line up to the
// next device's or platform's line (or the blank line after the last device).
std::string defaultDeviceLines(const std::string& devices) {
  const size_t start = devices.find("[default]");
  if (start == std::string::npos) return "";
  const std::regex nextEntry(R"(\n(platform |\s*\*?\s*\d+: |\n))");
  std::smatch match;
  const std::string rest = devices.substr(start);
  return std::regex_search(rest, match, nextEntry) ? rest.substr(0, match.position(0)) : rest;
}

// A recorded variant's parameters as `weft emit --params` takes them: NAME=VALUE,...
std::string paramsText(const nlohmann::json& parameters) {
  std::string text;
  for (const auto& [name, value] : parameters.items()) {
    text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int64_t>());
  }
  return text;
}

}  // namespace

TEST_CASE("weft explore explores a pipeline as written and fused, weft emit exports the pick") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_pipeline");
  const std::string db = dir.file("results.db");
  // 16 samples: the candidates' cheap half (8) gives each of the eight structures one
  // (explore/explorer.h selectCandidates: the families take turns); fusion=10
  // (line-buffered), 12 (row-inlined) and 14 (column walk) are there when the device has a
  // float vector width of 2 or more.
  auto run = runWeft({"explore", blurFile(), "--size", "W=32", "--size", "H=32", "--samples", "16",
                      "--seed", "3", "--db", db, "--min-time", "2", "--json", "--quiet"});
  CAPTURE(run.output);
  REQUIRE(run.exitCode == 0);
  std::vector<nlohmann::json> lines = jsonLines(run.output);
  REQUIRE(lines.size() >= 2);
  std::map<int64_t, int> okPerFusion;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    CAPTURE(lines[i].dump());
    CHECK(lines[i]["status"] == "ok");
    REQUIRE(lines[i]["parameters"].contains("fusion"));
    if (lines[i]["status"] == "ok") ++okPerFusion[lines[i]["parameters"]["fusion"].get<int64_t>()];
  }
  CHECK(lines.back()["sampled"] == 16);
  CHECK(okPerFusion[0] >= 1);
  CHECK(okPerFusion[1] >= 1);
  CHECK(okPerFusion[2] >= 1);
  CHECK(okPerFusion[6] >= 1);
  CHECK(okPerFusion[11] >= 1);

  const std::string out = dir.file("dropin");
  auto emitted = runWeft({"emit", blurFile(), "--size", "W=32", "--size", "H=32", "--db", db,
                          "--pick", "fastest", "--out", out});
  CAPTURE(emitted.output);
  REQUIRE(emitted.exitCode == 0);
  auto manifest = nlohmann::json::parse(readTextFile(out + "/weft_blur.json"), nullptr, false);
  REQUIRE(!manifest.is_discarded());
  CHECK(contains(manifest.dump(), "fusion"));
}

TEST_CASE("--fusion none explores the program as written; an unknown strategy is an error") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_pipeline_none");
  auto plain = runWeft({"explore", blurFile(), "--size", "W=32", "--size", "H=32", "--samples",
                        "3", "--db", dir.file("a.db"), "--min-time", "1", "--json", "--quiet",
                        "--fusion", "none"});
  CAPTURE(plain.output);
  REQUIRE(plain.exitCode == 0);
  std::vector<nlohmann::json> lines = jsonLines(plain.output);
  REQUIRE(lines.size() == 4);  // three variants (local sizes) and the summary
  for (size_t i = 0; i < 3; ++i) CHECK(!lines[i]["parameters"].contains("fusion"));

  auto bad = runWeft({"explore", blurFile(), "--size", "W=32", "--size", "H=32", "--db",
                      dir.file("b.db"), "--fusion", "pipeline-fused-nowhere"});
  CHECK(bad.exitCode != 0);
  CHECK(contains(bad.output, "pipeline-fused-nowhere"));
}

TEST_CASE("unsharp mask line-buffered is explored with the device's vector width") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_line_buffered");
  const std::string db = dir.file("results.db");
  const std::vector<std::string> sizes = {"--size", "C=3", "--size", "W=64", "--size", "H=40"};
  std::vector<std::string> args = {"explore", pipelineFile("unsharp")};
  args.insert(args.end(), sizes.begin(), sizes.end());
  args.insert(args.end(), {"--fusion", "pipeline-line-buffered-pointwise", "--samples", "4",
                           "--seed", "2", "--db", db, "--min-time", "1", "--json", "--quiet"});
  auto run = runWeft(args);
  CAPTURE(run.output);
  if (run.exitCode != 0 && contains(run.output, "needs a vector width")) {
    MESSAGE("the device's preferred float vector width is 1: line buffering not explored");
    return;
  }
  REQUIRE(run.exitCode == 0);
  std::vector<nlohmann::json> lines = jsonLines(run.output);
  REQUIRE(lines.size() >= 2);
  std::optional<nlohmann::json> lineBuffered;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    CAPTURE(lines[i].dump());
    CHECK(lines[i]["status"] == "ok");
    const nlohmann::json& parameters = lines[i]["parameters"];
    if (parameters.contains("fusion") && parameters["fusion"] == 9) {
      CHECK(parameters["vector_width"].get<int64_t>() >= 2);
      if (lines[i]["status"] == "ok") lineBuffered = parameters;
    }
  }
  REQUIRE(lineBuffered.has_value());

  // The recorded parameters rebuild the structure: fusion, vector width and strip height.
  const std::string params = paramsText(*lineBuffered);
  std::vector<std::string> emit = {"emit", pipelineFile("unsharp")};
  emit.insert(emit.end(), sizes.begin(), sizes.end());
  emit.insert(emit.end(), {"--params", params, "--out", dir.file("dropin")});
  auto emitted = runWeft(emit);
  CAPTURE(emitted.output);
  CHECK(emitted.exitCode == 0);
}

TEST_CASE("streaming stores are explored where the compiler takes them and rebuilt by emit") {
  if (!haveOpenCLDevice()) return;
  auto devices = runWeft({"devices"});
  REQUIRE(devices.exitCode == 0);
  // The default device's lines only: another platform's device (PoCL beside NVIDIA's driver)
  // may take them while the one explored does not.
  if (!contains(defaultDeviceLines(devices.output), "streaming stores: the compiler takes")) {
    MESSAGE("skipped: this device's compiler does not take non-temporal stores");
    return;
  }
  TempDir dir("weft_cli_explore_streaming");
  const std::string db = dir.file("results.db");
  auto run = runWeft({"explore", blurFile(), "--size", "W=64", "--size", "H=16", "--fusion",
                      "pipeline-inlined-rows", "--samples", "12", "--seed", "5", "--db", db,
                      "--min-time", "2", "--json", "--quiet"});
  CAPTURE(run.output);
  REQUIRE(run.exitCode == 0);
  std::vector<nlohmann::json> lines = jsonLines(run.output);
  REQUIRE(lines.size() >= 2);
  std::optional<nlohmann::json> streamed;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    CAPTURE(lines[i].dump());
    CHECK(lines[i]["status"] == "ok");
    const nlohmann::json& parameters = lines[i]["parameters"];
    if (parameters.value("fusion", 0) == 12) {
      CHECK(parameters.contains("streaming_stores"));
      if (parameters.value("streaming_stores", 0) == 1) streamed = parameters;
    }
  }
  REQUIRE(streamed);
  const std::string params = paramsText(*streamed);
  const std::string out = dir.file("dropin");
  auto emitted = runWeft(
      {"emit", blurFile(), "--size", "W=64", "--size", "H=16", "--params", params, "--out", out});
  CAPTURE(emitted.output);
  REQUIRE(emitted.exitCode == 0);
  CHECK(contains(readTextFile(out + "/weft_blur.cl"), "__builtin_nontemporal_store("));
}
