// What the convolution benchmarks share: layer data in PyTorch's layouts, the trusted host
// reference and the verification of a device's output against it, the naive direct convolution
// (weft's built-in layer with the default lowering, run and timed on a device), medians, the
// date and the device's description in the results JSON, writing that JSON, recording a peer's
// time in the results database (for `weft report`), and the command
// line's parse-and-run with the benchmarks' exit codes, and the layer's data in the layouts of
// the explored programs (Listing 3, channels innermost).
//
// The reference is conv2d's definition accumulated in double,
//   y[m][oy][ox] = b[m] + Σ_c,ky,kx x[c][oy·s + ky − p][ox·s + kx − p] · w[m][c][ky][kx],
// x reading 0 outside the image; an output passes when |y − reference| / max(|reference|, 1)
// ≤ 10⁻³ (kVerifyTolerance). Large layers are checked on a random sample of outputs (the first
// and the last always among them). Header-only: each benchmark is one executable
// (bench/CMakeLists.txt); only the baselines' measuring code is a small static library
// (bench/baseline_runners.h).
#pragma once

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "explore/results_db.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "workloads/conv/conv_layer.h"
#include "ir/value.h"

// Defaults for what bench/CMakeLists.txt passes as compile definitions (a build outside it).
#ifndef WEFT_VERSION
#define WEFT_VERSION "dev"
#endif
#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif
#ifndef WEFT_BENCH_TORCH_SCRIPT
#define WEFT_BENCH_TORCH_SCRIPT "bench/baselines_torch.py"
#endif

namespace weft::bench {

inline constexpr double kVerifyTolerance = 1e-3;

// Layer data in PyTorch's layouts: x [C][H][W], w [M][C][K][K], b [M]; uniform in [-1, 1).
struct LayerData {
  std::vector<float> x, w, b;
};

inline LayerData randomLayerData(const ConvLayer& layer, unsigned seed) {
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

// y[m][oy][ox] from conv2d's definition, accumulated in double.
inline double referenceOutput(const ConvLayer& l, const LayerData& data, int64_t m, int64_t oy,
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

// Compares `output` (row-major [M][outH][outW]) with the reference: every output when the layer
// has at most `fullCheckFlops` flops or `samples` covers them all, else `samples` random ones
// (seeded by `seed`; the first and the last always among them).
inline Verification verifyOutput(const ConvLayer& l, const LayerData& data,
                                 const std::vector<float>& output, int samples,
                                 int64_t fullCheckFlops, unsigned seed) {
  Verification result;
  const int64_t count = l.M * l.outH() * l.outW();
  if (static_cast<int64_t>(output.size()) != count) {
    result.firstFailure = fmt::format("{} outputs instead of {}", output.size(), count);
    return result;
  }
  std::vector<int64_t> indices;
  if (l.flops() <= fullCheckFlops || samples >= count) {
    for (int64_t i = 0; i < count; ++i) indices.push_back(i);
  } else {
    std::mt19937_64 rng(seed + 1000);
    std::uniform_int_distribution<int64_t> pick(0, count - 1);
    indices = {0, count - 1};
    while (static_cast<int64_t>(indices.size()) < samples) indices.push_back(pick(rng));
  }
  for (int64_t index : indices) {
    const int64_t m = index / (l.outH() * l.outW());
    const int64_t oy = index / l.outW() % l.outH();
    const int64_t ox = index % l.outW();
    const double expected = referenceOutput(l, data, m, oy, ox);
    const double got = output[static_cast<size_t>(index)];
    const double error = std::fabs(got - expected) / std::max(std::fabs(expected), 1.0);
    result.maxRelativeError = std::max(result.maxRelativeError, error);
    if (!(error <= kVerifyTolerance)) {  // NaN fails too
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

// The verification as the results JSON writes it.
inline nlohmann::ordered_json verificationJson(const Verification& check, const ConvLayer& l,
                                               const std::string& reference) {
  nlohmann::ordered_json result = {
      {"outputs_checked", check.checked}, {"outputs", l.M * l.outH() * l.outW()},
      {"failures", check.failures},       {"max_relative_error", check.maxRelativeError},
      {"tolerance", kVerifyTolerance},    {"reference", reference}};
  if (!check.passed) result["first_failure"] = check.firstFailure;
  return result;
}

inline double median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Timed runs after a warm-up of `warmSeconds`: at least `minRepeats`, more until they add up
// to `minSeconds` judging by the warm-up, at most 1000.
inline int timedRepeats(int minRepeats, double minSeconds, double warmSeconds) {
  return std::max(minRepeats, static_cast<int>(std::min(
                                  1000.0, std::ceil(minSeconds / std::max(warmSeconds, 1e-6)))));
}

inline std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

inline nlohmann::ordered_json deviceJson(const host::Device& device,
                                         const host::DeviceProfile& profile) {
  return {{"name", device.name},
          {"profile", profile.name},
          {"type", device.typeName()},
          {"vendor", device.vendor},
          {"platform", device.platformName},
          {"platform_version", device.platformVersion},
          {"driver_version", device.driverVersion},
          {"compute_units", profile.computeUnits},
          {"host_processor", profile.hostProcessor},  // "" for a GPU
          {"fingerprint", profile.fingerprint}};
}

// Writes the results JSON to `outOption`, or to `defaultPath` when it is empty, creating the
// folder; returns the path written. Throws when the file cannot be written.
inline std::filesystem::path writeResultsJson(const nlohmann::ordered_json& report,
                                              const std::string& outOption,
                                              const std::filesystem::path& defaultPath) {
  const std::filesystem::path out =
      outOption.empty() ? defaultPath : std::filesystem::path(outOption);
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
  std::ofstream file(out);
  file << report.dump(2) << "\n";
  if (!file) throw std::runtime_error("cannot write " + out.string());
  return out;
}

// Records a peer's time (its program and device set) in the first of `databases` that holds
// variants of that program on that device, for `weft report` to draw beside them; returns the
// database written, or "" when none holds it. A write that fails is reported on stderr and
// skipped: the benchmark's own figures do not depend on it.
inline std::string recordPeerTime(const std::vector<std::string>& databases,
                                  const explore::PeerRecord& peer) {
  for (const std::string& database : databases) {
    try {
      explore::ResultsDb db(database);
      if (db.variants(peer.program, peer.device).empty()) continue;
      db.recordPeer(peer);
      return database;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s's time for %s not recorded in %s: %s\n", peer.peer.c_str(),
                   peer.program.c_str(), database.c_str(), e.what());
      return "";
    }
  }
  return "";
}

// Parses the command line into `app`'s options and returns `run()`'s exit code: CLI11's own
// exit (help, usage errors) on a parse error, 1 after printing "<program>: <message>" on stderr
// for any other error.
inline int parseAndRun(CLI::App& app, int argc, char** argv, const char* program,
                       const std::function<int()>& run) {
  try {
    app.parse(argc, argv);
    return run();
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

// The layer's numbers as the results JSON writes them.
inline void addLayerShape(nlohmann::ordered_json& out, const ConvLayer& layer) {
  out["C"] = layer.C;
  out["H"] = layer.H;
  out["W"] = layer.W;
  out["M"] = layer.M;
  out["K"] = layer.K;
  out["stride"] = layer.stride;
  out["pad"] = layer.pad;
  out["outH"] = layer.outH();
  out["outW"] = layer.outW();
  out["flops"] = layer.flops();
}

// The layer's data in the layouts of the LIFT paper's Listing 3 (workloads/conv/conv_layer.h
// convListing3Definition, the program exploration rewrites: weights [M][K][K][C], biases [M],
// input [H][W][C], channels innermost), as values in that definition's parameter order
// (weights, biases, input) under convListing3Sizes(layer). The output keeps PyTorch's layout
// [M][outH][outW], so verifyOutput applies to it unchanged.
inline std::vector<Value> listing3Inputs(const ConvLayer& l, const LayerData& data) {
  const size_t C = static_cast<size_t>(l.C), H = static_cast<size_t>(l.H),
               W = static_cast<size_t>(l.W), M = static_cast<size_t>(l.M),
               K = static_cast<size_t>(l.K);
  std::vector<float> input(data.x.size()), weights(data.w.size());
  for (size_t c = 0; c < C; ++c) {
    for (size_t y = 0; y < H; ++y) {
      for (size_t x = 0; x < W; ++x) input[(y * W + x) * C + c] = data.x[(c * H + y) * W + x];
    }
  }
  for (size_t m = 0; m < M; ++m) {
    for (size_t c = 0; c < C; ++c) {
      for (size_t ky = 0; ky < K; ++ky) {
        for (size_t kx = 0; kx < K; ++kx) {
          weights[((m * K + ky) * K + kx) * C + c] = data.w[((m * C + c) * K + ky) * K + kx];
        }
      }
    }
  }
  const Definition listing3 = convListing3Definition();
  const ArithBinding sizes = convListing3Sizes(l);
  const std::vector<Expr>& params = listing3.function.params();
  return {valueFromFlat(params[0].paramType(), sizes, weights),
          valueFromFlat(params[1].paramType(), sizes, data.b),
          valueFromFlat(params[2].paramType(), sizes, input)};
}

// ---- the naive direct convolution ----------------------------------------------------------

// One layer's naive run: the compiled program, the warm-up's output and time, and the kernel
// time (sum of the kernels' cl_event times) of each timed run in milliseconds.
struct NaiveConvRun {
  CompiledProgram program;
  int64_t globalBytes = 0;  // every buffer of the program (inputs, output, temporaries)
  std::vector<float> warmUpOutput;
  double warmUpMs = 0;
  std::vector<double> repeatMs;
};

// Builds weft's built-in layer (convLayerDefinition), lowers it with lowerDefault, generates
// OpenCL specialised to the layer's sizes, runs it once on `context` (the warm-up: build and
// first launch), then timedRepeats(minRepeats, minSeconds, warm-up) more times.
inline NaiveConvRun runNaiveConv(const ConvLayer& layer, const LayerData& data,
                                 host::Context& context, int minRepeats, double minSeconds) {
  Definition definition = convLayerDefinition(layer);
  NaiveConvRun run{compileToOpenCL(definition), 0, {}, 0, {}};
  run.globalBytes = run.program.globalBytes({});
  const std::vector<Expr>& params = definition.function.params();
  std::vector<Value> inputs = {valueFromFlat(params[0].paramType(), {}, data.x),
                               valueFromFlat(params[1].paramType(), {}, data.w),
                               valueFromFlat(params[2].paramType(), {}, data.b)};
  host::ProgramCache cache;
  host::RunOptions warmUp;
  warmUp.cache = &cache;
  host::RunResult first = host::runProgram(context, run.program, inputs, {}, warmUp);
  run.warmUpOutput = flattenToFloats(first.output);
  run.warmUpMs = static_cast<double>(first.totalNanoseconds) / 1e6;

  host::RunOptions timed;
  timed.cache = &cache;
  timed.repeats = timedRepeats(minRepeats, minSeconds, run.warmUpMs / 1e3);
  host::RunResult runs = host::runProgram(context, run.program, inputs, {}, timed);
  for (uint64_t ns : runs.repeatNanoseconds) run.repeatMs.push_back(static_cast<double>(ns) / 1e6);
  return run;
}

}  // namespace weft::bench
