// Launch sizes as tuning parameters where the program leaves them open.
//
// Kernels whose maps are all mapGlb carry no local size: code generation leaves it to the
// OpenCL implementation (NULL), which on PoCL often means two huge work-groups and half the
// speed, and on GPUs an arbitrary occupancy. The LIFT paper's Table 1 derives every
// launch size from the tuning parameters; for these kernels the local size is a free choice,
// so the space gets one parameter per open kernel and dimension,
// `local_k<kernel>_d<dimension>` (kernel indices in launch order, as in the kernel names
// weft_<definition>_k<kernel>), constrained by the device's work-group limits and to divide
// the global size. Its values are the powers of two, or, where the sizes make the global size a
// constant whose power-of-two divisors stop below the device's work-group multiple
// (DeviceProfile::workGroupMultiple, at least 2), every divisor of it: a length such as
// 2·773·2713 has no power-of-two divisor above 2, and work-groups of 1 or 2 work-items cost a
// CPU device's runtime more than their work, while a guard for a rounded-up global size would
// stop PoCL's work-group vectoriser (figures in bench/results/awkward-sizes-*). A length none of
// whose divisors makes such a work-group (a prime) gets the powers of two where the kernel can be
// launched in parts (launchedInParts, codegen/launch_parts.h). Measurement applies the sampled
// values to the compiled variant before it runs (applyLocalSizeParameters,
// codegen/compile_pipeline.h); a binding without them leaves the local size open.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/compiled_program.h"
#include "host/device_profile.h"
#include "ir/arith.h"
#include "ir/constraint.h"

namespace weft::explore {

struct OpenLocalSize {
  int kernel = 0;
  int dimension = 0;
  Arith variable;  // the tuning variable, in [1, its upper bound]
  // The global size in this dimension where it is a constant (the sizes bound) with too few
  // power-of-two divisors, else 0: the values are then its divisors, else the powers of two.
  int64_t constantGlobalSize = 0;
  // Whether the values are the powers of two without dividing the global size: a constant
  // global size none of whose divisors makes a work-group of the device's work-group multiple,
  // in a kernel launchable in parts (codegen/launch_parts.h), which the runtime, the drop-in
  // and the bundle then launch as whole work-groups and a remainder.
  bool launchedInParts = false;
};

// One parameter per dimension of every kernel without a local size, bounded by the device's
// per-dimension and per-group work-item limits and a constant global size (none where only 1
// is possible).
std::vector<OpenLocalSize> openLocalSizes(const CompiledProgram& program,
                                          const host::DeviceProfile& device);

// The constraints on them: per kernel the work-group size within the device limit and its
// register file (registerFileConstraint), and in every dimension the local size dividing the
// global size. Sizes not yet substituted.
std::vector<Constraint> localSizeConstraints(const CompiledProgram& program,
                                             const std::vector<OpenLocalSize>& open,
                                             const host::DeviceProfile& device);

// Registers a work-item is assumed to use beside the kernel's private values (the register
// estimate of code generation, KernelPlan::privateScalarsExpr): addresses, indices, loop
// counters. An estimate: NVIDIA's compiler gave a register-blocked vector convolution kernel of
// 16 accumulators 32 registers (sm_90, 2026-11-23).
inline constexpr std::int64_t kRegistersBesidePrivateValues = 16;

// Where the device shares a register file among a work-group's work-items
// (DeviceProfile::registersPerWorkGroup > 0): `groupSize` x (the kernel's private values +
// kRegistersBesidePrivateValues) at most that file, else the kernel could not be launched in
// such work-groups (CUDA's "too many resources requested for launch"). Nothing where the
// device has no such limit.
std::optional<Constraint> registerFileConstraint(const KernelPlan& kernel, const Arith& groupSize,
                                                 const host::DeviceProfile& device);

// The scalars of the kernel's private arrays that no register file holds: its arrays of
// constant size, smallest first, fill the profile's registers per work-item, and those past
// them (a line buffer's ring of whole rows) are counted here. Their sizes do not follow the
// parameters, so no point of the space could keep them in registers: they live in memory, on a
// CPU the stack of the thread running the work-group (L1 and L2 caches), on a GPU its
// per-thread local memory. Arrays whose size follows the parameters (a fused tile) stay in the
// register estimate, so that the register budget bounds them.
std::int64_t memoryResidentPrivateScalars(const KernelPlan& kernel,
                                          const host::DeviceProfile& device);

// The kernel's private values held in registers: KernelPlan::privateScalarsExpr less its
// memory-resident arrays (memoryResidentPrivateScalars).
Arith registerResidentPrivateScalars(const KernelPlan& kernel, const host::DeviceProfile& device);

// The most private values (KernelPlan::privateScalarsExpr less the memory-resident arrays) a
// work-item may keep. On a GPU, and on a CPU whose first-level data cache is unknown, the
// registers per work-item: more spill to slow memory. On a CPU, values past the registers
// spill to the work-item's stack, which stays in the first-level data cache, so a private tile
// (a fused stage's rows, whose size follows the parameters) may fill that cache as the native
// vector's lanes share it (the work-group vectoriser of a CPU compiler such as PoCL runs that
// many work-items in lanes, each with its tile): max(registers, DeviceProfile::
// firstLevelCacheBytes / 4 / nativeFloatVectorWidth). Values of constant size (accumulators,
// unrolled temporaries) stay bounded by the registers. Measured on PoCL (AMD Zen 4): Harris's
// private tiles of 1128-1936 values (as compiled at full size) ran 16-18 ms with AVX-512 code
// (384 registers) and with AVX2 code (bench/avx2_proxy.sh, 64 registers) alike, tiles within
// 64 values 54-56 ms: the register file does not bound them there. With the whole cache as the
// bound (8192 floats) the AVX2 space took tiles whose builds ran past the explorer's timeout
// and sliding windows of 1100-1300 values that ran 3-4x slower than the best (unsharp mask,
// one exploration): a lane's share of it (1024 floats at float8) keeps to the fast ones.
std::int64_t privateValuesBound(const host::DeviceProfile& device);

// Bytes of memory-resident private arrays a work-group may hold. PoCL runs a work-group on one
// thread and keeps its work-items' private arrays on that thread's stack, 8 MiB by default on
// Linux (`ulimit -s`; pocl issue #1525: work-group context data exhausting the stack); half of
// it leaves room for the rest. A GPU spills such arrays to per-thread local memory (up to 512
// KiB per thread on NVIDIA), so the bound is no tighter than that there.
inline constexpr std::int64_t kPrivateMemoryBytesPerWorkGroup = std::int64_t{4} << 20;

// `groupSize` x the kernel's memory-resident private bytes at most
// kPrivateMemoryBytesPerWorkGroup; nothing where the kernel has none.
std::optional<Constraint> privateMemoryConstraint(const KernelPlan& kernel, const Arith& groupSize,
                                                  const host::DeviceProfile& device);

}  // namespace weft::explore
