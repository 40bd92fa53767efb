// Drop-in export (`weft emit`): turns one fully specialised CompiledProgram into files an
// application builds as they are, with nothing from weft linked in — the LIFT paper's host code
// generator (section 6) written out as plain C99 instead of run by weft.
//
// For a prefix P (a C identifier such as weft_conv3_1) emitDropin produces:
//   P.cl     the kernels, every size and parameter baked in, after a header comment listing the
//            parameters with their values, the program, the device it was tuned on (or "not
//            tuned") and weft's compiler version;
//   P.h/P.c  C99 host code that needs only <CL/cl.h> and the ICD loader: P_create (embedded
//            source, build, kernels, temporary buffers), P_prepare on the constant inputs (the
//            one-off kernels, see below), P_run on application-owned cl_mem buffers in the
//            definition's parameter order then the output, P_buffer_bytes and P_BYTES_* for
//            every buffer (temporaries included), P_destroy, P_error_name and P_build_log;
//            launch sizes are constants;
//   P.json   the manifest: kernels (global/local sizes, arguments, preparation or not), buffers
//            (name, role, bytes, shape, prepared or not), the constant inputs, build options,
//            parameters, sizes, device fingerprint, compiler version;
//   P.cmake  a snippet adding the static library target P; README.md for the application.
// Every symbolic size of the program (buffer sizes, launch sizes, local memory, size arguments)
// is evaluated with the binding given here; a variable left unbound is an error (DropinError),
// so the emitted code never depends on a run-time size.
//
// The emitter knows nothing of exploration: the parameters, the device and the compiler
// version arrive as metadata (cli/cmd_emit.cpp gathers them from explore/).
//
// Preparation (create-time weight re-layout): the metadata names the constant inputs (a
// layer's weights and biases), and the kernels that depend only on them
// (CompiledProgram::preparationKernels, e.g. the register-blocked vector family's weight
// re-layout into [M/kappa][C][K][K][kappa]) are launched by P_prepare into temporaries the handle
// owns ("prepared" buffers), once after P_create and again whenever those inputs change; P_run
// launches only the other kernels and refuses a handle whose preparation has not run
// (P_ERROR_NOT_PREPARED). Without constant inputs, or when no kernel depends only on them,
// P_prepare still exists and does nothing. The run function keeps every input in its signature;
// a constant input that only preparation kernels read (the vector family's weights in PyTorch's
// layout) is never read by P_run, so the application may release it after P_prepare and pass
// NULL (the header comment, the README and the manifest's preparation.releasableInputs say
// which; the manifest's preparation.inferenceBytes is the memory left allocated then).
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiled_program.h"
#include "codegen/launch_parts.h"
#include "ir/arith.h"

namespace weft::exporting {

struct DropinError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DropinMetadata {
  std::string prefix;   // a C identifier (see dropinPrefix); every emitted name starts with it
  std::string program;  // one line: the layer or definition, e.g. "conv3_1: 128x56x56 -> ..."
  // The definition's parameter names in order: the run function's input arguments. Empty: the
  // input buffers' names without their "in_" prefix.
  std::vector<std::string> inputNames;
  // The tuning parameters (structural ones such as v and unroll included) with their values,
  // in the order to list them, and the size variables of the program.
  std::vector<std::pair<std::string, int64_t>> parameters;
  ArithBinding sizes;
  std::string tunedOn;             // the device the variant was measured on; "" = not tuned
  std::string deviceFingerprint;   // "" when not tuned
  std::string tuning;              // how it was picked ("fastest of 12 ok variants, 1.2 ms"), or ""
  std::string compilerVersion;     // "weft 0.1.0"
  std::string buildOptions;        // clBuildProgram options baked into P_create
  std::vector<std::string> notes;  // extra lines for the comments and the README (layouts, ...)
  // The definition parameter indices of the inputs that stay the same from run to run (a
  // layer's weights and biases). Kernels reading only these (and what such kernels wrote) run
  // once, in P_prepare. Empty: no preparation (P_prepare takes no buffer and does nothing).
  std::set<int> constantInputs;
};

struct DropinFile {
  std::string name;  // file name inside the output folder
  std::string contents;
};

// A compiled program with every size evaluated, as the emitted code sees it: what emitDropin
// writes out, shared with the measurement bundle (export/bundle_export.h).
// One buffer as the emitted code sees it.
struct EmittedBuffer {
  int plan = -1;           // index into CompiledProgram::buffers
  std::string name;        // C identifier (argument name for inputs)
  std::string enumName;    // P_BUFFER_NAME
  std::string bytesMacro;  // P_BYTES_NAME
  BufferPlan::Role role = BufferPlan::Role::Temporary;
  const char* elementType = "float32";  // or "int32" (ints and bools)
  int64_t elements = 0;
  int64_t bytes = 0;           // max(elements, 1) * 4: OpenCL forbids empty buffers
  std::vector<int64_t> shape;  // of the data (row-major); temporaries: {elements}
  // A temporary written by preparation kernels: it holds their result from P_prepare until the
  // next P_prepare (runs only read it).
  bool prepared = false;
};

struct EmittedArg {
  KernelArg::Kind kind = KernelArg::Kind::Buffer;
  int buffer = -1;         // index into the emitted buffers
  int64_t sizeValue = 0;   // Kind::Size
  int64_t localBytes = 0;  // Kind::LocalBuffer
  std::string describe;    // for comments and the manifest
};

struct EmittedKernel {
  std::string name;
  int dimensions = 1;
  std::array<int64_t, 3> global{1, 1, 1};
  bool hasLocal = false;
  std::array<int64_t, 3> local{1, 1, 1};
  std::vector<EmittedArg> args;
  bool preparation = false;  // launched by P_prepare (once), not by P_run
  // When the local size does not divide the global size (a kernel launchable in parts): the
  // launches, whole work-groups first, that run it (codegen/launch_parts.h); else empty.
  std::vector<LaunchPart> parts;
};

// An input argument of P_run: a definition parameter and the buffer that holds it (-1: the
// program does not read it).
struct EmittedInput {
  std::string name;
  int buffer = -1;
  bool constant = false;           // one of the metadata's constantInputs: an argument of P_prepare
  bool readByPreparation = false;  // some preparation kernel reads it
  bool readByRun = false;          // some per-inference kernel reads it (else P_run may get NULL)
};

struct Emitted {
  std::vector<EmittedBuffer> buffers;  // inputs (parameter order), output, temporaries
  std::vector<EmittedInput> inputs;
  int output = -1;
  std::vector<EmittedKernel> kernels;
  std::string source;  // the .cl file: header comment + kernels

  size_t preparationKernelCount() const;  // kernels launched by P_prepare
  size_t runKernelCount() const;          // kernels launched by P_run
};

// Evaluates every size of `program` under `sizes` and names its buffers for C (inputs after
// metadata.inputNames, enum and macro names after metadata.prefix), and splits the kernels into
// preparation and per-inference ones after metadata.constantInputs. Throws DropinError as
// emitDropin does (unbound or non-positive sizes, no output buffer, a constant input index the
// definition does not have).
Emitted prepareEmission(const CompiledProgram& program, const ArithBinding& sizes,
                        const DropinMetadata& metadata);

// "input", "output" or "temporary".
const char* bufferRoleName(BufferPlan::Role role);

// A kernel's arguments for the JSON descriptions (the drop-in's manifest, the bundle's
// variants.json): [{"kind": "buffer", "buffer": NAME} | {"kind": "int", "value": N} |
// {"kind": "local", "bytes": N}, ...].
nlohmann::ordered_json kernelArgumentsJson(const Emitted& emitted, const EmittedKernel& kernel);
// A kernel's launch parts for the manifests: offset, globalSize and localSize per part.
nlohmann::ordered_json launchPartsJson(const EmittedKernel& kernel);

// A kernel's global (or, with `local`, local) size for comments: "64 x 8".
std::string launchText(const EmittedKernel& kernel, bool local);

// Tuning parameters for comments: "kappa=4, sigma=2", or "none".
std::string parameterListText(const std::vector<std::pair<std::string, int64_t>>& parameters);

// Text safe inside a /* */ comment ("*/" and "/*" broken up).
std::string commentSafe(std::string text);

// A C identifier from any text: lower case, every run of other characters one '_', a leading
// "weft_" (so "conv3_1" gives "weft_conv3_1", "dot[N=1024]" gives "weft_dot_n_1024").
std::string dropinPrefix(const std::string& name);

// The files of the drop-in export of `program` under the size binding `sizes` (every size
// variable the program still mentions must be bound). Throws DropinError when the prefix is not
// a C identifier, a size is unbound or not positive, or the program has no output buffer.
std::vector<DropinFile> emitDropin(const CompiledProgram& program, const ArithBinding& sizes,
                                   const DropinMetadata& metadata);

// Writes the files into `folder` (created when missing). Throws DropinError when it cannot.
void writeDropin(const std::filesystem::path& folder, const std::vector<DropinFile>& files);

// Writes `files` under `folder`, creating it and the folders their names contain (the drop-in's
// and the bundle's writer). Returns "" when every file was written, else what failed
// ("PATH: cannot write").
std::string writeExportedFiles(const std::filesystem::path& folder,
                               const std::vector<DropinFile>& files);

}  // namespace weft::exporting
