// The floating-point operations one run of a definition performs, counted from its IR and its
// types: what `weft report` divides by a variant's time to give GFLOP/s for a program file (a
// convolution layer counts its own, 2·M·C·K²·outH·outW).
//
// Counted: +, -, *, /, min, max, abs, sqrt and exp on floats (one each, times the width on
// float vectors), fma (two) and dot (2w - 1 for vectors of width w). Not counted: integer and
// boolean arithmetic (index computations), negation, comparisons, select and conversions, and
// everything that only moves data. A map or a reduce over n elements counts its function n
// times (a reduce's initial value once), a mapSeqSlide(n, f, g, xs) g once per element of xs
// and f once per window; a let, a fill and an address-space wrapper count their function once;
// a user function counts its body's operations when it returns a float.
// Lengths come from the types, evaluated with the given sizes.
#pragma once
#include <cstdint>

#include "ir/arith.h"
#include "ir/expr.h"

namespace weft {

// The count for `definition` with every size variable of its types bound in `sizes`; throws
// std::invalid_argument naming what is unbound, or a TypeError for an ill-typed definition.
int64_t countFlops(const Definition& definition, const ArithBinding& sizes);

// The same count, with the values reduction steps read: each step of a reduce over n elements
// reads one element (a scalar or a vector counts one, a tuple its components, an array its
// length times its element's). Their ratio, the floating-point operations per value a
// reduction reads, is a static estimate of arithmetic intensity that rises when a program
// keeps blocks of accumulators in registers or reads vectors (the rewrite search ranks its
// programs by it).
//
// Of those, the reads of reductions whose input is a view holding a transpose: the elements of
// one step come from different rows of memory and successive steps advance by a row (a blocked
// matmul reading its blocks of A's rows, B's columns), where an input re-laid out once
// (hoist-relayout) is read in order. A vector read so counts its lanes (it gathers them from as
// many rows). A transpose of overlapping windows (slide) is not counted: the windows a step
// reads are close together (a convolution's neighbouring windows); nor is a block of whole
// columns transposed back (split(n, transpose(x)) read as the block's rows).
//
// And the accumulator values reductions read and write each step when they update an array of
// accumulators in a loop (map or mapSeq over it): such an array lives in memory, where an
// unrolled update (mapSeqUnroll) keeps each accumulator in a register.
//
// And the values top-level copies store (a let whose value is a copy nest: hoist-relayout's
// re-layouts, materialized stages), each read once and written once.
struct OperationCounts {
  int64_t flops = 0;
  double reductionReads = 0;
  double transposedReductionReads = 0;
  double loopedAccumulatorValues = 0;
  double copiedValues = 0;
  double intensity() const;  // flops / reductionReads, 0 without reductions
};
OperationCounts countOperations(const Definition& definition, const ArithBinding& sizes);

}  // namespace weft
