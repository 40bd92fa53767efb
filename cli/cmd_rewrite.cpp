// `weft rules` lists the rewrite rules (name, family, notation, factors); `weft rewrite FILE
// [--def NAME] --list` shows every rule@position where a rule applies with a preview of the
// matched node, and `--apply NAME@POS[:factor=value,...]` (repeatable, applied in order) prints
// the rewritten program and the tuning variables the rules created with their ranges.
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "rewrite/sequence_search.h"
#include "host/device_profile.h"
#include "workloads/pipeline/searched_structures.h"
#include "cli/program_loading.h"
#include "rewrite/strategies.h"

namespace weft::cli {

namespace {

struct RewriteOptions {
  std::string file;
  std::string definition;
  bool list = false;
  std::vector<std::string> applications;
  std::string strategy;  // NAME[:factor=value,...]
  // --search and its limits.
  bool search = false;
  bool printPrograms = false;
  int depth = -1;
  int loweringDepth = -1;
  int maxAlgorithmic = -1;
  int maxLowerings = -1;
  int64_t maxApplications = -1;
  double seconds = -1;
  std::vector<int64_t> vectorWidths = {4};
  std::vector<std::string> withoutHeuristics;
  std::string profile;  // --profile: the exploration's options for this device profile
  std::vector<std::string> sizes;  // --size NAME=VALUE: where the intensity order ranks
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

// NAME@POS[:factor=value,...] (rewrite/sequence_search.h), with the option named in errors.
rewrite::RewriteStep parseApplication(const std::string& text) {
  try {
    return rewrite::parseStep(text);
  } catch (const rewrite::RewriteError& error) {
    throw std::runtime_error(std::string("--apply ") + error.what());
  }
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
    try {
      arguments = rewrite::parseFactors(text.substr(colon + 1), strategy->factors,
                                        "strategy " + strategy->name);
    } catch (const rewrite::RewriteError& error) {
      throw std::runtime_error("--strategy " + text + ": " + error.what());
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

// --search: the structures the rewrite-sequence search reaches, each with its sequence.
void runSearch(const RewriteOptions& options, const Definition& definition) {
  rewrite::SearchOptions search = rewrite::defaultSearchOptions(options.vectorWidths);
  if (!options.profile.empty()) {
    const host::DeviceProfile profile = host::loadProfile(options.profile);
    search = explore::explorationSearchOptions(&profile);
  }
  std::set<std::string> known = mentionedSizeNames(definition);
  for (const Arith& declared : definition.sizeDeclarations) known.insert(declared.varName());
  search.rankingSizes = parseSizeOptions(options.sizes, definition, known);
  if (options.depth >= 0) search.algorithmicDepth = options.depth;
  if (options.loweringDepth >= 0) search.loweringDepth = options.loweringDepth;
  if (options.maxAlgorithmic >= 0) search.maxAlgorithmic = options.maxAlgorithmic;
  if (options.maxLowerings >= 0) search.maxLoweringsPerProgram = options.maxLowerings;
  if (options.maxApplications >= 0) search.maxApplications = options.maxApplications;
  if (options.seconds >= 0) search.maxSeconds = options.seconds;
  for (const std::string& name : options.withoutHeuristics) {
    search.disabledHeuristics.insert(name);
  }
  rewrite::SearchReport report;
  try {
    // From the program with its window shapes bound by --size, as weft explore searches.
    report = rewrite::searchRewrites(
        explore::windowShapeSpecialised(definition, search.rankingSizes), search);
  } catch (const rewrite::RewriteError& error) {
    throw std::runtime_error(std::string("--search: ") + error.what());
  }
  std::cout << "def " << definition.name << ": " << report.summary() << "\n";
  if (!report.firstInfeasible.empty()) {
    std::cout << "first infeasible result: " << report.firstInfeasible << "\n";
  }
  for (size_t i = 0; i < report.structures.size(); ++i) {
    const rewrite::SearchedStructure& s = report.structures[i];
    std::string sequence = rewrite::sequenceText(s.sequence);
    std::cout << "  [" << i << "] " << std::hex << s.hash << std::dec << "  "
              << (sequence.empty() ? "as written" : sequence) << "\n";
    if (options.printPrograms) {
      std::cout << printDefinition(s.definition) << "\n";
    }
  }
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
  if (int(options.list) + int(transforms) + int(options.search) != 1) {
    throw std::runtime_error(
        "weft rewrite: give one of --list, --search, or one or more --apply (and/or --strategy)");
  }
  if (options.search) {
    runSearch(options, *selected);
    return;
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
    rewrite::RewriteStep step = parseApplication(text);
    const rewrite::Rule& rule = *rewrite::findRule(step.rule);
    std::optional<Definition> next =
        rewrite::applyAt(current, rule, step.position, step.arguments, context);
    if (!next) {
      throw std::runtime_error(
          "--apply " + text + ": rule " + rule.name + " does not match at " +
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
      "0 for a lambda's body) as printed by --list. --search runs the rewrite-sequence search\n"
      "(rewrite/sequence_search.h) and lists every structure it reaches with its sequence.");
  command->add_option("FILE", options->file, "the program (.weft text format)")->required();
  command->add_option("--def", options->definition, "the definition NAME (default: the last)")
      ->type_name("NAME");
  command->add_flag("--list", options->list, "list every rule@position where a rule applies");
  command->add_option("--apply", options->applications, "apply NAME@POS[:factor=value,...]")
      ->type_name("RULE@POS");
  command->add_option("--strategy", options->strategy,
                      "apply a named strategy first (see weft rules), NAME[:factor=value,...]")
      ->type_name("NAME");
  command->add_flag("--search", options->search,
                    "search rewrite sequences: algorithmic rules, then lowering choices");
  command->add_flag("--print", options->printPrograms, "with --search: print each program");
  command->add_option("--depth", options->depth, "with --search: algorithmic steps (default 3)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--lowering-depth", options->loweringDepth,
                      "with --search: lowering steps after them (default 3)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--max-algorithmic", options->maxAlgorithmic,
                      "with --search: programs kept from the algorithmic level (default 24)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--max-lowerings", options->maxLowerings,
                      "with --search: lowered programs kept per algorithmic one (default 6)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--max-applications", options->maxApplications,
                      "with --search: rule applications the algorithmic level tries at most (default 5000000)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--seconds", options->seconds,
                      "with --search: the algorithmic level stops after this many seconds (default 30)")
      ->check(CLI::NonNegativeNumber);
  command->add_option("--vector-width", options->vectorWidths,
                      "with --search: vector widths the vectorising rules try (default 4)")
      ->check(CLI::IsMember({2, 3, 4, 8, 16}));
  command->add_option("--profile", options->profile,
                      "with --search: the options weft explore uses on this device profile "
                      "(vector widths, register blocks from its registers; see weft devices)")
      ->type_name("NAME");
  command->add_option("--size", options->sizes,
                      "with --search: NAME=VALUE, the sizes the intensity order ranks at "
                      "(others 256)")
      ->type_name("NAME=VALUE");
  command->add_option("--without", options->withoutHeuristics,
                      "with --search: switch a heuristic off (" +
                          rewrite::searchHeuristicNames() + ")")
      ->type_name("HEURISTIC");
  command->footer(
      "Example:\n"
      "  $ weft rewrite examples/dot.weft --list\n"
      "  $ weft rewrite examples/matmul.weft --apply map-to-mapglb@root:dim=1 "
      "--apply map-to-mapglb@0.0.0:dim=0\n"
      "  $ weft rewrite examples/dot.weft --search --depth 1");
  command->callback([options] { runRewrite(*options); });
}

}  // namespace weft::cli
