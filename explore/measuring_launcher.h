// The explorer's launcher process, internal to explore/: not public API.
//
// The launcher is a small process forked from the explorer once the reference and inputs are
// ready and before any generator (explore/generator_process.h) exists, so its memory stays
// small. A generator hands it each generated variant (send): a small JSON header (variant, best
// time, binding, generation figures) in one datagram, with the program
// (serialiseCompiledProgram) and, where the inputs bring no expected output, the one the
// generator computed (the interpreter's) in a memfd sent along, as is the generator's event
// pipe. Per request the launcher forks the
// variant's measuring child, cheaply (the launcher's page tables are small, and the generator,
// which is not forked, keeps its pages private), which reads the program back, builds, runs,
// verifies and times it and reports its phases on the event pipe; the launcher waits for it and
// replies how it ended (waitFor: wait status, CPU time, its fork time). The socket is
// SOCK_SEQPACKET: a generator killed mid-request cannot leave half a message, and a reply for a
// request whose generator died is recognised by its id and dropped. The measuring child dies
// with the launcher and the launcher with the explorer (PR_SET_PDEATHSIG); a launcher killed
// from outside (the out-of-memory killer) takes its measuring child with it, which the explorer
// sees (died) and answers with a new launcher (restart).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "explore/child_process.h"
#include "explore/measurement.h"

namespace weft::explore::process {

// What a measuring child needs of a generated variant, as the generator hands it to the
// launcher.
struct LaunchRequest {
  std::string id;  // "<generator pid>:<counter>": replies to another request are dropped
  size_t variant = 0;
  Json best;       // ns or null
  GeneratedVariant generated;
};

class MeasuringLauncher {
 public:
  // `measure(request, eventFd)` runs in the measuring child (runAsChild's body).
  using Measure = std::function<void(LaunchRequest&, int eventFd)>;

  MeasuringLauncher() = default;
  MeasuringLauncher(const MeasuringLauncher&) = delete;
  MeasuringLauncher& operator=(const MeasuringLauncher&) = delete;
  ~MeasuringLauncher() { stop(); }

  // In the explorer: forks the launcher, whose measuring children run `measure`.
  void start(Measure measure);

  // In a generator: hands the generated variant to the launcher; its id for waitFor.
  std::string send(size_t variant, const Json& best, const GeneratedVariant& generated,
                   bool sendExpected, int eventFd);

  // In a generator: the launcher's reply for `id` (how the measuring child ended).
  Json waitFor(const std::string& id);

  pid_t pid() const { return pid_; }

  // In the explorer: whether the launcher has died (killed from outside, e.g. by the kernel's
  // out-of-memory killer; it never exits on its own while the explorer holds its socket). A
  // generator may see the launcher's socket close before the launcher is a zombie, so a hung-up
  // socket counts too (then the launcher is reaped, waiting). A dead launcher is reaped and
  // its socket closed; start() makes a new one.
  bool died();

  // In the explorer, after died(): a new launcher with the same measuring body.
  void restart();

 private:
  void stop();

  Measure measure_;
  pid_t pid_ = -1;
  int socket_ = -1;
  uint64_t counter_ = 0;
};

}  // namespace weft::explore::process
