// End-to-end tests of `weft run --layer` with the interpreter backend: the built-in convolution
// layer reads x (C, H, W), w (M, C, K, K) and b (M) from .npy files and writes y
// (M, outH, outW), which must match the plain NCHW loops of tests/support (computed here in
// C++, no NumPy); the layer can be named by its seven numbers or as vgg16:N; wrong shapes,
// dtypes, counts of inputs and bad layer specifications are errors with exit code 1 and a
// message that says what was expected. The OpenCL backend is tested in opencl_cli_layer.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "workloads/conv/conv_layer.h"
#include "ir/npy.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/npy_inputs.h"
#include "tests/support/run_weft.h"

using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::ConvLayerData;
using weft::testing::layerSpec;
using weft::testing::runWeft;
using weft::testing::TempDir;
using weft::testing::writeFloats;
using weft::testing::writeLayerInputs;

namespace {

void checkLayer(const ConvLayer& layer, unsigned seed) {
  CAPTURE(layer.describe());
  TempDir dir("weft_cli_layer");
  ConvLayerData data = testing::randomConvLayerData(layer, seed);
  std::vector<std::string> inputs = writeLayerInputs(dir, layer, data);
  CommandResult result = runWeft({"run", "--layer", layerSpec(layer), "--in", inputs[0], inputs[1],
                                  inputs[2], "--out", dir.file("y.npy")});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output, "in the interpreter"));
  CHECK(contains(result.output, "written to " + dir.file("y.npy")));
  NpyArray y = readNpy(dir.file("y.npy"));
  CHECK(y.dtype == NpyDType::Float32);
  CHECK(y.shape == std::vector<int64_t>{layer.M, layer.outH(), layer.outW()});
  testing::ConvMismatches mismatches = testing::compareWithReference(layer, data, y.f32);
  INFO(mismatches.first);
  CHECK(mismatches.count == 0);
}

}  // namespace

TEST_CASE("weft run --layer computes the convolution with PyTorch's layouts") {
  SUBCASE("stride 1, pad 1") { checkLayer({3, 8, 8, 4, 3, 1, 1, ""}, 1); }
  SUBCASE("stride 2, pad 0") { checkLayer({3, 8, 8, 4, 3, 2, 0, ""}, 2); }
  SUBCASE("non-square, stride 2, pad 1") { checkLayer({2, 7, 10, 3, 3, 2, 1, ""}, 3); }
}

TEST_CASE("weft run --layer reports bad inputs and layer specifications") {
  TempDir dir("weft_cli_layer");
  ConvLayer layer{3, 8, 8, 4, 3, 1, 1, ""};
  ConvLayerData data = testing::randomConvLayerData(layer, 7);
  std::vector<std::string> inputs = writeLayerInputs(dir, layer, data);
  auto runLayer = [&](const std::string& layerSpec, const std::vector<std::string>& files) {
    std::vector<std::string> args = {"run", "--layer", layerSpec, "--in"};
    args.insert(args.end(), files.begin(), files.end());
    return runWeft(args);
  };

  SUBCASE("an input of the wrong shape names the file, the expected and the found shape") {
    CommandResult result = runLayer("3,8,9,4,3,1,1", inputs);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, inputs[0]));
    CHECK(contains(result.output, "(C, H, W) = (3, 8, 9)"));
    CHECK(contains(result.output, "has shape (3, 8, 8)"));
  }
  SUBCASE("weights in the paper's [M][K][K][C] layout are rejected") {
    std::string hwc = writeFloats(dir, "w_mkkc.npy", {4, 3, 3, 3}, data.w);
    CommandResult result = runLayer(
        "2,8,8,4,3,1,1",
        {writeFloats(dir, "x2.npy", {2, 8, 8}, std::vector<float>(128, 1.0f)), hwc, inputs[2]});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "(M, C, K, K) = (4, 2, 3, 3)"));
  }
  SUBCASE("a bias of the wrong length") {
    std::string bias = writeFloats(dir, "b5.npy", {5}, std::vector<float>(5, 0.0f));
    CommandResult result = runLayer(layerSpec(layer), {inputs[0], inputs[1], bias});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "bias"));
    CHECK(contains(result.output, "has shape (5"));
  }
  SUBCASE("int32 inputs") {
    NpyArray ints;
    ints.dtype = NpyDType::Int32;
    ints.shape = {3, 8, 8};
    ints.i32.assign(192, 1);
    writeNpy(dir.file("xi.npy"), ints);
    CommandResult result = runLayer(layerSpec(layer), {dir.file("xi.npy"), inputs[1], inputs[2]});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "must be float32"));
  }
  SUBCASE("two inputs instead of three") {
    CommandResult result = runLayer(layerSpec(layer), {inputs[0], inputs[1]});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "takes 3 inputs"));
    CHECK(contains(result.output, "2 --in file(s) were given"));
  }
  SUBCASE("a specification with six numbers") {
    CommandResult result = runLayer("3,8,8,4,3,1", inputs);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "C,H,W,M,K,stride,pad"));
  }
  SUBCASE("a window that does not fit") {
    CommandResult result = runLayer("3,8,8,4,11,1,1", inputs);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "does not fit"));
  }
  SUBCASE("vgg16:N with N not a convolution layer lists the paper's numbers") {
    CommandResult result = runLayer("vgg16:3", inputs);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "0, 2, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28"));
  }
  SUBCASE("vgg16:N checks the shapes against the table") {
    CommandResult result = runLayer("vgg16:0", inputs);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "conv1_1"));
    CHECK(contains(result.output, "(C, H, W) = (3, 224, 224)"));
  }
  SUBCASE("a file and --layer together") {
    CommandResult result = runWeft({"run", "examples/dot.weft", "--layer", layerSpec(layer)});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "not both"));
  }
  SUBCASE("--size does not apply to a layer") {
    std::vector<std::string> args = {"run", "--layer", layerSpec(layer), "--size", "N=3", "--in"};
    args.insert(args.end(), inputs.begin(), inputs.end());
    CommandResult result = runWeft(args);
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "do not apply to --layer"));
  }
  SUBCASE("neither a file nor --layer") {
    CommandResult result = runWeft({"run", "--in", inputs[0]});
    CHECK(result.exitCode == 1);
    CHECK(contains(result.output, "--layer"));
  }
}
