// Named strategies: recipes built only from library rules (rewrite/library.h) with the
// combinators of rewrite/strategy.h, listed by `weft rules` and run by
// `weft rewrite FILE --strategy NAME[:factor=value,...]`.
//
// stencil-tiled-local — the 2D stencil (examples/stencil2d.weft: a map2D over the expansion of
// slide2D) tiled with overlapped strict tiles (slide-tiling-2d, tile sizes theta1 × theta2 given
// or fresh tuning variables), the map over tile rows and tiles lowered to mapWrg(1)/mapWrg(0),
// each tile staged in local memory (to-local), the maps building the windows inside a tile
// lowered to mapLcl(1)/mapLcl(0), the stencil's own map2D to mapGlb(1)/mapGlb(0), every other
// map to mapSeq and every reduce to reduceSeq. See strategies.cpp for what the current rules
// cannot yet do (the stencil computation stays outside the tiles).
#pragma once

#include <string>
#include <vector>

#include "rewrite/rule.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

struct NamedStrategy {
  std::string name;
  std::string description;
  std::vector<std::string> factors;  // factors it accepts (theta1, theta2, ...)
  // The strategy for the given factor values (absent factors become tuning variables).
  std::function<Strategy(const RuleArguments&)> make;
};

// Every named strategy.
const std::vector<NamedStrategy>& strategyLibrary();
// The strategy named `name`, or nullptr.
const NamedStrategy* findStrategy(const std::string& name);

}  // namespace weft::rewrite
