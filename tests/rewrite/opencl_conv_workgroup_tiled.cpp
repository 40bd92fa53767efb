// The conv-workgroup-tiled strategy (rewrite/strategy_conv_workgroup_tiled.h) on OpenCL:
// Listing 3 (examples/conv.weft) rewritten into work-group tiles with local staging and
// register tiles the work-items own across the channel steps, generated with every size
// specialised and run on the default OpenCL device (PoCL) against the interpreter, on random
// layers (3×3, 5×5 and 1×1 kernels, strides 1 and 2, padding 0 to 2) with several work-group
// shapes (local sizes TK/RK × TH·TW/RP), register tiles and chunks, and each operand staged or
// read from global memory. The generated source must show the shape: one kernel, local arrays
// and barriers exactly when an operand is staged, the register tile private and unrolled (no
// private array indexed at run time). The barriers are checked where a missing one shows: the
// same kernels with their barriers removed, and each work-item filling the local arrays with a
// value no input gives before it stages its part, run wrong on PoCL for every shape but the
// group of one work-item (PoCL runs a work-group's work-items one after another between
// barriers). Without that fill, a run can find in local memory the tile an earlier run of the
// same layer staged, and come out right by chance. On a GPU the outcome is only reported (a
// warp's lockstep can hide a race). Label opencl.
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/listing3_layers.h"
#include "tests/support/opencl_program_check.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

struct Tiling {
  int tk, rk, th, tw, rp, tc;
  int stageInput = 1, stageWeights = 1;
};

rewrite::StrategyResult tiled(const Definition& conv, const Tiling& t) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-workgroup-tiled");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext rewriting;
  return strategy->make({{"kernels_per_group", Arith(t.tk)},
                         {"kernels_per_item", Arith(t.rk)},
                         {"tile_rows", Arith(t.th)},
                         {"tile_cols", Arith(t.tw)},
                         {"pixels_per_item", Arith(t.rp)},
                         {"channels_per_step", Arith(t.tc)},
                         {"stage_input", Arith(t.stageInput)},
                         {"stage_weights", Arith(t.stageWeights)}})(conv, rewriting);
}

struct Outcome {
  int run = 0, racesShown = 0;
};

void checkLayer(int channels, int size, int kernels, int kernelSize, int stride, int padding,
                const std::vector<Tiling>& tilings, uint64_t seed, Outcome& outcome) {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(seed);
  const testing::Listing3Layer layer = testing::randomListing3Layer(
      conv, channels, kernels, kernelSize, size, size, padding, stride, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  for (const Tiling& t : tilings) {
    CAPTURE(t.tk);
    CAPTURE(t.rk);
    CAPTURE(t.th);
    CAPTURE(t.tw);
    CAPTURE(t.rp);
    CAPTURE(t.tc);
    CAPTURE(t.stageInput);
    CAPTURE(t.stageWeights);
    rewrite::StrategyResult rewritten = tiled(conv, t);
    REQUIRE_MESSAGE(rewritten.success(), rewritten.failure);
    const Definition& program = *rewritten.definition;
    CAPTURE(printDefinition(program));
    CHECK(testing::errorOverLargest(interpret(program, layer.inputs, layer.sizes), expected) <=
          1e-5);

    CompilePipelineOptions options;
    options.codegen.specialize = layer.sizes;
    const CompiledProgram compiled = compileToOpenCL(program, {}, options);
    CAPTURE(compiled.source);
    REQUIRE(compiled.kernels.size() == 1);
    const int localDim1 = t.tk / t.rk, localDim0 = t.th * t.tw / t.rp;
    CHECK(compiled.kernels[0].localSize[0] == Arith(localDim0));
    CHECK(compiled.kernels[0].localSize[1] == Arith(localDim1));
    const bool staged = t.stageInput || t.stageWeights;
    CHECK((compiled.source.find("local float") != std::string::npos) == staged);
    CHECK((compiled.source.find("barrier(") != std::string::npos) == staged);
    // The register tile lives in registers: no private array is indexed at run time.
    CHECK(!std::regex_search(compiled.source, std::regex("acc[0-9]+\\[[^\\]]*[a-z]")));

    host::RunResult run = host::runProgram(context(), compiled, layer.inputs, layer.sizes);
    CHECK(testing::errorOverLargest(run.output, expected) <= 1e-5);

    if (!staged) continue;
    CompiledProgram racy = compiled;
    racy.source = testing::withoutBarriersLocalPoisoned(compiled.source);
    host::RunResult wrong = host::runProgram(context(), racy, layer.inputs, layer.sizes);
    ++outcome.run;
    const bool raceShown = testing::errorOverLargest(wrong.output, expected) > 1e-5;
    outcome.racesShown += raceShown;
    if (!raceShown) MESSAGE("right without barriers: " << localDim1 << " x " << localDim0);
  }
}

}  // namespace

TEST_CASE("conv-workgroup-tiled on OpenCL matches the direct convolution") {
  Outcome outcome;
  // 3×3 stride 1 with padding: square and flat work-groups, several register tiles and chunks.
  checkLayer(8, 8, 8, 3, 1, 1,
             {{4, 2, 4, 8, 4, 4}, {8, 4, 2, 4, 2, 8}, {8, 8, 8, 8, 16, 2}, {2, 1, 1, 8, 1, 1},
              {4, 2, 4, 4, 2, 4, 1, 0}, {4, 2, 4, 4, 2, 4, 0, 1}, {4, 2, 4, 4, 2, 4, 0, 0}},
             1, outcome);
  // 5×5 stride 2 (padding 2), and an odd output (7×7: tiles of 7 and 1).
  checkLayer(3, 13, 4, 5, 2, 2, {{4, 2, 7, 7, 7, 3}, {2, 2, 1, 7, 1, 1}}, 2, outcome);
  // 1×1 kernels (a product of matrices): no halo.
  checkLayer(16, 6, 8, 1, 1, 0, {{8, 4, 3, 6, 2, 4}, {4, 1, 6, 6, 4, 16}}, 3, outcome);
  // 3×3 stride 2 without padding.
  checkLayer(4, 11, 6, 3, 2, 0, {{6, 3, 5, 5, 5, 2}, {3, 3, 1, 5, 5, 4}}, 4, outcome);
  const bool cpu = context().device().typeName() == "cpu";
  MESSAGE(outcome.run << " staged kernels run without their barriers, " << outcome.racesShown
                      << " wrong" << std::string(cpu ? "" : " (a GPU: reported only)"));
  // Without barriers, a work-group run one work-item at a time reads values its neighbours have
  // not staged yet. Only the work-group of one work-item (3 / 3 x 1 * 5 / 5) stages everything
  // itself and comes out right.
  if (cpu) CHECK(outcome.racesShown == outcome.run - 1);
}

TEST_CASE("conv-workgroup-tiled refuses what it cannot take") {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-workgroup-tiled");
  REQUIRE(strategy != nullptr);
  CHECK_THROWS_AS(strategy->make({{"kernels_per_item", Arith(2)}}), std::invalid_argument);
  CHECK_THROWS_AS(strategy->make({{"kernels_per_item", Arith(2)},
                                  {"pixels_per_item", Arith(2)},
                                  {"stage_input", Arith(2)}}),
                  std::invalid_argument);
  CHECK_THROWS_AS(strategy->make({{"kernels_per_item", Arith(2)},
                                  {"pixels_per_item", Arith(2)},
                                  {"theta", Arith(2)}}),
                  std::invalid_argument);
}
