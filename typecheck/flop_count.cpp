// Counting a definition's floating-point operations (see flop_count.h).
#include "typecheck/flop_count.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <unordered_map>

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

class FlopCounter {
 public:
  FlopCounter(const TypedDefinition& typed, const ArithBinding& sizes)
      : typed_(typed), sizes_(sizes) {}

  double count(const Expr& e) {
    auto found = memo_.find(e.node());
    if (found != memo_.end()) return found->second;
    const double result = countUncached(e);
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
  double once(const Expr& f) {
    if (f.isLambda()) return count(f.body());
    if (f.isUserFun()) {
      return floatLanes(f.userFunResultType()) * userFunctionFlops(f.body());
    }
    return count(f);
  }

  double countUncached(const Expr& e) {
    if (e.isLambda()) return count(e.body());
    if (!e.isPrim()) return 0;
    double args = 0;
    for (const Expr& arg : e.args()) args += count(arg);
    switch (e.primOp()) {
      case Op::Map:
      case Op::MapGlb:
      case Op::MapWrg:
      case Op::MapLcl:
      case Op::MapSeq:
      case Op::MapSeqUnroll:
      case Op::Reduce:
      case Op::ReduceSeq:
      case Op::ReduceSeqUnroll:
        return args + length(e.args().back()) * once(e.funs()[0]);
      case Op::Vectorize: {
        const double width = static_cast<double>(evaluate(e.nats()[0], sizes_));
        return args + width * once(e.funs()[0]);
      }
      case Op::Dot: {
        const double lanes = floatLanes(typed_.typeOf(e.args()[0]));
        return args + (lanes > 0 ? 2 * lanes - 1 : 0);
      }
      default: {
        double funs = 0;
        for (const Expr& f : e.funs()) funs += once(f);
        return args + funs + operationsOf(e.primOp()) * floatLanes(typed_.typeOf(e));
      }
    }
  }

  const TypedDefinition& typed_;
  const ArithBinding& sizes_;
  std::unordered_map<const ExprNode*, double> memo_;
};

}  // namespace

int64_t countFlops(const Definition& definition, const ArithBinding& sizes) {
  const TypedDefinition typed = typecheck(definition);
  FlopCounter counter(typed, sizes);
  try {
    return static_cast<int64_t>(std::llround(counter.count(definition.function.body())));
  } catch (const ArithError& error) {
    throw std::invalid_argument(std::string("countFlops: ") + error.what());
  }
}

}  // namespace weft
