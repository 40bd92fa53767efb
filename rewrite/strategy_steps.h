// Steps that several named strategies share (defined in rewrite/strategies.cpp): looking a
// rule up, finding a computing map by its binder's name, lowering copy nests, and unrolling the
// update of vector accumulators, padding Listing 3's windows to whole blocks.
#pragma once

#include <optional>
#include <string>

#include "rewrite/rule.h"
#include "rewrite/strategy.h"

namespace weft::rewrite {

// The library's rule `name` (std::logic_error when there is none: a strategy's bug).
const Rule& rule(const std::string& name);

// The value of an optional factor, or nullopt.
std::optional<Arith> factorValue(const RuleArguments& arguments, const std::string& name);

// A map whose function's parameter is named `name` (the binders rules create: kernelGroup,
// rowGroup, row, windowBlock, ...) that computes (holds a reduce).
NodePredicate computingMapOver(const std::string& name);

// Every copy nest (a materialized re-layout or padding) as mapGlb over its outer
// `globalLevels` levels (the outermost in the highest dimension) and mapSeq below.
Strategy lowerCopyNests(int globalLevels = 2);

// `step`, or the failure "STRATEGY: what" when it fails (a step the strategy cannot do without).
Strategy requiredStep(Strategy step, const std::string& strategy, const std::string& what);

// Listing 3's windows padded so that their counts are multiples of the given numbers
// (pad-for-blocking-2d), the crop moved out of the map2D and above the outer transposes
// (map2d-crop2d-interchange, crop2d-kernels-outermost): blocks of those sizes then cover the
// padded output, and the surplus is dropped when the result is stored (guarded stores).
Strategy padToWholeBlocks(const Arith& rowsMultiple, const Arith& columnsMultiple,
                          const std::string& strategy);

// One map-to-mapseq-unroll on a computing map inside a reduce's initial value or function (the
// update of vector accumulators, unrolled so that each becomes a variable), or failure.
Strategy unrollComputingAccumulatorMaps();

}  // namespace weft::rewrite
