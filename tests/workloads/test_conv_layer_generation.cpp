// The built-in convolution layer (workloads/conv/conv_layer.h) through the type checker, the default
// lowering and OpenCL generation: it type-checks to [[[float]outW]outH]M without constraints
// (every length is a constant), lowers to a 3D mapGlb nest (kernels, output rows, output
// columns) around one sequential reduction, and generates the naive direct convolution: one
// kernel, one work-item per output value (global size outW x outH x M), no temporary buffers,
// so the global memory is exactly the inputs and the output. Checked for small layers and for
// the two benchmark layers of VGG-16 (generation only; running is tests/cli/opencl_cli_layer).
#include <doctest/doctest.h>

#include <sstream>

#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "tests/support/conv_layer_text.h"
#include "workloads/conv/conv_layer.h"
#include "ir/printer.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

Type arrayOf(Type element, std::vector<int64_t> lengths) {
  for (auto it = lengths.rbegin(); it != lengths.rend(); ++it) element = Type::array(element, *it);
  return element;
}

void checkNaiveKernel(const ConvLayer& layer) {
  CAPTURE(layer.describe());
  Definition definition = convLayerDefinition(layer);
  TypedDefinition typed = typecheck(definition);
  CHECK(typed.type == arrayOf(Type::floatType(), {layer.M, layer.outH(), layer.outW()}));
  CHECK(typed.constraints.empty());

  CompiledProgram program = compileToOpenCL(definition);
  INFO(program.describe());
  INFO(program.source);
  REQUIRE(program.kernels.size() == 1);
  const KernelPlan& kernel = program.kernels[0];
  CHECK(kernel.dimensions == 3);
  CHECK(kernel.globalSize[0] == Arith(layer.outW()));
  CHECK(kernel.globalSize[1] == Arith(layer.outH()));
  CHECK(kernel.globalSize[2] == Arith(layer.M));
  CHECK(program.openSizes.empty());
  // Inputs in parameter order, then the output; nothing else (no copies, no temporaries).
  REQUIRE(program.buffers.size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(program.buffers[static_cast<size_t>(i)].role == BufferPlan::Role::Input);
    CHECK(program.buffers[static_cast<size_t>(i)].inputIndex == i);
  }
  CHECK(program.buffers[3].role == BufferPlan::Role::Output);
  CHECK(program.outputBuffer == 3);
  int64_t scalars = layer.C * layer.H * layer.W + layer.M * layer.C * layer.K * layer.K + layer.M +
                    layer.M * layer.outH() * layer.outW();
  CHECK(program.globalBytes({}) == 4 * scalars);
  // The reduction over channels and window is three nested loops (C, K, K), so no index
  // needs division or modulo; no private or local arrays.
  // (a loop of one trip, e.g. over a 1x1 window, vanishes).
  size_t expectedLoops = 0;
  for (int64_t bound : {layer.C, layer.K, layer.K}) {
    if (bound == 1) continue;
    ++expectedLoops;
    CHECK(program.source.find(" < " + std::to_string(bound) + "; ++") != std::string::npos);
  }
  size_t loops = 0;
  for (size_t at = program.source.find("for ("); at != std::string::npos;
       at = program.source.find("for (", at + 1)) {
    ++loops;
  }
  CHECK(loops == expectedLoops);
  std::istringstream lines(program.source);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("//", 0) == 0) continue;
    INFO(line);
    CHECK(line.find('/') == std::string::npos);
    CHECK(line.find('%') == std::string::npos);
  }
  CHECK(program.source.find("local ") == std::string::npos);
  CHECK(program.source.find("barrier") == std::string::npos);
}

}  // namespace

// tests/codegen/test_lowering.cpp checks how this layer lowers, from its text.
TEST_CASE("the layer prints as the text the lowering test reads") {
  CHECK(printDefinition(convLayerDefinition({3, 8, 8, 4, 3, 1, 1, "layer"})) + "\n" ==
        testing::kConvLayerText);
}

TEST_CASE("the layer generates one kernel with one work-item per output value") {
  SUBCASE("small, stride 1, pad 1") { checkNaiveKernel({3, 8, 8, 4, 3, 1, 1, ""}); }
  SUBCASE("non-square, stride 2, pad 0") { checkNaiveKernel({2, 7, 10, 3, 3, 2, 0, ""}); }
  SUBCASE("1x1 kernels") { checkNaiveKernel({5, 4, 3, 6, 1, 1, 0, ""}); }
  SUBCASE("VGG-16 layer 0 (conv1_1)") { checkNaiveKernel(vgg16Layer(0)); }
  SUBCASE("VGG-16 layer 10 (conv3_1)") { checkNaiveKernel(vgg16Layer(10)); }
}
