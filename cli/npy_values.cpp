// Conversion between .npy arrays and interpreter values (see cli/npy_values.h). The type of
// a parameter decides how the flat row-major data is nested; the resulting value's lengths
// are those of the array, to be checked against the type by bindSizes.
#include "cli/npy_values.h"

#include <stdexcept>

namespace weft::cli {

namespace {

const char* dtypeName(NpyDType dtype) { return dtype == NpyDType::Float32 ? "float32" : "int32"; }

// The array levels of a type and what lies beneath them (a scalar, a vector or a tuple).
struct Nesting {
  int arrayLevels = 0;
  Type leaf;
};

Nesting nestingOf(const Type& type) {
  Nesting nesting;
  nesting.leaf = type;
  while (nesting.leaf.isArray()) {
    ++nesting.arrayLevels;
    nesting.leaf = nesting.leaf.arrayElement();
  }
  return nesting;
}

class Reader {
 public:
  Reader(const NpyArray& array, ScalarKind kind) : array_(array), kind_(kind) {}

  Value scalar() {
    size_t index = next_++;
    switch (kind_) {
      case ScalarKind::Float:
        return Value::ofFloat(array_.f32.at(index));
      case ScalarKind::Int:
        return Value::ofInt(array_.i32.at(index));
      case ScalarKind::Bool:
        return Value::ofBool(array_.i32.at(index) != 0);
    }
    return Value::ofFloat(0.0f);
  }

  // Builds the nested arrays of dimensions [dimension, arrayLevels) of the shape.
  Value build(size_t dimension, size_t arrayLevels, const Type& leaf) {
    if (dimension == arrayLevels) {
      if (leaf.isScalar()) return scalar();
      std::vector<Value> lanes;
      for (int64_t lane = 0; lane < leaf.vectorWidth(); ++lane) lanes.push_back(scalar());
      return Value::vector(std::move(lanes));
    }
    std::vector<Value> elements;
    int64_t length = array_.shape[dimension];
    elements.reserve(static_cast<size_t>(length));
    for (int64_t index = 0; index < length; ++index) {
      elements.push_back(build(dimension + 1, arrayLevels, leaf));
    }
    return Value::array(std::move(elements));
  }

 private:
  const NpyArray& array_;
  ScalarKind kind_;
  size_t next_ = 0;
};

}  // namespace

Value valueFromNpy(const NpyArray& array, const Type& type, const std::string& paramName) {
  std::string where = "parameter '" + paramName + "' of type " + type.toString();
  Nesting nesting = nestingOf(type);
  if (nesting.leaf.isTuple()) {
    throw std::runtime_error(where + ": tuple types cannot be read from .npy files");
  }
  size_t expectedRank =
      static_cast<size_t>(nesting.arrayLevels) + (nesting.leaf.isVector() ? 1 : 0);
  if (array.shape.size() != expectedRank) {
    std::string hint = nesting.leaf.isVector()
                           ? " (" + std::to_string(nesting.arrayLevels) +
                                 " array dimension(s) and a trailing dimension of " +
                                 std::to_string(nesting.leaf.vectorWidth()) + " for " +
                                 nesting.leaf.toString() + ")"
                           : std::string();
    std::string expected = expectedRank == 0
                               ? std::string("a single value (a 0-d array)")
                               : "an array with " + std::to_string(expectedRank) + " dimension(s)";
    throw std::runtime_error(where + ": expected " + expected + hint + ", found shape " +
                             shapeToString(array.shape));
  }
  if (nesting.leaf.isVector() && array.shape.back() != nesting.leaf.vectorWidth()) {
    throw std::runtime_error(where + ": the last dimension holds the lanes of " +
                             nesting.leaf.toString() + " and must be " +
                             std::to_string(nesting.leaf.vectorWidth()) + ", found shape " +
                             shapeToString(array.shape));
  }
  ScalarKind kind = nesting.leaf.scalarKind();
  NpyDType expected = kind == ScalarKind::Float ? NpyDType::Float32 : NpyDType::Int32;
  if (array.dtype != expected) {
    std::string hint = kind == ScalarKind::Float ? " (convert with .astype(numpy.float32))"
                                                 : " (convert with .astype(numpy.int32))";
    throw std::runtime_error(where + ": expected " + dtypeName(expected) + " data, found " +
                             dtypeName(array.dtype) + hint);
  }
  size_t available = expected == NpyDType::Float32 ? array.f32.size() : array.i32.size();
  if (static_cast<int64_t>(available) != array.elementCount()) {
    throw std::runtime_error(where + ": the array holds " + std::to_string(available) +
                             " elements but its shape " + shapeToString(array.shape) + " says " +
                             std::to_string(array.elementCount()));
  }
  Reader reader(array, kind);
  return reader.build(0, static_cast<size_t>(nesting.arrayLevels), nesting.leaf);
}

namespace {

void collect(const Value& value, const std::vector<int64_t>& shape, size_t dimension,
             NpyArray& out) {
  bool isScalar = value.kind == Value::Kind::Float || value.kind == Value::Kind::Int ||
                  value.kind == Value::Kind::Bool;
  if (isScalar && dimension != shape.size()) {
    throw std::runtime_error(
        "the result is not rectangular (it mixes scalars and arrays at one "
        "level) and cannot be written as .npy");
  }
  switch (value.kind) {
    case Value::Kind::Float:
      out.f32.push_back(value.f);
      return;
    case Value::Kind::Int:
      out.i32.push_back(value.i);
      return;
    case Value::Kind::Bool:
      out.i32.push_back(value.b ? 1 : 0);
      return;
    case Value::Kind::Tuple:
      throw std::runtime_error("a value containing tuples cannot be written as .npy: " +
                               value.toString().substr(0, 80));
    case Value::Kind::Vector:
    case Value::Kind::Array:
      if (dimension >= shape.size() ||
          static_cast<int64_t>(value.elements.size()) != shape[dimension]) {
        throw std::runtime_error(
            "the result is not rectangular (its rows differ in length) "
            "and cannot be written as .npy");
      }
      for (const Value& element : value.elements) collect(element, shape, dimension + 1, out);
      return;
  }
}

}  // namespace

NpyArray npyFromValue(const Value& value) {
  // The shape from the first element at every level; vector lanes become the last dimension.
  std::vector<int64_t> shape;
  const Value* level = &value;
  while (level->kind == Value::Kind::Array || level->kind == Value::Kind::Vector) {
    shape.push_back(static_cast<int64_t>(level->elements.size()));
    if (level->elements.empty()) break;
    level = &level->elements.front();
  }
  NpyArray array;
  array.shape = shape;
  // The scalar kind decides the dtype; an empty array is written as float32.
  array.dtype = level->kind == Value::Kind::Int || level->kind == Value::Kind::Bool
                    ? NpyDType::Int32
                    : NpyDType::Float32;
  if (level->kind == Value::Kind::Tuple) {
    throw std::runtime_error("a value containing tuples cannot be written as .npy: " +
                             value.toString().substr(0, 80));
  }
  if (array.elementCount() == 0) return array;
  collect(value, shape, 0, array);
  size_t count = array.dtype == NpyDType::Float32 ? array.f32.size() : array.i32.size();
  if (static_cast<int64_t>(count) != array.elementCount() ||
      !array.f32.empty() == !array.i32.empty()) {
    throw std::runtime_error(
        "the result mixes scalar kinds or is not rectangular and cannot be "
        "written as .npy");
  }
  return array;
}

}  // namespace weft::cli
