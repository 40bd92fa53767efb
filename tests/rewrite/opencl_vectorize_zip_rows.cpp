// A stencil along rows vectorised by the vectorize-zip rule (rewrite/rules_algorithmic_2.cpp),
// generated and run on the default OpenCL device against the interpreter, sizes symbolic and
// specialised: the taps zip(crop(0, n - 1, row), ..) of a clamp-padded row as n overlapping
// vectors, the element function applied lane-wise (vectorize) as a user function's vectorised
// form, or as a lambda whose user function calls take their vectorised forms too, a literal
// argument broadcast. The middle taps' vectors are vloadN of the row; widths 4, 8 and 16.
// Rows the width does not divide, padded to whole vectors (vectorize-zip-padded): the same
// results, each whole vector stored by one vstoreN under the guard of its last lanes.
// Label opencl.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/program_runner.h"
#include "ir/parser.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "tests/support/opencl_program_check.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

host::Context& context() {
  static host::Context ctx(host::selectDevice(""));
  return ctx;
}

// The three-tap and five-tap row stencils, high level: one map over the rows of the image.
const char* kRowStencils = R"(
fun mean3(a: float, b: float, c: float): float = (a + b + c) / 3.0f
fun gauss5(a: float, b: float, c: float, d: float, e: float): float =
  (a + 4.0f * b + 6.0f * c + 4.0f * d + e) / 16.0f
fun weight(x: float, w: float): float = x * w

def mean3Rows(input: [[float]W]H): [[float]W]H =
  map(row -> let(p -> map(t -> mean3(t._0, t._1, t._2),
                          zip(crop(0, 2, p), crop(1, 1, p), crop(2, 0, p))),
                 pad(1, 1, clamp, row)),
      input)

def gauss5Rows(input: [[float]W]H): [[float]W]H =
  map(row -> let(p -> map(t -> weight(gauss5(t._0, t._1, t._2, t._3, t._4), 2.0f) - t._2,
                          zip(crop(0, 4, p), crop(1, 3, p), crop(2, 2, p), crop(3, 1, p),
                              crop(4, 0, p))),
                 pad(2, 2, clamp, row)),
      input)
)";

Definition named(const std::string& name) {
  for (const Definition& d : parseProgram(kRowStencils, "row_stencils.weft").definitions) {
    if (d.name == name) return d;
  }
  FAIL("no definition " << name);
  return {};
}

// `rule` with `arguments` at the first position (pre-order) where it applies.
Definition applyFirst(const Definition& d, const std::string& rule,
                      const rewrite::RuleArguments& arguments) {
  rewrite::RewriteContext context;
  for (const rewrite::Position& position : rewrite::allPositions(d.function.body())) {
    std::optional<Definition> next =
        rewrite::applyAt(d, *rewrite::findRule(rule), position, arguments, context);
    if (next) return *next;
  }
  FAIL(rule << " applies nowhere");
  return d;
}

// The row stencil vectorised with width v (by `rule`: vectorize-zip, or vectorize-zip-padded
// for rows v does not divide), the rows as work-items, the vectors' map sequential.
Definition vectorised(const std::string& name, int v, const std::string& rule = "vectorize-zip") {
  Definition d = applyFirst(named(name), rule, {{"v", Arith(v)}});
  d = applyFirst(d, "map-to-mapglb", {{"dim", Arith(0)}});
  return applyFirst(d, "map-to-mapseq", {});
}

}  // namespace

TEST_CASE("a row stencil's taps as overlapping vectors equal the interpreter") {
  for (const std::string name : {"mean3Rows", "gauss5Rows"}) {
    for (int v : {4, 8, 16}) {
      CAPTURE(name);
      CAPTURE(v);
      const Definition program = vectorised(name, v);
      std::mt19937_64 rng(7);
      const ArithBinding sizes = {{"W", 4 * v}, {"H", 3}};
      std::vector<Value> inputs;
      for (const Expr& param : program.function.params()) {
        inputs.push_back(testing::randomValue(param.paramType(), sizes, rng, {true}));
      }
      const Value expected = interpret(named(name), inputs, sizes);
      const std::vector<std::string> sources = testing::checkSymbolicAndSpecialised(
          context(), program, inputs, sizes, expected, 1e-5);
      for (const std::string& source : sources) {
        // The user function in its vectorised form, the middle tap read as one vector.
        const std::string suffix = "_v" + std::to_string(v);
        CHECK(source.find((name == "mean3Rows" ? "uf_mean3" : "uf_gauss5") + suffix + "(") !=
              std::string::npos);
        CHECK(source.find("vload" + std::to_string(v) + "(") != std::string::npos);
      }
    }
  }
}

TEST_CASE("rows the width does not divide, padded to whole vectors, equal the interpreter") {
  for (const std::string name : {"mean3Rows", "gauss5Rows"}) {
    for (int v : {4, 16}) {
      for (int extra : {1, v - 1}) {
        CAPTURE(name);
        CAPTURE(v);
        CAPTURE(extra);
        const Definition program = vectorised(name, v, "vectorize-zip-padded");
        std::mt19937_64 rng(11);
        const ArithBinding sizes = {{"W", 3 * v + extra}, {"H", 3}};
        std::vector<Value> inputs;
        for (const Expr& param : program.function.params()) {
          inputs.push_back(testing::randomValue(param.paramType(), sizes, rng, {true}));
        }
        const Value expected = interpret(named(name), inputs, sizes);
        const std::vector<std::string> sources =
            testing::checkSymbolicAndSpecialised(context(), program, inputs, sizes, expected, 1e-5);
        for (const std::string& source : sources) {
          // Whole vectors stored at once; the last one's lanes one by one, under guards.
          CHECK(source.find("vstore" + std::to_string(v) + "(") != std::string::npos);
          CHECK(source.find("} else {") != std::string::npos);
        }
      }
    }
  }
}
