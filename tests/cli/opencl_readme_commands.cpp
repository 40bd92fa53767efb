// The README's commands run as written: every ```sh block the README marks with
// "<!-- tests/cli/opencl_readme_commands.cpp runs every command of this block, in order -->"
// (the quick tour and the sharded exploration) is read from README.md, and each of its lines
// that is not blank or a comment is run with sh, in order, in one scratch folder holding a
// copy of examples/ and build/weft, and must exit 0. Blocks left unmarked are programs (the
// text format), the setup commands CI runs anyway (scripts/main.sh, scripts/test.sh) or runs
// of hours (the 13 layers, the benchmarks), and say so where they stand.
// Label opencl: the commands run, explore and time on the default OpenCL device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_weft.h"
#include "tests/support/scratch_commands.h"

using weft::testing::CommandResult;
using weft::testing::CommandScratch;
using weft::testing::haveOpenCLDevice;
using weft::testing::readTextFile;

namespace {

const char* const kMarker =
    "<!-- tests/cli/opencl_readme_commands.cpp runs every command of this block, in order -->";

// The commands of every marked block, in order.
std::vector<std::string> markedCommands(const std::string& readme) {
  std::vector<std::string> commands;
  for (size_t at = readme.find(kMarker); at != std::string::npos;
       at = readme.find(kMarker, at + 1)) {
    const size_t open = readme.find("```sh\n", at);
    REQUIRE(open == readme.find('\n', at) + 1);  // the block right after the marker
    const size_t close = readme.find("\n```", open + 5);
    REQUIRE(close != std::string::npos);
    std::istringstream lines(readme.substr(open + 6, close - open - 5));
    std::string line;
    while (std::getline(lines, line)) {
      const size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos || line[first] == '#') continue;
      commands.push_back(line);
    }
  }
  return commands;
}

}  // namespace

TEST_CASE("every command of the README's marked blocks runs as written") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const std::vector<std::string> commands =
      markedCommands(readTextFile(std::filesystem::path(root ? root : ".") / "README.md"));
  REQUIRE(commands.size() >= 20);
  const CommandScratch scratch;
  for (const std::string& command : commands) {
    CAPTURE(command);
    const CommandResult result = scratch.run(command);
    CHECK_MESSAGE(result.exitCode == 0, result.output.substr(0, 3000));
  }
  MESSAGE(commands.size() << " README commands run");
}
