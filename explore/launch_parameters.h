// Launch sizes as tuning parameters where the program leaves them open.
//
// Kernels whose maps are all mapGlb carry no local size: code generation leaves it to the
// OpenCL implementation (NULL), which on PoCL often means two huge work-groups and half the
// speed, and on GPUs an arbitrary occupancy. The LIFT paper's Table 1 derives every
// launch size from the tuning parameters; for these kernels the local size is a free choice,
// so the space gets one power-of-two parameter per open kernel and dimension,
// `local_k<kernel>_d<dimension>` (kernel indices in launch order, as in the kernel names
// weft_<definition>_k<kernel>), constrained by the device's work-group limits and to divide
// the global size. Measurement applies the sampled values to the compiled variant before it
// runs (applyLocalSizeParameters, codegen/compile_pipeline.h); a binding without them leaves the local size open.
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
  Arith variable;  // the tuning variable, powers of two in [1, its upper bound]
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

}  // namespace weft::explore
