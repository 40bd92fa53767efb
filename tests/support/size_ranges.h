// Test helpers for size declarations (`def conv[P >= 0](...)`): Arith variables compare by
// name only, so two definitions whose variables differ in range compare equal as expressions.
// These helpers spell the ranges out as text so tests can compare them: the declarations of a
// definition, and every variable occurrence in its types, size arguments and strides, so that
// a test can check that each use of a declared name carries the declared range.
//
// Header-only (tests/support has no library).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/type.h"

namespace weft::testing {

// "P in [0, inf)", "V in [1, 16]".
inline std::string describeRange(const Arith& variable) {
  std::string text = variable.varName() + " in [" + variable.varLo().toString() + ", ";
  return text + (variable.varHi() ? variable.varHi()->toString() + "]" : "inf)");
}

// The declarations in source order, joined by "; ".
inline std::string describeSizeDeclarations(const Definition& definition) {
  std::string text;
  for (const Arith& size : definition.sizeDeclarations) {
    text += (text.empty() ? "" : "; ") + describeRange(size);
  }
  return text;
}

// Every variable occurrence in the definition: param types (the definition's and lambdas'),
// the declared result type, size arguments and reorder strides. User functions are not
// entered: they are declared outside the definition, so its declarations do not reach them.
inline std::vector<Arith> variableOccurrences(const Definition& definition) {
  std::vector<Arith> found;
  auto addArith = [&](const Arith& arith) {
    for (const Arith& variable : arith.vars()) found.push_back(variable);
  };
  auto addType = [&](const Type& type) {
    if (!type.isNull()) {
      for (const Arith& variable : typeVars(type)) found.push_back(variable);
    }
  };
  std::function<void(const Expr&)> walk = [&](const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Param:
        addType(e.paramType());
        return;
      case ExprKind::Literal:
      case ExprKind::UserFun:
        return;
      case ExprKind::Lambda:
        for (const Expr& param : e.params()) addType(param.paramType());
        walk(e.body());
        return;
      case ExprKind::Prim:
        for (const Arith& nat : e.nats()) addArith(nat);
        if (e.primInfo().hasIndexFunction()) addArith(e.attribute().stride);
        for (const Expr& f : e.funs()) walk(f);
        for (const Expr& a : e.args()) walk(a);
        return;
    }
  };
  walk(definition.function);
  addType(definition.declaredType);
  return found;
}

// The distinct ranges of all variable occurrences, sorted, joined by "; " (a name with two
// different ranges appears twice).
inline std::string describeVariableRanges(const Definition& definition) {
  std::set<std::string> ranges;
  for (const Arith& variable : variableOccurrences(definition)) {
    ranges.insert(describeRange(variable));
  }
  std::string text;
  for (const std::string& range : ranges) text += (text.empty() ? "" : "; ") + range;
  return text;
}

// Empty when every occurrence of a declared name has the declared range, else the first
// occurrence that does not.
inline std::string undeclaredRangeUse(const Definition& definition) {
  for (const Arith& variable : variableOccurrences(definition)) {
    for (const Arith& declared : definition.sizeDeclarations) {
      if (declared.varName() == variable.varName() &&
          describeRange(declared) != describeRange(variable)) {
        return "declared " + describeRange(declared) + ", used as " + describeRange(variable);
      }
    }
  }
  return "";
}

}  // namespace weft::testing
