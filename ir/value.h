// Runtime values of the reference interpreter: scalars, vectors, tuples and arrays.
//
// Values mean plain trees that own their elements: simple, because the interpreter is the
// oracle for every rewrite rule and generated kernel and must be obviously right. Copies share
// their elements' storage until one of them writes to it (copy on write, ValueElements): the
// interpreter reads a parameter or passes an array on by copying a Value, and a deep copy there
// made every read of a matrix inside a map cost the whole matrix. Float arithmetic is done in
// single precision (as OpenCL's float) so that results compare closely with generated kernels.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/type.h"

namespace weft {

struct Value;

// The lanes, components or elements of a Value. Copies share one storage; a non-const access
// (operator[], begin, end, front) first copies the storage when another ValueElements shares
// it, so a write never shows through another Value. A reference or pointer from a non-const
// access stays valid until this ValueElements is copied and written to again.
class ValueElements {
 public:
  ValueElements() = default;
  ValueElements(std::vector<Value> elements);  // NOLINT: a Value's elements are assigned a vector

  size_t size() const;
  bool empty() const { return size() == 0; }
  const Value& operator[](size_t index) const;
  Value& operator[](size_t index);
  const Value* begin() const;
  const Value* end() const;
  Value* begin();
  Value* end();
  const Value& front() const;
  const Value& at(size_t index) const;  // throws std::out_of_range

  bool operator==(const ValueElements& other) const;

 private:
  std::vector<Value>& writable();
  std::shared_ptr<std::vector<Value>> storage_;  // null: no elements
};

struct Value {
  enum class Kind { Float, Int, Bool, Vector, Tuple, Array };
  Kind kind = Kind::Int;
  float f = 0.0f;
  int32_t i = 0;
  bool b = false;
  ValueElements elements;  // Vector lanes (scalars), Tuple components, Array elements

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

inline ValueElements::ValueElements(std::vector<Value> elements)
    : storage_(elements.empty() ? nullptr
                                : std::make_shared<std::vector<Value>>(std::move(elements))) {}

inline size_t ValueElements::size() const { return storage_ ? storage_->size() : 0; }

inline const Value* ValueElements::begin() const {
  return storage_ ? storage_->data() : nullptr;
}

inline Value* ValueElements::begin() { return storage_ ? writable().data() : nullptr; }

inline const Value* ValueElements::end() const { return begin() + size(); }

inline Value* ValueElements::end() { return begin() + size(); }

inline const Value& ValueElements::operator[](size_t index) const { return (*storage_)[index]; }

inline Value& ValueElements::operator[](size_t index) { return writable()[index]; }

inline const Value& ValueElements::front() const { return (*storage_)[0]; }

inline const Value& ValueElements::at(size_t index) const {
  if (index >= size()) {
    throw std::out_of_range("value element " + std::to_string(index) + " of " +
                            std::to_string(size()));
  }
  return (*storage_)[index];
}

inline std::vector<Value>& ValueElements::writable() {
  if (storage_.use_count() > 1) storage_ = std::make_shared<std::vector<Value>>(*storage_);
  return *storage_;
}

inline bool ValueElements::operator==(const ValueElements& other) const {
  if (storage_ == other.storage_) return true;
  if (size() != other.size()) return false;
  for (size_t index = 0; index < size(); ++index) {
    if (!((*this)[index] == other[index])) return false;
  }
  return true;
}

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
