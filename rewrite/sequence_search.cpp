// The rewrite-sequence search (see rewrite/sequence_search.h).
#include "rewrite/sequence_search.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <random>
#include <set>
#include <sstream>
#include <unordered_set>

#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/library.h"
#include "typecheck/feasibility.h"
#include "typecheck/flop_count.h"
#include "typecheck/typecheck.h"

namespace weft::rewrite {

namespace {

constexpr const char* kParallelKernels = "parallel-kernels";
constexpr const char* kOutsideIn = "lowering-outside-in";
constexpr const char* kMapNesting = "map-nesting";
constexpr const char* kDimensionsNest = "dimensions-nest";
constexpr const char* kIntensityOrder = "intensity-order";
constexpr const char* kLayoutMapsStay = "layout-maps-stay";
constexpr const char* kUnrollInnermost = "unroll-innermost";
constexpr const char* kUnrollAccumulators = "unroll-accumulators";
constexpr const char* kPackOperands = "pack-operands";
constexpr const char* kTilesSettled = "tiles-settled";
constexpr const char* kEmptySpace = "empty-space";
constexpr const char* kUnrollWindows = "unroll-windows";
constexpr const char* kUnrollCaps = "unroll-caps";
constexpr const char* kWholeAccumulators = "whole-accumulators";
// The longest constant reduction unroll-windows keeps only unrolled: a stencil's or a small
// convolution's taps (a 7x7 window has 49).
constexpr int64_t kMaxRolledWindow = 64;
// The most re-layout copies pack-operands makes in one structure.
constexpr int kMaxPackedCopies = 4;

// Rules the search leaves out by default: they only copy or rename values (add-id,
// materialize), which the lowering level decides with toPrivate / toLocal, or need factors a
// strategy gives (pad-for-blocking-2d's multiples). let-hoist stays:
// at the lowering level it makes a stage a kernel of its own (a partial reduction's chunks in
// parallel, then their sum).
const std::set<std::string>& excludedByDefault() {
  // allpairs-workgroup-tiles stages tiles in local memory: explorationSearchOptions adds it
  // for devices that have it dedicated (GPUs).
  static const std::set<std::string> names = {"add-id",
                                              "allpairs-workgroup-tiles",
                                              "materialize",
                                              "materialize-innermost-first",
                                              "pad-for-blocking-2d",
                                              "to-global"};
  return names;
}

bool containsPrim(const Expr& e, Op op) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) { found = found || node.isPrim(op); });
  return found;
}

bool hasWorkgroupMap(const Expr& e) { return containsPrim(e, Op::MapWrg); }

// Whether a reduction whose step has no mapLcl takes its array accumulator's initial value from
// a mapLcl (to-local on the initial value): every work-item then keeps the whole accumulator
// and would write only its part of it, which code generation refuses.
bool wholeAccumulatorFromMapLcl(const Definition& program) {
  bool found = false;
  forEachNode(program.function.body(), [&](const Expr& e) {
    if (found ||
        !(e.isPrim(Op::Reduce) || e.isPrim(Op::ReduceSeq) || e.isPrim(Op::ReduceSeqUnroll))) {
      return;
    }
    const Expr& init = e.args()[0];
    if (!containsPrim(init, Op::MapLcl) || containsPrim(e.funs()[0], Op::MapLcl)) return;
    const Type& type = typecheckRemembered(program)->typeOf(init);
    found = !type.isScalar() && !type.isVector();
  });
  return found;
}

bool isMapLike(const Expr& e) {
  return e.isPrim(Op::Map) || e.isPrim(Op::MapGlb) || e.isPrim(Op::MapWrg) ||
         e.isPrim(Op::MapLcl) || e.isPrim(Op::MapSeq) || e.isPrim(Op::MapSeqUnroll);
}

// Whether a map or reduce of any level is inside `function` (a loop, once lowered).
bool hasLoopInside(const Expr& function) {
  bool found = false;
  forEachNode(function, [&](const Expr& e) {
    found = found || isMapLike(e) || e.isPrim(Op::Reduce) || e.isPrim(Op::ReduceSeq) ||
            e.isPrim(Op::ReduceSeqUnroll);
  });
  return found;
}

// Whether e computes something: a primitive that is neither a map nor a rearrangement
// (isRearrangingPrimitive: layout, tuples, id, fill), or a user function.
bool computes(const Expr& e) {
  bool found = false;
  forEachNode(e, [&](const Expr& node) {
    found = found || node.isUserFun() ||
            (node.isPrim() && !isMapLike(node) && !isRearrangingPrimitive(node.primOp()));
  });
  return found;
}

// The deepest nest of maps in e that compute (maps of layout functions, which only rearrange,
// are not counted).
int mapNesting(const Expr& e) {
  int deepest = 0;
  if (e.isLambda()) return mapNesting(e.body());
  if (!e.isPrim()) return 0;
  for (const Expr& f : e.funs()) deepest = std::max(deepest, mapNesting(f));
  for (const Expr& a : e.args()) deepest = std::max(deepest, mapNesting(a));
  return deepest + (isMapLike(e) && computes(e.funs()[0]) ? 1 : 0);
}

// Whether a mapGlb or mapWrg inside a kernel (below another one) is off the spine of values
// the kernel writes in place: in a let's value, a reduction, the data a map reads, or under a
// primitive that is not a permutation of its argument. Its result would be read back by the
// work-items of the same kernel, which code generation refuses (mapLcl's staging in local
// memory, read after a barrier, is not such a map). The same for one in the initial value or the
// data of a reduction at the top, which is a kernel of its own.
bool parallelMapOffSpine(const Expr& e, bool insideKernel, bool onSpine) {
  if (e.isLambda()) return parallelMapOffSpine(e.body(), insideKernel, onSpine);
  if (!e.isPrim()) return false;
  const Op op = e.primOp();
  const bool parallel = op == Op::MapGlb || op == Op::MapWrg;
  if (parallel && insideKernel && !onSpine) return true;
  // A reduction outside every kernel is a kernel of its own (codegen/kernel_split.cpp: no
  // parallel map at the top), which computes its initial value and its data itself: a parallel
  // map there would be read back in that kernel.
  const bool reduction = op == Op::Reduce || op == Op::ReduceSeq || op == Op::ReduceSeqUnroll;
  if (!insideKernel && reduction) {
    for (const Expr& a : e.args()) {
      if (containsPrim(a, Op::MapGlb) || containsPrim(a, Op::MapWrg)) return true;
    }
  }
  const bool inside = insideKernel || parallel;
  // A map's, a let's or an address-space wrapper's function writes the node's value; a
  // parallel map's function starts the spine of its work-items.
  const bool functionWrites = isMapLike(e) || op == Op::Let || op == Op::ToGlobal ||
                              op == Op::ToLocal || op == Op::ToPrivate;
  for (const Expr& f : e.funs()) {
    if (parallelMapOffSpine(f, inside, functionWrites && (parallel || onSpine))) return true;
  }
  const bool writtenThrough = isWrittenThroughPrimitive(op);
  for (size_t i = 0; i < e.args().size(); ++i) {
    if (parallelMapOffSpine(e.args()[i], inside, writtenThrough && i == 0 && onSpine)) {
      return true;
    }
  }
  return false;
}

// How far the thread mapping of a partly lowered program is decided. A parallel map of
// dimension d > 0 needs one of dimension d - 1 of its kind inside it (so that dimension 0 is the
// innermost), and a mapWrg needs a mapLcl inside: Complete when every such need is met, Pending
// when an unlowered map inside could still meet the unmet ones, Dead when one never can (and
// when a parallel map's result would be read back in its kernel: parallelMapOffSpine).
enum class ThreadMapping { Complete, Pending, Dead };

ThreadMapping threadMapping(const Expr& body) {
  if (parallelMapOffSpine(body, false, true)) return ThreadMapping::Dead;
  ThreadMapping state = ThreadMapping::Complete;
  forEachNode(body, [&](const Expr& e) {
    if (state == ThreadMapping::Dead) return;
    const bool glb = e.isPrim(Op::MapGlb), wrg = e.isPrim(Op::MapWrg), lcl = e.isPrim(Op::MapLcl);
    if (!glb && !wrg && !lcl) return;
    std::optional<int64_t> dim = e.nats()[0].constant();
    if (!dim) return;
    bool unlowered = false, sameKindBelow = false, localInside = false;
    forEachNode(e.funs()[0], [&](const Expr& inner) {
      unlowered = unlowered || inner.isPrim(Op::Map);
      std::optional<int64_t> d =
          inner.isPrim() && !inner.nats().empty() ? inner.nats()[0].constant() : std::nullopt;
      sameKindBelow = sameKindBelow || (inner.isPrim(e.primOp()) && d && *d == *dim - 1);
      localInside = localInside || inner.isPrim(Op::MapLcl);
    });
    const bool met = (*dim == 0 || sameKindBelow) && (!wrg || localInside);
    if (met) return;
    state = unlowered ? ThreadMapping::Pending : ThreadMapping::Dead;
  });
  return state;
}

// Two rankings of a program at `sizes` (its unbound sizes at 256, its tuning variables at 64
// where their ranges allow, the nearest end otherwise; 0 when that does not evaluate): the
// floating-point operations per value its reductions read (typecheck/flop_count.h), which rises
// with the values a block of accumulators reuses, and the same with each value read through a
// transposing view counted once more (per lane of a vector), which also sees locality: a
// reduction down the columns of a matrix ranks below the same reduction walking its rows with a
// block of accumulators. Neither alone keeps both: the first ranks a column sum's vectors
// gathered down its columns first, the second a product's row-by-row vector dots above its
// register blocks (whose block of rows it counts as read down columns, although each row is
// read in order from step to step).
struct Ranking {
  double intensity = 0;
  double localIntensity = 0;
};

Ranking rankingIntensity(const Definition& definition, const ArithBinding& sizes) {
  ArithBinding binding = sizes;
  std::vector<Arith> tuning;
  for (const Arith& variable : variableOccurrences(definition)) {
    if (!variable.isVar() || binding.count(variable.varName())) continue;
    if (variable.varKind() == VarKind::Tuning) {
      tuning.push_back(variable);
    } else {
      binding[variable.varName()] = 256;
    }
  }
  // A range may name other tuning variables (rows in [1, M/chunk]): bind in passes, each
  // variable once its bounds evaluate; any left (a cycle) at 64.
  for (bool progress = true; progress;) {
    progress = false;
    for (const Arith& variable : tuning) {
      if (binding.count(variable.varName())) continue;
      try {
        int64_t value = std::max<int64_t>(64, evaluate(variable.varLo(), binding));
        if (variable.varHi()) value = std::min(value, evaluate(*variable.varHi(), binding));
        binding[variable.varName()] = std::max<int64_t>(value, 1);
        progress = true;
      } catch (const std::exception&) {
      }
    }
  }
  for (const Arith& variable : tuning) binding.emplace(variable.varName(), 64);
  try {
    const OperationCounts counts = countOperations(definition, binding);
    const double reads = counts.reductionReads + counts.transposedReductionReads;
    return {counts.intensity(), reads > 0 ? static_cast<double>(counts.flops) / reads : 0.0};
  } catch (const std::exception&) {
    return {};
  }
}

// `count` of `total` indices, chosen with a generator seeded by `seed`, in ascending order.
std::vector<size_t> sampledIndices(size_t total, size_t count, uint64_t seed) {
  std::vector<size_t> all(total);
  for (size_t i = 0; i < total; ++i) all[i] = i;
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min(count, total));
  std::sort(all.begin(), all.end());
  return all;
}

// The nodes enclosing `position` (the root first), not the node itself.
std::vector<Expr> enclosing(const Expr& body, const Position& position) {
  std::vector<Expr> out;
  for (size_t depth = 0; depth < position.size(); ++depth) {
    out.push_back(nodeAt(body, Position(position.begin(), position.begin() + depth)));
  }
  return out;
}

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return hash;
}

const Rule& libraryRule(const std::string& name) {
  const Rule* rule = findRule(name);
  if (!rule) throw RewriteError("no rule named '" + name + "' (see weft rules)");
  return *rule;
}

// A program on a search level's frontier.
struct SearchNode {
  Definition definition;
  RewriteSequence sequence;
  RewriteContext context;
};

// `rule` applied at `position` of `node`'s program (typed: its types, else checked here),
// appended to its sequence; false, the node unchanged, where it does not apply.
bool applyStep(SearchNode& node, const Rule& rule, const Position& position,
               const TypedDefinition* typed = nullptr) {
  RewriteContext context = node.context;
  std::optional<Definition> result;
  try {
    result = typed ? applyAt(node.definition, *typed, rule, position, {}, context)
                   : applyAt(node.definition, rule, position, {}, context);
  } catch (const std::exception&) {
    return false;
  }
  if (!result) return false;
  node.definition = std::move(*result);
  node.context = context;
  node.sequence.push_back({rule.name, position, {}});
  return true;
}

class Search {
 public:
  Search(const SearchOptions& options, SearchReport& report)
      : options_(options), report_(report) {
    for (const std::string& name : options.disabledHeuristics) {
      bool known = false;
      for (const SearchHeuristic& h : searchHeuristics()) known = known || h.name == name;
      if (!known) throw RewriteError("no search heuristic named '" + name + "'");
    }
    for (const std::string& name : options.algorithmicRules) {
      algorithmic_.push_back(&libraryRule(name));
    }
    for (const std::string& name : options.loweringRules) lowering_.push_back(&libraryRule(name));
  }

  void run(const Definition& original) {
    originalNesting_ = mapNesting(original.function.body());
    SearchNode root{original, {}, RewriteContext()};
    seen_.insert(canonicalHash(original));
    keep(root, 0);
    // Level 1: breadth first to the depth (within the application and time limits), then a
    // choice of the programs kept when there are more than room for.
    std::vector<SearchNode> found;
    std::vector<SearchNode> frontier = {root};
    report_.algorithmicStop = SearchStop::Saturated;
    startBudget(options_.maxApplications, options_.maxSeconds);
    for (int depth = 1; depth <= options_.algorithmicDepth && !frontier.empty(); ++depth) {
      std::vector<SearchNode> next;
      std::optional<SearchStop> stop = expand(frontier, algorithmic_, false, next);
      frontier.clear();
      for (const SearchNode& node : next) {
        // A program a rule has already laid out in work-group tiles (mapWrg) goes to level 2
        // as it is: its algorithmic choices are made, and its nests are large.
        if (heuristicOn(kTilesSettled) && hasWorkgroupMap(node.definition.function.body())) {
          ++report_.pruned[kTilesSettled];
          continue;
        }
        frontier.push_back(node);
      }
      for (SearchNode& node : next) found.push_back(std::move(node));
      if (stop) {
        report_.algorithmicStop = *stop;
        frontier.clear();
        break;
      }
    }
    if (!frontier.empty()) report_.algorithmicStop = SearchStop::DepthLimit;
    const size_t room = static_cast<size_t>(std::max(options_.maxAlgorithmic - 1, 0));
    if (found.size() > room) report_.algorithmicStop = SearchStop::StructureLimit;
    for (size_t i : chosen(found, room)) {
      keep(found[i], static_cast<int>(found[i].sequence.size()));
    }
    // Level 2 from each program of level 1: breadth first over the lowering rules to the
    // depth; programs whose thread mapping is still pending are expanded but not kept, and of
    // the complete ones a seeded sample is kept when there are more than room for (breadth
    // first alone would keep only one-step lowerings).
    const size_t levelOne = report_.structures.size();
    for (size_t i = 0; i < levelOne && options_.maxLoweringsPerProgram > 0; ++i) {
      // A program in work-group tiles has its thread mapping from its rule; what is left
      // (layout maps) the default lowering decides.
      if (heuristicOn(kTilesSettled) &&
          hasWorkgroupMap(report_.structures[i].definition.function.body())) {
        ++report_.pruned[kTilesSettled];
        continue;
      }
      SearchNode start{report_.structures[i].definition, report_.structures[i].sequence,
                       contexts_.at(i)};
      const int steps = static_cast<int>(start.sequence.size());
      startBudget(options_.maxLoweringApplications, options_.maxLoweringSeconds);
      std::vector<SearchNode> frontierTwo = {start};
      std::vector<SearchNode> complete;
      SearchStop stop = SearchStop::Saturated;
      for (int depth = 1; depth <= options_.loweringDepth && !frontierTwo.empty(); ++depth) {
        std::vector<SearchNode> found;
        std::optional<SearchStop> why = expand(frontierTwo, lowering_, true, found);
        for (const SearchNode& node : found) {
          if (threadMapping(node.definition.function.body()) == ThreadMapping::Complete) {
            complete.push_back(node);
          }
        }
        frontierTwo = std::move(found);
        if (why) {
          stop = *why;
          frontierTwo.clear();
          break;
        }
      }
      if (heuristicOn(kWholeAccumulators)) {
        dropComplete(complete, kWholeAccumulators,
                     [](const Definition& program) { return wholeAccumulatorFromMapLcl(program); });
      }
      dropComplete(complete, kUnrollCaps,
                   [&](const Definition& program) { return !withinLimits(program); });
      const size_t room = static_cast<size_t>(options_.maxLoweringsPerProgram);
      if (complete.size() > room) stop = SearchStop::StructureLimit;
      std::set<uint64_t> keptHere;
      for (size_t j : sampledIndices(complete.size(), room, options_.seed + i)) {
        if (heuristicOn(kUnrollWindows)) unrollWindows(complete[j]);
        if (!keptHere.insert(canonicalHash(complete[j].definition)).second) continue;
        keep(complete[j], steps);
      }
      if (!frontierTwo.empty()) stop = SearchStop::DepthLimit;
      ++report_.loweringStops[stop];
    }
    // Each structure kept once more with the transposing views its reductions read copied in
    // order (see packedOperands), when that changes it, and where there are several such
    // views once more with the first alone copied (a convolution's weights: its windows' copy
    // would hold each input value K·K times); then each, packed or not, with its accumulator
    // updates unrolled.
    if (heuristicOn(kPackOperands) && options_.maxLoweringsPerProgram > 0) {
      // Against the structures kept, not all those seen: level 2 may have reached a packed
      // program and left it out of its sample.
      std::set<uint64_t> keptHashes;
      for (const SearchedStructure& s : report_.structures) keptHashes.insert(s.hash);
      const size_t kept = report_.structures.size();
      for (size_t i = 0; i < kept; ++i) {
        for (int copies : {1, kMaxPackedCopies}) {
          SearchNode node{report_.structures[i].definition, report_.structures[i].sequence,
                          contexts_.at(i)};
          if (!packedOperands(node, copies)) continue;
          const uint64_t hash = canonicalHash(node.definition);
          if (!keptHashes.insert(hash).second) continue;
          seen_.insert(hash);
          keep(node, report_.structures[i].algorithmicSteps);
          ++report_.packedOperands;
        }
      }
    }
    if (heuristicOn(kUnrollAccumulators) && options_.maxLoweringsPerProgram > 0) {
      const size_t kept = report_.structures.size();
      for (size_t i = 0; i < kept; ++i) {
        SearchNode node{report_.structures[i].definition, report_.structures[i].sequence,
                        contexts_.at(i)};
        if (!unrolledAccumulators(node)) continue;
        if (!seen_.insert(canonicalHash(node.definition)).second) continue;
        if (!withinLimits(node.definition)) {
          ++report_.pruned[kUnrollCaps];
          continue;
        }
        keep(node, report_.structures[i].algorithmicSteps);
        ++report_.unrolledAccumulators;
      }
    }
  }

 private:
  // Unrolls, in place, every map of `node` that updates a reduction's accumulators: a map
  // inside a reduce's function with no loop inside it, not yet lowered (register blocks: σ
  // vector accumulators updated with one fma each; as a loop they stay in memory, unrolled
  // they are registers: twice as fast on matmul's block). Returns whether any was.
  bool unrolledAccumulators(SearchNode& node) {
    static const Rule& unroll = libraryRule("map-to-mapseq-unroll");
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      const Expr& body = node.definition.function.body();
      for (const Position& position : allPositions(body)) {
        const Expr target = nodeAt(body, position);
        if (!target.isPrim(Op::Map) || hasLoopInside(target.funs()[0])) continue;
        bool inReduction = false;
        const std::vector<Expr> around = enclosing(body, position);
        for (size_t d = 0; d < around.size(); ++d) {
          const Expr& e = around[d];
          const bool reduce =
              e.isPrim(Op::Reduce) || e.isPrim(Op::ReduceSeq) || e.isPrim(Op::ReduceSeqUnroll);
          // In the reduce's function (its first child), not in its data arguments.
          if (reduce && position[d] == 0) inReduction = true;
        }
        if (!inReduction || !applyStep(node, unroll, position)) continue;
        changed = again = true;
        break;  // positions are recomputed on the new program
      }
    }
    return changed;
  }

  // Applies hoist-relayout and hoist-relayout-nested, in place, wherever they apply (at most
  // `maxCopies` copies, found in pre-order, hoist-relayout first at each stage): every view
  // with a transpose that a top-level map's groups are read through becomes a copy laid out as
  // it is read (a blocked matmul's A and B packed). Returns whether any was.
  bool packedOperands(SearchNode& node, int maxCopies) {
    static const Rule& direct = libraryRule("hoist-relayout");
    static const Rule& nested = libraryRule("hoist-relayout-nested");
    bool changed = false;
    for (int copies = 0; copies < maxCopies; ++copies) {
      bool applied = false;
      // Both rules apply only at a top-level stage: the body and the bodies of the lets at the
      // top, one inside the other (let(r -> stage, copy) has its stage at 0.0).
      std::vector<Position> stages = {Position{}};
      while (nodeAt(node.definition.function.body(), stages.back()).isPrim(Op::Let)) {
        Position inside = stages.back();
        inside.insert(inside.end(), {0, 0});
        stages.push_back(inside);
      }
      const TypedDefinition typed = typecheck(node.definition);
      for (const Position& position : stages) {
        for (const Rule* rule : {&direct, &nested}) {
          if (!applyStep(node, *rule, position, &typed)) continue;
          applied = changed = true;
          break;
        }
        if (applied) break;  // stages are recomputed on the new program
      }
      if (!applied) break;
    }
    return changed;
  }

  void keep(const SearchNode& node, int algorithmicSteps) {
    report_.structures.push_back(
        {node.definition, node.sequence, algorithmicSteps, canonicalHash(node.definition)});
    contexts_.push_back(node.context);
  }

  bool heuristicOn(const char* name) const { return !options_.disabledHeuristics.count(name); }

  // The indices of the `room` programs of `found` that level 1 keeps, ascending: all when they
  // fit; else half of the room by the rankings (intensity-order: the first half of those by
  // operations per value read, the rest by the same with locality, rankingIntensity; ties:
  // fewer steps, then the order found) and the rest a seeded sample of the others.
  std::vector<size_t> chosen(const std::vector<SearchNode>& found, size_t room) const {
    if (found.size() <= room) return sampledIndices(found.size(), found.size(), 0);
    std::vector<size_t> kept;
    std::vector<bool> taken(found.size(), false);
    if (heuristicOn(kIntensityOrder)) {
      std::vector<Ranking> ranking(found.size());
      for (size_t i = 0; i < found.size(); ++i) {
        ranking[i] = rankingIntensity(found[i].definition, options_.rankingSizes);
      }
      auto keepBest = [&](double Ranking::*measure, size_t count) {
        std::vector<size_t> order = sampledIndices(found.size(), found.size(), 0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
          if (ranking[a].*measure != ranking[b].*measure) {
            return ranking[a].*measure > ranking[b].*measure;
          }
          return found[a].sequence.size() < found[b].sequence.size();
        });
        for (size_t i = 0; i < order.size() && count > 0; ++i) {
          if (taken[order[i]]) continue;
          kept.push_back(order[i]);
          taken[order[i]] = true;
          --count;
        }
      };
      const size_t ranked = (room + 1) / 2;
      keepBest(&Ranking::intensity, (ranked + 1) / 2);
      keepBest(&Ranking::localIntensity, ranked / 2);
    }
    std::vector<size_t> rest;
    for (size_t i = 0; i < found.size(); ++i) {
      if (!taken[i]) rest.push_back(i);
    }
    for (size_t i : sampledIndices(rest.size(), room - kept.size(), options_.seed)) {
      kept.push_back(rest[i]);
    }
    std::sort(kept.begin(), kept.end());
    return kept;
  }

  // A reduction unroll-windows lowers unrolled: constant length 2..kMaxRolledWindow, no loop
  // inside its function.
  static bool isShortWindow(const Expr& reduce, const TypedDefinition& typed) {
    if (hasLoopInside(reduce.funs()[0])) return false;
    const Type input = typed.typeOf(reduce.args().back());
    const std::optional<int64_t> length =
        input.isArray() ? input.arrayLength().constant() : std::nullopt;
    return length && *length > 1 && *length <= kMaxRolledWindow;
  }

  // The reductions a lowering left high-level that unroll-windows unrolls: each short window
  // inside a lowered map (reduce-to-reduceseq-unroll, appended to the sequence), where code
  // generation's default lowering would make it a rolled loop.
  void unrollWindows(SearchNode& node) const {
    static const Rule& unroll = libraryRule("reduce-to-reduceseq-unroll");
    for (bool applied = true; applied;) {
      applied = false;
      const std::shared_ptr<const TypedDefinition> typed = typecheckRemembered(node.definition);
      const Expr& body = node.definition.function.body();
      for (const Position& position : allPositions(body)) {
        const Expr& e = nodeAt(body, position);
        if (!e.isPrim(Op::Reduce) || !isShortWindow(e, *typed)) continue;
        bool insideLowered = false;
        for (const Expr& a : enclosing(body, position)) {
          insideLowered = insideLowered || (isMapLike(a) && !a.isPrim(Op::Map));
        }
        if (!insideLowered || !applyStep(node, unroll, position, typed.get())) continue;
        applied = true;
        break;  // positions are recomputed on the new program
      }
    }
  }

  // The heuristic that leaves out `rule` at `position` of `definition`, or nullptr.
  const char* prunedBefore(const Definition& definition, const TypedDefinition& typed,
                           const Rule& rule, const Position& position, bool lowering) const {
    if (!lowering) return nullptr;
    const std::vector<Expr> around = enclosing(definition.function.body(), position);
    const bool layoutMapsStay = heuristicOn(kLayoutMapsStay);
    auto isLayoutMap = [](const Expr& e) { return e.isPrim(Op::Map) && !computes(e.funs()[0]); };
    if (layoutMapsStay && rule.family == RuleFamily::Lowering &&
        isLayoutMap(nodeAt(definition.function.body(), position))) {
      return kLayoutMapsStay;
    }
    if (heuristicOn(kOutsideIn)) {
      for (const Expr& e : around) {
        if (layoutMapsStay && isLayoutMap(e)) continue;
        if (e.isPrim(Op::Map) || e.isPrim(Op::Reduce)) return kOutsideIn;
      }
    }
    if (heuristicOn(kUnrollInnermost) &&
        (rule.name == "map-to-mapseq-unroll" || rule.name == "reduce-to-reduceseq-unroll")) {
      if (hasLoopInside(nodeAt(definition.function.body(), position).funs()[0])) {
        return kUnrollInnermost;
      }
    }
    if (heuristicOn(kUnrollWindows) && rule.name == "reduce-to-reduceseq") {
      // A short reduction of constant length with no loop inside is lowered unrolled only: its
      // reads then have constant offsets, which code generation's interior copy reads without
      // the border's clamps, contiguous across work-items (the rolled loop's stay clamped).
      if (isShortWindow(nodeAt(definition.function.body(), position), typed)) {
        return kUnrollWindows;
      }
    }
    if (heuristicOn(kParallelKernels) &&
        (rule.name == "map-to-mapseq" || rule.name == "map-to-mapseq-unroll")) {
      bool insideMap = false;
      for (const Expr& e : around) insideMap = insideMap || (isMapLike(e) && computes(e.funs()[0]));
      if (!insideMap) return kParallelKernels;
    }
    return nullptr;
  }

  const char* prunedAfter(const Definition& result, bool lowering) const {
    if (!lowering && heuristicOn(kMapNesting) &&
        mapNesting(result.function.body()) > originalNesting_ + options_.extraNesting) {
      return kMapNesting;
    }
    if (lowering && heuristicOn(kDimensionsNest) &&
        threadMapping(result.function.body()) == ThreadMapping::Dead) {
      return kDimensionsNest;
    }
    return nullptr;
  }

  // Removes the lowerings `dropped` says to, counted as pruned by `heuristic`.
  void dropComplete(std::vector<SearchNode>& complete, const char* heuristic,
                    const std::function<bool(const Definition&)>& dropped) {
    const size_t before = complete.size();
    complete.erase(std::remove_if(complete.begin(), complete.end(),
                                  [&](const SearchNode& node) { return dropped(node.definition); }),
                   complete.end());
    if (complete.size() < before) {
      report_.pruned[heuristic] += static_cast<int64_t>(before - complete.size());
    }
  }

  // Whether the explorer's limits leave the lowered program a point (the unroll-caps
  // heuristic; true where it is off or cannot tell).
  bool withinLimits(const Definition& program) const {
    if (!heuristicOn(kUnrollCaps) || !options_.withinLimits || options_.rankingSizes.empty()) {
      return true;
    }
    return options_.withinLimits(program, options_.rankingSizes);
  }

  // Whether no value of the program's tuning parameters meets its type conditions at the sizes
  // the search was given (all of the program's sizes bound; else it cannot tell).
  bool emptySpace(const Definition& program) const {
    if (options_.rankingSizes.empty()) return false;
    try {
      // The engine remembered the program's types when it applied the step that made it.
      return tuningFeasibility(typecheckRemembered(program)->constraints, options_.rankingSizes) ==
             Feasibility::Infeasible;
    } catch (const std::exception&) {
      return false;  // left to the explorer, which reports why
    }
  }

  // Each level has its own budget of applications and seconds (level 2 one per program of
  // level 1), so that a level 1 that uses all of its own leaves level 2 its share.
  void startBudget(int64_t applications, double seconds) {
    budgetApplications_ = report_.applicationsTried + applications;
    budgetEnd_ = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(seconds));
  }

  std::optional<SearchStop> limitReached() const {
    if (report_.applicationsTried >= budgetApplications_) return SearchStop::ApplicationLimit;
    if (std::chrono::steady_clock::now() >= budgetEnd_) return SearchStop::TimeLimit;
    return std::nullopt;
  }

  // Every rule at every position of every frontier program: the programs not seen before go
  // to `found`, in order. A limit that stops the level is returned.
  std::optional<SearchStop> expand(const std::vector<SearchNode>& frontier,
                                   const std::vector<const Rule*>& rules, bool lowering,
                                   std::vector<SearchNode>& found) {
    static const std::vector<RuleArguments> symbolic = {RuleArguments{}};
    for (const SearchNode& node : frontier) {
      TypedDefinition typed = typecheck(node.definition);
      for (const Position& position : allPositions(node.definition.function.body())) {
        for (const Rule* rule : rules) {
          auto choices = options_.argumentChoices.find(rule->name);
          const std::vector<RuleArguments>& argumentLists =
              choices == options_.argumentChoices.end() ? symbolic : choices->second;
          for (const RuleArguments& arguments : argumentLists) {
            if (std::optional<SearchStop> stop = limitReached()) return stop;
            ++report_.applicationsTried;
            RewriteContext context = node.context;
            std::optional<Definition> result;
            try {
              result = applyAt(node.definition, typed, *rule, position, arguments, context);
            } catch (const std::exception& error) {
              ++report_.infeasible;
              if (report_.firstInfeasible.empty()) {
                report_.firstInfeasible =
                    rule->name + "@" + positionToString(position) + ": " + error.what();
              }
              continue;
            }
            if (!result) continue;
            const char* pruned = prunedBefore(node.definition, typed, *rule, position, lowering);
            if (!pruned) pruned = prunedAfter(*result, lowering);
            if (pruned) {
              ++report_.pruned[pruned];
              continue;
            }
            if (!seen_.insert(canonicalHash(*result)).second) {
              ++report_.duplicates;
              continue;
            }
            if (!lowering && heuristicOn(kEmptySpace) && emptySpace(*result)) {
              ++report_.pruned[kEmptySpace];
              continue;
            }
            SearchNode child{std::move(*result), node.sequence, context};
            child.sequence.push_back({rule->name, position, arguments});
            found.push_back(std::move(child));
          }
        }
      }
    }
    return std::nullopt;
  }

  const SearchOptions& options_;
  SearchReport& report_;
  int64_t budgetApplications_ = 0;
  std::chrono::steady_clock::time_point budgetEnd_;
  std::vector<const Rule*> algorithmic_;
  std::vector<const Rule*> lowering_;
  std::unordered_set<uint64_t> seen_;
  std::vector<RewriteContext> contexts_;  // contexts_[i]: the context after structures[i]
  int originalNesting_ = 0;
};

}  // namespace

RuleArguments parseFactors(const std::string& text, const std::vector<std::string>& factors,
                           const std::string& owner) {
  RuleArguments arguments;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw RewriteError("expected factor=value, found '" + item + "'");
    }
    std::string factor = item.substr(0, equals);
    if (std::find(factors.begin(), factors.end(), factor) == factors.end()) {
      std::string names;
      for (const std::string& f : factors) names += (names.empty() ? "" : ", ") + f;
      throw RewriteError(owner + " has no factor '" + factor + "'" +
                         (names.empty() ? " (it takes none)" : " (it takes " + names + ")"));
    }
    try {
      arguments.push_back({factor, parseArith(item.substr(equals + 1))});
    } catch (const std::exception& error) {
      throw RewriteError("factor " + factor + ": " + error.what());
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return arguments;
}

std::string stepText(const RewriteStep& step) {
  std::string text = step.rule + "@" + positionToString(step.position);
  for (size_t i = 0; i < step.arguments.size(); ++i) {
    text += (i == 0 ? ":" : ",") + step.arguments[i].first + "=" +
            step.arguments[i].second.toString();
  }
  return text;
}

RewriteStep parseStep(const std::string& text) {
  size_t at = text.find('@');
  if (at == std::string::npos) {
    throw RewriteError(text + ": expected NAME@POS[:factor=value,...]");
  }
  const std::string name = text.substr(0, at);
  const Rule* rule = findRule(name);
  if (!rule) throw RewriteError(text + ": no rule named '" + name + "' (see weft rules)");
  std::string rest = text.substr(at + 1);
  size_t colon = rest.find(':');
  RewriteStep step{name, parsePosition(rest.substr(0, colon)), {}};
  if (colon == std::string::npos) return step;
  try {
    step.arguments = parseFactors(rest.substr(colon + 1), rule->factors, "rule " + rule->name);
  } catch (const RewriteError& error) {
    throw RewriteError(text + ": " + error.what());
  }
  return step;
}

std::string sequenceText(const RewriteSequence& sequence) {
  std::string text;
  for (const RewriteStep& step : sequence) text += (text.empty() ? "" : " ; ") + stepText(step);
  return text;
}

RewriteSequence parseSequence(const std::string& text) {
  RewriteSequence sequence;
  size_t start = 0;
  while (start < text.size()) {
    size_t separator = text.find(" ; ", start);
    std::string item =
        text.substr(start, separator == std::string::npos ? std::string::npos : separator - start);
    if (!item.empty()) sequence.push_back(parseStep(item));
    if (separator == std::string::npos) break;
    start = separator + 3;
  }
  return sequence;
}

Definition replaySequence(const Definition& definition, const RewriteSequence& sequence) {
  RewriteContext context;
  Definition current = definition;
  for (size_t i = 0; i < sequence.size(); ++i) {
    const RewriteStep& step = sequence[i];
    std::optional<Definition> next =
        applyAt(current, libraryRule(step.rule), step.position, step.arguments, context);
    if (!next) {
      throw RewriteError("step " + std::to_string(i + 1) + " of the rewrite sequence, " +
                         stepText(step) + ", does not apply");
    }
    current = std::move(*next);
  }
  return current;
}

uint64_t canonicalHash(const Definition& definition) {
  ArithSubstitution renaming;
  for (const Arith& variable : variableOccurrences(definition)) {
    if (!variable.isVar() || variable.varKind() != VarKind::Tuning) continue;
    if (renaming.count(variable.varName())) continue;
    const std::string canonical = "canonical_tuning_" + std::to_string(renaming.size());
    renaming[variable.varName()] =
        Arith::var(canonical, VarKind::Tuning, variable.varLo(), variable.varHi());
  }
  Definition canonical = definition;
  canonical.function = substituteArith(definition.function, renaming);
  return fnv1a(printDefinition(canonical));
}

const std::vector<SearchHeuristic>& searchHeuristics() {
  static const std::vector<SearchHeuristic> heuristics = {
      {kParallelKernels,
       "level 2 never runs a top-level map sequentially (a kernel of one work-item)"},
      {kOutsideIn,
       "level 2 lowers a map or reduce only inside maps and reduces already lowered (one order "
       "per set of choices)"},
      {kLayoutMapsStay,
       "level 2 leaves maps that only rearrange data (layout functions) high-level, as the "
       "default lowering does, and lowers the maps inside them"},
      {kUnrollInnermost,
       "level 2 unrolls only loops with no loop inside (nested unrolled loops multiply into "
       "kernels of many thousands of statements that take minutes and gigabytes to generate)"},
      {kUnrollAccumulators,
       "every kept structure is kept once more with the maps that update a reduction's "
       "accumulators unrolled (innermost maps in a reduce's function): registers, not memory"},
      {kPackOperands,
       "every kept structure is kept once more with the views with a transpose that its "
       "top-level maps read their groups through copied once, laid out as they are read "
       "(hoist-relayout, hoist-relayout-nested; at most four copies), and where there are "
       "several once more with the first alone: a blocked matmul's A and B packed, a "
       "convolution's weights"},
      {kDimensionsNest,
       "level 2 drops programs where a parallel map of dimension d > 0 can no longer get one of "
       "dimension d - 1 inside it, or a mapWrg a mapLcl (idle threads)"},
      {kIntensityOrder,
       "level 1, finding more programs than it keeps, keeps half of them by the most "
       "floating-point operations per value their reductions read (register blocks, vectors; "
       "typecheck/flop_count.h), the other half a seeded sample; off: all sampled"},
      {kTilesSettled,
       "a program a rule has laid out in work-group tiles (mapWrg: allpairs-workgroup-tiles) "
       "is rewritten no further at level 1 and not lowered at level 2: its thread mapping is "
       "the rule's, and the default lowering takes its layout maps"},
      {kUnrollWindows,
       "level 2 lowers a reduction of constant length up to 64 with no loop inside (a "
       "stencil's taps) unrolled only (reduce-to-reduceseq-unroll), also where a lowering "
       "leaves it inside a lowered map to the default lowering (the step is appended): its "
       "reads get constant offsets, which code generation reads without the border's clamps "
       "away from it"},
      {kUnrollCaps,
       "level 2 keeps no lowering whose unrolled loops are longer than the explorer's caps at "
       "the sizes given for every value of its tuning parameters (SearchOptions::withinLimits: "
       "a map unrolled over a whole row of a size), so that its sample of lowerings can run"},
      {kWholeAccumulators,
       "level 2 keeps no lowering where a reduction whose step has no mapLcl takes its array "
       "accumulator's initial value from a mapLcl (to-local on it): every work-item keeps that "
       "accumulator whole and would write only its part, which code generation refuses"},
      {kEmptySpace,
       "level 1 drops programs whose tuning parameters have no value that meets the type "
       "checker's conditions at the sizes given (every size of the program bound), found by an "
       "exhaustive walk over their ranges (typecheck/feasibility.h): a 5-tap window split by "
       "omega and read as vectors of 4"},
      {kMapNesting,
       "level 1 keeps no program whose maps nest more deeply than the original's by more than "
       "SearchOptions::extraNesting (LIFT's bound on the distance between map and reduce)"},
  };
  return heuristics;
}

std::string searchHeuristicNames() {
  std::string names;
  for (const SearchHeuristic& h : searchHeuristics()) names += (names.empty() ? "" : ", ") + h.name;
  return names;
}

std::vector<std::string> defaultAlgorithmicRules() {
  std::vector<std::string> names;
  for (const Rule& rule : ruleLibrary()) {
    if (rule.family == RuleFamily::Lowering || rule.family == RuleFamily::AddressSpace) continue;
    if (excludedByDefault().count(rule.name)) continue;
    names.push_back(rule.name);
  }
  return names;
}

std::vector<std::string> defaultLoweringRules() {
  std::vector<std::string> names;
  for (const Rule& rule : ruleLibrary()) {
    if (rule.family != RuleFamily::Lowering && rule.family != RuleFamily::AddressSpace) continue;
    if (excludedByDefault().count(rule.name)) continue;
    names.push_back(rule.name);
  }
  return names;
}

SearchOptions defaultSearchOptions(const std::vector<int64_t>& vectorWidths) {
  SearchOptions options;
  options.algorithmicRules = defaultAlgorithmicRules();
  options.loweringRules = defaultLoweringRules();
  std::vector<RuleArguments> dims;
  for (int64_t d = 0; d <= 2; ++d) dims.push_back({{"dim", Arith(d)}});
  for (const char* rule : {"map-to-mapglb", "map-to-mapwrg", "map-to-maplcl"}) {
    options.argumentChoices[rule] = dims;
  }
  std::vector<RuleArguments> widths;
  for (int64_t v : vectorWidths) widths.push_back({{"v", Arith(v)}});
  for (const char* rule : {"vectorize", "vectorize-dot", "vectorize-sum"}) {
    options.argumentChoices[rule] = widths;
  }
  // Blocks of κ accumulators become vectors only when κ is a vector width.
  std::vector<RuleArguments> kappas;
  for (int64_t v : vectorWidths) kappas.push_back({{"kappa", Arith(v)}});
  for (const char* rule : {"map2d-kernel-blocking", "map2d-kernel-blocking-interleaved"}) {
    options.argumentChoices[rule] = kappas;
  }
  return options;
}

const char* searchStopName(SearchStop stop) {
  switch (stop) {
    case SearchStop::Saturated:
      return "saturated";
    case SearchStop::DepthLimit:
      return "depth limit";
    case SearchStop::StructureLimit:
      return "structure limit";
    case SearchStop::ApplicationLimit:
      return "application limit";
    case SearchStop::TimeLimit:
      return "time limit";
  }
  return "?";
}

std::string SearchReport::summary() const {
  int levelOne = 0;
  for (const SearchedStructure& s : structures) {
    levelOne += s.algorithmicSteps == static_cast<int>(s.sequence.size()) ? 1 : 0;
  }
  std::ostringstream out;
  out << structures.size() << " structures (" << levelOne << " algorithmic, "
      << structures.size() - static_cast<size_t>(levelOne) << " lowered) from "
      << applicationsTried << " rule applications tried, " << duplicates << " duplicates";
  if (packedOperands) out << ", " << packedOperands << " with operands packed";
  if (unrolledAccumulators) out << ", " << unrolledAccumulators << " with accumulators unrolled";
  int64_t prunedCount = 0;
  for (const auto& [name, count] : pruned) prunedCount += count;
  if (prunedCount) {
    out << ", " << prunedCount << " pruned (";
    bool first = true;
    for (const auto& [name, count] : pruned) {
      out << (first ? "" : ", ") << name << " " << count;
      first = false;
    }
    out << ")";
  }
  if (infeasible) out << ", " << infeasible << " infeasible results left out";
  out << "; level 1 stopped: " << searchStopName(algorithmicStop) << "; level 2 stopped:";
  bool first = true;
  for (const auto& [stop, count] : loweringStops) {
    out << (first ? " " : ", ") << searchStopName(stop) << " " << count << "×";
    first = false;
  }
  out << "; " << static_cast<int>(seconds * 1000) << " ms";
  return out.str();
}

SearchReport searchRewrites(const Definition& definition, const SearchOptions& options) {
  SearchReport report;
  auto start = std::chrono::steady_clock::now();
  Search search(options, report);
  search.run(definition);
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace weft::rewrite
