// The reference interpreter (see ir/interp.h): a tree-walking evaluator over expression nodes.
//
// An environment maps param ids to values; size arguments are evaluated under the size
// binding. Every primitive of ir/primitives.def gets its meaning in one switch (evalPrim), in
// the words of the semantics the project fixed (LIFT's primitives, paper section 3.1): map
// and its low-level forms apply a function to every element, reduce is a left fold giving a
// one-element array, layout primitives rearrange elements, scalar operators follow C with
// int32 and IEEE single precision. Every failure is an InterpError that names the primitive
// and its source location, because this interpreter is the oracle other tests trust.
//
// The interpreter does not use the type checker: it checks what it needs on the values
// themselves (kinds, lengths, ranges) and nothing more.
#include "ir/interp.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>

namespace weft {

namespace {

// A short description of a value for error messages (values can be large arrays).
std::string describe(const Value& value) {
  switch (value.kind) {
    case Value::Kind::Float:
      return "float " + value.toString();
    case Value::Kind::Int:
      return "int " + value.toString();
    case Value::Kind::Bool:
      return "bool " + value.toString();
    case Value::Kind::Vector:
      return "vector of width " + std::to_string(value.size()) + " " + value.toString();
    case Value::Kind::Tuple:
      return "tuple of " + std::to_string(value.size()) + " components";
    case Value::Kind::Array:
      return "array of length " + std::to_string(value.size());
  }
  return "value";
}

bool isScalar(const Value& value) {
  return value.kind == Value::Kind::Float || value.kind == Value::Kind::Int ||
         value.kind == Value::Kind::Bool;
}

std::string locationPrefix(const SourceLoc& loc) {
  return loc.known() ? loc.toString() + ": " : std::string();
}

// The one to three operands of a scalar operator, without copying them.
class Operands {
 public:
  Operands() = default;
  explicit Operands(const Value& a) { add(a); }
  Operands(const Value& a, const Value& b) { add(a), add(b); }
  Operands(const Value& a, const Value& b, const Value& c) { add(a), add(b), add(c); }
  void add(const Value& value) { items_[count_++] = &value; }
  size_t size() const { return count_; }
  const Value& operator[](size_t index) const { return *items_[index]; }

 private:
  std::array<const Value*, 3> items_{};
  size_t count_ = 0;
};

// int32 arithmetic that wraps like two's-complement hardware instead of being undefined.
int32_t wrap(int64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

class Interpreter {
 public:
  explicit Interpreter(const ArithBinding& sizes) : sizes_(sizes) {}

  // Binds params for the lifetime of the scope. The environment is a stack searched from
  // the top, so an inner binding of the same param hides the outer one until its scope ends.
  class Scope {
   public:
    explicit Scope(Interpreter& interpreter)
        : interpreter_(interpreter), height_(interpreter.environment_.size()) {}
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { interpreter_.environment_.resize(height_); }
    void bind(const Expr& param, Value value) {
      interpreter_.environment_.emplace_back(param.paramId(), std::move(value));
    }

   private:
    Interpreter& interpreter_;
    size_t height_;
  };

  Value eval(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Param:
        return bound(e);
      case ExprKind::Literal:
        switch (e.literalKind()) {
          case ScalarKind::Float:
            return Value::ofFloat(static_cast<float>(e.literalFloat()));
          case ScalarKind::Int: {
            int64_t value = e.literalInt();
            if (value < INT32_MIN || value > INT32_MAX) {
              throw InterpError(locationPrefix(e.loc()) + "integer literal " +
                                std::to_string(value) + " does not fit in 32 bits");
            }
            return Value::ofInt(static_cast<int32_t>(value));
          }
          case ScalarKind::Bool:
            return Value::ofBool(e.literalBool());
        }
        break;
      case ExprKind::Lambda:
      case ExprKind::UserFun:
        throw InterpError(locationPrefix(e.loc()) +
                          "a function cannot be used as a value (it must be applied)");
      case ExprKind::Prim:
        return evalPrim(e);
    }
    throw InterpError(locationPrefix(e.loc()) + "unknown expression kind");
  }

  // The value a param is bound to: a reference into the environment, valid until the next
  // binding.
  const Value& bound(const Expr& param) const {
    uint64_t id = param.paramId();
    for (auto it = environment_.rbegin(); it != environment_.rend(); ++it) {
      if (it->first == id) return it->second;
    }
    throw InterpError(locationPrefix(param.loc()) + "unbound variable '" + param.paramName() +
                      "'");
  }

  // Applies a Lambda or UserFun to exactly as many arguments as it has params (a tuple is one
  // argument, as in the type checker: map(p -> p._0 * p._1, zip(xs, ws))). `caller` names
  // the primitive in errors.
  Value apply(const Expr& function, std::span<Value> args, const Expr& caller) {
    if (function.isNull() || !function.isFunction()) {
      fail(caller, "expected a function argument (lambda or user function)");
    }
    const std::vector<Expr>& params = function.params();
    if (params.size() != args.size()) {
      std::string name = function.isUserFun() ? "function '" + function.userFunName() + "'"
                                              : std::string("lambda");
      fail(caller, name + " takes " + std::to_string(params.size()) + " argument(s), given " +
                       std::to_string(args.size()));
    }
    Scope scope(*this);
    for (size_t index = 0; index < params.size(); ++index) {
      scope.bind(params[index], std::move(args[index]));
    }
    return eval(function.body());
  }

 private:
  [[noreturn]] static void fail(const Expr& prim, const std::string& message) {
    std::string name = prim.isPrim() ? std::string(prim.primInfo().name) + ": " : std::string();
    throw InterpError(locationPrefix(prim.loc()) + name + message);
  }

  int64_t nat(const Expr& e, size_t index) {
    const Arith& size = e.nats().at(index);
    try {
      return evaluate(size, sizes_);
    } catch (const ArithError& error) {
      fail(e, "size argument " + size.toString() + ": " + error.what());
    }
  }

  Value arg(const Expr& e, size_t index) { return eval(e.args().at(index)); }

  // The width of asVector and vectorize: one of OpenCL's vector widths.
  int64_t vectorWidth(const Expr& e) {
    int64_t width = nat(e, 0);
    if (!isValidVectorWidth(width)) {
      fail(e, "invalid vector width " + std::to_string(width) + " (expected 2, 3, 4, 8 or 16)");
    }
    return width;
  }

  std::vector<Value> allArgs(const Expr& e) {
    std::vector<Value> values;
    values.reserve(e.args().size());
    for (const Expr& argument : e.args()) values.push_back(eval(argument));
    return values;
  }

  Value arrayArg(const Expr& e, size_t index) {
    Value value = arg(e, index);
    if (!value.isArray()) {
      fail(e, "argument " + std::to_string(index + 1) + ": expected an array, found " +
                  describe(value));
    }
    return value;
  }

  // Layout primitives and folds read their argument through a const Value: a non-const access
  // to elements that a parameter's binding shares would copy them (ValueElements), and copying
  // one element is cheap.
  Value mapOver(const Expr& e, const Expr& function, const Value& xs) {
    std::vector<Value> results;
    results.reserve(xs.size());
    for (const Value& element : xs.elements) {
      Value argument = element;
      results.push_back(apply(function, std::span<Value>(&argument, 1), e));
    }
    return Value::array(std::move(results));
  }

  // mapSeqSlide(n, f, g, xs): g applied to every element once, f to every window of n of
  // those results (map(f, slide(n, 1, map(g, xs)))).
  Value mapSeqSlide(const Expr& e) {
    const int64_t size = nat(e, 0);
    const Value xs = arrayArg(e, 0);
    const int64_t length = static_cast<int64_t>(xs.size());
    if (size < 1) fail(e, "window size must be positive, found " + std::to_string(size));
    if (size > length) {
      fail(e, "window size " + std::to_string(size) + " is larger than the length " +
                  std::to_string(length));
    }
    std::vector<Value> produced;
    produced.reserve(xs.elements.size());
    for (const Value& element : xs.elements) {
      Value argument = element;
      produced.push_back(apply(e.funs().at(1), std::span<Value>(&argument, 1), e));
    }
    std::vector<Value> results;
    results.reserve(static_cast<size_t>(length - size + 1));
    for (int64_t first = 0; first + size <= length; ++first) {
      Value window = Value::array(
          std::vector<Value>(produced.begin() + first, produced.begin() + first + size));
      results.push_back(apply(e.funs().at(0), std::span<Value>(&window, 1), e));
    }
    return Value::array(std::move(results));
  }

  Value reduceOver(const Expr& e) {
    Value accumulator = arg(e, 0);
    const Value xs = arrayArg(e, 1);
    for (const Value& element : xs.elements) {
      std::array<Value, 2> pair = {std::move(accumulator), element};
      accumulator = apply(e.funs().at(0), pair, e);
    }
    return Value::array({std::move(accumulator)});
  }

  Value evalPrim(const Expr& e) {
    switch (e.primOp()) {
      case Op::Map:
      case Op::MapSeq:
      case Op::MapSeqUnroll:
        return mapOver(e, e.funs().at(0), arrayArg(e, 0));
      case Op::MapGlb:
      case Op::MapWrg:
      case Op::MapLcl: {
        int64_t dimension = nat(e, 0);
        if (dimension < 0 || dimension > 2) {
          fail(e, "dimension must be 0, 1 or 2, found " + std::to_string(dimension));
        }
        return mapOver(e, e.funs().at(0), arrayArg(e, 0));
      }
      case Op::MapSeqSlide:
        return mapSeqSlide(e);
      case Op::Reduce:
      case Op::ReduceSeq:
      case Op::ReduceSeqUnroll:
        return reduceOver(e);
      case Op::Let: {
        Value x = arg(e, 0);
        return apply(e.funs().at(0), std::span<Value>(&x, 1), e);
      }
      case Op::Apply:
      case Op::ToGlobal:
      case Op::ToLocal:
      case Op::ToPrivate: {
        std::vector<Value> args = allArgs(e);
        return apply(e.funs().at(0), args, e);
      }
      case Op::Id:
        return arg(e, 0);
      case Op::Vectorize:
        return vectorize(e);
      case Op::Fill: {
        int64_t count = nat(e, 0);
        if (count < 1) fail(e, "length must be at least 1, found " + std::to_string(count));
        Value element = arg(e, 0);
        return Value::array(std::vector<Value>(static_cast<size_t>(count), element));
      }
      case Op::Zip:
        return zip(e);
      case Op::ArrayOf: {
        std::vector<Value> elements;
        elements.reserve(e.args().size());
        for (size_t index = 0; index < e.args().size(); ++index) elements.push_back(arg(e, index));
        return Value::array(std::move(elements));
      }
      case Op::Split:
        return split(e);
      case Op::Join:
        return join(e);
      case Op::Slide:
      case Op::SlideStrict:
        return slide(e);
      case Op::Pad:
        return pad(e);
      case Op::Crop:
        return crop(e);
      case Op::Transpose:
        return transpose(e);
      case Op::Reorder:
        return reorder(e);
      case Op::AsVector:
        return asVector(e);
      case Op::AsScalar:
        return asScalar(e);
      case Op::Tuple:
        return Value::tuple(allArgs(e));
      case Op::Get: {
        int64_t index = nat(e, 0);
        // A component of a bound tuple (p._0 in a fold over zipped arrays) is read in place.
        const Expr& argument = e.args().at(0);
        std::optional<Value> evaluated;
        if (argument.kind() != ExprKind::Param) evaluated = eval(argument);
        const Value& tuple = evaluated ? *evaluated : bound(argument);
        if (tuple.kind != Value::Kind::Tuple) fail(e, "expected a tuple, found " + describe(tuple));
        if (index < 0 || index >= static_cast<int64_t>(tuple.size())) {
          fail(e, "component " + std::to_string(index) + " out of range for a tuple of " +
                      std::to_string(tuple.size()));
        }
        return tuple.elements[static_cast<size_t>(index)];
      }
      case Op::And:
      case Op::Or:
        return logical(e);
      case Op::Select:
        return select(e);
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod:
      case Op::Min:
      case Op::Max: {
        Value a = arg(e, 0);
        Value b = arg(e, 1);
        return laneWise(e, Operands(a, b));
      }
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge:
      case Op::Eq:
      case Op::Ne: {
        Value a = arg(e, 0);
        Value b = arg(e, 1);
        return scalarOnly(e, Operands(a, b));
      }
      case Op::Not: {
        Value a = arg(e, 0);
        return scalarOnly(e, Operands(a));
      }
      case Op::Neg:
      case Op::Abs:
      case Op::Sqrt:
      case Op::Exp:
      case Op::ToFloat:
      case Op::ToInt: {
        Value a = arg(e, 0);
        return laneWise(e, Operands(a));
      }
      case Op::Fma: {
        Value a = arg(e, 0);
        Value b = arg(e, 1);
        Value c = arg(e, 2);
        return laneWise(e, Operands(a, b, c));
      }
      case Op::Dot:
        return dot(e);
    }
    fail(e, "primitive without a meaning in the interpreter");
  }

  // ---- algorithmic ----------------------------------------------------------------------

  Value vectorize(const Expr& e) {
    int64_t width = vectorWidth(e);
    std::vector<Value> args = allArgs(e);
    for (size_t index = 0; index < args.size(); ++index) {
      const Value& value = args[index];
      if (value.kind == Value::Kind::Vector) {
        if (static_cast<int64_t>(value.size()) != width) {
          fail(e, "argument " + std::to_string(index + 1) + ": expected a vector of width " +
                      std::to_string(width) + ", found " + describe(value));
        }
      } else if (!isScalar(value)) {
        fail(e, "argument " + std::to_string(index + 1) +
                    ": expected a vector or a scalar, found " + describe(value));
      }
    }
    std::vector<Value> lanes;
    for (int64_t lane = 0; lane < width; ++lane) {
      std::vector<Value> laneArgs;
      for (const Value& value : args) {
        laneArgs.push_back(
            value.kind == Value::Kind::Vector ? value.elements[static_cast<size_t>(lane)] : value);
      }
      Value result = apply(e.funs().at(0), laneArgs, e);
      if (result.kind != Value::Kind::Float && result.kind != Value::Kind::Int) {
        fail(e,
             "the function must give an int or a float for each lane, found " + describe(result));
      }
      if (!lanes.empty() && result.kind != lanes.front().kind) {
        fail(e, "the function gives different scalar kinds in different lanes");
      }
      lanes.push_back(std::move(result));
    }
    return Value::vector(std::move(lanes));
  }

  // ---- data layout ----------------------------------------------------------------------

  Value zip(const Expr& e) {
    std::vector<Value> arrays;
    for (size_t index = 0; index < e.args().size(); ++index) arrays.push_back(arrayArg(e, index));
    size_t length = arrays.front().size();
    for (size_t index = 1; index < arrays.size(); ++index) {
      if (arrays[index].size() != length) {
        fail(e, "arrays of different lengths: argument 1 has " + std::to_string(length) +
                    " elements, argument " + std::to_string(index + 1) + " has " +
                    std::to_string(arrays[index].size()));
      }
    }
    std::vector<Value> tuples;
    tuples.reserve(length);
    for (size_t element = 0; element < length; ++element) {
      std::vector<Value> components;
      for (const Value& array : arrays) components.push_back(array.elements[element]);
      tuples.push_back(Value::tuple(std::move(components)));
    }
    return Value::array(std::move(tuples));
  }

  Value split(const Expr& e) {
    int64_t chunk = nat(e, 0);
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    if (chunk < 1) fail(e, "split size must be positive, found " + std::to_string(chunk));
    if (length % chunk != 0) {
      fail(e, "split size " + std::to_string(chunk) + " does not divide the length " +
                  std::to_string(length));
    }
    std::vector<Value> chunks;
    for (int64_t start = 0; start < length; start += chunk) {
      std::vector<Value> elements;
      for (int64_t index = start; index < start + chunk; ++index) {
        elements.push_back(xs.elements[static_cast<size_t>(index)]);
      }
      chunks.push_back(Value::array(std::move(elements)));
    }
    return Value::array(std::move(chunks));
  }

  Value join(const Expr& e) {
    const Value xs = arrayArg(e, 0);
    std::vector<Value> elements;
    for (size_t row = 0; row < xs.size(); ++row) {
      const Value& inner = xs.elements[row];
      if (!inner.isArray()) fail(e, "expected an array of arrays, found " + describe(inner));
      if (inner.size() != xs.elements[0].size()) {
        fail(e, "inner arrays of different lengths: element 0 has " +
                    std::to_string(xs.elements[0].size()) + ", element " + std::to_string(row) +
                    " has " + std::to_string(inner.size()));
      }
      elements.insert(elements.end(), inner.elements.begin(), inner.elements.end());
    }
    return Value::array(std::move(elements));
  }

  Value slide(const Expr& e) {
    bool strict = e.primOp() == Op::SlideStrict;
    int64_t size = nat(e, 0);
    int64_t step = nat(e, 1);
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    if (size < 1) fail(e, "window size must be positive, found " + std::to_string(size));
    if (step < 1) fail(e, "step must be positive, found " + std::to_string(step));
    if (size > length) {
      fail(e, "window size " + std::to_string(size) + " is larger than the length " +
                  std::to_string(length));
    }
    if (strict && (length - size) % step != 0) {
      fail(e, "windows of size " + std::to_string(size) + " and step " + std::to_string(step) +
                  " do not cover the length " + std::to_string(length) + " exactly ((" +
                  std::to_string(length) + " - " + std::to_string(size) + ") % " +
                  std::to_string(step) + " != 0)");
    }
    int64_t count = (length - size + step) / step;
    std::vector<Value> windows;
    windows.reserve(static_cast<size_t>(count));
    for (int64_t window = 0; window < count; ++window) {
      auto first = xs.elements.begin() + window * step;
      windows.push_back(Value::array(std::vector<Value>(first, first + size)));
    }
    return Value::array(std::move(windows));
  }

  // A value shaped like `like` with every scalar replaced by `constant` of that scalar's kind.
  static Value constantLike(const Value& like, double constant) {
    switch (like.kind) {
      case Value::Kind::Float:
        return Value::ofFloat(static_cast<float>(constant));
      case Value::Kind::Int:
        return Value::ofInt(static_cast<int32_t>(constant));
      case Value::Kind::Bool:
        return Value::ofBool(constant != 0.0);
      default: {
        Value result = like;
        for (Value& element : result.elements) element = constantLike(element, constant);
        return result;
      }
    }
  }

  Value pad(const Expr& e) {
    int64_t left = nat(e, 0);
    int64_t right = nat(e, 1);
    const PrimAttribute& attribute = e.attribute();
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    if (left < 0 || right < 0) {
      fail(e, "padding must not be negative, found left " + std::to_string(left) + " right " +
                  std::to_string(right));
    }
    if (length == 0) fail(e, "cannot pad an empty array");
    if (attribute.boundary == Boundary::Mirror && (left > length || right > length)) {
      fail(e, "mirror padding of " + std::to_string(left) + " and " + std::to_string(right) +
                  " needs at most the length " + std::to_string(length) +
                  " on each side (a single reflection)");
    }
    std::optional<Value> constant;
    if (attribute.boundary == Boundary::Constant) {
      constant = constantLike(xs.elements[0], attribute.padValue);
    }
    std::vector<Value> result;
    result.reserve(static_cast<size_t>(left + length + right));
    for (int64_t index = 0; index < left + length + right; ++index) {
      int64_t source = index - left;
      if (source < 0 || source >= length) {
        switch (attribute.boundary) {
          case Boundary::Constant:
            result.push_back(*constant);
            continue;
          case Boundary::Clamp:
            source = std::clamp<int64_t>(source, 0, length - 1);
            break;
          case Boundary::Mirror:
            // Reflection that repeats the edge: -1 -> 0, -2 -> 1, n -> n-1, n+1 -> n-2.
            source = source < 0 ? -source - 1 : 2 * length - 1 - source;
            break;
        }
      }
      result.push_back(xs.elements[static_cast<size_t>(source)]);
    }
    return Value::array(std::move(result));
  }

  Value crop(const Expr& e) {
    int64_t left = nat(e, 0);
    int64_t right = nat(e, 1);
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    if (left < 0 || right < 0) {
      fail(e, "crop amounts must not be negative, found left " + std::to_string(left) + " right " +
                  std::to_string(right));
    }
    if (left + right > length - 1) {
      fail(e, "cropping " + std::to_string(left) + " + " + std::to_string(right) +
                  " elements from an array of length " + std::to_string(length) +
                  " leaves nothing");
    }
    return Value::array(std::vector<Value>(xs.elements.begin() + left, xs.elements.end() - right));
  }

  Value transpose(const Expr& e) {
    const Value xs = arrayArg(e, 0);
    if (xs.size() == 0) fail(e, "cannot transpose an empty array (its inner length is unknown)");
    size_t columns = 0;
    for (size_t row = 0; row < xs.size(); ++row) {
      const Value& inner = xs.elements[row];
      if (!inner.isArray()) fail(e, "expected an array of arrays, found " + describe(inner));
      if (row == 0) columns = inner.size();
      if (inner.size() != columns) {
        fail(e, "rows of different lengths: row 0 has " + std::to_string(columns) + ", row " +
                    std::to_string(row) + " has " + std::to_string(inner.size()));
      }
    }
    std::vector<Value> result(columns);
    for (size_t column = 0; column < columns; ++column) {
      std::vector<Value> elements;
      elements.reserve(xs.size());
      for (const Value& row : xs.elements) elements.push_back(row.elements[column]);
      result[column] = Value::array(std::move(elements));
    }
    return Value::array(std::move(result));
  }

  Value reorder(const Expr& e) {
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    std::vector<Value> result;
    result.reserve(xs.size());
    if (e.attribute().indexFunction == IndexFunction::Reverse) {
      for (int64_t index = length - 1; index >= 0; --index) {
        result.push_back(xs.elements[static_cast<size_t>(index)]);
      }
      return Value::array(std::move(result));
    }
    int64_t stride = 0;
    try {
      stride = evaluate(e.attribute().stride, sizes_);
    } catch (const ArithError& error) {
      fail(e, "stride " + e.attribute().stride.toString() + ": " + error.what());
    }
    if (stride < 1) fail(e, "stride must be positive, found " + std::to_string(stride));
    if (length % stride != 0) {
      fail(e, "stride " + std::to_string(stride) + " does not divide the length " +
                  std::to_string(length));
    }
    // result[i] = xs[i / (n/s) + s * (i % (n/s))] (LIFT's reorderStride).
    int64_t groups = length / stride;
    for (int64_t index = 0; index < length; ++index) {
      int64_t source = index / groups + stride * (index % groups);
      result.push_back(xs.elements[static_cast<size_t>(source)]);
    }
    return Value::array(std::move(result));
  }

  Value asVector(const Expr& e) {
    int64_t width = vectorWidth(e);
    const Value xs = arrayArg(e, 0);
    int64_t length = static_cast<int64_t>(xs.size());
    if (length % width != 0) {
      fail(e, "vector width " + std::to_string(width) + " does not divide the length " +
                  std::to_string(length));
    }
    std::vector<Value> vectors;
    for (int64_t start = 0; start < length; start += width) {
      std::vector<Value> lanes;
      for (int64_t index = start; index < start + width; ++index) {
        const Value& element = xs.elements[static_cast<size_t>(index)];
        if (element.kind != Value::Kind::Float && element.kind != Value::Kind::Int) {
          fail(e, "expected an array of ints or floats, found an element " + describe(element));
        }
        if (element.kind != xs.elements[0].kind) fail(e, "array of mixed scalar kinds");
        lanes.push_back(element);
      }
      vectors.push_back(Value::vector(std::move(lanes)));
    }
    return Value::array(std::move(vectors));
  }

  Value asScalar(const Expr& e) {
    const Value xs = arrayArg(e, 0);
    std::vector<Value> scalars;
    for (const Value& vector : xs.elements) {
      if (vector.kind != Value::Kind::Vector) {
        fail(e, "expected an array of vectors, found " + describe(vector));
      }
      if (vector.size() != xs.elements[0].size()) fail(e, "vectors of different widths");
      scalars.insert(scalars.end(), vector.elements.begin(), vector.elements.end());
    }
    return Value::array(std::move(scalars));
  }

  // ---- scalar operators -----------------------------------------------------------------

  // Applies a scalar operator to scalar operands, or lane by lane when some are vectors
  // (all vectors of one width; scalars are broadcast to every lane).
  Value laneWise(const Expr& e, Operands operands) {
    std::optional<size_t> width;
    for (size_t index = 0; index < operands.size(); ++index) {
      const Value& operand = operands[index];
      if (operand.kind == Value::Kind::Vector) {
        if (width && *width != operand.size()) {
          fail(e, "vectors of different widths " + std::to_string(*width) + " and " +
                      std::to_string(operand.size()));
        }
        width = operand.size();
      } else if (!isScalar(operand)) {
        fail(e, "operand " + std::to_string(index + 1) + ": expected a scalar or a vector, found " +
                    describe(operand));
      }
    }
    if (!width) return scalarOp(e, operands);
    std::vector<Value> lanes;
    lanes.reserve(*width);
    for (size_t lane = 0; lane < *width; ++lane) {
      Operands scalars;
      for (size_t index = 0; index < operands.size(); ++index) {
        const Value& operand = operands[index];
        scalars.add(operand.kind == Value::Kind::Vector ? operand.elements[lane] : operand);
      }
      lanes.push_back(scalarOp(e, scalars));
    }
    return Value::vector(std::move(lanes));
  }

  void requireSameKind(const Expr& e, const Operands& operands) {
    for (size_t index = 1; index < operands.size(); ++index) {
      const Value& operand = operands[index];
      if (operand.kind != operands[0].kind) {
        fail(e, std::string("operands of different kinds: ") + kindName(operands[0].kind) +
                    " and " + kindName(operand.kind));
      }
    }
  }

  [[noreturn]] void failKind(const Expr& e, const char* expected, const Value& found) {
    fail(e, std::string("expected ") + expected + " operands, found " + describe(found));
  }

  // One scalar operation on scalar operands (the lane-wise core of every scalar operator).
  Value scalarOp(const Expr& e, const Operands& operands) {
    const Value& a = operands[0];
    Op op = e.primOp();
    switch (op) {
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div:
      case Op::Mod:
      case Op::Min:
      case Op::Max: {
        requireSameKind(e, operands);
        const Value& b = operands[1];
        if (a.kind == Value::Kind::Float) {
          float x = a.f;
          float y = b.f;
          switch (op) {
            case Op::Add:
              return Value::ofFloat(x + y);
            case Op::Sub:
              return Value::ofFloat(x - y);
            case Op::Mul:
              return Value::ofFloat(x * y);
            case Op::Div:
              return Value::ofFloat(x / y);
            case Op::Mod:
              failKind(e, "int", a);
            case Op::Min:
              return Value::ofFloat(std::fmin(x, y));
            case Op::Max:
              return Value::ofFloat(std::fmax(x, y));
            default:
              break;
          }
        } else if (a.kind == Value::Kind::Int) {
          int64_t x = a.i;
          int64_t y = b.i;
          switch (op) {
            case Op::Add:
              return Value::ofInt(wrap(x + y));
            case Op::Sub:
              return Value::ofInt(wrap(x - y));
            case Op::Mul:
              return Value::ofInt(wrap(x * y));
            case Op::Div:
            case Op::Mod:
              if (y == 0) fail(e, "integer division by zero");
              if (x == INT32_MIN && y == -1) fail(e, "integer overflow in INT_MIN / -1");
              // C++ / and % on integers truncate toward zero, as C does.
              return Value::ofInt(static_cast<int32_t>(op == Op::Div ? x / y : x % y));
            case Op::Min:
              return Value::ofInt(static_cast<int32_t>(std::min(x, y)));
            case Op::Max:
              return Value::ofInt(static_cast<int32_t>(std::max(x, y)));
            default:
              break;
          }
        }
        failKind(e, "int or float", a);
      }
      case Op::Lt:
      case Op::Le:
      case Op::Gt:
      case Op::Ge: {
        requireSameKind(e, operands);
        const Value& b = operands[1];
        if (a.kind == Value::Kind::Bool) failKind(e, "int or float", a);
        bool isFloat = a.kind == Value::Kind::Float;
        double x = isFloat ? a.f : a.i;
        double y = isFloat ? b.f : b.i;
        switch (op) {
          case Op::Lt:
            return Value::ofBool(x < y);
          case Op::Le:
            return Value::ofBool(x <= y);
          case Op::Gt:
            return Value::ofBool(x > y);
          default:
            return Value::ofBool(x >= y);
        }
      }
      case Op::Eq:
      case Op::Ne: {
        requireSameKind(e, operands);
        const Value& b = operands[1];
        bool equal = a.kind == Value::Kind::Float ? a.f == b.f
                     : a.kind == Value::Kind::Int ? a.i == b.i
                                                  : a.b == b.b;
        return Value::ofBool(op == Op::Eq ? equal : !equal);
      }
      case Op::Not:
        if (a.kind != Value::Kind::Bool) failKind(e, "bool", a);
        return Value::ofBool(!a.b);
      case Op::Neg:
        if (a.kind == Value::Kind::Float) return Value::ofFloat(-a.f);
        if (a.kind == Value::Kind::Int) return Value::ofInt(wrap(-static_cast<int64_t>(a.i)));
        failKind(e, "int or float", a);
      case Op::Abs:
        if (a.kind == Value::Kind::Float) return Value::ofFloat(std::fabs(a.f));
        if (a.kind == Value::Kind::Int) {
          return Value::ofInt(wrap(a.i < 0 ? -static_cast<int64_t>(a.i) : a.i));
        }
        failKind(e, "int or float", a);
      case Op::Sqrt:
        if (a.kind != Value::Kind::Float) failKind(e, "float", a);
        return Value::ofFloat(std::sqrt(a.f));
      case Op::Exp:
        if (a.kind != Value::Kind::Float) failKind(e, "float", a);
        return Value::ofFloat(std::exp(a.f));
      case Op::Fma:
        // Fused: one rounding, as OpenCL's fma.
        requireSameKind(e, operands);
        if (a.kind == Value::Kind::Float) {
          return Value::ofFloat(std::fma(a.f, operands[1].f, operands[2].f));
        }
        failKind(e, "float", a);
      case Op::ToFloat:
        switch (a.kind) {
          case Value::Kind::Float:
            return a;
          case Value::Kind::Int:
            return Value::ofFloat(static_cast<float>(a.i));
          default:
            return Value::ofFloat(a.b ? 1.0f : 0.0f);
        }
      case Op::ToInt:
        switch (a.kind) {
          case Value::Kind::Int:
            return a;
          case Value::Kind::Bool:
            return Value::ofInt(a.b ? 1 : 0);
          default:
            // C converts by truncation toward zero; out of range (or NaN) is undefined.
            if (!(a.f > -2147483649.0f && a.f < 2147483648.0f)) {
              fail(e, "float " + a.toString() + " is out of the range of int");
            }
            return Value::ofInt(static_cast<int32_t>(a.f));
        }
      default:
        break;
    }
    fail(e, "not a scalar operator");
  }

  // Comparisons and logical operators take scalars only (weft has no bool vectors).
  Value scalarOnly(const Expr& e, Operands operands) {
    for (size_t index = 0; index < operands.size(); ++index) {
      if (!isScalar(operands[index])) {
        fail(e, "operand " + std::to_string(index + 1) + ": expected a scalar, found " +
                    describe(operands[index]));
      }
    }
    return scalarOp(e, operands);
  }

  // && and || evaluate their second operand only when the first does not decide, as in C.
  Value logical(const Expr& e) {
    Value a = arg(e, 0);
    if (a.kind != Value::Kind::Bool) failKind(e, "bool", a);
    if (e.primOp() == Op::And && !a.b) return Value::ofBool(false);
    if (e.primOp() == Op::Or && a.b) return Value::ofBool(true);
    Value b = arg(e, 1);
    if (b.kind != Value::Kind::Bool) failKind(e, "bool", b);
    return Value::ofBool(b.b);
  }

  // c ? a : b evaluates only the chosen branch, as in C; the branches may have any type.
  Value select(const Expr& e) {
    Value condition = arg(e, 0);
    if (condition.kind != Value::Kind::Bool) {
      fail(e, "condition: expected a bool, found " + describe(condition));
    }
    return arg(e, condition.b ? 1 : 2);
  }

  // dot(a, b): the sum over lanes of a[k] * b[k], accumulated in lane order in single
  // precision; for two scalars, a * b (as OpenCL's dot on float).
  Value dot(const Expr& e) {
    Value a = arg(e, 0);
    Value b = arg(e, 1);
    if (a.kind == Value::Kind::Float && b.kind == Value::Kind::Float) {
      return Value::ofFloat(a.f * b.f);
    }
    if (a.kind != Value::Kind::Vector || b.kind != Value::Kind::Vector) {
      fail(e, "expected two float vectors, found " + describe(a) + " and " + describe(b));
    }
    if (a.size() != b.size()) {
      fail(e, "vectors of different widths " + std::to_string(a.size()) + " and " +
                  std::to_string(b.size()));
    }
    float sum = 0.0f;
    for (size_t lane = 0; lane < a.size(); ++lane) {
      if (a.elements[lane].kind != Value::Kind::Float ||
          b.elements[lane].kind != Value::Kind::Float) {
        fail(e, "expected float vectors");
      }
      float product = a.elements[lane].f * b.elements[lane].f;
      sum = lane == 0 ? product : sum + product;
    }
    return Value::ofFloat(sum);
  }

  const ArithBinding& sizes_;
  std::vector<std::pair<uint64_t, Value>> environment_;
};

// ---- binding sizes from inputs ----------------------------------------------------------

// One array dimension of one parameter as found in the inputs.
struct FoundLength {
  std::string where;  // "parameter 'input' dimension 2"
  Arith length;       // what the type says
  int64_t found;      // what the input has
};

class SizeBinder {
 public:
  SizeBinder(const Definition& definition, const ArithBinding& given)
      : definition_(definition), binding_(given) {
    for (const auto& [name, value] : given) origin_[name] = "the given sizes";
    collectVariables();
  }

  ArithBinding run(const std::vector<Value>& inputs) {
    const std::vector<Expr>& params = definition_.function.params();
    if (params.size() != inputs.size()) {
      fail("takes " + std::to_string(params.size()) + " parameter(s), given " +
           std::to_string(inputs.size()) + " input(s)");
    }
    for (const auto& [name, value] : binding_) checkRange(name, value, "");
    for (size_t index = 0; index < params.size(); ++index) {
      const Expr& param = params[index];
      if (param.paramType().isNull()) {
        fail("parameter '" + param.paramName() + "' has no type");
      }
      std::string where = "parameter '" + param.paramName() + "'";
      walk(param.paramType(), inputs[index], where, 1, std::to_string(index));
    }
    bindSingleVariables();
    solveRemaining();
    // Ranges with symbolic bounds can be checked only now that everything is bound.
    for (const auto& [name, value] : binding_) {
      const std::string& origin = origin_[name];
      checkRange(name, value, origin == "the given sizes" ? "" : origin + ": ");
    }
    return binding_;
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw InterpError(locationPrefix(definition_.loc) + "definition '" + definition_.name +
                      "': " + message);
  }

  // Matches `type` against `value`; `dimension` counts array levels (1 = outermost);
  // `key` identifies the type position so that every row of a nested array is compared.
  void walk(const Type& type, const Value& value, const std::string& where, int dimension,
            const std::string& key) {
    switch (type.kind()) {
      case TypeKind::Scalar: {
        Value::Kind expected = type.scalarKind() == ScalarKind::Float ? Value::Kind::Float
                               : type.scalarKind() == ScalarKind::Int ? Value::Kind::Int
                                                                      : Value::Kind::Bool;
        if (value.kind != expected) {
          fail(where + ": expected " + type.toString() + ", found " + describe(value));
        }
        return;
      }
      case TypeKind::Vector:
        if (value.kind != Value::Kind::Vector ||
            static_cast<int64_t>(value.size()) != type.vectorWidth() ||
            (value.size() > 0 &&
             value.elements[0].kind != (type.scalarKind() == ScalarKind::Float ? Value::Kind::Float
                                        : type.scalarKind() == ScalarKind::Int
                                            ? Value::Kind::Int
                                            : Value::Kind::Bool))) {
          fail(where + ": expected " + type.toString() + ", found " + describe(value));
        }
        return;
      case TypeKind::Tuple:
        if (value.kind != Value::Kind::Tuple || value.size() != type.tupleElements().size()) {
          fail(where + ": expected " + type.toString() + ", found " + describe(value));
        }
        for (size_t index = 0; index < value.size(); ++index) {
          walk(type.tupleElements()[index], value.elements[index],
               where + " component " + std::to_string(index), dimension,
               key + "." + std::to_string(index));
        }
        return;
      case TypeKind::Array: {
        std::string here = where + " dimension " + std::to_string(dimension);
        if (!value.isArray()) {
          fail(here + ": expected an array of type " + type.toString() + ", found " +
               describe(value));
        }
        int64_t found = static_cast<int64_t>(value.size());
        std::string dimensionKey = key + "[" + std::to_string(dimension) + "]";
        auto seen = seen_.find(dimensionKey);
        if (seen == seen_.end()) {
          seen_.emplace(dimensionKey, found);
          lengths_.push_back({here, type.arrayLength(), found});
        } else if (seen->second != found) {
          fail(here + ": the rows of this array have different lengths (" +
               std::to_string(seen->second) + " and " + std::to_string(found) + ")");
        }
        for (const Value& element : value.elements) {
          walk(type.arrayElement(), element, where, dimension + 1, dimensionKey);
        }
        return;
      }
    }
  }

  std::string describeBinding(const std::string& name) const {
    auto origin = origin_.find(name);
    return name + " = " + std::to_string(binding_.at(name)) +
           (origin != origin_.end() ? " from " + origin->second : std::string());
  }

  void bind(const Arith& variable, int64_t value, const std::string& origin) {
    variables_.emplace(variable.varName(), variable);  // no-op when declared or seen
    binding_[variable.varName()] = value;
    origin_[variable.varName()] = origin;
    checkRange(variable.varName(), value, origin + ": ");
  }

  // The variables of the definition by name, to check bound values against their ranges: the
  // declared sizes first (they win over a same-named variable built without the declaration),
  // then every variable in param types, size arguments, strides and the declared type.
  void collectVariables() {
    auto add = [&](const Arith& variable) { variables_.emplace(variable.varName(), variable); };
    for (const Arith& declared : definition_.sizeDeclarations) {
      if (declared.isVar()) add(declared);
    }
    for (const Arith& variable : variableOccurrences(definition_)) add(variable);
  }

  bool isDeclared(const std::string& name) const {
    for (const Arith& declared : definition_.sizeDeclarations) {
      if (declared.isVar() && declared.varName() == name) return true;
    }
    return false;
  }

  // Fails when `value` lies outside the range of the variable `name`. A bound that mentions
  // variables not bound yet is skipped (run() checks again once everything is bound).
  // `where` prefixes the message ("parameter 'a' dimension 1: ", or empty for given sizes).
  void checkRange(const std::string& name, int64_t value, const std::string& where) const {
    auto found = variables_.find(name);
    if (found == variables_.end()) return;
    const Arith& variable = found->second;
    std::optional<int64_t> lo = tryEvaluate(variable.varLo(), binding_);
    std::optional<int64_t> hi;
    if (variable.varHi()) hi = tryEvaluate(*variable.varHi(), binding_);
    bool below = lo && value < *lo;
    bool above = hi && value > *hi;
    if (!below && !above) return;
    std::string range = "[" + variable.varLo().toString() + ", " +
                        (variable.varHi() ? variable.varHi()->toString() + "]" : "inf)");
    std::string symbolic;  // the values of the variables a symbolic bound mentions
    std::vector<Arith> boundVars = variable.varLo().vars();
    if (variable.varHi()) {
      for (const Arith& v : variable.varHi()->vars()) boundVars.push_back(v);
    }
    std::set<std::string> described;
    for (const Arith& v : boundVars) {
      if (!binding_.count(v.varName()) || !described.insert(v.varName()).second) continue;
      symbolic += (symbolic.empty() ? " (" : "; ") + describeBinding(v.varName());
    }
    if (!symbolic.empty()) symbolic += ")";
    bool declared = isDeclared(name);
    std::string hint;
    if (!declared && variable.varKind() == VarKind::Size && value >= 0 && lo && *lo == 1 &&
        variable.varLo().isConstant()) {
      hint = "; sizes are at least 1 unless declared otherwise, e.g. def " + definition_.name +
             "[" + name + " >= 0](...)";
    }
    const char* kind = variable.varKind() == VarKind::Size     ? "size "
                       : variable.varKind() == VarKind::Tuning ? "tuning parameter "
                                                               : "variable ";
    fail(where + kind + name + " = " + std::to_string(value) + " is outside its " +
         (declared ? "declared " : "") + "range " + range + symbolic + hint);
  }

  // A length that is a single variable binds it (or is compared with its binding).
  void bindSingleVariables() {
    for (const FoundLength& length : lengths_) {
      if (!length.length.isVar()) continue;
      const std::string& name = length.length.varName();
      auto bound = binding_.find(name);
      if (bound == binding_.end()) {
        bind(length.length, length.found, length.where);
      } else if (bound->second != length.found) {
        fail(length.where + ": expected length " + describeBinding(name) + ", found " +
             std::to_string(length.found));
      }
    }
  }

  // Other lengths: evaluated and compared once their variables are bound; a length that is
  // linear in its one unbound variable (c*N + d) determines that variable.
  void solveRemaining() {
    std::vector<const FoundLength*> pending;
    for (const FoundLength& length : lengths_) {
      if (!length.length.isVar()) pending.push_back(&length);
    }
    bool progress = true;
    while (!pending.empty() && progress) {
      progress = false;
      std::vector<const FoundLength*> stillPending;
      for (const FoundLength* length : pending) {
        std::vector<Arith> unbound;
        for (const Arith& variable : length->length.vars()) {
          if (!binding_.count(variable.varName())) unbound.push_back(variable);
        }
        if (unbound.empty()) {
          check(*length);
          progress = true;
        } else if (unbound.size() == 1 && solveLinear(*length, unbound[0])) {
          check(*length);
          progress = true;
        } else {
          stillPending.push_back(length);
        }
      }
      pending = std::move(stillPending);
    }
    if (!pending.empty()) {
      const FoundLength& length = *pending.front();
      std::string names;
      for (const Arith& variable : length.length.vars()) {
        if (binding_.count(variable.varName())) continue;
        names += (names.empty() ? "" : ", ") + variable.varName();
      }
      fail(length.where + ": cannot determine " + names + " from the length " +
           length.length.toString() + " = " + std::to_string(length.found) +
           "; bind it explicitly (weft run --size " + names.substr(0, names.find(',')) + "=...)");
    }
  }

  bool solveLinear(const FoundLength& length, const Arith& variable) {
    ArithBinding trial = binding_;
    trial[variable.varName()] = 0;
    std::optional<int64_t> offset = tryEvaluate(length.length, trial);
    trial[variable.varName()] = 1;
    std::optional<int64_t> atOne = tryEvaluate(length.length, trial);
    if (!offset || !atOne) return false;
    int64_t coefficient = *atOne - *offset;
    if (coefficient == 0) return false;
    // Only when the length really is coefficient * variable + (the rest).
    ArithSubstitution bound;
    for (const auto& [name, value] : binding_) bound[name] = Arith(value);
    if (substitute(length.length, bound) != Arith(coefficient) * variable + Arith(*offset)) {
      return false;
    }
    int64_t difference = length.found - *offset;
    if (difference % coefficient != 0) {
      fail(length.where + ": the length " + length.length.toString() + " cannot be " +
           std::to_string(length.found) + " for any integer " + variable.varName());
    }
    bind(variable, difference / coefficient,
         length.where + " (" + length.length.toString() + " = " + std::to_string(length.found) +
             ")");
    return true;
  }

  void check(const FoundLength& length) {
    int64_t expected = 0;
    try {
      expected = evaluate(length.length, binding_);
    } catch (const ArithError& error) {
      fail(length.where + ": length " + length.length.toString() + ": " + error.what());
    }
    if (expected == length.found) return;
    std::string because;
    for (const Arith& variable : length.length.vars()) {
      because += (because.empty() ? " (" : "; ") + describeBinding(variable.varName());
    }
    if (!because.empty()) because += ")";
    std::string expectedText = length.length.isConstant()
                                   ? length.length.toString()
                                   : length.length.toString() + " = " + std::to_string(expected);
    fail(length.where + ": expected length " + expectedText + because + ", found " +
         std::to_string(length.found));
  }

  const Definition& definition_;
  ArithBinding binding_;
  std::map<std::string, Arith> variables_;  // by name, see collectVariables
  std::map<std::string, std::string> origin_;
  std::map<std::string, int64_t> seen_;
  std::vector<FoundLength> lengths_;
};

void requireDefinitionFunction(const Definition& definition) {
  if (definition.function.isNull() || !definition.function.isLambda()) {
    throw InterpError(locationPrefix(definition.loc) + "definition '" + definition.name +
                      "' is not a function");
  }
}

}  // namespace

ArithBinding bindSizes(const Definition& definition, const std::vector<Value>& inputs,
                       const ArithBinding& given) {
  requireDefinitionFunction(definition);
  return SizeBinder(definition, given).run(inputs);
}

Value interpret(const Definition& definition, const std::vector<Value>& inputs,
                const ArithBinding& sizes) {
  requireDefinitionFunction(definition);
  const std::vector<Expr>& params = definition.function.params();
  if (params.size() != inputs.size()) {
    throw InterpError(locationPrefix(definition.loc) + "definition '" + definition.name +
                      "' takes " + std::to_string(params.size()) + " parameter(s), given " +
                      std::to_string(inputs.size()) + " input(s)");
  }
  Interpreter interpreter(sizes);
  Interpreter::Scope scope(interpreter);
  for (size_t index = 0; index < params.size(); ++index) scope.bind(params[index], inputs[index]);
  return interpreter.eval(definition.function.body());
}

Value applyFunction(const Expr& function, const std::vector<Value>& args,
                    const ArithBinding& sizes) {
  Interpreter interpreter(sizes);
  std::vector<Value> arguments = args;
  return interpreter.apply(function, arguments, function);
}

Value interpretExpr(const Expr& expression, const ArithBinding& sizes,
                    const std::vector<std::pair<Expr, Value>>& bindings) {
  Interpreter interpreter(sizes);
  Interpreter::Scope scope(interpreter);
  for (const auto& [param, value] : bindings) scope.bind(param, value);
  return interpreter.eval(expression);
}

}  // namespace weft
