// Work-group tiles staged in local memory, for a convolution and for all-pairs products.
//
// The work-group-tiled convolution, the shape of the fast GPU kernels (CLBlast's Xconvgemm,
// TVM's CUDA direct template, myGEMM; ../shared/research/gpu-conv.md): a work-group computes an
// output tile of TK kernels × TH×TW pixels; each step of a reduction over the input channels, TC
// at a time, its work-items copy the input tile with its halo and the weight tile into local
// memory together, and each work-item then accumulates a register tile of RK kernels × RP pixels
// from them. The register tiles are the work-items' own parts of the reduction's accumulator
// (code generation keeps them in private memory across the steps, codegen/gen_support.h's
// workItemOwnedDims), and the barriers around each step's copies are placed by code generation.
//
//  conv-workgroup-tiles
//      transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(z(k), (acc, p) -> acc +
//      p._0 * p._1, zip(join(join(w)), join(join(b(k))))), ks)), slide2D(K, S, X)) =>
//      per tile of slide2D((TH-1)·S+K, (TW-1)·S+K, TH·S, TW·S, X) (mapWrg(2) over tile rows,
//      mapWrg(1) over tile columns) and group of TK kernels (mapWrg(0)):
//        join(reduceSeq(init, (acc, c) -> let(x -> let(w -> mapLcl(1, over TK/RK kernel groups
//        of RK, mapLcl(0, over TH·TW/RP pixel groups of RP, the register tile's sum over the
//        chunk's K·K·TC values), zip(acc, ...)), stage(c._1)), stage(c._0)),
//        zip(input tile's channel chunks, kernels' channel chunks)))
//      init: each register tile filled with its kernels' z(k); stage(v) = toLocal(mapLcl(1,
//      mapLcl(0, copy)))(v), or v itself (read from global memory) when that operand is not
//      staged (the input tile stored channels-first, [TC][rows][cols]: neighbouring work-items
//      read neighbouring words); the pixel groups interleaved (group g holds pixels g, g +
//      TH·TW/RP, …: neighbouring work-items read neighbouring pixels, conflict-free in local memory
//      and coalesced); the tiles' results rearranged to [M][OH][OW]. Factors: kernels_per_group TK,
//      kernels_per_item RK, tile_rows TH, tile_cols TW, pixels_per_item RP, channels_per_step TC
//      (tuning variables when not given; RK and RP must be given numbers: they are unrolled),
//      stage_input and stage_weights (0 or 1, default 1: Mali's kernels stage nothing, gpu-conv.md
//      §0.2). Constraints from the types: TK | M, RK | TK, TC | C, RP | TH·TW, TH | OH, TW | OW.
//
// The channel sums are re-associated (TC at a time), so the result equals the direct
// convolution up to rounding. tests/rewrite/property_rules_workgroup_tiling.cpp checks the rule
// against the interpreter on random layers.
//
//  allpairs-workgroup-tiles
//      map(a -> join(map(b -> reduce(z, (acc, p) -> acc + p._0 * p._1, zip(a, b)), Bs)), As) =>
//      the same shape for every row of As against every row of Bs (a matrix product, Bs =
//      transpose(B)): a work-group computes a TM × TN tile of the result (mapWrg(1) over row
//      tiles, mapWrg(0) over column tiles); each step of a reduceSeq over chunks of TC of the
//      depth, its work-items copy the rows' chunk [TM][TC] and the columns' chunk (depth-first,
//      [TC][TN]: neighbouring work-items copy neighbouring columns, a row of B) into local
//      memory, and each work-item then accumulates an RM × RN register tile (mapLcl(1) over row
//      groups, mapLcl(0) over column groups, interleaved: group g holds columns g, g + TN/RN,
//      …). Factors: rows_per_group TM, cols_per_group TN, depth_per_step TC, rows_per_item RM,
//      cols_per_item RN (numbers: unrolled), stage_rows and stage_cols (0 or 1, default 1).
//      The shape of the fast GPU GEMMs (CLBlast's Xgemm, myGEMM's kernels 6-10; see
//      ../shared/research/gpu-conv.md). The depth sums are re-associated TC at a time; the
//      property test checks the rule against the interpreter on random sizes.
#include <optional>
#include <string>

#include "ir/builders.h"
#include "rewrite/library.h"
#include "rewrite/rule_helpers.h"

namespace weft::rewrite {

namespace {

// v: [...][C] at `depth` array levels above the channels -> [C/TC][...][TC], the channel
// chunks outermost.
Expr channelChunksOutermost(int depth, const Arith& tc, Expr v) {
  // Split the innermost level into chunks: [...][C/TC][TC].
  Expr chunked = mapDeep(depth, [&](Expr px) { return split(tc, std::move(px)); }, std::move(v));
  // Move the chunk level out one level at a time.
  for (int level = depth - 1; level >= 0; --level) {
    chunked = mapDeep(level, [](Expr x) { return transpose(std::move(x)); }, std::move(chunked));
  }
  return chunked;
}

// A copy of `v` (of type `type`, at least two array levels) by every work-item of the group:
// mapLcl(1) over the outer level, mapLcl(0) over the next level flattened, into local memory.
Expr stagedInLocalMemory(const Type& type, Expr v) {
  // Levels below the second are flattened into it and split back after the copy.
  std::vector<Arith> inner;
  Type t = type.arrayElement();
  while (t.arrayElement().isArray()) {
    inner.push_back(t.arrayElement().arrayLength());
    t = t.arrayElement();
  }
  Expr copy = toLocal(
      lam("tile",
          [&](Expr tile) {
            return mapLcl(Arith(1),
                          lam("slice",
                              [&](Expr slice) {
                                return mapLcl(Arith(0), lam("value", [](Expr x) { return id(x); }),
                                              joinDeep(static_cast<int>(inner.size()),
                                                       std::move(slice)));
                              }),
                          std::move(tile));
          }),
      std::move(v));
  if (inner.empty()) return copy;
  return map(lam("slice",
                 [&](Expr slice) {
                   // Split back innermost level first.
                   Expr shaped = std::move(slice);
                   for (auto it = inner.rbegin(); it != inner.rend(); ++it) {
                     shaped = split(*it, std::move(shaped));
                   }
                   return shaped;
                 }),
             std::move(copy));
}

// Register tiles [G1][G0][R][P] filled from `values` ([G1·R]): tile (g1, g0)'s row r holds
// values[g1·R + r] in each of its P places. mapLcl(1) over the G1 groups, mapLcl(0) over G0.
Expr registerTilesFilled(Expr values, const Arith& r, const Arith& groups0, const Arith& p) {
  return mapLcl(Arith(1),
                lam("initGroup",
                    [&](Expr inits) {
                      return mapLcl(Arith(0),
                                    lam("initTile",
                                        [&](Expr tileInits) {
                                          return mapSeqUnroll(
                                              lam("z",
                                                  [&](Expr z) {
                                                    return mapSeqUnroll(
                                                        lam("v", [](Expr v) { return id(v); }),
                                                        fill(p, z));
                                                  }),
                                              tileInits);
                                        }),
                                    fill(groups0, inits));
                    }),
                split(r, std::move(values)));
}

// A register tile acc [R][P] updated over `positions` ([T] of pairs of an [R] and a [P]
// column): acc[r][p] += first[r] · second[p] at each position, both loops unrolled.
Expr registerTileUpdated(Expr acc, Expr positions) {
  return join(reduceSeq(std::move(acc),
                        lam2("a", "pos",
                             [](Expr a, Expr pos) {
                               return mapSeqUnroll(
                                   lam("row",
                                       [&](Expr row) {
                                         return mapSeqUnroll(
                                             lam("cell",
                                                 [&](Expr cell) {
                                                   return get(0, cell) + get(1, row) * get(1, cell);
                                                 }),
                                             zip(get(0, row), get(1, pos)));
                                       }),
                                   zip(a, get(0, pos)));
                             }),
                        std::move(positions)));
}

std::optional<Expr> workgroupTiles(const RuleApplication& a) {
  std::optional<Expr> inner = matchTransposeOfMapTranspose(a.node);
  if (!inner) return std::nullopt;
  std::optional<ConvMap2D> conv = matchConvMap2D(*inner);
  if (!conv) return std::nullopt;
  std::optional<Slide2DExpansion> slid = matchSlide2D(conv->windows);
  if (!slid || !(slid->size1 == slid->size2) || !(slid->step1 == slid->step2)) return std::nullopt;
  const Arith k = slid->size1;
  const Arith s = slid->step1;
  // X: [H'][W'][C] of floats; each kernel b(k): [K][K][C].
  const Type xType = a.typeOf(slid->x);
  if (!xType.isArray() || !xType.arrayElement().isArray() ||
      !xType.arrayElement().arrayElement().isArray() ||
      !xType.arrayElement().arrayElement().arrayElement().isScalar()) {
    return std::nullopt;
  }
  const Type ksType = a.typeOf(conv->kernels);
  const Type kernelType = a.typeOf(conv->kernel);
  if (!ksType.isArray() || !kernelType.isArray() || !(kernelType.arrayLength() == k)) {
    return std::nullopt;
  }
  const std::optional<Arith> rkGiven = a.given("kernels_per_item");
  const std::optional<Arith> rpGiven = a.given("pixels_per_item");
  if (!rkGiven || !rpGiven || !rkGiven->constant() || !rpGiven->constant() ||
      *rkGiven->constant() < 1 || *rpGiven->constant() < 1) {
    return std::nullopt;  // the register tile is unrolled: its sizes must be numbers
  }
  const Arith rk = *rkGiven, rp = *rpGiven;
  const Arith kernels = ksType.arrayLength();
  const Arith channels = xType.arrayElement().arrayElement().arrayLength();
  const Arith height = xType.arrayLength();
  const Arith width = xType.arrayElement().arrayLength();
  const Arith tk = a.factor("kernels_per_group",
                            [&](RewriteContext& c) { return c.freshTuning("tk", rk, kernels); });
  const Arith th = a.factor("tile_rows",
                            [&](RewriteContext& c) { return c.freshTuning("th", Arith(1), height); });
  const Arith tw = a.factor("tile_cols",
                            [&](RewriteContext& c) { return c.freshTuning("tw", Arith(1), width); });
  const Arith tc = a.factor("channels_per_step",
                            [&](RewriteContext& c) { return c.freshTuning("tc", Arith(1), channels); });
  const bool stageInput = a.given("stage_input").value_or(Arith(1)) == Arith(1);
  const bool stageWeights = a.given("stage_weights").value_or(Arith(1)) == Arith(1);
  const Arith pixels = th * tw;
  const Arith pixelGroups = pixels / rp;
  const Arith tileRows = (th - 1) * s + k;
  const Arith tileCols = (tw - 1) * s + k;

  auto kernelOf = [&](Expr kernel) {
    return substituteParams(conv->kernel, {{conv->kernelParam, std::move(kernel)}});
  };
  auto initOf = [&](Expr kernel) {
    return substituteParams(conv->init, {{conv->kernelParam, std::move(kernel)}});
  };

  // One work-group: `tile` [tileRows][tileCols][C], `group` TK kernels.
  auto perGroup = [&](Expr tile, Expr group) -> Expr {
    // [C/TC][tileRows][tileCols][TC] and [C/TC][TK][K][K][TC].
    Expr tileChunks = channelChunksOutermost(2, tc, std::move(tile));
    Expr kernelChunks = transpose(map(
        lam("kernel", [&](Expr kernel) { return channelChunksOutermost(2, tc, kernelOf(kernel)); }),
        group));
    // Each register tile [RK][RP] starts from its kernels' z(k).
    Expr init =
        registerTilesFilled(map(lam("kernel", [&](Expr kernel) { return initOf(kernel); }), group),
                            rk, pixelGroups, rp);
    // The register tile's update over one chunk: Σ over the K·K·TC positions of
    // acc[r][p] += weight[r] · input[p].
    // [R][K][K][TC] -> [K·K·TC][R] as join(join([K][K][TC][R])): zipped with the other
    // operand's, code generation loops over K, K and TC (no division of a flat index).
    auto positionsOf = [](Expr tile) {
      Expr t = map(lam("rowTaps", [](Expr r) { return transpose(std::move(r)); }),
                   transpose(std::move(tile)));  // [K][K][R][TC]
      t = map(lam("rowTaps",
                   [](Expr r) {
                     return map(lam("tap", [](Expr tap) { return transpose(std::move(tap)); }),
                                std::move(r));
                   }),
              std::move(t));  // [K][K][TC][R]
      return join(join(std::move(t)));
    };
    auto registerTile = [&](Expr acc, Expr weights, Expr windows) {
      return registerTileUpdated(
          std::move(acc), zip(positionsOf(std::move(weights)), positionsOf(std::move(windows))));
    };
    Expr step = lam2("acc", "chunk", [&](Expr acc, Expr chunk) {
      // The input tile is staged channels-first, [TC][rows][cols], so that the work-items,
      // which hold neighbouring pixels, read neighbouring words of local memory (no bank
      // conflicts at stride 1); it is read back as [rows][cols][TC] through views.
      Type inputChunk = Type::array(
          Type::array(Type::array(xType.arrayElement().arrayElement().arrayElement(), tileCols),
                      tileRows),
          tc);
      Type weightChunk = Type::array(
          Type::array(Type::array(Type::array(kernelType.arrayElement().arrayElement().arrayElement(),
                                              tc),
                                  k),
                      k),
          tk);
      Expr stagedInput = get(0, chunk);
      if (stageInput) {
        Expr channelsFirst = transpose(map(
            lam("row", [](Expr r) { return transpose(std::move(r)); }), get(0, chunk)));
        stagedInput =
            map(lam("row", [](Expr r) { return transpose(std::move(r)); }),
                transpose(stagedInLocalMemory(inputChunk, std::move(channelsFirst))));
      }
      Expr stagedWeights =
          stageWeights ? stagedInLocalMemory(weightChunk, get(1, chunk)) : get(1, chunk);
      return let(
          lam("inputTile",
              [&](Expr xl) {
                return let(
                    lam("weightTile",
                        [&](Expr wl) {
                          // Interleaved pixel groups: group g holds pixels g, g + TH·TW/RP, …
                          Expr windows = transpose(split(
                              pixelGroups, join(buildSlide2D(Op::Slide, Op::Slide, k, k, s, s, xl))));
                          return mapLcl(
                              Arith(1),
                              lam("kernelGroup",
                                  [&](Expr kg) {
                                    return mapLcl(Arith(0),
                                                  lam("pixelGroup",
                                                      [&](Expr pg) {
                                                        return registerTile(get(0, pg), get(1, kg),
                                                                            get(1, pg));
                                                      }),
                                                  zip(get(0, kg), windows));
                                  }),
                              zip(acc, split(rk, wl)));
                        }),
                    stagedWeights);
              }),
          stagedInput);
    });
    // [TK/RK][TH·TW/RP][RK][RP] -> [TK][TH][TW].
    Expr sums = join(reduceSeq(init, step, zip(tileChunks, kernelChunks)));
    Expr perKernel = join(map(lam("g", [](Expr g) { return transpose(std::move(g)); }), std::move(sums)));
    return map(lam("kernelPixels",
                   [&](Expr p) { return split(tw, join(transpose(std::move(p)))); }),
               std::move(perKernel));
  };

  Expr tiles = buildSlide2D(Op::Slide, Op::Slide, tileRows, tileCols, th * s, tw * s, slid->x);
  // [OH/TH][OW/TW][M/TK][TK][TH][TW]
  Expr computed = mapWrg(
      Arith(2),
      lam("tileRow",
          [&](Expr tileRow) {
            return mapWrg(Arith(1),
                          lam("tile",
                              [&](Expr tile) {
                                return mapWrg(Arith(0),
                                              lam("group",
                                                  [&](Expr group) { return perGroup(tile, group); }),
                                              split(tk, conv->kernels));
                              }),
                          tileRow);
          }),
      std::move(tiles));
  // Per tile row: [OW/TW][M][TH][TW] -> [M][TH][OW]; then [OH/TH][M][TH][OW] -> [M][OH][OW].
  Expr rows = map(lam("tileRow",
                      [](Expr r) {
                        Expr kernelsFirst = transpose(
                            map(lam("tile", [](Expr t) { return join(std::move(t)); }), std::move(r)));
                        return map(lam("image",
                                       [](Expr img) {
                                         return map(lam("pixelRow",
                                                        [](Expr p) { return join(std::move(p)); }),
                                                    transpose(std::move(img)));
                                       }),
                                   std::move(kernelsFirst));
                      }),
                  std::move(computed));
  return map(lam("image", [](Expr img) { return join(std::move(img)); }), transpose(std::move(rows)));
}

// map(a -> join(map(b -> reduce(z, (acc, p) -> acc + p._0 * p._1, zip(a, b)), Bs)), As): every
// row of As against every row of Bs (a matrix product with Bs = transpose(B)).
struct AllPairsProducts {
  Expr init;  // z, mentioning neither a nor b
  Expr rows;  // As: [M][K] of floats
  Expr cols;  // Bs: [N][K] of floats
};

std::optional<AllPairsProducts> matchAllPairsProducts(const Expr& node, const TypeLookup& typeOf) {
  if (!node.isPrim(Op::Map) || !isUnaryLambda(node.funs()[0])) return std::nullopt;
  const Expr& rowFun = node.funs()[0];
  const Expr& a = rowFun.params()[0];
  const Expr& joined = rowFun.body();
  if (!joined.isPrim(Op::Join) || !joined.args()[0].isPrim(Op::Map)) return std::nullopt;
  const Expr& colMap = joined.args()[0];
  const Expr& colFun = colMap.funs()[0];
  const Expr& cols = colMap.args()[0];
  if (!isUnaryLambda(colFun) || mentionsParam(cols, a)) return std::nullopt;
  const Expr& b = colFun.params()[0];
  const Expr& sum = colFun.body();
  if (!sum.isPrim(Op::Reduce) || !isSumOfProductsLambda(sum.funs()[0])) return std::nullopt;
  const Expr& init = sum.args()[0];
  const Expr& pairs = sum.args()[1];
  if (mentionsParam(init, a) || mentionsParam(init, b)) return std::nullopt;
  if (!pairs.isPrim(Op::Zip) || pairs.args().size() != 2 || !isParamNode(pairs.args()[0], a) ||
      !isParamNode(pairs.args()[1], b)) {
    return std::nullopt;
  }
  auto isMatrixOfFloats = [&](const Expr& e) {
    const Type t = typeOf(e);
    return t.isArray() && t.arrayElement().isArray() && t.arrayElement().arrayElement().isScalar();
  };
  if (!isMatrixOfFloats(node.args()[0]) || !isMatrixOfFloats(cols)) return std::nullopt;
  return AllPairsProducts{init, node.args()[0], cols};
}

std::optional<Expr> allPairsWorkgroupTiles(const RuleApplication& a) {
  std::optional<AllPairsProducts> products = matchAllPairsProducts(a.node, a.typeOf);
  if (!products) return std::nullopt;
  const std::optional<Arith> rmGiven = a.given("rows_per_item");
  const std::optional<Arith> rnGiven = a.given("cols_per_item");
  if (!rmGiven || !rnGiven || !rmGiven->constant() || !rnGiven->constant() ||
      *rmGiven->constant() < 1 || *rnGiven->constant() < 1) {
    return std::nullopt;  // the register tile is unrolled: its sizes must be numbers
  }
  const Arith rm = *rmGiven, rn = *rnGiven;
  const Type rowsType = a.typeOf(products->rows);
  const Arith m = rowsType.arrayLength();
  const Arith k = rowsType.arrayElement().arrayLength();
  const Arith n = a.typeOf(products->cols).arrayLength();
  const Type scalar = rowsType.arrayElement().arrayElement();
  const Arith tm =
      a.factor("rows_per_group", [&](RewriteContext& c) { return c.freshTuning("tm", rm, m); });
  const Arith tn =
      a.factor("cols_per_group", [&](RewriteContext& c) { return c.freshTuning("tn", rn, n); });
  const Arith tc = a.factor("depth_per_step",
                            [&](RewriteContext& c) { return c.freshTuning("tc", Arith(1), k); });
  const bool stageRows = a.given("stage_rows").value_or(Arith(1)) == Arith(1);
  const bool stageCols = a.given("stage_cols").value_or(Arith(1)) == Arith(1);
  const Arith colGroups = tn / rn;

  // [R][K] -> [K/TC][R][TC]: the chunks of the reduction's depth outermost.
  auto depthChunks = [&](Expr tile) {
    return transpose(
        map(lam("row", [&](Expr r) { return split(tc, std::move(r)); }), std::move(tile)));
  };
  // Every work-item's register tiles updated over one chunk of the depth: `rows` [TM][TC],
  // `cols` [TN][TC]; mapLcl(1) over groups of RM rows, mapLcl(0) over groups of RN columns,
  // interleaved (group g holds columns g, g + TN/RN, …): acc[r][c] += row[r] · col[c] over the
  // chunk's TC positions.
  auto tilesUpdated = [&](Expr acc, Expr rows, Expr cols) {
    Expr colGroupsOf = transpose(split(colGroups, std::move(cols)));
    return mapLcl(Arith(1),
                  lam("rowGroup",
                      [&](Expr rg) {
                        return mapLcl(Arith(0),
                                      lam("colGroup",
                                          [&](Expr cg) {
                                            return registerTileUpdated(
                                                get(0, cg),
                                                zip(transpose(get(1, rg)), transpose(get(1, cg))));
                                          }),
                                      zip(get(0, rg), colGroupsOf));
                      }),
                  zip(std::move(acc), split(rm, std::move(rows))));
  };
  // One work-group: `rowTile` [TM][K] against `colTile` [TN][K].
  auto perGroup = [&](Expr rowTile, Expr colTile) -> Expr {
    // Each register tile [RM][RN] starts from z.
    Expr init = registerTilesFilled(fill(tm, products->init), rm, colGroups, rn);
    Expr step = lam2("acc", "chunk", [&](Expr acc, Expr chunk) {
      // The rows' chunk is read along the depth by the copy's neighbouring work-items; the
      // columns' chunk is staged depth-first, [TC][TN], so that neighbouring work-items copy
      // and later read neighbouring columns (a row of B when Bs is transpose(B)).
      Expr stagedRows = get(0, chunk);
      if (stageRows) {
        stagedRows = stagedInLocalMemory(Type::array(Type::array(scalar, tc), tm), get(0, chunk));
      }
      Expr stagedCols = get(1, chunk);
      if (stageCols) {
        stagedCols = transpose(stagedInLocalMemory(Type::array(Type::array(scalar, tn), tc),
                                                   transpose(get(1, chunk))));
      }
      return let(lam("rowsTile",
                     [&](Expr rowsLocal) {
                       return let(lam("colsTile",
                                      [&](Expr colsLocal) {
                                        return tilesUpdated(acc, rowsLocal, colsLocal);
                                      }),
                                  stagedCols);
                     }),
                 stagedRows);
    });
    // [TM/RM][TN/RN][RM][RN] -> [TM][TN/RN][RN] -> [TM][TN] (columns de-interleaved).
    Expr sums = join(reduceSeq(init, step, zip(depthChunks(rowTile), depthChunks(colTile))));
    Expr byRow =
        join(map(lam("g", [](Expr g) { return transpose(std::move(g)); }), std::move(sums)));
    return map(lam("row", [](Expr r) { return join(transpose(std::move(r))); }), std::move(byRow));
  };
  // [M/TM][N/TN][TM][TN]
  Expr computed = mapWrg(
      Arith(1),
      lam("rowTile",
          [&](Expr rowTile) {
            return mapWrg(Arith(0),
                          lam("colTile", [&](Expr colTile) { return perGroup(rowTile, colTile); }),
                          split(tn, products->cols));
          }),
      split(tm, products->rows));
  // Per tile row: [N/TN][TM][TN] -> [TM][N]; then the tile rows joined: [M][N].
  return join(map(lam("tileRow",
                      [](Expr r) {
                        return map(lam("row", [](Expr row) { return join(std::move(row)); }),
                                   transpose(std::move(r)));
                      }),
                  std::move(computed)));
}

}  // namespace

void addWorkgroupTilingRules(std::vector<Rule>& rules) {
  rules.push_back(
      {"conv-workgroup-tiles",
       "transpose ∘ map(transpose) ∘ map2D(w -> join(map(k -> reduce(z(k), (acc, p) -> acc + "
       "p._0 * p._1, zip(join(join(w)), join(join(b(k))))), ks)), slide2D(K, S, X)) => "
       "mapWrg over TH×TW output tiles and groups of TK kernels of reduceSeq over chunks of TC "
       "channels: input tile (halo included) and weight tile staged in local memory by all "
       "work-items, then mapLcl over RK-kernel × RP-pixel register tiles (pixels interleaved), "
       "rearranged to [M][OH][OW]   [TK | M, RK | TK, TC | C, RP | TH·TW, TH | OH, TW | OW; "
       "RK, RP given numbers; stage_input, stage_weights 0 or 1]",
       RuleFamily::Reduction,
       {"kernels_per_group", "kernels_per_item", "tile_rows", "tile_cols", "pixels_per_item",
        "channels_per_step", "stage_input", "stage_weights"},
       workgroupTiles});
  rules.push_back(
      {"allpairs-workgroup-tiles",
       "map(a -> join(map(b -> reduce(z, (acc, p) -> acc + p._0 * p._1, zip(a, b)), Bs)), As) => "
       "mapWrg over TM×TN tiles of the result of reduceSeq over chunks of TC of the depth: the "
       "rows' and the columns' chunks staged in local memory by all work-items (the columns' "
       "depth-first), then mapLcl over RM-row × RN-column register tiles (columns interleaved), "
       "rearranged to [M][N]   [TM | M, TN | N, TC | K, RM | TM, RN | TN; RM, RN given numbers; "
       "stage_rows, stage_cols 0 or 1]",
       RuleFamily::Reduction,
       {"rows_per_group", "cols_per_group", "depth_per_step", "rows_per_item", "cols_per_item",
        "stage_rows", "stage_cols"},
       allPairsWorkgroupTiles});
}

}  // namespace weft::rewrite
