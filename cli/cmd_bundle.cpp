// `weft bundle --layer vgg16:N|C,H,W,M,K,stride,pad --samples K [--seed S] [--candidates C]
// --profile P --out DIR [--vector-width V] [--unroll 0|1]`: a measurement bundle (export/bundle_export.h) for a device
// weft cannot reach: K variants of the layer sampled exactly as `weft explore --profile P --seed
// S --samples K` would sample them, each generated as the explorer generates it, plus the
// reference (the default-lowered Listing 3) and a generic C harness that measures them there.
// `weft import DIR/results.json --db F` brings the results back (cli/cmd_import.cpp).
//
// Sampling as the explorer: explore::sampleCandidates (explore/explorer.h) with the profile given,
// the same function exploration samples with after its device child has queried a device; the
// recorded key is explore::parametersJson. tests/cli/opencl_bundle.cpp checks the keys against
// prepareExploration's.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <stdexcept>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/program_loading.h"
#include "codegen/compile_pipeline.h"
#include "explore/explorer.h"
#include "explore/measurement.h"
#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "export/bundle_export.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

namespace weft::cli {

namespace {

struct BundleCommandOptions {
  std::string layer;
  size_t samples = 100;
  size_t candidates = 8;
  uint64_t seed = 1;
  std::string profile;
  std::string out;
  int vectorWidth = -1;
  int unroll = -1;
  std::string family;  // only these families (comma-separated)
  std::string buildOptions;
  double minTimeMs = 100;
  int minRepeats = 3;
  double timeout = 120;
};

// The variant generated as explore/measurement.h measureVariant generates it: the tuning
// values substituted, the default lowering, every size and parameter specialised, the local
// sizes applied; the source hash and the global memory as it records them (the inference
// memory: constant inputs only preparation kernels read are not counted).
exporting::BundleProgram generateVariant(const std::string& id, const Definition& parametric,
                                         const ArithBinding& sizes, const ArithBinding& binding,
                                         const std::set<int>& constantInputs) {
  exporting::BundleProgram variant;
  variant.id = id;
  ArithBinding point;
  for (const auto& [name, value] : binding) {
    if (!sizes.count(name)) point[name] = value;
  }
  ArithBinding full = sizes;
  for (const auto& [name, value] : point) full[name] = value;
  variant.binding = full;
  try {
    CompilePipelineOptions compile;
    compile.codegen.specialize = full;
    CompiledProgram program = compileToOpenCL(parametric, point, compile);
    variant.sourceHash = explore::sourceHash(program.source);
    variant.spaceBytes = program.inferenceBytes(full, constantInputs);
    variant.program = std::move(program);
  } catch (const std::exception& error) {
    variant.program.reset();
    variant.invalid = std::string("generation: ") + error.what();
  }
  return variant;
}

std::string variantId(size_t index, size_t count) {
  std::string number = std::to_string(index + 1);
  size_t width = std::max<size_t>(4, std::to_string(count).size());
  return "v" + std::string(width - std::min(width, number.size()), '0') + number;
}

void runBundle(const BundleCommandOptions& options) {
  if (options.samples == 0) throw std::invalid_argument("--samples must be at least 1");
  if (options.candidates == 0) throw std::invalid_argument("--candidates must be at least 1");
  ConvLayer layer;
  try {
    layer = parseConvLayer(options.layer);
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument("--layer " + options.layer + ": " + error.what());
  }
  host::DeviceProfile profile = host::loadProfile(options.profile);
  const std::filesystem::path out(options.out);
  if (std::filesystem::exists(out / "results.json")) {
    throw std::runtime_error(
        (out / "results.json").string() +
        " exists: that folder holds a bundle that was already measured (import it with `weft "
        "import`); give another --out");
  }

  // The target of `weft explore --layer`, from the conv workload (cli/cmd_explore.cpp).
  explore::WorkloadRequest request;
  request.instance = options.layer;
  if (options.vectorWidth >= 0) request.options["vector-width"] = std::to_string(options.vectorWidth);
  if (options.unroll >= 0) request.options["unroll"] = std::to_string(options.unroll);
  if (!options.family.empty()) request.options["family"] = options.family;
  explore::ExploreTarget target = explore::convWorkload()->targets(request, &profile).front();

  const auto start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "weft bundle: %s; sampling %zu variants with profile %s...\n",
               target.description.c_str(), options.samples, profile.name.c_str());
  explore::SampledTarget sampled = explore::sampleCandidates(target, profile, options.samples,
                                                             options.seed, options.candidates);
  for (const std::string& empty : sampled.emptyStructures) {
    std::fprintf(stderr, "structure without valid variants: %s\n", empty.c_str());
  }

  std::vector<exporting::BundleProgram> variants;
  size_t invalid = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const explore::ParameterSpace& space = sampled.spaces[sampled.pointSpace[j]];
    const Definition& parametric =
        target.structures.empty()
            ? target.parametric
            : target.structures[sampled.spaceStructure[sampled.pointSpace[j]]].parametric;
    const std::map<std::string, int64_t>& fixed =
        target.structures.empty()
            ? target.fixedParameters
            : target.structures[sampled.spaceStructure[sampled.pointSpace[j]]].fixedParameters;
    exporting::BundleProgram variant =
        generateVariant(variantId(j, sampled.points.size()), parametric, target.sizes,
                        space.binding(sampled.points[j]), target.constantInputs);
    variant.key = explore::parametersJson(space, sampled.points[j], fixed);
    nlohmann::json key = nlohmann::json::parse(variant.key);
    for (const auto& [name, value] : key.items()) {
      variant.parameters.push_back({name, value.get<int64_t>()});
    }
    invalid += variant.program ? 0 : 1;
    variants.push_back(std::move(variant));
  }

  exporting::BundleProgram reference;
  reference.id = "reference";
  reference.binding = target.sizes;
  {
    CompilePipelineOptions compile;
    compile.codegen.specialize = target.sizes;
    CompiledProgram program = compileToOpenCL(*target.reference, {}, compile);
    reference.sourceHash = explore::sourceHash(program.source);
    reference.spaceBytes = program.globalBytes(target.sizes);
    reference.program = std::move(program);
  }

  exporting::BundleMetadata metadata;
  metadata.program = target.program;
  metadata.description = target.description;
  metadata.flops = target.flops;
  metadata.compilerVersion = explore::compilerVersion();
  metadata.profile = profile.name;
  metadata.sampling =
      std::to_string(sampled.points.size()) + " points sampled with seed " +
      std::to_string(options.seed) + " (" + sampled.method + ")" +
      (sampled.validPoints ? " of " + std::to_string(sampled.validPoints) + " valid ones" : "");
  for (const Expr& param : target.reference->function.params()) {
    metadata.inputNames.push_back(param.paramName());
  }
  const explore::MeasurementOptions measurement;
  metadata.tolerance = measurement.tolerance;
  metadata.maxRepeats = measurement.maxRepeats;
  metadata.minRepeats = options.minRepeats;
  metadata.minTimeMs = options.minTimeMs;
  metadata.timeoutSeconds = options.timeout;
  metadata.buildOptions = options.buildOptions;
  metadata.notes = {
      "inputs: the definition's parameters (" + layer.describe() +
          ") are filled by the harness from a fixed seed; every variant and the reference see "
          "the same values, so only their agreement is checked."};
  std::vector<exporting::DropinFile> files = exporting::emitBundle(reference, variants, metadata);
  exporting::writeBundle(out, files);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: wrote %zu variants", target.program.c_str(), variants.size());
  if (invalid > 0) std::printf(" (%zu failed code generation, recorded as invalid)", invalid);
  std::printf(" and the reference to %s (%.1f s; %s)\n", out.string().c_str(), seconds,
              metadata.sampling.c_str());
  std::printf(
      "on the target: cmake -S %s -B %s/build && cmake --build %s/build && %s/build/"
      "weft_bundle_harness %s\nthen: weft import %s/results.json --db results.db\n",
      out.string().c_str(), out.string().c_str(), out.string().c_str(), out.string().c_str(),
      out.string().c_str(), out.string().c_str());
}

}  // namespace

void registerBundle(CLI::App& app) {
  auto options = std::make_shared<BundleCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "bundle",
      "Write a measurement bundle for a device weft cannot run on: the variants of a layer\n"
      "sampled as `weft explore` would sample them for a device profile (one .cl per variant,\n"
      "parameters baked in), the reference, variants.json/variants.txt, and one generic C\n"
      "harness (OpenCL + POSIX) with a CMakeLists.txt that builds, checks and times each\n"
      "variant in its own process and writes results.json. `weft import` brings it back.");
  command->footer(
      "Example:\n"
      "  weft bundle --layer 8,16,16,8,3,1,1 --samples 4 --profile mali-g72 --out small-mali\n"
      "  # on the board (or here, on this machine's OpenCL device):\n"
      "  cmake -S small-mali -B small-mali/build && cmake --build small-mali/build\n"
      "  ./small-mali/build/weft_bundle_harness small-mali\n"
      "  # back here:\n"
      "  weft import small-mali/results.json --db bundle.db && weft report --db bundle.db\n");
  command->add_option("--layer", options->layer, "vgg16:N or C,H,W,M,K,stride,pad")->required();
  command->add_option("--samples", options->samples, "variants to sample (default 100)");
  command->add_option("--candidates", options->candidates,
                      "sample this many times --samples points and keep --samples of them, as "
                      "weft explore does (default 8; 1: keep the points as sampled)")
      ->type_name("C");
  command->add_option("--seed", options->seed, "seed of the sampler (default 1)");
  command
      ->add_option("--profile", options->profile,
                   "the target's device profile for the hardware constraints (built-in name: "
                   "mali-g72, nvidia-generic, nvidia-hopper, pocl-cpu; a user profile or a .json file)")
      ->required();
  command->add_option("--out", options->out, "the folder to write the bundle into")->required();
  command->add_option("--vector-width", options->vectorWidth,
                      "only conv-direct's vector width v (1, 2, 4, 8 or 16; default: all)");
  command->add_option("--unroll", options->unroll, "only conv-direct's unroll setting (0 or 1)");
  command->add_option("--family", options->family,
                      "only these families of structures, comma-separated (conv-direct, "
                      "register-blocked-vector, winograd, workgroup-tiled; default: all the "
                      "profile offers)");
  command->add_option("--build-options", options->buildOptions,
                      "OpenCL build options the harness passes to clBuildProgram");
  command->add_option("--min-time-ms", options->minTimeMs,
                      "the harness's default minimum kernel time per variant (default 100)");
  command->add_option("--min-repeats", options->minRepeats,
                      "the harness's default minimum timed runs (default 3)");
  command->add_option("--timeout", options->timeout,
                      "the harness's default time limit per variant, seconds (default 120)");
  command->callback([options] { runBundle(*options); });
}

}  // namespace weft::cli
