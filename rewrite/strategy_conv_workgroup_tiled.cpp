// The conv-workgroup-tiled strategy (see rewrite/strategy_conv_workgroup_tiled.h).
#include "rewrite/strategy_conv_workgroup_tiled.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewrite/strategy_steps.h"

namespace weft::rewrite {

Strategy convWorkgroupTiled(const RuleArguments& arguments) {
  static const std::vector<std::string> known = {
      "kernels_per_group", "kernels_per_item",  "tile_rows",   "tile_cols",
      "pixels_per_item",   "channels_per_step", "stage_input", "stage_weights"};
  for (const auto& [name, value] : arguments) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument(
          "conv-workgroup-tiled takes kernels_per_group, kernels_per_item, tile_rows, tile_cols, "
          "pixels_per_item, channels_per_step, stage_input and stage_weights, not " +
          name);
    }
  }
  for (const char* name : {"kernels_per_item", "pixels_per_item"}) {
    std::optional<Arith> value = factorValue(arguments, name);
    if (!value || !value->constant() || *value->constant() < 1) {
      throw std::invalid_argument(std::string("conv-workgroup-tiled: ") + name +
                                  " must be given as a number >= 1 (the register tile is unrolled)");
    }
  }
  for (const char* name : {"stage_input", "stage_weights"}) {
    std::optional<Arith> value = factorValue(arguments, name);
    if (value && !(*value == Arith(0) || *value == Arith(1))) {
      throw std::invalid_argument(std::string("conv-workgroup-tiled: ") + name + " must be 0 or 1");
    }
  }
  return requiredStep(topDown(rule("conv-workgroup-tiles"), arguments), "conv-workgroup-tiled",
                      "not a convolution of sums of products (Listing 3)");
}

}  // namespace weft::rewrite
