// Counting a definition's floating-point operations (see flop_count.h).
#include "typecheck/flop_count.h"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "typecheck/typecheck.h"

namespace weft {

namespace {

// Floating-point operations of one scalar arithmetic primitive per lane (0: not counted).
double operationsOf(Op op) {
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Min:
    case Op::Max:
    case Op::Abs:
    case Op::Sqrt:
    case Op::Exp:
      return 1;
    case Op::Fma:
      return 2;
    default:
      return 0;
  }
}

// The float lanes of a value of type t: its width for a float vector, 1 for a float, else 0.
double floatLanes(const Type& t) {
  if (!(t.isScalar() || t.isVector()) || t.scalarKind() != ScalarKind::Float) return 0;
  return t.isVector() ? static_cast<double>(t.vectorWidth()) : 1.0;
}

// Operations in a user function's scalar body, all of them on floats (it returns a float).
double userFunctionFlops(const Expr& e) {
  if (!e.isPrim()) return 0;
  double count = operationsOf(e.primOp());
  for (const Expr& arg : e.args()) count += userFunctionFlops(arg);
  return count;
}

// Floating-point operations, and the elements reduction steps read.
struct Counts {
  double flops = 0;
  double reductionReads = 0;
  double transposedReductionReads = 0;  // of those, read through a transposing view
  double loopedAccumulatorValues = 0;   // accumulator values a looped update reads and writes
  double copiedValues = 0;              // values top-level copies (let stages) store
  Counts& operator+=(const Counts& other) {
    flops += other.flops;
    reductionReads += other.reductionReads;
    transposedReductionReads += other.transposedReductionReads;
    loopedAccumulatorValues += other.loopedAccumulatorValues;
    copiedValues += other.copiedValues;
    return *this;
  }
  Counts times(double n) const {
    return {flops * n, reductionReads * n, transposedReductionReads * n,
            loopedAccumulatorValues * n, copiedValues * n};
  }
};

// A map, high-level or lowered.
bool isMapOp(Op op) {
  return op == Op::Map || op == Op::MapGlb || op == Op::MapWrg || op == Op::MapLcl ||
         op == Op::MapSeq || op == Op::MapSeqUnroll;
}

// Whether the reduce function `step` (acc, x) -> ... updates its accumulator in a loop: a map
// or mapSeq in its body over data that reads the accumulator param.
bool updatesInALoop(const Expr& step) {
  const uint64_t acc = step.params()[0].paramId();
  bool looped = false;
  forEachNode(step.body(), [&](const Expr& n) {
    if (looped || !(n.isPrim(Op::Map) || n.isPrim(Op::MapSeq))) return;
    forEachNode(n.args()[0], [&](const Expr& inner) {
      looped = looped || (inner.isParam() && inner.paramId() == acc);
    });
  });
  return looped;
}

// The values one element of type t holds as a reduction reads it: a scalar or a vector is one,
// a tuple the sum of its components, an array its length times its element's.
// The values of type `t` (a vector counts one, or its lanes with `lanes`).
double elementReads(const Type& t, const ArithBinding& sizes, bool lanes = false) {
  if (t.isTuple()) {
    double sum = 0;
    for (const Type& component : t.tupleElements()) sum += elementReads(component, sizes, lanes);
    return sum;
  }
  if (t.isArray()) {
    return static_cast<double>(evaluate(t.arrayLength(), sizes)) *
           elementReads(t.arrayElement(), sizes, lanes);
  }
  return lanes && t.isVector() ? static_cast<double>(t.vectorWidth()) : 1;
}

class FlopCounter {
 public:
  FlopCounter(const TypedDefinition& typed, const ArithBinding& sizes)
      : typed_(typed), sizes_(sizes) {}

  Counts count(const Expr& e) {
    auto found = memo_.find(e.node());
    if (found != memo_.end()) return found->second;
    const Counts result = countUncached(e);
    memo_.emplace(e.node(), result);
    return result;
  }

 private:
  double length(const Expr& array) {
    const Type& t = typed_.typeOf(array);
    if (!t.isArray()) throw std::invalid_argument("countFlops: a map or reduce over a non-array");
    return static_cast<double>(evaluate(t.arrayLength(), sizes_));
  }

  // A function argument applied once: a lambda's body, a user function's operations.
  Counts once(const Expr& f) {
    if (f.isLambda()) return count(f.body());
    if (f.isUserFun()) {
      return {floatLanes(f.userFunResultType()) * userFunctionFlops(f.body()), 0};
    }
    return count(f);
  }

  // Whether `e` is a view of overlapping windows (slide, slideStrict), or of groups of them:
  // layout primitives and maps of functions that only rearrange over such windows, or a param
  // bound to their elements.
  bool overSlideWindows(const Expr& e) const {
    if (e.isParam()) return slideParams_.count(e.paramId()) > 0;
    if (!e.isPrim()) return false;
    if (e.isPrim(Op::Slide) || e.isPrim(Op::SlideStrict)) return true;
    const bool rearranges =
        isLayoutPrimitive(e.primOp()) || (isMapOp(e.primOp()) && onlyRearranges(e.funs()[0]));
    if (!rearranges) return false;
    for (const Expr& arg : e.args()) {
      if (overSlideWindows(arg)) return true;
    }
    return false;
  }

  // A function whose body only rearranges its params' elements (no user function, nothing
  // that computes).
  static bool onlyRearranges(const Expr& f) {
    bool computes = false;
    forEachNode(f, [&](const Expr& n) {
      computes = computes || n.isUserFun() ||
                 (n.isPrim() && !isMapOp(n.primOp()) && !isRearrangingPrimitive(n.primOp()));
    });
    return !computes;
  }

  // Whether reading `e` goes through a transpose: a transpose in it, or a param bound to the
  // elements of such a view (per tuple component where the data is a zip). A transpose of
  // overlapping windows does not count: the windows a step reads lie within a window's extent
  // of one another (a convolution's block of neighbouring windows, C values apart), so their
  // cache lines are few and serve the following steps too, unlike the rows of a matrix split
  // into blocks (a whole row apart).
  bool throughTranspose(const Expr& e) const {
    if (e.isParam()) {
      auto found = transposedParams_.find(e.paramId());
      if (found == transposedParams_.end()) return false;
      for (bool component : found->second) {
        if (component) return true;
      }
      return false;
    }
    if (!e.isPrim()) return false;
    if (e.isPrim(Op::Transpose)) {
      // Two transposes around a map that only rearranges each row, element by element, cancel
      // (pad2D pads the columns so): the view reads its input in order. A map that groups a
      // column's elements (asVector, split, slide) does not: a step reads each group's
      // elements from as many rows.
      const Expr& inner = e.args()[0];
      if (inner.isPrim(Op::Transpose)) return throughTranspose(inner.args()[0]);
      // A block of columns transposed back (rearranged element by element or not) is the
      // block's rows: each step reads consecutive values of one row.
      const Expr& block =
          inner.isPrim() && isMapOp(inner.primOp()) && onlyRearranges(inner.funs()[0]) &&
                  !containsTranspose(inner.funs()[0]) && !groupsElements(inner.funs()[0])
              ? inner.args().back()
              : inner;
      if (block.isParam() && columnBlockParams_.count(block.paramId())) return false;
      if (inner.isPrim() && isMapOp(inner.primOp()) && onlyRearranges(inner.funs()[0]) &&
          inner.args().back().isPrim(Op::Transpose)) {
        return containsTranspose(inner.funs()[0]) || groupsElements(inner.funs()[0]) ||
               throughTranspose(inner.args().back().args()[0]);
      }
      if (!overSlideWindows(inner)) return true;
    }
    if (e.isPrim(Op::Get) && e.args()[0].isParam()) {
      auto found = transposedParams_.find(e.args()[0].paramId());
      const std::optional<int64_t> component = e.nats().empty() ? std::nullopt
                                                                 : e.nats()[0].constant();
      if (found != transposedParams_.end() && component && *component >= 0 &&
          *component < static_cast<int64_t>(found->second.size()) && found->second.size() > 1) {
        return found->second[static_cast<size_t>(*component)];
      }
    }
    // A transpose inside a function: of the elements of the data it maps over, which may be
    // windows.
    const bool overWindows = !e.args().empty() && overSlideWindows(e.args().back());
    for (const Expr& f : e.funs()) {
      if (containsTranspose(f) && !overWindows) return true;
    }
    for (const Expr& arg : e.args()) {
      if (throughTranspose(arg)) return true;
    }
    return false;
  }

  // The flags of a param bound to the elements of `data` (one per zipped array).
  std::vector<bool> elementFlags(const Expr& data) const {
    if (data.isPrim(Op::Zip)) {
      std::vector<bool> flags;
      for (const Expr& arg : data.args()) flags.push_back(throughTranspose(arg));
      return flags;
    }
    return {throughTranspose(data)};
  }

  static bool containsTranspose(const Expr& e) {
    bool found = false;
    forEachNode(e, [&](const Expr& n) { found = found || n.isPrim(Op::Transpose); });
    return found;
  }

  // Whether `f` groups the elements of an array (asVector, split, slide).
  static bool groupsElements(const Expr& f) {
    bool found = false;
    forEachNode(f, [&](const Expr& n) {
      found = found || n.isPrim(Op::AsVector) || n.isPrim(Op::Split) || n.isPrim(Op::Slide) ||
              n.isPrim(Op::SlideStrict);
    });
    return found;
  }

  // Whether `data` is split(n, transpose(x)) with x read in order: its elements are blocks of
  // n whole columns of x.
  bool columnBlocks(const Expr& data) const {
    if (!data.isPrim(Op::Split)) return false;
    const Expr& columns = data.args().back();
    return columns.isPrim(Op::Transpose) && !throughTranspose(columns.args()[0]) &&
           !overSlideWindows(columns.args()[0]);
  }

  // Records, for the params a map, reduce or let binds, whether they are read through a
  // transpose: a map's and a reduce's element param as its data; a let's as its value, but
  // a copy nest is stored in order.
  void bindParams(const Expr& e) {
    if (e.funs().empty() || !e.funs()[0].isLambda() || e.args().empty()) return;
    const std::vector<Expr>& params = e.funs()[0].params();
    if (isMapOp(e.primOp())) {
      if (params.size() == 1) {
        transposedParams_[params[0].paramId()] = elementFlags(e.args()[0]);
        if (overSlideWindows(e.args()[0])) slideParams_.insert(params[0].paramId());
        if (columnBlocks(e.args()[0])) columnBlockParams_.insert(params[0].paramId());
      }
      return;
    }
    switch (e.primOp()) {
      case Op::Reduce:
      case Op::ReduceSeq:
      case Op::ReduceSeqUnroll:
        if (params.size() == 2) {
          transposedParams_[params[1].paramId()] = elementFlags(e.args().back());
        }
        return;
      case Op::Let:
        if (params.size() == 1) {
          const Expr& value = e.args()[0];
          // A copy nest is stored in order (codegen/lowering.h).
          transposedParams_[params[0].paramId()] = {copyNestDepth(value) == 0 &&
                                                    throughTranspose(value)};
        }
        return;
      default:
        return;
    }
  }

  Counts countUncached(const Expr& e) {
    if (e.isLambda()) return count(e.body());
    if (!e.isPrim()) return {};
    bindParams(e);
    Counts total;
    for (const Expr& arg : e.args()) total += count(arg);
    // A top-level copy (hoist-relayout's re-layout, a materialized stage): every value stored.
    if (e.isPrim(Op::Let) && !e.args().empty() && copyNestDepth(e.args()[0]) > 0) {
      total.copiedValues += elementReads(typed_.typeOf(e.args()[0]), sizes_);
    }
    switch (e.primOp()) {
      case Op::Map:
      case Op::MapGlb:
      case Op::MapWrg:
      case Op::MapLcl:
      case Op::MapSeq:
      case Op::MapSeqUnroll:
        total += once(e.funs()[0]).times(length(e.args().back()));
        return total;
      case Op::MapSeqSlide:
        // g once per input element, f once per window.
        total += once(e.funs()[1]).times(length(e.args().back()));
        total += once(e.funs()[0]).times(length(e));
        return total;
      case Op::Reduce:
      case Op::ReduceSeq:
      case Op::ReduceSeqUnroll: {
        const Expr& input = e.args().back();
        const double steps = length(input);
        total += once(e.funs()[0]).times(steps);
        const double reads = steps * elementReads(typed_.typeOf(input).arrayElement(), sizes_);
        total.reductionReads += reads;
        // A vector read through a transpose gathers its lanes from as many rows.
        if (throughTranspose(input)) {
          total.transposedReductionReads +=
              steps * elementReads(typed_.typeOf(input).arrayElement(), sizes_, true);
        }
        // An accumulator array updated by a loop (a map or mapSeq over it, not unrolled) is
        // memory: every step reads and writes all of it.
        const Expr& step = e.funs()[0];
        if (step.isLambda() && step.params().size() == 2 && updatesInALoop(step)) {
          total.loopedAccumulatorValues +=
              steps * elementReads(typed_.typeOf(e.args()[0]), sizes_);
        }
        return total;
      }
      case Op::Vectorize: {
        const double width = static_cast<double>(evaluate(e.nats()[0], sizes_));
        total += once(e.funs()[0]).times(width);
        return total;
      }
      case Op::Dot: {
        const double lanes = floatLanes(typed_.typeOf(e.args()[0]));
        total.flops += lanes > 0 ? 2 * lanes - 1 : 0;
        return total;
      }
      default: {
        for (const Expr& f : e.funs()) total += once(f);
        total.flops += operationsOf(e.primOp()) * floatLanes(typed_.typeOf(e));
        return total;
      }
    }
  }

  const TypedDefinition& typed_;
  const ArithBinding& sizes_;
  std::unordered_map<const ExprNode*, Counts> memo_;
  std::unordered_map<uint64_t, std::vector<bool>> transposedParams_;
  std::unordered_set<uint64_t> slideParams_;  // params bound to views of windows
  std::unordered_set<uint64_t> columnBlockParams_;  // params bound to blocks of columns
};

}  // namespace

int64_t countFlops(const Definition& definition, const ArithBinding& sizes) {
  return countOperations(definition, sizes).flops;
}

OperationCounts countOperations(const Definition& definition, const ArithBinding& sizes) {
  const TypedDefinition typed = typecheck(definition);
  FlopCounter counter(typed, sizes);
  try {
    const Counts counts = counter.count(definition.function.body());
    return {static_cast<int64_t>(std::llround(counts.flops)), counts.reductionReads,
            counts.transposedReductionReads, counts.loopedAccumulatorValues, counts.copiedValues};
  } catch (const ArithError& error) {
    throw std::invalid_argument(std::string("countFlops: ") + error.what());
  }
}

double OperationCounts::intensity() const {
  return reductionReads > 0 ? static_cast<double>(flops) / reductionReads : 0.0;
}

}  // namespace weft
