// Conversion between .npy arrays (ir/npy.h) and interpreter values (ir/value.h), for
// `weft run`. An input array must have the nesting of the parameter's type: [[float]W]H takes
// a float32 array of shape (H, W); a vector element type such as float4 adds a trailing
// dimension of 4; a scalar parameter takes a 0-d array. float takes float32, int takes int32
// and bool takes int32 0/1 (NumPy's bool arrays load as int32 0/1). The lengths themselves are
// checked against the type later, by bindSizes, which also binds the size variables.
#pragma once

#include <string>

#include "ir/npy.h"
#include "ir/type.h"
#include "ir/value.h"

namespace weft::cli {

// A value of type `type` from `array`; throws std::runtime_error naming `paramName` when the
// rank, the dtype or a vector width does not fit the type (tuples cannot come from .npy).
Value valueFromNpy(const NpyArray& array, const Type& type, const std::string& paramName);

// An .npy array holding `value`: nested arrays give the shape (outermost first), vector lanes
// a trailing dimension; floats are float32, ints int32 and bools int32 0/1. Throws
// std::runtime_error for tuples and for arrays whose rows differ in length.
NpyArray npyFromValue(const Value& value);

}  // namespace weft::cli
