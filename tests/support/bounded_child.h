// Runs a piece of work (rewriting, code generation: no OpenCL) in a forked child process
// limited in address space and time, and says how it ended. The pipelines' tests and
// bench/pipelines.cpp probe code generation this way before doing it in their own process, so
// that a generation that grows without bound (issue 9's symbolic-size blow-up took over 8 GB)
// is reported instead of exhausting a shared machine.
//
// Header-only (tests/support has no library); POSIX; no doctest, so benchmarks include it too.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <functional>
#include <new>
#include <string>

namespace weft::testing {

// How the work in the child ended.
struct BoundedChildOutcome {
  enum class Kind {
    Returned,     // the work returned
    Threw,        // it threw an exception other than std::bad_alloc
    OutOfMemory,  // std::bad_alloc: the address-space limit
    TimedOut,     // the alarm of `seconds` fired
    Stopped,      // anything else: another signal, another exit status
    NotForked,    // fork failed: nothing ran
  };
  Kind kind = Kind::Returned;
  int status = 0;  // waitpid's status (Stopped)
};

// The address space this process holds now (VmSize), in bytes; 0 where /proc does not say.
inline size_t currentAddressSpaceBytes() {
  size_t bytes = 0;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmSize:", 0) == 0) bytes = std::stoull(line.substr(7)) * 1024;
  }
  return bytes;
}

// Runs `work` in a forked child whose address space is limited to `addressSpaceBytes` and
// whose time to `seconds` (SIGALRM); returns how it ended. Output buffers are flushed first so
// that the child does not print them again.
inline BoundedChildOutcome runInBoundedChild(const std::function<void()>& work,
                                             size_t addressSpaceBytes, unsigned seconds) {
  using Kind = BoundedChildOutcome::Kind;
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child < 0) return {Kind::NotForked, 0};
  if (child == 0) {
    const rlimit limit{addressSpaceBytes, addressSpaceBytes};
    setrlimit(RLIMIT_AS, &limit);
    alarm(seconds);
    try {
      work();
    } catch (const std::bad_alloc&) {
      _exit(4);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {Kind::Returned, status};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) return {Kind::Threw, status};
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4) return {Kind::OutOfMemory, status};
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) return {Kind::TimedOut, status};
  return {Kind::Stopped, status};
}

}  // namespace weft::testing
