// weft's own time per explored variant (issue 6, "exploration cost": under 10 ms per variant,
// everything the explorer does except the OpenCL build and the device runs).
//
// For each VGG-16 layer (by default the 9 distinct shapes; --all-layers: all 13) this runs the
// explorer's own code path up to the OpenCL build, through the explorer's functions:
//   - sampling: the layer's target as `weft explore --layer` builds it (layerTargetStructures:
//     conv-direct's (v, unroll) structures and the register-blocked vector family, rewritten by
//     the strategies), then sampleTarget (spaces of every structure with their hardware
//     constraints for the device profile, exact counts, uniform samples re-checked in C++);
//     its time is shared equally by the points drawn;
//   - per variant: explore::runExploration itself, in the explorer's process layout (explorer
//     process, long-lived generator process, one measuring child per variant forked by the
//     generator), with MeasurementOptions::stopAfterGeneration: the measuring child ends without
//     calling OpenCL. So every step the explorer takes for a variant is timed (skipping, cost
//     order, the running marker, the request, generation in the generator, the fork of the
//     measuring child, its messages, the database row) except the build and the runs. Per
//     variant: the explorer's thread CPU from one progress update to the next, the generator's
//     thread CPU for the request (generation, fork, messages: the row's details), and apart the
//     measuring child's CPU (here: a process that only starts, reports and exits);
//   - --in-process: generation (explore::generateVariant, the generator's function) of every
//     point in this process instead, no explorer (for profiling and for --dump).
// Per variant: thread CPU time (CLOCK_THREAD_CPUTIME_ID; the machine is shared and loaded, CPU
// time is the robust figure) and wall time of sampling (amortised), generation and their sum;
// median, mean, p90 and max per layer and over all layers, and each layer's slowest variants.
// The target is judged on the CPU time of the total per variant (sampling + explorer +
// generator; median and mean both under 10 ms: MET).
//
// The 1-minute load average at the start and end is recorded with the figures.
// --compare also times the same points' generation in a child forked per variant (the explorer's
// layout before the generator process) and in this process, in the same run.
// --sampling-only stops after sampling (its times on stderr, no results written: profiling).
// --dump DIR (implies --in-process) writes each variant's OpenCL source to
// DIR/<layer>_<index>_<hash>.cl and its recorded parameters to DIR/<layer>_<index>_parameters.json,
// so that two builds of weft can be compared byte for byte on the same fixed-seed points.
// --only I J ... (in process) generates just those sample indices, e.g. one slow variant under
// valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*generateVariant*'.
//
//   build/bench/weft_bench_weft_overhead [--samples N] [--seed S] [--profile P] [--layer SPEC]...
//       [--all-layers] [--in-process] [--compare] [--sampling-only] [--dump DIR] [--only I ...]
//       [--out FILE.json]
// Results: bench/results/weft_overhead.json and weft_overhead.md (next to --out).
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "explore/explorer.h"
#include "explore/measurement.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif

namespace weft::bench {

namespace {

using Json = nlohmann::ordered_json;

constexpr double kTargetMs = 10.0;

struct Options {
  std::string out;
  std::vector<std::string> layers;
  bool allLayers = false;
  size_t samples = 100;
  uint64_t seed = 1;
  std::string profile = "pocl-cpu";
  bool inProcess = false;
  bool samplingOnly = false;
  bool compare = false;
  std::string dump;
  std::vector<size_t> only;  // --only: generate just these sample indices (profiling)
};

// Wall and thread CPU time, in milliseconds since construction.
struct Stopwatch {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = threadCpuMs();
  static double threadCpuMs() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
  }
  double wallMs() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall)
        .count();
  }
  double cpuMs() const { return threadCpuMs() - cpu; }
};

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// One variant's times (milliseconds) and outcome.
struct VariantTimes {
  double samplingWall = 0, samplingCpu = 0;
  // Explorer layout: the explorer's and the generator's CPU added; wall = the row's weftMs.
  // In process: the generation alone.
  double generationWall = 0, generationCpu = 0;
  double explorerCpu = 0;   // the explorer process between two progress updates
  double generatorCpu = 0;  // the generator process for the request
  double generateCpu = 0;   // of which generation proper (generateVariant)
  double forkCpu = 0;       // of which handing the variant to the launcher
  double childCpu = 0;      // the measuring child (start, report, exit), apart
  double generateFaults = 0;  // minor page faults of the generator while generating
  bool ok = false;
  std::string family;
  std::string parameters;
  size_t index = 0;
  double totalWall() const { return samplingWall + generationWall; }
  double totalCpu() const { return samplingCpu + generationCpu; }
};

// The generator's step, in this process (--in-process, --dump): explore::generateVariant on the
// point, as the explorer's generator calls it (the workload's expected output given, so no
// interpreter run).
bool generateInProcess(const explore::Preparation& prep, size_t index,
                       const std::string& dumpPath) {
  const ArithBinding binding = prep.spaceOf(index).binding(prep.points[index]);
  const std::string parameters = prep.parametersOf(index);
  if (!dumpPath.empty()) {
    std::ofstream(dumpPath + "_parameters.json", std::ios::binary) << parameters << "\n";
  }
  explore::MeasurementOptions options;
  options.constantInputs = prep.target.constantInputs;
  explore::GeneratedVariant variant =
      explore::generateVariant(prep.programOf(index), binding, prep.inputs, options);
  if (!dumpPath.empty()) {
    if (variant.program) {
      std::ofstream file(dumpPath + "_" + variant.measurement.sourceHash + ".cl",
                         std::ios::binary);
      file << variant.program->source;
    } else {
      std::ofstream(dumpPath + "_error.txt", std::ios::binary)
          << variant.measurement.message << "\n";
    }
  }
  return variant.program.has_value();
}

// Generation in a child forked from this process per variant: the explorer's layout before the
// generator process (--compare). The child's thread CPU and wall milliseconds come back.
std::pair<double, double> generateInForkedChild(const explore::Preparation& prep, size_t index) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    Stopwatch watch;
    generateInProcess(prep, index, "");
    const double times[2] = {watch.cpuMs(), watch.wallMs()};
    const ssize_t written = write(fds[1], times, sizeof times);
    _exit(written == static_cast<ssize_t>(sizeof times) ? 0 : 1);
  }
  close(fds[1]);
  double times[2] = {0, 0};
  const ssize_t got = read(fds[0], times, sizeof times);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof times)) times[0] = times[1] = 0;
  return {times[0], times[1]};
}

// Every point of `prep` through explore::runExploration with stopAfterGeneration (see the file
// comment): one VariantTimes per variant, in measuring order, sampling left to the caller.
std::vector<VariantTimes> runThroughExplorer(const explore::Preparation& prep,
                                             const std::filesystem::path& db) {
  explore::ExploreOptions options;
  options.samples = prep.points.size();
  options.db = db;
  options.measurement.stopAfterGeneration = true;
  std::vector<VariantTimes> variants;
  double lastCpu = Stopwatch::threadCpuMs();
  options.progress = [&](const explore::ProgressUpdate& update) {
    const double now = Stopwatch::threadCpuMs();
    if (update.last) {
      VariantTimes v;
      v.explorerCpu = now - lastCpu;
      const Json details = Json::parse(update.last->details, nullptr, false);
      if (details.is_object()) {
        v.generationWall = details.value("weftMs", 0.0);
        if (details.contains("generator")) {
          const Json& g = details["generator"];
          v.generatorCpu = g.value("cpuMs", 0.0);
          v.generateCpu = g.value("generateCpuMs", 0.0);
          v.forkCpu = g.value("forkCpuMs", 0.0);
          v.childCpu = g.value("childCpuMs", 0.0);
          v.generateFaults = g.value("generateMinorFaults", 0.0);
        }
      }
      v.generationCpu = v.explorerCpu + v.generatorCpu;
      v.ok = update.last->status == explore::VariantStatus::Ok;
      v.parameters = update.last->key.parameters;
      variants.push_back(v);
    }
    lastCpu = Stopwatch::threadCpuMs();  // the callback's own work is the bench's, not weft's
  };
  explore::runExploration(prep, options);
  return variants;
}

struct Summary {
  double median = 0, mean = 0, p90 = 0, max = 0;
};

Summary summarize(std::vector<double> values) {
  Summary s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(n);
  s.p90 = values[std::min(n - 1, static_cast<size_t>(0.9 * static_cast<double>(n)))];
  s.max = values.back();
  return s;
}

Json summaryJson(const Summary& s) {
  return {{"median", s.median}, {"mean", s.mean}, {"p90", s.p90}, {"max", s.max}};
}

// Every figure of a set of variants: {sampling, generation, total} × {wall, cpu}.
Json figures(const std::vector<VariantTimes>& variants) {
  auto column = [&](auto get) {
    std::vector<double> out;
    for (const VariantTimes& v : variants) out.push_back(get(v));
    return summaryJson(summarize(out));
  };
  Json out;
  out["sampling"] = {{"wall_ms", column([](const VariantTimes& v) { return v.samplingWall; })},
                     {"cpu_ms", column([](const VariantTimes& v) { return v.samplingCpu; })}};
  out["generation"] = {
      {"wall_ms", column([](const VariantTimes& v) { return v.generationWall; })},
      {"cpu_ms", column([](const VariantTimes& v) { return v.generationCpu; })}};
  out["total"] = {{"wall_ms", column([](const VariantTimes& v) { return v.totalWall(); })},
                  {"cpu_ms", column([](const VariantTimes& v) { return v.totalCpu(); })}};
  // The parts of generation (cpu_ms): the explorer process, the generator (of which
  // generateVariant and the fork), and apart the measuring child process.
  out["parts_cpu_ms"] = {
      {"explorer", column([](const VariantTimes& v) { return v.explorerCpu; })},
      {"generator", column([](const VariantTimes& v) { return v.generatorCpu; })},
      {"generate", column([](const VariantTimes& v) { return v.generateCpu; })},
      {"fork", column([](const VariantTimes& v) { return v.forkCpu; })},
      {"measuring_child", column([](const VariantTimes& v) { return v.childCpu; })}};
  out["generator_minor_faults"] = column([](const VariantTimes& v) { return v.generateFaults; });
  return out;
}

std::vector<ConvLayer> chosenLayers(const Options& options) {
  std::vector<ConvLayer> layers;
  if (!options.layers.empty()) {
    for (const std::string& spec : options.layers) layers.push_back(parseConvLayer(spec));
    return layers;
  }
  std::set<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>> shapes;
  for (const ConvLayer& layer : vgg16Layers()) {
    auto shape = std::make_tuple(layer.C, layer.H, layer.W, layer.M, layer.K, layer.stride,
                                 layer.pad);
    if (!options.allLayers && !shapes.insert(shape).second) continue;
    layers.push_back(layer);
  }
  return layers;
}

std::string fmtMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, ms < 10 ? "%.2f" : "%.1f", ms);
  return text;
}

// The 1-minute load average (the machine is shared: CPU times grow when it is loaded).
double loadAverage() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

int run(const Options& options) {
  const double loadAtStart = loadAverage();
  const host::DeviceProfile profile = host::loadProfile(options.profile);
  if (!options.dump.empty()) std::filesystem::create_directories(options.dump);
  Json layerRows = Json::array();
  std::vector<VariantTimes> all;
  for (const ConvLayer& layer : chosenLayers(options)) {
    // Sampling: the target as `weft explore --layer` builds it, then sampleTarget.
    Stopwatch targetWatch;
    explore::ExploreTarget target =
        explore::layerTargetStructures(layer, {1, 2, 4, 8, 16}, {0, 1}, &profile);
    const double targetWall = targetWatch.wallMs();
    const double targetCpu = targetWatch.cpuMs();
    Stopwatch sampleWatch;
    explore::SampledTarget sampled =
        explore::sampleTarget(target, profile, options.samples, options.seed);
    const double sampleWall = sampleWatch.wallMs();
    const double sampleCpu = sampleWatch.cpuMs();

    explore::Preparation prep;
    prep.target = target;
    prep.inputs.sizes = target.sizes;
    prep.spaces = std::move(sampled.spaces);
    prep.spaceStructure = std::move(sampled.spaceStructure);
    prep.pointSpace = std::move(sampled.pointSpace);
    prep.points = std::move(sampled.points);
    const size_t n = prep.points.size();
    std::fprintf(stderr, "%s: %zu structures, %zu spaces, %zu points; target %.0f ms, sampling "
                 "%.0f ms (cpu %.0f ms); %s\n",
                 layer.name.c_str(), target.structures.size(), prep.spaces.size(), n, targetWall,
                 sampleWall, sampleCpu, sampled.method.c_str());
    if (n == 0 || options.samplingOnly) continue;

    std::vector<VariantTimes> variants;
    std::map<std::string, int> families;
    int failed = 0;
    double explorerSetupCpu = 0;  // runExploration's work before the first variant and after
    const bool inProcess = options.inProcess || !options.dump.empty();
    prep.inputs.expected = std::vector<float>{};  // no verification: nothing runs
    if (inProcess) {
      for (size_t i = 0; i < n; ++i) {
        if (!options.only.empty() &&
            std::find(options.only.begin(), options.only.end(), i) == options.only.end()) {
          continue;
        }
        std::string dumpPath;
        if (!options.dump.empty()) {
          char index[24];
          std::snprintf(index, sizeof index, "%03zu", i);
          dumpPath = options.dump + "/" + layer.name + "_" + index;
        }
        Stopwatch watch;
        VariantTimes v;
        v.ok = generateInProcess(prep, i, dumpPath);
        v.generationWall = watch.wallMs();
        v.generationCpu = v.generateCpu = watch.cpuMs();
        v.parameters = prep.parametersOf(i);
        v.index = i;
        variants.push_back(v);
      }
    } else {
      // The explorer's layout (see the file comment), on a scratch database.
      prep.device = profile;
      prep.device.fingerprint = "weft_overhead/" + profile.name;
      const std::filesystem::path db = std::filesystem::temp_directory_path() /
                                       ("weft_overhead_" + std::to_string(getpid()) + ".db");
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
      Stopwatch explorerWatch;
      variants = runThroughExplorer(prep, db);
      explorerSetupCpu = explorerWatch.cpuMs();
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
      std::map<std::string, size_t> indexOf;
      for (size_t i = 0; i < n; ++i) indexOf[prep.parametersOf(i)] = i;
      for (VariantTimes& v : variants) {
        explorerSetupCpu -= v.explorerCpu;
        v.index = indexOf.at(v.parameters);
      }
      // The explorer's work outside the variants (skipping, the cost model's order), shared.
      explorerSetupCpu = std::max(explorerSetupCpu, 0.0);
      for (VariantTimes& v : variants) {
        const double share = explorerSetupCpu / static_cast<double>(variants.size());
        v.explorerCpu += share;
        v.generationCpu += share;
      }
    }
    // --compare: the same points' generation in the layout before the generator process (a
    // child forked from this process per variant) and in this process, after the explorer run.
    Json compare;
    if (options.compare && !inProcess) {
      std::vector<double> forked, local;
      for (size_t i = 0; i < n; ++i) forked.push_back(generateInForkedChild(prep, i).first);
      for (size_t i = 0; i < n; ++i) {
        Stopwatch watch;
        generateInProcess(prep, i, "");
        local.push_back(watch.cpuMs());
      }
      std::vector<double> explorer;
      for (const VariantTimes& v : variants) explorer.push_back(v.generationCpu);
      compare = {{"explorer_layout", summaryJson(summarize(explorer))},
                 {"forked_child_per_variant", summaryJson(summarize(forked))},
                 {"in_process", summaryJson(summarize(local))}};
    }
    for (VariantTimes& v : variants) {
      v.samplingWall = (targetWall + sampleWall) / static_cast<double>(n);
      v.samplingCpu = (targetCpu + sampleCpu) / static_cast<double>(n);
      v.family =
          target.structures.at(prep.spaceStructure.at(prep.pointSpace.at(v.index))).family;
      ++families[v.family];
      if (!v.ok) ++failed;
    }
    // The slowest variants (generation CPU), to see what the tail is.
    std::vector<VariantTimes> slowest = variants;
    std::sort(slowest.begin(), slowest.end(), [](const VariantTimes& x, const VariantTimes& y) {
      return x.generationCpu > y.generationCpu;
    });
    slowest.resize(std::min<size_t>(slowest.size(), 5));
    Json slowRows = Json::array();
    for (const VariantTimes& v : slowest) {
      slowRows.push_back({{"index", v.index},
                          {"parameters", Json::parse(v.parameters, nullptr, false)},
                          {"generation_cpu_ms", v.generationCpu},
                          {"generate_cpu_ms", v.generateCpu}});
    }
    Json row;
    row["layer"] = layer.name;
    row["shape"] = layer.describe();
    row["structures"] = target.structures.size();
    row["spaces"] = prep.spaces.size();
    row["points"] = n;
    row["points_by_family"] = families;
    row["generation_failed"] = failed;
    row["target_ms"] = {{"wall", targetWall}, {"cpu", targetCpu}};
    row["sample_target_ms"] = {{"wall", sampleWall}, {"cpu", sampleCpu}};
    row["sampling_method"] = sampled.method;
    row["explorer_setup_cpu_ms"] = explorerSetupCpu;
    row["per_variant"] = figures(variants);
    row["slowest"] = slowRows;
    if (!compare.is_null()) row["compare_generation_cpu_ms"] = compare;
    const Json& g = row["per_variant"]["generation"]["cpu_ms"];
    std::fprintf(stderr, "%s: generation cpu median %.1f ms, mean %.1f, p90 %.1f, max %.1f; "
                 "sampling %.1f ms/variant\n",
                 layer.name.c_str(), g["median"].get<double>(), g["mean"].get<double>(),
                 g["p90"].get<double>(), g["max"].get<double>(), variants.front().samplingCpu);
    layerRows.push_back(row);
    all.insert(all.end(), variants.begin(), variants.end());
  }

  if (options.samplingOnly) return 0;
  Json overall = figures(all);
  const double medianCpu = overall["total"]["cpu_ms"]["median"].get<double>();
  const double meanCpu = overall["total"]["cpu_ms"]["mean"].get<double>();
  const bool met = !all.empty() && medianCpu < kTargetMs && meanCpu < kTargetMs;
  const std::string verdict = met ? "MET" : "NOT MET";

  Json report;
  report["benchmark"] = "weft_overhead";
  const bool inProcess = options.inProcess || !options.dump.empty();
  const std::string layout =
      inProcess ? "generation (explore::generateVariant) in this process, no explorer"
                : "explore::runExploration with stopAfterGeneration: explorer process, "
                  "long-lived generator process generating each variant and handing it "
                  "serialised to a small launcher process (forked from the explorer before the "
                  "generator), which forks the measuring child per variant (ending before any "
                  "OpenCL call); "
                  "generation = the explorer's CPU per variant + the generator's";
  report["description"] =
      "weft's own time per explored variant (issue 6): sampling (layerTargetStructures + "
      "sampleTarget, shared equally by the points) and per variant everything the explorer "
      "does but the OpenCL build and runs; wall and thread CPU milliseconds; " + layout;
  report["date"] = utcNow();
  report["profile"] = options.profile;
  report["samples_per_layer"] = options.samples;
  report["seed"] = options.seed;
  report["layout"] = inProcess ? "in-process" : "explorer";
  report["target_ms"] = kTargetMs;
  report["target"] = "total cpu per variant (median and mean) < 10 ms: " + verdict;
  report["variants"] = all.size();
  report["load_average"] = {{"start", loadAtStart}, {"end", loadAverage()}};
  report["overall"] = overall;
  report["layers"] = layerRows;

  std::string out = options.out.empty()
                        ? std::string(WEFT_BENCH_RESULTS_DIR) + "/weft_overhead.json"
                        : options.out;
  if (std::filesystem::path(out).has_parent_path()) {
    std::filesystem::create_directories(std::filesystem::path(out).parent_path());
  }
  std::ofstream jsonFile(out);
  jsonFile << report.dump(2) << "\n";
  if (!jsonFile) throw std::runtime_error("cannot write " + out);

  // The markdown table.
  std::string md = "# weft's own time per variant (issue 6)\n\n";
  md += "Generated by `weft_bench_weft_overhead` on " + report["date"].get<std::string>() +
        ": " + std::to_string(options.samples) + " samples per layer, seed " +
        std::to_string(options.seed) + ", profile " + options.profile + "; " + layout +
        ". Milliseconds per variant, thread CPU time (wall in parentheses). Sampling = the "
        "layer's structures rewritten + `sampleTarget`, divided by the points drawn. Load "
        "average (1 min) " +
        fmtMs(report["load_average"]["start"].get<double>()) + " at the start, " +
        fmtMs(report["load_average"]["end"].get<double>()) + " at the end, on " +
        std::to_string(std::thread::hardware_concurrency()) + " hardware threads.\n\n";
  md += "**target < 10 ms per variant: " + verdict + "** (total CPU median " + fmtMs(medianCpu) +
        " ms, mean " + fmtMs(meanCpu) + " ms over " + std::to_string(all.size()) +
        " variants)\n\n";
  md += "| layer | points | sampling | generation median | generation mean | generation p90 | "
        "generation max | total median | total mean |\n|---|---|---|---|---|---|---|---|---|\n";
  auto cell = [](const Json& part, const char* stat) {
    return fmtMs(part["cpu_ms"][stat].get<double>()) + " (" +
           fmtMs(part["wall_ms"][stat].get<double>()) + ")";
  };
  auto line = [&](const std::string& name, size_t points, const Json& f) {
    md += "| " + name + " | " + std::to_string(points) + " | " + cell(f["sampling"], "mean") +
          " | " + cell(f["generation"], "median") + " | " + cell(f["generation"], "mean") +
          " | " + cell(f["generation"], "p90") + " | " + cell(f["generation"], "max") + " | " +
          cell(f["total"], "median") + " | " + cell(f["total"], "mean") + " |\n";
  };
  for (const Json& row : layerRows) {
    line(row["layer"].get<std::string>(), row["points"].get<size_t>(), row["per_variant"]);
  }
  line("all", all.size(), overall);
  if (!inProcess) {
    md += "\nWhere the generation time goes (CPU ms, mean / median): the explorer process "
          "(skipping, cost order, marker, request, messages, database row; its work before the "
          "first variant shared out), the generator (of which generateVariant and \"fork\": "
          "handing the serialised variant to the launcher, which forks the measuring child), "
          "and apart, not in the totals above, the measuring child's own "
          "CPU in this run (a process that starts, reports and exits: what a child costs "
          "besides its build and runs), and the generator's minor page faults while generating "
          "(mean / median; copy-on-write after a fork when the generator forked its children).\n\n| layer | explorer | "
          "generator | of which generate "
          "| of which fork | measuring child | generator page faults while generating |\n"
          "|---|---|---|---|---|---|---|\n";
    auto part = [](const Json& f, const char* name) {
      return fmtMs(f["parts_cpu_ms"][name]["mean"].get<double>()) + " / " +
             fmtMs(f["parts_cpu_ms"][name]["median"].get<double>());
    };
    auto partsLine = [&](const std::string& name, const Json& f) {
      md += "| " + name + " | " + part(f, "explorer") + " | " + part(f, "generator") + " | " +
            part(f, "generate") + " | " + part(f, "fork") + " | " + part(f, "measuring_child") +
            " | " + std::to_string(std::lround(f["generator_minor_faults"]["mean"].get<double>())) +
            " / " +
            std::to_string(std::lround(f["generator_minor_faults"]["median"].get<double>())) +
            " |\n";
    };
    for (const Json& row : layerRows) partsLine(row["layer"].get<std::string>(), row["per_variant"]);
    partsLine("all", overall);
  }
  if (options.compare && !inProcess) {
    md += "\nThe same points' generation CPU (ms, mean / median / max) in three layouts in this "
          "run: the explorer's (explorer + generator process, as above: bookkeeping and fork "
          "included), a child forked from this process per variant generating it (the layout "
          "before the generator process; the child's CPU only, without the parent's fork and "
          "bookkeeping), and this process alone (generateVariant only).\n\n| layer | explorer layout | forked "
          "child per variant | in process |\n|---|---|---|---|\n";
    auto stats = [](const Json& s) {
      return fmtMs(s["mean"].get<double>()) + " / " + fmtMs(s["median"].get<double>()) + " / " +
             fmtMs(s["max"].get<double>());
    };
    for (const Json& row : layerRows) {
      if (!row.contains("compare_generation_cpu_ms")) continue;
      const Json& c = row["compare_generation_cpu_ms"];
      md += "| " + row["layer"].get<std::string>() + " | " + stats(c["explorer_layout"]) + " | " +
            stats(c["forked_child_per_variant"]) + " | " + stats(c["in_process"]) + " |\n";
    }
  }
  md += "\nSlowest variants per layer (generation CPU ms):\n\n";
  for (const Json& row : layerRows) {
    md += "- " + row["layer"].get<std::string>() + ":";
    for (const Json& slow : row["slowest"]) {
      md += " " + fmtMs(slow["generation_cpu_ms"].get<double>()) + " `" +
            slow["parameters"].dump() + "`;";
    }
    md += "\n";
  }
  std::filesystem::path mdPath = std::filesystem::path(out).replace_extension(".md");
  std::ofstream mdFile(mdPath);
  mdFile << md;
  if (!mdFile) throw std::runtime_error("cannot write " + mdPath.string());
  std::fputs(md.c_str(), stdout);
  std::fprintf(stderr, "wrote %s and %s\n", out.c_str(), mdPath.c_str());
  return 0;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app("weft's own time per explored variant on VGG-16's layers (issue 6)");
  app.add_option("--out", options.out,
                 "the JSON file (default bench/results/weft_overhead.json; the .md beside it)");
  app.add_option("--layer", options.layers,
                 "vgg16:N or C,H,W,M,K,stride,pad (default: VGG-16's 9 distinct shapes)");
  app.add_flag("--all-layers", options.allLayers, "all 13 VGG-16 layers, repeated shapes too");
  app.add_option("--samples", options.samples, "points per layer (default 100)");
  app.add_option("--seed", options.seed, "the sampler's seed (default 1)");
  app.add_option("--profile", options.profile, "the device profile (default pocl-cpu)");
  app.add_flag("--in-process", options.inProcess,
               "generate in this process, not through the explorer's processes");
  app.add_flag("--sampling-only", options.samplingOnly,
               "only sample (print the times, write no results: for profiling)");
  app.add_flag("--compare", options.compare,
               "also time the same points' generation in a forked child per variant and in "
               "this process (before/after the generator process, in one run)");
  app.add_option("--only", options.only,
                 "with --in-process: generate only the samples of these indices (profiling one "
                 "variant)");
  app.add_option("--dump", options.dump,
                 "write every variant's OpenCL source and parameters to this folder (in process)");
  CLI11_PARSE(app, argc, argv);
  try {
    return weft::bench::run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
