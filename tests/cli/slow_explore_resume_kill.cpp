// Killing `weft explore` half-way (SIGKILL, no chance to clean up) and re-running the same
// command loses no variant and measures none twice: the real binary explores a small layer
// (8×16×16 → 8, 3×3 kernels, one conv-direct structure so that it stays well under a minute)
// with 30 samples and pre-builds (--jobs 2); the test polls the database and kills the process
// once at least 8 variants are recorded, then re-runs the same command. Afterwards there are
// exactly 30 rows, each key once, none left `running`; every variant recorded before the kill
// is untouched (same status, time samples, source hash, one attempt), and a variant that was
// marked running at the kill was run again once (attempts 2), as explore/explorer.h documents.
// The re-run reports the variants it found done. Without an OpenCL device (weft devices fails)
// the test passes with a message.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "explore/results_db.h"

#include "tests/support/processes.h"
#include "tests/support/run_weft.h"

using namespace weft::explore;
using weft::testing::contains;
using weft::testing::haveOpenCLDevice;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

// Starts the binary with `args`, stdout and stderr into `log`; returns its process id.
pid_t startWeft(const std::vector<std::string>& args, const std::string& log) {
  std::filesystem::remove(log);
  const pid_t pid = weft::testing::startInBackground(weft::testing::weftBinary(), args, log);
  REQUIRE(pid >= 0);
  return pid;
}

struct Snapshot {
  std::map<std::string, VariantRecord> finished;  // by parameters
  std::set<std::string> running;
};

Snapshot snapshot(const std::string& db, const std::string& program) {
  Snapshot out;
  ResultsDb results(db);
  for (const VariantRecord& row : results.variants(program)) {
    if (row.status == VariantStatus::Running) {
      out.running.insert(row.key.parameters);
    } else {
      out.finished.emplace(row.key.parameters, row);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("SIGKILL half-way, then the same command: 30 variants, none lost or measured twice") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_explore_kill");
  const std::string db = dir.file("results.db");
  const std::string program = "conv_8_16_16_8_3_1_1";
  const std::vector<std::string> args = {
      "explore", "--layer", "8,16,16,8,3,1,1", "--vector-width", "4", "--unroll", "0",
      "--samples", "30", "--seed", "11", "--db", db, "--min-time", "2", "--quiet"};
  std::vector<std::string> firstArgs = args;
  firstArgs.insert(firstArgs.end(), {"--jobs", "2"});

  const pid_t pid = startWeft(firstArgs, dir.file("first.log"));
  // Wait for at least 8 recorded variants (polling the database the explorer writes as it
  // goes), preferably while one is marked running, then kill the explorer.
  const auto start = std::chrono::steady_clock::now();
  bool exited = false;
  Snapshot seen;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(50)) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    // The command creates the database first thing; polling starts a second later, so that
    // this process never opens it while it is being initialised.
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(1) &&
        std::filesystem::exists(db)) {
      try {
        seen = snapshot(db, program);
      } catch (const ResultsDbError&) {
        // created but not yet initialised: try again
      }
      if (seen.finished.size() >= 8 && !seen.running.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CAPTURE(dir.read("first.log"));
  REQUIRE_FALSE(exited);  // it must still be running to be killed half-way
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  const Snapshot killed = snapshot(db, program);
  MESSAGE(killed.finished.size() << " variants recorded and " << killed.running.size()
                                 << " marked running when the explorer was killed");
  REQUIRE(killed.finished.size() >= 8);
  REQUIRE(killed.finished.size() < 30);
  CHECK(killed.running.size() <= 1);  // one variant is measured at a time

  auto again = runWeft(args);
  CAPTURE(again.output);
  REQUIRE(again.exitCode == 0);
  CHECK(contains(again.output,
                 "30 sampled, " + std::to_string(killed.finished.size()) + " already in"));
  CHECK(contains(again.output, std::to_string(30 - killed.finished.size()) + " run"));

  ResultsDb results(db);
  std::vector<VariantRecord> rows = results.variants(program);
  CHECK(rows.size() == 30);
  std::set<std::string> keys;
  for (const VariantRecord& row : rows) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    CHECK(keys.insert(row.key.parameters).second);  // each key once
    CHECK(row.status != VariantStatus::Running);
    auto before = killed.finished.find(row.key.parameters);
    if (before != killed.finished.end()) {
      // Recorded before the kill: skipped by the re-run, not measured again.
      CHECK(row.attempts == 1);
      CHECK(row.status == before->second.status);
      CHECK(row.samplesNs == before->second.samplesNs);
      CHECK(row.sourceHash == before->second.sourceHash);
      CHECK(row.details == before->second.details);
    } else if (killed.running.count(row.key.parameters)) {
      // The variant under way at the kill: run again once by the re-run.
      CHECK(row.attempts == 2);
    } else {
      CHECK(row.attempts == 1);
    }
    if (row.status == VariantStatus::Ok) {
      // Timed once when over 10x the best so far (details "timedOnce"), else at least 3 times.
      const bool timedOnce = row.details.find("\"timedOnce\":true") != std::string::npos;
      CHECK(row.samplesNs.size() >= (timedOnce ? 1u : 3u));
      CHECK(row.medianNs.value_or(0) > 0);
    }
  }
  CHECK(keys.size() == 30);
}
