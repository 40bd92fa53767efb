// variant_pick.h: choosing a variant from a results database (fastest, smallest, knee, budget,
// sample)
// with errors that say what the database holds, and rebuilding a picked variant through the
// workload that made it.
#include "explore/variant_pick.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <regex>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "codegen/codegen.h"
#include "explore/explorer.h"
#include "explore/launch_parameters.h"
#include "explore/measurement.h"
#include "explore/parameter_space.h"
#include "explore/pareto.h"

namespace weft::explore {

namespace {

using Json = nlohmann::json;

std::string megabytes(int64_t bytes) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f MB (%lld bytes)", static_cast<double>(bytes) / 1e6,
                static_cast<long long>(bytes));
  return text;
}

std::string milliseconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(ns) / 1e6);
  return text;
}

bool isOk(const VariantRecord& v) {
  return v.status == VariantStatus::Ok && v.medianNs.has_value() && v.spaceBytes.has_value();
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The name a workload records `name`'s variants under when it is one of its named instances
// (Workload::programNameOf); "" when no registered workload knows it.
std::string recordedProgramName(const std::string& name) {
  for (const auto& workload : registeredWorkloads()) {
    try {
      if (std::optional<std::string> program = workload->programNameOf(name)) return *program;
    } catch (const std::exception&) {
      // Not a valid instance of that workload.
    }
  }
  return "";
}

// The name without the numeric suffix the rewrite gave it ("kappa4" -> "kappa"), as
// explore/explorer.cpp's parametersJson strips it.
std::string stemOf(const std::string& name) {
  size_t end = name.find_last_not_of("0123456789");
  return end == std::string::npos ? name : name.substr(0, end + 1);
}

}  // namespace

std::string PickSpec::describe() const {
  switch (kind) {
    case Kind::Fastest: return "fastest";
    case Kind::Smallest: return "smallest";
    case Kind::Knee: return "knee";
    case Kind::Budget: return "budget=" + std::to_string(budgetBytes) + " bytes";
    case Kind::Sample:
      return "sample=" + std::to_string(sample);
  }
  return "?";
}

PickSpec parsePickSpec(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  PickSpec spec;
  if (lower == "fastest") {
    spec.kind = PickSpec::Kind::Fastest;
  } else if (lower == "smallest") {
    spec.kind = PickSpec::Kind::Smallest;
  } else if (lower == "knee") {
    spec.kind = PickSpec::Kind::Knee;
  } else if (lower.rfind("budget=", 0) == 0) {
    spec.kind = PickSpec::Kind::Budget;
    try {
      spec.budgetBytes = parseByteSize(text.substr(7));
    } catch (const std::invalid_argument& error) {
      throw PickError("pick '" + text + "': " + error.what());
    }
  } else if (lower.rfind("sample=", 0) == 0) {
    spec.kind = PickSpec::Kind::Sample;
    const std::string number = text.substr(7);
    bool digits =
        !number.empty() && number.size() <= 12 &&
        std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; });
    spec.sample = digits ? std::stoll(number) : 0;
    if (spec.sample < 1) {
      throw PickError("pick '" + text +
                      "': expected sample=N with N >= 1, the N-th variant in measuring order");
    }
  } else {
    throw PickError("'" + text +
                    "' is not a pick: expected fastest, smallest, knee, budget=SIZE (e.g. "
                    "budget=25MB: the fastest variant using at most 25 MB) or sample=N (the "
                    "N-th variant the exploration recorded)");
  }
  return spec;
}

PickedVariant pickVariant(const ResultsSnapshot& snapshot, const std::string& programOrLayerName,
                          const std::string& deviceFingerprint, const PickSpec& spec) {
  const std::string db = snapshot.path.string();
  if (snapshot.variants.empty()) {
    throw PickError(db + " holds no variants yet (weft explore writes them)");
  }
  // The program: the name as recorded, else the recorded name of a layer spec.
  std::set<std::string> programs;
  for (const VariantRecord& v : snapshot.variants) programs.insert(v.key.program);
  std::string program = programOrLayerName;
  if (!programs.count(program)) {
    std::string layerName = recordedProgramName(programOrLayerName);
    if (!layerName.empty() && programs.count(layerName)) program = layerName;
  }
  if (!programs.count(program)) {
    std::string asLayer = recordedProgramName(programOrLayerName);
    throw PickError("no variants of '" + programOrLayerName + "'" +
                    (!asLayer.empty() && asLayer != programOrLayerName
                         ? " (recorded as '" + asLayer + "')"
                         : std::string()) +
                    " in " + db + "; it holds " + std::to_string(programs.size()) +
                    (programs.size() == 1 ? " program: " : " programs: ") +
                    joined({programs.begin(), programs.end()}));
  }
  // The device: the one given, else the only one.
  std::map<std::string, size_t> devices;  // fingerprint -> variants
  for (const VariantRecord& v : snapshot.variants) {
    if (v.key.program == program) ++devices[v.key.device];
  }
  auto listDevices = [&] {
    std::vector<std::string> items;
    for (const auto& [device, count] : devices) {
      items.push_back(device + " (" + std::to_string(count) + " variant" +
                      (count == 1 ? "" : "s") + ")");
    }
    return joined(items);
  };
  std::string device = deviceFingerprint;
  if (device.empty()) {
    if (devices.size() > 1) {
      throw PickError(program + " was explored on " + std::to_string(devices.size()) +
                      " devices in " + db + ": " + listDevices() +
                      "; name one by its fingerprint");
    }
    device = devices.begin()->first;
  } else if (!devices.count(device)) {
    throw PickError("no variants of " + program + " on device " + device + " in " + db +
                    "; its variants are on " + listDevices());
  }
  // The candidates: ok variants; of this compiler when it recorded any, else of any compiler.
  std::vector<VariantRecord> all;
  for (const VariantRecord& v : snapshot.variants) {
    if (v.key.program == program && v.key.device == device) all.push_back(v);
  }
  if (spec.kind == PickSpec::Kind::Sample) {
    // Measuring order counts every recorded row of the program on the device, ok or not.
    if (spec.sample > static_cast<int64_t>(all.size())) {
      throw PickError("no sample " + std::to_string(spec.sample) + " of " + program +
                      " on device " + device + " in " + db + ": it recorded " +
                      std::to_string(all.size()) + " variant" + (all.size() == 1 ? "" : "s"));
    }
    const VariantRecord& chosen = all[static_cast<size_t>(spec.sample - 1)];
    if (!isOk(chosen)) {
      throw PickError("sample " + std::to_string(spec.sample) + " of " + program + " in " + db +
                      " is " + statusName(chosen.status) +
                      (chosen.message.empty() ? std::string() : " (" + chosen.message + ")") +
                      "; only an ok variant can be picked");
    }
    PickedVariant picked;
    picked.record = chosen;
    picked.why =
        "sample " + std::to_string(spec.sample) + " of " + std::to_string(all.size()) + " recorded";
    return picked;
  }
  std::map<std::string, int> statusCounts;
  for (const VariantRecord& v : all) ++statusCounts[statusName(v.status)];
  const std::string compiler = compilerVersion();
  bool thisCompiler = std::any_of(all.begin(), all.end(), [&](const VariantRecord& v) {
    return isOk(v) && v.key.compiler == compiler;
  });
  std::vector<VariantRecord> ok;
  for (const VariantRecord& v : all) {
    if (isOk(v) && (!thisCompiler || v.key.compiler == compiler)) ok.push_back(v);
  }
  if (ok.empty()) {
    std::vector<std::string> counts;
    for (const auto& [status, count] : statusCounts) {
      counts.push_back(std::to_string(count) + " " + status);
    }
    throw PickError("no ok variants of " + program + " on device " + device + " in " + db +
                    " (" + std::to_string(all.size()) + " recorded: " + joined(counts) +
                    "); nothing to pick");
  }
  const std::string among = std::to_string(ok.size()) + " ok variant" +
                            (ok.size() == 1 ? "" : "s") +
                            (thisCompiler ? "" : " (recorded by another weft version)");
  std::vector<VariantRecord> front = paretoFront(ok);
  PickedVariant picked;
  switch (spec.kind) {
    case PickSpec::Kind::Fastest:
      picked.record = front.front();
      picked.why = "fastest of " + among;
      break;
    case PickSpec::Kind::Smallest:
      picked.record = front.back();
      picked.why = "smallest of " + among;
      break;
    case PickSpec::Kind::Knee: {
      size_t knee = kneeIndex(front);
      picked.record = front[knee];
      picked.why = "knee of the Pareto front (point " + std::to_string(knee + 1) + " of " +
                   std::to_string(front.size()) + ", fastest first) of " + among;
      break;
    }
    case PickSpec::Kind::Budget: {
      std::optional<VariantRecord> within = fastestWithin(ok, spec.budgetBytes);
      if (!within) {
        const VariantRecord& smallest = front.back();
        throw PickError("no ok variant of " + program + " fits in a budget of " +
                        megabytes(spec.budgetBytes) + "; the smallest of " + among + " takes " +
                        megabytes(*smallest.spaceBytes) + " (" +
                        milliseconds(*smallest.medianNs) + ", " + smallest.key.parameters + ")");
      }
      picked.record = *within;
      picked.why = "fastest within " + megabytes(spec.budgetBytes) + " of " + among;
      break;
    }
    case PickSpec::Kind::Sample:
      break;  // picked above, before the ok variants are gathered
  }
  return picked;
}

PickedVariant pickVariant(const std::filesystem::path& db, const std::string& programOrLayerName,
                          const std::string& deviceFingerprint, const PickSpec& spec) {
  return pickVariant(readResultsSnapshot(db), programOrLayerName, deviceFingerprint, spec);
}

namespace {

// The structure (v, unroll) of a recorded layer variant and its tuning values, checked.
struct RebuiltVariant {
  ExploreTarget target;           // the structure's parametric program and sizes
  ArithBinding tuning;            // tuning variable (full name) -> value
  // local_k<i>_d<d> -> value (explore/launch_parameters.h), and the code generation choice
  // streaming_stores: the parameters that are not in the program
  ArithBinding launch;
};

// A recorded launch parameter: "local_k2_d1", or "local_k3_d" (parametersJson strips the
// dimension of a kernel's only open dimension), or a code generation choice; its full name, or
// "" for other names.
std::string launchParameterName(const std::string& key) {
  if (isCodegenChoiceParameter(key)) return key;
  std::smatch match;
  static const std::regex pattern("local_k([0-9]+)_d([0-9]*)");
  if (!std::regex_match(key, match, pattern)) return "";
  return localSizeParameterName(std::stoi(match[1].str()),
                                match[2].str().empty() ? 0 : std::stoi(match[2].str()));
}

// A record's parameters as a JSON object of integers. Throws PickError.
Json recordedParameters(const VariantRecord& record, const std::string& what) {
  Json parameters;
  try {
    parameters = Json::parse(record.key.parameters);
  } catch (const std::exception& error) {
    throw PickError(what + ": its parameters are not JSON: " + error.what());
  }
  if (!parameters.is_object()) throw PickError(what + ": its parameters are not a JSON object");
  for (const auto& [name, value] : parameters.items()) {
    if (!value.is_number_integer()) {
      throw PickError(what + ": parameter " + name + " is not an integer");
    }
  }
  return parameters;
}

// The structure's fixed parameters (the names in `structural`) read from `parameters`, with
// "a=1 b=2" for messages.
std::map<std::string, int64_t> structureOf(const Json& parameters,
                                           const std::vector<std::string>& structural,
                                           std::string& structureText) {
  std::map<std::string, int64_t> fixed;
  for (const std::string& name : structural) {
    fixed[name] = parameters[name].get<int64_t>();
    structureText += (structureText.empty() ? "" : " ") + name + "=" + std::to_string(fixed[name]);
  }
  return fixed;
}

// The tuning and launch values of a record whose structure `target` is rebuilt: recorded names
// mapped back to the space's parameters (algorithmic constraints only: the device's limits
// were checked when the variant was measured) and the values checked against the space.
RebuiltVariant bindRecordedValues(ExploreTarget target, const Json& parameters,
                                  const std::vector<std::string>& structural,
                                  const std::string& structureText, const std::string& what,
                                  const std::string& targetText) {
  RebuiltVariant rebuilt;
  rebuilt.target = std::move(target);
  SpaceOptions options;
  options.switches = rebuilt.target.switches;
  ParameterSpace space;
  try {
    space = buildParameterSpace(rebuilt.target.parametric, rebuilt.target.sizes, options);
  } catch (const std::exception& error) {
    throw PickError(what + ": the space of " + targetText + " cannot be built: " + error.what());
  }
  std::map<std::string, int> stems;
  for (const Parameter& p : space.parameters) ++stems[stemOf(p.name)];
  std::vector<int64_t> values;
  std::set<std::string> used(structural.begin(), structural.end());
  for (const Parameter& p : space.parameters) {
    std::string stem = stemOf(p.name);
    std::string key = stems[stem] == 1 && !used.count(stem) ? stem : p.name;
    if (!parameters.contains(key)) {
      throw PickError(what + ": parameter " + key + " of the " + structureText +
                      " structure is missing");
    }
    values.push_back(parameters[key].get<int64_t>());
    used.insert(key);
    rebuilt.tuning[p.name] = values.back();
  }
  for (const auto& [name, value] : parameters.items()) {
    std::string launch = used.count(name) ? "" : launchParameterName(name);
    if (!launch.empty()) {
      rebuilt.launch[launch] = value.get<int64_t>();
      used.insert(name);
    }
    if (!used.count(name)) {
      throw PickError(what + ": " + name + " is no parameter of the " + structureText +
                      " structure of " + targetText);
    }
  }
  std::vector<std::string> violations = space.violations(values);
  if (!violations.empty()) {
    throw PickError(what + " is not valid for " + targetText + ": " + violations.front());
  }
  return rebuilt;
}

// The structure a record names, rebuilt by `workload` for `request`, with its values bound.
RebuiltVariant rebuildVariant(const Workload& workload, const WorkloadRequest& request,
                              const VariantRecord& record) {
  const std::string what = "variant " + record.key.parameters + " of " + record.key.program;
  const Json parameters = recordedParameters(record, what);
  std::map<std::string, int64_t> recorded;
  for (const auto& [name, value] : parameters.items()) recorded[name] = value.get<int64_t>();
  std::vector<std::string> structural;
  try {
    structural = workload.structuralParameters(recorded);
  } catch (const std::exception& error) {
    throw PickError(what + " is not a " + workload.name() + " variant: " + error.what());
  }
  std::string structureText;
  const std::map<std::string, int64_t> fixed = structureOf(parameters, structural, structureText);
  if (structureText.empty()) structureText = "as written";
  ExploreTarget target;
  try {
    target = workload.structureTarget(request, fixed, record.strategy);
  } catch (const std::exception& error) {
    throw PickError(what + ": the structure " + structureText + " fails: " + error.what());
  }
  const std::string targetText = target.description.empty() ? target.program : target.description;
  return bindRecordedValues(std::move(target), parameters, structural, structureText, what,
                            targetText);
}

// The kernels the record says ran when it was measured (details.kernels), if it says.
std::optional<size_t> recordedKernelCount(const VariantRecord& record) {
  const Json details = Json::parse(record.details, nullptr, false);
  if (!details.is_object() || !details.contains("kernels") || !details["kernels"].is_array()) {
    return std::nullopt;
  }
  return details["kernels"].size();
}

// The rebuilt variant compiled as the explorer measured it; recorded local sizes must still
// fit the kernels (they divide the global sizes, or the kernel is launched in parts). When they
// do not and the variant now compiles
// to another number of kernels than ran when it was measured, the code generator has changed
// since the exploration (a kernel's local size names it by its position), and the message says
// so.
CompiledProgram compileRebuilt(const RebuiltVariant& rebuilt, const VariantRecord& record) {
  ArithBinding binding = rebuilt.target.sizes;
  for (const auto& [name, value] : rebuilt.tuning) binding[name] = value;
  for (const auto& [name, value] : rebuilt.launch) binding[name] = value;
  CompiledProgram compiled = compileVariant(rebuilt.target.parametric, binding);
  for (const KernelPlan& kernel : compiled.kernels) {
    if (!kernel.hasLocalSize) continue;
    for (int d = 0; d < kernel.dimensions; ++d) {
      std::optional<int64_t> local = tryEvaluate(kernel.localSize[static_cast<size_t>(d)], binding);
      std::optional<int64_t> global =
          tryEvaluate(kernel.globalSize[static_cast<size_t>(d)], binding);
      if (local && global && (*local <= 0 || *global % *local != 0)) {
        const std::optional<size_t> measured = recordedKernelCount(record);
        const bool sameKernels = !measured || *measured == compiled.kernels.size();
        // A kernel launched in parts takes any local size (codegen/launch_parts.h).
        if (*local > 0 && kernel.launchableInParts && sameKernels) continue;
        std::string why;
        if (measured && *measured != compiled.kernels.size()) {
          why = ": the variant compiles to " + std::to_string(compiled.kernels.size()) +
                " kernels now where " + std::to_string(*measured) +
                " ran when it was measured (weft's code generation has changed since the "
                "exploration; explore it again)";
        }
        throw PickError("variant " + record.key.parameters + " of " + record.key.program +
                        ": kernel " + kernel.name + "'s local size " + std::to_string(*local) +
                        " in dimension " + std::to_string(d) + " does not divide its global size " +
                        std::to_string(*global) + why);
      }
    }
  }
  return compiled;
}

}  // namespace

Definition variantDefinition(const Workload& workload, const WorkloadRequest& request,
                             const VariantRecord& record) {
  RebuiltVariant rebuilt = rebuildVariant(workload, request, record);
  return instantiate(rebuilt.target.parametric, rebuilt.tuning);
}

CompiledProgram compileRecordedVariant(const Workload& workload, const WorkloadRequest& request,
                                       const VariantRecord& record) {
  return compileRebuilt(rebuildVariant(workload, request, record), record);
}

}  // namespace weft::explore
