// The convolution layer of the paper (section 4.1, Listing 3) run in the reference
// interpreter on random data and compared with a plain nested-loop convolution written here.
//
// First the user-facing example, examples/conv.weft (square K x K kernels, padding P on every
// side, stride S; result [M][OH][OW]), whose declared range P >= 0 lets it run with padding 0.
// Then the layer built twice more, from text written here and with the C++ builders of
// ir/builders.h, in the paper's exact form whose result is [OH][OW][M][1] (reduce gives
// [float]1), which also allows non-square kernels and different strides and paddings per side.
// Layers are small: C = 3 channels, an 8 x 8 image, M = 4 kernels of 3 x 3, stride 1 and 2,
// padding 0 and 1, and non-square cases. Layouts follow the paper: input [H][W][C], weights
// [M][KH][KW][C], biases [M].
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"

using namespace weft;

namespace {

struct Layer {
  int64_t channels, height, width, kernels, kernelHeight, kernelWidth;
  int64_t strideY, strideX;
  int64_t padLeft, padRight, padTop, padBottom;

  int64_t outHeight() const {
    return (height + padTop + padBottom - kernelHeight + strideY) / strideY;
  }
  int64_t outWidth() const {
    return (width + padLeft + padRight - kernelWidth + strideX) / strideX;
  }
  std::string describe() const {
    return "C=" + std::to_string(channels) + " H=" + std::to_string(height) +
           " W=" + std::to_string(width) + " M=" + std::to_string(kernels) + " kernel " +
           std::to_string(kernelHeight) + "x" + std::to_string(kernelWidth) + " stride " +
           std::to_string(strideY) + "," + std::to_string(strideX) + " pad l" +
           std::to_string(padLeft) + " r" + std::to_string(padRight) + " t" +
           std::to_string(padTop) + " b" + std::to_string(padBottom);
  }
};

std::vector<Layer> layers() {
  std::vector<Layer> result;
  for (int64_t stride : {1, 2}) {
    for (int64_t padding : {0, 1}) {
      result.push_back({3, 8, 8, 4, 3, 3, stride, stride, padding, padding, padding, padding});
    }
  }
  result.push_back({2, 7, 10, 3, 3, 2, 2, 1, 1, 2, 0, 1});  // non-square everything
  return result;
}

// The layer in the text format: sizes are size variables bound from the inputs' shapes;
// strides and paddings are constants of the program.
std::string convText(const Layer& layer) {
  auto n = [](int64_t value) { return std::to_string(value); };
  return "def conv(weights: [[[[float]C]KW]KH]M, biases: [float]M, input: [[[float]C]W]H) =\n"
         "  map2D(window -> map(kb -> reduce(kb._1, (acc, p) -> acc + p._0 * p._1,\n"
         "                                   zip(join(join(window)), join(join(kb._0)))),\n"
         "                      zip(weights, biases)),\n"
         "        slide2D(KH, KW, " +
         n(layer.strideY) + ", " + n(layer.strideX) +
         ",\n"
         "                pad2D(" +
         n(layer.padLeft) + ", " + n(layer.padRight) + ", " + n(layer.padTop) + ", " +
         n(layer.padBottom) + ", constant(0.0f), input)))\n";
}

// The same layer with the C++ builders.
Definition convBuilt(const Layer& layer) {
  Arith c = Arith::size("C"), kw = Arith::size("KW"), kh = Arith::size("KH");
  Arith m = Arith::size("M"), w = Arith::size("W"), h = Arith::size("H");
  Type weightsType =
      Type::array(Type::array(Type::array(Type::array(Type::floatType(), c), kw), kh), m);
  Type biasesType = Type::array(Type::floatType(), m);
  Type inputType = Type::array(Type::array(Type::array(Type::floatType(), c), w), h);
  return definition(
      "conv", {{"weights", weightsType}, {"biases", biasesType}, {"input", inputType}},
      [&](const std::vector<Expr>& p) {
        const Expr& weights = p[0];
        const Expr& biases = p[1];
        const Expr& input = p[2];
        Expr perWindow = lam("window", [&](Expr window) {
          return map(lam("kb",
                         [&](Expr kb) {
                           return reduce(get(1, kb),
                                         lam2("acc", "p",
                                              [](Expr acc, Expr pair) {
                                                return acc + get(0, pair) * get(1, pair);
                                              }),
                                         zip(join(join(window)), join(join(get(0, kb)))));
                         }),
                     zip(weights, biases));
        });
        return map2D(perWindow, slide2D(kh, kw, layer.strideY, layer.strideX,
                                        pad2DConstant(layer.padLeft, layer.padRight, layer.padTop,
                                                      layer.padBottom, 0.0, input)));
      });
}

struct Data {
  std::vector<float> weights, biases, input;  // row-major, layouts as above
};

Data randomData(const Layer& layer, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  auto fill = [&](int64_t count) {
    std::vector<float> values(static_cast<size_t>(count));
    for (float& value : values) value = uniform(generator);
    return values;
  };
  Data data;
  data.weights = fill(layer.kernels * layer.kernelHeight * layer.kernelWidth * layer.channels);
  data.biases = fill(layer.kernels);
  data.input = fill(layer.height * layer.width * layer.channels);
  return data;
}

// The reference: out[oy][ox][m] = bias[m] + sum over ky, kx, c of
// padded(oy*sy + ky, ox*sx + kx, c) * weights[m][ky][kx][c], with zero padding, in double.
std::vector<double> nestedLoopConvolution(const Layer& l, const Data& data) {
  std::vector<double> out;
  for (int64_t oy = 0; oy < l.outHeight(); ++oy) {
    for (int64_t ox = 0; ox < l.outWidth(); ++ox) {
      for (int64_t m = 0; m < l.kernels; ++m) {
        double sum = data.biases[static_cast<size_t>(m)];
        for (int64_t ky = 0; ky < l.kernelHeight; ++ky) {
          for (int64_t kx = 0; kx < l.kernelWidth; ++kx) {
            int64_t y = oy * l.strideY + ky - l.padTop;
            int64_t x = ox * l.strideX + kx - l.padLeft;
            if (y < 0 || y >= l.height || x < 0 || x >= l.width) continue;
            for (int64_t c = 0; c < l.channels; ++c) {
              double in = data.input[static_cast<size_t>((y * l.width + x) * l.channels + c)];
              double weight = data.weights[static_cast<size_t>(
                  ((m * l.kernelHeight + ky) * l.kernelWidth + kx) * l.channels + c)];
              sum += in * weight;
            }
          }
        }
        out.push_back(sum);
      }
    }
  }
  return out;
}

// The reference in the example's layout [M][OH][OW] (from [OH][OW][M]).
std::vector<double> kernelsOutermost(const Layer& l, const std::vector<double>& pixelsOutermost) {
  std::vector<double> out;
  for (int64_t m = 0; m < l.kernels; ++m) {
    for (int64_t pixel = 0; pixel < l.outHeight() * l.outWidth(); ++pixel) {
      out.push_back(pixelsOutermost[static_cast<size_t>(pixel * l.kernels + m)]);
    }
  }
  return out;
}

// Runs `conv` on the layer's random data and compares with the nested loops. `sizes` binds
// the size variables of the program; those the inputs determine must be recovered from them.
void checkAgainstReference(const Definition& conv, const Layer& layer, unsigned seed,
                           const ArithBinding& sizes, const ArithBinding& notFromInputs,
                           bool kernelsFirst) {
  CAPTURE(layer.describe());
  Data data = randomData(layer, seed);
  const std::vector<Expr>& params = conv.function.params();
  REQUIRE(params.size() == 3);
  std::vector<Value> inputs = {valueFromFlat(params[0].paramType(), sizes, data.weights),
                               valueFromFlat(params[1].paramType(), sizes, data.biases),
                               valueFromFlat(params[2].paramType(), sizes, data.input)};
  CHECK(bindSizes(conv, inputs, notFromInputs) == sizes);

  Value result = interpret(conv, inputs, sizes);
  std::vector<int64_t> expectedShape =
      kernelsFirst ? std::vector<int64_t>{layer.kernels, layer.outHeight(), layer.outWidth()}
                   : std::vector<int64_t>{layer.outHeight(), layer.outWidth(), layer.kernels, 1};
  CHECK(shapeOf(result) == expectedShape);
  std::vector<float> actual = flattenToFloats(result);
  std::vector<double> expected = nestedLoopConvolution(layer, data);
  if (kernelsFirst) expected = kernelsOutermost(layer, expected);
  REQUIRE(actual.size() == expected.size());
  size_t mismatches = 0;
  for (size_t index = 0; index < expected.size(); ++index) {
    double tolerance = 1e-5 + 1e-4 * std::fabs(expected[index]);
    if (std::fabs(actual[index] - expected[index]) > tolerance) {
      if (mismatches++ < 5) {
        FAIL_CHECK("element " << index << ": interpreter " << actual[index] << ", reference "
                              << expected[index]);
      }
    }
  }
  CHECK(mismatches == 0);
}

}  // namespace

namespace {

ArithBinding paperSizes(const Layer& layer) {
  return {{"C", layer.channels}, {"H", layer.height},        {"W", layer.width},
          {"M", layer.kernels},  {"KH", layer.kernelHeight}, {"KW", layer.kernelWidth}};
}

}  // namespace

TEST_CASE("examples/conv.weft matches nested loops") {
  Program program = parseFile("examples/conv.weft");
  REQUIRE(program.definitions.size() == 1);
  const Definition& conv = program.definitions[0];
  // The example declares [P >= 0, S >= 1], so bindSizes accepts the padding 0 cases below.
  REQUIRE(conv.sizeDeclarations.size() == 2);
  CHECK(conv.sizeDeclarations[0].varName() == "P");
  CHECK(conv.sizeDeclarations[0].varLo() == Arith(0));
  CHECK(conv.sizeDeclarations[1].varName() == "S");
  CHECK(conv.sizeDeclarations[1].varLo() == Arith(1));
  std::vector<Layer> cases;
  for (int64_t stride : {1, 2}) {
    for (int64_t padding : {0, 1}) {
      cases.push_back({3, 8, 8, 4, 3, 3, stride, stride, padding, padding, padding, padding});
    }
  }
  cases.push_back({2, 7, 10, 3, 3, 3, 2, 2, 1, 1, 1, 1});  // a non-square image
  cases.push_back({1, 5, 6, 2, 2, 2, 1, 1, 2, 2, 2, 2});   // even kernel, padding 2
  unsigned seed = 1;
  for (const Layer& layer : cases) {
    ArithBinding notFromInputs = {{"P", layer.padTop}, {"S", layer.strideY}};
    ArithBinding sizes = {{"C", layer.channels},
                          {"H", layer.height},
                          {"W", layer.width},
                          {"M", layer.kernels},
                          {"K", layer.kernelHeight}};
    sizes.insert(notFromInputs.begin(), notFromInputs.end());
    checkAgainstReference(conv, layer, seed++, sizes, notFromInputs, true);
  }
}

TEST_CASE("the paper's convolution in the text format matches nested loops") {
  unsigned seed = 50;
  for (const Layer& layer : layers()) {
    Program program = parseProgram(convText(layer), "conv_test.weft");
    REQUIRE(program.definitions.size() == 1);
    checkAgainstReference(program.definitions[0], layer, seed++, paperSizes(layer), {}, false);
  }
}

TEST_CASE("the paper's convolution built with the C++ builders matches nested loops") {
  unsigned seed = 100;
  for (const Layer& layer : layers()) {
    checkAgainstReference(convBuilt(layer), layer, seed++, paperSizes(layer), {}, false);
  }
}

TEST_CASE("the reference itself: a 1x1 kernel with unit weights copies the input plus bias") {
  // Guards the nested loops above against indexing mistakes that the interpreter might share.
  Layer layer{2, 3, 4, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  Data data = randomData(layer, 7);
  data.weights = {1.0f, 0.0f};  // picks channel 0
  data.biases = {0.5f};
  std::vector<double> out = nestedLoopConvolution(layer, data);
  REQUIRE(out.size() == 12);
  for (size_t pixel = 0; pixel < 12; ++pixel) {
    CHECK(out[pixel] == doctest::Approx(data.input[pixel * 2] + 0.5));
  }
}
