// Statements: genWrite(e, dest) emits what computes e into the view dest (destination
// passing). Scalars and vectors are assigned (assign: a store, a vstoreN, or lane by lane through
// a non-contiguous view); maps become loops (loops.cpp) writing element i of the destination;
// reductions keep an accumulator (a variable, or a private or global array) and copy it to the
// destination at the end; mapSeqSlide keeps its window of producer values in a private ring; a
// reduce whose initial value is the enclosing reduce step's private accumulator (read only
// there, no loop in between: reduce-nest-inner-level's inner reduce) updates it in place, so
// no second array is allocated and loop unswitching still applies. A reduce whose step is a
// mapLcl nest keeps each work-item's part of its accumulator in that work-item's private
// memory (gen_support.h's workItemOwnedDims).
// Lets and applications bind views; a function that only rearranges its argument writes the
// argument through the inverse view. A tuple expression's scalar components are evaluated into
// temporaries before any is stored (a reduce's tuple accumulator may swap them); a tuple
// computed by anything else (a user function) cannot be stored; a zip of computed arrays is
// written array by array into the components of its destination. Every read and write notes the
// buffers it reaches (kernel_text.cpp).
#include "codegen/generator.h"
#include "codegen/tuple_memory.h"

namespace weft::opencl {

namespace {

bool isPrivateArray(const ViewPtr& view) {
  return view->kind == View::Kind::Memory && view->space == AddressSpace::Private;
}

}  // namespace

// Writes a tuple-typed value component by component. The components of a tuple expression
// with scalar or vector components are all evaluated into temporaries before any is stored,
// as the destination may be one of their operands (a reduction's accumulator).
void Generator::genTupleWrite(const Expr& e, const ViewPtr& dest) {
  const Type& type = typeOf(e);
  const auto& parts = type.tupleElements();
  if (e.isPrim(Op::Tuple)) {
    std::vector<std::optional<std::string>> values(parts.size());
    for (size_t k = 0; k < parts.size(); ++k) {
      if (!parts[k].isScalar() && !parts[k].isVector()) continue;
      std::string name = fresh("tc");
      emitter_.line(cTypeName(parts[k]) + " " + name + " = " + genScalar(e.args()[k]) + ";");
      noteTemporary(parts[k]);
      values[k] = name;
    }
    for (size_t k = 0; k < parts.size(); ++k) {
      ViewPtr component = getView(dest, static_cast<int>(k));
      if (values[k]) {
        assign(component, *values[k], parts[k], e);
      } else {
        genWrite(e.args()[k], component);
      }
    }
    return;
  }
  if (!computes(e)) {
    copy(genView(e), dest, type, e);
    return;
  }
  // (Let, Apply and toGlobal/toLocal/toPrivate of a lambda go through genWrite's own cases.)
  fail(e, "tuples cannot be stored in memory from " +
              std::string(e.isPrim() ? e.primInfo().name : "a function") +
              " yet (only from tuple expressions, lets, applications and stored tuples)");
}

// ---- statements --------------------------------------------------------------------------
void Generator::genWrite(const Expr& e, const ViewPtr& dest) {
  const Type& type = typeOf(e);
  if (type.isScalar() || type.isVector()) {
    assign(dest, genScalar(e), type, e);
    return;
  }
  if (type.isTuple()) {
    const bool viaFunction =
        e.isPrim() && computes(e) && !e.isPrim(Op::Tuple) &&
        (e.primOp() == Op::Let || e.primOp() == Op::Apply || e.primOp() == Op::ToGlobal ||
         e.primOp() == Op::ToLocal || e.primOp() == Op::ToPrivate);
    if (!viaFunction) {
      genTupleWrite(e, dest);
      return;
    }
  }
  if (!computes(e)) {
    copy(genView(e), dest, type, e);
    return;
  }
  Op op = e.primOp();
  if (isLayoutMap(e)) {
    if (ViewPtr through = inverseLayout(e, dest)) {
      genWrite(e.args()[0], through);
      return;
    }
  }
  if (isMapFamily(op)) {
    genMap(e, genView(e.args()[0]), dest);
    return;
  }
  if (isReduceFamily(op)) {
    genReduce(e, dest);
    return;
  }
  if (op == Op::MapSeqSlide) {
    genMapSeqSlide(e, dest);
    return;
  }
  switch (op) {
    case Op::Let:
      bind(e.funs()[0].params()[0], genView(e.args()[0]));
      genWrite(e.funs()[0].body(), dest);
      return;
    case Op::Apply:
    case Op::ToGlobal:
    case Op::ToLocal:
    case Op::ToPrivate:
      genApplyWrite(e.funs()[0], e.args(), dest, e);
      return;
    case Op::Zip: {
      // Each zipped array written into its component of the destination's elements (tuples
      // are stored as a structure of arrays), with no temporary for the computed ones. A zip
      // of views only is copied element by element below.
      bool computed = false;
      for (const Expr& x : e.args()) computed = computed || computes(x);
      if (!computed) {
        copy(genView(e), dest, type, e);
        return;
      }
      for (size_t k = 0; k < e.args().size(); ++k) {
        const Type component = typeOf(e.args()[k]);
        genWrite(e.args()[k],
                 mapView(dest, component.arrayElement(), [k](const ViewPtr& element) {
                   return getView(element, static_cast<int>(k));
                 }));
      }
      return;
    }
    default:
      if (ViewPtr through = inverseLayout(e, dest)) {
        genWrite(e.args()[0], through);
        return;
      }
      // Other layout primitives over computed values: compute, then copy through the view.
      copy(genView(e), dest, type, e);
      return;
  }
}

void Generator::bindArguments(const Expr& lambda, const std::vector<Expr>& args) {
  const auto& params = lambda.params();
  if (params.size() != args.size()) fail(lambda, "wrong number of arguments");
  std::vector<ViewPtr> views;
  for (const Expr& a : args) views.push_back(genView(a));
  for (size_t i = 0; i < params.size(); ++i) bind(params[i], views[i]);
}

void Generator::genApplyWrite(const Expr& f, const std::vector<Expr>& args, const ViewPtr& dest,
                              const Expr& at) {
  // A function that only rearranges its argument (id, toGlobal(id), join, ...): the argument
  // is written straight through the inverse view, with no intermediate copy.
  if (f.isLambda() && args.size() == 1 && computes(args[0]) &&
      invertibleChain(f.body(), f.params()[0])) {
    genWrite(args[0], invertChain(f.body(), f.params()[0], dest));
    return;
  }
  if (f.isLambda()) {
    bindArguments(f, args);
    genWrite(f.body(), dest);
    return;
  }
  const Type& type = typeOf(at);
  assign(dest, genScalar(at), type, at);
}

// Applies a function to already-built argument views, writing the result to dest.
void Generator::genApplyViews(const Expr& f, const std::vector<ViewPtr>& args, const ViewPtr& dest,
                              const Expr& at) {
  if (f.isLambda()) {
    for (size_t i = 0; i < args.size(); ++i) bind(f.params()[i], args[i]);
    genWrite(f.body(), dest);
    return;
  }
  std::vector<std::string> values;
  for (const ViewPtr& a : args) values.push_back(readValue(a, at));
  assign(dest, callUserFun(f, values, 0), f.userFunResultType(), at);
}

std::string Generator::readValue(const ViewPtr& view, const Expr& at) {
  ResolvedElement element;
  try {
    element = resolveElement(views_, view, {});
  } catch (const CodegenError& e) {
    fail(at, e.what());
  }
  noteView(view);  // a user function applied to a temporary needs it as a kernel argument
  emitter_.named.note(element);
  noteGlobalAccess(element, /*written=*/false, at);
  return element.expression;
}

void Generator::genMap(const Expr& e, const ViewPtr& input, const ViewPtr& dest) {
  Op op = e.primOp();
  int dim = isParallelMap(op) ? static_cast<int>(*e.nats()[0].constant()) : 0;
  if (op == Op::Map) op = Op::MapSeq;
  const Expr& f = e.funs()[0];
  Arith n = typeOf(e.args()[0]).arrayLength();
  loop(
      op, dim, n, e,
      [&](const Arith& i) { genApplyViews(f, {accessView(input, i)}, accessView(dest, i), e); },
      flattenFactors(e.args()[0]));
}

// mapSeqSlide(n, f, g, xs): one sequential loop over the windows that keeps the last n values
// of g in a private array used as a ring: value m of g lives in slot m % n, so the window of
// output i is slots (i + k) % n, k = 0 .. n - 1. The first n - 1 values are computed before the
// loop, one more per output. With a constant number of outputs the loop body is unrolled n
// times (and the last outputs, fewer than n, follow it unrolled): every slot index is then a
// constant, nothing is copied from slot to slot, and promotePrivateArrays keeps the ring in
// registers when f reads it at constant indices. With a symbolic count (a space's analysis)
// the window is shifted down by one slot after each output instead (copies between constant
// slots). Each g(x) is computed once.
void Generator::genMapSeqSlide(const Expr& e, const ViewPtr& dest) {
  const std::optional<int64_t> size = e.nats()[0].constant();
  if (!size || *size < 1) fail(e, "mapSeqSlide needs a constant window size");
  const int64_t n = *size;
  const Expr& f = e.funs()[0];
  const Expr& g = e.funs()[1];
  const Type produced = g.isLambda() ? typeOf(g.body()) : g.userFunResultType();
  ViewPtr input = genView(e.args()[0]);
  // A producer whose value is asScalar of vectors (a row computed in vector lanes) keeps its
  // ring as those vectors: declared floatN win[..], each slot written whole by the producer
  // without the asScalar, so that scalar promotion makes the ring vector registers; the
  // consumer reads each slot through asScalar (its vector reads of a slot are the slot's
  // vector variables again, views.cpp).
  Expr producer = g;
  Type stored = produced;
  bool vectorSlots = false;
  if (g.isLambda() && g.body().isPrim(Op::AsScalar)) {
    const Type lanes = typeOf(g.body().args()[0]);
    if (lanes.isArray() && lanes.arrayElement().isVector()) {
      producer = Expr::lambda(g.params(), g.body().args()[0]);
      stored = lanes;
      vectorSlots = true;
    }
  }
  ViewPtr ring = allocate(Type::array(stored, Arith(n)), AddressSpace::Private, e, "win");
  auto storedSlot = [&](int64_t m) { return accessView(ring, Arith(m % n)); };
  auto slot = [&](int64_t m) { return vectorSlots ? asScalarView(storedSlot(m)) : storedSlot(m); };
  for (int64_t k = 0; k + 1 < n; ++k) {
    genApplyViews(producer, {accessView(input, Arith(k))}, storedSlot(k), e);
  }
  const Arith outputs = typeOf(e).arrayLength();
  // Output i = base + j, with i % n == j % n: g's next value, then f on the window.
  auto step = [&](const Arith& base, int64_t j) {
    const Arith i = base + Arith(j);
    genApplyViews(producer, {accessView(input, i + Arith(n - 1))}, storedSlot(j + n - 1), e);
    std::vector<ViewPtr> window;
    for (int64_t k = 0; k < n; ++k) window.push_back(slot(j + k));
    genApplyViews(f, {elementsView(std::move(window))}, accessView(dest, i), e);
  };
  if (const std::optional<int64_t> count = outputs.constant()) {
    if (*count >= n) {
      loop(Op::MapSeq, 0, Arith(*count / n), e, [&](const Arith& q) {
        for (int64_t j = 0; j < n; ++j) step(q * Arith(n), j);
      });
    }
    for (int64_t j = 0; j < *count % n; ++j) step(Arith(*count - *count % n), j);
    return;
  }
  std::vector<ViewPtr> window;
  for (int64_t k = 0; k < n; ++k) window.push_back(slot(k));
  const ViewPtr ringRead = elementsView(std::move(window));
  loop(Op::MapSeq, 0, outputs, e, [&](const Arith& i) {
    genApplyViews(producer, {accessView(input, i + Arith(n - 1))}, storedSlot(n - 1), e);
    genApplyViews(f, {ringRead}, accessView(dest, i), e);
    for (int64_t k = 0; k + 1 < n; ++k) {
      copy(storedSlot(k + 1), storedSlot(k), stored, e, /*fromPrivate=*/true);
    }
  });
}

void Generator::genReduce(const Expr& e, const ViewPtr& dest) {
  const Expr& init = e.args()[0];
  const Expr& f = e.funs()[0];
  const Expr& xs = e.args()[1];
  const Type& accType = typeOf(init);
  ViewPtr input = genView(xs);
  ViewPtr acc;
  int64_t accumulatorScalars = 0;
  auto enclosing =
      init.isParam() ? inPlaceAccumulators_.find(init.paramId()) : inPlaceAccumulators_.end();
  const bool inPlace = enclosing != inPlaceAccumulators_.end() &&
                       enclosing->second == loops_.size() && !accType.isScalar() &&
                       !accType.isVector() && isPrivateArray(lookup(init));
  if (inPlace) {
    // The initial value is the accumulator of the enclosing reduce's step, read nowhere else
    // and with no loop in between (reduce-nest-inner-level's inner reduce: (acc, row) ->
    // join(reduce(acc, f, row))): it is updated in place — no second array, no copies, no
    // second share of the register estimate; the step's result is written back to it.
    acc = lookup(init);
  } else if (accType.isScalar() || accType.isVector()) {
    std::string name = fresh("acc");
    emitter_.line(cTypeName(accType) + " " + name + " = " + genScalar(init) + ";");
    acc = variableView(name, accType);
    accumulatorScalars = accType.isVector() ? accType.vectorWidth() : 1;
    noteTemporary(accType);
  } else if (std::vector<int> owners = workItemOwnedDims(e);
             !owners.empty() && insideKind(Op::MapWrg) && !insideKind(Op::MapLcl)) {
    // The step updates the accumulator with a mapLcl nest: each work-item keeps its own part
    // in private memory across the steps (the steps' local staging between them).
    acc = allocateOwnedAccumulator(accType, owners, e);
    genWrite(init, acc);
  } else {
    // Array accumulators live in private memory when small and of known size, else in
    // global memory (one region per work-item). Each work-item keeps the whole accumulator,
    // so an initial value written by mapLcl would fill only the work-item's part of it.
    if (containsOp(init, [](Op op) { return op == Op::MapLcl; })) {
      fail(init,
           "a reduction's accumulator that every work-item keeps whole cannot be initialised by "
           "mapLcl (each work-item would write only its part of it)");
    }
    Arith count = storedScalars(accType);
    bool small = count.constant() && *count.constant() <= options_.maxPrivateScalars;
    acc = allocate(accType, small ? AddressSpace::Private : AddressSpace::Global, e, "acc");
    genWrite(init, acc);
  }
  Op loopOp = e.primOp() == Op::ReduceSeqUnroll ? Op::ReduceSeqUnroll : Op::ReduceSeq;
  Arith n = typeOf(xs).arrayLength();
  liveAccumulatorScalars_ += accumulatorScalars;
  maxLiveAccumulatorScalars_ = std::max(maxLiveAccumulatorScalars_, liveAccumulatorScalars_);
  // A step that reads its accumulator once may hand it to an inner reduce to update in
  // place (above), when that reduce runs once per step: no loop opened in between.
  const bool handsOver = f.isLambda() && !accType.isScalar() && !accType.isVector() &&
                         isPrivateArray(acc) && paramUses(f.body(), f.params()[0]) == 1;
  loop(
      loopOp, 0, n, e,
      [&](const Arith& i) {
        if (handsOver) inPlaceAccumulators_[f.params()[0].paramId()] = loops_.size();
        genApplyViews(f, {acc, accessView(input, i)}, acc, e);
        if (handsOver) inPlaceAccumulators_.erase(f.params()[0].paramId());
      },
      flattenFactors(xs));
  liveAccumulatorScalars_ -= accumulatorScalars;
  copy(acc, accessView(dest, Arith(0)), accType, e);
}

// Stores `value` (a vector) into the memory vector `target` (vectorWidth > 0) with vstoreN, or
// a non-temporal store where CodegenOptions::streamingStores allows one; under the target's
// write guards, if any.
void Generator::assignResolved(const ResolvedElement& target, const std::string& value,
                               const Type& type) {
  emitter_.named.note(target);
  const std::string address = target.base + " + " + c(target.offset);
  // CodegenOptions::streamingStores: a non-temporal store needs the vector's own alignment,
  // which a buffer's start has (CL_DEVICE_MEM_BASE_ADDR_ALIGN is at least 128 bytes) and an
  // offset that is a multiple of the width keeps.
  const bool alignedGlobal = target.space == AddressSpace::Global &&
                             proveDivides(Arith(target.vectorWidth), target.offset);
  if (alignedGlobal) ++program_.alignedVectorStoreSites;
  if (options_.streamingStores && alignedGlobal) {
    emitStore(target, "__builtin_nontemporal_store(" + value + ", (global " + cTypeName(type) +
                          "*)(" + address + "));");
    return;
  }
  emitStore(target,
            "vstore" + std::to_string(target.vectorWidth) + "(" + value + ", 0, " + address + ");");
}

// Writes `value` (a C expression of a scalar or vector type) to the element `dest`.
void Generator::assign(const ViewPtr& dest, const std::string& value, const Type& type,
                       const Expr& at) {
  ResolvedElement target;
  try {
    target = resolveElement(views_, dest, {});
  } catch (const CodegenError& error) {
    fail(at, error.what());
  }
  if (target.isMemory) noteBuffer(target.base, /*written=*/true);
  noteGlobalAccess(target, /*written=*/true, at);
  if (target.isMemory && target.vectorWidth > 0 && !target.laneWrites.empty()) {
    // A vector through an uncrop view: whole where no lane's guard fires, else lane by lane.
    std::string outside;
    for (const PadGuard& guard : target.writeGuards) {
      mentionedSizes_.push_back(guard.index);
      mentionedSizes_.push_back(guard.length);
      outside += (outside.empty() ? "" : " || ") + guard.conditionC();
    }
    const std::string name = fresh("v");
    emitter_.line(cTypeName(type) + " " + name + " = " + value + ";");
    emitter_.line("if (!(" + outside + ")) {");
    ++emitter_.indent;
    ResolvedElement whole = target;
    whole.writeGuards.clear();
    whole.laneWrites.clear();
    assignResolved(whole, name, type);
    --emitter_.indent;
    emitter_.line("} else {");
    ++emitter_.indent;
    for (size_t lane = 0; lane < target.laneWrites.size(); ++lane) {
      const ResolvedElement& laneTarget = target.laneWrites[lane];
      mentionedSizes_.push_back(laneTarget.offset);
      noteGlobalAccess(laneTarget, /*written=*/true, at);
      char suffix[24];
      std::snprintf(suffix, sizeof suffix, ".s%zx", lane);
      emitter_.named.note(laneTarget);
      emitStore(laneTarget, laneTarget.expression + " = " + name + suffix + ";");
    }
    --emitter_.indent;
    emitter_.line("}");
    return;
  }
  if (target.isMemory && target.vectorWidth > 0) {
    assignResolved(target, value, type);
    return;
  }
  if (target.isVariable && value == target.expression && target.writeGuards.empty()) {
    return;  // acc = acc (a zero product)
  }
  if (target.isMemory || target.isVariable) {
    if (target.isMemory) mentionedSizes_.push_back(target.offset);
    noteBuffer(target.base, /*written=*/true);
    emitter_.named.note(target);
    emitStore(target, target.expression + " = " + value + ";");
    return;
  }
  if (type.isVector()) {
    // Not contiguous: store lane by lane.
    std::string name = fresh("v");
    emitter_.line(cTypeName(type) + " " + name + " = " + value + ";");
    for (int64_t lane = 0; lane < type.vectorWidth(); ++lane) {
      ResolvedElement laneTarget = resolveElement(views_, dest, {}, {}, Arith(lane));
      if (!laneTarget.isMemory && !laneTarget.isVariable) {
        fail(at, "cannot write through this view (pad, fill or a computed value)");
      }
      if (laneTarget.isMemory) {
        mentionedSizes_.push_back(laneTarget.offset);
        noteBuffer(laneTarget.base, /*written=*/true);
        noteGlobalAccess(laneTarget, /*written=*/true, at);
      }
      char suffix[24];
      std::snprintf(suffix, sizeof suffix, ".s%llx", static_cast<unsigned long long>(lane));
      emitter_.named.note(laneTarget);
      emitStore(laneTarget, laneTarget.expression + " = " + name + suffix + ";");
    }
    return;
  }
  fail(at, "cannot write through this view (pad, slide, fill or a computed value)");
}

// A store, under the guards of the uncrop views it was written through: an element outside
// the cropped array is dropped.
void Generator::emitStore(const ResolvedElement& target, const std::string& statement) {
  if (target.droppedWrite) return;  // outside the cropped array whatever the run
  if (target.writeGuards.empty()) {
    emitter_.line(statement);
    return;
  }
  std::string outside;
  for (const PadGuard& guard : target.writeGuards) {
    mentionedSizes_.push_back(guard.index);
    mentionedSizes_.push_back(guard.length);
    outside += (outside.empty() ? "" : " || ") + guard.conditionC();
  }
  emitter_.line("if (!(" + outside + ")) " + statement);
}

// Copies a value element by element. Copies out of a private array are unrolled (its size is
// a constant), so that every use of the array has constant indices and promotePrivateArrays
// can keep it in registers.
void Generator::copy(const ViewPtr& source, const ViewPtr& dest, const Type& type, const Expr& at,
                     bool fromPrivate) {
  if (type.isScalar() || type.isVector()) {
    assign(dest, read(source, at), type, at);
    return;
  }
  if (type.isTuple()) {
    for (size_t k = 0; k < type.tupleElements().size(); ++k) {
      copy(getView(source, static_cast<int>(k)), getView(dest, static_cast<int>(k)),
           type.tupleElements()[k], at, fromPrivate);
    }
    return;
  }
  // An accumulator the work-items own: each copies its own part.
  for (const ViewPtr& side : {source, dest}) {
    if (side->kind == View::Kind::Memory && !side->ownerLocalDims.empty()) {
      copyOwnedLevels(source, dest, type, at, side->ownerLocalDims, 0);
      return;
    }
  }
  // Copies into a private array (an accumulator initialised from memory) are unrolled too.
  const bool privateSource =
      fromPrivate ||
      (source->kind == View::Kind::Memory && source->space == AddressSpace::Private) ||
      (dest->kind == View::Kind::Memory && dest->space == AddressSpace::Private);
  const Op op = privateSource && type.arrayLength().constant() ? Op::MapSeqUnroll : Op::MapSeq;
  loop(op, 0, type.arrayLength(), at, [&](const Arith& i) {
    copy(accessView(source, i), accessView(dest, i), type.arrayElement(), at, privateSource);
  });
}

// Copies the levels of an accumulator the work-items own (ownerDims, outermost first) from
// `level` on: each such level is the work-item's own element (a mapLcl of one iteration per
// work-item), the rest copied as usual.
void Generator::copyOwnedLevels(const ViewPtr& source, const ViewPtr& dest, const Type& type,
                                const Expr& at, const std::vector<int>& ownerDims, size_t level) {
  if (level == ownerDims.size()) {
    copy(source, dest, type, at, /*fromPrivate=*/true);
    return;
  }
  loop(Op::MapLcl, ownerDims[level], type.arrayLength(), at, [&](const Arith& i) {
    copyOwnedLevels(accessView(source, i), accessView(dest, i), type.arrayElement(), at,
                    ownerDims, level + 1);
  });
}

// Reads one element through a view, noting the buffers and sizes it uses.
std::string Generator::read(const ViewPtr& view, const Expr& at, std::vector<int> path,
                            std::optional<Arith> lane) {
  ResolvedElement element;
  try {
    element = resolveElement(views_, view, {}, std::move(path), std::move(lane));
  } catch (const CodegenError& error) {
    fail(at, error.what());
  }
  noteView(view);
  emitter_.named.note(element);
  noteGlobalAccess(element, /*written=*/false, at);
  return element.expression;
}

void Generator::noteGlobalAccess(const ResolvedElement& element, bool written, const Expr& at) {
  if (element.droppedWrite) return;
  if (element.isMemory) {
    if (element.space == AddressSpace::Global) {
      noteGlobalAccessAt(element.base, element.offset, element.vectorWidth, written, at);
    }
    return;
  }
  for (const ResolvedElement::MemoryRead& read : element.gatheredReads) {
    if (read.space == AddressSpace::Global) {
      noteGlobalAccessAt(read.base, read.offset, read.vectorWidth, written, at);
    }
  }
}

void Generator::noteGlobalAccessAt(const std::string& buffer, const Arith& offset, int vectorWidth,
                                   bool written, const Expr& at) {
  if (secondCopies_ > 0) return;
  if (!notedAccesses_.emplace(at.node(), buffer, written, offset.toString()).second) return;
  GlobalAccess access;
  access.buffer = buffer;
  access.written = written;
  access.offset = offset;
  access.vectorWidth = vectorWidth;
  for (const LoopFrame& frame : loops_) {
    AccessLoop loop;
    loop.parallel = isParallelMap(frame.op);
    loop.groupIndex = frame.op == Op::MapWrg;
    loop.localIndex = frame.op == Op::MapLcl;
    loop.unrolled = frame.op == Op::MapSeqUnroll || frame.op == Op::ReduceSeqUnroll;
    loop.rolled = frame.rolled;
    loop.reduction = isReduceFamily(frame.op);
    loop.dimension = frame.dimension;
    loop.index = frame.index;
    loop.tripCount = frame.tripCount;
    access.loops.push_back(std::move(loop));
  }
  globalAccesses_.push_back(std::move(access));
}

}  // namespace weft::opencl
