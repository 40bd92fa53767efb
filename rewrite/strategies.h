// Named strategies: recipes built only from library rules (rewrite/library.h) with the
// combinators of rewrite/strategy.h, listed by `weft rules` and run by
// `weft rewrite FILE --strategy NAME[:factor=value,...]`.
//
// stencil-tiled-local — a 2D stencil (a map2D over slide2D) computed in overlapped tiles staged in
// local memory; conv-direct — the direct convolution of paper section 4.2 with the tuning
// parameters θ, ρ, κ, σ, ω, coalesce (symbolic unless given) and the structural v and unroll;
// conv-register-blocked — each work-item keeps a κ × σ block of accumulators in private memory
// over one pass of the whole window (issue 8's family, not yet vectorized; κ, σ, unroll given).
// strategies.cpp lists their steps.
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
