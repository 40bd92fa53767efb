// End-to-end tests of `weft run --layer --backend opencl`: the built-in convolution layer,
// default-lowered and generated as one OpenCL kernel, runs on the default device and writes
// the same (M, outH, outW) result as the interpreter backend and as the plain NCHW loops of
// tests/support (computed here in C++, no NumPy), for small layers with stride 1 and 2, padding
// 0 and 1 and a non-square image, and for a real VGG-16 layer named as vgg16:N (there against
// the loops only: the interpreter would take minutes). Label opencl: skipped where no OpenCL
// platform exists (tests/opencl_main.cpp).
#include <doctest/doctest.h>

#include <cmath>
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

namespace {

// Runs `weft run --layer layerSpec` with the backend and returns the result read back.
NpyArray runLayer(const TempDir& dir, const std::string& layerSpec, const ConvLayer& layer,
                  const ConvLayerData& data, const std::string& backend) {
  std::vector<std::string> args = {
      "run",
      "--layer",
      layerSpec,
      "--in",
      writeFloats(dir, "x.npy", {layer.C, layer.H, layer.W}, data.x),
      writeFloats(dir, "w.npy", {layer.M, layer.C, layer.K, layer.K}, data.w),
      writeFloats(dir, "b.npy", {layer.M}, data.b),
      "--out",
      dir.file(backend + ".npy"),
      "--backend",
      backend};
  CommandResult result = runWeft(args);
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output,
                 backend == "opencl" ? "ms kernel time (1 kernel)" : "in the interpreter"));
  NpyArray y = readNpy(dir.file(backend + ".npy"));
  CHECK(y.shape == std::vector<int64_t>{layer.M, layer.outH(), layer.outW()});
  return y;
}

void checkBackendsAgree(const ConvLayer& layer, unsigned seed) {
  CAPTURE(layer.describe());
  TempDir dir("weft_cli_opencl_layer");
  ConvLayerData data = testing::randomConvLayerData(layer, seed);
  NpyArray device = runLayer(dir, layerSpec(layer), layer, data, "opencl");
  NpyArray interp = runLayer(dir, layerSpec(layer), layer, data, "interp");
  REQUIRE(device.f32.size() == interp.f32.size());
  for (size_t i = 0; i < device.f32.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(device.f32[i] - interp.f32[i]) <= 1e-4 + 1e-4 * std::abs(interp.f32[i]));
  }
  testing::ConvMismatches mismatches = testing::compareWithReference(layer, data, device.f32);
  INFO(mismatches.first);
  CHECK(mismatches.count == 0);
}

}  // namespace

TEST_CASE("weft run --layer --backend opencl agrees with the interpreter and the loops") {
  SUBCASE("stride 1, pad 1") { checkBackendsAgree({3, 8, 8, 4, 3, 1, 1, ""}, 21); }
  SUBCASE("stride 1, pad 0") { checkBackendsAgree({3, 8, 8, 4, 3, 1, 0, ""}, 22); }
  SUBCASE("stride 2, pad 1") { checkBackendsAgree({3, 8, 8, 4, 3, 2, 1, ""}, 23); }
  SUBCASE("non-square, stride 2, pad 1") { checkBackendsAgree({2, 7, 10, 3, 3, 2, 1, ""}, 24); }
  SUBCASE("non-square, 5x5 kernels, stride 3, pad 2") {
    checkBackendsAgree({4, 13, 9, 5, 5, 3, 2, ""}, 25);
  }
}

TEST_CASE("weft run --layer vgg16:24 runs conv5_1 (512x14x14 -> 512) on OpenCL") {
  const ConvLayer& layer = vgg16Layer(24);
  REQUIRE(layer.name == "conv5_1");
  TempDir dir("weft_cli_opencl_layer");
  ConvLayerData data = testing::randomConvLayerData(layer, 31);
  NpyArray y = runLayer(dir, "vgg16:24", layer, data, "opencl");
  testing::ConvMismatches mismatches = testing::compareWithReference(layer, data, y.f32);
  INFO(mismatches.first);
  CHECK(mismatches.count == 0);
}
