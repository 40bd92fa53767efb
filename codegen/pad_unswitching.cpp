// Sequential loops, unswitched on the pad guards they read. A loop's body is generated once
// while the guards of the constant pads it reads are recorded (views.h's PadGuardScope). Guards
// that do not depend on an index bound by or inside the loop are checked once before it: with up
// to four of them (a register block's first and last row and column), one copy of the loop per
// outcome, a firing guard's reads being the pad value itself, so no copy holds a branch; and as
// a float sum's product with a literal zero factor adds nothing (scalar_gen.cpp's
// floatSumWithProduct), the copies skip zero-padded taps. With more guards, two copies: a
// guard-free one when none fires, and the guarded loop otherwise. Only innermost loops whose
// body allocates nothing (it is generated several times) and reads at least two elements
// through guards are unswitched; one guarded read alone gains too little for another copy.
#include "codegen/generator.h"

namespace weft::opencl {

// One copy of the loop per outcome of its hoisted pad guards when there are at most this many
// guards and the copies stay this short in lines; beyond, two copies (guards inside the
// second).
constexpr size_t kMaxGuardsSplit = 4;
constexpr size_t kMaxSplitLines = 2000;

// A sequential loop of more than one iteration (see the top of the file).
void Generator::sequentialLoop(const LoopFrame& frame,
                               const std::function<void(const Arith&)>& body) {
  const Arith& tripCount = frame.tripCount;
  std::string name = fresh("i");
  Arith index = Arith::var(name, VarKind::LoopIndex, 0, tripCount - 1);
  LoopFrame indexed = frame;
  indexed.index = index;
  const std::string header =
      "for (int " + name + " = 0; " + name + " < " + c(tripCount) + "; ++" + name + ")";
  // The body once into a scratch emitter, recording the guards of constant pads it reads.
  PadGuardRecorder recorder;
  // Its clamp and mirror reads too (border_unswitching.cpp), those an enclosing recorder (the
  // interior fast path's, an outer loop's) assumes inside staying assumed; what is seen here
  // is the enclosing recorder's too.
  BorderReadRecorder* const enclosingBorders = views_.borderReads;
  BorderReadRecorder borders;
  if (enclosingBorders) borders.assumedInside = enclosingBorders->assumedInside;
  Emitter saved = std::move(emitter_);
  emitter_ = Emitter{};
  emitter_.indent = saved.indent + 1;
  const int loopsBefore = loopsEmitted_;
  const size_t privateBefore = privateArrays_.size(), localBefore = localDeclarations_.size(),
               localArgsBefore = localArgs_.size();
  const size_t buffersBefore = program_.buffers.size(), kernelsBefore = program_.kernels.size();
  {
    PadGuardScope scope(views_, recorder);
    BorderReadScope borderScope(views_, borders);
    loops_.push_back(indexed);
    body(index);
    loops_.pop_back();
  }
  if (enclosingBorders) {
    enclosingBorders->seen.insert(enclosingBorders->seen.end(), borders.seen.begin(),
                                  borders.seen.end());
  }
  Emitter guarded = std::move(emitter_);
  emitter_ = std::move(saved);
  ++loopsEmitted_;
  if (!frame.rolled && secondCopies_ == 0) ++workItemLoops_;
  // Loop unswitching: guards that do not depend on this loop's index (nor on any index
  // bound inside it) are checked once before the loop; when none fires, the loop runs a
  // second copy of the body that reads without them (e.g. a convolution's channel loop
  // over a zero-padded image: the window position's validity does not depend on the
  // channel). Only for innermost loops whose body allocates nothing (it is generated twice)
  // and reads at least two elements through guards (a register block's loads: one guarded
  // read alone gains too little for a second copy of the loop).
  std::vector<std::string> hoisted, hoistedKeys;
  std::set<std::string> keys;
  const bool simpleBody = recorder.guardedReads >= 2 && loopsEmitted_ == loopsBefore + 1 &&
                          privateArrays_.size() == privateBefore &&
                          localDeclarations_.size() == localBefore &&
                          localArgs_.size() == localArgsBefore;
  if (simpleBody) {
    for (const PadGuard& guard : recorder.seen) {
      bool outside = true;
      for (const Arith& v : guard.index.vars()) {
        if (v.varKind() != VarKind::LoopIndex && v.varKind() != VarKind::ThreadIndex) continue;
        bool bound = false;
        for (const LoopFrame& frame : loops_) bound = bound || frame.index.mentions(v.varName());
        outside = outside && bound;
      }
      if (outside && keys.insert(guard.key()).second) {
        hoisted.push_back(guard.conditionC());
        hoistedKeys.push_back(guard.key());
      }
    }
  }
  auto emitGuarded = [&](int extraIndent) {
    emitter_.open(header);
    const std::string pad(2 * static_cast<size_t>(extraIndent), ' ');
    for (const std::string& text : guarded.lines) emitter_.lines.push_back(pad + text);
    emitter_.named.merge(guarded.named);
    emitter_.close();
  };
  if (hoisted.empty()) {
    const bool allocatesShared =
        localDeclarations_.size() != localBefore || localArgs_.size() != localArgsBefore ||
        program_.buffers.size() != buffersBefore || program_.kernels.size() != kernelsBefore;
    if (unswitchBorderReads(header, indexed, body, borders, guarded, allocatesShared)) {
      return;
    }
    emitGuarded(0);
    return;
  }
  // Few guards: one copy of the loop per outcome of them, each branch-free (a firing guard's
  // reads are the pad value itself, as if the padded array were in memory); a border
  // work-item then runs as fast as an inner one. More guards: two copies, the second with
  // every guard inside the loop.
  if (hoisted.size() <= kMaxGuardsSplit &&
      guarded.lines.size() << hoisted.size() <= kMaxSplitLines) {
    PadGuardRecorder assume;
    secondCopy([&] { emitGuardOutcomes(header, indexed, body, hoisted, hoistedKeys, 0, assume); });
    return;
  }
  std::string anyFires;
  for (const std::string& condition : hoisted) {
    anyFires += (anyFires.empty() ? "(" : " || (") + condition + ")";
  }
  emitter_.open("if (!(" + anyFires + "))");
  emitter_.open(header);
  secondCopy([&] {
    PadGuardRecorder assume;
    assume.assumedInBounds = keys;
    PadGuardScope scope(views_, assume);
    loops_.push_back(indexed);
    body(index);
    loops_.pop_back();
  });
  emitter_.close();
  --emitter_.indent;
  emitter_.line("} else {");
  ++emitter_.indent;
  emitGuarded(1);
  emitter_.close();
}

// Loop unswitching over every outcome of the guards hoisted[from..]: if the guard fires,
// the loop reads its pad as the pad value, otherwise without the guard; `assume` holds the
// outcomes of the guards before `from`.
void Generator::emitGuardOutcomes(const std::string& header, const LoopFrame& frame,
                                  const std::function<void(const Arith&)>& body,
                                  const std::vector<std::string>& hoisted,
                                  const std::vector<std::string>& hoistedKeys, size_t from,
                                  PadGuardRecorder& assume) {
  if (from == hoisted.size()) {
    emitter_.open(header);
    {
      PadGuardScope scope(views_, assume);
      loops_.push_back(frame);
      body(frame.index);
      loops_.pop_back();
    }
    emitter_.close();
    return;
  }
  const std::string& key = hoistedKeys[from];
  emitter_.open("if (!(" + hoisted[from] + "))");
  assume.assumedInBounds.insert(key);
  emitGuardOutcomes(header, frame, body, hoisted, hoistedKeys, from + 1, assume);
  assume.assumedInBounds.erase(key);
  --emitter_.indent;
  emitter_.line("} else {");
  ++emitter_.indent;
  assume.assumedFiring.insert(key);
  emitGuardOutcomes(header, frame, body, hoisted, hoistedKeys, from + 1, assume);
  assume.assumedFiring.erase(key);
  emitter_.close();
}

}  // namespace weft::opencl
