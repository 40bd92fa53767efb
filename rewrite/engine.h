// Applying rules to whole definitions: positions, application at a position, and listing every
// (rule, position) pair where a rule applies.
//
// A position is the path from the definition's body to a node: the child indices in the order
// funs then args for a primitive, 0 for a lambda's body; printed as dotted numbers ("2.0.1"),
// the root as "root". User functions are leaves (their scalar bodies are not rewritten).
// Applying a rule at a position rebuilds only the nodes on the path, so the
// result shares every unchanged subtree with the original, and re-type-checks the result (an
// ill-typed result throws RewriteError naming the rule: a bug in the rule).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "rewrite/rule.h"
#include "typecheck/typecheck.h"

namespace weft::rewrite {

struct RewriteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Position = std::vector<int>;
std::string positionToString(const Position& position);
Position parsePosition(const std::string& text);  // throws RewriteError on bad syntax

// The node at a position (throws RewriteError if the path does not exist).
Expr nodeAt(const Expr& root, const Position& position);
// Every position of a body, parents before children.
std::vector<Position> allPositions(const Expr& root);
// Every node of a body with its position, in allPositions' order, and the index of its parent's
// entry (-1 for the body itself): one walk instead of one descent from the body per position.
struct PositionedNode {
  Position position;
  Expr node;
  int parent;
};
std::vector<PositionedNode> positionedNodes(const Expr& root);
// The nodes from the body (first) down to entry `index` (last).
std::vector<Expr> pathOf(const std::vector<PositionedNode>& nodes, size_t index);

struct Match {
  const Rule* rule;
  Position position;
};

// Every (rule, position) where the rule applies to the definition (factors left symbolic).
std::vector<Match> findMatches(const Definition& definition, const std::vector<Rule>& rules);

// Applies `rule` at `position`; nullopt if it does not match there. The result is type-checked.
std::optional<Definition> applyAt(const Definition& definition, const Rule& rule,
                                  const Position& position, const RuleArguments& arguments,
                                  RewriteContext& context);
// The same with the definition's types already computed (typecheck(definition)): loops that try
// one rule at many positions type-check once, not once per position.
std::optional<Definition> applyAt(const Definition& definition, const TypedDefinition& typed,
                                  const Rule& rule, const Position& position,
                                  const RuleArguments& arguments, RewriteContext& context);
// The same with the nodes on the path to `position` known (pathOf).
std::optional<Definition> applyAt(const Definition& definition, const TypedDefinition& typed,
                                  const Rule& rule, const Position& position,
                                  const std::vector<Expr>& path, const RuleArguments& arguments,
                                  RewriteContext& context);

}  // namespace weft::rewrite
