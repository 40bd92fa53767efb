// The explorer's launcher process: see explore/measuring_launcher.h.
#include "explore/measuring_launcher.h"

#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "codegen/compiled_program.h"

namespace weft::explore::process {

namespace {

bool writeFully(int fd, const void* data, size_t size) {
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

bool readFully(int fd, void* data, size_t size, off_t offset) {
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

bool sendWithFds(int socket, const std::string& message, const std::vector<int>& fds) {
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
void serveLaunches(int socket, const MeasuringLauncher::Measure& measure) {
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

}  // namespace

void MeasuringLauncher::start(Measure measure) {
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

std::string MeasuringLauncher::send(size_t variant, const Json& best,
                                    const GeneratedVariant& generated, bool sendExpected,
                                    int eventFd) {
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

Json MeasuringLauncher::waitFor(const std::string& id) {
  std::string buffer(4096, '\0');
  while (true) {
    const ssize_t n = recv(socket_, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("launcher: it is gone (waiting for a child)");
    Json reply = Json::parse(buffer.substr(0, static_cast<size_t>(n)), nullptr, false);
    if (reply.is_object() && reply.value("id", "") == id) return reply;
  }
}

bool MeasuringLauncher::died() {
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

void MeasuringLauncher::restart() {
  Measure measure = measure_;
  start(std::move(measure));
}

void MeasuringLauncher::stop() {
  if (pid_ < 0) return;
  close(socket_);
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  socket_ = -1;
}

}  // namespace weft::explore::process
