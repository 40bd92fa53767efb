// What the tests that run the drop-in example (examples/dropin) against `weft emit` exports
// share: writing a layer's data as the emitted programs read it (Listing 3's layouts, the
// transposes the emitted README describes), configuring and building the example with CMake for
// one export (one build folder serves several exports: each call re-configures it with the
// export's folder and prefix, which is quick once the compiler checks are cached), running it on
// w.npy, b.npy, x.npy and comparing y.npy with the independent reference convolution of
// tests/support/conv_layer_reference.h.
//
// Header-only (tests/support has no library); needs doctest for REQUIRE/CHECK. Run from the
// source folder (CTest's working directory): the example is examples/dropin.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "workloads/conv/conv_layer.h"
#include "ir/npy.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/export_check.h"
#include "tests/support/run_weft.h"

namespace weft::testing {

// The layer's data (PyTorch's layouts in `data`) written to dir/w.npy (M, K, K, C),
// dir/b.npy (M,) and dir/x.npy (H, W, C): the order of the emitted run functions' inputs.
inline void writeListing3Inputs(const ConvLayer& l, const ConvLayerData& data,
                                const std::filesystem::path& dir) {
  NpyArray weights{NpyDType::Float32, {l.M, l.K, l.K, l.C}, {}, {}};
  for (int64_t m = 0; m < l.M; ++m)
    for (int64_t ky = 0; ky < l.K; ++ky)
      for (int64_t kx = 0; kx < l.K; ++kx)
        for (int64_t c = 0; c < l.C; ++c)
          weights.f32.push_back(data.w[static_cast<size_t>(((m * l.C + c) * l.K + ky) * l.K + kx)]);
  NpyArray biases{NpyDType::Float32, {l.M}, data.b, {}};
  NpyArray input{NpyDType::Float32, {l.H, l.W, l.C}, {}, {}};
  for (int64_t y = 0; y < l.H; ++y)
    for (int64_t x = 0; x < l.W; ++x)
      for (int64_t c = 0; c < l.C; ++c)
        input.f32.push_back(data.x[static_cast<size_t>((c * l.H + y) * l.W + x)]);
  writeNpy((dir / "w.npy").string(), weights);
  writeNpy((dir / "b.npy").string(), biases);
  writeNpy((dir / "x.npy").string(), input);
}

// Configures `build` for the export in `emitted` whose files are named `prefix` (Ninja when
// installed, chosen on the first configure) and builds the example; fails the test with CMake's
// output when either step fails.
inline void buildDropinExample(const std::filesystem::path& emitted, const std::string& prefix,
                               const std::filesystem::path& build) {
  const std::filesystem::path log = build.parent_path() / (build.filename().string() + ".log");
  std::string generator;
  if (!std::filesystem::exists(build / "CMakeCache.txt") && haveCompiler("ninja")) {
    generator = " -G Ninja";
  }
  REQUIRE_MESSAGE(runLogged("cmake -S examples/dropin -B " + shellQuote(build.string()) +
                                generator + " -DWEFT_DROPIN_DIR=" + shellQuote(emitted.string()) +
                                " -DWEFT_DROPIN_PREFIX=" + shellQuote(prefix),
                            log) == 0,
                  readTextFile(log));
  REQUIRE_MESSAGE(runLogged("cmake --build " + shellQuote(build.string()), log) == 0,
                  readTextFile(log));
}

struct DropinRun {
  int exitCode = -1;
  std::string output;  // stdout and stderr
};

// Runs the built example on data/{w,b,x}.npy writing data/y.npy (removed first), with `options`
// (shell text, e.g. "--repeat 2") before the files.
inline DropinRun runDropinExample(const std::filesystem::path& build,
                                  const std::filesystem::path& data, const std::string& options) {
  const std::filesystem::path log = build.parent_path() / (build.filename().string() + ".run.log");
  std::filesystem::remove(data / "y.npy");
  DropinRun run;
  run.exitCode = runLogged(
      shellQuote((build / "dropin").string()) + " " + options + " " +
          shellQuote((data / "w.npy").string()) + " " + shellQuote((data / "b.npy").string()) +
          " " + shellQuote((data / "x.npy").string()) + " " + shellQuote((data / "y.npy").string()),
      log);
  run.output = readTextFile(log);
  return run;
}

// Checks data/y.npy (written by runDropinExample) against the reference convolution.
inline void checkDropinOutput(const std::filesystem::path& data, const ConvLayer& layer,
                              const ConvLayerData& values) {
  NpyArray y = readNpy((data / "y.npy").string());
  CHECK(y.shape == std::vector<int64_t>{layer.M, layer.outH(), layer.outW()});
  ConvMismatches mismatches = compareWithReference(layer, values, y.f32);
  CHECK_MESSAGE(mismatches.count == 0, mismatches.first);
}

}  // namespace weft::testing
