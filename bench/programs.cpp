// Programs explored from their files by the rewrite search against peers, in one run on one
// device (issue 31's benchmark). Matrix multiplication: examples/matmul.weft, C = A · B with A
// M×K and B K×N in float32, row-major.
//
//  - weft: of the ok variants of matmul[K=..,M=..,N=..] that --db records for this device, the
//    --retime N with the fastest recorded medians, each rebuilt by its workload (a structure
//    of the rewrite search replays its rule sequence: explore::compileProgramVariant) and run
//    on fresh random data: a warm-up, its output checked against the product computed in
//    double on the host at --samples random entries (|c − ref| ≤ 1e-3 · max(|ref|, 1)), then
//    at least --min-repeats runs adding up to --min-seconds; time = the sum of the kernels'
//    cl_event times of a run. The fastest median is weft's figure, with its rule sequence.
//  - clblast: clblast::Gemm (row-major, no transposes) on the same OpenCL device and the same
//    data, wall clock from the call to clFinish, checked the same way.
//  - pytorch: bench/matmul_torch.py in a child process with --python, --threads threads, wall
//    clock: oneDNN's SGEMM (torch's mkldnn linear, the peer the target names) and torch.matmul
//    on dense tensors (Debian's torch sends it to the system's libblas.so.3: reported, not a
//    target).
//
// Ratios: oneDNN / weft (target ≥ 0.8) and CLBlast / weft (target ≥ 3), printed MET or NOT MET,
// with GFLOP/s (2·M·N·K / time); and, from the databases, weft's own time per variant (median
// of the rows' details.weftMs, target < 50 ms). Output: bench/results/programs_<device
// profile>.json (every sample, the device, the date) and a table on stdout. Exit code 1 when an
// output is wrong.
//
// With --bandwidth FILE --bind NAME=V..: a memory-bound program instead (examples/dot.weft,
// sum.weft, matvec.weft; --dot N is --bandwidth examples/dot.weft --bind N=N), its explored best
// against a copy kernel (map(v -> v + 0.0f, x), default-lowered) moving as many bytes, on the
// same device, as bandwidths: 4 bytes per float the program reads or writes (inputs once,
// output once), 4T read + 4T written by the copy (target: ≥ 0.8 × the copy's); whole-number
// data, checked
// exactly against the interpreter run once at full size. Output:
// bench/results/programs_<definition>_<device profile>.json.
//
// With --conv LAYER --layer-db DB: the convolution as a program file (examples/conv.weft, the
// paper's Listing 3, at the layer's sizes) explored by the rewrite search (--db) against the
// hand-written conv strategies' variants of the same layer (--layer-db, weft explore --layer),
// the --retime fastest recorded of each re-timed in one run on the same Listing 3 data, each
// output checked against a direct convolution in double on the host at --samples random
// outputs. Times are per inference: the kernels that read only the weights and biases (the
// re-layouts a drop-in runs once) are left out of both and reported apart. Target: the
// program's best ≥ 0.9 × the strategies' best (issue 31's moonshot). Output:
// bench/results/programs_conv_<layer>_<device profile>.json.
//
//   build/bench/weft_bench_programs --db matmul.db [--size 1024 1024 1024] [--retime 3]
//   build/bench/weft_bench_programs --db conv-file.db --conv vgg16:10 --layer-db layer.db
//   build/bench/weft_bench_programs --db dot.db --dot 16777216
//   build/bench/weft_bench_programs --db sum.db --bandwidth examples/sum.weft --bind N=16777216
#include <clblast.h>
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "bench/baseline_runners.h"
#include "bench/bench_support.h"
#include "codegen/compile_pipeline.h"
#include "explore/explorer.h"
#include "explore/results_db.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"
#include "workloads/builtin_workloads.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/pipeline/pipeline_workload.h"
#include "workloads/pipeline/searched_structures.h"

using namespace weft;
using namespace weft::bench;
using Json = nlohmann::ordered_json;

namespace {

struct Settings {
  std::vector<std::string> databases;
  std::string program = WEFT_SOURCE_DIR "/examples/matmul.weft";
  std::vector<int64_t> size = {1024, 1024, 1024};  // M N K
  int retime = 3;
  int minRepeats = 5;
  double minSeconds = 1.0;
  int samples = 2000;
  unsigned seed = 1;
  int threads = 2;
  std::string python = "/usr/bin/python3";
  std::string torchScript = WEFT_SOURCE_DIR "/bench/matmul_torch.py";
  std::string device;
  std::string out;
  bool torch = true;
  bool clblast = true;
  int64_t dotLength = 0;  // --dot N: --bandwidth examples/dot.weft --bind N=N
  std::string bandwidthProgram;       // --bandwidth FILE: a memory-bound program instead
  std::vector<std::string> bindings;  // --bind NAME=VALUE: its sizes
  std::string convLayer;              // --conv LAYER: conv.weft against the strategies
  std::vector<std::string> layerDatabases;  // --layer-db: the strategies' explorations
  double convTarget = 0.9;                  // the program's best / the strategies' best
};

struct Matrices {
  int64_t m, n, k;
  std::vector<float> a, b;  // row-major
};

// Checks `c` against the product in double at `samples` random entries.
Json verify(const Matrices& x, const std::vector<float>& c, int samples, unsigned seed,
            bool& passed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> row(0, x.m - 1), col(0, x.n - 1);
  double worst = 0;
  int failures = 0;
  for (int s = 0; s < samples; ++s) {
    const int64_t i = row(rng), j = col(rng);
    double reference = 0;
    for (int64_t p = 0; p < x.k; ++p) {
      reference += static_cast<double>(x.a[i * x.k + p]) * x.b[p * x.n + j];
    }
    const double error = std::abs(c.at(static_cast<size_t>(i * x.n + j)) - reference) /
                         std::max(std::abs(reference), 1.0);
    worst = std::max(worst, error);
    if (error > kVerifyTolerance) ++failures;
  }
  passed = failures == 0 && c.size() == static_cast<size_t>(x.m * x.n);
  return {{"entries_checked", samples},
          {"failures", failures},
          {"max_relative_error", worst},
          {"reference", "the product in double on the host"}};
}

double gflops(const Matrices& x, double ms) { return 2.0 * x.m * x.n * x.k / (ms * 1e6); }

// The recorded ok variants of `program` on `fingerprint`, fastest first; throws when there is
// none.
std::vector<explore::VariantRecord> fastestRecorded(const std::vector<std::string>& databases,
                                                    const std::string& program,
                                                    const std::string& fingerprint) {
  std::vector<explore::VariantRecord> found;
  for (const std::string& db : databases) {
    for (explore::VariantRecord& v : explore::readResultsSnapshot(db).variants) {
      if (v.key.program == program && v.key.device == fingerprint &&
          v.status == explore::VariantStatus::Ok && v.medianNs) {
        found.push_back(std::move(v));
      }
    }
  }
  if (found.empty()) {
    throw std::runtime_error("no ok variant of " + program + " on device " + fingerprint +
                             " in the databases given");
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return *a.medianNs < *b.medianNs;
  });
  return found;
}

// weft's own time per variant over every recorded variant of `program` on `fingerprint` (the
// rows' details.weftMs: the explorer's and generator's wall time for the variant, the OpenCL
// build and runs left out; details.weftCpuMs: the same in CPU time), against issue 31's target
// (median under 50 ms). Printed, and returned for the results JSON.
Json ownTimePerVariant(const std::vector<std::string>& databases, const std::string& program,
                       const std::string& fingerprint) {
  std::vector<double> wall, cpu;
  for (const std::string& db : databases) {
    for (const explore::VariantRecord& v : explore::readResultsSnapshot(db).variants) {
      if (v.key.program != program || v.key.device != fingerprint) continue;
      const Json details = Json::parse(v.details, nullptr, false);
      if (!details.is_object()) continue;
      if (details.contains("weftMs")) wall.push_back(details["weftMs"].get<double>());
      if (details.contains("weftCpuMs")) cpu.push_back(details["weftCpuMs"].get<double>());
    }
  }
  if (wall.empty()) return Json(nullptr);
  const double medianWall = median(wall), medianCpu = cpu.empty() ? 0 : median(cpu);
  std::printf("weft's own time per variant: median %.2f ms wall, %.2f ms CPU over %zu variants "
              "(target < 50 ms: %s)\n",
              medianWall, medianCpu, wall.size(), medianWall < 50 ? "MET" : "NOT MET");
  return {{"variants", wall.size()},
          {"median_ms", medianWall},
          {"median_cpu_ms", medianCpu},
          {"max_ms", *std::max_element(wall.begin(), wall.end())},
          {"target_ms", 50},
          {"met", medianWall < 50},
          {"what", "details.weftMs of every recorded variant: the explorer's and generator's "
                   "wall time per variant, OpenCL builds and runs left out"}};
}

// A compiled program run once (the warm-up, whose output is kept) and then timed: at least
// --min-repeats runs adding up to --min-seconds, each the sum of its kernels' cl_event times.
struct TimedRun {
  Value output;
  std::vector<double> ms;
  std::vector<std::vector<uint64_t>> kernelNs;  // each timed run's kernels, in launch order
};

TimedRun timeProgram(host::Context& context, const CompiledProgram& compiled,
                     const std::vector<Value>& inputs, const ArithBinding& sizes,
                     const Settings& settings) {
  const auto start = std::chrono::steady_clock::now();
  host::RunResult warm = host::runProgram(context, compiled, inputs, sizes);
  const double warmSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  host::RunOptions repeat;
  repeat.repeats = timedRepeats(settings.minRepeats, settings.minSeconds, warmSeconds);
  host::RunResult timed = host::runProgram(context, compiled, inputs, sizes, repeat);
  TimedRun run{std::move(warm.output), {}, std::move(timed.repeatKernelNanoseconds)};
  for (uint64_t ns : timed.repeatNanoseconds) run.ms.push_back(static_cast<double>(ns) / 1e6);
  return run;
}

Json measureWeft(const Definition& definition, const ArithBinding& sizes, const Matrices& x,
                 host::Context& context, const std::vector<explore::VariantRecord>& records,
                 const Settings& settings, bool& allPassed) {
  const std::vector<Value> inputs = {
      valueFromFlat(definition.function.params()[0].paramType(), sizes, x.a),
      valueFromFlat(definition.function.params()[1].paramType(), sizes, x.b)};
  Json variants = Json::array();
  Json best;
  double bestMs = 0;
  for (size_t r = 0; r < records.size() && static_cast<int>(r) < settings.retime; ++r) {
    const explore::VariantRecord& record = records[r];
    std::fprintf(stderr, "weft: %s %s\n", record.key.parameters.c_str(), record.strategy.c_str());
    const CompiledProgram compiled = explore::compileProgramVariant(definition, sizes, record);
    const TimedRun run = timeProgram(context, compiled, inputs, sizes, settings);
    bool passed = false;
    Json verification = verify(x, flattenToFloats(run.output), settings.samples, settings.seed,
                               passed);
    allPassed = allPassed && passed;
    const double medianMs = median(run.ms);
    Json entry = {{"parameters", Json::parse(record.key.parameters)},
                  {"strategy", record.strategy},
                  {"recorded_median_ms", static_cast<double>(*record.medianNs) / 1e6},
                  {"time_ms", timeJson(run.ms)},
                  {"gflops_per_s", gflops(x, medianMs)},
                  {"verified", passed},
                  {"verification", verification}};
    variants.push_back(entry);
    if (passed && (best.is_null() || medianMs < bestMs)) {
      best = entry;
      bestMs = medianMs;
    }
  }
  return {{"best", best},
          {"retimed", variants},
          {"timing", "sum of the kernels' cl_event times of one run"}};
}

Json measureClblast(const Matrices& x, host::Context& context, const Settings& settings,
                    bool& allPassed) {
  cl_command_queue queue = context.queue();
  host::Buffer a = context.createBuffer(std::span<const float>(x.a));
  host::Buffer b = context.createBuffer(std::span<const float>(x.b));
  host::Buffer c = context.createBuffer(static_cast<size_t>(x.m * x.n) * sizeof(float));
  const size_t m = static_cast<size_t>(x.m), n = static_cast<size_t>(x.n),
               k = static_cast<size_t>(x.k);
  auto runOnce = [&] {
    const auto start = std::chrono::steady_clock::now();
    const clblast::StatusCode status = clblast::Gemm<float>(
        clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, m, n, k,
        1.0f, a.get(), 0, k, b.get(), 0, n, 0.0f, c.get(), 0, n, &queue, nullptr);
    if (status != clblast::StatusCode::kSuccess) {
      throw std::runtime_error(fmt::format("clblast::Gemm failed with status {}",
                                           static_cast<int>(status)));
    }
    context.finish();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  const double warmMs = runOnce();  // compiles CLBlast's kernels
  bool passed = false;
  Json verification = verify(x, context.read<float>(c), settings.samples, settings.seed, passed);
  allPassed = allPassed && passed;
  std::vector<double> ms;
  double elapsed = 0;
  while (static_cast<int>(ms.size()) < settings.minRepeats ||
         (elapsed < settings.minSeconds * 1e3 && ms.size() < 1000)) {
    ms.push_back(runOnce());
    elapsed += ms.back();
  }
  const double medianMs = median(ms);
  return {{"time_ms", {{"median", medianMs},
                       {"min", *std::min_element(ms.begin(), ms.end())},
                       {"samples", ms}}},
          {"gflops_per_s", gflops(x, medianMs)},
          {"warmup_ms", warmMs},
          {"version", fmt::format("{}.{}.{}", CLBLAST_VERSION_MAJOR, CLBLAST_VERSION_MINOR,
                                  CLBLAST_VERSION_PATCH)},
          {"timing", "wall clock from clblast::Gemm to clFinish"},
          {"verified", passed},
          {"verification", verification}};
}

Json measureTorch(const Matrices& x, const Settings& settings) {
  Json result = runTorchScript(
      settings.python, settings.torchScript,
      fmt::format("--size {} {} {} --threads {} --min-repeats {} --min-seconds {} --seed {}", x.m,
                  x.n, x.k, settings.threads, settings.minRepeats, settings.minSeconds,
                  settings.seed));
  for (const char* way : {"onednn", "matmul"}) {
    result[way]["gflops_per_s"] = gflops(x, result[way]["time_ms"]["median"].get<double>());
  }
  return result;
}

// A memory-bound program (dot, sum, matrix-vector, a stencil): the explored best against a copy
// moving as many bytes on the same device, as bandwidths (the bytes the program must move, its
// inputs read and its output written once, and the copy's bytes read + written, per second of
// kernel time). The data are whole numbers in [-2, 2], so
// every summation order gives the interpreter's result exactly; the interpreter runs once at
// full size as the reference.
int runBandwidth(const Settings& settings, const std::string& name, const Definition& definition,
                 const ArithBinding& sizes, host::Context& context,
                 const std::vector<explore::VariantRecord>& records, Json& report) {
  std::mt19937 rng(settings.seed);
  std::uniform_int_distribution<int> whole(-2, 2);
  std::vector<Value> inputs;
  int64_t floatsRead = 0;
  for (const Expr& param : definition.function.params()) {
    const Type type = param.paramType();
    int64_t count = 1;
    Type element = type;
    while (element.isArray()) {
      count *= evaluate(element.arrayLength(), sizes);
      element = element.arrayElement();
    }
    if (!(element == Type::floatType())) {
      throw std::runtime_error(name + ": --bandwidth takes programs of float arrays");
    }
    std::vector<float> values(static_cast<size_t>(count));
    for (float& v : values) v = static_cast<float>(whole(rng));
    inputs.push_back(valueFromFlat(type, sizes, values));
    floatsRead += count;
  }
  std::fprintf(stderr, "reference: the interpreter at full size...\n");
  const std::vector<float> expected = flattenToFloats(interpret(definition, inputs, sizes));
  // The bytes the program must move at least: its inputs read once and its output written
  // once (a stencil writes as much as it reads; a sum writes one float).
  const int64_t floatsMoved = floatsRead + static_cast<int64_t>(expected.size());
  const double bytesMoved = 4.0 * static_cast<double>(floatsMoved);
  bool allPassed = true;
  Json variants = Json::array();
  Json best;
  for (size_t r = 0; r < records.size() && static_cast<int>(r) < settings.retime; ++r) {
    const explore::VariantRecord& record = records[r];
    std::fprintf(stderr, "weft: %s %s\n", record.key.parameters.c_str(), record.strategy.c_str());
    const TimedRun run = timeProgram(
        context, explore::compileProgramVariant(definition, sizes, record), inputs, sizes,
        settings);
    const std::vector<float> output = flattenToFloats(run.output);
    size_t differing = output.size() == expected.size() ? 0 : expected.size();
    for (size_t i = 0; i < output.size() && i < expected.size(); ++i) {
      if (output[i] != expected[i]) ++differing;
    }
    const bool passed = differing == 0;
    allPassed = allPassed && passed;
    const double ms = median(run.ms);
    Json entry = {{"parameters", Json::parse(record.key.parameters)},
                  {"strategy", record.strategy},
                  {"time_ms", timeJson(run.ms)},
                  {"gb_per_s", bytesMoved / (ms * 1e6)},
                  {"verified", passed},
                  {"verification", {{"outputs", expected.size()},
                                    {"differing", differing},
                                    {"reference", "the interpreter at full size, whole numbers: "
                                                  "exact"}}}};
    variants.push_back(entry);
    if (passed && (best.is_null() || ms < best["time_ms"]["median"].get<double>())) best = entry;
  }
  report["weft"] = {{"best", best},
                    {"retimed", variants},
                    {"bytes", bytesMoved},
                    {"bytes_are", "inputs read once + output written once"}};
  // The copy: a kernel reading a vector of half as many floats and writing another, the same
  // bytes moved.
  const Definition copy =
      parseProgram("def copy(x: [float]T): [float]T = map(v -> v + 0.0f, x)", "copy.weft")
          .definitions.back();
  const int64_t copyLength = std::max<int64_t>(floatsMoved / 2, 1);
  const ArithBinding copySizes = {{"T", copyLength}};
  std::vector<float> copyInput(static_cast<size_t>(copyLength), 1.0f);
  CompilePipelineOptions specialised;
  specialised.codegen.specialize = copySizes;
  const TimedRun copied = timeProgram(
      context, compileToOpenCL(copy, {}, specialised),
      {valueFromFlat(copy.function.params()[0].paramType(), copySizes, copyInput)}, copySizes,
      settings);
  const double copyMs = median(copied.ms);
  const double copyBandwidth =
      2.0 * 4.0 * static_cast<double>(copyLength) / (copyMs * 1e6);  // 4T read + 4T written
  report["copy"] = {{"program", "map(v -> v + 0.0f, x) over T floats, 2T the floats the "
                                "program moves, default-lowered"},
                    {"time_ms", timeJson(copied.ms)},
                    {"gb_per_s", copyBandwidth},
                    {"bytes", "4T read + 4T written"}};
  if (best.is_null()) throw std::runtime_error("no re-timed weft variant was correct");
  const double bandwidth = best["gb_per_s"].get<double>();
  const double ratio = bandwidth / copyBandwidth;
  const std::string program = definition.name;
  report["targets"] = {{program + " bandwidth / copy bandwidth",
                        {{"ratio", ratio}, {"target", 0.8}, {"met", ratio >= 0.8}}}};
  std::printf("%s\n| | median ms | GB/s |\n|---|---:|---:|\n", name.c_str());
  std::printf("| weft (%s) | %.3f | %.1f |\n", best["strategy"].get<std::string>().c_str(),
              best["time_ms"]["median"].get<double>(), bandwidth);
  std::printf("| copy | %.3f | %.1f |\n", copyMs, copyBandwidth);
  std::printf("%s bandwidth / copy bandwidth = %.2f (target >= 0.8: %s)\n", program.c_str(),
              ratio, ratio >= 0.8 ? "MET" : "NOT MET");
  return allPassed ? 0 : 1;
}

// weft's own time per variant added to `report`, which is written to --out or else to
// bench/results/`fileName`.
void writeWithOwnTime(Json& report, const Settings& settings, const std::string& program,
                      const host::DeviceProfile& profile, const std::string& fileName) {
  report["weft_own_time_per_variant"] =
      ownTimePerVariant(settings.databases, program, profile.fingerprint);
  const auto path = writeResultsJson(report, settings.out,
                                     std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / fileName);
  std::printf("written to %s\n", path.string().c_str());
}

// ---- --conv: the convolution as a program file against the hand-written strategies ----

// Re-times up to --retime of `records` (fastest recorded first), each compiled by `compile`, on
// `inputs`: a warm-up whose output is checked, then at least --min-repeats runs adding up to
// --min-seconds; a run's time is the sum of its kernels' cl_event times without the
// preparation kernels (those reading only the weights and biases), which are summed apart.
Json retimeConv(const ConvLayer& layer, const LayerData& data, const std::vector<Value>& inputs,
                const ArithBinding& sizes, host::Context& context,
                const std::vector<explore::VariantRecord>& records,
                const std::function<CompiledProgram(const explore::VariantRecord&)>& compile,
                const Settings& settings, bool& allPassed) {
  Json variants = Json::array();
  Json best;
  double bestMs = 0;
  for (size_t r = 0; r < records.size() && static_cast<int>(r) < settings.retime; ++r) {
    const explore::VariantRecord& record = records[r];
    std::fprintf(stderr, "%s %s\n", record.key.parameters.c_str(), record.strategy.c_str());
    const CompiledProgram compiled = compile(record);
    const std::vector<bool> preparation = compiled.preparationKernels({0, 1});
    const TimedRun timed = timeProgram(context, compiled, inputs, sizes, settings);
    const Verification check = verifyOutput(layer, data, flattenToFloats(timed.output),
                                            settings.samples, 0, settings.seed);
    const bool passed = check.passed;
    allPassed = allPassed && passed;
    std::vector<double> inference, prepared;
    for (const std::vector<uint64_t>& run : timed.kernelNs) {
      double in = 0, prep = 0;
      for (size_t k = 0; k < run.size(); ++k) {
        (k < preparation.size() && preparation[k] ? prep : in) += static_cast<double>(run[k]) / 1e6;
      }
      inference.push_back(in);
      prepared.push_back(prep);
    }
    const double medianMs = median(inference);
    Json entry = {{"parameters", Json::parse(record.key.parameters)},
                  {"strategy", record.strategy},
                  {"recorded_median_ms", static_cast<double>(*record.medianNs) / 1e6},
                  {"kernels", compiled.kernels.size()},
                  {"time_ms", timeJson(inference)},
                  {"preparation_ms", timeJson(prepared)},
                  {"gflops_per_s", static_cast<double>(layer.flops()) / (medianMs * 1e6)},
                  {"verified", passed},
                  {"verification", verificationJson(check, layer, "direct convolution in double")}};
    variants.push_back(entry);
    if (passed && (best.is_null() || medianMs < bestMs)) {
      best = entry;
      bestMs = medianMs;
    }
  }
  return {{"best", best}, {"retimed", variants}};
}

int runConv(const Settings& settings) {
  if (settings.layerDatabases.empty()) throw std::runtime_error("--conv needs --layer-db");
  const ConvLayer layer = parseConvLayer(settings.convLayer);
  const Program program = parseFile(WEFT_SOURCE_DIR "/examples/conv.weft");
  const Definition& definition = program.definitions.back();
  const ArithBinding sizes = convListing3Sizes(layer);
  host::Device device = host::selectDevice(settings.device);
  host::Context context(device);
  const host::DeviceProfile profile = host::queryProfile(device);
  const std::string name = explore::programTarget(definition, sizes).program;
  const std::vector<explore::VariantRecord> searched =
      fastestRecorded(settings.databases, name, profile.fingerprint);
  const std::vector<explore::VariantRecord> strategies =
      fastestRecorded(settings.layerDatabases, layer.name, profile.fingerprint);

  // PyTorch-layout data (what the trusted reference reads), given to both sides in Listing 3's
  // layout, which conv.weft's parameters share.
  const LayerData data = randomLayerData(layer, settings.seed);
  const std::vector<Value> inputs = listing3Inputs(layer, data);
  bool allPassed = true;
  Json report = {{"benchmark", "weft_bench_programs --conv"},
                 {"date", utcNow()},
                 {"device", deviceJson(device, profile)},
                 {"layer", settings.convLayer},
                 {"program", name},
                 {"databases", settings.databases},
                 {"layer_databases", settings.layerDatabases},
                 {"timing",
                  "per inference: the sum of the kernels' cl_event times of a run, "
                  "without the kernels that read only the weights and biases"}};
  std::fprintf(stderr, "the program file's searched variants:\n");
  report["program_file"] = retimeConv(
      layer, data, inputs, sizes, context, searched,
      [&](const explore::VariantRecord& r) {
        return explore::compileProgramVariant(definition, sizes, r);
      },
      settings, allPassed);
  std::fprintf(stderr, "the hand-written strategies' variants:\n");
  report["strategies"] = retimeConv(
      layer, data, inputs, sizes, context, strategies,
      [&](const explore::VariantRecord& r) { return explore::compileLayerVariant(layer, r); },
      settings, allPassed);
  const Json& file = report["program_file"]["best"];
  const Json& hand = report["strategies"]["best"];
  if (file.is_null() || hand.is_null()) throw std::runtime_error("no re-timed variant was correct");
  const double fileMs = file["time_ms"]["median"].get<double>();
  const double handMs = hand["time_ms"]["median"].get<double>();
  const double ratio = handMs / fileMs;
  std::printf("%s (%s) on %s (%s)\n", layer.name.c_str(), settings.convLayer.c_str(),
              device.name.c_str(), profile.fingerprint.c_str());
  std::printf("| | median ms | GFLOP/s |\n|---|---:|---:|\n");
  std::printf("| conv.weft, searched (%s) | %.3f | %.1f |\n",
              file["strategy"].get<std::string>().c_str(), fileMs,
              file["gflops_per_s"].get<double>());
  std::printf("| conv strategies (%s) | %.3f | %.1f |\n",
              hand["strategy"].get<std::string>().c_str(), handMs,
              hand["gflops_per_s"].get<double>());
  std::printf("strategies / searched = %.2f (target >= %.1f: %s)\n", ratio, settings.convTarget,
              ratio >= settings.convTarget ? "MET" : "NOT MET");
  report["target"] = {
      {"ratio", ratio}, {"target", settings.convTarget}, {"met", ratio >= settings.convTarget}};
  writeWithOwnTime(report, settings, name, profile,
                   "programs_conv_" + layer.name + "_" + profile.name + ".json");
  return allPassed ? 0 : 1;
}

int run(const Settings& settings) {
  if (!settings.convLayer.empty()) return runConv(settings);
  const bool bandwidth = settings.dotLength > 0 || !settings.bandwidthProgram.empty();
  const std::string file = settings.dotLength > 0
                               ? std::string(WEFT_SOURCE_DIR "/examples/dot.weft")
                               : !settings.bandwidthProgram.empty() ? settings.bandwidthProgram
                                                                    : settings.program;
  const Program program = parseFile(file);
  const Definition& definition = program.definitions.back();
  ArithBinding sizes =
      bandwidth ? ArithBinding{}
                : ArithBinding{{"M", settings.size[0]}, {"N", settings.size[1]},
                               {"K", settings.size[2]}};
  if (settings.dotLength > 0) sizes["N"] = settings.dotLength;
  for (const std::string& binding : settings.bindings) {
    const size_t equals = binding.find('=');
    if (equals == std::string::npos) throw std::runtime_error("--bind " + binding + ": NAME=VALUE");
    sizes[binding.substr(0, equals)] = std::stoll(binding.substr(equals + 1));
  }
  host::Device device = host::selectDevice(settings.device);
  host::Context context(device);
  const host::DeviceProfile profile = host::queryProfile(device);
  const std::string name = explore::programTarget(definition, sizes).program;
  const std::vector<explore::VariantRecord> records =
      fastestRecorded(settings.databases, name, profile.fingerprint);
  if (bandwidth) {
    Json report = {{"benchmark", "weft_bench_programs --bandwidth"},
                   {"date", utcNow()},
                   {"device", deviceJson(device, profile)},
                   {"program", name},
                   {"databases", settings.databases}};
    const int status =
        runBandwidth(settings, name, definition, sizes, context, records, report);
    writeWithOwnTime(report, settings, name, profile,
                     "programs_" + definition.name + "_" + profile.name + ".json");
    return status;
  }
  Matrices x{settings.size[0], settings.size[1], settings.size[2], {}, {}};
  std::mt19937 rng(settings.seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  x.a.resize(static_cast<size_t>(x.m * x.k));
  x.b.resize(static_cast<size_t>(x.k * x.n));
  for (float& v : x.a) v = uniform(rng);
  for (float& v : x.b) v = uniform(rng);

  bool allPassed = true;
  Json report = {{"benchmark", "weft_bench_programs"},
                 {"date", utcNow()},
                 {"device", deviceJson(device, profile)},
                 {"program", name},
                 {"databases", settings.databases}};
  Json weft = measureWeft(definition, sizes, x, context, records, settings, allPassed);
  report["weft"] = weft;
  if (settings.clblast) report["clblast"] = measureClblast(x, context, settings, allPassed);
  if (settings.torch) report["pytorch"] = measureTorch(x, settings);

  std::printf("%s on %s (%s)\n", name.c_str(), device.name.c_str(), profile.fingerprint.c_str());
  const Json& best = weft["best"];
  if (best.is_null()) throw std::runtime_error("no re-timed weft variant was correct");
  const double weftMs = best["time_ms"]["median"].get<double>();
  std::printf("| | median ms | GFLOP/s |\n|---|---:|---:|\n");
  std::printf("| weft (%s) | %.3f | %.1f |\n", best["strategy"].get<std::string>().c_str(), weftMs,
              gflops(x, weftMs));
  // The peers: {name, its figures, the target for peer / weft (0: none)}.
  std::vector<std::tuple<std::string, Json, double>> peers;
  if (report.contains("pytorch")) {
    peers.emplace_back("pytorch onednn (mkldnn linear)", report["pytorch"]["onednn"], 0.8);
    peers.emplace_back("pytorch matmul (system BLAS)", report["pytorch"]["matmul"], 0.0);
  }
  if (report.contains("clblast")) peers.emplace_back("clblast sgemm", report["clblast"], 3.0);
  Json targets = Json::object();
  for (const auto& [peer, figures, target] : peers) {
    const double ms = figures["time_ms"]["median"].get<double>();
    std::printf("| %s | %.3f | %.1f |\n", peer.c_str(), ms, gflops(x, ms));
  }
  for (const auto& [peer, figures, target] : peers) {
    const double ratio = figures["time_ms"]["median"].get<double>() / weftMs;
    if (target <= 0) {
      std::printf("%s / weft = %.2f\n", peer.c_str(), ratio);
      continue;
    }
    targets[peer] = {{"ratio", ratio}, {"target", target}, {"met", ratio >= target}};
    std::printf("%s / weft = %.2f (target >= %.1f: %s)\n", peer.c_str(), ratio, target,
                ratio >= target ? "MET" : "NOT MET");
  }
  report["targets"] = targets;
  report["weft_own_time_per_variant"] =
      ownTimePerVariant(settings.databases, name, profile.fingerprint);
  // The peers' times (all but one whose output failed its check), for `weft report`'s plot.
  for (const auto& [peer, figures, target] : peers) {
    if (!figures.value("verified", true)) continue;
    explore::PeerRecord record;
    record.program = name;
    record.device = profile.fingerprint;
    record.peer = peer;
    record.medianNs =
        static_cast<uint64_t>(std::llround(figures["time_ms"]["median"].get<double>() * 1e6));
    record.source = "weft_bench_programs";
    recordPeerTime(settings.databases, record);
  }
  const auto path = writeResultsJson(
      report, settings.out,
      std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / ("programs_" + profile.name + ".json"));
  std::printf("written to %s\n", path.string().c_str());
  return allPassed ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  workloads::registerBuiltinWorkloads();
  Settings settings;
  CLI::App app("Matrix multiplication explored from examples/matmul.weft against torch.matmul "
               "and CLBlast's SGEMM, in one run");
  app.add_option("--db", settings.databases, "results databases of weft explore")->required();
  app.add_option("--program", settings.program, "the program file")->capture_default_str();
  app.add_option("--size", settings.size, "M N K")->expected(3)->capture_default_str();
  app.add_option("--retime", settings.retime, "re-time this many of the fastest recorded")
      ->capture_default_str();
  app.add_option("--min-repeats", settings.minRepeats)->capture_default_str();
  app.add_option("--min-seconds", settings.minSeconds)->capture_default_str();
  app.add_option("--samples", settings.samples, "entries verified")->capture_default_str();
  app.add_option("--seed", settings.seed)->capture_default_str();
  app.add_option("--threads", settings.threads, "PyTorch's threads")->capture_default_str();
  app.add_option("--python", settings.python, "the Python with torch")->capture_default_str();
  app.add_option("--device", settings.device, "the OpenCL device (see weft devices)");
  app.add_option("--out", settings.out, "the results JSON (default bench/results/programs_<device>.json)");
  app.add_flag("!--no-torch", settings.torch, "skip PyTorch");
  app.add_flag("!--no-clblast", settings.clblast, "skip CLBlast");
  app.add_option("--dot", settings.dotLength,
                 "instead: examples/dot.weft of this length against a copy on the same device");
  app.add_option("--bandwidth", settings.bandwidthProgram,
                 "instead: this memory-bound program (e.g. examples/sum.weft, "
                 "examples/matvec.weft) against a copy of as many floats on the same device");
  app.add_option("--bind", settings.bindings, "with --bandwidth: a size, NAME=VALUE (repeatable)");
  app.add_option("--conv", settings.convLayer,
                 "examples/conv.weft at this layer's sizes (vgg16:N or C,H,W,M,K,stride,pad) "
                 "against the conv strategies' variants in --layer-db");
  app.add_option("--layer-db", settings.layerDatabases,
                 "with --conv: results databases of weft explore --layer");
  return parseAndRun(app, argc, argv, "weft_bench_programs", [&] { return run(settings); });
}
