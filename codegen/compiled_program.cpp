// Queries over a compiled program (codegen/compiled_program.h): which kernels are preparation
// for constant inputs, the global memory its buffers take under a size binding (all of them, or
// those that stay allocated at inference time once prepared), and a readable summary of
// kernels, launch sizes and buffers for `weft compile` and error reports.
#include "codegen/compiled_program.h"

#include <algorithm>

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

std::vector<bool> CompiledProgram::preparationKernels(const std::set<int>& inputIndices) const {
  std::vector<bool> preparation(kernels.size(), false);
  // Fixpoint: start from "every kernel is preparation" and drop kernels until stable. A kernel
  // stays when every buffer it reads (any buffer argument; a written one may be read too) is a
  // chosen input or a temporary written only by kept kernels, and it does not write the output
  // or any other input.
  std::fill(preparation.begin(), preparation.end(), true);
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> writtenOnlyByKept(buffers.size(), true), writtenAtAll(buffers.size(), false);
    for (size_t k = 0; k < kernels.size(); ++k) {
      for (const KernelArg& arg : kernels[k].args) {
        if (arg.kind != KernelArg::Kind::Buffer || !arg.written) continue;
        writtenAtAll[arg.buffer] = true;
        if (!preparation[k]) writtenOnlyByKept[arg.buffer] = false;
      }
    }
    for (size_t k = 0; k < kernels.size(); ++k) {
      if (!preparation[k]) continue;
      bool keep = true;
      for (const KernelArg& arg : kernels[k].args) {
        if (arg.kind != KernelArg::Kind::Buffer) continue;
        const BufferPlan& buffer = buffers[arg.buffer];
        if (buffer.role == BufferPlan::Role::Output) keep = false;
        if (buffer.role == BufferPlan::Role::Input) {
          if (arg.written || inputIndices.count(buffer.inputIndex) == 0) keep = false;
        } else if (!arg.written && !(writtenAtAll[arg.buffer] && writtenOnlyByKept[arg.buffer])) {
          keep = false;
        } else if (arg.written && !writtenOnlyByKept[arg.buffer]) {
          keep = false;
        }
      }
      if (!keep) {
        preparation[k] = false;
        changed = true;
      }
    }
  }
  return preparation;
}

int64_t CompiledProgram::globalBytes(const ArithBinding& sizes) const {
  int64_t total = 0;
  for (const BufferPlan& buffer : buffers) total += evaluate(buffer.elementCount, sizes) * 4;
  return total;
}

std::vector<bool> CompiledProgram::inferenceBuffers(const std::set<int>& constantInputs) const {
  std::vector<bool> kept(buffers.size(), true);
  if (constantInputs.empty()) return kept;
  const std::vector<bool> preparation = preparationKernels(constantInputs);
  std::vector<bool> takenByInference(buffers.size(), false);
  for (size_t k = 0; k < kernels.size(); ++k) {
    if (preparation[k]) continue;
    for (const KernelArg& arg : kernels[k].args) {
      if (arg.kind == KernelArg::Kind::Buffer) takenByInference[arg.buffer] = true;
    }
  }
  for (size_t b = 0; b < buffers.size(); ++b) {
    const BufferPlan& buffer = buffers[b];
    if (buffer.role == BufferPlan::Role::Input && constantInputs.count(buffer.inputIndex) &&
        !takenByInference[b]) {
      kept[b] = false;
    }
  }
  return kept;
}

int64_t CompiledProgram::inferenceBytes(const ArithBinding& sizes,
                                        const std::set<int>& constantInputs) const {
  const std::vector<bool> kept = inferenceBuffers(constantInputs);
  int64_t total = 0;
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (kept[b]) total += evaluate(buffers[b].elementCount, sizes) * 4;
  }
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
