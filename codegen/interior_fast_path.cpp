// The interior fast path of a mapGlb(0) work-item (no loop; its index is the global id). Its
// body is generated once while its clamp and mirror pad reads are recorded (views.h's
// BorderReadScope); the reads whose index is affine in the work-item's index (and in loop
// indices of constant ranges, uniform sizes) are checked for the whole work-group at once (its
// first and last work-item, g_first and g_last from get_group_id * get_local_size, bound the
// index), and when they stay inside, a second copy of the body reads them without clamps:
//   if (group inside) { unclamped body } else { body as before }
// The branch is uniform per work-group, so an implementation vectorising across work-items keeps
// consecutive loads in the interior (PoCL turns clamped reads into gathers). The body is emitted
// as before when no read qualifies, or when it allocates local or global memory (it would be
// allocated twice).
#include <map>

#include "codegen/generator.h"

namespace weft::opencl {

namespace {

// The least and greatest value of `index` over the work-items of one work-group, as
// expressions in `first` and `last` (the group's first and last value of the variable
// `gid`), when the index is affine in gid and in loop indices of constant ranges (each
// variable's unit step changes it by a constant) and mentions nothing else that varies
// within a group; otherwise nothing.
std::optional<std::pair<Arith, Arith>> groupBounds(const Arith& index, const std::string& gid,
                                                   const Arith& first, const Arith& last) {
  if (!index.mentions(gid)) return std::nullopt;
  ArithSubstitution low, high;
  for (const Arith& v : index.vars()) {
    const VarKind kind = v.varKind();
    if (kind == VarKind::Size || kind == VarKind::Tuning) continue;
    Arith lo, hi;
    if (kind == VarKind::ThreadIndex && v.varName() == gid) {
      lo = first;
      hi = last;
    } else if (kind == VarKind::LoopIndex && v.varLo().isConstant() && v.varHi() &&
               v.varHi()->isConstant()) {
      lo = v.varLo();
      hi = *v.varHi();
    } else {
      return std::nullopt;
    }
    const Arith step = substitute(index, {{v.varName(), v + 1}}) - index;
    const std::optional<int64_t> slope = step.constant();
    if (!slope) return std::nullopt;
    low[v.varName()] = *slope >= 0 ? lo : hi;
    high[v.varName()] = *slope >= 0 ? hi : lo;
  }
  return std::make_pair(substitute(index, low), substitute(index, high));
}

}  // namespace

// The body of a work-item of mapGlb(0) (index `name`, no loop), with the interior fast path
// described at the top of the file. The fast copy's conditions are kept as
// `variable part + constant >= 0`, one per variable part.
void Generator::withInteriorFastPath(const std::string& name, const Arith& index,
                                     const std::function<void(const Arith&)>& body) {
  BorderReadRecorder recorder;
  Emitter saved = std::move(emitter_);
  emitter_ = Emitter{};
  emitter_.indent = saved.indent + 1;
  const size_t localBefore = localDeclarations_.size(), localArgsBefore = localArgs_.size(),
               buffersBefore = program_.buffers.size(), kernelsBefore = program_.kernels.size();
  {
    BorderReadScope scope(views_, recorder);
    loops_.push_back({Op::MapGlb, 0, index, launch_.globalSize[0], false});
    body(index);
    loops_.pop_back();
  }
  Emitter general = std::move(emitter_);
  emitter_ = std::move(saved);
  auto emitGeneral = [&](int extraIndent) {
    for (const std::string& text : general.lines) {
      emitter_.lines.push_back(extraIndent ? text : text.substr(std::min<size_t>(2, text.size())));
    }
    emitter_.named.merge(general.named);
  };
  const bool allocatesShared =
      localDeclarations_.size() != localBefore || localArgs_.size() != localArgsBefore ||
      program_.buffers.size() != buffersBefore || program_.kernels.size() != kernelsBefore;
  const std::string first = name + "_first", last = name + "_last";
  const Arith firstVar = Arith::var(first, VarKind::ThreadIndex, 0, index.varHi());
  const Arith lastVar = Arith::var(last, VarKind::ThreadIndex, 0, index.varHi());
  std::set<std::string> keys;
  NonNegativeConditions required;
  if (!allocatesShared) {
    for (const BorderRead& read : recorder.seen) {
      std::optional<std::pair<Arith, Arith>> bounds =
          groupBounds(read.index, index.varName(), firstVar, lastVar);
      if (!bounds) continue;
      keys.insert(read.key());
      if (read.checkLow && !proveNonNegative(bounds->first)) required.require(bounds->first);
      if (read.checkHigh && !proveLess(bounds->second, read.length)) {
        required.require(read.length - 1 - bounds->second);
      }
    }
  }
  std::vector<std::string> conditions;
  for (const Arith& condition : required.conditions()) conditions.push_back(c(condition) + " >= 0");
  if (keys.empty()) {
    emitGeneral(0);
    return;
  }
  emitter_.line("const int " + first + " = (int)(get_group_id(0) * get_local_size(0));");
  emitter_.line("const int " + last + " = " + first + " + (int)get_local_size(0) - 1;");
  std::string inside;
  for (const std::string& condition : conditions) {
    inside += (inside.empty() ? "" : " && ") + condition;
  }
  if (inside.empty()) inside = "1";
  emitter_.open("if (" + inside + ")");
  keepingPrivateEstimates([&] {
    BorderReadRecorder assume;
    assume.assumedInside = keys;
    BorderReadScope scope(views_, assume);
    loops_.push_back({Op::MapGlb, 0, index, launch_.globalSize[0], false});
    body(index);
    loops_.pop_back();
  });
  --emitter_.indent;
  emitter_.line("} else {");
  ++emitter_.indent;
  emitGeneral(1);
  emitter_.close();
}

}  // namespace weft::opencl
