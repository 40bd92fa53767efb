// Values keep the meaning of trees that own their elements although copies share storage
// (ir/value.h, ValueElements): a write through one copy, at any depth, never shows through
// another, reads do not copy, and equality, printing and flattening see the shared elements.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/value.h"

using namespace weft;

namespace {

Value matrix() {
  return Value::array({Value::array({Value::ofFloat(1), Value::ofFloat(2)}),
                       Value::array({Value::ofFloat(3), Value::ofFloat(4)})});
}

}  // namespace

TEST_CASE("a write through one copy does not show through the other, at any depth") {
  const Value original = matrix();
  Value copy = original;
  CHECK(copy == original);
  copy.elements[1].elements[0].f = 30;
  CHECK(original.elements[1].elements[0].f == 3);
  CHECK(copy.elements[1].elements[0].f == 30);
  CHECK(copy.elements[0] == original.elements[0]);
  CHECK(copy != original);

  Value again = copy;
  for (Value& row : again.elements) {
    for (Value& element : row.elements) element.f = -element.f;
  }
  CHECK(flattenToFloats(again) == std::vector<float>{-1, -2, -30, -4});
  CHECK(flattenToFloats(copy) == std::vector<float>{1, 2, 30, 4});
  CHECK(flattenToFloats(original) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("reads through a const value do not copy its storage") {
  Value original = matrix();
  const Value reader = original;
  const Value* before = std::as_const(original).elements.begin();
  CHECK(reader.elements.begin() == before);
  CHECK(&reader.elements[1] == &std::as_const(original).elements[1]);
  // The first write to a shared storage copies it: the reader keeps the old one.
  original.elements[0] = Value::ofInt(7);
  CHECK(std::as_const(original).elements.begin() != before);
  CHECK(reader.elements.begin() == before);
  CHECK(reader.toString() == "[[1.0, 2.0], [3.0, 4.0]]");
  CHECK(original.toString() == "[7, [3.0, 4.0]]");
}

TEST_CASE("empty elements, bounds and equality of shared and separate storage") {
  Value empty = Value::array({});
  CHECK(empty.size() == 0);
  CHECK(empty.elements.empty());
  CHECK(empty.elements.begin() == empty.elements.end());
  CHECK(empty == Value::array({}));
  CHECK(shapeOf(empty) == std::vector<int64_t>{0});
  CHECK_THROWS_AS(empty[0], std::out_of_range);
  CHECK_THROWS_AS(matrix()[2], std::out_of_range);
  // Equal trees in separate storage are equal; NaNs compare equal to NaNs, as before.
  CHECK(matrix() == matrix());
  Value nan = Value::array({Value::ofFloat(std::nanf(""))});
  CHECK(nan == Value::array({Value::ofFloat(std::nanf(""))}));
  CHECK(Value::tuple({Value::ofInt(1), Value::ofInt(2)}) !=
        Value::array({Value::ofInt(1), Value::ofInt(2)}));
}
