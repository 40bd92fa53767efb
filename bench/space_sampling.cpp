// Sampling the space of valid variants of the conv-direct strategy (issue 5's performance
// section): for each VGG-16 convolution layer and device profile, the parametric program (the
// built-in Listing 3 definition rewritten by conv-direct with v = 1 and unroll = 0, as
// `weft space --layer` builds it) is turned into its parameter space (explore/), and --samples
// unique valid points are sampled with a fixed seed. Recorded per layer and profile: the
// parameters and their domains, the unconstrained size, the valid size (exact when the walk
// over the relaxed points ends within --count-budget, else the estimate from the acceptance
// rate with the relaxed count as upper bound), the seconds to build the space, to prove it
// non-empty with Z3, to sample (counting plan included), the solver checks and the method.
// Every sample is re-checked by ParameterSpace::violations inside the sampler.
//
// --validity: every sampled point of the --validity-layer layers (default 0, 10, 28 on
// pocl-cpu) is substituted into the parametric program, type-checked, lowered (lowerDefault),
// generated as OpenCL specialised to the layer sizes and the point, and built on PoCL; each
// kernel's fixed work-group size is also compared with what the built kernel allows
// (CL_KERNEL_WORK_GROUP_SIZE). Failures are counted by stage and cause. --limit N stops after
// N points per layer. Progress goes to stderr; the figures to bench/results/space_validity.json.
//
//   build/bench/weft_bench_space_sampling [--out FILE] [--samples K] [--seed S]
//   build/bench/weft_bench_space_sampling --validity [--limit N] [--validity-layer vgg16:N]...
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "explore/launch_parameters.h"
#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "workloads/conv/conv_layer.h"
#include "rewrite/strategies.h"
#include "typecheck/typecheck.h"

#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif

namespace weft::bench {

namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Options {
  std::string out;
  std::vector<std::string> layers;
  std::vector<std::string> profiles = {"mali-g72", "pocl-cpu"};
  size_t samples = 1000;
  uint64_t seed = 1;
  uint64_t countBudget = 100000000;  // relaxed points walked for the exact valid count
  bool validity = false;
  std::vector<std::string> validityLayers = {"vgg16:0", "vgg16:10", "vgg16:28"};
  std::string validityProfile = "pocl-cpu";
  size_t limit = 0;  // 0: every sample
  std::string device = "cpu";
};

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The parametric conv-direct program of a layer, with the names of its 0/1 switches.
struct Parametric {
  Definition definition;
  std::set<std::string> switches;
};

Parametric convDirect() {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-direct");
  rewrite::RewriteContext context;
  rewrite::StrategyResult rewritten =
      strategy->make({{"v", Arith(1)}, {"unroll", Arith(0)}})(convListing3Definition(), context);
  if (!rewritten.success()) throw std::runtime_error("conv-direct: " + rewritten.failure);
  Parametric out{*rewritten.definition, {}};
  for (const Arith& v : context.tuningVariables()) {
    if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
      out.switches.insert(v.varName());
    }
  }
  return out;
}

explore::ParameterSpace buildSpace(const Parametric& parametric, const ConvLayer& layer,
                                   const std::string& profile) {
  explore::SpaceOptions options;
  options.switches = parametric.switches;
  options.device = host::loadProfile(profile);
  explore::ParameterSpace space =
      explore::buildParameterSpace(parametric.definition, convListing3Sizes(layer), options);
  space.definitionName = layer.name;
  return space;
}

Json sampleLayer(const Parametric& parametric, const std::string& spec, const std::string& profile,
                 const Options& options) {
  ConvLayer layer = parseConvLayer(spec);
  auto start = Clock::now();
  explore::ParameterSpace space = buildSpace(parametric, layer, profile);
  const double buildSeconds = since(start);
  start = Clock::now();
  explore::Sampler sampler(space);  // proves the space non-empty with Z3
  const double satisfiableSeconds = since(start);
  const uint64_t setupChecks = sampler.solver().checks();
  explore::SampleSet samples = sampler.sample(options.samples, options.seed);
  std::set<std::vector<int64_t>> unique(samples.points.begin(), samples.points.end());

  Json valid;
  start = Clock::now();
  if (explore::CountingSampler* counting = sampler.counting()) {
    valid["relaxed_count"] = explore::countToString(counting->relaxedCount());
    if (counting->exact()) {
      valid["count"] = explore::countToString(counting->relaxedCount());
      valid["exact"] = true;
      valid["how"] = "counted by the dynamic programme (no constraint relaxed)";
    } else {
      uint64_t found = 0;
      auto walked = counting->forEachValid(
          [&](const std::vector<int64_t>&) {
            ++found;
            return true;
          },
          options.countBudget);
      if (walked == explore::CountingSampler::Walk::Complete) {
        valid["count"] = std::to_string(found);
        valid["exact"] = true;
        valid["how"] = "every relaxed point walked and the relaxed constraints checked";
      } else {
        valid["exact"] = false;
        valid["at_least"] = found;
        valid["at_most"] = explore::countToString(counting->relaxedCount());
        if (samples.spaceEstimate) valid["estimate"] = *samples.spaceEstimate;
        valid["how"] = "estimate: relaxed count x acceptance rate of the sampling draws";
      }
    }
    valid["plan"] = counting->describePlan();
  } else {
    explore::SpaceCount counted = sampler.count(1000000);
    valid["count"] = std::to_string(counted.points);
    valid["exact"] = counted.exact;
  }
  valid["seconds"] = since(start);
  size_t launchParameters = 0;
  for (const explore::Parameter& p : space.parameters) launchParameters += p.launchKernel >= 0;
  if (launchParameters > 0) {
    // The counting sampler counts the first stage; local sizes are drawn per point
    // (explore/sampler.h), so the count is of the points without them.
    valid["local_sizes_counted"] = false;
    valid["local_size_parameters"] = launchParameters;
  }

  Json parameters = Json::array();
  for (const explore::Parameter& p : space.parameters) {
    parameters.push_back({{"name", p.name}, {"domain", p.domainText()}, {"range", p.rangeText}});
  }
  auto product = space.unconstrainedSize();
  Json result;
  result["layer"] = layer.name;
  result["spec"] = spec;
  result["shape"] = layer.describe();
  result["profile"] = profile;
  result["parameters"] = parameters;
  result["constraints"] = space.constraints.size();
  result["unconstrained_size"] =
      product ? Json(std::to_string(*product)) : Json(space.unconstrainedSizeApprox());
  result["valid_size"] = valid;
  result["samples"] = samples.points.size();
  result["unique_samples"] = unique.size();
  result["seed"] = options.seed;
  result["method"] = samples.method;
  result["draws"] = samples.draws;
  result["seconds"] = {{"build_space", buildSeconds},
                       {"z3_satisfiable", satisfiableSeconds},
                       {"sampling", samples.seconds},
                       {"sampling_total", satisfiableSeconds + samples.seconds}};
  result["solver_checks"] = {{"satisfiable", setupChecks}, {"sampling", samples.solverChecks}};
  std::fprintf(stderr,
               "%-8s %-9s %5zu samples (%zu unique) in %.3f s (+ %.3f s Z3 check, %.2f s build) "
               "%s, %llu draws; valid %s%s\n",
               layer.name.c_str(), profile.c_str(), samples.points.size(), unique.size(),
               samples.seconds, satisfiableSeconds, buildSeconds, samples.method.c_str(),
               static_cast<unsigned long long>(samples.draws),
               valid.contains("count")
                   ? valid["count"].get<std::string>().c_str()
                   : ("~" + std::to_string(valid.value("estimate", 0.0))).c_str(),
               valid.value("exact", false) ? "" : " (estimate)");
  return result;
}

// ---- validity -------------------------------------------------------------------------------

Json validityLayer(const Parametric& parametric, const std::string& spec, const Options& options,
                   host::Context& context) {
  ConvLayer layer = parseConvLayer(spec);
  explore::ParameterSpace space = buildSpace(parametric, layer, options.validityProfile);
  explore::Sampler sampler(space);
  explore::SampleSet samples = sampler.sample(options.samples, options.seed);
  size_t count = samples.points.size();
  if (options.limit > 0) count = std::min(count, options.limit);
  std::map<std::string, int> failures;  // "stage: first line of the message" -> count
  std::map<std::string, int> byStage;
  Json examples = Json::array();
  int built = 0;
  double buildSeconds = 0;
  auto start = Clock::now();
  for (size_t i = 0; i < count; ++i) {
    const std::vector<int64_t>& point = samples.points[i];
    ArithSubstitution substitution;
    ArithBinding specialize = space.sizes;
    std::string pointText;
    for (size_t j = 0; j < point.size(); ++j) {
      substitution[space.parameters[j].name] = Arith(point[j]);
      specialize[space.parameters[j].name] = point[j];
      pointText += (j ? ", " : "") + space.parameters[j].name + "=" + std::to_string(point[j]);
    }
    std::string stage = "substitute";
    try {
      Definition instance = parametric.definition;
      instance.function = substituteArith(parametric.definition.function, substitution);
      if (parametric.definition.declaredType) {
        instance.declaredType = substitute(parametric.definition.declaredType, substitution);
      }
      stage = "typecheck";
      typecheck(instance);
      stage = "codegen";
      CodegenOptions codegen;
      codegen.specialize = specialize;
      CompiledProgram program = compileToOpenCL(instance, codegen);
      applyLocalSizeParameters(program, specialize);
      stage = "build";
      auto buildStart = Clock::now();
      host::Program binary = context.build(program.source);
      buildSeconds += since(buildStart);
      stage = "work-group limit";
      for (const KernelPlan& kernel : program.kernels) {
        if (!kernel.hasLocalSize) continue;
        int64_t groupSize = 1;
        for (int d = 0; d < kernel.dimensions; ++d) {
          int64_t local = evaluate(kernel.localSize[d], specialize);
          int64_t global = evaluate(kernel.globalSize[d], specialize);
          if (local <= 0 || (global % local != 0 && !kernel.launchableInParts)) {
            throw std::runtime_error("kernel " + kernel.name + " local size " +
                                     std::to_string(local) + " does not divide its global size " +
                                     std::to_string(global) + " in dimension " + std::to_string(d));
          }
          groupSize *= local;
        }
        host::Kernel compiled(binary, kernel.name);
        if (static_cast<size_t>(groupSize) > compiled.maxWorkGroupSize(context.device())) {
          throw std::runtime_error("kernel " + kernel.name + " work-group of " +
                                   std::to_string(groupSize) + " exceeds the built kernel's " +
                                   std::to_string(compiled.maxWorkGroupSize(context.device())));
        }
      }
      ++built;
    } catch (const std::exception& error) {
      std::string message = error.what();
      std::string firstLine = message.substr(0, message.find('\n'));
      if (firstLine.size() > 200) firstLine = firstLine.substr(0, 200) + "...";
      ++failures[stage + ": " + firstLine];
      ++byStage[stage];
      if (examples.size() < 20)
        examples.push_back(
            {{"point", pointText}, {"stage", stage}, {"message", message.substr(0, 2000)}});
    }
    if ((i + 1) % 10 == 0 || i + 1 == count) {
      std::fprintf(stderr, "%s: %zu/%zu points, %d built, %zu failed, %.1f s\n", layer.name.c_str(),
                   i + 1, count, built, i + 1 - built, since(start));
    }
  }
  Json causes = Json::object();
  for (const auto& [cause, n] : failures) causes[cause] = n;
  Json stages = Json::object();
  for (const auto& [stage, n] : byStage) stages[stage] = n;
  return {{"layer", layer.name},
          {"spec", spec},
          {"profile", options.validityProfile},
          {"sampled", samples.points.size()},
          {"checked", count},
          {"built", built},
          {"failed", count - built},
          {"failures_by_stage", stages},
          {"failures_by_cause", causes},
          {"examples", examples},
          {"seconds", since(start)},
          {"opencl_build_seconds", buildSeconds}};
}

int run(const Options& options) {
  Parametric parametric = convDirect();
  Json report;
  if (!options.validity) {
    std::vector<std::string> layers = options.layers;
    if (layers.empty()) {
      for (size_t i = 0; i < vgg16Layers().size(); ++i) {
        layers.push_back("vgg16:" + std::to_string(vgg16PaperNumber(i)));
      }
    }
    Json rows = Json::array();
    for (const std::string& spec : layers) {
      for (const std::string& profile : options.profiles) {
        rows.push_back(sampleLayer(parametric, spec, profile, options));
      }
    }
    report["benchmark"] = "space_sampling";
    report["description"] =
        "parameter space of conv-direct (v = 1, unroll = 0) per VGG-16 layer and device "
        "profile; seconds.sampling: Sampler::sample (counting plan, draws, C++ re-check of every "
        "sample), seconds.z3_satisfiable: the Z3 proof that the space is non-empty; "
        "valid_size: exact count or estimate (relaxed count x acceptance rate)";
    report["date"] = utcNow();
    report["results"] = rows;
  } else {
    setenv("POCL_CACHE_DIR", "/tmp/pocl-bench-cache", 0);
    host::Device device = host::selectDevice(options.device);
    std::fprintf(stderr, "device: %s (%s)\n", device.name.c_str(), device.platformName.c_str());
    host::Context context(device);
    Json rows = Json::array();
    for (const std::string& spec : options.validityLayers) {
      rows.push_back(validityLayer(parametric, spec, options, context));
    }
    report["benchmark"] = "space_validity";
    report["description"] =
        "every sampled point substituted into the parametric conv-direct program, type-checked, "
        "lowered, generated as OpenCL specialised to the layer and the point, built on the "
        "device; fixed work-group sizes compared with CL_KERNEL_WORK_GROUP_SIZE";
    report["device"] = device.name;
    report["date"] = utcNow();
    report["samples_per_layer"] = options.samples;
    report["seed"] = options.seed;
    report["limit"] = options.limit;
    report["results"] = rows;
  }
  std::string out = options.out;
  if (out.empty()) {
    out = std::string(WEFT_BENCH_RESULTS_DIR) +
          (options.validity ? "/space_validity.json" : "/space_sampling.json");
  }
  std::ofstream file(out);
  file << report.dump(2) << "\n";
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}

}  // namespace

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app("Sampling the conv-direct parameter space of VGG-16's layers (issue 5)");
  app.add_option("--out", options.out,
                 "the JSON file (default bench/results/space_sampling.json "
                 "or space_validity.json)");
  app.add_option("--layer", options.layers, "vgg16:N or C,H,W,M,K,stride,pad (default: all 13)");
  app.add_option("--profile", options.profiles, "device profiles (default mali-g72 pocl-cpu)");
  app.add_option("--samples", options.samples, "samples per layer and profile (default 1000)");
  app.add_option("--seed", options.seed, "the sampler's seed (default 1)");
  app.add_option("--count-budget", options.countBudget,
                 "relaxed points walked for an exact valid count (default 1e8)");
  app.add_flag("--validity", options.validity,
               "instantiate, generate and build every sampled point on PoCL instead");
  app.add_option("--validity-layer", options.validityLayers,
                 "layers of --validity (default vgg16:0 vgg16:10 vgg16:28)");
  app.add_option("--validity-profile", options.validityProfile,
                 "profile of the --validity spaces (default pocl-cpu)");
  app.add_option("--limit", options.limit, "--validity: points per layer (default: all)");
  app.add_option("--device", options.device, "--validity: the OpenCL device (default cpu)");
  CLI11_PARSE(app, argc, argv);
  try {
    return weft::bench::run(options);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
}
