// Sequential loops whose iterations read across a clamp or mirror pad only near the array's
// ends, unswitched per iteration. A loop's body is generated once while its clamp and mirror
// pad reads are recorded (views.h's BorderReadScope, as the interior fast path does for a
// work-item). The reads whose index moves with the loop's index (affine in it and in the
// indices of loops inside the body with constant ranges) give a condition, per iteration, that
// every such read stays inside the array; the loop's body then becomes
//   if (inside) { the body without those clamps } else { the body as before }
// so that all but the first and last iterations of a walk along a row (a block of columns of
// a clamped image) read consecutive elements with plain vector loads instead of a select
// between a load and a gather per read. The branch is the same for every lane and taken the
// same way in all the inner iterations, so it costs one predictable compare per iteration
// (the loop partitioning of a hand-written stencil, which peels the edge iterations, without
// the copies of the loop). Only loops with such a vector read are unswitched: a scalar read's
// clamp is two instructions, which a second copy of the body does not pay for. Bodies that
// allocate local or global memory are left as they are: the copy would allocate twice.
#include "codegen/generator.h"

namespace weft::opencl {

namespace {

// The least and greatest value of `index` over one iteration of the loop: `index` with each
// index of a loop inside the body (a loop index none of `enclosing` binds) at the end of its
// constant range that makes it least or greatest; the loop's own index and the enclosing
// indices stay symbols (fixed within the iteration). None when an inner index has no constant
// range or a step that is not constant, or a thread index is not bound by `enclosing`.
std::optional<std::pair<Arith, Arith>> iterationBounds(const Arith& index,
                                                       const std::vector<LoopFrame>& enclosing) {
  ArithSubstitution low, high;
  for (const Arith& v : index.vars()) {
    const VarKind kind = v.varKind();
    if (kind != VarKind::LoopIndex && kind != VarKind::ThreadIndex) continue;
    bool bound = false;
    for (const LoopFrame& frame : enclosing) bound = bound || frame.index.mentions(v.varName());
    if (bound) continue;
    if (kind != VarKind::LoopIndex || !v.varLo().isConstant() || !v.varHi() ||
        !v.varHi()->isConstant()) {
      return std::nullopt;
    }
    const Arith step = substitute(index, {{v.varName(), v + 1}}) - index;
    const std::optional<int64_t> slope = step.constant();
    if (!slope) return std::nullopt;
    low[v.varName()] = *slope >= 0 ? v.varLo() : *v.varHi();
    high[v.varName()] = *slope >= 0 ? *v.varHi() : v.varLo();
  }
  return std::make_pair(substitute(index, low), substitute(index, high));
}

}  // namespace

bool Generator::unswitchBorderReads(const std::string& header, const LoopFrame& frame,
                                    const std::function<void(const Arith&)>& body,
                                    const BorderReadRecorder& recorded, const Emitter& general,
                                    bool allocatesShared) {
  if (allocatesShared) return false;
  const std::string& name = frame.index.varName();
  NonNegativeConditions required;
  std::set<std::string> keys;
  bool vectorRead = false;
  loops_.push_back(frame);
  for (const BorderRead& read : recorded.seen) {
    if (!read.index.mentions(name)) continue;
    std::optional<std::pair<Arith, Arith>> bounds = iterationBounds(read.index, loops_);
    if (!bounds) continue;
    keys.insert(read.key());
    vectorRead = vectorRead || read.vectorLane;
    if (read.checkLow && !proveNonNegative(bounds->first)) required.require(bounds->first);
    if (read.checkHigh && !proveLess(bounds->second, read.length)) {
      required.require(read.length - 1 - bounds->second);
    }
  }
  loops_.pop_back();
  std::string inside;
  for (const Arith& condition : required.conditions()) {
    if (condition.isConstant()) {
      if (*condition.constant() < 0) return false;  // never inside
      continue;
    }
    inside += (inside.empty() ? "" : " && ") + c(condition) + " >= 0";
  }
  if (!vectorRead || inside.empty()) return false;
  emitter_.open(header);
  emitter_.open("if (" + inside + ")");
  keepingPrivateEstimates([&] {
    BorderReadRecorder assume;
    assume.assumedInside = recorded.assumedInside;
    assume.assumedInside.insert(keys.begin(), keys.end());
    BorderReadScope scope(views_, assume);
    PadGuardRecorder guards;
    PadGuardScope guardScope(views_, guards);
    loops_.push_back(frame);
    body(frame.index);
    loops_.pop_back();
  });
  --emitter_.indent;
  emitter_.line("} else {");
  ++emitter_.indent;
  for (const std::string& text : general.lines) emitter_.lines.push_back("  " + text);
  emitter_.named.merge(general.named);
  emitter_.close();
  emitter_.close();
  return true;
}

}  // namespace weft::opencl
