// Memory and address spaces for computed values. toGlobal/toLocal/toPrivate on the way down
// through maps and layout primitives name the space (requestedSpace); otherwise a value is
// private when small and of known size, else global (barriers.cpp's materialize decides).
// allocate declares the memory: a private array of constant size (of vectors: one vector per
// element, so that it can become vector registers), a local array (or a local buffer argument
// of symbolic size), or a global temporary buffer, each with one region per enclosing
// work-item that writes it. Tuples are stored as a structure of arrays (tuple_memory.h).
// allocateOwnedAccumulator declares an accumulator whose leading levels the work-items own
// (gen_support.h's workItemOwnedDims): each work-item's private array holds its own part.
#include "codegen/generator.h"
#include "codegen/tuple_memory.h"

namespace weft::opencl {

// Which address space a computed array is placed in: toGlobal/toLocal/toPrivate on the way
// down through maps and layout primitives decide; nullopt if none is named.
std::optional<AddressSpace> Generator::requestedSpace(const Expr& e) {
  if (!e.isPrim()) return std::nullopt;
  switch (e.primOp()) {
    case Op::ToGlobal:
      return AddressSpace::Global;
    case Op::ToLocal:
      return AddressSpace::Local;
    case Op::ToPrivate:
      return AddressSpace::Private;
    case Op::Id:
    case Op::Join:
    case Op::Split:
    case Op::Transpose:
    case Op::AsScalar:
    case Op::AsVector:
      return requestedSpace(e.args()[0]);
    default:
      break;
  }
  if (isMapFamily(e.primOp()) || e.primOp() == Op::Let) {
    const Expr& f = e.funs()[0];
    if (f.isLambda()) return requestedSpace(f.body());
  }
  return std::nullopt;
}

bool Generator::insideKind(Op op) const {
  return std::any_of(loops_.begin(), loops_.end(), [&](const LoopFrame& f) { return f.op == op; });
}

// Memory for a value of `type` in `space`, declared in the kernel. Memory written inside
// parallel maps needs one region per enclosing work-item (local: per mapLcl iteration inside
// the work-group; global: per mapGlb/mapWrg/mapLcl iteration); sequential iterations of one
// work-item reuse the same region.
ViewPtr Generator::allocate(const Type& type, AddressSpace space, const Expr& at,
                            const std::string& privateStem) {
  // Tuples are stored as a structure of arrays: one array per component, of the same shape,
  // and the memory's view is the zip of the component views.
  if (holdsTuples(type)) {
    std::vector<ViewPtr> components;
    for (size_t k = 0; k < tupleArity(type); ++k) {
      components.push_back(allocate(componentType(type, k), space, at, privateStem));
    }
    return zipOfComponents(std::move(components), type);
  }
  Arith count = scalarCount(type);
  std::string element = storedScalarKindOrFail(type, at) == ScalarKind::Float ? "float" : "int";
  if (space == AddressSpace::Private) {
    if (!count.constant()) {
      if (!options_.symbolicPrivateArrays) {
        fail(at, "a private array needs a size known at compile time, found " + type.toString());
      }
      // Analysis only: declared with its symbolic length (never compiled), counted apart.
      std::string name = fresh(privateStem);
      symbolicPrivateScalars_ = symbolicPrivateScalars_ + count;
      emitter_.line(element + " " + name + "[" + count.toString() + "];");
      return memoryView(name, type, AddressSpace::Private);
    }
    std::string name = fresh(privateStem);
    privateArrayScalars_ += *count.constant();
    privateArraySizes_.push_back(*count.constant());
    // An array of vectors is declared as one (floatN name[n]): its elements are read and
    // written whole, with no vloadN/vstoreN through a pointer, so that once every index is
    // a constant promotePrivateArrays turns them into vector variables (registers).
    Type innermost = type;
    while (innermost.isArray()) innermost = innermost.arrayElement();
    if (innermost.isVector()) {
      const int64_t width = innermost.vectorWidth();
      const std::string vectorElement = element + std::to_string(width);
      const int64_t vectors = *count.constant() / width;
      emitter_.line(vectorElement + " " + name + "[" + std::to_string(vectors) + "];");
      privateArrays_.push_back({name, vectorElement, vectors});
      return memoryView(name, type, AddressSpace::Private, Arith(0), width);
    }
    emitter_.line(element + " " + name + "[" + std::to_string(*count.constant()) + "];");
    privateArrays_.push_back({name, element, *count.constant()});
    return memoryView(name, type, AddressSpace::Private);
  }
  Arith copies(1);
  Arith offset(0);
  for (auto it = loops_.rbegin(); it != loops_.rend(); ++it) {
    if (space == AddressSpace::Local && it->op == Op::MapWrg) break;
    if (!isParallelMap(it->op)) continue;
    offset = offset + it->index * copies * count;
    copies = copies * it->tripCount;
  }
  Arith total = copies * count;
  std::string name = fresh(space == AddressSpace::Local ? "l" : "g");
  if (space == AddressSpace::Local) {
    if (!launch_.usesGroups) fail(at, "local memory needs mapWrg/mapLcl");
    if (total.constant()) {
      staticLocalBytes_ += *total.constant() * 4;
      localDeclarations_.push_back("local " + element + " " + name + "[" +
                                   std::to_string(*total.constant()) + "];");
    } else {
      localArgs_.push_back({name, total * 4, element});
    }
  } else {
    BufferPlan buffer;
    buffer.name = name;
    buffer.role = BufferPlan::Role::Temporary;
    buffer.type = type;
    buffer.element = storedScalarKindOrFail(type, at);
    buffer.elementCount = total;
    int index = addBuffer(std::move(buffer));
    usedBuffers_.insert(index);
  }
  return memoryView(name, type, space, offset);
}

// An accumulator of `type` whose leading levels belong to the work-items of local dimensions
// `ownerDims` (one work-item per element: each level's length is its dimension's local size),
// in each work-item's private memory: only its own part is declared.
ViewPtr Generator::allocateOwnedAccumulator(const Type& type, const std::vector<int>& ownerDims,
                                            const Expr& at) {
  Type part = type;
  for (int d : ownerDims) {
    if (!part.isArray()) fail(at, "the accumulator has fewer levels than the mapLcl nest");
    const Arith& local = launch_.localSize[static_cast<size_t>(d)];
    if (!(part.arrayLength() == local)) {
      fail(at, "the accumulator's level of mapLcl(" + std::to_string(d) + ") has " +
                   part.arrayLength().toString() + " elements but the work-group " + local.toString() +
                   " work-items in that dimension: each work-item owns one element");
    }
    part = part.arrayElement();
  }
  if (holdsTuples(part)) fail(at, "an accumulator of tuples cannot be split among work-items");
  if (part.isScalar() || part.isVector()) part = Type::array(part, Arith(1));
  const Arith count = storedScalars(part);
  if (!count.constant() || *count.constant() > options_.maxPrivateScalars) {
    fail(at, "each work-item's part of the accumulator, " + part.toString() +
                 ", must be private memory of a known size of at most " +
                 std::to_string(options_.maxPrivateScalars) + " values");
  }
  // (A scalar part is declared as a one-element array; the whole array's view reaches its
  // element 0 once the owned levels are dropped.)
  ViewPtr own = allocate(part, AddressSpace::Private, at, "acc");
  return distributedPrivateView(own, type, ownerDims);
}

}  // namespace weft::opencl
