// Register-blocked direct convolution (the conv-register-blocked strategy of
// rewrite/strategies.h, issue 8's fast family) against the default lowering, on VGG-16 layers.
//
// Both start from the paper's Listing 3 (workloads/conv/conv_layer.h convListing3Definition, the same
// program as examples/conv.weft: weights [M][K][K][C], biases [M], input [H][W][C], channels
// innermost; output [M][outH][outW]). "default" is codegen's default lowering of it (one
// work-item per output, a loop over the window); "rb k=κ s=σ" is conv-register-blocked with one
// tile θ = the whole padded image (ρ = 0), so each work-item computes κ kernels × σ consecutive
// windows with κ·σ private accumulators, one loop over the K·K·C window (the reduce not
// unrolled: 1152 or 4608 iterations; the κ × σ maps of each step are unrolled). Every variant is
// generated with codegen::generateOpenCL with all sizes specialised and run with
// host::runProgram: one warm-up run (build, first launch) whose output is checked against a
// C++ loop on the host on random outputs (double accumulation, relative tolerance 1e-3), then
// n timed runs (n = max(--min-repeats, enough to fill --min-seconds)); the figure is the median
// of the runs' kernel times (the sum of every kernel's cl_event time: pad, convolution, crop).
// GFLOP/s = 2·M·C·K²·outH·outW / median. Results go to bench/results/conv_blocked_<device>.json
// (or --out); --source-dir writes each variant's OpenCL source there.
//
// "hand k=κ s=σ r=R" (--hand κ,σ,R) is issue 8's vector shape built directly
// (rewrite/strategies.h convRegisterBlockedVectorDefinition): weights re-laid out by a first
// kernel, σ float<κ> accumulators per work-item updated with vector fma, an explicit local
// size outW/σ × R; its JSON adds relayout_ms (kernel 0, the weights' re-layout, a one-off
// step) and per_inference_ms (median minus relayout_ms). "rules k=κ s=σ r=R" (--vector κ,σ,R)
// is the same family as the rules produce it (the conv-register-blocked-vector strategy on
// Listing 3), reported the same way. A fourth number PADLOADS = 1 (--vector 16,7,2,1) is the
// strategy's pad_in_loads: no pad kernel, the convolution reads the unpadded input through
// guarded loads (names end in " pl"); 0 or absent: the padded copy made by a pad kernel.
//
//   build/bench/weft_bench_conv_blocked [--layer vgg16:10 --layer vgg16:19] [--variant 8,8 ...]
//                                       [--hand 16,7,2 ...] [--vector 16,7,2[,1] ...]
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
#include "codegen/compile_pipeline.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "workloads/conv/conv_layer.h"
#include "ir/value.h"
#include "rewrite/strategies.h"

namespace weft::bench {

namespace {

struct Options {
  std::string device;
  std::string out;
  std::string sourceDir;
  std::vector<std::string> layers = {"vgg16:10", "vgg16:19"};
  // κ,σ pairs of the register-blocked variants.
  std::vector<std::string> variants = {"4,4", "8,4", "4,8", "8,8", "16,4", "4,16", "16,8"};
  // κ,σ,R of the hand-written vector variants (vectorBlockedByHand); none by default.
  std::vector<std::string> handVariants;
  // κ,σ,R of the conv-register-blocked-vector strategy's variants; none by default.
  std::vector<std::string> vectorVariants;
  bool skipDefault = false;
  int minRepeats = 3;
  double minSeconds = 1.0;
  int samples = 2000;
  unsigned seed = 1;
};

// Listing 3's layouts: input [H][W][C], weights [M][K][K][C], biases [M].
struct Listing3Data {
  std::vector<float> input, weights, biases;
};

Listing3Data randomData(const ConvLayer& l, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    for (float& value : values) value = uniform(rng);
    return values;
  };
  return {fill(l.H * l.W * l.C), fill(l.M * l.K * l.K * l.C), fill(l.M)};
}

// y[m][oy][ox] = b[m] + Σ_ky,kx,c x[oy·s + ky − p][ox·s + kx − p][c] · w[m][ky][kx][c].
double reference(const ConvLayer& l, const Listing3Data& d, int64_t m, int64_t oy, int64_t ox) {
  double sum = d.biases[static_cast<size_t>(m)];
  for (int64_t ky = 0; ky < l.K; ++ky) {
    const int64_t y = oy * l.stride + ky - l.pad;
    if (y < 0 || y >= l.H) continue;
    for (int64_t kx = 0; kx < l.K; ++kx) {
      const int64_t x = ox * l.stride + kx - l.pad;
      if (x < 0 || x >= l.W) continue;
      for (int64_t c = 0; c < l.C; ++c) {
        sum += static_cast<double>(d.input[static_cast<size_t>((y * l.W + x) * l.C + c)]) *
               d.weights[static_cast<size_t>(((m * l.K + ky) * l.K + kx) * l.C + c)];
      }
    }
  }
  return sum;
}

// Checks `samples` random outputs (the first and last among them); returns the failures and
// the largest relative error.
std::pair<int64_t, double> verify(const ConvLayer& l, const Listing3Data& d,
                                  const std::vector<float>& output, int samples, unsigned seed) {
  const int64_t count = l.M * l.outH() * l.outW();
  if (static_cast<int64_t>(output.size()) != count) return {count, INFINITY};
  std::mt19937_64 rng(seed + 1000);
  std::uniform_int_distribution<int64_t> pick(0, count - 1);
  std::vector<int64_t> indices = {0, count - 1};
  while (static_cast<int64_t>(indices.size()) < samples) indices.push_back(pick(rng));
  int64_t failures = 0;
  double worst = 0;
  for (int64_t index : indices) {
    const int64_t m = index / (l.outH() * l.outW());
    const double expected = reference(l, d, m, index / l.outW() % l.outH(), index % l.outW());
    const double error = std::fabs(output[static_cast<size_t>(index)] - expected) /
                         std::max(std::fabs(expected), 1.0);
    worst = std::max(worst, error);
    if (!(error <= 1e-3)) ++failures;
  }
  return {failures, worst};
}

struct Variant {
  enum class Kind { Default, RegisterBlocked, VectorByHand, VectorByRules };
  Kind kind = Kind::Default;
  std::string name;
  int kappa = 0, sigma = 0;  // 0: the default lowering
  int rows = 1;              // VectorByHand: output rows per work-group
  int padInLoads = 0;        // vector variants: 1 = no pad kernel, guarded loads of the input
};

// The definition of a variant for a layer (compiled by codegen/compile_pipeline.h).
Definition variantDefinition(const ConvLayer& layer, const Variant& v) {
  const Definition listing3 = convListing3Definition();
  if (v.kind == Variant::Kind::Default) return listing3;
  if (v.kind == Variant::Kind::VectorByHand) {
    return rewrite::convRegisterBlockedVectorDefinition(listing3, v.kappa, v.sigma,
                                                                     v.rows, v.padInLoads != 0);
  }
  if (v.kind == Variant::Kind::VectorByRules) {
    rewrite::RewriteContext context;
    rewrite::StrategyResult result =
        rewrite::findStrategy("conv-register-blocked-vector")
            ->make({{"kappa", Arith(v.kappa)},
                    {"sigma", Arith(v.sigma)},
                    {"rows", Arith(v.rows)},
                    {"pad_in_loads", Arith(v.padInLoads)}})(listing3, context);
    if (!result.success()) {
      throw std::runtime_error("conv-register-blocked-vector: " + result.failure);
    }
    return *result.definition;
  }
  const int64_t padded = layer.H + 2 * layer.pad;
  rewrite::RewriteContext context;
  rewrite::StrategyResult result = rewrite::findStrategy("conv-register-blocked")
                                       ->make({{"theta", Arith(padded)},
                                               {"rho", Arith(0)},
                                               {"kappa", Arith(v.kappa)},
                                               {"sigma", Arith(v.sigma)},
                                               {"unroll", Arith(0)}})(listing3, context);
  if (!result.success()) throw std::runtime_error("conv-register-blocked: " + result.failure);
  return *result.definition;
}

nlohmann::ordered_json benchVariant(const ConvLayer& layer, const Listing3Data& data,
                                    const Variant& variant, host::Context& context,
                                    const Options& options) {
  nlohmann::ordered_json result;
  result["variant"] = variant.name;
  result["kappa"] = variant.kappa;
  result["sigma"] = variant.sigma;
  if (variant.kind == Variant::Kind::VectorByHand || variant.kind == Variant::Kind::VectorByRules) {
    result["rows"] = variant.rows;
    result["pad_in_loads"] = variant.padInLoads;
  }
  try {
    const ArithBinding sizes = convListing3Sizes(layer);
    const auto start = std::chrono::steady_clock::now();
    CodegenOptions codegenOptions;
    codegenOptions.specialize = sizes;
    CompiledProgram program = compileToOpenCL(variantDefinition(layer, variant), codegenOptions);
    result["generate_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!options.sourceDir.empty()) {
      std::filesystem::create_directories(options.sourceDir);
      std::ofstream(std::filesystem::path(options.sourceDir) /
                    fmt::format("{}_{}.cl", layer.name,
                                variant.kappa ? fmt::format("{}k{}_s{}_r{}{}",
                                                            variant.kind == Variant::Kind::VectorByHand
                                                                ? "hand_"
                                                            : variant.kind == Variant::Kind::VectorByRules
                                                                ? "rules_"
                                                                : "",
                                                            variant.kappa, variant.sigma,
                                                            variant.rows,
                                                            variant.padInLoads ? "_padloads" : "")
                                              : std::string("default")))
          << program.source;
    }
    const Definition listing3 = convListing3Definition();
    const auto& params = listing3.function.params();
    std::vector<Value> inputs = {valueFromFlat(params[0].paramType(), sizes, data.weights),
                                 valueFromFlat(params[1].paramType(), sizes, data.biases),
                                 valueFromFlat(params[2].paramType(), sizes, data.input)};
    host::ProgramCache cache;
    host::RunOptions warmUp;
    warmUp.cache = &cache;
    const auto buildStart = std::chrono::steady_clock::now();
    host::RunResult first = host::runProgram(context, program, inputs, sizes, warmUp);
    result["warmup_wall_s"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - buildStart).count();
    auto [failures, worst] =
        verify(layer, data, flattenToFloats(first.output), options.samples, options.seed);
    host::RunOptions timed;
    timed.cache = &cache;
    const double warmSeconds = static_cast<double>(first.totalNanoseconds) / 1e9;
    timed.repeats = std::max(
        options.minRepeats,
        static_cast<int>(std::min(100.0, std::ceil(options.minSeconds / std::max(warmSeconds, 1e-6)))));
    host::RunResult runs = host::runProgram(context, program, inputs, sizes, timed);
    std::vector<double> ms;
    for (uint64_t ns : runs.repeatNanoseconds) ms.push_back(static_cast<double>(ns) / 1e6);
    const double medianMs = median(ms);
    nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
    for (size_t i = 0; i < program.kernels.size(); ++i) {
      const KernelPlan& k = program.kernels[i];
      std::vector<std::string> global, local;
      for (int d = 0; d < k.dimensions; ++d) {
        global.push_back(k.globalSize[d].toString());
        if (k.hasLocalSize) local.push_back(k.localSize[d].toString());
      }
      kernels.push_back({{"name", k.name},
                         {"global_size", global},
                         {"local_size", k.hasLocalSize ? nlohmann::ordered_json(local)
                                                       : nlohmann::ordered_json("driver")},
                         {"private_scalars_estimate", k.privateScalars},
                         {"best_ms", i < runs.kernels.size()
                                         ? static_cast<double>(runs.kernels[i].nanoseconds) / 1e6
                                         : 0.0}});
    }
    result["kernel_ms"] = {{"median", medianMs},
                           {"min", *std::min_element(ms.begin(), ms.end())},
                           {"samples", ms}};
    result["gflops_per_s"] = static_cast<double>(layer.flops()) / (medianMs * 1e-3) / 1e9;
    if ((variant.kind == Variant::Kind::VectorByHand ||
         variant.kind == Variant::Kind::VectorByRules) &&
        !runs.kernels.empty()) {
      // Kernel 0 re-lays the weights out: a one-off step when weights are prepared once.
      const double relayoutMs = static_cast<double>(runs.kernels[0].nanoseconds) / 1e6;
      result["relayout_ms"] = relayoutMs;
      result["per_inference_ms"] = medianMs - relayoutMs;
      result["per_inference_gflops_per_s"] =
          static_cast<double>(layer.flops()) / ((medianMs - relayoutMs) * 1e-3) / 1e9;
    }
    result["global_bytes"] = program.globalBytes(sizes);
    result["kernels"] = kernels;
    result["verified"] = failures == 0;
    result["verification"] = {{"outputs_checked", options.samples},
                              {"failures", failures},
                              {"max_relative_error", worst}};
  } catch (const std::exception& e) {
    result["error"] = e.what();
    result["verified"] = false;
  }
  return result;
}

// A vector variant from KAPPA,SIGMA,ROWS[,PADLOADS] (PADLOADS 0 or 1, default 0).
Variant vectorVariant(const std::string& spec, Variant::Kind kind, const char* option,
                      const char* prefix) {
  Variant v;
  v.kind = kind;
  char trailing = 0;
  const int read = std::sscanf(spec.c_str(), "%d,%d,%d,%d%c", &v.kappa, &v.sigma, &v.rows,
                               &v.padInLoads, &trailing);
  if ((read != 3 && read != 4) || (v.padInLoads != 0 && v.padInLoads != 1)) {
    throw std::invalid_argument(std::string(option) + " wants KAPPA,SIGMA,ROWS[,PADLOADS] " +
                                "(PADLOADS 0 or 1), not " + spec);
  }
  v.name = fmt::format("{} k={} s={} r={}{}", prefix, v.kappa, v.sigma, v.rows,
                       v.padInLoads ? " pl" : "");
  return v;
}

int run(const Options& options) {
  host::Device device = host::selectDevice(options.device);
  host::DeviceProfile profile = host::queryProfile(device);
  std::fprintf(stderr, "device: %s (%s)\n", device.name.c_str(), device.platformName.c_str());
  host::Context context(device);

  std::vector<Variant> variants;
  if (!options.skipDefault) variants.push_back({Variant::Kind::Default, "default", 0, 0});
  for (const std::string& spec : options.variants) {
    if (spec.empty() || spec == "none") continue;  // --variant none: no register-blocked variant
    const size_t comma = spec.find(',');
    if (comma == std::string::npos) throw std::invalid_argument("--variant wants KAPPA,SIGMA");
    Variant v;
    v.kind = Variant::Kind::RegisterBlocked;
    v.kappa = std::stoi(spec.substr(0, comma));
    v.sigma = std::stoi(spec.substr(comma + 1));
    v.name = fmt::format("rb k={} s={}", v.kappa, v.sigma);
    variants.push_back(v);
  }
  for (const std::string& spec : options.handVariants) {
    variants.push_back(vectorVariant(spec, Variant::Kind::VectorByHand, "--hand", "hand"));
  }
  for (const std::string& spec : options.vectorVariants) {
    variants.push_back(vectorVariant(spec, Variant::Kind::VectorByRules, "--vector", "rules"));
  }

  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  bool allVerified = true;
  // Vector variants add the per-inference figures (without the weights' re-layout, kernel 0).
  std::printf("%-8s %-24s %10s %9s %8s %10s %9s\n", "layer", "variant", "median ms", "GFLOP/s",
              "verified", "per-inf ms", "GFLOP/s");
  for (const std::string& spec : options.layers) {
    ConvLayer layer = parseConvLayer(spec);
    const Listing3Data data = randomData(layer, options.seed);
    nlohmann::ordered_json entry;
    entry["layer"] = layer.name;
    entry["spec"] = spec;
    entry["shape"] = layer.describe();
    entry["flops"] = layer.flops();
    entry["variants"] = nlohmann::ordered_json::array();
    for (const Variant& v : variants) {
      std::fprintf(stderr, "%s %s ...\n", layer.name.c_str(), v.name.c_str());
      nlohmann::ordered_json r = benchVariant(layer, data, v, context, options);
      allVerified = allVerified && r["verified"].get<bool>();
      if (r.contains("error")) {
        std::printf("%-8s %-24s error: %s\n", layer.name.c_str(), v.name.c_str(),
                    r["error"].get<std::string>().c_str());
      } else {
        std::printf("%-8s %-24s %10.2f %9.2f %8s", layer.name.c_str(), v.name.c_str(),
                    r["kernel_ms"]["median"].get<double>(), r["gflops_per_s"].get<double>(),
                    r["verified"].get<bool>() ? "yes" : "NO");
        if (r.contains("per_inference_ms")) {
          std::printf(" %10.2f %9.2f", r["per_inference_ms"].get<double>(),
                      r["per_inference_gflops_per_s"].get<double>());
        }
        std::printf("\n");
      }
      std::fflush(stdout);
      entry["variants"].push_back(r);
    }
    layers.push_back(entry);
  }

  nlohmann::ordered_json report;
  report["benchmark"] = "conv_blocked";
  report["description"] =
      "Listing 3 (channels innermost), default lowering vs conv-register-blocked (theta = padded "
      "image, rho = 0, unroll = 0, kappa x sigma private accumulators); all sizes specialised; "
      "kernel_ms: sum of the kernels' cl_event times per run (pad + convolution + crop for the "
      "blocked variants), median over the timed runs after one warm-up run; gflops_per_s = "
      "2*M*C*K^2*outH*outW / median";
  report["date"] = utcNow();
  report["device"] = {{"name", device.name},
                      {"profile", profile.name},
                      {"platform", device.platformName},
                      {"platform_version", device.platformVersion},
                      {"compute_units", profile.computeUnits}};
  report["layers"] = layers;
  const std::filesystem::path out = writeResultsJson(
      report, options.out,
      std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / ("conv_blocked_" + profile.name + ".json"));
  std::printf("written to %s\n", out.string().c_str());
  return allVerified ? 0 : 1;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app{"Register-blocked direct convolution (conv-register-blocked) vs the default "
               "lowering on VGG-16 layers; JSON under bench/results/"};
  app.add_option("--device", options.device, "OpenCL device (default: first GPU, else PoCL)");
  app.add_option("--out", options.out, "the JSON results file");
  app.add_option("--source-dir", options.sourceDir, "write each variant's OpenCL source here");
  app.add_option("--layer", options.layers, "vgg16:N or C,H,W,M,K,stride,pad")
      ->capture_default_str();
  app.add_option("--variant", options.variants,
                 "register-blocked variants KAPPA,SIGMA (none: no such variant)")
      ->capture_default_str();
  app.add_option("--hand", options.handVariants,
                 "hand-written float-vector variants KAPPA,SIGMA,ROWS[,PADLOADS] (issue 8 step "
                 "1; PADLOADS 1: no pad kernel, guarded loads)");
  app.add_option("--vector", options.vectorVariants,
                 "conv-register-blocked-vector strategy variants KAPPA,SIGMA,ROWS[,PADLOADS] (the "
                 "same family produced by the rules; PADLOADS 1 = pad_in_loads: no pad kernel, "
                 "the convolution reads the input through guarded loads)");
  app.add_flag("--skip-default", options.skipDefault, "do not run the default lowering");
  app.add_option("--min-repeats", options.minRepeats, "timed runs at least")->capture_default_str();
  app.add_option("--min-seconds", options.minSeconds, "timed runs until this much kernel time")
      ->capture_default_str();
  app.add_option("--samples", options.samples, "outputs checked against the host reference")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "seed of the random inputs")->capture_default_str();
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_conv_blocked",
                                  [&] { return weft::bench::run(options); });
}
