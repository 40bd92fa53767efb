// Launches in parts: a kernel whose local size does not divide its global size.
//
// OpenCL 1.2 requires the local size to divide the global size in every dimension, so a length
// with no useful divisor (a prime, or twice one) leaves a kernel work-groups of one or two
// work-items, which cost a CPU runtime more than their work. A kernel that learns where it is only
// from get_global_id (KernelPlan::launchableInParts) can instead be launched as whole
// work-groups of the chosen local size, and the rest as one more launch with a global offset
// (clEnqueueNDRangeKernel's global_work_offset): per dimension [0, whole) in groups of L and
// [whole, global) in one group of global - whole, and in two or three dimensions every
// combination of the two. No guard enters the kernel, so PoCL's work-group vectoriser keeps
// the main launch (a per-work-item guard costs it 10x: bench/results/awkward-sizes-s70-amd.md).
// The runtime, the drop-in's host code and the bundle's harness launch the same parts.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace weft {

struct LaunchPart {
  std::array<int64_t, 3> offset{0, 0, 0};
  std::array<int64_t, 3> global{1, 1, 1};
  std::array<int64_t, 3> local{1, 1, 1};
};

// The launches that together run every work-item of `global` (dimensions 1 to 3, sizes >= 1)
// in work-groups of `local`: one launch when local divides global in every dimension, else the
// whole work-groups first, then the remainders (at most 2^dimensions launches).
std::vector<LaunchPart> launchParts(int dimensions, const std::array<int64_t, 3>& global,
                                    const std::array<int64_t, 3>& local);

// Whether launchParts gives more than one launch.
bool needsLaunchParts(int dimensions, const std::array<int64_t, 3>& global,
                      const std::array<int64_t, 3>& local);

}  // namespace weft
