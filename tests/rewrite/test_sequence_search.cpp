// Tests of the rewrite-sequence search (rewrite/sequence_search.h): steps print and parse back,
// with clear errors; the canonical hash ignores tuning-variable names only; the search keeps
// the original first, respects its limits and says which one stopped it; its heuristics prune
// what they say and can be switched off (unroll-accumulators and pack-operands add what they
// say); every structure replays from its sequence.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>

#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/sequence_search.h"
#include "typecheck/feasibility.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

const char* kMatmul = R"(
def matmul(A: [[float]K]M, B: [[float]N]K): [[float]N]M =
  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, col)),
                      transpose(B))),
      A)
)";

Definition matmul() { return parseProgram(kMatmul, "matmul.weft").definitions.back(); }

bool containsText(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Whether every mapGlb(d) / mapWrg(d) with d > 0 has one of dimension d - 1 of its kind inside.
bool dimensionsNest(const Expr& body) {
  bool ok = true;
  forEachNode(body, [&](const Expr& e) {
    if (!e.isPrim(Op::MapGlb) && !e.isPrim(Op::MapWrg)) return;
    const int64_t d = *e.nats()[0].constant();
    if (d == 0) return;
    bool inside = false;
    forEachNode(e.funs()[0], [&](const Expr& inner) {
      inside = inside || (inner.isPrim(e.primOp()) && *inner.nats()[0].constant() == d - 1);
    });
    ok = ok && inside;
  });
  return ok;
}

// The search of `definition`'s lowerings alone (no algorithmic step), every complete lowering
// kept.
SearchReport everyLowering(const Definition& definition) {
  SearchOptions options = defaultSearchOptions({4});
  options.algorithmicDepth = 0;
  options.maxLoweringsPerProgram = 1000;
  return searchRewrites(definition, options);
}

}  // namespace

TEST_CASE("steps and sequences print and parse back") {
  RewriteStep step = parseStep("map-to-mapglb@0.0.1:dim=1");
  CHECK(step.rule == "map-to-mapglb");
  CHECK(step.position == Position{0, 0, 1});
  REQUIRE(step.arguments.size() == 1);
  CHECK(step.arguments[0].first == "dim");
  CHECK(stepText(step) == "map-to-mapglb@0.0.1:dim=1");
  const std::string text = "split-join@root ; vectorize@0.0:v=4 ; reduce-to-reduceseq@1";
  CHECK(sequenceText(parseSequence(text)) == text);
  CHECK(parseSequence("").empty());
  CHECK_THROWS_WITH_AS(parseStep("no-such@root"), doctest::Contains("no rule named 'no-such'"),
                       RewriteError);
  CHECK_THROWS_WITH_AS(parseStep("split-join"), doctest::Contains("expected NAME@POS"),
                       RewriteError);
  CHECK_THROWS_WITH_AS(parseStep("split-join@x.1"), doctest::Contains("bad position"),
                       RewriteError);
  CHECK_THROWS_WITH_AS(parseStep("split-join@root:k=2"),
                       doctest::Contains("has no factor 'k' (it takes n)"), RewriteError);
}

TEST_CASE("the canonical hash ignores tuning-variable names, nothing else") {
  const Definition original = matmul();
  const Rule& splitJoin = *findRule("split-join");
  RewriteContext fresh;
  Definition a = *applyAt(original, splitJoin, {}, {}, fresh);
  RewriteContext used;
  used.freshTuning("theta", Arith(1), std::nullopt);  // the next name differs
  used.freshTuning("chunk", Arith(1), std::nullopt);
  Definition b = *applyAt(original, splitJoin, {}, {}, used);
  CHECK(printDefinition(a) != printDefinition(b));
  CHECK(canonicalHash(a) == canonicalHash(b));
  CHECK(canonicalHash(a) != canonicalHash(original));
  RewriteContext other;
  Definition c = *applyAt(original, splitJoin, {0, 0, 0}, {}, other);
  CHECK(canonicalHash(c) != canonicalHash(a));
}

TEST_CASE("the search keeps the original first, distinct structures, within its limits") {
  SearchOptions options = defaultSearchOptions({4});
  options.maxAlgorithmic = 10;
  options.maxLoweringsPerProgram = 3;
  // Their extra structures: tested below.
  options.disabledHeuristics = {"unroll-accumulators", "pack-operands"};
  SearchReport report = searchRewrites(matmul(), options);
  REQUIRE(!report.structures.empty());
  CHECK(report.structures[0].sequence.empty());
  int levelOne = 0;
  std::set<uint64_t> hashes;
  std::map<std::string, int> lowerings;
  for (const SearchedStructure& s : report.structures) {
    CAPTURE(sequenceText(s.sequence));
    CHECK(hashes.insert(s.hash).second);
    CHECK(canonicalHash(replaySequence(matmul(), s.sequence)) == s.hash);
    CHECK(static_cast<int>(s.sequence.size()) <= options.algorithmicDepth + options.loweringDepth);
    CHECK(dimensionsNest(s.definition.function.body()));
    RewriteSequence algorithmic(s.sequence.begin(), s.sequence.begin() + s.algorithmicSteps);
    if (s.algorithmicSteps == static_cast<int>(s.sequence.size())) {
      ++levelOne;
    } else {
      ++lowerings[sequenceText(algorithmic)];
    }
  }
  CHECK(levelOne == options.maxAlgorithmic);
  CHECK(report.algorithmicStop == SearchStop::StructureLimit);
  CHECK(lowerings.size() >= 5);
  for (const auto& [from, count] : lowerings) CHECK(count <= options.maxLoweringsPerProgram);
  CHECK(containsText(report.summary(), "level 1 stopped: structure limit"));
}

TEST_CASE("each limit stops the search and is reported") {
  SearchOptions options = defaultSearchOptions({4});
  options.algorithmicDepth = 0;
  SearchReport depth = searchRewrites(matmul(), options);
  CHECK(depth.algorithmicStop == SearchStop::DepthLimit);
  for (const SearchedStructure& s : depth.structures) CHECK(s.algorithmicSteps == 0);

  // The algorithmic level's budget (no lowering level here).
  options = defaultSearchOptions({4});
  options.maxLoweringsPerProgram = 0;
  options.maxApplications = 50;
  SearchReport applications = searchRewrites(matmul(), options);
  CHECK(applications.applicationsTried == 50);
  CHECK(applications.algorithmicStop == SearchStop::ApplicationLimit);
  CHECK(containsText(applications.summary(), "application limit"));

  options = defaultSearchOptions({4});
  options.maxLoweringsPerProgram = 0;
  options.maxSeconds = 0;
  SearchReport time = searchRewrites(matmul(), options);
  CHECK(time.algorithmicStop == SearchStop::TimeLimit);
  CHECK(time.structures.size() == 1);

  // A program no rule changes saturates.
  const Definition identity =
      parseProgram("def f(x: [float]N): [float]N = x", "f.weft").definitions.back();
  SearchReport saturated = searchRewrites(identity, defaultSearchOptions({4}));
  CHECK(saturated.algorithmicStop == SearchStop::Saturated);
  CHECK(saturated.structures.size() == 1);

  // The lowering level has a budget of its own per program of level 1.
  options = defaultSearchOptions({4});
  options.maxAlgorithmic = 3;
  options.maxLoweringApplications = 40;
  SearchReport lowering = searchRewrites(matmul(), options);
  CHECK(lowering.loweringStops[SearchStop::ApplicationLimit] == 3);
}

TEST_CASE("heuristics prune what they say and can be switched off") {
  SearchOptions options = defaultSearchOptions({4});
  options.maxAlgorithmic = 1;  // the original only
  options.maxLoweringsPerProgram = 200;
  options.loweringDepth = 2;
  SearchReport pruned = searchRewrites(matmul(), options);
  auto sequentialKernel = [](const SearchReport& report) {
    for (const SearchedStructure& s : report.structures) {
      for (const RewriteStep& step : s.sequence) {
        if (step.rule == "map-to-mapseq" && step.position.empty()) return true;
      }
    }
    return false;
  };
  CHECK(!sequentialKernel(pruned));
  CHECK(pruned.pruned.count("parallel-kernels"));
  CHECK(pruned.pruned.count("lowering-outside-in"));

  options.disabledHeuristics = {"parallel-kernels", "lowering-outside-in"};
  SearchReport all = searchRewrites(matmul(), options);
  CHECK(sequentialKernel(all));
  CHECK(!all.pruned.count("parallel-kernels"));
  CHECK(all.structures.size() > pruned.structures.size());

  options.disabledHeuristics = {"no-such-heuristic"};
  CHECK_THROWS_WITH_AS(searchRewrites(matmul(), options),
                       doctest::Contains("no search heuristic named 'no-such-heuristic'"),
                       RewriteError);
  CHECK(searchHeuristics().size() == 14);
}

TEST_CASE("a sequence that no longer applies is an error naming the step") {
  RewriteSequence sequence = parseSequence("split-join@root ; reduce-to-reduceseq@root");
  CHECK_THROWS_WITH_AS(replaySequence(matmul(), sequence),
                       doctest::Contains("step 2 of the rewrite sequence, "
                                         "reduce-to-reduceseq@root, does not apply"),
                       RewriteError);
}

TEST_CASE("intensity order keeps matmul's register-blocked vector structure") {
  // Three steps from matmul: rows split into chunks, blocks of rows x 16 columns, the block's
  // accumulators as float16 vectors. Among the depth-3 programs it has the most operations per
  // value its reduction reads, so level 1 keeps it; switched off, the seeded sample need not.
  SearchOptions options = defaultSearchOptions({16});
  options.maxLoweringsPerProgram = 0;
  options.rankingSizes = {{"M", 256}, {"N", 256}, {"K", 256}};
  auto blockedVector = [](const SearchReport& report) {
    for (const SearchedStructure& s : report.structures) {
      if (containsText(sequenceText(s.sequence), "vectorize-block-accumulators")) return true;
    }
    return false;
  };
  SearchReport ranked = searchRewrites(matmul(), options);
  CHECK(ranked.algorithmicStop == SearchStop::StructureLimit);
  CHECK(blockedVector(ranked));
  // With the blocks' σ a number too (as exploration gives it from the device's registers).
  options.argumentChoices["map2d-kernel-blocking"] = {{{"kappa", Arith(16)}, {"sigma", Arith(16)}},
                                                      {{"kappa", Arith(16)}, {"sigma", Arith(8)}}};
  options.argumentChoices["map2d-kernel-blocking-interleaved"] =
      options.argumentChoices["map2d-kernel-blocking"];
  options.rankingSizes = {{"M", 1024}, {"N", 1024}, {"K", 1024}};
  CHECK(blockedVector(searchRewrites(matmul(), options)));
}

TEST_CASE("intensity order keeps a column sum's walk along rows") {
  // Column sums: summed down each column, every value read lies a row from the last. Blocks of
  // columns summed row by row (split-join, then map-reduce-interchange-rows) read each row's
  // values in order; level 1 keeps them among the 1400 programs it finds, where counting the
  // column walk's reads as plain reads made its vectors of a column (gathers) rank first.
  const Definition colsum =
      parseProgram(
          "def colsum(A: [[float]N]M): [float]N =\n"
          "  join(map(c -> reduce(0.0f, (acc, v) -> acc + v, c), transpose(A)))\n",
          "colsum.weft")
          .definitions.back();
  SearchOptions options = defaultSearchOptions({4, 16});
  options.maxLoweringsPerProgram = 0;
  options.rankingSizes = {{"M", 4096}, {"N", 4096}};
  const SearchReport report = searchRewrites(colsum, options);
  CHECK(report.algorithmicStop == SearchStop::StructureLimit);
  bool rowWalk = false;
  for (const SearchedStructure& s : report.structures) {
    const std::string text = sequenceText(s.sequence);
    rowWalk = rowWalk || text.rfind("split-join@0 ; map-reduce-interchange-rows@0.0.0.0", 0) == 0;
  }
  CHECK(rowWalk);
}

namespace {

// A 5-tap 1-D stencil with clamped borders (the empty-space and unroll-windows cases).
Definition fiveTapStencil() {
  return parseProgram(
             "def st1d(x: [float]N): [float]N =\n"
             "  join(map(w -> map(s -> s * 0.2f, reduce(0.0f, (acc, v) -> acc + v, w)),\n"
             "           slide(5, 1, pad(2, 2, clamp, x))))\n",
             "st1d.weft")
      .definitions.back();
}

}  // namespace

TEST_CASE("empty-space: level 1 drops programs whose parameters have no valid value") {
  // A 5-tap window: split by omega (1 or 5) and read as vectors of 4 (or 8, 16) leaves no
  // value of omega. At the sizes given such programs are dropped; every kept structure's
  // conditions then have a solution. Without sizes the search cannot tell and drops none.
  const Definition st1d = fiveTapStencil();
  SearchOptions options = defaultSearchOptions({4, 16});
  options.maxLoweringsPerProgram = 0;
  options.rankingSizes = {{"N", 4096}};
  const SearchReport report = searchRewrites(st1d, options);
  CHECK(report.pruned.count("empty-space"));
  for (const SearchedStructure& s : report.structures) {
    CAPTURE(sequenceText(s.sequence));
    CHECK(tuningFeasibility(typecheck(s.definition).constraints, options.rankingSizes) !=
          Feasibility::Infeasible);
  }
  options.rankingSizes.clear();
  CHECK_FALSE(searchRewrites(st1d, options).pruned.count("empty-space"));
  options.rankingSizes = {{"N", 4096}};
  options.disabledHeuristics.insert("empty-space");
  CHECK_FALSE(searchRewrites(st1d, options).pruned.count("empty-space"));
}

TEST_CASE("unroll-caps: lowerings the explorer's limits rule out are not kept") {
  // The explorer's check (here: no unrolled map at all) leaves every other lowering in the
  // sample; switched off, or without sizes, unrolled maps come back.
  SearchOptions options = defaultSearchOptions({4});
  options.maxAlgorithmic = 4;
  options.rankingSizes = {{"M", 64}, {"N", 64}, {"K", 64}};
  int asked = 0;
  options.withinLimits = [&asked](const Definition& lowered, const ArithBinding& sizes) {
    ++asked;
    CHECK(sizes.at("M") == 64);
    bool unrolled = false;
    forEachNode(lowered.function.body(),
                [&](const Expr& e) { unrolled = unrolled || e.isPrim(Op::MapSeqUnroll); });
    return !unrolled;
  };
  auto unrolledMaps = [](const SearchReport& report) {
    int count = 0;
    for (const SearchedStructure& s : report.structures) {
      forEachNode(s.definition.function.body(),
                  [&](const Expr& e) { count += e.isPrim(Op::MapSeqUnroll); });
    }
    return count;
  };
  const SearchReport capped = searchRewrites(matmul(), options);
  CHECK(asked > 0);
  CHECK(capped.pruned.count("unroll-caps"));
  CHECK(unrolledMaps(capped) == 0);
  CHECK(capped.structures.size() > 4);
  options.disabledHeuristics.insert("unroll-caps");
  CHECK(unrolledMaps(searchRewrites(matmul(), options)) > 0);
  options.disabledHeuristics.clear();
  options.rankingSizes.clear();
  CHECK(unrolledMaps(searchRewrites(matmul(), options)) > 0);
}

TEST_CASE("whole-accumulators: no accumulator kept whole is initialised by mapLcl") {
  // A 1-D convolution tiled into work-groups: a lowering may stage the rows' accumulators'
  // initial value with a mapLcl copy (to-local) while every work-item runs the reduction on
  // its own. Code generation refuses that; the search keeps other lowerings instead.
  const Definition conv1d = parseProgram(R"(
def conv1d(x: [float]N, k: [float]7): [float](N - 6) =
  join(map(w -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(w, k)), slide(7, 1, x)))
)")
                                .definitions.back();
  auto refused = [](const SearchReport& report) {
    int count = 0;
    for (const SearchedStructure& s : report.structures) {
      forEachNode(s.definition.function.body(), [&](const Expr& e) {
        if (!e.isPrim(Op::ReduceSeq) && !e.isPrim(Op::ReduceSeqUnroll)) return;
        bool initByLcl = false, stepByLcl = false;
        forEachNode(e.args()[0],
                    [&](const Expr& n) { initByLcl = initByLcl || n.isPrim(Op::MapLcl); });
        forEachNode(e.funs()[0],
                    [&](const Expr& n) { stepByLcl = stepByLcl || n.isPrim(Op::MapLcl); });
        count += initByLcl && !stepByLcl;
      });
    }
    return count;
  };
  SearchOptions options = defaultSearchOptions({4});
  const SearchReport kept = searchRewrites(conv1d, options);
  CHECK(kept.pruned.count("whole-accumulators"));
  CHECK(refused(kept) == 0);
  options.disabledHeuristics.insert("whole-accumulators");
  CHECK(refused(searchRewrites(conv1d, options)) > 0);
}

TEST_CASE("unroll-windows: a short window's reduction is lowered unrolled only") {
  // A 5-tap window: every lowering that lowers the taps' reduction unrolls it (the rolled
  // lowering is pruned), and one that leaves it to the default lowering inside a lowered map
  // gets it unrolled appended to its sequence. Switched off, rolled ones come back.
  const Definition st1d = fiveTapStencil();
  SearchOptions options = defaultSearchOptions({4, 16});
  options.maxAlgorithmic = 1;  // the program as written and its lowerings
  options.rankingSizes = {{"N", 4096}};
  auto rolledWindows = [](const SearchReport& report) {
    int rolled = 0;
    for (const SearchedStructure& s : report.structures) {
      if (s.sequence.empty()) continue;  // the program as written
      forEachNode(s.definition.function.body(), [&](const Expr& e) {
        rolled += e.isPrim(Op::ReduceSeq) || e.isPrim(Op::Reduce);
      });
    }
    return rolled;
  };
  const SearchReport report = searchRewrites(st1d, options);
  REQUIRE(report.structures.size() > 1);
  CHECK(report.pruned.count("unroll-windows"));
  CHECK(rolledWindows(report) == 0);
  options.disabledHeuristics.insert("unroll-windows");
  CHECK(rolledWindows(searchRewrites(st1d, options)) > 0);
}

TEST_CASE("a parallel map whose result its own kernel reads back is not a lowering") {
  // A row's softmax: the row's maximum, then exp of each value less it (a let's value), then
  // each divided by their sum. mapGlb over the rows and mapGlb(0) over the let's value would
  // have the work-items read what other work-items of the kernel write; code generation refuses
  // that ("cannot be read back in the same kernel"), so the search leaves it out
  // (dimensions-nest), where 37 of a softmax's 269 structures were such lowerings.
  const Definition softmax =
      parseProgram(
          "def softmax(A: [[float]N]M): [[float]N]M =\n"
          "  map(row -> let(e -> join(map(s -> map(v -> v / s, e),\n"
          "                               reduce(0.0f, (acc, v) -> acc + v, e))),\n"
          "                 join(map(m -> map(v -> exp(v - m), row),\n"
          "                          reduce(-1000000.0f, (acc, v) -> max(acc, v), row)))),\n"
          "      A)\n",
          "softmax.weft")
          .definitions.back();
  const SearchReport report = everyLowering(softmax);
  std::set<std::string> sequences;
  for (const SearchedStructure& s : report.structures) sequences.insert(sequenceText(s.sequence));
  CHECK(sequences.count("map-to-mapglb@root:dim=0"));
  CHECK_FALSE(sequences.count("map-to-mapglb@root:dim=1 ; map-to-mapglb@0.0.1.0:dim=0"));
  CHECK(report.pruned.count("dimensions-nest"));
  // A kernel's parallel maps on its spine (through join, under a map's function) stay.
  bool nested = false;
  for (const std::string& text : sequences) {
    nested = nested || text.find(":dim=1") != std::string::npos;
  }
  CHECK(nested);
}

TEST_CASE("a reduction at the top reads no parallel map: its kernel would read it back") {
  // Column sums as a reduction over rows of partial sums: a reduction at the top of the
  // definition is a kernel of its own that computes its data itself, so a mapGlb or mapWrg over
  // that data would be read back in it (code generation refuses). let-hoist moves the data into
  // a let, whose value is a kernel of its own; those lowerings stay.
  const Definition colsum =
      parseProgram(
          "def colsum(A: [[float]N]M): [float]N =\n"
          "  join(transpose(reduce(fill(N, 0.0f),\n"
          "    (accs, column) -> map(pair -> pair._0 + pair._1, zip(accs, column)),\n"
          "    transpose(map(col -> join(map(chunk -> reduce(0.0f, (acc, x) -> acc + x, chunk),\n"
          "                                  split(4, col))), transpose(A))))))\n",
          "colsum.weft")
          .definitions.back();
  const SearchReport report = everyLowering(colsum);
  int hoisted = 0;
  for (const SearchedStructure& s : report.structures) {
    const std::string text = sequenceText(s.sequence);
    CAPTURE(text);
    CHECK_FALSE(containsText(text, "map-to-mapglb@0.0.2.0:"));
    CHECK_FALSE(containsText(text, "map-to-mapwrg@0.0.2.0:"));
    hoisted += containsText(text, "let-hoist@root") && containsText(text, "map-to-mapglb@1:");
  }
  CHECK(hoisted > 0);
}

TEST_CASE("unroll-accumulators adds each structure with its accumulator updates unrolled") {
  SearchOptions options = defaultSearchOptions({16});
  options.maxLoweringsPerProgram = 1;
  options.rankingSizes = {{"M", 256}, {"N", 256}, {"K", 256}};
  SearchReport report = searchRewrites(matmul(), options);
  CHECK(report.unrolledAccumulators > 0);
  CHECK(containsText(report.summary(), "with accumulators unrolled"));
  int blockedUnrolled = 0;
  for (const SearchedStructure& s : report.structures) {
    const std::string text = sequenceText(s.sequence);
    if (!containsText(text, "vectorize-block-accumulators") || s.sequence.empty()) continue;
    const RewriteStep& last = s.sequence.back();
    if (last.rule != "map-to-mapseq-unroll") continue;
    // The unrolled map is the fma update of the σ accumulators, inside the reduce.
    const Expr unrolled = nodeAt(s.definition.function.body(), last.position);
    REQUIRE(unrolled.isPrim(Op::MapSeqUnroll));
    CHECK(canonicalHash(replaySequence(matmul(), s.sequence)) == s.hash);
    ++blockedUnrolled;
  }
  CHECK(blockedUnrolled > 0);
  options.disabledHeuristics = {"unroll-accumulators"};
  CHECK(searchRewrites(matmul(), options).unrolledAccumulators == 0);
}

TEST_CASE("pack-operands adds each structure with the views its reductions read copied in order") {
  SearchOptions options = defaultSearchOptions({16});
  options.maxLoweringsPerProgram = 1;
  options.argumentChoices["map2d-kernel-blocking"] = {{{"kappa", Arith(16)}, {"sigma", Arith(16)}}};
  options.argumentChoices["map2d-kernel-blocking-interleaved"] =
      options.argumentChoices["map2d-kernel-blocking"];
  options.rankingSizes = {{"M", 1024}, {"N", 1024}, {"K", 1024}};
  SearchReport report = searchRewrites(matmul(), options);
  CHECK(report.packedOperands > 0);
  CHECK(containsText(report.summary(), "with operands packed"));
  // The register block with B's column blocks and A's blocks of rows both copied: two lets,
  // and its reduction reads no transposing view any more.
  int packedBlocks = 0;
  for (const SearchedStructure& s : report.structures) {
    const std::string text = sequenceText(s.sequence);
    if (!containsText(text, "vectorize-block-accumulators") ||
        !containsText(text, "hoist-relayout@") || !containsText(text, "hoist-relayout-nested@")) {
      continue;
    }
    CAPTURE(text);
    int lets = 0;
    bool transposedReduction = false;
    forEachNode(s.definition.function.body(), [&](const Expr& e) {
      if (e.isPrim(Op::Let)) ++lets;
      if (e.isPrim(Op::Reduce)) {
        forEachNode(e.args().back(), [&](const Expr& inner) {
          transposedReduction = transposedReduction || inner.isPrim(Op::Transpose);
        });
      }
    });
    CHECK(lets == 2);
    CHECK_FALSE(transposedReduction);
    CHECK(canonicalHash(replaySequence(matmul(), s.sequence)) == s.hash);
    ++packedBlocks;
  }
  CHECK(packedBlocks > 0);
  // Each structure packed with both copies is kept also with the first alone (B's blocks; a
  // convolution's weights, where its windows' copy would repeat each input value K·K times).
  std::set<std::string> sequences;
  for (const SearchedStructure& s : report.structures) sequences.insert(sequenceText(s.sequence));
  int firstAlone = 0;
  for (const SearchedStructure& s : report.structures) {
    if (s.sequence.size() < 2 || s.sequence.back().rule != "hoist-relayout-nested" ||
        s.sequence[s.sequence.size() - 2].rule != "hoist-relayout") {
      continue;
    }
    RewriteSequence first(s.sequence.begin(), s.sequence.end() - 1);
    CAPTURE(sequenceText(s.sequence));
    CHECK(sequences.count(sequenceText(first)) == 1);
    ++firstAlone;
  }
  CHECK(firstAlone > 0);
  options.disabledHeuristics = {"pack-operands"};
  CHECK(searchRewrites(matmul(), options).packedOperands == 0);
}

TEST_CASE("tiles-settled: a program laid out in work-group tiles is not rewritten at level 1") {
  // The options of a GPU profile: all-pairs work-group tiles with 2 x 2 register tiles.
  SearchOptions options = defaultSearchOptions({4});
  options.algorithmicRules.push_back("allpairs-workgroup-tiles");
  options.argumentChoices["allpairs-workgroup-tiles"] = {
      {{"rows_per_item", Arith(2)}, {"cols_per_item", Arith(2)}}};
  options.algorithmicDepth = 2;
  options.maxLoweringsPerProgram = 0;
  auto startsTiled = [](const SearchReport& report) {
    int count = 0, rewrittenAfter = 0;
    for (const SearchedStructure& s : report.structures) {
      if (s.sequence.empty() || s.sequence[0].rule != "allpairs-workgroup-tiles") continue;
      ++count;
      if (s.sequence.size() > 1) ++rewrittenAfter;
    }
    return std::pair{count, rewrittenAfter};
  };
  options.maxAlgorithmic = 1000;
  SearchReport settled = searchRewrites(matmul(), options);
  CHECK(settled.pruned.count("tiles-settled"));
  CHECK(startsTiled(settled).first == 1);
  CHECK(startsTiled(settled).second == 0);
  options.disabledHeuristics = {"tiles-settled"};
  SearchReport all = searchRewrites(matmul(), options);
  CHECK_FALSE(all.pruned.count("tiles-settled"));
  CHECK(startsTiled(all).second > 0);
  CHECK(all.applicationsTried > settled.applicationsTried);

  // Nor lowered at level 2: no lowering rule follows the tiling in any structure but the
  // copies pack-operands adds after level 2 (hoist-relayout, hoist-relayout-nested).
  options.disabledHeuristics = {};
  options.maxLoweringsPerProgram = 6;
  const std::vector<std::string> loweringRules = defaultLoweringRules();
  SearchReport lowered = searchRewrites(matmul(), options);
  int tiled = 0;
  for (const SearchedStructure& s : lowered.structures) {
    auto at = std::find_if(s.sequence.begin(), s.sequence.end(), [](const RewriteStep& step) {
      return step.rule == "allpairs-workgroup-tiles";
    });
    if (at == s.sequence.end()) continue;
    ++tiled;
    for (auto step = at + 1; step != s.sequence.end(); ++step) {
      CAPTURE(sequenceText(s.sequence));
      if (step->rule.rfind("hoist-relayout", 0) == 0) continue;
      CHECK(std::find(loweringRules.begin(), loweringRules.end(), step->rule) ==
            loweringRules.end());
    }
  }
  CHECK(tiled > 0);
}
