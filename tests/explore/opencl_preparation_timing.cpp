// Preparation kernels and their timing (issue 8: "report per-inference time with weights
// prepared, and separately the re-layout cost"). CompiledProgram::preparationKernels finds the
// kernels that depend only on chosen inputs: for the register-blocked vector family with the
// weights and biases constant, the weight re-layout (k0) and nothing else; with the image
// constant, the pad kernel; with nothing constant, none. measureVariant with constantInputs
// times those kernels apart (preparationNs) and keeps them out of every sample; a variant
// slower than timeOnceAboveNs is timed by a single run, its warm-up. Runs on the first OpenCL
// device (PoCL).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "explore/measurement.h"
#include "host/opencl_runtime.h"
#include "workloads/conv/conv_layer.h"
#include "rewrite/strategies.h"

using namespace weft;
using namespace weft::explore;

namespace {

const ConvLayer kLayer = parseConvLayer("4,8,8,8,3,1,1");

Definition vectorFamilyDefinition() {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext context;
  rewrite::StrategyResult result = strategy->make(
      {{"kappa", Arith(4)}, {"sigma", Arith(4)}, {"rows", Arith(2)}})(convListing3Definition(),
                                                                       context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

}  // namespace

TEST_CASE("preparation kernels: the weight re-layout for constant weights, none otherwise") {
  const Definition definition = vectorFamilyDefinition();
  const CompiledProgram program = compileVariant(definition, convListing3Sizes(kLayer));
  REQUIRE(program.kernels.size() == 3);  // re-layout, pad, convolution

  std::vector<bool> weights = program.preparationKernels({0, 1});
  CHECK(weights == std::vector<bool>{true, false, false});
  CHECK(program.preparationKernels({}) == std::vector<bool>{false, false, false});
  // The image constant instead: its pad kernel depends on it alone; the convolution reads the
  // weights too, and it writes the output.
  CHECK(program.preparationKernels({2}) == std::vector<bool>{false, true, false});
  CHECK(program.preparationKernels({0, 1, 2}) == std::vector<bool>{true, true, false});

  // The default lowering of Listing 3 is one kernel reading every input and writing the output.
  const CompiledProgram naive = compileVariant(convListing3Definition(), convListing3Sizes(kLayer));
  for (bool flag : naive.preparationKernels({0, 1})) CHECK_FALSE(flag);
}

TEST_CASE("measureVariant times preparation kernels apart and slow variants once") {
  host::Context context(host::selectDevice(""));
  const Definition definition = vectorFamilyDefinition();
  MeasurementInputs workload;
  workload.sizes = convListing3Sizes(kLayer);
  workload.inputs = randomInputs(definition, workload.sizes, 7);

  MeasurementOptions all;
  all.minRepeats = 5;
  all.minMeasuredNs = 0;
  Measurement plain = measureVariant(context, definition, {}, workload, all);
  REQUIRE_MESSAGE(plain.status == VariantStatus::Ok, plain.message);
  CHECK_FALSE(plain.preparationNs.has_value());
  CHECK_FALSE(plain.timedOnce);
  CHECK(plain.samplesNs.size() >= 5);
  CHECK(plain.generateMs > 0);

  MeasurementOptions prepared = all;
  prepared.constantInputs = {0, 1};
  Measurement split = measureVariant(context, definition, {}, workload, prepared);
  REQUIRE_MESSAGE(split.status == VariantStatus::Ok, split.message);
  REQUIRE(split.preparationNs.has_value());
  CHECK(*split.preparationNs > 0);
  REQUIRE(split.preparationKernels.size() == 3);
  CHECK(split.preparationKernels[0]);
  // Each sample is the per-inference kernels' sum: never below their fastest times (a sample
  // that left out the wrong kernel would be).
  uint64_t perInferenceFloor = split.kernelNs[1].second + split.kernelNs[2].second;
  for (uint64_t sample : split.samplesNs) CHECK(sample >= perInferenceFloor);

  MeasurementOptions once = all;
  once.timeOnceAboveNs = 1;  // every warm-up is slower than 1 ns
  Measurement single = measureVariant(context, definition, {}, workload, once);
  REQUIRE_MESSAGE(single.status == VariantStatus::Ok, single.message);
  CHECK(single.timedOnce);
  CHECK(single.samplesNs.size() == 1);
  // The one run is the warm-up's: every kernel counts without constant inputs ...
  CHECK(single.samplesNs[0] == single.warmUpNs);
  // ... and with them, its per-inference kernels only.
  MeasurementOptions preparedOnce = prepared;
  preparedOnce.timeOnceAboveNs = 1;
  Measurement splitOnce = measureVariant(context, definition, {}, workload, preparedOnce);
  REQUIRE_MESSAGE(splitOnce.status == VariantStatus::Ok, splitOnce.message);
  CHECK(splitOnce.timedOnce);
  REQUIRE(splitOnce.samplesNs.size() == 1);
  REQUIRE(splitOnce.preparationNs.has_value());
  CHECK(splitOnce.samplesNs[0] + *splitOnce.preparationNs == splitOnce.warmUpNs);
}
