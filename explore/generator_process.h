// The explorer's generator process, internal to explore/: not public API.
//
// Forked from the explorer when the first variant is due and kept, the generator generates one
// variant per request in its own memory, so that code generation's caches stay warm from one
// variant to the next and no variant pays a fresh process's copy-on-write faults for them. It
// never calls OpenCL. It hands each generated program to the launcher
// (explore/measuring_launcher.h), which forks the variant's measuring child, and reports how
// that child ended. The generator itself is never forked, so its pages stay private (no
// copy-on-write faults in the next generation) and no fork copies its page tables. Generation is
// code that can crash or hang: a generator that dies while generating costs that variant (the
// explorer records it crashed), one past the generation deadline is killed (timeout), and the
// next request forks a new generator.
//
// Protocol, one JSON object per line. Explorer -> generator: {"variant": i, "best": ns|null}.
// Generator and child -> explorer, in order: "generated" (the generator), "started" (the child,
// with its pid), the child's phase events and "result"/"error", then "exited" (the generator,
// once the child is reaped: how it ended, the generator's own time). A variant whose
// generation fails gets "result" (status invalid) and "exited" from the generator, no child.
// The child writes on the generator's pipe (passed to the launcher with the variant) while the
// generator only waits for the launcher's reply, so their lines never interleave.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "explore/child_process.h"

namespace weft::explore::process {

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
              const std::function<std::optional<Clock::time_point>(const std::string&)>& onLine);

  // Kills the generator (if one runs): the next request forks a new one from the explorer,
  // which then holds the explorer's present launcher socket (after a launcher restart).
  void discard() { stop(); }

  // The generator's process id, -1 when none runs (for diagnostics and tests).
  pid_t pid() const { return pid_; }

 private:
  void startProcess();

  // Kills the generator if it runs, reaps it, closes its channels; its wait status (0: none).
  int stop();

  Serve serve_;
  pid_t pid_ = -1;
  int eventFd_ = -1;
  int commandFd_ = -1;
  std::string pending_;
};

}  // namespace weft::explore::process
