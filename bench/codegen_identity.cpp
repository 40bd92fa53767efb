// Checks that a refactoring changed nothing in what weft generates: for every VGG-16 layer and
// every image pipeline of examples/pipelines/ it samples points exactly as `weft explore` does
// (the same target, the pocl-cpu profile, a fixed seed) and generates each one's OpenCL source
// with the explorer's own generation step, then writes one manifest line per point: the item,
// its recorded parameters and a hash of the source (or of the generation error). Two manifests
// are equal exactly when the sampled points and every source are byte-identical.
//
//   build/bench/weft_bench_codegen_identity [--samples N] [--seed S] [--candidates C] [--out FILE]
//       [--check FILE] [--only-layers | --only-pipelines]
//
// --check FILE compares the fresh manifest with FILE line by line and exits 1 on the first
// differences (printed); the kept manifest is bench/results/codegen_identity.txt. Nothing is
// built or run on a device: only sampling and generation.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/measurement.h"
#include "workloads/pipeline/pipeline_target.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "ir/parser.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;

namespace {

struct Options {
  size_t samples = 50;
  uint64_t seed = 7;
  size_t candidates = 8;  // as weft explore's default
  std::string out;
  std::string check;
  bool onlyLayers = false;
  bool onlyPipelines = false;
};

// The pipelines at the sizes bench/pipelines measures them.
struct PipelineCase {
  const char* name;
  ArithBinding sizes;
};

std::vector<PipelineCase> pipelineCases() {
  return {{"blur", {{"W", 4096}, {"H", 4096}}},
          {"unsharp", {{"W", 4256}, {"H", 2832}, {"C", 3}}},
          {"harris", {{"W", 4256}, {"H", 2832}}},
          {"canny", {{"W", 4096}, {"H", 4096}}}};
}

// One manifest line per sampled point of `target`: "<item>/<index> <parameters> <hash>".
void manifestOf(const std::string& item, const explore::ExploreTarget& target,
                const host::DeviceProfile& profile, const Options& options,
                std::vector<std::string>& lines) {
  explore::SampledTarget sampled = explore::sampleCandidates(target, profile, options.samples,
                                                             options.seed, options.candidates);
  explore::Preparation prep;
  prep.target = target;
  prep.inputs.sizes = target.sizes;
  prep.inputs.expected = std::vector<float>{};  // nothing runs: no reference needed
  prep.spaces = std::move(sampled.spaces);
  prep.spaceStructure = std::move(sampled.spaceStructure);
  prep.pointSpace = std::move(sampled.pointSpace);
  prep.points = std::move(sampled.points);
  explore::MeasurementOptions measurement;
  measurement.constantInputs = target.constantInputs;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    const ArithBinding binding = prep.spaceOf(i).binding(prep.points[i]);
    explore::GeneratedVariant variant =
        explore::generateVariant(prep.programOf(i), binding, prep.inputs, measurement);
    const std::string hash =
        variant.program ? variant.measurement.sourceHash
                        : "error:" + explore::sourceHash(variant.measurement.message);
    lines.push_back(item + "/" + std::to_string(i) + " " + prep.parametersOf(i) + " " + hash);
  }
  std::fprintf(stderr, "%s: %zu points\n", item.c_str(), prep.points.size());
}

int run(const Options& options) {
  const host::DeviceProfile profile = host::loadProfile("pocl-cpu");
  std::vector<std::string> lines;
  if (!options.onlyPipelines) {
    for (const ConvLayer& layer : vgg16Layers()) {
      manifestOf(layer.name,
                 explore::layerTargetStructures(layer, {1, 2, 4, 8, 16}, {0, 1}, &profile),
                 profile, options, lines);
    }
  }
  if (!options.onlyLayers) {
    for (const PipelineCase& pipeline : pipelineCases()) {
      const Definition definition =
          parseFile(std::string(WEFT_SOURCE_DIR) + "/examples/pipelines/" + pipeline.name +
                    ".weft")
              .definitions.back();
      manifestOf(pipeline.name,
                 explore::pipelineTarget(definition, pipeline.sizes, {}), profile, options,
                 lines);
    }
  }
  if (!options.out.empty()) {
    std::ofstream file(options.out, std::ios::binary);
    for (const std::string& line : lines) file << line << "\n";
    if (!file) {
      std::fprintf(stderr, "error: cannot write %s\n", options.out.c_str());
      return 2;
    }
  }
  if (options.check.empty()) return 0;
  std::ifstream kept(options.check);
  if (!kept) {
    std::fprintf(stderr, "error: cannot read %s\n", options.check.c_str());
    return 2;
  }
  std::vector<std::string> expected;
  for (std::string line; std::getline(kept, line);) expected.push_back(line);
  size_t differences = 0;
  for (size_t i = 0; i < std::max(lines.size(), expected.size()); ++i) {
    const std::string got = i < lines.size() ? lines[i] : "(missing)";
    const std::string want = i < expected.size() ? expected[i] : "(missing)";
    if (got == want) continue;
    if (++differences <= 20) {
      std::fprintf(stderr, "differs:\n  kept: %s\n  now:  %s\n", want.c_str(), got.c_str());
    }
  }
  std::printf("%zu points, %zu differ from %s\n", lines.size(), differences,
              options.check.c_str());
  return differences == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Hashes the OpenCL sources of sampled VGG-16 and pipeline variants, to show a "
               "refactoring generates byte-identical kernels"};
  app.add_option("--samples", options.samples, "points per layer or pipeline (default 50)");
  app.add_option("--seed", options.seed, "the sampler's seed (default 7)");
  app.add_option("--candidates", options.candidates,
                 "candidates per sample, as weft explore --candidates (default 8)");
  app.add_option("--out", options.out, "write the manifest to this file");
  app.add_option("--check", options.check,
                 "compare with this manifest (e.g. bench/results/codegen_identity.txt)");
  app.add_flag("--only-layers", options.onlyLayers, "the 13 VGG-16 layers only");
  app.add_flag("--only-pipelines", options.onlyPipelines, "the four pipelines only");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 2;
  }
}
