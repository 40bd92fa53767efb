// Constraints on size variables and tuning parameters.
//
// Types of weft programs are only meaningful when their lengths satisfy side conditions: split
// by κ needs κ to divide the length, a strict slide must cover its input exactly, an array
// length must be positive. The type checker records each such condition as a Constraint that
// names the primitive (and source location) that produced it, so that later an unsatisfiable
// space can be explained in the words of the program ("split by κ requires 64 % κ = 0"), and
// so that the solver can encode them and an independent evaluator can re-check every sample.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/arith.h"
#include "ir/source_loc.h"

namespace weft {

enum class Relation {
  Equal,      // lhs == rhs
  LessEqual,  // lhs <= rhs
  Less,       // lhs < rhs
  Divides,    // lhs divides rhs: rhs % lhs == 0 (and lhs > 0)
};

struct Constraint {
  Relation relation = Relation::Equal;
  Arith lhs;
  Arith rhs;
  std::string origin;  // the primitive (or rule) that produced it, e.g. "split"
  SourceLoc loc;       // where that primitive is in the source, when known
  std::string reason;  // a short phrase, e.g. "split size must divide the length"

  // The condition as a formula: "n % 4 = 0", "3 <= n", "n = m".
  std::string formula() const;
  // A sentence: "split by 4 requires n % 4 = 0 (split size must divide the length)".
  std::string describe() const;
  // The sentence without the reason: "split by 4 requires n % 4 = 0".
  std::string requirement() const;
  // The variables it mentions, sorted by name, each once.
  std::vector<Arith> vars() const;
  // Truth under a complete binding; nullopt if a variable is unbound or a division by zero.
  std::optional<bool> evaluate(const ArithBinding& binding) const;
  // Decided without a binding: true/false when provable, nullopt otherwise.
  std::optional<bool> decide() const;

  bool operator==(const Constraint& other) const;  // same relation and sides
};

const char* relationSymbol(Relation relation);

}  // namespace weft
