// The hand-written low-level programs of examples/lowlevel/ compiled as written (no lowering)
// and run on the default OpenCL device (PoCL on weft's build machines) through
// host/program_runner.h, against the reference interpreter on the same random inputs within
// 1e-4 absolute + 1e-4 relative: the paper's four-kernel convolution (Listing 4, fixed
// tuning parameters; also against examples/conv.weft) and the low-level stencil of Listing 1
// (sizes left symbolic and specialised), and the line-buffered unsharp mask against
// examples/pipelines/unsharp.weft (sizes specialised: its ring is a private array). Two variants of the convolution that the paper's
// exploration also produces are derived from the file's text and run the same way: the
// partial convolution's reduction and its maps over κ and σ unrolled (section 5.1,
// Unrolling), and scalar code (v = 1: no asVector, a product instead of dot). Label opencl:
// skipped, never passed, where no OpenCL platform exists. tests/codegen/test_listing4.cpp
// checks the same programs without a device.
#include <doctest/doctest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/random_values.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

host::ProgramCache& cache() {
  static host::ProgramCache programs;
  return programs;
}

std::vector<Value> randomInputs(const Definition& definition, const ArithBinding& sizes,
                                std::mt19937_64& rng, bool realFloats) {
  std::vector<Value> inputs;
  for (const Expr& param : definition.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), sizes, rng, {realFloats}));
  }
  return inputs;
}

host::RunResult run(const CompiledProgram& program, const std::vector<Value>& inputs,
                    const ArithBinding& sizes) {
  host::RunOptions options;
  options.cache = &cache();
  return host::runProgram(context(), program, inputs, sizes, options);
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The text with each `from` replaced by its `to` (every occurrence; each must occur).
std::string variantOf(std::string text,
                      const std::vector<std::pair<std::string, std::string>>& replacements) {
  for (const auto& [from, to] : replacements) {
    CAPTURE(from);
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    for (; at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }
  return text;
}

// Runs a Listing 4 convolution on OpenCL and compares with the interpreter (the same program)
// and with examples/conv.weft (P = 1, S = 1).
void checkConvolution(const Definition& lowLevel, std::mt19937_64& rng) {
  const Definition highLevel = parseFile("examples/conv.weft").definitions.back();
  const CompiledProgram program = generateOpenCL(lowLevel);
  REQUIRE(program.kernels.size() == 4);
  CAPTURE(program.source);
  for (bool realFloats : {false, true, true}) {
    CAPTURE(realFloats);
    std::vector<Value> inputs = randomInputs(lowLevel, {}, rng, realFloats);
    const Value expected = interpret(lowLevel, inputs, {});
    host::RunResult result = run(program, inputs, {});
    CHECK_MESSAGE(approximatelyEqual(result.output, expected, 1e-4, 1e-4),
                  "max difference " << maxAbsDifference(result.output, expected));
    // The same against the high-level layer, which the interpreter test shows equal.
    const Value reference =
        interpret(highLevel, inputs, bindSizes(highLevel, inputs, {{"P", 1}, {"S", 1}}));
    CHECK_MESSAGE(approximatelyEqual(result.output, reference, 1e-4, 1e-4),
                  "max difference from conv.weft " << maxAbsDifference(result.output, reference));
    // Every stage ran and was timed.
    REQUIRE(result.kernels.size() == 4);
    for (const host::KernelTime& kernel : result.kernels) {
      CAPTURE(kernel.name);
      CHECK(kernel.nanoseconds > 0);
    }
  }
}

const char* kListing4File = "examples/lowlevel/conv_listing4.weft";

}  // namespace

TEST_CASE("Listing 4's four kernels on OpenCL match the interpreter and examples/conv.weft") {
  std::mt19937_64 rng(11);
  checkConvolution(parseFile(kListing4File).definitions[0], rng);
}

TEST_CASE("Listing 4 unrolled (reduceSeqUnroll, mapSeqUnroll over κ and σ) on OpenCL") {
  std::string text =
      variantOf(readText(kListing4File), {{"join(reduceSeq(", "join(reduceSeqUnroll("},
                                          {"mapSeq(kernel ->", "mapSeqUnroll(kernel ->"},
                                          {"mapSeq(window ->", "mapSeqUnroll(window ->"}});
  const Definition unrolled = parseProgram(text, "unrolled.weft").definitions[0];
  CHECK(generateOpenCL(unrolled).source.find("// unrolled") != std::string::npos);
  std::mt19937_64 rng(17);
  checkConvolution(unrolled, rng);
}

TEST_CASE("Listing 4 with scalar code (v = 1) on OpenCL") {
  std::string text =
      variantOf(readText(kListing4File),
                {{"map(chunk -> asVector(4, chunk),", "map(chunk -> chunk,"},
                 {"dot(window._1, kernel._1)", "window._1 * kernel._1"},
                 {"toPrivate(v -> vectorize(4, id, v), inputValue)", "toPrivate(id, inputValue)"}});
  const Definition scalar = parseProgram(text, "scalar.weft").definitions[0];
  CHECK(generateOpenCL(scalar).source.find("float4") == std::string::npos);
  std::mt19937_64 rng(19);
  checkConvolution(scalar, rng);
}

TEST_CASE("the low-level stencil (Listing 1) on OpenCL matches the interpreter") {
  const Definition lowLevel = parseFile("examples/lowlevel/stencil2d_wrg.weft").definitions[0];
  const CompiledProgram symbolic = generateOpenCL(lowLevel);
  CAPTURE(symbolic.source);
  std::mt19937_64 rng(13);
  for (ArithBinding sizes : std::vector<ArithBinding>{{{"W", 3}, {"H", 3}},
                                                      {{"W", 16}, {"H", 8}},
                                                      {{"W", 37}, {"H", 5}},
                                                      {{"W", 130}, {"H", 66}}}) {
    CAPTURE(sizes.at("W"));
    CAPTURE(sizes.at("H"));
    std::vector<Value> inputs = randomInputs(lowLevel, sizes, rng, true);
    const ArithBinding bound = bindSizes(lowLevel, inputs);
    const Value expected = interpret(lowLevel, inputs, bound);

    host::RunResult symbolicRun = run(symbolic, inputs, bound);
    CHECK_MESSAGE(
        approximatelyEqual(symbolicRun.output, expected, 1e-4, 1e-4),
        "symbolic sizes: max difference " << maxAbsDifference(symbolicRun.output, expected));

    CodegenOptions options;
    options.specialize = bound;
    const CompiledProgram fixed = generateOpenCL(lowLevel, options);
    CAPTURE(fixed.source);
    CHECK(fixed.openSizes.empty());
    host::RunResult fixedRun = run(fixed, inputs, bound);
    CHECK_MESSAGE(approximatelyEqual(fixedRun.output, expected, 1e-4, 1e-4),
                  "specialised: max difference " << maxAbsDifference(fixedRun.output, expected));
  }
}

TEST_CASE("the line-buffered unsharp mask on OpenCL equals the pipeline's program") {
  // examples/lowlevel/unsharp_line_buffered.weft (strips of 48 rows, float16 vectors) against
  // examples/pipelines/unsharp.weft in the interpreter, at sizes its strips and vectors fit.
  const Definition lowLevel =
      parseFile("examples/lowlevel/unsharp_line_buffered.weft").definitions.back();
  const Definition pipeline = parseFile("examples/pipelines/unsharp.weft").definitions.back();
  std::mt19937_64 rng(31);
  for (ArithBinding sizes : std::vector<ArithBinding>{{{"W", 32}, {"H", 48}, {"C", 1}},
                                                      {{"W", 48}, {"H", 96}, {"C", 2}}}) {
    CAPTURE(sizes.at("W"));
    CAPTURE(sizes.at("H"));
    std::vector<Value> inputs = randomInputs(pipeline, sizes, rng, true);
    const Value expected = interpret(pipeline, inputs, sizes);
    CodegenOptions options;
    options.specialize = sizes;
    const CompiledProgram fixed = generateOpenCL(lowLevel, options);
    CAPTURE(fixed.source);
    host::RunResult fixedRun = run(fixed, inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(fixedRun.output, expected, 1e-4, 1e-4),
                  "max difference " << maxAbsDifference(fixedRun.output, expected));
  }
}
