// Running a documented command of hours the way a reader tries it: started with bash in its own
// process group, watched until it shows the work it was written for (a row in its database, a
// line of its output), then interrupted as Ctrl-C would (SIGINT to the whole group). The run
// says whether the command ended by itself first (and how), whether what was awaited appeared,
// and whether any process of its group outlived the interrupt (zombies aside). Header-only:
// every .cpp under tests/<folder>/ is a test executable of its own.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/support/processes.h"

namespace weft::testing {

struct BoundedRun {
  bool endedAlone = false;  // exited before it was interrupted
  int exitCode = -1;        // when it ended alone: its exit status (-1: killed by a signal)
  bool awaited = false;     // what was awaited appeared (then it was interrupted)
  bool leftovers = false;   // a process of its group still ran 10 s after the interrupt
  double seconds = 0;
  std::string output;       // stdout and stderr together
};

namespace bounded_detail {

inline std::string fileText(const std::filesystem::path& path) {
  // A /proc file of a process that exits while it is read fails the read (ESRCH, which
  // libstdc++'s filebuf throws): "" as for a file that cannot be opened.
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return std::string();
  }
}

// Whether a live (not zombie) process is in process group `group`.
inline bool groupAlive(pid_t group) {
  for (const auto& [pid, info] : liveProcesses()) {
    if (info.group == group) return true;
  }
  return false;
}

}  // namespace bounded_detail

// Runs `command` with bash in `folder` (environment: this process's, with `environment`'s
// NAME=value entries added), its output in a temporary file. Every 200 ms `awaited(output)`
// is asked; when it holds, or after `limitSeconds`, the group gets SIGINT, then SIGKILL if it
// has not ended 20 s later.
inline BoundedRun runBounded(const std::string& command, const std::filesystem::path& folder,
                             const std::vector<std::string>& environment,
                             const std::function<bool(const std::string&)>& awaited,
                             double limitSeconds) {
  using namespace std::chrono;
  static int runs = 0;
  const std::filesystem::path log =
      std::filesystem::temp_directory_path() /
      ("weft_bounded_" + std::to_string(getpid()) + "_" + std::to_string(runs++) + ".log");
  BoundedRun run;
  const auto start = steady_clock::now();
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);
    if (chdir(folder.c_str()) != 0) _exit(126);
    for (const std::string& entry : environment) putenv(const_cast<char*>(entry.c_str()));
    const int out = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(out, 2);
    signal(SIGINT, SIG_DFL);
    execl("/bin/bash", "bash", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (child < 0) return run;
  setpgid(child, child);
  int status = 0;
  bool interrupted = false;
  while (true) {
    if (waitpid(child, &status, WNOHANG) == child) {
      run.endedAlone = true;
      run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    run.awaited = awaited(bounded_detail::fileText(log));
    if (run.awaited || duration<double>(steady_clock::now() - start).count() > limitSeconds) {
      kill(-child, SIGINT);
      interrupted = true;
      break;
    }
    std::this_thread::sleep_for(milliseconds(200));
  }
  if (interrupted) {
    const auto sent = steady_clock::now();
    while (waitpid(child, &status, WNOHANG) != child) {
      if (duration<double>(steady_clock::now() - sent).count() > 20) {
        kill(-child, SIGKILL);
        waitpid(child, &status, 0);
        break;
      }
      std::this_thread::sleep_for(milliseconds(100));
    }
    while (bounded_detail::groupAlive(child) &&
           duration<double>(steady_clock::now() - sent).count() < 10) {
      std::this_thread::sleep_for(milliseconds(200));
    }
    run.leftovers = bounded_detail::groupAlive(child);
    if (run.leftovers) kill(-child, SIGKILL);
  }
  run.seconds = duration<double>(steady_clock::now() - start).count();
  run.output = bounded_detail::fileText(log);
  std::error_code ignored;
  std::filesystem::remove(log, ignored);
  return run;
}

}  // namespace weft::testing
