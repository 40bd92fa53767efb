// Searched structures of a program file (see workloads/pipeline/searched_structures.h).
#include "workloads/pipeline/searched_structures.h"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>

#include "explore/z3_encoding.h"
#include "typecheck/flop_count.h"
#include "workloads/pipeline/pipeline_cost_model.h"

namespace weft::explore {

namespace {

constexpr const char* kStrategyPrefix = "rewrite: ";

// The recorded form of a canonical hash: its top 48 bits, a non-negative integer that JSON
// readers holding numbers as doubles keep exactly.
int64_t recordedHashOf(uint64_t hash) { return static_cast<int64_t>(hash >> 16); }

ExploreTarget::Structure structureOf(const Definition& rewritten, const ArithBinding& sizes,
                                     const rewrite::RewriteSequence& sequence,
                                     int algorithmicSteps) {
  ExploreTarget one = programTarget(rewritten, sizes);
  rewrite::RewriteSequence algorithmic(sequence.begin(), sequence.begin() + algorithmicSteps);
  std::string family = algorithmic.empty() ? "as written" : rewrite::sequenceText(algorithmic);
  return ExploreTarget::Structure{
      one.parametric,
      one.switches,
      {{kRewriteParameter, recordedHashOf(rewrite::canonicalHash(rewritten))}},
      "rewrite: " + family,
      rewriteStrategyText(sequence),
      /*needsGeneration=*/true};
}

}  // namespace

Definition windowShapeSpecialised(const Definition& definition, const ArithBinding& sizes) {
  ArithSubstitution substitution;
  forEachNode(definition.function.body(), [&](const Expr& e) {
    if (!e.isPrim(Op::Slide) && !e.isPrim(Op::SlideStrict)) return;
    for (const Arith& nat : e.nats()) {
      for (const Arith& v : nat.vars()) {
        auto bound = sizes.find(v.varName());
        if (v.varKind() == VarKind::Size && bound != sizes.end()) {
          substitution[v.varName()] = Arith(bound->second);
        }
      }
    }
  });
  if (substitution.empty()) return definition;
  return withSizesFixed(definition, substitution);
}

rewrite::SearchOptions explorationSearchOptions(const host::DeviceProfile* device) {
  std::set<int64_t> widths = {4};
  if (device) {
    for (int width : {device->preferredFloatVectorWidth, device->nativeFloatVectorWidth}) {
      if (width == 2 || width == 4 || width == 8 || width == 16) widths.insert(width);
    }
  }
  rewrite::SearchOptions options =
      rewrite::defaultSearchOptions(std::vector<int64_t>(widths.begin(), widths.end()));
  // The counts of rule applications bound the search; the time limits only catch a runaway.
  // A level cut by time would give structures that depend on the machine's load, and resumed
  // or sharded explorations must all see the same ones.
  options.maxSeconds = 600;
  options.maxLoweringSeconds = 60;
  if (!device) return options;
  // A lowering whose unrolled loops this device's space caps at every value of its parameters
  // (a map unrolled over a whole row of a size) is not kept in place of one that can run.
  SpaceOptions caps;
  caps.device = *device;
  options.withinLimits = [caps](const Definition& lowered, const ArithBinding& sizes) {
    return unrollCapsLeaveAPoint(lowered, sizes, caps);
  };
  // Register blocks get numbers for their accumulators, from the device's register budget: σ
  // blocks of κ lanes and two more vectors (an operand and an address) must fit in the
  // registers of a work-item, the largest power of two and its half (a symbolic σ would
  // leave private arrays of symbolic size, which the space's register constraint cannot see).
  std::vector<rewrite::RuleArguments> blocks;
  for (int64_t kappa : widths) {
    const int64_t budget = (device->registersPerWorkItem - 2 * kappa) / kappa;
    int64_t sigma = 1;
    while (sigma * 2 <= budget) sigma *= 2;
    for (int64_t s : {sigma, sigma / 2}) {
      if (s >= 1) blocks.push_back({{"kappa", Arith(kappa)}, {"sigma", Arith(s)}});
    }
  }
  for (const char* rule : {"map2d-kernel-blocking", "map2d-kernel-blocking-interleaved"}) {
    options.argumentChoices[rule] = blocks;
  }
  // Where local memory is the device's own (GPUs), all-pairs products (a matrix product) may
  // become work-group tiles staged in it with RM × RN register tiles per work-item, the shape
  // of the fast GPU GEMMs (../shared/research/gpu-conv.md; CLBlast's Xgemm, myGEMM): RM and RN
  // of 4 and 8 whose accumulators and operands (RM·RN + RM + RN) take at most half the
  // registers of a work-item, else 2 × 2.
  if (device->hasDedicatedLocalMemory()) {
    std::vector<rewrite::RuleArguments> tiles;
    for (int64_t rm : {4, 8}) {
      for (int64_t rn : {4, 8}) {
        if (2 * (rm * rn + rm + rn) <= device->registersPerWorkItem) {
          tiles.push_back({{"rows_per_item", Arith(rm)}, {"cols_per_item", Arith(rn)}});
        }
      }
    }
    if (tiles.empty()) tiles.push_back({{"rows_per_item", Arith(2)}, {"cols_per_item", Arith(2)}});
    options.algorithmicRules.push_back("allpairs-workgroup-tiles");
    options.argumentChoices["allpairs-workgroup-tiles"] = tiles;
  }
  return options;
}

std::vector<ExploreTarget::Structure> searchedStructures(const Definition& definition,
                                                         const ArithBinding& sizes,
                                                         const rewrite::SearchOptions& options,
                                                         rewrite::SearchReport* report) {
  rewrite::SearchOptions withSizes = options;
  withSizes.rankingSizes = sizes;
  rewrite::SearchReport found =
      rewrite::searchRewrites(windowShapeSpecialised(definition, sizes), withSizes);
  std::vector<ExploreTarget::Structure> structures;
  for (const rewrite::SearchedStructure& s : found.structures) {
    if (s.sequence.empty()) continue;
    structures.push_back(structureOf(s.definition, sizes, s.sequence, s.algorithmicSteps));
  }
  if (report) *report = std::move(found);
  return structures;
}

std::function<std::optional<double>(const std::map<std::string, int64_t>&,
                                    const host::DeviceProfile&)>
readsCostModel(const std::vector<ExploreTarget::Structure>& structures, const ArithBinding& sizes) {
  // The structure of a point: by its rewrite parameter, else the one without it.
  auto byHash = std::make_shared<std::map<int64_t, Definition>>();
  auto unnamed = std::make_shared<std::optional<Definition>>();
  for (const ExploreTarget::Structure& s : structures) {
    auto found = s.fixedParameters.find(kRewriteParameter);
    if (found != s.fixedParameters.end()) {
      byHash->emplace(found->second, s.parametric);
    } else if (!*unnamed) {
      *unnamed = s.parametric;
    }
  }
  return [byHash, unnamed, sizes](const std::map<std::string, int64_t>& parameters,
                                  const host::DeviceProfile& device) -> std::optional<double> {
    const Definition* structure = nullptr;
    auto hash = parameters.find(kRewriteParameter);
    if (hash == parameters.end()) {
      if (*unnamed) structure = &**unnamed;
    } else if (auto found = byHash->find(hash->second); found != byHash->end()) {
      structure = &found->second;
    }
    if (!structure) return std::nullopt;
    try {
      const OperationCounts counts =
          countOperations(*structure, pointBinding(*structure, sizes, parameters));
      if (counts.reductionReads <= 0) return std::nullopt;
      const double valuesPerSecond = std::max(device.computeUnits, 1) *
                                     std::max(device.maxClockMHz, 1000) * 1e6;
      // A read through a transposing view counts twice: it lands on another cache line than
      // its neighbour in the step, where a re-laid-out input is read line by line. Accumulators
      // updated in a loop count too: they are read and written in memory every step. So do the
      // values top-level copies store, each read and written once (a convolution's windows
      // copied in order hold every input value K·K times).
      return (counts.reductionReads + counts.transposedReductionReads +
              counts.loopedAccumulatorValues + 2 * counts.copiedValues) /
             valuesPerSecond;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
}

ExploreTarget::Structure recordedSearchedStructure(const Definition& definition,
                                                   const ArithBinding& sizes,
                                                   int64_t recordedHash,
                                                   const std::string& strategy) {
  std::optional<rewrite::RewriteSequence> sequence = sequenceOfStrategy(strategy);
  if (!sequence) {
    throw std::invalid_argument("rewrite = " + std::to_string(recordedHash) +
                                " needs its rule sequence, but the recorded strategy is '" +
                                strategy + "'");
  }
  // From the program with its window shapes bound, as the search starts; records made before
  // the search bound them replay from the program as written.
  Definition rewritten;
  int64_t hash = 0;
  const Definition specialised = windowShapeSpecialised(definition, sizes);
  for (const Definition* start : {&specialised, &definition}) {
    try {
      rewritten = rewrite::replaySequence(*start, *sequence);
    } catch (const std::exception& error) {
      if (start == &definition) {
        throw std::invalid_argument("the recorded rewrite sequence does not replay: " +
                                    std::string(error.what()));
      }
      continue;
    }
    hash = recordedHashOf(rewrite::canonicalHash(rewritten));
    if (hash == recordedHash) break;
  }
  if (hash != recordedHash) {
    throw std::invalid_argument(
        "the recorded rewrite sequence now gives another program (rewrite = " +
        std::to_string(hash) + ", recorded " + std::to_string(recordedHash) +
        "): the program or the rule library changed since it was explored");
  }
  // Replayed, the algorithmic steps are not known apart: the family is only for sampling.
  return structureOf(rewritten, sizes, *sequence, 0);
}

std::string rewriteStrategyText(const rewrite::RewriteSequence& sequence) {
  return kStrategyPrefix + rewrite::sequenceText(sequence);
}

std::optional<rewrite::RewriteSequence> sequenceOfStrategy(const std::string& strategy) {
  const std::string prefix = kStrategyPrefix;
  if (strategy.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return rewrite::parseSequence(strategy.substr(prefix.size()));
}

}  // namespace weft::explore
