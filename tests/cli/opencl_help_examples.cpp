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

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::haveOpenCLDevice;
using weft::testing::runWeft;
using weft::testing::shellQuote;
using weft::testing::TempDir;
using weft::testing::weftBinary;

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

// Runs `command` with sh in `folder`; stdout and stderr together.
CommandResult runIn(const fs::path& folder, const fs::path& bin, const std::string& command) {
  // Debian's python3 (with python3-numpy, which scripts/setup.sh installs) before any other.
  const std::string shell =
      "cd " + shellQuote(folder.string()) + " && PATH=" + shellQuote(bin.string()) +
      ":/usr/bin:\"$PATH\" timeout 300 sh -c " + shellQuote(command) + " 2>&1";
  CommandResult result;
  FILE* pipe = popen(shell.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t count = 0;
  while ((count = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, count);
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace

TEST_CASE("every example command in the help texts runs as written") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_help_examples");
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  fs::create_directories(dir.path / "work" / "examples");
  fs::copy(fs::path(root ? root : ".") / "examples", dir.path / "work" / "examples",
           fs::copy_options::recursive);
  fs::create_directories(dir.path / "bin");
  fs::create_symlink(fs::absolute(weftBinary()), dir.path / "bin" / "weft");

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
      const CommandResult result = runIn(dir.path / "work", dir.path / "bin", command);
      CHECK_MESSAGE(result.exitCode == 0, result.output.substr(0, 3000));
      ++ran;
    }
  }
  MESSAGE(ran << " example commands run");
  CHECK(ran >= 30);
}
