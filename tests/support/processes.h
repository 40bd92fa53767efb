// Processes for the tests (and the soak bench) that start, watch and kill weft: starting the
// binary in the background with its output in a file, the live processes of the machine read
// from /proc (each one's parent and process group; zombies left out, since a killed process
// stays one until its parent reaps it), children, and an explorer's processes by their role. Header-only: every .cpp under tests/<folder>/ is a test executable of its
// own.
#pragma once

#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace weft::testing {

// Starts `binary` with `args`, stdout and stderr appended to `log`; returns its process id, or
// -1 when fork fails.
inline pid_t startInBackground(const std::string& binary, const std::vector<std::string>& args,
                               const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

struct ProcessInfo {
  pid_t parent = 0;
  pid_t group = 0;
};

// Every live (not zombie) process: pid -> its parent and process group.
inline std::map<pid_t, ProcessInfo> liveProcesses() {
  std::map<pid_t, ProcessInfo> processes;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // A process that exits while its stat is read fails the read (ESRCH, which libstdc++'s
    // filebuf throws): it is not live.
    std::string stat;
    try {
      std::ifstream in(entry.path() / "stat");
      stat.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    } catch (const std::exception&) {
      continue;
    }
    const size_t close = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    char state = 0;
    long parent = 0, group = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &parent, &group) != 3) {
      continue;
    }
    if (state == 'Z' || state == 'X') continue;
    processes[static_cast<pid_t>(std::stol(name))] = {static_cast<pid_t>(parent),
                                                      static_cast<pid_t>(group)};
  }
  return processes;
}

// The live children of `parent`.
inline std::vector<pid_t> childrenOf(const std::map<pid_t, ProcessInfo>& processes, pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& [pid, info] : processes) {
    if (info.parent == parent) children.push_back(pid);
  }
  return children;
}
inline std::vector<pid_t> childrenOf(pid_t parent) { return childrenOf(liveProcesses(), parent); }

// The executable a process runs (/proc/PID/exe), "" when it cannot be read.
inline std::string executableOf(pid_t pid) {
  std::error_code error;
  const std::filesystem::path exe =
      std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", error);
  return error ? std::string() : exe.string();
}

// An explorer's processes by role, told apart by their place in the tree: a measuring child is
// a child of a launcher (the explorer's child that has children); the generator and the
// pre-builds are the explorer's children without children. Only weft's own processes (forks
// of the explorer, the same executable) count: the tools an OpenCL compiler runs (PoCL's
// linker, while a kernel builds for the first time) are neither children nor victims.
enum class ExplorerRole { MeasuringChild, LeafChild, Launcher };
inline std::vector<pid_t> explorerProcesses(ExplorerRole role, pid_t explorer) {
  const std::map<pid_t, ProcessInfo> processes = liveProcesses();
  const std::string weft = executableOf(explorer);
  auto ownChildren = [&](pid_t parent) {
    std::vector<pid_t> own;
    for (pid_t child : childrenOf(processes, parent)) {
      if (executableOf(child) == weft) own.push_back(child);
    }
    return own;
  };
  std::vector<pid_t> found;
  for (pid_t child : ownChildren(explorer)) {
    const std::vector<pid_t> grandchildren = ownChildren(child);
    if (role == ExplorerRole::LeafChild && grandchildren.empty()) found.push_back(child);
    if (role == ExplorerRole::Launcher && !grandchildren.empty()) found.push_back(child);
    if (role == ExplorerRole::MeasuringChild) {
      found.insert(found.end(), grandchildren.begin(), grandchildren.end());
    }
  }
  return found;
}

}  // namespace weft::testing
