// The conv-winograd strategy (see rewrite/strategy_conv_winograd.h for its steps).
#include "rewrite/strategy_conv_winograd.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/type.h"
#include "rewrite/strategy_steps.h"

namespace weft::rewrite {

namespace {

// Listing 3 with its kernel size K = 3 and stride S = 1: the Winograd rules match constant
// windows only. A definition whose weights are not 3×3 (K a different number) is left as it is,
// and the rules then fail to match.
Strategy threeByThreeStrideOne() {
  return [](const Definition& definition, RewriteContext&) -> StrategyResult {
    // K and S stay declared, each with its one value as its range, so that binding the sizes
    // of a layer whose kernel or stride differs is refused as out of range.
    Definition specialised = withSizesFixed(definition, {{"K", Arith(3)}, {"S", Arith(1)}});
    return StrategyResult::ok(std::move(specialised));
  };
}

// map(f, windowBlock): the map over a block's windows that vectorize-block-accumulators turns
// into σ vector accumulators (not the transforms' maps, which have the same shape).
bool isMapOverWindowBlock(const Expr& node) {
  return node.isPrim(Op::Map) && node.args()[0].isParam() &&
         node.args()[0].paramName() == "windowBlock";
}

// A map over the rows of a constant matrix (array(...)): a transform's outputs.
bool isMapOverConstantMatrix(const Expr& node) {
  return node.isPrim(Op::Map) && node.args()[0].isPrim(Op::ArrayOf);
}

bool containsConstantMatrix(const Expr& e) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    if (node.isPrim(Op::ArrayOf)) found = true;
  });
  return found;
}

bool mentionsParamNamed(const Expr& e, const std::string& name) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    if (node.isParam() && node.paramName() == name) found = true;
  });
  return found;
}

// reduce(z, f, zip(coefficients, values)): one output of a transform (coefficients a row of its
// constant matrix); once the output's transform is vectorized, its reduce over a block of those
// rows, transposed.
bool isSumOverCoefficients(const Expr& node) {
  if (!node.isPrim(Op::Reduce)) return false;
  const Expr& pairs = node.args()[1];
  return pairs.isPrim(Op::Zip) && mentionsParamNamed(pairs.args()[0], "coefficients");
}

// The products' map2D over a product's tiles (map(row -> ..., pair._0)).
bool isProductsMap2D(const Expr& node) {
  return node.isPrim(Op::Map) && node.args()[0].isPrim(Op::Get);
}

// The output transform's map2D over a tile's m×m pixels (map(row -> ..., split(m, array(...)))).
bool isOutputPixelsMap2D(const Expr& node) {
  return node.isPrim(Op::Map) && node.args()[0].isPrim(Op::Split) &&
         node.args()[0].args()[0].isPrim(Op::ArrayOf);
}

// A computing map over `name` of the output's transform blocks (its function reads a row of the
// constant matrix).
NodePredicate outputTransformMapOver(const std::string& name) {
  NodePredicate named = computingMapOver(name);
  return [named](const Expr& node) {
    return named(node) && mentionsParamNamed(node.funs()[0], "coefficients");
  };
}

// A computing map over `name` of the products (not of the output's transform, whose blocks have
// the same binders).
NodePredicate productsMapOver(const std::string& name) {
  NodePredicate named = computingMapOver(name);
  return [named](const Expr& node) { return named(node) && !containsConstantMatrix(node); };
}

}  // namespace

Strategy convWinograd(const RuleArguments& arguments) {
  static const std::vector<std::string> known = {"m", "kappa", "sigma", "rows", "partial_tiles"};
  for (const auto& [name, value] : arguments) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      throw std::invalid_argument(
          "conv-winograd takes m, kappa, sigma, rows and partial_tiles, not " + name);
    }
  }
  auto number = [&](const std::string& name) -> int64_t {
    std::optional<Arith> value = factorValue(arguments, name);
    if (!value || !value->constant()) {
      throw std::invalid_argument("conv-winograd: " + name + " must be given as a number");
    }
    return *value->constant();
  };
  const int64_t m = number("m");
  const int64_t kappa = number("kappa");
  const int64_t sigma = number("sigma");
  if (m != 2 && m != 4) throw std::invalid_argument("conv-winograd: m must be 2 or 4");
  if (!isValidVectorWidth(kappa)) {
    throw std::invalid_argument("conv-winograd: kappa must be 2, 3, 4, 8 or 16");
  }
  if (sigma < 1) throw std::invalid_argument("conv-winograd: sigma must be >= 1");
  int64_t partialTiles = 0;
  if (factorValue(arguments, "partial_tiles")) {
    partialTiles = number("partial_tiles");
    if (partialTiles != 0 && partialTiles != 1) {
      throw std::invalid_argument("conv-winograd: partial_tiles must be 0 or 1");
    }
  }
  const std::string winogradRule = m == 2 ? "conv-winograd-2x2" : "conv-winograd-4x4";
  RuleArguments blocking = {{"kappa", Arith(kappa)}, {"sigma", Arith(sigma)}};
  std::optional<Arith> rows = factorValue(arguments, "rows");
  if (rows) blocking.push_back({"rows", *rows});
  // partial_tiles: the output padded to whole blocks of σ tiles of m columns, and of rows
  // tiles of m rows when rows is a number (a tuning variable's rows divide the tile rows).
  const Arith rowsMultiple = Arith(m) * (rows && rows->constant() ? *rows : Arith(1));
  const Arith columnsMultiple = Arith(m * sigma);

  return [=](const Definition& definition, RewriteContext& context) -> StrategyResult {
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    auto required = [](Strategy s, const std::string& what) {
      return requiredStep(std::move(s), "conv-winograd", what);
    };
    std::vector<Strategy> steps = {
        threeByThreeStrideOne(),
        partialTiles != 0 ? padToWholeBlocks(rowsMultiple, columnsMultiple, "conv-winograd")
                          : identity(),
        required(topDown(rule(winogradRule)),
                 "not a 3x3 stride-1 convolution of sums of products (Listing 3)"),
        required(topDownWhere(rule("map2d-kernel-blocking"), isProductsMap2D, blocking),
                 "the products over the channels cannot be blocked"),
        // The output's transform per tile: κ kernels × one row of m pixels per block, so that
        // each step adds a literal times a vector of κ kernels' products.
        required(topDownWhere(rule("map2d-kernel-blocking"), isOutputPixelsMap2D,
                              {{"kappa", Arith(kappa)}, {"sigma", Arith(m)}, {"rows", Arith(m)}}),
                 "the output's transform cannot be blocked"),
        required(topDownWhere(rule("map-flatten-nested"), computingMapOver("pair")),
                 "the products' kernel groups cannot be flattened"),
        required(topDownWhere(rule("vectorize-block-accumulators"), isMapOverWindowBlock),
                 "the blocks' reduction is not acc + value * weight"),
        required(topDownWhere(rule("vectorize-block-accumulators"), isMapOverWindowBlock),
                 "the blocks' reduction is not acc + value * weight"),
        repeat(topDown(rule("let-hoist")), 4),
        required(topDown(rule("hoist-relayout")), "no weight view to re-lay out"),
        repeat(topDown(rule("hoist-relayout")), 2),
        topDownWhere(rule("map-to-mapwrg"), productsMapOver("kernelGroup"), dim(2)),
        topDownWhere(rule("map-to-mapwrg"), productsMapOver("rowGroup"), dim(1)),
        topDownWhere(rule("map-to-maplcl"), productsMapOver("row"), dim(1)),
        topDownWhere(rule("map-to-maplcl"), productsMapOver("windowBlock"), dim(0)),
        lowerCopyNests(2),
        // The output transform's blocks (one of m rows of m pixels per tile and kernel group)
        // unrolled, so that the constant matrix is read at constant indices.
        repeat(topDownWhere(rule("map-to-mapseq-unroll"), outputTransformMapOver("rowGroup")), 2),
        repeat(topDownWhere(rule("map-to-mapseq-unroll"), outputTransformMapOver("row")), 2),
        repeat(topDownWhere(rule("map-to-mapseq-unroll"), outputTransformMapOver("windowBlock")),
               2),
        repeat(topDownWhere(rule("map-to-mapseq-unroll"), isMapOverConstantMatrix), 8),
        repeat(unrollComputingAccumulatorMaps(), 16),
        repeat(topDownWhere(rule("reduce-to-reduceseq-unroll"), isSumOverCoefficients), 8),
        repeat(topDownWhere(rule("reduce-to-reduceseq"),
                            [](const Expr& n) { return !isSumOverCoefficients(n); }),
               16),
    };
    Strategy all = identity();
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) all = seq(*it, all);
    return all(definition, context);
  };
}

}  // namespace weft::rewrite
