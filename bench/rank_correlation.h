// Spearman's rank correlation, what the cost-model benchmarks report about a model's order
// (bench/cost_model_ordering.cpp for convolution layers, bench/pipeline_cost_model.cpp for
// image pipelines). Header-only.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

namespace weft::bench {

// Ranks (1-based) with ties given their average rank.
inline std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> out(values.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double average = (static_cast<double>(i + j) / 2.0) + 1.0;
    for (size_t k = i; k <= j; ++k) out[order[k]] = average;
    i = j + 1;
  }
  return out;
}

// Spearman's rho: Pearson's correlation of the ranks; nullopt below 3 pairs or without spread.
inline std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() < 3 || x.size() != y.size()) return std::nullopt;
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace weft::bench
