// A switch for tests of symbolic arithmetic (ir/arith_simplify.cpp): where a faster path
// replaced a simpler one that gives the same results, the simpler one is kept as a reference
// and this switch selects it on the calling thread, so that a property test can compare both
// (tests/ir/property_arith.cpp). Today: the refolding of / and % in sums (substituteDiv), which
// skips rebuilding a sum that no division changes. Nothing in the compiler calls it.
#pragma once

namespace weft {

// true: this thread computes through the reference paths; false (the default): the fast ones.
void setArithReferencePaths(bool enabled);

// Empties this thread's memo tables (divisions, proofs and bounds, the refolding's partners),
// so that what a path computes is not an earlier path's result found again.
void clearArithMemos();

}  // namespace weft
