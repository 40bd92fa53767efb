// The naive baseline: weft's built-in convolution layer (ir/conv_layer.h) compiled with the
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
// layer's output is wrong (the JSON is still written, with "verified": false).
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

#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/conv_layer.h"
#include "ir/value.h"

#ifndef WEFT_VERSION
#define WEFT_VERSION "dev"
#endif
#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif

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

// Layer data in PyTorch's layouts: x [C][H][W], w [M][C][K][K], b [M].
struct LayerData {
  std::vector<float> x, w, b;
};

LayerData randomData(const ConvLayer& layer, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    for (float& value : values) value = uniform(rng);
    return values;
  };
  return {fill(layer.C * layer.H * layer.W), fill(layer.M * layer.C * layer.K * layer.K),
          fill(layer.M)};
}

// The trusted reference, straight from conv2d's definition, accumulated in double:
// y[m][oy][ox] = b[m] + Σ_c,ky,kx x[c][oy·s + ky − p][ox·s + kx − p] · w[m][c][ky][kx],
// x reading 0 outside the image.
double referenceOutput(const ConvLayer& l, const LayerData& data, int64_t m, int64_t oy,
                       int64_t ox) {
  double sum = data.b[static_cast<size_t>(m)];
  for (int64_t c = 0; c < l.C; ++c) {
    for (int64_t ky = 0; ky < l.K; ++ky) {
      const int64_t y = oy * l.stride + ky - l.pad;
      if (y < 0 || y >= l.H) continue;
      for (int64_t kx = 0; kx < l.K; ++kx) {
        const int64_t x = ox * l.stride + kx - l.pad;
        if (x < 0 || x >= l.W) continue;
        sum += static_cast<double>(data.x[static_cast<size_t>((c * l.H + y) * l.W + x)]) *
               data.w[static_cast<size_t>(((m * l.C + c) * l.K + ky) * l.K + kx)];
      }
    }
  }
  return sum;
}

struct Verification {
  bool passed = false;
  int64_t checked = 0;
  int64_t failures = 0;
  double maxRelativeError = 0;  // |y − reference| / max(|reference|, 1)
  std::string firstFailure;
};

// Compares the device's output (row-major [M][outH][outW]) with the reference: every output, or
// `samples` random ones (the first and the last always among them) when the layer is large.
Verification verify(const ConvLayer& l, const LayerData& data, const std::vector<float>& output,
                    const Options& options) {
  constexpr double kTolerance = 1e-3;
  Verification result;
  const int64_t count = l.M * l.outH() * l.outW();
  if (static_cast<int64_t>(output.size()) != count) {
    result.firstFailure = fmt::format("{} outputs instead of {}", output.size(), count);
    return result;
  }
  std::vector<int64_t> indices;
  if (l.flops() <= options.fullCheckFlops || options.samples >= count) {
    for (int64_t i = 0; i < count; ++i) indices.push_back(i);
  } else {
    std::mt19937_64 rng(options.seed + 1000);
    std::uniform_int_distribution<int64_t> pick(0, count - 1);
    indices = {0, count - 1};
    while (static_cast<int64_t>(indices.size()) < options.samples) indices.push_back(pick(rng));
  }
  for (int64_t index : indices) {
    const int64_t m = index / (l.outH() * l.outW());
    const int64_t oy = index / l.outW() % l.outH();
    const int64_t ox = index % l.outW();
    const double expected = referenceOutput(l, data, m, oy, ox);
    const double got = output[static_cast<size_t>(index)];
    const double error = std::fabs(got - expected) / std::max(std::fabs(expected), 1.0);
    result.maxRelativeError = std::max(result.maxRelativeError, error);
    if (!(error <= kTolerance)) {  // NaN fails too
      if (result.failures++ == 0) {
        result.firstFailure =
            fmt::format("y[{}][{}][{}] = {} instead of {}", m, oy, ox, got, expected);
      }
    }
    ++result.checked;
  }
  result.passed = result.failures == 0;
  return result;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::ordered_json benchLayer(const ConvLayer& layer, const std::string& spec,
                                  host::Context& context, const Options& options, bool& verified) {
  std::fprintf(stderr, "%s: compiling\n", layer.describe().c_str());
  Definition definition = convLayerDefinition(layer);
  CompiledProgram program = generateOpenCL(lowerDefault(definition));
  const int64_t globalBytes = program.globalBytes({});

  LayerData data = randomData(layer, options.seed);
  const std::vector<Expr>& params = definition.function.params();
  std::vector<Value> inputs = {valueFromFlat(params[0].paramType(), {}, data.x),
                               valueFromFlat(params[1].paramType(), {}, data.w),
                               valueFromFlat(params[2].paramType(), {}, data.b)};

  host::ProgramCache cache;
  host::RunOptions warmUp;
  warmUp.cache = &cache;
  std::fprintf(stderr, "%s: warm-up run and verification\n", layer.name.c_str());
  host::RunResult first = host::runProgram(context, program, inputs, {}, warmUp);
  Verification check = verify(layer, data, flattenToFloats(first.output), options);
  verified = check.passed;

  const double warmSeconds = static_cast<double>(first.totalNanoseconds) / 1e9;
  host::RunOptions timed;
  timed.cache = &cache;
  timed.repeats =
      std::max(options.minRepeats,
               static_cast<int>(
                   std::min(1000.0, std::ceil(options.minSeconds / std::max(warmSeconds, 1e-6)))));
  std::fprintf(stderr, "%s: %d timed runs\n", layer.name.c_str(), timed.repeats);
  host::RunResult runs = host::runProgram(context, program, inputs, {}, timed);

  std::vector<double> milliseconds;
  for (uint64_t ns : runs.repeatNanoseconds) milliseconds.push_back(static_cast<double>(ns) / 1e6);
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
  result["C"] = layer.C;
  result["H"] = layer.H;
  result["W"] = layer.W;
  result["M"] = layer.M;
  result["K"] = layer.K;
  result["stride"] = layer.stride;
  result["pad"] = layer.pad;
  result["outH"] = layer.outH();
  result["outW"] = layer.outW();
  result["flops"] = layer.flops();
  result["kernel_ms"] = {{"median", medianMs}, {"min", minMs}, {"samples", milliseconds}};
  result["warmup_ms"] = warmSeconds * 1e3;
  result["gflops_per_s"] = gflops;
  result["global_bytes"] = globalBytes;
  result["kernels"] = kernels;
  result["verified"] = check.passed;
  result["verification"] = {{"outputs_checked", check.checked},
                            {"outputs", layer.M * layer.outH() * layer.outW()},
                            {"failures", check.failures},
                            {"max_relative_error", check.maxRelativeError},
                            {"tolerance", 1e-3},
                            {"reference", "C++ loops on the host, double accumulation"}};
  if (!check.passed) result["verification"]["first_failure"] = check.firstFailure;
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
  report["device"] = {{"name", device.name},
                      {"profile", profile.name},
                      {"type", device.typeName()},
                      {"vendor", device.vendor},
                      {"platform", device.platformName},
                      {"platform_version", device.platformVersion},
                      {"driver_version", device.driverVersion},
                      {"compute_units", profile.computeUnits},
                      {"fingerprint", profile.fingerprint}};
  report["layers"] = layers;

  std::filesystem::path out = options.out.empty() ? std::filesystem::path(WEFT_BENCH_RESULTS_DIR) /
                                                        ("naive_conv_" + profile.name + ".json")
                                                  : std::filesystem::path(options.out);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  std::ofstream file(out);
  file << report.dump(2) << "\n";
  if (!file) throw std::runtime_error("cannot write " + out.string());

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
  try {
    app.parse(argc, argv);
    return weft::bench::run(options);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_bench_naive_conv: %s\n", e.what());
    return 1;
  }
}
