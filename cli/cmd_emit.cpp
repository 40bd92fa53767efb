// `weft emit`: the drop-in export of one variant (export/dropin_export.h) into --out DIR.
//
//   weft emit FILE [--def NAME] [--size N=..]... --params kappa=4,omega=8 --out DIR
//   weft emit --layer vgg16:N|C,H,W,M,K,stride,pad --params v=4,unroll=0,theta=..,... --out DIR
//   weft emit --layer ... --params vector_kappa=4,vector_sigma=8,... --out DIR
//   weft emit --db results.db --layer ... --pick fastest|smallest|knee|budget=25MB|sample=N
//     --out DIR
//   weft emit FILE --size W=..,H=.. --db results.db --pick ... --out DIR
//   weft emit FILE --size ... --params fusion=1,theta1=..,theta2=.. --out DIR
//
// The point is checked before any code is generated. For a layer, the parametric program is
// conv-direct's output for the structure (v, unroll) the parameters choose (explore/explorer.h
// layerTarget, the program `weft explore --layer` measures), or conv-register-blocked-vector's
// for (vector_kappa, vector_sigma) (layerVectorTarget); the other parameters may be
// given by their names without the rewrite's numeric suffix (theta for theta2), as the results
// database records them. For a file, every size variable the definition mentions needs a
// value, from --size (sizes) or --params (tuning parameters). Unknown and missing names, values
// outside a parameter's domain and violated constraints (algorithmic ones, and hardware ones
// when --device-profile names a device) are errors that name the parameter or the constraint.
// Local sizes of kernels the program leaves open (local_kK_dD, explore/launch_parameters.h) are
// parameters of the space when a device profile is given; without one they may still be given
// and are checked against the generated kernels (they must divide the global size).
// With --pick the variant comes from the results database (explore/variant_pick.h), and the
// device and the pick go into the emitted header comments. A pipeline explored over its fusion
// choices records fusion=N (workloads/pipeline/pipeline_target.h: 0 as written, else a fusion
// strategy);
// --params takes it too, and the tile sizes of that structure then.
// --constant-inputs names the inputs that stay the same from run to run; the kernels that
// depend only on them become the emitted PREFIX_prepare (export/dropin_export.h). Layers default
// to their weights and biases (the register-blocked vector family's weight re-layout is then a
// one-off step), files to none.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/program_loading.h"
#include "explore/explorer.h"
#include "explore/measurement.h"
#include "explore/parameter_space.h"
#include "explore/variant_pick.h"
#include "workloads/pipeline/searched_structures.h"
#include "export/dropin_export.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"
#include "workloads/pipeline/pipeline_target.h"
#include "workloads/pipeline/pipeline_workload.h"

namespace weft::cli {

namespace {

struct EmitOptions {
  std::string file;
  std::string definition;
  std::vector<std::string> sizes;
  std::vector<std::string> params;
  std::string layer;
  std::string db;
  std::string pick;
  std::string device;  // --device: the fingerprint of the tuned device (--pick)
  std::string deviceProfile = "none";
  std::string out;
  std::string name;  // --name: the prefix
  std::string buildOptions;
  std::string constantInputs;  // --constant-inputs: "NAME,..." or "none"; "" = the default
};

// "a=1,b=2" (several --params options add up) as ordered name -> value.
std::map<std::string, int64_t> parseParams(const std::vector<std::string>& options) {
  std::map<std::string, int64_t> values;
  for (const std::string& option : options) {
    size_t start = 0;
    while (start <= option.size()) {
      size_t end = option.find(',', start);
      std::string item =
          option.substr(start, end == std::string::npos ? std::string::npos : end - start);
      start = end == std::string::npos ? option.size() + 1 : end + 1;
      if (item.empty()) continue;
      const std::optional<std::pair<std::string, int64_t>> parsed = parseNameEqualsInteger(item);
      if (!parsed) {
        throw std::runtime_error("--params " + option + ": '" + item +
                                 "' is not NAME=INTEGER (e.g. --params theta=10,kappa=4)");
      }
      const auto& [name, value] = *parsed;
      if (values.count(name)) {
        throw std::runtime_error("--params: " + name + " is given twice");
      }
      values[name] = value;
    }
  }
  return values;
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// A parameter's name without the numeric suffix the rewrite gave it ("theta2" -> "theta").
std::string stemOf(const std::string& name) {
  size_t end = name.find_last_not_of("0123456789");
  return end == std::string::npos ? name : name.substr(0, end + 1);
}

// "local_k1_d0": a kernel's local size (explore/launch_parameters.h). With a device profile the
// space has these parameters; without one they are accepted as given and checked once the
// kernels are known (checkLocalSizes).
bool isLocalSizeName(const std::string& name) {
  return std::regex_match(name, std::regex("local_k[0-9]+_d[0-9]+"));
}

// The names a user may give each parameter of the space: the stem when it is unambiguous (and
// not one of `reserved`), and always the full name.
std::map<std::string, std::string> parameterAliases(const explore::ParameterSpace& space,
                                                    const std::set<std::string>& reserved) {
  std::map<std::string, int> stems;
  for (const explore::Parameter& p : space.parameters) ++stems[stemOf(p.name)];
  std::map<std::string, std::string> aliases;
  for (const explore::Parameter& p : space.parameters) {
    aliases[p.name] = p.name;
    std::string stem = stemOf(p.name);
    if (stems[stem] == 1 && !reserved.count(stem)) aliases[stem] = p.name;
  }
  return aliases;
}

// The name a parameter is listed under in emitted files (the stem when unambiguous).
std::string displayName(const explore::ParameterSpace& space, const std::string& name,
                        const std::set<std::string>& reserved) {
  std::string stem = stemOf(name);
  int count = 0;
  for (const explore::Parameter& p : space.parameters) count += stemOf(p.name) == stem;
  return count == 1 && !reserved.count(stem) ? stem : name;
}

// Values for every parameter of the space from --params (by alias), checked: no unknown name,
// no missing one, every value in its domain, every constraint satisfied. Returns the values in
// the order of space.parameters.
std::vector<int64_t> checkedPoint(const explore::ParameterSpace& space,
                                  const std::map<std::string, int64_t>& given,
                                  const std::set<std::string>& reserved, const std::string& what) {
  std::map<std::string, std::string> aliases = parameterAliases(space, reserved);
  std::map<std::string, int64_t> byName;
  std::vector<std::string> unknown;
  for (const auto& [name, value] : given) {
    if (reserved.count(name)) continue;
    if ((isLocalSizeName(name) || isCodegenChoiceParameter(name)) && space.indexOf(name) < 0) {
      continue;  // see extraLocalSizes and extraCodegenChoices
    }
    auto found = aliases.find(name);
    if (found == aliases.end()) {
      unknown.push_back(name);
      continue;
    }
    if (byName.count(found->second)) {
      throw std::runtime_error("--params gives " + found->second + " twice (as " + found->second +
                               " and " + stemOf(found->second) + ")");
    }
    byName[found->second] = value;
  }
  std::vector<std::string> known;
  for (const explore::Parameter& p : space.parameters) {
    known.push_back(displayName(space, p.name, reserved) + " in " + p.domainText());
  }
  if (!unknown.empty()) {
    throw std::runtime_error(
        "--params: " + what + " has no parameter " + joined(unknown) +
        " (its parameters: " + (known.empty() ? std::string("none") : joined(known)) + ")");
  }
  std::vector<std::string> missing;
  std::vector<int64_t> values;
  for (const explore::Parameter& p : space.parameters) {
    auto found = byName.find(p.name);
    if (found == byName.end()) {
      missing.push_back(displayName(space, p.name, reserved) + " in " + p.domainText());
      values.push_back(0);
    } else {
      values.push_back(found->second);
    }
  }
  if (!missing.empty()) {
    throw std::runtime_error("--params: no value for " + joined(missing) + " of " + what +
                             " (every parameter needs one)");
  }
  std::vector<std::string> violated = space.violations(values);
  if (!violated.empty()) {
    std::string text = "the point is not a valid variant of " + what + ":";
    for (const std::string& v : violated) text += "\n  " + v;
    text += "\n(with";
    for (size_t i = 0; i < values.size(); ++i) {
      text += " " + space.parameters[i].name + "=" + std::to_string(values[i]);
    }
    text += ")";
    throw std::runtime_error(text);
  }
  return values;
}

std::optional<host::DeviceProfile> profileOption(const EmitOptions& options) {
  if (options.deviceProfile.empty() || options.deviceProfile == "none") return std::nullopt;
  return host::loadProfile(options.deviceProfile);
}

ConvLayer layerOption(const std::string& text) {
  try {
    return parseConvLayer(text);
  } catch (const std::invalid_argument& error) {
    throw std::runtime_error(std::string("--layer ") + text + ": " + error.what());
  }
}

// The --params names the space does not have that are local sizes, with their values.
std::map<std::string, int64_t> extraLocalSizes(const explore::ParameterSpace& space,
                                               const std::map<std::string, int64_t>& given) {
  std::map<std::string, int64_t> extra;
  for (const auto& [name, value] : given) {
    if (isLocalSizeName(name) && space.indexOf(name) < 0) extra[name] = value;
  }
  return extra;
}

// streaming_stores or aligned_reads given where the space has no such parameter (no device
// profile, or no aligned vector store or realignable vector read): 0 or 1, applied by
// compileVariant.
std::map<std::string, int64_t> extraCodegenChoices(const explore::ParameterSpace& space,
                                                   const std::map<std::string, int64_t>& given) {
  std::map<std::string, int64_t> extra;
  for (const auto& [name, value] : given) {
    if (!isCodegenChoiceParameter(name) || space.indexOf(name) >= 0) continue;
    if (value != 0 && value != 1) {
      throw std::runtime_error("--params " + name + "=" + std::to_string(value) +
                               ": a code generation choice is 0 or 1");
    }
    extra[name] = value;
  }
  return extra;
}

// Local sizes given without a device profile must name a kernel and dimension of the program,
// leave no dimension of a kernel out, and divide the global size unless the kernel is
// launchable in parts.
void checkLocalSizes(const CompiledProgram& compiled, const std::map<std::string, int64_t>& local,
                     const ArithBinding& binding) {
  for (const auto& [name, value] : local) {
    int kernel = -1, dimension = -1;
    std::sscanf(name.c_str(), "local_k%d_d%d", &kernel, &dimension);
    if (kernel < 0 || kernel >= static_cast<int>(compiled.kernels.size()) || dimension < 0 ||
        dimension >= compiled.kernels[static_cast<size_t>(kernel)].dimensions) {
      throw std::runtime_error("--params " + name + ": the program has no kernel " +
                               std::to_string(kernel) + " with a dimension " +
                               std::to_string(dimension));
    }
    const KernelPlan& plan = compiled.kernels[static_cast<size_t>(kernel)];
    if (!plan.hasLocalSize) {
      throw std::runtime_error("--params " + name + ": give every dimension of kernel " +
                               plan.name + " a local size, or none");
    }
    int64_t global = evaluate(plan.globalSize[static_cast<size_t>(dimension)], binding);
    if (value < 1) {
      throw std::runtime_error("--params " + name + "=" + std::to_string(value) +
                               ": a local size is at least 1");
    }
    // A kernel launchable in parts takes any local size (codegen/launch_parts.h).
    if (global % value != 0 && !plan.launchableInParts) {
      throw std::runtime_error("--params " + name + "=" + std::to_string(value) +
                               ": the local size must divide the global size " +
                               std::to_string(global) + " of kernel " + plan.name +
                               " in dimension " + std::to_string(dimension));
    }
    int64_t applied = evaluate(plan.localSize[static_cast<size_t>(dimension)], binding);
    if (applied != value) {
      throw std::runtime_error("--params " + name + ": kernel " + plan.name +
                               " has its local size " + std::to_string(applied) + " in dimension " +
                               std::to_string(dimension) + " from the program's own parameters");
    }
  }
}

std::vector<std::string> parameterNames(const Definition& definition) {
  std::vector<std::string> names;
  for (const Expr& param : definition.function.params()) names.push_back(param.paramName());
  return names;
}

// The definition parameter indices --constant-inputs names ("none": no constant input), or
// those of `defaults` when the option is not given. An unknown or repeated name is an error
// that lists the parameters.
std::set<int> constantInputIndices(const EmitOptions& options,
                                   const std::vector<std::string>& parameters,
                                   const std::vector<std::string>& defaults) {
  std::vector<std::string> names = defaults;
  if (!options.constantInputs.empty()) {
    names.clear();
    if (options.constantInputs != "none") {
      size_t start = 0;
      while (start <= options.constantInputs.size()) {
        size_t end = options.constantInputs.find(',', start);
        if (end == std::string::npos) end = options.constantInputs.size();
        names.push_back(options.constantInputs.substr(start, end - start));
        start = end + 1;
      }
    }
  }
  std::set<int> indices;
  for (const std::string& name : names) {
    auto found = std::find(parameters.begin(), parameters.end(), name);
    if (found == parameters.end()) {
      throw std::runtime_error(
          "--constant-inputs: '" + name +
          "' is not an input of the program (its inputs: " + joined(parameters) + "; or none)");
    }
    if (!indices.insert(static_cast<int>(found - parameters.begin())).second) {
      throw std::runtime_error("--constant-inputs: " + name + " is given twice");
    }
  }
  return indices;
}

// The names of the inputs a target's workload declares constant (ExploreTarget::constantInputs:
// a layer's weights and biases): the default of --constant-inputs.
std::vector<std::string> constantInputNames(const explore::ExploreTarget& target) {
  const std::vector<std::string> names = parameterNames(target.parametric);
  std::vector<std::string> constant;
  for (int index : target.constantInputs) {
    if (index >= 0 && static_cast<size_t>(index) < names.size()) constant.push_back(names[index]);
  }
  return constant;
}

void writeAndReport(const CompiledProgram& compiled, const ArithBinding& sizes,
                    exporting::DropinMetadata metadata, const EmitOptions& options) {
  metadata.compilerVersion = explore::compilerVersion();
  metadata.buildOptions = options.buildOptions;
  if (!options.name.empty()) metadata.prefix = options.name;
  std::vector<exporting::DropinFile> files = exporting::emitDropin(compiled, sizes, metadata);
  exporting::writeDropin(options.out, files);
  std::string names;
  for (const exporting::DropinFile& file : files) names += " " + file.name;
  size_t preparation = 0;
  if (!metadata.constantInputs.empty()) {
    for (bool once : compiled.preparationKernels(metadata.constantInputs)) preparation += once;
  }
  std::printf("%s: %zu kernel(s) (%zu in %s_prepare), %lld bytes of buffers; wrote%s to %s\n",
              metadata.program.c_str(), compiled.kernels.size(), preparation,
              metadata.prefix.c_str(), static_cast<long long>(compiled.globalBytes(sizes)),
              names.c_str(), options.out.c_str());
}

// A 0/1 structural switch of --params: its value, 0 when not given.
int64_t givenSwitch(const std::map<std::string, int64_t>& given, const std::string& name) {
  auto it = given.find(name);
  if (it == given.end()) return 0;
  if (it->second != 0 && it->second != 1) {
    throw std::runtime_error("--params: " + name + "=" + std::to_string(it->second) +
                             " is not 0 or 1");
  }
  return it->second;
}

// The structure --params chooses for a layer: the Winograd family when it gives winograd_m,
// winograd_kappa and winograd_sigma, the work-group-tiled family when it gives tiled_rk and
// tiled_rp (tiled_staged 1 unless given), the register-blocked vector family when it gives
// vector_kappa and vector_sigma, else conv-direct's (v, unroll), which are then required.
// Returns the target and its structural parameters in the order to list them.
std::pair<explore::ExploreTarget, std::vector<std::pair<std::string, int64_t>>> layerStructure(
    const ConvLayer& layer, const std::map<std::string, int64_t>& given) {
  if (given.count("winograd_m") || given.count("winograd_kappa") || given.count("winograd_sigma")) {
    std::vector<std::string> missing;
    for (const char* name : {"winograd_m", "winograd_kappa", "winograd_sigma"}) {
      if (!given.count(name)) missing.push_back(name);
    }
    if (!missing.empty()) {
      throw std::runtime_error("--params: no value for " + joined(missing) +
                               " (the Winograd family's structure: winograd_m, winograd_kappa "
                               "and winograd_sigma)");
    }
    const int64_t m = given.at("winograd_m");
    const std::vector<int> tiles = explore::winogradTileSizes(layer);
    if (std::find(tiles.begin(), tiles.end(), m) == tiles.end()) {
      throw std::runtime_error(
          "--params: winograd_m=" + std::to_string(m) +
          " is not a Winograd tile of this layer (3x3 kernels, stride 1, and m in {2, 4} "
          "no larger than the output's height and width)");
    }
    std::vector<std::pair<std::string, int64_t>> structure = {
        {"winograd_m", m},
        {"winograd_kappa", given.at("winograd_kappa")},
        {"winograd_sigma", given.at("winograd_sigma")}};
    std::map<std::string, int64_t> fixed(structure.begin(), structure.end());
    return {explore::layerStructureTarget(layer, fixed), structure};
  }
  if (given.count("tiled_rk") || given.count("tiled_rp") || given.count("tiled_staged")) {
    std::vector<std::string> missing;
    for (const char* name : {"tiled_rk", "tiled_rp"}) {
      if (!given.count(name)) missing.push_back(name);
    }
    if (!missing.empty()) {
      throw std::runtime_error("--params: no value for " + joined(missing) +
                               " (the work-group-tiled family's structure: tiled_rk and tiled_rp, "
                               "and tiled_staged 0 or 1, default 1)");
    }
    const int64_t rk = given.at("tiled_rk"), rp = given.at("tiled_rp");
    if (rk < 1 || layer.M % rk != 0 || rp < 1 || rp > layer.outH() * layer.outW()) {
      throw std::runtime_error("--params: tiled_rk=" + std::to_string(rk) + ", tiled_rp=" +
                               std::to_string(rp) +
                               " is not a register tile of this layer (tiled_rk must divide the "
                               "kernels M=" + std::to_string(layer.M) +
                               ", tiled_rp be at most the output's pixels)");
    }
    const int64_t staged = given.count("tiled_staged") ? givenSwitch(given, "tiled_staged") : 1;
    std::vector<std::pair<std::string, int64_t>> structure = {
        {"tiled_rk", rk}, {"tiled_rp", rp}, {"tiled_staged", staged}};
    std::map<std::string, int64_t> fixed(structure.begin(), structure.end());
    return {explore::layerStructureTarget(layer, fixed), structure};
  }
  if (given.count("vector_kappa") || given.count("vector_sigma")) {
    if (!given.count("vector_kappa") || !given.count("vector_sigma")) {
      throw std::runtime_error(
          "--params: the register-blocked vector family needs both vector_kappa and "
          "vector_sigma");
    }
    int64_t kappa = given.at("vector_kappa"), sigma = given.at("vector_sigma");
    std::string why;
    if (!explore::isVectorFamilyStructure(layer, kappa, sigma, &why)) {
      throw std::runtime_error("--params: vector_kappa=" + std::to_string(kappa) +
                               ", vector_sigma=" + std::to_string(sigma) +
                               " is not a register-blocked vector structure of this layer (" + why +
                               ")");
    }
    const int64_t padInLoads = givenSwitch(given, "vector_pad_in_loads");
    const int64_t rowUnroll = givenSwitch(given, "vector_row_unroll");
    const int64_t interleave = givenSwitch(given, "vector_interleave");
    std::vector<std::pair<std::string, int64_t>> structure = {
        {"vector_kappa", kappa}, {"vector_sigma", sigma}, {"vector_pad_in_loads", padInLoads}};
    if (given.count("vector_row_unroll")) structure.push_back({"vector_row_unroll", rowUnroll});
    const int64_t channelsFirst = givenSwitch(given, "vector_channels_first");
    if (given.count("vector_interleave")) structure.push_back({"vector_interleave", interleave});
    if (given.count("vector_channels_first")) {
      structure.push_back({"vector_channels_first", channelsFirst});
    }
    // vector_split: the parts of the channels' sum (1, absent: no split).
    const int64_t split = given.count("vector_split") ? given.at("vector_split") : 1;
    if (split < 1 || layer.C % split != 0) {
      throw std::runtime_error("--params: vector_split=" + std::to_string(split) +
                               " must divide the input channels C=" + std::to_string(layer.C));
    }
    if (given.count("vector_split")) structure.push_back({"vector_split", split});
    return {explore::layerVectorTarget(layer, static_cast<int>(kappa), static_cast<int>(sigma),
                                       static_cast<int>(padInLoads), static_cast<int>(rowUnroll),
                                       static_cast<int>(interleave),
                                       static_cast<int>(channelsFirst), static_cast<int>(split)),
            structure};
  }
  std::vector<std::string> structural;
  for (const char* name : {"v", "unroll"}) {
    if (!given.count(name)) structural.push_back(name);
  }
  if (!structural.empty()) {
    throw std::runtime_error("--params: no value for " + joined(structural) +
                             " (conv-direct's structure: v in {1, 2, 4, 8, 16}, unroll in {0, 1}; "
                             "or vector_kappa and vector_sigma for the register-blocked vector "
                             "family; or winograd_m, winograd_kappa and winograd_sigma for the "
                             "Winograd family; or tiled_rk and tiled_rp for the work-group-tiled "
                             "family)");
  }
  int64_t v = given.at("v"), unroll = givenSwitch(given, "unroll");
  if (std::find(explore::kConvDirectVectorWidths.begin(), explore::kConvDirectVectorWidths.end(),
                v) == explore::kConvDirectVectorWidths.end()) {
    throw std::runtime_error("--params: v=" + std::to_string(v) +
                             " is not a vector width (1, 2, 4, 8 or 16)");
  }
  return {explore::layerTarget(layer, static_cast<int>(v), static_cast<int>(unroll)),
          {{"v", v}, {"unroll", unroll}}};
}

void emitLayerPoint(const EmitOptions& options) {
  ConvLayer layer = layerOption(options.layer);
  std::map<std::string, int64_t> given = parseParams(options.params);
  auto [target, fixed] = layerStructure(layer, given);
  std::string structureText = target.strategy;
  for (const auto& [name, value] : fixed) structureText += " " + name + "=" + std::to_string(value);
  explore::SpaceOptions spaceOptions;
  spaceOptions.switches = target.switches;
  spaceOptions.device = profileOption(options);
  explore::ParameterSpace space =
      explore::buildParameterSpace(target.parametric, target.sizes, spaceOptions);
  std::set<std::string> reserved;
  for (const auto& [name, value] : fixed) reserved.insert(name);
  std::vector<int64_t> values =
      checkedPoint(space, given, reserved, target.program + " (" + structureText + ")");

  ArithBinding binding = space.binding(values);
  std::map<std::string, int64_t> local = extraLocalSizes(space, given);
  binding.insert(local.begin(), local.end());
  const std::map<std::string, int64_t> choices = extraCodegenChoices(space, given);
  binding.insert(choices.begin(), choices.end());
  CompiledProgram compiled = compileVariant(target.parametric, binding);
  checkLocalSizes(compiled, local, binding);

  exporting::DropinMetadata metadata;
  metadata.prefix = exporting::dropinPrefix(target.program);
  metadata.program = layer.describe() + "; " + target.strategy;
  metadata.inputNames = parameterNames(target.parametric);
  metadata.constantInputs =
      constantInputIndices(options, metadata.inputNames, constantInputNames(target));
  metadata.parameters = fixed;
  for (size_t i = 0; i < space.parameters.size(); ++i) {
    metadata.parameters.push_back(
        {displayName(space, space.parameters[i].name, reserved), values[i]});
  }
  for (const auto& [name, value] : local) metadata.parameters.push_back({name, value});
  metadata.sizes = target.sizes;
  metadata.notes = explore::layerNotes(layer);
  if (spaceOptions.device) {
    metadata.notes.push_back("checked against the limits of device profile " +
                             spaceOptions.device->name);
  }
  writeAndReport(compiled, binding, metadata, options);
}

// What fusion=N recorded: the strategy's name, or the program as written for 0.
std::string fusionName(int64_t fusion) {
  if (fusion == 0) return "as written (no fusion)";
  return explore::pipelineFusionStrategies().at(static_cast<size_t>(fusion - 1));
}

void emitFilePoint(const EmitOptions& options) {
  Program program = parseFile(options.file);
  const Definition& definition =
      chooseFunctionDefinition(program, options.file, options.definition, "emit");
  std::set<std::string> known = mentionedSizeNames(definition);
  for (const Arith& declared : definition.sizeDeclarations) known.insert(declared.varName());
  ArithBinding sizes = parseSizeOptions(options.sizes, definition, known);
  checkSizeValues(definition, sizes);
  std::map<std::string, int64_t> given = parseParams(options.params);
  // rewrite=HASH names a structure of the rewrite search by a hash of its program: only the
  // rule sequence the results database records with it rebuilds it.
  if (given.count(explore::kRewriteParameter)) {
    throw std::runtime_error(
        "--params: rewrite=" + std::to_string(given.at(explore::kRewriteParameter)) +
        " names a structure of the rewrite search, which its rule sequence in the results "
        "database rebuilds: export it from there, e.g. weft emit " +
        options.file + " --size ... --db RESULTS.db --pick fastest (or --pick sample=N) --out DIR");
  }
  // fusion=N picks a fusion structure of a pipeline (workloads/pipeline/pipeline_target.h): its
  // tile sizes are the parameters then, vector_width=V the width of one that vectorises and
  // vector_pad=1 its rows padded to whole vectors.
  std::optional<explore::ExploreTarget> fused;
  if (given.count(explore::kFusionParameter)) {
    std::map<std::string, int64_t> structure;
    for (const char* name : {explore::kFusionParameter, explore::kVectorWidthParameter,
                             explore::kVectorPadParameter}) {
      if (given.count(name)) structure[name] = given.at(name);
      given.erase(name);
    }
    fused = explore::pipelineStructureTarget(definition, sizes, structure);
    for (const std::string& name : mentionedSizeNames(fused->parametric)) known.insert(name);
    // weft explore records a tuning parameter by its stem where that is unambiguous (theta for
    // theta1): a recorded point is accepted as written.
    std::map<std::string, int64_t> named;
    for (const auto& [name, value] : given) {
      std::vector<std::string> matches;
      for (const std::string& candidate : known) {
        if (!known.count(name) && !sizes.count(candidate) && stemOf(candidate) == name) {
          matches.push_back(candidate);
        }
      }
      named[matches.size() == 1 ? matches.front() : name] = value;
    }
    given = std::move(named);
  }
  std::vector<std::string> unknown, twice, missing;
  for (const auto& [name, value] : given) {
    if (!known.count(name) && !isLocalSizeName(name) && !isCodegenChoiceParameter(name)) {
      unknown.push_back(name);
    }
    if (sizes.count(name)) twice.push_back(name);
  }
  if (!unknown.empty()) {
    throw std::runtime_error("--params: '" + definition.name + "' has no size variable or " +
                             "parameter " + joined(unknown) + " (it has: " +
                             joined(std::vector<std::string>(known.begin(), known.end())) + ")");
  }
  if (!twice.empty()) {
    throw std::runtime_error(joined(twice) + " given by both --size and --params");
  }
  for (const std::string& name : known) {
    if (!sizes.count(name) && !given.count(name)) missing.push_back(name);
  }
  if (!missing.empty()) {
    throw std::runtime_error("no value for " + joined(missing) + " of '" + definition.name +
                             "': a drop-in export fixes every size and parameter (give tuning "
                             "parameters with --params NAME=..., sizes with --size NAME=...)");
  }
  // The --params names are the tuning parameters: check the point against the space.
  Definition parametric = fused ? fused->parametric : explore::tuneUnboundSizes(definition, sizes);
  explore::SpaceOptions spaceOptions;
  spaceOptions.device = profileOption(options);
  explore::ParameterSpace space = explore::buildParameterSpace(parametric, sizes, spaceOptions);
  std::vector<int64_t> values =
      checkedPoint(space, given, {}, "'" + definition.name + "' of " + options.file);
  ArithBinding binding = space.binding(values);
  std::map<std::string, int64_t> local = extraLocalSizes(space, given);
  binding.insert(local.begin(), local.end());
  const std::map<std::string, int64_t> choices = extraCodegenChoices(space, given);
  binding.insert(choices.begin(), choices.end());
  CompiledProgram compiled = compileVariant(parametric, binding);
  checkLocalSizes(compiled, local, binding);

  exporting::DropinMetadata metadata;
  metadata.prefix = exporting::dropinPrefix(definition.name);
  metadata.program =
      "definition " + definition.name + " of " + options.file +
      (fused ? "; " + fusionName(fused->fixedParameters.at("fusion")) : std::string());
  metadata.inputNames = parameterNames(definition);
  metadata.constantInputs = constantInputIndices(options, metadata.inputNames, {});
  if (fused) metadata.parameters.push_back({"fusion", fused->fixedParameters.at("fusion")});
  for (size_t i = 0; i < space.parameters.size(); ++i) {
    metadata.parameters.push_back({space.parameters[i].name, values[i]});
  }
  for (const auto& [name, value] : local) metadata.parameters.push_back({name, value});
  metadata.sizes = sizes;
  writeAndReport(compiled, binding, metadata, options);
}

std::string describeNs(uint64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

// Where a picked variant comes from, for the drop-in's header: the device it was tuned on (its
// fingerprint and, when recorded, its name) and the pick with its median, space and database.
void describeTuning(exporting::DropinMetadata& metadata, const explore::PickedVariant& picked,
                    const explore::PickSpec& spec, const std::string& db) {
  metadata.deviceFingerprint = picked.record.key.device;
  nlohmann::json details = nlohmann::json::parse(picked.record.details, nullptr, false);
  if (details.is_object() && details.contains("device") && details["device"].is_string()) {
    metadata.tunedOn = details["device"].get<std::string>();
  }
  metadata.tuning = "--pick " + spec.describe() + ": " + picked.why;
  if (picked.record.medianNs) metadata.tuning += "; median " + describeNs(*picked.record.medianNs);
  if (picked.record.spaceBytes) {
    metadata.tuning += ", " + std::to_string(*picked.record.spaceBytes) + " bytes";
  }
  metadata.tuning += "; recorded by " + picked.record.key.compiler + " in " + db;
}

void emitPicked(const EmitOptions& options) {
  if (options.layer.empty()) {
    throw std::runtime_error(
        "--db needs --layer or a weft FILE (with its --size values): what was explored");
  }
  if (!options.params.empty()) {
    throw std::runtime_error(
        "give --pick (a variant from --db) or --params (a chosen point), "
        "not both");
  }
  ConvLayer layer = layerOption(options.layer);
  const std::shared_ptr<const explore::Workload> workload = explore::convWorkload();
  const explore::WorkloadRequest request = explore::convRequest(layer);
  explore::PickSpec spec = explore::parsePickSpec(options.pick.empty() ? "fastest" : options.pick);
  explore::PickedVariant picked =
      explore::pickVariant(std::filesystem::path(options.db), layer.name, options.device, spec);
  CompiledProgram compiled = explore::compileRecordedVariant(*workload, request, picked.record);

  // The structure the record names, as the workload rebuilds it: its description, inputs and
  // constant inputs; its structural parameters listed first.
  const std::map<std::string, int64_t> recorded =
      explore::parseRecordedParameters(picked.record.key.parameters);
  const std::vector<std::string> structural = workload->structuralParameters(recorded);
  std::map<std::string, int64_t> fixed;
  for (const std::string& name : structural) fixed[name] = recorded.at(name);
  const explore::ExploreTarget target = workload->structureTarget(request, fixed, picked.record.strategy);

  exporting::DropinMetadata metadata;
  metadata.prefix = exporting::dropinPrefix(target.program);
  metadata.inputNames = parameterNames(target.parametric);
  metadata.constantInputs =
      constantInputIndices(options, metadata.inputNames, constantInputNames(target));
  metadata.program = target.description;
  for (const std::string& name : structural) metadata.parameters.push_back({name, fixed[name]});
  for (const auto& [name, value] : recorded) {
    if (!fixed.count(name)) metadata.parameters.push_back({name, value});
  }
  metadata.sizes = target.sizes;
  describeTuning(metadata, picked, spec, options.db);
  metadata.notes = workload->dropinNotes(request);
  writeAndReport(compiled, target.sizes, metadata, options);
}

// The sizes a database recorded `definition` with, as --size items: explorations of a file
// record it as "NAME[C=128,H=56]" (explore::programTarget). Empty when the database holds the
// definition without sizes or not at all (the pick then says what it holds); throws when it
// holds it at several sizes, which --size must then choose between.
std::vector<std::string> recordedSizeOptions(const explore::ResultsSnapshot& snapshot,
                                             const std::string& definition) {
  std::set<std::string> sized;
  for (const explore::VariantRecord& v : snapshot.variants) {
    const std::string& program = v.key.program;
    if (program.size() > definition.size() + 2 && program.rfind(definition + "[", 0) == 0 &&
        program.back() == ']') {
      sized.insert(program);
    }
  }
  if (sized.size() > 1) {
    throw std::runtime_error(snapshot.path.string() + " holds " + definition + " at " +
                             std::to_string(sized.size()) + " sets of sizes (" +
                             joined({sized.begin(), sized.end()}) + "); choose one with --size");
  }
  std::vector<std::string> items;
  if (sized.empty()) return items;
  const std::string& program = *sized.begin();
  const std::string inside =
      program.substr(definition.size() + 1, program.size() - definition.size() - 2);
  size_t start = 0;
  while (start <= inside.size()) {
    size_t end = inside.find(',', start);
    if (end == std::string::npos) end = inside.size();
    items.push_back(inside.substr(start, end - start));
    start = end + 1;
  }
  return items;
}

// --db with a FILE: the variant explored by `weft explore FILE --size ...` with the same sizes
// (the program is recorded under its name and sizes; without --size, the sizes it was recorded
// with), as written or fused.
void emitPickedFile(const EmitOptions& options) {
  if (!options.params.empty()) {
    throw std::runtime_error(
        "give --pick (a variant from --db) or --params (a chosen point), "
        "not both");
  }
  Program program = parseFile(options.file);
  const Definition& definition =
      chooseFunctionDefinition(program, options.file, options.definition, "emit");
  std::set<std::string> known = mentionedSizeNames(definition);
  for (const Arith& declared : definition.sizeDeclarations) known.insert(declared.varName());
  // Read once: the recorded sizes (without --size) and the pick come from it.
  const explore::ResultsSnapshot snapshot = explore::readResultsSnapshot(options.db);
  ArithBinding sizes = parseSizeOptions(
      options.sizes.empty() ? recordedSizeOptions(snapshot, definition.name) : options.sizes,
      definition, known);
  checkSizeValues(definition, sizes);
  const explore::ExploreTarget target = explore::programTarget(definition, sizes);
  explore::PickSpec spec = explore::parsePickSpec(options.pick.empty() ? "fastest" : options.pick);
  explore::PickedVariant picked =
      explore::pickVariant(snapshot, target.program, options.device, spec);
  CompiledProgram compiled = explore::compileProgramVariant(definition, sizes, picked.record);

  exporting::DropinMetadata metadata;
  metadata.prefix = exporting::dropinPrefix(definition.name);
  nlohmann::json recorded = nlohmann::json::parse(picked.record.key.parameters, nullptr, false);
  metadata.program = "definition " + definition.name + " of " + options.file;
  if (recorded.is_object() && recorded.contains("fusion") &&
      recorded["fusion"].is_number_integer()) {
    metadata.program += "; " + fusionName(recorded["fusion"].get<int64_t>());
  }
  if (recorded.is_object() && recorded.contains(explore::kRewriteParameter)) {
    metadata.program += "; " + picked.record.strategy;
  }
  metadata.inputNames = parameterNames(definition);
  metadata.constantInputs = constantInputIndices(options, metadata.inputNames, {});
  if (recorded.is_object()) {
    for (const auto& [name, value] : recorded.items()) {
      if (value.is_number_integer()) metadata.parameters.push_back({name, value.get<int64_t>()});
    }
  }
  metadata.sizes = sizes;
  describeTuning(metadata, picked, spec, options.db);
  writeAndReport(compiled, sizes, metadata, options);
}

void emit(const EmitOptions& options) {
  if (!options.db.empty() || !options.pick.empty()) {
    if (options.db.empty()) throw std::runtime_error("--pick needs --db: the results database");
    if (!options.file.empty()) {
      if (!options.layer.empty()) {
        throw std::runtime_error("give either a weft FILE or --layer, not both");
      }
      emitPickedFile(options);
      return;
    }
    emitPicked(options);
    return;
  }
  if (!options.device.empty()) {
    throw std::runtime_error(
        "--device names the tuned device of a --db pick; with --params use "
        "--device-profile to check a device's limits");
  }
  if (!options.layer.empty()) {
    if (!options.file.empty()) {
      throw std::runtime_error("give either a weft FILE or --layer, not both");
    }
    if (!options.sizes.empty() || !options.definition.empty()) {
      throw std::runtime_error(
          "--size and --def do not apply to --layer: the layer fixes every "
          "size");
    }
    if (options.params.empty()) {
      throw std::runtime_error(
          "--layer needs --params v=..,unroll=..,theta=..,... (a point; "
          "`weft space --layer ... --vector-width V --unroll U` lists the "
          "parameters) or --db DB --pick SPEC");
    }
    emitLayerPoint(options);
    return;
  }
  if (options.file.empty()) {
    throw std::runtime_error("weft emit needs a weft FILE with --params, or --layer (see --help)");
  }
  emitFilePoint(options);
}

}  // namespace

void registerEmit(CLI::App& app) {
  auto options = std::make_shared<EmitOptions>();
  CLI::App* command = app.add_subcommand(
      "emit",
      "Export one variant as drop-in files an application builds as they are: the kernels\n"
      "(.cl, every parameter baked in), C99 host code (.h/.c: create, run on your cl_mem\n"
      "buffers, buffer sizes, destroy, error names; only OpenCL needed), a JSON manifest, a\n"
      "CMake snippet and a README, all named after the layer or definition (weft_conv3_1.*).\n"
      "The point comes from --params (checked against the variant's constraints) or from a\n"
      "results database (--db with --pick).");
  command->footer(
      "Examples:\n"
      "  weft emit --layer 8,16,16,8,3,1,1 --out out/ \\\n"
      "      --params v=1,unroll=0,coalesce=0,kappa=4,omega=4,rho=0,sigma=2,theta=10\n"
      "  weft emit --db results.db --layer 8,16,16,8,3,1,1 --pick knee --out out/\n"
      "  weft emit examples/chunked.weft --size N=1024 --params kappa=32 --out out/\n");
  command->add_option("file", options->file, "a .weft file (or --layer)");
  command->add_option("--def", options->definition,
                      "the definition to emit (default: the last one in the file)");
  command->add_option("--size", options->sizes, "a size of the FILE's definition, e.g. N=1024")
      ->allow_extra_args(false);
  command
      ->add_option("--params", options->params,
                   "the point: NAME=VALUE,... (layers: v, unroll and conv-direct's parameters, "
                   "by name with or without the numeric suffix; or vector_kappa, vector_sigma, "
                   "rows (register-blocked vector); or winograd_m, winograd_kappa, "
                   "winograd_sigma, rows (Winograd); or tiled_rk, tiled_rp, tk, th, tw, tc "
                   "(work-group tiled, tiled_staged=0 for no local memory); FILE: fusion=N "
                   "picks an image pipeline's fusion structure as weft explore records it, with "
                   "vector_width=V for one that vectorises (vector_pad=1: its rows padded to whole "
                   "vectors), and its tile sizes by name; "
                   "local_kK_dD=.. sets the local size of kernel K in dimension D where the "
                   "program leaves it open; any program: streaming_stores=1 makes aligned "
                   "vector stores to global memory non-temporal (devices whose compiler takes "
                   "__builtin_nontemporal_store, e.g. PoCL), aligned_reads=1 reads contiguous "
                   "vectors of global buffers as the buffers' aligned vectors (shuffled where "
                   "the read is not aligned))")
      ->allow_extra_args(false);
  command->add_option("--layer", options->layer,
                      "a convolution layer: vgg16:N or C,H,W,M,K,stride,pad");
  command->add_option("--db", options->db, "a results database of weft explore (with --pick)");
  command->add_option("--pick", options->pick,
                      "which explored variant: fastest, smallest, knee, budget=SIZE (e.g. "
                      "budget=25MB) or sample=N (the N-th recorded, in measuring order); "
                      "default fastest");
  command->add_option("--device", options->device,
                      "with --db: the fingerprint of the device the variant was tuned on "
                      "(default: the only one in the database)");
  command->add_option("--device-profile", options->deviceProfile,
                      "with --params: also check the hardware limits of this device profile "
                      "(built-in name, user profile or .json; default none)");
  command->add_option("--out", options->out, "the folder to write the files into")->required();
  command->add_option("--name", options->name,
                      "the prefix of every emitted name and file (a C identifier; default "
                      "weft_<layer or definition>)");
  command->add_option("--constant-inputs", options->constantInputs,
                      "the inputs that stay the same from run to run, NAME,... or none: the "
                      "kernels depending only on them run once, in PREFIX_prepare (default: a "
                      "layer's weights,biases; for a FILE none)");
  command->add_option("--build-options", options->buildOptions,
                      "OpenCL build options baked into the host code (e.g. -cl-fast-relaxed-math)");
  command->callback([options] { emit(*options); });
}

}  // namespace weft::cli
