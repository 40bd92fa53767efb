// The transform matrices of Winograd's minimal filtering F(m×m, 3×3) that the conv-winograd-*
// rules (rewrite/rules_winograd.cpp) build into programs, for tests and cost models.
#pragma once

#include <cstdint>
#include <vector>

namespace weft::rewrite {

// F(m, 3): with α = m + 2, Bᵀ is α×α (the input's transform), G α×3 (the weights'), Aᵀ m×α
// (the output's); y = Aᵀ[(G g) ⊙ (Bᵀ d)] is the correlation of g (3 taps) with d (α values).
struct WinogradMatrices {
  int64_t m = 0;
  std::vector<std::vector<double>> bt, g, at;
};

// m = 2 or 4 (std::invalid_argument otherwise).
const WinogradMatrices& winogradMatrices(int64_t m);

}  // namespace weft::rewrite
