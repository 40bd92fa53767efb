// Running documented shell commands as a reader would: a scratch folder holding a copy of
// examples/, with `weft` on the PATH and `build/weft` beside it (the README's spelling), and
// Debian's python3 (python3-numpy) before any other. Header-only: every .cpp under
// tests/<folder>/ is a test executable of its own.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/run_weft.h"

namespace weft::testing {

class CommandScratch {
 public:
  CommandScratch() : dir_("weft_documented_commands") {
    const char* root = std::getenv("WEFT_SOURCE_DIR");
    work_ = dir_.path / "work";
    std::filesystem::create_directories(work_ / "examples");
    std::filesystem::copy(std::filesystem::path(root ? root : ".") / "examples", work_ / "examples",
                          std::filesystem::copy_options::recursive);
    const std::filesystem::path binary = std::filesystem::absolute(weftBinary());
    std::filesystem::create_directories(dir_.path / "bin");
    std::filesystem::create_symlink(binary, dir_.path / "bin" / "weft");
    std::filesystem::create_directories(work_ / "build");
    std::filesystem::create_symlink(binary, work_ / "build" / "weft");
  }

  // Runs `command` with sh in the scratch folder (at most 300 s); stdout and stderr together.
  CommandResult run(const std::string& command) const {
    const std::string shell = "cd " + shellQuote(work_.string()) +
                              " && PATH=" + shellQuote((dir_.path / "bin").string()) +
                              ":/usr/bin:\"$PATH\" timeout 300 sh -c " + shellQuote(command) +
                              " 2>&1";
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

 private:
  TempDir dir_;
  std::filesystem::path work_;
};

}  // namespace weft::testing
