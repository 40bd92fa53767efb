// Positions in a definition's body, listing the places where rules apply, and applying a rule
// at one place. Application rebuilds only the nodes on the path from the body to the rewritten
// node (Expr::withChildren / withBody return the node itself when nothing changed below it), so
// every untouched subtree is shared with the original, and the result is re-type-checked.
//
// Children of a node, in position order: a primitive's function arguments then its data
// arguments; a lambda's body (index 0). User functions are leaves: their bodies are scalar C
// code that no rule rewrites.
#include "rewrite/engine.h"

#include <algorithm>
#include <cctype>

#include "typecheck/typecheck.h"

namespace weft::rewrite {

namespace {

std::vector<Expr> childrenOf(const Expr& e) {
  std::vector<Expr> children;
  if (e.isPrim()) {
    children = e.funs();
    children.insert(children.end(), e.args().begin(), e.args().end());
  } else if (e.isLambda()) {
    children.push_back(e.body());
  }
  return children;
}

Expr withChild(const Expr& parent, int index, const Expr& child) {
  if (parent.isLambda()) return parent.withBody(child);
  std::vector<Expr> funs = parent.funs();
  std::vector<Expr> args = parent.args();
  size_t i = static_cast<size_t>(index);
  if (i < funs.size()) {
    funs[i] = child;
  } else {
    args[i - funs.size()] = child;
  }
  return parent.withChildren(parent.nats(), std::move(funs), std::move(args));
}

// Pre-order: the node, then each child's subtree left to right.
void collectNodes(const Expr& e, Position& current, int parent, std::vector<PositionedNode>& out) {
  out.push_back({current, e, parent});
  const int self = static_cast<int>(out.size()) - 1;
  std::vector<Expr> children = childrenOf(e);
  for (size_t i = 0; i < children.size(); ++i) {
    current.push_back(static_cast<int>(i));
    collectNodes(children[i], current, self, out);
    current.pop_back();
  }
}

// The nodes on the path: path[0] is the root, path.back() the node at `position`.
std::vector<Expr> pathTo(const Expr& root, const Position& position) {
  std::vector<Expr> path{root};
  for (size_t depth = 0; depth < position.size(); ++depth) {
    std::vector<Expr> children = childrenOf(path.back());
    int index = position[depth];
    if (index < 0 || static_cast<size_t>(index) >= children.size()) {
      Position prefix(position.begin(), position.begin() + static_cast<long>(depth) + 1);
      throw RewriteError("no node at position " + positionToString(position) + " (" +
                         positionToString(prefix) + " does not exist)");
    }
    path.push_back(children[static_cast<size_t>(index)]);
  }
  return path;
}

// Tries the rule on the node at the end of `path`; the ancestors are path minus its last node.
std::optional<Expr> tryRule(const Rule& rule, const std::vector<Expr>& path,
                            const TypeLookup& typeOf, const RuleArguments& arguments,
                            RewriteContext& context) {
  std::vector<Expr> ancestors(path.begin(), path.end() - 1);
  RuleApplication application{path.back(), typeOf, arguments, context, ancestors};
  return rule.apply(application);
}

}  // namespace

std::string positionToString(const Position& position) {
  if (position.empty()) return "root";
  std::string text;
  for (size_t i = 0; i < position.size(); ++i) {
    if (i > 0) text += ".";
    text += std::to_string(position[i]);
  }
  return text;
}

Position parsePosition(const std::string& text) {
  if (text == "root") return {};
  Position position;
  size_t start = 0;
  while (true) {
    size_t dot = text.find('.', start);
    std::string part =
        text.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty() || part.size() > 6 ||
        !std::all_of(part.begin(), part.end(), [](unsigned char c) { return std::isdigit(c); })) {
      throw RewriteError("bad position '" + text +
                         "': expected 'root' or dotted child indices such as 2.0.1");
    }
    position.push_back(std::stoi(part));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return position;
}

Expr nodeAt(const Expr& root, const Position& position) { return pathTo(root, position).back(); }

std::vector<Position> allPositions(const Expr& root) {
  std::vector<Position> out;
  for (PositionedNode& entry : positionedNodes(root)) out.push_back(std::move(entry.position));
  return out;
}

std::vector<PositionedNode> positionedNodes(const Expr& root) {
  std::vector<PositionedNode> out;
  Position current;
  collectNodes(root, current, -1, out);
  return out;
}

std::vector<Expr> pathOf(const std::vector<PositionedNode>& nodes, size_t index) {
  std::vector<Expr> path;
  for (int at = static_cast<int>(index); at >= 0; at = nodes[static_cast<size_t>(at)].parent) {
    path.push_back(nodes[static_cast<size_t>(at)].node);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<Match> findMatches(const Definition& definition, const std::vector<Rule>& rules) {
  std::shared_ptr<const TypedDefinition> typed = typecheckRemembered(definition);
  TypeLookup typeOf = [&typed](const Expr& e) { return typed->typeOf(e); };
  std::vector<Match> matches;
  RuleArguments none;
  const std::vector<PositionedNode> nodes = positionedNodes(definition.function.body());
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<Expr> path = pathOf(nodes, i);
    for (const Rule& rule : rules) {
      RewriteContext scratch;  // factors stay symbolic; the names are thrown away
      if (tryRule(rule, path, typeOf, none, scratch)) matches.push_back({&rule, nodes[i].position});
    }
  }
  return matches;
}

std::optional<Definition> applyAt(const Definition& definition, const Rule& rule,
                                  const Position& position, const RuleArguments& arguments,
                                  RewriteContext& context) {
  return applyAt(definition, *typecheckRemembered(definition), rule, position, arguments, context);
}

std::optional<Definition> applyAt(const Definition& definition, const TypedDefinition& typed,
                                  const Rule& rule, const Position& position,
                                  const RuleArguments& arguments, RewriteContext& context) {
  return applyAt(definition, typed, rule, position, pathTo(definition.function.body(), position),
                 arguments, context);
}

std::optional<Definition> applyAt(const Definition& definition, const TypedDefinition& typed,
                                  const Rule& rule, const Position& position,
                                  const std::vector<Expr>& path, const RuleArguments& arguments,
                                  RewriteContext& context) {
  TypeLookup typeOf = [&typed](const Expr& e) { return typed.typeOf(e); };
  // Rules may create tuning variables before deciding not to match; keep the context clean.
  RewriteContext attempt = context;
  std::optional<Expr> replacement = tryRule(rule, path, typeOf, arguments, attempt);
  if (!replacement) return std::nullopt;
  Expr rebuilt = *replacement;
  for (size_t depth = position.size(); depth > 0; --depth) {
    rebuilt = withChild(path[depth - 1], position[depth - 1], rebuilt);
  }
  Definition result = definition;
  result.function = definition.function.withBody(rebuilt);
  try {
    typecheckRemembered(result);  // the next step's traversal finds it remembered
  } catch (const TypeError& error) {
    throw RewriteError("rule " + rule.name + " at " + positionToString(position) +
                       " produced an ill-typed program: " + error.what());
  }
  context = attempt;
  return result;
}

}  // namespace weft::rewrite
