// `weft check FILE [--def NAME] [--json]`: parses a program, type-checks its definitions and
// prints each definition's type with symbolic sizes, the constraints its sizes and tuning
// parameters must satisfy (with the primitive and source location that requires each), and
// the ranges of those variables. Parse and type errors propagate to cli/main.cpp, which prints
// them (with file:line:column) and exits with status 1.
#include <algorithm>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "ir/parser.h"
#include "typecheck/typecheck.h"

namespace weft::cli {

namespace {

struct CheckOptions {
  std::string file;
  std::string definition;
  bool json = false;
};

// The variables a definition's types and constraints mention, sorted by name, each once.
std::vector<Arith> definitionVars(const Definition& definition, const TypedDefinition& typed) {
  std::vector<Arith> vars;
  std::set<std::string> seen;
  auto add = [&](const std::vector<Arith>& more) {
    for (const Arith& v : more) {
      if (seen.insert(v.varName()).second) vars.push_back(v);
    }
  };
  for (const Expr& param : definition.function.params()) add(typeVars(param.paramType()));
  add(typeVars(typed.type));
  for (const Constraint& constraint : typed.constraints) add(constraint.vars());
  std::sort(vars.begin(), vars.end(),
            [](const Arith& a, const Arith& b) { return a.varName() < b.varName(); });
  return vars;
}

std::string rangeText(const Arith& var) {
  const std::optional<Arith>& hi = var.varHi();
  return "[" + var.varLo().toString() + ", " + (hi ? hi->toString() + "]" : "inf)");
}

std::string signatureText(const Definition& definition, const TypedDefinition& typed) {
  std::string text = "def " + definition.name + ": (";
  const auto& params = definition.function.params();
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) text += ", ";
    text += params[i].paramName() + ": " + params[i].paramType().toString();
  }
  return text + ") -> " + typed.type.toString();
}

std::string originText(const Constraint& constraint) {
  std::string text = constraint.origin.empty() ? "program" : constraint.origin;
  if (constraint.loc.known()) text += " at " + constraint.loc.toString();
  return text;
}

void printText(std::ostream& out, const Definition& definition, const TypedDefinition& typed) {
  out << signatureText(definition, typed) << "\n";
  if (typed.constraints.empty()) {
    out << "  constraints: none\n";
  } else {
    out << "  constraints:\n";
    size_t width = 0;
    for (const Constraint& c : typed.constraints) width = std::max(width, c.formula().size());
    for (const Constraint& c : typed.constraints) {
      std::string formula = c.formula();
      out << "    " << formula << std::string(width - formula.size() + 4, ' ') << "["
          << originText(c) << "]\n";
    }
  }
  std::vector<Arith> vars = definitionVars(definition, typed);
  if (vars.empty()) {
    out << "  variables: none\n";
  } else {
    out << "  variables:\n";
    for (const Arith& v : vars) {
      out << "    " << v.varName() << ": " << varKindName(v.varKind()) << " in " << rangeText(v)
          << "\n";
    }
  }
}

nlohmann::json toJson(const Definition& definition, const TypedDefinition& typed) {
  nlohmann::json params = nlohmann::json::array();
  for (const Expr& param : definition.function.params()) {
    params.push_back({{"name", param.paramName()}, {"type", param.paramType().toString()}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const Constraint& c : typed.constraints) {
    const char* relation = "";
    switch (c.relation) {
      case Relation::Equal:
        relation = "equal";
        break;
      case Relation::LessEqual:
        relation = "less_equal";
        break;
      case Relation::Less:
        relation = "less";
        break;
      case Relation::Divides:
        relation = "divides";
        break;
    }
    nlohmann::json vars = nlohmann::json::array();
    for (const Arith& v : c.vars()) vars.push_back(v.varName());
    constraints.push_back(
        {{"relation", relation},
         {"lhs", c.lhs.toString()},
         {"rhs", c.rhs.toString()},
         {"formula", c.formula()},
         {"origin", c.origin},
         {"location", c.loc.known() ? nlohmann::json(c.loc.toString()) : nlohmann::json(nullptr)},
         {"reason", c.reason},
         {"description", c.describe()},
         {"variables", vars}});
  }
  nlohmann::json variables = nlohmann::json::array();
  for (const Arith& v : definitionVars(definition, typed)) {
    const std::optional<Arith>& hi = v.varHi();
    variables.push_back({{"name", v.varName()},
                         {"kind", varKindName(v.varKind())},
                         {"lo", v.varLo().toString()},
                         {"hi", hi ? nlohmann::json(hi->toString()) : nlohmann::json(nullptr)}});
  }
  return {{"name", definition.name},
          {"location", definition.loc.known() ? nlohmann::json(definition.loc.toString())
                                              : nlohmann::json(nullptr)},
          {"params", params},
          {"result", typed.type.toString()},
          {"constraints", constraints},
          {"variables", variables}};
}

void runCheck(const CheckOptions& options) {
  Program program = parseFile(options.file);
  std::vector<const Definition*> selected;
  std::vector<TypedDefinition> typed;
  if (options.definition.empty()) {
    typed = typecheckProgram(program);
    for (const Definition& d : program.definitions) selected.push_back(&d);
  } else {
    const Definition* definition = program.findDefinition(options.definition);
    if (!definition) {
      std::string names;
      for (const Definition& d : program.definitions) names += (names.empty() ? "" : ", ") + d.name;
      throw std::runtime_error(options.file + ": no definition named '" + options.definition + "'" +
                               (names.empty() ? " (the file has none)" : "; it defines " + names));
    }
    selected.push_back(definition);
    typed.push_back(typecheck(*definition));
  }

  if (options.json) {
    nlohmann::json definitions = nlohmann::json::array();
    for (size_t i = 0; i < selected.size(); ++i)
      definitions.push_back(toJson(*selected[i], typed[i]));
    nlohmann::json document = {{"file", options.file}, {"definitions", definitions}};
    std::cout << document.dump(2) << "\n";
    return;
  }
  for (size_t i = 0; i < selected.size(); ++i) {
    if (i > 0) std::cout << "\n";
    printText(std::cout, *selected[i], typed[i]);
  }
}

}  // namespace

void registerCheck(CLI::App& app) {
  auto options = std::make_shared<CheckOptions>();
  CLI::App* command = app.add_subcommand(
      "check",
      "Parse and type-check a program; print each definition's type with symbolic sizes, the\n"
      "constraints on its sizes and tuning parameters (with the primitive and location that\n"
      "requires each) and the ranges of its variables. Exits with status 1 and a message\n"
      "file:line:column: ... on a syntax or type error.");
  command->add_option("FILE", options->file, "the program (.weft text format)")->required();
  command->add_option("--def", options->definition, "check only the definition NAME")
      ->type_name("NAME");
  command->add_flag("--json", options->json, "print a JSON document instead of text");
  command->footer(
      "Example:\n"
      "  $ weft check examples/dot.weft\n"
      "  def dot: (a: [float]N, b: [float]N) -> [float]1\n"
      "    constraints: none\n"
      "    variables:\n"
      "      N: size in [1, inf)\n"
      "\n"
      "  A split by 4 of an input [float]N adds the constraint\n"
      "      N % 4 = 0    [split at prog.weft:3:7]");
  command->callback([options] { runCheck(*options); });
}

}  // namespace weft::cli
