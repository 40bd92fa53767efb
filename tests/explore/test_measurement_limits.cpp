// What the explorer does for large programs before any device run: its random inputs made flat
// directly (randomFlatInputs, for inputs too large for the interpreter's Values) are the Values'
// numbers in the Values' order, the same as flattening randomInputs' Values, for floats (uniform
// and small integers), ints, bools, vectors and nested arrays; a tuple input has no flat form.
// And a variant whose buffers do not fit the device (a buffer past the largest allocation, or
// all of them past the memory) is recorded invalid at generation, never allocated. And the
// warm-up run's deadline: the cap until a variant has a time, then k × best + margin plus an
// allowance for the compile at first launch that grows with the variant's build time. And the
// expected output of a program without a reference: the interpreter's on the variant's instance,
// reused for the next variant of the same instance (one that differs only in its launch), run
// again for another.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "explore/explorer.h"
#include "explore/measurement.h"
#include "ir/parser.h"

using namespace weft;
using namespace weft::explore;

namespace {

const Definition& definitionOf(const std::string& text) {
  static std::vector<Program> programs;
  programs.push_back(parseProgram(text));
  return programs.back().definitions.back();
}

}  // namespace

TEST_CASE("flat random inputs are the Values' numbers in their order") {
  const Definition& definition = definitionOf(
      "def f(a: [[float]W]H, b: [int]N, c: [bool]N, d: [float4]N, e: float) = a");
  const ArithBinding sizes{{"W", 5}, {"H", 3}, {"N", 7}};
  for (InputValues values : {InputValues::UniformFloats, InputValues::SmallIntegers}) {
    for (uint64_t seed : {1u, 2u, 99u}) {
      CAPTURE(seed);
      const std::vector<host::FlatInput> direct = randomFlatInputs(definition, sizes, seed, values);
      const std::vector<host::FlatInput> viaValues =
          host::flatInputsOf(randomInputs(definition, sizes, seed, values));
      REQUIRE(direct.size() == 5);
      REQUIRE(viaValues.size() == 5);
      for (size_t i = 0; i < direct.size(); ++i) {
        CAPTURE(i);
        CHECK(direct[i].ints == viaValues[i].ints);
        CHECK(direct[i].floats == viaValues[i].floats);
        CHECK(direct[i].intValues == viaValues[i].intValues);
      }
      CHECK(direct[0].floats.size() == 15);
      CHECK(direct[1].ints);
      CHECK(direct[2].ints);
      CHECK(direct[3].floats.size() == 28);
      CHECK(direct[4].floats.size() == 1);
    }
  }
  const Definition& withTuple = definitionOf("def g(p: [(float, int)]N) = p");
  CHECK_THROWS_AS(randomFlatInputs(withTuple, sizes, 1), std::invalid_argument);
}

TEST_CASE("a variant whose buffers do not fit the device is invalid before it is allocated") {
  const Definition& dot = definitionOf(
      "def dot(a: [float]N, b: [float]N) = reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(a, b))");
  const ArithBinding sizes{{"N", 1000}};
  CompilePipelineOptions compile;
  compile.codegen.specialize = sizes;
  const CompiledProgram program = compileToOpenCL(dot, {}, compile);
  MeasurementOptions options;
  CHECK(deviceMemoryProblem(program, sizes, options).empty());  // limits unknown
  options.maxBufferBytes = 3999;  // each input is 4000 bytes
  CHECK(deviceMemoryProblem(program, sizes, options).find("more than the device's largest buffer") !=
        std::string::npos);
  options.maxBufferBytes = 4000;
  CHECK(deviceMemoryProblem(program, sizes, options).empty());
  options.deviceMemoryBytes = 7999;  // both inputs together are 8000 bytes, with the output more
  CHECK(deviceMemoryProblem(program, sizes, options).find("more than the device's memory") !=
        std::string::npos);

  MeasurementInputs data;
  data.sizes = sizes;
  data.expected = std::vector<float>{0.0f};
  const GeneratedVariant variant = generateVariant(dot, {}, data, options);
  CHECK_FALSE(variant.program);
  CHECK(variant.measurement.status == VariantStatus::Invalid);
  CHECK(variant.measurement.message.find("does not fit the device") != std::string::npos);
  options.deviceMemoryBytes = 0;
  CHECK(generateVariant(dot, {}, data, options).program);
}

TEST_CASE("the warm-up deadline allows for the compile at first launch") {
  ExploreOptions options;
  options.timeoutSeconds = 120;
  options.slowdownCutoff = 10;
  options.marginSeconds = 5;
  options.firstLaunchCompileFactor = 4;
  // No time yet: the cap, whatever the build.
  CHECK(warmUpDeadlineSeconds(options, std::nullopt, 0.0) == doctest::Approx(120));
  CHECK(warmUpDeadlineSeconds(options, std::nullopt, 3.0) == doctest::Approx(120));
  // Best 12.9 ms: 10 x 0.0129 + 5 = 5.129 s for a cached build, 4 x 1.5 s more for a build
  // of 1.5 s (a Winograd kernel's work-group functions compiled at its first launch).
  const uint64_t best = 12'900'000;
  CHECK(warmUpDeadlineSeconds(options, best, 0.0) == doctest::Approx(5.129));
  CHECK(warmUpDeadlineSeconds(options, best, 1.5) == doctest::Approx(11.129));
  CHECK(warmUpDeadlineSeconds(options, best, -1.0) == doctest::Approx(5.129));
  // Never past the cap.
  CHECK(warmUpDeadlineSeconds(options, best, 60.0) == doctest::Approx(120));
  options.firstLaunchCompileFactor = 0;
  CHECK(warmUpDeadlineSeconds(options, best, 1.5) == doctest::Approx(5.129));
}

TEST_CASE("variants of the same instance reuse the interpreter's output") {
  const Definition& scaled = definitionOf(
      "def f[1 <= k <= 8](x: [float]N) = join(map(row -> map(a -> a * 2.0f, row), split(k, x)))");
  MeasurementInputs data;
  data.sizes = {{"N", 8}};
  data.inputs = randomInputs(scaled, data.sizes, 1);
  InterpretedOutput last;
  const GeneratedVariant first =
      generateVariant(scaled, {{"N", 8}, {"k", 2}, {"local_k0_d0", 1}}, data, {}, &last);
  REQUIRE(first.program);
  REQUIRE(first.expected.size() == 8);
  CHECK(last.output == first.expected);
  CHECK(last.program.find("split(2") != std::string::npos);
  // Another launch of the same instance takes the kept output (planted here to tell).
  last.output.assign(8, 42.0f);
  const GeneratedVariant sameInstance =
      generateVariant(scaled, {{"N", 8}, {"k", 2}, {"local_k0_d0", 4}}, data, {}, &last);
  CHECK(sameInstance.expected == std::vector<float>(8, 42.0f));
  // Another instance is interpreted: the input doubled, whatever the kept output.
  const GeneratedVariant other =
      generateVariant(scaled, {{"N", 8}, {"k", 4}, {"local_k0_d0", 4}}, data, {}, &last);
  CHECK(other.expected == first.expected);
  CHECK(last.program.find("split(4") != std::string::npos);
}
