// Loops of maps and reductions. A parallel map whose trip count equals its dimension's launch
// size (launch_plan.h) has no loop, only its work-item's index (for mapGlb(0) with the interior
// fast path, interior_fast_path.cpp); otherwise it strides by the launch size. mapSeqUnroll and
// reduceSeqUnroll repeat their body, once per index, in a block of its own. A sequential loop of
// one iteration has no loop; one over join(join(...)) becomes one nested loop per factor, so that
// the indices of the nested arrays need no division or modulo; others are emitted by
// pad_unswitching.cpp. For analysis (CodegenOptions::unrolledAsLoops) an unrolled map or
// reduction is generated as the sequential one, its frames marked rolled. Every loop the body is
// inside is on loops_ while it is generated.
#include "codegen/generator.h"

namespace weft::opencl {

// The lengths whose product is e's length, outermost first, when e flattens nested arrays
// with join (through zip when every component agrees): join(join(w)) with w: [[[T]C]K]K
// gives [K, K, C]. A sequential loop over e becomes one loop per factor, so that the
// indices of the nested arrays need no division or modulo.
std::vector<Arith> Generator::flattenFactors(const Expr& e) {
  if (e.isPrim(Op::Join)) {
    std::vector<Arith> factors = flattenFactors(e.args()[0]);
    factors.push_back(typeOf(e.args()[0]).arrayElement().arrayLength());
    return factors;
  }
  if (e.isPrim(Op::Zip)) {
    std::vector<Arith> first = flattenFactors(e.args()[0]);
    for (const Expr& component : e.args()) {
      if (flattenFactors(component) != first) return {typeOf(e).arrayLength()};
    }
    return first;
  }
  return {typeOf(e).arrayLength()};
}

// Emits the loop of one map and returns nothing; `body` gets the index. A sequential loop
// whose trip count is the product of `factors` is emitted as one nested loop per factor.
void Generator::loop(Op op, int dim, const Arith& tripCount, const Expr& at,
                     const std::function<void(const Arith&)>& body,
                     const std::vector<Arith>& factors) {
  const bool unrolled = op == Op::MapSeqUnroll || op == Op::ReduceSeqUnroll;
  const bool rolled = unrolled && options_.unrolledAsLoops;
  if ((op == Op::MapSeq || op == Op::ReduceSeq || rolled) && factors.size() > 1) {
    Arith product(1);
    for (const Arith& f : factors) product = product * f;
    if (product == tripCount) {
      nestedLoops(op, factors, 0, Arith(0), at, body);
      return;
    }
  }
  if (rolled) op = op == Op::MapSeqUnroll ? Op::MapSeq : Op::ReduceSeq;
  bool repeats = !(tripCount == Arith(1));
  auto push = [&](const Arith& index) {
    loops_.push_back({op, dim, index, tripCount, repeats, rolled});
  };
  auto pop = [&]() { loops_.pop_back(); };
  if (unrolled && !rolled) {
    auto n = tripCount.constant();
    if (!n) fail(at, "an unrolled loop needs a constant trip count, found " + tripCount.toString());
    for (int64_t i = 0; i < *n; ++i) {
      emitter_.line("{  // unrolled " + std::to_string(i));
      ++emitter_.indent;
      push(Arith(i));
      body(Arith(i));
      pop();
      emitter_.close();
    }
    return;
  }
  if (isParallelMap(op)) {
    if (op == Op::MapWrg && insideKind(Op::MapLcl)) fail(at, "mapWrg cannot be inside mapLcl");
    if (op == Op::MapLcl && !insideKind(Op::MapWrg)) fail(at, "mapLcl must be nested in a mapWrg");
    for (const LoopFrame& f : loops_) {
      if (f.op == op && f.dimension == dim) {
        fail(at, std::string(primInfo(op).name) + "(" + std::to_string(dim) +
                     ") is nested in another " + primInfo(op).name + " of the same dimension");
      }
    }
    const char* idFunction = op == Op::MapGlb   ? "get_global_id"
                             : op == Op::MapWrg ? "get_group_id"
                                                : "get_local_id";
    const char* sizeFunction = op == Op::MapGlb   ? "get_global_size"
                               : op == Op::MapWrg ? "get_num_groups"
                                                  : "get_local_size";
    Arith launchSize = op == Op::MapGlb   ? launch_.globalSize[dim]
                       : op == Op::MapWrg ? launch_.groups[dim]
                                          : launch_.localSize[dim];
    const char* stem = op == Op::MapGlb ? "gl" : op == Op::MapWrg ? "wg" : "lc";
    std::string name = fresh(std::string(stem)) + "_d" + std::to_string(dim);
    Arith index = Arith::var(name, VarKind::ThreadIndex, 0, tripCount - 1);
    if (tripCount == launchSize) {
      repeats = false;
      if (tripCount == Arith(1)) {
        push(Arith(0));
        body(Arith(0));
        pop();
        return;
      }
      emitter_.line("const int " + name + " = " + idFunction + "(" + std::to_string(dim) + ");");
      if (op == Op::MapGlb && dim == 0) {
        withInteriorFastPath(name, index, body);
        return;
      }
      push(index);
      body(index);
      pop();
      return;
    }
    ++loopsEmitted_;
    if (secondCopies_ == 0) ++workItemLoops_;
    emitter_.open("for (int " + name + " = " + idFunction + "(" + std::to_string(dim) + "); " +
                  name + " < " + c(tripCount) + "; " + name + " += " + sizeFunction + "(" +
                  std::to_string(dim) + "))");
    push(index);
    body(index);
    pop();
    emitter_.close();
    return;
  }
  // Sequential.
  if (tripCount == Arith(1)) {
    push(Arith(0));
    body(Arith(0));
    pop();
    return;
  }
  sequentialLoop(LoopFrame{op, dim, Arith(0), tripCount, repeats, rolled}, body);
}

// One loop per factor; the flat index is i_0*f_1*...*f_k + ... + i_k.
void Generator::nestedLoops(Op op, const std::vector<Arith>& factors, size_t level,
                            const Arith& outer, const Expr& at,
                            const std::function<void(const Arith&)>& body) {
  if (level == factors.size()) {
    body(outer);
    return;
  }
  loop(op, 0, factors[level], at, [&](const Arith& index) {
    nestedLoops(op, factors, level + 1, outer * factors[level] + index, at, body);
  });
}

void Generator::keepingPrivateEstimates(const std::function<void()>& generateCopy) {
  const int64_t privateScalars = privateArrayScalars_, live = liveAccumulatorScalars_,
                maxLive = maxLiveAccumulatorScalars_, widest = widestVector_;
  const Arith symbolicScalars = symbolicPrivateScalars_;
  const size_t arraysBefore = privateArraySizes_.size();
  secondCopy(generateCopy);
  privateArrayScalars_ = privateScalars;
  liveAccumulatorScalars_ = live;
  maxLiveAccumulatorScalars_ = maxLive;
  widestVector_ = widest;
  symbolicPrivateScalars_ = symbolicScalars;
  privateArraySizes_.resize(arraysBefore);
}

void Generator::secondCopy(const std::function<void()>& generateCopy) {
  ++secondCopies_;
  try {
    generateCopy();
  } catch (...) {
    --secondCopies_;
    throw;
  }
  --secondCopies_;
}

}  // namespace weft::opencl
