// The named strategies of strategies.h, built from library rules and strategy.h combinators.
//
// stencil-tiled-local, step by step (P = the position of the slide2D expansion, found as the
// outermost position where slide-tiling-2d matches):
//   1. slide-tiling-2d@P with theta1/theta2: join(map(tileRow -> map(join, transpose(tileRow)),
//      map2D(tile -> windows(tile), tiles))) where windows(tile) =
//      map(transpose, slideStrict(s1, t1, map(row -> slideStrict(s2, t2, row), tile))).
//   2. map-to-mapwrg dim 1 on the map over tile rows (P.0.1), dim 0 on the map over the tiles of
//      a row (P.0.1.0.0).
//   3. to-local on the tile where windows(tile) reads it: the work-group copies its tile to
//      local memory.
//   4. map-to-maplcl dim 1 on windows' outer map (over window rows), dim 0 on its map over the
//      rows of the tile.
//   5. map-to-mapglb dim 1 / dim 0 on the stencil's map2D (the root of the definition and its
//      inner map), when the definition is map2D(f, slide2D(...)).
//   6. normalize with map-to-mapseq and reduce-to-reduceseq: every other map and reduce.
// Every step is a library rule at a position (atPosition) or a normalization; a step that does
// not match makes the strategy fail with the rule's name, except step 5 (tryS) which only
// applies to the stencil shape.
//
// What is missing: the stencil function (the map2D at the root) is not moved into the tiles.
// That needs two interchange rules the library does not have — map(f) ∘ join => join ∘
// map(map(f)) and map(map(f)) ∘ transpose => transpose ∘ map(map(f)) — after which map fusion
// would bring f into windows(tile), so that the work-group computes the stencil of its tile from
// local memory. Without them the tiled work-groups only materialise the windows of their tiles
// (a temporary buffer of s1·s2 elements per output pixel) and a second kernel (the mapGlb
// nest) computes the stencil from it: correct, but not the LIFT tiled stencil.
#include "rewrite/strategies.h"

#include <stdexcept>

#include "rewrite/engine.h"
#include "rewrite/library.h"

namespace weft::rewrite {

namespace {

const Rule& rule(const std::string& name) {
  const Rule* r = findRule(name);
  if (!r) throw std::logic_error("strategy library: no rule named " + name);
  return *r;
}

Position extend(Position base, std::initializer_list<int> tail) {
  base.insert(base.end(), tail.begin(), tail.end());
  return base;
}

// The outermost position where slide-tiling-2d matches, or nullopt.
std::optional<Position> slide2DPosition(const Definition& definition) {
  std::optional<Position> best;
  for (const Match& m : findMatches(definition, {rule("slide-tiling-2d")})) {
    if (!best || m.position.size() < best->size()) best = m.position;
  }
  return best;
}

Strategy stencilTiledLocal(const RuleArguments& arguments) {
  RuleArguments tiling;
  for (const auto& [name, value] : arguments) {
    if (name != "theta1" && name != "theta2") {
      throw std::invalid_argument("stencil-tiled-local takes theta1 and theta2, not " + name);
    }
    tiling.push_back({name, value});
  }
  return [tiling](const Definition& definition, RewriteContext& context) -> StrategyResult {
    std::optional<Position> p = slide2DPosition(definition);
    if (!p) return StrategyResult::fail("stencil-tiled-local: no slide2D to tile");
    const Position tileRows = extend(*p, {0, 1});
    const Position tilesOfRow = extend(*p, {0, 1, 0, 0});
    const Position windows = extend(tilesOfRow, {0, 0});  // windows(tile)
    const Position rowsOfTile = extend(windows, {1, 0});  // map(row -> slideStrict(row), tile)
    const Position tile = extend(rowsOfTile, {1});
    auto dim = [](int d) { return RuleArguments{{"dim", Arith(d)}}; };
    Strategy stencilMaps = identity();
    if (*p == Position{1}) {  // map2D(f, slide2D(...)): the stencil's own maps
      stencilMaps = tryS(seq(atPosition(rule("map-to-mapglb"), {}, dim(1)),
                             atPosition(rule("map-to-mapglb"), {0, 0}, dim(0))));
    }
    Strategy steps =
        seq(atPosition(rule("slide-tiling-2d"), *p, tiling),
            seq(atPosition(rule("map-to-mapwrg"), tileRows, dim(1)),
                seq(atPosition(rule("map-to-mapwrg"), tilesOfRow, dim(0)),
                    seq(atPosition(rule("to-local"), tile),
                        seq(atPosition(rule("map-to-maplcl"), windows, dim(1)),
                            seq(atPosition(rule("map-to-maplcl"), extend(rowsOfTile, {}), dim(0)),
                                seq(stencilMaps,
                                    normalize({rule("map-to-mapseq"), rule("reduce-to-reduceseq")},
                                              1000))))))));
    return steps(definition, context);
  };
}

}  // namespace

const std::vector<NamedStrategy>& strategyLibrary() {
  static const std::vector<NamedStrategy> strategies = {
      {"stencil-tiled-local",
       "2D stencil: overlapped slide2D tiles theta1 x theta2 (slide-tiling-2d) processed by "
       "work-groups (mapWrg 1/0), each tile staged in local memory (to-local), windows built by "
       "mapLcl 1/0, the stencil map2D as mapGlb 1/0, other maps mapSeq, reduces reduceSeq "
       "(the stencil function itself is not yet moved into the tiles)",
       {"theta1", "theta2"},
       stencilTiledLocal},
  };
  return strategies;
}

const NamedStrategy* findStrategy(const std::string& name) {
  for (const NamedStrategy& s : strategyLibrary()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace weft::rewrite
