// A generator of random well-typed weft programs, for property tests: the printer/parser
// round trip now, rewrite rules against the interpreter later.
//
// Generation is type-directed. It starts from the definition's inputs (given types, or random
// ones such as [[float]8]n or [int](4*m)) and applies a chain of primitives whose input types
// fit the value at hand, tracking the result type of every step with the typing rules of the
// preamble (split by m needs m | n, slide needs size <= n, ...). A side condition is only
// used when ir/arith.h proves it for every value of the size variables (which range over
// [1, inf)), or, for windows of size 1, because every length the generator makes is positive;
// so a program is well-typed for any binding of its sizes. Function arguments are
// lambdas whose bodies are generated the same way from the lambda's param; bodies may capture
// enclosing params (scalars in arithmetic, equal-length arrays in zips).
//
// Header-only (tests/support has no library): include it and use
//   weft::testing::RandomProgramGenerator gen(seed);
//   weft::testing::RandomProgram p = gen.program();          // random inputs
//   weft::testing::RandomProgram q = gen.program({Type::array(...)}); // given inputs
// RandomProgram also gives the derived result type (compare it with typecheck/) and the size
// variables to bind before running the interpreter. RandomSyntaxGenerator (below) makes
// programs that are only syntactically valid, over every primitive, for syntax properties.
// Everything is reproducible from the seed (std::mt19937_64, no global state).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/builders.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace weft::testing {

struct RandomProgramOptions {
  int maxDepth = 3;               // nesting of lambdas
  int maxChain = 3;               // primitives applied one after another at one level
  int maxInputs = 2;              // inputs of a random definition
  bool symbolicSizes = true;      // random input lengths may be size variables (n, 4*m, n + 2)
  bool lowLevel = true;           // mapGlb/mapWrg/mapLcl/mapSeq(Unroll)/reduceSeq(Unroll)/to*
  bool vectors = true;            // asVector/asScalar and vector arithmetic
  bool typedLambdaParams = true;  // sometimes annotate lambda params with their type
};

struct TypedExpr {
  Expr expr;
  Type type;
};

struct RandomProgram {
  Definition definition;
  std::vector<Type> inputTypes;
  Type resultType;                 // as the generator derived it
  std::vector<std::string> sizes;  // the size variables the inputs use
};

class RandomProgramGenerator {
 public:
  explicit RandomProgramGenerator(uint64_t seed, RandomProgramOptions options = {})
      : rng_(seed), options_(options) {}

  // A definition over inputs of the given types.
  RandomProgram program(const std::vector<Type>& inputTypes, const std::string& name = "f") {
    scope_.clear();
    std::vector<Expr> params;
    for (size_t i = 0; i < inputTypes.size(); ++i) {
      Expr p = Expr::param(i == 0 ? "input" : "input" + std::to_string(i), inputTypes[i]);
      params.push_back(p);
      scope_.push_back({p, inputTypes[i]});
    }
    TypedExpr start = scope_[0];
    TypedExpr body = chain(start, options_.maxDepth, uniform(1, options_.maxChain));
    // Sometimes combine the first input with a second one.
    if (inputTypes.size() > 1 && chance(0.5)) {
      if (auto zipped = zipWithScope(body)) body = *zipped;
    }
    scope_.clear();
    RandomProgram result;
    result.definition =
        Definition{name, Expr::lambda(params, body.expr), chance(0.5) ? body.type : Type(), {}};
    result.inputTypes = inputTypes;
    result.resultType = body.type;
    for (const Type& t : inputTypes) {
      for (const Arith& v : typeVars(t)) {
        bool known = false;
        for (const std::string& s : result.sizes) known = known || s == v.varName();
        if (!known) result.sizes.push_back(v.varName());
      }
    }
    return result;
  }

  // A definition over 1..maxInputs random inputs of which the others match the first's length.
  RandomProgram program() {
    Type first = randomInputType();
    std::vector<Type> inputs{first};
    int extra = uniform(0, options_.maxInputs - 1);
    for (int i = 0; i < extra; ++i) {
      Type element = chance(0.5) ? Type::floatType() : randomElementType(1);
      inputs.push_back(Type::array(element, first.arrayLength()));
    }
    return program(inputs);
  }

  // An array type of 1 to 3 dimensions over float or int.
  Type randomInputType() {
    Type t = Type::scalar(chance(0.75) ? ScalarKind::Float : ScalarKind::Int);
    int dims = uniform(1, 3);
    for (int i = 0; i < dims; ++i) t = Type::array(t, randomLength());
    return t;
  }

  // One random value of a scalar kind, exactly representable (so sums reassociate exactly
  // for small inputs).
  Expr literalOf(ScalarKind kind) {
    switch (kind) {
      case ScalarKind::Float: {
        static const double values[] = {0.0, 1.0, 2.0, 0.5, -1.0, 3.0, -0.25, 4.0};
        return Expr::floatLiteral(values[uniform(0, 7)]);
      }
      case ScalarKind::Int:
        return Expr::intLiteral(uniform(-3, 5));
      case ScalarKind::Bool:
        return Expr::boolLiteral(chance(0.5));
    }
    return Expr();
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  using Candidate = std::function<TypedExpr()>;

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(uniform(0, static_cast<int>(items.size()) - 1))];
  }

  Arith randomLength() {
    if (!options_.symbolicSizes || chance(0.5)) {
      static const int64_t constants[] = {2, 3, 4, 6, 8, 12, 16};
      return Arith(constants[uniform(0, 6)]);
    }
    Arith n = Arith::size(chance(0.6) ? "n" : "m");
    switch (uniform(0, 3)) {
      case 0:
        return n;
      case 1:
        return 2 * n;
      case 2:
        return 4 * n;
      default:
        return n + 2;
    }
  }

  Type randomElementType(int dims) {
    Type t = Type::floatType();
    for (int i = 0; i < dims; ++i) t = Type::array(t, Arith(pick(std::vector<int64_t>{2, 3, 4})));
    return t;
  }

  std::string paramName() {
    static const std::vector<std::string> names{"x", "y", "a", "acc", "p", "row", "x"};
    return pick(names);
  }

  Expr newParam(const Type& type) {
    bool typed = options_.typedLambdaParams && chance(0.15);
    return Expr::param(paramName(), typed ? type : Type());
  }

  // A lambda of one param of type `in`, its body a chain of `steps` primitives.
  TypedExpr lambdaOver(const Type& in, int depth) {
    Expr x = newParam(in);
    scope_.push_back({x, in});
    int steps = chance(0.15) ? 0 : uniform(1, options_.maxChain);
    TypedExpr body = chain({x, in}, depth, steps);
    scope_.pop_back();
    return {Expr::lambda({x}, body.expr), body.type};
  }

  TypedExpr chain(TypedExpr value, int depth, int steps) {
    for (int i = 0; i < steps; ++i) value = step(value, depth);
    return value;
  }

  // One primitive applied to `value`, chosen among those whose input type fits.
  TypedExpr step(const TypedExpr& value, int depth) {
    std::vector<Candidate> candidates;
    const Type& t = value.type;
    if (t.isArray()) {
      arrayCandidates(value, depth, candidates);
    } else if (t.isTuple()) {
      for (size_t i = 0; i < t.tupleElements().size(); ++i) {
        candidates.push_back([=] {
          return TypedExpr{get(Arith(static_cast<int64_t>(i)), value.expr), t.tupleElements()[i]};
        });
      }
    } else if (t.isVector()) {
      vectorCandidates(value, candidates);
    } else if (t.scalarKind() != ScalarKind::Bool) {
      scalarCandidates(value, depth, candidates);
    } else {
      candidates.push_back([=, this] {
        Expr a = literalOf(ScalarKind::Float), b = literalOf(ScalarKind::Float);
        return TypedExpr{select(value.expr, a, b), Type::floatType()};
      });
    }
    return pick(candidates)();
  }

  // A value of `kind` to combine with: a literal or a scalar param in scope.
  Expr operandOf(const Type& type) {
    std::vector<Expr> captured;
    for (const TypedExpr& s : scope_) {
      if (s.type == type) captured.push_back(s.expr);
    }
    if (!captured.empty() && chance(0.3)) return pick(captured);
    return literalOf(type.scalarKind());
  }

  void scalarCandidates(const TypedExpr& value, int depth, std::vector<Candidate>& out) {
    const Type t = value.type;
    const Expr x = value.expr;
    bool isFloat = t.scalarKind() == ScalarKind::Float;
    out.push_back([=, this] { return TypedExpr{x + operandOf(t), t}; });
    out.push_back([=, this] { return TypedExpr{x - operandOf(t), t}; });
    out.push_back([=, this] { return TypedExpr{x * operandOf(t), t}; });
    out.push_back([=, this] { return TypedExpr{max(x, operandOf(t)), t}; });
    out.push_back([=, this] { return TypedExpr{min(operandOf(t), x), t}; });
    out.push_back([=] { return TypedExpr{-x, t}; });
    out.push_back([=] { return TypedExpr{abs(x), t}; });
    out.push_back([=, this] {
      Expr c = operandOf(t);
      Expr condition = chance(0.5) ? lt(x, c) : logicalOr(ge(x, c), eq(x, operandOf(t)));
      return TypedExpr{select(condition, x, operandOf(t)), t};
    });
    out.push_back([=, this] {
      TypedExpr other = step(value, depth);
      return TypedExpr{tuple(x, other.expr), Type::tuple({t, other.type})};
    });
    if (isFloat) {
      out.push_back([=] { return TypedExpr{x * x, t}; });
      out.push_back([=] { return TypedExpr{x / lit(2.0f), t}; });
      out.push_back([=, this] { return TypedExpr{fma(x, operandOf(t), x), t}; });
    } else {
      out.push_back([=, this] { return TypedExpr{x / lit(uniform(1, 4)), t}; });
      out.push_back([=, this] { return TypedExpr{x % lit(uniform(1, 4)), t}; });
      out.push_back([=] { return TypedExpr{toFloat(x), Type::floatType()}; });
    }
    if (depth > 0) {
      out.push_back([=, this] {
        Arith n = Arith(static_cast<int64_t>(uniform(1, 4)));
        return TypedExpr{fill(n, x), Type::array(t, n)};
      });
    }
    if (options_.vectors && depth > 0) {
      out.push_back([=, this] {  // a vector from a filled array, back to lanes
        int64_t width = chance(0.5) ? 2 : 4;
        Arith n = Arith(width);
        Type vector = Type::vector(t.scalarKind(), width);
        Expr v = asVector(n, fill(n, x));
        return TypedExpr{v, Type::array(vector, Arith(1))};
      });
    }
  }

  void vectorCandidates(const TypedExpr& value, std::vector<Candidate>& out) {
    const Type t = value.type;
    const Expr x = value.expr;
    Type scalar = Type::scalar(t.scalarKind());
    out.push_back([=] { return TypedExpr{x + x, t}; });
    out.push_back([=, this] { return TypedExpr{x * operandOf(scalar), t}; });
    out.push_back([=, this] { return TypedExpr{operandOf(scalar) - x, t}; });
    out.push_back([=] { return TypedExpr{max(x, x * x), t}; });
    if (t.scalarKind() == ScalarKind::Float) {
      out.push_back([=] { return TypedExpr{dot(x, x), Type::floatType()}; });
      out.push_back([=] { return TypedExpr{fma(x, x, x), t}; });
    } else {
      out.push_back([=] {
        return TypedExpr{toFloat(x), Type::vector(ScalarKind::Float, t.vectorWidth())};
      });
    }
  }

  static bool isNumericScalar(const Type& t) {
    return t.isScalar() && t.scalarKind() != ScalarKind::Bool;
  }

  // The scalar kinds of the leaves of a type.
  static void leafKinds(const Type& t, std::vector<ScalarKind>& out) {
    if (t.isScalar() || t.isVector()) {
      out.push_back(t.scalarKind());
    } else if (t.isTuple()) {
      for (const Type& e : t.tupleElements()) leafKinds(e, out);
    } else {
      leafKinds(t.arrayElement(), out);
    }
  }

  // A second array of the same length to zip with: a param in scope, or a map of the value.
  std::optional<TypedExpr> zipWithScope(const TypedExpr& value) {
    if (!value.type.isArray()) return std::nullopt;
    std::vector<TypedExpr> partners;
    for (const TypedExpr& s : scope_) {
      if (s.type.isArray() && s.type.arrayLength() == value.type.arrayLength() &&
          s.expr.node() != value.expr.node()) {
        partners.push_back(s);
      }
    }
    if (partners.empty()) return std::nullopt;
    const TypedExpr& other = pick(partners);
    return TypedExpr{
        zip(value.expr, other.expr),
        Type::array(Type::tuple({value.type.arrayElement(), other.type.arrayElement()}),
                    value.type.arrayLength())};
  }

  void arrayCandidates(const TypedExpr& value, int depth, std::vector<Candidate>& out) {
    const Type t = value.type;
    const Expr x = value.expr;
    const Type element = t.arrayElement();
    const Arith n = t.arrayLength();

    if (depth > 0) {
      auto mapWith = [=, this](Op op) {
        return [=, this] {
          TypedExpr f = lambdaOver(element, depth - 1);
          std::vector<Arith> nats;
          if (op == Op::MapGlb || op == Op::MapWrg || op == Op::MapLcl) {
            nats.push_back(Arith(static_cast<int64_t>(uniform(0, 2))));
          }
          return TypedExpr{Expr::prim(op, nats, {f.expr}, {x}), Type::array(f.type, n)};
        };
      };
      out.push_back(mapWith(Op::Map));
      out.push_back(mapWith(Op::Map));
      if (options_.lowLevel) {
        static const std::vector<Op> lowMaps{Op::MapGlb, Op::MapWrg, Op::MapLcl, Op::MapSeq,
                                             Op::MapSeqUnroll};
        out.push_back([=, this] { return mapWith(pick(lowMaps))(); });
        out.push_back([=, this] {
          static const std::vector<Op> spaces{Op::ToGlobal, Op::ToLocal, Op::ToPrivate};
          TypedExpr f = lambdaOver(t, depth - 1);
          return TypedExpr{Expr::prim(pick(spaces), {}, {f.expr}, {x}), f.type};
        });
      }
      out.push_back([=, this] {
        TypedExpr f = lambdaOver(t, depth - 1);
        return TypedExpr{let(f.expr, x), f.type};
      });
      if (auto reduction = reduceCandidate(value)) {
        out.push_back(*reduction);
        out.push_back(*reduction);
      }
      out.push_back([=, this] {  // zip with an equal-length array: in scope or a map of x
        if (auto zipped = zipWithScope(value); zipped && chance(0.5)) return *zipped;
        TypedExpr f = lambdaOver(element, depth - 1);
        Expr other = map(f.expr, x);
        return TypedExpr{zip(x, other), Type::array(Type::tuple({element, f.type}), n)};
      });
    }
    out.push_back([=] { return TypedExpr{id(x), t}; });
    out.push_back([=] { return TypedExpr{reorderReverse(x), t}; });
    for (int64_t m : {2, 3, 4}) {
      if (proveDivides(Arith(m), n)) {
        out.push_back([=] {
          return TypedExpr{split(Arith(m), x), Type::array(Type::array(element, Arith(m)), n / m)};
        });
        out.push_back([=] { return TypedExpr{reorderStride(Arith(m), x), t}; });
      }
    }
    if (element.isArray()) {
      const Arith m = element.arrayLength();
      out.push_back([=] { return TypedExpr{join(x), Type::array(element.arrayElement(), m * n)}; });
      out.push_back([=] {
        return TypedExpr{transpose(x), Type::array(Type::array(element.arrayElement(), n), m)};
      });
    }
    out.push_back([=, this] {
      int64_t size = uniform(1, 3);
      int64_t stepSize = uniform(1, 2);
      if (!proveLessEqual(Arith(size), n)) size = 1;
      bool strict = chance(0.3) && proveDivides(Arith(stepSize), n - size);
      Arith length = (n - size + stepSize) / stepSize;
      Expr e = strict ? slideStrict(size, stepSize, x) : slide(size, stepSize, x);
      return TypedExpr{e, Type::array(Type::array(element, Arith(size)), length)};
    });
    out.push_back([=, this] {
      int64_t l = uniform(0, 2), r = uniform(0, 2);
      std::vector<ScalarKind> kinds;
      leafKinds(element, kinds);
      PrimAttribute boundary = padBoundary(Boundary::Clamp);
      switch (uniform(0, 2)) {
        case 0:
          break;
        case 1:
          if (proveLessEqual(Arith(l), n) && proveLessEqual(Arith(r), n)) {
            boundary = padBoundary(Boundary::Mirror);
          }
          break;
        default:
          boundary = padBoundary(Boundary::Constant, uniform(-2, 2));
          break;
      }
      return TypedExpr{pad(l, r, boundary, x), Type::array(element, l + n + r)};
    });
    out.push_back([=, this] {
      int64_t l = uniform(0, 1), r = uniform(0, 1);
      if (!proveLessEqual(Arith(l + r + 1), n)) l = r = 0;
      return TypedExpr{crop(l, r, x), Type::array(element, n - l - r)};
    });
    if (options_.vectors && isNumericScalar(element)) {
      for (int64_t v : {2, 4}) {
        if (proveDivides(Arith(v), n)) {
          out.push_back([=] {
            return TypedExpr{asVector(v, x),
                             Type::array(Type::vector(element.scalarKind(), v), n / v)};
          });
        }
      }
    }
    if (element.isVector()) {
      out.push_back([=] {
        return TypedExpr{asScalar(x), Type::array(Type::scalar(element.scalarKind()),
                                                  n * element.vectorWidth())};
      });
    }
  }

  // reduce over scalars, pairs of scalars or float vectors (accumulating a scalar).
  std::optional<Candidate> reduceCandidate(const TypedExpr& value) {
    const Type element = value.type.arrayElement();
    const Expr x = value.expr;
    Type acc;
    std::function<Expr(Expr, Expr)> combine;
    if (isNumericScalar(element)) {
      acc = element;
      combine = [this](Expr a, Expr e) {
        switch (uniform(0, 3)) {
          case 0:
            return a + e;
          case 1:
            return max(a, e);
          case 2:
            return min(e, a);
          default:
            return a + e * e;
        }
      };
    } else if (element.isTuple() && element.tupleElements().size() == 2 &&
               isNumericScalar(element.tupleElements()[0]) &&
               element.tupleElements()[0] == element.tupleElements()[1]) {
      acc = element.tupleElements()[0];
      combine = [](Expr a, Expr p) { return a + get(0, p) * get(1, p); };
    } else if (element.isVector() && element.scalarKind() == ScalarKind::Float) {
      acc = Type::floatType();
      combine = [](Expr a, Expr v) { return a + dot(v, v); };
    } else {
      return std::nullopt;
    }
    return Candidate([=, this] {
      Expr a = newParam(acc);
      Expr e = newParam(element);
      Expr body = combine(a, e);
      static const std::vector<Op> ops{Op::Reduce, Op::Reduce, Op::ReduceSeq, Op::ReduceSeqUnroll};
      Op op = options_.lowLevel ? pick(ops) : Op::Reduce;
      Expr init = literalOf(acc.scalarKind());
      return TypedExpr{Expr::prim(op, {}, {Expr::lambda({a, e}, body)}, {init, x}),
                       Type::array(acc, Arith(1))};
    });
  }

  std::mt19937_64 rng_;
  RandomProgramOptions options_;
  std::vector<TypedExpr> scope_;  // params visible at the current point (inputs, lambda params)
};

// Random programs over every primitive without regard to types, for properties of the syntax
// (printer/parser round trip, hashing): arbitrary size expressions (/ % min max conditionals,
// size names such as κ), every boundary and index function, floats of any finite bit pattern,
// the whole int64 range, typed and untyped lambda params with clashing names ("x", "x_1",
// names of primitives), user functions calling earlier ones, the exact expansions of the 2D
// forms and near misses of them, size declarations with every form of bound. Every tree is one
// the parser can produce: functions only in function positions, user function calls with their
// arity, params only where bound, declared size names only as the declared variable.
class RandomSyntaxGenerator {
 public:
  explicit RandomSyntaxGenerator(uint64_t seed, int maxDepth = 4)
      : rng_(seed), maxDepth_(maxDepth) {}

  Program program() {
    Program program;
    userFuns_.clear();
    int funs = uniform(0, 2);
    for (int i = 0; i < funs; ++i) {
      std::vector<Expr> params;
      int arity = uniform(1, 3);
      for (int k = 0; k < arity; ++k) params.push_back(Expr::param(name(), type(1)));
      for (const Expr& p : params) scope_.push_back(p);
      Expr body = value(2);
      scope_.clear();
      static const std::vector<std::string> names{"g", "x", "helper", "mult"};
      std::string funName = pick(names) + std::to_string(i);
      Expr f = Expr::userFun(funName, params, type(1), body);
      userFuns_.push_back(f);
      program.userFuns.push_back(f);
    }
    int defs = uniform(1, 3);
    for (int i = 0; i < defs; ++i) {
      std::vector<Arith> sizes = sizeDeclarations();
      declared_.clear();
      for (const Arith& size : sizes) declared_.emplace(size.varName(), size);
      std::vector<Expr> params;
      int arity = uniform(1, 3);
      for (int k = 0; k < arity; ++k) params.push_back(Expr::param(name(), type(2)));
      for (const Expr& p : params) scope_.push_back(p);
      Expr body = value(maxDepth_);
      scope_.clear();
      static const std::vector<std::string> names{"f", "map", "main", "conv"};
      Type declaredType = chance(0.5) ? type(2) : Type();
      program.definitions.push_back(Definition{pick(names) + std::to_string(i),
                                               Expr::lambda(params, body),
                                               declaredType,
                                               {},
                                               std::move(sizes)});
      declared_.clear();
    }
    return program;
  }

  // Half of the definitions declare ranges for some of the size names, in random order, with
  // every form of bound (lower 0..3, upper at least max(lower, 1), or none); every use of a
  // declared name in that definition is then the declared variable.
  std::vector<Arith> sizeDeclarations() {
    std::vector<Arith> sizes;
    if (chance(0.5)) return sizes;
    std::vector<std::string> names{"n", "m", "κ", "N"};
    std::shuffle(names.begin(), names.end(), rng_);
    names.resize(static_cast<size_t>(uniform(1, 4)));
    for (const std::string& sizeName : names) {
      int64_t lo = chance(0.5) ? 1 : uniform(0, 3);
      std::optional<Arith> hi;
      if (chance(0.4)) hi = Arith(std::max<int64_t>(lo, 1) + uniform(0, 20));
      sizes.push_back(Arith::var(sizeName, VarKind::Size, Arith(lo), hi));
    }
    return sizes;
  }

  // A size name: the declared variable of the current definition, else a plain size.
  Arith sizeVariable(const std::string& sizeName) const {
    auto found = declared_.find(sizeName);
    return found != declared_.end() ? found->second : Arith::size(sizeName);
  }

  // A size expression over n, m and κ.
  Arith arith(int depth) {
    if (depth <= 0 || chance(0.4)) {
      if (chance(0.5)) return Arith(static_cast<int64_t>(uniform(-3, 64)));
      static const std::vector<std::string> names{"n", "m", "κ", "N"};
      return sizeVariable(pick(names));
    }
    Arith a = arith(depth - 1);
    Arith b = arith(depth - 1);
    Arith positive = chance(0.5) ? Arith(static_cast<int64_t>(uniform(1, 8)))
                                 : sizeVariable(chance(0.5) ? "n" : "m");
    switch (uniform(0, 7)) {
      case 0:
        return a + b;
      case 1:
        return a - b;
      case 2:
        return a * b;
      case 3:
        return a / positive;
      case 4:
        return a % positive;
      case 5:
        return min(a, b);
      case 6:
        return max(a, b);
      default:
        return ifLess(a, b, arith(depth - 1), arith(depth - 1));
    }
  }

  Type type(int depth) {
    int choice = uniform(0, depth <= 0 ? 1 : 3);
    switch (choice) {
      case 0: {
        static const std::vector<ScalarKind> kinds{ScalarKind::Float, ScalarKind::Int,
                                                   ScalarKind::Bool};
        return Type::scalar(pick(kinds));
      }
      case 1: {
        static const std::vector<int64_t> widths{2, 3, 4, 8, 16};
        return Type::vector(chance(0.5) ? ScalarKind::Float : ScalarKind::Int, pick(widths));
      }
      case 2:
        return Type::tuple({type(depth - 1), type(depth - 1)});
      default:
        return Type::array(type(depth - 1), arith(2));
    }
  }

  // A value expression (never a function).
  Expr value(int depth) {
    if (depth <= 0 || chance(0.2)) return leaf();
    switch (uniform(0, 9)) {
      case 0:
        return twoDForm(depth);
      case 1:
      case 2:
        return scalarOperator(depth);
      default:
        return primitive(depth);
    }
  }

  // A lambda (params maybe typed, names that clash) or a user function.
  Expr function(int depth, int arity = -1) {
    if (arity < 0 && !userFuns_.empty() && chance(0.2)) return pick(userFuns_);
    std::vector<Expr> params;
    int count = arity >= 0 ? arity : uniform(1, 3);
    for (int i = 0; i < count; ++i) {
      params.push_back(Expr::param(name(), chance(0.2) ? type(1) : Type()));
    }
    size_t mark = scope_.size();
    for (const Expr& p : params) scope_.push_back(p);
    Expr body = value(depth - 1);
    scope_.resize(mark);
    return Expr::lambda(params, body);
  }

 private:
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[static_cast<size_t>(uniform(0, static_cast<int>(items.size()) - 1))];
  }

  std::string name() {
    static const std::vector<std::string> names{"x", "x", "x_1", "y",        "acc", "map", "id",
                                                "κ", "p", "g0",  "bad name", "2d",  "row"};
    return pick(names);
  }

  Expr leaf() {
    if (!scope_.empty() && chance(0.6)) return pick(scope_);
    switch (uniform(0, 4)) {
      case 0: {  // any finite float
        uint32_t bits = static_cast<uint32_t>(rng_());
        float f;
        std::memcpy(&f, &bits, sizeof f);
        if (!std::isfinite(f)) f = -0.0f;
        return Expr::floatLiteral(f);
      }
      case 1: {
        static const std::vector<double> values{
            0.0, 1.0, -1.0, 0.1, 1e-3, 3.5, 1e30, std::numeric_limits<double>::infinity()};
        return Expr::floatLiteral(pick(values));
      }
      case 2: {
        static const std::vector<int64_t> values{
            0, 1, -1, 42, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
        return Expr::intLiteral(chance(0.5) ? pick(values) : static_cast<int64_t>(rng_()));
      }
      case 3:
        return Expr::boolLiteral(chance(0.5));
      default:
        return Expr::intLiteral(uniform(-5, 5));
    }
  }

  Expr scalarOperator(int depth) {
    static const std::vector<Op> ops{Op::Add, Op::Sub, Op::Mul, Op::Div,    Op::Mod, Op::Neg,
                                     Op::Lt,  Op::Le,  Op::Gt,  Op::Ge,     Op::Eq,  Op::Ne,
                                     Op::And, Op::Or,  Op::Not, Op::Select, Op::Get, Op::Tuple};
    return primitiveOf(pick(ops), depth);
  }

  Expr primitive(int depth) {
    const auto& all = allPrimitives();
    return primitiveOf(all[static_cast<size_t>(uniform(0, static_cast<int>(all.size()) - 1))].op,
                       depth);
  }

  Expr primitiveOf(Op op, int depth) {
    const PrimInfo& info = primInfo(op);
    std::vector<Arith> nats;
    std::vector<Expr> funs;
    std::vector<Expr> args;
    PrimAttribute attribute;
    for (const char* c = info.layout; *c; ++c) {
      switch (*c) {
        case 'n':
          nats.push_back(op == Op::Get && chance(0.8) ? Arith(static_cast<int64_t>(uniform(0, 3)))
                                                      : arith(2));
          break;
        case 'b':
          switch (uniform(0, 2)) {
            case 0:
              attribute = padBoundary(Boundary::Clamp);
              break;
            case 1:
              attribute = padBoundary(Boundary::Mirror);
              break;
            default: {
              double v = chance(0.5) ? uniform(-3, 3) : std::ldexp(double(rng_() >> 11), -50);
              attribute = padBoundary(Boundary::Constant, chance(0.5) ? v : -v);
            }
          }
          break;
        case 'i':
          if (chance(0.5)) {
            attribute.indexFunction = IndexFunction::Reverse;
          } else {
            attribute.indexFunction = IndexFunction::Stride;
            attribute.stride = arith(2);
          }
          break;
        case 'f':
          funs.push_back(function(depth));
          break;
        case 'd':
          args.push_back(value(depth - 1));
          break;
        case '+':
          args.push_back(value(depth - 1));
          [[fallthrough]];
        case '*': {
          int extra = uniform(0, 2);
          for (int i = 0; i < extra; ++i) args.push_back(value(depth - 1));
          break;
        }
      }
    }
    // A user function call takes exactly its arity.
    if (op == Op::Apply && funs[0].isUserFun()) {
      args.clear();
      for (size_t i = 0; i < funs[0].params().size(); ++i) args.push_back(value(depth - 1));
    }
    return Expr::prim(op, nats, funs, args, attribute);
  }

  // map2D / slide2D / pad2D exactly as the builders expand them, or a near miss.
  Expr twoDForm(int depth) {
    Expr x = value(depth - 1);
    switch (uniform(0, 4)) {
      case 0:
        return map2D(function(depth, 1), x);
      case 1:
        if (chance(0.5)) return slide2D(arith(1), arith(1), x);
        return slide2D(arith(1), arith(1), arith(1), arith(1), x);
      case 2: {
        PrimAttribute boundary =
            padBoundary(chance(0.5) ? Boundary::Clamp : Boundary::Constant, uniform(-2, 2));
        if (chance(0.5)) return pad2D(arith(1), boundary, x);
        return pad2D(arith(1), arith(1), arith(1), arith(1), boundary, x);
      }
      case 3: {  // the shape of pad2D with two different boundaries: not a pad2D
        Expr rows = map(lam("row", [](Expr row) { return pad(1, 1, Boundary::Mirror, row); }), x);
        return transpose(map(lam("col", [](Expr col) { return pad(1, 1, Boundary::Clamp, col); }),
                             transpose(rows)));
      }
      default: {  // map(row -> map(f, row), x) where f uses row: not a map2D
        Expr row = Expr::param("row");
        scope_.push_back(row);
        Expr f = function(depth, 1);
        scope_.pop_back();
        return map(Expr::lambda({row}, map(f, row)), x);
      }
    }
  }

  std::mt19937_64 rng_;
  int maxDepth_;
  std::vector<Expr> scope_;
  std::vector<Expr> userFuns_;
  std::map<std::string, Arith> declared_;  // size declarations of the current definition
};

}  // namespace weft::testing
