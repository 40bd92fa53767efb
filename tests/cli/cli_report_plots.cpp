// Command-line tests of `weft report --svg/--html` and the best point's parameters: a results
// database written here (explore/results_db.h) with sampled conv-direct variants of a small
// layer, a program that is no layer, and a second device; the SVG holds one mark per ok variant
// and per front point, the HTML page one plot and table per program and device, the table and
// JSON reports lay the best layer point out like the LIFT paper's Table 4 (raw names for the
// other program), and several groups give one SVG file each.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/parameter_space.h"
#include "explore/pareto.h"
#include "explore/results_db.h"
#include "explore/sampler.h"
#include "workloads/conv/conv_layer.h"
#include "tests/support/run_weft.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Writes the database and returns the layer's rows.
std::vector<explore::VariantRecord> writeDatabase(const std::string& path) {
  const ConvLayer layer{2, 6, 6, 4, 3, 1, 1, ""};
  explore::ExploreTarget target = explore::layerTarget(layer, 1, 0);
  explore::SpaceOptions options;
  options.switches = target.switches;
  explore::ParameterSpace space =
      explore::buildParameterSpace(target.parametric, target.sizes, options);
  explore::Sampler sampler(space);
  std::vector<std::vector<int64_t>> points = sampler.sample(12, 3).points;
  REQUIRE(points.size() == 12);
  std::mt19937_64 rng(9);
  std::vector<explore::VariantRecord> rows;
  explore::ResultsDb db(path);
  for (size_t i = 0; i < points.size(); ++i) {
    explore::VariantRecord v;
    v.key = {"conv_2_6_6_4_3_1_1", "devA", explore::compilerVersion(),
             explore::parametersJson(space, points[i], target.fixedParameters)};
    v.status = i % 5 == 4 ? explore::VariantStatus::WrongAnswer : explore::VariantStatus::Ok;
    if (v.status == explore::VariantStatus::Ok) {
      v.medianNs = std::uniform_int_distribution<uint64_t>(10'000, 900'000)(rng);
    }
    v.spaceBytes = std::uniform_int_distribution<int64_t>(1'000, 90'000)(rng);
    db.record(v);
    rows.push_back(v);
  }
  explore::ReferenceRecord reference;
  reference.program = "conv_2_6_6_4_3_1_1";
  reference.device = "devA";
  reference.compiler = explore::compilerVersion();
  reference.description = layer.describe();
  reference.medianNs = 500'000;
  reference.spaceBytes = 2'000;
  reference.flops = layer.flops();
  db.recordReference(reference);
  for (const char* device : {"devA", "devB"}) {
    explore::VariantRecord v;
    v.key = {"dot[N=1024]", device, explore::compilerVersion(), "{\"a\":16,\"b\":2}"};
    v.status = explore::VariantStatus::Ok;
    v.medianNs = 1000;
    v.spaceBytes = 8192;
    db.record(v);
  }
  return rows;
}

}  // namespace

TEST_CASE("weft report --svg plots every ok variant with the front") {
  TempDir dir("weft_cli_report_plots");
  std::vector<explore::VariantRecord> rows = writeDatabase(dir.file("results.db"));
  CommandResult result = runWeft({"report", "--db", dir.file("results.db"), "--layer",
                                  "2,6,6,4,3,1,1", "--svg", dir.file("front.svg")});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output, "written: " + dir.file("front.svg")));
  std::string svg = dir.read("front.svg");
  size_t ok = std::count_if(rows.begin(), rows.end(), [](const explore::VariantRecord& v) {
    return v.status == explore::VariantStatus::Ok;
  });
  CHECK(occurrences(svg, "class=\"variant\"") == ok);
  CHECK(occurrences(svg, "class=\"front-point\"") == explore::paretoFront(rows).size());
  CHECK(occurrences(svg, "class=\"knee\"") == 1);
  CHECK(occurrences(svg, "class=\"reference\"") == 1);
  CHECK(contains(svg, "conv_2_6_6_4_3_1_1 on device devA"));
  CHECK(contains(svg, "(bytes, log scale)"));
  CHECK(contains(svg, "median time (ms, log scale)"));
  CHECK(occurrences(svg, "<svg") == occurrences(svg, "</svg>"));

  // The best point, like the paper's Table 4, with the kernels' local sizes.
  CHECK(contains(result.output, "laid out like the LIFT paper's Table 4"));
  CHECK(contains(result.output, "| Input tile size (θ×θ) |"));
  CHECK(contains(result.output, "| Number of kernels per work-group (κ) |"));
  CHECK(contains(result.output, "| Vector size (v) | 1 |"));
  CHECK(contains(result.output, "| Unrolling | no |"));
  CHECK(contains(result.output, "| Local size of "));
}

TEST_CASE("weft report --format json includes the best point; other programs keep raw names") {
  TempDir dir("weft_cli_report_plots");
  std::vector<explore::VariantRecord> rows = writeDatabase(dir.file("results.db"));
  CommandResult result = runWeft({"report", "--db", dir.file("results.db"), "--format", "json"});
  REQUIRE(result.exitCode == 0);
  nlohmann::json json = nlohmann::json::parse(result.output);
  REQUIRE(json.size() == 3);  // the layer on devA, dot on devA and devB
  bool sawLayer = false, sawDot = false;
  for (const auto& group : json) {
    REQUIRE(group.contains("best"));
    const auto& table = group["best"]["table"];
    if (group["program"] == "conv_2_6_6_4_3_1_1") {
      sawLayer = true;
      CHECK(table[0]["name"] == "Input tile size (θ×θ)");
      CHECK(group["best"]["medianNs"] == *explore::paretoFront(rows).front().medianNs);
      CHECK(group["best"]["parameters"].contains("theta"));
    } else {
      sawDot = true;
      REQUIRE(table.size() == 2);
      CHECK(table[0]["name"] == "a");
      CHECK(table[0]["value"] == "16");
    }
  }
  CHECK(sawLayer);
  CHECK(sawDot);
}

TEST_CASE("weft report --html: one page, a plot and tables per program and device") {
  TempDir dir("weft_cli_report_plots");
  writeDatabase(dir.file("results.db"));
  CommandResult result = runWeft({"report", "--db", dir.file("results.db"), "--html",
                                  dir.file("report.html"), "--svg", dir.file("plot.svg")});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  std::string html = dir.read("report.html");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(occurrences(html, "<svg ") == 3);
  CHECK(occurrences(html, "<section>") == 3);
  CHECK(occurrences(html, "<table>") == 6);  // front and best point per section
  CHECK(contains(html, "Pareto front (time vs space), fastest first"));
  CHECK(contains(html, "dot[N=1024] on device devB"));
  // Three groups: one SVG each, named after the program and device.
  for (const std::string tag : {"conv_2_6_6_4_3_1_1_devA_", "dot_N_1024__devA_", "dot_N_1024__devB_"}) {
    bool found = false;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path)) {
      std::string name = entry.path().filename().string();
      found = found || (name.rfind("plot_" + tag, 0) == 0 && name.size() > 4 &&
                        name.substr(name.size() - 4) == ".svg");
    }
    CAPTURE(tag);
    CHECK(found);
  }
}
