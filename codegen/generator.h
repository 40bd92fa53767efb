// The state of one OpenCL generation (codegen/codegen.h's generateOpenCL) and the steps that
// share it. The generator walks a type-checked low-level definition once, destination-passing:
// genWrite(e, dest) emits the statements that compute e into the view dest, genView(e) builds
// the view of a value that is only read (allocating memory only when e computes an array), and
// genScalar(e) returns a C expression for scalar values. Each step is defined in its own file:
//
//   opencl_gen.cpp          the driver: input/output buffers, names, types, the program's text
//   kernel_split.cpp        host level: kernels and the temporary buffers between them
//   launch_plan.h/.cpp      the parallel maps of a kernel and its global/local sizes
//   loops.cpp               loops of maps and reductions (parallel, unrolled, nested per factor)
//   pad_unswitching.cpp     sequential loops, unswitched on the pad guards they read
//   interior_fast_path.cpp  a mapGlb(0) work-item's unclamped copy for work-groups inside
//   border_unswitching.cpp  a sequential loop's unclamped copy for iterations inside
//   layout_views.cpp        views of layout primitives, their inverses, genView
//   memory_spaces.cpp       address-space choice and allocation (private, local, global)
//   barriers.cpp            computed arrays read afterwards, and the barriers they need
//   statements.cpp          genWrite: maps, reductions, applications, assignments, copies
//   scalar_gen.cpp          genScalar: C expressions of scalar and vector values
//   user_functions.cpp      calls of functions and the OpenCL functions of user functions
//   kernel_text.cpp         what a kernel uses (buffers, sizes) and the text of the kernel
//   tuple_memory.h/.cpp     tuples stored as a structure of arrays
//   scalar_promotion.h/.cpp private arrays indexed only by constants become scalars
//
// Only opencl_gen.cpp constructs a Generator; the class is internal to weft_codegen.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/gen_support.h"
#include "codegen/launch_plan.h"
#include "codegen/views.h"
#include "typecheck/typecheck.h"

namespace weft::opencl {

class Generator {
 public:
  Generator(const Definition& definition, const CodegenOptions& options);
  CompiledProgram run();

 private:
  // ---- buffers, names, types (opencl_gen.cpp) --------------------------------------------------
  ScalarKind storedScalarKindOrFail(const Type& type, const Expr& at);
  int addBuffer(BufferPlan buffer);
  ViewPtr bufferView(int buffer);
  std::string fresh(const std::string& stem);
  Arith sizeVar(const std::string& name);
  const Type& typeOf(const Expr& e);

  // ---- host level (kernel_split.cpp) ---------------------------------------------------------
  void genHost(const Expr& e, const ViewPtr& dest);
  ViewPtr temporaryBufferView(const Type& type, const Expr& at);
  ViewPtr genHostView(const Expr& e);
  void genKernel(const Expr& e, const ViewPtr& dest);

  // ---- what a kernel uses, and its text (kernel_text.cpp) --------------------------------------
  void finishKernel();
  void rememberSizeVar(const Arith& v);
  std::string c(const Arith& a);
  void noteView(const ViewPtr& view);
  const std::vector<std::string>& bufferNamesNoting(const ViewPtr& view);
  void noteBuffer(const std::string& name, bool written = false);

  // ---- views (layout_views.cpp) -----------------------------------------------------------------
  void bind(const Expr& param, ViewPtr view);
  ViewPtr lookup(const Expr& param);
  ViewPtr layoutView(const Expr& e, const std::function<ViewPtr(const Expr&)>& viewOf);
  ViewPtr inverseLayout(const Expr& e, const ViewPtr& dest);
  bool invertibleChain(const Expr& body, const Expr& param);
  bool reorderedKernelResult(const Expr& e);
  ViewPtr invertChain(const Expr& body, const Expr& param, const ViewPtr& out);
  ViewPtr genView(const Expr& e);

  // ---- memory (memory_spaces.cpp, barriers.cpp) ------------------------------------------------
  std::optional<AddressSpace> requestedSpace(const Expr& e);
  bool insideKind(Op op) const;
  ViewPtr allocate(const Type& type, AddressSpace space, const Expr& at,
                   const std::string& privateStem = "p");
  ViewPtr allocateOwnedAccumulator(const Type& type, const std::vector<int>& ownerDims,
                                   const Expr& at);
  ViewPtr materialize(const Expr& e);
  void requireUniform(const Expr& at);
  void barrier(AddressSpace space);

  // ---- statements (statements.cpp) --------------------------------------------------------------
  void genTupleWrite(const Expr& e, const ViewPtr& dest);
  void genWrite(const Expr& e, const ViewPtr& dest);
  void bindArguments(const Expr& lambda, const std::vector<Expr>& args);
  void genApplyWrite(const Expr& f, const std::vector<Expr>& args, const ViewPtr& dest,
                     const Expr& at);
  void genApplyViews(const Expr& f, const std::vector<ViewPtr>& args, const ViewPtr& dest,
                     const Expr& at);
  std::string readValue(const ViewPtr& view, const Expr& at);
  void genMap(const Expr& e, const ViewPtr& input, const ViewPtr& dest);
  void genMapSeqSlide(const Expr& e, const ViewPtr& dest);
  void genReduce(const Expr& e, const ViewPtr& dest);
  void assign(const ViewPtr& dest, const std::string& value, const Type& type, const Expr& at);
  // Stores a vector value into the memory vector `target` (vstoreN, or a streaming store).
  void assignResolved(const ResolvedElement& target, const std::string& value, const Type& type);
  void emitStore(const ResolvedElement& target, const std::string& statement);
  void copy(const ViewPtr& source, const ViewPtr& dest, const Type& type, const Expr& at,
            bool fromPrivate = false);
  void copyOwnedLevels(const ViewPtr& source, const ViewPtr& dest, const Type& type,
                       const Expr& at, const std::vector<int>& ownerDims, size_t level);
  std::string read(const ViewPtr& view, const Expr& at, std::vector<int> path = {},
                   std::optional<Arith> lane = std::nullopt);
  // Records a read or write of a global buffer with the loops around it
  // (KernelPlan::globalAccesses), once per place in the program, buffer and offset; a vector
  // gathered lane by lane records what its lanes read.
  void noteGlobalAccess(const ResolvedElement& element, bool written, const Expr& at);
  void noteGlobalAccessAt(const std::string& buffer, const Arith& offset, int vectorWidth,
                          bool written, const Expr& at);

  // ---- loops (loops.cpp, pad_unswitching.cpp, interior_fast_path.cpp, border_unswitching.cpp)
  // ----
  std::vector<Arith> flattenFactors(const Expr& e);
  void loop(Op op, int dim, const Arith& tripCount, const Expr& at,
            const std::function<void(const Arith&)>& body, const std::vector<Arith>& factors = {});
  void nestedLoops(Op op, const std::vector<Arith>& factors, size_t level, const Arith& outer,
                   const Expr& at, const std::function<void(const Arith&)>& body);
  // The loop of `frame` (its index is the loop's own variable, made here).
  void sequentialLoop(const LoopFrame& frame, const std::function<void(const Arith&)>& body);
  void emitGuardOutcomes(const std::string& header, const LoopFrame& frame,
                         const std::function<void(const Arith&)>& body,
                         const std::vector<std::string>& hoisted,
                         const std::vector<std::string>& hoistedKeys, size_t from,
                         PadGuardRecorder& assume);
  void withInteriorFastPath(const std::string& name, const Arith& index,
                            const std::function<void(const Arith&)>& body);
  // Runs `generateCopy` (a second copy of a body already generated: an unswitched or fast
  // path) and restores the private-memory estimates it changed: the copies never live at once.
  // Its global accesses are not listed again (secondCopy).
  void keepingPrivateEstimates(const std::function<void()>& generateCopy);
  // Runs `generateCopy`, a second copy of a body already generated (one of the copies loop
  // unswitching emits), without listing its global accesses: a launch runs one copy or the
  // other, so KernelPlan::globalAccesses lists the first copy's only.
  void secondCopy(const std::function<void()>& generateCopy);
  bool unswitchBorderReads(const std::string& header, const LoopFrame& frame,
                           const std::function<void(const Arith&)>& body,
                           const BorderReadRecorder& recorded, const Emitter& general,
                           bool allocatesShared);

  // ---- scalar expressions (scalar_gen.cpp, user_functions.cpp) ---------------------------------
  std::string literal(const Expr& e);
  std::string genScalar(const Expr& e);
  std::optional<std::string> floatSumWithProduct(const Expr& e, const Type& type);
  // Under vectorize (laneWidth_ > 0), the C type of the lanes of a scalar of `kind`
  // (float -> float4 at width 4).
  std::string laneTypeName(ScalarKind kind) const;
  // Under vectorize, `condition`'s lanes as a select between two lane vectors of `kind`: a
  // vector condition (OpenCL's -1 / 0) chooses per lane, a scalar bool for all of them.
  std::string laneSelect(const std::string& condition, ScalarKind kind, const std::string& whenTrue,
                         const std::string& whenFalse) const;
  void forgetDropped(size_t linesBefore, size_t namedBefore);
  std::string dot(const std::string& a, const std::string& b, const Type& type);
  std::string genCall(const Expr& f, const std::vector<Expr>& args, int64_t vectorWidth,
                      const Expr& at);
  std::string callUserFun(const Expr& f, const std::vector<std::string>& values,
                          int64_t vectorWidth);
  std::string emitUserFun(const Expr& f, int64_t vectorWidth);

  // ---- state -----------------------------------------------------------------------------------
  const Definition& definition_;
  CodegenOptions options_;
  TypedDefinition typed_;
  CompiledProgram program_;
  std::unordered_map<uint64_t, ViewPtr> env_;
  // What view resolution consults and records (the recorders of loop unswitching and the
  // interior fast path, the memo their copies of a body share): passed to every resolveElement.
  ViewContext views_;
  int counter_ = 0;
  std::set<std::string> reservedNames_;
  // Per kernel.
  Emitter emitter_;
  std::set<int> usedBuffers_;
  std::set<int> writtenBuffers_;
  // The private-memory estimate of the kernel being generated (KernelPlan::privateScalars):
  // private arrays, the accumulators of the reductions that are live at once (nested reduces
  // add up), and twice the widest vector a temporary holds.
  int64_t privateArrayScalars_ = 0;
  std::vector<int64_t> privateArraySizes_;  // KernelPlan::privateArrayScalars
  Arith symbolicPrivateScalars_ = Arith(0);  // CodegenOptions::symbolicPrivateArrays
  int64_t liveAccumulatorScalars_ = 0;
  int64_t maxLiveAccumulatorScalars_ = 0;
  int64_t widestVector_ = 0;
  void noteTemporary(const Type& type) {
    if (type.isVector()) widestVector_ = std::max<int64_t>(widestVector_, type.vectorWidth());
  }
  std::vector<PrivateArray> privateArrays_;  // the private arrays the kernel declares
  std::vector<GlobalAccess> globalAccesses_;  // KernelPlan::globalAccesses
  std::set<std::tuple<const ExprNode*, std::string, bool, std::string>> notedAccesses_;
  int secondCopies_ = 0;  // secondCopy calls under way
  // Accumulator params of the reduce steps being generated that an inner reduce may update in
  // place, with the loop depth of the step's body (genReduce).
  std::map<uint64_t, size_t> inPlaceAccumulators_;
  std::vector<std::string> localDeclarations_;
  // Bytes of the current kernel's local arrays declared with a constant size (KernelPlan::
  // staticLocalBytes).
  int64_t staticLocalBytes_ = 0;
  struct LocalArg {
    std::string name;
    Arith bytes;
    std::string element;
  };
  std::vector<LocalArg> localArgs_;
  LaunchPlan launch_;
  std::vector<LoopFrame> loops_;
  int loopsEmitted_ = 0;  // `for` loops emitted so far (loop unswitching: innermost loops only)
  int workItemLoops_ = 0;  // the kernel's KernelPlan::workItemLoops so far
  std::string kernelName_;
  // The arithmetic printed into (or reached by the views of) the kernel being generated, each
  // expression once and constants left out: finishKernel makes the size variables in it int
  // arguments, in the order first mentioned.
  class MentionedAriths {
   public:
    void push_back(const Arith& a) {
      if (a.isConstant() || !seen_.insert(a).second) return;
      list_.push_back(a);
    }
    void clear() {
      list_.clear();
      seen_.clear();
    }
    std::vector<Arith>::const_iterator begin() const { return list_.begin(); }
    std::vector<Arith>::const_iterator end() const { return list_.end(); }

   private:
    std::vector<Arith> list_;
    std::unordered_set<Arith> seen_;
  };
  MentionedAriths mentionedSizes_;
  // noteView's memo: the views noted since the last finishKernel, with their buffers.
  std::unordered_map<ViewPtr, std::vector<std::string>> notedViews_;
  std::vector<Arith> allSizeVars_;
  // Whole program.
  std::vector<std::string> helperFunctions_;
  std::set<std::string> emittedUserFuns_;
  // > 0 while the body of a lambda applied lane-wise by vectorize is generated: its params are
  // vectors of this width, so a user function it calls is called in its vectorised form.
  int64_t laneWidth_ = 0;
  std::vector<std::string> kernelSources_;
};

}  // namespace weft::opencl
