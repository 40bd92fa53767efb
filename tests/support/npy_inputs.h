// Helpers for command-line tests that feed `weft run` .npy files: write float32 or int32
// arrays into a TempDir (tests/support/run_weft.h), and the built-in convolution layer's
// inputs and its `--layer` spelling. Shared by tests/cli/cli_run*.cpp and opencl_cli_layer.cpp.
//
// Header-only (tests/support has no library).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/conv/conv_layer.h"
#include "ir/npy.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/run_weft.h"

namespace weft::testing {

// Writes a float32 array of the given shape as dir/name and returns its path.
inline std::string writeFloats(const TempDir& dir, const std::string& name,
                               std::vector<int64_t> shape, std::vector<float> values) {
  NpyArray array;
  array.dtype = NpyDType::Float32;
  array.shape = std::move(shape);
  array.f32 = std::move(values);
  writeNpy(dir.file(name), array);
  return dir.file(name);
}

// Writes an int32 array of the given shape as dir/name and returns its path.
inline std::string writeInts(const TempDir& dir, const std::string& name,
                             std::vector<int64_t> shape, std::vector<int32_t> values) {
  NpyArray array;
  array.dtype = NpyDType::Int32;
  array.shape = std::move(shape);
  array.i32 = std::move(values);
  writeNpy(dir.file(name), array);
  return dir.file(name);
}

// Writes the layer's data as x.npy (C, H, W), w.npy (M, C, K, K) and b.npy (M) and returns
// the three paths in that order.
inline std::vector<std::string> writeLayerInputs(const TempDir& dir, const ConvLayer& layer,
                                                 const ConvLayerData& data) {
  return {writeFloats(dir, "x.npy", {layer.C, layer.H, layer.W}, data.x),
          writeFloats(dir, "w.npy", {layer.M, layer.C, layer.K, layer.K}, data.w),
          writeFloats(dir, "b.npy", {layer.M}, data.b)};
}

// The layer as `weft run --layer` takes it: "C,H,W,M,K,stride,pad".
inline std::string layerSpec(const ConvLayer& l) {
  return std::to_string(l.C) + "," + std::to_string(l.H) + "," + std::to_string(l.W) + "," +
         std::to_string(l.M) + "," + std::to_string(l.K) + "," + std::to_string(l.stride) + "," +
         std::to_string(l.pad);
}

}  // namespace weft::testing
