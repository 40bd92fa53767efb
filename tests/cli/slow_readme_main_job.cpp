// The README's first command, `bash scripts/main.sh`, run to its end as CI's fresh clone would
// after `bash scripts/test.sh` (packages present, everything built, so its setup step only
// checks them and builds nothing): it must exit 0, having checked every example, compared the
// interpreter's and OpenCL's results with NumPy, explored a layer and printed the report. It
// runs in the repository with this build folder (WEFT_BUILD_DIR) and keeps its database in
// results/main-job.db as a reader's run would (a re-run resumes). Label slow: about a minute on
// 2 cores.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/bounded_command.h"
#include "tests/support/readme_commands.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;

TEST_CASE("the README's main job, bash scripts/main.sh, runs to its end") {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const fs::path source = fs::absolute(root ? root : ".");
  const fs::path build = fs::absolute(weft::testing::weftBinary()).parent_path();
  bool shown = false;
  for (const auto& command :
       weft::testing::readmeCommands(weft::testing::readTextFile(source / "README.md"))) {
    shown = shown || command.text == "bash scripts/main.sh";
  }
  REQUIRE_MESSAGE(shown, "README.md no longer shows `bash scripts/main.sh`");
  const weft::testing::BoundedRun run = weft::testing::runBounded(
      "bash scripts/main.sh", source, {"WEFT_BUILD_DIR=" + build.string()},
      [](const std::string&) { return false; }, 280);
  CAPTURE(run.output.substr(run.output.size() > 4000 ? run.output.size() - 4000 : 0));
  REQUIRE(run.endedAlone);
  CHECK(run.exitCode == 0);
  CHECK(run.output.find("[main] weft check examples/") != std::string::npos);
  CHECK(run.output.find("Pareto front") != std::string::npos);
  MESSAGE("scripts/main.sh took " << run.seconds << " s");
}
