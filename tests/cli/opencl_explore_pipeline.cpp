// `weft explore FILE --size ...` on an image pipeline (issue 9): the blur pipeline of
// examples/pipelines/ at 32×32 is explored as written (fusion=0) and by the fusion strategies
// that apply to it (fusion=1 pipeline-fused-private, fusion=2 pipeline-fused-local, fusion=6
// pipeline-fused-sliding-window, their tile sizes sampled); every variant is verified against the program as written run on the device
// and comes out ok (no wrong answer, crash or timeout: the register budget keeps the unrolled
// private tiles small enough to build and run in time) and each structure has ok variants;
// `weft emit FILE --db --pick fastest` rebuilds the picked structure and writes the drop-in,
// whose manifest names the fusion; `--fusion none` explores the program as written only, and a
// strategy that does not exist is a clear error. Label opencl: needs an OpenCL device.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_weft.h"

using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::haveOpenCLDevice;
using weft::testing::jsonLines;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

std::string blurFile() {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return std::string(root ? root : ".") + "/examples/pipelines/blur.weft";
}

}  // namespace

TEST_CASE("weft explore explores a pipeline as written and fused, weft emit exports the pick") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_pipeline");
  const std::string db = dir.file("results.db");
  // 8 samples: the candidates' cheap half (4) gives each of the four structures one
  // (explore/explorer.h selectCandidates: the families take turns).
  auto run = runWeft({"explore", blurFile(), "--size", "W=32", "--size", "H=32", "--samples",
                      "8", "--seed", "3", "--db", db, "--min-time", "2", "--json", "--quiet"});
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
  CHECK(lines.back()["sampled"] == 8);
  CHECK(okPerFusion[0] >= 1);
  CHECK(okPerFusion[1] >= 1);
  CHECK(okPerFusion[2] >= 1);
  CHECK(okPerFusion[6] >= 1);

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
