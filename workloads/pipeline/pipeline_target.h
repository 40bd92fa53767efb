// Exploring an image pipeline (examples/pipelines/) over its fusion choices: the
// program as written (unfused: the default lowering gives one kernel per stage) and every
// fusion strategy that applies to it (rewrite/strategy_pipeline_fusion.h: the producer
// computed per tile of the consumer, in local or private memory), each an alternative
// structure of one ExploreTarget whose tile sizes are tuning parameters. A variant's recorded
// parameters name its structure with "fusion" (the index into pipelineFusionStrategies(),
// 0 = unfused), so `weft emit --params` and `weft run --pick` can rebuild it. A strategy that
// vectorises explicitly (pipeline-line-buffered-pointwise, pipeline-line-buffered, ...) takes
// the device's preferred vector width. Where the image's rows leave that width no valid point
// (a width it does not divide), two structures of the strategy take its place where they have
// valid points: the preferred width with rows padded to whole vectors (recorded as
// "vector_pad": 1) and the widest narrower power of two that divides the rows. The width is
// recorded as the fixed parameter "vector_width".
//
// The reference is the program as written, default-lowered and run on the device: full-size
// images are too large for the interpreter, and the unfused lowering is itself tested against
// the interpreter and the C++ references (tests/pipelines/).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "explore/explorer.h"

namespace weft::explore {

// The recorded parameters that name a structure: its index into pipelineFusionStrategies()
// (0 = unfused) and, for a strategy that vectorises explicitly, the vector width it was built
// with.
inline constexpr const char* kFusionParameter = "fusion";
inline constexpr const char* kVectorWidthParameter = "vector_width";
// Present (= 1) when the strategy pads rows its width does not divide to whole vectors (its
// factor pad = 1, vectorize-zip-padded).
inline constexpr const char* kVectorPadParameter = "vector_pad";

// The structures explored besides the program as written, in "fusion" order (1, 2, ...).
const std::vector<std::string>& pipelineFusionStrategies();

struct PipelineTargetOptions {
  // Strategies to try (names from pipelineFusionStrategies()); empty: all of them.
  std::vector<std::string> strategies;
  bool includeUnfused = true;
  // The float vector width of strategies that vectorise explicitly (the device profile's
  // preferred width; a narrower power of two where the sizes need it); 0: such strategies do
  // not apply.
  int64_t vectorWidth = 0;
};

// The program `definition` at `sizes` with its fusion alternatives. Strategies that do not
// apply are skipped and listed in `notApplied` ("name: why"). Throws std::invalid_argument when
// no structure is left.
ExploreTarget pipelineTarget(const Definition& definition, const ArithBinding& sizes,
                             const PipelineTargetOptions& options,
                             std::vector<std::string>* notApplied = nullptr);

// The one structure a recorded variant came from (its "fusion" parameter; absent: unfused).
ExploreTarget pipelineStructureTarget(const Definition& definition, const ArithBinding& sizes,
                                      const std::map<std::string, int64_t>& fixed);

}  // namespace weft::explore
