// measureVariant's space figures (explore/measurement.h): with the weights and biases constant
// (MeasurementOptions::constantInputs, what the explorer passes for a layer), spaceBytes is the
// memory held at inference time — every buffer but the original weights, which only the
// register-blocked vector family's re-layout kernel reads — and allBuffersBytes every buffer;
// without constant inputs both are every buffer. The weights' size comes from the layer's
// shape. measureCompiled follows the same rule. Runs on the first OpenCL device (PoCL).
#include <doctest/doctest.h>

#include <set>

#include "explore/measurement.h"
#include "host/opencl_runtime.h"
#include "workloads/conv/conv_layer.h"
#include "rewrite/strategies.h"

using namespace weft;
using namespace weft::explore;

namespace {

const ConvLayer kLayer = parseConvLayer("4,8,8,8,3,1,1");

Definition vectorFamilyDefinition(int padInLoads) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext context;
  rewrite::StrategyResult result =
      strategy->make({{"kappa", Arith(4)},
                      {"sigma", Arith(4)},
                      {"rows", Arith(2)},
                      {"pad_in_loads", Arith(padInLoads)}})(convListing3Definition(), context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

}  // namespace

TEST_CASE("measureVariant: space is the inference memory when weights and biases are constant") {
  host::Context context(host::selectDevice(""));
  const int64_t weightBytes = 4 * kLayer.M * kLayer.C * kLayer.K * kLayer.K;
  for (const int padInLoads : {0, 1}) {
    CAPTURE(padInLoads);
    const Definition definition = vectorFamilyDefinition(padInLoads);
    MeasurementInputs workload;
    workload.sizes = convListing3Sizes(kLayer);
    workload.inputs = randomInputs(definition, workload.sizes, 11);
    const CompiledProgram program = compileVariant(definition, workload.sizes);

    MeasurementOptions all;
    all.minRepeats = 2;
    all.minMeasuredNs = 0;
    const Measurement plain = measureVariant(context, definition, {}, workload, all);
    REQUIRE_MESSAGE(plain.status == VariantStatus::Ok, plain.message);
    REQUIRE(plain.spaceBytes.has_value());
    REQUIRE(plain.allBuffersBytes.has_value());
    CHECK(*plain.spaceBytes == program.globalBytes(workload.sizes));
    CHECK(*plain.allBuffersBytes == *plain.spaceBytes);

    MeasurementOptions prepared = all;
    prepared.constantInputs = {0, 1};
    const Measurement split = measureVariant(context, definition, {}, workload, prepared);
    REQUIRE_MESSAGE(split.status == VariantStatus::Ok, split.message);
    REQUIRE(split.spaceBytes.has_value());
    REQUIRE(split.allBuffersBytes.has_value());
    CHECK(*split.allBuffersBytes == *plain.allBuffersBytes);
    CHECK(*split.spaceBytes == *split.allBuffersBytes - weightBytes);

    std::vector<float> output;
    const Measurement compiled = measureCompiled(context, program, workload, prepared, &output);
    REQUIRE(compiled.status == VariantStatus::Ok);
    CHECK(*compiled.spaceBytes == *split.spaceBytes);
    CHECK(*compiled.allBuffersBytes == *split.allBuffersBytes);
  }
}
