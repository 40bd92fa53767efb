// The pre-build children of `weft explore --jobs J` (ExploreOptions::jobs), internal to
// explore/: not public API.
//
// Variants are measured one after the other, but up to J pending variants ahead (the one about
// to be measured included) are generated and built at once, each in a pre-build child forked
// from the explorer (measureVariant with MeasurementOptions::stopAfterBuild). A pre-build
// generates its variant itself, so with J > 1 each variant is generated twice: there and in the
// generator process (explore/generator_process.h). Pre-builds only fill the OpenCL
// implementation's build cache (PoCL: POCL_CACHE_DIR, on disk across processes), so that the
// measuring child's build is a cache hit. The explorer waits for a variant's pre-build (take,
// at most the cap) before that variant is measured, and stops every pre-build (pause: SIGSTOP)
// from the measuring child's "built" event until it ends (resume: SIGCONT), so that no build
// competes with the warm-up and timed runs for the cores (a CPU device such as PoCL runs kernels
// on the same cores; ExploreOptions::buildWhileTiming lets them run on, for GPUs). PoCL compiles
// each kernel again for its work-group size at its first launch (seconds for a large kernel, on
// one core), so on a CPU device a pre-build also launches each kernel that has a local size of
// its own over one work-group (MeasurementOptions::compileFirstLaunch), which fills PoCL's cache
// with that compilation too; kernels whose local size the implementation chooses are still
// compiled in the measuring child. A pre-build writes a JSON line when it has built (before those
// launches), then one with its status, message and build time, or an error.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "explore/child_process.h"

namespace weft::explore::process {

class PrebuildPool {
 public:
  struct Result {
    bool ran = false;       // a pre-build was started for the variant
    std::string status;     // its status ("ok": built), "" when it gave no result
    std::optional<double> buildMs;
    std::string buildLog;   // the compiler's messages (warnings) of its build
    std::string message;    // its error, or why it gave no result
    double waitedSeconds = 0;  // how long the parent waited for it
  };

  PrebuildPool() = default;
  PrebuildPool(const PrebuildPool&) = delete;
  PrebuildPool& operator=(const PrebuildPool&) = delete;
  ~PrebuildPool();

  bool started(size_t variant) const { return children_.count(variant) > 0; }

  // Forks the variant's pre-build child, running `body(fd)` (spawnChild).
  void start(size_t variant, const std::function<void(int)>& body);

  // Stops every pre-build (SIGSTOP) / lets them go on (SIGCONT).
  void pause();
  void resume();

  // Waits for the variant's pre-build (killed when `seconds` pass first; resumed first if
  // paused) and forgets it. A variant without a pre-build gives Result{ran = false}. A
  // pre-build that reports its build done ({"event": "built", "ns": ...}, before its first
  // launches) is given `afterBuild(build seconds)` seconds more at most from then: one
  // work-group of a variant can run for as long as the variant (a kernel of one work-group),
  // and its first launch should not outlast the cut-off of the measuring child's warm-up.
  Result take(size_t variant, double seconds,
              const std::function<double(double)>& afterBuild = nullptr);

 private:
  struct Child {
    SpawnedChild spawned;
    std::string data;
    bool reaped = false;
  };

  void signalAll(int sig);

  // Kills the child if it still runs, reaps it and closes its pipe; its wait status.
  static int stop(Child& child);

  std::map<size_t, Child> children_;
};

}  // namespace weft::explore::process
