// Kernel splitting: generation at host level. The top of the definition's body is walked; each
// mapGlb/mapWrg found there becomes one kernel writing its destination buffer. Layout
// primitives on the way (join, split, transpose, asVector, asScalar, maps of them) turn the
// destination view instead of allocating anything, and a let binds the view of its value. A
// kernel argument that is itself computed becomes an earlier kernel writing a temporary buffer
// (so pad -> partial convolution -> reduction -> crop is a chain of kernels); a temporary that
// is a transposing layout view of a kernel's result is stored in its own order
// (reorderedKernelResult, layout_views.cpp). A body with no parallel map at its top runs as a
// single work-item kernel.
#include "codegen/generator.h"
#include "codegen/tuple_memory.h"

namespace weft::opencl {

// ---- host level ------------------------------------------------------------------------
// Computes `e` into the global destination `dest` with one or more kernels.
void Generator::genHost(const Expr& e, const ViewPtr& dest) {
  if (e.isPrim()) {
    Op op = e.primOp();
    if (op == Op::MapGlb || op == Op::MapWrg) {
      genKernel(e, dest);
      return;
    }
    if (computes(e)) {
      if (ViewPtr through = inverseLayout(e, dest)) {
        genHost(e.args()[0], through);
        return;
      }
      if (op == Op::Let) {
        const Expr& f = e.funs()[0];
        bind(f.params()[0], genHostView(e.args()[0]));
        genHost(f.body(), dest);
        return;
      }
    }
  }
  // No parallel map at the top: one work-item computes everything.
  genKernel(e, dest);
}

// A new global temporary buffer of `type`; a type holding tuples gets one per component
// (recursively) and the zip of their views.
ViewPtr Generator::temporaryBufferView(const Type& type, const Expr& at) {
  if (holdsTuples(type)) {
    std::vector<ViewPtr> components;
    for (size_t k = 0; k < tupleArity(type); ++k) {
      components.push_back(temporaryBufferView(componentType(type, k), at));
    }
    return zipOfComponents(std::move(components), type);
  }
  BufferPlan buffer;
  buffer.name = fresh("tmp");
  buffer.role = BufferPlan::Role::Temporary;
  buffer.type = type;
  buffer.element = storedScalarKindOrFail(type, at);
  buffer.elementCount = scalarCount(type);
  return bufferView(addBuffer(std::move(buffer)));
}

// The view of a value read by a kernel; computed values become earlier kernels.
ViewPtr Generator::genHostView(const Expr& e) {
  if (!computes(e) || (isLayoutLike(e) && !reorderedKernelResult(e))) {
    return layoutView(e, [this](const Expr& a) { return genHostView(a); });
  }
  // One temporary buffer (tuples: one per component, a structure of arrays).
  ViewPtr view = temporaryBufferView(typeOf(e), e);
  genHost(e, view);
  return view;
}

// ---- kernels -----------------------------------------------------------------------------
void Generator::genKernel(const Expr& e, const ViewPtr& dest) {
  LaunchPlan launch =
      planLaunch(e, [this](const Expr& node) -> const Type& { return typeOf(node); });
  // Inputs of the kernel's outermost map are computed (by earlier kernels) before it.
  ViewPtr outerInput;
  if (e.isPrim() && (e.primOp() == Op::MapGlb || e.primOp() == Op::MapWrg)) {
    outerInput = genHostView(e.args()[0]);
  }
  Emitter saved = std::move(emitter_);
  emitter_ = Emitter{};
  usedBuffers_.clear();
  writtenBuffers_.clear();
  localDeclarations_.clear();
  staticLocalBytes_ = 0;
  localArgs_.clear();
  launch_ = launch;
  loops_.clear();
  kernelName_ =
      "weft_" + cIdentifier(definition_.name) + "_k" + std::to_string(program_.kernels.size());
  if (outerInput) {
    genMap(e, outerInput, dest);
  } else {
    genWrite(e, dest);
  }
  finishKernel();
  emitter_ = std::move(saved);
}

}  // namespace weft::opencl
