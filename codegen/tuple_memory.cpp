// Tuples in memory (structure of arrays): see tuple_memory.h.
#include "codegen/tuple_memory.h"

namespace weft::opencl {

namespace {

const Type& innermostTuple(const Type& type) {
  return type.isTuple() ? type : innermostTuple(type.arrayElement());
}

}  // namespace

bool holdsTuples(const Type& type) {
  if (type.isTuple()) return true;
  return type.isArray() && holdsTuples(type.arrayElement());
}

size_t tupleArity(const Type& type) { return innermostTuple(type).tupleElements().size(); }

Type componentType(const Type& type, size_t k) {
  if (type.isTuple()) return type.tupleElements().at(k);
  return Type::array(componentType(type.arrayElement(), k), type.arrayLength());
}

Arith storedScalars(const Type& type) {
  if (!holdsTuples(type)) return scalarCount(type);
  Arith sum(0);
  for (size_t k = 0; k < tupleArity(type); ++k) sum = sum + storedScalars(componentType(type, k));
  return sum;
}

ViewPtr zipOfComponents(std::vector<ViewPtr> components, const Type& type) {
  if (type.isTuple() || type.arrayElement().isTuple()) {
    return zipView(std::move(components), type);
  }
  std::vector<Type> rowTypes;
  for (const ViewPtr& c : components) rowTypes.push_back(c->type.arrayElement());
  const size_t arity = components.size();
  const Type rows = Type::array(Type::tuple(rowTypes), type.arrayLength());
  const Type element = type.arrayElement();
  return mapView(zipView(std::move(components), rows), element,
                 [arity, element](const ViewPtr& row) {
                   std::vector<ViewPtr> parts;
                   for (size_t k = 0; k < arity; ++k) {
                     parts.push_back(getView(row, static_cast<int>(k)));
                   }
                   return zipOfComponents(std::move(parts), element);
                 });
}

}  // namespace weft::opencl
