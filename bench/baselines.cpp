// The baselines of the Table 3 benchmark (issue 6): for each VGG-16 convolution layer, the
// naive direct convolution, CLBlast's im2col + SGEMM on the same OpenCL device, and PyTorch's
// CPU conv2d, each timed, checked against a host reference, and with its memory, so that the
// best explored variants can be compared with all three (issue 6's and issue 8's targets).
//
// Layers with the same shape (conv3_2/conv3_3, conv4_2/conv4_3, conv5_x) are measured once and
// reported under every name, so the sums cover all 13 layers. For each distinct shape (the
// measuring code is bench/baseline_runners.h, shared with weft_bench_table3):
//
//  - naive: weft's built-in layer with the default lowering (bench/bench_support.h
//    runNaiveConv, the same code as weft_bench_naive_conv); time = the kernel's cl_event time,
//    median of the timed runs; memory = CompiledProgram::globalBytes (input, weights, bias,
//    output).
//  - clblast: CLBlast's own im2col (clblast::Im2col, cross-correlation as conv2d) writes the
//    column matrix col[C·K·K][outH·outW]; a one-line kernel of ours writes the bias into every
//    output row; clblast::Gemm (row-major, y[M][outH·outW] = w[M][C·K·K] · col + y, beta = 1)
//    adds the products. Time = wall clock (steady_clock) from before the im2col call to after
//    clFinish following the GEMM (clFinish after each phase too, so the phases are reported
//    separately), median of the timed runs after one warm-up run (which compiles CLBlast's
//    kernels). Memory = every device buffer: input, column matrix, weights, bias, output and
//    CLBlast's GEMM temporary buffer (clblast::GemmTempBufferSize, allocated by us and passed to
//    Gemm so that it is counted).
//  - pytorch: bench/baselines_torch.py run with Debian's /usr/bin/python3 (one child process
//    per layer; torch.set_num_threads(2); perf_counter around each conv2d call; memory = growth
//    of the child's peak RSS, ru_maxrss). Its JSON entries are merged here.
//
// Every method's warm-up output is verified against conv2d's definition in double
// (bench_support.h verifyOutput: every output of layers up to 4·10⁸ flops, else --samples random
// ones; relative tolerance 1e-3). Timed runs: at least --min-repeats (5) and until they add up
// to --min-seconds (1). GFLOP/s = 2·M·C·K²·outH·outW / median. The table is printed and the
// figures are written to bench/results/baselines.json (or --out), with sums over the layers.
// Exit code 1 when an output is wrong or a method failed (the JSON is still written).
//
//   build/bench/weft_bench_baselines [--device pocl] [--layer vgg16:N]... [--no-torch] ...
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/baseline_runners.h"
#include "bench/bench_support.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "workloads/conv/conv_layer.h"

namespace weft::bench {

namespace {

struct Options {
  std::string device;
  std::string out;
  std::vector<std::string> layers;  // empty: the 13 VGG-16 layers
  BaselineSettings settings{.torchScript = WEFT_BENCH_TORCH_SCRIPT};
  bool naive = true;
  bool clblast = true;
  bool torch = true;
};

// One layer of the report: its spelling, the paper's number (-1 for a layer given by its
// numbers) and the layer.
struct NamedLayer {
  std::string spec;
  int paperNumber = -1;
  ConvLayer layer;
};

std::vector<NamedLayer> chosenLayers(const Options& options) {
  std::vector<NamedLayer> layers;
  if (options.layers.empty()) {
    for (size_t i = 0; i < vgg16Layers().size(); ++i) {
      const int number = vgg16PaperNumber(i);
      layers.push_back({fmt::format("vgg16:{}", number), number, vgg16Layers()[i]});
    }
    return layers;
  }
  for (const std::string& spec : options.layers) {
    NamedLayer named{spec, -1, parseConvLayer(spec)};
    if (spec.rfind("vgg16:", 0) == 0) named.paperNumber = std::stoi(spec.substr(6));
    layers.push_back(named);
  }
  return layers;
}

const char* const kMethods[] = {"naive", "clblast", "pytorch"};

void printTable(const nlohmann::ordered_json& report) {
  std::printf("%-8s %-18s", "layer", "shape");
  for (const char* method : kMethods)
    std::printf(" | %-7s %8s %7s %8s", method, "ms", "GFLOP/s", "MiB");
  std::printf("\n");
  auto cell = [](const nlohmann::ordered_json& m) {
    if (!m.is_object() || !m.contains("time_ms")) {
      std::printf(" | %-7s %8s %7s %8s", "", "-", "-", "-");
      return;
    }
    std::printf(" | %-7s %8.2f %7.1f %8.1f", m.value("verified", false) ? "" : "WRONG",
                m["time_ms"]["median"].get<double>(), m["gflops_per_s"].get<double>(),
                static_cast<double>(m["memory_bytes"].get<int64_t>()) / (1024.0 * 1024.0));
  };
  for (const auto& layer : report["layers"]) {
    std::string shape =
        fmt::format("{}x{}x{}->{}", layer["C"].get<int64_t>(), layer["H"].get<int64_t>(),
                    layer["W"].get<int64_t>(), layer["M"].get<int64_t>());
    std::printf("%-8s %-18s", layer["layer"].get<std::string>().c_str(), shape.c_str());
    for (const char* method : kMethods)
      cell(layer["methods"].value(method, nlohmann::ordered_json()));
    std::printf("\n");
  }
  const auto& sums = report["sums"];
  std::printf("%-8s %-18s", "sum", fmt::format("{} layers", sums["layers"].get<int>()).c_str());
  for (const char* method : kMethods) {
    if (!sums["methods"].contains(method)) {
      std::printf(" | %-7s %8s %7s %8s", "", "-", "-", "-");
      continue;
    }
    const auto& m = sums["methods"][method];
    std::printf(" | %-7s %8.2f %7.1f %8.1f", "", m["time_ms"].get<double>(),
                m["gflops_per_s"].get<double>(),
                static_cast<double>(m["memory_bytes_max"].get<int64_t>()) / (1024.0 * 1024.0));
  }
  std::printf("   (MiB: the largest layer's)\n");
}

int run(const Options& options) {
  const std::vector<NamedLayer> layers = chosenLayers(options);
  // The first layer of each shape is measured; the others share its figures.
  std::map<ShapeKey, const NamedLayer*> measuredAs;
  std::vector<const NamedLayer*> distinct;
  for (const NamedLayer& named : layers) {
    if (measuredAs.emplace(shapeKey(named.layer), &named).second) distinct.push_back(&named);
  }

  host::Device device = host::selectDevice(options.device);
  host::DeviceProfile profile = host::queryProfile(device);
  std::fprintf(stderr, "device: %s (%s); %zu layers, %zu distinct shapes\n", device.name.c_str(),
               device.platformName.c_str(), layers.size(), distinct.size());
  host::Context context(device);

  bool ok = true;
  std::map<std::string, nlohmann::ordered_json> measured;  // method + "/" + layer name
  for (const NamedLayer* named : distinct) {
    const ConvLayer& layer = named->layer;
    const LayerData data = randomLayerData(layer, options.settings.seed);
    auto attempt = [&](const char* method, auto&& measure) {
      std::fprintf(stderr, "%s: %s\n", method, layer.describe().c_str());
      try {
        measured[std::string(method) + "/" + layer.name] = measure();
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s on %s failed: %s\n", method, layer.name.c_str(), e.what());
        measured[std::string(method) + "/" + layer.name] = {{"error", e.what()}};
      }
    };
    if (options.naive)
      attempt("naive", [&] { return measureNaive(layer, data, context, options.settings); });
    if (options.clblast) {
      attempt("clblast", [&] { return measureClblast(layer, data, context, options.settings); });
    }
  }
  nlohmann::json torchReport;
  if (options.torch) {
    try {
      std::vector<ConvLayer> shapes;
      for (const NamedLayer* named : distinct) shapes.push_back(named->layer);
      torchReport = measureTorch(shapes, options.settings);
      for (const auto& entry : torchReport["layers"]) {
        measured["pytorch/" + entry["layer"].get<std::string>()] = torchLayerJson(entry);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "pytorch failed: %s\n", e.what());
      for (const NamedLayer* named : distinct) {
        measured["pytorch/" + named->layer.name] = {{"error", e.what()}};
      }
    }
  }

  nlohmann::ordered_json layerRows = nlohmann::ordered_json::array();
  struct Sum {
    double ms = 0;
    int64_t maxBytes = 0;
    bool complete = true;
  };
  std::map<std::string, Sum> sums;
  int64_t totalFlops = 0;
  for (const NamedLayer& named : layers) {
    const NamedLayer* source = measuredAs.at(shapeKey(named.layer));
    nlohmann::ordered_json row;
    row["layer"] = named.layer.name;
    row["spec"] = named.spec;
    if (named.paperNumber >= 0) row["paper_number"] = named.paperNumber;
    addLayerShape(row, named.layer);
    if (source != &named) row["measured_as"] = source->layer.name;
    totalFlops += named.layer.flops();
    nlohmann::ordered_json methods = nlohmann::ordered_json::object();
    for (const char* method : kMethods) {
      auto found = measured.find(std::string(method) + "/" + source->layer.name);
      if (found == measured.end()) continue;
      const nlohmann::ordered_json& m = found->second;
      methods[method] = m;
      Sum& sum = sums[method];
      if (!m.contains("time_ms") || !m.value("verified", false)) {
        ok = false;
        sum.complete = sum.complete && m.contains("time_ms");
        if (!m.contains("time_ms")) continue;
      }
      sum.ms += m["time_ms"]["median"].get<double>();
      sum.maxBytes = std::max(sum.maxBytes, m["memory_bytes"].get<int64_t>());
    }
    if (methods.contains("naive") && methods["naive"].contains("time_ms")) {
      const double naiveMs = methods["naive"]["time_ms"]["median"].get<double>();
      nlohmann::ordered_json speedups;
      for (const char* method : {"clblast", "pytorch"}) {
        if (methods.contains(method) && methods[method].contains("time_ms")) {
          speedups[method] = naiveMs / methods[method]["time_ms"]["median"].get<double>();
        }
      }
      row["speedup_over_naive"] = speedups;
    }
    row["methods"] = methods;
    layerRows.push_back(row);
  }

  nlohmann::ordered_json sumJson;
  sumJson["layers"] = static_cast<int>(layers.size());
  sumJson["flops"] = totalFlops;
  sumJson["methods"] = nlohmann::ordered_json::object();
  for (const char* method : kMethods) {
    auto found = sums.find(method);
    if (found == sums.end() || !found->second.complete) continue;
    sumJson["methods"][method] = {
        {"time_ms", found->second.ms},
        {"gflops_per_s", static_cast<double>(totalFlops) / (found->second.ms * 1e-3) / 1e9},
        {"memory_bytes_max", found->second.maxBytes}};
  }

  nlohmann::ordered_json report;
  report["benchmark"] = "baselines";
  report["description"] =
      "Table 3 baselines per convolution layer: naive = weft's built-in layer, default lowering "
      "(cl_event kernel time; memory = all buffers); clblast = CLBlast Im2col + a bias-broadcast "
      "kernel + SGEMM (beta = 1) on the same OpenCL device (wall clock around the calls with "
      "clFinish; memory = input + im2col matrix + weights + bias + output + GEMM temporary); "
      "pytorch = torch.nn.functional.conv2d with bias on the CPU (perf_counter; memory = "
      "ru_maxrss growth in a fresh process). time_ms: median over the timed runs after one "
      "warm-up; gflops_per_s = 2*M*C*K^2*outH*outW / median. Layers of the same shape are "
      "measured once (measured_as). sums: over all layers listed, time_ms = sum of medians, "
      "memory_bytes_max = the largest layer's.";
  report["weft_version"] = WEFT_VERSION;
  report["date"] = utcNow();
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
                        {"seed", options.settings.seed}};
  report["layers"] = layerRows;
  report["sums"] = sumJson;

  const std::filesystem::path out = writeResultsJson(
      report, options.out, std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / "baselines.json");

  std::printf(
      "Table 3 baselines on %s (CLBlast %s, PyTorch %s), weft %s\n", device.name.c_str(),
      report["clblast_version"].get<std::string>().c_str(),
      report.contains("torch") ? report["torch"]["version"].get<std::string>().c_str() : "-",
      WEFT_VERSION);
  printTable(report);
  std::printf("written to %s\n", out.string().c_str());
  return ok ? 0 : 1;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app{
      "Table 3 baselines: the naive direct convolution, CLBlast im2col + SGEMM and PyTorch's "
      "conv2d\non each layer (default: VGG-16's 13). Prints a table and writes the figures as "
      "JSON (see bench/README.md)."};
  app.add_option("--device", options.device,
                 "OpenCL device for naive and CLBlast: an index, gpu, cpu, or part of a device "
                 "or platform name (default: the first GPU, else PoCL)");
  app.add_option("--out", options.out,
                 "the JSON results file (default: " WEFT_BENCH_RESULTS_DIR "/baselines.json)");
  app.add_option("--layer", options.layers,
                 "layers: vgg16:N (the LIFT paper's numbering) or C,H,W,M,K,stride,pad "
                 "(default: the 13 VGG-16 layers)");
  weft::bench::addBaselineOptions(app, options.settings, options.naive, options.clblast,
                                  options.torch);
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_baselines",
                                  [&] { return weft::bench::run(options); });
}
