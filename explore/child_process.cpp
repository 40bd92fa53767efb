// Forked children for the explorer: see explore/child_process.h.
#include "explore/child_process.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <stdexcept>

namespace weft::explore::process {

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

bool sendAll(int socket, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(socket, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    sent += static_cast<size_t>(n);
  }
  return true;
}

void sendLine(int fd, const Json& message) { writeAll(fd, message.dump() + "\n"); }

[[noreturn]] void runAsChild(const std::function<void(int)>& body, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(5);  // the parent died before prctl
  signal(SIGPIPE, SIG_IGN);
  // When memory runs out, the kernel's out-of-memory killer takes a child first (the largest
  // score), not the explorer that holds the results: the variant is recorded as killed and the
  // exploration goes on. Raising one's own score needs no privilege; failing to is harmless.
  if (FILE* score = std::fopen("/proc/self/oom_score_adj", "w")) {
    std::fputs("1000", score);
    std::fclose(score);
  }
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

SpawnedChild spawnChild(const std::function<void(int)>& body, int closeInChild) {
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

ChildOutcome runInChild(const std::function<void(int)>& body, Clock::time_point deadline,
                        const std::function<std::optional<Clock::time_point>(const std::string&)>&
                            onLine) {
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
  std::string text =
      "signal " + std::to_string(signal) + (name ? std::string(" (SIG") + name + ")" : "");
  // weft's own kills are deadlines, reported as such; any other SIGKILL came from outside.
  if (signal == SIGKILL) text += ", killed from outside: the out-of-memory killer or a user";
  return text;
}

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

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

}  // namespace weft::explore::process
