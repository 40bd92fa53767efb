// Random high-level programs (tests/support/random_program.h), compiled (default lowering) to
// OpenCL and run on the default device must compute what the interpreter computes, within
// 1e-4 absolute + 1e-4 relative, for random sizes and inputs. The only programs code
// generation may reject are those that would store a tuple in memory (a zip or tuple result
// that is not consumed element by element), which OpenCL buffers of scalars cannot hold; any
// other rejection, build failure or wrong value is a failure that prints the program, the
// sizes and the generated source. Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

struct Tally {
  int ran = 0;
  int rejected = 0;
};

void checkSeed(uint64_t seed, bool specialise, Tally& tally) {
  testing::RandomProgramOptions options;
  options.lowLevel = false;
  testing::RandomProgram p = testing::RandomProgramGenerator(seed, options).program();
  std::string program = printDefinition(p.definition);
  CAPTURE(seed);
  CAPTURE(program);

  std::mt19937_64 rng(seed);
  ArithBinding sizes;
  for (const std::string& name : p.sizes) {
    sizes[name] = std::uniform_int_distribution<int64_t>(1, 4)(rng);
  }
  std::string sizesText;
  for (const auto& [name, value] : sizes) sizesText += name + "=" + std::to_string(value) + " ";
  CAPTURE(sizesText);
  std::vector<Value> inputs;
  for (const Type& type : p.inputTypes) {
    inputs.push_back(testing::randomValue(type, sizes, rng, {true}));
  }

  CodegenOptions codegen;
  if (specialise) codegen.specialize = sizes;
  CompiledProgram compiled;
  try {
    compiled = compileToOpenCL(p.definition, codegen);
  } catch (const CodegenError& error) {
    std::string message = error.what();
    CAPTURE(message);
    CHECK(message.find("tuples cannot be stored in memory") != std::string::npos);
    ++tally.rejected;
    return;
  }
  CAPTURE(compiled.source);
  const Value expected = interpret(p.definition, inputs, sizes);
  host::RunResult run;
  try {
    run = host::runProgram(context(), compiled, inputs, sizes);
  } catch (const host::OpenCLError& error) {
    FAIL_CHECK("running the generated program failed: " << std::string(error.what()));
    return;
  }
  std::string got = run.output.toString(), want = expected.toString();
  CAPTURE(got);
  CAPTURE(want);
  CHECK(approximatelyEqual(run.output, expected, 1e-4, 1e-4));
  ++tally.ran;
}

}  // namespace

TEST_CASE("random programs with symbolic sizes run on OpenCL as in the interpreter") {
  Tally tally;
  for (uint64_t seed = 0; seed < 120; ++seed) checkSeed(seed, false, tally);
  MESSAGE(tally.ran << " programs ran, " << tally.rejected << " rejected (tuples in memory)");
  CHECK(tally.ran > 80);
}

TEST_CASE("random programs specialised to their sizes run on OpenCL as in the interpreter") {
  Tally tally;
  for (uint64_t seed = 1000; seed < 1060; ++seed) checkSeed(seed, true, tally);
  MESSAGE(tally.ran << " programs ran, " << tally.rejected << " rejected (tuples in memory)");
  CHECK(tally.ran > 40);
}
