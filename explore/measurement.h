// Measuring one variant of a parametric program: instantiate the sampled point, generate the
// kernels, build them, run them once (warm-up) and check the output against a reference, then
// time them (the LIFT paper's section 6: median of repeated runs).
//
// Instantiation substitutes the point's values for the tuning variables (substituteArith over
// the definition's function and declared type), applies the default lowering (rules already
// lowered what they placed) and generates OpenCL with every size and parameter specialised
// (unrolling needs constant trip counts). Space is the global memory the variant holds at
// inference time: CompiledProgram::inferenceBytes — every buffer (inputs, padded copies,
// partial results, prepared buffers such as re-laid weights, output) except the constant inputs
// (MeasurementOptions::constantInputs) that only preparation kernels read, which an
// application may release once prepared. Without constant inputs that is every buffer
// (CompiledProgram::globalBytes), which Measurement::allBuffersBytes always holds.
//
// Timing: after the warm-up, runs repeat until at least `minRepeats` runs and `minMeasuredNs`
// of measured time (capped at `maxRepeats` runs). A variant whose warm-up is slower than
// `timeOnceAboveNs` is timed by one run, the warm-up itself (its cl_event times are a run's;
// measured on PoCL, single timed runs of such variants read 0.9-1.1 times their warm-ups); each
// run's time is the sum of its per-inference kernels' cl_event times
// (all kernels unless `constantInputs` names inputs whose preparation kernels are timed apart),
// the variant's time is the median, and every run's time is kept. runProgram
// zero-fills the output and temporaries before every run, so a variant that leaves outputs
// unwritten fails verification. The warm-up run (only it: the timed runs do not pay for the
// check) puts canary regions around the output and the temporaries (host::RunOptions::guards,
// MeasurementOptions::guards); a write into them makes the variant wrong_answer with the
// message "kernel K wrote N values past the end of buffer X", even when the output is right.
//
// Verification compares flat outputs with a tolerance relative to the reference's largest
// magnitude: |out - ref| <= tolerance * max(max |ref|, 1) everywhere (NaN never passes). The
// default 1e-3 allows for reassociated float sums (chunked reductions) of layers with
// thousands of terms per output.
//
// measureVariant runs in the calling process. The explorer (explore/explorer.h) splits it:
// generateVariant in its long-lived generator process (explore/generator_process.h),
// measureGenerated in a child the launcher forks per variant (explore/measuring_launcher.h),
// whose phase events go to the explorer, which enforces time limits.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/compiled_program.h"
#include "explore/results_db.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/arith.h"
#include "ir/expr.h"
#include "ir/value.h"

namespace weft::explore {

struct MeasurementOptions {
  int minRepeats = 3;
  int maxRepeats = 100;
  uint64_t minMeasuredNs = 100'000'000;  // 0.1 s of kernel time
  double tolerance = 1e-3;               // relative to max |reference| (at least 1)
  std::string buildOptions;
  bool guards = true;  // canary regions around outputs and temporaries in the warm-up run
  // Generate and build only (status ok once built): the explorer's pre-build children use it
  // to fill the OpenCL build cache (PoCL's POCL_CACHE_DIR) ahead of the measuring child.
  bool stopAfterBuild = false;
  // With stopAfterBuild: also launch each kernel with a local size of its own over one
  // work-group (host::RunOptions::firstWorkGroupOnly), so that what the implementation compiles
  // at a first launch is compiled and cached too (PoCL: a work-group function per local size,
  // seconds for a large kernel). A failure there leaves the status ok: the measuring child
  // compiles and reports it.
  bool compileFirstLaunch = false;
  // Generate only (status ok once generated; no OpenCL call at all): the explorer's measuring
  // child ends right after generation. For bench/weft_overhead, which times weft's own work
  // per variant through the explorer's process layout without building or running anything.
  bool stopAfterGeneration = false;
  // Where the platform's compiler reports registers (NVIDIA: -cl-nv-verbose, host/register_report.h),
  // a variant whose kernels spill registers is recorded invalid after its build, not timed.
  bool rejectSpills = true;
  // Inputs that stay the same from one inference to the next (a layer's weights and biases,
  // definition parameter indices). The kernels that depend only on them
  // (CompiledProgram::preparationKernels, e.g. the vector family's weight re-layout) are what
  // a drop-in runs once at create time: each timed run's time is then the sum over the other,
  // per-inference kernels, and the preparation kernels' time is reported apart
  // (Measurement::preparationNs); those of them no per-inference kernel reads are left out of
  // Measurement::spaceBytes. Empty: every kernel and every buffer counts.
  std::set<int> constantInputs;
  // A variant whose warm-up run takes longer than this (0: no limit) is timed by one run
  // instead of minRepeats / minMeasuredNs: the explorer passes a multiple of the best time so
  // far, so variants that cannot be near the front's fast end do not cost repeated long runs.
  uint64_t timeOnceAboveNs = 0;
  // The device's global memory and largest buffer (its profile; 0: unknown). A variant whose
  // buffers do not fit is recorded invalid with the sizes and never allocated: on a CPU device
  // such as PoCL, device memory is the host's, and an allocation past it would take the machine.
  int64_t deviceMemoryBytes = 0;
  int64_t maxBufferBytes = 0;
};

// Why `program`'s buffers under `sizes` do not fit the device of `options` (a buffer larger
// than maxBufferBytes, or all of them together larger than deviceMemoryBytes), or "" when they
// fit or the limits are unknown.
std::string deviceMemoryProblem(const CompiledProgram& program, const ArithBinding& sizes,
                                const MeasurementOptions& options);

// What every variant computes on: the inputs, the size binding, and the expected output
// flattened (nullopt: the interpreter computes it per variant from the instantiated program).
struct MeasurementInputs {
  std::vector<Value> inputs;
  ArithBinding sizes;
  std::optional<std::vector<float>> expected;
  // The inputs as device runs read them (host::FlatInput), made once; when empty, every run
  // flattens `inputs` itself. A caller that has the expected output may keep only these and
  // drop `inputs`, which only the interpreter reads (generateVariant without `expected`).
  std::vector<host::FlatInput> flat;
};

// Called by measureVariant as it goes, in order: "generated" (after code generation), "built"
// (after the OpenCL build), "warm" (after the warm-up run and the tamper hook, with the warm-up
// time), "verified". The explorer's child turns them into messages to its parent.
struct MeasurementEvents {
  std::function<void(const std::string& phase, uint64_t nanoseconds)> phase;
  // Test hook: called with the warm-up output (flattened) before it is verified; a test can
  // change it (a planted wrong answer), sleep (a planted hang) or crash.
  std::function<void(std::vector<float>& output)> tamperOutput;
  // Test hook: called with the generated program before it is built; a test can change its
  // source (a planted out-of-bounds write).
  std::function<void(CompiledProgram& program)> tamperProgram;
};

struct Measurement {
  VariantStatus status = VariantStatus::Invalid;
  std::string message;
  std::string sourceHash;               // of the OpenCL source, "" before generation
  // After generation: the inference memory (CompiledProgram::inferenceBytes with
  // MeasurementOptions::constantInputs; every buffer when there are none) ...
  std::optional<int64_t> spaceBytes;
  // ... and every buffer's bytes, the constant inputs the preparation alone reads included
  // (CompiledProgram::globalBytes).
  std::optional<int64_t> allBuffersBytes;
  std::optional<double> buildMs;        // after the build
  std::string buildLog;  // the compiler's messages (warnings), at most 4000 characters
  uint64_t warmUpNs = 0;
  std::vector<uint64_t> samplesNs;      // every timed run
  std::optional<uint64_t> medianNs;     // ok only
  std::vector<std::pair<std::string, uint64_t>> kernelNs;  // fastest per kernel
  // With MeasurementOptions::constantInputs: which kernels are preparation kernels (one flag
  // per kernel) and the median over the timed runs of their summed time (not in samplesNs).
  std::vector<bool> preparationKernels;
  std::optional<uint64_t> preparationNs;
  bool timedOnce = false;  // slower than MeasurementOptions::timeOnceAboveNs: the warm-up's time
  double generateMs = 0;                // weft's own work: instantiate, lower, generate OpenCL
  double maxError = 0;                  // of the verification
  double allowedError = 0;
};

// A variant generated and ready to build (generateVariant): its program, the full binding
// (sizes and point) and the output it must produce. Without a program, generation failed and
// `measurement` says why (status invalid).
struct GeneratedVariant {
  Measurement measurement;  // sourceHash, spaceBytes, allBuffersBytes, generateMs (or the failure)
  std::optional<CompiledProgram> program;
  ArithBinding binding;
  std::vector<float> expected;
};

// measureVariant's steps before the build, in the calling process: the point compiled
// (codegen/compile_pipeline.h) with every size and parameter specialised, source hash,
// memory; then the expected output (the data's, or the interpreter's on the instance).
// Nothing throws: a failure leaves `program` empty with status invalid.
//
// `lastInterpreted`, when given, keeps the interpreter's last output with the program it ran
// (printed): variants that differ only in their launch (local sizes, the switches of code
// generation) instantiate the same program and reuse it instead of interpreting it again.
struct InterpretedOutput {
  std::string program;
  std::vector<float> output;
};
GeneratedVariant generateVariant(const Definition& parametric, const ArithBinding& binding,
                                 const MeasurementInputs& data,
                                 const MeasurementOptions& options = {},
                                 InterpretedOutput* lastInterpreted = nullptr);

// measureVariant's steps from the build on, for a variant generateVariant produced (with a
// program): the tamperProgram hook, build, warm-up, verification, timing. Nothing throws.
Measurement measureGenerated(host::Context& context, GeneratedVariant& variant,
                             const MeasurementInputs& data, const MeasurementOptions& options = {},
                             const MeasurementEvents& events = {});

// FNV-1a 64-bit of the text as 16 hex digits.
std::string sourceHash(const std::string& text);

// How random float inputs are drawn.
enum class InputValues {
  // Uniform in [-1, 1).
  UniformFloats,
  // Whole numbers in [-2, 2]: sums and products of them stay whole and, below 2^24 in
  // magnitude, exact in float, so a re-associated reduction (partial sums in another order)
  // gives the reference's result exactly. Uniform floats would make a 16-million-term dot
  // product differ from the sequential reference by more than any tolerance that still
  // catches a missing term.
  SmallIntegers,
};

// Seeded random inputs for a definition's parameters under a size binding: floats as `values`
// says, ints in [-5, 5], bools 0/1, in the parameters' own layouts.
std::vector<Value> randomInputs(const Definition& definition, const ArithBinding& sizes,
                                uint64_t seed, InputValues values = InputValues::UniformFloats);
// The same inputs made flat directly (host::flatInputsOf(randomInputs(...)), value for value),
// without building the Values: for sizes whose Value trees would not fit in memory. Throws
// std::invalid_argument for a tuple parameter, which has no flat form.
std::vector<host::FlatInput> randomFlatInputs(const Definition& definition,
                                              const ArithBinding& sizes, uint64_t seed,
                                              InputValues values = InputValues::UniformFloats);

struct Comparison {
  bool ok = false;
  double maxError = 0;
  double allowed = 0;
  std::string message;  // the first bad element, or the size mismatch
};
Comparison compareOutputs(const std::vector<float>& actual, const std::vector<float>& expected,
                          double tolerance);

uint64_t medianOf(std::vector<uint64_t> samples);

// The violations' descriptions joined with "; " (host::GuardViolation::describe).
std::string guardViolationsText(const std::vector<host::GuardViolation>& violations);

// Builds, runs, verifies and times one variant on `context` (generateVariant, the "generated"
// event, then measureGenerated). Every failure becomes a status
// (invalid: instantiation or generation failed; build_error; launch_error: the runtime refused
// or failed a launch; wrong_answer) with a message; nothing throws.
Measurement measureVariant(host::Context& context, const Definition& parametric,
                           const ArithBinding& binding, const MeasurementInputs& data,
                           const MeasurementOptions& options = {},
                           const MeasurementEvents& events = {});

// Runs an already compiled program (a reference) with the same protocol, without verification
// against a reference; a write into the canary regions makes it wrong_answer (not timed).
Measurement measureCompiled(host::Context& context, const CompiledProgram& program,
                            const MeasurementInputs& data, const MeasurementOptions& options,
                            std::vector<float>* output);

}  // namespace weft::explore
