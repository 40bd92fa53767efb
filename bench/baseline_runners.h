// The three baselines of the Table 3 benchmark, shared by weft_bench_baselines (the baselines
// alone) and weft_bench_table3 (the best explored variants against them, in one run): the naive
// direct convolution, CLBlast's im2col + SGEMM on the same OpenCL device, and PyTorch's CPU
// conv2d through bench/baselines_torch.py. Each measures one layer (PyTorch: a list of layers,
// one child process each), verifies the output against conv2d's definition in double
// (bench_support.h verifyOutput) and returns the layer's figures as the results JSON writes them:
// time_ms {median, min, samples}, gflops_per_s, memory_bytes, verified, verification and what
// the time and the memory mean.
//
//  - naive: weft's built-in layer with the default lowering (bench_support.h runNaiveConv);
//    time = the kernel's cl_event time; memory = CompiledProgram::globalBytes.
//  - clblast: clblast::Im2col (cross-correlation, as conv2d) writes col[C·K·K][outH·outW]; a
//    one-line kernel writes the bias into every output row; clblast::Gemm (row-major,
//    y[M][outH·outW] = w[M][C·K·K] · col + y, beta = 1) adds the products. Time = wall clock
//    (steady_clock) from before the im2col call to after clFinish following the GEMM (clFinish
//    after each phase, so the phases are reported too). Memory = every device buffer: input,
//    column matrix, weights, bias, output and CLBlast's GEMM temporary buffer
//    (clblast::GemmTempBufferSize, allocated here and passed to Gemm so that it is counted).
//  - pytorch: bench/baselines_torch.py run with --python (Debian's /usr/bin/python3); its JSON
//    report (one entry per layer, under the layer's name) is returned as it comes.
//
// Timed runs: one warm-up, then at least minRepeats and until they add up to minSeconds.
// This file needs CLBlast (libclblast-dev): bench/CMakeLists.txt builds it only when found.
#pragma once

#include <CLI/CLI.hpp>

#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "host/opencl_runtime.h"
#include "workloads/conv/conv_layer.h"

namespace weft::bench {

struct BaselineSettings {
  int minRepeats = 5;
  double minSeconds = 1.0;
  int samples = 2000;  // outputs verified on layers above fullCheckFlops
  int64_t fullCheckFlops = 400'000'000;
  unsigned seed = 1;  // of the random data and of the verified outputs
  std::string python = "/usr/bin/python3";
  std::string torchScript;  // bench/baselines_torch.py
  int threads = 2;          // PyTorch's threads
};

// The options both benchmarks take for the baselines: --min-repeats, --min-seconds, --samples,
// --seed, --no-naive, --no-clblast, --no-torch, --python, --torch-script, --threads.
void addBaselineOptions(CLI::App& app, BaselineSettings& settings, bool& naive, bool& clblast,
                        bool& torch);

// Layers with equal numbers (conv3_2 and conv3_3, ...) are measured once: the key of a shape.
using ShapeKey = std::array<int64_t, 7>;
inline ShapeKey shapeKey(const ConvLayer& l) { return {l.C, l.H, l.W, l.M, l.K, l.stride, l.pad}; }

// {median, min, samples} of a list of milliseconds.
nlohmann::ordered_json timeJson(const std::vector<double>& milliseconds);
// layer.flops() / time, in GFLOP/s.
double gflopsPerSecond(const ConvLayer& layer, double milliseconds);

// The naive direct convolution of `layer` on `context`'s device.
nlohmann::ordered_json measureNaive(const ConvLayer& layer, const LayerData& data,
                                    host::Context& context, const BaselineSettings& settings);

// CLBlast im2col + bias + SGEMM of `layer` on `context`'s device.
nlohmann::ordered_json measureClblast(const ConvLayer& layer, const LayerData& data,
                                      host::Context& context, const BaselineSettings& settings);
// "1.5.3": the CLBlast this was built against.
std::string clblastVersion();

// Runs bench/baselines_torch.py on `layers` (each under its name) and returns its JSON report
// ({torch_version, mkldnn, threads, python, layers: [...]}). Throws std::runtime_error when
// the script cannot be started or fails (e.g. python3-torch missing).
nlohmann::json measureTorch(const std::vector<ConvLayer>& layers, const BaselineSettings& settings);
// Runs `python script arguments` (arguments already quoted for the shell) and parses the JSON it
// prints; throws when it fails (no torch: scripts/setup-bench.sh).
nlohmann::json runTorchScript(const std::string& python, const std::string& script,
                              const std::string& arguments);
// `text` in single quotes for sh.
std::string shellQuote(const std::string& text);

// The entry of one layer of measureTorch's report, with the keys the other methods use.
nlohmann::ordered_json torchLayerJson(const nlohmann::json& entry);

}  // namespace weft::bench
