// Queries over a compiled program (codegen/compiled_program.h): which kernels are preparation
// for constant inputs, the global memory its buffers take under a size binding (all of them, or
// those that stay allocated at inference time once prepared), and a readable summary of
// kernels, launch sizes and buffers for `weft compile` and error reports.
#include "codegen/compiled_program.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "ir/parser.h"

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

// Serialisation: every field is "<length>:<bytes>", numbers in decimal text.
class FieldWriter {
 public:
  void text(const std::string& value) {
    out_ += std::to_string(value.size());
    out_ += ':';
    out_ += value;
  }
  void number(int64_t value) { text(std::to_string(value)); }
  void arith(const Arith& value) { text(value.toString()); }
  void type(const Type& value) { text(value.toString()); }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

class FieldReader {
 public:
  explicit FieldReader(const std::string& bytes) : bytes_(bytes) {}
  std::string text() {
    const size_t colon = bytes_.find(':', position_);
    if (colon == std::string::npos || colon == position_ || colon - position_ > 19) {
      fail("a field length");
    }
    size_t length = 0;
    for (size_t i = position_; i < colon; ++i) {
      if (bytes_[i] < '0' || bytes_[i] > '9') fail("a field length");
      length = length * 10 + static_cast<size_t>(bytes_[i] - '0');
    }
    if (length > bytes_.size() - colon - 1) fail("a field of " + std::to_string(length) + " bytes");
    std::string value = bytes_.substr(colon + 1, length);
    position_ = colon + 1 + length;
    return value;
  }
  int64_t number() {
    const std::string value = text();
    size_t used = 0;
    int64_t parsed = 0;
    try {
      parsed = std::stoll(value, &used);
    } catch (const std::exception&) {
      fail("a number");
    }
    if (used != value.size()) fail("a number");
    return parsed;
  }
  // A count of following items: not negative, and no more than there are bytes left.
  size_t count() {
    const int64_t value = number();
    if (value < 0 || static_cast<uint64_t>(value) > bytes_.size() - position_) fail("a count");
    return static_cast<size_t>(value);
  }
  Arith arith() { return parseArith(text(), "<serialised program>"); }
  Type type() { return parseType(text(), "<serialised program>"); }
  void expectEnd() const {
    if (position_ != bytes_.size()) fail("the end of the program");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("serialised compiled program: expected " + what + " at byte " +
                             std::to_string(position_));
  }
  const std::string& bytes_;
  size_t position_ = 0;
};

template <typename Enum>
Enum enumFrom(int64_t value, int64_t last) {
  if (value < 0 || value > last) {
    throw std::runtime_error("serialised compiled program: enum value " + std::to_string(value) +
                             " out of range");
  }
  return static_cast<Enum>(value);
}

constexpr const char* kSerialisationTag = "weft-compiled-program-2";

}  // namespace

std::string serialiseCompiledProgram(const CompiledProgram& program) {
  FieldWriter out;
  out.text(kSerialisationTag);
  out.text(program.definitionName);
  out.text(program.source);
  out.number(static_cast<int64_t>(program.buffers.size()));
  for (const BufferPlan& buffer : program.buffers) {
    out.text(buffer.name);
    out.number(static_cast<int64_t>(buffer.role));
    out.number(buffer.inputIndex);
    out.number(static_cast<int64_t>(buffer.element));
    out.arith(buffer.elementCount);
    out.type(buffer.type);
  }
  out.number(static_cast<int64_t>(program.kernels.size()));
  for (const KernelPlan& kernel : program.kernels) {
    out.text(kernel.name);
    out.number(static_cast<int64_t>(kernel.args.size()));
    for (const KernelArg& arg : kernel.args) {
      out.number(static_cast<int64_t>(arg.kind));
      out.number(arg.buffer);
      out.number(arg.written ? 1 : 0);
      out.text(arg.sizeName);
      out.arith(arg.localBytes);
    }
    out.number(kernel.dimensions);
    for (const Arith& size : kernel.globalSize) out.arith(size);
    out.number(kernel.hasLocalSize ? 1 : 0);
    for (const Arith& size : kernel.localSize) out.arith(size);
    out.number(kernel.launchableInParts ? 1 : 0);
    out.number(kernel.privateScalars);
    out.arith(kernel.privateScalarsExpr);
  }
  out.number(program.outputBuffer);
  out.type(program.outputType);
  out.number(static_cast<int64_t>(program.openSizes.size()));
  for (const Arith& size : program.openSizes) out.arith(size);
  return out.take();
}

CompiledProgram deserialiseCompiledProgram(const std::string& bytes) {
  FieldReader in(bytes);
  if (in.text() != kSerialisationTag) {
    throw std::runtime_error("serialised compiled program: unknown format tag");
  }
  CompiledProgram program;
  program.definitionName = in.text();
  program.source = in.text();
  program.buffers.resize(in.count());
  for (BufferPlan& buffer : program.buffers) {
    buffer.name = in.text();
    buffer.role = enumFrom<BufferPlan::Role>(in.number(), 2);
    buffer.inputIndex = static_cast<int>(in.number());
    buffer.element = enumFrom<ScalarKind>(in.number(), 2);
    buffer.elementCount = in.arith();
    buffer.type = in.type();
  }
  program.kernels.resize(in.count());
  for (KernelPlan& kernel : program.kernels) {
    kernel.name = in.text();
    kernel.args.resize(in.count());
    for (KernelArg& arg : kernel.args) {
      arg.kind = enumFrom<KernelArg::Kind>(in.number(), 2);
      arg.buffer = static_cast<int>(in.number());
      arg.written = in.number() != 0;
      arg.sizeName = in.text();
      arg.localBytes = in.arith();
    }
    kernel.dimensions = static_cast<int>(in.number());
    for (Arith& size : kernel.globalSize) size = in.arith();
    kernel.hasLocalSize = in.number() != 0;
    for (Arith& size : kernel.localSize) size = in.arith();
    kernel.launchableInParts = in.number() != 0;
    kernel.privateScalars = in.number();
    kernel.privateScalarsExpr = in.arith();
  }
  program.outputBuffer = static_cast<int>(in.number());
  program.outputType = in.type();
  program.openSizes.resize(in.count());
  for (Arith& size : program.openSizes) size = in.arith();
  in.expectEnd();
  return program;
}

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
