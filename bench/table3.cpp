// The LIFT paper's Table 3 on this machine (issue 6's benchmark, issue 8's targets): for each
// VGG-16 convolution layer explored in one or more results databases, the fastest explored
// variant against the naive direct convolution, CLBlast's im2col + SGEMM and PyTorch's conv2d,
// all measured in ONE run on the same device, with the ratios the issues set targets for and
// the cost of the exploration that found the variant.
//
// Per layer (the VGG-16 layers present in the databases, or --layer):
//  - exploration figures from the databases (rows in id order = measuring order; several --db
//    files are read in the order given, a variant found in an earlier file is not counted
//    again): variants sampled and their statuses, the best recorded median, how many samples
//    (in measuring order, failures included) until the first ok variant within 10 % of that
//    best, the exploration time the rows record (Σ details.childSeconds + Σ
//    details.prebuild.waitedSeconds, and the span of the rows' `written` times), weft's own
//    time per variant: CPU (details.weftCpuMs: the explorer's and the generator's thread CPU,
//    the figure the issue-6 target is judged on, as bench/weft_overhead does) and wall
//    (details.weftMs, which grows while the pre-builds beside it, OpenCL builds, take the
//    cores);
//  - best: of the --retime N (default 5) ok variants with the fastest recorded medians
//    (explore/variant_pick.h pickVariant "fastest" and the next ones) and the N fastest recorded
//    of each padding choice of the vector family (pad kernel / padding in the loads), the
//    fastest as measured in this run — each rebuilt from its parameters (compileLayerVariant), run on fresh random
//    data (randomLayerData(--seed), converted to Listing 3's layouts) — a warm-up with canary
//    regions, its output verified against conv2d's definition in double (verifyOutput) — then
//    timed in batches of runs on the same buffers (one runProgram call per batch, as the
//    explorer measures and an application reuses its buffers); every kernel's cl_event time of
//    every run is kept.
//    The kernels that depend only on the weights and biases (CompiledProgram::
//    preparationKernels, e.g. the vector family's weight re-layout) are preparation: a drop-in
//    runs them once at create time. Per-inference time = the sum of the other kernels (padding
//    included), preparation time = the sum of the preparation kernels, both medians over the
//    same runs (the preparation kernels still run before each inference here, so the inference
//    kernels may find the re-laid weights in cache). Memory = the buffers the variant holds at
//    inference time (CompiledProgram::inferenceBytes with the weights and biases constant:
//    input, biases, re-laid weights, padded copies, temporaries, output — not the original
//    weights when only the re-layout reads them, which an application releases after
//    PREFIX_prepare); every buffer (globalBytes) is kept in the JSON as memory_bytes_all_buffers,
//    with the bytes of each buffer;
//  - the direct-convolution bound: input + output + weights + bias, the least any direct
//    convolution holds (the vector family with pad_in_loads reaches it: its re-laid weights
//    replace the original ones), and the bound with a padded copy of the input (padding as a
//    kernel of its own); im2col + GEMM memory / the bound is the best ratio a direct
//    convolution can show on the layer;
//  - the baselines (bench/baseline_runners.h; layers of the same shape measured once).
//
// Ratios per layer: naive / best (target ≥ 10×), CLBlast / best (> 1), im2col + GEMM memory /
// best's memory (≥ 3.6× per layer, and the mean over the layers — the paper's 3.6× is a mean;
// the same ratio against the direct-convolution bound is printed beside it, not a target),
// PyTorch / best (≥ 0.9 from conv2_1 on), best's GFLOP/s (≥ 200 on conv3_1 and conv4_2), the
// sum of the 13 per-inference times against PyTorch's sum, weft's time per variant (< 10 ms),
// samples to within 10 % (≤ 1000). Each target is printed as MET, NOT MET or INCOMPLETE (no
// measured layer misses it but a layer it needs was not measured: the detail says which figures
// there are); nothing is left out because it misses.
//
// Output: bench/results/table3.json (every figure, raw samples, device, date, settings) and
// bench/results/table3.md (the markdown table for the README, the targets, the command), and
// the table and targets on stdout. Exit code 1 when an output was wrong or a measurement failed
// (the files are still written); missed targets do not change the exit code.
//
//   build/bench/weft_bench_table3 --db results.db [--db more.db] [--layer conv3_1]... [--device
//   pocl] [--retime N]
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bench/baseline_runners.h"
#include "bench/bench_support.h"
#include "codegen/compiled_program.h"
#include "explore/measurement.h"
#include "explore/results_db.h"
#include "explore/variant_pick.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

namespace weft::bench {

namespace {

using Json = nlohmann::ordered_json;

// The issues' thresholds.
constexpr double kNaiveSpeedupTarget = 10.0;  // issue 6: best ≥ 10× naive, every layer
constexpr double kMemoryRatioTarget = 3.6;    // issue 6/8: im2col + GEMM memory / best
constexpr double kTorchRatioTarget = 0.9;     // issue 8: best ≥ 0.9× PyTorch from conv2_1 on
constexpr double kGflopsTarget = 200.0;       // issue 8: on conv3_1 and conv4_2
constexpr double kWeftMsTarget = 10.0;        // issue 6: weft's own time per variant
constexpr int kSampleBudget = 1000;           // issue 8: found within 1000 samples
constexpr double kWithinBest = 1.10;          // "within 10 % of the best"

struct Options {
  std::vector<std::string> dbs;
  std::vector<std::string> layers;
  std::string device;
  std::string dbDevice;
  std::string outJson;
  std::string outMarkdown;
  BaselineSettings settings{.torchScript = WEFT_BENCH_TORCH_SCRIPT};
  bool naive = true;
  bool clblast = true;
  bool torch = true;
  bool recordPeers = true;
  int retime = 5;  // the recorded fastest variants re-timed per layer
  std::string commandLine;
};

double toMs(uint64_t ns) { return static_cast<double>(ns) / 1e6; }
double toMB(int64_t bytes) { return static_cast<double>(bytes) / 1e6; }

// ---- the databases ---------------------------------------------------------------------------

// Every variant of the databases in measuring order; a key already seen in an earlier row is
// skipped unless that row was only a `running` marker.
struct Explored {
  explore::ResultsSnapshot combined;  // what pickVariant reads
  std::vector<std::string> source;    // the database of each combined variant
  Json databases = Json::array();
};

Explored readDatabases(const std::vector<std::string>& paths) {
  Explored explored;
  std::map<std::string, size_t> seen;  // key text -> index in combined
  for (const std::string& path : paths) {
    const explore::ResultsSnapshot snapshot = explore::readResultsSnapshot(path);
    std::set<std::string> programs;
    size_t added = 0;
    for (size_t i = 0; i < snapshot.variants.size(); ++i) {
      const explore::VariantRecord& v = snapshot.variants[i];
      programs.insert(v.key.program);
      const std::string key =
          v.key.program + '\n' + v.key.device + '\n' + v.key.compiler + '\n' + v.key.parameters;
      auto found = seen.find(key);
      if (found != seen.end()) {
        explore::VariantRecord& earlier = explored.combined.variants[found->second];
        if (earlier.status == explore::VariantStatus::Running &&
            v.status != explore::VariantStatus::Running) {
          earlier = v;
        }
        continue;
      }
      seen[key] = explored.combined.variants.size();
      explored.combined.variants.push_back(v);
      explored.combined.variantsWritten.push_back(
          i < snapshot.variantsWritten.size() ? snapshot.variantsWritten[i] : "");
      explored.source.push_back(path);
      ++added;
    }
    for (const explore::ReferenceRecord& r : snapshot.references) {
      explored.combined.references.push_back(r);
    }
    explored.databases.push_back({{"path", std::filesystem::absolute(path).string()},
                                  {"variants", snapshot.variants.size()},
                                  {"variants_used", added},
                                  {"programs", programs}});
  }
  if (!paths.empty()) explored.combined.path = paths.front();
  return explored;
}

// "2026-11-22 04:14:05" (SQLite's datetime('now'), UTC) as seconds since the epoch.
std::optional<double> parseWritten(const std::string& text) {
  std::tm tm{};
  if (strptime(text.c_str(), "%Y-%m-%d %H:%M:%S", &tm) == nullptr) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

// The exploration figures of one layer on one device.
Json explorationJson(const Explored& explored, const std::string& program,
                     const std::string& device) {
  std::map<std::string, int> statuses;
  std::vector<const explore::VariantRecord*> rows;
  std::vector<std::string> written;
  std::set<std::string> databases, compilers;
  for (size_t i = 0; i < explored.combined.variants.size(); ++i) {
    const explore::VariantRecord& v = explored.combined.variants[i];
    if (v.key.program != program || v.key.device != device) continue;
    rows.push_back(&v);
    written.push_back(explored.combined.variantsWritten[i]);
    databases.insert(explored.source[i]);
    compilers.insert(v.key.compiler);
    ++statuses[explore::statusName(v.status)];
  }
  std::optional<uint64_t> best;
  for (const explore::VariantRecord* v : rows) {
    if (v->status == explore::VariantStatus::Ok && v->medianNs && (!best || *v->medianNs < *best))
      best = v->medianNs;
  }
  Json out;
  out["databases"] = databases;
  out["compilers"] = compilers;
  out["device"] = device;
  out["samples"] = rows.size();
  out["statuses"] = statuses;
  out["best_recorded_ms"] = best ? Json(toMs(*best)) : Json(nullptr);
  Json toWithin = nullptr, toBest = nullptr;
  for (size_t i = 0; best && i < rows.size(); ++i) {
    const explore::VariantRecord& v = *rows[i];
    if (v.status != explore::VariantStatus::Ok || !v.medianNs) continue;
    if (toWithin.is_null() && static_cast<double>(*v.medianNs) <= kWithinBest * *best)
      toWithin = i + 1;
    if (*v.medianNs == *best) {
      toBest = i + 1;
      break;
    }
  }
  out["samples_to_within_10pct"] = toWithin;
  out["samples_to_best"] = toBest;

  double childSeconds = 0, waitedSeconds = 0;
  int withChild = 0;
  std::vector<double> weftMs, weftCpuMs;
  for (const explore::VariantRecord* v : rows) {
    nlohmann::json details;
    try {
      details = nlohmann::json::parse(v->details);
    } catch (const std::exception&) {
      continue;
    }
    if (!details.is_object()) continue;
    if (details.contains("childSeconds") && details["childSeconds"].is_number()) {
      childSeconds += details["childSeconds"].get<double>();
      ++withChild;
    }
    if (details.contains("prebuild") && details["prebuild"].is_object() &&
        details["prebuild"].contains("waitedSeconds") &&
        details["prebuild"]["waitedSeconds"].is_number()) {
      waitedSeconds += details["prebuild"]["waitedSeconds"].get<double>();
    }
    if (details.contains("weftMs") && details["weftMs"].is_number()) {
      weftMs.push_back(details["weftMs"].get<double>());
    }
    if (details.contains("weftCpuMs") && details["weftCpuMs"].is_number()) {
      weftCpuMs.push_back(details["weftCpuMs"].get<double>());
    }
  }
  out["recorded_seconds"] = {
      {"child_seconds_sum", childSeconds},
      {"variants_with_child_seconds", withChild},
      {"prebuild_waited_seconds_sum", waitedSeconds},
      {"total", childSeconds + waitedSeconds},
      {"meaning",
       "time spent in the variants' measuring children plus the time the explorer waited for "
       "pre-builds, as the rows record it; the explorer's own set-up (reference run, sampling) "
       "is not in it"}};
  std::optional<double> first, last;
  for (const std::string& text : written) {
    if (std::optional<double> t = parseWritten(text)) {
      first = first ? std::min(*first, *t) : *t;
      last = last ? std::max(*last, *t) : *t;
    }
  }
  if (first) {
    out["written_span_seconds"] = *last - *first;
    out["written_first"] = written.front();
    out["written_last"] = written.back();
  }
  auto summary = [](const std::vector<double>& ms) -> Json {
    if (ms.empty()) return nullptr;
    double sum = 0;
    for (double x : ms) sum += x;
    return {{"variants", ms.size()},
            {"median", median(ms)},
            {"mean", sum / static_cast<double>(ms.size())},
            {"sum", sum},
            {"max", *std::max_element(ms.begin(), ms.end())}};
  };
  out["weft_ms_per_variant"] = summary(weftMs);          // wall
  out["weft_cpu_ms_per_variant"] = summary(weftCpuMs);  // CPU
  return out;
}

// The device whose variants of `program` are used: --db-device, else the only one, else the
// device this run measures on.
std::string chooseDevice(const Explored& explored, const std::string& program,
                         const std::string& dbDevice, const std::string& runningOn) {
  if (!dbDevice.empty()) return dbDevice;
  std::set<std::string> devices;
  for (const explore::VariantRecord& v : explored.combined.variants) {
    if (v.key.program == program) devices.insert(v.key.device);
  }
  if (devices.size() == 1) return *devices.begin();
  if (devices.count(runningOn)) return runningOn;
  return "";  // pickVariant says what is there
}

// ---- the best variant -------------------------------------------------------------------------

// Index of the Listing 3 parameter called `name`.
int listing3Parameter(const std::string& name) {
  const std::vector<Expr>& params = convListing3Definition().function.params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].paramName() == name) return static_cast<int>(i);
  }
  throw std::runtime_error("Listing 3 has no parameter " + name);
}

Json measureBest(const ConvLayer& layer, const LayerData& data,
                 const explore::PickedVariant& picked, host::Context& context,
                 const std::string& runningOn, const BaselineSettings& settings) {
  const explore::VariantRecord& record = picked.record;
  Json out;
  out["parameters"] = Json::parse(record.key.parameters);
  Json table = Json::array();
  for (const explore::ParameterRow& row : explore::parameterTable(record)) {
    table.push_back({{"name", row.name}, {"value", row.value}});
  }
  out["parameter_table"] = table;
  out["why"] = picked.why;
  out["explored_on"] = record.key.device;
  out["compiler"] = record.key.compiler;
  if (record.key.device != runningOn) {
    out["note"] = "explored on another device than the one measured here (" + runningOn + ")";
  }
  out["recorded_median_ms"] = record.medianNs ? Json(toMs(*record.medianNs)) : Json(nullptr);
  out["recorded_space_bytes"] = record.spaceBytes ? Json(*record.spaceBytes) : Json(nullptr);

  const CompiledProgram program = explore::compileLayerVariant(layer, record);
  const ArithBinding sizes = convListing3Sizes(layer);
  const std::vector<Value> inputs = listing3Inputs(layer, data);
  const std::set<int> constant = {listing3Parameter("weights"), listing3Parameter("biases")};
  const std::vector<bool> preparation = program.preparationKernels(constant);

  host::ProgramCache cache;
  host::RunOptions warmUp;
  warmUp.cache = &cache;
  warmUp.guards = true;
  const host::RunResult first = host::runProgram(context, program, inputs, sizes, warmUp);
  Verification check = verifyOutput(layer, data, flattenToFloats(first.output), settings.samples,
                                    settings.fullCheckFlops, settings.seed);
  if (!first.guardViolations.empty()) {
    check.passed = false;
    check.firstFailure = explore::guardViolationsText(first.guardViolations);
  }
  const double warmUpMs = toMs(first.totalNanoseconds);

  // Timed runs in batches: one runProgram call runs a batch on the same buffers (as an
  // application reuses a drop-in's buffers, and as the explorer measures), and keeps every
  // kernel's time of every run. Fresh buffers per run would add allocation and first-touch
  // costs an application does not pay.
  host::RunOptions timed;
  timed.cache = &cache;
  std::vector<double> inferenceMs, preparationMs;
  std::vector<std::vector<double>> kernelMs(program.kernels.size());
  double elapsedMs = 0;
  while (static_cast<int>(inferenceMs.size()) < settings.minRepeats ||
         (elapsedMs < settings.minSeconds * 1e3 && inferenceMs.size() < 1000)) {
    const int done = static_cast<int>(inferenceMs.size());
    int batch = std::max(settings.minRepeats - done, 1);
    if (done >= settings.minRepeats) {
      const double perRun = std::max(elapsedMs / done, 1e-3);
      batch = static_cast<int>(std::ceil((settings.minSeconds * 1e3 - elapsedMs) / perRun));
    }
    timed.repeats = std::clamp(batch, 1, 1000 - done);
    const host::RunResult run = host::runProgram(context, program, inputs, sizes, timed);
    for (const std::vector<uint64_t>& repeat : run.repeatKernelNanoseconds) {
      double inference = 0, prepared = 0;
      for (size_t k = 0; k < repeat.size(); ++k) {
        const double ms = toMs(repeat[k]);
        kernelMs[k].push_back(ms);
        (k < preparation.size() && preparation[k] ? prepared : inference) += ms;
      }
      inferenceMs.push_back(inference);
      preparationMs.push_back(prepared);
      elapsedMs += inference + prepared;
    }
  }

  Json kernels = Json::array();
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelPlan& plan = program.kernels[k];
    Json global = Json::array(), local = nullptr;
    for (int d = 0; d < plan.dimensions; ++d) global.push_back(evaluate(plan.globalSize[d], sizes));
    if (plan.hasLocalSize) {
      local = Json::array();
      for (int d = 0; d < plan.dimensions; ++d) local.push_back(evaluate(plan.localSize[d], sizes));
    }
    kernels.push_back({{"name", plan.name},
                       {"preparation", k < preparation.size() && preparation[k]},
                       {"global_size", global},
                       {"local_size", local},
                       {"time_ms", timeJson(kernelMs[k])}});
  }
  const double medianMs = median(inferenceMs);
  const bool hasPreparation =
      std::find(preparation.begin(), preparation.end(), true) != preparation.end();
  out["time_ms"] = timeJson(inferenceMs);
  out["preparation_ms"] = hasPreparation ? timeJson(preparationMs) : Json(nullptr);
  out["gflops_per_s"] = gflopsPerSecond(layer, medianMs);
  // Inference memory: the original weights are left out when only the preparation (the
  // re-layout) reads them — a drop-in's application releases them after PREFIX_prepare.
  out["memory_bytes"] = program.inferenceBytes(sizes, constant);
  out["memory_bytes_all_buffers"] = program.globalBytes(sizes);
  const std::vector<bool> kept = program.inferenceBuffers(constant);
  Json buffers = Json::array();
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const BufferPlan& buffer = program.buffers[b];
    buffers.push_back({{"name", buffer.name},
                       {"role", buffer.role == BufferPlan::Role::Input    ? "input"
                                : buffer.role == BufferPlan::Role::Output ? "output"
                                                                          : "temporary"},
                       {"bytes", evaluate(buffer.elementCount, sizes) * 4},
                       {"held_at_inference", static_cast<bool>(kept[b])}});
  }
  out["buffers"] = buffers;
  out["memory"] =
      "memory_bytes: the buffers held at inference time (CompiledProgram::inferenceBytes, "
      "weights and biases constant: every buffer but the original weights when only "
      "preparation kernels read them); memory_bytes_all_buffers: every buffer";
  out["kernels"] = kernels;
  out["timing"] =
      "per-inference: sum of the cl_event times of the kernels that are not preparation "
      "kernels (CompiledProgram::preparationKernels of the weights and biases), median over "
      "the timed runs; preparation_ms: the preparation kernels' sum over the same runs";
  out["warmup_ms"] = warmUpMs;
  out["verified"] = check.passed;
  out["verification"] = verificationJson(check, layer, "C++ loops on the host, double");
  return out;
}

// The padding choice of a vector-family variant ("0" or "1"; "" for other structures and for
// records made before the choice existed, which are "0").
std::string paddingChoice(const std::string& parameters) {
  const Json json = Json::parse(parameters, nullptr, false);
  if (json.is_object() && json.contains("vector_pad_in_loads")) {
    return std::to_string(json["vector_pad_in_loads"].get<int64_t>());
  }
  return json.is_object() && json.contains("vector_kappa") ? "0" : "";
}

// The `options.retime` ok variants with the fastest recorded medians of the picked variant's
// program and device (the picked one first), each measured here by measureBest; the fastest
// verified one as measured in this run is the layer's best. The recorded medians were taken
// under whatever load the exploration ran with (a loaded machine flattens the top of the
// ranking), so the few closest candidates are timed again side by side. The candidates' figures
// stay in the JSON ("retimed").
Json measureFastestOf(const ConvLayer& layer, const LayerData& data,
                      const explore::PickedVariant& picked, const explore::ResultsSnapshot& snapshot,
                      host::Context& context, const std::string& runningOn, const Options& options) {
  std::vector<const explore::VariantRecord*> candidates;
  for (const explore::VariantRecord& v : snapshot.variants) {
    if (v.key.program == picked.record.key.program && v.key.device == picked.record.key.device &&
        v.status == explore::VariantStatus::Ok && v.medianNs && !(v.key == picked.record.key)) {
      candidates.push_back(&v);
    }
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const auto* a, const auto* b) { return *a->medianNs < *b->medianNs; });
  // The N - 1 next fastest overall, and the N fastest of each padding choice of the vector
  // family (vector_pad_in_loads 0: a pad kernel and a padded copy; 1: padding in the loads):
  // the two run the same main kernel for the same blocking, so under an exploration's load
  // their recorded medians differ by noise more than by the pad kernel, and a loaded ranking
  // alone can leave one choice out of the re-timing. Other structures (conv-direct) only through
  // the overall N.
  std::map<std::string, int> takenPerPadding;
  takenPerPadding[paddingChoice(picked.record.key.parameters)] = 1;
  std::vector<const explore::VariantRecord*> chosen;
  const int overall = std::max(0, options.retime - 1);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string padding = paddingChoice(candidates[i]->key.parameters);
    if (static_cast<int>(i) < overall ||
        (!padding.empty() && takenPerPadding[padding] < options.retime)) {
      chosen.push_back(candidates[i]);
      ++takenPerPadding[padding];
    }
  }
  candidates = std::move(chosen);
  Json best = measureBest(layer, data, picked, context, runningOn, options.settings);
  Json retimed = Json::array();
  auto summary = [](const Json& measured) {
    return Json{{"parameters", measured["parameters"]},
                {"recorded_median_ms", measured["recorded_median_ms"]},
                {"median_ms", measured["time_ms"]["median"]},
                {"verified", measured["verified"]}};
  };
  retimed.push_back(summary(best));
  for (const explore::VariantRecord* record : candidates) {
    const explore::PickedVariant candidate{*record, "re-timed candidate"};
    Json measured = measureBest(layer, data, candidate, context, runningOn, options.settings);
    retimed.push_back(summary(measured));
    const bool faster = measured["time_ms"]["median"].get<double>() <
                        best["time_ms"]["median"].get<double>();
    if (measured["verified"].get<bool>() && (faster || !best["verified"].get<bool>())) {
      best = std::move(measured);
    }
  }
  const size_t measuredCount = retimed.size();
  best["why"] = "fastest in this run of the " + std::to_string(measuredCount) +
                " variants with the fastest recorded medians (" + picked.why + ")";
  best["retimed"] = retimed;
  return best;
}

// The least memory a direct convolution of the layer holds: input + output + weights + bias
// (float32), and the same with a padded copy of the input (padding as a kernel of its own).
Json directBoundJson(const ConvLayer& layer) {
  const int64_t input = 4 * layer.C * layer.H * layer.W;
  const int64_t output = 4 * layer.M * layer.outH() * layer.outW();
  const int64_t weights = 4 * layer.M * layer.C * layer.K * layer.K;
  const int64_t bias = 4 * layer.M;
  const int64_t padded =
      layer.pad > 0 ? 4 * layer.C * (layer.H + 2 * layer.pad) * (layer.W + 2 * layer.pad) : 0;
  return {{"bytes", input + output + weights + bias},
          {"with_padded_copy_bytes", input + output + weights + bias + padded},
          {"input_bytes", input},
          {"output_bytes", output},
          {"weights_bytes", weights},
          {"bias_bytes", bias},
          {"padded_copy_bytes", padded},
          {"meaning",
           "the least memory of a direct convolution: input + output + weights + bias (no "
           "padded copy, weights in one layout); with_padded_copy_bytes adds a padded copy of "
           "the input"}};
}

std::optional<int64_t> boundOf(const Json& row) {
  if (!row.contains("direct_bound")) return std::nullopt;
  return row["direct_bound"]["bytes"].get<int64_t>();
}

// ---- the report ------------------------------------------------------------------------------

struct LayerRow {
  ConvLayer layer;
  int position = -1;  // in vgg16Layers(); -1 for a layer that is not VGG-16's
  Json json;
  std::string device;  // the fingerprint whose explored variants the row takes
};

// Median time of method `m` of a row ("best" or a baseline), when it was measured.
std::optional<double> timeOf(const Json& row, const std::string& m) {
  const Json* entry = nullptr;
  if (m == "best") {
    if (row.contains("best")) entry = &row["best"];
  } else if (row["methods"].contains(m)) {
    entry = &row["methods"][m];
  }
  if (entry == nullptr || !entry->contains("time_ms")) return std::nullopt;
  return (*entry)["time_ms"]["median"].get<double>();
}
std::optional<int64_t> memoryOf(const Json& row, const std::string& m) {
  const Json* entry = nullptr;
  if (m == "best") {
    if (row.contains("best")) entry = &row["best"];
  } else if (row["methods"].contains(m)) {
    entry = &row["methods"][m];
  }
  if (entry == nullptr || !entry->contains("memory_bytes")) return std::nullopt;
  return (*entry)["memory_bytes"].get<int64_t>();
}

// A target over a set of layers: MET when every required layer was measured and holds, NOT MET
// when a measured layer misses it (or its best variant could not be measured), INCOMPLETE when
// none misses but some required layer has no figure.
struct Target {
  std::string id;
  std::string description;
  std::string status;
  std::string detail;
  Json values = Json::object();
};

Target perLayerTarget(const std::string& id, const std::string& description,
                      const std::vector<LayerRow>& rows, const std::set<std::string>& required,
                      const std::function<std::optional<double>(const Json&)>& value,
                      const std::function<bool(double)>& holds, const char* unit) {
  Target target{id, description, "", "", Json::object()};
  std::vector<std::string> misses, missing, notInRun;
  std::set<std::string> present;
  for (const LayerRow& row : rows) {
    if (!required.count(row.layer.name)) continue;
    present.insert(row.layer.name);
    std::optional<double> v = value(row.json);
    if (!v) {
      // The best variant itself failed: a miss. A baseline that failed: no figure.
      if (!row.json.contains("best") || !row.json["best"].contains("time_ms")) {
        misses.push_back(row.layer.name + " (no measured best variant)");
      } else {
        missing.push_back(row.layer.name + " (a baseline failed or was skipped)");
      }
      target.values[row.layer.name] = nullptr;
      continue;
    }
    target.values[row.layer.name] = *v;
    if (!holds(*v)) misses.push_back(fmt::format("{} {:.2f}{}", row.layer.name, *v, unit));
  }
  for (const std::string& name : required) {
    if (!present.count(name)) notInRun.push_back(name);
  }
  auto joined = [](const std::vector<std::string>& items) {
    std::string text;
    for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  const size_t measured = required.size() - missing.size() - notInRun.size();
  target.status = !misses.empty()                         ? "NOT MET"
                  : !missing.empty() || !notInRun.empty() ? "INCOMPLETE"
                                                          : "MET";
  target.detail = fmt::format("{} of {} required layers with a figure", measured, required.size());
  if (!misses.empty()) target.detail += "; misses: " + joined(misses);
  if (!missing.empty()) target.detail += "; no figure: " + joined(missing);
  if (!notInRun.empty()) target.detail += "; not in this run: " + joined(notInRun);
  return target;
}

Json targetJson(const Target& t) {
  return {{"id", t.id},
          {"target", t.description},
          {"status", t.status},
          {"detail", t.detail},
          {"values", t.values}};
}

std::string cell(const std::optional<double>& value, const char* format = "{:.2f}") {
  return value ? fmt::format(fmt::runtime(format), *value) : std::string("—");
}

std::optional<double> ratio(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b || *b <= 0) return std::nullopt;
  return *a / *b;
}

// The exploration cost per layer as a second markdown table.
std::string explorationTable(const Json& report) {
  std::string md =
      "| layer | samples | ok | samples to 10 % | samples to best | recorded s | rows' time span "
      "s | weft CPU ms / variant (median, mean, max) | weft wall ms (median) "
      "|\n|---|---|---|---|---|---|---|---|---|\n";
  auto number = [](const Json& v, const char* format) {
    return v.is_null() ? std::string("—") : fmt::format(fmt::runtime(format), v.get<double>());
  };
  for (const Json& row : report["layers"]) {
    const Json& ex = row["exploration"];
    const Json& w = ex["weft_ms_per_variant"];
    const Json& cpu = ex["weft_cpu_ms_per_variant"];
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", row["layer"].get<std::string>(),
        ex["samples"].get<int64_t>(), ex["statuses"].value("ok", 0),
        number(ex["samples_to_within_10pct"], "{:.0f}"), number(ex["samples_to_best"], "{:.0f}"),
        number(ex["recorded_seconds"]["total"], "{:.1f}"),
        ex.contains("written_span_seconds") ? number(ex["written_span_seconds"], "{:.0f}")
                                            : std::string("—"),
        cpu.is_null() ? std::string("unknown (no weftCpuMs)")
                      : fmt::format("{:.2f}, {:.2f}, {:.2f}", cpu["median"].get<double>(),
                                    cpu["mean"].get<double>(), cpu["max"].get<double>()),
        w.is_null() ? std::string("—") : fmt::format("{:.2f}", w["median"].get<double>()));
  }
  return md;
}

std::string markdownTable(const Json& report) {
  std::string md;
  md +=
      "| layer | best ms | GFLOP/s | prep. ms | naive ms | CLBlast ms | PyTorch ms | × naive | "
      "× CLBlast | × PyTorch | memory MB best / bound / im2col | ratio best (bound) | 3.6× needs "
      "MB | samples to 10 % (of) |\n";
  md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Json& row : report["layers"]) {
    const std::optional<double> best = timeOf(row, "best");
    const std::optional<double> naive = timeOf(row, "naive");
    const std::optional<double> clblast = timeOf(row, "clblast");
    const std::optional<double> torch = timeOf(row, "pytorch");
    std::optional<double> gflops, prep, bestMB, im2colMB, boundMB, neededMB;
    bool verified = true;
    if (row.contains("best") && row["best"].contains("gflops_per_s")) {
      gflops = row["best"]["gflops_per_s"].get<double>();
      if (!row["best"]["preparation_ms"].is_null())
        prep = row["best"]["preparation_ms"]["median"].get<double>();
      verified = row["best"].value("verified", false);
    }
    if (std::optional<int64_t> b = memoryOf(row, "best")) bestMB = toMB(*b);
    if (std::optional<int64_t> c = memoryOf(row, "clblast")) im2colMB = toMB(*c);
    if (std::optional<int64_t> b = boundOf(row)) boundMB = toMB(*b);
    if (im2colMB) neededMB = *im2colMB / kMemoryRatioTarget;
    const Json& ex = row["exploration"];
    std::string samples = "—";
    if (ex.is_object()) {
      samples = fmt::format("{} ({})",
                            ex["samples_to_within_10pct"].is_null()
                                ? std::string("—")
                                : std::to_string(ex["samples_to_within_10pct"].get<int64_t>()),
                            ex["samples"].get<int64_t>());
    }
    const std::string name =
        row["layer"].get<std::string>() +
        (row.contains("paper_number") ? fmt::format(" ({})", row["paper_number"].get<int>())
                                      : std::string()) +
        (verified ? "" : " WRONG");
    md += fmt::format(
        "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} / {} | {} ({}) | {} | {} |\n",
        name, cell(best), cell(gflops, "{:.1f}"), cell(prep), cell(naive, "{:.1f}"),
        cell(clblast), cell(torch), cell(ratio(naive, best), "{:.1f}×"),
        cell(ratio(clblast, best), "{:.2f}×"), cell(ratio(torch, best), "{:.2f}×"),
        cell(bestMB, "{:.1f}"), cell(boundMB, "{:.1f}"), cell(im2colMB, "{:.1f}"),
        cell(ratio(im2colMB, bestMB), "{:.1f}×"), cell(ratio(im2colMB, boundMB), "{:.1f}×"),
        cell(neededMB, "{:.1f}"), samples);
  }
  const Json& sums = report["sums"];
  auto sum = [&](const char* m) -> std::optional<double> {
    if (!sums["time_ms"].contains(m) || sums["time_ms"][m].is_null()) return std::nullopt;
    return sums["time_ms"][m].get<double>();
  };
  const std::optional<double> best = sum("best");
  std::optional<double> gflops;
  if (best) gflops = static_cast<double>(sums["flops"].get<int64_t>()) / (*best * 1e-3) / 1e9;
  md += fmt::format(
      "| **sum, {} layers** | {} | {} | {} | {} | {} | {} | {} | {} | {} | | mean {} ({}) | | |\n",
      sums["layers"].get<int>(), cell(best), cell(gflops, "{:.1f}"), cell(sum("preparation")),
      cell(sum("naive"), "{:.1f}"), cell(sum("clblast")), cell(sum("pytorch")),
      cell(ratio(sum("naive"), best), "{:.1f}×"), cell(ratio(sum("clblast"), best), "{:.2f}×"),
      cell(ratio(sum("pytorch"), best), "{:.2f}×"),
      sums["memory_ratio_mean"].is_null()
          ? std::string("—")
          : fmt::format("{:.1f}×", sums["memory_ratio_mean"].get<double>()),
      sums["memory_bound_ratio_mean"].is_null()
          ? std::string("—")
          : fmt::format("{:.1f}×", sums["memory_bound_ratio_mean"].get<double>()));
  return md;
}

std::vector<LayerRow> chosenLayers(const Options& options, const Explored& explored) {
  std::vector<LayerRow> rows;
  auto positionOf = [](const std::string& name) {
    for (size_t i = 0; i < vgg16Layers().size(); ++i) {
      if (vgg16Layers()[i].name == name) return static_cast<int>(i);
    }
    return -1;
  };
  if (options.layers.empty()) {
    std::set<std::string> programs;
    for (const explore::VariantRecord& v : explored.combined.variants) {
      programs.insert(v.key.program);
    }
    for (const ConvLayer& layer : vgg16Layers()) {
      if (programs.count(layer.name)) rows.push_back({layer, positionOf(layer.name), {}, ""});
    }
    if (rows.empty()) {
      std::string names;
      for (const std::string& p : programs) names += (names.empty() ? "" : ", ") + p;
      throw std::runtime_error("the databases hold no VGG-16 layer (programs: " +
                               (names.empty() ? std::string("none") : names) +
                               "); name layers with --layer");
    }
    return rows;
  }
  for (const std::string& spec : options.layers) {
    std::optional<ConvLayer> layer = explore::layerOfProgram(spec);
    if (!layer) layer = parseConvLayer(spec);  // vgg16:N or C,H,W,M,K,stride,pad
    rows.push_back({*layer, positionOf(layer->name), {}, ""});
  }
  return rows;
}

// Records each layer's verified PyTorch and CLBlast times in the database holding its explored
// variants, for `weft report` to draw beside them; only for rows explored on the device measured
// here (a peer timed on this machine says nothing about another's variants).
void recordPeerTimes(const std::vector<LayerRow>& rows, const std::vector<std::string>& databases,
                     const std::string& runningOn, const std::string& torchName) {
  const std::vector<std::pair<const char*, std::string>> peers = {
      {"pytorch", torchName}, {"clblast", "CLBlast " + clblastVersion() + " im2col + SGEMM"}};
  for (const LayerRow& row : rows) {
    if (row.device != runningOn) continue;
    for (const auto& [method, name] : peers) {
      const std::optional<double> ms = timeOf(row.json, method);
      if (!ms || !row.json["methods"][method].value("verified", false)) continue;
      explore::PeerRecord peer;
      peer.program = row.layer.name;
      peer.device = runningOn;
      peer.peer = name;
      peer.medianNs = static_cast<uint64_t>(std::llround(*ms * 1e6));
      // CLBlast's buffers are counted like a variant's; PyTorch's figure is a process's
      // resident growth, another measure, so it is left out.
      if (std::string(method) == "clblast") peer.spaceBytes = memoryOf(row.json, method);
      peer.source = "weft_bench_table3";
      recordPeerTime(databases, peer);
    }
  }
}

int run(const Options& options) {
  const Explored explored = readDatabases(options.dbs);
  std::vector<LayerRow> rows = chosenLayers(options, explored);

  host::Device device = host::selectDevice(options.device);
  host::DeviceProfile profile = host::queryProfile(device);
  const std::string runningOn = profile.fingerprint;
  std::fprintf(stderr, "device: %s (%s), fingerprint %s; %zu layers\n", device.name.c_str(),
               device.platformName.c_str(), runningOn.c_str(), rows.size());
  host::Context context(device);

  bool ok = true;
  std::map<ShapeKey, std::string> measuredAs;  // shape -> the layer measured for it
  std::map<std::string, Json> baselines;       // method + "/" + layer name
  std::vector<ConvLayer> torchShapes;
  for (LayerRow& row : rows) {
    const ConvLayer& layer = row.layer;
    Json& out = row.json;
    out["layer"] = layer.name;
    if (row.position >= 0)
      out["paper_number"] = vgg16PaperNumber(static_cast<size_t>(row.position));
    addLayerShape(out, layer);
    out["direct_bound"] = directBoundJson(layer);
    const LayerData data = randomLayerData(layer, options.settings.seed);

    const std::string fingerprint = chooseDevice(explored, layer.name, options.dbDevice, runningOn);
    row.device = fingerprint;
    out["exploration"] = explorationJson(explored, layer.name, fingerprint);
    std::fprintf(stderr, "best: %s\n", layer.describe().c_str());
    try {
      const explore::PickedVariant picked =
          explore::pickVariant(explored.combined, layer.name, fingerprint, explore::PickSpec{});
      out["best"] = measureFastestOf(layer, data, picked, explored.combined, context, runningOn,
                                     options);
      if (!out["best"]["verified"].get<bool>()) ok = false;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "best variant of %s failed: %s\n", layer.name.c_str(), e.what());
      out["best"] = {{"error", e.what()}};
      ok = false;
    }

    if (!measuredAs.emplace(shapeKey(layer), layer.name).second) continue;
    torchShapes.push_back(layer);
    auto attempt = [&](const char* method, auto&& measure) {
      std::fprintf(stderr, "%s: %s\n", method, layer.describe().c_str());
      try {
        baselines[std::string(method) + "/" + layer.name] = measure();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s on %s failed: %s\n", method, layer.name.c_str(), e.what());
        baselines[std::string(method) + "/" + layer.name] = {{"error", e.what()}};
      }
    };
    if (options.naive) {
      attempt("naive", [&] { return measureNaive(layer, data, context, options.settings); });
    }
    if (options.clblast) {
      attempt("clblast", [&] { return measureClblast(layer, data, context, options.settings); });
    }
  }
  nlohmann::json torchReport;
  if (options.torch) {
    try {
      torchReport = measureTorch(torchShapes, options.settings);
      for (const auto& entry : torchReport["layers"]) {
        baselines["pytorch/" + entry["layer"].get<std::string>()] = torchLayerJson(entry);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pytorch failed: %s\n", e.what());
      for (const ConvLayer& layer : torchShapes)
        baselines["pytorch/" + layer.name] = {{"error", e.what()}};
    }
  }

  // Baselines into the rows, ratios, sums.
  double sumBest = 0, sumPreparation = 0;
  std::map<std::string, double> sumMethod;
  std::map<std::string, bool> sumComplete = {
      {"best", true}, {"naive", true}, {"clblast", true}, {"pytorch", true}};
  std::vector<double> memoryRatios, boundRatios;
  std::vector<std::string> boundMisses;  // layers where even the bound is below 3.6×
  int64_t totalFlops = 0;
  for (LayerRow& row : rows) {
    Json& out = row.json;
    const std::string source = measuredAs.at(shapeKey(row.layer));
    if (source != row.layer.name) out["baselines_measured_as"] = source;
    Json methods = Json::object();
    for (const char* method : {"naive", "clblast", "pytorch"}) {
      auto found = baselines.find(std::string(method) + "/" + source);
      if (found == baselines.end()) {
        sumComplete[method] = false;
        continue;
      }
      methods[method] = found->second;
      if (!found->second.contains("time_ms")) {
        ok = false;
        sumComplete[method] = false;
        continue;
      }
      if (!found->second.value("verified", false)) ok = false;
      sumMethod[method] += found->second["time_ms"]["median"].get<double>();
    }
    out["methods"] = methods;
    totalFlops += row.layer.flops();
    const std::optional<double> best = timeOf(out, "best");
    if (best) {
      sumBest += *best;
      if (!out["best"]["preparation_ms"].is_null())
        sumPreparation += out["best"]["preparation_ms"]["median"].get<double>();
    } else {
      sumComplete["best"] = false;
    }
    Json ratios;
    auto put = [&](const char* key, std::optional<double> value) {
      ratios[key] = value ? Json(*value) : Json(nullptr);
    };
    put("speedup_over_naive", ratio(timeOf(out, "naive"), best));
    put("speedup_over_clblast", ratio(timeOf(out, "clblast"), best));
    put("speedup_over_pytorch", ratio(timeOf(out, "pytorch"), best));
    std::optional<double> memoryRatio;
    if (std::optional<int64_t> b = memoryOf(out, "best"); b && best) {
      if (std::optional<int64_t> c = memoryOf(out, "clblast"))
        memoryRatio = static_cast<double>(*c) / static_cast<double>(*b);
    }
    put("memory_im2col_over_best", memoryRatio);
    if (memoryRatio) memoryRatios.push_back(*memoryRatio);
    std::optional<double> boundRatio;
    if (std::optional<int64_t> c = memoryOf(out, "clblast"); c && boundOf(out)) {
      boundRatio = static_cast<double>(*c) / static_cast<double>(*boundOf(out));
    }
    put("memory_im2col_over_direct_bound", boundRatio);
    if (boundRatio) {
      boundRatios.push_back(*boundRatio);
      if (*boundRatio < kMemoryRatioTarget) {
        boundMisses.push_back(fmt::format("{} {:.2f}×", row.layer.name, *boundRatio));
      }
    }
    out["ratios"] = ratios;
  }

  Json sums;
  sums["layers"] = static_cast<int>(rows.size());
  sums["flops"] = totalFlops;
  sums["time_ms"] = Json::object();
  sums["time_ms"]["best"] = sumComplete["best"] ? Json(sumBest) : Json(nullptr);
  sums["time_ms"]["preparation"] = sumComplete["best"] ? Json(sumPreparation) : Json(nullptr);
  for (const char* method : {"naive", "clblast", "pytorch"}) {
    sums["time_ms"][method] = sumComplete[method] ? Json(sumMethod[method]) : Json(nullptr);
  }
  double meanRatio = 0;
  for (double r : memoryRatios) meanRatio += r;
  sums["memory_ratio_mean"] = memoryRatios.empty()
                                  ? Json(nullptr)
                                  : Json(meanRatio / static_cast<double>(memoryRatios.size()));
  sums["memory_ratio_layers"] = memoryRatios.size();
  double boundMean = 0;
  for (double r : boundRatios) boundMean += r;
  if (!boundRatios.empty()) boundMean /= static_cast<double>(boundRatios.size());
  sums["memory_bound_ratio_mean"] = boundRatios.empty() ? Json(nullptr) : Json(boundMean);
  sums["memory_bound_ratio_layers"] = boundRatios.size();
  sums["meaning"] =
      "time_ms: sums of the medians over the layers listed (best: per-inference; preparation: "
      "the best variants' preparation kernels); null when a layer has no figure. "
      "memory_ratio_mean: mean over the layers of (im2col + GEMM memory) / (best's inference "
      "memory); memory_bound_ratio_mean: the same against the direct-convolution bound (input + "
      "output + weights + bias), the most any direct convolution can show";

  // ---- targets ----
  std::set<std::string> allLayers, fromConv21, gflopsLayers = {"conv3_1", "conv4_2"};
  for (size_t i = 0; i < vgg16Layers().size(); ++i) {
    allLayers.insert(vgg16Layers()[i].name);
    if (i >= 2) fromConv21.insert(vgg16Layers()[i].name);
  }
  auto ratioValue = [](const char* key) {
    return [key](const Json& row) -> std::optional<double> {
      if (!row.contains("ratios") || row["ratios"][key].is_null()) return std::nullopt;
      return row["ratios"][key].get<double>();
    };
  };
  std::vector<Target> targets;
  targets.push_back(perLayerTarget(
      "naive_10x", "best ≥ 10× the naive direct convolution on every VGG-16 layer (issue 6)", rows,
      allLayers, ratioValue("speedup_over_naive"),
      [](double v) { return v >= kNaiveSpeedupTarget; }, "×"));
  targets.push_back(perLayerTarget(
      "faster_than_clblast", "best faster than CLBlast im2col + SGEMM on every layer (issue 6)",
      rows, allLayers, ratioValue("speedup_over_clblast"), [](double v) { return v > 1.0; }, "×"));
  targets.push_back(perLayerTarget(
      "memory_3_6x_every_layer",
      "im2col + GEMM memory ≥ 3.6× the best variant's inference memory on every layer "
      "(issue 8's reading)", rows,
      allLayers, ratioValue("memory_im2col_over_best"),
      [](double v) { return v >= kMemoryRatioTarget; }, "×"));
  {
    Target t{"memory_3_6x_mean",
             "im2col + GEMM memory ≥ 3.6× the best variant's inference memory, mean over the "
             "13 layers (the paper's figure, issue 6)",
             "", "", Json::object()};
    const size_t measured = memoryRatios.size();
    const double mean = measured ? meanRatio / static_cast<double>(measured) : 0;
    t.values["mean"] = measured ? Json(mean) : Json(nullptr);
    t.values["layers"] = measured;
    if (measured == 0) {
      t.status = "INCOMPLETE";
      t.detail = "no layer with both figures";
    } else {
      const bool holds = mean >= kMemoryRatioTarget;
      t.status = measured < allLayers.size() ? "INCOMPLETE" : holds ? "MET" : "NOT MET";
      t.detail = fmt::format("mean {:.2f}× over {} of {} layers ({} 3.6×)", mean, measured,
                             allLayers.size(), holds ? "≥" : "<");
    }
    targets.push_back(t);
  }
  targets.push_back(perLayerTarget(
      "pytorch_0_9x",
      "best ≥ 0.9× PyTorch (time ratio PyTorch / best) on every layer from conv2_1 on (issue 8)",
      rows, fromConv21, ratioValue("speedup_over_pytorch"),
      [](double v) { return v >= kTorchRatioTarget; }, "×"));
  targets.push_back(perLayerTarget(
      "gflops_200", "best ≥ 200 GFLOP/s per inference on conv3_1 and conv4_2 (issue 8)", rows,
      gflopsLayers,
      [](const Json& row) -> std::optional<double> {
        if (!row.contains("best") || !row["best"].contains("gflops_per_s")) return std::nullopt;
        return row["best"]["gflops_per_s"].get<double>();
      },
      [](double v) { return v >= kGflopsTarget; }, " GFLOP/s"));
  {
    Target t{"sum_below_pytorch",
             "sum of the 13 layers' per-inference times (every per-inference kernel, padding "
             "included) below PyTorch's sum (issue 8)",
             "", "", Json::object()};
    std::set<std::string> present;
    double best = 0, torch = 0;
    size_t both = 0;
    for (const LayerRow& row : rows) {
      if (!allLayers.count(row.layer.name)) continue;
      present.insert(row.layer.name);
      std::optional<double> b = timeOf(row.json, "best"), p = timeOf(row.json, "pytorch");
      if (!b || !p) continue;
      best += *b;
      torch += *p;
      ++both;
    }
    t.values["best_ms"] = best;
    t.values["pytorch_ms"] = torch;
    t.values["layers_with_both"] = both;
    const bool complete = both == allLayers.size();
    t.status = !complete ? "INCOMPLETE" : best < torch ? "MET" : "NOT MET";
    t.detail = fmt::format(
        "best {:.2f} ms vs PyTorch {:.2f} ms, summed over the {} of 13 "
        "layers that have both figures ({} in this run)",
        best, torch, both, present.size());
    targets.push_back(t);
  }
  {
    // Judged on CPU time, as bench/weft_overhead is: every layer's median and the mean over
    // every variant under 10 ms. The wall figure is kept beside it.
    Target t{"weft_ms_10",
             "weft's own time per variant < 10 ms (issue 6; details.weftCpuMs: per-layer median "
             "and mean over all variants)",
             "", "", Json::object()};
    std::vector<double> medians;
    double sum = 0, worstWallMedian = 0;
    int variants = 0;
    for (const LayerRow& row : rows) {
      const Json& ex = row.json["exploration"];
      const Json& cpu = ex["weft_cpu_ms_per_variant"];
      if (!ex["weft_ms_per_variant"].is_null()) {
        worstWallMedian =
            std::max(worstWallMedian, ex["weft_ms_per_variant"]["median"].get<double>());
      }
      if (cpu.is_null()) continue;
      t.values[row.layer.name] = cpu;
      medians.push_back(cpu["median"].get<double>());
      sum += cpu["sum"].get<double>();
      variants += cpu["variants"].get<int>();
    }
    if (medians.empty()) {
      t.status = "INCOMPLETE";
      t.detail = "unknown: no variant records weftCpuMs in its details";
    } else {
      const double worst = *std::max_element(medians.begin(), medians.end());
      const double mean = sum / variants;
      t.status = worst < kWeftMsTarget && mean < kWeftMsTarget
                     ? (medians.size() < rows.size() ? "INCOMPLETE" : "MET")
                     : "NOT MET";
      t.detail = fmt::format(
          "CPU: largest per-layer median {:.3f} ms, mean {:.3f} ms over {} variants of {} of {} "
          "layers (wall, which counts the CPU the pre-builds took beside it: largest per-layer "
          "median {:.3f} ms)",
          worst, mean, variants, medians.size(), rows.size(), worstWallMedian);
    }
    targets.push_back(t);
  }
  targets.push_back(perLayerTarget(
      "within_1000_samples",
      "a variant within 10 % of the best found within the first 1000 samples (issue 8)", rows,
      allLayers,
      [](const Json& row) -> std::optional<double> {
        const Json& n = row["exploration"]["samples_to_within_10pct"];
        if (n.is_null()) return std::nullopt;
        return n.get<double>();
      },
      [](double v) { return v <= kSampleBudget; }, " samples"));
  {
    Target t{"verified", "every measured output verified (best variants and baselines)", "", "",
             Json::object()};
    t.status = ok ? "MET" : "NOT MET";
    t.detail = ok ? "all outputs within tolerance" : "an output was wrong or a measurement failed";
    targets.push_back(t);
  }

  if (options.recordPeers) {
    recordPeerTimes(rows, options.dbs, runningOn,
                    torchReport.is_object()
                        ? "PyTorch " + torchReport.value("torch_version", std::string()) +
                              " conv2d (" + std::to_string(options.settings.threads) + " threads)"
                        : std::string("PyTorch (not run)"));
  }

  Json report;
  report["benchmark"] = "table3";
  report["description"] =
      "Table 3 (issues 6 and 8): per layer, the fastest explored variant (re-measured on fresh "
      "data, per-inference and preparation times apart) against the naive direct convolution, "
      "CLBlast im2col + SGEMM and PyTorch conv2d, measured in one run; see bench/table3.cpp and "
      "bench/README.md for what every figure means";
  report["weft_version"] = WEFT_VERSION;
  report["date"] = utcNow();
  report["command"] = options.commandLine;
  report["device"] = deviceJson(device, profile);
  report["clblast_version"] = clblastVersion();
  if (!torchReport.is_null()) {
    report["torch"] = {{"version", torchReport.value("torch_version", "")},
                       {"mkldnn", torchReport.value("mkldnn", false)},
                       {"threads", torchReport.value("threads", 0)},
                       {"python", torchReport.value("python", "")}};
  }
  report["settings"] = {{"min_repeats", options.settings.minRepeats},
                        {"min_seconds", options.settings.minSeconds},
                        {"samples", options.settings.samples},
                        {"full_check_flops", options.settings.fullCheckFlops},
                        {"seed", options.settings.seed},
                        {"pick", "fastest"}};
  report["databases"] = explored.databases;
  Json layerJson = Json::array();
  for (const LayerRow& row : rows) layerJson.push_back(row.json);
  report["layers"] = layerJson;
  report["sums"] = sums;
  Json targetList = Json::array();
  for (const Target& t : targets) targetList.push_back(targetJson(t));
  report["targets"] = targetList;

  const std::string table = markdownTable(report);
  std::string targetText;
  for (const Target& t : targets) {
    targetText += fmt::format("- **{}** — {}: {}\n", t.status, t.description, t.detail);
  }
  std::string boundText;
  if (!boundRatios.empty()) {
    std::string misses;
    for (const std::string& m : boundMisses) misses += (misses.empty() ? "" : ", ") + m;
    boundText = fmt::format(
        "\nAttainable (not a target): im2col + GEMM memory / the direct-convolution bound (input "
        "+ output + weights + bias) is ≥ 3.6× on {} of {} layers{}; mean {:.2f}× ({} 3.6×). A "
        "padded copy of the input or a second copy of the weights held at inference time "
        "lowers it further.\n",
        boundRatios.size() - boundMisses.size(), boundRatios.size(),
        misses.empty() ? std::string() : " (below: " + misses + ")", boundMean,
        boundMean >= kMemoryRatioTarget ? "≥" : "<");
  }
  std::string md;
  md += fmt::format(
      "Table 3 on {} ({}), weft {}, {}; CLBlast {}, PyTorch {} ({} threads).\n\n", device.name,
      device.platformName, WEFT_VERSION, report["date"].get<std::string>(), clblastVersion(),
      report.contains("torch") ? report["torch"]["version"].get<std::string>() : std::string("—"),
      options.settings.threads);
  md += table;
  md +=
      "\nbest: the fastest explored variant, re-measured here; ms = median per-inference "
      "time (sum of its kernels' cl_event times without the weight re-layout, padding "
      "included); prep. = the re-layout kernels, run once at create time. × X = X's time / "
      "best's. Memory in MB (10⁶ bytes): best = the buffers the variant holds at inference "
      "time (input, biases, re-laid weights, padded copy if padding is a kernel of its own, "
      "temporaries, output; not the original weights, which only the re-layout reads and "
      "an application releases after PREFIX_prepare) / bound = what any direct convolution "
      "holds: input + output + weights + bias / im2col = input + im2col matrix + weights + "
      "bias + output + CLBlast's GEMM temporary; ratio = im2col / best (im2col / bound: the "
      "best ratio a direct convolution can reach on the layer); 3.6× needs = im2col / 3.6, the "
      "memory a variant may hold to meet 3.6×. samples to 10 %: samples in "
      "measuring order until the first within 10 % of the best recorded (of the samples "
      "explored).\n\nExploration (from the databases; recorded s = Σ details.childSeconds + Σ "
      "details.prebuild.waitedSeconds, the time the rows account for; rows' time span = last "
      "row written − first; weft CPU ms = details.weftCpuMs, weft's own work per variant in CPU "
      "time, explorer and generator; wall = details.weftMs):\n\n" +
      explorationTable(report) + "\nTargets:\n\n" + targetText + boundText + "\nReproduce: `" +
      options.commandLine + "`\n";

  const std::filesystem::path jsonPath = writeResultsJson(
      report, options.outJson, std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / "table3.json");
  const std::filesystem::path mdPath =
      options.outMarkdown.empty() ? std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / "table3.md"
                                  : std::filesystem::path(options.outMarkdown);
  if (mdPath.has_parent_path()) std::filesystem::create_directories(mdPath.parent_path());
  std::ofstream mdFile(mdPath);
  mdFile << md;
  if (!mdFile) throw std::runtime_error("cannot write " + mdPath.string());

  std::printf("%s\n", md.c_str());
  std::printf("targets:\n");
  for (const Target& t : targets) {
    std::printf("  %-11s %-24s %s\n", t.status.c_str(), t.id.c_str(), t.detail.c_str());
  }
  std::printf("written to %s and %s\n", jsonPath.string().c_str(), mdPath.string().c_str());
  return ok ? 0 : 1;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  for (int i = 0; i < argc; ++i) {
    options.commandLine += (i ? " " : "") + std::string(argv[i]);
  }
  CLI::App app{
      "Table 3: the fastest explored variant of each VGG-16 layer in the results databases, "
      "rebuilt,\nverified and re-measured against the naive direct convolution, CLBlast im2col "
      "+ SGEMM and\nPyTorch's conv2d in one run; ratios and the issues' targets (see "
      "bench/README.md)."};
  app.add_option("--db", options.dbs, "a results database written by weft explore (repeatable)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--layer", options.layers,
                 "layers: conv3_1, vgg16:N or C,H,W,M,K,stride,pad (default: every VGG-16 layer "
                 "in the databases)");
  app.add_option("--device", options.device,
                 "OpenCL device: an index, gpu, cpu, or part of a device or platform name "
                 "(default: the first GPU, else PoCL)");
  app.add_option("--db-device", options.dbDevice,
                 "use the variants explored on this device fingerprint (default: the only one, "
                 "else this run's device)");
  app.add_option("--out", options.outJson,
                 "the JSON results file (default: " WEFT_BENCH_RESULTS_DIR "/table3.json)");
  app.add_option("--markdown", options.outMarkdown,
                 "the markdown table (default: " WEFT_BENCH_RESULTS_DIR "/table3.md)");
  app.add_flag("!--no-record-peers", options.recordPeers,
               "do not record PyTorch's and CLBlast's times in the database that holds each "
               "layer's variants (recorded by default, for the plot of `weft report`, when the "
               "variants were explored on the device measured here)");
  app.add_option("--retime", options.retime,
                 "re-time the N variants with the fastest recorded medians of each layer (and "
                 "the N fastest recorded of each padding choice of the vector family) in this "
                 "run and report the fastest of them as measured here (default 5)")
      ->check(CLI::Range(1, 1000));
  weft::bench::addBaselineOptions(app, options.settings, options.naive, options.clblast,
                                  options.torch);
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_table3",
                                  [&] { return weft::bench::run(options); });
}
