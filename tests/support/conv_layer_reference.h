// An independent oracle for the built-in convolution layer (workloads/conv/conv_layer.h): random layer
// data in PyTorch's layouts and the convolution as the plain NCHW loops of its definition,
//
//   y[m][oy][ox] = b[m] + sum over c, ky, kx of x[c][oy*stride + ky - pad][ox*stride + kx - pad]
//                                               * w[m][c][ky][kx]
//
// where x reads 0 outside the image (zero padding) and oy < outH, ox < outW. Accumulated in
// double, so the only error in a comparison is the tested program's float rounding, which grows
// with the magnitude of the terms summed (Σ|x·w| + |b|), not with the result, which may be
// near 0: comparisons allow 1e-5 + 1e-4·|y| + 1e-6·Σ|x·w|, far below the O(1) errors that a
// wrong layout or window gives with data uniform in [-1, 1). The loops
// are written here from the formula, not derived from weft's program, so they can catch a wrong
// layout or a wrong window in it.
//
// Header-only (tests/support has no library).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "workloads/conv/conv_layer.h"

namespace weft::testing {

struct ConvLayerData {
  std::vector<float> x;  // [C][H][W]
  std::vector<float> w;  // [M][C][K][K]
  std::vector<float> b;  // [M]
};

// Uniform in [-1, 1).
inline ConvLayerData randomConvLayerData(const ConvLayer& layer, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    for (float& value : values) value = uniform(rng);
    return values;
  };
  ConvLayerData data;
  data.x = fill(layer.C * layer.H * layer.W);
  data.w = fill(layer.M * layer.C * layer.K * layer.K);
  data.b = fill(layer.M);
  return data;
}

// One output value y[m][oy][ox] and the magnitude of its terms, Σ|x·w| + |b|.
struct ConvOutput {
  double value = 0;
  double magnitude = 0;
};

inline ConvOutput referenceConvOutput(const ConvLayer& l, const ConvLayerData& data, int64_t m,
                                      int64_t oy, int64_t ox) {
  double sum = data.b[static_cast<size_t>(m)];
  double magnitude = std::fabs(sum);
  for (int64_t c = 0; c < l.C; ++c) {
    for (int64_t ky = 0; ky < l.K; ++ky) {
      int64_t y = oy * l.stride + ky - l.pad;
      if (y < 0 || y >= l.H) continue;
      for (int64_t kx = 0; kx < l.K; ++kx) {
        int64_t x = ox * l.stride + kx - l.pad;
        if (x < 0 || x >= l.W) continue;
        double input = data.x[static_cast<size_t>((c * l.H + y) * l.W + x)];
        double weight = data.w[static_cast<size_t>(((m * l.C + c) * l.K + ky) * l.K + kx)];
        sum += input * weight;
        magnitude += std::fabs(input * weight);
      }
    }
  }
  return {sum, magnitude};
}

// Every output, [M][outH][outW] row-major.
inline std::vector<ConvOutput> referenceConv(const ConvLayer& l, const ConvLayerData& data) {
  std::vector<ConvOutput> out;
  out.reserve(static_cast<size_t>(l.M * l.outH() * l.outW()));
  for (int64_t m = 0; m < l.M; ++m) {
    for (int64_t oy = 0; oy < l.outH(); ++oy) {
      for (int64_t ox = 0; ox < l.outW(); ++ox)
        out.push_back(referenceConvOutput(l, data, m, oy, ox));
    }
  }
  return out;
}

// How many of `actual` (row-major [M][outH][outW]) differ from the reference by more than
// 1e-5 + 1e-4·|y| + 1e-6·Σ|x·w|, and a description of the first few.
struct ConvMismatches {
  size_t count = 0;
  std::string first;
};

inline ConvMismatches compareWithReference(const ConvLayer& l, const ConvLayerData& data,
                                           const std::vector<float>& actual) {
  ConvMismatches result;
  std::vector<ConvOutput> expected = referenceConv(l, data);
  if (actual.size() != expected.size()) {
    result.count = expected.size();
    result.first =
        "size " + std::to_string(actual.size()) + " instead of " + std::to_string(expected.size());
    return result;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const ConvOutput& y = expected[i];
    double tolerance = 1e-5 + 1e-4 * std::fabs(y.value) + 1e-6 * y.magnitude;
    if (std::fabs(actual[i] - y.value) <= tolerance) continue;
    if (result.count++ < 3) {
      result.first += "element " + std::to_string(i) + ": " + std::to_string(actual[i]) +
                      " instead of " + std::to_string(y.value) + "; ";
    }
  }
  return result;
}

}  // namespace weft::testing
