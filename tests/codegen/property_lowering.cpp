// Properties of the default lowering (codegen/lowering.h) over random well-typed programs
// (tests/support/random_program.h), high-level ones and ones already holding low-level
// primitives:
//  - the lowered program type-checks to the same type and computes exactly the same value as
//    the original in the interpreter, for random sizes and inputs;
//  - no high-level reduce is left and no high-level map except maps that only rearrange data
//    (views), and lowering again changes nothing;
//  - from a high-level program, every mapGlb sits only inside mapGlbs of higher dimensions,
//    never inside a sequential map or reduction, and a mapGlb of dimension d > 0 holds one of
//    dimension d - 1 (the innermost parallel map is dimension 0);
//  - with low-level primitives present, the lowering adds no mapGlb nested in a mapGlb of the
//    same dimension (the count of such pairs is the original's).
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;
using weft::testing::RandomProgram;
using weft::testing::RandomProgramGenerator;
using weft::testing::RandomProgramOptions;

namespace {

// Whether `e` computes nothing (the rule of codegen/lowering.cpp and codegen/gen_support.cpp).
bool isView(const Expr& e) {
  if (!e.isPrim()) return true;
  const Op op = e.primOp();
  const PrimCategory category = e.primInfo().category;
  bool layoutLike = category == PrimCategory::Layout || category == PrimCategory::Tuple ||
                    op == Op::Id || op == Op::Fill ||
                    (op == Op::Map && e.funs()[0].isLambda() && isView(e.funs()[0].body()));
  if (!layoutLike) return false;
  for (const Expr& arg : e.args()) {
    if (!isView(arg)) return false;
  }
  return true;
}

bool isViewMap(const Expr& e) {
  return e.isPrim(Op::Map) && e.funs()[0].isLambda() && isView(e.funs()[0].body());
}

bool isMapOp(Op op) {
  return op == Op::Map || op == Op::MapGlb || op == Op::MapWrg || op == Op::MapLcl ||
         op == Op::MapSeq || op == Op::MapSeqUnroll;
}

bool isLoopOp(Op op) {
  return isMapOp(op) || op == Op::Reduce || op == Op::ReduceSeq || op == Op::ReduceSeqUnroll;
}

int64_t glbDimension(const Expr& e) { return *e.nats()[0].constant(); }

// Pairs (outer mapGlb(d), mapGlb(d) inside its function).
int sameDimensionNests(const Expr& e) {
  int count = 0;
  forEachNode(e, [&](const Expr& outer) {
    if (!outer.isPrim(Op::MapGlb)) return;
    forEachNode(outer.funs()[0], [&](const Expr& inner) {
      if (inner.isPrim(Op::MapGlb) && glbDimension(inner) == glbDimension(outer)) ++count;
    });
  });
  return count;
}

// Checks the nest structure of a lowered high-level program; returns "" or what is wrong.
// `enclosing` lists the loops whose functions hold `e`, outermost first.
std::string checkNests(const Expr& e, std::vector<Expr>& enclosing) {
  if (e.isLambda()) return checkNests(e.body(), enclosing);
  if (!e.isPrim()) return "";
  const Op op = e.primOp();
  if ((op == Op::Map && !isViewMap(e)) || op == Op::Reduce) {
    return "a high-level " + printExpr(e) + " is left";
  }
  if (op == Op::MapGlb) {
    int64_t d = glbDimension(e);
    if (d < 0 || d > 2) return "dimension out of range: " + printExpr(e);
    for (const Expr& outer : enclosing) {
      if (!outer.isPrim(Op::MapGlb)) return "mapGlb inside a sequential loop: " + printExpr(outer);
      if (glbDimension(outer) <= d)
        return "mapGlb(" + std::to_string(d) + ") inside mapGlb(" +
               std::to_string(glbDimension(outer)) + ")";
    }
    if (d > 0) {
      bool holdsNext = false;
      forEachNode(e.funs()[0], [&](const Expr& inner) {
        holdsNext = holdsNext || (inner.isPrim(Op::MapGlb) && glbDimension(inner) == d - 1);
      });
      if (!holdsNext)
        return "mapGlb(" + std::to_string(d) +
               ") holds no mapGlb of the next "
               "lower dimension: " +
               printExpr(e);
    }
  }
  for (const Expr& arg : e.args()) {
    std::string problem = checkNests(arg, enclosing);
    if (!problem.empty()) return problem;
  }
  if (isLoopOp(op)) enclosing.push_back(e);
  for (const Expr& f : e.funs()) {
    std::string problem = checkNests(f, enclosing);
    if (!problem.empty()) return problem;
  }
  if (isLoopOp(op)) enclosing.pop_back();
  return "";
}

// Runs original and lowered on random inputs; both fail alike or give equal values.
void checkSameValues(const RandomProgram& p, const Definition& low, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 2; ++trial) {
    ArithBinding sizes;
    for (const std::string& name : p.sizes) {
      sizes[name] = std::uniform_int_distribution<int64_t>(1, 4)(rng);
    }
    std::vector<Value> inputs;
    for (const Type& type : p.inputTypes) inputs.push_back(testing::randomValue(type, sizes, rng));
    std::string expectedError, gotError;
    Value expected, got;
    try {
      expected = interpret(p.definition, inputs, sizes);
    } catch (const InterpError& error) {
      expectedError = error.what();
    }
    try {
      got = interpret(low, inputs, sizes);
    } catch (const InterpError& error) {
      gotError = error.what();
    }
    RC_LOG() << "sizes:";
    for (const auto& [name, value] : sizes) RC_LOG() << " " << name << "=" << value;
    RC_LOG() << "\nexpected " << (expectedError.empty() ? expected.toString() : expectedError)
             << "\ngot      " << (gotError.empty() ? got.toString() : gotError) << "\n";
    RC_ASSERT(expectedError.empty() == gotError.empty());
    if (expectedError.empty()) RC_ASSERT(got == expected);
  }
}

void checkLowering(const RandomProgram& p, bool highLevel, uint64_t seed) {
  const Definition low = lowerDefault(p.definition);
  RC_LOG() << "original: " << printDefinition(p.definition)
           << "\nlowered:  " << printDefinition(low) << "\n";
  RC_ASSERT(typecheck(low).type == typecheck(p.definition).type);
  RC_ASSERT(lowerDefault(low).function == low.function);
  if (highLevel) {
    std::vector<Expr> enclosing;
    RC_ASSERT(checkNests(low.function, enclosing) == "");
  } else {
    RC_ASSERT(sameDimensionNests(low.function) == sameDimensionNests(p.definition.function));
    bool highLevelLeft = false;
    forEachNode(low.function, [&](const Expr& node) {
      highLevelLeft =
          highLevelLeft || (node.isPrim(Op::Map) && !isViewMap(node)) || node.isPrim(Op::Reduce);
    });
    RC_ASSERT(!highLevelLeft);
  }
  checkSameValues(p, low, seed);
}

}  // namespace

TEST_CASE("lowering high-level random programs keeps types and values, nests are well formed") {
  CHECK(rc::check("lowerDefault(p) == p in the interpreter", [](uint64_t seed) {
    RandomProgramOptions options;
    options.lowLevel = false;
    RandomProgramGenerator generator(seed, options);
    checkLowering(generator.program(), true, seed);
  }));
}

TEST_CASE("lowering random programs with low-level primitives keeps them and adds no bad nest") {
  CHECK(rc::check("lowerDefault(p) == p in the interpreter", [](uint64_t seed) {
    RandomProgramGenerator generator(seed);
    checkLowering(generator.program(), false, seed);
  }));
}

TEST_CASE("deep random programs (300 seeds): the lowering is faithful") {
  RandomProgramOptions options;
  options.lowLevel = false;
  options.maxDepth = 4;
  options.maxChain = 4;
  int parallelPrograms = 0, nestedPrograms = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    CAPTURE(seed);
    RandomProgram p = RandomProgramGenerator(seed, options).program();
    Definition low = lowerDefault(p.definition);
    bool parallel = false, nested = false;
    forEachNode(low.function, [&](const Expr& node) {
      parallel = parallel || node.isPrim(Op::MapGlb);
      nested = nested || (node.isPrim(Op::MapGlb) && glbDimension(node) > 0);
    });
    parallelPrograms += parallel ? 1 : 0;
    nestedPrograms += nested ? 1 : 0;
    std::vector<Expr> enclosing;
    CHECK(checkNests(low.function, enclosing) == "");
    std::mt19937_64 rng(seed);
    ArithBinding sizes;
    for (const std::string& name : p.sizes) sizes[name] = 3;
    std::vector<Value> inputs;
    for (const Type& type : p.inputTypes) inputs.push_back(testing::randomValue(type, sizes, rng));
    CHECK(interpret(low, inputs, sizes) == interpret(p.definition, inputs, sizes));
  }
  // Maps land where the top level writes its result often enough that many programs get
  // threads (27 and 6 of these 300 when written).
  MESSAGE(parallelPrograms << " programs with mapGlb, " << nestedPrograms << " with a nest");
  CHECK(parallelPrograms > 15);
  CHECK(nestedPrograms > 2);
}
