// The rewrite-sequence search keeps meaning: every structure it reaches from the example
// programs (matmul, dot, the 2-D stencil, a matrix-vector product) and from random high-level
// programs, instantiated at points sampled from its parameter space, computes what the original
// computes in the interpreter, on random inputs (within a tolerance: partial reductions
// re-associate float sums). Each sequence replays to a program of the same canonical hash, and
// a structure rebuilt from its record is the same parametric program.
#include <doctest/doctest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "codegen/compile_pipeline.h"
#include "explore/z3_encoding.h"
#include "host/device_profile.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/sequence_search.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"
#include "workloads/pipeline/searched_structures.h"

using namespace weft;
using namespace weft::explore;
using namespace weft::testing;

namespace {

Definition loadExample(const std::string& relative) {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  return parseFile(std::string(root ? root : ".") + "/examples/" + relative).definitions.back();
}

const char* kMatrixVector = R"(
def matvec(A: [[float]K]M, x: [float]K): [float]M =
  join(map(row -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, x)), A))
)";

struct Checked {
  int structures = 0;
  int points = 0;
};

// Every searched structure of `original` at `sizes`, at up to two sampled points, against the
// original in the interpreter.
Checked checkSearchedStructures(const Definition& original, const ArithBinding& sizes,
                                const rewrite::SearchOptions& options, uint64_t seed) {
  Checked checked;
  std::mt19937_64 rng(seed);
  std::vector<Value> inputs;
  RandomValueOptions values;
  values.realFloats = true;
  for (const Expr& param : original.function.params()) {
    inputs.push_back(randomValue(param.paramType(), sizes, rng, values));
  }
  const Value expected = interpret(original, inputs, sizes);
  rewrite::SearchReport report;
  std::vector<ExploreTarget::Structure> structures =
      searchedStructures(original, sizes, options, &report);
  CAPTURE(report.summary());
  CAPTURE(report.firstInfeasible);
  for (const ExploreTarget::Structure& structure : structures) {
    CAPTURE(structure.strategy);
    // The sequence replays to the same structure.
    ExploreTarget::Structure rebuilt = recordedSearchedStructure(
        original, sizes, structure.fixedParameters.at(kRewriteParameter), structure.strategy);
    CHECK(printDefinition(rebuilt.parametric) == printDefinition(structure.parametric));

    ExploreTarget one = programTarget(original, sizes);
    one.parametric = structure.parametric;
    one.switches = structure.switches;
    one.fixedParameters = structure.fixedParameters;
    SampledTarget sampled;
    try {
      sampled = sampleTarget(one, std::nullopt, 2, seed);
    } catch (const UnsatisfiableSpace&) {
      continue;  // no valid point at these sizes
    }
    if (sampled.points.empty()) continue;
    ++checked.structures;
    for (size_t j = 0; j < sampled.points.size(); ++j) {
      const ParameterSpace& space = sampled.spaces.at(sampled.pointSpace.at(j));
      ArithBinding point;
      for (size_t k = 0; k < space.parameters.size(); ++k) {
        point[space.parameters[k].name] = sampled.points[j][k];
      }
      CAPTURE(point);
      Definition instance = instantiate(structure.parametric, point);
      Value actual = interpret(instance, inputs, sizes);
      if (!approximatelyEqual(actual, expected, 1e-3, 1e-3)) {
        FAIL_CHECK("results differ\n" << printDefinition(instance) << "\nexpected "
                                      << expected.toString() << "\nfound    "
                                      << actual.toString());
      }
      ++checked.points;
    }
  }
  return checked;
}

}  // namespace

TEST_CASE("every structure the search reaches from the examples computes the same result") {
  rewrite::SearchOptions options = explorationSearchOptions(nullptr);
  options.maxAlgorithmic = 16;
  options.maxLoweringsPerProgram = 3;
  struct Case {
    Definition definition;
    ArithBinding sizes;
  };
  const std::vector<Case> cases = {
      {loadExample("matmul.weft"), {{"M", 8}, {"N", 12}, {"K", 16}}},
      {loadExample("dot.weft"), {{"N", 64}}},
      {loadExample("stencil2d.weft"), {{"W", 12}, {"H", 10}}},
      {parseProgram(kMatrixVector, "matvec.weft").definitions.back(), {{"M", 8}, {"K", 32}}},
  };
  int structures = 0, points = 0;
  for (const Case& c : cases) {
    CAPTURE(c.definition.name);
    Checked checked = checkSearchedStructures(c.definition, c.sizes, options, 11);
    MESSAGE(c.definition.name << ": " << checked.structures << " structures, " << checked.points
                              << " points checked");
    CHECK(checked.structures >= 5);
    structures += checked.structures;
    points += checked.points;
  }
  CHECK(points >= 2 * structures - structures / 2);
}

TEST_CASE("every structure the search reaches from random programs computes the same result") {
  rewrite::SearchOptions options = explorationSearchOptions(nullptr);
  options.algorithmicDepth = 2;
  options.maxAlgorithmic = 8;
  options.maxLoweringsPerProgram = 2;
  int programs = 0, structures = 0;
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    RandomProgramOptions generation;
    generation.lowLevel = false;
    const RandomProgram p = RandomProgramGenerator(seed, generation).program();
    CAPTURE(seed);
    CAPTURE(printDefinition(p.definition));
    std::mt19937_64 rng(seed);
    ArithBinding sizes;
    for (const std::string& name : p.sizes) {
      sizes[name] = std::uniform_int_distribution<int>(1, 8)(rng);
    }
    try {
      typecheck(p.definition);
      RandomValueOptions values;
      std::vector<Value> inputs;
      for (const Type& t : p.inputTypes) inputs.push_back(randomValue(t, sizes, rng, values));
      interpret(p.definition, inputs, sizes);
    } catch (const std::exception&) {
      continue;  // not a program at these sizes: other tests cover the rejections
    }
    Checked checked = checkSearchedStructures(p.definition, sizes, options, seed);
    ++programs;
    structures += checked.structures;
  }
  MESSAGE(programs << " random programs, " << structures << " searched structures checked");
  CHECK(programs >= 50);
  CHECK(structures >= 300);
}
