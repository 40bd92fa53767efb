// End-to-end tests of `weft compile`: the binary ($WEFT_BINARY) compiles the examples and small
// programs written here; the written .cl holds the kernels the summary names, the summary
// gives launch sizes and buffer sizes (symbolic, or numbers once --size specialises), stdout
// mode keeps the output valid OpenCL (the summary as comments), and user errors (bad --size,
// unknown definition, unreadable file, a program the generator cannot map) exit with code 1
// and a message that says what is wrong. No OpenCL device is needed.
#include <doctest/doctest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

// The names of the kernels defined in OpenCL source.
std::vector<std::string> kernelNames(const std::string& source) {
  std::vector<std::string> names;
  std::regex kernel(R"(kernel\s+void\s+(\w+)\s*\()");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kernel);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

}  // namespace

TEST_CASE("weft compile writes the kernels and prints launch and buffer sizes") {
  TempDir dir("weft_cli_compile");
  std::string cl = dir.file("matmul.cl");
  CommandResult result = runWeft({"compile", "examples/matmul.weft", "-o", cl});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  REQUIRE(fs::exists(cl));
  std::string source = dir.read("matmul.cl");
  std::vector<std::string> kernels = kernelNames(source);
  REQUIRE(kernels.size() == 1);
  CHECK(contains(result.output, "matmul: 1 kernel(s)"));
  CHECK(contains(result.output, kernels[0] + ": global N x M"));
  CHECK(contains(result.output, "in_A (input, float): K*M elements"));
  CHECK(contains(result.output, "in_B (input, float): K*N elements"));
  CHECK(contains(result.output, "out (output, float): M*N elements"));
  CHECK(contains(result.output, "size arguments K M N"));
  CHECK(contains(result.output, "OpenCL source written to " + cl));
  // Symbolic sizes are kernel arguments.
  CHECK(contains(source, "int K"));
  CHECK(contains(source, "get_global_id(1)"));
}

TEST_CASE("weft compile --size specialises: numbers in the summary, no size arguments") {
  TempDir dir("weft_cli_compile");
  std::string cl = dir.file("matmul.cl");
  CommandResult result = runWeft({"compile", "examples/matmul.weft", "-o", cl, "--size", "M=4",
                                  "--size", "N=8", "--size", "K=2"});
  INFO(result.output);
  REQUIRE(result.exitCode == 0);
  std::string source = dir.read("matmul.cl");
  std::vector<std::string> kernels = kernelNames(source);
  REQUIRE(kernels.size() == 1);
  CHECK(contains(result.output, "specialised for K=2 M=4 N=8"));
  CHECK(contains(result.output, kernels[0] + ": global 8 x 4"));
  CHECK(contains(result.output, "out (output, float): 32 elements"));
  CHECK(!contains(result.output, "size arguments"));
  CHECK(!contains(source, "int K"));
  // Some sizes fixed, others open.
  CommandResult partly = runWeft({"compile", "examples/matmul.weft", "-o", cl, "--size", "K=3"});
  INFO(partly.output);
  REQUIRE(partly.exitCode == 0);
  CHECK(contains(partly.output, "size arguments M N"));
  CHECK(contains(partly.output, "in_A (input, float): 3*M elements"));
}

TEST_CASE("weft compile prints every example's kernels to stdout as valid OpenCL") {
  for (const char* example : {"examples/conv.weft", "examples/dot.weft", "examples/matmul.weft",
                              "examples/stencil2d.weft"}) {
    CAPTURE(example);
    CommandResult result = runWeft({"compile", example});
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    std::vector<std::string> kernels = kernelNames(result.output);
    REQUIRE(!kernels.empty());
    // The summary follows the source as comments and names every kernel.
    size_t summary = result.output.find("// kernels (in launch order):");
    REQUIRE(summary != std::string::npos);
    for (const std::string& kernel : kernels) {
      CHECK(result.output.find("//   " + kernel + ": global ", summary) != std::string::npos);
    }
    CHECK(result.output.find("// buffers", summary) != std::string::npos);
  }
  // The single work-item kernel of dot and the 3D launch of conv.
  CHECK(contains(runWeft({"compile", "examples/dot.weft"}).output, ": global 1,"));
  CommandResult conv =
      runWeft({"compile", "examples/conv.weft", "--size", "P=1", "--size", "S=1", "--size", "C=3",
               "--size", "H=8", "--size", "W=8", "--size", "M=4", "--size", "K=3"});
  INFO(conv.output);
  CHECK(conv.exitCode == 0);
  CHECK(contains(conv.output, "out (output, float): 256 elements"));
}

TEST_CASE("weft compile --def chooses a definition; --no-lower takes it as written") {
  TempDir dir("weft_cli_compile");
  std::string file = dir.write("two.weft",
                               "def first(x: [float]N) = map(v -> v * 2.0f, x)\n"
                               "def second(x: [[float]N]M) = mapGlb(0, r -> mapSeq(v -> v + "
                               "1.0f, r), x)\n");
  CommandResult first = runWeft({"compile", file, "--def", "first"});
  INFO(first.output);
  REQUIRE(first.exitCode == 0);
  CHECK(contains(first.output, "first: 1 kernel(s)"));
  CHECK(contains(first.output, "get_global_id(0)"));
  // The last definition by default; --no-lower keeps its mapGlb(0) over rows.
  CommandResult second = runWeft({"compile", file, "--no-lower"});
  INFO(second.output);
  REQUIRE(second.exitCode == 0);
  CHECK(contains(second.output, "second: 1 kernel(s)"));
  CHECK(contains(second.output, ": global M,"));
}

TEST_CASE("weft compile reports user errors with exit code 1 and a clear message") {
  TempDir dir("weft_cli_compile");
  std::string file = dir.write("g.weft", "def g(x: [float]N) = map(v -> v + 1.0f, x)\n");

  CommandResult unknownSize = runWeft({"compile", file, "--size", "Q=3"});
  CHECK(unknownSize.exitCode == 1);
  CHECK(contains(unknownSize.output, "--size Q=3: 'g' has no size variable Q (it has: N)"));

  CommandResult badSize = runWeft({"compile", file, "--size", "N=x"});
  CHECK(badSize.exitCode == 1);
  CHECK(contains(badSize.output, "expected NAME=INTEGER"));

  CommandResult noDefinition = runWeft({"compile", file, "--def", "nope"});
  CHECK(noDefinition.exitCode == 1);
  CHECK(contains(noDefinition.output, "no definition named 'nope'; the file defines: g"));

  CommandResult missing = runWeft({"compile", dir.file("missing.weft")});
  CHECK(missing.exitCode == 1);
  CHECK(contains(missing.output, "missing.weft"));

  std::string syntax = dir.write("syntax.weft", "def h(x: [float]N) = map(v -> , x)\n");
  CommandResult parseError = runWeft({"compile", syntax});
  CHECK(parseError.exitCode == 1);
  CHECK(contains(parseError.output, "syntax.weft:1:"));

  // A program the generator cannot map: mapLcl outside any mapWrg, with its location.
  std::string local =
      dir.write("local.weft", "def f(x: [float]N) =\n  mapLcl(0, v -> v + 1.0f, x)\n");
  CommandResult codegenError = runWeft({"compile", local, "--no-lower"});
  INFO(codegenError.output);
  CHECK(codegenError.exitCode == 1);
  CHECK(contains(codegenError.output, "local.weft:2:3"));
  CHECK(contains(codegenError.output, "mapLcl"));
  CHECK(contains(codegenError.output, "mapWrg"));

  // The output file cannot be written.
  CommandResult unwritable = runWeft({"compile", file, "-o", dir.file("no/such/dir/out.cl")});
  CHECK(unwritable.exitCode == 1);
  CHECK(contains(unwritable.output, "cannot write"));
}
