// `weft explore` under random SIGKILLs of each of its processes in turn: the measuring child (the
// launcher's child), a child of the explorer with no children of its own (the generator or a
// pre-build), the launcher (the explorer's child that has a measuring child), and the explorer
// itself, at random moments (seeded), 24 kills in all; after each kill of the explorer the same
// command is started again, and after the last kill it runs to its end undisturbed (an
// exploration that ends sooner is checked and the kills go on in a fresh one). Then every
// sampled variant is recorded exactly once (60 rows, each key once, none left `running`), no
// variant was started again more often than kills could cause (the rows' attempts beyond the
// first add up to at most the kills), and within 5 s of each kill of the explorer none of its
// processes is left (they end when it dies). Without an OpenCL device the test passes with a
// message. And `weft merge` of 20000 rows SIGKILLed at random moments inside its run: the target
// keeps its own rows and holds either none of the source's or all of them (one transaction),
// and a merge run to its end then adds them. Label slow: about a minute on 2 cores.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "explore/results_db.h"
#include "tests/support/processes.h"
#include "tests/support/run_weft.h"

using namespace weft::explore;
using weft::testing::haveOpenCLDevice;
using weft::testing::runWeft;
using weft::testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

pid_t startWeft(const std::vector<std::string>& args, const std::string& log) {
  const pid_t pid = weft::testing::startInBackground(weft::testing::weftBinary(), args, log);
  REQUIRE(pid >= 0);
  return pid;
}

std::string fileText(const std::filesystem::path& path) {
  // A /proc file of a process that exits while it is read fails the read (ESRCH, which
  // libstdc++'s filebuf throws): "" as for a file that cannot be opened.
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return std::string();
  }
}

// Live (not zombie) processes: pid -> parent pid.
std::map<pid_t, pid_t> liveProcesses() {
  std::map<pid_t, pid_t> parents;
  for (const auto& [pid, info] : weft::testing::liveProcesses()) parents[pid] = info.parent;
  return parents;
}

// Processes whose command line names `marker` (the database path, unique to this test).
std::vector<pid_t> processesNaming(const std::string& marker) {
  std::vector<pid_t> found;
  for (const auto& [pid, parent] : liveProcesses()) {
    std::string command = fileText("/proc/" + std::to_string(pid) + "/cmdline");
    for (char& c : command) {
      if (c == '\0') c = ' ';
    }
    if (command.find(marker) != std::string::npos && pid != getpid()) found.push_back(pid);
  }
  return found;
}

enum class Victim { MeasuringChild, LeafChild, Launcher, Explorer };

const char* victimName(Victim victim) {
  switch (victim) {
    case Victim::MeasuringChild:
      return "the measuring child";
    case Victim::LeafChild:
      return "the generator or a pre-build";
    case Victim::Launcher:
      return "the launcher";
    case Victim::Explorer:
      return "the explorer";
  }
  return "?";
}

// A process of the kind `victim` (not the explorer) under `explorer`, or -1 when there is none now.
pid_t findVictim(Victim victim, pid_t explorer, std::mt19937& rng) {
  using weft::testing::ExplorerRole;
  const ExplorerRole role = victim == Victim::MeasuringChild ? ExplorerRole::MeasuringChild
                            : victim == Victim::LeafChild    ? ExplorerRole::LeafChild
                                                             : ExplorerRole::Launcher;
  const std::vector<pid_t> candidates = weft::testing::explorerProcesses(role, explorer);
  if (candidates.empty()) return -1;
  return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
}

}  // namespace

// Runs `args` (whose database is `db`) to its end once more, undisturbed, and checks the rows:
// `samples` of them, each key once, none running, and at most `kills` started again.
void checkComplete(const std::vector<std::string>& args, const std::string& db, int samples,
                   int kills) {
  const auto again = runWeft(args);
  CAPTURE(again.output);
  REQUIRE(again.exitCode == 0);
  const std::vector<VariantRecord> rows = ResultsDb(db).variants();
  CHECK(rows.size() == static_cast<size_t>(samples));
  std::set<std::string> keys;
  int reruns = 0;
  std::map<std::string, int> statuses;
  for (const VariantRecord& row : rows) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    CHECK(keys.insert(row.key.parameters).second);
    CHECK(row.status != VariantStatus::Running);
    CHECK(row.attempts >= 1);
    reruns += row.attempts - 1;
    ++statuses[statusName(row.status)];
  }
  std::string counts;
  for (const auto& [status, count] : statuses) counts += " " + status + " " + std::to_string(count);
  MESSAGE(db << ": " << kills << " kills," << counts << ", " << reruns
             << " variants started again");
  CHECK(reruns <= kills);
  CHECK(processesNaming(db).empty());
}

TEST_CASE("24 random SIGKILLs of each process in turn: every variant recorded exactly once") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_explore_random_kills");
  const int samples = 60;
  auto argsFor = [&](const std::string& db) {
    return std::vector<std::string>{
        "explore", "--layer", "8,16,16,8,3,1,1", "--vector-width", "4", "--unroll", "0",
        "--samples", std::to_string(samples), "--seed", "12", "--db", db, "--min-time", "2",
        "--jobs", "2", "--quiet"};
  };
  const std::string log = dir.file("explore.log");
  std::mt19937 rng(20261127);
  const Victim order[] = {Victim::MeasuringChild, Victim::LeafChild, Victim::Launcher,
                          Victim::Explorer};
  std::map<std::string, int> killsOf;
  int kills = 0;
  // An exploration that ends before the 24th kill (fast variants, warm build caches) is
  // checked, and the kills go on in another one (a fresh database).
  for (int epoch = 0; kills < 24; ++epoch) {
    const std::string db = dir.file("killed-" + std::to_string(epoch) + ".db");
    const std::vector<std::string> args = argsFor(db);
    const int killsBefore = kills;
    pid_t explorer = startWeft(args, log);
    bool ended = false;
    while (kills < 24 && !ended) {
      Victim victim = order[kills % 4];
      // A random moment, then the first process of that kind to appear (within 5 s; else the
      // explorer is killed instead).
      std::this_thread::sleep_for(
          std::chrono::milliseconds(std::uniform_int_distribution<int>(200, 1500)(rng)));
      pid_t target = -1;
      const auto searchStart = Clock::now();
      while (victim != Victim::Explorer && Clock::now() - searchStart < std::chrono::seconds(5)) {
        target = findVictim(victim, explorer, rng);
        if (target > 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      int status = 0;
      if (waitpid(explorer, &status, WNOHANG) == explorer) {
        CHECK_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0),
                      "the explorer ended by itself with "
                          << (WIFSIGNALED(status) ? "signal " + std::to_string(WTERMSIG(status))
                                                  : "exit code " + std::to_string(WEXITSTATUS(status)))
                          << " after " << kills << " kills; its output:\n"
                          << fileText(log));
        ended = true;
        break;
      }
      if (target <= 0) victim = Victim::Explorer;
      if (victim == Victim::Explorer) target = explorer;
      REQUIRE(kill(target, SIGKILL) == 0);
      ++kills;
      ++killsOf[victimName(victim)];
      if (victim == Victim::Explorer) {
        waitpid(explorer, &status, 0);
        // None of its processes may outlive it by more than a few seconds.
        const auto killedAt = Clock::now();
        std::vector<pid_t> left = processesNaming(db);
        while (!left.empty() && Clock::now() - killedAt < std::chrono::seconds(5)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          left = processesNaming(db);
        }
        CHECK_MESSAGE(left.empty(), left.size() << " processes outlived the explorer by 5 s");
        for (pid_t pid : left) kill(pid, SIGKILL);
        explorer = startWeft(args, log);
      }
    }
    if (!ended) {
      int status = 0;
      waitpid(explorer, &status, 0);  // undisturbed to its end
    }
    checkComplete(args, db, samples, kills - killsBefore);
  }
  for (const auto& [name, count] : killsOf) MESSAGE(count << " kills of " << name);
  CHECK(kills == 24);
  CHECK(killsOf["the explorer"] >= 6);
  CHECK(killsOf.size() == 4);
}

TEST_CASE("weft merge SIGKILLed at random moments: the target is unchanged or fully merged") {
  TempDir dir("weft_merge_kills");
  const std::string source = dir.file("source.db");
  const std::string target = dir.file("target.db");
  const int sourceRows = 20000;
  {
    ResultsDb db(source);
    VariantRecord record;
    record.status = VariantStatus::Ok;
    record.samplesNs = {1000, 1100, 1200};
    record.medianNs = 1100;
    record.spaceBytes = 4096;
    record.details = R"({"note":"planted"})";
    std::vector<VariantRecord> rows;
    for (int i = 0; i < sourceRows; ++i) {
      record.key = {"conv_planted", "0123456789abcdef", "weft test",
                    "{\"i\":" + std::to_string(i) + "}"};
      rows.push_back(record);
    }
    db.importVariants(rows, std::nullopt);  // one transaction
  }
  // The target holds rows of its own, which must survive whatever happens.
  {
    ResultsDb db(target);
    VariantRecord own;
    own.key = {"conv_own", "0123456789abcdef", "weft test", "{\"j\":1}"};
    own.status = VariantStatus::Ok;
    own.samplesNs = {5};
    own.medianNs = 5;
    db.record(own);
  }
  // How long a whole merge takes here, on a copy, to place the kills inside it.
  std::filesystem::copy_file(target, dir.file("timing.db"));
  const auto timed = Clock::now();
  REQUIRE(runWeft({"merge", "--db", dir.file("timing.db"), source}).exitCode == 0);
  const double mergeMs =
      std::chrono::duration<double, std::milli>(Clock::now() - timed).count();
  MESSAGE("a whole merge of " << sourceRows << " rows took " << mergeMs << " ms");

  const std::string pristine = dir.file("pristine.db");
  std::filesystem::copy_file(target, pristine);
  std::mt19937 rng(7);
  int unchanged = 0, merged = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    // Each attempt from the target as it was (a merge that completed is undone here).
    std::filesystem::remove(target + "-wal");
    std::filesystem::remove(target + "-shm");
    std::filesystem::copy_file(pristine, target, std::filesystem::copy_options::overwrite_existing);
    const pid_t pid = startWeft({"merge", "--db", target, source}, dir.file("merge.log"));
    std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(
        std::uniform_real_distribution<double>(0.1, 1.1)(rng) * mergeMs * 1000)));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    const size_t rows = ResultsDb(target).variants().size();
    CAPTURE(attempt);
    CHECK((rows == 1 || rows == static_cast<size_t>(sourceRows) + 1));
    (rows == 1 ? unchanged : merged)++;
    CHECK(ResultsDb(target).find({"conv_own", "0123456789abcdef", "weft test", "{\"j\":1}"}));
  }
  MESSAGE(unchanged << " kills left the target unchanged, " << merged
                    << " came after the commit");
  CHECK(unchanged >= 1);  // at least one kill fell inside the transaction
  // The merge then completes.
  REQUIRE(runWeft({"merge", "--db", target, source}).exitCode == 0);
  CHECK(ResultsDb(target).variants().size() == static_cast<size_t>(sourceRows) + 1);
}
