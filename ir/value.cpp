// Runtime values of the reference interpreter (see ir/value.h): constructors, exact and
// approximate comparison, printing, and conversion between values and flat row-major buffers.
//
// Comparisons walk two values in lockstep and name the first path where they differ
// ("[2][1]._0"), so a failing rewrite-rule or kernel test points at the element that broke.
#include "ir/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace weft {

Value Value::ofFloat(float v) {
  Value value;
  value.kind = Kind::Float;
  value.f = v;
  return value;
}

Value Value::ofInt(int32_t v) {
  Value value;
  value.kind = Kind::Int;
  value.i = v;
  return value;
}

Value Value::ofBool(bool v) {
  Value value;
  value.kind = Kind::Bool;
  value.b = v;
  return value;
}

Value Value::vector(std::vector<Value> lanes) {
  for (const Value& lane : lanes) {
    if (lane.kind != Kind::Float && lane.kind != Kind::Int && lane.kind != Kind::Bool) {
      throw std::invalid_argument("Value::vector: every lane must be a scalar, found " +
                                  lane.toString());
    }
    if (lane.kind != lanes.front().kind) {
      throw std::invalid_argument("Value::vector: lanes of different scalar kinds");
    }
  }
  Value value;
  value.kind = Kind::Vector;
  value.elements = std::move(lanes);
  return value;
}

Value Value::tuple(std::vector<Value> components) {
  Value value;
  value.kind = Kind::Tuple;
  value.elements = std::move(components);
  return value;
}

Value Value::array(std::vector<Value> elements) {
  Value value;
  value.kind = Kind::Array;
  value.elements = std::move(elements);
  return value;
}

namespace {

// Two floats are the same value when they compare equal or are both NaN (a NaN produced the
// same way on both sides is not a difference between two programs).
bool sameFloat(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

std::string floatToString(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string text(buffer, error == std::errc() ? end : buffer);
  // Keep floats recognisable next to ints: 2 -> 2.0, but 1e+20 and 0.5 stay as they are.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

// Appends one step to a path: "[3]" for arrays, "<3>" for lanes, "._3" for tuples.
std::string childPath(const std::string& path, Value::Kind kind, size_t index) {
  std::string step = std::to_string(index);
  switch (kind) {
    case Value::Kind::Tuple:
      return path + "._" + step;
    case Value::Kind::Vector:
      return path + "<" + step + ">";
    default:
      return path + "[" + step + "]";
  }
}

std::string describePath(const std::string& path) { return path.empty() ? "the top" : path; }

// Checks that both values have the same kind and length at `path`; throws otherwise.
void requireSameShape(const Value& a, const Value& b, const std::string& path) {
  if (a.kind != b.kind) {
    throw std::invalid_argument(std::string("values differ in kind at ") + describePath(path) +
                                ": " + kindName(a.kind) + " vs " + kindName(b.kind));
  }
  if (a.elements.size() != b.elements.size()) {
    throw std::invalid_argument(std::string("values differ in length at ") + describePath(path) +
                                ": " + std::to_string(a.elements.size()) + " vs " +
                                std::to_string(b.elements.size()));
  }
}

double maxAbsDifferenceAt(const Value& a, const Value& b, const std::string& path) {
  requireSameShape(a, b, path);
  switch (a.kind) {
    case Value::Kind::Float:
      if (sameFloat(a.f, b.f)) return 0.0;
      if (std::isnan(a.f) || std::isnan(b.f) || std::isinf(a.f) || std::isinf(b.f)) {
        return std::numeric_limits<double>::infinity();
      }
      return std::fabs(static_cast<double>(a.f) - static_cast<double>(b.f));
    case Value::Kind::Int:
      return std::fabs(static_cast<double>(a.i) - static_cast<double>(b.i));
    case Value::Kind::Bool:
      return a.b == b.b ? 0.0 : 1.0;
    case Value::Kind::Vector:
    case Value::Kind::Tuple:
    case Value::Kind::Array: {
      double largest = 0.0;
      for (size_t index = 0; index < a.elements.size(); ++index) {
        largest = std::max(largest, maxAbsDifferenceAt(a.elements[index], b.elements[index],
                                                       childPath(path, a.kind, index)));
      }
      return largest;
    }
  }
  return 0.0;
}

bool approximatelyEqualAt(const Value& a, const Value& b, double absTolerance,
                          double relTolerance) {
  if (a.kind != b.kind || a.elements.size() != b.elements.size()) return false;
  switch (a.kind) {
    case Value::Kind::Float: {
      if (sameFloat(a.f, b.f)) return true;
      if (!std::isfinite(a.f) || !std::isfinite(b.f)) return false;
      double difference = std::fabs(static_cast<double>(a.f) - static_cast<double>(b.f));
      return difference <= absTolerance + relTolerance * std::fabs(static_cast<double>(b.f));
    }
    case Value::Kind::Int:
      return a.i == b.i;
    case Value::Kind::Bool:
      return a.b == b.b;
    case Value::Kind::Vector:
    case Value::Kind::Tuple:
    case Value::Kind::Array:
      for (size_t index = 0; index < a.elements.size(); ++index) {
        if (!approximatelyEqualAt(a.elements[index], b.elements[index], absTolerance,
                                  relTolerance)) {
          return false;
        }
      }
      return true;
  }
  return false;
}

// A scalar of `kind` from one stored datum (a float, or an int32 for int and bool data).
template <class Datum>
Value scalarFromDatum(ScalarKind kind, Datum datum) {
  switch (kind) {
    case ScalarKind::Float:
      return Value::ofFloat(static_cast<float>(datum));
    case ScalarKind::Int:
      return Value::ofInt(static_cast<int32_t>(datum));
    case ScalarKind::Bool:
      return Value::ofBool(datum != Datum(0));
  }
  return Value::ofFloat(static_cast<float>(datum));
}

// Builds a value of `type` from data[next...], advancing `next`.
template <class Datum>
Value fromFlat(const Type& type, const ArithBinding& sizes, const std::vector<Datum>& data,
               size_t& next) {
  switch (type.kind()) {
    case TypeKind::Scalar:
      if (next >= data.size()) throw std::invalid_argument("valueFromFlat: too few data");
      return scalarFromDatum(type.scalarKind(), data[next++]);
    case TypeKind::Vector: {
      std::vector<Value> lanes;
      for (int64_t lane = 0; lane < type.vectorWidth(); ++lane) {
        if (next >= data.size()) throw std::invalid_argument("valueFromFlat: too few data");
        lanes.push_back(scalarFromDatum(type.scalarKind(), data[next++]));
      }
      return Value::vector(std::move(lanes));
    }
    case TypeKind::Tuple:
      throw std::invalid_argument("valueFromFlat: tuple types are not supported (" +
                                  type.toString() + ")");
    case TypeKind::Array: {
      int64_t length = 0;
      try {
        length = evaluate(type.arrayLength(), sizes);
      } catch (const ArithError& error) {
        throw std::invalid_argument("valueFromFlat: length of " + type.toString() + ": " +
                                    error.what());
      }
      if (length < 0) {
        throw std::invalid_argument("valueFromFlat: negative length " + std::to_string(length) +
                                    " for " + type.toString());
      }
      std::vector<Value> elements;
      elements.reserve(static_cast<size_t>(length));
      for (int64_t index = 0; index < length; ++index) {
        elements.push_back(fromFlat(type.arrayElement(), sizes, data, next));
      }
      return Value::array(std::move(elements));
    }
  }
  throw std::invalid_argument("valueFromFlat: unknown type kind");
}

template <class Datum>
Value valueFromFlatData(const Type& type, const ArithBinding& sizes,
                        const std::vector<Datum>& data) {
  size_t next = 0;
  Value value = fromFlat(type, sizes, data, next);
  if (next != data.size()) {
    throw std::invalid_argument("valueFromFlat: " + type.toString() + " takes " +
                                std::to_string(next) + " elements, given " +
                                std::to_string(data.size()));
  }
  return value;
}

int32_t scalarToInt(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Float:
      return static_cast<int32_t>(value.f);
    case Value::Kind::Int:
      return value.i;
    case Value::Kind::Bool:
      return value.b ? 1 : 0;
    default:
      throw std::invalid_argument("not a scalar");
  }
}

void flattenIntsInto(const Value& value, std::vector<int32_t>& out) {
  switch (value.kind) {
    case Value::Kind::Float:
    case Value::Kind::Int:
    case Value::Kind::Bool:
      out.push_back(scalarToInt(value));
      return;
    case Value::Kind::Vector:
    case Value::Kind::Array:
      for (const Value& element : value.elements) flattenIntsInto(element, out);
      return;
    case Value::Kind::Tuple:
      throw std::invalid_argument("flattenToInts: tuples cannot be flattened: " + value.toString());
  }
}

float scalarToFloat(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Float:
      return value.f;
    case Value::Kind::Int:
      return static_cast<float>(value.i);
    case Value::Kind::Bool:
      return value.b ? 1.0f : 0.0f;
    default:
      throw std::invalid_argument("not a scalar");
  }
}

void flattenInto(const Value& value, std::vector<float>& out) {
  switch (value.kind) {
    case Value::Kind::Float:
    case Value::Kind::Int:
    case Value::Kind::Bool:
      out.push_back(scalarToFloat(value));
      return;
    case Value::Kind::Vector:
    case Value::Kind::Array:
      for (const Value& element : value.elements) flattenInto(element, out);
      return;
    case Value::Kind::Tuple:
      throw std::invalid_argument("flattenToFloats: tuples cannot be flattened: " +
                                  value.toString());
  }
}

}  // namespace

const char* kindName(Value::Kind kind) {
  switch (kind) {
    case Value::Kind::Float:
      return "float";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Vector:
      return "vector";
    case Value::Kind::Tuple:
      return "tuple";
    case Value::Kind::Array:
      return "array";
  }
  return "?";
}

bool Value::operator==(const Value& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::Float:
      return sameFloat(f, other.f);
    case Kind::Int:
      return i == other.i;
    case Kind::Bool:
      return b == other.b;
    case Kind::Vector:
    case Kind::Tuple:
    case Kind::Array:
      return elements == other.elements;
  }
  return false;
}

std::string Value::toString() const {
  switch (kind) {
    case Kind::Float:
      return floatToString(f);
    case Kind::Int:
      return std::to_string(i);
    case Kind::Bool:
      return b ? "true" : "false";
    case Kind::Vector:
    case Kind::Tuple:
    case Kind::Array: {
      const char* open = kind == Kind::Vector ? "<" : kind == Kind::Tuple ? "(" : "[";
      const char* close = kind == Kind::Vector ? ">" : kind == Kind::Tuple ? ")" : "]";
      std::string text = open;
      for (size_t index = 0; index < elements.size(); ++index) {
        if (index > 0) text += ", ";
        text += elements[index].toString();
      }
      return text + close;
    }
  }
  return "?";
}

double maxAbsDifference(const Value& a, const Value& b) { return maxAbsDifferenceAt(a, b, ""); }

bool approximatelyEqual(const Value& a, const Value& b, double absTolerance, double relTolerance) {
  return approximatelyEqualAt(a, b, absTolerance, relTolerance);
}

Value valueFromFlat(const Type& type, const ArithBinding& sizes, const std::vector<float>& data) {
  return valueFromFlatData(type, sizes, data);
}

Value valueFromFlatInts(const Type& type, const ArithBinding& sizes,
                        const std::vector<int32_t>& data) {
  return valueFromFlatData(type, sizes, data);
}

std::vector<float> flattenToFloats(const Value& value) {
  std::vector<float> out;
  flattenInto(value, out);
  return out;
}

std::vector<int32_t> flattenToInts(const Value& value) {
  std::vector<int32_t> out;
  flattenIntsInto(value, out);
  return out;
}

std::vector<int64_t> shapeOf(const Value& value) {
  std::vector<int64_t> shape;
  const Value* level = &value;
  while (level->kind == Value::Kind::Array) {
    shape.push_back(static_cast<int64_t>(level->elements.size()));
    if (level->elements.empty()) break;
    level = &level->elements.front();
  }
  return shape;
}

}  // namespace weft
