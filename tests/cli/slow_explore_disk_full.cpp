// `weft explore` whose database's disk fills up: the database lives on a 120 KB tmpfs mounted
// for the test, so that an exploration of 40 samples runs out of room after a few variants.
// The explorer must stop with exit code 1 and a message that says the disk is full and how to
// go on; the rows written before stay readable (copied off the full disk, with its WAL); and the
// same command, given room (the copy, on the ordinary disk), goes on from them: no recorded
// variant measured again, all 40 recorded. Mounting needs root (or CAP_SYS_ADMIN); without it
// the test passes with a message, as it does without an OpenCL device. Label slow: about half
// a minute on 2 cores.
#include <doctest/doctest.h>
#include <sys/mount.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "tests/support/run_weft.h"

using namespace weft::explore;
using weft::testing::contains;
using weft::testing::haveOpenCLDevice;
using weft::testing::runWeft;
using weft::testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("a full disk under the database: reported, rows kept, the same command goes on") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_disk_full");
  const fs::path tiny = fs::path(dir.path) / "tiny";
  fs::create_directories(tiny);
  if (mount("tmpfs", tiny.c_str(), "tmpfs", 0, "size=120k") != 0) {
    MESSAGE("cannot mount a tmpfs here (needs root): skipped");
    return;
  }
  struct Unmount {
    fs::path at;
    ~Unmount() { umount2(at.c_str(), MNT_DETACH); }
  } unmount{tiny};

  const std::vector<std::string> common = {"explore", "--layer", "8,16,16,8,3,1,1",
                                           "--vector-width", "4", "--unroll", "0",
                                           "--samples", "40", "--seed", "13", "--quiet"};
  std::vector<std::string> onTiny = common;
  onTiny.insert(onTiny.end(), {"--db", (tiny / "full.db").string()});
  const auto full = runWeft(onTiny);
  CAPTURE(full.output);
  CHECK(full.exitCode == 1);
  CHECK(contains(full.output, "database or disk is full"));
  CHECK(contains(full.output, "the rows written so far are kept"));

  // The rows written before the disk filled, read from a copy (database, WAL and shared memory).
  const fs::path roomy = fs::path(dir.path) / "roomy.db";
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const fs::path from = tiny / (std::string("full.db") + suffix);
    if (fs::exists(from)) fs::copy_file(from, roomy.string() + suffix);
  }
  std::map<std::string, VariantRecord> kept;
  for (const VariantRecord& row : readResultsSnapshot(roomy).variants) {
    if (row.status != VariantStatus::Running) kept.emplace(row.key.parameters, row);
  }
  MESSAGE(kept.size() << " variants recorded before the disk was full");
  REQUIRE(kept.size() >= 1);
  REQUIRE(kept.size() < 40);

  // Given room, the same exploration goes on from them.
  std::vector<std::string> onRoomy = common;
  onRoomy.insert(onRoomy.end(), {"--db", roomy.string()});
  const auto resumed = runWeft(onRoomy);
  CAPTURE(resumed.output);
  REQUIRE(resumed.exitCode == 0);
  CHECK(contains(resumed.output, std::to_string(kept.size()) + " already in"));
  const std::vector<VariantRecord> rows = ResultsDb(roomy).variants();
  CHECK(rows.size() == 40);
  std::set<std::string> keys;
  for (const VariantRecord& row : rows) {
    CHECK(keys.insert(row.key.parameters).second);
    CHECK(row.status != VariantStatus::Running);
    auto before = kept.find(row.key.parameters);
    if (before != kept.end()) {
      CHECK(row.attempts == 1);
      CHECK(row.samplesNs == before->second.samplesNs);
    }
  }
}
