// The time/space trade-off of explored variants: the Pareto front (the ok variants no other ok
// variant beats on both time and space), its knee, and the fastest variant within a memory
// budget — what `weft report` prints and what picking a variant (fastest, smallest, knee,
// budget) chooses from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explore/results_db.h"

namespace weft::explore {

// The ok variants (with a time and a space) that no other ok variant dominates, fastest first.
std::vector<VariantRecord> paretoFront(const std::vector<VariantRecord>& variants);

// The index in `front` (as paretoFront returns it) of the knee: the point farthest from the
// straight line between the front's two ends, with time and space each scaled to [0, 1] over
// the front (0 for fronts of one or two points: then the fastest).
size_t kneeIndex(const std::vector<VariantRecord>& front);

// The fastest ok variant whose space is at most `budgetBytes`, or nullopt.
std::optional<VariantRecord> fastestWithin(const std::vector<VariantRecord>& variants,
                                           int64_t budgetBytes);

// A memory size such as "25MB", "1.5GB", "512KB", "1000000" (bytes; decimal units, also MiB,
// GiB, KiB) in bytes; throws std::invalid_argument saying what was expected.
int64_t parseByteSize(const std::string& text);

}  // namespace weft::explore
