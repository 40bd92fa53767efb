// Searching rewrite sequences: from a definition, the programs the rule library reaches in a few
// steps, each with the sequence of rule applications that produced it.
//
// Like LIFT's exploration (Steuwer et al., "Matrix Multiplication Beyond Auto-Tuning: Rewrite-
// based GPU Code Generation", CASES 2016) the search runs in levels:
//   1. the algorithmic level applies the rules that change how the computation is organised
//      (split-join, fusion and fission, partial reduction, interchange, tiling, blocking,
//      vectorisation) breadth first, up to a depth;
//   2. the lowering level decides, for each program of level 1, how its maps and reductions run
//      (mapGlb, mapWrg with mapLcl, mapSeq, unrolled) and where values live (toPrivate,
//      toLocal), again breadth first up to a depth.
// What neither level decides is left to the default lowering (codegen/lowering.h), and the
// numbers the rules leave open (split sizes, tile sizes) stay tuning variables: the third level
// is the parameter space (explore/parameter_space.h), whose register-file constraint is LIFT's
// "no private memory beyond the register file".
//
// Programs equal up to the names of their tuning variables are one structure (canonicalHash);
// the first sequence that reaches one, hence a shortest, names it. The limits (depths, counts,
// rule applications tried, time) are named, and the report says which one stopped each level,
// like egg's runners. Pruning heuristics are named and can be switched off one by one
// (searchHeuristics lists them). A sequence replays to the same program with the same tuning
// variable names (replaySequence), so that a variant can be rebuilt from its record.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "rewrite/engine.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

// One rule application: the rule's name, where, and the factors given to it (those not given
// became tuning variables).
struct RewriteStep {
  std::string rule;
  Position position;
  RuleArguments arguments;
};
using RewriteSequence = std::vector<RewriteStep>;

// "factor=value,..." for a rule or strategy (`owner`, named in errors) taking `factors`;
// throws RewriteError for a malformed item, an unknown factor or a bad value.
RuleArguments parseFactors(const std::string& text, const std::vector<std::string>& factors,
                           const std::string& owner);

// "NAME@POS[:factor=value,...]", the syntax of `weft rewrite --apply`.
std::string stepText(const RewriteStep& step);
// Parses one step; throws RewriteError naming what is wrong (unknown rule, bad position,
// a factor the rule does not take).
RewriteStep parseStep(const std::string& text);
// Steps joined by " ; " (the empty sequence is ""), and back.
std::string sequenceText(const RewriteSequence& sequence);
RewriteSequence parseSequence(const std::string& text);

// Applies the steps in order with a fresh RewriteContext (the search's names). Throws
// RewriteError when a step does not apply: the program or the rule library changed.
Definition replaySequence(const Definition& definition, const RewriteSequence& sequence);

// A hash of the definition with its tuning variables renamed in order of first occurrence:
// equal for programs that differ only in those names. Stable across runs and builds (FNV-1a of
// the printed program), so it can be recorded.
uint64_t canonicalHash(const Definition& definition);

// The pruning heuristics by name, with one line each saying what they leave out.
struct SearchHeuristic {
  std::string name;
  std::string description;
};
const std::vector<SearchHeuristic>& searchHeuristics();
// Their names joined with ", " (for help texts).
std::string searchHeuristicNames();

struct SearchOptions {
  // Limits: depth of each level, structures kept, rule applications tried and seconds per
  // level.
  int algorithmicDepth = 3;
  int loweringDepth = 3;
  int maxAlgorithmic = 24;        // programs kept from level 1 (the original included)
  int maxLoweringsPerProgram = 6; // programs kept from level 2 for each program of level 1
                                  // (those whose thread mapping is complete)
  int64_t maxApplications = 5000000;  // level 1
  double maxSeconds = 30.0;             // level 1
  int64_t maxLoweringApplications = 200000;  // level 2, from each program of level 1
  double maxLoweringSeconds = 2.0;           // level 2, from each program of level 1
  // The rules of each level by name (defaultAlgorithmicRules / defaultLoweringRules).
  std::vector<std::string> algorithmicRules;
  std::vector<std::string> loweringRules;
  // The values tried for factors a rule needs given (a thread dimension, a vector width):
  // rule name -> the argument lists to try. A rule absent here is applied once, its factors
  // left symbolic.
  std::map<std::string, std::vector<RuleArguments>> argumentChoices;
  // Heuristics switched off by name (searchHeuristics).
  std::set<std::string> disabledHeuristics;
  // Seeds the choice of level-1 programs when the search finds more than it keeps.
  uint64_t seed = 1;
  // The sizes the intensity-order heuristic evaluates programs at (unbound ones: 256), and at
  // which the empty-space heuristic looks for values of a program's tuning parameters (where
  // they bind all of its sizes).
  ArithBinding rankingSizes;
  // The explorer's limits on a lowered program at rankingSizes, which the rewrite layer does
  // not know (a device's cap on unrolled loops): a complete lowering for which it returns false
  // is not kept (the unroll-caps heuristic). Unset, or no sizes given: every one may be kept.
  std::function<bool(const Definition&, const ArithBinding&)> withinLimits;
  // The bound of the map-nesting heuristic: maps nested more deeply than the original's
  // deepest nest by more than this are pruned.
  int extraNesting = 4;
};

// The defaults: every library rule of the algorithmic families (fusion, tiling, reduction,
// simplification, vectorisation, coalescing) but copies and identities, and the lowering and
// toPrivate/toLocal rules; thread dimensions 0 to 2 and the given vector widths.
std::vector<std::string> defaultAlgorithmicRules();
std::vector<std::string> defaultLoweringRules();
SearchOptions defaultSearchOptions(const std::vector<int64_t>& vectorWidths);

// Why a level stopped.
enum class SearchStop {
  Saturated,         // no rule produced a new program
  DepthLimit,        // the depth was reached with programs still to expand
  StructureLimit,    // enough programs were kept
  ApplicationLimit,  // the level's rule applications were tried (maxApplications, ...)
  TimeLimit,         // the level's seconds passed (maxSeconds, maxLoweringSeconds)
};
const char* searchStopName(SearchStop stop);

struct SearchedStructure {
  Definition definition;
  RewriteSequence sequence;
  int algorithmicSteps = 0;  // the first steps of `sequence` that are of level 1
  uint64_t hash = 0;         // canonicalHash(definition)
};

struct SearchReport {
  // The original first, then level 1's programs in the order found, then each one's
  // lowerings.
  std::vector<SearchedStructure> structures;
  SearchStop algorithmicStop = SearchStop::Saturated;
  std::map<SearchStop, int> loweringStops;  // how many level-1 programs each reason stopped
  int64_t applicationsTried = 0;            // (rule, position, arguments) attempts
  int64_t duplicates = 0;                   // results equal to a program already found
  int64_t unrolledAccumulators = 0;         // structures added by unroll-accumulators
  int64_t packedOperands = 0;               // structures added by pack-operands
  std::map<std::string, int64_t> pruned;    // results left out, by heuristic
  // Results the type checker rejected: a rule matched, but a condition of its result is false
  // here (a vector width that does not divide a length fixed by earlier steps), or a rule's
  // bug (the rules' property tests look for those). Left out, with the first one's message.
  int64_t infeasible = 0;
  std::string firstInfeasible;
  double seconds = 0.0;
  // One line: counts and why each level stopped.
  std::string summary() const;
};

// Runs the search from `definition` (throws RewriteError for an unknown rule name or
// heuristic in the options).
SearchReport searchRewrites(const Definition& definition, const SearchOptions& options);

}  // namespace weft::rewrite
