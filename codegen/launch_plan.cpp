// Launch planning: see launch_plan.h.
#include "codegen/launch_plan.h"

#include <algorithm>

#include "codegen/gen_support.h"

namespace weft::opencl {

namespace {

Arith combinedTripCount(const std::vector<Arith>& counts) {
  if (counts.empty()) return Arith(1);
  Arith result = counts.front();
  for (const Arith& c : counts) result = max(result, c);
  return result;
}

// The parallel maps that run in this kernel: for a kernel's outermost map, its own and
// those in its function (its input is computed by earlier kernels).
void collectLaunch(const Expr& e, LaunchPlan& plan,
                   const std::function<const Type&(const Expr&)>& typeOf) {
  bool outerMap = e.isPrim() && (e.primOp() == Op::MapGlb || e.primOp() == Op::MapWrg);
  forEachNode(outerMap ? e.funs()[0] : e, [&](const Expr& node) {
    if (!node.isPrim() || !isParallelMap(node.primOp())) return;
    auto dim = node.nats()[0].constant();
    if (!dim || *dim < 0 || *dim > 2) fail(node, "the dimension must be 0, 1 or 2");
    Arith count = typeOf(node.args()[0]).arrayLength();
    size_t d = static_cast<size_t>(*dim);
    if (node.primOp() == Op::MapGlb) plan.glb[d].push_back(count);
    if (node.primOp() == Op::MapWrg) plan.wrg[d].push_back(count);
    if (node.primOp() == Op::MapLcl) plan.lcl[d].push_back(count);
    plan.dimensions = std::max(plan.dimensions, static_cast<int>(d) + 1);
  });
  // Accumulators the work-items own, in reductions outside every mapLcl.
  std::function<void(const Expr&, bool)> findOwned = [&](const Expr& node, bool insideLcl) {
    if (node.isLambda() || node.kind() == ExprKind::UserFun) {
      findOwned(node.body(), insideLcl);
      return;
    }
    if (!node.isPrim()) return;
    if (!insideLcl && isReduceFamily(node.primOp())) {
      std::vector<int> dims = workItemOwnedDims(node);
      Type level = typeOf(node.args()[0]);
      for (int d : dims) {
        if (d < 0 || d > 2 || !level.isArray()) break;
        plan.owned[static_cast<size_t>(d)].push_back(level.arrayLength());
        level = level.arrayElement();
      }
    }
    const bool lcl = insideLcl || node.primOp() == Op::MapLcl;
    for (const Expr& f : node.funs()) findOwned(f, lcl);
    for (const Expr& a : node.args()) findOwned(a, lcl);
  };
  findOwned(outerMap ? e.funs()[0] : e, false);
  if (outerMap) {
    size_t d = static_cast<size_t>(*e.nats()[0].constant());
    if (d > 2) fail(e, "the dimension must be 0, 1 or 2");
    (e.primOp() == Op::MapGlb ? plan.glb : plan.wrg)[d].push_back(
        typeOf(e.args()[0]).arrayLength());
    plan.dimensions = std::max(plan.dimensions, static_cast<int>(d) + 1);
  }
}

}  // namespace

LaunchPlan planLaunch(const Expr& e, const std::function<const Type&(const Expr&)>& typeOf) {
  LaunchPlan plan;
  collectLaunch(e, plan, typeOf);
  bool anyGlb = false, anyGroup = false;
  for (int d = 0; d < 3; ++d) {
    anyGlb |= !plan.glb[d].empty();
    anyGroup |= !plan.wrg[d].empty() || !plan.lcl[d].empty();
  }
  if (anyGlb && anyGroup) {
    fail(e, "a kernel cannot mix mapGlb with mapWrg/mapLcl");
  }
  if (anyGroup) {
    bool anyWrg = false;
    for (int d = 0; d < 3; ++d) anyWrg |= !plan.wrg[d].empty();
    if (!anyWrg) fail(e, "mapLcl must be nested in a mapWrg");
  }
  plan.usesGroups = anyGroup;
  for (size_t d = 0; d < 3; ++d) {
    if (anyGroup) {
      plan.groups[d] = combinedTripCount(plan.wrg[d]);
      plan.localSize[d] = combinedTripCount(plan.lcl[d]);
      if (!plan.owned[d].empty()) {
        const Arith& length = plan.owned[d].front();
        for (const Arith& other : plan.owned[d]) {
          if (!(other == length)) {
            fail(e, "the work-items of dimension " + std::to_string(d) +
                        " own accumulators of different lengths (" + length.toString() + " and " +
                        other.toString() + "): one work-item per element needs one local size");
          }
        }
        plan.localSize[d] = length;
      }
      plan.globalSize[d] = plan.groups[d] * plan.localSize[d];
    } else {
      plan.globalSize[d] = combinedTripCount(plan.glb[d]);
    }
  }
  return plan;
}

}  // namespace weft::opencl
