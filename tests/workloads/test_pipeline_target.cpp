// Tests of explore::pipelineTarget (workloads/pipeline/pipeline_target.h): the blur pipeline
// explored over its fusion choices has the unfused program and four fusion strategies as
// structures, each family sampled, every point naming its structure with "fusion"; recorded fixed
// parameters rebuild the same structure; a program no fusion strategy applies to keeps only the
// unfused structure and says why the others were skipped; bad fusion numbers and names are errors.
// Harris gets pipeline-fused-private-tuples as fusion=5, sampled and rebuilt from its record.
// Unsharp mask line-buffered along whole rows is fusion=9 where a vector width is given (fixed
// as vector_width, rebuilt from it), sampled although its ring of rows is beyond the register
// budget (memory-resident, bounded per work-group instead), and not applied without a width.
// Rows the preferred vector width does not divide get that width with the rows padded to whole
// vectors (vector_pad) and the widest power of two that divides them.
#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "workloads/pipeline/pipeline_target.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "ir/printer.h"

using namespace weft;
using namespace weft::explore;

namespace {

Definition loadExample(const std::string& relative) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/" + relative).definitions.back();
}

}  // namespace

TEST_CASE("blur: the unfused program and its four fusions are structures, all sampled") {
  const Definition blur = loadExample("pipelines/blur.weft");
  const ArithBinding sizes = {{"W", 256}, {"H", 256}};
  std::vector<std::string> skipped;
  ExploreTarget target = pipelineTarget(blur, sizes, {}, &skipped);
  // pipeline-fused-private-pointwise needs pointwise stages after the stencils (unsharp mask),
  // pipeline-fused-private-chain a stage read twice (Canny's gradients),
  // pipeline-fused-private-tuples and pipeline-fused-sliding-window-tuples zipped stencils over
  // stencils (Harris), pipeline-fused-sliding-window-pointwise pointwise stages too, and
  // pipeline-line-buffered-pointwise, pipeline-line-buffered, pipeline-inlined-rows and
  // pipeline-column-walk a vector width (none given here), pipeline-fused-private-chain-pairs
  // two stages over the same array (Canny's magnitude and direction).
  REQUIRE(skipped.size() == 10);
  CHECK(skipped[0].rfind("pipeline-fused-private-pointwise: ", 0) == 0);
  CHECK(skipped[1].rfind("pipeline-fused-private-chain: ", 0) == 0);
  CHECK(skipped[2].rfind("pipeline-fused-private-tuples: ", 0) == 0);
  CHECK(skipped[3].rfind("pipeline-fused-sliding-window-tuples: ", 0) == 0);
  CHECK(skipped[4].rfind("pipeline-fused-sliding-window-pointwise: ", 0) == 0);
  CHECK(skipped[5].rfind("pipeline-line-buffered-pointwise: needs a vector width", 0) == 0);
  CHECK(skipped[6].rfind("pipeline-line-buffered: needs a vector width", 0) == 0);
  CHECK(skipped[7].rfind("pipeline-inlined-rows: needs a vector width", 0) == 0);
  CHECK(skipped[8].rfind("pipeline-fused-private-chain-pairs: ", 0) == 0);
  CHECK(skipped[9].rfind("pipeline-column-walk: needs a vector width", 0) == 0);
  REQUIRE(target.structures.size() == 5);
  CHECK(target.reference.has_value());
  std::set<std::string> families;
  // pipeline-fused-sliding-window is the 6th strategy, pipeline-fused-inlined the 11th.
  const std::vector<int64_t> fusions = {0, 1, 2, 6, 11};
  for (size_t i = 0; i < target.structures.size(); ++i) {
    const ExploreTarget::Structure& s = target.structures[i];
    families.insert(s.family);
    REQUIRE(s.fixedParameters.count("fusion"));
    CHECK(s.fixedParameters.at("fusion") == fusions[i]);
    ExploreTarget rebuilt = pipelineStructureTarget(blur, sizes, s.fixedParameters);
    CHECK(printDefinition(rebuilt.parametric) == printDefinition(s.parametric));
    CHECK(rebuilt.fixedParameters == s.fixedParameters);
  }
  CHECK(families == std::set<std::string>{"unfused", "pipeline-fused-private",
                                          "pipeline-fused-local", "pipeline-fused-sliding-window",
                                          "pipeline-fused-inlined"});
  CHECK(pipelineFusionStrategies().at(5) == "pipeline-fused-sliding-window");

  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 16, 5);
  std::map<std::string, int> perFamily;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    ++perFamily[target.structures[structure].family];
  }
  CHECK(perFamily["unfused"] >= 1);  // its kernels' local sizes are its only parameters
  CHECK(perFamily["pipeline-fused-private"] >= 4);
  CHECK(perFamily["pipeline-fused-local"] >= 4);
  CHECK(perFamily["pipeline-fused-sliding-window"] >= 4);
  CHECK(perFamily["pipeline-fused-inlined"] >= 1);  // local sizes only, like the unfused one
}

TEST_CASE("unsharp mask: the pointwise fusion applies, its tiles sampled") {
  const Definition unsharp = loadExample("pipelines/unsharp.weft");
  const ArithBinding sizes = {{"C", 3}, {"W", 96}, {"H", 64}};
  std::vector<std::string> skipped;
  ExploreTarget target = pipelineTarget(unsharp, sizes, {}, &skipped);
  CAPTURE(skipped.size());
  std::set<std::string> families;
  for (const ExploreTarget::Structure& s : target.structures) families.insert(s.family);
  REQUIRE(families.count("pipeline-fused-private-pointwise"));
  // The sliding window over (value, pixel) pairs is a structure of its own, fusion=8.
  REQUIRE(families.count("pipeline-fused-sliding-window-pointwise"));
  CHECK(pipelineFusionStrategies().at(7) == "pipeline-fused-sliding-window-pointwise");
  for (const ExploreTarget::Structure& s : target.structures) {
    if (s.family != "pipeline-fused-sliding-window-pointwise") continue;
    CHECK(s.fixedParameters.at("fusion") == 8);
    ExploreTarget rebuilt = pipelineStructureTarget(unsharp, sizes, s.fixedParameters);
    CHECK(printDefinition(rebuilt.parametric) == printDefinition(s.parametric));
  }
  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 9, 2);
  int fusedPoints = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    if (target.structures[structure].family == "pipeline-fused-private-pointwise") ++fusedPoints;
  }
  CHECK(fusedPoints >= 2);
}

TEST_CASE("unsharp mask line-buffered: fusion=9 with the vector width fixed, its strips sampled") {
  const Definition unsharp = loadExample("pipelines/unsharp.weft");
  const ArithBinding sizes = {{"C", 3}, {"W", 96}, {"H", 64}};
  PipelineTargetOptions options;
  options.strategies = {"pipeline-line-buffered-pointwise"};
  options.vectorWidth = 16;
  ExploreTarget target = pipelineTarget(unsharp, sizes, options);
  REQUIRE(target.structures.size() == 2);
  CHECK(pipelineFusionStrategies().at(8) == "pipeline-line-buffered-pointwise");
  const ExploreTarget::Structure& lineBuffered = target.structures[1];
  CHECK(lineBuffered.family == "pipeline-line-buffered-pointwise");
  CHECK(lineBuffered.fixedParameters ==
        std::map<std::string, int64_t>{{"fusion", 9}, {"vector_width", 16}});
  ExploreTarget rebuilt = pipelineStructureTarget(unsharp, sizes, lineBuffered.fixedParameters);
  CHECK(printDefinition(rebuilt.parametric) == printDefinition(lineBuffered.parametric));
  // Without the width the recorded structure cannot be rebuilt.
  CHECK_THROWS_AS(pipelineStructureTarget(unsharp, sizes, {{"fusion", 9}}), std::invalid_argument);

  // The ring holds 5 rows of (value, pixel) pairs, 2 x 480 floats: past pocl-cpu's 384
  // registers, so it is bounded per work-group, and the strips' heights are sampled.
  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 8, 4);
  int linePoints = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    if (target.structures[structure].family == "pipeline-line-buffered-pointwise") ++linePoints;
  }
  CHECK(linePoints >= 2);

  PipelineTargetOptions noWidth = options;
  noWidth.vectorWidth = 1;  // a GPU profile's preferred float width
  std::vector<std::string> skipped;
  CHECK(pipelineTarget(unsharp, sizes, noWidth, &skipped).structures.size() == 1);  // unfused
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0].rfind("pipeline-line-buffered-pointwise: needs a vector width", 0) == 0);
}

TEST_CASE(
    "blur line-buffered, row-inlined and column-walk: fusion=10, 12 and 14 with the vector width "
    "fixed, their strips sampled") {
  const Definition blur = loadExample("pipelines/blur.weft");
  const ArithBinding sizes = {{"W", 256}, {"H", 256}};
  PipelineTargetOptions options;
  options.vectorWidth = 16;
  std::vector<std::string> skipped;
  ExploreTarget target = pipelineTarget(blur, sizes, options, &skipped);
  // The five structures of the test above, the line-buffered, row-inlined and column-walk
  // ones; unsharp mask's line buffering still does not apply (no pointwise stage).
  REQUIRE(target.structures.size() == 8);
  CHECK(skipped.size() == 7);
  CHECK(pipelineFusionStrategies().at(9) == "pipeline-line-buffered");
  const ExploreTarget::Structure& lineBuffered = target.structures[4];
  CHECK(lineBuffered.family == "pipeline-line-buffered");
  CHECK(lineBuffered.fixedParameters ==
        std::map<std::string, int64_t>{{"fusion", 10}, {"vector_width", 16}});
  ExploreTarget rebuilt = pipelineStructureTarget(blur, sizes, lineBuffered.fixedParameters);
  CHECK(printDefinition(rebuilt.parametric) == printDefinition(lineBuffered.parametric));
  CHECK_THROWS_AS(pipelineStructureTarget(blur, sizes, {{"fusion", 10}}), std::invalid_argument);
  CHECK(pipelineFusionStrategies().at(11) == "pipeline-inlined-rows");
  const ExploreTarget::Structure& inlinedRows = target.structures[6];
  CHECK(inlinedRows.family == "pipeline-inlined-rows");
  CHECK(inlinedRows.fixedParameters ==
        std::map<std::string, int64_t>{{"fusion", 12}, {"vector_width", 16}});
  CHECK(printDefinition(
            pipelineStructureTarget(blur, sizes, inlinedRows.fixedParameters).parametric) ==
        printDefinition(inlinedRows.parametric));
  CHECK(pipelineFusionStrategies().at(13) == "pipeline-column-walk");
  const ExploreTarget::Structure& columnWalk = target.structures[7];
  CHECK(columnWalk.family == "pipeline-column-walk");
  CHECK(columnWalk.fixedParameters ==
        std::map<std::string, int64_t>{{"fusion", 14}, {"vector_width", 16}});
  CHECK(printDefinition(
            pipelineStructureTarget(blur, sizes, columnWalk.fixedParameters).parametric) ==
        printDefinition(columnWalk.parametric));

  // The ring of 3 rows of 256 floats fits pocl-cpu's 384 registers per work-item less the
  // rest only in part; either way the strips' heights are sampled.
  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 20, 4);
  int linePoints = 0, inlinedPoints = 0, columnPoints = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    if (target.structures[structure].family == "pipeline-line-buffered") ++linePoints;
    if (target.structures[structure].family == "pipeline-inlined-rows") ++inlinedPoints;
    if (target.structures[structure].family == "pipeline-column-walk") ++columnPoints;
  }
  CHECK(linePoints >= 2);
  CHECK(inlinedPoints >= 2);  // the strip heights
  CHECK(columnPoints >= 2);
}

TEST_CASE("Canny: the chain and the chain of pairs apply as fusion=4 and 13, rebuilt and sampled") {
  const Definition canny = loadExample("pipelines/canny.weft");
  const ArithBinding sizes = {{"W", 64}, {"H", 48}};
  PipelineTargetOptions options;
  options.strategies = {"pipeline-fused-private-chain", "pipeline-fused-private-chain-pairs"};
  ExploreTarget target = pipelineTarget(canny, sizes, options);
  REQUIRE(target.structures.size() == 3);
  CHECK(pipelineFusionStrategies().at(12) == "pipeline-fused-private-chain-pairs");
  const ExploreTarget::Structure& pairs = target.structures[2];
  CHECK(pairs.family == "pipeline-fused-private-chain-pairs");
  CHECK(pairs.fixedParameters == std::map<std::string, int64_t>{{"fusion", 13}});
  CHECK(printDefinition(pipelineStructureTarget(canny, sizes, pairs.fixedParameters).parametric) ==
        printDefinition(pairs.parametric));
  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 12, 3);
  int pairPoints = 0;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    if (target.structures[structure].family == "pipeline-fused-private-chain-pairs") ++pairPoints;
  }
  CHECK(pairPoints >= 2);
}

TEST_CASE("Harris: the tuple fusions apply as fusion=5 and 7, their tiles sampled and rebuilt") {
  const Definition harris = loadExample("pipelines/harris.weft");
  const ArithBinding sizes = {{"W", 96}, {"H", 64}};
  PipelineTargetOptions options;
  options.strategies = {"pipeline-fused-private-tuples", "pipeline-fused-sliding-window-tuples"};
  ExploreTarget target = pipelineTarget(harris, sizes, options);
  REQUIRE(target.structures.size() == 3);
  CHECK(pipelineFusionStrategies().at(4) == "pipeline-fused-private-tuples");
  CHECK(pipelineFusionStrategies().at(6) == "pipeline-fused-sliding-window-tuples");
  const std::vector<std::pair<std::string, int64_t>> expected = {
      {"pipeline-fused-private-tuples", 5}, {"pipeline-fused-sliding-window-tuples", 7}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const ExploreTarget::Structure& fused = target.structures[i + 1];
    CHECK(fused.family == expected[i].first);
    REQUIRE(fused.fixedParameters.count("fusion"));
    CHECK(fused.fixedParameters.at("fusion") == expected[i].second);
    ExploreTarget rebuilt = pipelineStructureTarget(harris, sizes, fused.fixedParameters);
    CHECK(printDefinition(rebuilt.parametric) == printDefinition(fused.parametric));
  }
  SampledTarget sampled = sampleTarget(target, host::loadProfile("pocl-cpu"), 12, 3);
  std::map<std::string, int> perFamily;
  for (size_t j = 0; j < sampled.points.size(); ++j) {
    const size_t structure = sampled.spaceStructure[sampled.pointSpace[j]];
    ++perFamily[target.structures[structure].family];
  }
  CHECK(perFamily["pipeline-fused-private-tuples"] >= 2);
  CHECK(perFamily["pipeline-fused-sliding-window-tuples"] >= 2);
}

TEST_CASE("a program no fusion applies to keeps its unfused structure only") {
  const Definition dot = loadExample("dot.weft");
  std::vector<std::string> skipped;
  ExploreTarget target = pipelineTarget(dot, {{"N", 1024}}, {}, &skipped);
  REQUIRE(target.structures.size() == 1);
  CHECK(target.structures[0].family == "unfused");
  CHECK(skipped.size() == pipelineFusionStrategies().size());

  PipelineTargetOptions fusedOnly;
  fusedOnly.includeUnfused = false;
  CHECK_THROWS_AS(pipelineTarget(dot, {{"N", 1024}}, fusedOnly), std::invalid_argument);
}

TEST_CASE("unknown strategies and fusion numbers are errors") {
  const Definition blur = loadExample("pipelines/blur.weft");
  PipelineTargetOptions options;
  options.strategies = {"pipeline-fused-nowhere"};
  CHECK_THROWS_AS(pipelineTarget(blur, {{"W", 64}, {"H", 64}}, options), std::invalid_argument);
  CHECK_THROWS_AS(pipelineStructureTarget(blur, {{"W", 64}, {"H", 64}}, {{"fusion", 7}}),
                  std::invalid_argument);
  // No "fusion" key: the program as written.
  ExploreTarget plain = pipelineStructureTarget(blur, {{"W", 64}, {"H", 64}}, {});
  CHECK(printDefinition(plain.parametric) == printDefinition(blur));
}

TEST_CASE("rows the preferred vector width does not divide: padded rows, or a narrower width") {
  const Definition blur = loadExample("pipelines/blur.weft");
  PipelineTargetOptions options;
  options.vectorWidth = 16;
  options.strategies = {"pipeline-line-buffered", "pipeline-inlined-rows", "pipeline-column-walk"};
  // Per vectorised structure: its fusion, width and whether its rows are padded ("16p").
  auto structures = [&](int64_t width) {
    const ArithBinding sizes = {{"W", width}, {"H", 64}};
    ExploreTarget target = pipelineTarget(blur, sizes, options);
    std::vector<std::string> out;
    for (const ExploreTarget::Structure& s : target.structures) {
      auto found = s.fixedParameters.find(kVectorWidthParameter);
      if (found == s.fixedParameters.end()) continue;
      out.push_back(std::to_string(s.fixedParameters.at(kFusionParameter)) + ":" +
                    std::to_string(found->second) +
                    (s.fixedParameters.count(kVectorPadParameter) ? "p" : ""));
      // The recorded parameters rebuild the same structure.
      CHECK(printDefinition(pipelineStructureTarget(blur, sizes, s.fixedParameters).parametric) ==
            printDefinition(s.parametric));
    }
    // Every structure has valid points.
    CHECK(sampleTarget(target, host::loadProfile("pocl-cpu"), 12, 4).emptyStructures.empty());
    return out;
  };
  // 96 = 16 x 6: the preferred width, as before.
  CHECK(structures(96) == std::vector<std::string>{"10:16", "12:16", "14:16"});
  // 200 = 8 x 25: padded float16 rows (the column walk's blocks padded) and float8.
  CHECK(structures(200) ==
        std::vector<std::string>{"10:16p", "10:8", "12:16p", "12:8", "14:16p", "14:8"});
  CHECK(structures(84) ==
        std::vector<std::string>{"10:16p", "10:4", "12:16p", "12:4", "14:16p", "14:4"});
  CHECK(structures(86) ==
        std::vector<std::string>{"10:16p", "10:2", "12:16p", "12:2", "14:16p", "14:2"});
  // A prime width: padded rows only.
  CHECK(structures(89) == std::vector<std::string>{"10:16p", "12:16p", "14:16p"});
}
