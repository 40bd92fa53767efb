// Type and constraint inference.
//
// Infers the type of every node of a definition with symbolic lengths, applying the type rule
// of each primitive from ir/primitives.h, and collects the constraints those rules require of
// the size variables and tuning parameters (split/asVector divisibility, strict slide coverage,
// positive lengths, pad/crop bounds, equal zip lengths where not provably equal). Ill-typed
// programs are rejected with a TypeError that names the primitive, its location, the expected
// and the found type.
//
// Results live in a side table keyed by node (nodes are immutable and shared, and carry no
// annotations). A node shared in two places must have one type; a conflict is reported.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/constraint.h"
#include "ir/expr.h"
#include "ir/source_loc.h"
#include "ir/type.h"

namespace weft {

// what() is "file:line:column: type error: <primitive>: <message>".
struct TypeError : std::runtime_error {
  TypeError(SourceLoc loc, const std::string& message);
  SourceLoc loc;
  std::string message;  // without the location prefix
};

struct TypedDefinition {
  Type type;                                        // the result type
  std::vector<Constraint> constraints;              // deduplicated, in discovery order
  std::unordered_map<const ExprNode*, Type> types;  // every node's type (functions: result)
  const Type& typeOf(const Expr& e) const;          // throws std::out_of_range if unknown
};

// Type-checks a definition (all params typed). If the definition declares a result type,
// checks it equals the inferred one (or records an Equal constraint for each length that is
// not provably equal).
TypedDefinition typecheck(const Definition& definition);
// The same, remembered for the few definitions checked last on this thread (the same function
// node, name, location and declared type: nodes are immutable, so their types cannot change).
// The rewrite engine checks each rewritten program after a step and again before the next one
// looks for positions; this checks it once.
std::shared_ptr<const TypedDefinition> typecheckRemembered(const Definition& definition);
// Type-checks a function expression applied to arguments of the given types.
TypedDefinition typecheckFunction(const Expr& function, const std::vector<Type>& paramTypes);
// Type-checks every definition of a program (and every user function's body).
std::vector<TypedDefinition> typecheckProgram(const Program& program);

}  // namespace weft
