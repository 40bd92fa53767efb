// The pre-build children of --jobs: see explore/prebuild_pool.h.
#include "explore/prebuild_pool.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <utility>

namespace weft::explore::process {

PrebuildPool::~PrebuildPool() {
  for (auto& [variant, child] : children_) stop(child);
}

void PrebuildPool::start(size_t variant, const std::function<void(int)>& body) {
  Child child;
  child.spawned = spawnChild(body);
  children_.emplace(variant, std::move(child));
}

void PrebuildPool::pause() { signalAll(SIGSTOP); }

void PrebuildPool::resume() { signalAll(SIGCONT); }

PrebuildPool::Result PrebuildPool::take(size_t variant, double seconds,
                                        const std::function<double(double)>& afterBuild) {
  Result result;
  auto found = children_.find(variant);
  if (found == children_.end()) return result;
  result.ran = true;
  Child& child = found->second;
  kill(child.spawned.pid, SIGCONT);
  const auto start = Clock::now();
  Clock::time_point deadline = after(seconds);
  char buffer[4096];
  bool timedOut = false;
  bool built = false;
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
    const size_t end = child.data.find('\n');
    if (!built && afterBuild && end != std::string::npos) {
      const Json line = Json::parse(child.data.substr(0, end), nullptr, false);
      if (line.is_object() && line.value("event", "") == "built") {
        built = true;
        const double buildSeconds = static_cast<double>(line.value("ns", uint64_t{0})) * 1e-9;
        deadline = std::min(deadline, after(afterBuild(buildSeconds)));
      }
    }
  }
  result.waitedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  const int status = stop(child);
  const std::string data = std::move(child.data);
  children_.erase(found);  // `child` is gone from here on
  if (timedOut) {
    result.message = built ? "the pre-build's first launches ran past the warm-up's cut-off "
                             "(killed after " +
                                 std::to_string(result.waitedSeconds) + " s)"
                           : "the pre-build was killed after " + std::to_string(seconds) + " s";
    return result;
  }
  // Its result: the line after the "built" line, when there is one.
  std::string last = data.substr(0, data.find('\n'));
  for (size_t begin = 0, end; (end = data.find('\n', begin)) != std::string::npos;
       begin = end + 1) {
    const Json line = Json::parse(data.substr(begin, end - begin), nullptr, false);
    if (line.is_object() && line.value("event", "") != "built") {
      last = data.substr(begin, end - begin);
      break;
    }
  }
  Json message = Json::parse(last, nullptr, false);
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
    result.buildLog = message.value("buildLog", "");
  }
  return result;
}

void PrebuildPool::signalAll(int sig) {
  for (auto& [variant, child] : children_) {
    if (!child.reaped) kill(child.spawned.pid, sig);
  }
}

int PrebuildPool::stop(Child& child) {
  if (child.reaped) return 0;
  kill(child.spawned.pid, SIGKILL);  // a no-op for one that has exited (a zombie until reaped)
  int status = 0;
  while (waitpid(child.spawned.pid, &status, 0) < 0 && errno == EINTR) {
  }
  close(child.spawned.fd);
  child.reaped = true;
  return status;
}

}  // namespace weft::explore::process
