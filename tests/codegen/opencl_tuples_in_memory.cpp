// Tuples stored in memory as a structure of arrays (codegen/tuple_memory.h): small low-level
// programs that keep (a, b) pairs in private memory (scalars and a 2D private array read
// transposed), in local memory, in a global temporary written by one kernel and read by the
// next, in a reduction's tuple accumulator (whose components swap, so a component stored
// before the other is computed would be visible), a nested tuple ((a, b), c) and a lambda
// applied to tuple arguments (the map-reduce interchange's apply). Each is
// compiled with symbolic and with specialised sizes, run on the default OpenCL device and
// compared with the reference interpreter on random inputs. Then random high-level programs
// (tests/support/random_program.h, which zips and builds tuples), default-lowered: the only
// rejection left is a tuple result of the whole program or a tuple computed by a primitive
// the structure-of-arrays write does not take apart. Label opencl: skipped where no OpenCL
// platform exists.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/compile_pipeline.h"
#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

// Runs `text`'s last definition for each binding on OpenCL (symbolic and specialised sizes)
// and in the interpreter, on random inputs, and compares.
void checkProgram(const std::string& text, const std::vector<ArithBinding>& bindings,
                  const std::string& mustContain) {
  const Definition definition = parseProgram(text).definitions.back();
  CAPTURE(text);
  const CompiledProgram symbolic = generateOpenCL(definition);
  CAPTURE(symbolic.source);
  CHECK(symbolic.source.find(mustContain) != std::string::npos);
  std::mt19937_64 rng(11);
  for (const ArithBinding& binding : bindings) {
    std::vector<Value> inputs;
    for (const Expr& param : definition.function.params()) {
      inputs.push_back(testing::randomValue(param.paramType(), binding, rng, {true}));
    }
    const ArithBinding sizes = bindSizes(definition, inputs, binding);
    const Value expected = interpret(definition, inputs, sizes);
    host::RunResult run = host::runProgram(context(), symbolic, inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(run.output, expected, 1e-5, 1e-5),
                  "symbolic: " << run.output.toString() << " vs " << expected.toString());
    CodegenOptions specialised;
    specialised.specialize = sizes;
    const CompiledProgram fixed = generateOpenCL(definition, specialised);
    CAPTURE(fixed.source);
    host::RunResult fixedRun = host::runProgram(context(), fixed, inputs, sizes);
    CHECK_MESSAGE(approximatelyEqual(fixedRun.output, expected, 1e-5, 1e-5),
                  "specialised: " << fixedRun.output.toString() << " vs " << expected.toString());
  }
}

const std::vector<ArithBinding> kSizes = {{{"N", 1}}, {{"N", 5}}, {{"N", 64}}};

}  // namespace

TEST_CASE("a pair in private scalars") {
  checkProgram(R"(def p1(a: [float]N, b: [float]N): [float]N =
  mapGlb(0, x -> let(t -> t._0 - t._1, toPrivate(y -> (y._0 + y._1, y._0 * y._1), x)), zip(a, b)))", kSizes, "float p");
}

TEST_CASE("a 2D private array of pairs, read transposed") {
  checkProgram(R"(def p2(a: [[float]4]N, b: [[float]4]N): [[float]4]N =
  mapGlb(0, r -> join(let(t -> mapSeq(row -> mapSeq(p -> p._0 * p._1, row), transpose(t)),
                     toPrivate(q -> mapSeq(h -> mapSeq(y -> (y._0 + 1.0f, y._0 - y._1), h), split(2, zip(q._0, q._1))), r))),
         zip(a, b)))", kSizes, "float p");
}

TEST_CASE("an array of pairs in local memory") {
  checkProgram(R"(def p3(a: [[float]8]N, b: [[float]8]N): [[float]8]N =
  mapWrg(0, r -> let(t -> mapLcl(0, p -> p._0 - p._1, t),
                     toLocal(q -> mapLcl(0, y -> (y._0 + y._1, y._0 * y._1), q), zip(r._0, r._1))),
         zip(a, b)))", kSizes, "local float");
}

TEST_CASE("an array of pairs in global temporaries written by one kernel, read by the next") {
  checkProgram(R"(def p4(a: [float]N, b: [float]N): [float]N =
  mapGlb(0, p -> p._0 * p._1, toGlobal(z -> mapGlb(0, y -> (y._0 + y._1, y._0 - y._1), z), zip(a, b))))", kSizes, "weft_p4_k1");
}

TEST_CASE("a reduction with a pair accumulator whose components swap") {
  checkProgram(R"(def p5(a: [float]N): [float]1 =
  mapSeq(t -> t._0 - t._1, reduceSeq(toPrivate(z -> id(z), (0.0f, 1.0f)), (acc, x) -> (acc._1 + x, acc._0 * 0.5f), a)))", kSizes, "for (");
}

TEST_CASE("a nested tuple in private memory") {
  checkProgram(R"(def p6(a: [float]N, b: [float]N): [float]N =
  mapGlb(0, x -> let(t -> t._0._0 - t._0._1 * t._1, toPrivate(y -> ((y._0 + y._1, y._0 * y._1), y._1 - 2.0f), x)), zip(a, b)))", kSizes, "float p");
}

TEST_CASE("a lambda applied to tuple arguments binds them as views") {
  // The map-reduce interchange leaves apply((acc, p) -> ..., pair._0, pair._1) with p a pair:
  // a tuple has no one C value, so the parameter is the argument's view.
  checkProgram(R"(def p7(a: [float]N, b: [float]N, c: [float]N): [float]N =
  mapGlb(0, pair -> apply((acc, p) -> acc + p._0 * p._1, pair._0, pair._1), zip(c, zip(a, b))))",
               kSizes, " * ");
  checkProgram(R"(def p8(a: [float]N, b: [float]N): [float]N =
  mapGlb(0, x -> apply(p -> p._0 - 2.0f * p._1, (x._0 + x._1, x._1)), zip(a, b)))",
               kSizes, "2.0f");
  checkProgram(R"(def p9(x: [float]N, k: [float]3): [float]N =
  join(transpose(reduceSeq(mapSeq(z -> 0.0f, x), (accs, column) -> mapSeq(
    pair -> apply((acc, p) -> acc + p._0 * p._1, pair._0, pair._1), zip(accs, column)),
    transpose(mapSeq(w -> zip(w, k), slide(3, 1, pad(1, 1, clamp, x))))))))",
               kSizes, "for (");
}

TEST_CASE("an unsupported tuple store is a clear error") {
  // A tuple as the whole program's result has no buffer layout for the host yet.
  const Definition d = parseProgram(R"(def q(a: [float]N): [(float, float)]N =
  mapGlb(0, x -> (x, x + 1.0f), a))").definitions.back();
  CHECK_THROWS_WITH_AS(generateOpenCL(d), doctest::Contains("tuples cannot be stored in memory"),
                       CodegenError);
}

TEST_CASE("random high-level programs with tuples run on OpenCL as in the interpreter") {
  int ran = 0, rejected = 0;
  for (uint64_t seed = 5000; seed < 5150; ++seed) {
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
    std::vector<Value> inputs;
    for (const Type& type : p.inputTypes) {
      inputs.push_back(testing::randomValue(type, sizes, rng, {true}));
    }
    CompiledProgram compiled;
    try {
      compiled = compileToOpenCL(p.definition);
    } catch (const CodegenError& error) {
      std::string message = error.what();
      CAPTURE(message);
      CHECK(message.find("tuples cannot be stored in memory") != std::string::npos);
      ++rejected;
      continue;
    }
    CAPTURE(compiled.source);
    const Value expected = interpret(p.definition, inputs, sizes);
    host::RunResult run = host::runProgram(context(), compiled, inputs, sizes);
    CHECK(approximatelyEqual(run.output, expected, 1e-4, 1e-4));
    ++ran;
  }
  MESSAGE(ran << " programs ran, " << rejected << " rejected (tuples in memory)");
  CHECK(ran > 100);
}
