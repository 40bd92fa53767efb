// The measurement bundle (`weft bundle`): sampled variants of one program written out with a
// generic C host harness, so that they can be measured on a device weft does not run on (an ARM
// Mali board, a phone, a remote GPU) and the results brought back (`weft import`).
//
// emitBundle writes, for a reference program and a list of variants (every size and parameter
// bound; each CompiledProgram as explore/measurement.h generates it):
//   kernels/reference.cl, kernels/<id>.cl   each program's kernels, a header comment listing its
//                                           parameters, launch sizes and buffers;
//   variants.txt   the line-based description the harness reads (format below);
//   variants.json  the same for people and tools: per variant id, parameters, kernels (global and
//                  local sizes, arguments), buffers (role, element type, bytes), output buffer;
//   harness.c      one C99 program (OpenCL, libc and POSIX fork/waitpid/poll only):
//                  export/bundle_harness.c with a comment naming the program and the compiler,
//                  its error names from the table the drop-in export shares
//                  (export/opencl_error_names.h);
//   CMakeLists.txt and README.md.
// The harness generates the inputs from a fixed seed (SplitMix64; not weft's own generator: the
// reference runs on the device, so only self-consistency matters), runs the reference in a child
// process (which also reports the device's CL_DEVICE_NAME, CL_DEVICE_VENDOR, CL_DRIVER_VERSION,
// CL_PLATFORM_VERSION, CL_DEVICE_MAX_COMPUTE_UNITS and, for a CPU device, the processor as
// /proc/cpuinfo names it), then each variant in its own child: build, one warm-up run, the
// check against the reference (|out - ref| <= tolerance * max(max |ref|, 1), NaN never passes:
// explore/measurement.h's rule), timed repeats with cl_event profiling (at least min_repeats
// runs and min_time_ms of kernel time, at most max_repeats; the median as weft computes it),
// and a timeout after which the child is killed. Output and temporaries are zero-filled before
// every run. The parent never calls OpenCL; it rewrites results.json (write + rename) after
// every variant, with one line per variant, status ok, build_error, launch_error, crashed,
// timeout, wrong_answer or invalid (generation failed here), so a crash loses nothing and a
// re-run skips the variants already there (a results file of another device is refused).
//
// variants.txt, version 1: one item per line, a keyword then its fields separated by spaces;
// free text (compiler, description, build_options, key, invalid) runs to the end of the line:
//   weft-bundle 1 / program NAME / compiler TEXT / description TEXT / flops N / tolerance X /
//   data_seed N / min_repeats N / max_repeats N / min_time_ms X / timeout_s X /
//   build_options TEXT / inputs N / input I TYPE ELEMENTS NAME (N lines) / output TYPE ELEMENTS /
//   variants N / then the reference and N variants, each:
//     variant ID FILE / hash HEX / space BYTES / key JSON /
//     (invalid TEXT | buffers N / buffer ROLE INPUT TYPE BYTES NAME (N lines) / kernels N /
//      kernel NAME DIMS G0 G1 G2 HAS_LOCAL L0 L1 L2 NARGS / arg buffer I | arg int V |
//      arg local BYTES (NARGS lines per kernel)) / end
// TYPE is float32 or int32; ROLE input, output or temporary; INPUT the definition parameter an
// input buffer holds (-1 otherwise). The key is the variant's recorded parameters exactly as
// the results database keys them (explore/explorer.h parametersJson); the harness echoes it.
//
// export/bundle_results.h reads the harness's results.json back, validating it. This layer
// knows nothing of the results database: cli/cmd_import turns the results into database rows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compiled_program.h"
#include "export/bundle_results.h"
#include "export/dropin_export.h"
#include "ir/arith.h"

namespace weft::exporting {

// One program of the bundle: the reference or a sampled variant.
struct BundleProgram {
  std::string id;  // file stem and identifier: "reference", "v0001", ... (letters, digits, _ -)
  // The recorded parameters (canonical JSON object text; "{}" for the reference), and the
  // same as name/value pairs for the comments.
  std::string key = "{}";
  std::vector<std::pair<std::string, int64_t>> parameters;
  std::optional<CompiledProgram> program;  // nullopt: generation failed (see invalid)
  std::string invalid;                     // why generation failed
  ArithBinding binding;                    // sizes and parameters, every one the program uses
  std::string sourceHash;                  // of program->source (explore/measurement.h)
  int64_t spaceBytes = 0;                  // global memory of every buffer
};

struct BundleMetadata {
  std::string program;      // the name results are recorded under ("conv1_2")
  std::string description;  // one line
  int64_t flops = 0;
  std::string compilerVersion;       // "weft 0.1.0"
  std::string profile;               // the device profile that constrained the space
  std::string sampling;              // "6 of 19817856 valid points, seed 1, ..." for the README
  std::vector<std::string> inputNames;  // the definition's parameters, in order
  double tolerance = 1e-3;
  uint64_t dataSeed = 20200222;
  int minRepeats = 3;
  int maxRepeats = 100;
  double minTimeMs = 100;
  double timeoutSeconds = 120;
  std::string buildOptions;
  std::vector<std::string> notes;  // extra README lines
};

// The files of the bundle (names relative to its folder). Throws BundleError when a program
// cannot be described (an unbound size, no output buffer, programs that disagree on the inputs
// or the output, an id that is not a plain file name) or the reference is invalid.
std::vector<DropinFile> emitBundle(const BundleProgram& reference,
                                   const std::vector<BundleProgram>& variants,
                                   const BundleMetadata& metadata);

// Writes the files into `folder` (created, with kernels/, when missing). Throws BundleError.
void writeBundle(const std::filesystem::path& folder, const std::vector<DropinFile>& files);

}  // namespace weft::exporting
