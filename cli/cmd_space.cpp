// `weft space FILE [--def NAME] [--size N=V]... [--device-profile NAME] [--samples K] [--seed S]
// [--json] [--power-of-two NAME]... [--switch NAME]...`: the space of valid variants of a
// parametric definition (explore/): its tuning parameters with their domains, the constraints
// (each with the primitive, range or hardware limit that produced it), the size of the
// unconstrained product and of the valid space (or a lower bound), and with --samples K the
// K sampled points as a table, or everything as JSON with --json.
//
// The text format has no tuning variables, so the size variables that --size leaves unbound
// become the tuning parameters, with the ranges the definition declares
// (`def f[1 <= kappa <= 64](...)`; explore::tuneUnboundSizes). Device limits come from the
// --device-profile (a built-in name, a user profile name or a .json path; default pocl-cpu),
// "none" leaves them out. An empty space is an error naming the conflicting constraints.
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/program_loading.h"
#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "ir/parser.h"
#include "workloads/conv/conv_targets.h"

namespace weft::cli {

namespace {

using Json = nlohmann::ordered_json;

struct SpaceCommandOptions {
  std::string file;
  std::string definition;
  std::vector<std::string> sizes;
  std::string device = "pocl-cpu";
  size_t samples = 0;
  uint64_t seed = 1;
  bool json = false;
  std::vector<std::string> powerOfTwo;
  std::vector<std::string> switches;
  uint64_t countCap = 1000000;
  std::string layer;     // --layer: a convolution layer with the conv-direct strategy
  int vectorWidth = -1;  // --vector-width: conv-direct's v (1: scalar; -1: every width)
  int unroll = -1;       // --unroll: conv-direct's unroll switch (-1: both)
};

std::string sizeText(const explore::ParameterSpace& space) {
  std::string text;
  for (const auto& [name, value] : space.sizes) {
    text += (text.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  }
  return text.empty() ? "none" : text;
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

void printText(const explore::ParameterSpace& space, explore::Sampler& sampler,
               const explore::SpaceCount& count, const explore::SampleSet* samples,
               uint64_t seed) {
  std::cout << "space of " << space.definitionName << " (sizes " << sizeText(space) << "; device "
            << (space.deviceName.empty() ? "none" : space.deviceName) << ")\n";
  std::cout << "parameters (" << space.parameters.size() << "):\n";
  size_t width = 8;
  for (const explore::Parameter& p : space.parameters) width = std::max(width, p.name.size() + 2);
  for (const explore::Parameter& p : space.parameters) {
    std::cout << "  " << padded(p.name, width) << padded(p.domainText(), 28) << "range "
              << p.rangeText << "\n";
  }
  std::cout << "constraints (" << space.constraints.size() << "; " << space.droppedAsTrue
            << " more hold for every value):\n";
  for (const explore::SpaceConstraint& c : space.constraints) {
    std::cout << "  [" << explore::constraintSourceName(c.source) << "] "
              << c.constraint.describe() << "\n";
  }
  if (!space.deviceName.empty() && !space.hardwareConstraints) {
    std::cout << "note: " << space.hardwareNote << "\n";
  }
  for (const std::string& note : space.notes) std::cout << "note: " << note << "\n";
  auto product = space.unconstrainedSize();
  std::cout << "unconstrained size: "
            << (product ? std::to_string(*product)
                        : "about " + std::to_string(space.unconstrainedSizeApprox()))
            << "\n";
  std::cout << (count.launchSizesNotCounted ? "valid points (local sizes not counted): "
                                             : "valid points: ")
            << (count.exact ? "" : "more than ") << count.points
            << (count.exact ? "" : " (counting stopped)");
  if (count.withLaunchSizes) {
    std::cout << "; " << *count.withLaunchSizes << " with every valid local size";
  }
  if (!count.exact && count.upperBound) {
    std::cout << "; at most " << static_cast<uint64_t>(*count.upperBound);
    if (count.estimate) std::cout << ", about " << static_cast<uint64_t>(*count.estimate);
  }
  std::cout << "\n";
  std::cout << "parameter order:\n";
  std::string order = sampler.describeOrder();
  size_t start = 0;
  while (start < order.size()) {
    size_t end = order.find('\n', start);
    std::cout << "  " << order.substr(start, end - start) << "\n";
    start = end + 1;
  }
  if (!samples) return;
  std::cout << "samples: " << samples->points.size() << " (seed " << seed << ", "
            << samples->method << ", " << samples->seconds << " s, " << samples->solverChecks
            << " solver checks)";
  if (samples->spaceSmallerThanRequested || samples->duplicateLimitReached) {
    std::cout << " -- the valid space has fewer points than requested";
  }
  std::cout << "\n";
  std::vector<size_t> widths;
  std::cout << "  " << padded("#", 6);
  for (const explore::Parameter& p : space.parameters) {
    widths.push_back(std::max<size_t>(p.name.size(), 6) + 2);
    std::cout << padded(p.name, widths.back());
  }
  std::cout << "\n";
  for (size_t i = 0; i < samples->points.size(); ++i) {
    std::cout << "  " << padded(std::to_string(i + 1), 6);
    for (size_t j = 0; j < samples->points[i].size(); ++j) {
      std::cout << padded(std::to_string(samples->points[i][j]), widths[j]);
    }
    std::cout << "\n";
  }
}

Json toJson(const explore::ParameterSpace& space, explore::Sampler& sampler,
            const explore::SpaceCount& count, const explore::SampleSet* samples, uint64_t seed) {
  Json out;
  out["definition"] = space.definitionName;
  out["sizes"] = Json::object();
  for (const auto& [name, value] : space.sizes) out["sizes"][name] = value;
  out["device"] = space.deviceName.empty() ? Json(nullptr) : Json(space.deviceName);
  out["parameters"] = Json::array();
  for (const explore::Parameter& p : space.parameters) {
    out["parameters"].push_back({{"name", p.name},
                                 {"kind", explore::domainKindName(p.kind)},
                                 {"lo", p.lo},
                                 {"hi", p.hi},
                                 {"domain", p.domainText()},
                                 {"range", p.rangeText}});
  }
  out["constraints"] = Json::array();
  for (const explore::SpaceConstraint& c : space.constraints) {
    out["constraints"].push_back({{"source", explore::constraintSourceName(c.source)},
                                  {"origin", c.constraint.origin},
                                  {"formula", c.constraint.formula()},
                                  {"description", c.constraint.describe()}});
  }
  out["constraintsAlwaysTrue"] = space.droppedAsTrue;
  out["hardwareConstraints"] = space.hardwareConstraints;
  if (!space.hardwareNote.empty()) out["hardwareNote"] = space.hardwareNote;
  out["notes"] = space.notes;
  auto product = space.unconstrainedSize();
  out["unconstrainedSize"] = product ? Json(*product) : Json(space.unconstrainedSizeApprox());
  out["validPoints"] = {{"count", count.points},
                        {"exact", count.exact},
                        {"localSizesCounted", !count.launchSizesNotCounted}};
  if (count.withLaunchSizes) out["validPoints"]["withLocalSizes"] = *count.withLaunchSizes;
  if (count.upperBound) out["validPoints"]["atMost"] = *count.upperBound;
  if (count.estimate) out["validPoints"]["estimate"] = *count.estimate;
  Json order = Json::array();
  for (int index : sampler.order()) order.push_back(space.parameters[index].name);
  out["order"] = order;
  if (samples) {
    Json points = Json::array();
    for (const std::vector<int64_t>& point : samples->points) {
      Json row = Json::object();
      for (size_t j = 0; j < point.size(); ++j) row[space.parameters[j].name] = point[j];
      points.push_back(row);
    }
    out["samples"] = {{"seed", seed},
                      {"method", samples->method},
                      {"seconds", samples->seconds},
                      {"solverChecks", samples->solverChecks},
                      {"fewerThanRequested",
                       samples->spaceSmallerThanRequested || samples->duplicateLimitReached},
                      {"points", points}};
  }
  return out;
}

// The conv-direct space of a layer: the union over the vector widths and unroll settings
// selected (all unless --vector-width / --unroll fix them), as `weft explore --layer` samples
// it (workloads/conv/conv_targets.h, explore/explorer.h sampleTarget). One structure prints in
// full (parameters, constraints, samples); several print a summary per structure and the
// samples drawn over the union, under the names the explorer records.
void runLayerSpace(const SpaceCommandOptions& options, const explore::SpaceOptions& spaceOptions) {
  ConvLayer layer = parseConvLayer(options.layer);
  const explore::ConvDirectChoices choices =
      explore::convDirectChoices(options.vectorWidth, options.unroll);
  if (choices.widths.size() * choices.unrolls.size() == 1) {
    explore::ExploreTarget target =
        explore::layerTarget(layer, choices.widths.front(), choices.unrolls.front());
    explore::SpaceOptions structureOptions = spaceOptions;
    structureOptions.switches.insert(target.switches.begin(), target.switches.end());
    explore::ParameterSpace space =
        explore::buildParameterSpace(target.parametric, target.sizes, structureOptions);
    space.definitionName = target.program;
    explore::Sampler sampler(space);
    const explore::SpaceCount count = sampler.count(UINT64_MAX);
    std::optional<explore::SampleSet> samples;
    if (options.samples > 0) samples = sampler.sample(options.samples, options.seed);
    const explore::SampleSet* sampled = samples ? &*samples : nullptr;
    if (options.json) {
      std::cout << toJson(space, sampler, count, sampled, options.seed).dump(2) << "\n";
    } else {
      std::cout << layer.describe() << "; conv-direct with v=" << choices.widths.front()
                << " unroll=" << choices.unrolls.front() << "\n";
      printText(space, sampler, count, sampled, options.seed);
    }
    return;
  }
  explore::ExploreTarget target = explore::layerTargetStructures(layer, choices.widths,
                                                                 choices.unrolls);
  target.powerOfTwo = spaceOptions.powerOfTwo;
  for (explore::ExploreTarget::Structure& structure : target.structures) {
    structure.switches.insert(spaceOptions.switches.begin(), spaceOptions.switches.end());
  }
  explore::SampledTarget sampled =
      explore::sampleTarget(target, spaceOptions.device, options.samples, options.seed);
  if (sampled.spaces.empty()) {
    std::string why;
    for (const std::string& e : sampled.emptyStructures) why += "\n  " + e;
    throw std::runtime_error("no valid conv-direct variant of " + layer.describe() + ":" + why);
  }
  auto structureOf = [&](size_t space) -> const explore::ExploreTarget::Structure& {
    return target.structures.at(sampled.spaceStructure.at(space));
  };
  auto structureText = [&](size_t space) {
    const auto& fixed = structureOf(space).fixedParameters;
    return "v=" + std::to_string(fixed.at("v")) + " unroll=" + std::to_string(fixed.at("unroll"));
  };
  bool exact = true;
  for (const explore::SpaceCount& count : sampled.counts) exact = exact && count.exact;
  std::vector<std::string> points;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t space = sampled.pointSpace[j];
    points.push_back(explore::parametersJson(sampled.spaces[space], sampled.points[j],
                                             structureOf(space).fixedParameters));
  }
  if (options.json) {
    Json out;
    out["layer"] = layer.describe();
    out["validPoints"] = sampled.validPoints;
    out["exact"] = exact;
    Json parts = Json::array();
    for (size_t i = 0; i < sampled.spaces.size(); ++i) {
      const auto& fixed = structureOf(i).fixedParameters;
      Json parameters = Json::array();
      for (const explore::Parameter& p : sampled.spaces[i].parameters) parameters.push_back(p.name);
      parts.push_back({{"vectorWidth", fixed.at("v")},
                       {"unroll", fixed.at("unroll")},
                       {"validPoints", sampled.counts[i].points},
                       {"exact", sampled.counts[i].exact},
                       {"parameters", parameters}});
    }
    out["structures"] = parts;
    out["emptyStructures"] = sampled.emptyStructures;
    Json drawn = Json::array();
    for (const std::string& point : points) drawn.push_back(Json::parse(point));
    out["samples"] = {{"seed", options.seed}, {"points", drawn}};
    std::cout << out.dump(2) << "\n";
    return;
  }
  std::cout << layer.describe() << "; conv-direct, every structure (v, unroll)\n";
  std::cout << "structures (" << sampled.spaces.size() << " with valid points):\n";
  for (size_t i = 0; i < sampled.spaces.size(); ++i) {
    const explore::SpaceCount& count = sampled.counts[i];
    std::cout << "  " << padded(structureText(i), 18) << count.points << (count.exact ? "" : "+")
              << " valid points"
              << (count.launchSizesNotCounted ? " (local sizes not counted)" : "") << "\n";
  }
  for (const std::string& e : sampled.emptyStructures) std::cout << "  empty: " << e << "\n";
  std::cout << "valid points in all: " << sampled.validPoints << (exact ? "" : " (at least)")
            << "\n(weft space --layer ... --vector-width V --unroll U shows one structure's "
               "parameters and constraints)\n";
  if (!points.empty()) {
    std::cout << "samples: " << points.size() << " (seed " << options.seed
              << ", as weft explore --layer --vector-width/--unroll samples them)\n";
    for (size_t i = 0; i < points.size(); ++i) {
      std::cout << "  " << padded(std::to_string(i + 1), 6) << points[i] << "\n";
    }
  }
}

void runSpace(const SpaceCommandOptions& options) {
  if (!options.layer.empty()) {
    if (!options.file.empty()) throw std::invalid_argument("give a FILE or --layer, not both");
    explore::SpaceOptions spaceOptions;
    spaceOptions.powerOfTwo.insert(options.powerOfTwo.begin(), options.powerOfTwo.end());
    spaceOptions.switches.insert(options.switches.begin(), options.switches.end());
    if (options.device != "none") spaceOptions.device = host::loadProfile(options.device);
    runLayerSpace(options, spaceOptions);
    return;
  }
  if (options.file.empty()) throw std::invalid_argument("give a FILE or --layer");
  Program program = parseFile(options.file);
  const Definition& definition =
      chooseFunctionDefinition(program, options.file, options.definition, "explore");
  std::set<std::string> known = mentionedSizeNames(definition);
  for (const Arith& declared : definition.sizeDeclarations) known.insert(declared.varName());
  ArithBinding sizes = parseSizeOptions(options.sizes, definition, known);
  Definition parametric = explore::tuneUnboundSizes(definition, sizes);

  explore::SpaceOptions spaceOptions;
  spaceOptions.powerOfTwo.insert(options.powerOfTwo.begin(), options.powerOfTwo.end());
  spaceOptions.switches.insert(options.switches.begin(), options.switches.end());
  if (options.device != "none") spaceOptions.device = host::loadProfile(options.device);
  explore::ParameterSpace space = explore::buildParameterSpace(parametric, sizes, spaceOptions);

  explore::Sampler sampler(space);
  explore::SpaceCount count = sampler.count(options.countCap);
  std::optional<explore::SampleSet> samples;
  if (options.samples > 0) samples = sampler.sample(options.samples, options.seed);
  const explore::SampleSet* sampled = samples ? &*samples : nullptr;
  if (options.json) {
    std::cout << toJson(space, sampler, count, sampled, options.seed).dump(2) << "\n";
  } else {
    printText(space, sampler, count, sampled, options.seed);
  }
}

}  // namespace

void registerSpace(CLI::App& app) {
  auto options = std::make_shared<SpaceCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "space",
      "Show the space of valid variants of a parametric definition: its tuning parameters\n"
      "and their domains, the constraints (algorithmic ones with the primitive that needs\n"
      "them, hardware ones from a device profile), the unconstrained and the valid space\n"
      "size, and with --samples K, K unique valid points sampled with --seed.\n"
      "Size variables not given with --size are the tuning parameters; each needs a declared\n"
      "range, e.g. def f[1 <= kappa <= 64](xs: [float]N) = ... split(kappa, xs) ...");
  command->add_option("file", options->file, "the .weft file (or --layer)");
  command->add_option("--layer", options->layer,
                      "a convolution layer instead of a FILE: vgg16:N (the LIFT paper's layer "
                      "numbers 0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28) or "
                      "C,H,W,M,K,stride,pad; its space is that of the conv-direct strategy")
      ->type_name("SPEC");
  command->add_option("--vector-width", options->vectorWidth,
                      "--layer: only conv-direct's vector width v (1, 2, 4, 8 or 16; default: all)")
      ->type_name("V");
  command->add_option("--unroll", options->unroll,
                      "--layer: only conv-direct's unroll setting (0 or 1; default: both)")
      ->type_name("0|1");
  command->add_option("--def", options->definition,
                      "the definition (default: the last one in the file)")
      ->type_name("NAME");
  command->add_option("--size", options->sizes, "bind a size variable, e.g. --size N=1024")
      ->type_name("N=V")
      ->allow_extra_args(false);
  command->add_option("--device-profile", options->device,
                      "device whose limits constrain the space: mali-g72, nvidia-generic, "
                      "nvidia-hopper, pocl-cpu (default), a user profile or a .json file; 'none' for no limits")
      ->type_name("NAME");
  command->add_option("--samples", options->samples, "sample K unique valid points")
      ->type_name("K");
  command->add_option("--seed", options->seed, "seed of the sampler (default 1)")->type_name("S");
  command->add_flag("--json", options->json, "print everything as JSON");
  command->add_option("--power-of-two", options->powerOfTwo,
                      "the parameter takes only powers of two in its range")
      ->type_name("NAME")
      ->allow_extra_args(false);
  command->add_option("--switch", options->switches, "the parameter is a 0/1 switch")
      ->type_name("NAME")
      ->allow_extra_args(false);
  command->add_option("--count-cap", options->countCap,
                      "stop counting valid points after this many (default 1000000)")
      ->type_name("N");
  command->footer(
      "Example:\n"
      "  weft space examples/chunked.weft --size N=1024 --device-profile mali-g72 --samples 10 "
      "--seed 7\n"
      "  weft space --layer vgg16:2 --vector-width 4 --samples 5\n");
  command->callback([options] { runSpace(*options); });
}

}  // namespace weft::cli
