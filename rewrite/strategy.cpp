// The strategy combinators of strategy.h. Traversals list the nodes of the current body with
// their positions (engine.h's positionedNodes, pre-order) and reorder them for bottom-up and
// outermost; rules are applied through applyAt, so every step is re-type-checked (once: the
// next traversal finds the result's types remembered).
#include "rewrite/strategy.h"

#include <algorithm>

namespace weft::rewrite {

namespace {

// The orders of traversal, as indices into positionedNodes' entries (pre-order).
using NodeOrder = std::vector<size_t> (*)(const std::vector<PositionedNode>&);

std::vector<size_t> preOrder(const std::vector<PositionedNode>& nodes) {
  std::vector<size_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  return order;
}

// Post-order: a position comes after all of its descendants, siblings stay left to right.
std::vector<size_t> postOrder(const std::vector<PositionedNode>& nodes) {
  std::vector<size_t> order = preOrder(nodes);
  std::stable_sort(order.begin(), order.end(), [&nodes](size_t i, size_t j) {
    const Position& a = nodes[i].position;
    const Position& b = nodes[j].position;
    size_t common = std::min(a.size(), b.size());
    for (size_t k = 0; k < common; ++k) {
      if (a[k] != b[k]) return a[k] < b[k];
    }
    return a.size() > b.size();  // a descendant (longer) before its ancestor
  });
  return order;
}

std::vector<size_t> byDepth(const std::vector<PositionedNode>& nodes) {
  std::vector<size_t> order = preOrder(nodes);
  std::stable_sort(order.begin(), order.end(), [&nodes](size_t i, size_t j) {
    return nodes[i].position.size() < nodes[j].position.size();
  });
  return order;
}

Strategy traversal(const Rule& rule, RuleArguments arguments, const char* name, NodeOrder order,
                   NodePredicate where = nullptr) {
  return [rule, arguments = std::move(arguments), name, order, where](const Definition& definition,
                                                                      RewriteContext& context) {
    const std::shared_ptr<const TypedDefinition> typed = typecheckRemembered(definition);
    const std::vector<PositionedNode> nodes = positionedNodes(definition.function.body());
    for (size_t entry : order(nodes)) {
      if (where && !where(nodes[entry].node)) continue;
      if (auto result = applyAt(definition, *typed, rule, nodes[entry].position,
                                pathOf(nodes, entry), arguments, context)) {
        return StrategyResult::ok(std::move(*result));
      }
    }
    return StrategyResult::fail(std::string(name) + "(" + rule.name + "): no position matches");
  };
}

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
