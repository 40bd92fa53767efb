// The primitive table: one row per weft primitive with its name, category, argument layout,
// dependent type signature and type rule (the model is RISE's primitives.rise, where every
// primitive's type is one line). The rows come from ir/primitives.def so the Op enum, the
// table, the parser and the printer cannot drift apart.
//
// A type rule computes a primitive's result type from its argument types and size arguments.
// It runs inside a TypeRuleContext that the type checker (typecheck/) implements: the context
// type-checks function arguments at given parameter types, records constraints on sizes
// (split divisibility, strict slide coverage, ...) and reports type errors. Keeping the rules
// here and the inference machinery there keeps ir/ free of any dependency on typecheck/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/arith.h"
#include "ir/constraint.h"
#include "ir/type.h"

namespace weft {

enum class Op : uint8_t {
#define WEFT_PRIM(Id, name, category, layout, infix) Id,
#include "ir/primitives.def"
#undef WEFT_PRIM
};

enum class PrimCategory { Algorithmic, Layout, LowLevel, AddressSpace, Tuple, Scalar };

struct PrimAttribute;

// What a type rule sees and may do. Implemented by the type checker.
class TypeRuleContext {
 public:
  virtual ~TypeRuleContext() = default;
  virtual const std::vector<Arith>& nats() const = 0;
  virtual const PrimAttribute& attribute() const = 0;
  virtual size_t argCount() const = 0;
  virtual const Type& argType(size_t index) const = 0;
  virtual size_t funCount() const = 0;
  // The result type of function argument `index` applied to arguments of these types
  // (type-checks the lambda body with its params bound to them). Reports an arity mismatch.
  virtual Type applyFun(size_t index, const std::vector<Type>& paramTypes) = 0;
  // Records a constraint produced by this primitive. If it is provably false, the context
  // reports a type error instead; if provably true it may be dropped.
  virtual void require(Relation relation, const Arith& lhs, const Arith& rhs,
                       const std::string& reason) = 0;
  // Reports a type error at this primitive: "<prim>: <message>". Never returns.
  [[noreturn]] virtual void fail(const std::string& message) = 0;
  // Reports that argument `index` has the wrong type: "<prim>: argument N: expected <expected>,
  // found <found type>". Never returns.
  [[noreturn]] virtual void failArg(size_t index, const std::string& expected) = 0;
};

using TypeRule = Type (*)(TypeRuleContext& context);

struct PrimInfo {
  Op op;
  const char* name;       // as written in the text format
  PrimCategory category;
  const char* layout;     // argument layout, see primitives.def
  const char* infix;      // operator spelling for infix scalar operators, else nullptr
  const char* signature;  // the dependent type, for documentation and `weft prims`
  TypeRule typeRule;

  int natCount() const;    // 'n' letters
  bool hasBoundary() const;       // 'b'
  bool hasIndexFunction() const;  // 'i'
  int funCount() const;    // 'f' letters
  int minArgs() const;     // 'd' letters (+1 for '+')
  int maxArgs() const;     // -1 when variadic ('+' or '*')
};

const PrimInfo& primInfo(Op op);
// True for the data-layout primitives: the rows of category Layout in primitives.def (zip,
// split, join, slide, slideStrict, pad, crop, transpose, reorder, asVector, asScalar). They
// allocate nothing; code generation turns them into index arithmetic.
bool isLayoutPrimitive(Op op);
// Primitives that compute nothing, only rearrange or pick their arguments' elements: layout
// and tuple primitives, id and fill. Code generation reads them through views; the lowering
// leaves maps of such functions high-level for the same reason.
bool isRearrangingPrimitive(Op op);
// Of those, the ones each element of whose result is exactly one element of their (first)
// argument, so that a value can be written through them (join, split, transpose, reorder,
// asVector, asScalar, id): the lowering continues a parallel nest through them, and the
// rewrite search's lowering level checks that a kernel's parallel maps stay on that path.
bool isWrittenThroughPrimitive(Op op);
const std::vector<PrimInfo>& allPrimitives();
std::optional<Op> findPrimitive(std::string_view name);

}  // namespace weft
