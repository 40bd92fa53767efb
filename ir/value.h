// Runtime values of the reference interpreter: scalars, vectors, tuples and arrays.
//
// Values are plain trees that own their elements; simple rather than fast, because the
// interpreter is the oracle for every rewrite rule and generated kernel and must be obviously
// right. Float arithmetic is done in single precision (as OpenCL's float) so that results
// compare closely with generated kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/type.h"

namespace weft {

struct Value {
  enum class Kind { Float, Int, Bool, Vector, Tuple, Array };
  Kind kind = Kind::Int;
  float f = 0.0f;
  int32_t i = 0;
  bool b = false;
  std::vector<Value> elements;  // Vector lanes (scalars), Tuple components, Array elements

  static Value ofFloat(float v);
  static Value ofInt(int32_t v);
  static Value ofBool(bool v);
  static Value vector(std::vector<Value> lanes);
  static Value tuple(std::vector<Value> components);
  static Value array(std::vector<Value> elements);

  bool isArray() const { return kind == Kind::Array; }
  size_t size() const { return elements.size(); }
  const Value& operator[](size_t index) const { return elements.at(index); }

  bool operator==(const Value& other) const;  // exact
  std::string toString() const;               // [1, 2, 3], (1.5, 2), <1, 2, 3, 4>
};

// "float", "int", "bool", "vector", "tuple" or "array", for messages.
const char* kindName(Value::Kind kind);

// Largest absolute difference between two values of the same shape; throws
// std::invalid_argument naming the first path where the shapes differ.
double maxAbsDifference(const Value& a, const Value& b);
// True when both have the same shape and every float differs by at most
// absTolerance + relTolerance * |b|; ints and bools must be equal.
bool approximatelyEqual(const Value& a, const Value& b, double absTolerance = 1e-4,
                        double relTolerance = 1e-4);

// A value of the given type filled from a flat row-major buffer (tuples unsupported);
// `sizes` binds the type's length variables.
Value valueFromFlat(const Type& type, const ArithBinding& sizes, const std::vector<float>& data);
// Flattens nested arrays of scalars (or vectors, lane by lane) row-major into floats.
std::vector<float> flattenToFloats(const Value& value);
// The same for data stored as int32 (int and bool values; bools are 0/1, floats truncate):
// ints beyond 2^24 survive exactly, which they would not through floats.
Value valueFromFlatInts(const Type& type, const ArithBinding& sizes,
                        const std::vector<int32_t>& data);
std::vector<int32_t> flattenToInts(const Value& value);
// The shape of nested arrays: outermost length first (vector lanes are not part of it).
std::vector<int64_t> shapeOf(const Value& value);

}  // namespace weft
