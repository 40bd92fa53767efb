// End-to-end tests of `weft run --backend opencl`: the binary lowers, compiles and runs the
// examples on the default OpenCL device and must write the same .npy result as the
// interpreter (--backend interp) does, within 1e-4; it reports the kernel time and the device;
// a bad --device or --backend is a clear error with exit code 1. Label opencl: skipped where
// no OpenCL platform exists (tests/opencl_main.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/npy.h"
#include "tests/support/run_weft.h"

using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

std::string writeFloats(const TempDir& dir, const std::string& name, std::vector<int64_t> shape,
                        std::mt19937& rng) {
  NpyArray array;
  array.dtype = NpyDType::Float32;
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  array.shape = std::move(shape);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < count; ++i) array.f32.push_back(value(rng));
  writeNpy(dir.file(name), array);
  return dir.file(name);
}

// Runs the file with both backends on the same inputs and compares the .npy results.
void checkBackendsAgree(const std::string& file, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& extra, const TempDir& dir) {
  std::vector<std::string> args = {"run", file, "--in"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<std::string> interp = args, opencl = args;
  interp.insert(interp.end(), {"--out", dir.file("interp.npy")});
  opencl.insert(opencl.end(), {"--out", dir.file("opencl.npy"), "--backend", "opencl"});
  CommandResult reference = runWeft(interp);
  INFO(reference.output);
  REQUIRE(reference.exitCode == 0);
  CommandResult device = runWeft(opencl);
  INFO(device.output);
  REQUIRE(device.exitCode == 0);
  CHECK(contains(device.output, "ms kernel time"));
  CHECK(contains(device.output, "written to " + dir.file("opencl.npy")));
  NpyArray expected = readNpy(dir.file("interp.npy"));
  NpyArray got = readNpy(dir.file("opencl.npy"));
  CHECK(got.shape == expected.shape);
  CHECK(got.dtype == expected.dtype);
  REQUIRE(got.f32.size() == expected.f32.size());
  for (size_t i = 0; i < got.f32.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got.f32[i] - expected.f32[i]) <= 1e-4 + 1e-4 * std::abs(expected.f32[i]));
  }
}

}  // namespace

TEST_CASE("weft run --backend opencl writes what the interpreter writes") {
  TempDir dir("weft_cli_opencl");
  std::mt19937 rng(3);
  SUBCASE("dot") {
    checkBackendsAgree(
        "examples/dot.weft",
        {writeFloats(dir, "a.npy", {100}, rng), writeFloats(dir, "b.npy", {100}, rng)}, {}, dir);
  }
  SUBCASE("matmul") {
    checkBackendsAgree(
        "examples/matmul.weft",
        {writeFloats(dir, "a.npy", {5, 3}, rng), writeFloats(dir, "b.npy", {3, 4}, rng)}, {}, dir);
  }
  SUBCASE("stencil2d on the cpu device") {
    checkBackendsAgree(
        "examples/stencil2d.weft",
        {writeFloats(dir, "w.npy", {3, 3}, rng), writeFloats(dir, "x.npy", {6, 9}, rng)},
        {"--device", "cpu"}, dir);
  }
  SUBCASE("conv with padding 1 and stride 2") {
    // weights [M][K][K][C], biases [M], input [H][W][C]
    checkBackendsAgree(
        "examples/conv.weft",
        {writeFloats(dir, "w.npy", {4, 3, 3, 3}, rng), writeFloats(dir, "b.npy", {4}, rng),
         writeFloats(dir, "x.npy", {8, 8, 3}, rng)},
        {"--size", "P=1", "--size", "S=2"}, dir);
  }
}

TEST_CASE("weft run --backend opencl reports bad devices and backends") {
  TempDir dir("weft_cli_opencl");
  std::mt19937 rng(5);
  std::string a = writeFloats(dir, "a.npy", {4}, rng);
  CommandResult device = runWeft(
      {"run", "examples/dot.weft", "--in", a, a, "--backend", "opencl", "--device", "no-such-dev"});
  CHECK(device.exitCode == 1);
  CHECK(contains(device.output, "no-such-dev"));
  CommandResult backend = runWeft({"run", "examples/dot.weft", "--in", a, a, "--backend", "cuda"});
  CHECK(backend.exitCode != 0);
  CHECK(contains(backend.output, "--backend"));
}
