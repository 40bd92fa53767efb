// A bundle's measurement harness under random SIGKILLs: the harness itself and its measuring
// child in turn, at random moments (seeded), 12 kills in all, the harness started again after
// each kill of itself, then run to its end undisturbed. After every kill results.json is either
// absent or whole JSON with each variant at most once (the harness replaces it by renaming a
// synced file); within 5 s of a kill of the harness none of its children is left (on Linux the
// child dies with it); at the end every variant of the bundle is in results.json exactly once,
// none lost, a variant whose measuring child was killed recorded as crashed (at most one per
// such kill), and `weft import` takes the file. Without an OpenCL device the test passes with a
// message. Label slow: about a minute on 2 cores.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "explore/results_db.h"
#include "tests/support/bundle_harness_build.h"
#include "tests/support/processes.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::haveOpenCLDevice;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

bool alive(pid_t pid) { return weft::testing::liveProcesses().count(pid) > 0; }

// The variants of a results file by id (each checked to appear once); empty when there is none.
std::map<std::string, std::string> resultsById(const fs::path& results) {
  std::map<std::string, std::string> statuses;
  if (!fs::exists(results)) return statuses;
  const nlohmann::json json = nlohmann::json::parse(readTextFile(results), nullptr, false);
  REQUIRE_MESSAGE(!json.is_discarded(), results.string() << " is not whole JSON after a kill");
  for (const nlohmann::json& variant : json["variants"]) {
    CHECK_MESSAGE(statuses.emplace(variant["id"], variant["status"]).second,
                  "variant " << variant["id"] << " twice in results.json");
  }
  return statuses;
}

}  // namespace

TEST_CASE("12 random SIGKILLs of the bundle harness and its measuring child: every variant once") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_bundle_harness_kills");
  const fs::path bundle = dir.path / "bundle";
  const fs::path log = dir.path / "log.txt";
  const auto written = runWeft({"bundle", "--layer", "8,16,16,8,3,1,1", "--samples", "16",
                                "--seed", "5", "--profile", "pocl-cpu", "--out", bundle.string(),
                                "--min-time-ms", "20"});
  REQUIRE_MESSAGE(written.exitCode == 0, written.output);
  const nlohmann::json variants =
      nlohmann::json::parse(readTextFile(bundle / "variants.json"));
  std::set<std::string> ids;
  for (const nlohmann::json& variant : variants["variants"]) ids.insert(variant["id"]);
  REQUIRE(ids.size() == 16);
  const fs::path harness = weft::testing::buildBundleHarness(bundle, dir.path / "build", log);
  const fs::path results = bundle / "results.json";
  const std::string harnessLog = (dir.path / "harness.log").string();

  std::mt19937 rng(20261128);
  int kills = 0, childKills = 0;
  pid_t running = -1;
  while (kills < 12) {
    if (running < 0) {
      running = weft::testing::startInBackground(harness.string(), {bundle.string()}, harnessLog);
      REQUIRE(running > 0);
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(150, 1200)(rng)));
    int status = 0;
    if (waitpid(running, &status, WNOHANG) == running) {
      // Ended by itself: done, or (a killed child was the reference's) refused with a message.
      running = -1;
      const bool finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      CHECK_MESSAGE((finished || readTextFile(harnessLog).find("the reference") != std::string::npos),
                    readTextFile(harnessLog));
      if (finished && resultsById(results).size() == ids.size()) break;
      continue;
    }
    const bool killHarness = kills % 2 == 1;
    const std::vector<pid_t> children = weft::testing::childrenOf(running);
    if (killHarness || children.empty()) {
      REQUIRE(kill(running, SIGKILL) == 0);
      REQUIRE(waitpid(running, &status, 0) == running);
      running = -1;
      // Its measuring child goes with it.
      const auto killed = Clock::now();
      for (pid_t child : children) {
        while (alive(child) && Clock::now() - killed < std::chrono::seconds(5)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        CHECK_MESSAGE(!alive(child), "the harness's child " << child << " outlived it by 5 s");
      }
    } else {
      REQUIRE(kill(children.front(), SIGKILL) == 0);
      ++childKills;
    }
    ++kills;
    resultsById(results);
  }
  if (running > 0) {
    int status = 0;
    REQUIRE(waitpid(running, &status, 0) == running);
  }
  // Once more to the end, undisturbed.
  REQUIRE_MESSAGE(weft::testing::runLogged(weft::testing::shellQuote(harness.string()) + " " +
                                                    weft::testing::shellQuote(bundle.string()),
                                                log) == 0,
                  readTextFile(log));
  const std::map<std::string, std::string> final = resultsById(results);
  CHECK(final.size() == ids.size());
  int crashed = 0;
  for (const auto& [id, status] : final) {
    CAPTURE(id);
    CHECK(ids.count(id) == 1);
    CHECK((status == "ok" || status == "crashed"));
    crashed += status == "crashed";
  }
  MESSAGE(kills << " kills (" << childKills << " of the measuring child), " << crashed
                << " variants recorded crashed");
  CHECK(crashed <= childKills);

  const std::string db = (dir.path / "imported.db").string();
  const auto imported = runWeft({"import", results.string(), "--db", db});
  REQUIRE_MESSAGE(imported.exitCode == 0, imported.output);
  CHECK(weft::explore::ResultsDb(db).variants().size() == ids.size());
}

TEST_CASE("a harness killed while its kernel hangs leaves no process behind") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_bundle_harness_hang");
  const fs::path bundle = dir.path / "bundle";
  const fs::path log = dir.path / "log.txt";
  const auto written = runWeft({"bundle", "--layer", "4,8,8,4,3,1,1", "--samples", "2", "--seed",
                                "3", "--profile", "pocl-cpu", "--out", bundle.string()});
  REQUIRE_MESSAGE(written.exitCode == 0, written.output);
  // Every variant's kernels that write the output loop forever (the reference's do not).
  const nlohmann::json variants =
      nlohmann::json::parse(readTextFile(bundle / "variants.json"));
  for (const nlohmann::json& variant : variants["variants"]) {
    const fs::path file = bundle / variant["file"].get<std::string>();
    std::string source = readTextFile(file);
    const std::string output = variant["outputBuffer"];
    for (const nlohmann::json& kernel : variant["kernels"]) {
      for (const nlohmann::json& arg : kernel["arguments"]) {
        if (arg["kind"] == "buffer" && arg["buffer"] == output) {
          source = weft::testing::plantInKernel(
              source, kernel["name"], "for (;;) { ((global float*)" + output + ")[0] += 1.0f; }");
        }
      }
    }
    std::ofstream(file) << source;
  }
  const fs::path harness = weft::testing::buildBundleHarness(bundle, dir.path / "build", log);
  const pid_t running = weft::testing::startInBackground(
      harness.string(), {bundle.string()}, (dir.path / "harness.log").string());
  REQUIRE(running > 0);
  // The reference is done once results.json exists; then a child that lives 2 s hangs.
  const auto started = Clock::now();
  pid_t hanging = -1;
  auto childSince = Clock::now();
  while (Clock::now() - started < std::chrono::seconds(60)) {
    const std::vector<pid_t> children = weft::testing::childrenOf(running);
    if (!fs::exists(bundle / "results.json") || children.empty()) {
      hanging = -1;
    } else if (children.front() != hanging) {
      hanging = children.front();
      childSince = Clock::now();
    } else if (Clock::now() - childSince > std::chrono::seconds(2)) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE_MESSAGE(hanging > 0, readTextFile(dir.path / "harness.log"));
  REQUIRE(kill(running, SIGKILL) == 0);
  int status = 0;
  REQUIRE(waitpid(running, &status, 0) == running);
  const auto killed = Clock::now();
  while (alive(hanging) && Clock::now() - killed < std::chrono::seconds(5)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const bool left = alive(hanging);
  if (left) kill(hanging, SIGKILL);
  CHECK_MESSAGE(!left, "the hanging child outlived the killed harness by 5 s");
}
