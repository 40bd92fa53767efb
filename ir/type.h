// Types of weft programs: scalars (float, int, bool), vectors of a scalar (widths 2, 3, 4, 8,
// 16), tuples and arrays [T]n whose length n is a symbolic `Arith`. Lengths are what make types
// dependent: split(4) turns [float]n into [[float]4](n/4), and the constraints that such types
// need (4 divides n) are collected by the type checker.
//
// Types are immutable and shared; equality compares lengths as canonical arithmetic, so
// [float](2*n) equals [float](n + n).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/arith.h"

namespace weft {

enum class ScalarKind { Float, Int, Bool };
enum class TypeKind { Scalar, Vector, Tuple, Array };

const char* scalarKindName(ScalarKind kind);  // "float", "int", "bool"
bool isValidVectorWidth(int64_t width);        // 2, 3, 4, 8, 16

struct TypeNode;

class Type {
 public:
  Type() = default;  // the null type; only for "not yet known" slots
  static Type scalar(ScalarKind kind);
  static Type floatType() { return scalar(ScalarKind::Float); }
  static Type intType() { return scalar(ScalarKind::Int); }
  static Type boolType() { return scalar(ScalarKind::Bool); }
  static Type vector(ScalarKind element, int64_t width);  // throws std::invalid_argument
  static Type tuple(std::vector<Type> elements);
  static Type array(Type element, Arith length);

  bool isNull() const { return node_ == nullptr; }
  explicit operator bool() const { return node_ != nullptr; }
  TypeKind kind() const;
  bool isScalar() const { return kind() == TypeKind::Scalar; }
  bool isVector() const { return kind() == TypeKind::Vector; }
  bool isTuple() const { return kind() == TypeKind::Tuple; }
  bool isArray() const { return kind() == TypeKind::Array; }

  ScalarKind scalarKind() const;  // Scalar and Vector: the (element) scalar kind
  int64_t vectorWidth() const;    // Vector only
  const std::vector<Type>& tupleElements() const;  // Tuple only
  const Type& arrayElement() const;                // Array only
  const Arith& arrayLength() const;                // Array only

  bool operator==(const Type& other) const;
  bool operator!=(const Type& other) const { return !(*this == other); }
  size_t hash() const;

  // weft notation: float, float4, (float, int), [[float]4](n/4)
  std::string toString() const;

 private:
  friend struct TypeFactory;
  explicit Type(std::shared_ptr<const TypeNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const TypeNode> node_;
};

// Applies an arithmetic substitution to every length in a type.
Type substitute(const Type& type, const ArithSubstitution& substitution);
// The size variables and tuning parameters mentioned in a type's lengths.
std::vector<Arith> typeVars(const Type& type);
// True when `a` and `b` have the same structure: the same scalar kinds, vector widths, tuple
// arities and array nesting, and no pair of constant lengths that differ. Symbolic lengths
// may differ (the type rules then require them equal). Shared by ir/type_rules.cpp and
// typecheck/.
bool sameShape(const Type& a, const Type& b);

std::ostream& operator<<(std::ostream& os, const Type& type);

}  // namespace weft
