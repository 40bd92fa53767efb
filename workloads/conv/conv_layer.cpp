// The built-in convolution layer (PyTorch's conventions) as a weft program, and the VGG-16
// table. See conv_layer.h for the layouts and the two numberings of VGG-16's layers.
//
// The program, for input [C][H][W], weights [M][C][K][K], bias [M]:
//
//   windows = map(transpose,                                   // [outH][outW][C][K][K]
//               transpose(                                     // [outH][C][outW][K][K]
//                 map(channel -> slide2D(K, stride,            // [C][outH][outW][K][K]
//                                 pad2D(pad, constant(0.0f), channel)),
//                     input)))
//   map(kernel -> map(row -> join(map(window ->
//                                  reduce(kernel._1, (acc, p) -> acc + p._0 * p._1,
//                                         zip(join(join(window)), join(join(kernel._0)))),
//                                row)),
//                   windows),
//       zip(weights, bias))                                     // [M][outH][outW]
//
// Every map that builds `windows` only rearranges data, so it is a view that costs nothing;
// the three computing maps become mapGlb(2), mapGlb(1) and mapGlb(0) under the default lowering
// (join continues the nest, and reduce's [float]1 is joined away), and the reduce a sequential
// loop over the C·K·K products in (c, ky, kx) order, the order of both zipped arrays.
#include "workloads/conv/conv_layer.h"

#include "ir/parser.h"

#include <array>
#include <charconv>
#include <limits>
#include <stdexcept>
#include <string_view>

#include "ir/builders.h"

namespace weft {

namespace {

// The paper's numbers of VGG-16's convolution layers, in network order (Table 3 of Mogers et
// al., "Automatic generation of specialized direct convolutions for mobile GPUs", GPGPU 2020).
constexpr std::array<int, 13> kVgg16PaperNumbers = {0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28};

std::string paperNumberList() {
  std::string list;
  for (int number : kVgg16PaperNumbers) list += (list.empty() ? "" : ", ") + std::to_string(number);
  return list;
}

int64_t outputLength(int64_t length, int64_t kernel, int64_t stride, int64_t pad) {
  return (length + 2 * pad - kernel) / stride + 1;
}

// Parses a whole string as a (signed) integer, or gives false.
bool parseInteger(std::string_view text, int64_t& value) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

int64_t ConvLayer::outH() const { return outputLength(H, K, stride, pad); }
int64_t ConvLayer::outW() const { return outputLength(W, K, stride, pad); }

int64_t ConvLayer::flops() const { return 2 * M * C * K * K * outH() * outW(); }

std::string ConvLayer::describe() const {
  auto n = [](int64_t value) { return std::to_string(value); };
  return (name.empty() ? std::string("convLayer") : name) + ": " + n(C) + "x" + n(H) + "x" + n(W) +
         " -> " + n(M) + "x" + n(outH()) + "x" + n(outW()) + " (" + n(K) + "x" + n(K) +
         " kernels, stride " + n(stride) + ", pad " + n(pad) + ")";
}

void ConvLayer::validate() const {
  auto fail = [&](const std::string& problem) {
    throw std::invalid_argument(
        "convolution layer C=" + std::to_string(C) + " H=" + std::to_string(H) +
        " W=" + std::to_string(W) + " M=" + std::to_string(M) + " K=" + std::to_string(K) +
        " stride=" + std::to_string(stride) + " pad=" + std::to_string(pad) + ": " + problem);
  };
  const std::array<std::pair<const char*, int64_t>, 6> positive = {{{"C (input channels)", C},
                                                                    {"H (input height)", H},
                                                                    {"W (input width)", W},
                                                                    {"M (output channels)", M},
                                                                    {"K (kernel size)", K},
                                                                    {"stride", stride}}};
  for (const auto& [what, value] : positive) {
    if (value < 1) fail(std::string(what) + " must be at least 1");
  }
  if (pad < 0) fail("pad must be at least 0");
  // Bounds on every number keep the element counts below from overflowing int64.
  constexpr int64_t kLimit = int64_t{1} << 31;
  for (int64_t value : {C, H, W, M, K, stride, pad}) {
    if (value >= kLimit) fail("every number must be below 2^31");
  }
  if (K > H + 2 * pad) {
    fail("a " + std::to_string(K) + "x" + std::to_string(K) +
         " window does not fit the padded height H + 2*pad = " + std::to_string(H + 2 * pad));
  }
  if (K > W + 2 * pad) {
    fail("a " + std::to_string(K) + "x" + std::to_string(K) +
         " window does not fit the padded width W + 2*pad = " + std::to_string(W + 2 * pad));
  }
  auto checkCount = [&](const char* what, std::initializer_list<int64_t> extents) {
    // Multiplied with a bound check at every step: the extents are below 2^31 each.
    int64_t count = 1;
    for (int64_t extent : extents) {
      if (count > (std::numeric_limits<int32_t>::max)() / extent) {
        fail(std::string("the ") + what +
             " has 2^31 elements or more; generated kernels index arrays with int");
      }
      count *= extent;
    }
  };
  checkCount("input", {C, H, W});
  checkCount("weights", {M, C, K, K});
  checkCount("padded input", {C, H + 2 * pad, W + 2 * pad});
  checkCount("output", {M, outH(), outW()});
}

Definition convListing3Definition() {
  // Kept equal to examples/conv.weft (tests/ir/test_conv_layer.cpp checks it).
  static const char* const text = R"(
def convLayer[P >= 0, S >= 1](weights: [[[[float]C]K]K]M, biases: [float]M,
                              input: [[[float]C]W]H)
    : [[[float]((W + 2*P - K + S) / S)]((H + 2*P - K + S) / S)]M =
  transpose(map(rows -> transpose(rows),
    map2D(window -> join(map(kernel -> reduce(kernel._1, (acc, p) -> acc + p._0 * p._1,
                                             zip(join(join(window)), join(join(kernel._0)))),
                             zip(weights, biases))),
          slide2D(K, K, S, S, pad2D(P, P, P, P, constant(0.0f), input)))))
)";
  static const Program program = parseProgram(text, "<listing 3>");
  return program.definitions.back();
}

ArithBinding convListing3Sizes(const ConvLayer& layer) {
  layer.validate();
  return {{"C", layer.C}, {"H", layer.H}, {"W", layer.W}, {"M", layer.M},
          {"K", layer.K}, {"P", layer.pad}, {"S", layer.stride}};
}

Definition convLayerDefinition(const ConvLayer& layer) {
  layer.validate();
  auto array = [](Type element, int64_t length) { return Type::array(std::move(element), length); };
  const Type scalar = Type::floatType();
  const Type inputType = array(array(array(scalar, layer.W), layer.H), layer.C);
  const Type weightsType = array(array(array(array(scalar, layer.K), layer.K), layer.C), layer.M);
  const Type biasType = array(scalar, layer.M);
  const Type outputType = array(array(array(scalar, layer.outW()), layer.outH()), layer.M);

  return definition(
      layer.name.empty() ? "convLayer" : layer.name,
      {{"input", inputType}, {"weights", weightsType}, {"bias", biasType}},
      [&](const std::vector<Expr>& params) {
        const Expr& input = params[0];
        const Expr& weights = params[1];
        const Expr& bias = params[2];
        // [C][outH][outW][K][K]: each channel zero-padded and cut into windows.
        Expr channelWindows =
            map(lam("channel",
                    [&](Expr channel) {
                      return slide2D(layer.K, layer.stride, pad2DConstant(layer.pad, 0.0, channel));
                    }),
                input);
        // [outH][outW][C][K][K]: the channels inside each output pixel (views only).
        Expr windows = map(lam("rowOfChannels", [](Expr row) { return transpose(row); }),
                           transpose(channelWindows));
        Expr sumOfProducts =
            lam2("acc", "p", [](Expr acc, Expr p) { return acc + get(0, p) * get(1, p); });
        return map(lam("kernel",
                       [&](Expr kernel) {
                         return map(lam("row",
                                        [&](Expr row) {
                                          return join(map(
                                              lam("window",
                                                  [&](Expr window) {
                                                    return reduce(get(1, kernel), sumOfProducts,
                                                                  zip(join(join(window)),
                                                                      join(join(get(0, kernel)))));
                                                  }),
                                              row));
                                        }),
                                    windows);
                       }),
                   zip(weights, bias));
      },
      outputType);
}

const std::vector<ConvLayer>& vgg16Layers() {
  // {C, H, W, M, K, stride, pad, name}; Simonyan and Zisserman 2015, Table 1, column D.
  static const std::vector<ConvLayer> layers = {
      {3, 224, 224, 64, 3, 1, 1, "conv1_1"},   {64, 224, 224, 64, 3, 1, 1, "conv1_2"},
      {64, 112, 112, 128, 3, 1, 1, "conv2_1"}, {128, 112, 112, 128, 3, 1, 1, "conv2_2"},
      {128, 56, 56, 256, 3, 1, 1, "conv3_1"},  {256, 56, 56, 256, 3, 1, 1, "conv3_2"},
      {256, 56, 56, 256, 3, 1, 1, "conv3_3"},  {256, 28, 28, 512, 3, 1, 1, "conv4_1"},
      {512, 28, 28, 512, 3, 1, 1, "conv4_2"},  {512, 28, 28, 512, 3, 1, 1, "conv4_3"},
      {512, 14, 14, 512, 3, 1, 1, "conv5_1"},  {512, 14, 14, 512, 3, 1, 1, "conv5_2"},
      {512, 14, 14, 512, 3, 1, 1, "conv5_3"},
  };
  return layers;
}

int vgg16PaperNumber(size_t position) {
  if (position >= kVgg16PaperNumbers.size()) {
    throw std::out_of_range("VGG-16 has 13 convolution layers (positions 0..12), not position " +
                            std::to_string(position));
  }
  return kVgg16PaperNumbers[position];
}

const ConvLayer& vgg16Layer(int paperNumber) {
  for (size_t position = 0; position < kVgg16PaperNumbers.size(); ++position) {
    if (kVgg16PaperNumbers[position] == paperNumber) return vgg16Layers()[position];
  }
  throw std::invalid_argument(
      "VGG-16 has no convolution layer number " + std::to_string(paperNumber) +
      "; the LIFT paper numbers them (ReLU and pooling layers count) " + paperNumberList() +
      ", e.g. vgg16:0 is conv1_1 (3x224x224 -> 64) and vgg16:10 is conv3_1 (128x56x56 -> 256)");
}

ConvLayer parseConvLayer(const std::string& spec) {
  const std::string_view vggPrefix = "vgg16:";
  if (spec.starts_with(vggPrefix)) {
    int64_t number = 0;
    if (!parseInteger(std::string_view(spec).substr(vggPrefix.size()), number) ||
        number < std::numeric_limits<int>::min() || number > std::numeric_limits<int>::max()) {
      throw std::invalid_argument("layer '" + spec +
                                  "': expected vgg16:N with N one of the paper's numbers " +
                                  paperNumberList());
    }
    return vgg16Layer(static_cast<int>(number));
  }
  std::vector<int64_t> numbers;
  size_t start = 0;
  while (true) {
    size_t comma = spec.find(',', start);
    std::string_view field = std::string_view(spec).substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t value = 0;
    if (!parseInteger(field, value)) {
      throw std::invalid_argument(
          "layer '" + spec +
          "': expected seven integers C,H,W,M,K,stride,pad (e.g. 3,224,224,64,3,1,1) or "
          "vgg16:N; '" +
          std::string(field) + "' is not an integer");
    }
    numbers.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (numbers.size() != 7) {
    throw std::invalid_argument("layer '" + spec +
                                "': expected seven integers C,H,W,M,K,stride,pad "
                                "(e.g. 3,224,224,64,3,1,1) or vgg16:N, got " +
                                std::to_string(numbers.size()));
  }
  ConvLayer layer{numbers[0], numbers[1], numbers[2], numbers[3],
                  numbers[4], numbers[5], numbers[6], ""};
  layer.name = "conv";
  for (int64_t number : numbers) layer.name += "_" + std::to_string(number);
  layer.validate();
  return layer;
}

}  // namespace weft
