// The hand-written low-level programs of examples/lowlevel/ in the interpreter and through the
// OpenCL generator (no device needed): the paper's four-stage convolution (section 4.2,
// Listing 4, fixed tuning parameters) and its low-level 2D stencil (Listing 1).
//
// conv_listing4.weft must type-check with no open size or constraint, compute exactly what
// the high-level examples/conv.weft computes with P = 1, S = 1 on the same random inputs (the
// default inputs are multiples of 1/8, so every partial sum is exact in float and the
// different summation order of the chunked reduction cannot hide behind rounding; a second
// run with real-valued inputs compares within a tolerance), and compile to the paper's four
// kernels: pad, partial convolution (work-groups over tiles × kernel groups, work-items over
// window groups × chunks, a private accumulator of κ·σ values), final reduction, crop.
// stencil2d_wrg.weft must equal its high-level form and compile to Listing 2's single kernel.
// Both round-trip through the printer.
// tests/codegen/opencl_listing4.cpp runs both on an OpenCL device.
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/value.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

const char* kListing4File = "examples/lowlevel/conv_listing4.weft";
const char* kStencilFile = "examples/lowlevel/stencil2d_wrg.weft";

std::vector<Value> randomInputs(const Definition& definition, const ArithBinding& sizes,
                                std::mt19937_64& rng, bool realFloats) {
  std::vector<Value> inputs;
  for (const Expr& param : definition.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), sizes, rng, {realFloats}));
  }
  return inputs;
}

// The source text of one kernel: from its "kernel void NAME(" line to the next kernel.
std::string kernelSource(const CompiledProgram& program, const std::string& name) {
  size_t start = program.source.find("kernel void " + name + "(");
  REQUIRE(start != std::string::npos);
  size_t end = program.source.find("kernel void ", start + 1);
  return program.source.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

TEST_CASE("Listing 4's convolution type-checks with every size fixed") {
  Program program = parseFile(kListing4File);
  REQUIRE(program.definitions.size() == 1);
  TypedDefinition typed = typecheck(program.definitions[0]);
  CHECK(typed.type == parseType("[[[float]8]8]8"));
  // Fixed tuning parameters: every split, asVector and slideStrict is decided, nothing is left
  // for a solver.
  CHECK(typed.constraints.empty());
}

TEST_CASE("both programs round-trip through the printer") {
  // tests/ir/test_printer.cpp round-trips the files directly in examples/, not this folder.
  for (const char* file : {kListing4File, kStencilFile}) {
    CAPTURE(file);
    Program original = parseFile(file);
    std::string printed = printProgram(original);
    Program reparsed = parseProgram(printed, "printed.weft");
    REQUIRE(reparsed.definitions.size() == 1);
    CHECK(reparsed.definitions[0].function == original.definitions[0].function);
    CHECK(reparsed.definitions[0].declaredType == original.definitions[0].declaredType);
    CHECK(printProgram(reparsed) == printed);
  }
}

TEST_CASE("Listing 4's convolution computes what examples/conv.weft computes (P = 1, S = 1)") {
  const Definition lowLevel = parseFile(kListing4File).definitions[0];
  const Definition highLevel = parseFile("examples/conv.weft").definitions.back();
  std::mt19937_64 rng(42);
  for (bool realFloats : {false, false, true}) {
    CAPTURE(realFloats);
    std::vector<Value> inputs = randomInputs(lowLevel, {}, rng, realFloats);
    const ArithBinding highSizes = bindSizes(highLevel, inputs, {{"P", 1}, {"S", 1}});
    CHECK(highSizes.at("C") == 8);
    CHECK(highSizes.at("M") == 8);
    CHECK(highSizes.at("K") == 3);
    CHECK(highSizes.at("W") == 8);
    const Value expected = interpret(highLevel, inputs, highSizes);
    const Value actual = interpret(lowLevel, inputs, bindSizes(lowLevel, inputs));
    REQUIRE(shapeOf(actual) == std::vector<int64_t>{8, 8, 8});
    if (realFloats) {
      CHECK_MESSAGE(approximatelyEqual(actual, expected, 1e-5, 1e-5),
                    "max difference " << maxAbsDifference(actual, expected));
    } else {
      CHECK_MESSAGE(actual == expected, "max difference " << maxAbsDifference(actual, expected));
    }
  }
}

TEST_CASE("the interpreter comparison would notice a wrong bias, border or kernel order") {
  // A mutation check of the comparison above: changing one weight of one kernel, or the
  // bias of the last kernel, changes the low-level program's output where it must.
  const Definition lowLevel = parseFile(kListing4File).definitions[0];
  std::mt19937_64 rng(3);
  std::vector<Value> inputs = randomInputs(lowLevel, {}, rng, false);
  const Value base = interpret(lowLevel, inputs, {});
  std::vector<Value> changed = inputs;
  // biases[7] += 1: only the last kernel's feature map moves, by exactly 1 everywhere.
  changed[1].elements[7].f += 1.0f;
  Value moved = interpret(lowLevel, changed, {});
  for (size_t m = 0; m < 8; ++m) {
    for (size_t y = 0; y < 8; ++y) {
      for (size_t x = 0; x < 8; ++x) {
        float delta = moved.elements[m].elements[y].elements[x].f -
                      base.elements[m].elements[y].elements[x].f;
        CHECK(delta == (m == 7 ? 1.0f : 0.0f));
      }
    }
  }
  // weights[2][0][0][5] += 1 (kernel 2, top-left tap, channel 5): output (2, y, x) moves by
  // input[y-1][x-1][5], which is the zero padding in row 0 and column 0.
  changed = inputs;
  changed[0].elements[2].elements[0].elements[0].elements[5].f += 1.0f;
  moved = interpret(lowLevel, changed, {});
  for (size_t y = 0; y < 8; ++y) {
    for (size_t x = 0; x < 8; ++x) {
      float expectedDelta =
          (y == 0 || x == 0) ? 0.0f : inputs[2].elements[y - 1].elements[x - 1].elements[5].f;
      float delta =
          moved.elements[2].elements[y].elements[x].f - base.elements[2].elements[y].elements[x].f;
      CHECK(delta == expectedDelta);
    }
  }
}

TEST_CASE("Listing 4's convolution compiles to the paper's four kernels") {
  const Definition lowLevel = parseFile(kListing4File).definitions[0];
  CompiledProgram program = generateOpenCL(lowLevel);
  INFO(program.describe());
  INFO(program.source);
  REQUIRE(program.kernels.size() == 4);
  CHECK(program.openSizes.empty());

  // Stage 1, pad: one work-item per padded pixel (14 × 14), no work-groups of its own.
  const KernelPlan& pad = program.kernels[0];
  CHECK_FALSE(pad.hasLocalSize);
  CHECK(pad.dimensions == 2);
  CHECK(pad.globalSize[0] == Arith(14));
  CHECK(pad.globalSize[1] == Arith(14));

  // Stage 2, partial convolution (paper Table 1): work-groups dim 1 = 4 tiles, dim 0 = 2
  // kernel groups; work-items dim 1 = 18 window groups, dim 0 = 6 chunks.
  const KernelPlan& partial = program.kernels[1];
  REQUIRE(partial.hasLocalSize);
  CHECK(partial.dimensions == 2);
  CHECK(partial.localSize[0] == Arith(6));
  CHECK(partial.localSize[1] == Arith(18));
  CHECK(partial.globalSize[0] == Arith(2 * 6));
  CHECK(partial.globalSize[1] == Arith(4 * 18));
  std::string partialSource = kernelSource(program, partial.name);
  // The launch covers every map: group and item ids, no loops over them.
  CHECK(partialSource.find("get_group_id(1)") != std::string::npos);
  CHECK(partialSource.find("get_local_id(0)") != std::string::npos);
  CHECK(partialSource.find("get_num_groups") == std::string::npos);
  CHECK(partialSource.find("get_local_size") == std::string::npos);
  // The accumulator is a private array of κ·σ = 8 floats updated with dot products of float4
  // values, and the input values are copied to private memory once per step (the let).
  std::smatch accumulator;
  REQUIRE(std::regex_search(partialSource, accumulator, std::regex(R"((acc\d+)\[8\];)")));
  std::string acc = accumulator[1];
  CHECK(std::regex_search(partialSource,
                          std::regex(acc + R"(\[[^\]]+\] = \()" + acc + R"(\[[^\]]+\] \+ dot\()")));
  // The input values copied to private memory: a private array of float4 vectors.
  CHECK(std::regex_search(partialSource, std::regex(R"(float4 p\d+\[2\];)")));
  CHECK(partialSource.find("local ") == std::string::npos);

  // Stage 3, final reduction: work-groups over tiles × kernel groups, work-items over the κ
  // kernels × 36 windows of the tile; each starts from the kernel's bias.
  const KernelPlan& sums = program.kernels[2];
  REQUIRE(sums.hasLocalSize);
  CHECK(sums.localSize[0] == Arith(36));
  CHECK(sums.localSize[1] == Arith(4));
  CHECK(sums.globalSize[0] == Arith(2 * 36));
  CHECK(sums.globalSize[1] == Arith(4 * 4));
  CHECK(kernelSource(program, sums.name).find("in_biases[") != std::string::npos);

  // Stage 4, crop: one work-item per output value, M × OH × OW.
  const KernelPlan& crop = program.kernels[3];
  CHECK(crop.dimensions == 3);
  CHECK(crop.globalSize[0] == Arith(8));
  CHECK(crop.globalSize[1] == Arith(8));
  CHECK(crop.globalSize[2] == Arith(8));

  // Buffers: the three inputs, the output, and the temporaries between the stages: padded
  // input 14·14·8, partial sums tiles·M·windows·chunks = 4·8·36·6, sums 4·8·36.
  std::vector<int64_t> temporaries;
  for (const BufferPlan& buffer : program.buffers) {
    if (buffer.role == BufferPlan::Role::Temporary) {
      temporaries.push_back(evaluate(buffer.elementCount, {}));
    }
  }
  CHECK(temporaries == std::vector<int64_t>{14 * 14 * 8, 4 * 8 * 36 * 6, 4 * 8 * 36});
  CHECK(program.globalBytes({}) ==
        4 * (576 + 8 + 512 + 512 + 14 * 14 * 8 + 4 * 8 * 36 * 6 + 4 * 8 * 36));
}

TEST_CASE("the low-level stencil (Listing 1) equals its high-level form") {
  const Definition lowLevel = parseFile(kStencilFile).definitions[0];
  const Definition highLevel = parseProgram(R"(
def stencil2D(weights: [[float]3]3, input: [[float]W]H) =
  map2D(nbh -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(join(nbh), join(weights))),
        slide2D(3, 1, input))
)")
                                   .definitions[0];
  std::mt19937_64 rng(5);
  for (ArithBinding sizes : std::vector<ArithBinding>{
           {{"W", 3}, {"H", 3}}, {{"W", 9}, {"H", 5}}, {{"W", 4}, {"H", 12}}}) {
    std::vector<Value> inputs = randomInputs(lowLevel, sizes, rng, false);
    Value low = interpret(lowLevel, inputs, bindSizes(lowLevel, inputs));
    Value high = interpret(highLevel, inputs, bindSizes(highLevel, inputs));
    // The high-level form keeps reduce's [float]1 per pixel; the low-level one joins it away.
    REQUIRE(shapeOf(high) == std::vector<int64_t>{sizes.at("H") - 2, sizes.at("W") - 2, 1});
    REQUIRE(shapeOf(low) == std::vector<int64_t>{sizes.at("H") - 2, sizes.at("W") - 2});
    for (size_t y = 0; y < low.elements.size(); ++y) {
      for (size_t x = 0; x < low.elements[y].elements.size(); ++x) {
        CHECK(low.elements[y].elements[x] == high.elements[y].elements[x].elements[0]);
      }
    }
  }
}

TEST_CASE("the low-level stencil compiles to Listing 2's kernel") {
  const Definition lowLevel = parseFile(kStencilFile).definitions[0];
  CodegenOptions options;
  options.specialize = {{"W", 16}, {"H", 8}};
  CompiledProgram program = generateOpenCL(lowLevel, options);
  INFO(program.source);
  REQUIRE(program.kernels.size() == 1);
  const KernelPlan& kernel = program.kernels[0];
  REQUIRE(kernel.hasLocalSize);
  CHECK(kernel.localSize[0] == Arith(14));       // one work-item per output pixel of a row
  CHECK(kernel.globalSize[0] == Arith(14 * 6));  // one work-group per output row
  // A scalar private accumulator, two loops over the 3x3 taps, no loop over groups or items.
  CHECK(std::regex_search(program.source, std::regex(R"(float acc\d+ = )")));
  CHECK(std::regex_search(program.source,
                          std::regex(R"(for \(int i\d+ = 0; i\d+ < 3; \+\+i\d+\) \{\s*for \(int i\d+ = 0; i\d+ < 3;)")));
  CHECK(program.source.find("get_num_groups") == std::string::npos);

  // Left symbolic, the sizes become kernel arguments and the launch depends on them.
  CompiledProgram symbolic = generateOpenCL(lowLevel);
  CHECK(symbolic.openSizes.size() == 2);
  CHECK(symbolic.kernels[0].localSize[0] == parseArith("W - 2"));
}
