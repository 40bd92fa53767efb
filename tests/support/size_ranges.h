// Test helpers for size declarations (`def conv[P >= 0](...)`): Arith variables compare by
// name only, so two definitions whose variables differ in range compare equal as expressions.
// These helpers spell the ranges out as text so tests can compare them: the declarations of a
// definition, and every variable occurrence in its types, size arguments and strides, so that
// a test can check that each use of a declared name carries the declared range (the
// occurrences come from variableOccurrences in ir/expr.h).
//
// Header-only (tests/support has no library).
#pragma once

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
