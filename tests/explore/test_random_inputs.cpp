// The explorer's random inputs made flat directly (randomFlatInputs, for inputs too large for
// the interpreter's Values) are the Values' numbers in the Values' order: the same as flattening
// randomInputs' Values, for floats (uniform and small integers), ints, bools, vectors and
// nested arrays under a size binding. A tuple input has no flat form.
#include <doctest/doctest.h>

#include <string>
#include <vector>

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
