// Reading and writing NumPy .npy files, the array format of weft's command
// line (`weft run --in a.npy --out y.npy`) and of test fixtures. weft computes
// on float32 and int32 only, so an array is held as one of those two: on read,
// '<f4' and '<i4' load as they are, '<f8' is narrowed to float32, '<i8' to
// int32 (out-of-range values are an error) and '|b1' becomes int32 0/1.
// Format versions 1.0, 2.0 (and 3.0) are read; 1.0 is written. Fortran order,
// big-endian data and other dtypes are rejected. Every error is an NpyError
// whose message starts with the file's path.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft {

enum class NpyDType { Float32, Int32 };

// A C-order (row-major) array. Exactly one of f32/i32 holds the elements,
// the one matching dtype; the other is empty. A 0-d array has an empty shape
// and one element.
struct NpyArray {
  NpyDType dtype = NpyDType::Float32;
  std::vector<int64_t> shape;
  std::vector<float> f32;
  std::vector<int32_t> i32;

  // Product of the shape's extents (1 for a 0-d array).
  int64_t elementCount() const;
};

struct NpyError : std::runtime_error {
  using runtime_error::runtime_error;
};

// Throws NpyError("<path>: <message>") on any problem.
NpyArray readNpy(const std::string& path);

// Writes format version 1.0, little-endian '<f4' or '<i4'. Throws NpyError
// when the file cannot be written or the array is inconsistent (element
// vector size does not match the shape, or both vectors are filled).
void writeNpy(const std::string& path, const NpyArray& array);

// A shape as NumPy prints it: "(2, 3)", "(4,)".
std::string shapeToString(const std::vector<int64_t>& shape);

}  // namespace weft
