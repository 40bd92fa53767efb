// baseline_runners.h: the naive, CLBlast im2col + SGEMM and PyTorch baselines of the Table 3
// benchmark, measured and verified one layer at a time (moved here from bench/baselines.cpp so
// that weft_bench_baselines and weft_bench_table3 share them).
#define CL_TARGET_OPENCL_VERSION 120
#include "bench/baseline_runners.h"

#include <clblast.h>
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <optional>
#include <stdexcept>

namespace weft::bench {

namespace {

// Writes b[m] into every element of row m of y[M][pixels]; global size (pixels, M).
constexpr const char* kBiasSource = R"CL(
__kernel void broadcast_bias(__global const float* bias, __global float* y, int pixels) {
  y[(size_t)get_global_id(1) * pixels + get_global_id(0)] = bias[get_global_id(1)];
}
)CL";

void checkClblast(clblast::StatusCode status, const char* call) {
  if (status != clblast::StatusCode::kSuccess) {
    throw std::runtime_error(
        fmt::format("{} failed: CLBlast status {}", call, static_cast<int>(status)));
  }
}

}  // namespace

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

nlohmann::json runTorchScript(const std::string& python, const std::string& script,
                              const std::string& arguments) {
  const std::string command = shellQuote(python) + " " + shellQuote(script) + " " + arguments;
  std::fprintf(stderr, "pytorch: %s\n", command.c_str());
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot start " + python);
  std::string text;
  char buffer[4096];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, got);
  const int status = pclose(pipe);
  if (status != 0) {
    throw std::runtime_error(
        fmt::format("{} exited with status {} (is python3-torch installed? "
                    "scripts/setup-bench.sh)",
                    script, status));
  }
  return nlohmann::json::parse(text);
}

nlohmann::ordered_json timeJson(const std::vector<double>& milliseconds) {
  return {{"median", median(milliseconds)},
          {"min", *std::min_element(milliseconds.begin(), milliseconds.end())},
          {"samples", milliseconds}};
}

double gflopsPerSecond(const ConvLayer& layer, double milliseconds) {
  return static_cast<double>(layer.flops()) / (milliseconds * 1e-3) / 1e9;
}

// ---- naive ------------------------------------------------------------------------------------

nlohmann::ordered_json measureNaive(const ConvLayer& layer, const LayerData& data,
                                    host::Context& context, const BaselineSettings& settings) {
  NaiveConvRun run = runNaiveConv(layer, data, context, settings.minRepeats, settings.minSeconds);
  Verification check = verifyOutput(layer, data, run.warmUpOutput, settings.samples,
                                    settings.fullCheckFlops, settings.seed);
  const double ms = median(run.repeatMs);
  return {{"time_ms", timeJson(run.repeatMs)},
          {"gflops_per_s", gflopsPerSecond(layer, ms)},
          {"memory_bytes", run.globalBytes},
          {"timing", "sum of the kernels' cl_event times"},
          {"warmup_ms", run.warmUpMs},
          {"verified", check.passed},
          {"verification", verificationJson(check, layer, "C++ loops on the host, double")}};
}

// ---- CLBlast im2col + SGEMM -------------------------------------------------------------------

nlohmann::ordered_json measureClblast(const ConvLayer& l, const LayerData& data,
                                      host::Context& context, const BaselineSettings& settings) {
  const size_t pixels = static_cast<size_t>(l.outH() * l.outW());
  const size_t window = static_cast<size_t>(l.C * l.K * l.K);
  const size_t kernels = static_cast<size_t>(l.M);
  cl_command_queue queue = context.queue();

  host::Buffer input = context.createBuffer(std::span<const float>(data.x));
  host::Buffer weights = context.createBuffer(std::span<const float>(data.w));
  host::Buffer bias = context.createBuffer(std::span<const float>(data.b));
  host::Buffer columns = context.createBuffer(window * pixels * sizeof(float));
  host::Buffer output = context.createBuffer(kernels * pixels * sizeof(float));
  size_t tempBytes = 0;
  checkClblast(clblast::GemmTempBufferSize<float>(
                   clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo,
                   kernels, pixels, window, 0, window, 0, pixels, 0, pixels, &queue, tempBytes),
               "clblast::GemmTempBufferSize");
  std::optional<host::Buffer> temp;
  if (tempBytes > 0) temp = context.createBuffer(tempBytes);

  host::Program program = context.build(kBiasSource);
  host::Kernel broadcast(program, "broadcast_bias");
  broadcast.setArgs(bias, output, static_cast<int32_t>(pixels));

  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };
  // One run; returns the wall-clock milliseconds of im2col, bias and GEMM.
  auto runOnce = [&]() {
    const Clock::time_point start = Clock::now();
    checkClblast(
        clblast::Im2col<float>(clblast::KernelMode::kCrossCorrelation, static_cast<size_t>(l.C),
                               static_cast<size_t>(l.H), static_cast<size_t>(l.W),
                               static_cast<size_t>(l.K), static_cast<size_t>(l.K),
                               static_cast<size_t>(l.pad), static_cast<size_t>(l.pad),
                               static_cast<size_t>(l.stride), static_cast<size_t>(l.stride), 1, 1,
                               input.get(), 0, columns.get(), 0, &queue, nullptr),
        "clblast::Im2col");
    context.finish();
    const Clock::time_point afterIm2col = Clock::now();
    context.enqueue(broadcast, host::NDRange(pixels, kernels));
    context.finish();
    const Clock::time_point afterBias = Clock::now();
    checkClblast(
        clblast::Gemm<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                             clblast::Transpose::kNo, kernels, pixels, window, 1.0f, weights.get(),
                             0, window, columns.get(), 0, pixels, 1.0f, output.get(), 0, pixels,
                             &queue, nullptr, temp ? temp->get() : nullptr),
        "clblast::Gemm");
    context.finish();
    const Clock::time_point end = Clock::now();
    return std::array<double, 4>{ms(start, end), ms(start, afterIm2col), ms(afterIm2col, afterBias),
                                 ms(afterBias, end)};
  };

  const std::array<double, 4> warmUp = runOnce();  // compiles CLBlast's kernels
  Verification check = verifyOutput(l, data, context.read<float>(output), settings.samples,
                                    settings.fullCheckFlops, settings.seed);
  std::vector<double> total, im2col, biasMs, gemm;
  double elapsed = 0;
  while (static_cast<int>(total.size()) < settings.minRepeats ||
         (elapsed < settings.minSeconds * 1e3 && total.size() < 1000)) {
    std::array<double, 4> run = runOnce();
    total.push_back(run[0]);
    im2col.push_back(run[1]);
    biasMs.push_back(run[2]);
    gemm.push_back(run[3]);
    elapsed += run[0];
  }
  const double medianMs = median(total);
  const int64_t memory = static_cast<int64_t>(input.bytes() + columns.bytes() + weights.bytes() +
                                              bias.bytes() + output.bytes() + tempBytes);
  return {{"time_ms", timeJson(total)},
          {"gflops_per_s", gflopsPerSecond(l, medianMs)},
          {"memory_bytes", memory},
          {"timing",
           "wall clock from the im2col call to clFinish after the GEMM (clFinish after each "
           "phase)"},
          {"phases_median_ms",
           {{"im2col", median(im2col)}, {"bias", median(biasMs)}, {"gemm", median(gemm)}}},
          {"buffers_bytes",
           {{"input", input.bytes()},
            {"im2col", columns.bytes()},
            {"weights", weights.bytes()},
            {"bias", bias.bytes()},
            {"output", output.bytes()},
            {"gemm_temp", tempBytes}}},
          {"gemm", fmt::format("row-major M={} N={} K={}", kernels, pixels, window)},
          {"warmup_ms", warmUp[0]},
          {"verified", check.passed},
          {"verification", verificationJson(check, l, "C++ loops on the host, double")}};
}

std::string clblastVersion() {
  return fmt::format("{}.{}.{}", CLBLAST_VERSION_MAJOR, CLBLAST_VERSION_MINOR,
                     CLBLAST_VERSION_PATCH);
}

// ---- PyTorch --------------------------------------------------------------------------------

nlohmann::json measureTorch(const std::vector<ConvLayer>& layers,
                            const BaselineSettings& settings) {
  std::string arguments;
  for (const ConvLayer& l : layers) {
    arguments += " --layer " + shellQuote(fmt::format("{}={},{},{},{},{},{},{}", l.name, l.C, l.H,
                                                      l.W, l.M, l.K, l.stride, l.pad));
  }
  arguments += fmt::format(" --threads {} --min-repeats {} --min-seconds {} --samples {} --seed {}",
                           settings.threads, settings.minRepeats, settings.minSeconds,
                           settings.samples, settings.seed);
  return runTorchScript(settings.python, settings.torchScript, arguments);
}

nlohmann::ordered_json torchLayerJson(const nlohmann::json& entry) {
  nlohmann::ordered_json m;
  for (const char* key : {"time_ms", "gflops_per_s", "memory_bytes", "tensor_bytes", "warmup_ms",
                          "verified", "verification"}) {
    m[key] = entry.at(key);
  }
  m["timing"] = "time.perf_counter around each conv2d call";
  m["memory"] = "growth of ru_maxrss in a fresh process (tensor_bytes: x + w + b + y)";
  return m;
}

void addBaselineOptions(CLI::App& app, BaselineSettings& settings, bool& naive, bool& clblast,
                        bool& torch) {
  app.add_option("--min-repeats", settings.minRepeats, "timed runs at least")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--min-seconds", settings.minSeconds, "timed runs until they add up to this")
      ->capture_default_str();
  app.add_option("--samples", settings.samples,
                 "outputs verified on layers above 4e8 flops (PyTorch: on every layer)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", settings.seed, "seed of the random data")->capture_default_str();
  app.add_flag("!--no-naive", naive, "skip the naive direct convolution");
  app.add_flag("!--no-clblast", clblast, "skip CLBlast im2col + SGEMM");
  app.add_flag("!--no-torch", torch, "skip PyTorch");
  app.add_option("--python", settings.python, "the Python with torch")->capture_default_str();
  app.add_option("--torch-script", settings.torchScript, "bench/baselines_torch.py")
      ->capture_default_str();
  app.add_option("--threads", settings.threads, "PyTorch's threads")->capture_default_str();
}

}  // namespace weft::bench
