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
// the copies of the loop). Inside, the loop's index is known to lie in the range that the
// conditions affine in it alone leave (i >= 1 and 16·i <= 4077, say), and the body is generated
// with the index so bounded: indices that only the clamps kept inside an array (the last vector
// of a row padded to whole vectors) then simplify to plain consecutive reads, and the guards of
// stores past the row's end vanish. Only loops with such a vector read are unswitched: a scalar
// read's clamp is two instructions, which a second copy of the body does not pay for. Bodies that
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

// The range of the loop index `frame.index` (from 0 to its trip count less one, a constant)
// in which every condition `c >= 0` of `conditions` that is affine in the index alone, c = a +
// s·i with constants a and s, holds; none when no such condition narrows it or the trip count
// is not constant. Conditions of other forms (clamps, other indices) are left to the run.
std::optional<std::pair<int64_t, int64_t>> insideIndexRange(const std::vector<Arith>& conditions,
                                                            const LoopFrame& frame) {
  const std::optional<int64_t> trips = frame.tripCount.constant();
  if (!trips || *trips < 1) return std::nullopt;
  const std::string& name = frame.index.varName();
  const Arith i = frame.index;
  int64_t low = 0, high = *trips - 1;
  for (const Arith& condition : conditions) {
    const std::vector<Arith> vars = condition.vars();
    if (vars.size() != 1 || vars[0].varName() != name) continue;
    const std::optional<int64_t> a = substitute(condition, {{name, Arith(0)}}).constant();
    const std::optional<int64_t> s =
        (substitute(condition, {{name, i + 1}}) - condition).constant();
    if (!a || !s || *s == 0) continue;
    // Affine: the condition at i is a + s·i exactly, checked at the range's two ends.
    if (substitute(condition, {{name, Arith(*trips - 1)}}).constant() != *a + *s * (*trips - 1)) {
      continue;
    }
    // Rounding towards minus infinity for a positive divisor.
    auto floorDiv = [](int64_t x, int64_t y) { return x >= 0 ? x / y : -((-x + y - 1) / y); };
    if (*s > 0) {
      low = std::max(low, -floorDiv(*a, *s));  // i >= ceil(-a / s)
    } else {
      high = std::min(high, floorDiv(*a, -*s));  // i <= floor(a / -s)
    }
  }
  if (low == 0 && high == *trips - 1) return std::nullopt;
  if (low > high) return std::nullopt;  // never inside: the general copy runs
  return std::make_pair(low, high);
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
  // Inside, the loop's index lies in the range its conditions of the form a + s·i >= 0
  // (constants a and s) leave: the body is generated with the index so bounded, so that
  // indices which only the clamps kept in range simplify (a row's last vector, read past a
  // padded row's end, no longer looks as if it could reach the next row).
  LoopFrame insideFrame = frame;
  const std::optional<std::pair<int64_t, int64_t>> range =
      insideIndexRange(required.conditions(), frame);
  if (range) {
    insideFrame.index =
        Arith::var(name, VarKind::LoopIndex, Arith(range->first), Arith(range->second));
  }
  emitter_.open(header);
  emitter_.open("if (" + inside + ")");
  keepingPrivateEstimates([&] {
    BorderReadRecorder assume;
    assume.assumedInside = recorded.assumedInside;
    assume.assumedInside.insert(keys.begin(), keys.end());
    BorderReadScope scope(views_, assume);
    PadGuardRecorder guards;
    PadGuardScope guardScope(views_, guards);
    std::optional<FreshMemoScope> freshMemo;
    if (range) freshMemo.emplace(views_);
    loops_.push_back(insideFrame);
    body(insideFrame.index);
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
