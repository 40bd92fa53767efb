// The README's commands run as written: every ```sh block the README marks with
// "<!-- tests/cli/opencl_readme_commands.cpp runs every command of this block, in order -->"
// (the quick tour and the sharded exploration) is read from README.md, and each of its lines
// that is not blank or a comment is run with sh, in order, in one scratch folder holding a
// copy of examples/ and build/weft, and must exit 0. Blocks left unmarked are programs (the
// text format), the setup commands CI runs anyway (scripts/main.sh, scripts/test.sh) or runs
// of hours (the 13 layers, the benchmarks): tests/cli/slow_readme_long_commands.cpp and
// slow_readme_main_job.cpp run those.
// Label opencl: the commands run, explore and time on the default OpenCL device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/readme_commands.h"
#include "tests/support/run_weft.h"
#include "tests/support/scratch_commands.h"

using weft::testing::CommandResult;
using weft::testing::CommandScratch;
using weft::testing::haveOpenCLDevice;
using weft::testing::readTextFile;

TEST_CASE("every command of the README's marked blocks runs as written") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  std::vector<std::string> commands;
  for (const weft::testing::ReadmeCommand& command : weft::testing::readmeCommands(
           readTextFile(std::filesystem::path(root ? root : ".") / "README.md"))) {
    if (command.marked) commands.push_back(command.text);
  }
  REQUIRE(commands.size() >= 20);
  const CommandScratch scratch;
  for (const std::string& command : commands) {
    CAPTURE(command);
    const CommandResult result = scratch.run(command);
    CHECK_MESSAGE(result.exitCode == 0, result.output.substr(0, 3000));
  }
  MESSAGE(commands.size() << " README commands run");
}
