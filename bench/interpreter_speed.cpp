// weft_bench_interpreter_speed: the reference interpreter's CPU time on the example programs
// at small sizes (matmul 128^3, the LIFT stencil, blur and Harris at 256^2, the convolution
// layer file at 16 channels of 32x32 with 3x3 kernels), the oracle every rewrite rule, kernel and
// small exploration is checked against. Each program runs --repeats times on seeded inputs; the
// figure is the least thread CPU time, with the multiply-adds per second where the program
// counts them (matmul and the convolution). It links the IR library only, so that an older
// tree can build the same file and be timed in the same run (--label names the build).
// Writes OUT.json and OUT.md (default bench/results/interpreter_speed_run; the before/after
// comparison in interpreter_speed.md is composed from two builds' runs).
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"

#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif
#ifndef WEFT_SOURCE_DIR
#define WEFT_SOURCE_DIR "."
#endif

namespace {

using namespace weft;

struct Case {
  std::string name;
  std::string file;  // under examples/
  ArithBinding sizes;
  double multiplyAdds = 0;  // 0: not counted
};

double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Seeded inputs in [-1, 1) of the definition's parameter types at `sizes`.
std::vector<Value> inputsFor(const Definition& definition, const ArithBinding& sizes) {
  std::mt19937_64 rng(20200222);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<Value> inputs;
  for (const Expr& param : definition.function.params()) {
    const Type& type = param.paramType();
    int64_t count = 1;
    for (Type t = type; t.isArray(); t = t.arrayElement()) {
      count *= evaluate(t.arrayLength(), sizes);
    }
    std::vector<float> data(static_cast<size_t>(count));
    for (float& value : data) value = uniform(rng);
    inputs.push_back(valueFromFlat(type, sizes, data));
  }
  return inputs;
}

std::string fixed(double value, int digits) {
  std::string text = std::to_string(value);
  const size_t dot = text.find('.');
  return dot == std::string::npos ? text : text.substr(0, dot + 1 + digits);
}

}  // namespace

int main(int argc, char** argv) {
  std::string output = std::string(WEFT_BENCH_RESULTS_DIR) + "/interpreter_speed_run";
  std::string label = "this build";
  int repeats = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--out" && i + 1 < argc) {
      output = argv[++i];
    } else if (arg == "--label" && i + 1 < argc) {
      label = argv[++i];
    } else if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::stoi(argv[++i]));
    } else {
      std::cerr << "usage: weft_bench_interpreter_speed [--out PATH] [--label TEXT] "
                   "[--repeats N]\n"
                   "Times the reference interpreter on the example programs at small sizes "
                   "(least thread CPU time of N runs) and writes PATH.json and PATH.md.\n";
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  const std::vector<Case> cases = {
      {"matmul 128^3", "matmul.weft", {{"M", 128}, {"N", 128}, {"K", 128}}, 128.0 * 128 * 128},
      {"stencil2D 256^2", "stencil2d.weft", {{"W", 256}, {"H", 256}}, 0},
      {"blur 256^2", "pipelines/blur.weft", {{"W", 256}, {"H", 256}}, 0},
      {"harris 256^2", "pipelines/harris.weft", {{"W", 256}, {"H", 256}}, 0},
      {"conv C=M=16 32x32 K=3",
       "conv.weft",
       {{"C", 16}, {"M", 16}, {"H", 32}, {"W", 32}, {"K", 3}, {"P", 1}, {"S", 1}},
       16.0 * 16 * 9 * 32 * 32},
  };
  std::string json = "{\n \"label\": \"" + label + "\",\n \"repeats\": " +
                     std::to_string(repeats) + ",\n \"cases\": [";
  std::string md = "| program (" + label + ") | CPU s | M multiply-adds/s |\n|---|---:|---:|\n";
  bool first = true;
  try {
    for (const Case& c : cases) {
      const Program program =
          parseFile(std::string(WEFT_SOURCE_DIR) + "/examples/" + c.file);
      const Definition& definition = program.definitions.back();
      const std::vector<Value> inputs = inputsFor(definition, c.sizes);
      double best = std::numeric_limits<double>::infinity();
      for (int r = 0; r < repeats; ++r) {
        const double start = threadCpuSeconds();
        const Value result = interpret(definition, inputs, c.sizes);
        best = std::min(best, threadCpuSeconds() - start);
        if (result.size() == 0) throw std::runtime_error(c.name + ": empty result");
      }
      const double rate = c.multiplyAdds > 0 ? c.multiplyAdds / best / 1e6 : 0;
      std::cout << c.name << ": " << fixed(best, 3) << " s CPU"
                << (rate > 0 ? ", " + fixed(rate, 2) + " M multiply-adds/s" : "") << "\n";
      json += std::string(first ? "" : ",") + "\n  {\"program\": \"" + c.name +
              "\", \"cpu_seconds\": " + fixed(best, 4) +
              (rate > 0 ? ", \"million_multiply_adds_per_second\": " + fixed(rate, 3) : "") +
              "}";
      md += "| " + c.name + " | " + fixed(best, 3) + " | " + (rate > 0 ? fixed(rate, 2) : "-") +
            " |\n";
      first = false;
    }
  } catch (const std::exception& error) {
    std::cerr << "weft_bench_interpreter_speed: " << error.what() << "\n";
    return 1;
  }
  json += "\n ]\n}\n";
  std::ofstream(output + ".json") << json;
  std::ofstream(output + ".md") << md;
  return 0;
}
