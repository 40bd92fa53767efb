// The workloads weft ships with, registered in the order the registry asks them (the first
// that accepts a request serves it; the last is the catch-all for records written before
// records named their workload). Adding a workload is a folder under workloads/ and one line
// in builtin_workloads.cpp.
#pragma once

namespace weft::workloads {

// Registers the built-in workloads (explore/workload.h); calling it again does nothing.
void registerBuiltinWorkloads();

}  // namespace weft::workloads
