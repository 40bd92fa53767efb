// weft_bench_pipelines: the blur pipeline of issue 9 (examples/pipelines/blur.weft) at full size
// on an OpenCL device, weft's generated kernels against hand-written OpenCL, to learn what is
// fast (on PoCL: strips of consecutive x outputs per work-item as float vectors, the producer
// kept in private memory, explicit local sizes) and to measure how far weft's output is from it.
//
// Variants (each verified against the C++ reference of tests/support/pipeline_reference.h on
// every pixel, borders included; times are the median over the repeats of the summed cl_event
// times of the variant's kernels):
//   weft unfused            examples/pipelines/blur.weft with the default lowering (2 kernels),
//                           local size left to the implementation, and with --local sizes
//   weft fused-local        the pipeline-fused-local strategy (one kernel; blurx tile in local
//                           memory, barrier, blury), tile sizes --local-tiles
//   weft fused-private      the pipeline-fused-private strategy (one kernel; each work-item
//                           computes its blurx tile with its halo in private memory), tiles and
//                           the local size along x --private-tiles THETA1,THETA2,LOCALX
//   hand unfused            two kernels, each work-item a strip of V outputs along x (vloadV /
//                           vstoreV; indices clamped only in the strips that touch a border)
//   hand fused              one kernel, each work-item a TY x V tile: blurx of its TY + 2 rows
//                           (halo) in private float vectors, then blury; no local memory
//   hand fused-rolling      the same with blurx kept as a sliding window of three rows
//                           (line buffering: each blurx row computed once per strip)
//
//   build/bench/weft_bench_pipelines [--device D] [--size 4096] [--repeats 9] [--out FILE]
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/bench_support.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "rewrite/strategy_pipeline_fusion.h"
#include "tests/support/pipeline_reference.h"

namespace weft::bench {
namespace {

using testing::pipelines::Image;

struct Options {
  std::string device;
  std::string out;
  int size = 4096;
  int repeats = 9;
  std::vector<std::string> localSizes = {"64,1", "256,1", "1024,1", "128,4"};
  std::vector<std::string> localTiles = {"34,32", "18,64", "10,128"};
  std::vector<std::string> privateTiles = {"10,1,16", "18,1,16", "34,1,16",
                                           "18,1,64", "10,4,16", "18,8,8"};
  std::vector<std::string> handShapes = {"8,8,16", "16,4,16", "16,8,8", "16,16,16", "16,32,4"};
};

struct Measured {
  std::string name;
  std::string kind;  // weft-unfused, weft-fused-local, weft-fused-private, hand-...
  std::vector<double> ms;
  int64_t mismatches = 0;
  std::string note;
  double medianMs() const { return median(ms); }
};

std::vector<int> parseInts(const std::string& text) {
  std::vector<int> values;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    values.push_back(std::stoi(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return values;
}

int64_t countMismatches(const std::vector<float>& got, const Image& expected) {
  if (got.size() != expected.data.size()) return static_cast<int64_t>(expected.data.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - expected.data[i]) <= 1e-5f)) ++bad;
  }
  return bad;
}

Definition loadBlur() {
  return parseFile(std::string(WEFT_SOURCE_DIR) + "/examples/pipelines/blur.weft")
      .definitions.back();
}

// A weft program run through the program runner: one warm-up, then `repeats` timed runs.
Measured runWeft(host::Context& context, host::ProgramCache& cache, const std::string& name,
                 const std::string& kind, CompiledProgram program, const Image& image,
                 const Image& expected, int repeats) {
  const ArithBinding sizes{{"W", image.width}, {"H", image.height}};
  const Type inputType =
      Type::array(Type::array(Type::floatType(), Arith(image.width)), Arith(image.height));
  const Value input = valueFromFlat(inputType, sizes, image.data);
  host::RunOptions options;
  options.cache = &cache;
  Measured m{name, kind, {}, 0, ""};
  host::RunResult first = host::runProgram(context, program, {input}, sizes, options);
  m.mismatches = countMismatches(flattenToFloats(first.output), expected);
  options.repeats = repeats;
  host::RunResult timed = host::runProgram(context, program, {input}, sizes, options);
  for (uint64_t ns : timed.repeatNanoseconds) m.ms.push_back(static_cast<double>(ns) / 1e6);
  return m;
}

CompiledProgram withLocalSize(CompiledProgram program, int lx, int ly) {
  for (KernelPlan& k : program.kernels) {
    k.hasLocalSize = true;
    k.localSize = {Arith(lx), Arith(ly), Arith(1)};
  }
  return program;
}

// ---- the hand-written kernels --------------------------------------------------------------

// V: strip width (a float vector), TY: output rows per work-item in the fused kernels.
std::string handSource(int v) {
  return fmt::format(R"CL(
#define V {0}
#define FV float{0}
#define LOADV vload{0}
#define STOREV vstore{0}

// blurx of the V pixels of `row` from x0 on; indices clamped only in a border strip.
inline FV blurxStrip(const global float* row, int x0, int W) {{
  const FV c = LOADV(0, row + x0);
  FV l, r;
  if (x0 > 0 && x0 + V < W) {{
    l = LOADV(0, row + x0 - 1);
    r = LOADV(0, row + x0 + 1);
  }} else {{
    float tl[V], tr[V];
    for (int i = 0; i < V; ++i) {{
      tl[i] = row[max(x0 + i - 1, 0)];
      tr[i] = row[min(x0 + i + 1, W - 1)];
    }}
    l = LOADV(0, tl);
    r = LOADV(0, tr);
  }}
  return ((l + c) + r) / 3.0f;
}}

kernel void hand_blurx(const global float* restrict in, global float* restrict out, int W) {{
  const int x0 = get_global_id(0) * V;
  const int y = get_global_id(1);
  STOREV(blurxStrip(in + (size_t)y * W, x0, W), 0, out + (size_t)y * W + x0);
}}

kernel void hand_blury(const global float* restrict in, global float* restrict out, int W,
                       int H) {{
  const int x0 = get_global_id(0) * V;
  const int y = get_global_id(1);
  const FV a = LOADV(0, in + (size_t)max(y - 1, 0) * W + x0);
  const FV b = LOADV(0, in + (size_t)y * W + x0);
  const FV c = LOADV(0, in + (size_t)min(y + 1, H - 1) * W + x0);
  STOREV(((a + b) + c) / 3.0f, 0, out + (size_t)y * W + x0);
}}

// TY x V outputs per work-item: blurx of rows y0 - 1 .. y0 + TY (clamped) in private memory.
kernel void hand_fused(const global float* restrict in, global float* restrict out, int W,
                       int H, int TY) {{
  const int x0 = get_global_id(0) * V;
  const int y0 = get_global_id(1) * TY;
  FV bx[66];
  for (int i = 0; i < TY + 2; ++i) {{
    const int r = clamp(y0 - 1 + i, 0, H - 1);
    bx[i] = blurxStrip(in + (size_t)r * W, x0, W);
  }}
  for (int i = 0; i < TY; ++i) {{
    STOREV(((bx[i] + bx[i + 1]) + bx[i + 2]) / 3.0f, 0, out + (size_t)(y0 + i) * W + x0);
  }}
}}

// The same with blurx as a sliding window of three rows.
kernel void hand_fused_rolling(const global float* restrict in, global float* restrict out,
                               int W, int H, int TY) {{
  const int x0 = get_global_id(0) * V;
  const int y0 = get_global_id(1) * TY;
  FV p0 = blurxStrip(in + (size_t)max(y0 - 1, 0) * W, x0, W);
  FV p1 = blurxStrip(in + (size_t)y0 * W, x0, W);
  for (int i = 0; i < TY; ++i) {{
    const FV p2 = blurxStrip(in + (size_t)min(y0 + i + 1, H - 1) * W, x0, W);
    STOREV(((p0 + p1) + p2) / 3.0f, 0, out + (size_t)(y0 + i) * W + x0);
    p0 = p1;
    p1 = p2;
  }}
}}
)CL",
                     v);
}

struct HandRun {
  host::Context& context;
  const Image& image;
  const Image& expected;
  int repeats;
  host::Buffer input, temp, output;
};

// Runs `launch` (which enqueues the variant's kernels and returns their summed time) once to
// warm up and check, then `repeats` times.
Measured timeHand(HandRun& run, const std::string& name, const std::string& kind,
                  const std::function<uint64_t()>& launch) {
  Measured m{name, kind, {}, 0, ""};
  launch();
  m.mismatches = countMismatches(run.context.read<float>(run.output), run.expected);
  for (int i = 0; i < run.repeats; ++i) m.ms.push_back(static_cast<double>(launch()) / 1e6);
  return m;
}

std::vector<Measured> runHand(host::Context& context, const Options& o, const Image& image,
                              const Image& expected) {
  const int w = image.width, h = image.height;
  const size_t bytes = sizeof(float) * image.data.size();
  HandRun run{context,
              image,
              expected,
              o.repeats,
              context.createBuffer(std::span<const float>(image.data)),
              context.createBuffer(bytes),
              context.createBuffer(bytes)};
  std::vector<Measured> results;
  for (const std::string& shape : o.handShapes) {
    const std::vector<int> p = parseInts(shape);  // V, TY, local x
    if (p.size() != 3) throw std::invalid_argument("--hand wants V,TY,LOCALX");
    const int v = p[0], ty = p[1], lx = p[2];
    if (w % (v * lx) != 0 || h % ty != 0) continue;
    host::Program program = context.build(handSource(v));
    host::Kernel bx(program, "hand_blurx"), by(program, "hand_blury"), fused(program, "hand_fused"),
        rolling(program, "hand_fused_rolling");
    bx.setArgs(run.input, run.temp, int32_t(w));
    by.setArgs(run.temp, run.output, int32_t(w), int32_t(h));
    fused.setArgs(run.input, run.output, int32_t(w), int32_t(h), int32_t(ty));
    rolling.setArgs(run.input, run.output, int32_t(w), int32_t(h), int32_t(ty));
    const host::NDRange strips(static_cast<size_t>(w / v), static_cast<size_t>(h));
    const host::NDRange tiles(static_cast<size_t>(w / v), static_cast<size_t>(h / ty));
    const host::NDRange local(static_cast<size_t>(lx), 1);
    results.push_back(timeHand(
        run, fmt::format("hand unfused V={} local={}", v, lx), "hand-unfused",
        [&] { return context.launch(bx, strips, local) + context.launch(by, strips, local); }));
    if (ty <= 64) {
      results.push_back(timeHand(run, fmt::format("hand fused V={} TY={} local={}", v, ty, lx),
                                 "hand-fused",
                                 [&] { return context.launch(fused, tiles, local); }));
    }
    results.push_back(
        timeHand(run, fmt::format("hand fused-rolling V={} TY={} local={}", v, ty, lx),
                 "hand-fused-rolling", [&] { return context.launch(rolling, tiles, local); }));
  }
  return results;
}

// ---- weft's variants -----------------------------------------------------------------------

std::vector<Measured> runWeftVariants(host::Context& context, const Options& o, const Image& image,
                                      const Image& expected) {
  host::ProgramCache cache;
  std::vector<Measured> results;
  const Definition blur = loadBlur();
  CodegenOptions codegen;
  codegen.specialize = {{"W", image.width}, {"H", image.height}};
  const CompiledProgram unfused = generateOpenCL(lowerDefault(blur), codegen);
  results.push_back(runWeft(context, cache, "weft unfused (local: implementation's)",
                            "weft-unfused", unfused, image, expected, o.repeats));
  for (const std::string& spec : o.localSizes) {
    const std::vector<int> l = parseInts(spec);
    if (l.size() != 2 || image.width % l[0] != 0 || image.height % l[1] != 0) continue;
    results.push_back(runWeft(context, cache, fmt::format("weft unfused local={}x{}", l[0], l[1]),
                              "weft-unfused", withLocalSize(unfused, l[0], l[1]), image, expected,
                              o.repeats));
  }
  for (const std::string& spec : o.localTiles) {
    const std::vector<int> t = parseInts(spec);
    if (t.size() != 2 || image.height % (t[0] - 2) != 0 || image.width % t[1] != 0) continue;
    if (t[1] * (t[0] - 2) > 4096) continue;  // over the device's work-group limit
    rewrite::RewriteContext rewriting;
    rewrite::StrategyResult fused = rewrite::pipelineFusedLocal(
        {{"theta1", Arith(t[0])}, {"theta2", Arith(t[1])}})(blur, rewriting);
    if (!fused.success()) throw std::runtime_error(fused.failure);
    results.push_back(
        runWeft(context, cache, fmt::format("weft fused-local theta1={} theta2={}", t[0], t[1]),
                "weft-fused-local", generateOpenCL(lowerDefault(*fused.definition), codegen), image,
                expected, o.repeats));
  }
  for (const std::string& spec : o.privateTiles) {
    const std::vector<int> t = parseInts(spec);  // theta1, theta2, local size along x
    if (t.size() != 3) throw std::invalid_argument("--private-tiles wants THETA1,THETA2,LOCALX");
    const int tilesX = image.width / t[1];
    if (image.height % (t[0] - 2) != 0 || image.width % t[1] != 0 || tilesX % t[2] != 0) continue;
    rewrite::RewriteContext rewriting;
    rewrite::StrategyResult fused = rewrite::pipelineFusedPrivate(
        {{"theta1", Arith(t[0])}, {"theta2", Arith(t[1])}})(blur, rewriting);
    if (!fused.success()) throw std::runtime_error(fused.failure);
    results.push_back(
        runWeft(context, cache,
                fmt::format("weft fused-private theta1={} theta2={} local={}x1", t[0], t[1], t[2]),
                "weft-fused-private",
                withLocalSize(generateOpenCL(lowerDefault(*fused.definition), codegen), t[2], 1),
                image, expected, o.repeats));
  }
  return results;
}

int runBench(const Options& o) {
  host::prepareOpenCLEnvironment();
  const host::Device device = host::selectDevice(o.device);
  host::Context context(device);
  const host::DeviceProfile profile = host::queryProfile(device);
  const Image image = testing::pipelines::randomImage(o.size, o.size, 1, 11);
  const Image expected = testing::pipelines::blurReference(image);
  fmt::print("blur {}x{} on {} ({} repeats, median ms)\n", o.size, o.size, device.name, o.repeats);

  std::vector<Measured> all = runWeftVariants(context, o, image, expected);
  for (Measured& m : runHand(context, o, image, expected)) all.push_back(std::move(m));

  nlohmann::ordered_json report;
  report["benchmark"] = "pipelines";
  report["pipeline"] = "blur";
  report["date"] = utcNow();
  report["device"] = deviceJson(device, profile);
  report["width"] = o.size;
  report["height"] = o.size;
  report["repeats"] = o.repeats;
  nlohmann::ordered_json variants = nlohmann::ordered_json::array();
  std::map<std::string, std::pair<double, std::string>> best;
  bool allCorrect = true;
  for (const Measured& m : all) {
    const double ms = m.medianMs();
    fmt::print("  {:<52} {:>8.2f} ms{}\n", m.name, ms,
               m.mismatches ? fmt::format("  WRONG: {} pixels differ", m.mismatches) : "");
    allCorrect = allCorrect && m.mismatches == 0;
    variants.push_back({{"name", m.name},
                        {"kind", m.kind},
                        {"median_ms", ms},
                        {"ms", m.ms},
                        {"mismatching_pixels", m.mismatches}});
    if (m.mismatches == 0 && (!best.count(m.kind) || ms < best[m.kind].first)) {
      best[m.kind] = {ms, m.name};
    }
  }
  report["variants"] = variants;
  nlohmann::ordered_json bestJson;
  fmt::print("best per kind:\n");
  for (const auto& [kind, value] : best) {
    fmt::print("  {:<20} {:>8.2f} ms  ({})\n", kind, value.first, value.second);
    bestJson[kind] = {{"median_ms", value.first}, {"variant", value.second}};
  }
  report["best"] = bestJson;
  const std::filesystem::path written = writeResultsJson(
      report, o.out, std::filesystem::path(WEFT_BENCH_RESULTS_DIR) / "pipelines.json");
  fmt::print("wrote {}\n", written.string());
  return allCorrect ? 0 : 2;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app{"weft_bench_pipelines: blur at full size, weft's kernels vs hand-written OpenCL"};
  app.add_option("--device", options.device, "OpenCL device (index, gpu, cpu or part of a name)");
  app.add_option("--out", options.out, "results JSON (default bench/results/pipelines.json)");
  app.add_option("--size", options.size, "image width and height (default 4096)");
  app.add_option("--repeats", options.repeats, "timed runs per variant (default 9)");
  app.add_option("--local", options.localSizes, "local sizes LX,LY for weft's unfused kernels");
  app.add_option("--local-tiles", options.localTiles, "THETA1,THETA2 of pipeline-fused-local");
  app.add_option("--private-tiles", options.privateTiles,
                 "THETA1,THETA2,LOCALX of pipeline-fused-private");
  app.add_option("--hand", options.handShapes, "V,TY,LOCALX of the hand-written kernels");
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_pipelines",
                                  [&] { return weft::bench::runBench(options); });
}
