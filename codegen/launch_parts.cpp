// Launches in parts (see codegen/launch_parts.h).
#include "codegen/launch_parts.h"

namespace weft {

std::vector<LaunchPart> launchParts(int dimensions, const std::array<int64_t, 3>& global,
                                    const std::array<int64_t, 3>& local) {
  // Per dimension, the whole work-groups and the remainder, each as (offset, size, local).
  std::array<std::vector<std::array<int64_t, 3>>, 3> pieces;
  for (int d = 0; d < 3; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (d >= dimensions) {
      pieces[i] = {{0, 1, 1}};
      continue;
    }
    const int64_t whole = global[i] / local[i] * local[i];
    if (whole > 0) pieces[i].push_back({0, whole, local[i]});
    if (whole < global[i]) pieces[i].push_back({whole, global[i] - whole, global[i] - whole});
  }
  std::vector<LaunchPart> parts;
  for (const auto& z : pieces[2]) {
    for (const auto& y : pieces[1]) {
      for (const auto& x : pieces[0]) {
        LaunchPart part;
        const std::array<const std::array<int64_t, 3>*, 3> chosen{&x, &y, &z};
        for (std::size_t d = 0; d < 3; ++d) {
          part.offset[d] = (*chosen[d])[0];
          part.global[d] = (*chosen[d])[1];
          part.local[d] = (*chosen[d])[2];
        }
        parts.push_back(part);
      }
    }
  }
  return parts;
}

bool needsLaunchParts(int dimensions, const std::array<int64_t, 3>& global,
                      const std::array<int64_t, 3>& local) {
  for (int d = 0; d < dimensions; ++d) {
    const auto i = static_cast<std::size_t>(d);
    if (local[i] > 0 && global[i] % local[i] != 0) return true;
  }
  return false;
}

}  // namespace weft
