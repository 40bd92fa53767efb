// Queries over a compiled program (codegen/compiled_program.h): the global memory its buffers
// take under a size binding, and a readable summary of kernels, launch sizes and buffers for
// `weft compile` and error reports.
#include "codegen/compiled_program.h"

#include <sstream>

namespace weft {

namespace {

std::string sizeText(const Arith& size, const ArithBinding& sizes) {
  if (auto value = tryEvaluate(size, sizes)) {
    if (size.isConstant()) return std::to_string(*value);
    return size.toString() + " = " + std::to_string(*value);
  }
  return size.toString();
}

const char* roleName(BufferPlan::Role role) {
  switch (role) {
    case BufferPlan::Role::Input: return "input";
    case BufferPlan::Role::Output: return "output";
    case BufferPlan::Role::Temporary: return "temporary";
  }
  return "?";
}

}  // namespace

int64_t CompiledProgram::globalBytes(const ArithBinding& sizes) const {
  int64_t total = 0;
  for (const BufferPlan& buffer : buffers) total += evaluate(buffer.elementCount, sizes) * 4;
  return total;
}

std::string CompiledProgram::describe(const ArithBinding& sizes) const {
  std::ostringstream out;
  out << "kernels (in launch order):\n";
  for (const KernelPlan& kernel : kernels) {
    out << "  " << kernel.name << ": global ";
    for (int d = 0; d < kernel.dimensions; ++d) {
      out << (d ? " x " : "") << sizeText(kernel.globalSize[d], sizes);
    }
    out << ", local ";
    if (!kernel.hasLocalSize) {
      out << "chosen by the OpenCL implementation";
    } else {
      for (int d = 0; d < kernel.dimensions; ++d) {
        out << (d ? " x " : "") << sizeText(kernel.localSize[d], sizes);
      }
    }
    out << ", about " << kernel.privateScalars << " private values per work-item\n";
  }
  out << "buffers (" << sizeof(float) << "-byte elements):\n";
  for (const BufferPlan& buffer : buffers) {
    out << "  " << buffer.name << " (" << roleName(buffer.role) << ", "
        << scalarKindName(buffer.element) << "): " << sizeText(buffer.elementCount, sizes)
        << " elements\n";
  }
  return out.str();
}

}  // namespace weft
