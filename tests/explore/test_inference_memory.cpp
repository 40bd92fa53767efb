// The memory a layer variant holds at inference time (issue 8's "memory ≥ 3.6× less than
// im2col + GEMM"): the register-blocked vector family re-lays the weights out once (a
// preparation kernel), and its per-inference kernels must not take the original weights as an
// argument (codegen/kernel_text.cpp passes only the buffers a kernel names), so that
// CompiledProgram::inferenceBytes with the weights and biases constant leaves exactly the
// original weights out: input, biases, re-laid weights, padded input (when padding is a
// kernel of its own), output. The expected bytes are computed here from the layer's shape, not
// read from the program. Without constant inputs, and for the default lowering of Listing 3
// (one kernel reads everything), inference memory is every buffer. The drop-in export of the
// same variant says P_run does not read the weights (prepareEmission's readByRun, the README,
// the manifest's preparation.releasableInputs and inferenceBytes). No OpenCL device needed;
// measureVariant's spaceBytes is checked on PoCL in opencl_inference_memory.cpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "explore/measurement.h"
#include "export/dropin_export.h"
#include "workloads/conv/conv_layer.h"
#include "rewrite/strategies.h"

using namespace weft;

namespace {

struct Block {
  int kappa, sigma, rows, padInLoads;
};

Definition vectorFamily(const Block& b) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext context;
  rewrite::StrategyResult result =
      strategy->make({{"kappa", Arith(b.kappa)},
                      {"sigma", Arith(b.sigma)},
                      {"rows", Arith(b.rows)},
                      {"pad_in_loads", Arith(b.padInLoads)}})(convListing3Definition(), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

int64_t floatBytes(int64_t elements) { return 4 * elements; }

// Listing 3's parameters: weights, biases, input.
const std::set<int> kWeightsAndBiases = {0, 1};

std::vector<std::string> bufferArguments(const CompiledProgram& program, size_t kernel) {
  std::vector<std::string> names;
  for (const KernelArg& arg : program.kernels.at(kernel).args) {
    if (arg.kind == KernelArg::Kind::Buffer) {
      names.push_back(program.buffers.at(static_cast<size_t>(arg.buffer)).name);
    }
  }
  return names;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("vector family: per-inference kernels do not take the weights; inference memory") {
  const std::vector<std::string> layers = {"4,8,8,8,3,1,1", "8,12,12,16,3,1,1",
                                           "4,10,10,8,3,1,0", "8,16,16,8,3,2,1"};
  const std::vector<Block> blocks = {{4, 2, 1, 0}, {4, 2, 2, 1}, {8, 4, 1, 0}, {8, 2, 2, 1}};
  int checked = 0;
  for (const std::string& spec : layers) {
    const ConvLayer layer = parseConvLayer(spec);
    const ArithBinding sizes = convListing3Sizes(layer);
    for (const Block& b : blocks) {
      if (layer.M % b.kappa != 0 || layer.outW() % b.sigma != 0 || layer.outH() % b.rows != 0) {
        continue;
      }
      CAPTURE(spec);
      CAPTURE(b.kappa);
      CAPTURE(b.sigma);
      CAPTURE(b.rows);
      CAPTURE(b.padInLoads);
      const CompiledProgram program = compileVariant(vectorFamily(b), sizes);
      CAPTURE(program.describe(sizes));
      // The re-layout, the pad kernel unless the loads pad, the convolution.
      REQUIRE(program.kernels.size() == (b.padInLoads ? 2u : 3u));
      const std::vector<bool> preparation = program.preparationKernels(kWeightsAndBiases);
      CHECK(preparation.front());
      for (size_t k = 1; k < preparation.size(); ++k) CHECK_FALSE(preparation[k]);
      // The re-layout reads the weights only; no later kernel takes them.
      const std::vector<std::string> relayout = bufferArguments(program, 0);
      CHECK(contains(relayout, "in_weights"));
      CHECK_FALSE(contains(relayout, "in_biases"));
      CHECK_FALSE(contains(relayout, "in_input"));
      for (size_t k = 1; k < program.kernels.size(); ++k) {
        CAPTURE(k);
        CHECK_FALSE(contains(bufferArguments(program, k), "in_weights"));
      }
      const std::vector<std::string> convolution =
          bufferArguments(program, program.kernels.size() - 1);
      CHECK(contains(convolution, "in_biases"));
      CHECK(contains(convolution, "out"));
      CHECK(contains(convolution, b.padInLoads ? "in_input" : "in_biases"));

      // Inference memory from the layer's shape: input, biases, re-laid weights (as many as
      // the weights), output, and the padded input when padding is its own kernel.
      const int64_t weights = floatBytes(layer.M * layer.C * layer.K * layer.K);
      int64_t expected = floatBytes(layer.C * layer.H * layer.W) + floatBytes(layer.M) + weights +
                         floatBytes(layer.M * layer.outH() * layer.outW());
      if (b.padInLoads == 0) {
        expected += floatBytes(layer.C * (layer.H + 2 * layer.pad) * (layer.W + 2 * layer.pad));
      }
      CHECK(program.inferenceBytes(sizes, kWeightsAndBiases) == expected);
      CHECK(program.globalBytes(sizes) == expected + weights);
      CHECK(program.inferenceBytes(sizes, {}) == program.globalBytes(sizes));
      // Only the input constant: with a pad kernel (its own kernel even without padding) the
      // padded copy is prepared and the input itself may go; padded in the loads, the
      // convolution reads the input and everything stays.
      const int64_t input = floatBytes(layer.C * layer.H * layer.W);
      CHECK(program.inferenceBytes(sizes, {2}) ==
            program.globalBytes(sizes) - (b.padInLoads == 0 ? input : 0));
      const std::vector<bool> kept = program.inferenceBuffers(kWeightsAndBiases);
      for (size_t i = 0; i < program.buffers.size(); ++i) {
        CAPTURE(program.buffers[i].name);
        CHECK(kept[i] == (program.buffers[i].name != "in_weights"));
      }
      ++checked;
    }
  }
  CHECK(checked >= 10);
}

TEST_CASE("the default lowering of Listing 3 keeps every buffer at inference time") {
  const ConvLayer layer = parseConvLayer("4,8,8,8,3,1,1");
  const ArithBinding sizes = convListing3Sizes(layer);
  const CompiledProgram program = compileVariant(convListing3Definition(), sizes);
  CHECK(program.inferenceBytes(sizes, kWeightsAndBiases) == program.globalBytes(sizes));
  CHECK(program.globalBytes(sizes) >=
        floatBytes(layer.M * layer.C * layer.K * layer.K + layer.M + layer.C * layer.H * layer.W +
                   layer.M * layer.outH() * layer.outW()));
}

TEST_CASE("drop-in of the vector family: P_run does not read the weights") {
  const ConvLayer layer = parseConvLayer("4,8,8,8,3,1,1");
  const ArithBinding sizes = convListing3Sizes(layer);
  const CompiledProgram program = compileVariant(vectorFamily({4, 2, 2, 0}), sizes);
  exporting::DropinMetadata metadata;
  metadata.prefix = "weft_test_layer";
  metadata.program = layer.describe();
  metadata.sizes = sizes;
  metadata.compilerVersion = "weft test";
  metadata.constantInputs = kWeightsAndBiases;
  const exporting::Emitted emitted = exporting::prepareEmission(program, sizes, metadata);
  REQUIRE(emitted.inputs.size() == 3u);
  CHECK(emitted.inputs[0].readByPreparation);
  CHECK_FALSE(emitted.inputs[0].readByRun);
  CHECK(emitted.inputs[1].readByRun);
  CHECK(emitted.inputs[2].readByRun);

  const std::vector<exporting::DropinFile> files = exporting::emitDropin(program, sizes, metadata);
  std::string readme, header, manifestText, hostCode;
  for (const exporting::DropinFile& file : files) {
    if (file.name == "README.md") readme = file.contents;
    if (file.name == metadata.prefix + ".h") header = file.contents;
    if (file.name == metadata.prefix + ".json") manifestText = file.contents;
    if (file.name == metadata.prefix + ".c") hostCode = file.contents;
  }
  REQUIRE_FALSE(manifestText.empty());
  const nlohmann::json manifest = nlohmann::json::parse(manifestText);
  CHECK(manifest["preparation"]["releasableInputs"] == nlohmann::json({"weights"}));
  const int64_t inference = program.inferenceBytes(sizes, kWeightsAndBiases);
  CHECK(manifest["preparation"]["inferenceBytes"].get<int64_t>() == inference);
  CHECK(manifest["preparation"]["allBuffersBytes"].get<int64_t>() == program.globalBytes(sizes));
  CHECK(readme.find("never reads weights") != std::string::npos);
  CHECK(readme.find(std::to_string(inference) + " bytes") != std::string::npos);
  CHECK(header.find("never reads weights") != std::string::npos);
  // The run part sets no argument from the weights: the enqueue function of P_run says so.
  CHECK(hostCode.find("input 0 (weights) is not read here") != std::string::npos);
}
