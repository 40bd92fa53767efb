// A program generated twice, with its sizes symbolic (passed to the kernels) and specialised
// (literals in the kernel text), each run on an OpenCL device and compared with the value the
// interpreter computed, for the opencl tests of code generation; and a kernel's source without its
// barriers.
//
// Header-only (tests/support has no library); the including test links weft_host.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "host/program_runner.h"
#include "ir/expr.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/value.h"
#include "tests/support/random_values.h"

namespace weft::testing {

// `source` without its local-memory barriers (at least one must be there): the tests that show a
// missing barrier would be caught run such a copy of a kernel.
inline std::string withoutBarriers(std::string source) {
  const std::string barrier = "barrier(CLK_LOCAL_MEM_FENCE);";
  size_t removed = 0;
  for (size_t at = source.find(barrier); at != std::string::npos; at = source.find(barrier, at)) {
    source.erase(at, barrier.size());
    ++removed;
  }
  REQUIRE(removed > 0);
  return source;
}

// withoutBarriers(source), with every work-item filling each local array with a value no input
// produces before it stages its part. Run one work-item after another, as PoCL runs the code
// between barriers, a work-item then reads its neighbours' parts as that value, whatever an
// earlier run on the device left in local memory (which can be the right tile).
inline std::string withoutBarriersLocalPoisoned(const std::string& source) {
  std::string racy = withoutBarriers(source);
  static const std::regex localArray(R"(local float (\w+)\[(\d+)\];)");
  std::string poisoned;
  auto from = racy.cbegin();
  size_t arrays = 0;
  for (std::sregex_iterator it(racy.begin(), racy.end(), localArray), end; it != end; ++it) {
    const std::smatch& m = *it;
    poisoned.append(from, m[0].second);
    poisoned += " for (int poison = 0; poison < " + m[2].str() + "; ++poison) " + m[1].str() +
                "[poison] = 1.0e6f;";
    from = m[0].second;
    ++arrays;
  }
  poisoned.append(from, racy.cend());
  REQUIRE(arrays > 0);
  return poisoned;
}

// Runs `definition` on `inputs` at `sizes`, generated symbolic and specialised, checking each
// output against `expected` within `tolerance` (absolute and relative); `inspect`, when given,
// sees each compiled program before it runs. Returns the two sources (symbolic first).
inline std::vector<std::string> checkSymbolicAndSpecialised(
    host::Context& context, const Definition& definition, const std::vector<Value>& inputs,
    const ArithBinding& sizes, const Value& expected, double tolerance,
    const std::function<void(const CompiledProgram&)>& inspect = {}) {
  std::vector<std::string> sources;
  for (const bool specialise : {false, true}) {
    CAPTURE(specialise);
    CodegenOptions options;
    if (specialise) options.specialize = sizes;
    const CompiledProgram compiled = generateOpenCL(definition, options);
    CAPTURE(compiled.source);
    if (inspect) inspect(compiled);
    const host::RunResult run = host::runProgram(context, compiled, inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(run.output, expected, tolerance, tolerance),
                  "max difference " << maxAbsDifference(run.output, expected));
    sources.push_back(compiled.source);
  }
  return sources;
}

// The last definition of the program `text` run on real-valued random inputs (seed `seed`) at
// `sizes`, symbolic and specialised, against the interpreter (tolerance 1e-5); each compiled
// program must have `kernels` kernels. Returns the two sources (symbolic first).
inline std::vector<std::string> checkProgramTextAgainstInterpreter(
    host::Context& context, const std::string& text, const std::string& fileName,
    const ArithBinding& sizes, uint64_t seed, size_t kernels = 1) {
  const Definition definition = parseProgram(text, fileName).definitions.back();
  std::mt19937_64 rng(seed);
  std::vector<Value> inputs;
  for (const Expr& param : definition.function.params()) {
    inputs.push_back(randomValue(param.paramType(), sizes, rng, {true}));
  }
  const Value expected = interpret(definition, inputs, sizes);
  return checkSymbolicAndSpecialised(
      context, definition, inputs, sizes, expected, 1e-5,
      [kernels](const CompiledProgram& compiled) { CHECK(compiled.kernels.size() == kernels); });
}

// The same check of a program of one kernel, then that kernel's global size per dimension,
// specialised for `sizes` (a single work-item kernel has {"1"}).
inline std::vector<std::string> checkedKernelGlobalSize(host::Context& context,
                                                        const std::string& text,
                                                        const std::string& fileName,
                                                        const ArithBinding& sizes, uint64_t seed) {
  checkProgramTextAgainstInterpreter(context, text, fileName, sizes, seed);
  const Definition definition = parseProgram(text, fileName).definitions.back();
  const CompiledProgram compiled = compileToOpenCL(definition, sizes);
  REQUIRE(compiled.kernels.size() == 1);
  std::vector<std::string> global;
  for (int d = 0; d < compiled.kernels[0].dimensions; ++d) {
    global.push_back(compiled.kernels[0].globalSize[d].toString());
  }
  return global;
}

}  // namespace weft::testing
