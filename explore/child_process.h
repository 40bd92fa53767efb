// Forked children for the explorer (explore/explorer.h), internal to explore/: not public API.
//
// The explorer never calls OpenCL itself (a driver's threads do not survive fork), so whatever
// touches a device runs in a child forked from it: the device query and reference run
// (runInChild), the pre-builds (explore/prebuild_pool.h), the generator
// (explore/generator_process.h) and the launcher with its measuring children
// (explore/measuring_launcher.h). Every child writes to a pipe its parent reads: JSON lines
// (sendLine) and, where a child says so, raw bytes after them. A child dies with its parent
// (PR_SET_PDEATHSIG: the measuring child with the launcher, the launcher and the generators with
// the explorer), a crash kills it (default signal handlers, whatever the embedding program
// installed), and it ends with _exit, so none of the parent's atexit handlers, buffers or
// destructors run twice. A child past its deadline is killed with SIGKILL. Children are the
// out-of-memory killer's first choice (oom_score_adj 1000), so a variant that exhausts memory
// dies instead of the explorer.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace weft::explore::process {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

// Writes all of `data` to `fd`, retrying on EINTR; gives up silently when the reader is gone.
void writeAll(int fd, const std::string& data);
// Sends all of `data` on a socket without raising SIGPIPE in the caller when the peer is gone
// (MSG_NOSIGNAL): false when it could not. For the explorer's writes to its children, which
// may be killed at any moment while the explorer, unlike them, does not ignore SIGPIPE.
bool sendAll(int socket, const std::string& data);

// `message` as one line (JSON, newline-terminated) on `fd`.
void sendLine(int fd, const Json& message);

// How a child ended.
struct ChildOutcome {
  std::string data;       // everything it wrote
  bool timedOut = false;
  bool signaled = false;
  int signal = 0;
  int exitCode = 0;
  double seconds = 0;
};

// A forked child writing to a pipe: its process id and the parent's (reading) end.
struct SpawnedChild {
  pid_t pid = -1;
  int fd = -1;
};

// The child's side of a fork: dies with `parent` (PR_SET_PDEATHSIG), crashes kill it (default
// signal handlers), runs `body(fd)` and exits (_exit: no atexit handlers, no flushing of the
// parent's buffers, no destructors). An exception in `body` becomes an "error" line and exit
// code 3.
[[noreturn]] void runAsChild(const std::function<void(int)>& body, int fd, pid_t parent);

// Forks a child writing to a pipe that runs `body(fd)` (runAsChild); `closeInChild` (when not
// -1) is a descriptor of the parent's that the child closes first.
SpawnedChild spawnChild(const std::function<void(int)>& body, int closeInChild = -1);

// Runs `body(fd)` in a forked child writing to a pipe. The parent collects the output; for
// line-oriented children `onLine` sees every complete line and may return a new deadline.
// The child is killed with SIGKILL once the deadline passes.
ChildOutcome runInChild(const std::function<void(int)>& body, Clock::time_point deadline,
                        const std::function<std::optional<Clock::time_point>(const std::string&)>&
                            onLine = nullptr);

// The time `seconds` from now (negative counts as 0).
Clock::time_point after(double seconds);

// "signal 11 (SIGSEGV)"; a SIGKILL says it came from outside (deadlines are reported apart).
std::string signalText(int signal);

// Thread CPU time in milliseconds (CLOCK_THREAD_CPUTIME_ID): weft's own work, whatever the
// load of the machine.
double threadCpuMs();

// Wall milliseconds since `start`.
double msSince(Clock::time_point start);

// Reads one line (without its newline) from a blocking descriptor into `line`, keeping what
// follows it in `pending`. False at end of file or on an error.
bool readLine(int fd, std::string& pending, std::string& line);

}  // namespace weft::explore::process
