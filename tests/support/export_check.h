// What the tests of the exported C files (export/dropin_export.h, export/bundle_export.h) share:
// the pieces of the hand-built compiled programs they export (a kernel of three buffers, a
// kernel with a size argument, local memory and a local size), finding one exported file by
// name, and running a compiler in a shell with its output kept in a log file.
//
// Header-only (tests/support has no library); needs doctest for FAIL.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "export/dropin_export.h"
#include "ir/arith.h"

namespace weft::testing {

// A buffer argument; `written`: the kernel writes it (KernelArg::written), else only reads it.
inline KernelArg bufferArgument(int buffer, bool written = false) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::Buffer;
  arg.buffer = buffer;
  arg.written = written;
  return arg;
}

inline KernelArg sizeArgument(const std::string& name) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::Size;
  arg.sizeName = name;
  return arg;
}

inline KernelArg localBufferArgument(const Arith& bytes) {
  KernelArg arg;
  arg.kind = KernelArg::Kind::LocalBuffer;
  arg.localBytes = bytes;
  return arg;
}

// A 1D kernel over n work-items without a local size whose arguments are three buffers (two
// read, the last written), e.g. out[i] = a[i] + b[i].
inline KernelPlan threeBufferKernel(const std::string& name, int first, int second, int output,
                                    const Arith& n) {
  KernelPlan kernel;
  kernel.name = name;
  kernel.args = {bufferArgument(first), bufferArgument(second), bufferArgument(output, true)};
  kernel.dimensions = 1;
  kernel.globalSize = {n, Arith(1), Arith(1)};
  return kernel;
}

// "add": out = a + b over n floats, one kernel r0 (threeBufferKernel) with the given source.
inline CompiledProgram addProgram(int64_t length, const std::string& source) {
  const Arith n(length);
  const Type vector = Type::array(Type::floatType(), n);
  CompiledProgram program;
  program.definitionName = "add";
  program.source = source;
  program.buffers = {{"in_a", BufferPlan::Role::Input, 0, ScalarKind::Float, n, vector},
                     {"in_b", BufferPlan::Role::Input, 1, ScalarKind::Float, n, vector},
                     {"out", BufferPlan::Role::Output, -1, ScalarKind::Float, n, vector}};
  program.outputBuffer = 2;
  program.outputType = vector;
  program.kernels = {threeBufferKernel("r0", 0, 1, 2, n)};
  return program;
}

// k0(global const float* in, global float* tmp, int n, local float* scratch) over n work-items
// in work-groups of L: the buffers `input` (read) and `temporary` (written), the size N and
// 4 * L bytes of local memory.
inline KernelPlan localMemoryKernel(int input, int temporary, const Arith& n) {
  KernelPlan kernel;
  kernel.name = "k0";
  kernel.args = {bufferArgument(input), bufferArgument(temporary, true), sizeArgument("N"),
                 localBufferArgument(Arith(4) * Arith::size("L"))};
  kernel.dimensions = 1;
  kernel.globalSize = {n, Arith(1), Arith(1)};
  kernel.hasLocalSize = true;
  kernel.localSize = {Arith::size("L"), Arith(1), Arith(1)};
  return kernel;
}

// The contents of the exported file `name`; fails the test (`what` names the kind of file in
// the message) when there is none.
inline std::string exportedFile(const std::vector<exporting::DropinFile>& files,
                                const std::string& name, const std::string& what) {
  for (const exporting::DropinFile& file : files) {
    if (file.name == name) return file.contents;
  }
  FAIL("no " << what << " " << name);
  return "";
}

// Runs a shell command, returning its exit status; its output goes to `log`.
inline int runLogged(const std::string& command, const std::filesystem::path& log) {
  int status = std::system((command + " > '" + log.string() + "' 2>&1").c_str());
  return status == -1 ? -1 : WEXITSTATUS(status);
}

inline bool haveCompiler(const std::string& name) {
  return std::system(("command -v " + name + " > /dev/null 2>&1").c_str()) == 0;
}

}  // namespace weft::testing
