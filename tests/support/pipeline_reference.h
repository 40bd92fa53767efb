// Plain C++ reference implementations of the four image pipelines of issue 9 (blur, unsharp
// mask, Harris corners, Canny without hysteresis), written from the formulas and
// independent of the weft programs in examples/pipelines/ that the tests compare with them.
//
// Every stage reads its input with clamp-to-edge (a coordinate outside the image is clamped to
// the nearest edge), stage by stage, as Forma does. Arithmetic is single precision and follows
// the formulas left to right, so that the interpreter (which rounds every operation to float)
// gives the same results up to a few rounding errors. Besides each pipeline's output the
// functions report, per pixel:
//   scale    the magnitude of the terms the output is formed from (|I·4| + |blur·3| for
//            unsharp, |Sxx·Syy| + Sxy² + 0.04·trace² for Harris, ...): rounding errors are
//            relative to it, not to the output, which may be a small difference of large terms;
//   fragile  the output depends on a comparison (a threshold, a quantized direction, a
//            maximum) whose operands are within a relative 1e-5 of each other, so a result
//            computed with other roundings may legitimately land on the other side. Tests
//            count such pixels apart instead of loosening the tolerance for every pixel.
//
// Header-only (tests/support has no library).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace weft::testing::pipelines {

// C planes of H rows of W pixels, plane-major then row-major: element (c, x, y) is at
// data[(c * height + y) * width + x] (the layout of a weft [[[float]W]H]C or [[float]W]H).
struct Image {
  int width = 0;
  int height = 0;
  int channels = 1;
  std::vector<float> data;

  Image() = default;
  Image(int w, int h, int c = 1)
      : width(w), height(h), channels(c), data(static_cast<size_t>(w) * h * c, 0.0f) {}

  size_t index(int c, int x, int y) const {
    return (static_cast<size_t>(c) * height + y) * width + x;
  }
  float& at(int c, int x, int y) { return data[index(c, x, y)]; }
  float at(int c, int x, int y) const { return data[index(c, x, y)]; }
  // Clamp-to-edge read: coordinates outside the image are clamped to the nearest edge.
  float clamped(int c, int x, int y) const {
    return at(c, std::clamp(x, 0, width - 1), std::clamp(y, 0, height - 1));
  }
  float clamped(int x, int y) const { return clamped(0, x, y); }
};

// The same for integer results (Canny's labels and directions).
struct IntImage {
  int width = 0;
  int height = 0;
  std::vector<int32_t> data;
  IntImage() = default;
  IntImage(int w, int h) : width(w), height(h), data(static_cast<size_t>(w) * h, 0) {}
  int32_t& at(int x, int y) { return data[static_cast<size_t>(y) * width + x]; }
  int32_t at(int x, int y) const { return data[static_cast<size_t>(y) * width + x]; }
};

// Flags per pixel: 1 where the pixel's output hangs on a near-tie comparison.
using FragileMask = std::vector<uint8_t>;

// Whether a and b are within a relative 1e-5 of `scale` (the size of the terms they come from).
inline bool nearTie(double a, double b, double scale) {
  return std::fabs(a - b) <= 1e-5 * std::max(scale, 1e-30);
}

// ---- images for the tests ------------------------------------------------------------------

// Uniform random pixels in [0, 1).
inline Image randomImage(int width, int height, int channels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Image image(width, height, channels);
  for (float& v : image.data) v = uniform(rng);
  return image;
}

// Blocks of 4×4 pixels of one value (a multiple of 1/8 in [0, 1]) with a few random pixels
// sprinkled in: flat regions (unsharp mask keeps the input there, Canny's gradients vanish)
// next to sharp steps (strong edges).
inline Image blockyImage(int width, int height, int channels, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> level(0, 8);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  Image image(width, height, channels);
  const int blocksX = (width + 3) / 4;
  const int blocksY = (height + 3) / 4;
  for (int c = 0; c < channels; ++c) {
    std::vector<float> blocks(static_cast<size_t>(blocksX) * blocksY);
    for (float& b : blocks) b = static_cast<float>(level(rng)) / 8.0f;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        float v = blocks[static_cast<size_t>(y / 4) * blocksX + x / 4];
        if (uniform(rng) < 0.05f) v = uniform(rng);
        image.at(c, x, y) = v;
      }
    }
  }
  return image;
}

// ---- blur (Forma, Listing 1) ---------------------------------------------------------------

// blurx(x, y) = (I(x-1, y) + I(x, y) + I(x+1, y)) / 3; blury the same along y on blurx.
inline Image blurReference(const Image& input) {
  const int w = input.width;
  const int h = input.height;
  Image blurx(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      blurx.at(0, x, y) =
          (input.clamped(x - 1, y) + input.clamped(x, y) + input.clamped(x + 1, y)) / 3.0f;
    }
  }
  Image blury(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      blury.at(0, x, y) =
          (blurx.clamped(x, y - 1) + blurx.clamped(x, y) + blurx.clamped(x, y + 1)) / 3.0f;
    }
  }
  return blury;
}

// ---- unsharp mask (PolyMage) ---------------------------------------------------------------

struct UnsharpResult {
  Image output;
  std::vector<float> scale;
  FragileMask fragile;
};

// The 5-tap Gaussian (1 4 6 4 1)/16 along x, then along y; sharpen = I·(1 + w) - blur·w with
// w = 3; mask = |I - blur| < 0.001 ? I : sharpen. Every channel independently.
inline UnsharpResult unsharpReference(const Image& input) {
  const int w = input.width;
  const int h = input.height;
  const int channels = input.channels;
  auto taps = [](float a, float b, float c, float d, float e) {
    return (a + 4.0f * b + 6.0f * c + 4.0f * d + e) / 16.0f;
  };
  const float weight = 3.0f;
  const float threshold = 0.001f;
  Image blurx(w, h, channels);
  Image blury(w, h, channels);
  UnsharpResult result{Image(w, h, channels), std::vector<float>(input.data.size()),
                       FragileMask(input.data.size(), 0)};
  for (int c = 0; c < channels; ++c) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        blurx.at(c, x, y) =
            taps(input.clamped(c, x - 2, y), input.clamped(c, x - 1, y), input.clamped(c, x, y),
                 input.clamped(c, x + 1, y), input.clamped(c, x + 2, y));
      }
    }
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        blury.at(c, x, y) =
            taps(blurx.clamped(c, x, y - 2), blurx.clamped(c, x, y - 1), blurx.clamped(c, x, y),
                 blurx.clamped(c, x, y + 1), blurx.clamped(c, x, y + 2));
      }
    }
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        const float pixel = input.at(c, x, y);
        const float blurred = blury.at(c, x, y);
        const float sharpened = pixel * (1.0f + weight) - blurred * weight;
        const float difference = std::fabs(pixel - blurred);
        const size_t i = input.index(c, x, y);
        result.output.data[i] = difference < threshold ? pixel : sharpened;
        result.scale[i] = std::fabs(pixel * (1.0f + weight)) + std::fabs(blurred * weight);
        result.fragile[i] =
            nearTie(difference, threshold, std::fabs(pixel) + std::fabs(blurred)) ? 1 : 0;
      }
    }
  }
  return result;
}

// ---- Sobel, shared by Harris and Canny -----------------------------------------------------

// 3×3 Sobel derivative along x ([-1 0 1; -2 0 2; -1 0 1]) and along y ([-1 -2 -1; 0 0 0;
// 1 2 1]) at (x, y) with clamp-to-edge; y grows downwards. `terms` receives the sum of the
// absolute values of the weighted taps.
inline float sobelXAt(const Image& image, int x, int y, float* terms = nullptr) {
  const float a = image.clamped(x - 1, y - 1), c = image.clamped(x + 1, y - 1);
  const float d = image.clamped(x - 1, y), f = image.clamped(x + 1, y);
  const float g = image.clamped(x - 1, y + 1), i = image.clamped(x + 1, y + 1);
  if (terms) {
    *terms = std::fabs(a) + 2 * std::fabs(d) + std::fabs(g) + std::fabs(c) + 2 * std::fabs(f) +
             std::fabs(i);
  }
  return (c + 2.0f * f + i) - (a + 2.0f * d + g);
}

inline float sobelYAt(const Image& image, int x, int y, float* terms = nullptr) {
  const float a = image.clamped(x - 1, y - 1), b = image.clamped(x, y - 1);
  const float c = image.clamped(x + 1, y - 1);
  const float g = image.clamped(x - 1, y + 1), h = image.clamped(x, y + 1);
  const float i = image.clamped(x + 1, y + 1);
  if (terms) {
    *terms = std::fabs(a) + 2 * std::fabs(b) + std::fabs(c) + std::fabs(g) + 2 * std::fabs(h) +
             std::fabs(i);
  }
  return (g + 2.0f * h + i) - (a + 2.0f * b + c);
}

// ---- Harris corners (PolyMage) -------------------------------------------------------------

struct HarrisResult {
  Image output;
  std::vector<float> scale;
};

// Ix, Iy by Sobel; Ixx = Ix², Ixy = Ix·Iy, Iyy = Iy²; Sxx, Sxy, Syy their 3×3 box sums;
// response = det - 0.04·trace², det = Sxx·Syy - Sxy², trace = Sxx + Syy.
inline HarrisResult harrisReference(const Image& input) {
  const int w = input.width;
  const int h = input.height;
  Image ix(w, h), iy(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      ix.at(0, x, y) = sobelXAt(input, x, y);
      iy.at(0, x, y) = sobelYAt(input, x, y);
    }
  }
  Image ixx(w, h), ixy(w, h), iyy(w, h);
  for (size_t i = 0; i < ix.data.size(); ++i) {
    ixx.data[i] = ix.data[i] * ix.data[i];
    ixy.data[i] = ix.data[i] * iy.data[i];
    iyy.data[i] = iy.data[i] * iy.data[i];
  }
  auto boxSum = [](const Image& image, int x, int y) {
    float sum = 0.0f;
    for (int dy = -1; dy <= 1; ++dy) {
      for (int dx = -1; dx <= 1; ++dx) sum += image.clamped(x + dx, y + dy);
    }
    return sum;
  };
  const float k = 0.04f;
  HarrisResult result{Image(w, h), std::vector<float>(static_cast<size_t>(w) * h)};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const float sxx = boxSum(ixx, x, y);
      const float sxy = boxSum(ixy, x, y);
      const float syy = boxSum(iyy, x, y);
      const float det = sxx * syy - sxy * sxy;
      const float trace = sxx + syy;
      result.output.at(0, x, y) = det - k * (trace * trace);
      result.scale[result.output.index(0, x, y)] =
          std::fabs(sxx * syy) + sxy * sxy + k * trace * trace;
    }
  }
  return result;
}

// ---- Canny without hysteresis (Forma) ------------------------------------------------------

struct CannyResult {
  IntImage labels;     // 2 strong, 1 weak, 0 none
  Image thin;          // the magnitude after non-maximum suppression
  IntImage direction;  // 0 horizontal gradient, 1 and 3 the diagonals, 2 vertical
  std::vector<float> thinScale;
  FragileMask thinFragile;   // suppression decided by a near tie (or a near-tie direction)
  FragileMask labelFragile;  // that, or thin near a threshold
};

inline constexpr float kCannyLow = 0.1f;
inline constexpr float kCannyHigh = 0.3f;

// blurred: the 5×5 Gaussian (1 4 6 4 1)ᵀ(1 4 6 4 1)/256; gx, gy: Sobel of blurred; magnitude
// sqrt(gx² + gy²); direction: the gradient angle quantized to 0°, 45°, 90°, 135° by comparing
// |gy| with tan(22.5°)·|gx| and tan(67.5°)·|gx| and the signs of gx, gy; non-maximum
// suppression keeps the magnitude where it is >= both neighbours along the direction (0: left
// and right, 2: above and below, 1: (x-1, y-1) and (x+1, y+1), 3: (x+1, y-1) and (x-1, y+1)),
// else 0; labels: 2 where thin >= 0.3, 1 where thin >= 0.1, else 0.
inline CannyResult cannyReference(const Image& input) {
  const int w = input.width;
  const int h = input.height;
  const size_t n = static_cast<size_t>(w) * h;
  const float binomial[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
  Image blurred(w, h);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      // Along each row of the window first, then along the column of row sums.
      float columnSum = 0.0f;
      for (int j = 0; j < 5; ++j) {
        float rowSum = 0.0f;
        for (int i = 0; i < 5; ++i) {
          const float v = input.clamped(x + i - 2, y + j - 2);
          rowSum = i == 0 ? v : rowSum + binomial[i] * v;
        }
        columnSum = j == 0 ? rowSum : columnSum + binomial[j] * rowSum;
      }
      blurred.at(0, x, y) = columnSum / 256.0f;
    }
  }
  Image gx(w, h), gy(w, h), magnitude(w, h);
  std::vector<float> gxTerms(n), gyTerms(n);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = static_cast<size_t>(y) * w + x;
      gx.data[i] = sobelXAt(blurred, x, y, &gxTerms[i]);
      gy.data[i] = sobelYAt(blurred, x, y, &gyTerms[i]);
      magnitude.data[i] = std::sqrt(gx.data[i] * gx.data[i] + gy.data[i] * gy.data[i]);
    }
  }
  const float tan22 = 0.41421356f;  // tan(22.5°)
  const float tan67 = 2.41421356f;  // tan(67.5°)
  CannyResult result{IntImage(w, h),        Image(w, h),       IntImage(w, h),
                     std::vector<float>(n), FragileMask(n, 0), FragileMask(n, 0)};
  std::vector<uint8_t> directionFragile(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const float ax = std::fabs(gx.data[i]);
    const float ay = std::fabs(gy.data[i]);
    int direction;
    if (ay <= tan22 * ax) {
      direction = 0;
    } else if (ay >= tan67 * ax) {
      direction = 2;
    } else {
      direction = gx.data[i] * gy.data[i] > 0.0f ? 1 : 3;
    }
    result.direction.data[i] = direction;
    // A direction is fragile when |gy| is close to a boundary line or, between them, when the
    // sign of gx or gy hangs on a cancellation in the Sobel sums.
    const float terms = gxTerms[i] + gyTerms[i];
    directionFragile[i] =
        nearTie(ay, tan22 * ax, terms * 3.0f) || nearTie(ay, tan67 * ax, terms * 3.0f) ||
        (direction % 2 == 1 &&
         (nearTie(gx.data[i], 0.0, gxTerms[i]) || nearTie(gy.data[i], 0.0, gyTerms[i])));
  }
  // Neighbour offsets (dx, dy) along each direction.
  const int neighbours[4][2][2] = {
      {{-1, 0}, {1, 0}}, {{-1, -1}, {1, 1}}, {{0, -1}, {0, 1}}, {{1, -1}, {-1, 1}}};
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      const size_t i = static_cast<size_t>(y) * w + x;
      const int direction = result.direction.data[i];
      const float centre = magnitude.data[i];
      const float first =
          magnitude.clamped(x + neighbours[direction][0][0], y + neighbours[direction][0][1]);
      const float second =
          magnitude.clamped(x + neighbours[direction][1][0], y + neighbours[direction][1][1]);
      const float thin = centre >= first && centre >= second ? centre : 0.0f;
      result.thin.data[i] = thin;
      // The magnitudes' own error is relative to the gradient terms they come from.
      const float scale = std::max({centre, first, second}) + gxTerms[i] + gyTerms[i];
      result.thinScale[i] = scale;
      result.thinFragile[i] =
          directionFragile[i] || nearTie(centre, first, scale) || nearTie(centre, second, scale);
      result.labels.data[i] = thin >= kCannyHigh ? 2 : thin >= kCannyLow ? 1 : 0;
      result.labelFragile[i] = result.thinFragile[i] || nearTie(thin, kCannyHigh, scale) ||
                               nearTie(thin, kCannyLow, scale);
    }
  }
  return result;
}

// ---- comparing results with the references -------------------------------------------------

// How a computed image agrees with a reference: pixels within tolerance, pixels outside it
// where the reference marks a near tie (tieFlips), and real mismatches.
struct Agreement {
  size_t compared = 0;
  size_t mismatches = 0;
  size_t tieFlips = 0;
  double worstRelative = 0.0;  // the largest |got - expected| / max(|expected|, scale) seen
  std::string firstMismatch;   // "pixel (c, x, y): got G, expected E" of the first mismatch
};

// Float outputs: pixel i agrees when |got - expected| <= relTolerance · max(|expected|,
// scale[i]) (scale[i] = |expected| when `scale` is empty). A pixel outside that is a tie flip
// when fragile[i] is set, a mismatch otherwise. NaN never agrees.
inline Agreement compareFloats(const std::vector<float>& got, const std::vector<float>& expected,
                               int width, int height, const std::vector<float>& scale = {},
                               const FragileMask& fragile = {}, double relTolerance = 1e-5) {
  Agreement agreement;
  const size_t n = expected.size();
  if (got.size() != n) {
    agreement.mismatches = n;
    agreement.firstMismatch = "sizes differ: got " + std::to_string(got.size()) + " values, " +
                              "expected " + std::to_string(n);
    return agreement;
  }
  for (size_t i = 0; i < n; ++i) {
    ++agreement.compared;
    const double e = expected[i];
    const double g = got[i];
    const double bound = std::max({std::fabs(e), scale.empty() ? 0.0 : double(scale[i]), 1e-30});
    const double relative = std::fabs(g - e) / bound;
    if (!std::isnan(relative))
      agreement.worstRelative = std::max(agreement.worstRelative, relative);
    if (relative <= relTolerance) continue;  // false for NaN
    if (!fragile.empty() && fragile[i]) {
      ++agreement.tieFlips;
      continue;
    }
    if (agreement.mismatches++ == 0) {
      const size_t plane = static_cast<size_t>(width) * height;
      std::ostringstream text;
      text.precision(9);
      text << "pixel (c " << i / plane << ", x " << i % width << ", y " << (i % plane) / width
           << "): got " << g << ", expected " << e;
      agreement.firstMismatch = text.str();
    }
  }
  return agreement;
}

// Integer outputs (Canny's labels): equal, or a tie flip where `fragile` is set.
inline Agreement compareInts(const std::vector<int32_t>& got, const std::vector<int32_t>& expected,
                             int width, const FragileMask& fragile = {}) {
  Agreement agreement;
  if (got.size() != expected.size()) {
    agreement.mismatches = expected.size();
    agreement.firstMismatch = "sizes differ";
    return agreement;
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    ++agreement.compared;
    if (got[i] == expected[i]) continue;
    if (!fragile.empty() && fragile[i]) {
      ++agreement.tieFlips;
      continue;
    }
    if (agreement.mismatches++ == 0) {
      agreement.firstMismatch = "pixel (x " + std::to_string(i % width) + ", y " +
                                std::to_string(i / width) + "): got " + std::to_string(got[i]) +
                                ", expected " + std::to_string(expected[i]);
    }
  }
  return agreement;
}

}  // namespace weft::testing::pipelines
