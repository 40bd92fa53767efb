// Pieces for the tests that write CompiledPrograms by hand to test host/program_runner.h
// without code generation: a buffer holding a value of a given type, kernel arguments (a
// buffer, a size variable) and a float array value.
//
// Header-only (tests/support has no library).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "codegen/compiled_program.h"
#include "ir/parser.h"
#include "ir/value.h"

namespace weft::testing {

inline Value floats(const std::vector<float>& values) {
  std::vector<Value> elements;
  for (float v : values) elements.push_back(Value::ofFloat(v));
  return Value::array(std::move(elements));
}

// A buffer holding a value of `type` (arrays of scalars or vectors, in the text format): int
// and bool are stored as int, the element count multiplies the lengths and vector widths out.
inline BufferPlan bufferOfType(std::string name, BufferPlan::Role role, const std::string& type,
                               int inputIndex = -1) {
  BufferPlan plan;
  plan.name = std::move(name);
  plan.role = role;
  plan.inputIndex = inputIndex;
  plan.type = parseType(type);
  Type element = plan.type;
  plan.elementCount = Arith(1);
  while (element.isArray()) {
    plan.elementCount = plan.elementCount * element.arrayLength();
    element = element.arrayElement();
  }
  if (element.isVector()) plan.elementCount = plan.elementCount * element.vectorWidth();
  plan.element = element.scalarKind() == ScalarKind::Float ? ScalarKind::Float : ScalarKind::Int;
  return plan;
}

inline KernelArg bufferArg(int index) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::Buffer;
  arg.buffer = index;
  return arg;
}

inline KernelArg sizeArg(const std::string& name) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::Size;
  arg.sizeName = name;
  return arg;
}

}  // namespace weft::testing
