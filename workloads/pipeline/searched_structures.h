// The structures of a program file found by the rewrite-sequence search
// (rewrite/sequence_search.h): for any program, not only those a hand-written strategy knows.
//
// Each program the search reaches, other than the original, becomes one structure of the
// program's ExploreTarget: its tuning variables (split sizes, tile sizes) are sampled from the
// parameter space like any strategy's. A variant records its structure twice: the parameter
// "rewrite" holds 48 bits of the program's canonical hash (so that variants of different
// structures with equal tuning values are different rows), and the strategy holds the rule
// sequence ("rewrite: split-join@0.0.0 ; map-to-mapglb@root:dim=0"), which `weft run --pick`,
// `emit` and `report` replay to rebuild and explain it. A replay that reaches another program
// (the rule library changed since) is an error, never a silent substitute.
//
// Structures are grouped in families by their algorithmic steps (each family gets an equal
// share of the samples, its lowerings share it), so that one algorithmic program with many
// lowerings does not crowd out the others.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "explore/explorer.h"
#include "host/device_profile.h"
#include "rewrite/sequence_search.h"

namespace weft::explore {

// The recorded parameter naming a searched structure.
inline constexpr const char* kRewriteParameter = "rewrite";

// The search options for exploring on `device` (null: the device-independent defaults): the
// vector widths the vectorising rules try come from its preferred and native float widths.
rewrite::SearchOptions explorationSearchOptions(const host::DeviceProfile* device);

// The definition with the sizes that shape its windows (a slide's size and step) bound to their
// values in `sizes`: rules about windows match constant shapes (conv-winograd-*: 3×3 windows at
// stride 1), as the conv workload's Winograd strategy binds K and S. Each bound size stays
// declared with its one value as its range; sizes shaping no window stay symbolic, so a program
// without a symbolic window comes back as it is. The search starts from it.
Definition windowShapeSpecialised(const Definition& definition, const ArithBinding& sizes);

// The structures the search reaches from `definition` (the original left out: it is the
// target's as-written structure), bound to `sizes`. `report` receives the search's report.
std::vector<ExploreTarget::Structure> searchedStructures(const Definition& definition,
                                                         const ArithBinding& sizes,
                                                         const rewrite::SearchOptions& options,
                                                         rewrite::SearchReport* report = nullptr);

// A static cost model for the union of `structures` (the target's predictSeconds): the values
// the point's reductions read (typecheck/flop_count.h countOperations, with the point's tuning
// values), at one value per cycle per compute unit of the device, a value read through a
// transposing view counted twice (the cache lines a strided step touches; re-laid-out inputs
// avoid them; overlapping windows do not count as strided), plus the accumulators a looped
// update reads and writes each step (unrolled, they are registers) and the values top-level
// copies store, read and written once each. It ignores parallelism and caches otherwise; what it is
// for is the measuring order (--order cost), so that the blocked and vectorised structures, which
// read the fewest values, are measured first and the cut-offs for slow variants bite early. A point
// whose structure has no reduction gets no prediction.
std::function<std::optional<double>(const std::map<std::string, int64_t>&,
                                    const host::DeviceProfile&)>
readsCostModel(const std::vector<ExploreTarget::Structure>& structures, const ArithBinding& sizes);

// A recorded searched structure rebuilt from its strategy text and checked against its
// recorded hash; throws std::invalid_argument saying what does not match.
ExploreTarget::Structure recordedSearchedStructure(const Definition& definition,
                                                   const ArithBinding& sizes,
                                                   int64_t recordedHash,
                                                   const std::string& strategy);

// The strategy text of a sequence ("rewrite: ..."), and the sequence of such a text (nullopt
// when the text is not one).
std::string rewriteStrategyText(const rewrite::RewriteSequence& sequence);
std::optional<rewrite::RewriteSequence> sequenceOfStrategy(const std::string& strategy);

}  // namespace weft::explore
