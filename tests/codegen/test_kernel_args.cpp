// Kernel argument lists (codegen/kernel_text.cpp, KernelPlan::args): a kernel takes exactly the
// buffers its text reads or writes. A buffer the kernel's views could reach but the kernel never
// touches (the other component of a zip, an array bound by let and read only by another
// kernel) is not an argument: otherwise an input only a preparation kernel reads, such as a
// layer's weights once re-laid out, would stay an argument of the per-inference kernels and
// could never be released. Checked on small programs written for it (a zip read through one
// component, a let-bound re-layout read by a second kernel), on the examples and on random
// programs (tests/support/random_program.h): for every kernel, the buffer arguments are the
// OpenCL parameters in order, each one named in the kernel's body, and no other buffer of the
// program is named there. CompiledProgram::inferenceBuffers / inferenceBytes are checked on the
// re-layout program (the vector family's shape in miniature; the family itself is checked in
// tests/explore/test_inference_memory.cpp, which may link the rewrite library).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/generated_random_programs.h"

using namespace weft;

namespace {

CompiledProgram compileText(const std::string& text, const ArithBinding& sizes = {}) {
  Program program = parseProgram(text, "test.weft");
  CodegenOptions options;
  options.specialize = sizes;
  return compileToOpenCL(program.definitions.back(), options);
}

struct KernelText {
  std::vector<std::string> parameterNames;  // the last word of each OpenCL parameter
  std::string body;
};

// The parameters and body of kernel `name` in the program's source.
KernelText kernelText(const std::string& source, const std::string& name) {
  const std::string head = "kernel void " + name + "(";
  const size_t start = source.find(head);
  REQUIRE_MESSAGE(start != std::string::npos, "no kernel " << name << " in\n" << source);
  const size_t close = source.find(") {\n", start);
  REQUIRE(close != std::string::npos);
  size_t end = source.find("\nkernel void ", close);
  if (end == std::string::npos) end = source.size();
  KernelText out;
  out.body = source.substr(close + 4, end - close - 4);
  const std::string list = source.substr(start + head.size(), close - start - head.size());
  size_t from = 0;
  while (from <= list.size() && !list.empty()) {
    size_t comma = list.find(',', from);
    if (comma == std::string::npos) comma = list.size();
    std::string parameter = list.substr(from, comma - from);
    while (!parameter.empty() && std::isspace(static_cast<unsigned char>(parameter.back()))) {
      parameter.pop_back();
    }
    size_t word = parameter.size();
    while (word > 0 && (std::isalnum(static_cast<unsigned char>(parameter[word - 1])) ||
                        parameter[word - 1] == '_')) {
      --word;
    }
    out.parameterNames.push_back(parameter.substr(word));
    from = comma + 1;
  }
  return out;
}

std::set<std::string> identifiers(const std::string& text) {
  std::set<std::string> out;
  for (size_t i = 0; i < text.size();) {
    auto word = [&](size_t at) {
      return std::isalnum(static_cast<unsigned char>(text[at])) || text[at] == '_';
    };
    if (!word(i)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && word(end)) ++end;
    out.insert(text.substr(i, end - i));
    i = end;
  }
  return out;
}

// Every kernel's buffer arguments are its OpenCL parameters (in order), each named in its body,
// and no other buffer of the program is named in the body.
void checkArgumentsMatchText(const CompiledProgram& program) {
  for (const KernelPlan& kernel : program.kernels) {
    CAPTURE(kernel.name);
    const KernelText text = kernelText(program.source, kernel.name);
    REQUIRE(text.parameterNames.size() == kernel.args.size());
    const std::set<std::string> named = identifiers(text.body);
    std::set<int> arguments;
    for (size_t a = 0; a < kernel.args.size(); ++a) {
      const KernelArg& arg = kernel.args[a];
      if (arg.kind != KernelArg::Kind::Buffer) continue;
      const std::string& name = program.buffers.at(static_cast<size_t>(arg.buffer)).name;
      CHECK(text.parameterNames[a] == name);
      CHECK_MESSAGE(named.count(name) == 1, "argument " << name << " is not used by the body");
      arguments.insert(arg.buffer);
    }
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      if (arguments.count(static_cast<int>(b))) continue;
      CHECK_MESSAGE(named.count(program.buffers[b].name) == 0,
                    "the body names " << program.buffers[b].name << ", not an argument");
    }
  }
}

std::vector<std::string> bufferArguments(const CompiledProgram& program, size_t kernel) {
  std::vector<std::string> names;
  for (const KernelArg& arg : program.kernels.at(kernel).args) {
    if (arg.kind == KernelArg::Kind::Buffer) {
      names.push_back(program.buffers.at(static_cast<size_t>(arg.buffer)).name);
    }
  }
  return names;
}

int bufferIndex(const CompiledProgram& program, const std::string& name) {
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    if (program.buffers[b].name == name) return static_cast<int>(b);
  }
  FAIL("no buffer " << name);
  return -1;
}

// A zip of two inputs read through its second component only.
const char* kZipOneComponent = R"(
def scaleBiases(weights: [[float]K]N, biases: [float]N): [float]N =
  mapGlb(0, p -> p._1 * 2.0f, zip(weights, biases))
)";

// The vector family's shape in miniature: the weights re-laid out (transposed) by a first
// kernel that maps over zip(weights, biases) and reads only the weights; a second kernel reads
// the biases, the input and the re-laid weights — from the same zip — never the original
// weights.
const char* kRelayout = R"(
def dense(weights: [[float]K]N, biases: [float]N, input: [float]K): [float]N =
  let(relaid -> join(mapGlb(0,
        q -> reduceSeq(q._0._1, (acc, p) -> acc + p._0 * p._1, zip(q._1, input)),
        zip(zip(weights, biases), transpose(relaid)))),
      mapGlb(0, column -> mapSeq(x -> id(x), column),
        transpose(map(p -> p._0, zip(weights, biases)))))
)";

}  // namespace

TEST_CASE("a kernel reading one component of a zip takes only that component's buffer") {
  const CompiledProgram program = compileText(kZipOneComponent, {{"K", 3}, {"N", 8}});
  CAPTURE(program.source);
  REQUIRE(program.kernels.size() == 1u);
  CHECK(bufferArguments(program, 0) == std::vector<std::string>{"in_biases", "out"});
  checkArgumentsMatchText(program);
}

TEST_CASE("a re-layout kernel and the kernel reading its result take only what they use") {
  for (const bool specialised : {true, false}) {
    CAPTURE(specialised);
    const ArithBinding sizes = {{"K", 5}, {"N", 8}};
    const CompiledProgram program =
        compileText(kRelayout, specialised ? sizes : ArithBinding{});
    CAPTURE(program.source);
    REQUIRE(program.kernels.size() == 2u);
    const std::vector<std::string> relayout = bufferArguments(program, 0);
    const std::vector<std::string> use = bufferArguments(program, 1);
    // The re-layout reads the weights only; the second kernel never the original weights.
    CHECK(std::find(relayout.begin(), relayout.end(), "in_weights") != relayout.end());
    CHECK(std::find(relayout.begin(), relayout.end(), "in_biases") == relayout.end());
    CHECK(std::find(relayout.begin(), relayout.end(), "in_input") == relayout.end());
    CHECK(std::find(use.begin(), use.end(), "in_weights") == use.end());
    CHECK(std::find(use.begin(), use.end(), "in_biases") != use.end());
    CHECK(std::find(use.begin(), use.end(), "in_input") != use.end());
    CHECK(std::find(use.begin(), use.end(), "out") != use.end());
    checkArgumentsMatchText(program);

    // Weights and biases constant: the re-layout is preparation, and only the weights may be
    // released once prepared (the biases are read at every inference).
    const std::set<int> constant = {0, 1};
    CHECK(program.preparationKernels(constant) == std::vector<bool>{true, false});
    const std::vector<bool> kept = program.inferenceBuffers(constant);
    const int weights = bufferIndex(program, "in_weights");
    REQUIRE(kept.size() == program.buffers.size());
    for (size_t b = 0; b < program.buffers.size(); ++b) {
      CAPTURE(program.buffers[b].name);
      CHECK(kept[b] == (static_cast<int>(b) != weights));
    }
    const int64_t all = program.globalBytes(sizes);
    const int64_t weightBytes = evaluate(program.buffers[weights].elementCount, sizes) * 4;
    CHECK(weightBytes == 5 * 8 * 4);
    CHECK(program.inferenceBytes(sizes, constant) == all - weightBytes);
    // Nothing constant, or only the input: every buffer stays (the input is read at inference).
    CHECK(program.inferenceBytes(sizes, {}) == all);
    CHECK(program.inferenceBytes(sizes, {2}) == all);
    // Only the weights constant: still the re-layout is preparation and they may go.
    CHECK(program.inferenceBytes(sizes, {0}) == all - weightBytes);
  }
}

TEST_CASE("the examples' kernels take exactly the buffers they name") {
  const ArithBinding sizes = {{"N", 16}, {"M", 8}, {"K", 3}, {"C", 2}, {"H", 6},
                              {"W", 6},  {"P", 1}, {"S", 1}};
  int programs = 0;
  for (const auto& entry : std::filesystem::directory_iterator("examples")) {
    if (entry.path().extension() != ".weft") continue;
    const Program program = parseFile(entry.path().string());
    for (const Definition& definition : program.definitions) {
      CAPTURE(entry.path().string());
      CAPTURE(definition.name);
      ArithBinding used;
      for (const auto& [name, value] : sizes) used[name] = value;
      CompiledProgram compiled;
      try {
        CodegenOptions options;
        options.specialize = used;
        compiled = compileToOpenCL(definition, options);
      } catch (const std::exception& e) {
        continue;  // a definition the default lowering cannot map: not this test's subject
      }
      checkArgumentsMatchText(compiled);
      ++programs;
    }
  }
  CHECK(programs >= 4);
}

TEST_CASE("random programs' kernels take exactly the buffers they name") {
  const int generated = testing::forEachGeneratedRandomProgram(300, checkArgumentsMatchText);
  MESSAGE(generated << " of 300 random programs generated");
  CHECK(generated >= 100);
}
