// Tuples in memory, as a structure of arrays: memory of type [..[(A, B)]..] (private, local or
// a global temporary) is one array per component, of the same shape, and its view is the zip of
// the component views (a map of zips for nested arrays). These functions give the component
// types, the scalars stored, and the view over the components.
#pragma once

#include <cstddef>
#include <vector>

#include "codegen/views.h"
#include "ir/arith.h"
#include "ir/type.h"

namespace weft::opencl {

// A tuple, or an array nest whose innermost element is a tuple.
bool holdsTuples(const Type& type);
// The number of components of the innermost tuple of a type that holds tuples.
size_t tupleArity(const Type& type);
// The type with its innermost tuple replaced by the tuple's component k.
Type componentType(const Type& type, size_t k);
// Scalars stored for a value, tuples counted as the sum of their components.
Arith storedScalars(const Type& type);
// The view of `type` over one view per component (each of componentType(type, k)): a zip
// of the components for a tuple or an array of tuples, and for an array of arrays a map over
// the zip of the outer dimension whose elements are zipped again.
ViewPtr zipOfComponents(std::vector<ViewPtr> components, const Type& type);

}  // namespace weft::opencl
