// OpenCL code generation for low-level weft programs.
//
// The input is a definition whose maps are all mapped onto the OpenCL thread hierarchy or made
// sequential (mapGlb, mapWrg, mapLcl, mapSeq(Unroll)) and whose reductions are reduceSeq(Unroll)
// — lowering.h turns any high-level definition into such a program. Generation is
// destination-passing: every computing expression is generated together with the view it must
// write to; layout primitives (split, join, slide, pad, transpose, zip, reorder, asVector,
// asScalar, get) build views and allocate nothing (views.h). Memory is allocated only for what
// computations write: the result (global), accumulators (private), and values that are
// consumed rather than written out — in the address space toGlobal/toLocal/toPrivate names, else
// private when small and of known size, else global. Parallel maps at the top of the
// definition become kernels; computed arguments of a kernel become earlier kernels writing
// temporary buffers (the convolution's pad → partial convolution → reduction → crop).
#pragma once

#include <stdexcept>
#include <string>

#include "codegen/compiled_program.h"
#include "ir/expr.h"

namespace weft {

// A program the generator cannot map (mapLcl outside mapWrg, a barrier that not every
// work-item of a group would reach, a tuple stored in memory, ...). The message names the
// primitive and its source location.
struct CodegenError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CodegenOptions {
  // Size variables substituted by constants before generation (specialisation). Others stay
  // symbolic and become kernel arguments.
  ArithBinding specialize;
  // Private arrays of a known size up to this many scalars are allowed; larger values that
  // need memory go to global memory.
  int64_t maxPrivateScalars = 256;
  // Analysis only (explore/parameter_space.h derives hardware constraints from the parametric
  // program): a private array whose size depends on tuning parameters is declared with its
  // symbolic length, so the source does not compile, and counted in
  // KernelPlan::privateScalarsExpr instead of failing.
  bool symbolicPrivateArrays = false;
  // Analysis only: mapSeqUnroll and reduceSeqUnroll are generated as the loops of mapSeq and
  // reduceSeq (their trip counts may depend on tuning parameters, which an unrolled loop
  // cannot), with the text those would have, their accesses' loops marked AccessLoop::rolled,
  // and not counted in KernelPlan::workItemLoops: what the kernel proper repeats is known.
  bool unrolledAsLoops = false;
  // Vector stores to global memory at offsets that are multiples of their width are
  // non-temporal (clang's __builtin_nontemporal_store, which CPU compilers such as PoCL's turn
  // into streaming stores): a large output written once then bypasses the caches and is not
  // read for ownership first, a third less memory traffic for a stream that reads as much as
  // it writes. Only for devices whose OpenCL compiler accepts the builtin
  // (DeviceProfile::nontemporalStores); the parameter kStreamingStoresParameter of a point.
  bool streamingStores = false;
  // Contiguous vector reads of an input buffer whose length is a multiple of the width, at an
  // offset known modulo the width, read the buffer's aligned vectors (views.cpp's
  // alignedVectorRead): through a pointer to the vector type at an aligned offset, else the
  // two aligned vectors around the read shuffled together, so that a stencil's neighbouring
  // taps share their loads and none crosses a cache line.
  bool alignedVectorReads = false;
};

// The point parameter (0 or 1) that sets streamingStores in compileToOpenCL.
inline constexpr const char* kStreamingStoresParameter = "streaming_stores";
// The point parameter (0 or 1) that sets alignedVectorReads in compileToOpenCL.
inline constexpr const char* kAlignedReadsParameter = "aligned_reads";

// Generates OpenCL C for a low-level definition (type-checks it first).
CompiledProgram generateOpenCL(const Definition& lowLevel, const CodegenOptions& options = {});

}  // namespace weft
