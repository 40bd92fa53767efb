// Implementation of views (codegen/views.h): constructors that record the viewed type, and
// the resolution of a view to one element as a C expression with a simplified index.
//
// Constant pads whose index may leave the array read through a guard (the pad value when it
// fires); a PadGuardScope records those guards, or takes the ones the caller checked outside
// a loop as satisfied or as firing (codegen's loop unswitching). Likewise a BorderReadScope
// records the indices of clamp and mirror pads that may leave the array, or reads those its
// caller proved inside (codegen's interior fast path) directly.
//
// Resolution follows LIFT's view printer (CGO'17, section 5.3): an index stack walked from the
// consumer towards memory, where each layout step rewrites the top indices. Every index is an
// `Arith`, so (i*4 + j)/4 style expressions simplify away when loop ranges allow it. A memory
// address (the sum of each index times its stride) is built with sumOfProducts, canonicalised
// once rather than after every + and *: unrolled loops resolve thousands of reads.
// Under a ResolveMemoScope, while guards are recorded, views are interned and whole reads are
// memoised (the same view, path, lane and status of the guard assumptions consulted: the same
// result and recorded guards).
#include "codegen/views.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <unordered_map>

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
  if (v.type) h = combineHash(h, v.type.hash());
  return h;
}

ViewPtr make(View view);  // below: interns views while a ResolveMemoScope is alive

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
         ") cannot be accessed in a private vector; store the vectors in memory or unroll");
  }
  return *value;
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

ResolvedElement resolve(const View& view, std::vector<Arith>& indices, std::vector<int>& path,
                        std::optional<Arith> lane);

// The innermost live PadGuardScope's recorder on this thread (null: none).
thread_local PadGuardRecorder* activePadGuards = nullptr;
// The innermost live BorderReadScope's recorder on this thread (null: none).
thread_local BorderReadRecorder* activeBorderReads = nullptr;

}  // namespace

namespace {

// Equal kinds and fields (not children; a Map's element function cannot be compared, so Map
// views never are).
bool sameFields(const View& x, const View& y) {
  if (x.kind != y.kind || x.kind == View::Kind::Map) return false;
  return x.a == y.a && x.b == y.b && x.index == y.index && x.component == y.component &&
         x.name == y.name && x.offset == y.offset && x.space == y.space &&
         x.vectorStorage == y.vectorStorage && x.boundary == y.boundary &&
         x.padValue == y.padValue && x.indexFunction == y.indexFunction && x.type == y.type;
}

}  // namespace

// ---- the memo of resolutions (ResolveMemoScope) ----------------------------------------------

// A guard assumption a resolution consulted: a constant pad's guard (in bounds, firing or
// neither) or a clamp/mirror pad's border read (inside or not), by key.
struct AssumptionUse {
  bool border = false;
  std::string key;
  int status = 0;
  bool operator==(const AssumptionUse&) const = default;
};

struct ResolveMemoScope::Memo {
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
  // Every view made while the scope is alive, one node per structure (hash-consing: a node's
  // children are interned already, so comparing them by pointer is comparing them whole).
  std::unordered_multimap<size_t, ViewPtr> interned;
};

namespace {

thread_local ResolveMemoScope::Memo* activeResolveMemo = nullptr;
// The assumptions consulted by the resolution under way (innermost memoised one); null: none.
thread_local std::vector<AssumptionUse>* activeAssumptionUses = nullptr;

// The status of a guard assumption now: pad guards 1 in bounds, 2 firing, 0 neither; border
// reads 1 inside, 0 not. Only called while the corresponding recorder is live.
int assumptionStatus(bool border, const std::string& key) {
  if (border) return activeBorderReads->assumedInside.count(key) ? 1 : 0;
  if (activePadGuards->assumedInBounds.count(key)) return 1;
  return activePadGuards->assumedFiring.count(key) ? 2 : 0;
}

// Adds to `uses` those of `more` it does not hold yet (a resolution consults few).
void addUses(std::vector<AssumptionUse>& uses, const std::vector<AssumptionUse>& more) {
  for (const AssumptionUse& use : more) {
    if (std::find(uses.begin(), uses.end(), use) == uses.end()) uses.push_back(use);
  }
}

// The status of the assumption `key`, noted as consulted by the resolutions under way.
int consultAssumption(bool border, const std::string& key) {
  const int status = assumptionStatus(border, key);
  if (activeAssumptionUses) addUses(*activeAssumptionUses, {{border, key, status}});
  return status;
}

// The memo, where it pays: while guards or border reads are recorded, i.e. in the bodies that
// loop unswitching and the interior fast path generate several times.
ResolveMemoScope::Memo* memoInUse() {
  return (activePadGuards || activeBorderReads) ? activeResolveMemo : nullptr;
}

// Equal kinds and fields, children the same nodes (interned children: equal views).
bool shallowSame(const View& x, const View& y) {
  return x.children == y.children && sameFields(x, y);
}

ViewPtr make(View view) {
  view.structuralHash = structuralHashOf(view);
  ResolveMemoScope::Memo* memo = memoInUse();
  if (!memo) return std::make_shared<const View>(std::move(view));
  auto [first, last] = memo->interned.equal_range(view.structuralHash);
  for (auto it = first; it != last; ++it) {
    if (shallowSame(*it->second, view)) return it->second;
  }
  ViewPtr made = std::make_shared<const View>(std::move(view));
  memo->interned.emplace(made->structuralHash, made);
  return made;
}

ResolvedElement resolveShared(const ViewPtr& view, std::vector<Arith>& indices,
                              std::vector<int>& path, std::optional<Arith> lane) {
  ResolveMemoScope::Memo* memo = memoInUse();
  if (!memo) return resolve(*view, indices, path, std::move(lane));
  ResolveMemoScope::Memo::Key key{view, indices, path, lane, activePadGuards != nullptr,
                                  activeBorderReads != nullptr};
  std::vector<ResolveMemoScope::Memo::Variant>& variants = memo->entries[key];
  for (const ResolveMemoScope::Memo::Variant& variant : variants) {
    bool holds = true;
    for (const AssumptionUse& use : variant.uses) {
      holds = holds && assumptionStatus(use.border, use.key) == use.status;
    }
    if (!holds) continue;
    if (activePadGuards) {
      for (const PadGuard& guard : variant.padGuards) activePadGuards->seen.push_back(guard);
    }
    if (activeBorderReads) {
      for (const BorderRead& read : variant.borderReads) activeBorderReads->seen.push_back(read);
    }
    if (activeAssumptionUses) addUses(*activeAssumptionUses, variant.uses);
    return variant.element;
  }
  const size_t guardsBefore = activePadGuards ? activePadGuards->seen.size() : 0;
  const size_t readsBefore = activeBorderReads ? activeBorderReads->seen.size() : 0;
  ResolveMemoScope::Memo::Variant variant;
  std::vector<AssumptionUse>* outer = activeAssumptionUses;
  activeAssumptionUses = &variant.uses;
  try {
    variant.element = resolve(*view, indices, path, std::move(lane));
  } catch (...) {
    activeAssumptionUses = outer;
    throw;
  }
  activeAssumptionUses = outer;
  if (outer) addUses(*outer, variant.uses);
  if (activePadGuards) {
    variant.padGuards.assign(
        activePadGuards->seen.begin() + static_cast<std::ptrdiff_t>(guardsBefore),
        activePadGuards->seen.end());
  }
  if (activeBorderReads) {
    variant.borderReads.assign(
        activeBorderReads->seen.begin() + static_cast<std::ptrdiff_t>(readsBefore),
        activeBorderReads->seen.end());
  }
  // `variants` may have moved if the resolution above added entries (rehash): look it up again.
  std::vector<ResolveMemoScope::Memo::Variant>& stored = memo->entries[key];
  stored.push_back(std::move(variant));
  return stored.back().element;
}

ResolvedElement resolveChild(const View& view, std::vector<Arith> indices, std::vector<int> path,
                             std::optional<Arith> lane, size_t child = 0) {
  return resolve(*view.children.at(child), indices, path, std::move(lane));
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
    result.vectorWidth = static_cast<int>(view.vectorStorage);
    result.expression = vector;
    return result;
  }
  if (lane) {
    result.expression = vector + laneSuffix(constantLane(*lane));
    return result;
  }
  result.expression = vector + laneSuffix(constantLane(offset % width));
  return result;
}

ResolvedElement resolveMemory(const View& view, std::vector<Arith>& indices,
                              const std::vector<int>& path, const std::optional<Arith>& lane) {
  if (!path.empty()) fail("tuples cannot be stored in memory (" + view.name + ")");
  Type type = view.type;
  std::vector<std::pair<Arith, Arith>> terms;  // index * the scalars of an element, summed once
  terms.reserve(indices.size());
  for (const Arith& index : indices) {
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
  if (type.isVector() && !lane) {
    result.offset = offset;
    result.vectorWidth = static_cast<int>(type.vectorWidth());
    result.expression = "vload" + std::to_string(type.vectorWidth()) + "(0, " + view.name +
                        " + " + offset.toC() + ")";
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

ResolvedElement resolve(const View& view, std::vector<Arith>& indices, std::vector<int>& path,
                        std::optional<Arith> lane) {
  switch (view.kind) {
    case View::Kind::Memory: return resolveMemory(view, indices, path, lane);
    case View::Kind::Variable:
    case View::Kind::Scalar: return resolveValue(view, indices, path, lane);
    case View::Kind::Access:
      indices.insert(indices.begin(), view.index);
      return resolveChild(view, indices, path, lane);
    case View::Kind::Split: {
      Arith i = popFront(indices, "split");
      Arith j = popFront(indices, "split");
      indices.insert(indices.begin(), i * view.a + j);
      return resolveChild(view, indices, path, lane);
    }
    case View::Kind::Join: {
      Arith i = popFront(indices, "join");
      indices.insert(indices.begin(), {i / view.a, i % view.a});
      return resolveChild(view, indices, path, lane);
    }
    case View::Kind::Slide: {
      Arith i = popFront(indices, "slide");
      Arith j = popFront(indices, "slide");
      indices.insert(indices.begin(), i * view.b + j);
      return resolveChild(view, indices, path, lane);
    }
    case View::Kind::Crop: {
      Arith i = popFront(indices, "crop");
      indices.insert(indices.begin(), i + view.a);
      return resolveChild(view, indices, path, lane);
    }
    case View::Kind::Transpose: {
      Arith i = popFront(indices, "transpose");
      Arith j = popFront(indices, "transpose");
      indices.insert(indices.begin(), {j, i});
      return resolveChild(view, indices, path, lane);
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
      return resolveChild(view, indices, path, lane);
    }
    case View::Kind::Pad: {
      Arith i = popFront(indices, "pad");
      Arith n = view.b;
      Arith k = i - view.a;
      bool aboveZero = proveNonNegative(k);
      bool belowEnd = proveLess(k, n);
      bool firing = false;  // the caller checked that the index is outside the array
      if (view.boundary == Boundary::Constant && !(aboveZero && belowEnd) && activePadGuards) {
        PadGuard guard{k, n, !aboveZero, !belowEnd};
        const int status = consultAssumption(/*border=*/false, guard.key());
        if (status == 1) {
          aboveZero = belowEnd = true;  // checked by the caller outside the loop
        } else if (status == 2) {
          firing = true;
        } else {
          activePadGuards->seen.push_back(std::move(guard));
        }
      }
      if (view.boundary != Boundary::Constant && !(aboveZero && belowEnd) && activeBorderReads) {
        BorderRead read{k, n, !aboveZero, !belowEnd};
        if (consultAssumption(/*border=*/true, read.key()) == 1) {
          aboveZero = belowEnd = true;  // the caller checked it for the whole work-group
        } else {
          activeBorderReads->seen.push_back(std::move(read));
        }
      }
      if (aboveZero && belowEnd) {
        indices.insert(indices.begin(), k);
        return resolveChild(view, indices, path, lane);
      }
      switch (view.boundary) {
        case Boundary::Clamp:
          indices.insert(indices.begin(), min(max(k, Arith(0)), n - 1));
          return resolveChild(view, indices, path, lane);
        case Boundary::Mirror:
          // Reflection repeating the edge: -1 -> 0, -2 -> 1, n -> n-1, n+1 -> n-2.
          indices.insert(indices.begin(),
                         ifLess(k, Arith(0), -1 - k, ifLess(k, n, k, 2 * n - 1 - k)));
          return resolveChild(view, indices, path, lane);
        case Boundary::Constant: {
          indices.insert(indices.begin(), k);
          ResolvedElement inner = resolveChild(view, indices, path, lane);  // its width, if firing
          std::string value = literalC(view.padValue, storedScalarKind(view.type));
          if (inner.vectorWidth > 0) {
            value = "(" + std::string(storedScalarKind(view.type) == ScalarKind::Float ? "float"
                                                                                        : "int") +
                    std::to_string(inner.vectorWidth) + ")(" + value + ")";
          }
          ResolvedElement result;
          result.vectorWidth = inner.vectorWidth;
          if (firing) {
            result.expression = value;
            return result;
          }
          result.arrays = std::move(inner.arrays);
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
      return resolveChild(view, indices, path, lane, static_cast<size_t>(component));
    }
    case View::Kind::Get:
      path.insert(path.begin(), view.component);
      return resolveChild(view, indices, path, lane);
    case View::Kind::AsVector: {
      Arith k = popFront(indices, "asVector");
      Arith width = view.a;
      if (lane) {
        indices.insert(indices.begin(), k * width + *lane);
        return resolveChild(view, indices, path, std::nullopt);
      }
      int64_t w = *width.constant();
      std::vector<ResolvedElement> lanes;
      for (int64_t t = 0; t < w; ++t) {
        std::vector<Arith> laneIndices = indices;
        laneIndices.insert(laneIndices.begin(), k * width + t);
        std::vector<int> pathCopy = path;
        lanes.push_back(resolve(*view.children[0], laneIndices, pathCopy, std::nullopt));
      }
      bool contiguous = true;
      for (int64_t t = 0; t < w && contiguous; ++t) {
        contiguous = lanes[t].isMemory && lanes[t].vectorWidth == 0 &&
                     lanes[t].base == lanes[0].base && lanes[t].offset - lanes[0].offset == t;
      }
      ResolvedElement result;
      result.vectorWidth = static_cast<int>(w);
      if (contiguous) {
        result.isMemory = true;
        result.base = lanes[0].base;
        result.space = lanes[0].space;
        result.offset = lanes[0].offset;
        result.expression = "vload" + std::to_string(w) + "(0, " + result.base + " + " +
                            result.offset.toC() + ")";
        result.arrays.push_back({result.base, false});
        return result;
      }
      std::string text = "(" + cTypeName(view.type.arrayElement()) + ")(";
      for (int64_t t = 0; t < w; ++t) text += (t ? ", " : "") + lanes[t].expression;
      for (ResolvedElement& laneElement : lanes) {
        for (ResolvedElement::ArrayUse& use : laneElement.arrays) {
          result.arrays.push_back(std::move(use));
        }
      }
      result.expression = text + ")";
      return result;
    }
    case View::Kind::AsScalar: {
      if (lane) fail("asScalar: a lane of a scalar was requested");
      Arith i = popFront(indices, "asScalar");
      indices.insert(indices.begin(), i / view.a);
      return resolveChild(view, indices, path, i % view.a);
    }
    case View::Kind::Fill:
      popFront(indices, "fill");
      return resolveChild(view, indices, path, lane);
    case View::Kind::Map: {
      Arith i = popFront(indices, "map");
      ViewPtr element = view.elementView(accessView(view.children[0], i));
      return resolve(*element, indices, path, lane);
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
  v.type = Type::array(Type::array(t.arrayElement(), size),
                       (t.arrayLength() - size + step) / step);
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

ViewPtr transposeView(ViewPtr arrayOfArrays) {
  const Type& outer = requireArray(arrayOfArrays->type, "transpose");
  const Type& inner = requireArray(outer.arrayElement(), "transpose");
  View v;
  v.kind = View::Kind::Transpose;
  v.type = Type::array(Type::array(inner.arrayElement(), outer.arrayLength()),
                       inner.arrayLength());
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

ViewPtr mapView(ViewPtr array, Type elementType,
                std::function<ViewPtr(const ViewPtr&)> element) {
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

BorderReadScope::BorderReadScope(BorderReadRecorder& recorder) : previous_(activeBorderReads) {
  activeBorderReads = &recorder;
}

BorderReadScope::~BorderReadScope() { activeBorderReads = previous_; }

PadGuardScope::PadGuardScope(PadGuardRecorder& recorder) : previous_(activePadGuards) {
  activePadGuards = &recorder;
}

PadGuardScope::~PadGuardScope() { activePadGuards = previous_; }

ResolveMemoScope::ResolveMemoScope()
    : memo_(std::make_unique<Memo>()), previous_(activeResolveMemo) {
  activeResolveMemo = memo_.get();
}

ResolveMemoScope::~ResolveMemoScope() { activeResolveMemo = previous_; }

ResolvedElement resolveElement(const ViewPtr& view, std::vector<Arith> indices,
                               std::vector<int> tuplePath, std::optional<Arith> lane) {
  if (!activePadGuards) return resolveShared(view, indices, tuplePath, std::move(lane));
  const size_t guardsBefore = activePadGuards->seen.size();
  ResolvedElement element = resolveShared(view, indices, tuplePath, std::move(lane));
  if (activePadGuards->seen.size() > guardsBefore) ++activePadGuards->guardedReads;
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
    case TypeKind::Scalar: return Arith(1);
    case TypeKind::Vector: return Arith(type.vectorWidth());
    case TypeKind::Array: return type.arrayLength() * scalarCount(type.arrayElement());
    case TypeKind::Tuple: fail("tuples cannot be stored in memory (" + type.toString() + ")");
  }
  return Arith(1);
}

ScalarKind storedScalarKind(const Type& type) {
  switch (type.kind()) {
    case TypeKind::Scalar:
    case TypeKind::Vector:
      return type.scalarKind() == ScalarKind::Float ? ScalarKind::Float : ScalarKind::Int;
    case TypeKind::Array: return storedScalarKind(type.arrayElement());
    case TypeKind::Tuple: fail("tuples cannot be stored in memory (" + type.toString() + ")");
  }
  return ScalarKind::Float;
}

const char* addressSpaceName(AddressSpace space) {
  switch (space) {
    case AddressSpace::Global: return "global";
    case AddressSpace::Local: return "local";
    case AddressSpace::Private: return "private";
  }
  return "?";
}

}  // namespace weft
