// Implementation of weft types (ir/type.h): immutable shared nodes with a cached structural
// hash, equality that compares array lengths as canonical arithmetic, and printing in the
// text format's notation.
#include "ir/type.h"

#include <ostream>
#include <algorithm>
#include <set>
#include <stdexcept>

namespace weft {

struct TypeNode {
  TypeKind kind = TypeKind::Scalar;
  ScalarKind scalar = ScalarKind::Float;
  int64_t width = 0;
  std::vector<Type> elements;  // Tuple elements, or the single Array element
  Arith length;
  size_t hash = 0;
};

namespace {

size_t combineHash(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

struct TypeFactory {
  static Type make(TypeNode node) {
    size_t h = std::hash<int>()(static_cast<int>(node.kind));
    h = combineHash(h, static_cast<size_t>(node.scalar));
    h = combineHash(h, static_cast<size_t>(node.width));
    for (const Type& element : node.elements) h = combineHash(h, element.hash());
    if (node.kind == TypeKind::Array) h = combineHash(h, node.length.hash());
    node.hash = h;
    return Type(std::make_shared<const TypeNode>(std::move(node)));
  }
};

const char* scalarKindName(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Float: return "float";
    case ScalarKind::Int: return "int";
    case ScalarKind::Bool: return "bool";
  }
  return "?";
}

bool isValidVectorWidth(int64_t width) {
  return width == 2 || width == 3 || width == 4 || width == 8 || width == 16;
}

Type Type::scalar(ScalarKind kind) {
  TypeNode node;
  node.kind = TypeKind::Scalar;
  node.scalar = kind;
  return TypeFactory::make(std::move(node));
}

Type Type::vector(ScalarKind element, int64_t width) {
  if (!isValidVectorWidth(width)) {
    throw std::invalid_argument("invalid vector width " + std::to_string(width) +
                                " (expected 2, 3, 4, 8 or 16)");
  }
  if (element == ScalarKind::Bool) throw std::invalid_argument("bool vectors are not supported");
  TypeNode node;
  node.kind = TypeKind::Vector;
  node.scalar = element;
  node.width = width;
  return TypeFactory::make(std::move(node));
}

Type Type::tuple(std::vector<Type> elements) {
  if (elements.size() < 2) throw std::invalid_argument("a tuple needs at least two elements");
  for (const Type& element : elements) {
    if (element.isNull()) throw std::invalid_argument("tuple of an unknown type");
  }
  TypeNode node;
  node.kind = TypeKind::Tuple;
  node.elements = std::move(elements);
  return TypeFactory::make(std::move(node));
}

Type Type::array(Type element, Arith length) {
  if (element.isNull()) throw std::invalid_argument("array of an unknown type");
  TypeNode node;
  node.kind = TypeKind::Array;
  node.elements = {std::move(element)};
  node.length = std::move(length);
  return TypeFactory::make(std::move(node));
}

TypeKind Type::kind() const { return node_->kind; }

ScalarKind Type::scalarKind() const {
  if (!isScalar() && !isVector()) throw std::logic_error("scalarKind of " + toString());
  return node_->scalar;
}

int64_t Type::vectorWidth() const {
  if (!isVector()) throw std::logic_error("vectorWidth of " + toString());
  return node_->width;
}

const std::vector<Type>& Type::tupleElements() const {
  if (!isTuple()) throw std::logic_error("tupleElements of " + toString());
  return node_->elements;
}

const Type& Type::arrayElement() const {
  if (!isArray()) throw std::logic_error("arrayElement of " + toString());
  return node_->elements[0];
}

const Arith& Type::arrayLength() const {
  if (!isArray()) throw std::logic_error("arrayLength of " + toString());
  return node_->length;
}

bool Type::operator==(const Type& other) const {
  if (node_ == other.node_) return true;
  if (!node_ || !other.node_) return false;
  const TypeNode& a = *node_;
  const TypeNode& b = *other.node_;
  if (a.hash != b.hash || a.kind != b.kind) return false;
  switch (a.kind) {
    case TypeKind::Scalar: return a.scalar == b.scalar;
    case TypeKind::Vector: return a.scalar == b.scalar && a.width == b.width;
    case TypeKind::Tuple: return a.elements == b.elements;
    case TypeKind::Array: return a.length == b.length && a.elements[0] == b.elements[0];
  }
  return false;
}

size_t Type::hash() const { return node_ ? node_->hash : 0; }

std::string Type::toString() const {
  if (!node_) return "<unknown>";
  switch (node_->kind) {
    case TypeKind::Scalar: return scalarKindName(node_->scalar);
    case TypeKind::Vector:
      return std::string(scalarKindName(node_->scalar)) + std::to_string(node_->width);
    case TypeKind::Tuple: {
      std::string out = "(";
      for (size_t i = 0; i < node_->elements.size(); ++i) {
        if (i > 0) out += ", ";
        out += node_->elements[i].toString();
      }
      return out + ")";
    }
    case TypeKind::Array: {
      const Arith& length = node_->length;
      std::string lengthText = length.toString();
      bool atomic = length.isConstant() ? *length.constant() >= 0 : length.isVar();
      if (!atomic) lengthText = "(" + lengthText + ")";
      return "[" + node_->elements[0].toString() + "]" + lengthText;
    }
  }
  return "?";
}

Type substitute(const Type& type, const ArithSubstitution& substitution) {
  if (type.isNull() || substitution.empty()) return type;
  switch (type.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector: return type;
    case TypeKind::Tuple: {
      std::vector<Type> elements;
      for (const Type& element : type.tupleElements()) {
        elements.push_back(substitute(element, substitution));
      }
      return Type::tuple(std::move(elements));
    }
    case TypeKind::Array:
      return Type::array(substitute(type.arrayElement(), substitution),
                         substitute(type.arrayLength(), substitution));
  }
  return type;
}

namespace {

void collectTypeVars(const Type& type, std::set<std::string>& seen, std::vector<Arith>& out) {
  if (type.isNull()) return;
  if (type.isTuple()) {
    for (const Type& element : type.tupleElements()) collectTypeVars(element, seen, out);
  } else if (type.isArray()) {
    for (const Arith& v : type.arrayLength().vars()) {
      if (seen.insert(v.varName()).second) out.push_back(v);
    }
    collectTypeVars(type.arrayElement(), seen, out);
  }
}

}  // namespace

std::vector<Arith> typeVars(const Type& type) {
  std::set<std::string> seen;
  std::vector<Arith> out;
  collectTypeVars(type, seen, out);
  std::sort(out.begin(), out.end(),
            [](const Arith& a, const Arith& b) { return a.varName() < b.varName(); });
  return out;
}

bool sameShape(const Type& a, const Type& b) {
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
      return a == b;
    case TypeKind::Tuple: {
      const auto& x = a.tupleElements();
      const auto& y = b.tupleElements();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!sameShape(x[i], y[i])) return false;
      }
      return true;
    }
    case TypeKind::Array: {
      const Arith& n = a.arrayLength();
      const Arith& m = b.arrayLength();
      if (n.isConstant() && m.isConstant() && n != m) return false;
      return sameShape(a.arrayElement(), b.arrayElement());
    }
  }
  return false;
}

std::ostream& operator<<(std::ostream& os, const Type& type) { return os << type.toString(); }

}  // namespace weft
