// The exploration loop (see explore/explorer.h): a device child for the profile and the
// reference, a long-lived generator process that generates each variant and hands it to a small
// launcher process, which forks the variant's measuring child; phase deadlines, results written
// as they come.
#include "explore/explorer.h"

#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <ctime>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/interp.h"

#ifndef WEFT_VERSION
#define WEFT_VERSION "0.x"
#endif

namespace weft::explore {

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

void writeAll(int fd, const std::string& data) {
  size_t written = 0;
  while (written < data.size()) {
    ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the parent is gone or gave up on us
    }
    written += static_cast<size_t>(n);
  }
}

void sendLine(int fd, const Json& message) { writeAll(fd, message.dump() + "\n"); }

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
[[noreturn]] void runAsChild(const std::function<void(int)>& body, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(5);  // the parent died before prctl
  signal(SIGPIPE, SIG_IGN);
  // A crash must kill the child: drop handlers the embedding program installed (a test
  // framework's crash reporter would otherwise catch it and carry on).
  for (int crash : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(crash, SIG_DFL);
  int code = 0;
  try {
    body(fd);
  } catch (const std::exception& e) {
    sendLine(fd, Json{{"event", "error"}, {"message", e.what()}});
    code = 3;
  } catch (...) {
    code = 4;
  }
  close(fd);
  _exit(code);
}

// Forks a child writing to a pipe that runs `body(fd)` (runAsChild); `closeInChild` (when not
// -1) is a descriptor of the parent's that the child closes first.
SpawnedChild spawnChild(const std::function<void(int)>& body, int closeInChild = -1) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    if (closeInChild >= 0) close(closeInChild);
    runAsChild(body, fds[1], parent);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

// Runs `body(fd)` in a forked child writing to a pipe. The parent collects the output; for
// line-oriented children `onLine` sees every complete line and may return a new deadline.
// The child is killed with SIGKILL once the deadline passes.
ChildOutcome runInChild(const std::function<void(int)>& body, Clock::time_point deadline,
                        const std::function<std::optional<Clock::time_point>(const std::string&)>&
                            onLine = nullptr) {
  const SpawnedChild child = spawnChild(body);
  const pid_t pid = child.pid;
  const int fd = child.fd;
  ChildOutcome outcome;
  const auto start = Clock::now();
  size_t lineStart = 0;
  char buffer[1 << 16];
  while (true) {
    auto now = Clock::now();
    if (now >= deadline) {
      outcome.timedOut = true;
      kill(pid, SIGKILL);
      break;
    }
    int waitMs = static_cast<int>(std::min<int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1,
        1000 * 60 * 60));
    pollfd poller{fd, POLLIN, 0};
    int ready = poll(&poller, 1, waitMs);
    if (ready < 0) {
      if (errno == EINTR) continue;
      kill(pid, SIGKILL);
      break;
    }
    if (ready == 0) continue;
    ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (n == 0) break;  // the child closed its end (exited)
    outcome.data.append(buffer, static_cast<size_t>(n));
    if (onLine) {
      size_t end;
      while ((end = outcome.data.find('\n', lineStart)) != std::string::npos) {
        std::optional<Clock::time_point> next =
            onLine(outcome.data.substr(lineStart, end - lineStart));
        if (next) deadline = *next;
        lineStart = end + 1;
      }
    }
  }
  close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    outcome.signaled = !outcome.timedOut;
    outcome.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    outcome.exitCode = WEXITSTATUS(status);
  }
  outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return outcome;
}

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(std::max(seconds, 0.0)));
}

std::string signalText(int signal) {
  const char* name = sigabbrev_np(signal);
  return "signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
}

// The pre-build children of --jobs (see explorer.h): each generates and builds one variant
// (MeasurementOptions::stopAfterBuild) so that the OpenCL implementation's build cache holds it
// when the measuring child builds it. They run while no variant is being timed; pause() stops
// them (SIGSTOP) for the timed phases and resume() lets them go on (SIGCONT).
class PrebuildPool {
 public:
  struct Result {
    bool ran = false;       // a pre-build was started for the variant
    std::string status;     // its status ("ok": built), "" when it gave no result
    std::optional<double> buildMs;
    std::string message;    // its error, or why it gave no result
    double waitedSeconds = 0;  // how long the parent waited for it
  };

  PrebuildPool() = default;
  PrebuildPool(const PrebuildPool&) = delete;
  PrebuildPool& operator=(const PrebuildPool&) = delete;
  ~PrebuildPool() {
    for (auto& [variant, child] : children_) stop(child);
  }

  bool started(size_t variant) const { return children_.count(variant) > 0; }

  void start(size_t variant, const std::function<void(int)>& body) {
    Child child;
    child.spawned = spawnChild(body);
    children_.emplace(variant, std::move(child));
  }

  void pause() { signalAll(SIGSTOP); }
  void resume() { signalAll(SIGCONT); }

  // Waits for the variant's pre-build (killed when `seconds` pass first; resumed first if
  // paused) and forgets it. A variant without a pre-build gives Result{ran = false}.
  Result take(size_t variant, double seconds) {
    Result result;
    auto found = children_.find(variant);
    if (found == children_.end()) return result;
    result.ran = true;
    Child& child = found->second;
    kill(child.spawned.pid, SIGCONT);
    const auto start = Clock::now();
    const Clock::time_point deadline = after(seconds);
    char buffer[4096];
    bool timedOut = false;
    while (true) {
      auto now = Clock::now();
      if (now >= deadline) {
        timedOut = true;
        break;
      }
      int waitMs = static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1);
      pollfd poller{child.spawned.fd, POLLIN, 0};
      int ready = poll(&poller, 1, waitMs);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      ssize_t n = read(child.spawned.fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      child.data.append(buffer, static_cast<size_t>(n));
    }
    result.waitedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    const int status = stop(child);
    const std::string data = std::move(child.data);
    children_.erase(found);  // `child` is gone from here on
    if (timedOut) {
      result.message = "the pre-build was killed after " + std::to_string(seconds) + " s";
      return result;
    }
    Json message = Json::parse(data.substr(0, data.find('\n')), nullptr, false);
    if (!message.is_object()) {
      result.message =
          "the pre-build gave no result (" +
          (WIFSIGNALED(status) ? "it died from " + signalText(WTERMSIG(status))
                               : "exit code " + std::to_string(WEXITSTATUS(status))) +
          ")";
    } else if (message.value("event", "") == "error") {
      result.message = message.value("message", "");
    } else {
      result.status = message.value("status", "");
      result.message = message.value("message", "");
      if (message.contains("buildMs")) result.buildMs = message["buildMs"].get<double>();
    }
    return result;
  }

 private:
  struct Child {
    SpawnedChild spawned;
    std::string data;
    bool reaped = false;
  };

  void signalAll(int sig) {
    for (auto& [variant, child] : children_) {
      if (!child.reaped) kill(child.spawned.pid, sig);
    }
  }

  // Kills the child if it still runs, reaps it and closes its pipe; its wait status.
  static int stop(Child& child) {
    if (child.reaped) return 0;
    kill(child.spawned.pid, SIGKILL);  // a no-op for one that has exited (a zombie until reaped)
    int status = 0;
    while (waitpid(child.spawned.pid, &status, 0) < 0 && errno == EINTR) {
    }
    close(child.spawned.fd);
    child.reaped = true;
    return status;
  }

  std::map<size_t, Child> children_;
};



// Thread CPU time in milliseconds (CLOCK_THREAD_CPUTIME_ID): weft's own work, whatever the
// load of the machine.
double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Reads one line (without its newline) from a blocking descriptor into `line`, keeping what
// follows it in `pending`. False at end of file or on an error.
bool readLine(int fd, std::string& pending, std::string& line) {
  char buffer[4096];
  while (true) {
    const size_t end = pending.find('\n');
    if (end != std::string::npos) {
      line = pending.substr(0, end);
      pending.erase(0, end + 1);
      return true;
    }
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending.append(buffer, static_cast<size_t>(n));
  }
}

// The generator process (see explorer.h, "Isolation"): forked from the explorer once, it
// generates one variant per request in its own memory (so that code generation's caches stay
// warm from one variant to the next and no variant pays a fresh process's copy-on-write faults
// for them), then hands it to the launcher (MeasuringLauncher), which forks the variant's
// measuring child that builds and runs it, and reports how that child ended. It never calls OpenCL. A crash or a hang in
// generation costs the generator (the explorer kills it past the deadline and forks a new one
// for the next variant) and that variant only.
//
// Protocol, one JSON object per line. Explorer -> generator: {"variant": i, "best": ns|null}.
// Generator and child -> explorer, in order: "generated" (the generator), "started" (the child,
// with its pid), the child's phase events and "result"/"error", then "exited" (the generator,
// once the child is reaped: how it ended, the generator's own time). A variant whose
// generation fails gets "result" (status invalid) and "exited" from the generator, no child.
// The child writes on the generator's pipe (passed to the launcher with the variant) while the
// generator only waits for the launcher's reply, so their lines never interleave.
class GeneratorProcess {
 public:
  // `serve(request, eventFd)` runs in the generator for each request (generates, forks the
  // measuring child, reports its end).
  using Serve = std::function<void(const Json& request, int eventFd)>;

  explicit GeneratorProcess(Serve serve) : serve_(std::move(serve)) {}
  GeneratorProcess(const GeneratorProcess&) = delete;
  GeneratorProcess& operator=(const GeneratorProcess&) = delete;
  ~GeneratorProcess() { stop(); }

  // What one request gave: the outcome as a forked child's (runInChild), where `signaled`,
  // `signal` and `exitCode` are the measuring child's, or the generator's when it died (then
  // generatorDied), and the generator's own figures from its "exited" line.
  struct Outcome {
    ChildOutcome child;
    bool generatorDied = false;
    Json exited;  // the "exited" line, null when the generator died or was killed
  };

  // Sends `request` and collects the lines up to "exited". `onLine` sees every line and may
  // return a new deadline; past the deadline the measuring child is killed (SIGKILL) when it
  // has started, else the generator (it is generating): the outcome is timedOut.
  Outcome run(const Json& request, Clock::time_point deadline,
              const std::function<std::optional<Clock::time_point>(const std::string&)>& onLine) {
    Outcome outcome;
    const auto start = Clock::now();
    if (pid_ < 0) startProcess();
    writeAll(commandFd_, request.dump() + "\n");
    pid_t child = -1;
    bool killedChild = false;
    char buffer[1 << 16];
    while (true) {
      // A line may already be buffered.
      size_t end;
      bool exited = false;
      while ((end = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        Json message = Json::parse(line, nullptr, false);
        const std::string event = message.is_object() ? message.value("event", "") : "";
        if (event == "started") {
          child = message.value("pid", -1);
        } else if (event == "exited") {
          outcome.exited = message;
          exited = true;
          break;
        }
        outcome.child.data += line;
        outcome.child.data += '\n';
        if (onLine) {
          if (std::optional<Clock::time_point> next = onLine(line)) deadline = *next;
        }
      }
      if (exited) break;
      const auto now = Clock::now();
      if (now >= deadline) {
        if (child > 0 && !killedChild) {
          // The generator reaps it and reports; it gets a little time to do so.
          kill(child, SIGKILL);
          killedChild = true;
          outcome.child.timedOut = true;
          deadline = now + std::chrono::seconds(10);
          continue;
        }
        outcome.child.timedOut = true;
        stop();  // generating (or not reporting): the generator goes, the next one is new
        outcome.generatorDied = true;
        break;
      }
      const int waitMs = static_cast<int>(std::min<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1,
          1000 * 60 * 60));
      pollfd poller{eventFd_, POLLIN, 0};
      const int ready = poll(&poller, 1, waitMs);
      if (ready < 0 && errno != EINTR) {
        stop();
        outcome.generatorDied = true;
        break;
      }
      if (ready <= 0) continue;
      const ssize_t n = ::read(eventFd_, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // The generator died (a crash in generation): its child, if any, died with it.
        const int status = stop();
        outcome.generatorDied = true;
        if (WIFSIGNALED(status)) {
          outcome.child.signaled = true;
          outcome.child.signal = WTERMSIG(status);
        } else if (WIFEXITED(status)) {
          outcome.child.exitCode = WEXITSTATUS(status);
        }
        break;
      }
      pending_.append(buffer, static_cast<size_t>(n));
    }
    if (outcome.exited.is_object()) {
      if (outcome.exited.value("signaled", false)) {
        outcome.child.signaled = !killedChild;
        outcome.child.signal = outcome.exited.value("signal", 0);
      } else {
        outcome.child.exitCode = outcome.exited.value("code", 0);
      }
    }
    outcome.child.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return outcome;
  }

  // Kills the generator (if one runs): the next request forks a new one from the explorer,
  // which then holds the explorer's present launcher socket (after a launcher restart).
  void discard() { stop(); }

 private:
  void startProcess() {
    int commands[2];
    if (pipe(commands) != 0) {
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    // The generator starts from the explorer's memory: give the heap's free pages back first,
    // so that neither its fork nor its children's forks copy page tables for them.
    malloc_trim(0);
    const int commandRead = commands[0];
    const Serve& serve = serve_;
    SpawnedChild spawned;
    try {
      spawned = spawnChild([commandRead, &serve](int eventFd) {
        std::string pending, line;
        while (readLine(commandRead, pending, line)) {
          Json request = Json::parse(line, nullptr, false);
          if (!request.is_object()) break;
          serve(request, eventFd);
        }
      }, commands[1]);
    } catch (...) {
      close(commands[0]);
      close(commands[1]);
      throw;
    }
    close(commands[0]);
    pid_ = spawned.pid;
    eventFd_ = spawned.fd;
    commandFd_ = commands[1];
    pending_.clear();
  }

  // Kills the generator if it runs, reaps it, closes the pipes; its wait status (0: none).
  int stop() {
    if (pid_ < 0) return 0;
    kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    close(eventFd_);
    close(commandFd_);
    pid_ = -1;
    eventFd_ = commandFd_ = -1;
    pending_.clear();
    return status;
  }

  Serve serve_;
  pid_t pid_ = -1;
  int eventFd_ = -1;
  int commandFd_ = -1;
  std::string pending_;
};

// What a measuring child needs of a generated variant, as the generator hands it to the
// launcher: a small JSON header (variant, best time, binding, generation figures) in one
// datagram, the program (serialiseCompiledProgram) and the expected output when the workload
// has none in a memfd sent with it, as is the generator's event pipe the child reports on.
struct LaunchRequest {
  std::string id;  // "<generator pid>:<counter>": replies to another request are dropped
  size_t variant = 0;
  Json best;       // ns or null
  GeneratedVariant generated;
};

// The launcher process (see explorer.h, "Isolation"): forked from the explorer once the
// reference and inputs are ready and before any generator exists, so its memory stays small.
// Per request from a generator it forks the variant's measuring child (cheap: the launcher's
// page tables are small, and the generator, which is not forked, keeps its pages private: no
// copy-on-write faults in the next generation), waits for it and replies how it ended. The
// socket is SOCK_SEQPACKET: a generator killed mid-request cannot leave half a message, and
// a reply for a request whose generator died is recognised by its id and dropped.
class MeasuringLauncher {
 public:
  // `measure(request, eventFd)` runs in the measuring child (runAsChild's body).
  using Measure = std::function<void(LaunchRequest&, int eventFd)>;

  MeasuringLauncher() = default;
  MeasuringLauncher(const MeasuringLauncher&) = delete;
  MeasuringLauncher& operator=(const MeasuringLauncher&) = delete;
  ~MeasuringLauncher() { stop(); }

  void start(Measure measure) {
    measure_ = std::move(measure);
    int sockets[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sockets) != 0) {
      throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
    }
    malloc_trim(0);
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t explorer = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      close(sockets[0]);
      close(sockets[1]);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      close(sockets[0]);
      const int socket = sockets[1];
      runAsChild([this, socket](int) { serveLaunches(socket, measure_); }, -1, explorer);
    }
    close(sockets[1]);
    pid_ = pid;
    socket_ = sockets[0];
  }

  // In a generator: hands the generated variant to the launcher; its id for waitFor.
  std::string send(size_t variant, const Json& best, const GeneratedVariant& generated,
                   bool sendExpected, int eventFd) {
    const std::string id = std::to_string(getpid()) + ":" + std::to_string(++counter_);
    Json header{{"id", id}, {"variant", variant}, {"best", best}};
    header["binding"] = generated.binding;
    const Measurement& m = generated.measurement;
    header["hash"] = m.sourceHash;
    if (m.spaceBytes) header["space"] = *m.spaceBytes;
    if (m.allBuffersBytes) header["allBuffersBytes"] = *m.allBuffersBytes;
    header["generateMs"] = m.generateMs;
    const std::string program = serialiseCompiledProgram(*generated.program);
    header["programBytes"] = program.size();
    header["expected"] = sendExpected ? generated.expected.size() : 0;
    const int payload = memfd_create("weft-variant", 0);
    if (payload < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
    bool written = writeFully(payload, program.data(), program.size());
    if (sendExpected) {
      written = written && writeFully(payload, generated.expected.data(),
                                      generated.expected.size() * sizeof(float));
    }
    if (!written) {
      close(payload);
      throw std::runtime_error("launcher: writing the variant failed");
    }
    const bool sent = sendWithFds(socket_, header.dump(), {payload, eventFd});
    close(payload);
    if (!sent) throw std::runtime_error("launcher: it is gone (sending a variant)");
    return id;
  }

  // In a generator: the launcher's reply for `id` (how the measuring child ended).
  Json waitFor(const std::string& id) {
    std::string buffer(4096, '\0');
    while (true) {
      const ssize_t n = recv(socket_, buffer.data(), buffer.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error("launcher: it is gone (waiting for a child)");
      Json reply = Json::parse(buffer.substr(0, static_cast<size_t>(n)), nullptr, false);
      if (reply.is_object() && reply.value("id", "") == id) return reply;
    }
  }

  pid_t pid() const { return pid_; }

  // In the explorer: whether the launcher has died (killed from outside, e.g. by the kernel's
  // out-of-memory killer; it never exits on its own while the explorer holds its socket). A
  // generator may see the launcher's socket close before the launcher is a zombie, so a hung-up
  // socket counts too (then the launcher is reaped, waiting). A dead launcher is reaped and
  // its socket closed; start() makes a new one.
  bool died() {
    if (pid_ < 0) return false;
    int status = 0;
    pid_t reaped = waitpid(pid_, &status, WNOHANG);
    if (reaped == 0) {
      pollfd hangUp{socket_, 0, 0};
      if (poll(&hangUp, 1, 0) <= 0 || !(hangUp.revents & (POLLHUP | POLLERR))) return false;
      while ((reaped = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
      }
    }
    close(socket_);
    pid_ = -1;
    socket_ = -1;
    return true;
  }

  // In the explorer, after died(): a new launcher with the same measuring body.
  void restart() {
    Measure measure = measure_;
    start(std::move(measure));
  }

 private:
  static bool writeFully(int fd, const void* data, size_t size) {
    const char* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes += n;
      size -= static_cast<size_t>(n);
    }
    return true;
  }

  static bool readFully(int fd, void* data, size_t size, off_t offset) {
    char* bytes = static_cast<char*>(data);
    while (size > 0) {
      const ssize_t n = pread(fd, bytes, size, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      bytes += n;
      size -= static_cast<size_t>(n);
      offset += n;
    }
    return true;
  }

  static bool sendWithFds(int socket, const std::string& message, const std::vector<int>& fds) {
    iovec part{const_cast<char*>(message.data()), message.size()};
    std::vector<char> control(CMSG_SPACE(sizeof(int) * fds.size()), 0);
    msghdr header{};
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    header.msg_control = control.data();
    header.msg_controllen = control.size();
    cmsghdr* rights = CMSG_FIRSTHDR(&header);
    rights->cmsg_level = SOL_SOCKET;
    rights->cmsg_type = SCM_RIGHTS;
    rights->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(rights), fds.data(), sizeof(int) * fds.size());
    while (true) {
      const ssize_t n = sendmsg(socket, &header, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n == static_cast<ssize_t>(message.size());
    }
  }

  // The launcher's loop: one request, one measuring child, one reply; ends when every
  // generator and the explorer have closed their ends (or with the explorer: PDEATHSIG).
  static void serveLaunches(int socket, const Measure& measure) {
    std::string buffer(1 << 16, '\0');
    const pid_t launcher = getpid();
    while (true) {
      std::vector<char> control(CMSG_SPACE(sizeof(int) * 2), 0);
      iovec part{buffer.data(), buffer.size()};
      msghdr header{};
      header.msg_iov = &part;
      header.msg_iovlen = 1;
      header.msg_control = control.data();
      header.msg_controllen = control.size();
      const ssize_t n = recvmsg(socket, &header, MSG_CMSG_CLOEXEC);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      std::vector<int> fds;
      for (cmsghdr* c = CMSG_FIRSTHDR(&header); c; c = CMSG_NXTHDR(&header, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        fds.resize(count);
        std::memcpy(fds.data(), CMSG_DATA(c), count * sizeof(int));
      }
      Json request = Json::parse(buffer.substr(0, static_cast<size_t>(n)), nullptr, false);
      if (!request.is_object() || fds.size() != 2) {
        for (int fd : fds) close(fd);
        continue;
      }
      const int payload = fds[0];
      const int eventFd = fds[1];
      const auto forkStart = Clock::now();
      const pid_t child = fork();
      if (child == 0) {
        close(socket);
        runAsChild([&](int fd) {
          LaunchRequest launch;
          launch.id = request.at("id").get<std::string>();
          launch.variant = request.at("variant").get<size_t>();
          launch.best = request.at("best");
          GeneratedVariant& generated = launch.generated;
          generated.binding = request.at("binding").get<ArithBinding>();
          Measurement& m = generated.measurement;
          m.sourceHash = request.at("hash").get<std::string>();
          if (request.contains("space")) m.spaceBytes = request["space"].get<int64_t>();
          if (request.contains("allBuffersBytes")) {
            m.allBuffersBytes = request["allBuffersBytes"].get<int64_t>();
          }
          m.generateMs = request.at("generateMs").get<double>();
          std::string program(request.at("programBytes").get<size_t>(), '\0');
          generated.expected.resize(request.at("expected").get<size_t>());
          if (!readFully(payload, program.data(), program.size(), 0) ||
              !readFully(payload, generated.expected.data(),
                         generated.expected.size() * sizeof(float),
                         static_cast<off_t>(program.size()))) {
            throw std::runtime_error("measuring child: the variant's bytes are truncated");
          }
          close(payload);
          generated.program = deserialiseCompiledProgram(program);
          measure(launch, fd);
        }, eventFd, launcher);
      }
      const double forkMs = msSince(forkStart);
      close(payload);
      close(eventFd);
      Json reply{{"id", request.value("id", "")}, {"launcherForkMs", forkMs}};
      if (child < 0) {
        reply["forkError"] = std::strerror(errno);
      } else {
        int status = 0;
        rusage usage{};
        while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
        }
        reply["childCpuMs"] =
            1e3 * static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
            1e-3 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
        reply["signaled"] = WIFSIGNALED(status);
        if (WIFSIGNALED(status)) reply["signal"] = WTERMSIG(status);
        if (WIFEXITED(status)) reply["code"] = WEXITSTATUS(status);
      }
      const std::string text = reply.dump();
      while (::send(socket, text.data(), text.size(), MSG_NOSIGNAL) < 0 && errno == EINTR) {
      }
    }
  }

  void stop() {
    if (pid_ < 0) return;
    close(socket_);
    kill(pid_, SIGKILL);
    while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    socket_ = -1;
  }

  Measure measure_;
  pid_t pid_ = -1;
  int socket_ = -1;
  uint64_t counter_ = 0;
};

Json measurementJson(const Measurement& m) {
  Json out{{"event", "result"},
           {"status", statusName(m.status)},
           {"message", m.message},
           {"hash", m.sourceHash},
           {"warmNs", m.warmUpNs},
           {"samples", m.samplesNs},
           {"maxError", std::isfinite(m.maxError) ? m.maxError : -1.0},
           {"allowedError", m.allowedError}};
  if (m.spaceBytes) out["space"] = *m.spaceBytes;
  if (m.buildMs) out["buildMs"] = *m.buildMs;
  if (m.medianNs) out["median"] = *m.medianNs;
  if (m.preparationNs) out["preparationNs"] = *m.preparationNs;
  if (m.allBuffersBytes) out["allBuffersBytes"] = *m.allBuffersBytes;
  out["timedOnce"] = m.timedOnce;
  out["generateMs"] = m.generateMs;
  Json kernels = Json::array();
  for (size_t k = 0; k < m.kernelNs.size(); ++k) {
    Json kernel{{"name", m.kernelNs[k].first}, {"ns", m.kernelNs[k].second}};
    if (k < m.preparationKernels.size() && m.preparationKernels[k]) kernel["preparation"] = true;
    kernels.push_back(std::move(kernel));
  }
  out["kernels"] = kernels;
  return out;
}

// The definition's tuning variables' names, for marking switches.
std::vector<Arith> tuningVariablesOf(const Definition& definition) {
  std::vector<Arith> found;
  for (const Arith& variable : variableOccurrences(definition)) {
    if (!variable.isVar() || variable.varKind() != VarKind::Tuning) continue;
    bool seen = false;
    for (const Arith& known : found) seen = seen || known.varName() == variable.varName();
    if (!seen) found.push_back(variable);
  }
  return found;
}

// Multiply-adds of a layer (for the interpreter check of the reference).
int64_t multiplyAdds(const ExploreTarget& target) { return target.flops / 2; }

}  // namespace

std::string compilerVersion() { return std::string("weft ") + WEFT_VERSION; }

const ParameterSpace& Preparation::spaceOf(size_t point) const {
  return spaces.empty() ? space : spaces.at(pointSpace.at(point));
}

const Definition& Preparation::programOf(size_t point) const {
  if (spaces.empty()) return target.parametric;
  return target.structures.at(spaceStructure.at(pointSpace.at(point))).parametric;
}

const std::string& Preparation::strategyOf(size_t point) const {
  if (spaces.empty()) return target.strategy;
  return target.structures.at(spaceStructure.at(pointSpace.at(point))).strategy;
}

std::string Preparation::parametersOf(size_t point) const {
  if (spaces.empty()) return parametersJson(space, points.at(point), target.fixedParameters);
  const ExploreTarget::Structure& structure =
      target.structures.at(spaceStructure.at(pointSpace.at(point)));
  return parametersJson(spaces.at(pointSpace.at(point)), points.at(point),
                        structure.fixedParameters);
}

ExploreTarget programTarget(const Definition& definition, const ArithBinding& sizes) {
  ExploreTarget target;
  std::string sizeText;
  for (const auto& [name, value] : sizes) {
    sizeText += (sizeText.empty() ? "" : ",") + name + "=" + std::to_string(value);
  }
  target.program = definition.name + (sizeText.empty() ? "" : "[" + sizeText + "]");
  target.description = "definition " + definition.name + " with " +
                       (sizeText.empty() ? std::string("no sizes") : sizeText);
  target.parametric = tuneUnboundSizes(definition, sizes);
  target.sizes = sizes;
  for (const Arith& v : tuningVariablesOf(target.parametric)) {
    if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
      target.switches.insert(v.varName());
    }
  }
  return target;
}

std::string parametersJson(const ParameterSpace& space, const std::vector<int64_t>& point,
                           const std::map<std::string, int64_t>& fixed) {
  std::map<std::string, int> stems;
  auto stemOf = [](const std::string& name) {
    size_t end = name.find_last_not_of("0123456789");
    return end == std::string::npos ? name : name.substr(0, end + 1);
  };
  for (const Parameter& p : space.parameters) ++stems[stemOf(p.name)];
  Json out = Json::object();
  for (size_t i = 0; i < point.size() && i < space.parameters.size(); ++i) {
    const std::string& name = space.parameters[i].name;
    std::string stem = stemOf(name);
    // Rule-made names lose their numeric suffix (theta2 -> theta) where unambiguous; launch
    // sizes (local_k1_d0) keep their full names, whose digits are kernel and dimension.
    bool unique = stems[stem] == 1 && !fixed.count(stem) && space.parameters[i].launchKernel < 0;
    out[unique ? stem : name] = point[i];
  }
  for (const auto& [name, value] : fixed) out[name] = value;
  return out.dump();  // nlohmann::json objects keep their keys sorted: canonical
}

std::map<std::string, int64_t> parseRecordedParameters(const std::string& json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (!parsed.is_object()) {
    throw std::invalid_argument("recorded parameters are not a JSON object: " + json);
  }
  std::map<std::string, int64_t> out;
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_number_integer()) out[name] = value.get<int64_t>();
  }
  return out;
}

SampledTarget sampleTarget(const ExploreTarget& target, const host::DeviceProfile& profile,
                           size_t samples, uint64_t seed, const SamplerOptions& samplerOptions) {
  const auto start = Clock::now();
  SpaceOptions spaceOptions;
  spaceOptions.switches = target.switches;
  spaceOptions.powerOfTwo = target.powerOfTwo;
  spaceOptions.device = profile;
  SampledTarget out;
  if (target.structures.empty()) {
    out.spaces.push_back(buildParameterSpace(target.parametric, target.sizes, spaceOptions));
    Sampler sampler(out.spaces.front(), samplerOptions);
    SampleSet set = sampler.sample(samples, seed);
    out.points = std::move(set.points);
    out.pointSpace.assign(out.points.size(), 0);
    out.method = set.method;
    if (set.spaceSize) out.validPoints = *set.spaceSize;
    out.fewerThanRequested = set.spaceSmallerThanRequested || set.duplicateLimitReached;
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
  }
  // The union of the structures' spaces: each family gets an equal share of the sample count
  // (an exact split: k / F each, the remainder to families drawn at random, and what a family
  // cannot take for lack of points goes to the others), and within a family the share is split
  // over its structures multinomially in proportion to their counts of valid points; then
  // uniform points of each structure.
  std::vector<uint64_t> counts;
  std::vector<std::string> families;
  // Each structure's space and the sampler that counted it, kept to draw its samples (the
  // sampler refers to the space, so both stay where they are until sampling is done; the
  // spaces move into `out` after). Structures whose spaces are the same to a sampler share one
  // sampler, so that such a space is counted once (a walk over millions of points where
  // constraints are relaxed): conv-direct's unroll 0 and 1 where the cap on unrolled
  // reductions does not bind (SpaceOptions::maxUnrolledIterations), which changes the code but
  // no parameter or constraint.
  std::vector<std::unique_ptr<ParameterSpace>> spaces;
  std::vector<std::shared_ptr<Sampler>> samplers;
  std::map<std::string, std::pair<std::shared_ptr<Sampler>, uint64_t>> countedSpaces;
  for (size_t i = 0; i < target.structures.size(); ++i) {
    const ExploreTarget::Structure& structure = target.structures[i];
    SpaceOptions structureOptions = spaceOptions;
    structureOptions.switches = structure.switches;
    try {
      auto space = std::make_unique<ParameterSpace>(
          buildParameterSpace(structure.parametric, target.sizes, structureOptions));
      const std::string key = space->samplingKey();
      auto counted = countedSpaces.find(key);
      if (counted == countedSpaces.end()) {
        auto sampler = std::make_shared<Sampler>(*space, samplerOptions);
        SpaceCount count = sampler->count(UINT64_MAX);
        counted = countedSpaces.emplace(key, std::make_pair(sampler, count.points)).first;
      }
      const auto& [sampler, points] = counted->second;
      if (points == 0) throw std::runtime_error("no valid point");
      spaces.push_back(std::move(space));
      samplers.push_back(sampler);
      out.spaceStructure.push_back(i);
      counts.push_back(points);
      families.push_back(structure.family);
    } catch (const std::exception& error) {
      std::string name;
      for (const auto& [k, v] : structure.fixedParameters) {
        name += (name.empty() ? "" : " ") + k + "=" + std::to_string(v);
      }
      out.emptyStructures.push_back(name + ": " + error.what());
    }
  }
  if (spaces.empty()) {
    std::string why;
    for (const std::string& e : out.emptyStructures) why += "\n  " + e;
    throw std::runtime_error("no structure has a valid variant:" + why);
  }
  std::map<std::string, double> familyTotals;
  for (size_t i = 0; i < counts.size(); ++i) {
    familyTotals[families[i]] += static_cast<double>(counts[i]);
  }
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (size_t i = 0; i < counts.size(); ++i) {
    weights.push_back(static_cast<double>(counts[i]) / familyTotals[families[i]]);
  }
  std::vector<size_t> wanted(counts.size(), 0);
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  out.validPoints = total;
  const size_t targetCount = static_cast<size_t>(std::min<uint64_t>(samples, total));
  // The families' shares.
  std::vector<std::string> familyNames;
  for (const auto& [name, points] : familyTotals) familyNames.push_back(name);
  std::shuffle(familyNames.begin(), familyNames.end(), rng);
  std::map<std::string, uint64_t> familyShare;
  for (size_t left = targetCount; left > 0;) {
    std::vector<std::string> open;
    for (const std::string& name : familyNames) {
      if (familyShare[name] < static_cast<uint64_t>(familyTotals[name])) open.push_back(name);
    }
    if (open.empty()) break;
    const size_t each = std::max<size_t>(left / open.size(), 1);
    for (const std::string& name : open) {
      if (left == 0) break;
      const uint64_t room = static_cast<uint64_t>(familyTotals[name]) - familyShare[name];
      const uint64_t given = std::min<uint64_t>({each, room, left});
      familyShare[name] += given;
      left -= given;
    }
  }
  // Each family's share over its structures.
  for (const std::string& name : familyNames) {
    std::vector<double> familyWeights(weights.size(), 0.0);
    for (size_t i = 0; i < counts.size(); ++i) {
      if (families[i] == name) familyWeights[i] = weights[i];
    }
    for (uint64_t assigned = 0; assigned < familyShare[name];) {
      std::discrete_distribution<size_t> pick(familyWeights.begin(), familyWeights.end());
      size_t i = pick(rng);
      if (wanted[i] >= counts[i]) {
        familyWeights[i] = 0;
        continue;
      }
      ++wanted[i];
      ++assigned;
    }
  }
  std::vector<std::pair<size_t, std::vector<int64_t>>> drawn;
  for (size_t i = 0; i < spaces.size(); ++i) {
    if (wanted[i] == 0) continue;
    SampleSet set = samplers[i]->sample(wanted[i], seed * 1000003u + i);
    if (out.method.find(set.method) == std::string::npos) {
      out.method += (out.method.empty() ? "" : ", ") + set.method;
    }
    out.fewerThanRequested =
        out.fewerThanRequested || set.spaceSmallerThanRequested || set.duplicateLimitReached;
    for (std::vector<int64_t>& point : set.points) drawn.push_back({i, std::move(point)});
  }
  samplers.clear();
  countedSpaces.clear();
  for (std::unique_ptr<ParameterSpace>& space : spaces) out.spaces.push_back(std::move(*space));
  // A seeded interleaving, so that the first variants run already span the structures.
  std::shuffle(drawn.begin(), drawn.end(), rng);
  for (auto& [space, point] : drawn) {
    out.pointSpace.push_back(space);
    out.points.push_back(std::move(point));
  }
  out.fewerThanRequested = out.fewerThanRequested || out.points.size() < samples;
  out.method += " over " + std::to_string(out.spaces.size()) + " structures";
  if (familyTotals.size() > 1) {
    out.method += " in " + std::to_string(familyTotals.size()) + " families";
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

namespace {
Preparation prepareAllShards(const ExploreTarget& target, const ExploreOptions& options);
}  // namespace

// Samples the points of every shard, then keeps this shard's: index % count == shard index.
Preparation prepareExploration(const ExploreTarget& target, const ExploreOptions& options) {
  if (options.shardCount == 0 || options.shardIndex >= options.shardCount) {
    throw std::invalid_argument("shard " + std::to_string(options.shardIndex) + " of " +
                                std::to_string(options.shardCount) +
                                ": the shard index must be below the shard count");
  }
  Preparation prep = prepareAllShards(target, options);
  prep.sampledBeforeShard = prep.points.size();
  if (options.shardCount == 1) return prep;
  std::vector<std::vector<int64_t>> points;
  std::vector<size_t> pointSpace;
  for (size_t i = options.shardIndex; i < prep.points.size(); i += options.shardCount) {
    points.push_back(std::move(prep.points[i]));
    if (i < prep.pointSpace.size()) pointSpace.push_back(prep.pointSpace[i]);
  }
  prep.points = std::move(points);
  prep.pointSpace = std::move(pointSpace);
  return prep;
}

namespace {

Preparation prepareAllShards(const ExploreTarget& target, const ExploreOptions& options) {
  Preparation prep;
  prep.target = target;
  prep.inputs.sizes = target.sizes;
  prep.inputs.inputs = randomInputs(target.parametric, target.sizes, options.dataSeed);

  // The device child: profile, and the reference run (checked against the interpreter when
  // small). It sends one JSON header line, then the reference output as raw floats.
  const bool checkWithInterpreter =
      target.reference && multiplyAdds(target) <= target.interpreterCheckLimit;
  ChildOutcome outcome = runInChild(
      [&](int fd) {
        host::Device device = host::selectDevice(options.device);
        Json header;
        header["profile"] = Json::parse(host::profileToJson(host::queryProfile(device)).dump());
        std::vector<float> output;
        if (target.reference) {
          host::Context context(device);
          CompilePipelineOptions compile;
          compile.codegen.specialize = target.sizes;
          CompiledProgram program = compileToOpenCL(*target.reference, {}, compile);
          Measurement m = measureCompiled(context, program, prep.inputs, options.measurement,
                                          &output);
          if (m.status != VariantStatus::Ok) {
            throw std::runtime_error(std::string("the reference (default-lowered program) is ") +
                                     statusName(m.status) + ": " + m.message);
          }
          header["reference"] = measurementJson(m);
          if (checkWithInterpreter) {
            std::vector<float> expected = flattenToFloats(
                interpret(*target.reference, prep.inputs.inputs, target.sizes));
            Comparison check = compareOutputs(output, expected, options.measurement.tolerance);
            header["check"] = {{"ok", check.ok},
                               {"maxError", check.maxError},
                               {"allowed", check.allowed},
                               {"message", check.message}};
          }
        }
        header["floats"] = output.size();
        writeAll(fd, header.dump() + "\n");
        writeAll(fd, std::string(reinterpret_cast<const char*>(output.data()),
                                 output.size() * sizeof(float)));
      },
      after(std::max(options.timeoutSeconds * 5, 60.0)));
  if (outcome.timedOut) {
    throw std::runtime_error("the device query and reference run took longer than " +
                             std::to_string(static_cast<int>(options.timeoutSeconds * 5)) + " s");
  }
  size_t newline = outcome.data.find('\n');
  Json header = newline == std::string::npos
                    ? Json()
                    : Json::parse(outcome.data.substr(0, newline), nullptr, false);
  if (outcome.signaled || !header.is_object() || header.contains("event")) {
    std::string why = header.is_object() && header.contains("message")
                          ? header["message"].get<std::string>()
                          : outcome.signaled ? "it died from " + signalText(outcome.signal)
                                             : "exit code " + std::to_string(outcome.exitCode);
    throw std::runtime_error("the device query / reference run failed: " + why);
  }
  prep.device = host::profileFromJson(nlohmann::ordered_json::parse(header["profile"].dump()),
                                      "queried device");
  if (target.reference) {
    const Json& r = header["reference"];
    size_t count = header["floats"].get<size_t>();
    if (outcome.data.size() - newline - 1 != count * sizeof(float)) {
      throw std::runtime_error("the reference run sent a truncated output");
    }
    std::vector<float> expected(count);
    std::memcpy(expected.data(), outcome.data.data() + newline + 1, count * sizeof(float));
    prep.inputs.expected = std::move(expected);
    ReferenceRecord reference;
    reference.program = target.program;
    reference.device = prep.device.fingerprint;
    reference.compiler = compilerVersion();
    reference.description = target.description;
    reference.flops = target.flops;
    reference.samplesNs = r["samples"].get<std::vector<uint64_t>>();
    reference.medianNs = r.value("median", uint64_t{0});
    reference.spaceBytes = r.value("space", int64_t{0});
    prep.reference = reference;
    if (header.contains("check")) {
      const Json& check = header["check"];
      if (!check["ok"].get<bool>()) {
        throw std::runtime_error(
            "the reference (default-lowered program) disagrees with the interpreter: " +
            check["message"].get<std::string>());
      }
      prep.referenceCheck = "reference checked against the interpreter (max difference " +
                            std::to_string(check["maxError"].get<double>()) + ")";
    } else {
      prep.referenceCheck = "reference too large for the interpreter check";
    }
  } else {
    prep.referenceCheck = "each variant checked against the interpreter";
  }

  SpaceOptions spaceOptions;
  spaceOptions.switches = target.switches;
  spaceOptions.powerOfTwo = target.powerOfTwo;
  spaceOptions.device = options.profile.empty() ? prep.device : host::loadProfile(options.profile);
  prep.deviceProfileName = spaceOptions.device->name;
  SampledTarget sampled =
      sampleTarget(target, *spaceOptions.device, options.samples, options.seed, options.sampler);
  prep.spaces = std::move(sampled.spaces);
  prep.spaceStructure = std::move(sampled.spaceStructure);
  prep.pointSpace = std::move(sampled.pointSpace);
  prep.points = std::move(sampled.points);
  prep.emptyStructures = std::move(sampled.emptyStructures);
  prep.samplingMethod = sampled.method;
  prep.fewerThanRequested = sampled.fewerThanRequested;
  prep.samplingSeconds = sampled.seconds;
  if (target.structures.empty()) {
    prep.space = std::move(prep.spaces.front());
    prep.spaces.clear();
    prep.pointSpace.clear();
  } else {
    prep.space = prep.spaces.front();
  }
  return prep;
}

}  // namespace

const char* sampleOrderName(SampleOrder order) {
  return order == SampleOrder::Cost ? "cost" : "random";
}

std::optional<SampleOrder> parseSampleOrder(const std::string& text) {
  if (text == "cost") return SampleOrder::Cost;
  if (text == "random") return SampleOrder::Random;
  return std::nullopt;
}

std::vector<std::optional<double>> predictedCosts(const Preparation& prep) {
  std::vector<std::optional<double>> costs(prep.points.size());
  if (!prep.target.predictSeconds) return costs;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    std::optional<double> seconds =
        prep.target.predictSeconds(parseRecordedParameters(prep.parametersOf(i)), prep.device);
    if (seconds && std::isfinite(*seconds)) costs[i] = *seconds;
  }
  return costs;
}

std::vector<size_t> orderByPredictedCost(const std::vector<std::optional<double>>& costs) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // A cost that is missing or not finite (NaN would break the ordering) counts as unknown.
  auto known = [&](size_t i) { return costs[i].has_value() && std::isfinite(*costs[i]); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!known(a) || !known(b)) return known(a) && !known(b);
    return *costs[a] < *costs[b];
  });
  return order;
}

std::vector<size_t> measurementOrder(const std::vector<size_t>& pending,
                                     const std::vector<std::optional<double>>& costs,
                                     SampleOrder order) {
  if (order == SampleOrder::Random) return pending;
  std::vector<std::optional<double>> pendingCosts;
  for (size_t index : pending) {
    pendingCosts.push_back(index < costs.size() ? costs[index] : std::nullopt);
  }
  std::vector<size_t> ordered;
  for (size_t position : orderByPredictedCost(pendingCosts)) ordered.push_back(pending[position]);
  return ordered;
}

ExploreSummary runExploration(const Preparation& prep, const ExploreOptions& options) {
  const auto start = Clock::now();
  ResultsDb db(options.db);
  const std::string device = prep.device.fingerprint;
  const std::string compiler = compilerVersion();
  if (prep.reference) db.recordReference(*prep.reference);

  ExploreSummary summary;
  summary.sampled = prep.points.size();
  ProgressUpdate progress;
  progress.total = prep.points.size();
  for (const VariantRecord& row : db.variants(prep.target.program, device)) {
    if (row.key.compiler == compiler && row.status == VariantStatus::Ok && row.medianNs &&
        (!progress.bestNs || *row.medianNs < *progress.bestNs)) {
      progress.bestNs = row.medianNs;
    }
  }

  // Skip what is done.
  std::vector<size_t> pending;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    VariantKey key{prep.target.program, device, compiler, prep.parametersOf(i)};
    std::optional<VariantRecord> existing = db.find(key);
    if (existing && existing->status != VariantStatus::Running) {
      ++summary.skipped;
      ++progress.statusCounts[statusName(existing->status)];
      continue;
    }
    if (existing && existing->attempts >= 2) {
      VariantRecord crashed = *existing;
      crashed.workload = prep.target.workload;
      crashed.strategy = prep.strategyOf(i);
      crashed.status = VariantStatus::Crashed;
      crashed.message = "the explorer died twice while this variant ran (" +
                        std::to_string(existing->attempts) + " attempts); not run again";
      db.record(crashed);
      ++summary.skipped;
      ++progress.statusCounts["crashed"];
      continue;
    }
    pending.push_back(i);
  }
  // Measure the cheapest predicted first (ExploreOptions::order); the set stays `pending`.
  const std::vector<std::optional<double>> costs = predictedCosts(prep);
  pending = measurementOrder(pending, costs, options.order);
  progress.skipped = summary.skipped;
  progress.done = summary.skipped;
  if (options.progress) options.progress(progress);

  // --jobs: pre-build children for the next `jobs` pending variants (see explorer.h).
  const size_t jobs = std::max<size_t>(options.jobs, 1);
  PrebuildPool prebuilds;
  auto prebuildBody = [&prep, &options](size_t variant) {
    return [&prep, &options, variant](int fd) {
      host::Device selected = host::selectDevice(options.device);
      host::Context context(selected);
      MeasurementOptions buildOnly = options.measurement;
      buildOnly.stopAfterBuild = true;
      Measurement m =
          measureVariant(context, prep.programOf(variant),
                         prep.spaceOf(variant).binding(prep.points[variant]), prep.inputs,
                         buildOnly);
      Json out{{"event", "prebuilt"}, {"status", statusName(m.status)}, {"message", m.message}};
      if (m.buildMs) out["buildMs"] = *m.buildMs;
      sendLine(fd, out);
    };
  };

  // The options of one variant's measurement: the target's constant inputs, and the time-once
  // threshold from the best time so far (`best`: ns or null).
  auto measurementOptionsFor = [&prep, &options](const Json& best) {
    MeasurementOptions measurementOptions = options.measurement;
    measurementOptions.constantInputs = prep.target.constantInputs;
    if (best.is_number() && options.timeOnceFactor > 0) {
      measurementOptions.timeOnceAboveNs = static_cast<uint64_t>(
          options.timeOnceFactor * static_cast<double>(best.get<uint64_t>()));
    }
    return measurementOptions;
  };

  // The measuring child (forked by the launcher): builds, runs, verifies and times the variant
  // the generator generated, reporting on the generator's event pipe.
  MeasuringLauncher launcher;
  launcher.start([&prep, &options, &measurementOptionsFor](LaunchRequest& launch, int fd) {
    sendLine(fd, Json{{"event", "started"}, {"pid", getpid()}});
    const MeasurementOptions measurementOptions = measurementOptionsFor(launch.best);
    GeneratedVariant& variant = launch.generated;
    const size_t index = launch.variant;
    if (prep.inputs.expected) variant.expected = *prep.inputs.expected;
    Measurement m;
    if (measurementOptions.stopAfterGeneration) {
      m = variant.measurement;
      m.status = VariantStatus::Ok;
      m.message = "generated (not built: stopAfterGeneration)";
    } else {
      host::Device selected = host::selectDevice(options.device);
      host::Context context(selected);
      MeasurementEvents events;
      events.phase = [fd](const std::string& name, uint64_t ns) {
        sendLine(fd, Json{{"event", name}, {"ns", ns}});
      };
      if (options.tamperOutput) {
        events.tamperOutput = [&](std::vector<float>& output) {
          options.tamperOutput(index, output);
        };
      }
      if (options.tamperProgram) {
        events.tamperProgram = [&](CompiledProgram& program) {
          options.tamperProgram(index, program);
        };
      }
      m = measureGenerated(context, variant, prep.inputs, measurementOptions, events);
    }
    sendLine(fd, measurementJson(m));
  });

  // The generator process (see GeneratorProcess): per request it generates the variant, then
  // hands it to the launcher, which forks the measuring child, and reports how that ended.
  auto serve = [&prep, &options, &launcher, &measurementOptionsFor](const Json& request,
                                                                    int eventFd) {
    const auto busyStart = Clock::now();
    const double cpuStart = threadCpuMs();
    const size_t index = request.at("variant").get<size_t>();
    const Json best = request.contains("best") ? request["best"] : Json();
    const MeasurementOptions measurementOptions = measurementOptionsFor(best);
    Json exited{{"event", "exited"}};
    double waitedMs = 0;
    if (options.tamperGeneration) options.tamperGeneration(index);
    rusage before{};
    getrusage(RUSAGE_THREAD, &before);
    {
      GeneratedVariant variant =
          generateVariant(prep.programOf(index), prep.spaceOf(index).binding(prep.points[index]),
                          prep.inputs, measurementOptions);
      exited["generateCpuMs"] = threadCpuMs() - cpuStart;
      rusage after{};
      getrusage(RUSAGE_THREAD, &after);
      exited["generateMinorFaults"] = after.ru_minflt - before.ru_minflt;
      if (!variant.program) {
        sendLine(eventFd, measurementJson(variant.measurement));  // invalid: no child
      } else {
        sendLine(eventFd, Json{{"event", "generated"}, {"ns", 0}});
        // "fork": handing the variant to the launcher (serialised, sent); the launcher's own
        // fork of the child is launcherForkMs.
        const auto forkStart = Clock::now();
        const double forkCpuStart = threadCpuMs();
        const std::string id = launcher.send(index, best, variant,
                                             !prep.inputs.expected.has_value(), eventFd);
        exited["forkMs"] = msSince(forkStart);
        exited["forkCpuMs"] = threadCpuMs() - forkCpuStart;
        const auto waitStart = Clock::now();
        const Json reply = launcher.waitFor(id);
        waitedMs = msSince(waitStart);
        if (reply.contains("forkError")) {
          throw std::runtime_error("fork (launcher): " + reply["forkError"].get<std::string>());
        }
        for (const char* key : {"childCpuMs", "launcherForkMs", "signaled", "signal", "code"}) {
          if (reply.contains(key)) exited[key] = reply[key];
        }
      }
    }  // the variant's program is freed here, on the generator's time
    exited["cpuMs"] = threadCpuMs() - cpuStart;
    exited["busyMs"] = msSince(busyStart) - waitedMs;
    sendLine(eventFd, exited);
  };
  GeneratorProcess generator(serve);

  double runSeconds = 0;
  summary.weftSeconds = prep.samplingSeconds;
  size_t launcherRetryOf = std::numeric_limits<size_t>::max();  // the variant run again
  for (size_t position = 0; position < pending.size(); ++position) {
    const auto iterationStart = Clock::now();
    const double iterationCpuStart = threadCpuMs();
    const size_t index = pending[position];
    PrebuildPool::Result prebuilt;
    if (jobs > 1) {
      for (size_t ahead = position; ahead < std::min(pending.size(), position + jobs); ++ahead) {
        if (!prebuilds.started(pending[ahead])) {
          prebuilds.start(pending[ahead], prebuildBody(pending[ahead]));
        }
      }
      prebuilt = prebuilds.take(index, options.timeoutSeconds);
      runSeconds += prebuilt.waitedSeconds;
    }
    VariantKey key{prep.target.program, device, compiler, prep.parametersOf(index)};
    VariantRecord record;
    record.key = key;
    record.workload = prep.target.workload;
    record.strategy = prep.strategyOf(index);
    record.attempts = db.markRunning(key);

    const double cap = options.timeoutSeconds;
    std::optional<uint64_t> best = progress.bestNs;
    std::string phase = "generation";
    Json result;
    auto onLine = [&](const std::string& line) -> std::optional<Clock::time_point> {
      Json message = Json::parse(line, nullptr, false);
      if (!message.is_object()) return std::nullopt;
      std::string event = message.value("event", "");
      if (event == "generated") {
        phase = "build";
        return after(cap);
      }
      if (event == "built") {
        phase = "warm-up run";
        // No build beside the runs: pre-builds wait until this variant's process ends.
        if (!options.buildWhileTiming) prebuilds.pause();
        if (!best) return after(cap);
        return after(std::min(cap, options.slowdownCutoff * static_cast<double>(*best) * 1e-9 +
                                       options.marginSeconds));
      }
      if (event == "warm") {
        phase = "timed runs";
        double warm = static_cast<double>(message.value("ns", uint64_t{0})) * 1e-9;
        double measured =
            std::max(static_cast<double>(options.measurement.minMeasuredNs) * 1e-9,
                     options.measurement.minRepeats * warm);
        return after(std::min(cap, options.marginSeconds + 4 * measured));
      }
      if (event == "result" || event == "error") result = message;
      return std::nullopt;
    };
    const GeneratorProcess::Outcome served = generator.run(
        Json{{"variant", index}, {"best", best ? Json(*best) : Json(nullptr)}}, after(cap),
        onLine);
    const ChildOutcome& outcome = served.child;
    // The generator's own time for this variant (generation, the fork, messages; not the
    // wait for the measuring child), 0 when it died or was killed.
    const Json& exited = served.exited;
    const double generatorBusyMs = exited.is_object() ? exited.value("busyMs", 0.0) : 0.0;
    prebuilds.resume();
    runSeconds += outcome.seconds;

    // The launcher died under this variant (killed from outside: its measuring child died with
    // it, so whatever the variant's process reported says nothing about the variant). A new
    // launcher, a new generator holding its socket, and the variant is measured again once; a
    // second death on the same variant is recorded against it (crashed), like a variant found
    // running twice after the explorer died.
    bool launcherDied = false;
    if (launcher.died()) {
      launcher.restart();
      generator.discard();
      if (launcherRetryOf != index) {
        launcherRetryOf = index;
        --position;
        continue;
      }
      launcherDied = true;
    }

    if (launcherDied) {
      record.status = VariantStatus::Crashed;
      record.message = "the measuring launcher died twice while this variant was measured (in "
                       "the " + phase + "); not run again";
      record.details = Json{{"phase", phase}, {"childSeconds", outcome.seconds}}.dump();
    } else if (result.is_object() && result.value("event", "") == "result") {
      record.status = parseStatus(result.value("status", "")).value_or(VariantStatus::Invalid);
      record.message = result.value("message", "");
      record.sourceHash = result.value("hash", "");
      record.samplesNs = result.value("samples", std::vector<uint64_t>{});
      if (result.contains("median")) record.medianNs = result["median"].get<uint64_t>();
      if (result.contains("space")) record.spaceBytes = result["space"].get<int64_t>();
      if (result.contains("buildMs")) record.buildMs = result["buildMs"].get<double>();
      Json details{{"warmUpNs", result.value("warmNs", uint64_t{0})},
                   {"kernels", result.value("kernels", Json::array())},
                   {"maxError", result.value("maxError", 0.0)},
                   {"allowedError", result.value("allowedError", 0.0)},
                   {"tolerance", options.measurement.tolerance},
                   {"childSeconds", outcome.seconds},
                   {"generateMs", result.value("generateMs", 0.0)},
                   {"timedOnce", result.value("timedOnce", false)}};
      if (result.contains("preparationNs")) details["preparationNs"] = result["preparationNs"];
      if (result.contains("allBuffersBytes")) details["allBuffersBytes"] = result["allBuffersBytes"];
      if (prebuilt.ran) {
        // build_ms is the pre-build's (the uncached build); the measuring child's build, a
        // cache hit when the implementation caches builds (PoCL), is kept in the details.
        if (prebuilt.buildMs && record.status != VariantStatus::BuildError &&
            record.status != VariantStatus::Invalid) {
          details["cachedBuildMs"] = record.buildMs ? Json(*record.buildMs) : Json(nullptr);
          record.buildMs = prebuilt.buildMs;
        }
        details["prebuild"] = {{"status", prebuilt.status},
                               {"message", prebuilt.message},
                               {"waitedSeconds", prebuilt.waitedSeconds}};
      }
      // weft's own time for this variant: the generator's (generation, its fork of the
      // measuring child, messages) plus the explorer's work around the generator (everything
      // in this iteration but the request and the wait for its pre-build), up to here.
      const double aroundChild = std::chrono::duration<double>(Clock::now() - iterationStart).count() -
                                 outcome.seconds - prebuilt.waitedSeconds;
      details["weftMs"] = 1e3 * std::max(aroundChild, 0.0) + generatorBusyMs;
      // The same work in CPU time: the explorer thread's (its waits for the pre-build and the
      // child take none) plus the generator's. Unlike the wall figure it does not grow when
      // the pre-builds running beside it (OpenCL builds, not weft's work) take the cores.
      const double explorerCpuMs = threadCpuMs() - iterationCpuStart;
      details["explorerCpuMs"] = explorerCpuMs;
      details["weftCpuMs"] =
          explorerCpuMs + (exited.is_object() ? exited.value("cpuMs", 0.0) : 0.0);
      if (exited.is_object()) {
        // Thread CPU milliseconds: the generator's in all and for generating; handing the variant
        // to the launcher (wall and CPU) and the launcher's fork of the measuring child (wall);
        // the measuring child's CPU (build and runs included).
        Json generator{{"cpuMs", exited.value("cpuMs", 0.0)},
                       {"generateCpuMs", exited.value("generateCpuMs", 0.0)},
                       {"busyMs", generatorBusyMs}};
        for (const char* key :
             {"forkMs", "forkCpuMs", "launcherForkMs", "childCpuMs", "generateMinorFaults"}) {
          if (exited.contains(key)) generator[key] = exited[key];
        }
        details["generator"] = generator;
      }
      record.details = details.dump();
    } else {
      if (outcome.timedOut) {
        record.status = VariantStatus::Timeout;
        record.message = "killed after " + std::to_string(outcome.seconds) + " s in the " + phase +
                         (best ? " (cut-off " + std::to_string(options.slowdownCutoff) +
                                     " x best + " + std::to_string(options.marginSeconds) + " s)"
                               : std::string(" (cap ") + std::to_string(cap) + " s)");
      } else if (outcome.signaled) {
        record.status = VariantStatus::Crashed;
        record.message = "the variant's process died from " + signalText(outcome.signal) +
                         " in the " + phase;
      } else {
        record.status = VariantStatus::Crashed;
        record.message = "the variant's process exited with code " +
                         std::to_string(outcome.exitCode) + " in the " + phase +
                         (result.is_object() ? ": " + result.value("message", "") : "");
      }
      record.details = Json{{"phase", phase}, {"childSeconds", outcome.seconds}}.dump();
    }
    // The cost model's prediction and the order the variant was measured in.
    {
      Json details = Json::parse(record.details, nullptr, false);
      if (!details.is_object()) details = Json::object();
      if (costs[index]) details["predictedNs"] = std::llround(*costs[index] * 1e9);
      details["order"] = sampleOrderName(options.order);
      details["orderPosition"] = position;
      record.details = details.dump();
    }
    db.record(record);
    summary.weftSeconds +=
        std::max(std::chrono::duration<double>(Clock::now() - iterationStart).count() -
                     outcome.seconds - prebuilt.waitedSeconds,
                 0.0) +
        1e-3 * generatorBusyMs;

    ++summary.ran;
    ++summary.statusCounts[statusName(record.status)];
    ++progress.statusCounts[statusName(record.status)];
    if (record.status == VariantStatus::Ok && record.medianNs &&
        (!progress.bestNs || *record.medianNs < *progress.bestNs)) {
      progress.bestNs = record.medianNs;
    }
    ++progress.done;
    progress.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    const size_t remaining = progress.total - progress.done;
    progress.etaSeconds = runSeconds / static_cast<double>(summary.ran) * remaining;
    progress.last = &record;
    if (options.progress) options.progress(progress);
    progress.last = nullptr;
  }

  for (const VariantRecord& row : db.variants(prep.target.program, device)) {
    if (row.key.compiler == compiler && row.status == VariantStatus::Ok && row.medianNs &&
        (!summary.bestNs || *row.medianNs < *summary.bestNs)) {
      summary.bestNs = row.medianNs;
      summary.bestParameters = row.key.parameters;
    }
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

ExploreSummary explore(const ExploreTarget& target, const ExploreOptions& options) {
  return runExploration(prepareExploration(target, options), options);
}

}  // namespace weft::explore
