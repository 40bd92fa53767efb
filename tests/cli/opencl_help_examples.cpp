// Every example command in `weft --help` and in each subcommand's --help runs as written: the
// help texts are read from the built binary, each line that is a command (it starts with
// "weft ", "python3 ", "cmake " or "./", after an optional "$ " prompt; a trailing backslash
// continues it on the next line) is run with sh in one scratch folder holding a copy of
// examples/, with `weft` on the PATH, and must exit 0. The subcommands go in an order where
// each example finds the files an earlier one wrote (explore's results.db before report,
// emit and run --pick; run's a.npy and b.npy before `weft --help`'s run; bundle's results
// before import). Lines of shown output and comments are not run.
// Label opencl: the examples explore, run and time on the default OpenCL device.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_weft.h"
#include "tests/support/scratch_commands.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::CommandScratch;
using weft::testing::haveOpenCLDevice;
using weft::testing::runWeft;

namespace {

// The example commands of a help text, in order.
std::vector<std::string> exampleCommands(const std::string& help) {
  std::vector<std::string> commands;
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("  ", 0) != 0) continue;
    std::string command = line.substr(2);
    if (command.rfind("$ ", 0) == 0) command = command.substr(2);
    bool isCommand = false;
    for (const char* start : {"weft ", "python3 ", "cmake ", "./"}) {
      isCommand = isCommand || command.rfind(start, 0) == 0;
    }
    if (!isCommand) continue;
    while (!command.empty() && command.back() == '\\' && std::getline(lines, line)) {
      command.pop_back();
      command += " " + line.substr(line.find_first_not_of(' '));
    }
    commands.push_back(command);
  }
  return commands;
}

}  // namespace

TEST_CASE("every example command in the help texts runs as written") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  const CommandScratch scratch;

  // Producers first: explore writes results.db, run writes a.npy and b.npy, bundle its results.
  const std::vector<std::string> order = {"check", "compile", "devices", "rules", "rewrite",
                                          "space", "explore", "report",  "merge", "emit",
                                          "run",   "",        "bundle",  "import"};
  size_t ran = 0;
  for (const std::string& subcommand : order) {
    std::vector<std::string> args;
    if (!subcommand.empty()) args.push_back(subcommand);
    args.push_back("--help");
    const CommandResult help = runWeft(args);
    REQUIRE_MESSAGE(help.exitCode == 0, help.output);
    for (const std::string& command : exampleCommands(help.output)) {
      CAPTURE(subcommand);
      CAPTURE(command);
      const CommandResult result = scratch.run(command);
      CHECK_MESSAGE(result.exitCode == 0, result.output.substr(0, 3000));
      ++ran;
    }
  }
  MESSAGE(ran << " example commands run");
  CHECK(ran >= 30);
}
