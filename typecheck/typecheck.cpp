// Type and constraint inference (typecheck/typecheck.h).
//
// A Checker walks a definition's tree with an environment from param ids to types. Data
// arguments of a primitive are inferred first; then the primitive's type rule
// (ir/type_rules.cpp) runs inside a PrimContext, the TypeRuleContext implementation, which
// type-checks function arguments on demand at the parameter types the rule gives them
// (lambda params bound to those types, user functions checked against their declared
// parameter types), records constraints and turns failures into TypeErrors that carry the
// primitive's location.
//
// Every node's type goes into the side table; a node reached twice (shared subtrees, a lambda
// applied at two places) must get one type each time. Constraints are kept in discovery order
// without duplicates (same relation and sides); provably true ones are dropped and provably
// false ones are errors ("split by 3 requires 8 % 3 = 0, which is false").
#include "typecheck/typecheck.h"

#include <unordered_set>

#include "ir/expr.h"
#include "ir/primitives.h"

namespace weft {

namespace {

std::string locationPrefix(const SourceLoc& loc) {
  if (loc.known()) return loc.toString() + ": ";
  if (loc.file) return *loc.file + ": ";
  return "";
}

// The pairs of lengths at the same positions of two types of the same shape that differ.
void differingLengths(const Type& a, const Type& b, std::vector<std::pair<Arith, Arith>>& out) {
  if (a.isTuple()) {
    for (size_t i = 0; i < a.tupleElements().size(); ++i) {
      differingLengths(a.tupleElements()[i], b.tupleElements()[i], out);
    }
  } else if (a.isArray()) {
    if (a.arrayLength() != b.arrayLength()) out.emplace_back(a.arrayLength(), b.arrayLength());
    differingLengths(a.arrayElement(), b.arrayElement(), out);
  }
}

void arrayLengths(const Type& type, std::vector<Arith>& out) {
  if (type.isTuple()) {
    for (const Type& element : type.tupleElements()) arrayLengths(element, out);
  } else if (type.isArray()) {
    out.push_back(type.arrayLength());
    arrayLengths(type.arrayElement(), out);
  }
}

std::string plural(size_t count, const std::string& word) {
  return std::to_string(count) + " " + word + (count == 1 ? "" : "s");
}

std::string paramNames(const std::vector<Expr>& params) {
  std::string out;
  for (size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + params[i].paramName();
  return out;
}

class Checker;

// The TypeRuleContext of one primitive node.
class PrimContext final : public TypeRuleContext {
 public:
  PrimContext(Checker& checker, const Expr& prim, std::vector<Type> argTypes, SourceLoc loc)
      : checker_(checker), prim_(prim), argTypes_(std::move(argTypes)), loc_(std::move(loc)) {}

  const std::vector<Arith>& nats() const override { return prim_.nats(); }
  const PrimAttribute& attribute() const override { return prim_.attribute(); }
  size_t argCount() const override { return argTypes_.size(); }
  const Type& argType(size_t index) const override { return argTypes_.at(index); }
  size_t funCount() const override { return prim_.funs().size(); }
  Type applyFun(size_t index, const std::vector<Type>& paramTypes) override;
  void require(Relation relation, const Arith& lhs, const Arith& rhs,
               const std::string& reason) override;
  [[noreturn]] void fail(const std::string& message) override {
    throw TypeError(loc_, name() + ": " + message);
  }
  [[noreturn]] void failArg(size_t index, const std::string& expected) override {
    throw TypeError(loc_, name() + ": " + argumentName(index) + ": expected " + expected +
                              ", found " + argTypes_.at(index).toString());
  }

  const SourceLoc& loc() const { return loc_; }

  // "map", or for infix operators "add (+)" so that a user who wrote a + b recognises it.
  std::string name() const {
    const PrimInfo& info = prim_.primInfo();
    if (info.infix) return std::string(info.name) + " (" + info.infix + ")";
    return info.name;
  }

 private:
  // "argument 2" counts the call's arguments as written (sizes, boundary, functions, data);
  // unary and binary infix operators name their operands.
  std::string argumentName(size_t dataIndex) const {
    const PrimInfo& info = prim_.primInfo();
    if (info.infix) {
      if (argTypes_.size() == 1) return "operand";
      return dataIndex == 0 ? "left operand" : "right operand";
    }
    size_t position = 0;
    size_t data = 0;
    for (const char* c = info.layout; *c; ++c) {
      if (*c == '+' || *c == '*') {
        position += dataIndex - data + 1;
        break;
      }
      ++position;
      if (*c == 'd') {
        if (data == dataIndex) break;
        ++data;
      }
    }
    return "argument " + std::to_string(position);
  }

  Checker& checker_;
  const Expr& prim_;
  std::vector<Type> argTypes_;
  SourceLoc loc_;
};

class Checker {
 public:
  TypedDefinition result;

  // The type of a data expression (a Param, a Literal or a Prim call).
  Type infer(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Param: {
        auto it = env_.find(e.paramId());
        if (it == env_.end()) {
          throw TypeError(locOf(e), "unbound parameter " + e.paramName());
        }
        record(e, it->second);
        return it->second;
      }
      case ExprKind::Literal: {
        Type type = Type::scalar(e.literalKind());
        record(e, type);
        return type;
      }
      case ExprKind::Lambda:
      case ExprKind::UserFun:
        throw TypeError(locOf(e), "a function cannot be used as a value here");
      case ExprKind::Prim:
        return inferPrim(e);
    }
    throw std::logic_error("unknown expression kind");
  }

  // Applies a function (Lambda or UserFun) to arguments of the given types and returns its
  // result type. `caller` names the primitive for messages; `callLoc` is where the call is.
  Type apply(const Expr& fun, const std::vector<Type>& given, const std::string& caller,
             const SourceLoc& callLoc, bool isApply) {
    if (fun.isLambda()) return applyLambda(fun, given, caller, callLoc);
    if (fun.isUserFun()) return applyUserFun(fun, given, caller, callLoc, isApply);
    throw TypeError(callLoc, caller + ": expected a function, found an expression");
  }

  // Records a constraint: dropped if provably true, an error if provably false, otherwise
  // appended unless an equal one (same relation and sides) is already there.
  void require(Constraint constraint) {
    std::optional<bool> decided = constraint.decide();
    if (decided && *decided) return;
    if (decided && !*decided) {
      std::string message = constraint.requirement() + ", which is false";
      if (!constraint.reason.empty()) message += " (" + constraint.reason + ")";
      throw TypeError(constraint.loc, message);
    }
    for (const Constraint& existing : result.constraints) {
      if (existing == constraint) return;
    }
    result.constraints.push_back(std::move(constraint));
  }

  // Requires `found` to have the type `expected`: the same shape, with an Equal constraint for
  // each pair of lengths that is not provably equal. Returns false if the shapes differ.
  bool matchType(const Type& expected, const Type& found, const std::string& origin,
                 const SourceLoc& loc, const std::string& reason) {
    if (!sameShape(expected, found)) return false;
    std::vector<std::pair<Arith, Arith>> pairs;
    differingLengths(expected, found, pairs);
    for (auto& [a, b] : pairs) require(Constraint{Relation::Equal, a, b, origin, loc, reason});
    return true;
  }

  void bindParam(const Expr& param, const Type& type) {
    env_[param.paramId()] = type;
    record(param, type);
  }

  // Type-checks a user function's body at its declared parameter types (once per node).
  Type checkUserFun(const Expr& fun) {
    auto done = userFunTypes_.find(fun.node());
    if (done != userFunTypes_.end()) return done->second;
    const std::string what = "fun " + fun.userFunName();
    for (const Expr& param : fun.params()) {
      if (param.paramType().isNull()) {
        throw TypeError(locOf(fun), what + ": parameter " + param.paramName() + " has no type");
      }
    }
    Scope scope(*this, fun.params());
    for (const Expr& param : fun.params()) bindParam(param, param.paramType());
    Type body = infer(fun.body());
    Type type = body;
    const Type& declared = fun.userFunResultType();
    if (!declared.isNull()) {
      if (!matchType(declared, body, what, locOf(fun), "the body must have the declared type")) {
        throw TypeError(locOf(fun), what + ": the body has type " + body.toString() +
                                        " but the declared result type is " + declared.toString());
      }
      type = declared;
    }
    userFunTypes_.emplace(fun.node(), type);
    record(fun, type);
    return type;
  }

  // Records a node's type; a node reached again must have the same type. Lengths that are equal
  // only under the program's constraints (a rewrite's join(split(κ, x)) has length n - n % κ
  // where x has n, equal when κ divides n) are recorded as Equal constraints.
  void record(const Expr& e, const Type& type) {
    auto [it, inserted] = result.types.emplace(e.node(), type);
    if (!inserted && it->second != type &&
        !matchType(it->second, type, describeNode(e), locOf(e),
                   "a shared node must have one type")) {
      throw TypeError(locOf(e), describeNode(e) +
                                    ": this node is shared at two different "
                                    "types, " +
                                    it->second.toString() + " and " + type.toString());
    }
  }

  // The location of a node, or of the innermost enclosing node that has one.
  SourceLoc locOf(const Expr& e) const {
    if (e.loc().known()) return e.loc();
    for (auto it = enclosing_.rbegin(); it != enclosing_.rend(); ++it) {
      if (it->known()) return *it;
    }
    return e.loc();
  }

  std::vector<SourceLoc> enclosing_;

 private:
  // Binds params for the duration of a function body and restores earlier bindings after.
  class Scope {
   public:
    Scope(Checker& checker, const std::vector<Expr>& params) : checker_(checker) {
      for (const Expr& p : params) {
        auto it = checker.env_.find(p.paramId());
        saved_.emplace_back(p.paramId(), it == checker.env_.end() ? Type() : it->second);
      }
    }
    ~Scope() {
      for (auto& [id, type] : saved_) {
        if (type.isNull()) {
          checker_.env_.erase(id);
        } else {
          checker_.env_[id] = type;
        }
      }
    }

   private:
    Checker& checker_;
    std::vector<std::pair<uint64_t, Type>> saved_;
  };

  static std::string describeNode(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Param:
        return "parameter " + e.paramName();
      case ExprKind::Literal:
        return "literal";
      case ExprKind::Lambda:
        return "function";
      case ExprKind::UserFun:
        return "fun " + e.userFunName();
      case ExprKind::Prim:
        return e.primInfo().name;
    }
    return "node";
  }

  Type inferPrim(const Expr& e) {
    SourceLoc loc = locOf(e);
    enclosing_.push_back(loc);
    std::vector<Type> argTypes;
    for (const Expr& arg : e.args()) argTypes.push_back(infer(arg));
    PrimContext context(*this, e, std::move(argTypes), loc);
    Type type;
    try {
      type = e.primInfo().typeRule(context);
    } catch (const std::invalid_argument& error) {  // e.g. a tuple or vector type refused
      throw TypeError(loc, context.name() + ": " + error.what());
    } catch (const ArithError& error) {
      throw TypeError(loc, context.name() + ": " + error.what());
    }
    enclosing_.pop_back();
    record(e, type);
    return type;
  }

  Type applyLambda(const Expr& fun, const std::vector<Type>& given, const std::string& caller,
                   const SourceLoc& callLoc) {
    const auto& params = fun.params();
    if (params.size() != given.size()) {
      throw TypeError(callLoc, caller + ": expected a function of " +
                                   plural(given.size(), "parameter") + ", found a function of " +
                                   plural(params.size(), "parameter") + " (" + paramNames(params) +
                                   ")");
    }
    Scope scope(*this, params);
    for (size_t i = 0; i < params.size(); ++i) {
      const Type& declared = params[i].paramType();
      if (!declared.isNull() &&
          !matchType(declared, given[i], caller, callLoc,
                     "the parameter " + params[i].paramName() + " has a declared type")) {
        throw TypeError(callLoc, caller + ": parameter " + params[i].paramName() + " is declared " +
                                     declared.toString() + " but given " + given[i].toString());
      }
      bindParam(params[i], given[i]);
    }
    enclosing_.push_back(locOf(fun));
    Type body = infer(fun.body());
    enclosing_.pop_back();
    record(fun, body);
    return body;
  }

  Type applyUserFun(const Expr& fun, const std::vector<Type>& given, const std::string& caller,
                    const SourceLoc& callLoc, bool isApply) {
    const auto& params = fun.params();
    // A direct call f(a, b) is reported as "f: ..."; a function argument of another primitive
    // as "map: function f: ...".
    const std::string who =
        isApply ? fun.userFunName() : caller + ": function " + fun.userFunName();
    if (params.size() != given.size()) {
      throw TypeError(callLoc, who + ": takes " + plural(params.size(), "argument") + " (" +
                                   paramNames(params) + "), given " + std::to_string(given.size()));
    }
    for (size_t i = 0; i < params.size(); ++i) {
      const Type& declared = params[i].paramType();
      if (declared.isNull()) continue;  // reported by checkUserFun
      if (!matchType(declared, given[i], fun.userFunName(), callLoc,
                     "arguments must have the declared parameter types")) {
        throw TypeError(callLoc, who + ": argument " + std::to_string(i + 1) + " (" +
                                     params[i].paramName() + "): expected " + declared.toString() +
                                     ", found " + given[i].toString());
      }
    }
    return checkUserFun(fun);
  }

  std::unordered_map<uint64_t, Type> env_;
  std::unordered_map<const ExprNode*, Type> userFunTypes_;
};

Type PrimContext::applyFun(size_t index, const std::vector<Type>& paramTypes) {
  const Expr& fun = prim_.funs().at(index);
  std::string caller = name();
  if (prim_.funs().size() > 1) caller += ": function argument " + std::to_string(index + 1);
  return checker_.apply(fun, paramTypes, caller, loc_, prim_.primOp() == Op::Apply);
}

void PrimContext::require(Relation relation, const Arith& lhs, const Arith& rhs,
                          const std::string& reason) {
  checker_.require(Constraint{relation, lhs, rhs, prim_.primInfo().name, loc_, reason});
}

// Each array length in the parameter types must be positive; plain size variables are by
// their range, derived lengths such as N - 2 need a constraint.
void requirePositiveLengths(Checker& checker, const Type& type, const std::string& origin,
                            const SourceLoc& loc) {
  std::vector<Arith> lengths;
  arrayLengths(type, lengths);
  for (const Arith& length : lengths) {
    checker.require(Constraint{Relation::LessEqual, Arith(1), length, origin, loc,
                               "array lengths must be positive"});
  }
}

}  // namespace

TypeError::TypeError(SourceLoc where, const std::string& text)
    : std::runtime_error(locationPrefix(where) + "type error: " + text),
      loc(std::move(where)),
      message(text) {}

const Type& TypedDefinition::typeOf(const Expr& e) const {
  auto it = types.find(e.node());
  if (it == types.end()) throw std::out_of_range("typeOf: the node has no recorded type");
  return it->second;
}

TypedDefinition typecheck(const Definition& definition) {
  Checker checker;
  const Expr& function = definition.function;
  const std::string origin = "def " + definition.name;
  SourceLoc loc = definition.loc.known() ? definition.loc : function.loc();
  if (!function.isLambda()) {
    throw TypeError(loc, origin + ": the definition's body must be a function");
  }
  std::vector<Type> paramTypes;
  for (const Expr& param : function.params()) {
    if (param.paramType().isNull()) {
      throw TypeError(loc, origin + ": parameter " + param.paramName() + " has no type");
    }
    requirePositiveLengths(checker, param.paramType(), origin, loc);
    paramTypes.push_back(param.paramType());
  }
  checker.enclosing_.push_back(loc);
  Type inferred = checker.apply(function, paramTypes, origin, loc, false);
  checker.result.type = inferred;
  const Type& declared = definition.declaredType;
  if (!declared.isNull()) {
    // No positivity constraints for the declared lengths: each equals an inferred length (or
    // is required equal to one), and the primitives' constraints keep those positive.
    std::string mismatch = origin + ": the declared result type " + declared.toString() +
                           " does not match the inferred type " + inferred.toString();
    try {
      if (!checker.matchType(declared, inferred, origin, loc,
                             "the declared result type must match the inferred one")) {
        throw TypeError(loc, mismatch);
      }
    } catch (const TypeError& error) {
      // A provably unequal length pair: say which types disagree, not only which lengths.
      if (error.message == mismatch) throw;
      throw TypeError(loc, mismatch + ": " + error.message);
    }
    checker.result.type = declared;
  }
  return std::move(checker.result);
}

std::shared_ptr<const TypedDefinition> typecheckRemembered(const Definition& definition) {
  struct Remembered {
    Definition definition;  // holds the nodes the types are keyed by
    std::shared_ptr<const TypedDefinition> typed;
  };
  constexpr size_t kRemembered = 4;
  thread_local std::vector<Remembered> recent;
  for (const Remembered& entry : recent) {
    const Definition& seen = entry.definition;
    if (seen.function.node() == definition.function.node() && seen.name == definition.name &&
        seen.loc.file == definition.loc.file && seen.loc.line == definition.loc.line &&
        seen.loc.column == definition.loc.column && seen.declaredType == definition.declaredType) {
      return entry.typed;
    }
  }
  auto typed = std::make_shared<const TypedDefinition>(typecheck(definition));
  if (recent.size() == kRemembered) recent.erase(recent.begin());
  recent.push_back({definition, typed});
  return typed;
}

TypedDefinition typecheckFunction(const Expr& function, const std::vector<Type>& paramTypes) {
  Checker checker;
  Type type = checker.apply(function, paramTypes, "function", function.loc(), true);
  checker.result.type = type;
  return std::move(checker.result);
}

std::vector<TypedDefinition> typecheckProgram(const Program& program) {
  for (const Expr& fun : program.userFuns) {
    Checker checker;
    checker.checkUserFun(fun);
  }
  std::vector<TypedDefinition> out;
  for (const Definition& definition : program.definitions) out.push_back(typecheck(definition));
  return out;
}

}  // namespace weft
