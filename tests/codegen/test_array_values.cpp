// Tests of array(e0, ..., en-1), the array of given values (a constant matrix is an array of
// arrays of literals): its type rule and errors, the interpreter, the text format's round trip
// (rows of literals packed on lines), and OpenCL generation: a constant index reads the value
// itself, an index known only at run time chooses among the values.
#include <doctest/doctest.h>

#include <string>

#include "codegen/codegen.h"
#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

const char* const kTransform = R"(
def f(x: [float]N) =
  join(map(a -> map(row -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, a)),
                    array(array(1.0f, 0.0f, -1.0f, 0.0f), array(0.0f, 1.0f, 1.0f, 0.0f),
                          array(0.0f, -1.0f, 1.0f, 0.0f), array(0.0f, 1.0f, 0.0f, -1.0f))),
           split(4, x)))
)";

}  // namespace

TEST_CASE("array: type, values, and errors") {
  const Definition d = parseProgram(kTransform, "t.weft").definitions.back();
  const TypedDefinition typed = typecheck(d);
  CHECK(typed.type.toString() == "[[float]1](4*(N/4))");
  const Value x =
      Value::array({Value::ofFloat(0), Value::ofFloat(1), Value::ofFloat(2), Value::ofFloat(3)});
  const Value y = interpret(d, {x}, {{"N", 4}});
  // Bᵀ of F(2, 3) times (0, 1, 2, 3).
  CHECK(y.toString() == "[[-2.0], [3.0], [1.0], [-2.0]]");

  CHECK_THROWS_WITH(
      typecheck(parseProgram("def g(x: [float]2) = array(1.0f, 2)", "g.weft").definitions.back()),
      doctest::Contains("the elements of an array must have one type"));
  CHECK_THROWS(parseProgram("def g(x: [float]2) = array()", "g.weft"));
}

TEST_CASE("array: printed rows of literals parse back to the same program") {
  std::string values;
  for (int i = 0; i < 36; ++i) values += (i ? ", " : "") + std::to_string(i) + ".5f";
  const Definition d =
      parseProgram("def h(x: [float]36) = map(p -> p._0 * p._1, zip(x, array(" + values + ")))",
                   "h.weft")
          .definitions.back();
  const std::string printed = printDefinition(d);
  CHECK(printed.find("array(0.5f, 1.5f, 2.5f") != std::string::npos);
  const Definition again = parseProgram(printed, "again.weft").definitions.back();
  CHECK(printDefinition(again) == printed);
}

TEST_CASE("array in OpenCL: literals at constant indices, a choice at run-time ones") {
  const Definition d = parseProgram(kTransform, "t.weft").definitions.back();
  CodegenOptions options;
  options.specialize = {{"N", 8}};
  // Default lowering: the row index is a work-item id, the column a loop counter.
  const std::string loops = generateOpenCL(lowerDefault(d), options).source;
  CHECK(loops.find("== 0 ? 1.0f :") != std::string::npos);
  // Unrolled, every index is a constant: the entries are literals and zero products vanish.
  const Definition unrolled = parseProgram(R"(
def f(x: [float]8) =
  join(mapGlb(0, a -> join(mapSeqUnroll(row -> reduceSeqUnroll(0.0f,
                                (acc, p) -> acc + p._0 * p._1, zip(row, a)),
                    array(array(1.0f, 0.0f, -1.0f, 0.0f), array(0.0f, 1.0f, 1.0f, 0.0f),
                          array(0.0f, -1.0f, 1.0f, 0.0f), array(0.0f, 1.0f, 0.0f, -1.0f)))),
           split(4, x)))
)",
                                           "u.weft")
                                  .definitions.back();
  const std::string text = generateOpenCL(unrolled, {}).source;
  CAPTURE(text);
  CHECK(text.find("? 1.0f") == std::string::npos);
  CHECK(text.find("0.0f *") == std::string::npos);
  CHECK(text.find("* 0.0f") == std::string::npos);
}
