// Tests of `weft space`: parameters, domains, constraints with their origin, the unconstrained
// and the valid size; samples as a table and as JSON (valid, unique, reproducible from the
// seed); device limits from --device-profile; --power-of-two; an empty space is an error that
// names the conflicting constraints; unbound sizes without a range are reported.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tests/support/run_weft.h"

using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

const char* kSplit =
    "def f[1 <= kappa <= 64](xs: [float]N): [[float]kappa](N / kappa) = split(kappa, xs)\n";
const char* kWorkGroups =
    "def g[1 <= kappa <= 4096](xs: [float]N): [float]N =\n"
    "  join(mapWrg(0, chunk -> mapLcl(0, x -> x + 1.0f, chunk), split(kappa, xs)))\n";

}  // namespace

TEST_CASE("weft space prints parameters, constraints and sizes") {
  TempDir dir("weft_cli_space");
  std::string file = dir.write("split.weft", kSplit);
  auto result = runWeft({"space", file, "--size", "N=48"});
  CAPTURE(result.output);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output, "kappa"));
  CHECK(contains(result.output, "[1, 64]"));
  CHECK(contains(result.output, "[algorithmic] split by kappa requires 48 % kappa = 0"));
  // The body is a view, copied by a kernel whose two local sizes are open (13 powers of two
  // each up to pocl-cpu's 4096).
  CHECK(contains(result.output, "local_k0_d1  powers of two in [1, 4096]"));
  CHECK(contains(result.output, "unconstrained size: 10816"));
  CHECK(contains(result.output, "valid points (local sizes not counted): 10;"));  // divisors of 48
  CHECK(contains(result.output, "private values per work-item are code generation's estimate"));
}

TEST_CASE("weft space --samples --json gives valid, unique, reproducible points") {
  TempDir dir("weft_cli_space");
  std::string file = dir.write("split.weft", kSplit);
  auto first = runWeft({"space", file, "--size", "N=720", "--device-profile", "none",
                        "--samples", "8", "--seed", "5", "--json"});
  REQUIRE(first.exitCode == 0);
  auto json = nlohmann::json::parse(first.output);
  int divisors = 0;  // of 720, up to 64
  for (int d = 1; d <= 64; ++d) divisors += 720 % d == 0 ? 1 : 0;
  CHECK(json["validPoints"]["count"] == divisors);
  CHECK(json["validPoints"]["exact"] == true);
  CHECK(json["device"].is_null());
  std::set<int> seen;
  for (const auto& point : json["samples"]["points"]) {
    int kappa = point["kappa"];
    CHECK(720 % kappa == 0);
    CHECK(kappa <= 64);
    seen.insert(kappa);
  }
  CHECK(seen.size() == 8);
  auto again = runWeft({"space", file, "--size", "N=720", "--device-profile", "none",
                        "--samples", "8", "--seed", "5", "--json"});
  CHECK(nlohmann::json::parse(again.output)["samples"]["points"] == json["samples"]["points"]);

  auto table = runWeft({"space", file, "--size", "N=720", "--samples", "3", "--seed", "5"});
  REQUIRE(table.exitCode == 0);
  CHECK(contains(table.output, "samples: 3 (seed 5"));
}

TEST_CASE("weft space applies the device profile's limits") {
  TempDir dir("weft_cli_space");
  std::string file = dir.write("wg.weft", kWorkGroups);
  auto mali = runWeft({"space", file, "--size", "N=4096", "--device-profile", "mali-g72",
                       "--samples", "20", "--json"});
  REQUIRE(mali.exitCode == 0);
  auto json = nlohmann::json::parse(mali.output);
  CHECK(json["validPoints"]["count"] == 9);  // 1, 2, ..., 256: at most 384 work-items
  bool named = false;
  for (const auto& c : json["constraints"]) {
    named = named || (c["source"] == "hardware" &&
                      std::string(c["description"]).find("work-group size") != std::string::npos);
  }
  CHECK(named);
  for (const auto& point : json["samples"]["points"]) CHECK(point["kappa"] <= 384);
  CHECK(json["samples"]["fewerThanRequested"] == true);
}

TEST_CASE("weft space --power-of-two, empty spaces and unbound sizes") {
  TempDir dir("weft_cli_space");
  std::string file = dir.write(
      "split2.weft",
      "def f[2 <= kappa <= 64](xs: [float]N): [[float]kappa](N / kappa) = split(kappa, xs)\n");
  auto pow2 = runWeft({"space", file, "--size", "N=96", "--power-of-two", "kappa"});
  REQUIRE(pow2.exitCode == 0);
  CHECK(contains(pow2.output, "powers of two in [2, 64]"));
  CHECK(contains(pow2.output, "valid points (local sizes not counted): 5;"));  // 2, 4, ..., 32

  auto empty = runWeft({"space", file, "--size", "N=7", "--power-of-two", "kappa"});
  CHECK(empty.exitCode == 1);
  CHECK(contains(empty.output, "is empty"));
  CHECK(contains(empty.output, "split by kappa requires 7 % kappa = 0"));

  auto unbound = runWeft({"space", file});
  CHECK(unbound.exitCode == 1);
  CHECK(contains(unbound.output, "size N is neither given"));
}
