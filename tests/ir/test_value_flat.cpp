// Conversions between values and flat buffers (ir/value.h) for int32 data: flattenToInts and
// valueFromFlatInts keep ints exactly (beyond 2^24, where floats would round), store bools as
// 0/1, flatten vectors lane by lane and check the element count against the type.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "ir/parser.h"
#include "ir/value.h"

using namespace weft;

TEST_CASE("int32 flattening is exact and row-major") {
  Value matrix = Value::array({Value::array({Value::ofInt(16777217), Value::ofInt(-2)}),
                               Value::array({Value::ofInt(2147483647), Value::ofInt(0)})});
  CHECK(flattenToInts(matrix) == std::vector<int32_t>{16777217, -2, 2147483647, 0});
  CHECK(valueFromFlatInts(parseType("[[int]2]R"), {{"R", 2}}, flattenToInts(matrix)) == matrix);
  // Through floats the large ints would not survive.
  CHECK(valueFromFlat(parseType("[[int]2]2"), {}, flattenToFloats(matrix)) != matrix);
}

TEST_CASE("bools are 0/1, vectors lane by lane, floats truncate") {
  Value bools = Value::array({Value::ofBool(true), Value::ofBool(false)});
  CHECK(flattenToInts(bools) == std::vector<int32_t>{1, 0});
  CHECK(valueFromFlatInts(parseType("[bool]2"), {}, {7, 0}) == bools);
  Value vectors = Value::array({Value::vector({Value::ofInt(1), Value::ofInt(2)}),
                                Value::vector({Value::ofInt(3), Value::ofInt(4)})});
  CHECK(flattenToInts(vectors) == std::vector<int32_t>{1, 2, 3, 4});
  CHECK(valueFromFlatInts(parseType("[int2]2"), {}, {1, 2, 3, 4}) == vectors);
  CHECK(flattenToInts(Value::array({Value::ofFloat(-2.75f), Value::ofFloat(3.5f)})) ==
        std::vector<int32_t>{-2, 3});
  CHECK(valueFromFlatInts(parseType("[float]2"), {}, {5, -1}) ==
        Value::array({Value::ofFloat(5.0f), Value::ofFloat(-1.0f)}));
}

TEST_CASE("int32 data of the wrong size or for a tuple type is rejected") {
  CHECK_THROWS_WITH_AS(valueFromFlatInts(parseType("[int]3"), {}, {1, 2}),
                       doctest::Contains("too few data"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(valueFromFlatInts(parseType("[int]1"), {}, {1, 2}),
                       doctest::Contains("takes 1 elements, given 2"), std::invalid_argument);
  CHECK_THROWS_AS(valueFromFlatInts(parseType("[(int, int)]1"), {}, {1, 2}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(flattenToInts(Value::tuple({Value::ofInt(1)})),
                       doctest::Contains("tuples cannot be flattened"), std::invalid_argument);
}
