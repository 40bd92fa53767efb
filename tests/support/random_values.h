// Random input values of a given weft type, for tests that run a program on random inputs
// (lowering against the original, generated OpenCL kernels against the interpreter).
//
// Header-only (tests/support has no library). Floats are multiples of 1/8 in [-2, 2] by
// default, exactly representable so that small sums do not depend on the order of additions;
// `realFloats` draws uniformly from [-1, 1) instead. Ints are in [-5, 5], bools fair coins.
// Lengths are evaluated with the binding; tuples become tuples of random components.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/type.h"
#include "ir/value.h"

namespace weft::testing {

struct RandomValueOptions {
  bool realFloats = false;
};

inline Value randomValue(const Type& type, const ArithBinding& sizes, std::mt19937_64& rng,
                         RandomValueOptions options = {}) {
  auto scalar = [&](ScalarKind kind) {
    switch (kind) {
      case ScalarKind::Float:
        if (options.realFloats) {
          return Value::ofFloat(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
        }
        return Value::ofFloat(static_cast<float>(std::uniform_int_distribution<int>(-16, 16)(rng)) /
                              8.0f);
      case ScalarKind::Int:
        return Value::ofInt(std::uniform_int_distribution<int>(-5, 5)(rng));
      case ScalarKind::Bool:
        return Value::ofBool(std::bernoulli_distribution(0.5)(rng));
    }
    return Value::ofInt(0);
  };
  switch (type.kind()) {
    case TypeKind::Scalar:
      return scalar(type.scalarKind());
    case TypeKind::Vector: {
      std::vector<Value> lanes;
      for (int64_t lane = 0; lane < type.vectorWidth(); ++lane) {
        lanes.push_back(scalar(type.scalarKind()));
      }
      return Value::vector(std::move(lanes));
    }
    case TypeKind::Tuple: {
      std::vector<Value> components;
      for (const Type& element : type.tupleElements()) {
        components.push_back(randomValue(element, sizes, rng, options));
      }
      return Value::tuple(std::move(components));
    }
    case TypeKind::Array: {
      int64_t length = evaluate(type.arrayLength(), sizes);
      if (length < 0) throw std::invalid_argument("randomValue: negative length");
      std::vector<Value> elements;
      for (int64_t index = 0; index < length; ++index) {
        elements.push_back(randomValue(type.arrayElement(), sizes, rng, options));
      }
      return Value::array(std::move(elements));
    }
  }
  throw std::invalid_argument("randomValue: unknown type kind");
}

// The largest |a - b| over the largest |b| (at least 1), for results compared within a
// tolerance relative to the output's magnitude (re-associated float sums): the explorer's own
// criterion (explore::compareOutputs), for test folders that do not link the explorer. A NaN
// difference counts as infinite, so that no tolerance passes it.
inline double errorOverLargest(const Value& a, const Value& b) {
  const std::vector<float> x = flattenToFloats(a), y = flattenToFloats(b);
  if (x.size() != y.size()) {
    throw std::invalid_argument("errorOverLargest: " + std::to_string(x.size()) + " and " +
                                std::to_string(y.size()) + " values");
  }
  double error = 0, scale = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    const double difference = std::abs(static_cast<double>(x[i]) - y[i]);
    error = std::isnan(difference) ? INFINITY : std::max(error, difference);
    scale = std::max(scale, std::abs(static_cast<double>(y[i])));
  }
  return error / scale;
}

}  // namespace weft::testing
