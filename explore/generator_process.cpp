// The explorer's generator process: see explore/generator_process.h.
#include "explore/generator_process.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace weft::explore::process {

GeneratorProcess::Outcome GeneratorProcess::run(
    const Json& request, Clock::time_point deadline,
    const std::function<std::optional<Clock::time_point>(const std::string&)>& onLine) {
  Outcome outcome;
  const auto start = Clock::now();
  if (pid_ < 0) startProcess();
  // A generator killed since the last request: the send fails (no SIGPIPE) and the events'
  // end-of-file below reports its death.
  sendAll(commandFd_, request.dump() + "\n");
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

void GeneratorProcess::startProcess() {
  // A socket, not a pipe: a request sent to a generator that died fails (sendAll's
  // MSG_NOSIGNAL) instead of killing the explorer with SIGPIPE.
  int commands[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, commands) != 0) {
    throw std::runtime_error(std::string("socketpair: ") + std::strerror(errno));
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

int GeneratorProcess::stop() {
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

}  // namespace weft::explore::process
