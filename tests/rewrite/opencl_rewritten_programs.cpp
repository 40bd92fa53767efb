// Rewritten programs on OpenCL: programs transformed by sequences of library rules (tiling,
// lowering, to-local / to-private / to-global placements) and by the stencil-tiled-local
// strategy are compiled by codegen/codegen.h with concrete sizes, run on the default OpenCL
// device (PoCL) through host/program_runner.h, and compared with the interpreter on the
// original program within 1e-4 absolute + 1e-4 relative. Label opencl.
#include <doctest/doctest.h>

#include <random>

#include "codegen/codegen.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/strategies.h"
#include "tests/support/random_values.h"

using namespace weft;
using namespace weft::rewrite;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

void runAndCompare(const Definition& original, const Definition& lowered,
                   const ArithBinding& given) {
  CAPTURE(printDefinition(lowered));
  std::mt19937_64 rng(5);
  std::vector<Value> inputs;
  for (const Expr& p : original.function.params()) {
    inputs.push_back(testing::randomValue(p.paramType(), given, rng, {true}));
  }
  const ArithBinding sizes = bindSizes(original, inputs, given);
  const Value expected = interpret(original, inputs, sizes);
  CodegenOptions options;
  options.specialize = sizes;
  const CompiledProgram program = generateOpenCL(lowered, options);
  CAPTURE(program.source);
  host::RunResult run = host::runProgram(context(), program, inputs, sizes);
  CHECK_MESSAGE(approximatelyEqual(run.output, expected, 1e-4, 1e-4),
                "max difference " << maxAbsDifference(run.output, expected));
}

Definition applySteps(Definition d, const std::vector<std::pair<std::string, RuleArguments>>& steps,
                      const std::vector<std::string>& positions) {
  RewriteContext context;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::optional<Definition> next = applyAt(d, *findRule(steps[i].first),
                                             parsePosition(positions[i]), steps[i].second, context);
    REQUIRE_MESSAGE(next.has_value(), steps[i].first << "@" << positions[i] << " in\n"
                                                     << printDefinition(d));
    d = *next;
  }
  return d;
}

}  // namespace

TEST_CASE("stencil-tiled-local on stencil2d runs on OpenCL like the interpreter") {
  const Definition original = parseFile("examples/stencil2d.weft").definitions.back();
  RewriteContext rewriteContext;
  StrategyResult result =
      findStrategy("stencil-tiled-local")
          ->make({{"theta1", Arith(6)}, {"theta2", Arith(6)}})(original, rewriteContext);
  REQUIRE_MESSAGE(result.success(), result.failure);
  // The stencil is computed inside the tiles, each tile staged in local memory: one kernel.
  runAndCompare(original, *result.definition, {{"H", 8}, {"W", 8}});
}

TEST_CASE("split-join, mapWrg/mapLcl, to-local and to-private on a map") {
  // f(xs) = map(x -> x * 2 + 1, xs), tiled into work-groups of 4 staged in local memory.
  const Definition original =
      parseProgram("def f(xs: [float]N): [float]N = map(x -> x * 2.0f + 1.0f, xs)")
          .definitions.back();
  Definition d = applySteps(original,
                            {{"split-join", {{"n", Arith(4)}}},
                             {"map-to-mapwrg", {{"dim", Arith(0)}}},
                             {"map-to-maplcl", {{"dim", Arith(0)}}},
                             {"to-local", {}},
                             {"to-global", {}}},
                            {"root", "0", "0.0.0", "0.0.0.1", "0"});
  runAndCompare(original, d, {{"N", 16}});
}
