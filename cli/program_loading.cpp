#include "cli/program_loading.h"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "ir/type.h"

namespace weft::cli {

const Definition& chooseFunctionDefinition(const Program& program, const std::string& file,
                                           const std::string& name, const std::string& verb) {
  if (program.definitions.empty()) {
    throw std::runtime_error(file + ": no definition to " + verb + " (the file has no `def`)");
  }
  const Definition* chosen = name.empty() ? &program.definitions.back() : nullptr;
  if (!chosen) {
    for (const Definition& definition : program.definitions) {
      if (definition.name != name) continue;
      if (chosen) {
        throw std::runtime_error(file + ": definition '" + name +
                                 "' is ambiguous (defined more than once)");
      }
      chosen = &definition;
    }
  }
  if (!chosen) {
    std::string names;
    for (const Definition& d : program.definitions) names += (names.empty() ? "" : ", ") + d.name;
    throw std::runtime_error(file + ": no definition named '" + name +
                             "'; the file defines: " + names);
  }
  if (chosen->function.isNull() || !chosen->function.isLambda()) {
    throw std::runtime_error(file + ": definition '" + chosen->name + "' is not a function");
  }
  return *chosen;
}

std::set<std::string> mentionedSizeNames(const Definition& definition) {
  std::set<std::string> names;
  auto addType = [&](const Type& type) {
    if (type.isNull()) return;
    for (const Arith& variable : typeVars(type)) names.insert(variable.varName());
  };
  auto addArith = [&](const Arith& arith) {
    for (const Arith& variable : arith.vars()) names.insert(variable.varName());
  };
  forEachNode(definition.function, [&](const Expr& node) {
    if (node.isParam()) addType(node.paramType());
    if (node.isPrim()) {
      for (const Arith& nat : node.nats()) addArith(nat);
      if (node.primInfo().hasIndexFunction()) addArith(node.attribute().stride);
    }
  });
  return names;
}

std::optional<std::pair<std::string, int64_t>> parseNameEqualsInteger(const std::string& text) {
  const size_t equals = text.find('=');
  if (equals == std::string::npos) return std::nullopt;
  std::string name = text.substr(0, equals);
  const std::string number = text.substr(equals + 1);
  size_t used = 0;
  int64_t value = 0;
  try {
    value = std::stoll(number, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (name.empty() || number.empty() || used != number.size()) return std::nullopt;
  return std::make_pair(std::move(name), value);
}

ArithBinding parseSizeOptions(const std::vector<std::string>& options, const Definition& definition,
                              const std::set<std::string>& known) {
  ArithBinding sizes;
  for (const std::string& text : options) {
    const std::optional<std::pair<std::string, int64_t>> item = parseNameEqualsInteger(text);
    if (!item) {
      throw std::runtime_error("--size " + text + ": expected NAME=INTEGER, e.g. --size N=4");
    }
    const auto& [name, value] = *item;
    if (!known.count(name)) {
      std::string list;
      for (const std::string& variable : known) list += (list.empty() ? "" : ", ") + variable;
      throw std::runtime_error("--size " + text + ": '" + definition.name +
                               "' has no size variable " + name +
                               (list.empty() ? " (it has none)" : " (it has: " + list + ")"));
    }
    sizes[name] = value;
  }
  return sizes;
}

void checkSizeValues(const Definition& definition, const ArithBinding& sizes) {
  for (const auto& [name, value] : sizes) {
    const Arith* declared = nullptr;
    for (const Arith& d : definition.sizeDeclarations) {
      if (d.varName() == name) declared = &d;
    }
    const int64_t lo = declared ? declared->varLo().constant().value_or(1) : 1;
    std::optional<int64_t> hi;
    if (declared && declared->varHi()) hi = declared->varHi()->constant();
    if (value >= lo && (!hi || value <= *hi)) continue;
    const std::string range = "[" + std::to_string(lo) + ", " +
                              (hi ? std::to_string(*hi) + "]" : std::string("inf)"));
    throw std::runtime_error(
        "--size " + name + "=" + std::to_string(value) + ": size " + name + " of '" +
        definition.name + "' is outside its " + (declared ? "declared " : "") + "range " + range +
        (declared ? "" : "; sizes are at least 1 unless declared otherwise, e.g. def " +
                             definition.name + "[" + name + " >= 0](...)"));
  }
  // Each input's values (a product of its lengths, in double: huge sizes must not overflow).
  constexpr double kIntIndexed = 2147483647.0;
  for (const Expr& param : definition.function.params()) {
    double values = 1;
    bool known = true;
    Type t = param.paramType();
    while (!t.isNull() && t.isArray()) {
      std::optional<int64_t> length = tryEvaluate(t.arrayLength(), sizes);
      if (!length) {
        known = false;
        break;
      }
      values *= static_cast<double>(*length);
      t = t.arrayElement();
    }
    if (known && !t.isNull() && t.isVector()) values *= static_cast<double>(t.vectorWidth());
    if (known && values > kIntIndexed) {
      char count[32];
      std::snprintf(count, sizeof count, "%.3g", values);
      throw std::runtime_error("--size: input '" + param.paramName() + "' of '" +
                               definition.name + "' would hold " + count +
                               " values; the kernels index with int (at most 2^31 - 1)");
    }
  }
}

}  // namespace weft::cli
