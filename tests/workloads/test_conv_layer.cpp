// The built-in convolution layer (workloads/conv/conv_layer.h): its output sizes follow PyTorch's conv2d
// (partial windows dropped), its definition has the layer's parameter and result types, it
// computes in the reference interpreter what the plain NCHW loops of tests/support compute
// (square and non-square layers, stride 1 and 2, padding 0 and 1, 1x1 and even kernels), the
// VGG-16 table holds the network's 13 convolution layers with the LIFT paper's numbers, and bad
// layers and layer specifications are rejected with messages that say what is wrong.
#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/conv/conv_layer.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"
#include "tests/support/conv_layer_reference.h"

using namespace weft;
using weft::testing::compareWithReference;
using weft::testing::ConvLayerData;
using weft::testing::randomConvLayerData;

namespace {

Type arrayOf(Type element, std::vector<int64_t> lengths) {
  for (auto it = lengths.rbegin(); it != lengths.rend(); ++it) element = Type::array(element, *it);
  return element;
}

// Runs the layer's definition in the interpreter on random data and compares with the loops.
void checkInterpreterAgainstLoops(const ConvLayer& layer, unsigned seed) {
  CAPTURE(layer.describe());
  Definition definition = convLayerDefinition(layer);
  ConvLayerData data = randomConvLayerData(layer, seed);
  const std::vector<Expr>& params = definition.function.params();
  REQUIRE(params.size() == 3);
  std::vector<Value> inputs = {valueFromFlat(params[0].paramType(), {}, data.x),
                               valueFromFlat(params[1].paramType(), {}, data.w),
                               valueFromFlat(params[2].paramType(), {}, data.b)};
  // Every length is a constant: nothing to bind, and the inputs fit the params.
  CHECK(bindSizes(definition, inputs).empty());
  Value result = interpret(definition, inputs, {});
  CHECK(shapeOf(result) == std::vector<int64_t>{layer.M, layer.outH(), layer.outW()});
  testing::ConvMismatches mismatches = compareWithReference(layer, data, flattenToFloats(result));
  INFO(mismatches.first);
  CHECK(mismatches.count == 0);
}

}  // namespace

TEST_CASE("output sizes follow conv2d: (H + 2*pad - K) / stride + 1, partial windows dropped") {
  CHECK(ConvLayer{3, 224, 224, 64, 3, 1, 1, ""}.outH() == 224);
  CHECK(ConvLayer{3, 8, 8, 4, 3, 2, 0, ""}.outH() == 3);  // windows at 0, 2, 4; 6..8 is partial
  CHECK(ConvLayer{3, 8, 8, 4, 3, 2, 1, ""}.outW() == 4);  // padded 10: windows at 0, 2, 4, 6
  CHECK(ConvLayer{3, 227, 227, 96, 11, 4, 0, ""}.outH() == 55);  // AlexNet's first layer
  CHECK(ConvLayer{3, 224, 224, 64, 11, 4, 2, ""}.outW() == 55);  // torchvision's AlexNet
  ConvLayer nonSquare{2, 7, 10, 3, 3, 2, 1, ""};
  CHECK(nonSquare.outH() == 4);
  CHECK(nonSquare.outW() == 5);
  CHECK(ConvLayer{3, 8, 8, 4, 3, 1, 1, ""}.flops() == 2 * 4 * 3 * 9 * 8 * 8);
}

TEST_CASE("the definition has PyTorch's layouts as params and [[[float]outW]outH]M as result") {
  ConvLayer layer{3, 8, 10, 4, 3, 2, 1, "small"};
  Definition definition = convLayerDefinition(layer);
  CHECK(definition.name == "small");
  const std::vector<Expr>& params = definition.function.params();
  REQUIRE(params.size() == 3);
  CHECK(params[0].paramName() == "input");
  CHECK(params[0].paramType() == arrayOf(Type::floatType(), {3, 8, 10}));
  CHECK(params[1].paramName() == "weights");
  CHECK(params[1].paramType() == arrayOf(Type::floatType(), {4, 3, 3, 3}));
  CHECK(params[2].paramName() == "bias");
  CHECK(params[2].paramType() == arrayOf(Type::floatType(), {4}));
  CHECK(definition.declaredType == arrayOf(Type::floatType(), {4, 4, 5}));
  CHECK(convLayerDefinition(ConvLayer{1, 3, 3, 1, 1, 1, 0, ""}).name == "convLayer");
}

TEST_CASE("the interpreter computes what the NCHW loops compute") {
  unsigned seed = 1;
  SUBCASE("C=3, 8x8, M=4, 3x3 kernels, stride 1 and 2, pad 0 and 1") {
    for (int64_t stride : {1, 2}) {
      for (int64_t pad : {0, 1})
        checkInterpreterAgainstLoops({3, 8, 8, 4, 3, stride, pad, ""}, seed++);
    }
  }
  SUBCASE("non-square image, stride 2, pad 1") {
    checkInterpreterAgainstLoops({2, 7, 10, 3, 3, 2, 1, ""}, 11);
  }
  SUBCASE("non-square image, stride 3 leaves partial windows, pad 2") {
    checkInterpreterAgainstLoops({3, 9, 6, 2, 3, 3, 2, ""}, 12);
  }
  SUBCASE("1x1 kernels") { checkInterpreterAgainstLoops({5, 4, 3, 6, 1, 1, 0, ""}, 13); }
  SUBCASE("even 2x2 kernels, padding wider than half the kernel") {
    checkInterpreterAgainstLoops({2, 5, 6, 3, 2, 1, 2, ""}, 14);
  }
  SUBCASE("one channel, one kernel, the kernel as large as the padded image") {
    checkInterpreterAgainstLoops({1, 3, 4, 1, 5, 1, 1, ""}, 15);
  }
}

TEST_CASE("VGG-16: 13 convolution layers in network order with the paper's numbers") {
  const std::vector<ConvLayer>& layers = vgg16Layers();
  REQUIRE(layers.size() == 13);
  const std::vector<std::string> names = {"conv1_1", "conv1_2", "conv2_1", "conv2_2", "conv3_1",
                                          "conv3_2", "conv3_3", "conv4_1", "conv4_2", "conv4_3",
                                          "conv5_1", "conv5_2", "conv5_3"};
  const std::vector<int> paperNumbers = {0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28};
  for (size_t i = 0; i < layers.size(); ++i) {
    CAPTURE(i);
    const ConvLayer& layer = layers[i];
    CHECK(layer.name == names[i]);
    CHECK(vgg16PaperNumber(i) == paperNumbers[i]);
    CHECK(&vgg16Layer(paperNumbers[i]) == &layer);
    CHECK(layer.K == 3);
    CHECK(layer.stride == 1);
    CHECK(layer.pad == 1);
    CHECK(layer.H == layer.W);
    // "same" convolutions: the spatial size is kept.
    CHECK(layer.outH() == layer.H);
    CHECK(layer.outW() == layer.W);
    if (i + 1 < layers.size()) {
      const ConvLayer& next = layers[i + 1];
      CHECK(next.C == layer.M);  // each layer consumes the previous one's feature maps
      // A 2x2 max-pool halves the image between blocks (the name's first digit changes).
      bool newBlock = next.name[4] != layer.name[4];
      CHECK(next.H == (newBlock ? layer.H / 2 : layer.H));
    }
  }
  CHECK(layers.front().C == 3);
  CHECK(layers.front().H == 224);
  CHECK(layers.back().M == 512);
  CHECK(layers.back().H == 14);
  // The and the paper's benchmark layers: 0 is 3x224x224 -> 64, 10 is 128x56x56 -> 256.
  const ConvLayer& first = vgg16Layer(0);
  CHECK((first.C == 3 && first.H == 224 && first.W == 224 && first.M == 64));
  const ConvLayer& tenth = vgg16Layer(10);
  CHECK((tenth.C == 128 && tenth.H == 56 && tenth.W == 56 && tenth.M == 256));
  CHECK(tenth.name == "conv3_1");
  // Table 3's other rows: 2 is 64x224x224 -> 64, 7 is 128x112x112 -> 128, 17 is 256x28x28 -> 512.
  CHECK((vgg16Layer(2).C == 64 && vgg16Layer(2).H == 224 && vgg16Layer(2).M == 64));
  CHECK((vgg16Layer(7).C == 128 && vgg16Layer(7).H == 112 && vgg16Layer(7).M == 128));
  CHECK((vgg16Layer(17).C == 256 && vgg16Layer(17).H == 28 && vgg16Layer(17).M == 512));
  // VGG-16's convolutions take about 15.35 G multiply-adds per 224x224 image (the whole network
  // 15.5 G with its fully connected layers).
  int64_t flops = 0;
  for (const ConvLayer& layer : layers) flops += layer.flops();
  CHECK(flops / 2 > 15'300'000'000);
  CHECK(flops / 2 < 15'400'000'000);
  CHECK(first.flops() == 2LL * 64 * 3 * 9 * 224 * 224);

  CHECK_THROWS_AS(vgg16PaperNumber(13), std::out_of_range);
  for (int notConv : {-1, 1, 3, 4, 9, 29, 30}) {
    CAPTURE(notConv);
    CHECK_THROWS_WITH_AS(vgg16Layer(notConv), doctest::Contains("0, 2, 5, 7, 10"),
                         std::invalid_argument);
  }
}

TEST_CASE("layer specifications: C,H,W,M,K,stride,pad or vgg16:N") {
  ConvLayer layer = parseConvLayer("3,8,9,4,3,2,1");
  CHECK(layer.C == 3);
  CHECK(layer.H == 8);
  CHECK(layer.W == 9);
  CHECK(layer.M == 4);
  CHECK(layer.K == 3);
  CHECK(layer.stride == 2);
  CHECK(layer.pad == 1);
  CHECK(layer.name == "conv_3_8_9_4_3_2_1");
  CHECK(convLayerDefinition(layer).name == "conv_3_8_9_4_3_2_1");
  CHECK(parseConvLayer("vgg16:10").name == "conv3_1");
  CHECK(parseConvLayer("vgg16:28").name == "conv5_3");

  CHECK_THROWS_WITH_AS(parseConvLayer("3,8,9,4,3,2"), doctest::Contains("got 6"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("3,8,9,4,3,2,1,1"), doctest::Contains("got 8"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("3,8,x,4,3,2,1"), doctest::Contains("'x' is not an integer"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("3,8,,4,3,2,1"), doctest::Contains("C,H,W,M,K,stride,pad"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer(""), doctest::Contains("C,H,W,M,K,stride,pad"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("vgg16:"), doctest::Contains("vgg16:N"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("vgg16:1"),
                       doctest::Contains("no convolution layer number 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parseConvLayer("vgg19:0"), doctest::Contains("C,H,W,M,K,stride,pad"),
                       std::invalid_argument);
  // Specifications are validated.
  CHECK_THROWS_WITH_AS(parseConvLayer("3,8,8,4,3,0,1"),
                       doctest::Contains("stride must be at least 1"), std::invalid_argument);
}

TEST_CASE("invalid layers are rejected with the bad number named") {
  auto rejects = [](ConvLayer layer, const std::string& message) {
    CAPTURE(message);
    CHECK_THROWS_WITH_AS(layer.validate(), doctest::Contains(message.c_str()),
                         std::invalid_argument);
    CHECK_THROWS_AS(convLayerDefinition(layer), std::invalid_argument);
  };
  rejects({0, 8, 8, 4, 3, 1, 1, ""}, "C (input channels) must be at least 1");
  rejects({3, 8, 8, 0, 3, 1, 1, ""}, "M (output channels) must be at least 1");
  rejects({3, 8, 8, 4, 0, 1, 1, ""}, "K (kernel size) must be at least 1");
  rejects({3, 8, 8, 4, 3, 1, -1, ""}, "pad must be at least 0");
  rejects({3, 2, 8, 4, 5, 1, 1, ""}, "does not fit the padded height H + 2*pad = 4");
  rejects({3, 8, 1, 4, 3, 1, 0, ""}, "does not fit the padded width W + 2*pad = 1");
  rejects({65536, 65536, 1, 1, 1, 1, 0, ""}, "2^31 elements or more");
  rejects({3, 8, 8, 4, int64_t{1} << 40, 1, 1, ""}, "below 2^31");
  CHECK_NOTHROW(ConvLayer({1, 1, 1, 1, 3, 1, 1, ""}).validate());  // K = H + 2*pad fits
}

TEST_CASE("the built-in Listing 3 definition is examples/conv.weft") {
  const char* source = std::getenv("WEFT_SOURCE_DIR");
  std::string dir = source ? source : ".";
  Program example = parseFile(dir + "/examples/conv.weft");
  Definition builtIn = convListing3Definition();
  CHECK(builtIn.function == example.definitions.back().function);
  ArithBinding sizes = convListing3Sizes(vgg16Layer(2));
  CHECK(sizes == ArithBinding{{"C", 64}, {"H", 224}, {"W", 224}, {"M", 64},
                              {"K", 3}, {"P", 1}, {"S", 1}});
}
