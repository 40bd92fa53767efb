// Winograd's minimal filtering for 3×3 stride-1 convolutions (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", CVPR 2016): an output tile of m×m pixels is computed from
// an α×α input tile (α = m + 2) with α² multiplications per channel instead of 9m², as
//
//   Y = Aᵀ [ Σ_c (G g_c Gᵀ) ⊙ (Bᵀ d_c B) ] A
//
// in four stages, each in weft's primitives with the transform matrices as constant arrays
// (array(...)): the weights' transform U = G g Gᵀ per kernel and channel, the input's
// transform V = Bᵀ d B per tile and channel, α² independent products summing over the channels
// (U_ξ [M][C] times V_ξ: the bulk of the work, a 1×1 convolution per ξ), and the output's
// transform Aᵀ · A plus the bias, per tile a map2D over its m×m pixels of a map over the
// kernels (the Listing 3 shape again, with the rows of Aᵀ⊗Aᵀ as the windows). A 2D transform X ↦ L
// X Rᵀ of a tile is one product with the Kronecker product L ⊗ R on the tile's flattened values, so
// each stage is a map over the rows of a constant matrix of a sum of products, the shape every
// later rule and code generation know (unrolled, the matrix entries are literals and the zero terms
// are dropped).
//
//  conv-winograd-2x2   transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(z(k), (acc, p)
//  conv-winograd-4x4   -> acc + p._0 * p._1, zip(join(join(w)), join(join(b(k))))), ks)),
//                      slide2D(3, 1, X)) => the four stages above with m = 2 (F(2×2, 3×3)) or
//                      m = 4 (F(4×4, 3×3)), tiles slide2D(α, m, X), the output tiles joined back
//                      [m | the output's height and width, a constraint of the result's type]
//
// The sums are re-associated and the transforms' entries (1/2, 1/6, 1/24, ...) are not exact in
// floating point: the result equals the direct convolution up to rounding, more of it for m = 4.
// tests/rewrite/property_rules_winograd.cpp checks both rules against the interpreter.
#include "rewrite/rules_winograd.h"

#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

using Matrix = std::vector<std::vector<double>>;

// F(2, 3) with interpolation points 0, 1, -1 and ∞ (Lavin and Gray, section 4.1).
WinogradMatrices winograd2() {
  return {2,
          {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}},
          {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}},
          {{1, 1, 1, 0}, {0, 1, -1, -1}}};
}

// F(4, 3) with points 0, ±1, ±2 and ∞ (Lavin and Gray, section 4.2).
WinogradMatrices winograd4() {
  const double sixth = 1.0 / 6, twelfth = 1.0 / 12, twentyFourth = 1.0 / 24;
  return {4,
          {{4, 0, -5, 0, 1, 0},
           {0, -4, -4, 1, 1, 0},
           {0, 4, -4, -1, 1, 0},
           {0, -2, -1, 2, 1, 0},
           {0, 2, -1, -2, 1, 0},
           {0, 4, 0, -5, 0, 1}},
          {{0.25, 0, 0},
           {-sixth, -sixth, -sixth},
           {-sixth, sixth, -sixth},
           {twentyFourth, twelfth, sixth},
           {twentyFourth, -twelfth, sixth},
           {0, 0, 1}},
          {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}}};
}

// L ⊗ R: row (a, b) holds L[a][i]·R[b][j] at column (i, j), rows and columns in row-major
// order, the order join gives a tile's values. Entries are rounded to float once, here.
Matrix kronecker(const Matrix& left, const Matrix& right) {
  Matrix result;
  for (const auto& l : left) {
    for (const auto& r : right) {
      std::vector<double> row;
      for (double x : l) {
        for (double y : r) {
          const double product = static_cast<float>(x * y);
          row.push_back(product == 0 ? 0.0 : product);  // no -0.0f in the program text
        }
      }
      result.push_back(std::move(row));
    }
  }
  return result;
}

Expr constantMatrix(const Matrix& matrix) {
  std::vector<Expr> rows;
  for (const auto& row : matrix) {
    std::vector<Expr> values;
    for (double value : row) values.push_back(Expr::floatLiteral(value));
    rows.push_back(arrayOf(std::move(values)));
  }
  return arrayOf(std::move(rows));
}

Expr sumOfProducts() {
  return lam2("acc", "p", [](Expr acc, Expr p) { return acc + get(0, p) * get(1, p); });
}

// [float]n: row i is Σ_j matrix[i][j]·values[j], each a sum from 0 (or from `init`).
Expr matrixTimes(const Matrix& matrix, const Expr& values, const Expr& init) {
  return join(map(lam("coefficients",
                      [&](Expr coefficients) {
                        return reduce(init, sumOfProducts(), zip(coefficients, values));
                      }),
                  constantMatrix(matrix)));
}

bool isConstant(const Arith& a, int64_t value) { return a.constant() == value; }

// map2D(f, tiles) with the binder tileRow for a row of tiles (strategies tell the maps over tiles
// from the maps over the rows of a block, which map2d-kernel-blocking names row).
Expr overTiles(const Expr& f, Expr tiles) {
  return map(lam("tileRow", [&](Expr r) { return map(f, std::move(r)); }), std::move(tiles));
}

std::optional<Expr> winograd(const RuleApplication& a, const WinogradMatrices& f) {
  std::optional<Expr> inner = matchTransposeOfMapTranspose(a.node);
  if (!inner) return std::nullopt;
  std::optional<ConvMap2D> conv = matchConvMap2D(*inner);
  if (!conv) return std::nullopt;
  std::optional<Slide2DExpansion> slid = matchSlide2D(conv->windows);
  if (!slid || !isConstant(slid->size1, 3) || !isConstant(slid->size2, 3) ||
      !isConstant(slid->step1, 1) || !isConstant(slid->step2, 1)) {
    return std::nullopt;
  }
  // X: [H'][W'][C] of floats, and each kernel b(k): [3][3][C].
  const Type xType = a.typeOf(slid->x);
  if (!xType.isArray() || !xType.arrayElement().isArray() ||
      !xType.arrayElement().arrayElement().isArray() ||
      !xType.arrayElement().arrayElement().arrayElement().isScalar()) {
    return std::nullopt;
  }
  const int64_t m = f.m;
  const int64_t alpha = m + 2;
  const Matrix inputTransform = kronecker(f.bt, f.bt);   // [α²][α²]
  const Matrix weightTransform = kronecker(f.g, f.g);    // [α²][9]
  const Matrix outputTransform = kronecker(f.at, f.at);  // [m²][α²]
  const Expr zero = Expr::floatLiteral(0.0);

  // U: [α²][M][C], the weights' transform per kernel and channel.
  Expr transformedKernels = transpose(
      map(Expr::lambda(
              {conv->kernelParam},
              transpose(map(
                  lam("taps", [&](Expr taps) { return matrixTimes(weightTransform, taps, zero); }),
                  transpose(join(conv->kernel))))),
          conv->kernels));
  // V: [α²][TH][TW][C], the input's transform per tile and channel.
  Expr tiles =
      buildSlide2D(Op::Slide, Op::Slide, Arith(alpha), Arith(alpha), Arith(m), Arith(m), slid->x);
  Expr transformedTiles = overTiles(
      lam("tile",
          [&](Expr tile) {
            return transpose(
                map(lam("values",
                        [&](Expr values) { return matrixTimes(inputTransform, values, zero); }),
                    transpose(join(std::move(tile)))));
          }),
      std::move(tiles));
  transformedTiles = transpose(map(lam("tileRow", [](Expr r) { return transpose(std::move(r)); }),
                                   std::move(transformedTiles)));
  // The α² products: [α²][TH][TW][M], each a 1×1 convolution of V_ξ with U_ξ.
  Expr products =
      map(lam("pair",
              [&](Expr pair) {
                Expr u = get(1, pair);
                return map2DOf(lam("window",
                                   [&](Expr window) {
                                     return join(map(lam("weights",
                                                         [&](Expr weights) {
                                                           return reduce(zero, sumOfProducts(),
                                                                         zip(window, weights));
                                                         }),
                                                     u));
                                   }),
                               get(0, pair));
              }),
          zip(std::move(transformedTiles), std::move(transformedKernels)));
  // [TH][TW][M][α²]: each tile's products per kernel.
  Expr perTile = map(lam("tileRow",
                         [](Expr r) {
                           return map(lam("tile", [](Expr t) { return transpose(std::move(t)); }),
                                      transpose(std::move(r)));
                         }),
                     transpose(std::move(products)));
  // The output's transform plus z(k): [TH][TW][m][m][M]. Per tile, a map2D over the m×m
  // output pixels (the rows of Aᵀ⊗Aᵀ split into m rows of m) of a map over the kernels: pixel
  // (i, j) of kernel k is z(k) + Σ_ξ (Aᵀ⊗Aᵀ)[(i, j)][ξ]·products[ξ][k] — the shape of a window
  // reduced against every kernel, which the vector blocking rules take.
  Expr outputTiles = overTiles(
      lam("tile",
          [&](Expr tile) {
            Expr pairs = zip(conv->kernels, std::move(tile));
            return map2DOf(lam("coefficients",
                               [&](Expr coefficients) {
                                 return join(map(lam("q",
                                                     [&](Expr q) {
                                                       Expr init = substituteParams(
                                                           conv->init,
                                                           {{conv->kernelParam, get(0, q)}});
                                                       return reduce(init, sumOfProducts(),
                                                                     zip(coefficients, get(1, q)));
                                                     }),
                                                 pairs));
                               }),
                           split(Arith(m), constantMatrix(outputTransform)));
          }),
      std::move(perTile));
  // [TH][TW][m][m][M] -> [TH·m][TW·m][M] -> [M][TH·m][TW·m] (the outer transposes).
  Expr rows = join(map(lam("tileRow",
                           [](Expr r) {
                             return map(lam("pixelRow", [](Expr p) { return join(std::move(p)); }),
                                        transpose(std::move(r)));
                           }),
                       std::move(outputTiles)));
  return transpose(
      map(lam("outRow", [](Expr r) { return transpose(std::move(r)); }), std::move(rows)));
}

}  // namespace

const WinogradMatrices& winogradMatrices(int64_t m) {
  static const WinogradMatrices two = winograd2();
  static const WinogradMatrices four = winograd4();
  if (m == 2) return two;
  if (m == 4) return four;
  throw std::invalid_argument("Winograd tiles are 2x2 or 4x4, not " + std::to_string(m));
}

void addWinogradRules(std::vector<Rule>& rules) {
  const char* shape =
      "transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(z(k), (acc, p) -> acc + "
      "p._0 * p._1, zip(join(join(w)), join(join(b(k))))), ks)), slide2D(3, 1, X)) => ";
  rules.push_back({"conv-winograd-2x2",
                   std::string(shape) +
                       "F(2×2, 3×3): U = (G⊗G)·g per kernel and channel, V = (Bᵀ⊗Bᵀ)·d per "
                       "4×4 tile slide2D(4, 2, X) and channel, 16 products Σ_c U_ξ·V_ξ, then "
                       "(Aᵀ⊗Aᵀ)·M + z(k) per 2×2 output tile   [2 | output height and width]",
                   RuleFamily::Reduction,
                   {},
                   [](const RuleApplication& a) { return winograd(a, winogradMatrices(2)); }});
  rules.push_back({"conv-winograd-4x4",
                   std::string(shape) +
                       "F(4×4, 3×3): as conv-winograd-2x2 with 6×6 tiles slide2D(6, 4, X), 36 "
                       "products and 4×4 output tiles   [4 | output height and width]",
                   RuleFamily::Reduction,
                   {},
                   [](const RuleApplication& a) { return winograd(a, winogradMatrices(4)); }});
}

}  // namespace weft::rewrite
