// Computed arrays that are read afterwards, and the barriers they need. materialize allocates
// the memory of a computed array (memory_spaces.cpp), writes it, and when other work-items of
// the group wrote it (a mapLcl inside), adds the barrier that makes it visible, and another
// before it when a loop may overwrite memory other work-items still read. A barrier is placed
// only where every work-item of the group reaches it (not inside a mapLcl); a program that
// would need one elsewhere is rejected.
#include "codegen/generator.h"
#include "codegen/tuple_memory.h"

namespace weft::opencl {

// Allocates memory for a computed array that is read afterwards, computes it there and, if
// other work-items of the group wrote it, adds the barrier that makes it visible.
ViewPtr Generator::materialize(const Expr& e) {
  const Type& type = typeOf(e);
  Arith count = storedScalars(type);
  std::optional<AddressSpace> requested = requestedSpace(e);
  bool smallConstant = count.constant() && *count.constant() <= options_.maxPrivateScalars;
  AddressSpace space =
      requested.value_or(smallConstant ? AddressSpace::Private : AddressSpace::Global);
  bool writtenByGroup = containsOp(e, [](Op op) { return op == Op::MapLcl; });
  if (containsOp(e, [](Op op) { return op == Op::MapGlb || op == Op::MapWrg; })) {
    fail(e,
         "a value computed by mapGlb or mapWrg inside a kernel cannot be read back in the "
         "same kernel; compute it at the top of the definition (its own kernel)");
  }
  if (space == AddressSpace::Private && writtenByGroup) {
    fail(e, "a private array cannot be written by mapLcl (other work-items would write it)");
  }
  ViewPtr view = allocate(type, space, e);
  bool needsBarrier = writtenByGroup && space != AddressSpace::Private;
  if (needsBarrier) requireUniform(e);
  bool inLoop = std::any_of(loops_.begin(), loops_.end(),
                            [](const LoopFrame& f) { return f.repeats && f.op != Op::MapLcl; });
  // Before overwriting memory that other work-items may still read (a previous iteration).
  if (needsBarrier && inLoop) barrier(space);
  genWrite(e, view);
  if (needsBarrier) barrier(space);
  return view;
}

void Generator::requireUniform(const Expr& at) {
  if (insideKind(Op::MapLcl)) {
    fail(at,
         "memory written by mapLcl and read by other work-items needs a barrier, but "
         "here it is written inside another mapLcl, where not every work-item of the "
         "group reaches the barrier");
  }
}

void Generator::barrier(AddressSpace space) {
  emitter_.line(space == AddressSpace::Local ? "barrier(CLK_LOCAL_MEM_FENCE);"
                                             : "barrier(CLK_GLOBAL_MEM_FENCE);");
}

}  // namespace weft::opencl
