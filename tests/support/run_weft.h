// Helpers for tests that drive the `weft` binary: run it with arguments (stdout and stderr
// captured together, exit code kept) and a temporary directory removed at the end of a test.
// The binary is $WEFT_BINARY (set by CTest), else build/weft. runWeftShell keeps stdout and
// stderr apart and requires $WEFT_BINARY. haveOpenCLDevice asks `weft devices` once; jsonLines
// reads the JSON lines of `--json` output.
//
// Header-only (tests/support has no library); needs doctest for REQUIRE.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace weft::testing {

inline std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

struct CommandResult {
  int exitCode = -1;
  std::string output;  // stdout and stderr together
};

inline std::string weftBinary() {
  const char* binary = std::getenv("WEFT_BINARY");
  return binary ? binary : "build/weft";
}

inline CommandResult runWeft(const std::vector<std::string>& args) {
  std::string command = shellQuote(weftBinary());
  for (const std::string& arg : args) command += " " + shellQuote(arg);
  command += " 2>&1";
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buffer;
  size_t count = 0;
  while ((count = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), count);
  }
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// A whole text file ("" when it cannot be read).
inline std::string readTextFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct SeparateOutputs {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `env '$WEFT_BINARY' args` through the shell: `args` and `env` are shell text, used as
// they are. stdout and stderr go through stdout.txt and stderr.txt in `scratch`.
inline SeparateOutputs runWeftShell(const std::string& args, const std::filesystem::path& scratch,
                                    const std::string& env = "") {
  const char* binary = std::getenv("WEFT_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "WEFT_BINARY is not set (run through ctest)");
  std::filesystem::path out = scratch / "stdout.txt";
  std::filesystem::path err = scratch / "stderr.txt";
  std::string command =
      env + " '" + binary + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int raw = std::system(command.c_str());
  SeparateOutputs result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  result.out = readTextFile(out);
  result.err = readTextFile(err);
  return result;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether `weft devices` finds an OpenCL device (asked once per test binary); says so when not.
inline bool haveOpenCLDevice() {
  static const bool have = runWeft({"devices"}).exitCode == 0;
  if (!have) MESSAGE("no OpenCL device: weft explore has nothing to run on");
  return have;
}

// The lines of `output` that parse as JSON, in order (`--json` output: one per line).
inline std::vector<nlohmann::json> jsonLines(const std::string& output) {
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  while (start < output.size()) {
    size_t end = output.find('\n', start);
    if (end == std::string::npos) end = output.size();
    auto line = nlohmann::json::parse(output.substr(start, end - start), nullptr, false);
    if (!line.is_discarded()) lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// A fresh directory, removed with everything in it when the object goes away.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& stem = "weft_test") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           (stem + "_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }
  std::string read(const std::string& name) const {
    std::ifstream in(file(name));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
};

}  // namespace weft::testing
