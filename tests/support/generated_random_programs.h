// The random programs of tests/support/random_program.h as code generation compiles them, for
// tests of properties every compiled program must have (its kernels' arguments, its
// serialisation): seeds 1..count, even seeds low-level as generated, odd seeds high-level and
// default-lowered. Programs code generation rejects (a tuple array as the result, ...) are
// skipped: other tests cover the rejections. The seed and the program are captured for doctest.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <exception>
#include <functional>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/printer.h"
#include "tests/support/random_program.h"

namespace weft::testing {

// Calls `check` on each generated program; returns how many there were.
inline int forEachGeneratedRandomProgram(uint64_t count,
                                         const std::function<void(const CompiledProgram&)>& check) {
  int generated = 0;
  for (uint64_t seed = 1; seed <= count; ++seed) {
    RandomProgramOptions options;
    options.lowLevel = seed % 2 == 0;
    const RandomProgram p = RandomProgramGenerator(seed, options).program();
    CAPTURE(seed);
    CAPTURE(printDefinition(p.definition));
    CompiledProgram compiled;
    try {
      CompilePipelineOptions passes;
      passes.lower = !options.lowLevel;  // a low-level program is generated as it is
      compiled = compileToOpenCL(p.definition, {}, passes);
    } catch (const std::exception&) {
      continue;
    }
    check(compiled);
    ++generated;
  }
  return generated;
}

}  // namespace weft::testing
