// `weft rules` lists the rewrite rules (name, family, notation, factors); `weft rewrite FILE
// [--def NAME] --list` shows every rule@position where a rule applies with a preview of the
// matched node, and `--apply NAME@POS[:factor=value,...]` (repeatable, applied in order) prints
// the rewritten program and the tuning variables the rules created with their ranges.
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/strategies.h"

namespace weft::cli {

namespace {

struct RewriteOptions {
  std::string file;
  std::string definition;
  bool list = false;
  std::vector<std::string> applications;
  std::string strategy;  // NAME[:factor=value,...]
};

// One line of at most `width` characters.
std::string preview(const Expr& e, size_t width = 72) {
  std::string text = printExpr(e);
  std::string line;
  bool space = false;
  for (char c : text) {
    if (c == '\n' || c == ' ' || c == '\t') {
      space = !line.empty();
      continue;
    }
    if (space) line += ' ';
    space = false;
    line += c;
  }
  if (line.size() > width) line = line.substr(0, width - 3) + "...";
  return line;
}

struct ParsedApplication {
  const rewrite::Rule* rule;
  rewrite::Position position;
  rewrite::RuleArguments arguments;
};

// NAME@POS[:factor=value,...]
ParsedApplication parseApplication(const std::string& text) {
  size_t at = text.find('@');
  if (at == std::string::npos) {
    throw std::runtime_error("--apply " + text + ": expected NAME@POS[:factor=value,...]");
  }
  std::string name = text.substr(0, at);
  const rewrite::Rule* rule = rewrite::findRule(name);
  if (!rule)
    throw std::runtime_error("--apply " + text + ": no rule named '" + name + "' (see weft rules)");
  std::string rest = text.substr(at + 1);
  size_t colon = rest.find(':');
  ParsedApplication parsed{rule, rewrite::parsePosition(rest.substr(0, colon)), {}};
  if (colon == std::string::npos) return parsed;
  std::string factors = rest.substr(colon + 1);
  size_t start = 0;
  while (start <= factors.size()) {
    size_t comma = factors.find(',', start);
    std::string item =
        factors.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw std::runtime_error("--apply " + text + ": expected factor=value, found '" + item + "'");
    }
    std::string factor = item.substr(0, equals);
    bool known = false;
    for (const std::string& f : rule->factors) known = known || f == factor;
    if (!known) {
      std::string names;
      for (const std::string& f : rule->factors) names += (names.empty() ? "" : ", ") + f;
      throw std::runtime_error("--apply " + text + ": rule " + rule->name + " has no factor '" +
                               factor + "'" +
                               (names.empty() ? " (it takes none)" : " (it takes " + names + ")"));
    }
    parsed.arguments.push_back({factor, parseArith(item.substr(equals + 1))});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parsed;
}

// --strategy NAME[:factor=value,...]: the named strategy of rewrite/strategies.h.
Definition runStrategy(const std::string& text, const Definition& definition,
                       rewrite::RewriteContext& context) {
  size_t colon = text.find(':');
  std::string name = text.substr(0, colon);
  const rewrite::NamedStrategy* strategy = rewrite::findStrategy(name);
  if (!strategy) {
    throw std::runtime_error("--strategy " + text + ": no strategy named '" + name +
                             "' (see weft rules)");
  }
  rewrite::RuleArguments arguments;
  if (colon != std::string::npos) {
    std::string factors = text.substr(colon + 1);
    size_t start = 0;
    while (start <= factors.size()) {
      size_t comma = factors.find(',', start);
      std::string item =
          factors.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      size_t equals = item.find('=');
      std::string factor = equals == std::string::npos ? item : item.substr(0, equals);
      bool known = false;
      for (const std::string& f : strategy->factors) known = known || f == factor;
      if (equals == std::string::npos || equals == 0 || !known) {
        std::string names;
        for (const std::string& f : strategy->factors) names += (names.empty() ? "" : ", ") + f;
        throw std::runtime_error("--strategy " + text + ": expected factor=value with a factor of " +
                                 names + ", found '" + item + "'");
      }
      arguments.push_back({factor, parseArith(item.substr(equals + 1))});
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  rewrite::StrategyResult result = strategy->make(arguments)(definition, context);
  if (!result.success()) {
    throw std::runtime_error("--strategy " + text + " failed: " + result.failure);
  }
  return *result.definition;
}

std::string rangeText(const Arith& var) {
  const std::optional<Arith>& hi = var.varHi();
  return "[" + var.varLo().toString() + ", " + (hi ? hi->toString() + "]" : "inf)");
}

void runRewrite(const RewriteOptions& options) {
  Program program = parseFile(options.file);
  if (program.definitions.empty()) throw std::runtime_error(options.file + ": no definitions");
  const Definition* selected = &program.definitions.back();
  if (!options.definition.empty()) {
    selected = program.findDefinition(options.definition);
    if (!selected) {
      throw std::runtime_error(options.file + ": no definition named '" + options.definition + "'");
    }
  }
  bool transforms = !options.applications.empty() || !options.strategy.empty();
  if (options.list == transforms) {
    throw std::runtime_error(
        "weft rewrite: give either --list or one or more --apply (and/or --strategy)");
  }
  if (options.list) {
    const Expr& body = selected->function.body();
    std::vector<rewrite::Match> matches = rewrite::findMatches(*selected, rewrite::ruleLibrary());
    std::cout << "def " << selected->name << ": " << matches.size() << " rewrite"
              << (matches.size() == 1 ? "" : "s") << "\n";
    for (const rewrite::Match& match : matches) {
      std::string where = match.rule->name + "@" + rewrite::positionToString(match.position);
      std::cout << "  " << where << std::string(where.size() < 36 ? 36 - where.size() : 1, ' ')
                << preview(rewrite::nodeAt(body, match.position)) << "\n";
    }
    return;
  }
  Definition current = *selected;
  rewrite::RewriteContext context;
  if (!options.strategy.empty()) current = runStrategy(options.strategy, current, context);
  for (const std::string& text : options.applications) {
    ParsedApplication step = parseApplication(text);
    std::optional<Definition> next =
        rewrite::applyAt(current, *step.rule, step.position, step.arguments, context);
    if (!next) {
      throw std::runtime_error(
          "--apply " + text + ": rule " + step.rule->name + " does not match at " +
          rewrite::positionToString(step.position) +
          " (node: " + preview(rewrite::nodeAt(current.function.body(), step.position)) + ")");
    }
    current = std::move(*next);
  }
  // Declare the tuning variables the result uses with their ranges, so that the printed program
  // reads back with them (def f[0 <= rho1 <= H + 2*P, ...]).
  std::vector<Arith> occurring = variableOccurrences(current);
  for (const Arith& v : context.tuningVariables()) {
    bool used = false, declared = false;
    for (const Arith& o : occurring) used = used || (o.isVar() && o.varName() == v.varName());
    for (const Arith& d : current.sizeDeclarations) declared = declared || d.varName() == v.varName();
    if (!used || declared) continue;
    // Declarations take constant bounds: symbolic ones (theta1 in [K, H + 2*P]) are left to
    // the constraints the program's types give, and shown in the comment below.
    Arith lo = v.varLo().constant() ? v.varLo() : Arith(1);
    std::optional<Arith> hi;
    if (v.varHi() && v.varHi()->constant()) hi = *v.varHi();
    current.sizeDeclarations.push_back(Arith::var(v.varName(), VarKind::Size, lo, hi));
  }
  Program result{program.userFuns, {current}};
  std::cout << printProgram(result);
  if (context.tuningVariables().empty()) {
    std::cout << "// tuning variables: none\n";
  } else {
    std::cout << "// tuning variables:\n";
    for (const Arith& v : context.tuningVariables()) {
      std::cout << "//   " << v.varName() << " in " << rangeText(v) << "\n";
    }
  }
}

void runRules() {
  for (const rewrite::Rule& rule : rewrite::ruleLibrary()) {
    std::string factors;
    for (const std::string& f : rule.factors) factors += (factors.empty() ? "" : ", ") + f;
    std::cout << rule.name << "  [" << rewrite::ruleFamilyName(rule.family) << "]"
              << (factors.empty() ? "" : "  factors: " + factors) << "\n    " << rule.notation
              << "\n";
  }
  std::cout << "\nstrategies (weft rewrite FILE --strategy NAME[:factor=value,...]):\n";
  for (const rewrite::NamedStrategy& strategy : rewrite::strategyLibrary()) {
    std::string factors;
    for (const std::string& f : strategy.factors) factors += (factors.empty() ? "" : ", ") + f;
    std::cout << strategy.name << (factors.empty() ? "" : "  factors: " + factors) << "\n    "
              << strategy.description << "\n";
  }
}

}  // namespace

void registerRewrite(CLI::App& app) {
  CLI::App* rules =
      app.add_subcommand("rules", "List the rewrite rules: name, family, factors and notation.");
  rules->callback([] { runRules(); });

  auto options = std::make_shared<RewriteOptions>();
  CLI::App* command = app.add_subcommand(
      "rewrite",
      "Show where rewrite rules apply in a definition (--list), or apply rules at positions\n"
      "(--apply NAME@POS[:factor=value,...], repeatable, applied in order) and print the\n"
      "rewritten program and the tuning variables created for factors that were not given.\n"
      "A position is 'root' or dotted child indices (function arguments, then data arguments;\n"
      "0 for a lambda's body) as printed by --list.");
  command->add_option("FILE", options->file, "the program (.weft text format)")->required();
  command->add_option("--def", options->definition, "the definition NAME (default: the last)")
      ->type_name("NAME");
  command->add_flag("--list", options->list, "list every rule@position where a rule applies");
  command->add_option("--apply", options->applications, "apply NAME@POS[:factor=value,...]")
      ->type_name("RULE@POS");
  command->add_option("--strategy", options->strategy,
                      "apply a named strategy first (see weft rules), NAME[:factor=value,...]")
      ->type_name("NAME");
  command->footer(
      "Example:\n"
      "  $ weft rewrite examples/dot.weft --list\n"
      "  $ weft rewrite examples/matmul.weft --apply map-to-mapglb@root:dim=1 "
      "--apply map-to-mapglb@0.0.0:dim=0");
  command->callback([options] { runRewrite(*options); });
}

}  // namespace weft::cli
