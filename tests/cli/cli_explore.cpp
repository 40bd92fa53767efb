// Tests of `weft explore` and `weft report` end to end on a small layer (8×8×8 → 8, 3×3
// kernels) with 4 samples on the default OpenCL device: the database is written with one row
// per variant, the summary and --json output agree with it, a re-run resumes (runs nothing),
// and the report prints the Pareto front as a table and as CSV. A corrupt --db file is an
// error that names the file and leaves it as it was. Without an OpenCL device (weft devices
// fails) the exploration tests pass with a message.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_weft.h"

using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

bool haveDevice() {
  static const bool have = runWeft({"devices"}).exitCode == 0;
  if (!have) MESSAGE("no OpenCL device: weft explore has nothing to run on");
  return have;
}

}  // namespace

TEST_CASE("weft explore writes the database, resumes, and weft report prints the front") {
  if (!haveDevice()) return;
  TempDir dir("weft_cli_explore");
  const std::string db = dir.file("results.db");
  auto first = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "4", "--seed", "2",
                        "--db", db, "--min-time", "2", "--json", "--quiet"});
  CAPTURE(first.output);
  REQUIRE(first.exitCode == 0);
  // One JSON line per variant, then the summary.
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  while (start < first.output.size()) {
    size_t end = first.output.find('\n', start);
    if (end == std::string::npos) end = first.output.size();
    auto line = nlohmann::json::parse(first.output.substr(start, end - start), nullptr, false);
    if (!line.is_discarded()) lines.push_back(line);
    start = end + 1;
  }
  REQUIRE(lines.size() == 5);
  const nlohmann::json& summary = lines.back();
  CHECK(summary["program"] == "conv_8_8_8_8_3_1_1");
  CHECK(summary["sampled"] == 4);
  CHECK(summary["ran"] == 4);
  int ok = 0;
  for (size_t i = 0; i < 4; ++i) {
    CHECK(lines[i]["program"] == "conv_8_8_8_8_3_1_1");
    CHECK(lines[i]["parameters"].contains("kappa"));
    if (lines[i]["status"] == "ok") {
      ++ok;
      CHECK(lines[i]["medianNs"].get<uint64_t>() > 0);
      CHECK(lines[i]["spaceBytes"].get<int64_t>() > 0);
    }
  }
  CHECK(ok >= 1);
  CHECK(summary["statusCounts"]["ok"] == ok);
  CHECK(summary["bestNs"].get<uint64_t>() > 0);

  auto again = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "4", "--seed", "2",
                        "--db", db, "--quiet"});
  CAPTURE(again.output);
  REQUIRE(again.exitCode == 0);
  CHECK(contains(again.output, "4 sampled, 4 already in"));
  CHECK(contains(again.output, "0 run"));

  auto report = runWeft({"report", "--db", db, "--csv", dir.file("front.csv")});
  CAPTURE(report.output);
  REQUIRE(report.exitCode == 0);
  CHECK(contains(report.output, "## conv_8_8_8_8_3_1_1"));
  CHECK(contains(report.output, "Pareto front (time vs space)"));
  CHECK(contains(report.output, "| 1 | "));
  CHECK(contains(report.output, "reference (default lowering)"));
  CHECK(contains(report.output, "4 variants: "));
  const std::string csv = dir.read("front.csv");
  CHECK(contains(csv, "program,device,compiler,median_ns,space_bytes"));
  CHECK(contains(csv, "\"conv_8_8_8_8_3_1_1\""));

  auto csvOut = runWeft({"report", "--db", db, "--layer", "8,8,8,8,3,1,1", "--format", "csv"});
  REQUIRE(csvOut.exitCode == 0);
  CHECK(contains(csvOut.output, "median_ns"));
  CHECK_FALSE(contains(csvOut.output, "Pareto"));
}

TEST_CASE("weft explore and weft report refuse a corrupt database and leave it alone") {
  TempDir dir("weft_cli_explore");
  const std::string db = dir.write("results.db", "this is not a database, it is a poem\n");
  auto report = runWeft({"report", "--db", db});
  CAPTURE(report.output);
  CHECK(report.exitCode == 1);
  CHECK(contains(report.output, "not a weft results database"));
  if (haveDevice()) {
    auto explore = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "2", "--db", db,
                            "--quiet", "--min-time", "1"});
    CAPTURE(explore.output);
    CHECK(explore.exitCode == 1);
    CHECK(contains(explore.output, "not a weft results database"));
  }
  CHECK(dir.read("results.db") == "this is not a database, it is a poem\n");
  auto missing = runWeft({"report", "--db", dir.file("none.db")});
  CHECK(missing.exitCode == 1);
  CHECK(contains(missing.output, "no such results database"));
}
