// How many cache lines a kernel's global accesses load into a CPU core's first-level data
// cache, from the loops around each access (KernelPlan::globalAccesses), so that a cost model
// sees what the buffers' sizes alone do not: a buffer read again for every row of an output
// when the data between two uses of a line no longer fits in the cache (an untiled matrix
// product reading B once per row of A), or one line loaded per value by a walk across rows.
//
// The model is the classic reuse analysis of loop nests (footprints of loop iterations against
// the cache's capacity, as in Wolf and Lam, "A Data Locality Optimizing Algorithm", PLDI 1991,
// and the footprint-based miss estimates that followed it):
//   - Each access runs in a nest of loops, outermost first: on a CPU the work-groups (per launch
//     dimension, highest first), the work-items of a group (dimension 0 innermost), then the
//     kernel's own loops. PoCL runs a work-group's work-items in a loop around the kernel body,
//     and moves that loop inside the body's innermost loops only in kernels that have barriers
//     (its ImplicitLoopBarriers pass adds barriers to uniform innermost loops only when the
//     kernel has work-group barriers already): there the work-item loops are innermost.
//   - The stride of each loop is the access offset's step per iteration (the median of three
//     iterations), in scalars.
//   - Accesses of one buffer in the same loops with the same strides, whose offsets differ by a
//     constant (a stencil's taps, an unrolled body's copies), are one reference group: their
//     offsets are one more dimension of its footprint.
//   - The distinct lines a group touches during loops i..n: the loops sorted by stride, each
//     extends the contiguous span when its stride is within a line of it, else multiplies the
//     blocks (loops of equal stride overlap: one loop of the trips' sum).
//   - Lines loaded: from the innermost loop outward, the lines of one iteration of a loop stay
//     cached for the next iteration when the kernel's footprint of one iteration (every group
//     inside that loop) fits in the cache: then only the new lines load; else every iteration
//     loads its lines again.
// It is an estimate for ordering variants, not a simulation: associativity, prefetching and
// hardware threads are not modelled. For a core's second-level cache the same analysis runs at
// that cache's size.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "ir/arith.h"

namespace weft::explore {

struct CacheTraffic {
  double lineLoads = 0;  // lines loaded into the cache over the whole launch, every buffer
  std::map<std::string, double> lineLoadsByBuffer;
  double distinctLines = 0;  // the lines the accesses touch at all (the compulsory loads)
  // Of lineLoads, those of reference groups whose innermost loop steps a page (4 KiB) or more
  // and whose members lie a page or more apart: each line on a page of its own, so that
  // translating its address, not the cache's bandwidth, bounds how fast such lines come back.
  double pageWalkLineLoads = 0;
  // One line per reference group (with `explain`): its buffer, members, loops and loads.
  std::vector<std::string> explanation;
};

// The step of `offset` (in scalars) per iteration of the loop over `variable` of `trips`
// iterations: the median of its steps at the first, middle and last iterations, every other
// variable at `at`; 0 for a loop of one iteration, nullopt where the offset does not evaluate.
std::optional<double> offsetStepAlong(const Arith& offset, const std::string& variable,
                                      int64_t trips, ArithBinding at);

// Whether the kernel named `kernel` uses work-group barriers (read from the program's text).
bool kernelHasBarriers(const CompiledProgram& program, const KernelPlan& kernel);

// The lines `kernel` loads into a core's cache of `cacheBytes` with lines of `lineBytes`,
// under `binding` (sizes and tuning values), with `local` work-items per group in each
// dimension (0: the implementation's choice, taken as the whole global size).
CacheTraffic cacheTraffic(const KernelPlan& kernel, bool hasBarriers, const ArithBinding& binding,
                          const std::array<int64_t, 3>& local, double cacheBytes, double lineBytes,
                          bool explain = false);

}  // namespace weft::explore
