// The naive baseline: weft's built-in convolution layer (workloads/conv/conv_layer.h) compiled with the
// default lowering (one work-item per output value, a sequential loop over the C·K·K products)
// and run on an OpenCL device, for VGG-16's layers 0 (conv1_1, 3×224×224 → 64) and 10
// (conv3_1, 128×56×56 → 256) in the LIFT paper's numbering. This is the figure that explored
// implementations must beat by an order of magnitude (issue 3).
//
// For each layer: build the program, lower, generate OpenCL specialised to the layer's sizes,
// draw inputs uniform in [-1, 1), run once (warm-up: the build and the first launch), verify the
// output against a plain C++ loop convolution on the host (every output of a layer below 4·10^8
// flops, else a random sample), then run the kernels again n times, n = max(--min-repeats,
// enough to fill --min-seconds), and take the median of the repeats' kernel times (the sum of
// the kernels' cl_event times). GFLOP/s = 2·M·C·K²·outH·outW / median; global memory is
// CompiledProgram::globalBytes (inputs, output, temporaries). The figures are printed as a table
// and written as JSON to bench/results/naive_conv_<device>.json (or --out). Exit code 1 when a
// layer's output is wrong (the JSON is still written, with "verified": false). The data, the
// reference, the verification and the naive run itself are shared with bench/baselines.cpp
// through bench/bench_support.h.
//
//   build/bench/weft_bench_naive_conv [--device D] [--out FILE] [--layer SPEC]...
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "workloads/conv/conv_layer.h"
#include "ir/value.h"

namespace weft::bench {

namespace {

struct Options {
  std::string device;
  std::string out;
  std::vector<std::string> layers = {"vgg16:0", "vgg16:10"};
  int minRepeats = 3;
  double minSeconds = 1.0;
  int samples = 2000;  // outputs checked on layers too large to check completely
  int64_t fullCheckFlops = 400'000'000;
  unsigned seed = 1;
};

nlohmann::ordered_json benchLayer(const ConvLayer& layer, const std::string& spec,
                                  host::Context& context, const Options& options, bool& verified) {
  std::fprintf(stderr, "%s: compiling, warm-up run, timed runs\n", layer.describe().c_str());
  const LayerData data = randomLayerData(layer, options.seed);
  const NaiveConvRun run =
      runNaiveConv(layer, data, context, options.minRepeats, options.minSeconds);
  const CompiledProgram& program = run.program;
  const Verification check = verifyOutput(layer, data, run.warmUpOutput, options.samples,
                                          options.fullCheckFlops, options.seed);
  verified = check.passed;

  const std::vector<double>& milliseconds = run.repeatMs;
  const double medianMs = median(milliseconds);
  const double minMs = *std::min_element(milliseconds.begin(), milliseconds.end());
  const double gflops = static_cast<double>(layer.flops()) / (medianMs * 1e-3) / 1e9;

  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (const KernelPlan& kernel : program.kernels) {
    std::vector<std::string> global;
    for (int d = 0; d < kernel.dimensions; ++d) global.push_back(kernel.globalSize[d].toString());
    kernels.push_back({{"name", kernel.name},
                       {"global_size", global},
                       {"local_size", kernel.hasLocalSize ? "fixed" : "chosen by the driver"}});
  }
  nlohmann::ordered_json result;
  result["layer"] = layer.name;
  result["spec"] = spec;
  addLayerShape(result, layer);
  result["kernel_ms"] = {{"median", medianMs}, {"min", minMs}, {"samples", milliseconds}};
  result["warmup_ms"] = run.warmUpMs;
  result["gflops_per_s"] = gflops;
  result["global_bytes"] = run.globalBytes;
  result["kernels"] = kernels;
  result["verified"] = check.passed;
  result["verification"] =
      verificationJson(check, layer, "C++ loops on the host, double accumulation");
  return result;
}

int run(const Options& options) {
  host::Device device = host::selectDevice(options.device);
  host::DeviceProfile profile = host::queryProfile(device);
  std::fprintf(stderr, "device: %s (%s)\n", device.name.c_str(), device.platformName.c_str());
  host::Context context(device);

  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  bool allVerified = true;
  for (const std::string& spec : options.layers) {
    ConvLayer layer = parseConvLayer(spec);
    bool verified = false;
    layers.push_back(benchLayer(layer, spec, context, options, verified));
    allVerified = allVerified && verified;
  }

  nlohmann::ordered_json report;
  report["benchmark"] = "naive_conv";
  report["description"] =
      "weft's built-in convolution layer, default lowering (one work-item per output, a "
      "sequential loop over C*K*K), OpenCL generated specialised to the layer's sizes; "
      "kernel_ms: sum of the kernels' cl_event times per run, median over the timed runs after "
      "one warm-up run; gflops_per_s = 2*M*C*K^2*outH*outW / median; global_bytes: all buffers "
      "(inputs, output, temporaries)";
  report["weft_version"] = WEFT_VERSION;
  report["date"] = utcNow();
  report["device"] = deviceJson(device, profile);
  report["layers"] = layers;

  const std::filesystem::path out = writeResultsJson(
      report, options.out,
      std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / ("naive_conv_" + profile.name + ".json"));

  std::printf("naive direct convolution (default lowering) on %s, weft %s\n", device.name.c_str(),
              WEFT_VERSION);
  std::printf("%-8s %-22s %10s %10s %6s %9s %12s %s\n", "layer", "shape", "median ms", "min ms",
              "runs", "GFLOP/s", "global MiB", "verified");
  for (const auto& layer : layers) {
    std::string shape =
        fmt::format("{}x{}x{} -> {}", layer["C"].get<int64_t>(), layer["H"].get<int64_t>(),
                    layer["W"].get<int64_t>(), layer["M"].get<int64_t>());
    std::printf("%-8s %-22s %10.2f %10.2f %6zu %9.2f %12.2f %s (%lld outputs checked)\n",
                layer["layer"].get<std::string>().c_str(), shape.c_str(),
                layer["kernel_ms"]["median"].get<double>(), layer["kernel_ms"]["min"].get<double>(),
                layer["kernel_ms"]["samples"].size(), layer["gflops_per_s"].get<double>(),
                static_cast<double>(layer["global_bytes"].get<int64_t>()) / (1024.0 * 1024.0),
                layer["verified"].get<bool>() ? "yes" : "NO",
                static_cast<long long>(layer["verification"]["outputs_checked"].get<int64_t>()));
  }
  std::printf("written to %s\n", out.string().c_str());
  return allVerified ? 0 : 1;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app{
      "The naive baseline: weft's built-in convolution layer, default-lowered, on an OpenCL "
      "device.\nPrints a table and writes the figures as JSON (see bench/README.md)."};
  app.add_option("--device", options.device,
                 "OpenCL device: an index, gpu, cpu, or part of a device or platform name "
                 "(default: the first GPU, else PoCL; see `weft devices`)");
  app.add_option("--out", options.out,
                 "the JSON results file (default: " WEFT_BENCH_RESULTS_DIR
                 "/naive_conv_<device>.json)");
  app.add_option("--layer", options.layers,
                 "layers to run: vgg16:N (the LIFT paper's numbering) or C,H,W,M,K,stride,pad")
      ->capture_default_str();
  app.add_option("--min-repeats", options.minRepeats, "timed runs at least")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-seconds", options.minSeconds,
                 "timed runs until their kernel time adds up to this (estimated from the "
                 "warm-up run)")
      ->capture_default_str();
  app.add_option("--samples", options.samples,
                 "outputs checked against the host reference on layers above 4e8 flops")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_naive_conv",
                                  [&] { return weft::bench::run(options); });
}
