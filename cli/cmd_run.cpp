// `weft run FILE --in a.npy ... --out y.npy`: runs a definition of a weft file in the
// reference interpreter on .npy inputs and writes the result as .npy.
//
// The command only parses, converts and prints: the file is parsed (ir/parser.h), the inputs
// are converted to values of the parameters' types (cli/npy_values.h), the size variables are
// bound from the input shapes and --size (bindSizes), and ir/interp.h computes the result. It
// does not need the type checker, so a program can be run even while it does not type-check.
// With --backend opencl the definition is instead compiled to OpenCL
// (codegen/compile_pipeline.h: default lowering, code generation) and run on the --device by
// host/program_runner.h; the output is written the same way.
//
// `weft run --layer C,H,W,M,K,stride,pad` (or `--layer vgg16:N`) runs the built-in
// convolution layer of workloads/conv/conv_layer.h instead of a file, with PyTorch's layouts: --in
// x.npy (C, H, W), w.npy (M, C, K, K), b.npy (M); the result is (M, outH, outW). The shapes are
// checked against the layer before anything runs.
//
// `weft run --layer L --db results.db --pick fastest|smallest|knee|budget=25MB|sample=N --in ...
// --out y.npy` runs an explored variant instead of the default lowering: explore/variant_pick.h
// chooses it among the layer's ok variants in the results database (of the device this run
// uses when the database has results for it, else of the only device it has, or of
// --db-device), rebuilds it from its recorded parameters (conv-direct with the recorded v and
// unroll, the tuning values substituted), compiles it as the explorer measured it and runs it
// with the OpenCL backend; the inputs are converted from PyTorch's layouts to Listing 3's
// (channels innermost) and the output is (M, outH, outW) as without --pick. `weft run FILE
// --size ... --db results.db --pick ...` does the same for a program file explored at those
// sizes (a fusion or a structure of the rewrite search, rebuilt by the program workload).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/npy_values.h"
#include "cli/program_loading.h"
#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "explore/results_db.h"
#include "explore/variant_pick.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/npy.h"
#include "ir/parser.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_layer_inputs.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/pipeline/pipeline_workload.h"

namespace weft::cli {

namespace {

struct RunOptions {
  std::string file;
  std::string definition;
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::string> sizes;
  bool print = false;
  std::string backend = "interp";  // interp | opencl
  std::string device;              // --device selector for the opencl backend
  std::string layer;               // --layer: the built-in convolution layer instead of a file
  std::string db;                  // --db: the results database to --pick from
  std::string pick;                // --pick: fastest, smallest, knee, budget=SIZE or sample=N
  std::string dbDevice;            // --db-device: whose results to pick from (a fingerprint)
  bool backendGiven = false;       // --backend was on the command line
  int repeat = 1;                  // --repeat: OpenCL runs of the whole program, the fastest kept
  bool kernelTimes = false;        // --kernel-times: each kernel's time on a line of its own
};

// Runs a compiled program --repeat times (the fastest run is reported).
host::RunResult runCompiled(host::Context& context, const CompiledProgram& compiled,
                            const std::vector<Value>& inputs, const ArithBinding& sizes,
                            const RunOptions& options) {
  host::RunOptions runOptions;
  runOptions.repeats = std::max(1, options.repeat);
  return host::runProgram(context, compiled, inputs, sizes, runOptions);
}

// ", T ms kernel time (N kernels) on DEVICE", and with --kernel-times each kernel's time after
// the summary line.
std::string describeKernelTime(const host::RunResult& run, const std::string& device,
                               const RunOptions& options) {
  char milliseconds[32];
  std::snprintf(milliseconds, sizeof milliseconds, "%.3f",
                static_cast<double>(run.totalNanoseconds) / 1e6);
  std::string text = ", " + std::string(milliseconds) + " ms kernel time (" +
                     std::to_string(run.kernels.size()) + " kernel" +
                     (run.kernels.size() == 1 ? "" : "s");
  if (options.repeat > 1) text += ", fastest of " + std::to_string(options.repeat) + " runs";
  return text + ") on " + device;
}

// With --kernel-times, one line per kernel in launch order: its name and fastest time.
std::string kernelTimesText(const host::RunResult& run, const RunOptions& options) {
  std::string text;
  if (!options.kernelTimes) return text;
  for (const host::KernelTime& kernel : run.kernels) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-32s %9.3f ms\n", kernel.name.c_str(),
                  static_cast<double>(kernel.nanoseconds) / 1e6);
    text += line;
  }
  return text;
}

// The opencl backend: default lowering, code generation, a run on the chosen device.
// Returns the result and sets `where` to a description of the time taken. Kernels are generated
// with symbolic sizes (passed as arguments); a program that needs constants (an unrolled loop
// over a symbolic length, a private array of symbolic size) is generated again with every size
// of this run fixed.
Value runOnOpenCL(const Definition& definition, const std::vector<Value>& inputs,
                  const ArithBinding& sizes, const RunOptions& options, std::string& where,
                  std::string& kernelLines) {
  CompiledProgram compiled;
  try {
    compiled = compileToOpenCL(definition);
  } catch (const CodegenError&) {
    CompilePipelineOptions specialized;
    specialized.codegen.specialize = sizes;
    compiled = compileToOpenCL(definition, {}, specialized);
  }
  host::Context context(host::selectDevice(options.device));
  host::RunResult run = runCompiled(context, compiled, inputs, sizes, options);
  where = describeKernelTime(run, context.device().name, options);
  kernelLines = kernelTimesText(run, options);
  return run.output;
}

std::string describeParams(const Definition& definition) {
  std::string text;
  for (const Expr& param : definition.function.params()) {
    text += (text.empty() ? "" : ", ") + param.paramName() + ": " +
            (param.paramType().isNull() ? std::string("?") : param.paramType().toString());
  }
  return text;
}

std::string describeBinding(const ArithBinding& sizes) {
  std::string text;
  for (const auto& [name, value] : sizes) {
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return text;
}

void runPickedFile(const Definition& definition, const std::vector<Value>& inputs,
                   const ArithBinding& sizes, const RunOptions& options);

void run(const RunOptions& options) {
  Program program = parseFile(options.file);
  const Definition& definition =
      chooseFunctionDefinition(program, options.file, options.definition, "run");
  const std::vector<Expr>& params = definition.function.params();
  if (options.inputs.size() != params.size()) {
    throw std::runtime_error("'" + definition.name + "' takes " + std::to_string(params.size()) +
                             " input(s) (" + describeParams(definition) + ") but " +
                             std::to_string(options.inputs.size()) +
                             " --in file(s) were given; pass one --in per parameter, in order");
  }
  std::vector<Value> inputs;
  for (size_t index = 0; index < params.size(); ++index) {
    const Expr& param = params[index];
    if (param.paramType().isNull()) {
      throw std::runtime_error("parameter '" + param.paramName() + "' of '" + definition.name +
                               "' has no type");
    }
    NpyArray array = readNpy(options.inputs[index]);
    try {
      inputs.push_back(valueFromNpy(array, param.paramType(), param.paramName()));
    } catch (const std::runtime_error& error) {
      throw std::runtime_error(options.inputs[index] + ": " + error.what());
    }
  }
  ArithBinding sizes =
      bindSizes(definition, inputs,
                parseSizeOptions(options.sizes, definition, mentionedSizeNames(definition)));
  if (!options.pick.empty()) {
    runPickedFile(definition, inputs, sizes, options);
    return;
  }
  if (!options.db.empty() || !options.dbDevice.empty()) {
    throw std::runtime_error(
        "--db and --db-device go with --pick (fastest, smallest, knee, budget=SIZE or sample=N)");
  }

  auto start = std::chrono::steady_clock::now();
  std::string openclTime, kernelLines;
  Value result = options.backend == "opencl"
                     ? runOnOpenCL(definition, inputs, sizes, options, openclTime, kernelLines)
                     : interpret(definition, inputs, sizes);
  double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  NpyArray output = npyFromValue(result);
  if (!options.output.empty()) writeNpy(options.output, output);
  if (options.print) std::printf("%s\n", result.toString().c_str());

  std::string summary = definition.name + ": result shape " + shapeToString(output.shape) + " " +
                        (output.dtype == NpyDType::Float32 ? "float32" : "int32");
  if (!sizes.empty()) summary += ", sizes " + describeBinding(sizes);
  char elapsed[64];
  std::snprintf(elapsed, sizeof elapsed, ", %.3f ms in the interpreter", milliseconds);
  summary += options.backend == "opencl" ? openclTime : std::string(elapsed);
  if (!options.output.empty()) summary += ", written to " + options.output;
  std::printf("%s\n%s", summary.c_str(), kernelLines.c_str());
}

// The inputs of convLayerDefinition (PyTorch's layouts, as read).
std::vector<Value> readLayerInputs(const ConvLayer& layer, const Definition& definition,
                                   const RunOptions& options) {
  std::vector<NpyArray> arrays = explore::readLayerArrays(layer, options.inputs, options.layer);
  const std::vector<Expr>& params = definition.function.params();
  std::vector<Value> inputs;
  for (size_t index = 0; index < arrays.size(); ++index) {
    inputs.push_back(valueFromFlat(params[index].paramType(), {}, arrays[index].f32));
  }
  return inputs;
}

std::string megabytes(int64_t bytes) {
  char text[48];
  std::snprintf(text, sizeof text, "%.3f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// The variant --pick names among the records of `program` in --db, and the device to run it
// on (--device). Whose results: --db-device, else the only device that explored the program,
// else this run's device (the OpenCL device is opened only after the pick when it is not
// needed for it, so that a bad pick is reported without touching OpenCL).
struct PickedRun {
  explore::PickedVariant picked;
  std::optional<host::Context> context;
};

// The checks of --pick that need neither the inputs nor the device; returns the parsed pick.
explore::PickSpec checkPickOptions(const RunOptions& options) {
  if (options.db.empty()) {
    throw std::runtime_error("--pick " + options.pick +
                             " needs --db FILE: the results database written by weft explore");
  }
  if (options.backendGiven && options.backend != "opencl") {
    throw std::runtime_error(
        "--pick runs an explored variant with the opencl backend; drop "
        "--backend " +
        options.backend);
  }
  explore::PickSpec spec = explore::parsePickSpec(options.pick);
  if (!std::filesystem::exists(options.db)) {
    throw std::runtime_error(options.db + ": no such results database");
  }
  return spec;
}

PickedRun pickForRun(const RunOptions& options, const std::string& program) {
  const explore::PickSpec spec = checkPickOptions(options);
  const explore::ResultsSnapshot snapshot = explore::readResultsSnapshot(options.db);
  std::set<std::string> explored;
  for (const explore::VariantRecord& v : snapshot.variants) {
    if (v.key.program == program) explored.insert(v.key.device);
  }
  PickedRun result;
  std::string runningOn;
  auto openDevice = [&] {
    result.context.emplace(host::selectDevice(options.device));
    runningOn = host::queryProfile(result.context->device()).fingerprint;
  };
  std::string fingerprint = options.dbDevice;
  if (fingerprint.empty() && explored.size() > 1) {
    openDevice();
    if (explored.count(runningOn)) fingerprint = runningOn;
  }
  result.picked = explore::pickVariant(snapshot, program, fingerprint, spec);
  const explore::VariantRecord& record = result.picked.record;
  if (!result.context) openDevice();
  std::printf("picked %s (%s) from %s: recorded median %.3f ms, space %s, on device %s (%s)\n",
              record.key.parameters.c_str(), result.picked.why.c_str(), options.db.c_str(),
              static_cast<double>(*record.medianNs) / 1e6, megabytes(*record.spaceBytes).c_str(),
              record.key.device.c_str(), record.key.compiler.c_str());
  if (!record.strategy.empty()) std::printf("structure: %s\n", record.strategy.c_str());
  if (record.key.device != runningOn) {
    std::printf(
        "note: the variant was explored on device %s; this run uses %s (%s), so its "
        "recorded time may not apply here\n",
        record.key.device.c_str(), runningOn.c_str(), result.context->device().name.c_str());
  }
  return result;
}

// --pick: an explored variant of the layer from --db, run on the --device.
void runPickedLayer(const ConvLayer& layer, const RunOptions& options) {
  checkPickOptions(options);
  std::vector<NpyArray> arrays = explore::readLayerArrays(layer, options.inputs, options.layer);
  PickedRun pickedRun = pickForRun(options, layer.name);
  const explore::VariantRecord& record = pickedRun.picked.record;
  std::optional<host::Context>& context = pickedRun.context;
  const CompiledProgram compiled = explore::compileLayerVariant(layer, record);
  const ArithBinding sizes = convListing3Sizes(layer);
  std::vector<Value> inputs = explore::listing3Inputs(layer, arrays);
  host::RunResult run = runCompiled(*context, compiled, inputs, sizes, options);

  NpyArray output = npyFromValue(run.output);
  if (!options.output.empty()) writeNpy(options.output, output);
  if (options.print) std::printf("%s\n", run.output.toString().c_str());
  std::string summary =
      layer.describe() + ": result shape " + shapeToString(output.shape) + " float32";
  summary += describeKernelTime(run, context->device().name, options);
  if (!options.output.empty()) summary += ", written to " + options.output;
  std::printf("%s\n%s", summary.c_str(), kernelTimesText(run, options).c_str());
}

// FILE --pick: an explored variant of the program at these sizes from --db, rebuilt by its
// workload (a searched structure replays its rule sequence) and run on the --device.
void runPickedFile(const Definition& definition, const std::vector<Value>& inputs,
                   const ArithBinding& sizes, const RunOptions& options) {
  const std::string program = explore::programTarget(definition, sizes).program;
  PickedRun pickedRun = pickForRun(options, program);
  const CompiledProgram compiled =
      explore::compileProgramVariant(definition, sizes, pickedRun.picked.record);
  host::RunResult run = runCompiled(*pickedRun.context, compiled, inputs, sizes, options);
  NpyArray output = npyFromValue(run.output);
  if (!options.output.empty()) writeNpy(options.output, output);
  if (options.print) std::printf("%s\n", run.output.toString().c_str());
  std::string summary = definition.name + ": result shape " + shapeToString(output.shape) + " " +
                        (output.dtype == NpyDType::Float32 ? "float32" : "int32");
  if (!sizes.empty()) summary += ", sizes " + describeBinding(sizes);
  summary += describeKernelTime(run, pickedRun.context->device().name, options);
  if (!options.output.empty()) summary += ", written to " + options.output;
  std::printf("%s\n%s", summary.c_str(), kernelTimesText(run, options).c_str());
}

void runLayer(const RunOptions& options) {
  if (!options.file.empty()) {
    throw std::runtime_error("give either a weft FILE or --layer, not both (got " + options.file +
                             " and --layer " + options.layer + ")");
  }
  if (!options.sizes.empty() || !options.definition.empty()) {
    throw std::runtime_error(
        "--size and --def do not apply to --layer: the layer's numbers fix "
        "every size of the built-in program");
  }
  ConvLayer layer;
  try {
    layer = parseConvLayer(options.layer);
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(std::string("--layer: ") + error.what());
  }
  if (!options.pick.empty()) {
    runPickedLayer(layer, options);
    return;
  }
  if (!options.db.empty() || !options.dbDevice.empty()) {
    throw std::runtime_error(
        "--db and --db-device go with --pick (fastest, smallest, knee, budget=SIZE or sample=N)");
  }
  Definition definition = convLayerDefinition(layer);
  std::vector<Value> inputs = readLayerInputs(layer, definition, options);

  auto start = std::chrono::steady_clock::now();
  std::string openclTime, kernelLines;
  Value result = options.backend == "opencl"
                     ? runOnOpenCL(definition, inputs, {}, options, openclTime, kernelLines)
                     : interpret(definition, inputs, {});
  double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  NpyArray output = npyFromValue(result);
  if (!options.output.empty()) writeNpy(options.output, output);
  if (options.print) std::printf("%s\n", result.toString().c_str());

  std::string summary =
      layer.describe() + ": result shape " + shapeToString(output.shape) + " float32";
  char elapsed[64];
  std::snprintf(elapsed, sizeof elapsed, ", %.3f ms in the interpreter", milliseconds);
  summary += options.backend == "opencl" ? openclTime : std::string(elapsed);
  if (!options.output.empty()) summary += ", written to " + options.output;
  std::printf("%s\n%s", summary.c_str(), kernelLines.c_str());
}

}  // namespace

void registerRun(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* command = app.add_subcommand(
      "run",
      "Run a definition of a weft file in the reference interpreter on .npy inputs.\n"
      "Each --in file feeds one parameter, in order; its shape must follow the parameter's\n"
      "type: [[float]W]H takes a float32 array of shape (H, W), a vector element such as\n"
      "float4 adds a trailing dimension of 4, int takes int32, a scalar takes a 0-d array.\n"
      "Size variables (N, W, H, ...) are bound from the input shapes; --size binds others.\n"
      "The result is written as .npy (a reduce's [T]1 keeps its dimension of 1).\n"
      "With --layer instead of a FILE it runs the built-in convolution layer (PyTorch's\n"
      "conv2d conventions): --in x.npy w.npy b.npy of shapes (C, H, W), (M, C, K, K), (M)\n"
      "give the output (M, outH, outW), outH = (H + 2*pad - K) / stride + 1.");
  command->footer(
      "Example:\n"
      "  python3 -c \"import numpy as n; n.save('a.npy', n.arange(4, dtype=n.float32)); "
      "n.save('b.npy', n.ones(4, dtype=n.float32))\"\n"
      "  weft run examples/dot.weft --in a.npy --in b.npy --out y.npy --print\n"
      "  # prints [6.0] and: dot: result shape (1,) float32, sizes N=4, ... written to y.npy\n"
      "  weft run examples/dot.weft --in a.npy --in b.npy --out y.npy --backend opencl\n"
      "  # a layer C,H,W,M,K,stride,pad (or vgg16:N) with PyTorch's layouts: input [C][H][W],\n"
      "  # weights [M][C][K][K], bias [M]\n"
      "  python3 -c \"import numpy as n; r = n.random.default_rng(1); "
      "n.save('x.npy', r.random((8, 16, 16), n.float32)); "
      "n.save('w.npy', r.random((8, 8, 3, 3), n.float32)); "
      "n.save('bias.npy', r.random(8, n.float32))\"\n"
      "  weft run --layer 8,16,16,8,3,1,1 --in x.npy w.npy bias.npy --out y.npy --backend opencl\n"
      "  # the fastest variant within 1 MB that `weft explore --db results.db` recorded:\n"
      "  weft run --layer 8,16,16,8,3,1,1 --db results.db --pick budget=1MB --in x.npy w.npy "
      "bias.npy --out y.npy\n");
  command->add_option("file", options->file, "the .weft file to run (or --layer)");
  command->add_option("--def", options->definition,
                      "the definition to run (default: the last one in the file)");
  command->add_option("--in", options->inputs,
                      "input .npy files, one per parameter, in order (--in a.npy --in b.npy "
                      "or --in a.npy b.npy)");
  command->add_option("--out", options->output, "where to write the result (.npy)");
  command
      ->add_option("--size", options->sizes,
                   "bind a size variable or tuning parameter, e.g. --size N=4")
      ->allow_extra_args(false);
  command->add_flag("--print", options->print, "also print the result value");
  CLI::Option* backend =
      command
          ->add_option("--backend", options->backend,
                       "interp (the reference interpreter) or opencl (default lowering, generated "
                       "kernels run on an OpenCL device)")
          ->check(CLI::IsMember({"interp", "opencl"}))
          ->capture_default_str();
  command->add_option("--device", options->device,
                      "OpenCL device for --backend opencl: an index, gpu, cpu, or part of a "
                      "device or platform name (default: the first GPU, else PoCL; see `weft "
                      "devices`)");
  command->add_option("--layer", options->layer,
                      "run the built-in convolution layer instead of a FILE: "
                      "C,H,W,M,K,stride,pad (e.g. 3,224,224,64,3,1,1) or vgg16:N with the LIFT "
                      "paper's layer number N (0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28)");
  command
      ->add_option("--repeat", options->repeat,
                   "OpenCL: run the whole program N times on the same buffers and report the "
                   "fastest run (default 1)")
      ->check(CLI::Range(1, 100000));
  command->add_flag("--kernel-times", options->kernelTimes,
                    "OpenCL: also print each kernel's time (the fastest over --repeat), in launch "
                    "order");
  command
      ->add_option("--db", options->db, "with --pick: the results database written by weft explore")
      ->type_name("FILE");
  command
      ->add_option(
          "--pick", options->pick,
          "with --layer or FILE: run the explored variant that is fastest, smallest, at the "
          "knee of the time/space Pareto front, fastest within budget=SIZE (e.g. "
          "budget=25MB), or the N-th recorded (sample=N, in measuring order), instead of the "
          "default lowering (OpenCL)")
      ->type_name("SPEC");
  command
      ->add_option("--db-device", options->dbDevice,
                   "with --pick: pick among the results of this device fingerprint (default: "
                   "the running device's, else the only device in --db)")
      ->type_name("FINGERPRINT");
  command->callback([options, backend] {
    options->backendGiven = backend->count() > 0;
    if (!options->layer.empty()) {
      runLayer(*options);
    } else if (options->file.empty()) {
      throw std::runtime_error("weft run needs a weft FILE to run, or --layer (see --help)");
    } else {
      run(*options);
    }
  });
}

}  // namespace weft::cli
