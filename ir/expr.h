// Expression nodes of weft programs.
//
// A program is a tree of immutable, shared nodes of five kinds:
//   Param    a variable bound by a lambda, a user function or a definition;
//   Literal  a scalar constant (float, int, bool);
//   Lambda   an anonymous function `x -> body` or `(a, b) -> body`;
//   UserFun  a named scalar function whose body is a scalar expression; it prints as C
//            for OpenCL and the interpreter evaluates the same expression;
//   Prim     a call of a primitive from the table in ir/primitives.h, with its size arguments
//            (Arith), an optional attribute (pad boundary, reorder index function), its
//            function arguments (Lambda or UserFun) and its data arguments.
// Scalar arithmetic (a + b, a < b ? x : y, p._0) is Prim calls too, so rewrite rules,
// the interpreter and code generation walk one uniform structure.
//
// Params are identified by a 64-bit id, not by name, so builders can introduce binders
// without capturing anything; the printer makes names unique. Structural equality and hashing
// are modulo renaming of bound params (alpha-equivalence) and ignore source locations, so
// rewritten variants can be deduplicated. Nodes carry no analysis results: types, views and
// memory live in side tables keyed by node.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/primitives.h"
#include "ir/source_loc.h"
#include "ir/type.h"

namespace weft {

enum class ExprKind { Param, Literal, Lambda, UserFun, Prim };

// The boundary modes of pad (paper section 3.1.1; Forma and PolyMage use clamp).
enum class Boundary { Clamp, Mirror, Constant };
// The index functions of reorder: stride(s) maps i to i/n + s*(i%n) with n = length/s
// (LIFT's reorderStride, paper section 3.1.1); reverse maps i to length-1-i.
enum class IndexFunction { Stride, Reverse };

struct PrimAttribute {
  Boundary boundary = Boundary::Clamp;
  double padValue = 0.0;  // for Boundary::Constant
  IndexFunction indexFunction = IndexFunction::Stride;
  Arith stride = Arith(1);  // for IndexFunction::Stride
  bool operator==(const PrimAttribute& other) const;
};

struct ExprNode;

class Expr {
 public:
  Expr() = default;  // null; only as an "absent" marker
  bool isNull() const { return node_ == nullptr; }
  explicit operator bool() const { return node_ != nullptr; }

  ExprKind kind() const;
  bool isParam() const { return kind() == ExprKind::Param; }
  bool isLiteral() const { return kind() == ExprKind::Literal; }
  bool isLambda() const { return kind() == ExprKind::Lambda; }
  bool isUserFun() const { return kind() == ExprKind::UserFun; }
  bool isPrim() const { return kind() == ExprKind::Prim; }
  bool isPrim(Op op) const { return isPrim() && primOp() == op; }
  bool isFunction() const { return isLambda() || isUserFun(); }

  const SourceLoc& loc() const;
  // The node's identity (for side tables keyed by node).
  const ExprNode* node() const { return node_.get(); }

  // Param
  uint64_t paramId() const;
  const std::string& paramName() const;
  const Type& paramType() const;  // may be null: inferred from the binder's context

  // Literal
  ScalarKind literalKind() const;
  double literalFloat() const;    // Float
  int64_t literalInt() const;     // Int
  bool literalBool() const;       // Bool

  // Lambda and UserFun
  const std::vector<Expr>& params() const;  // Params
  const Expr& body() const;
  // UserFun
  const std::string& userFunName() const;
  const Type& userFunResultType() const;

  // Prim
  Op primOp() const;
  const PrimInfo& primInfo() const;
  const std::vector<Arith>& nats() const;
  const PrimAttribute& attribute() const;
  const std::vector<Expr>& funs() const;
  const std::vector<Expr>& args() const;

  // Alpha-equivalence (bound params compared by position) and a matching hash.
  bool operator==(const Expr& other) const;
  bool operator!=(const Expr& other) const { return !(*this == other); }
  size_t hash() const;

  // Constructors. Prim validates its argument counts against the primitive table and throws
  // std::invalid_argument naming the primitive on a mismatch.
  static Expr param(std::string name, Type type = Type(), SourceLoc loc = {});
  static Expr floatLiteral(double value, SourceLoc loc = {});
  static Expr intLiteral(int64_t value, SourceLoc loc = {});
  static Expr boolLiteral(bool value, SourceLoc loc = {});
  static Expr lambda(std::vector<Expr> params, Expr body, SourceLoc loc = {});
  static Expr userFun(std::string name, std::vector<Expr> params, Type resultType, Expr body,
                      SourceLoc loc = {});
  static Expr prim(Op op, std::vector<Arith> nats, std::vector<Expr> funs, std::vector<Expr> args,
                   PrimAttribute attribute = {}, SourceLoc loc = {});

  // A copy of this Prim/Lambda/UserFun node with other children (same op, loc and
  // attributes); returns *this unchanged when every child is the same node.
  Expr withChildren(std::vector<Arith> nats, std::vector<Expr> funs, std::vector<Expr> args) const;
  Expr withBody(Expr body) const;  // Lambda / UserFun

 private:
  friend struct ExprFactory;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}
  std::shared_ptr<const ExprNode> node_;
};

// A top-level `def name[sizes](p1: T1, ...) [: R] = body`.
struct Definition {
  std::string name;
  Expr function;      // a Lambda whose params all carry types
  Type declaredType;  // the declared result type, or null
  SourceLoc loc;
  // The size variables declared with their ranges (`def conv[P >= 0, S >= 1](...)`), in source
  // order: Arith::var(name, VarKind::Size, lo, hi) with constant bounds. Every use of a declared
  // name in the definition is that variable; undeclared size names range over [1, inf).
  std::vector<Arith> sizeDeclarations = {};
};

// A parsed file: user functions and definitions in source order.
struct Program {
  std::vector<Expr> userFuns;  // UserFun nodes
  std::vector<Definition> definitions;
  const Definition* findDefinition(const std::string& name) const;
  const Expr* findUserFun(const std::string& name) const;
};

// Replaces free occurrences of params (by id) with expressions. Binders are not renamed:
// params are unique by id, so no capture can happen.
Expr substituteParams(const Expr& e, const std::vector<std::pair<Expr, Expr>>& replacements);
// Applies an arithmetic substitution to every size argument, attribute and param type.
Expr substituteArith(const Expr& e, const ArithSubstitution& substitution);
// `definition` with the size variables of `substitution` replaced by their values in its
// function and declared type, and their declarations dropped (codegen's instantiate).
Definition withSizesSubstituted(const Definition& definition,
                                const ArithSubstitution& substitution);
// The same, each still declared, with its one value as its range, so that binding it to
// another value is refused as out of range.
Definition withSizesFixed(const Definition& definition, const ArithSubstitution& substitution);
// Calls `visit` on every node, parents before children (functions and args in order).
void forEachNode(const Expr& e, const std::function<void(const Expr&)>& visit);
// The levels of the copy nest `e`: map(x -> id(x), xs) is 1, map(x -> N(x), xs) with N a copy
// nest of x one more (the form rewrite/rule_helpers.h copyOf builds); 0 for anything else.
int copyNestDepth(const Expr& e);
// How many times `e` mentions `param` (by id; a lambda's own binder is not in its body).
int paramUses(const Expr& e, const Expr& param);
// Every occurrence of a size variable or tuning parameter in a definition, in order, repeats
// included: param types (the definition's and lambdas'), size arguments and reorder strides
// of its function, then its declared result type. User functions are not entered: they are
// declared outside the definition, so its size declarations do not reach them.
std::vector<Arith> variableOccurrences(const Definition& definition);

}  // namespace weft

template <>
struct std::hash<weft::Expr> {
  size_t operator()(const weft::Expr& e) const { return e.hash(); }
};
