// Issue 8's vector register-blocked convolution on OpenCL, both as built directly
// (rewrite/strategies.h convRegisterBlockedVectorDefinition) and as produced by the rules (the
// conv-register-blocked-vector strategy on Listing 3): each definition is checked against
// the interpreter on Listing 3 (examples/conv.weft), then lowered, generated with every size
// specialised and run on the default OpenCL device (PoCL), and compared with the interpreter
// within 1e-4 absolute + 1e-4 relative. The generated source must show what makes the kernel
// fast: the σ float<κ> accumulators become vector variables (no private array left), the
// update is fma on vectors with the input value broadcast, the weights are one vload per
// step, the convolution kernel has an explicit local size (outW/σ × rows), and the register
// estimate KernelPlan::privateScalars is σ·κ accumulators + 2κ (the widest vector temporary).
// Small random layers with κ ∈ {4, 8, 16}, σ up to 8, stride 1 and 2, with and without
// padding. With pad_in_loads = 1 (the strategy's factor, convRegisterBlockedVectorDefinition's
// padInLoads) there are two kernels and no padded buffer, and the convolution checks the
// window position's guards outside its channel loop (one copy of the loop per outcome of the
// guards, none guarded inside: code generation's loop unswitching). With row_unroll = 1 (the
// window's loops row, channel, unrolled taps) the same holds: the inner reduce of a row's taps
// updates the accumulators in place, so the estimate and the vector variables are unchanged.
// With interleave = 1 (block b of a row holds its windows b, b + outW/σ, …) neighbouring
// work-items read neighbouring windows: the generated convolution indexes the input by the
// local id with coefficient 1 (channels_first = 1: the pad kernel's copy stored [C][H'][W']) or
// the stride times C (the input read in place, [H][W][C]).
// Label opencl.
#include <doctest/doctest.h>

#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/listing3_layers.h"

using namespace weft;

namespace {

constexpr double kTolerance = 1e-4;

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

// The conv-register-blocked-vector strategy's definition for (κ, σ, R).
Definition strategyDefinition(const Definition& conv, int kappa, int sigma, int rows,
                              int padInLoads, int rowUnroll, int interleave, int channelsFirst,
                              int split, int partialBlocks) {
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  rewrite::RewriteContext rewriting;
  rewrite::StrategyResult result = strategy->make({{"kappa", Arith(kappa)},
                                                   {"sigma", Arith(sigma)},
                                                   {"rows", Arith(rows)},
                                                   {"pad_in_loads", Arith(padInLoads)},
                                                   {"row_unroll", Arith(rowUnroll)},
                                                   {"interleave", Arith(interleave)},
                                                   {"channels_first", Arith(channelsFirst)},
                                                   {"split", Arith(split)},
                                                   {"partial_blocks", Arith(partialBlocks)}})(
      conv, rewriting);
  REQUIRE_MESSAGE(result.success(), result.failure);
  return *result.definition;
}

struct Block {
  int kappa, sigma, rows;
  int padInLoads = 0;     // 1: no pad kernel, guarded loads of the unpadded input
  int rowUnroll = 0;      // 1: channels outside a window row's unrolled taps (by rules only)
  int interleave = 0;     // 1: block b holds windows b, b + outW/σ, … (by rules only)
  int channelsFirst = 0;  // 1: the padded copy stored [C][H'][W'] (by rules only)
  int split = 1;          // S > 1: S partial sums over the channels, a final kernel (rules only)
  int partialBlocks = 0;  // 1: σ and rows need not divide the output (rules only)
};

// C channels, an H×H image, M kernels of 3×3, padding P, stride S.
void checkLayer(int channels, int size, int kernels, int padding, int stride,
                const std::vector<Block>& blocks, uint64_t seed) {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(seed);
  const testing::Listing3Layer layer =
      testing::randomListing3Layer(conv, channels, kernels, 3, size, size, padding, stride, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  const int64_t outW = (size + 2 * padding - 3) / stride + 1;
  for (const Block& b : blocks) {
    CAPTURE(b.kappa);
    CAPTURE(b.sigma);
    CAPTURE(b.rows);
    CAPTURE(b.rowUnroll);
    CAPTURE(b.interleave);
    CAPTURE(b.channelsFirst);
    CAPTURE(b.split);
    CAPTURE(b.partialBlocks);
    for (const bool byRules : {false, true}) {
      CAPTURE(byRules);
      // The hand-built definition has no such order or layout.
      if ((b.rowUnroll || b.interleave || b.channelsFirst || b.split > 1 || b.partialBlocks) &&
          !byRules) {
        continue;
      }
      const Definition vector =
          byRules ? strategyDefinition(conv, b.kappa, b.sigma, b.rows, b.padInLoads, b.rowUnroll,
                                       b.interleave, b.channelsFirst, b.split, b.partialBlocks)
                  : rewrite::convRegisterBlockedVectorDefinition(conv, b.kappa, b.sigma, b.rows,
                                                                 b.padInLoads != 0);
      CAPTURE(printDefinition(vector));
      const Value interpreted = interpret(vector, layer.inputs, layer.sizes);
      CHECK_MESSAGE(approximatelyEqual(interpreted, expected, kTolerance, kTolerance),
                    "interpreter: max difference " << maxAbsDifference(interpreted, expected));

      CodegenOptions options;
      options.specialize = layer.sizes;
      const CompiledProgram compiled = compileToOpenCL(vector, options);
      CAPTURE(compiled.source);
      // Re-layout, pad, convolution; without the pad kernel (and its buffer) for pad_in_loads;
      // with split, the partial sums' buffer and the final kernel adding them.
      const size_t final = b.split > 1 ? 1 : 0;
      REQUIRE(compiled.kernels.size() == (b.padInLoads ? 2u : 3u) + final);
      CHECK(compiled.buffers.size() == (b.padInLoads ? 5u : 6u) + final);  // inputs, out, temps
      const KernelPlan& convolution = compiled.kernels[compiled.kernels.size() - 1 - final];
      if (b.padInLoads && padding > 0) {
        // The window position's guards checked once per position, outside the channel loop:
        // an unguarded copy of that loop (loop unswitching) besides the guarded one.
        CHECK(std::regex_search(compiled.source, std::regex("if \\(!\\(\\(")));
        CHECK(compiled.source.find("} else {") != std::string::npos);
      }
      if (b.padInLoads && padding == 1 && stride == 1 && !b.partialBlocks) {
        // Three guards per position (the row, the block's first and last column): one copy
        // of the loop per outcome, none guarded inside. A copy where a guard fires skips the
        // padded taps (a product with the pad value 0 adds nothing): eight copies of sigma
        // multiply-adds would be 8 sigma; the copies whose row is padding hold none, those
        // with a padded column one fewer each. (A partial last block reads more padded
        // columns: more guards, so an unguarded and a guarded copy instead.)
        CHECK(compiled.source.find("? 0.0f :") == std::string::npos);
        CHECK(compiled.source.find("(0.0f)") == std::string::npos);
        size_t fmas = 0;
        for (size_t at = compiled.source.find("fma("); at != std::string::npos;
             at = compiled.source.find("fma(", at + 1)) {
          ++fmas;
        }
        // With row_unroll each copy holds the K = 3 taps of a row: at most 3 times as many.
        CHECK(fmas > 0);
        CHECK(fmas <= 4u * static_cast<size_t>(b.sigma) * (b.rowUnroll ? 3u : 1u));
      }
      CHECK(convolution.hasLocalSize);
      CHECK(convolution.localSize[0].constant() == (outW + b.sigma - 1) / b.sigma);
      CHECK(convolution.localSize[1].constant() == b.rows);
      CHECK(convolution.privateScalars == int64_t{b.sigma} * b.kappa + 2 * b.kappa);
      const std::string k = std::to_string(b.kappa);
      CHECK(std::regex_search(compiled.source,
                              std::regex("fma\\(\\(float" + k + "\\)\\(.*vload" + k + "\\(")));
      // Every accumulator is a vector variable: no private array of vectors survives.
      CHECK(!std::regex_search(compiled.source, std::regex("float" + k + " acc[0-9]+\\[")));
      CHECK(std::regex_search(compiled.source, std::regex("float" + k + " acc[0-9]+_0")));
      if (b.interleave) {
        // The input index of the block's first window: the local id over blocks (the last
        // get_local_id(0) variable) with coefficient 1 in the channels-first copy, S·C in
        // place. The other windows are outW/σ further (an offset).
        std::smatch local;
        REQUIRE(std::regex_search(compiled.source, local,
                                  std::regex("const int (lc[0-9]+_d0) = get_local_id\\(0\\)")));
        const std::string coefficient =
            b.channelsFirst ? "" : std::to_string(stride * channels) + "\\*";
        CHECK(std::regex_search(compiled.source,
                                std::regex("[ (+]" + coefficient + local[1].str() + "[ )+]")));
      }

      const host::RunResult run = host::runProgram(context(), compiled, layer.inputs, layer.sizes);
      CHECK_MESSAGE(approximatelyEqual(run.output, expected, kTolerance, kTolerance),
                    "OpenCL: max difference " << maxAbsDifference(run.output, expected));
    }
  }
}

}  // namespace

TEST_CASE("vector register-blocked convolution: padded layer, kappa 4, 8 and 16") {
  //                         kappa sigma rows
  checkLayer(3, 8, 16, 1, 1, {{4, 4, 2}, {8, 8, 1}, {16, 2, 4}, {16, 8, 8}}, 11);
}

TEST_CASE("vector register-blocked convolution: stride 2, no padding") {
  checkLayer(2, 9, 8, 0, 2, {{4, 2, 1}, {8, 4, 2}, {8, 1, 4}}, 12);
}

TEST_CASE("vector register-blocked convolution with pad_in_loads: guarded loads, 2 kernels") {
  //                         kappa sigma rows pad_in_loads
  checkLayer(3, 8, 16, 1, 1, {{4, 4, 2, 1}, {8, 8, 1, 1}, {16, 2, 4, 1}}, 31);
  checkLayer(2, 9, 8, 0, 2, {{4, 2, 1, 1}}, 32);
  std::mt19937_64 rng(2028);
  for (int trial = 0; trial < 3; ++trial) {
    const int channels = std::uniform_int_distribution<int>(1, 5)(rng);
    const int kernels = 4 * std::uniform_int_distribution<int>(1, 4)(rng);
    const int padding = std::uniform_int_distribution<int>(1, 2)(rng);
    const int size = 6 - 2 * padding + 2;  // outW = 6
    CAPTURE(channels);
    CAPTURE(kernels);
    CAPTURE(padding);
    checkLayer(channels, size, kernels, padding, 1, {{4, 3, 2, 1}, {4, 6, 3, 1}}, rng());
  }
}

TEST_CASE("vector register-blocked convolution with row_unroll: accumulators updated in place") {
  // The inner reduce over a row's taps updates the enclosing accumulators in place: the same
  // register estimate, no private array, the guards still hoisted out of the channel loop.
  //                         kappa sigma rows pad_in_loads row_unroll
  checkLayer(3, 8, 16, 1, 1, {{4, 4, 2, 0, 1}, {16, 8, 8, 1, 1}, {8, 2, 4, 1, 1}}, 41);
  checkLayer(2, 9, 8, 0, 2, {{4, 2, 1, 0, 1}, {8, 4, 2, 1, 1}}, 42);
}

TEST_CASE("vector register-blocked convolution with interleaved blocks, channels-first copy") {
  //        kappa sigma rows pad_in_loads row_unroll interleave channels_first
  checkLayer(
      3, 8, 16, 1, 1,
      {{4, 4, 2, 0, 0, 1, 1}, {8, 2, 1, 0, 1, 1, 1}, {16, 4, 4, 1, 0, 1, 0}, {4, 2, 2, 0, 0, 1, 0}},
      51);
  checkLayer(2, 9, 8, 0, 2, {{4, 2, 1, 0, 0, 1, 1}, {8, 2, 2, 1, 1, 1, 0}}, 52);
}

TEST_CASE("vector register-blocked convolution split over the channels: partial sums, final sum") {
  //        kappa sigma rows pad_in_loads row_unroll interleave channels_first split
  checkLayer(4, 8, 8, 1, 1,
             {{4, 4, 2, 0, 0, 1, 1, 2},
              {8, 2, 1, 0, 1, 1, 1, 4},
              {4, 8, 4, 1, 0, 0, 0, 2},
              {4, 2, 2, 0, 1, 0, 0, 4}},
             61);
  checkLayer(6, 9, 8, 0, 2, {{4, 2, 1, 0, 0, 1, 1, 3}, {8, 2, 2, 1, 1, 1, 0, 2}}, 62);
}

TEST_CASE("vector register-blocked convolution with partial blocks: sigma and rows not dividing") {
  // outW = outH = 7: blocks of 3 or 2 pixels and groups of 2 or 3 rows leave a partial last
  // block and row group, whose surplus outputs are dropped by guarded stores.
  //        kappa sigma rows pad_in_loads row_unroll interleave channels_first split partial
  checkLayer(3, 7, 8, 1, 1,
             {{4, 3, 2, 0, 0, 0, 0, 1, 1},
              {8, 2, 3, 1, 0, 0, 0, 1, 1},
              {4, 3, 1, 1, 1, 0, 0, 1, 1},
              {4, 2, 2, 0, 0, 1, 1, 1, 1},
              {4, 3, 3, 1, 0, 0, 0, 3, 1},
              {8, 7, 1, 1, 0, 0, 0, 1, 1}},
             71);
  // Stride 2, no padding, outW = 5; and stride 2 with a partial last window (10 - 3 is odd).
  checkLayer(2, 11, 8, 0, 2, {{4, 2, 3, 0, 0, 0, 0, 1, 1}, {8, 3, 2, 1, 1, 0, 0, 1, 1}}, 72);
  checkLayer(2, 10, 4, 0, 2, {{4, 3, 3, 1, 0, 0, 0, 1, 1}}, 73);
}

TEST_CASE("vector register-blocked convolution: random small layers") {
  std::mt19937_64 rng(2026);
  for (int trial = 0; trial < 4; ++trial) {
    const int channels = std::uniform_int_distribution<int>(1, 5)(rng);
    const int kernels = 4 * std::uniform_int_distribution<int>(1, 4)(rng);
    const int padding = std::uniform_int_distribution<int>(0, 1)(rng);
    const int size = 6 - 2 * padding;  // outW = 4
    CAPTURE(channels);
    CAPTURE(kernels);
    CAPTURE(padding);
    checkLayer(channels, size, kernels, padding, 1, {{4, 2, 2}, {4, 4, 1}}, rng());
  }
}
