// Strategies in the style of ELEVATE: a strategy is a function from a definition to success
// (a rewritten definition) or failure, and a handful of combinators compose rules into
// recipes (sequence, left choice, try, repeat, traversals, application at a position).
//
// Every loop has a limit and reports why it stopped: repeat stops when its strategy fails or
// when it reaches the limit, normalize when no rule applies any more (a fixpoint) or at the
// limit. The reason and the number of steps travel in the StrategyResult.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "rewrite/engine.h"
#include "rewrite/rule.h"

namespace weft::rewrite {

// Why a loop (repeat, normalize) stopped.
enum class StopReason {
  Failure,   // repeat: its strategy failed
  Fixpoint,  // normalize: no rule applies anywhere
  Limit,     // the step limit was reached
};
const char* stopReasonName(StopReason reason);

struct StrategyResult {
  std::optional<Definition> definition;  // present on success
  std::string failure;                   // on failure: what did not apply
  int steps = 0;                         // loops: successful steps taken
  std::optional<StopReason> stopped;     // loops: why they stopped
  bool success() const { return definition.has_value(); }
  static StrategyResult ok(Definition definition) {
    StrategyResult result;
    result.definition = std::move(definition);
    return result;
  }
  static StrategyResult fail(std::string why) {
    StrategyResult result;
    result.failure = std::move(why);
    return result;
  }
};

using Strategy = std::function<StrategyResult(const Definition&, RewriteContext&)>;

Strategy identity();                                   // always succeeds, unchanged
Strategy seq(Strategy first, Strategy second);         // first, then second on its result
Strategy leftChoice(Strategy first, Strategy second);  // first, or second if first fails
Strategy tryS(Strategy strategy);                      // strategy, or the input unchanged
// Applies `strategy` until it fails or `limit` steps were taken; always succeeds, with
// `steps` and `stopped` (Failure or Limit) set.
Strategy repeat(Strategy strategy, int limit);

// Rule traversals: apply `rule` at the first position where it matches, in that order.
// topDown: parents before children, left to right (pre-order);
// bottomUp: children before parents (post-order);
// outermost: the shallowest matching position (ties broken left to right).
Strategy topDown(const Rule& rule, RuleArguments arguments = {});
Strategy bottomUp(const Rule& rule, RuleArguments arguments = {});
Strategy outermost(const Rule& rule, RuleArguments arguments = {});
// The same traversals restricted to nodes for which `where` holds (e.g. "contains a reduce"),
// so that a strategy can name the node a step is for without fixing its position.
using NodePredicate = std::function<bool(const Expr& node)>;
Strategy topDownWhere(const Rule& rule, NodePredicate where, RuleArguments arguments = {});
Strategy bottomUpWhere(const Rule& rule, NodePredicate where, RuleArguments arguments = {});
// Applies `rule` exactly at `position`; fails if it does not match there.
Strategy atPosition(const Rule& rule, Position position, RuleArguments arguments = {});
// Applies the rules (the first rule that matches, at its first top-down position) until none
// applies or `limit` steps were taken; always succeeds with `steps` and `stopped` (Fixpoint
// or Limit) set. The rules are used with symbolic factors.
Strategy normalize(std::vector<Rule> rules, int limit);

}  // namespace weft::rewrite
