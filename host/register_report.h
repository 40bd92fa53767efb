// What NVIDIA's OpenCL compiler says about a kernel's registers. Built with -cl-nv-verbose,
// NVIDIA's driver appends ptxas's resource report to the build log: per kernel ("entry
// function") the registers each work-item uses and the bytes it spills to local memory
// ("Function properties for NAME" followed by "S bytes stack frame, T bytes spill stores, L
// bytes spill loads", and "Used R registers, ..."). weft reads it so that a variant whose
// kernels spill is rejected before it is timed: code generation's register estimate is only an
// estimate, and a spilled register tile runs from memory.
#pragma once

#include <string>
#include <vector>

namespace weft::host {

struct KernelRegisterUse {
  std::string kernel;
  int registers = -1;      // -1: not reported
  int spillStoreBytes = 0;
  int spillLoadBytes = 0;
  bool spills() const { return spillStoreBytes > 0 || spillLoadBytes > 0; }
};

// The kernels a build log reports, in its order; empty when it holds no ptxas report.
std::vector<KernelRegisterUse> parseRegisterReport(const std::string& buildLog);

// The option that asks the platform's compiler for that report ("-cl-nv-verbose" on NVIDIA's
// platform, "" elsewhere: other compilers reject it).
std::string registerReportOption(const std::string& platformName, const std::string& platformVendor);

}  // namespace weft::host
