// End-to-end tests of `weft emit` that need no OpenCL device: the files written for a layer
// point and for a point of a program from a file, what their comments and manifest say, the
// emitted C compiled warning-free as C99 by gcc and clang (when installed) and as C++ by g++,
// and the errors for bad input (unknown layer, missing values, unknown names, a point that
// violates a constraint, a local size of 0, one that does not divide the global size of a kernel
// that cannot be launched in parts, --pick without --db, unknown constant inputs, a vector
// structure the layer does not have); a local size that does not divide, launched in parts.
// The constant inputs: a layer's weights and biases by default, whose register-blocked vector
// variant has its weight re-layout kernel in PREFIX_prepare; --constant-inputs for a file. The
// drop-in example running on PoCL is tests/cli/opencl_emit.cpp (and opencl_dropin_explored.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

const char* kLayer = "8,16,16,8,3,1,1";
const char* kPrefix = "weft_conv_8_16_16_8_3_1_1";
// A valid conv-direct point of kLayer (weft space --layer 8,16,16,8,3,1,1 --vector-width 4
// --unroll 1 --device-profile none --samples 1).
const char* kVectorPoint = "v=4,unroll=1,coalesce=0,kappa=4,omega=8,rho=8,sigma=24,theta=14";
const char* kScalarPoint = "v=1,unroll=0,coalesce=0,kappa=4,omega=4,rho=0,sigma=2,theta=10";

const char* kChunked =
    "def g[1 <= kappa <= 4096](xs: [float]N): [float]N =\n"
    "  join(map(chunk -> map(x -> x * 2.0f, chunk), split(kappa, xs)))\n";

int compile(const std::string& command, const fs::path& log) {
  int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
  return status == -1 ? -1 : WEXITSTATUS(status);
}

bool haveCompiler(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

// Compiles the emitted .c with gcc and clang (C99) and g++ (C++17), all warnings as errors.
void checkCompiles(const fs::path& folder, const std::string& prefix) {
  const fs::path log = folder / "compile.log";
  std::string flags = " -Wall -Wextra -Werror -I'" + folder.string() + "' -c '" +
                      (folder / (prefix + ".c")).string() + "' -o '" +
                      (folder / "object.o").string() + "'";
  REQUIRE(haveCompiler("gcc"));
  CHECK_MESSAGE(compile("gcc -std=c99" + flags, log) == 0, readTextFile(log));
  if (haveCompiler("clang")) {
    CHECK_MESSAGE(compile("clang -std=c99" + flags, log) == 0, readTextFile(log));
  }
  REQUIRE(haveCompiler("g++"));
  CHECK_MESSAGE(compile("g++ -x c++ -std=c++17" + flags, log) == 0, readTextFile(log));
}

}  // namespace

TEST_CASE("weft emit --layer --params writes kernels, host code, manifest, CMake and README") {
  TempDir dir("weft_cli_emit");
  for (const char* point : {kScalarPoint, kVectorPoint}) {
    CAPTURE(point);
    fs::path out = dir.path / (std::string(point).substr(0, 3) == "v=1" ? "scalar" : "vector");
    CommandResult result =
        runWeft({"emit", "--layer", kLayer, "--params", point, "--out", out.string()});
    REQUIRE_MESSAGE(result.exitCode == 0, result.output);
    CHECK(contains(result.output, "4 kernel(s)"));
    CHECK(contains(result.output, "in " + std::string(kPrefix) + "_prepare"));
    for (const char* ext : {".cl", ".h", ".c", ".json", ".cmake"}) {
      CHECK(fs::exists(out / (std::string(kPrefix) + ext)));
    }
    CHECK(fs::exists(out / "README.md"));

    std::string cl = readTextFile(out / (std::string(kPrefix) + ".cl"));
    // Every value of the point is listed, under the names it was given by.
    std::string listed = cl.substr(cl.find("parameters: "));
    listed = listed.substr(0, listed.find('\n'));
    std::string expected = point;
    size_t start = 0;
    while (start < expected.size()) {
      size_t end = expected.find(',', start);
      std::string item = expected.substr(start, end == std::string::npos ? end : end - start);
      CHECK_MESSAGE(contains(listed, item), listed);
      start = end == std::string::npos ? expected.size() : end + 1;
    }
    CHECK(contains(cl, "not tuned"));
    CHECK(contains(cl, "compiler: weft "));
    CHECK(contains(cl, "8x16x16 -> 8x16x16"));
    CHECK(contains(cl, "kernel void"));

    auto manifest = nlohmann::json::parse(readTextFile(out / (std::string(kPrefix) + ".json")));
    CHECK(manifest["kernels"].size() == 4);
    CHECK(manifest["runArguments"] == nlohmann::json({"weights", "biases", "input"}));
    CHECK(manifest["buffers"][0]["shape"] == nlohmann::json({8, 3, 3, 8}));  // (M, K, K, C)
    CHECK(manifest["buffers"][2]["shape"] == nlohmann::json({16, 16, 8}));   // (H, W, C)
    CHECK(manifest["buffers"][3]["role"] == "output");
    CHECK(manifest["buffers"][3]["shape"] == nlohmann::json({8, 16, 16}));
    CHECK(manifest["parameters"]["v"] == (std::string(point).substr(0, 3) == "v=1" ? 1 : 4));
    CHECK(manifest["constantInputs"] == nlohmann::json({"weights", "biases"}));
    for (const auto& kernel : manifest["kernels"]) {
      for (const auto& size : kernel["globalSize"]) CHECK(size.get<int64_t>() > 0);
      if (!kernel["localSize"].is_null()) {
        for (size_t d = 0; d < kernel["localSize"].size(); ++d) {
          CHECK(kernel["globalSize"][d].get<int64_t>() % kernel["localSize"][d].get<int64_t>() ==
                0);
        }
      }
    }
    checkCompiles(out, kPrefix);
  }
}

TEST_CASE("a register-blocked vector point re-lays the weights out in PREFIX_prepare") {
  TempDir dir("weft_cli_emit_vector");
  fs::path out = dir.path / "out";
  CommandResult result = runWeft({"emit", "--layer", kLayer, "--params",
                                  "vector_kappa=4,vector_sigma=8,rows=4", "--out", out.string()});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  CHECK(contains(result.output, "conv-register-blocked-vector"));
  CHECK(contains(result.output, "3 kernel(s) (1 in " + std::string(kPrefix) + "_prepare)"));
  auto manifest = nlohmann::json::parse(readTextFile(out / (std::string(kPrefix) + ".json")));
  CHECK(manifest["parameters"]["vector_kappa"] == 4);
  REQUIRE(manifest["kernels"].size() == 3);
  // k0 reads only the weights (and biases) and writes the re-laid-out weights: M/kappa groups of
  // C x K x K x kappa floats.
  CHECK(manifest["kernels"][0]["preparation"] == true);
  CHECK(manifest["kernels"][1]["preparation"] == false);
  CHECK(manifest["kernels"][2]["preparation"] == false);
  REQUIRE(manifest["preparation"]["buffers"].size() == 1);
  std::string relaid = manifest["preparation"]["buffers"][0];
  for (const auto& buffer : manifest["buffers"]) {
    if (buffer["name"] == relaid) CHECK(buffer["elements"] == 8 * 8 * 3 * 3);
    CHECK(buffer["prepared"] == (buffer["name"] == relaid));
  }
  std::string header = readTextFile(out / (std::string(kPrefix) + ".h"));
  CHECK(contains(header,
                 "_prepare(weft_conv_8_16_16_8_3_1_1_t* handle, cl_command_queue queue, "
                 "cl_mem weights, cl_mem biases,\n    cl_event* event_out);"));
  CHECK(contains(header, "#define WEFT_CONV_8_16_16_8_3_1_1_PREPARE_KERNEL_COUNT 1"));
  checkCompiles(out, kPrefix);

  // --constant-inputs none: no preparation, every kernel in the run.
  fs::path none = dir.path / "none";
  result = runWeft({"emit", "--layer", kLayer, "--params", "vector_kappa=4,vector_sigma=8,rows=4",
                    "--constant-inputs", "none", "--out", none.string()});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  auto plain = nlohmann::json::parse(readTextFile(none / (std::string(kPrefix) + ".json")));
  CHECK(plain["constantInputs"].empty());
  CHECK(plain["preparation"]["kernels"].empty());
  checkCompiles(none, kPrefix);
}

TEST_CASE("a split register-blocked vector point adds its partial sums in a final kernel") {
  TempDir dir("weft_cli_emit_split");
  fs::path out = dir.path / "out";
  CommandResult result =
      runWeft({"emit", "--layer", kLayer, "--params",
               "vector_kappa=4,vector_sigma=8,rows=4,vector_interleave=1,vector_channels_first=1,"
               "vector_split=2",
               "--out", out.string()});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  // Re-layout (prepare), pad, partial sums, final sum.
  CHECK(contains(result.output, "4 kernel(s) (1 in " + std::string(kPrefix) + "_prepare)"));
  auto manifest = nlohmann::json::parse(readTextFile(out / (std::string(kPrefix) + ".json")));
  CHECK(manifest["parameters"]["vector_split"] == 2);
  checkCompiles(out, kPrefix);
}

TEST_CASE("weft emit FILE --size --params exports a program's point; --name sets the prefix") {
  TempDir dir("weft_cli_emit_file");
  std::string file = dir.write("chunked.weft", kChunked);
  fs::path out = dir.path / "out";
  CommandResult result = runWeft({"emit", file, "--size", "N=64", "--params", "kappa=8", "--out",
                                  out.string(), "--name", "chunked_double"});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  std::string header = readTextFile(out / "chunked_double.h");
  CHECK(contains(header, "parameters: kappa=8"));
  CHECK(contains(header, "sizes:    N=64"));
  CHECK(contains(header, "cl_mem xs,"));
  CHECK(contains(header, "#define CHUNKED_DOUBLE_BYTES_XS ((size_t)256u)"));
  CHECK(contains(header,
                 "cl_int chunked_double_prepare(chunked_double_t* handle, "
                 "cl_command_queue queue,\n    cl_event* event_out);"));  // none by default
  checkCompiles(out, "chunked_double");

  // xs constant: the one kernel also writes the output, so there is still nothing to prepare,
  // but the prepare function takes xs.
  fs::path constant = dir.path / "constant";
  result = runWeft({"emit", file, "--size", "N=64", "--params", "kappa=8", "--constant-inputs",
                    "xs", "--out", constant.string()});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  auto manifest = nlohmann::json::parse(readTextFile(constant / "weft_g.json"));
  CHECK(manifest["constantInputs"] == nlohmann::json({"xs"}));
  CHECK(manifest["preparation"]["kernels"].empty());
  CHECK(contains(readTextFile(constant / "weft_g.h"), "cl_mem xs,\n    cl_event* event_out);"));
  checkCompiles(constant, "weft_g");
}

TEST_CASE("a local size that does not divide launches the kernel in parts; the C compiles") {
  // conv-direct's first kernel reads its place only from get_global_id: local sizes 4 x 4 over
  // its 18 x 18 work-items are whole work-groups and the rest, launched one after another.
  TempDir dir("weft_cli_emit_parts");
  fs::path out = dir.path / "out";
  CommandResult result =
      runWeft({"emit", "--layer", kLayer, "--params",
               std::string(kScalarPoint) + ",local_k0_d0=4,local_k0_d1=4", "--out", out.string()});
  REQUIRE_MESSAGE(result.exitCode == 0, result.output);
  const std::string host = readTextFile(out / (std::string(kPrefix) + ".c"));
  CHECK(contains(host, "launched in 4 parts"));
  CHECK(contains(host,
                 "static const size_t offsets[4][3] = {{0u, 0u, 0u}, {16u, 0u, 0u}, "
                 "{0u, 16u, 0u}, {16u, 16u, 0u}};"));
  auto manifest = nlohmann::json::parse(readTextFile(out / (std::string(kPrefix) + ".json")));
  CHECK(manifest["kernels"][0]["launchParts"].size() == 4);
  CHECK_FALSE(manifest["kernels"][1].contains("launchParts"));
  checkCompiles(out, kPrefix);
}

TEST_CASE("weft emit rejects bad input with messages that name the problem") {
  TempDir dir("weft_cli_emit_errors");
  std::string out = (dir.path / "out").string();
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> said;
  };
  std::string file = dir.write("chunked.weft", kChunked);
  const std::vector<Case> cases = {
      {{"--layer", "vgg16:3", "--params", kScalarPoint}, {"vgg16:3", "0, 2, 5"}},
      {{"--layer", "1,2,3", "--params", kScalarPoint}, {"--layer 1,2,3"}},
      {{"--layer", kLayer}, {"--params"}},
      {{"--layer", kLayer, "--params", "v=1,unroll=0,coalesce=0,kappa=4,omega=4,rho=0,sigma=2"},
       {"no value for theta"}},
      {{"--layer", kLayer, "--params", "coalesce=0,kappa=4,omega=4,rho=0,sigma=2,theta=10"},
       {"no value for v, unroll"}},
      {{"--layer", kLayer, "--params", "v=3,unroll=0"}, {"v=3", "vector width"}},
      {{"--layer", kLayer, "--params", std::string(kScalarPoint) + ",zeta=2"},
       {"no parameter zeta", "theta in [3, 36]"}},
      {{"--layer", kLayer, "--params",
        "v=1,unroll=0,coalesce=0,kappa=3,omega=4,rho=0,sigma=2,theta=10"},
       {"not a valid variant", "split by kappa4 requires", "kappa4=3"}},
      {{"--layer", kLayer, "--params",
        "v=1,unroll=0,coalesce=0,kappa=4,omega=4,rho=0,sigma=2,theta=99"},
       {"not a valid variant", "theta2"}},
      {{"--layer", kLayer, "--params", std::string(kScalarPoint) + ",local_k0_d0=0,local_k0_d1=4"},
       {"local_k0_d0=0", "a local size is at least 1"}},
      {{"--layer", kLayer, "--params", "v=1,unroll=zero"}, {"unroll=zero", "NAME=INTEGER"}},
      {{"--layer", kLayer, "--pick", "fastest"}, {"--pick needs --db"}},
      {{"--layer", kLayer, "--params", "vector_kappa=4"}, {"needs both vector_kappa and"}},
      {{"--layer", kLayer, "--params", "vector_kappa=16,vector_sigma=8,rows=1"},
       {"vector_kappa=16", "not a register-blocked vector structure", "M=8"}},
      {{"--layer", kLayer, "--params", "vector_kappa=4,vector_sigma=8"}, {"no value for rows"}},
      {{"--layer", kLayer, "--params", "tiled_rk=4"}, {"no value for tiled_rp"}},
      {{"--layer", kLayer, "--params", "tiled_rk=3,tiled_rp=4"},
       {"tiled_rk=3", "not a register tile", "M=8"}},
      {{"--layer", kLayer, "--params", "tiled_rk=4,tiled_rp=4,tiled_staged=2"},
       {"tiled_staged=2", "not 0 or 1"}},
      {{"--layer", kLayer, "--params", "tiled_rk=4,tiled_rp=4,tk=8,th=4,tw=4"},
       {"no value for tc"}},
      {{"--layer", kLayer, "--params", "vector_kappa=4,vector_sigma=8,rows=4,vector_split=3"},
       {"vector_split=3", "must divide the input channels C=8"}},
      {{"--layer", kLayer, "--params", kScalarPoint, "--constant-inputs", "weights,bias"},
       {"'bias' is not an input", "weights, biases, input"}},
      {{file, "--size", "N=64", "--params", "kappa=8", "--constant-inputs", "xs,xs"},
       {"xs is given twice"}},
      {{file, "--size", "N=64"}, {"no value for kappa"}},
      {{file, "--size", "N=64", "--params", "kappa=7"},
       {"not a valid variant", "split by kappa requires"}},
      {{file, "--size", "N=64", "--params", "kappa=8,lambda=2"},
       {"no size variable or parameter lambda"}},
      // A clamped stencil's kernel bounds its work-group by get_group_id, so it cannot be
      // launched in parts: its local size must divide.
      {{"examples/stencil2d.weft", "--size", "W=13", "--size", "H=11", "--params",
        "local_k0_d0=4,local_k0_d1=1"},
       {"local_k0_d0=4", "must divide the global size 13"}},
      {{}, {"needs a weft FILE"}},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"emit"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    args.insert(args.end(), {"--out", out});
    CommandResult result = runWeft(args);
    CAPTURE(result.output);
    CHECK(result.exitCode == 1);
    for (const std::string& part : c.said) CHECK_MESSAGE(contains(result.output, part), part);
    CHECK_FALSE(fs::exists(dir.path / "out"));  // nothing is written on an error
  }
}
