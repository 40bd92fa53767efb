// Implementation of views (codegen/views.h): constructors that record the viewed type, and
// the resolution of a view to one element as a C expression with a simplified index.
//
// Constant pads whose index may leave the array read through a guard (the pad value when it
// fires); the ViewContext's pad-guard recorder records those guards, or takes the ones the
// caller checked outside a loop as satisfied or as firing (codegen's loop unswitching).
// Likewise its border-read recorder records the indices of clamp and mirror pads that may
// leave the array, or reads those its caller proved inside (codegen's interior fast path)
// directly. Every resolution function takes the context; nothing is kept per thread.
// A vector read (asVector) whose lanes are consecutive elements but for such clamps (a clamp-
// padded row's taps near its ends) is one vloadN under the condition that every clamped index
// is inside, the lanes one by one otherwise: `(inside) ? vloadN(..) : (floatN)(lane, ..)`.
//
// Resolution follows LIFT's view printer (CGO'17, section 5.3): an index stack walked from the
// consumer towards memory, where each layout step rewrites the top indices. Every index is an
// `Arith`, so (i*4 + j)/4 style expressions simplify away when loop ranges allow it. A memory
// address (the sum of each index times its stride) is built with sumOfProducts, canonicalised
// once rather than after every + and *: unrolled loops resolve thousands of reads.
// While guards are recorded, whole reads are memoised in the context (the same view structure,
// path, lane and status of the guard assumptions consulted: the same result and recorded
// guards), the views asked for being interned there.
#include "codegen/views.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "codegen/codegen.h"

namespace weft {

namespace {

size_t combineHash(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// The structural hash of a view whose children are made (see View::structuralHash).
size_t structuralHashOf(const View& v) {
  size_t h = std::hash<int>()(static_cast<int>(v.kind));
  for (const ViewPtr& child : v.children) h = combineHash(h, child->structuralHash);
  h = combineHash(h, v.a.hash());
  h = combineHash(h, v.b.hash());
  h = combineHash(h, v.index.hash());
  h = combineHash(h, static_cast<size_t>(v.component));
  h = combineHash(h, std::hash<std::string>()(v.name));
  h = combineHash(h, v.offset.hash());
  h = combineHash(h, static_cast<size_t>(v.space));
  h = combineHash(h, static_cast<size_t>(v.vectorStorage));
  h = combineHash(h, static_cast<size_t>(v.boundary));
  h = combineHash(h, std::hash<double>()(v.padValue));
  h = combineHash(h, static_cast<size_t>(v.indexFunction));
  for (int d : v.ownerLocalDims) h = combineHash(h, static_cast<size_t>(d) + 1);
  if (v.type) h = combineHash(h, v.type.hash());
  return h;
}

// A new node (views are interned only by the memo of a ViewContext, when a read is memoised).
ViewPtr make(View view) {
  view.structuralHash = structuralHashOf(view);
  return std::make_shared<const View>(std::move(view));
}

[[noreturn]] void fail(const std::string& message) { throw CodegenError(message); }

const Type& requireArray(const Type& type, const char* what) {
  if (type.isNull() || !type.isArray()) {
    fail(std::string(what) + ": expected an array, found " + type.toString());
  }
  return type;
}

std::string laneSuffix(int64_t lane) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, ".s%llx", static_cast<unsigned long long>(lane));
  return buffer;
}

// Vector components must be constants in OpenCL C (.s0 ... .sf).
int64_t constantLane(const Arith& lane) {
  auto value = lane.constant();
  if (!value) {
    fail("a vector lane chosen at run time (" + lane.toString() +
         ") cannot be accessed in a vector value; store the vectors in memory or unroll");
  }
  return *value;
}

// A lane chosen at run time of the array of vectors `base`: OpenCL C lays a vector out as its
// components in order, so the vectors are read as an array of their scalars,
// `((private float*)base)[element]`.
std::string componentOf(const std::string& base, AddressSpace space, ScalarKind kind,
                        const Arith& element) {
  return std::string("((") + addressSpaceName(space) + " " + cTypeName(Type::scalar(kind)) + "*)" +
         base + ")[" + element.toC() + "]";
}

std::string literalC(double value, ScalarKind kind) {
  if (kind == ScalarKind::Float) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.9g", value);
    std::string text = buffer;
    if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
    return text + "f";
  }
  return std::to_string(static_cast<int64_t>(value));
}

ResolvedElement resolve(ViewContext& context, const View& view, std::vector<Arith>& indices,
                        std::vector<int>& path, std::optional<Arith> lane);

}  // namespace

namespace {

// Equal kinds and fields (not children; a Map's element function cannot be compared, so Map
// views never are).
bool sameFields(const View& x, const View& y) {
  if (x.kind != y.kind || x.kind == View::Kind::Map) return false;
  return x.a == y.a && x.b == y.b && x.index == y.index && x.component == y.component &&
         x.name == y.name && x.offset == y.offset && x.space == y.space &&
         x.vectorStorage == y.vectorStorage && x.boundary == y.boundary &&
         x.padValue == y.padValue && x.indexFunction == y.indexFunction && x.type == y.type &&
         x.ownerLocalDims == y.ownerLocalDims;
}

}  // namespace

// ---- the memo of resolutions (ViewContext::Memo) ----------------------------------------------

// A guard assumption a resolution consulted: a constant pad's guard (in bounds, firing or
// neither) or a clamp/mirror pad's border read (inside or not), by key.
struct AssumptionUse {
  bool border = false;
  std::string key;
  int status = 0;
  bool operator==(const AssumptionUse&) const = default;
};

struct ViewContext::Memo {
  struct Key {
    ViewPtr view;  // kept alive with the entry
    std::vector<Arith> indices;
    std::vector<int> path;
    std::optional<Arith> lane;
    bool recordingPadGuards = false, recordingBorderReads = false;
    bool operator==(const Key& other) const {  // views are interned: one node per structure
      return view == other.view && recordingPadGuards == other.recordingPadGuards &&
             recordingBorderReads == other.recordingBorderReads && path == other.path &&
             indices == other.indices && lane == other.lane;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& key) const {
      size_t h = key.view->structuralHash * 4 + (key.recordingPadGuards ? 2 : 0) +
                 (key.recordingBorderReads ? 1 : 0);
      for (const Arith& index : key.indices) h = h * 31 + index.hash();
      for (int component : key.path) h = h * 31 + static_cast<size_t>(component);
      if (key.lane) h = h * 31 + key.lane->hash();
      return h;
    }
  };
  // One result per combination of the assumptions it consulted.
  struct Variant {
    std::vector<AssumptionUse> uses;
    ResolvedElement element;
    std::vector<PadGuard> padGuards;  // what resolving it recorded, replayed on a hit
    std::vector<BorderRead> borderReads;
  };
  std::unordered_map<Key, std::vector<Variant>, KeyHash> entries;
  // The views of memoised reads, one node per structure (hash-consing: a node's children are
  // interned first, so comparing them by pointer is comparing them whole), and the node each
  // view met so far stands for (the views are kept alive, so a pointer is never reused).
  std::unordered_multimap<size_t, ViewPtr> interned;
  std::unordered_map<ViewPtr, ViewPtr> canonical;
  // The assumptions consulted by the resolution under way (innermost memoised one); null: none.
  std::vector<AssumptionUse>* consulted = nullptr;
};

namespace {

// The status of a guard assumption now: pad guards 1 in bounds, 2 firing, 0 neither; border
// reads 1 inside, 0 not. Only called while the corresponding recorder is live.
int assumptionStatus(const ViewContext& context, bool border, const std::string& key) {
  if (border) return context.borderReads->assumedInside.count(key) ? 1 : 0;
  if (context.padGuards->assumedInBounds.count(key)) return 1;
  return context.padGuards->assumedFiring.count(key) ? 2 : 0;
}

// Adds to `uses` those of `more` it does not hold yet (a resolution consults few).
void addUses(std::vector<AssumptionUse>& uses, const std::vector<AssumptionUse>& more) {
  for (const AssumptionUse& use : more) {
    if (std::find(uses.begin(), uses.end(), use) == uses.end()) uses.push_back(use);
  }
}

// The status of the assumption `key`, noted as consulted by the resolutions under way.
int consultAssumption(ViewContext& context, bool border, const std::string& key) {
  const int status = assumptionStatus(context, border, key);
  if (context.memo->consulted) addUses(*context.memo->consulted, {{border, key, status}});
  return status;
}

// The memo, where it pays: while guards or border reads are recorded, i.e. in the bodies that
// loop unswitching and the interior fast path generate several times.
ViewContext::Memo* memoInUse(ViewContext& context) {
  return (context.padGuards || context.borderReads) ? context.memo.get() : nullptr;
}

// Equal kinds and fields, children the same nodes (interned children: equal views).
bool shallowSame(const View& x, const View& y) {
  return x.children == y.children && sameFields(x, y);
}

// The memo's node for the structure of `view`: its children interned first, then a node with
// the same fields and children if the memo has one, else `view` (or a copy over the interned
// children) becomes that node. A map is its own node (its element function does not compare).
ViewPtr intern(ViewContext::Memo& memo, const ViewPtr& view) {
  auto known = memo.canonical.find(view);
  if (known != memo.canonical.end()) return known->second;
  ViewPtr node = view;
  if (view->kind != View::Kind::Map) {
    View rebuilt = *view;
    bool childChanged = false;
    for (ViewPtr& child : rebuilt.children) {
      ViewPtr internedChild = intern(memo, child);
      childChanged = childChanged || internedChild != child;
      child = std::move(internedChild);
    }
    node = nullptr;
    auto [first, last] = memo.interned.equal_range(rebuilt.structuralHash);
    for (auto it = first; it != last && !node; ++it) {
      if (shallowSame(*it->second, rebuilt)) node = it->second;
    }
    if (!node) {
      node = childChanged ? std::make_shared<const View>(std::move(rebuilt)) : view;
      memo.interned.emplace(node->structuralHash, node);
    }
  }
  memo.canonical.emplace(view, node);
  return node;
}

ResolvedElement resolveShared(ViewContext& context, const ViewPtr& view,
                              std::vector<Arith>& indices, std::vector<int>& path,
                              std::optional<Arith> lane) {
  ViewContext::Memo* memo = memoInUse(context);
  if (!memo) return resolve(context, *view, indices, path, std::move(lane));
  PadGuardRecorder* const padGuards = context.padGuards;
  BorderReadRecorder* const borderReads = context.borderReads;
  ViewContext::Memo::Key key{intern(*memo, view),   indices, path, lane, padGuards != nullptr,
                             borderReads != nullptr};
  std::vector<ViewContext::Memo::Variant>& variants = memo->entries[key];
  for (const ViewContext::Memo::Variant& variant : variants) {
    bool holds = true;
    for (const AssumptionUse& use : variant.uses) {
      holds = holds && assumptionStatus(context, use.border, use.key) == use.status;
    }
    if (!holds) continue;
    if (padGuards) {
      for (const PadGuard& guard : variant.padGuards) padGuards->seen.push_back(guard);
    }
    if (borderReads) {
      for (const BorderRead& read : variant.borderReads) borderReads->seen.push_back(read);
    }
    if (memo->consulted) addUses(*memo->consulted, variant.uses);
    return variant.element;
  }
  const size_t guardsBefore = padGuards ? padGuards->seen.size() : 0;
  const size_t readsBefore = borderReads ? borderReads->seen.size() : 0;
  ViewContext::Memo::Variant variant;
  std::vector<AssumptionUse>* outer = memo->consulted;
  memo->consulted = &variant.uses;
  try {
    variant.element = resolve(context, *view, indices, path, std::move(lane));
  } catch (...) {
    memo->consulted = outer;
    throw;
  }
  memo->consulted = outer;
  if (outer) addUses(*outer, variant.uses);
  if (padGuards) {
    variant.padGuards.assign(padGuards->seen.begin() + static_cast<std::ptrdiff_t>(guardsBefore),
                             padGuards->seen.end());
  }
  if (borderReads) {
    variant.borderReads.assign(borderReads->seen.begin() + static_cast<std::ptrdiff_t>(readsBefore),
                               borderReads->seen.end());
  }
  // `variants` may have moved if the resolution above added entries (rehash): look it up again.
  std::vector<ViewContext::Memo::Variant>& stored = memo->entries[key];
  stored.push_back(std::move(variant));
  return stored.back().element;
}

ResolvedElement resolveChild(ViewContext& context, const View& view, std::vector<Arith> indices,
                             std::vector<int> path, std::optional<Arith> lane, size_t child = 0) {
  return resolve(context, *view.children.at(child), indices, path, std::move(lane));
}

// Takes the outermost index (the front of the list).
Arith popFront(std::vector<Arith>& indices, const char* step) {
  if (indices.empty()) {
    fail(std::string("cannot read a whole array through ") + step +
         " as one value (an index is missing)");
  }
  Arith front = indices.front();
  indices.erase(indices.begin());
  return front;
}

// Whether an index is printed as a literal (`name[k]`): a constant that is not negative.
bool isLiteralIndex(const Arith& index) {
  const std::optional<int64_t> value = index.constant();
  return value && *value >= 0;
}

// `name[offset]`; in global and local memory an offset `rest + c` with a constant c != 0 is
// written `(name + (rest))[c]`, so that the address of `rest` is computed (and widened to a
// pointer) once and the σ neighbouring reads of an unrolled block differ only in the constant
// displacement of one addressing mode, instead of each widening its own int index.
std::string indexedElement(const std::string& name, const Arith& offset, AddressSpace space) {
  if (space != AddressSpace::Private && offset.kind() == ArithKind::Sum &&
      offset.sumConstant() != 0) {
    const Arith rest = offset - Arith(offset.sumConstant());
    if (!rest.isConstant()) {
      return "(" + name + " + (" + rest.toC() + "))[" + std::to_string(offset.sumConstant()) + "]";
    }
  }
  return name + "[" + offset.toC() + "]";
}

// An element of an array of vectors (View::vectorStorage = w): `name[offset / w]` for a whole
// vector, `.sK` for a lane (the lane and offset % w must be constants). The element is an
// lvalue like a variable, not memory that vloadN/vstoreN address.
// A vector read whose lanes are consecutive elements but for the clamps of clamp or mirror pads
// (a row's taps at its ends): the lanes as resolved (`lanes`), and, when the pads' border reads
// assumed inside make them consecutive, those lanes (`unclamped`) and the condition, in C,
// under which every such read is inside (`inside`).
struct ClampedVectorRead {
  std::vector<ResolvedElement> lanes, unclamped;
  std::optional<std::string> inside;
};

ClampedVectorRead clampedVectorRead(
    ViewContext& context, const std::function<std::vector<ResolvedElement>()>& resolveLanes,
    const std::function<bool(const std::vector<ResolvedElement>&)>& areContiguous) {
  ClampedVectorRead read;
  // The reads an enclosing recorder (the interior fast path's) assumes inside stay assumed;
  // those seen here are its too.
  BorderReadRecorder* const enclosing = context.borderReads;
  BorderReadRecorder recorded;
  if (enclosing) recorded.assumedInside = enclosing->assumedInside;
  {
    BorderReadScope scope(context, recorded);
    read.lanes = resolveLanes();
  }
  if (enclosing) {
    for (BorderRead border : recorded.seen) {
      border.vectorLane = true;
      enclosing->seen.push_back(std::move(border));
    }
  }
  if (recorded.seen.empty() || areContiguous(read.lanes)) return read;
  BorderReadRecorder assume;
  assume.assumedInside = recorded.assumedInside;
  for (const BorderRead& border : recorded.seen) assume.assumedInside.insert(border.key());
  {
    BorderReadScope scope(context, assume);
    read.unclamped = resolveLanes();
  }
  if (!areContiguous(read.unclamped)) return read;
  // index >= 0 and index <= length - 1 for each read.
  NonNegativeConditions required;
  for (const BorderRead& border : recorded.seen) {
    if (border.checkLow) required.require(border.index);
    if (border.checkHigh) required.require(border.length - 1 - border.index);
  }
  std::string inside;
  for (const Arith& condition : required.conditions()) {
    if (condition.isConstant()) {
      if (*condition.constant() < 0) return read;  // never inside
      continue;
    }
    inside += (inside.empty() ? "" : " && ") + condition.toC() + " >= 0";
  }
  read.inside = inside.empty() ? "1" : inside;
  return read;
}

// CodegenOptions::alignedVectorReads: the vector of `w` elements of an input buffer at
// `first`'s offset o, read as the buffer's aligned vectors: o a multiple of w plus a constant r
// (the rest provably a multiple of w), the buffer's length a multiple of w. r = 0: one load
// through a pointer to the vector type, which tells the compiler the address is aligned; else
// the two aligned vectors around it, from o - r, shuffled (lanes r .. r + w - 1 of the pair).
// Both lie inside the buffer: o - r >= 0 since o >= 0, and the vector holding element o + w - 1
// ends at o - r + 2w, at most the length, a multiple of w. A buffer's start is aligned to
// CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128 bytes. Neighbouring taps (o - 1, o, o + 1) then
// load the same aligned vectors, which the compiler loads once, instead of vectors that cross
// cache lines.
std::optional<std::string> alignedVectorRead(const ViewContext& context,
                                             const ResolvedElement& first, int64_t w,
                                             const std::string& vectorType) {
  if (first.space != AddressSpace::Global || first.bufferScalars == Arith(0) ||
      !context.inputBuffers.count(first.base)) {
    return std::nullopt;
  }
  const Arith width(w);
  if (!proveDivides(width, first.bufferScalars)) return std::nullopt;
  const Arith& offset = first.offset;
  const int64_t constant =
      offset.kind() == ArithKind::Sum ? offset.sumConstant() : offset.constant().value_or(0);
  if (!proveDivides(width, offset - Arith(constant))) return std::nullopt;
  const int64_t r = ((constant % w) + w) % w;
  const std::string pointer = "(const global " + vectorType + "*)";
  auto load = [&](const Arith& at) {
    return "(*" + pointer + "(" + first.base + " + " + at.toC() + "))";
  };
  if (r == 0) return load(offset);
  std::string mask = "(uint" + std::to_string(w) + ")(";  // float and int lanes: 32 bits
  for (int64_t t = 0; t < w; ++t) mask += (t ? ", " : "") + std::to_string(r + t);
  mask += ")";
  const Arith low = offset - Arith(r);
  return "shuffle2(" + load(low) + ", " + load(low + width) + ", " + mask + ")";
}

ResolvedElement resolveVectorStorage(const View& view, const Arith& offset, const Type& type,
                                     const std::optional<Arith>& lane) {
  const Arith width(view.vectorStorage);
  ResolvedElement result;
  result.isVariable = true;
  result.space = view.space;
  const Arith vectorIndex = offset / width;
  result.arrays.push_back({view.name, isLiteralIndex(vectorIndex)});
  const std::string vector = view.name + "[" + vectorIndex.toC() + "]";
  if (type.isVector() && !lane) {
    if (type.vectorWidth() != view.vectorStorage) {
      fail("a vector of width " + std::to_string(type.vectorWidth()) + " read from " + view.name +
           ", an array of vectors of width " + std::to_string(view.vectorStorage));
    }
    if ((offset % width).constant() != 0) {
      fail("a vector read from " + view.name + ", an array of vectors of width " +
           std::to_string(view.vectorStorage) + ", at " + offset.toString() +
           ", not a multiple of the width");
    }
    result.vectorWidth = static_cast<int>(view.vectorStorage);
    result.expression = vector;
    return result;
  }
  const Arith laneIndex = lane ? *lane : offset % width;
  if (!laneIndex.isConstant()) {
    // The array is then addressed at run time: it stays an array (not promoted to scalars).
    result.arrays.back().constantIndex = false;
    result.expression =
        componentOf(view.name, view.space, type.scalarKind(), vectorIndex * width + laneIndex);
    return result;
  }
  result.laneOfVector = static_cast<int>(constantLane(laneIndex));
  result.vectorOfLane = vector;
  result.widthOfLaneVector = static_cast<int>(view.vectorStorage);
  result.expression = vector + laneSuffix(result.laneOfVector);
  return result;
}

// Whether `index` is the index of the enclosing mapLcl(dim) (codegen/loops.cpp names it
// lcN_dDIM, a thread index).
bool isOwnLocalIndex(const Arith& index, int dim) {
  if (!index.isVar() || index.varKind() != VarKind::ThreadIndex) return false;
  const std::string& name = index.varName();
  const std::string suffix = "_d" + std::to_string(dim);
  return name.rfind("lc", 0) == 0 && name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ResolvedElement resolveMemory(const View& view, std::vector<Arith>& indices,
                              const std::vector<int>& path, const std::optional<Arith>& lane) {
  if (!path.empty()) fail("tuples cannot be stored in memory (" + view.name + ")");
  Type type = view.type;
  // The dimensions the work-items own take no room: each index must be the work-item's own.
  const size_t owned = view.ownerLocalDims.size();
  if (indices.size() < owned) {
    fail("the private array " + view.name + " is split among work-items and cannot be read whole");
  }
  for (size_t k = 0; k < owned; ++k) {
    // (A level of one element is indexed by 0: a mapLcl of one iteration has no index.)
    const bool onlyElement = type.arrayLength() == Arith(1) && indices[k] == Arith(0);
    if (!onlyElement && !isOwnLocalIndex(indices[k], view.ownerLocalDims[k])) {
      fail("the private array " + view.name + " holds each work-item's own part of dimension " +
           std::to_string(k) + ": it is indexed only by the work-item's mapLcl(" +
           std::to_string(view.ownerLocalDims[k]) + ") index, not by " + indices[k].toString());
    }
    type = type.arrayElement();
  }
  std::vector<std::pair<Arith, Arith>> terms;  // index * the scalars of an element, summed once
  terms.reserve(indices.size());
  for (size_t k = owned; k < indices.size(); ++k) {
    const Arith& index = indices[k];
    if (!type.isArray()) {
      fail("too many indices for " + view.name + " of type " + view.type.toString());
    }
    terms.emplace_back(index, scalarCount(type.arrayElement()));
    type = type.arrayElement();
  }
  Arith offset = sumOfProducts(view.offset, terms);
  if (type.isArray()) {
    fail("cannot read the whole array " + type.toString() + " of " + view.name + " as one value");
  }
  if (type.isTuple()) fail("tuples cannot be stored in memory (" + view.name + ")");
  if (view.vectorStorage > 0) return resolveVectorStorage(view, offset, type, lane);
  ResolvedElement result;
  result.isMemory = true;
  result.base = view.name;
  result.space = view.space;
  if (view.space == AddressSpace::Global && view.offset == Arith(0)) {
    result.bufferScalars = scalarCount(view.type);
  }
  if (type.isVector() && !lane) {
    result.offset = offset;
    result.vectorWidth = static_cast<int>(type.vectorWidth());
    result.expression = "vload" + std::to_string(type.vectorWidth()) + "(0, " + view.name + " + " +
                        offset.toC() + ")";
    result.arrays.push_back({view.name, false});
    return result;
  }
  if (lane) offset = offset + *lane;
  result.offset = offset;
  result.expression = indexedElement(view.name, offset, view.space);
  result.arrays.push_back(
      {view.name, view.space == AddressSpace::Private && isLiteralIndex(offset)});
  return result;
}

ResolvedElement resolveValue(const View& view, const std::vector<Arith>& indices,
                             const std::vector<int>& path, const std::optional<Arith>& lane) {
  if (!indices.empty()) fail("cannot index the value " + view.name);
  if (!path.empty()) fail("cannot take a tuple component of the value " + view.name);
  ResolvedElement result;
  result.isVariable = view.kind == View::Kind::Variable;
  bool atomic = view.kind == View::Kind::Variable;
  std::string base = atomic ? view.name : "(" + view.name + ")";
  if (lane) {
    result.expression = base + laneSuffix(constantLane(*lane));
  } else {
    result.expression = view.name;
    if (view.type.isVector()) result.vectorWidth = static_cast<int>(view.type.vectorWidth());
  }
  return result;
}

ResolvedElement resolve(ViewContext& context, const View& view, std::vector<Arith>& indices,
                        std::vector<int>& path, std::optional<Arith> lane) {
  switch (view.kind) {
    case View::Kind::Memory:
      return resolveMemory(view, indices, path, lane);
    case View::Kind::Variable:
    case View::Kind::Scalar:
      return resolveValue(view, indices, path, lane);
    case View::Kind::Access:
      indices.insert(indices.begin(), view.index);
      return resolveChild(context, view, indices, path, lane);
    case View::Kind::Split: {
      Arith i = popFront(indices, "split");
      Arith j = popFront(indices, "split");
      indices.insert(indices.begin(), i * view.a + j);
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Join: {
      Arith i = popFront(indices, "join");
      indices.insert(indices.begin(), {i / view.a, i % view.a});
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Slide: {
      Arith i = popFront(indices, "slide");
      Arith j = popFront(indices, "slide");
      indices.insert(indices.begin(), i * view.b + j);
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Crop: {
      Arith i = popFront(indices, "crop");
      indices.insert(indices.begin(), i + view.a);
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Uncrop: {
      Arith i = popFront(indices, "uncrop");
      Arith k = i - view.a;
      const bool aboveZero = proveNonNegative(k);
      const bool belowEnd = proveLess(k, view.b);
      indices.insert(indices.begin(), k);
      ResolvedElement inner = resolveChild(context, view, indices, path, lane);
      if (!(aboveZero && belowEnd)) {
        inner.writeGuards.push_back(PadGuard{k, view.b, !aboveZero, !belowEnd});
      }
      if (proveLess(k, Arith(0)) || proveLessEqual(view.b, k)) inner.droppedWrite = true;
      return inner;
    }
    case View::Kind::Transpose: {
      Arith i = popFront(indices, "transpose");
      Arith j = popFront(indices, "transpose");
      indices.insert(indices.begin(), {j, i});
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Reorder: {
      Arith i = popFront(indices, "reorder");
      Arith n = view.a;
      Arith source;
      if (view.indexFunction == IndexFunction::Reverse) {
        source = n - 1 - i;
      } else {
        // LIFT's reorderStride: i -> i / (n / s) + s * (i % (n / s)).
        Arith chunk = n / view.b;
        source = i / chunk + view.b * (i % chunk);
      }
      indices.insert(indices.begin(), source);
      return resolveChild(context, view, indices, path, lane);
    }
    case View::Kind::Pad: {
      Arith i = popFront(indices, "pad");
      Arith n = view.b;
      Arith k = i - view.a;
      bool aboveZero = proveNonNegative(k);
      bool belowEnd = proveLess(k, n);
      bool firing = false;  // the caller checked that the index is outside the array
      if (view.boundary == Boundary::Constant && !(aboveZero && belowEnd) && context.padGuards) {
        PadGuard guard{k, n, !aboveZero, !belowEnd};
        const int status = consultAssumption(context, /*border=*/false, guard.key());
        if (status == 1) {
          aboveZero = belowEnd = true;  // checked by the caller outside the loop
        } else if (status == 2) {
          firing = true;
        } else {
          context.padGuards->seen.push_back(std::move(guard));
        }
      }
      if (view.boundary != Boundary::Constant && !(aboveZero && belowEnd) && context.borderReads) {
        BorderRead read{k, n, !aboveZero, !belowEnd};
        if (consultAssumption(context, /*border=*/true, read.key()) == 1) {
          aboveZero = belowEnd = true;  // the caller checked it for the whole work-group
        } else {
          context.borderReads->seen.push_back(std::move(read));
        }
      }
      if (aboveZero && belowEnd) {
        indices.insert(indices.begin(), k);
        return resolveChild(context, view, indices, path, lane);
      }
      switch (view.boundary) {
        case Boundary::Clamp:
          indices.insert(indices.begin(), min(max(k, Arith(0)), n - 1));
          return resolveChild(context, view, indices, path, lane);
        case Boundary::Mirror:
          // Reflection repeating the edge: -1 -> 0, -2 -> 1, n -> n-1, n+1 -> n-2.
          indices.insert(indices.begin(),
                         ifLess(k, Arith(0), -1 - k, ifLess(k, n, k, 2 * n - 1 - k)));
          return resolveChild(context, view, indices, path, lane);
        case Boundary::Constant: {
          indices.insert(indices.begin(), k);
          // Its width, and its reads when the guard does not fire.
          ResolvedElement inner = resolveChild(context, view, indices, path, lane);
          std::string value = literalC(view.padValue, storedScalarKind(view.type));
          if (inner.vectorWidth > 0) {
            value =
                "(" +
                std::string(storedScalarKind(view.type) == ScalarKind::Float ? "float" : "int") +
                std::to_string(inner.vectorWidth) + ")(" + value + ")";
          }
          ResolvedElement result;
          result.vectorWidth = inner.vectorWidth;
          if (firing) {
            result.expression = value;
            return result;
          }
          result.arrays = std::move(inner.arrays);
          // What it reads when the guard does not fire.
          if (inner.isMemory) {
            result.gatheredReads.push_back(
                {inner.base, inner.offset, inner.space, inner.vectorWidth});
          }
          result.gatheredReads.insert(result.gatheredReads.end(), inner.gatheredReads.begin(),
                                      inner.gatheredReads.end());
          std::string condition;
          if (!aboveZero) condition = "(" + k.toC() + ") < 0";
          if (!belowEnd) {
            if (!condition.empty()) condition += " || ";
            condition += "(" + k.toC() + ") >= " + n.toC();
          }
          result.expression = "((" + condition + ") ? " + value + " : " + inner.expression + ")";
          return result;
        }
      }
      fail("unknown pad boundary");
    }
    case View::Kind::Zip: {
      if (path.empty()) {
        fail("a tuple of type " + view.type.toString() +
             " cannot be used as one value here; take its components with ._0, ._1, ...");
      }
      int component = path.front();
      path.erase(path.begin());
      return resolveChild(context, view, indices, path, lane, static_cast<size_t>(component));
    }
    case View::Kind::Get:
      path.insert(path.begin(), view.component);
      return resolveChild(context, view, indices, path, lane);
    case View::Kind::AsVector: {
      Arith k = popFront(indices, "asVector");
      Arith width = view.a;
      if (lane) {
        indices.insert(indices.begin(), k * width + *lane);
        return resolveChild(context, view, indices, path, std::nullopt);
      }
      int64_t w = *width.constant();
      auto resolveLanes = [&] {
        std::vector<ResolvedElement> resolved;
        for (int64_t t = 0; t < w; ++t) {
          std::vector<Arith> laneIndices = indices;
          laneIndices.insert(laneIndices.begin(), k * width + t);
          std::vector<int> pathCopy = path;
          resolved.push_back(
              resolve(context, *view.children[0], laneIndices, pathCopy, std::nullopt));
        }
        return resolved;
      };
      // A guarded lane is stored on its own (its guard is not the vector's).
      auto areContiguous = [w](const std::vector<ResolvedElement>& ls) {
        bool contiguous = true;
        for (int64_t t = 0; t < w && contiguous; ++t) {
          contiguous = ls[t].isMemory && ls[t].vectorWidth == 0 && ls[t].writeGuards.empty() &&
                       ls[t].base == ls[0].base && ls[t].offset - ls[0].offset == t;
        }
        return contiguous;
      };
      ClampedVectorRead clamped = clampedVectorRead(context, resolveLanes, areContiguous);
      std::vector<ResolvedElement> lanes = std::move(clamped.lanes);
      const bool contiguous = areContiguous(lanes);
      ResolvedElement result;
      result.vectorWidth = static_cast<int>(w);
      // The lanes of one vector variable in order (asVector of asScalar of a private array of
      // vectors, with views between): that variable.
      bool wholeVariable = true;
      for (int64_t t = 0; t < w && wholeVariable; ++t) {
        wholeVariable = lanes[t].laneOfVector == t && lanes[t].widthOfLaneVector == w &&
                        lanes[t].vectorOfLane == lanes[0].vectorOfLane &&
                        lanes[t].writeGuards.empty();
      }
      if (wholeVariable) {
        result.isVariable = true;
        result.space = lanes[0].space;
        result.expression = lanes[0].vectorOfLane;
        result.arrays = lanes[0].arrays;
        return result;
      }
      if (!contiguous && clamped.inside) {
        // Consecutive elements but for the clamps of a pad at the array's ends: one vector
        // read where every lane lies inside, the lanes one by one at the ends.
        const ResolvedElement& first = clamped.unclamped[0];
        std::string text = "(" + cTypeName(view.type.arrayElement()) + ")(";
        for (int64_t t = 0; t < w; ++t) text += (t ? ", " : "") + lanes[t].expression;
        result.expression = "((" + *clamped.inside + ") ? vload" + std::to_string(w) + "(0, " +
                            first.base + " + " + first.offset.toC() + ") : " + text + "))";
        for (ResolvedElement& laneElement : lanes) {
          for (ResolvedElement::ArrayUse& use : laneElement.arrays) {
            result.arrays.push_back(std::move(use));
          }
        }
        result.arrays.push_back({first.base, false});
        result.gatheredReads.push_back(
            {first.base, first.offset, first.space, static_cast<int>(w)});
        return result;
      }
      // Consecutive memory elements written through an uncrop view, some lanes under guards:
      // one vector store where no guard fires, the lanes one by one otherwise.
      bool guardedContiguous = !contiguous && !lanes[0].droppedWrite;
      bool anyGuard = false;
      for (int64_t t = 0; t < w && guardedContiguous; ++t) {
        guardedContiguous = lanes[t].isMemory && lanes[t].vectorWidth == 0 &&
                            lanes[t].base == lanes[0].base &&
                            lanes[t].offset - lanes[0].offset == t && !lanes[t].droppedWrite;
        anyGuard = anyGuard || !lanes[t].writeGuards.empty();
      }
      // The vector of w consecutive memory elements from the first lane's.
      auto asMemoryVector = [&](const ResolvedElement& first) {
        result.isMemory = true;
        result.base = first.base;
        result.space = first.space;
        result.offset = first.offset;
        result.expression =
            "vload" + std::to_string(w) + "(0, " + result.base + " + " + result.offset.toC() + ")";
      };
      if (guardedContiguous && anyGuard) {
        asMemoryVector(lanes[0]);
        std::set<std::string> keys;
        for (const ResolvedElement& laneElement : lanes) {
          for (const PadGuard& guard : laneElement.writeGuards) {
            if (keys.insert(guard.key()).second) result.writeGuards.push_back(guard);
          }
        }
        result.arrays.push_back({result.base, false});
        result.laneWrites = std::move(lanes);
        return result;
      }
      if (contiguous) {
        asMemoryVector(lanes[0]);
        if (std::optional<std::string> aligned =
                alignedVectorRead(context, lanes[0], w, cTypeName(view.type.arrayElement()))) {
          // Buffers hold 4-byte floats or ints.
          context.widestRealignableReadBytes =
              std::max(context.widestRealignableReadBytes, static_cast<int>(w * 4));
          if (context.alignedVectorReads) result.expression = *aligned;
        }
        result.arrays.push_back({result.base, false});
        return result;
      }
      std::string text = "(" + cTypeName(view.type.arrayElement()) + ")(";
      for (int64_t t = 0; t < w; ++t) text += (t ? ", " : "") + lanes[t].expression;
      for (ResolvedElement& laneElement : lanes) {
        for (ResolvedElement::ArrayUse& use : laneElement.arrays) {
          result.arrays.push_back(std::move(use));
        }
        if (laneElement.isMemory) {
          result.gatheredReads.push_back(
              {laneElement.base, laneElement.offset, laneElement.space, laneElement.vectorWidth});
        }
        for (ResolvedElement::MemoryRead& read : laneElement.gatheredReads) {
          result.gatheredReads.push_back(std::move(read));
        }
      }
      result.expression = text + ")";
      return result;
    }
    case View::Kind::AsScalar: {
      if (lane) fail("asScalar: a lane of a scalar was requested");
      Arith i = popFront(indices, "asScalar");
      indices.insert(indices.begin(), i / view.a);
      return resolveChild(context, view, indices, path, i % view.a);
    }
    case View::Kind::Fill:
      popFront(indices, "fill");
      return resolveChild(context, view, indices, path, lane);
    case View::Kind::Elements: {
      Arith i = popFront(indices, "array");
      const size_t count = view.children.size();
      if (std::optional<int64_t> k = i.constant()) {
        if (*k < 0 || static_cast<size_t>(*k) >= count) {
          fail("array: element " + std::to_string(*k) + " of " + std::to_string(count) + " values");
        }
        return resolveChild(context, view, indices, path, lane, static_cast<size_t>(*k));
      }
      // An index known only at run time: a choice among the elements, the last by default.
      ResolvedElement result = resolveChild(context, view, indices, path, lane, count - 1);
      std::string expression = result.expression;
      const std::string index = i.toC();
      for (size_t k = count - 1; k-- > 0;) {
        ResolvedElement element = resolveChild(context, view, indices, path, lane, k);
        for (auto& use : element.arrays) result.arrays.push_back(std::move(use));
        expression = "((" + index + ") == " + std::to_string(k) + " ? " + element.expression +
                     " : " + expression + ")";
      }
      result.expression = std::move(expression);
      result.isMemory = false;
      result.isVariable = false;
      return result;
    }
    case View::Kind::Map: {
      Arith i = popFront(indices, "map");
      ViewPtr element = view.elementView(accessView(view.children[0], i));
      return resolve(context, *element, indices, path, lane);
    }
  }
  fail("unknown view kind");
}

}  // namespace

ViewPtr memoryView(std::string name, Type type, AddressSpace space, Arith offset,
                   int64_t vectorStorage) {
  View v;
  v.kind = View::Kind::Memory;
  v.vectorStorage = vectorStorage;
  v.name = std::move(name);
  v.type = std::move(type);
  v.space = space;
  v.offset = std::move(offset);
  return make(std::move(v));
}

ViewPtr distributedPrivateView(const ViewPtr& perWorkItem, Type type,
                               std::vector<int> ownerLocalDims) {
  View v = *perWorkItem;
  v.type = std::move(type);
  v.ownerLocalDims = std::move(ownerLocalDims);
  return make(std::move(v));
}

ViewPtr variableView(std::string name, Type type) {
  View v;
  v.kind = View::Kind::Variable;
  v.name = std::move(name);
  v.type = std::move(type);
  v.space = AddressSpace::Private;
  return make(std::move(v));
}

ViewPtr scalarView(std::string cExpression, Type type) {
  View v;
  v.kind = View::Kind::Scalar;
  v.name = std::move(cExpression);
  v.type = std::move(type);
  return make(std::move(v));
}

void NonNegativeConditions::require(const Arith& nonNegative) {
  const int64_t constant = nonNegative.isConstant()               ? *nonNegative.constant()
                           : nonNegative.kind() == ArithKind::Sum ? nonNegative.sumConstant()
                                                                  : 0;
  const Arith variable = nonNegative - Arith(constant);
  auto [it, inserted] = leastConstant_.emplace(variable, constant);
  if (inserted) variableParts_.push_back(variable);
  it->second = std::min(it->second, constant);
}

std::vector<Arith> NonNegativeConditions::conditions() const {
  std::vector<Arith> result;
  for (const Arith& variable : variableParts_) {
    result.push_back(variable + Arith(leastConstant_.at(variable)));
  }
  return result;
}

ViewPtr accessView(ViewPtr array, Arith index) {
  View v;
  v.kind = View::Kind::Access;
  v.type = requireArray(array->type, "access").arrayElement();
  v.index = std::move(index);
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr splitView(ViewPtr array, Arith chunk) {
  const Type& t = requireArray(array->type, "split");
  View v;
  v.kind = View::Kind::Split;
  v.type = Type::array(Type::array(t.arrayElement(), chunk), t.arrayLength() / chunk);
  v.a = std::move(chunk);
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr joinView(ViewPtr arrayOfArrays) {
  const Type& outer = requireArray(arrayOfArrays->type, "join");
  const Type& inner = requireArray(outer.arrayElement(), "join");
  View v;
  v.kind = View::Kind::Join;
  v.type = Type::array(inner.arrayElement(), outer.arrayLength() * inner.arrayLength());
  v.a = inner.arrayLength();
  v.children = {std::move(arrayOfArrays)};
  return make(std::move(v));
}

ViewPtr slideView(ViewPtr array, Arith size, Arith step) {
  const Type& t = requireArray(array->type, "slide");
  View v;
  v.kind = View::Kind::Slide;
  v.type = Type::array(Type::array(t.arrayElement(), size), (t.arrayLength() - size + step) / step);
  v.a = std::move(size);
  v.b = std::move(step);
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr padView(ViewPtr array, Arith left, Arith right, Boundary boundary, double value) {
  const Type& t = requireArray(array->type, "pad");
  View v;
  v.kind = View::Kind::Pad;
  v.type = Type::array(t.arrayElement(), left + t.arrayLength() + right);
  v.a = std::move(left);
  v.b = t.arrayLength();
  v.boundary = boundary;
  v.padValue = value;
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr cropView(ViewPtr array, Arith left, Arith right) {
  const Type& t = requireArray(array->type, "crop");
  View v;
  v.kind = View::Kind::Crop;
  v.type = Type::array(t.arrayElement(), t.arrayLength() - left - right);
  v.a = std::move(left);
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr uncropView(ViewPtr array, Arith left, Arith right) {
  const Type& t = requireArray(array->type, "uncrop");
  View v;
  v.kind = View::Kind::Uncrop;
  v.type = Type::array(t.arrayElement(), left + t.arrayLength() + right);
  v.a = std::move(left);
  v.b = t.arrayLength();
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr transposeView(ViewPtr arrayOfArrays) {
  const Type& outer = requireArray(arrayOfArrays->type, "transpose");
  const Type& inner = requireArray(outer.arrayElement(), "transpose");
  View v;
  v.kind = View::Kind::Transpose;
  v.type = Type::array(Type::array(inner.arrayElement(), outer.arrayLength()), inner.arrayLength());
  v.children = {std::move(arrayOfArrays)};
  return make(std::move(v));
}

ViewPtr reorderView(ViewPtr array, IndexFunction function, Arith stride) {
  const Type& t = requireArray(array->type, "reorder");
  View v;
  v.kind = View::Kind::Reorder;
  v.type = t;
  v.a = t.arrayLength();
  v.b = std::move(stride);
  v.indexFunction = function;
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr elementsView(std::vector<ViewPtr> elements) {
  if (elements.empty()) fail("array: no elements");
  View v;
  v.kind = View::Kind::Elements;
  v.type = Type::array(elements.front()->type, static_cast<int64_t>(elements.size()));
  v.children = std::move(elements);
  return make(std::move(v));
}

ViewPtr zipView(std::vector<ViewPtr> components, Type type) {
  View v;
  v.kind = View::Kind::Zip;
  v.type = std::move(type);
  v.children = std::move(components);
  return make(std::move(v));
}

ViewPtr getView(ViewPtr tuple, int component) {
  View v;
  v.kind = View::Kind::Get;
  if (tuple->type.isTuple()) {
    v.type = tuple->type.tupleElements().at(static_cast<size_t>(component));
  }
  v.component = component;
  v.children = {std::move(tuple)};
  return make(std::move(v));
}

ViewPtr asVectorView(ViewPtr array, int64_t width) {
  const Type& t = requireArray(array->type, "asVector");
  View v;
  v.kind = View::Kind::AsVector;
  v.type = Type::array(Type::vector(t.arrayElement().scalarKind(), width),
                       t.arrayLength() / Arith(width));
  v.a = Arith(width);
  v.children = {std::move(array)};
  return make(std::move(v));
}

ViewPtr asScalarView(ViewPtr arrayOfVectors) {
  const Type& t = requireArray(arrayOfVectors->type, "asScalar");
  View v;
  v.kind = View::Kind::AsScalar;
  int64_t width = t.arrayElement().vectorWidth();
  v.type = Type::array(Type::scalar(t.arrayElement().scalarKind()), t.arrayLength() * width);
  v.a = Arith(width);
  v.children = {std::move(arrayOfVectors)};
  return make(std::move(v));
}

ViewPtr fillView(ViewPtr element, Arith count) {
  View v;
  v.kind = View::Kind::Fill;
  v.type = Type::array(element->type, count);
  v.children = {std::move(element)};
  return make(std::move(v));
}

ViewPtr mapView(ViewPtr array, Type elementType, std::function<ViewPtr(const ViewPtr&)> element) {
  const Type& t = requireArray(array->type, "map");
  View v;
  v.kind = View::Kind::Map;
  v.type = Type::array(std::move(elementType), t.arrayLength());
  v.elementView = std::move(element);
  v.children = {std::move(array)};
  return make(std::move(v));
}

std::string PadGuard::key() const {
  return index.toString() + (checkLow ? " <0" : "") + (checkHigh ? " >=" + length.toString() : "");
}

std::string PadGuard::conditionC() const {
  std::string condition;
  if (checkLow) condition = "(" + index.toC() + ") < 0";
  if (checkHigh) {
    if (!condition.empty()) condition += " || ";
    condition += "(" + index.toC() + ") >= " + length.toC();
  }
  return condition;
}

std::string BorderRead::key() const {
  return index.toString() + (checkLow ? " <0" : "") + (checkHigh ? " >=" + length.toString() : "");
}

ViewContext::ViewContext() : memo(std::make_unique<Memo>()) {}

ViewContext::~ViewContext() = default;

ViewPtr ViewContext::interned(const ViewPtr& view) { return intern(*memo, view); }

BorderReadScope::BorderReadScope(ViewContext& context, BorderReadRecorder& recorder)
    : context_(context), previous_(context.borderReads) {
  context.borderReads = &recorder;
}

BorderReadScope::~BorderReadScope() { context_.borderReads = previous_; }

FreshMemoScope::FreshMemoScope(ViewContext& context)
    : context_(context),
      saved_(std::exchange(context.memo, std::make_unique<ViewContext::Memo>())) {}

FreshMemoScope::~FreshMemoScope() { context_.memo = std::move(saved_); }

PadGuardScope::PadGuardScope(ViewContext& context, PadGuardRecorder& recorder)
    : context_(context), previous_(context.padGuards) {
  context.padGuards = &recorder;
}

PadGuardScope::~PadGuardScope() { context_.padGuards = previous_; }

ResolvedElement resolveElement(ViewContext& context, const ViewPtr& view,
                               std::vector<Arith> indices, std::vector<int> tuplePath,
                               std::optional<Arith> lane) {
  PadGuardRecorder* const padGuards = context.padGuards;
  if (!padGuards) return resolveShared(context, view, indices, tuplePath, std::move(lane));
  const size_t guardsBefore = padGuards->seen.size();
  ResolvedElement element = resolveShared(context, view, indices, tuplePath, std::move(lane));
  if (padGuards->seen.size() > guardsBefore) ++padGuards->guardedReads;
  return element;
}

std::string cTypeName(const Type& type) {
  if (type.isScalar()) {
    return type.scalarKind() == ScalarKind::Bool ? "bool" : scalarKindName(type.scalarKind());
  }
  if (type.isVector()) {
    return std::string(scalarKindName(type.scalarKind())) + std::to_string(type.vectorWidth());
  }
  fail("no C type for " + type.toString());
}

Arith scalarCount(const Type& type) {
  switch (type.kind()) {
    case TypeKind::Scalar:
      return Arith(1);
    case TypeKind::Vector:
      return Arith(type.vectorWidth());
    case TypeKind::Array:
      return type.arrayLength() * scalarCount(type.arrayElement());
    case TypeKind::Tuple:
      fail("tuples cannot be stored in memory (" + type.toString() + ")");
  }
  return Arith(1);
}

ScalarKind storedScalarKind(const Type& type) {
  switch (type.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
      return type.scalarKind() == ScalarKind::Float ? ScalarKind::Float : ScalarKind::Int;
    case TypeKind::Array:
      return storedScalarKind(type.arrayElement());
    case TypeKind::Tuple:
      fail("tuples cannot be stored in memory (" + type.toString() + ")");
  }
  return ScalarKind::Float;
}

const char* addressSpaceName(AddressSpace space) {
  switch (space) {
    case AddressSpace::Global:
      return "global";
    case AddressSpace::Local:
      return "local";
    case AddressSpace::Private:
      return "private";
  }
  return "?";
}

}  // namespace weft
