// Runs a compiled weft program (codegen/compiled_program.h) on an OpenCL device: the bridge
// between code generation and the runtime of host/opencl_runtime.h.
//
// runProgram builds the program's source (once per context and source when the caller keeps a
// ProgramCache), evaluates every symbolic buffer size, launch size and local-memory size with
// the size binding, creates the buffers, writes the inputs (float buffers as float32, int and
// bool buffers as int32, flattened row-major), zero-fills the output and the temporaries,
// sets each kernel's arguments in order (buffers, open size variables as int32, local memory
// sizes) and launches the kernels in order, then reads the output buffer back into a Value
// of the program's output type. Kernel times come from the kernels' cl_events. Every failure
// before OpenCL sees the program (an unbound size variable, an input of the wrong size, a
// launch size that is not positive) is an OpenCLError naming the kernel, buffer or variable.
//
// Canary regions (RunOptions::guards): the output and every temporary buffer are allocated
// with a guard region before and after the data (at least RunOptions::guardBytes, rounded up
// to the device's CL_DEVICE_MEM_BASE_ADDR_ALIGN so that the data can be a sub-buffer of the
// allocation, clCreateSubBuffer); the kernels see only the data. The guards are filled with
// the word kGuardPattern (a NaN no kernel computes by accident) before the first repeat, and
// read back after every kernel of the first repeat: each guard word that changed is a write
// outside its buffer, reported in RunResult::guardViolations with the first kernel after which
// it was seen (the check costs only the first repeat: later repeats run the kernels back to
// back). Writes further away than the guard region are not seen.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "codegen/compiled_program.h"
#include "host/opencl_runtime.h"
#include "ir/arith.h"
#include "ir/value.h"

namespace weft::host {

// Built programs, one per (context, build options, source). Keep one across runs of the same
// compiled program to build it once (PoCL additionally caches builds on disk across processes).
class ProgramCache {
 public:
  // The program built from `source` with `options` for `context`'s device.
  Program get(Context& context, const std::string& source, const std::string& options = {});
  size_t size() const { return programs_.size(); }
  // How many builds get() has done (misses), for tests and reports.
  int builds() const { return builds_; }

 private:
  struct Key {
    cl_context context;
    std::string options;
    std::string source;
    bool operator<(const Key& other) const {
      return std::tie(context, options, source) <
             std::tie(other.context, other.options, other.source);
    }
  };
  std::map<Key, Program> programs_;
  int builds_ = 0;
};

struct RunOptions {
  // How many times the whole sequence of kernels runs; times are the best over the repeats.
  int repeats = 1;
  // Options for clBuildProgram, e.g. "-cl-fast-relaxed-math".
  std::string buildOptions;
  // Where built programs are kept across runs; null builds the source for this run only.
  ProgramCache* cache = nullptr;
  // Canary regions around the output and the temporaries (see the file comment).
  bool guards = false;
  size_t guardBytes = 4096;  // on each side, at least
  // How the output comes back: as a Value of the program's output type (RunResult::output), as
  // floats (RunResult::outputFloats, row-major, ints converted: what a comparison with an
  // expected output reads, without building a Value per element), or not at all (timed runs).
  enum class Output { Value, Floats, None };
  Output output = Output::Value;
  // Launch each kernel that has a local size of its own over one work-group only (its global
  // size the local size; the others not at all), once, and read nothing back: what a CPU
  // implementation compiles at a kernel's first launch for its local size (PoCL: the
  // work-group function, which it caches on disk per local size like the build) is then
  // compiled without the whole run. Group 0 reads and writes what it does in a whole run, so
  // with the real inputs it stays within the buffers; a loop over more items than the launch
  // (a map over more than its work-items) runs its whole trip count in that group.
  bool firstWorkGroupOnly = false;
};

// The 32-bit word guard regions are filled with: a quiet NaN with the payload 0xDEAD.
inline constexpr uint32_t kGuardPattern = 0x7FC0DEADu;

// Writes a run made outside one buffer, found in its guard regions.
struct GuardViolation {
  std::string buffer;       // BufferPlan::name
  std::string kernel;       // the first kernel after which the writes were seen
  size_t wordsBefore = 0;   // changed 4-byte words in the guard before the data
  size_t wordsAfter = 0;    // ... and after the data (past the end)
  // "kernel K wrote N values past the end of buffer X" (and/or "before the start of").
  std::string describe() const;
};

struct KernelTime {
  std::string name;
  uint64_t nanoseconds = 0;  // the fastest over the repeats
};

struct RunResult {
  Value output;                             // of CompiledProgram::outputType (Output::Value)
  std::vector<float> outputFloats;          // the output flattened (Output::Floats)
  std::vector<KernelTime> kernels;          // in launch order
  uint64_t totalNanoseconds = 0;            // the fastest repeat's sum over its kernels
  std::vector<uint64_t> repeatNanoseconds;  // each repeat's sum over its kernels
  std::vector<std::vector<uint64_t>> repeatKernelNanoseconds;  // [repeat][kernel]
  std::vector<GuardViolation> guardViolations;  // empty without RunOptions::guards
};

// An input as a buffer holds it, flattened row-major: float data as float32, int and bool data
// as int32 (ints beyond 2^24 stay exact). Made once per input (flatInputOf) and written to the
// device by every run, instead of flattening the interpreter's Value tree at each run: a Value
// takes about 40 bytes per element, so a caller that keeps only the flat form (the explorer, for
// the whole exploration) holds a tenth of the memory.
struct FlatInput {
  bool ints = false;             // int32 data (intValues), else float32 data (floats)
  std::vector<float> floats;
  std::vector<int32_t> intValues;
  size_t size() const { return ints ? intValues.size() : floats.size(); }
};
// The flat form of `value` (arrays and vectors of scalars; its first scalar's kind decides
// between floats and int32). Throws std::invalid_argument for tuples.
FlatInput flatInputOf(const Value& value);
std::vector<FlatInput> flatInputsOf(const std::vector<Value>& values);

// Runs `program` on `context` with `inputs` (one per definition parameter, in order) and the
// size variables bound by `sizes` (every variable in buffer sizes, launch sizes and kernel
// size arguments must be bound; bindSizes of ir/interp.h gives such a binding from the
// inputs). Throws OpenCLError (BuildError for a failed build) on failure.
RunResult runProgram(Context& context, const CompiledProgram& program,
                     const std::vector<Value>& inputs, const ArithBinding& sizes,
                     const RunOptions& options = {});
// The same with the inputs already flat. A buffer of the other element kind than its input's
// data gets it converted (ints to floats; floats truncated to ints), as from a Value.
RunResult runProgram(Context& context, const CompiledProgram& program,
                     const std::vector<FlatInput>& inputs, const ArithBinding& sizes,
                     const RunOptions& options = {});

}  // namespace weft::host
