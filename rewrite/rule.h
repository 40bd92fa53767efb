// Rewrite rules: named, documented program transformations that preserve meaning.
//
// A rule has a kebab-case name (`split-join`), a notation line in the paper's style
// (`map(f) => join ∘ map(map(f)) ∘ split(n)`), a family, and an apply function that matches one
// node and returns its replacement, or nothing when it does not match (a rule changes nothing
// unless it matched). Rules that need a factor (split size, tile size, vector width, ...) take
// it from RuleArguments when given, or create a fresh tuning variable with a range through the
// RewriteContext, so that the result is a parametric program whose parameters the constraint
// solver later decides.
//
// Rules see the types of the program they rewrite through a TypeLookup (the type checker's side
// table for the current program); a rule whose result is ill-typed is a bug, and the engine
// re-type-checks every result.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace weft::rewrite {

enum class RuleFamily {
  Fusion,          // map fusion / fission
  Tiling,          // split-join, slide tiling, pad-for-tiling
  Reduction,       // partial reduction, map/reduce interchange
  Simplification,  // identities (join ∘ split, transpose ∘ transpose, asScalar ∘ asVector)
  Vectorization,   // asVector / vectorize / asScalar
  Coalescing,      // reorder with stride
  Lowering,        // map => mapGlb / mapWrg / mapLcl / mapSeq, reduce => reduceSeq, unrolling
  AddressSpace,    // toGlobal / toLocal / toPrivate and the copies that place values
};
const char* ruleFamilyName(RuleFamily family);

// Creates tuning variables with unique names (theta1, kappa2, ...; ASCII so the text format
// can print them) — the only state a rewrite needs, passed explicitly (no global counter).
class RewriteContext {
 public:
  // A fresh tuning parameter named stem + number, kind Tuning, in [lo, hi].
  Arith freshTuning(const std::string& stem, Arith lo, std::optional<Arith> hi);
  // A fresh 0/1 switch (coalesce, unroll).
  Arith freshSwitch(const std::string& stem);
  // Every tuning variable created so far, in creation order.
  const std::vector<Arith>& tuningVariables() const { return created_; }

 private:
  int counter_ = 0;
  std::vector<Arith> created_;
};

// The type of any node of the program being rewritten (throws if unknown).
using TypeLookup = std::function<Type(const Expr&)>;

// Values for a rule's factors by name ("n" for split-join's chunk size, ...); a factor that is
// absent becomes a fresh tuning variable.
using RuleArguments = std::vector<std::pair<std::string, Arith>>;

struct RuleApplication {
  const Expr& node;          // the node the rule is tried on
  const TypeLookup& typeOf;  // types of the current program
  const RuleArguments& arguments;
  RewriteContext& context;
  // The enclosing nodes from the definition's body (first) down to the node's parent (last);
  // lowering rules read it to check their legality in the surrounding nest of maps.
  const std::vector<Expr>& ancestors;
  // The factor named `name`: the given value, else a fresh tuning variable from `make`.
  Arith factor(const std::string& name, const std::function<Arith(RewriteContext&)>& make) const;
  // The factor named `name` when it is given (for factors a rule cannot invent).
  std::optional<Arith> given(const std::string& name) const;
};

struct Rule {
  std::string name;      // kebab-case, unique
  std::string notation;  // e.g. "map(f) => join ∘ map(map(f)) ∘ split(n)"
  RuleFamily family;
  std::vector<std::string> factors;  // names of the factors it takes, e.g. {"n"}
  std::function<std::optional<Expr>(const RuleApplication&)> apply;
};

}  // namespace weft::rewrite
