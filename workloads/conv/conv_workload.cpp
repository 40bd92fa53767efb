// The convolution-layer workload (see workloads/conv/conv_workload.h).
#include "workloads/conv/conv_workload.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include "explore/variant_pick.h"
#include "workloads/conv/conv_targets.h"

namespace weft::explore {

namespace {

// The request's layer; throws std::invalid_argument for a bad spec.
ConvLayer layerOf(const WorkloadRequest& request) { return parseConvLayer(request.instance); }

// A 0/1 or small integer option, or `fallback` when absent.
int intOption(const WorkloadRequest& request, const std::string& name, int fallback) {
  auto found = request.options.find(name);
  if (found == request.options.end() || found->second.empty()) return fallback;
  try {
    size_t used = 0;
    const int value = std::stoi(found->second, &used);
    if (used == found->second.size()) return value;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument("--" + name + " " + found->second + ": not an integer");
}

std::string yesNo(int64_t value) { return value ? "yes" : "no"; }

// Whether a record is a conv-direct variant of a layer with every parameter of the LIFT
// paper's Table 4 (the vector family has other parameters and is shown raw).
bool hasTable4Layout(const VariantRecord& record,
                     const std::map<std::string, int64_t>& parameters) {
  if (!layerOfProgram(record.key.program)) return false;
  for (const char* name : {"v", "unroll", "theta", "kappa", "sigma", "omega"}) {
    if (!parameters.count(name)) return false;
  }
  return true;
}

// The structures of `target` whose family is in the comma-separated `families` (--family):
// std::invalid_argument for a name that is no family, or when none of its structures is left.
ExploreTarget onlyFamilies(ExploreTarget target, const std::string& families) {
  static const std::vector<std::string> known = {"conv-direct", "register-blocked-vector",
                                                 "winograd", "workgroup-tiled"};
  std::set<std::string> wanted;
  std::stringstream list(families);
  for (std::string name; std::getline(list, name, ',');) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument("--family " + name +
                                  ": not a family (conv-direct, register-blocked-vector, "
                                  "winograd, workgroup-tiled)");
    }
    wanted.insert(name);
  }
  std::set<std::string> offered;
  std::vector<ExploreTarget::Structure> kept;
  for (ExploreTarget::Structure& structure : target.structures) {
    offered.insert(structure.family);
    if (wanted.count(structure.family)) kept.push_back(std::move(structure));
  }
  if (kept.empty()) {
    std::string names;
    for (const std::string& name : offered) names += (names.empty() ? "" : ", ") + name;
    throw std::invalid_argument("--family " + families + ": no such structure for " +
                                target.program + " on this device (its families: " + names + ")");
  }
  target.structures = std::move(kept);
  target.description += "; only " + families;
  return target;
}

class ConvWorkload final : public Workload {
 public:
  std::string name() const override { return "conv"; }

  std::string summary() const override {
    return "convolution layers (--layer vgg16:N or C,H,W,M,K,stride,pad; --all-vgg16): "
           "conv-direct (v, unroll), the register-blocked vector family, Winograd (3x3 stride 1) "
           "and on GPUs work-group tiles (--family to choose)";
  }

  // A VGG-16 name ("vgg16", "vgg16:N") or a list of sizes; a malformed list is accepted too,
  // so that parseConvLayer's message says what is wrong with it.
  bool accepts(const WorkloadRequest& request) const override {
    const std::string& spec = request.instance;
    if (request.program || spec.empty()) return false;
    if (spec == "vgg16" || spec.rfind("vgg16:", 0) == 0) return true;
    return spec.find_first_not_of("0123456789,- ") == std::string::npos;
  }

  std::vector<ExploreTarget> targets(const WorkloadRequest& request,
                                     const host::DeviceProfile* device) const override {
    const int vectorWidth = intOption(request, "vector-width", -1);
    const int unroll = intOption(request, "unroll", -1);
    const ConvDirectChoices choices = convDirectChoices(vectorWidth, unroll);
    const std::vector<int>& widths = choices.widths;
    const std::vector<int>& unrolls = choices.unrolls;
    // The vector family joins when conv-direct's shape is left open and the device is known
    // (its menus are derived from the device's profile).
    const bool vectorFamily = vectorWidth == -1 && unroll == -1;
    auto targetOf = [&](const ConvLayer& layer) {
      return widths.size() == 1 && unrolls.size() == 1
                 ? layerTarget(layer, widths.front(), unrolls.front())
                 : layerTargetStructures(layer, widths, unrolls, vectorFamily ? device : nullptr);
    };
    auto it = request.options.find("family");
    const std::string families = it == request.options.end() ? "" : it->second;
    auto chosen = [&](const ConvLayer& layer) {
      ExploreTarget target = targetOf(layer);
      return families.empty() ? target : onlyFamilies(std::move(target), families);
    };
    if (request.instance != "vgg16") return {chosen(layerOf(request))};
    std::vector<ExploreTarget> all;
    for (const ConvLayer& layer : vgg16Layers()) all.push_back(chosen(layer));
    return all;
  }

  ExploreTarget structureTarget(const WorkloadRequest& request,
                                const std::map<std::string, int64_t>& fixed,
                                const std::string&) const override {
    return layerStructureTarget(layerOf(request), fixed);
  }

  std::optional<WorkloadRequest> requestOfProgram(const std::string& program) const override {
    std::optional<ConvLayer> layer = layerOfProgram(program);
    if (!layer) return std::nullopt;
    return convRequest(*layer);
  }

  std::optional<std::string> programNameOf(const std::string& instance) const override {
    return parseConvLayer(instance).name;
  }

  std::vector<std::string> structuralParameters(
      const std::map<std::string, int64_t>& recorded) const override {
    // The vector family: vector_kappa, vector_sigma, and vector_pad_in_loads (records made
    // before it existed lack it and mean 0: the padded copy by a kernel of its own) and
    // vector_row_unroll, vector_interleave, vector_channels_first and vector_split where
    // recorded. Winograd: winograd_m, winograd_kappa, winograd_sigma. Work-group tiles:
    // tiled_rk, tiled_rp, tiled_staged. conv-direct: v and unroll.
    if (recorded.count("vector_kappa") && recorded.count("vector_sigma")) {
      std::vector<std::string> names = {"vector_kappa", "vector_sigma"};
      if (recorded.count("vector_pad_in_loads")) names.push_back("vector_pad_in_loads");
      if (recorded.count("vector_row_unroll")) names.push_back("vector_row_unroll");
      if (recorded.count("vector_interleave")) names.push_back("vector_interleave");
      if (recorded.count("vector_channels_first")) names.push_back("vector_channels_first");
      if (recorded.count("vector_split")) names.push_back("vector_split");
      return names;
    }
    if (recorded.count("winograd_m") && recorded.count("winograd_kappa") &&
        recorded.count("winograd_sigma")) {
      return {"winograd_m", "winograd_kappa", "winograd_sigma"};
    }
    if (recorded.count("tiled_rk") && recorded.count("tiled_rp") &&
        recorded.count("tiled_staged")) {
      return {"tiled_rk", "tiled_rp", "tiled_staged"};
    }
    if (recorded.count("v") && recorded.count("unroll")) return {"v", "unroll"};
    throw std::invalid_argument(
        "neither v and unroll, vector_kappa and vector_sigma, winograd_m, winograd_kappa and "
        "winograd_sigma, nor tiled_rk, tiled_rp and tiled_staged among its parameters");
  }

  bool ownsUnnamedRecord(const VariantRecord& record) const override {
    return layerOfProgram(record.key.program).has_value();
  }

  std::vector<ParameterRow> parameterTable(const VariantRecord& record) const override;

  std::string parameterLayout(const VariantRecord& record) const override {
    std::map<std::string, int64_t> parameters;
    try {
      parameters = parseRecordedParameters(record.key.parameters);
    } catch (const std::exception&) {
      return "";
    }
    return hasTable4Layout(record, parameters) ? "the LIFT paper's Table 4" : "";
  }

  std::vector<std::string> dropinNotes(const WorkloadRequest& request) const override {
    return layerNotes(layerOf(request));
  }
};

std::vector<ParameterRow> ConvWorkload::parameterTable(const VariantRecord& record) const {
  std::map<std::string, int64_t> parameters;
  try {
    parameters = parseRecordedParameters(record.key.parameters);
  } catch (const std::exception&) {
    return Workload::parameterTable(record);
  }
  auto number = [&](const char* name) -> std::optional<int64_t> {
    auto found = parameters.find(name);
    if (found == parameters.end()) return std::nullopt;
    return found->second;
  };
  std::optional<ConvLayer> layer = layerOfProgram(record.key.program);
  if (!hasTable4Layout(record, parameters)) return Workload::parameterTable(record);
  // The rows of the LIFT paper's Table 4 (best parameters found for a layer), in its order.
  std::vector<ParameterRow> rows;
  const int64_t theta = *number("theta");
  rows.push_back({"Input tile size (θ×θ)", std::to_string(theta) + "×" + std::to_string(theta)});
  rows.push_back({"Number of kernels per work-group (κ)", std::to_string(*number("kappa"))});
  rows.push_back({"Number of windows per thread (σ)", std::to_string(*number("sigma"))});
  rows.push_back({"Sequentially processed input elements (ω)", std::to_string(*number("omega"))});
  if (number("rho"))
    rows.push_back({"Optimisation padding size (ρ)", std::to_string(*number("rho"))});
  rows.push_back({"Vector size (v)", std::to_string(*number("v"))});
  rows.push_back({"Unrolling", yesNo(*number("unroll"))});
  if (number("coalesce")) rows.push_back({"Coalescing", yesNo(*number("coalesce"))});
  // The work-group sizes, from the variant's generated kernels.
  try {
    CompiledProgram compiled = compileLayerVariant(*layer, record);
    ArithBinding sizes = convListing3Sizes(*layer);
    for (const KernelPlan& kernel : compiled.kernels) {
      std::string local;
      if (kernel.hasLocalSize) {
        for (int d = 0; d < kernel.dimensions; ++d) {
          std::optional<int64_t> value =
              tryEvaluate(kernel.localSize[static_cast<size_t>(d)], sizes);
          local += (d ? "×" : "") + (value ? std::to_string(*value) : std::string("?"));
        }
      } else {
        local = "chosen by the OpenCL implementation";
      }
      rows.push_back({"Local size of " + kernel.name, local});
    }
  } catch (const std::exception& error) {
    rows.push_back({"Local sizes", std::string("unknown (") + error.what() + ")"});
  }
  return rows;
}

}  // namespace

std::shared_ptr<const Workload> convWorkload() {
  static const std::shared_ptr<const Workload> instance = std::make_shared<ConvWorkload>();
  return instance;
}

WorkloadRequest convRequest(const ConvLayer& layer) {
  WorkloadRequest request;
  const std::vector<ConvLayer>& vgg = vgg16Layers();
  for (size_t i = 0; i < vgg.size(); ++i) {
    if (vgg[i].name == layer.name) {
      request.instance = "vgg16:" + std::to_string(vgg16PaperNumber(i));
      return request;
    }
  }
  request.instance = std::to_string(layer.C) + "," + std::to_string(layer.H) + "," +
                     std::to_string(layer.W) + "," + std::to_string(layer.M) + "," +
                     std::to_string(layer.K) + "," + std::to_string(layer.stride) + "," +
                     std::to_string(layer.pad);
  return request;
}

std::optional<ConvLayer> layerOfProgram(const std::string& program) {
  for (const ConvLayer& layer : vgg16Layers()) {
    if (layer.name == program) return layer;
  }
  if (program.rfind("conv_", 0) != 0) return std::nullopt;
  std::string spec = program.substr(5);
  std::replace(spec.begin(), spec.end(), '_', ',');
  try {
    ConvLayer layer = parseConvLayer(spec);
    if (layer.name != program) return std::nullopt;
    return layer;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

Definition variantDefinition(const ConvLayer& layer, const VariantRecord& record) {
  return variantDefinition(*convWorkload(), convRequest(layer), record);
}

CompiledProgram compileLayerVariant(const ConvLayer& layer, const VariantRecord& record) {
  return compileRecordedVariant(*convWorkload(), convRequest(layer), record);
}

std::vector<std::string> layerNotes(const ConvLayer& layer) {
  return {
      "layouts (Listing 3, channels innermost): weights (M, K, K, C), biases (M,), input "
      "(H, W, C); output (M, outH, outW). From PyTorch's weights (M, C, K, K) and input (C, H, "
      "W): numpy.transpose(w, (0, 2, 3, 1)) and numpy.transpose(x, (1, 2, 0)).",
      "layer: C=" + std::to_string(layer.C) + " H=" + std::to_string(layer.H) +
          " W=" + std::to_string(layer.W) + " M=" + std::to_string(layer.M) +
          " K=" + std::to_string(layer.K) + " stride=" + std::to_string(layer.stride) +
          " pad=" + std::to_string(layer.pad) + " (outH=" + std::to_string(layer.outH()) +
          ", outW=" + std::to_string(layer.outW()) + ")"};
}

}  // namespace weft::explore
