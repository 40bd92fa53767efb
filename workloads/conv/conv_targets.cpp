// The conv workload's targets (see workloads/conv/conv_targets.h).
#include "workloads/conv/conv_targets.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>

#include "rewrite/strategies.h"
#include "workloads/conv/cost_model.h"

namespace weft::explore {

ConvDirectChoices convDirectChoices(int vectorWidth, int unroll) {
  ConvDirectChoices choices;
  for (int v : kConvDirectVectorWidths) {
    if (vectorWidth < 0 || v == vectorWidth) choices.widths.push_back(v);
  }
  for (int u : kConvDirectUnrolls) {
    if (unroll < 0 || u == unroll) choices.unrolls.push_back(u);
  }
  if (choices.widths.empty() || choices.unrolls.empty()) {
    throw std::invalid_argument("--vector-width must be one of 1, 2, 4, 8, 16 and --unroll 0 or 1");
  }
  return choices;
}

bool isVectorFamilyStructure(const ConvLayer& layer, int64_t kappa, int64_t sigma,
                             std::string* why) {
  auto fail = [&](const std::string& text) {
    if (why) *why = text;
    return false;
  };
  if (!isValidVectorWidth(kappa) || layer.M % kappa != 0) {
    return fail("vector_kappa a vector width (2, 3, 4, 8 or 16) dividing M=" +
                std::to_string(layer.M));
  }
  if (sigma < 1 || sigma > layer.outW()) {
    return fail("vector_sigma between 1 and the output width " + std::to_string(layer.outW()));
  }
  return true;
}

std::vector<int> vectorFamilyKappas(const ConvLayer& layer, const host::DeviceProfile& device) {
  const int native = std::max(1, device.nativeFloatVectorWidth);
  std::vector<int> kappas;
  for (int kappa : {2, 3, 4, 8, 16}) {
    if (2 * kappa < native || layer.M % kappa != 0) continue;
    // Past a whole vector register, κ must fill its registers (a multiple of the width).
    if (kappa > native && kappa % native != 0) continue;
    kappas.push_back(kappa);
  }
  return kappas;
}

namespace {

// The block sizes σ = ⌈width / b⌉ for b = 1 … width blocks per row (every divisor among them)
// whose σ float<κ> accumulators, a vector of weights and a temporary fit the profile's registers
// per work-item (σκ + 2κ ≤ registersPerWorkItem). A σ that does not divide the width leaves a
// partial last block, its surplus outputs computed and dropped; a larger σ with the same number
// of blocks would only compute more of them, so it is left out.
std::vector<int> blockSigmas(int64_t width, int kappa, const host::DeviceProfile& device) {
  std::vector<int> sigmas;
  for (int64_t sigma = 1; sigma <= width; ++sigma) {
    if (sigma * kappa + 2 * kappa > device.registersPerWorkItem) break;
    const int64_t blocks = (width + sigma - 1) / sigma;
    if ((width + blocks - 1) / blocks != sigma) continue;  // σ - 1 needs no more blocks
    sigmas.push_back(static_cast<int>(sigma));
  }
  return sigmas;
}

}  // namespace

std::vector<int> vectorFamilySigmas(const ConvLayer& layer, int kappa,
                                    const host::DeviceProfile& device) {
  return blockSigmas(layer.outW(), kappa, device);
}

std::vector<int> vectorFamilySplits(const ConvLayer& layer, int kappa, int sigma,
                                    const host::DeviceProfile& device) {
  std::vector<int> splits = {1};
  if (device.deviceType != "gpu" || kappa < 1 || sigma < 1) return splits;
  const double workItems = static_cast<double>(layer.M / kappa) *
                           static_cast<double>(layer.outH()) *
                           static_cast<double>((layer.outW() + sigma - 1) / sigma);
  const double capacity =
      residentWorkItemsPerUnit(device, static_cast<double>(sigma * kappa + 2 * kappa)) *
      std::max(1, device.computeUnits);
  for (int split = 2; layer.C % split == 0 && layer.C / split >= 8; split *= 2) {
    if (workItems * split / 2 >= capacity) break;
    splits.push_back(split);
  }
  return splits;
}

namespace {

// What every target of a layer shares, whatever its program: name, sizes, flops, the
// reference and its constant inputs (weights, biases).
ExploreTarget layerTargetCommon(const ConvLayer& layer) {
  ExploreTarget target;
  target.program = layer.name.empty()
                       ? "conv_" + std::to_string(layer.C) + "_" + std::to_string(layer.H) + "_" +
                             std::to_string(layer.W) + "_" + std::to_string(layer.M) + "_" +
                             std::to_string(layer.K) + "_" + std::to_string(layer.stride) + "_" +
                             std::to_string(layer.pad)
                       : layer.name;
  target.workload = "conv";
  target.flops = layer.flops();
  target.sizes = convListing3Sizes(layer);
  target.predictSeconds = [layer](const std::map<std::string, int64_t>& parameters,
                                  const host::DeviceProfile& device) -> std::optional<double> {
    std::optional<CostPrediction> prediction = predictLayerVariantCost(layer, parameters, device);
    if (!prediction) return std::nullopt;
    return prediction->seconds;
  };
  target.reference = convListing3Definition();
  const std::vector<Expr>& params = target.reference->function.params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].paramName() == "weights" || params[i].paramName() == "biases") {
      target.constantInputs.insert(static_cast<int>(i));
    }
  }
  return target;
}

// A layer's target from a named strategy applied to Listing 3 with `factors`: the common parts,
// the rewritten program and the strategy's name (std::runtime_error when it does not apply).
ExploreTarget strategyLayerTarget(const ConvLayer& layer, const std::string& name,
                                  const rewrite::RuleArguments& factors,
                                  rewrite::RewriteContext& context) {
  // The strategies rewrite Listing 3 with symbolic sizes, so a structure's program depends on
  // the strategy and its factors only, not on the layer: each is rewritten once per process and
  // shared by every layer that offers it (--all-vgg16, benches, tests), with the tuning
  // variables its rewriting made.
  struct Rewritten {
    std::optional<Definition> definition;
    rewrite::RewriteContext context;
    std::string failure;
  };
  static std::mutex lock;
  static std::map<std::string, Rewritten> rewrittenOnce;
  std::string key = name;
  for (const auto& [factor, value] : factors) key += " " + factor + "=" + value.toString();
  // A context that already made tuning variables would number the new ones differently.
  if (!context.tuningVariables().empty()) key.clear();
  Rewritten result;
  {
    std::lock_guard<std::mutex> guard(lock);
    auto found = rewrittenOnce.find(key);
    if (key.empty() || found == rewrittenOnce.end()) {
      const rewrite::NamedStrategy* strategy = rewrite::findStrategy(name);
      if (!strategy) throw std::runtime_error("the " + name + " strategy is missing");
      Rewritten fresh{std::nullopt, context, ""};
      rewrite::StrategyResult rewritten =
          strategy->make(factors)(convListing3Definition(), fresh.context);
      if (rewritten.success()) {
        fresh.definition = *rewritten.definition;
      } else {
        fresh.failure = rewritten.failure;
      }
      if (key.empty()) {
        result = std::move(fresh);
      } else {
        result = rewrittenOnce.emplace(key, std::move(fresh)).first->second;
      }
    } else {
      result = found->second;
    }
  }
  if (!result.definition) throw std::runtime_error(name + " does not apply: " + result.failure);
  context = result.context;
  ExploreTarget target = layerTargetCommon(layer);  // name, sizes, flops, reference
  target.description = layer.describe() + "; " + name;
  target.parametric = *result.definition;
  target.strategy = name;
  return target;
}

}  // namespace

ExploreTarget layerTarget(const ConvLayer& layer, int vectorWidth, int unroll) {
  rewrite::RewriteContext context;
  ExploreTarget target = strategyLayerTarget(
      layer, "conv-direct", {{"v", Arith(vectorWidth)}, {"unroll", Arith(unroll)}}, context);
  for (const Arith& v : context.tuningVariables()) {
    if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
      target.switches.insert(v.varName());
    }
  }
  target.fixedParameters = {{"v", vectorWidth}, {"unroll", unroll}};
  return target;
}

ExploreTarget layerTargetStructures(const ConvLayer& layer, const std::vector<int>& vectorWidths,
                                    const std::vector<int>& unrolls,
                                    const host::DeviceProfile* vectorFamilyDevice) {
  ExploreTarget target;
  for (int v : vectorWidths) {
    for (int unroll : unrolls) {
      ExploreTarget one = layerTarget(layer, v, unroll);
      if (target.structures.empty()) target = one;
      target.structures.push_back(
          {one.parametric, one.switches, one.fixedParameters, "conv-direct", one.strategy});
    }
  }
  if (target.structures.empty()) throw std::invalid_argument("no structure to explore");
  target.description = layer.describe() + "; conv-direct, " +
                       std::to_string(target.structures.size()) + " structures (v, unroll)";
  if (vectorFamilyDevice) {
    std::vector<ExploreTarget::Structure> vector =
        layerVectorStructures(layer, *vectorFamilyDevice);
    target.description += " + register-blocked vector, " + std::to_string(vector.size()) +
                          (vectorFamilyInterleaves(vectorFamilyDevice).size() > 1
                               ? " structures (kappa, sigma, pad_in_loads, interleave, split)"
                               : " structures (kappa, sigma, pad_in_loads)");
    for (ExploreTarget::Structure& structure : vector) {
      target.structures.push_back(std::move(structure));
    }
    std::vector<ExploreTarget::Structure> winograd =
        layerWinogradStructures(layer, *vectorFamilyDevice);
    if (!winograd.empty()) {
      target.description +=
          " + Winograd, " + std::to_string(winograd.size()) + " structures (m, kappa, sigma)";
    }
    for (ExploreTarget::Structure& structure : winograd) {
      target.structures.push_back(std::move(structure));
    }
    std::vector<ExploreTarget::Structure> tiled =
        layerWorkgroupTiledStructures(layer, *vectorFamilyDevice);
    if (!tiled.empty()) {
      target.description += " + work-group tiled, " + std::to_string(tiled.size()) +
                            " structures (rk, rp, staged)";
    }
    for (ExploreTarget::Structure& structure : tiled) {
      target.structures.push_back(std::move(structure));
    }
  }
  return target;
}

ExploreTarget layerVectorTarget(const ConvLayer& layer, int kappa, int sigma, int padInLoads,
                                int rowUnroll, int interleave, int channelsFirst, int split) {
  const bool partialBlocks = sigma > 0 && layer.outW() % sigma != 0;
  rewrite::RewriteContext context;
  ExploreTarget target = strategyLayerTarget(layer, "conv-register-blocked-vector",
                                             {{"kappa", Arith(kappa)},
                                              {"sigma", Arith(sigma)},
                                              {"pad_in_loads", Arith(padInLoads)},
                                              {"row_unroll", Arith(rowUnroll)},
                                              {"interleave", Arith(interleave)},
                                              {"channels_first", Arith(channelsFirst)},
                                              {"split", Arith(split)},
                                              {"partial_blocks", Arith(partialBlocks ? 1 : 0)}},
                                             context);
  target.fixedParameters = {
      {"vector_kappa", kappa}, {"vector_sigma", sigma}, {"vector_pad_in_loads", padInLoads}};
  if (rowUnroll != 0) target.fixedParameters["vector_row_unroll"] = rowUnroll;
  if (interleave != 0) target.fixedParameters["vector_interleave"] = interleave;
  if (channelsFirst != 0) target.fixedParameters["vector_channels_first"] = channelsFirst;
  if (split != 1) target.fixedParameters["vector_split"] = split;
  return target;
}

ExploreTarget layerStructureTarget(const ConvLayer& layer,
                                   const std::map<std::string, int64_t>& fixed) {
  if (fixed.count("tiled_rk") && fixed.count("tiled_rp") && fixed.count("tiled_staged")) {
    return layerWorkgroupTiledTarget(layer, static_cast<int>(fixed.at("tiled_rk")),
                                     static_cast<int>(fixed.at("tiled_rp")),
                                     static_cast<int>(fixed.at("tiled_staged")));
  }
  if (fixed.count("winograd_m") && fixed.count("winograd_kappa") && fixed.count("winograd_sigma")) {
    return layerWinogradTarget(layer, static_cast<int>(fixed.at("winograd_m")),
                               static_cast<int>(fixed.at("winograd_kappa")),
                               static_cast<int>(fixed.at("winograd_sigma")));
  }
  if (fixed.count("vector_kappa") && fixed.count("vector_sigma")) {
    // Records made before pad_in_loads existed lack it: 0, the padded copy (a pad kernel).
    const int64_t padInLoads =
        fixed.count("vector_pad_in_loads") ? fixed.at("vector_pad_in_loads") : 0;
    const int64_t rowUnroll = fixed.count("vector_row_unroll") ? fixed.at("vector_row_unroll") : 0;
    const int64_t interleave = fixed.count("vector_interleave") ? fixed.at("vector_interleave") : 0;
    const int64_t channelsFirst =
        fixed.count("vector_channels_first") ? fixed.at("vector_channels_first") : 0;
    const int64_t split = fixed.count("vector_split") ? fixed.at("vector_split") : 1;
    ExploreTarget target =
        layerVectorTarget(layer, static_cast<int>(fixed.at("vector_kappa")),
                          static_cast<int>(fixed.at("vector_sigma")), static_cast<int>(padInLoads),
                          static_cast<int>(rowUnroll), static_cast<int>(interleave),
                          static_cast<int>(channelsFirst), static_cast<int>(split));
    // The structure as recorded (an old record's parameters name no vector_pad_in_loads).
    if (!fixed.count("vector_pad_in_loads")) target.fixedParameters.erase("vector_pad_in_loads");
    return target;
  }
  if (fixed.count("v") && fixed.count("unroll")) {
    return layerTarget(layer, static_cast<int>(fixed.at("v")),
                       static_cast<int>(fixed.at("unroll")));
  }
  throw std::runtime_error(
      "not a layer variant: neither v and unroll (conv-direct), vector_kappa and vector_sigma "
      "(register-blocked vector), winograd_m, winograd_kappa and winograd_sigma nor tiled_rk, "
      "tiled_rp and tiled_staged (work-group tiled) recorded");
}

std::vector<ExploreTarget::Structure> layerVectorStructures(const ConvLayer& layer,
                                                            const host::DeviceProfile& device) {
  std::vector<ExploreTarget::Structure> structures;
  for (int interleave : vectorFamilyInterleaves(&device)) {
    for (int kappa : vectorFamilyKappas(layer, device)) {
      for (int sigma : vectorFamilySigmas(layer, kappa, device)) {
        // Interleaving one window per block changes nothing.
        if (interleave != 0 && sigma == 1) continue;
        // The padded input as a kernel of its own (0), or read through guarded loads (1).
        for (int padInLoads : {0, 1}) {
          // The window's loops as row, tap, channel (0) or row, channel, unrolled taps (1).
          for (int rowUnroll : {0, 1}) {
            // Interleaved blocks read the pad kernel's copy channels-first (neighbouring
            // pixels neighbours in memory); the input read through guarded loads stays
            // [H][W][C].
            const int channelsFirst = interleave != 0 && padInLoads == 0 ? 1 : 0;
            // Splits of the channels where the blocks leave a GPU under-filled; with the
            // coalesced (interleaved, channels-first) blocks only.
            const std::vector<int> splits = channelsFirst != 0
                                                ? vectorFamilySplits(layer, kappa, sigma, device)
                                                : std::vector<int>{1};
            for (int split : splits) {
              try {
                ExploreTarget one = layerVectorTarget(layer, kappa, sigma, padInLoads, rowUnroll,
                                                      interleave, channelsFirst, split);
                structures.push_back({one.parametric, one.switches, one.fixedParameters,
                                      "register-blocked-vector", one.strategy});
              } catch (const std::exception&) {
                // The strategy does not apply to this layer with these blocks: not a structure.
              }
            }
          }
        }
      }
    }
  }
  return structures;
}

std::vector<int> winogradTileSizes(const ConvLayer& layer) {
  std::vector<int> sizes;
  if (layer.K != 3 || layer.stride != 1) return sizes;
  for (int m : {2, 4}) {
    if (layer.outH() >= m && layer.outW() >= m) sizes.push_back(m);
  }
  return sizes;
}

std::vector<int> winogradSigmas(const ConvLayer& layer, int m, int kappa,
                                const host::DeviceProfile& device) {
  return blockSigmas((layer.outW() + m - 1) / m, kappa, device);
}

bool winogradTilesPartial(const ConvLayer& layer, int m, int sigma) {
  const int64_t tileColumns = (layer.outW() + m - 1) / m;
  return layer.outH() % m != 0 || layer.outW() % m != 0 || tileColumns % sigma != 0;
}

ExploreTarget layerWinogradTarget(const ConvLayer& layer, int m, int kappa, int sigma) {
  rewrite::RewriteContext context;
  const bool partial = sigma > 0 && m > 0 && winogradTilesPartial(layer, m, sigma);
  ExploreTarget target = strategyLayerTarget(layer, "conv-winograd",
                                             {{"m", Arith(m)},
                                              {"kappa", Arith(kappa)},
                                              {"sigma", Arith(sigma)},
                                              {"partial_tiles", Arith(partial ? 1 : 0)}},
                                             context);
  target.fixedParameters = {
      {"winograd_m", m}, {"winograd_kappa", kappa}, {"winograd_sigma", sigma}};
  return target;
}

std::vector<ExploreTarget::Structure> layerWinogradStructures(const ConvLayer& layer,
                                                              const host::DeviceProfile& device) {
  std::vector<ExploreTarget::Structure> structures;
  for (int m : winogradTileSizes(layer)) {
    for (int kappa : vectorFamilyKappas(layer, device)) {
      for (int sigma : winogradSigmas(layer, m, kappa, device)) {
        ExploreTarget one = layerWinogradTarget(layer, m, kappa, sigma);
        structures.push_back(
            {one.parametric, one.switches, one.fixedParameters, "winograd", one.strategy});
      }
    }
  }
  return structures;
}

std::vector<std::pair<int, int>> workgroupTiledRegisterTiles(const ConvLayer& layer,
                                                             const host::DeviceProfile& device) {
  std::vector<std::pair<int, int>> tiles;
  if (device.deviceType != "gpu") return tiles;
  for (int rk : {1, 2, 4, 8}) {
    if (layer.M % rk != 0) continue;
    for (int rp : {1, 2, 4, 8}) {
      if (rk * rp < 4 || rp > layer.outH() * layer.outW()) continue;
      if (2 * (rk * rp + rk + rp) > device.registersPerWorkItem) continue;
      tiles.emplace_back(rk, rp);
    }
  }
  return tiles;
}

int workgroupTiledStaging(const host::DeviceProfile& device) {
  return device.localMemoryType == host::LocalMemoryType::Local ? 1 : 0;
}

ExploreTarget layerWorkgroupTiledTarget(const ConvLayer& layer, int rk, int rp, int staged) {
  rewrite::RewriteContext context;
  ExploreTarget target = strategyLayerTarget(layer, "conv-workgroup-tiled",
                                             {{"kernels_per_item", Arith(rk)},
                                              {"pixels_per_item", Arith(rp)},
                                              {"stage_input", Arith(staged)},
                                              {"stage_weights", Arith(staged)}},
                                             context);
  target.fixedParameters = {{"tiled_rk", rk}, {"tiled_rp", rp}, {"tiled_staged", staged}};
  return target;
}

std::vector<ExploreTarget::Structure> layerWorkgroupTiledStructures(
    const ConvLayer& layer, const host::DeviceProfile& device) {
  std::vector<ExploreTarget::Structure> structures;
  const int staged = workgroupTiledStaging(device);
  for (const auto& [rk, rp] : workgroupTiledRegisterTiles(layer, device)) {
    ExploreTarget one = layerWorkgroupTiledTarget(layer, rk, rp, staged);
    structures.push_back(
        {one.parametric, one.switches, one.fixedParameters, "workgroup-tiled", one.strategy});
  }
  return structures;
}

std::vector<int> vectorFamilyInterleaves(const host::DeviceProfile* device) {
  if (device && device->deviceType == "gpu") return {0, 1};
  return {0};
}

}  // namespace weft::explore
