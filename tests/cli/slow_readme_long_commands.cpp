// The README's commands that opencl_readme_commands does not run in full: explorations of hours
// (the 13 VGG-16 layers, 1000 samples of a layer, a Slurm array's task), the benchmarks that
// reproduce the figures, the setup scripts and the fuzzers. Every command the README shows
// (tests/support/readme_commands.h) must be either in a block that test runs or in this file's
// table, which says how it runs here; a README command in neither fails the test, so that no
// command is added to the README without a test. Each runs as written, with bash, in a scratch
// folder laid out like the repository (examples/ and bench/results/vgg16-explore.db.xz copied;
// build/, scripts/ and fuzz/ linked; `weft` on the PATH), in README order, so that a command
// finds the databases the commands before it made:
//   - a whole command runs to its end and must exit 0;
//   - a command of hours runs until it shows the work it was written for (its database gains a
//     final row; a benchmark has made its first measurement: Table 3 has rebuilt, verified and
//     re-timed a layer's best and goes on to the naive kernel; a fuzzer starts), then is interrupted
//     as Ctrl-C would (SIGINT to its process group). It must not fail before that, and no process
//     of its group may outlive the interrupt. A benchmark is interrupted before it writes its
//     results, so that the kept figures in bench/results stay as they are;
//   - `sbatch` is Slurm's: the script runs as a task of the array would (SLURM_ARRAY_TASK_ID set),
//     and the array's other shards, for `weft merge`, are copies of the first;
//   - scripts/setup-bench.sh runs with a stand-in for apt-get: when its packages are present it
//     must say so and exit 0; when one is missing the test reports that it would install it (a
//     test does not install gigabytes of packages) and goes on;
//   - scripts/test.sh is what CI runs (.ci/run); with -L property the label must select tests
//     (in CTest's listing of the build's tests);
//     scripts/main.sh runs to its end in tests/cli/slow_readme_main_job.cpp.
// A benchmark that was not built (CLBlast, Halide or clang missing: scripts/setup-bench.sh) is
// reported and left out. Label slow: about five minutes on 2 cores (its limit is set apart in
// tests/CMakeLists.txt).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "tests/support/bounded_command.h"
#include "tests/support/readme_commands.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::BoundedRun;
using weft::testing::readTextFile;
using weft::testing::ReadmeCommand;
using weft::testing::runBounded;
using weft::testing::shellQuote;
using weft::testing::TempDir;

namespace {

enum class Way {
  Whole,          // to its end, exit 0
  UntilRow,       // until `detail` (a database) gains a final row
  UntilOutput,    // until its output holds `detail`
  SlurmTask,      // the sbatch'ed script as task 3 of the array, until its database gains a row
  SetupBench,     // with a stand-in for apt-get
  RunByCi,        // .ci/run runs it
  CiLabel,        // scripts/test.sh with a ctest label: the label selects tests
  RunByMainJobTest,
};

struct Treatment {
  Way way;
  std::string detail;                    // the database or the awaited output
  std::vector<std::string> environment;  // NAME=value added
  std::string needs;                     // a file the command needs built ("" none)
};

const std::map<std::string, Treatment>& treatments() {
  static const std::map<std::string, Treatment> table = {
      {"bash scripts/main.sh", {Way::RunByMainJobTest, "", {}, ""}},
      {"bash scripts/test.sh", {Way::RunByCi, "", {}, ""}},
      {"bash scripts/test.sh -L property", {Way::CiLabel, "property", {}, ""}},
      {"build/weft explore --all-vgg16 --samples 100 --seed 1 --db vgg16.db",
       {Way::UntilRow, "vgg16.db", {}, ""}},
      {"weft explore --layer vgg16:2 --samples 1000 --seed 1 --shard ${SLURM_ARRAY_TASK_ID}/8 "
       "--db results-${SLURM_ARRAY_TASK_ID}.db",
       {Way::UntilRow, "results-1.db", {"SLURM_ARRAY_TASK_ID=1"}, ""}},
      {"weft merge --db results.db results-{1..8}.db", {Way::Whole, "", {}, ""}},
      {"sbatch --array=3 examples/slurm/explore_array.sh",
       {Way::SlurmTask, "results-3.db", {"SLURM_ARRAY_TASK_ID=3"}, ""}},
      {"bash scripts/setup-bench.sh", {Way::SetupBench, "", {}, ""}},
      {"bash scripts/setup-bench.sh     # Halide 14, OpenCV 4.6, CLBlast, PyTorch from Debian",
       {Way::SetupBench, "", {}, ""}},
      {"weft explore --all-vgg16 --samples 1000 --seed 1 --db vgg16.db   # stop and resume at will",
       {Way::UntilRow, "vgg16.db", {}, ""}},
      {"build/bench/weft_bench_table3 --device pocl --db vgg16.db --retime 4 --min-seconds 2",
       {Way::UntilOutput, "naive: ", {}, "build/bench/weft_bench_table3"}},
      {"xz -dk bench/results/vgg16-explore.db.xz", {Way::Whole, "", {}, ""}},
      {"build/bench/weft_bench_table3 --device pocl --db bench/results/vgg16-explore.db "
       "--retime 4 --min-seconds 2",
       {Way::UntilOutput, "naive: ", {}, "build/bench/weft_bench_table3"}},
      {"build/bench/weft_bench_pipelines --repeats 5 --peer-repeats 5 --peer-threads 2   # "
       "--min-time 100",
       {Way::UntilOutput, "copy bandwidth floor", {}, "build/bench/weft_bench_pipelines"}},
      {"build/bench/weft_bench_weft_overhead --samples 1000",
       {Way::UntilOutput, "generation cpu median", {}, "build/bench/weft_bench_weft_overhead"}},
      {"weft explore --layer vgg16:0 --samples 1000 --seed 1 --jobs 2",
       {Way::UntilRow, "results.db", {}, ""}},
      {"weft explore --all-vgg16 --samples 60", {Way::UntilRow, "results.db", {}, ""}},
      {"weft explore --layer vgg16:10 --samples 1000", {Way::UntilRow, "results.db", {}, ""}},
      {"bash bench/fuzz.sh", {Way::UntilOutput, "fuzzing text_format", {}, "build/fuzz/fuzz_text_format"}},
  };
  return table;
}

// Every file under `folder` with its size and modification time: the kept figures in the
// source tree's bench/results, which no interrupted benchmark may write.
std::map<std::string, std::pair<uintmax_t, fs::file_time_type>> filesUnder(const fs::path& folder) {
  std::map<std::string, std::pair<uintmax_t, fs::file_time_type>> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    if (entry.is_regular_file()) {
      files[entry.path().string()] = {entry.file_size(), entry.last_write_time()};
    }
  }
  return files;
}

// Final (not `running`) rows of a results database; 0 while it does not exist yet.
size_t finalRows(const fs::path& database) {
  try {
    size_t rows = 0;
    for (const auto& v : weft::explore::readResultsSnapshot(database).variants) {
      rows += v.status != weft::explore::VariantStatus::Running;
    }
    return rows;
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

TEST_CASE("every README command runs here: in full, or until it shows its work") {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const fs::path source = fs::absolute(root ? root : ".");
  const fs::path build = fs::absolute(weft::testing::weftBinary()).parent_path();
  const std::vector<ReadmeCommand> commands =
      weft::testing::readmeCommands(readTextFile(source / "README.md"));

  // Every command is run somewhere: in a marked block or by this table.
  for (const ReadmeCommand& command : commands) {
    CAPTURE(command.line);
    CAPTURE(command.text);
    CHECK_MESSAGE((command.marked || treatments().count(command.text) > 0),
                  "README.md:" << command.line << " shows a command that no test runs; add it "
                               << "to tests/cli/slow_readme_long_commands.cpp's table");
  }

  TempDir scratch("weft_readme_long");
  const fs::path work = scratch.path / "work";
  const fs::path bin = scratch.path / "bin";
  fs::create_directories(work / "bench" / "results");
  fs::create_directories(bin);
  fs::copy(source / "examples", work / "examples", fs::copy_options::recursive);
  fs::copy_file(source / "bench/results/vgg16-explore.db.xz",
                work / "bench/results/vgg16-explore.db.xz");
  fs::create_symlink(source / "bench" / "fuzz.sh", work / "bench" / "fuzz.sh");
  fs::create_directory_symlink(build, work / "build");
  fs::create_directory_symlink(source / "scripts", work / "scripts");
  fs::create_directory_symlink(source / "fuzz", work / "fuzz");
  fs::create_symlink(build / "weft", bin / "weft");
  {
    std::ofstream standIn(bin / "apt-get");
    standIn << "#!/bin/sh\necho \"apt-get (the test's stand-in) would run: apt-get $*\"\nexit 97\n";
  }
  fs::permissions(bin / "apt-get", fs::perms::owner_all | fs::perms::group_read |
                                       fs::perms::group_exec | fs::perms::others_read |
                                       fs::perms::others_exec);
  const std::string path = "PATH=" + bin.string() + ":/usr/bin:" +
                           (std::getenv("PATH") ? std::getenv("PATH") : "/bin");

  const auto keptFigures = filesUnder(source / "bench" / "results");
  int ran = 0, leftOut = 0;
  for (const ReadmeCommand& command : commands) {
    if (command.marked) continue;
    auto found = treatments().find(command.text);
    if (found == treatments().end()) continue;  // reported above
    const Treatment& how = found->second;
    CAPTURE(command.line);
    CAPTURE(command.text);
    if (!how.needs.empty() && !fs::exists(work / how.needs)) {
      MESSAGE("README.md:" << command.line << ": " << how.needs
                           << " is not built (scripts/setup-bench.sh, clang): left out");
      ++leftOut;
      continue;
    }
    std::vector<std::string> environment = how.environment;
    environment.push_back(path);
    switch (how.way) {
      case Way::RunByMainJobTest:
        continue;  // tests/cli/slow_readme_main_job.cpp
      case Way::RunByCi: {
        const std::string ci = readTextFile(source / ".ci/run");
        CHECK(ci.find("exec bash scripts/test.sh") != std::string::npos);
        continue;
      }
      case Way::CiLabel: {
        // The label selects tests: CTest's own listing of them, read rather than run (a ctest
        // run here would overwrite the running suite's logs in the build folder).
        const std::string listing = readTextFile(build / "tests" / "CTestTestfile.cmake");
        size_t labelled = 0;
        for (size_t at = listing.find(";" + how.detail + "\""); at != std::string::npos;
             at = listing.find(";" + how.detail + "\"", at + 1)) {
          ++labelled;
        }
        CHECK(labelled > 0);
        ++ran;
        continue;
      }
      case Way::Whole: {
        if (command.text.find("results-{1..8}.db") != std::string::npos) {
          // The array's other shards stand in as copies of the first task's database.
          REQUIRE(fs::exists(work / "results-1.db"));
          for (int task = 2; task <= 8; ++task) {
            const fs::path shard = work / ("results-" + std::to_string(task) + ".db");
            if (!fs::exists(shard)) fs::copy_file(work / "results-1.db", shard);
          }
        }
        const BoundedRun run = runBounded(
            command.text, work, environment, [](const std::string&) { return false; }, 280);
        CHECK_MESSAGE(run.endedAlone, run.output.substr(0, 3000));
        CHECK_MESSAGE(run.exitCode == 0, run.output.substr(0, 3000));
        ++ran;
        continue;
      }
      case Way::SetupBench: {
        const BoundedRun run = runBounded(
            command.text, work, environment, [](const std::string&) { return false; }, 120);
        REQUIRE(run.endedAlone);
        if (run.output.find("apt-get (the test's stand-in) would run") != std::string::npos) {
          MESSAGE("README.md:" << command.line << ": packages missing, would install them: "
                               << run.output.substr(0, 400));
          ++leftOut;
        } else {
          CHECK_MESSAGE(run.exitCode == 0, run.output.substr(0, 3000));
          CHECK(run.output.find("benchmark packages present") != std::string::npos);
          ++ran;
        }
        continue;
      }
      case Way::UntilRow:
      case Way::SlurmTask: {
        const fs::path database = work / how.detail;
        const size_t before = finalRows(database);
        const std::string text =
            how.way == Way::SlurmTask ? "bash examples/slurm/explore_array.sh" : command.text;
        const BoundedRun run = runBounded(
            text, work, environment,
            [&](const std::string&) { return finalRows(database) > before; }, 240);
        CHECK_MESSAGE(run.awaited, "no new row in " << how.detail << " after " << run.seconds
                                                    << " s:\n" << run.output.substr(0, 3000));
        CHECK_FALSE(run.leftovers);
        MESSAGE("README.md:" << command.line << ": a new row after " << run.seconds << " s");
        ++ran;
        continue;
      }
      case Way::UntilOutput: {
        const BoundedRun run = runBounded(
            command.text, work, environment,
            [&](const std::string& output) { return output.find(how.detail) != std::string::npos; },
            240);
        CHECK_MESSAGE(run.awaited, "no '" << how.detail << "' after " << run.seconds << " s:\n"
                                          << run.output.substr(0, 3000));
        CHECK_FALSE(run.leftovers);
        MESSAGE("README.md:" << command.line << ": '" << how.detail << "' after " << run.seconds
                             << " s");
        ++ran;
        continue;
      }
    }
  }
  CHECK_MESSAGE(filesUnder(source / "bench" / "results") == keptFigures,
                "an interrupted command wrote into the source tree's bench/results");
  MESSAGE(ran << " README commands run here, " << leftOut << " left out (not built or packages "
              << "missing)");
  CHECK(ran >= 10);
}
