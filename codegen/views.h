// Views: the index arithmetic of layout primitives (LIFT's views, paper section 3.3).
//
// A view describes how the elements of an array value are found without storing it: a chain
// of layout steps (split, join, slide, pad, crop, transpose, reorder, zip, get, asVector,
// asScalar, fill, access at an index) ending in memory, a private variable or a scalar C
// expression. Resolving a view with a complete list of indices (outermost first), a tuple
// path and an optional vector lane walks the chain from the consumer towards memory, turning
// indices as each step requires (split: [i, j] -> [i*n + j], join: [i] -> [i/m, i%m], ...),
// and yields a C expression: a read (or an lvalue to write) whose index is a simplified
// `Arith`. The same views serve reads and writes: writing join(x) into D writes x through
// split(D).
//
// Nothing here allocates memory or emits statements; code generation (codegen/generator.h) does
// that.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "ir/arith.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace weft {

struct View;
using ViewPtr = std::shared_ptr<const View>;

struct View {
  enum class Kind {
    Memory,     // an array in memory: `name` is the C pointer/array, `offset` the start (scalars)
    Variable,   // a private scalar or vector variable called `name`
    Scalar,     // an rvalue C expression `name` of a scalar or vector type
    Access,     // element `index` of child 0
    Split,      // [[T]n]m over child [T](n*m); `a` = n
    Join,       // [T](m*n) over child [[T]m]n; `a` = m
    Slide,      // [[T]size]k over child; `a` = size, `b` = step
    Pad,        // [T](l+n+r) over child [T]n; `a` = l, `b` = n; boundary/padValue
    Crop,       // [T](n-l-r) over child; `a` = l
    Uncrop,     // [T](l+n+r) over child [T]n, for writing only: `a` = l, `b` = n; a write at
                // index i goes to child element i - l, and is dropped (a guarded store) when
                // that lies outside [0, n). Writing crop(l, r, x) into D writes x through it.
    Transpose,  // [[T]m]n over child [[T]n]m
    Reorder,    // [T]n over child [T]n; `a` = n; indexFunction, `b` = stride
    Zip,        // [(T1..Tk)]n over children (also a tuple of values with no index)
    Get,        // component `component` of a tuple-valued child
    AsVector,   // [S<v>]n over child [S](n*v); `a` = v
    AsScalar,   // [S](n*v) over child [S<v>]n; `a` = v
    Fill,       // [T]n of copies of child 0
    Elements,   // [T]n whose element i is child i (array(e0, ..., en-1))
    Map,        // [U]n over child [T]n: element i is elementView(child[i]) (a map whose
                // function only rearranges data, e.g. map(transpose))
  };
  Kind kind = Kind::Scalar;
  Type type;  // the type of the value this view stands for
  std::vector<ViewPtr> children;
  Arith a, b;
  Arith index;  // Access
  int component = 0;  // Get
  std::string name;   // Memory, Variable, Scalar
  Arith offset;       // Memory: the start, in scalars
  AddressSpace space = AddressSpace::Global;  // Memory, Variable
  // Memory: 0 when the C array holds scalars (vectors are read with vloadN); N when it is an
  // array of floatN/intN (a private array of vectors, `floatN name[count]`), indexed by vector
  // and a lane by .sK, so that it can become vector variables (registers).
  int64_t vectorStorage = 0;
  // Memory in private space whose leading dimensions belong to the work-items of a work-group
  // (an accumulator that mapLcl nests update across a loop, LIFT's private memory of a
  // mapLcl): entry k names the local dimension d of index k. Each work-item holds only its own
  // part, so index k takes no room and must be the work-item's own mapLcl(d) index.
  std::vector<int> ownerLocalDims;
  Boundary boundary = Boundary::Clamp;
  double padValue = 0.0;
  IndexFunction indexFunction = IndexFunction::Stride;
  std::function<ViewPtr(const ViewPtr&)> elementView;  // Map
  // Set by the constructors: equal for views equal in kind, fields and children, so that
  // a ViewContext's memo interns a view rebuilt for another copy of a loop body as the same node.
  size_t structuralHash = 0;
};

// Constructors (each records the type of the value the view stands for).
ViewPtr memoryView(std::string name, Type type, AddressSpace space, Arith offset = Arith(0),
                   int64_t vectorStorage = 0);
// `perWorkItem` (a private memory view of one work-item's part) as the whole array `type`
// whose leading dimensions belong to the work-items of local dimensions `ownerLocalDims`.
ViewPtr distributedPrivateView(const ViewPtr& perWorkItem, Type type,
                               std::vector<int> ownerLocalDims);
ViewPtr variableView(std::string name, Type type);
ViewPtr scalarView(std::string cExpression, Type type);
ViewPtr accessView(ViewPtr array, Arith index);
ViewPtr splitView(ViewPtr array, Arith chunk);
ViewPtr joinView(ViewPtr arrayOfArrays);
ViewPtr slideView(ViewPtr array, Arith size, Arith step);
ViewPtr padView(ViewPtr array, Arith left, Arith right, Boundary boundary, double value);
ViewPtr cropView(ViewPtr array, Arith left, Arith right);
ViewPtr uncropView(ViewPtr array, Arith left, Arith right);
ViewPtr transposeView(ViewPtr arrayOfArrays);
ViewPtr reorderView(ViewPtr array, IndexFunction function, Arith stride);
ViewPtr zipView(std::vector<ViewPtr> components, Type type);
ViewPtr getView(ViewPtr tuple, int component);
ViewPtr asVectorView(ViewPtr array, int64_t width);
ViewPtr asScalarView(ViewPtr arrayOfVectors);
ViewPtr fillView(ViewPtr element, Arith count);
// A view of [T]n whose element i is `elements[i]` (all of type T): a constant index reads the
// element itself, any other a choice among them.
ViewPtr elementsView(std::vector<ViewPtr> elements);
// A view of [elementType]n whose element i is `element(array[i])`.
ViewPtr mapView(ViewPtr array, Type elementType,
                std::function<ViewPtr(const ViewPtr&)> element);

// An index that may leave an array: a constant pad's read (below) or an uncrop view's write.
struct PadGuard {
  Arith index;   // the position in the unpadded array
  Arith length;  // the unpadded array's length
  bool checkLow = false, checkHigh = false;
  std::string key() const;         // identifies the guard (index, length, sides)
  std::string conditionC() const;  // C: true when the index is outside [0, length)
};

// A resolved element: a C expression (an rvalue, or an lvalue when `memory` is set and the
// view can be written), plus where it is in memory when it is a plain memory access.
struct ResolvedElement {
  std::string expression;
  bool isMemory = false;     // expression is `base[offset]` (or a vector at base + offset)
  std::string base;          // memory name
  Arith offset;              // in scalars
  AddressSpace space = AddressSpace::Global;
  bool isVariable = false;   // a private variable (expression is its name or a lane of it)
  int vectorWidth = 0;       // a whole vector element of this width (0: a scalar)
  // A lane of a vector variable (an element of a private array of vectors): the vector's
  // expression, its width and the lane, so that a vector read assembled from its lanes in
  // order is the variable itself.
  std::string vectorOfLane;
  int laneOfVector = -1, widthOfLaneVector = 0;
  // A global buffer's element read from the buffer as a whole (not a part of it): the buffer's
  // length in scalars, which aligned vector reads check; 0 otherwise.
  Arith bufferScalars = Arith(0);
  // The arrays in memory (global, local or private) that `expression` names, one entry per
  // use, so that code generation knows what a kernel's text uses without reading it back:
  // `constantIndex` when the use is `name[k]` with a literal k (an element, or a vector of a
  // private array of vectors, possibly with a lane), not an index computed at run time or a
  // pointer (vloadN's `name + offset`).
  struct ArrayUse {
    std::string name;
    bool constantIndex = false;
  };
  std::vector<ArrayUse> arrays;
  // Written through an uncrop view: the store happens only when none of these guards fires
  // (each is true when its index lies outside its array). Empty for every read.
  std::vector<PadGuard> writeGuards;
  // A vector written through an uncrop view whose lanes are consecutive memory elements (the
  // last vector of a row padded to whole vectors): `writeGuards` holds every lane's guards, so
  // that the whole vector is stored when none fires, and these are the lanes, each under its
  // own guards, stored one by one otherwise.
  std::vector<ResolvedElement> laneWrites;
  // Written through an uncrop view at an index provably outside the cropped array (an unrolled
  // update of padded accumulators): the store is dropped, not emitted under a guard that is
  // always false, since `expression` may name a private variable that does not exist.
  bool droppedWrite = false;
  // An element read from memory but not one memory element itself (a vector assembled lane by
  // lane, a vector read under the clamps of a pad, which reads one vector where every lane lies
  // inside, a read under a constant pad's guard): the memory it reads, each lane a scalar read,
  // a clamped vector read one vector read at its unclamped offset, a guarded read the read when
  // the guard does not fire, so that a kernel's list of global accesses sees them
  // (KernelPlan::globalAccesses).
  struct MemoryRead {
    std::string base;
    Arith offset;
    AddressSpace space = AddressSpace::Global;
    int vectorWidth = 0;
  };
  std::vector<MemoryRead> gatheredReads;
};

// Guards of constant pads whose index may leave the padded array, for code generation's loop
// unswitching (pad_unswitching.cpp): while a ViewContext has a PadGuardRecorder (a
// PadGuardScope sets it for its lifetime), resolving such a pad records its guard in the
// recorder, and a pad whose guard key is in `assumedInBounds` reads the element without a guard
// (the caller has checked the guard outside the loop), and one whose key is in `assumedFiring`
// is the pad value without a read (the caller has checked that the guard fires).
struct PadGuardRecorder {
  std::vector<PadGuard> seen;
  int guardedReads = 0;  // resolveElement calls that recorded at least one guard
  std::set<std::string> assumedInBounds;
  std::set<std::string> assumedFiring;
};

// Clamp and mirror pads whose index may leave the unpadded array, for code generation's
// interior fast path (interior_fast_path.cpp): while a ViewContext has a BorderReadRecorder (a
// BorderReadScope sets it for its lifetime), resolving such a pad records the index in the
// recorder, and a pad whose key is in `assumedInside` reads element `index` directly, without
// the clamp or reflection (the caller has checked, once per work-group, that the index stays
// inside for every work-item of it).
// Clamp-to-edge pads turn a row's consecutive reads into min/max-clamped ones that OpenCL
// implementations vectorising across work-items (PoCL) compile into gathers; a work-group
// wholly inside the image needs none of them.
struct BorderRead {
  Arith index;   // the position in the unpadded array
  Arith length;  // the unpadded array's length
  bool checkLow = false, checkHigh = false;  // the sides the index may leave
  bool vectorLane = false;                   // a lane of a vector read (views.cpp's AsVector)
  std::string key() const;                   // identifies the read (index, length, sides)
};
struct BorderReadRecorder {
  std::vector<BorderRead> seen;
  std::set<std::string> assumedInside;
};

// Conditions `x >= 0` kept as a variable part plus a constant: of those with the same
// variable part only the one with the least constant is needed (x - 2 >= 0 implies
// x - 1 >= 0). The interior fast path and guarded vector reads state their checks this way.
class NonNegativeConditions {
 public:
  void require(const Arith& nonNegative);
  // Each variable part plus its least constant, in the order the parts were first required.
  std::vector<Arith> conditions() const;

 private:
  std::vector<Arith> variableParts_;
  std::map<Arith, int64_t> leastConstant_;
};

// What resolution consults and records, passed to resolveElement explicitly: one per code
// generation (generateOpenCL, codegen/opencl_gen.cpp), owned by it. It holds the recorders of
// the body being generated, if any, and a memo of resolutions. While pad guards or border
// reads are recorded (the bodies that loop unswitching and the interior fast path emit several
// times), resolveElement of a view with the same structure, tuple path, lane and status of
// every guard assumption it consulted returns the earlier result and records the same pad
// guards and border reads again, instead of walking the view chain anew (a register-blocked
// vector convolution with padding in its loads generates its channel loop 9 times: a
// recording pass and 8 guard outcomes). To find the earlier result, the memo interns the views
// it is asked for (one node per structure, so a read's view rebuilt for another copy of the
// body is the same node). Only whole reads are memoised: memoising every step of the chain
// costs more than it saves. Resolution is a function of the view's structure: views are
// immutable, and Arith compares by value (a variable by its name, unique within one
// generation).
class ViewContext {
 public:
  ViewContext();
  ~ViewContext();
  ViewContext(const ViewContext&) = delete;
  ViewContext& operator=(const ViewContext&) = delete;

  // CodegenOptions::alignedVectorReads, and the widest read in bytes it applies to (or would,
  // when off): CompiledProgram::widestRealignableReadBytes.
  bool alignedVectorReads = false;
  int widestRealignableReadBytes = 0;
  // The buffers of the definition's inputs: no kernel writes them, so reading them through a
  // pointer to a vector type cannot be reordered against a store through another type.
  std::set<std::string> inputBuffers;
  PadGuardRecorder* padGuards = nullptr;      // null: pad guards are neither recorded nor assumed
  BorderReadRecorder* borderReads = nullptr;  // null: border reads are neither recorded nor assumed
  // The memo's node for the structure of `view` (views equal in kind, fields and children give
  // the same node; a map view, whose element function does not compare, is its own).
  ViewPtr interned(const ViewPtr& view);

  struct Memo;
  std::unique_ptr<Memo> memo;
};

// Gives a context a fresh, empty memo for the scope's lifetime (the previous one after it): for a
// loop body generated with its index's range narrowed (border_unswitching.cpp), which the
// memo, comparing variables by name, would not tell from the body resolved before.
class FreshMemoScope {
 public:
  explicit FreshMemoScope(ViewContext& context);
  ~FreshMemoScope();
  FreshMemoScope(const FreshMemoScope&) = delete;
  FreshMemoScope& operator=(const FreshMemoScope&) = delete;

 private:
  ViewContext& context_;
  std::unique_ptr<ViewContext::Memo> saved_;
};

// Sets a context's pad-guard recorder for the scope's lifetime (the previous one after it).
class PadGuardScope {
 public:
  PadGuardScope(ViewContext& context, PadGuardRecorder& recorder);
  ~PadGuardScope();
  PadGuardScope(const PadGuardScope&) = delete;
  PadGuardScope& operator=(const PadGuardScope&) = delete;

 private:
  ViewContext& context_;
  PadGuardRecorder* previous_;
};

// Sets a context's border-read recorder for the scope's lifetime (the previous one after it).
class BorderReadScope {
 public:
  BorderReadScope(ViewContext& context, BorderReadRecorder& recorder);
  ~BorderReadScope();
  BorderReadScope(const BorderReadScope&) = delete;
  BorderReadScope& operator=(const BorderReadScope&) = delete;

 private:
  ViewContext& context_;
  BorderReadRecorder* previous_;
};

// Resolves a view to one scalar or vector element, consulting and recording what `context`
// holds. `indices` must address down to an element
// whose type is scalar or vector; `tuplePath` selects tuple components (outermost first);
// `lane` selects one lane of a vector element. Throws CodegenError for views that cannot be
// resolved (an index too few, a dynamic vector lane, a tuple in memory).
ResolvedElement resolveElement(ViewContext& context, const ViewPtr& view,
                               std::vector<Arith> indices, std::vector<int> tuplePath = {},
                               std::optional<Arith> lane = std::nullopt);

// The C spelling of a scalar or vector type ("float", "float4", "int").
std::string cTypeName(const Type& type);
// The number of scalars a value of this type occupies in memory (vectors count their lanes).
Arith scalarCount(const Type& type);
// The element scalar kind stored in memory for a type (arrays of float/float4 -> Float).
ScalarKind storedScalarKind(const Type& type);

}  // namespace weft
