// Harris (examples/pipelines/harris.weft) through the tuple-stencil rules of
// rewrite/rules_stencil_tuples.cpp: once the single-use stage lets are inlined (let-inline), the
// response's zip of the three box-sum stages over Ixx, Ixy and Iyy is one stencil over the
// windows of zip2D(Ixx, Ixy, Iyy) (zip-stencil-fusion) that computes the three sums and the
// response per pixel. The rewritten program must equal the unfused one in the interpreter on small
// random images (odd and degenerate sizes, borders included; the same float operations in the same
// order, so exactly), and have two pad2D fewer than before (the three box sums pad and read one
// array of triples). This is the first step of pipeline-fused-private-tuples, Harris as one
// overlapped-tiling kernel (issue 9; test_harris_fused_tuples.cpp).
#include <doctest/doctest.h>

#include <string>

#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/library.h"
#include "rewrite/strategy.h"
#include "tests/support/pipeline_programs.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using namespace weft::testing::pipelines;

TEST_CASE("zip-stencil-fusion joins Harris's three box sums and keeps its result") {
  const Definition harris = loadPipeline("harris");
  RewriteContext context;
  StrategyResult inlined =
      normalize({testing::ruleNamed("let-inline")}, 100)(harris, context);
  REQUIRE_MESSAGE(inlined.success(), inlined.failure);
  const Rule& zipFusion = testing::ruleNamedOrAdded("zip-stencil-fusion", addStencilTupleRules);
  StrategyResult fused = topDown(zipFusion)(*inlined.definition, context);
  REQUIRE_MESSAGE(fused.success(), fused.failure);
  const Definition& result = *fused.definition;
  typecheck(result);
  // Five padded stencils before (Ix, Iy, three sums), three after: each pad2D expands into
  // two pads.
  const int padsBefore = countPrims(inlined.definition->function.body(), Op::Pad);
  const int padsAfter = countPrims(result.function.body(), Op::Pad);
  CHECK(padsAfter == padsBefore - 4);
  for (auto [width, height, seed] : {std::tuple{7, 5, 1u}, std::tuple{1, 1, 2u},
                                     std::tuple{4, 9, 3u}, std::tuple{16, 12, 4u}}) {
    const Image image = randomImage(width, height, 1, seed);
    const Value expected = interpretOnImage(harris, image);
    const Value actual = interpretOnImage(result, image);
    CHECK_MESSAGE(expected == actual, "W=" << width << " H=" << height << "\n"
                                           << printDefinition(result));
  }
}
