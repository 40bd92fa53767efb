// Random small layers for tests of the convolution strategies: Listing 3 (examples/conv.weft,
// channels innermost) with real-valued random weights, biases and input, and the sizes bound.
// Header-only: every .cpp under tests/<folder>/ is a test executable of its own.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"
#include "tests/support/random_values.h"

namespace weft::testing {

struct Listing3Layer {
  std::vector<Value> inputs;  // weights, biases, input
  ArithBinding sizes;         // C, H, W, M, K, P, S
};

// Random real-valued inputs for conv.weft: C channels, M kernels of K×K, an H×W image, P, S.
inline Listing3Layer randomListing3Layer(const Definition& conv, int channels, int kernels,
                                         int kernelSize, int height, int width, int padding,
                                         int stride, std::mt19937_64& rng) {
  ArithBinding shape = {
      {"C", channels}, {"M", kernels}, {"K", kernelSize}, {"H", height}, {"W", width}};
  Listing3Layer layer;
  RandomValueOptions options;
  options.realFloats = true;
  for (const Expr& param : conv.function.params()) {
    layer.inputs.push_back(randomValue(param.paramType(), shape, rng, options));
  }
  layer.sizes = bindSizes(conv, layer.inputs, {{"P", padding}, {"S", stride}});
  return layer;
}

// Listing 3 with every size a number (C channels, an H×W image, M kernels of K×K, stride S,
// padding P): the rules' property tests rewrite it with no size left symbolic.
inline Definition listing3Layer(int c, int h, int w, int m, int k, int s, int p) {
  auto n = [](int value) { return std::to_string(value); };
  const std::string outH = n((h + 2 * p - k) / s + 1), outW = n((w + 2 * p - k) / s + 1);
  const std::string text =
      "def conv(weights: [[[[float]" + n(c) + "]" + n(k) + "]" + n(k) + "]" + n(m) +
      ", biases: [float]" + n(m) + ", input: [[[float]" + n(c) + "]" + n(w) + "]" + n(h) +
      "): [[[float]" + outW + "]" + outH + "]" + n(m) +
      " =\n"
      "  transpose(map(rows -> transpose(rows),\n"
      "    map2D(window -> join(map(kernel -> reduce(kernel._1, (acc, q) -> acc + q._0 * q._1,\n"
      "                         zip(join(join(window)), join(join(kernel._0)))),\n"
      "                         zip(weights, biases))),\n"
      "          slide2D(" +
      n(k) + ", " + n(k) + ", " + n(s) + ", " + n(s) + ", pad2D(" + n(p) + ", " + n(p) + ", " +
      n(p) + ", " + n(p) + ", constant(0.0f), input)))))\n";
  return parseProgram(text, "layer.weft").definitions.back();
}

// The error of `rewritten` against `original` (a layer with no size left symbolic) on random
// real-valued inputs, relative to the largest output (errorOverLargest).
inline double rewrittenLayerError(const Definition& original, const Definition& rewritten,
                                  std::mt19937_64& rng) {
  std::vector<Value> inputs;
  RandomValueOptions options;
  options.realFloats = true;
  for (const Expr& param : original.function.params()) {
    inputs.push_back(randomValue(param.paramType(), {}, rng, options));
  }
  return errorOverLargest(interpret(rewritten, inputs, {}), interpret(original, inputs, {}));
}

// examples/conv.weft's definition (tests run in the source folder).
inline Definition listing3FromExample() {
  return parseFile("examples/conv.weft").definitions.back();
}

}  // namespace weft::testing
