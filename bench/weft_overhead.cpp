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
//   - generation, per point: what the explorer's parent does for it (the point's binding, its
//     recorded parameters) and what the measuring child does before the build (instantiate,
//     lowerDefault, generateOpenCL specialised to sizes and point, applyLocalSizeParameters,
//     the source hash, the global bytes) — the same calls as explore/measurement.cpp's
//     measureVariant. Like the explorer, each point is generated in a forked child process, so
//     that it starts from the parent's state after sampling (memo tables and caches included)
//     and nothing one variant leaves behind helps the next; --in-process generates every point
//     in this process instead (for profiling).
// Per variant: wall and thread CPU time (CLOCK_THREAD_CPUTIME_ID; the machine is shared and
// loaded, CPU time is the robust figure) of sampling (amortised), generation and their sum;
// median, mean, p90 and max per layer and over all layers. The target is judged on the CPU
// time of the total per variant (median and mean both under 10 ms: MET).
//
// The 1-minute load average at the start and end is recorded with the figures.
// --sampling-only stops after sampling (its times on stderr, no results written: profiling).
// --dump DIR writes each variant's OpenCL source to DIR/<layer>_<index>_<hash>.cl and its
// recorded parameters to DIR/<layer>_<index>_parameters.json, so that two builds of weft can be
// compared byte for byte on the same fixed-seed points.
//
//   build/bench/weft_bench_weft_overhead [--samples N] [--seed S] [--profile P] [--layer SPEC]...
//       [--all-layers] [--in-process] [--sampling-only] [--dump DIR] [--out FILE.json]
// Results: bench/results/weft_overhead.json and weft_overhead.md (next to --out).
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
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

#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "explore/explorer.h"
#include "explore/launch_parameters.h"
#include "explore/measurement.h"
#include "host/device_profile.h"
#include "ir/conv_layer.h"

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
  std::string dump;
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
  double generationWall = 0, generationCpu = 0;
  bool ok = false;
  std::string family;
  double totalWall() const { return samplingWall + generationWall; }
  double totalCpu() const { return samplingCpu + generationCpu; }
};

// What a generation child sends back through its pipe.
struct ChildReport {
  double wallMs = 0;
  double cpuMs = 0;
  int ok = 0;
};

// The per-point work of the explorer up to the OpenCL build (see the file comment): the
// parent's binding and recorded parameters, then measureVariant's generation steps.
bool generateVariant(const explore::Preparation& prep, size_t index, const std::string& dumpPath) {
  const ArithBinding binding = prep.spaceOf(index).binding(prep.points[index]);
  const std::string parameters = prep.parametersOf(index);
  if (!dumpPath.empty()) {
    std::ofstream(dumpPath + "_parameters.json", std::ios::binary) << parameters << "\n";
  }
  ArithBinding point;
  for (const auto& [name, value] : binding) {
    if (!prep.workload.sizes.count(name)) point[name] = value;
  }
  ArithBinding full = prep.workload.sizes;
  for (const auto& [name, value] : point) full[name] = value;
  try {
    Definition instance = explore::instantiate(prep.programOf(index), point);
    CodegenOptions codegen;
    codegen.specialize = full;
    CompiledProgram program = generateOpenCL(lowerDefault(instance), codegen);
    explore::applyLocalSizeParameters(program, point);
    const std::string hash = explore::sourceHash(program.source);
    const int64_t bytes = program.globalBytes(full);
    (void)bytes;
    if (!dumpPath.empty()) {
      std::ofstream file(dumpPath + "_" + hash + ".cl", std::ios::binary);
      file << program.source;
    }
    return true;
  } catch (const std::exception& error) {
    if (!dumpPath.empty()) {
      std::ofstream file(dumpPath + "_error.txt", std::ios::binary);
      file << error.what() << "\n";
    }
    return false;
  }
}

ChildReport generateTimed(const explore::Preparation& prep, size_t index,
                          const std::string& dumpPath) {
  Stopwatch watch;
  ChildReport report;
  report.ok = generateVariant(prep, index, dumpPath) ? 1 : 0;
  report.wallMs = watch.wallMs();
  report.cpuMs = watch.cpuMs();
  return report;
}

// Generation in a forked child, as the explorer's measuring child does it.
ChildReport generateInChild(const explore::Preparation& prep, size_t index,
                            const std::string& dumpPath) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    ChildReport report = generateTimed(prep, index, dumpPath);
    ssize_t written = write(fds[1], &report, sizeof report);
    _exit(written == static_cast<ssize_t>(sizeof report) ? 0 : 1);
  }
  close(fds[1]);
  ChildReport report;
  ssize_t got = read(fds[0], &report, sizeof report);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != static_cast<ssize_t>(sizeof report)) {
    report = ChildReport{};  // the child died: counted as a failed generation
  }
  return report;
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
        explore::layerTargetStructures(layer, {1, 2, 4, 8, 16}, {0, 1}, /*vectorFamily=*/true);
    const double targetWall = targetWatch.wallMs();
    const double targetCpu = targetWatch.cpuMs();
    Stopwatch sampleWatch;
    explore::SampledTarget sampled =
        explore::sampleTarget(target, profile, options.samples, options.seed);
    const double sampleWall = sampleWatch.wallMs();
    const double sampleCpu = sampleWatch.cpuMs();

    explore::Preparation prep;
    prep.target = target;
    prep.workload.sizes = target.sizes;
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
    for (size_t i = 0; i < n; ++i) {
      std::string dumpPath;
      if (!options.dump.empty()) {
        char index[24];
        std::snprintf(index, sizeof index, "%03zu", i);
        dumpPath = options.dump + "/" + layer.name + "_" + index;
      }
      ChildReport report = options.inProcess ? generateTimed(prep, i, dumpPath)
                                             : generateInChild(prep, i, dumpPath);
      VariantTimes v;
      v.samplingWall = (targetWall + sampleWall) / static_cast<double>(n);
      v.samplingCpu = (targetCpu + sampleCpu) / static_cast<double>(n);
      v.generationWall = report.wallMs;
      v.generationCpu = report.cpuMs;
      v.ok = report.ok != 0;
      v.family = target.structures.at(prep.spaceStructure.at(prep.pointSpace.at(i))).family;
      ++families[v.family];
      if (!v.ok) ++failed;
      variants.push_back(v);
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
    row["per_variant"] = figures(variants);
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
  report["description"] =
      "weft's own time per explored variant (issue 6): sampling (layerTargetStructures + "
      "sampleTarget, shared equally by the points) and generation (binding, recorded "
      "parameters, instantiate, lowerDefault, generateOpenCL, applyLocalSizeParameters, source "
      "hash, global bytes: the explorer's steps before the OpenCL build), wall and thread CPU "
      "milliseconds; generation " +
      std::string(options.inProcess ? "in this process" : "in a forked child per variant");
  report["date"] = utcNow();
  report["profile"] = options.profile;
  report["samples_per_layer"] = options.samples;
  report["seed"] = options.seed;
  report["forked_children"] = !options.inProcess;
  report["target_ms"] = kTargetMs;
  report["target"] = "total cpu per variant (median and mean) < 10 ms: " + verdict;
  report["variants"] = all.size();
  report["load_average"] = {{"start", loadAtStart}, {"end", loadAverage()}};
  report["overall"] = overall;
  report["layers"] = layerRows;

  std::string out = options.out.empty()
                        ? std::string(WEFT_BENCH_RESULTS_DIR) + "/weft_overhead.json"
                        : options.out;
  std::ofstream(out) << report.dump(2) << "\n";

  // The markdown table.
  std::string md = "# weft's own time per variant (issue 6)\n\n";
  md += "Generated by `weft_bench_weft_overhead` on " + report["date"].get<std::string>() +
        ": " + std::to_string(options.samples) + " samples per layer, seed " +
        std::to_string(options.seed) + ", profile " + options.profile + ", generation " +
        (options.inProcess ? "in process" : "in a forked child per variant (as the explorer)") +
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
  std::filesystem::path mdPath = std::filesystem::path(out).replace_extension(".md");
  std::ofstream(mdPath) << md;
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
               "generate in this process, not in a forked child per variant");
  app.add_flag("--sampling-only", options.samplingOnly,
               "only sample (print the times, write no results: for profiling)");
  app.add_option("--dump", options.dump,
                 "write every variant's OpenCL source and parameters to this folder");
  CLI11_PARSE(app, argc, argv);
  try {
    return weft::bench::run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
