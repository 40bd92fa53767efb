// Open launch sizes as tuning parameters (see explore/launch_parameters.h).
#include "explore/launch_parameters.h"

#include <algorithm>
#include <vector>
#include <map>

namespace weft::explore {

namespace {

// The largest power of two that divides `n` (n > 0).
int64_t lowestSetBit(int64_t n) { return n & -n; }

}  // namespace

std::vector<OpenLocalSize> openLocalSizes(const CompiledProgram& program,
                                          const host::DeviceProfile& device) {
  std::vector<OpenLocalSize> open;
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelPlan& kernel = program.kernels[k];
    if (kernel.hasLocalSize) continue;
    for (int d = 0; d < kernel.dimensions; ++d) {
      int64_t hi = std::min<int64_t>(device.maxWorkItemSizes[static_cast<size_t>(d)],
                                     device.maxWorkGroupSize);
      // A constant global size bounds the local size too (it must divide it).
      const std::optional<int64_t> global = kernel.globalSize[static_cast<size_t>(d)].constant();
      if (global) hi = std::min(hi, *global);
      if (hi <= 1) continue;  // only 1 is possible: nothing to choose
      OpenLocalSize entry;
      entry.kernel = static_cast<int>(k);
      entry.dimension = d;
      entry.variable = Arith::var(localSizeParameterName(static_cast<int>(k), d), VarKind::Tuning,
                                  Arith(1), Arith(hi));
      // Where the powers of two that divide a constant global size stop below the device's
      // work-group multiple, its other divisors are offered instead; where none of those makes
      // a work-group of at least that multiple either (a prime length) and the kernel can be
      // launched in parts, the powers of two are offered without dividing it.
      const int64_t multiple = std::max(device.workGroupMultiple, 2);
      if (global && lowestSetBit(*global) < multiple) {
        if (kernel.launchableInParts && !hasDivisorBetween(*global, std::min(multiple, hi), hi)) {
          entry.launchedInParts = true;
        } else {
          entry.constantGlobalSize = *global;
        }
      }
      open.push_back(entry);
    }
  }
  return open;
}

std::vector<Constraint> localSizeConstraints(const CompiledProgram& program,
                                             const std::vector<OpenLocalSize>& open,
                                             const host::DeviceProfile& device) {
  std::vector<Constraint> constraints;
  std::map<int, Arith> groupSizes;
  for (const OpenLocalSize& entry : open) {
    auto [it, inserted] = groupSizes.emplace(entry.kernel, entry.variable);
    if (!inserted) it->second = it->second * entry.variable;
    const KernelPlan& kernel = program.kernels[static_cast<size_t>(entry.kernel)];
    const std::string what = "kernel " + kernel.name + " local size in dimension " +
                             std::to_string(entry.dimension) + " (" +
                             entry.variable.varName() + ")";
    if (entry.launchedInParts) continue;  // any local size: the launch is split
    Constraint divides;
    divides.relation = Relation::Divides;
    divides.lhs = entry.variable;
    divides.rhs = kernel.globalSize[static_cast<size_t>(entry.dimension)];
    divides.origin = what;
    divides.reason = "the local size must divide the global size";
    constraints.push_back(divides);
  }
  for (const auto& [k, groupSize] : groupSizes) {
    const KernelPlan& kernel = program.kernels[static_cast<size_t>(k)];
    if (std::optional<Constraint> registers = registerFileConstraint(kernel, groupSize, device)) {
      constraints.push_back(*registers);
    }
    if (std::optional<Constraint> memory = privateMemoryConstraint(kernel, groupSize, device)) {
      constraints.push_back(*memory);
    }
    if (groupSize.isVar()) continue;  // one dimension: its domain already respects the limit
    Constraint limit;
    limit.relation = Relation::LessEqual;
    limit.lhs = groupSize;
    limit.rhs = Arith(device.maxWorkGroupSize);
    limit.origin = "kernel " + program.kernels[static_cast<size_t>(k)].name + " work-group size";
    limit.reason = "work-items per group at most the maximum work-group size of " + device.name;
    constraints.push_back(limit);
  }
  return constraints;
}

std::optional<Constraint> registerFileConstraint(const KernelPlan& kernel, const Arith& groupSize,
                                                 const host::DeviceProfile& device) {
  if (device.registersPerWorkGroup <= 0) return std::nullopt;
  Constraint limit;
  limit.relation = Relation::LessEqual;
  limit.lhs = groupSize * (registerResidentPrivateScalars(kernel, device) +
                           Arith(kRegistersBesidePrivateValues));
  limit.rhs = Arith(device.registersPerWorkGroup);
  limit.origin = "kernel " + kernel.name + " registers per work-group";
  limit.reason = "work-items per group x (private values + " +
                 std::to_string(kRegistersBesidePrivateValues) +
                 ") at most the registers a work-group shares on " + device.name;
  return limit;
}

std::int64_t memoryResidentPrivateScalars(const KernelPlan& kernel,
                                          const host::DeviceProfile& device) {
  std::vector<std::int64_t> sizes = kernel.privateArrayScalars;
  std::sort(sizes.begin(), sizes.end());
  std::int64_t inRegisters = 0, inMemory = 0;
  for (std::int64_t size : sizes) {
    if (inMemory == 0 && inRegisters + size <= device.registersPerWorkItem) {
      inRegisters += size;
    } else {
      inMemory += size;
    }
  }
  return inMemory;
}

std::int64_t privateValuesBound(const host::DeviceProfile& device) {
  const std::int64_t registers = device.registersPerWorkItem;
  if (device.deviceType != "cpu" || device.firstLevelCacheBytes <= 0) return registers;
  const std::int64_t lanes = std::max(1, device.nativeFloatVectorWidth);
  return std::max(registers, device.firstLevelCacheBytes / 4 / lanes);
}

Arith registerResidentPrivateScalars(const KernelPlan& kernel, const host::DeviceProfile& device) {
  const std::int64_t memory = memoryResidentPrivateScalars(kernel, device);
  return memory == 0 ? kernel.privateScalarsExpr : kernel.privateScalarsExpr - Arith(memory);
}

std::optional<Constraint> privateMemoryConstraint(const KernelPlan& kernel, const Arith& groupSize,
                                                  const host::DeviceProfile& device) {
  const std::int64_t memory = memoryResidentPrivateScalars(kernel, device);
  if (memory == 0) return std::nullopt;
  Constraint limit;
  limit.relation = Relation::LessEqual;
  limit.lhs = groupSize * Arith(memory * 4);
  limit.rhs = Arith(kPrivateMemoryBytesPerWorkGroup);
  limit.origin = "kernel " + kernel.name + " private memory per work-group";
  limit.reason = "work-items per group x " + std::to_string(memory * 4) +
                 " bytes of private arrays beyond the registers (" + device.name +
                 ") at most " + std::to_string(kPrivateMemoryBytesPerWorkGroup >> 20) +
                 " MiB: PoCL keeps them on the work-group's thread stack";
  return limit;
}

}  // namespace weft::explore
