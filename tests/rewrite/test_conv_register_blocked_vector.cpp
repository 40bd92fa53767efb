// The named strategy conv-register-blocked-vector (rewrite/strategies.h) applied to
// examples/conv.weft (Listing 3): on random small layers (tests/support/listing3_layers.h) and
// several (κ, σ, R) the rewritten definition type-checks, has issue 8's vector shape (three
// let-bound stages: the weights' re-layout [M/κ][K][K][C][κ] and the padded input as copy
// nests of mapGlb 1/0 + mapSeq, then the convolution with mapWrg 2/1 over kernel groups and row
// groups, mapLcl 1/0 over rows and blocks of σ pixels, one reduceSeq over the whole window whose
// accumulator is [float<κ>]σ, updated by one mapSeqUnroll) and computes the original layer in
// the interpreter within 1e-4 absolute + 1e-4 relative on real-valued random inputs. R left
// out becomes a tuning variable (bound to a divisor of the output height to run). With
// pad_in_loads = 1 there is no padded copy: two stages (the re-layout, then the convolution
// reading the input through the pad view), checked the same way on random small layers (3×3
// and 5×5, padding 0-2, stride 1-2). convRegisterBlockedVectorDefinition with the same
// factors computes the same. With row_unroll = 1 the window's levels are [K][C][K] and a row's
// taps are an unrolled reduce inside the reduce over rows and channels; checked the same way.
// Wrong factors are refused.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/strategies.h"
#include "tests/support/expr_counting.h"
#include "tests/support/listing3_layers.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

using testing::countPrims;

constexpr double kTolerance = 1e-4;

struct Block {
  int kappa, sigma, rows;  // rows 0: left symbolic
  int padInLoads = 0;      // 1: no padded copy, the convolution reads through the pad view
  int rowUnroll = 0;       // 1: the window's loops row, channel, unrolled taps
};

// The strategy's definition for a block, checked for its shape.
Definition rewriteChecked(const Definition& conv, const Block& b, RewriteContext& context) {
  const NamedStrategy* strategy = findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  RuleArguments arguments = {{"kappa", Arith(b.kappa)}, {"sigma", Arith(b.sigma)}};
  if (b.rows > 0) arguments.push_back({"rows", Arith(b.rows)});
  // pad_in_loads 0 given explicitly half the time (it is the default).
  if (b.padInLoads != 0 || b.kappa == 8) {
    arguments.push_back({"pad_in_loads", Arith(b.padInLoads)});
  }
  if (b.rowUnroll != 0 || b.kappa == 16) arguments.push_back({"row_unroll", Arith(b.rowUnroll)});
  StrategyResult result = strategy->make(arguments)(conv, context);
  REQUIRE_MESSAGE(result.success(), result.failure);
  const Definition rewritten = *result.definition;
  CAPTURE(printDefinition(rewritten));
  TypedDefinition typed = typecheck(rewritten);
  CHECK(typed.type == typecheck(conv).type);
  const Expr& body = rewritten.function.body();
  REQUIRE(body.isPrim(Op::Let));
  if (b.padInLoads == 0) {
    // Two let-bound stages (re-layout, padding) around the convolution.
    REQUIRE(body.funs()[0].body().isPrim(Op::Let));
    CHECK(countPrims(body, Op::Let) == 2);
    CHECK(countPrims(body, Op::MapGlb) == 4);
    // The pads (rows, then pixels of a row) are read only by the padding's copy nest.
    CHECK(countPrims(body.funs()[0].body().funs()[0].body(), Op::Pad) == 0);
  } else {
    // One let-bound stage (re-layout); the convolution reads the input through the pads.
    CHECK(countPrims(body, Op::Let) == 1);
    CHECK(countPrims(body, Op::MapGlb) == 2);
    CHECK(countPrims(body.funs()[0].body(), Op::Pad) == 2);
  }
  CHECK(countPrims(body, Op::MapWrg) == 2);
  CHECK(countPrims(body, Op::MapLcl) == 2);
  CHECK(countPrims(body, Op::Reduce) == 0);
  CHECK(countPrims(body, Op::ReduceSeq) == 1);
  // row_unroll: the taps of a window row an unrolled reduce whose initial value is the
  // enclosing reduce's accumulator (code generation updates it in place).
  CHECK(countPrims(body, Op::ReduceSeqUnroll) == b.rowUnroll);
  forEachNode(body, [&](const Expr& node) {
    if (node.isPrim(Op::ReduceSeqUnroll)) CHECK(node.args()[0].isParam());
  });
  // The re-laid-out weights: [M/κ][K][K][C][κ] (κ kernels innermost).
  Type relaid = typed.types.at(body.args()[0].node());
  int rank = 0;
  Arith innermost;
  while (relaid.isArray()) {
    ++rank;
    innermost = relaid.arrayLength();
    relaid = relaid.arrayElement();
  }
  CHECK(rank == 5);
  CHECK(innermost == Arith(b.kappa));
  // One reduce over the window with σ vector accumulators of width κ.
  forEachNode(body, [&](const Expr& node) {
    if (!node.isPrim(Op::ReduceSeq)) return;
    const Type accumulator = typed.types.at(node.args()[0].node());
    REQUIRE(accumulator.isArray());
    CHECK(accumulator.arrayLength() == Arith(b.sigma));
    CHECK(accumulator.arrayElement() == Type::vector(ScalarKind::Float, b.kappa));
    CHECK(countPrims(node.funs()[0], Op::MapSeqUnroll) == 1);
    CHECK(countPrims(node.funs()[0], Op::Map) == 0);
  });
  if (b.rows > 0) {
    CHECK(context.tuningVariables().empty());
  } else {
    REQUIRE(context.tuningVariables().size() == 1);
    CHECK(context.tuningVariables()[0].varName().rfind("rows", 0) == 0);
  }
  return rewritten;
}

// C channels, an H×H image, M kernels of K×K, padding P, stride S.
void checkLayer(int channels, int size, int kernels, int kernelSize, int padding, int stride,
                const std::vector<Block>& blocks, uint64_t seed) {
  const Definition conv = testing::listing3FromExample();
  std::mt19937_64 rng(seed);
  const testing::Listing3Layer layer = testing::randomListing3Layer(
      conv, channels, kernels, kernelSize, size, size, padding, stride, rng);
  const Value expected = interpret(conv, layer.inputs, layer.sizes);
  const int64_t outH = (size + 2 * padding - kernelSize) / stride + 1;
  for (const Block& b : blocks) {
    CAPTURE(b.kappa);
    CAPTURE(b.sigma);
    CAPTURE(b.rows);
    CAPTURE(b.padInLoads);
    CAPTURE(b.rowUnroll);
    RewriteContext context;
    const Definition rewritten = rewriteChecked(conv, b, context);
    CAPTURE(printDefinition(rewritten));
    ArithBinding sizes = layer.sizes;
    std::vector<int> rowChoices = {b.rows};
    if (b.rows == 0) {
      rowChoices.clear();
      for (int r = 1; r <= outH; ++r) {
        if (outH % r == 0) rowChoices.push_back(r);
      }
    }
    for (int rows : rowChoices) {
      CAPTURE(rows);
      if (b.rows == 0) sizes[context.tuningVariables()[0].varName()] = rows;
      const Value actual = interpret(rewritten, layer.inputs, sizes);
      CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                    "max difference " << maxAbsDifference(actual, expected));
    }
    if (b.rows > 0) {
      // The hand-built reference of the same shape computes the same.
      const Definition byHand = convRegisterBlockedVectorDefinition(conv, b.kappa, b.sigma,
                                                                    Arith(b.rows), b.padInLoads != 0);
      CHECK(countPrims(byHand.function.body(), Op::Let) == (b.padInLoads ? 1 : 2));
      const Value actual = interpret(byHand, layer.inputs, layer.sizes);
      CHECK_MESSAGE(approximatelyEqual(actual, expected, kTolerance, kTolerance),
                    "by hand: max difference " << maxAbsDifference(actual, expected));
    }
  }
}

}  // namespace

TEST_CASE("conv-register-blocked-vector: padded layer, kappa 4, 8 and 16") {
  //                            kappa sigma rows
  checkLayer(3, 8, 16, 3, 1, 1, {{4, 4, 2}, {8, 8, 1}, {16, 2, 4}, {16, 8, 8}, {4, 2, 0}}, 11);
}

TEST_CASE("conv-register-blocked-vector: stride 2, no padding, 5x5 kernels") {
  checkLayer(2, 9, 8, 3, 0, 2, {{4, 2, 1}, {8, 4, 2}, {8, 1, 4}}, 12);
  checkLayer(2, 9, 4, 5, 0, 1, {{4, 5, 5}, {2, 1, 1}}, 13);
}

namespace {

// Eight random small layers (1-5 channels, kappa 4 or 8 dividing the kernels, padding 0-2,
// stride 1-2, 3x3 windows, or 5x5 in every third trial when withFiveByFive), each with sigma and R
// random divisors of the output width and height.
void checkRandomLayers(uint64_t seed, int padInLoads, bool withFiveByFive, int rowUnroll = 0) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 8; ++trial) {
    const int channels = std::uniform_int_distribution<int>(1, 5)(rng);
    const int kappa = trial % 2 == 0 ? 4 : 8;
    const int kernels = kappa * std::uniform_int_distribution<int>(1, 3)(rng);
    const int padding = std::uniform_int_distribution<int>(0, 2)(rng);
    const int stride = std::uniform_int_distribution<int>(1, 2)(rng);
    const int kernelSize = withFiveByFive && trial % 3 == 0 ? 5 : 3;
    const int size = std::uniform_int_distribution<int>(kernelSize, 9)(rng);
    const int out = (size + 2 * padding - kernelSize) / stride + 1;
    std::vector<int> divisors;
    for (int d = 1; d <= out; ++d) {
      if (out % d == 0) divisors.push_back(d);
    }
    std::uniform_int_distribution<size_t> pick(0, divisors.size() - 1);
    const int sigma = divisors[pick(rng)];
    const int rows = divisors[pick(rng)];
    CAPTURE(channels);
    CAPTURE(kernels);
    CAPTURE(padding);
    CAPTURE(stride);
    CAPTURE(size);
    CAPTURE(kernelSize);
    checkLayer(channels, size, kernels, kernelSize, padding, stride,
               {{kappa, sigma, rows, padInLoads, rowUnroll}}, rng());
  }
}

}  // namespace

TEST_CASE("conv-register-blocked-vector: random small layers") {
  checkRandomLayers(2026, 0, false);
}

TEST_CASE("conv-register-blocked-vector with pad_in_loads = 1: no padded copy") {
  //                            kappa sigma rows pad_in_loads
  checkLayer(3, 8, 16, 3, 1, 1, {{4, 4, 2, 1}, {16, 8, 8, 1}, {4, 2, 0, 1}}, 21);
  checkLayer(2, 9, 8, 3, 0, 2, {{8, 4, 2, 1}}, 22);  // no padding: the pad view is empty
}

TEST_CASE("conv-register-blocked-vector with pad_in_loads = 1: random small layers") {
  checkRandomLayers(2027, 1, true);
}

TEST_CASE("conv-register-blocked-vector with row_unroll = 1: channels outside the row's taps") {
  //                            kappa sigma rows pad_in_loads row_unroll
  checkLayer(3, 8, 16, 3, 1, 1, {{4, 4, 2, 0, 1}, {16, 8, 8, 1, 1}, {4, 2, 0, 1, 1}}, 23);
  checkLayer(2, 9, 4, 5, 0, 1, {{4, 5, 5, 0, 1}}, 24);
  checkRandomLayers(2028, 0, true, 1);
  checkRandomLayers(2029, 1, true, 1);
}

TEST_CASE("conv-register-blocked-vector refuses symbolic or invalid kappa and sigma") {
  const NamedStrategy* strategy = findStrategy("conv-register-blocked-vector");
  REQUIRE(strategy != nullptr);
  CHECK_THROWS(strategy->make({{"kappa", Arith(5)}, {"sigma", Arith(2)}}));
  CHECK_THROWS(strategy->make(
      {{"kappa", Arith::var("k", VarKind::Tuning, Arith(1), Arith(16))}, {"sigma", Arith(2)}}));
  CHECK_THROWS(strategy->make({{"kappa", Arith(4)}}));
  CHECK_THROWS(strategy->make({{"kappa", Arith(4)}, {"sigma", Arith(2)}, {"theta", Arith(2)}}));
  CHECK_THROWS(
      strategy->make({{"kappa", Arith(4)}, {"sigma", Arith(2)}, {"pad_in_loads", Arith(2)}}));
  CHECK_THROWS(strategy->make({{"kappa", Arith(4)},
                               {"sigma", Arith(2)},
                               {"pad_in_loads", Arith::var("p", VarKind::Tuning, 0, 1)}}));
  CHECK_NOTHROW(
      strategy->make({{"kappa", Arith(4)}, {"sigma", Arith(2)}, {"pad_in_loads", Arith(1)}}));
  CHECK_THROWS(
      strategy->make({{"kappa", Arith(4)}, {"sigma", Arith(2)}, {"row_unroll", Arith(2)}}));
}
