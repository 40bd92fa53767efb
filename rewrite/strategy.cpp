// The strategy combinators of strategy.h. Traversals list the positions of the current body
// (engine.h's allPositions, pre-order) and reorder them for bottom-up and outermost; rules are
// applied through applyAt, so every step is re-type-checked.
#include "rewrite/strategy.h"

#include <algorithm>

namespace weft::rewrite {

namespace {

// Pre-order positions reordered into post-order: a position comes after all of its
// descendants, siblings stay left to right.
std::vector<Position> postOrder(std::vector<Position> positions) {
  std::stable_sort(positions.begin(), positions.end(), [](const Position& a, const Position& b) {
    size_t common = std::min(a.size(), b.size());
    for (size_t i = 0; i < common; ++i) {
      if (a[i] != b[i]) return a[i] < b[i];
    }
    return a.size() > b.size();  // a descendant (longer) before its ancestor
  });
  return positions;
}

std::vector<Position> byDepth(std::vector<Position> positions) {
  std::stable_sort(positions.begin(), positions.end(),
                   [](const Position& a, const Position& b) { return a.size() < b.size(); });
  return positions;
}

Strategy traversal(const Rule& rule, RuleArguments arguments, const char* name,
                   std::vector<Position> (*order)(std::vector<Position>),
                   NodePredicate where = nullptr) {
  return [rule, arguments = std::move(arguments), name, order, where](
             const Definition& definition, RewriteContext& context) {
    const Expr& body = definition.function.body();
    const TypedDefinition typed = typecheck(definition);
    for (const Position& position : order(allPositions(body))) {
      if (where && !where(nodeAt(body, position))) continue;
      if (auto result = applyAt(definition, typed, rule, position, arguments, context)) {
        return StrategyResult::ok(std::move(*result));
      }
    }
    return StrategyResult::fail(std::string(name) + "(" + rule.name + "): no position matches");
  };
}

std::vector<Position> preOrder(std::vector<Position> positions) { return positions; }

}  // namespace

const char* stopReasonName(StopReason reason) {
  switch (reason) {
    case StopReason::Failure:
      return "failure";
    case StopReason::Fixpoint:
      return "fixpoint";
    case StopReason::Limit:
      return "limit";
  }
  return "unknown";
}

Strategy identity() {
  return
      [](const Definition& definition, RewriteContext&) { return StrategyResult::ok(definition); };
}

Strategy seq(Strategy first, Strategy second) {
  return [first = std::move(first), second = std::move(second)](const Definition& definition,
                                                                RewriteContext& context) {
    StrategyResult a = first(definition, context);
    if (!a.success()) return a;
    return second(*a.definition, context);
  };
}

Strategy leftChoice(Strategy first, Strategy second) {
  return [first = std::move(first), second = std::move(second)](const Definition& definition,
                                                                RewriteContext& context) {
    StrategyResult a = first(definition, context);
    if (a.success()) return a;
    StrategyResult b = second(definition, context);
    if (!b.success()) b.failure = a.failure + "; " + b.failure;
    return b;
  };
}

Strategy tryS(Strategy strategy) { return leftChoice(std::move(strategy), identity()); }

Strategy repeat(Strategy strategy, int limit) {
  return [strategy = std::move(strategy), limit](const Definition& definition,
                                                 RewriteContext& context) {
    StrategyResult result = StrategyResult::ok(definition);
    while (true) {
      if (result.steps >= limit) {
        result.stopped = StopReason::Limit;
        return result;
      }
      StrategyResult next = strategy(*result.definition, context);
      if (!next.success()) {
        result.stopped = StopReason::Failure;
        result.failure = next.failure;  // why the last attempt failed (informational)
        return result;
      }
      result.definition = std::move(next.definition);
      ++result.steps;
    }
  };
}

Strategy topDown(const Rule& rule, RuleArguments arguments) {
  return traversal(rule, std::move(arguments), "topDown", preOrder);
}

Strategy bottomUp(const Rule& rule, RuleArguments arguments) {
  return traversal(rule, std::move(arguments), "bottomUp", postOrder);
}

Strategy topDownWhere(const Rule& rule, NodePredicate where, RuleArguments arguments) {
  return traversal(rule, std::move(arguments), "topDown", preOrder, std::move(where));
}

Strategy bottomUpWhere(const Rule& rule, NodePredicate where, RuleArguments arguments) {
  return traversal(rule, std::move(arguments), "bottomUp", postOrder, std::move(where));
}

Strategy outermost(const Rule& rule, RuleArguments arguments) {
  return traversal(rule, std::move(arguments), "outermost", byDepth);
}

Strategy atPosition(const Rule& rule, Position position, RuleArguments arguments) {
  return [rule, position = std::move(position), arguments = std::move(arguments)](
             const Definition& definition, RewriteContext& context) {
    if (auto result = applyAt(definition, rule, position, arguments, context)) {
      return StrategyResult::ok(std::move(*result));
    }
    return StrategyResult::fail(rule.name + " does not match at " + positionToString(position));
  };
}

Strategy normalize(std::vector<Rule> rules, int limit) {
  return [rules = std::move(rules), limit](const Definition& definition, RewriteContext& context) {
    StrategyResult result = StrategyResult::ok(definition);
    while (true) {
      // The next rewrite: the first rule that matches at the first top-down position.
      std::optional<Definition> next;
      const TypedDefinition typed = typecheck(*result.definition);
      for (const Position& position : allPositions(result.definition->function.body())) {
        for (const Rule& rule : rules) {
          RewriteContext attempt = context;
          next = applyAt(*result.definition, typed, rule, position, {}, attempt);
          if (next) {
            if (result.steps >= limit) {  // rules still apply, but the budget is spent
              result.stopped = StopReason::Limit;
              return result;
            }
            context = attempt;
            break;
          }
        }
        if (next) break;
      }
      if (!next) {
        result.stopped = StopReason::Fixpoint;
        return result;
      }
      result.definition = std::move(next);
      ++result.steps;
    }
  };
}

}  // namespace weft::rewrite
