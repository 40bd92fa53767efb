// The default lowering (codegen/lowering.h): the examples lower to the expected low-level
// programs (golden one-line prints), hand-written cases pin each rule (which maps take which
// dimension, what stays sequential, what is left as it is, locations), and every lowered
// example type-checks to the original's type and computes the same values as the original in
// the interpreter on random inputs. Random programs are covered by property_lowering.cpp.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "codegen/lowering.h"
#include "ir/interp.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/conv_layer_text.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;

namespace {

// The one-line print of the lowered body of the only (last) definition of `text`, after
// checking that the lowered definition type-checks to the original's type.
std::string lowered(const std::string& text) {
  Program program = parseProgram(text, "case.weft");
  const Definition& original = program.definitions.back();
  Definition low = lowerDefault(original);
  CHECK(typecheck(low).type == typecheck(original).type);
  return printExpr(low.function.body());
}

const Definition& exampleDefinition(const Program& program) { return program.definitions.back(); }

}  // namespace

TEST_CASE("the examples lower to the expected low-level programs") {
  SUBCASE("dot: the top-level reduce becomes reduceSeq") {
    Program p = parseFile("examples/dot.weft");
    CHECK(printExpr(lowerDefault(exampleDefinition(p)).function.body()) ==
          "reduceSeq(0.0f, (acc, p) -> acc + mult(p._0, p._1), zip(a, b))");
  }
  SUBCASE("matmul: rows on dimension 1, columns (under join) on dimension 0") {
    Program p = parseFile("examples/matmul.weft");
    CHECK(printExpr(lowerDefault(exampleDefinition(p)).function.body()) ==
          "mapGlb(1, row -> join(mapGlb(0, col -> reduceSeq(0.0f, (acc, p) -> acc + p._0 * "
          "p._1, zip(row, col)), transpose(B))), A)");
  }
  SUBCASE("stencil2d: map2D on dimensions 1 and 0, the views of slide2D and pad2D kept") {
    // The maps inside slide2D and pad2D only rearrange data: they stay high-level maps, so the
    // printer still recognises the 2D forms.
    Program p = parseFile("examples/stencil2d.weft");
    CHECK(printExpr(lowerDefault(exampleDefinition(p)).function.body()) ==
          "mapGlb(1, row -> mapGlb(0, nbh -> reduceSeq(0.0f, (acc, p) -> acc + p._0 * p._1, "
          "zip(join(nbh), join(weights))), row), slide2D(3, 1, pad2D(1, clamp, input)))");
  }
  SUBCASE("conv: output rows, columns and kernels on dimensions 2, 1, 0") {
    Program p = parseFile("examples/conv.weft");
    CHECK(printExpr(lowerDefault(exampleDefinition(p)).function.body()) ==
          "transpose(map(rows -> transpose(rows), mapGlb(2, row -> mapGlb(1, window -> "
          "join(mapGlb(0, kernel -> reduceSeq(kernel._1, (acc, p) -> acc + p._0 * p._1, "
          "zip(join(join(window)), join(join(kernel._0)))), zip(weights, biases))), row), "
          "slide2D(K, S, pad2D(P, constant(0.0f), input)))))");
  }
}

TEST_CASE("a parallel nest takes dimensions from the outside in, innermost 0, at most three") {
  CHECK(lowered("def f(x: [float]N) = map(v -> v + 1.0f, x)") == "mapGlb(0, v -> v + 1.0f, x)");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> map(v -> v * 2.0f, r), x)") ==
        "mapGlb(1, r -> mapGlb(0, v -> v * 2.0f, r), x)");
  // Four levels: the fourth is sequential.
  CHECK(lowered("def f(x: [[[[float]A]B]C]D) = "
                "map(a -> map(b -> map(c -> map(v -> -v, c), b), a), x)") ==
        "mapGlb(2, a -> mapGlb(1, b -> mapGlb(0, c -> mapSeq(v -> -v, c), b), a), x)");
  // Through writable layouts (join, split, transpose, asScalar) the nest continues.
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> join(split(2, map(v -> v - 1.0f, r))), x)") ==
        "mapGlb(1, r -> join(split(2, mapGlb(0, v -> v - 1.0f, r))), x)");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> transpose(split(2, map(v -> v + v, r))), x)") ==
        "mapGlb(1, r -> transpose(split(2, mapGlb(0, v -> v + v, r))), x)");
  CHECK(lowered("def f(x: [[float4]N]M) = map(r -> asScalar(map(v -> v + v, r)), x)") ==
        "mapGlb(1, r -> asScalar(mapGlb(0, v -> v + v, r)), x)");
}

TEST_CASE("maps that are not on the result spine of a parallel map are sequential") {
  // Under slide, pad, crop or zip the inner map is read through a view.
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> slide(2, 1, map(v -> v + 1.0f, r)), x)") ==
        "mapGlb(0, r -> slide(2, 1, mapSeq(v -> v + 1.0f, r)), x)");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> pad(1, 1, clamp, map(v -> v + 1.0f, r)), x)") ==
        "mapGlb(0, r -> pad(1, 1, clamp, mapSeq(v -> v + 1.0f, r)), x)");
  // A reorder is a permutation: the inner map is written through its inverse, in parallel.
  CHECK(lowered("def f(x: [[float]N]M) = "
                "map(r -> reorder(reverse, map(v -> v + 1.0f, r)), x)") ==
        "mapGlb(1, r -> reorder(reverse, mapGlb(0, v -> v + 1.0f, r)), x)");
  // The data argument of an inner parallel map is computed by every work-item.
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> map(v -> v * v, map(v -> v + 1.0f, r)), x)") ==
        "mapGlb(1, r -> mapGlb(0, v -> v * v, mapSeq(v -> v + 1.0f, r)), x)");
  // Maps inside a reduction's function, and reductions, are sequential.
  CHECK(lowered("def f(x: [[float]N]M) = "
                "reduce(fill(N, 0.0f), (acc, r) -> map(p -> p._0 + p._1, zip(acc, r)), x)") ==
        "reduceSeq(fill(N, 0.0f), (acc, r) -> mapSeq(p -> p._0 + p._1, zip(acc, r)), x)");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> reduce(0.0f, (a, v) -> a + v, r), x)") ==
        "mapGlb(0, r -> reduceSeq(0.0f, (a, v) -> a + v, r), x)");
}

TEST_CASE("maps at the top level each start a nest: kernels one after another") {
  // The input of a kernel is computed by an earlier kernel, also through views.
  CHECK(lowered("def f(x: [float]N) = map(v -> v * 2.0f, map(v -> v + 1.0f, x))") ==
        "mapGlb(0, v -> v * 2.0f, mapGlb(0, v -> v + 1.0f, x))");
  CHECK(lowered("def f(x: [float]N) = map(w -> w._0 * w._1, zip(x, pad(1, 1, clamp, "
                "crop(1, 1, map(v -> v + 1.0f, x)))))") ==
        "mapGlb(0, w -> w._0 * w._1, zip(x, pad(1, 1, clamp, crop(1, 1, mapGlb(0, v -> v + 1.0f, "
        "x)))))");
  // let at the top: its argument is computed first, its body writes the result.
  CHECK(lowered("def f(x: [float]N) = let(y -> map(v -> v + v, y), x)") ==
        "let(y -> mapGlb(0, v -> v + v, y), x)");
  CHECK(lowered("def f(x: [float]N) = let(y -> map(v -> v * 2.0f, join(y)), fill(1, map(v -> "
                "-v, x)))") ==
        "let(y -> mapGlb(0, v -> v * 2.0f, join(y)), fill(1, mapGlb(0, v -> -v, x)))");
  // Layouts the result can be written through keep the top level.
  CHECK(lowered("def f(x: [[float]N]M) = transpose(map(r -> map(v -> v + v, r), x))") ==
        "transpose(mapGlb(1, r -> mapGlb(0, v -> v + v, r), x))");
  CHECK(lowered("def f(x: [[float]N]M) = join(id(split(2, asScalar(asVector(2, join(map(r -> "
                "map(v -> v + v, r), x)))))))") ==
        "join(id(split(2, asScalar(asVector(2, join(mapGlb(1, r -> mapGlb(0, v -> v + v, r), "
        "x)))))))");
}

TEST_CASE("what the top level computes in one work-item has sequential maps") {
  // A reduction, a pad or a slide of a computed value, a tuple: one work-item computes it.
  CHECK(lowered("def f(x: [float]N) = reduce(0.0f, (a, v) -> a + v, map(v -> v * v, x))") ==
        "reduceSeq(0.0f, (a, v) -> a + v, mapSeq(v -> v * v, x))");
  CHECK(lowered("def f(x: [float]N) = pad(1, 1, clamp, map(v -> v + 1.0f, x))") ==
        "pad(1, 1, clamp, mapSeq(v -> v + 1.0f, x))");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> slide(2, 1, r), map(r -> map(v -> v + 1.0f, "
                "r), x))") == "map(r -> slide(2, 1, r), mapSeq(r -> mapSeq(v -> v + 1.0f, r), x))");
  // A reorder of one is not: it is written through (tests/codegen/opencl_reorder_writes.cpp).
  CHECK(lowered("def f(x: [float]N) = reorder(reverse, map(v -> v + 1.0f, x))") ==
        "reorder(reverse, mapGlb(0, v -> v + 1.0f, x))");
}

TEST_CASE("maps that only rearrange data stay high-level views, never parallel") {
  // A whole body that is a view is copied by a kernel (next case); inside one, views stay.
  CHECK(lowered("def f(x: [[[float]N]M]K) = map(m -> map(r -> map(v -> v + 1.0f, r), m), "
                "map(m -> transpose(m), x))") ==
        "mapGlb(2, m -> mapGlb(1, r -> mapGlb(0, v -> v + 1.0f, r), m), map(m -> transpose(m), "
        "x))");
  // (the printer writes map(r -> map(f, r), x) as map2D)
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> reduce(0.0f, (a, v) -> a + v, r), map(r -> "
                "map(v -> v, r), x))") ==
        "mapGlb(0, r -> reduceSeq(0.0f, (a, v) -> a + v, r), map2D(v -> v, x))");
  // Tuples cannot be stored: such a view stays as it is, for the single work-item kernel.
  CHECK(lowered("def f(x: [[(float, float)]N]M) = map(r -> map(p -> (p._1, 2.0f), r), x)") ==
        "map2D(p -> (p._1, 2.0f), x)");
  CHECK(lowered("def f(x: [float]N) = map(w -> reduce(0.0f, (a, v) -> a + v, w), map(v -> "
                "fill(3, v), x))") ==
        "mapGlb(0, w -> reduceSeq(0.0f, (a, v) -> a + v, w), map(v -> fill(3, v), x))");
  // A map of a sequential map is not a view (the lowering agrees with code generation).
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> mapSeq(v -> v, r), x)") ==
        "mapGlb(0, r -> mapSeq(v -> v, r), x)");
  // A computing map under a layout map at the top level still gets threads.
  CHECK(lowered("def f(x: [[[float]N]M]K) = map(m -> transpose(m), map(m -> map(r -> map(v -> "
                "v + 1.0f, r), m), x))") ==
        "map(m -> transpose(m), mapGlb(2, m -> mapGlb(1, r -> mapGlb(0, v -> v + 1.0f, r), "
        "m), x))");
  // Inside a parallel map, a view of a computed value is not on the nest's spine.
  CHECK(lowered("def f(x: [[[float]N]M]K) = map(m -> map(r -> split(1, r), map(r -> map(v -> "
                "v + 1.0f, r), m)), x)") ==
        "mapGlb(0, m -> map(r -> split(1, r), mapSeq(r -> mapSeq(v -> v + 1.0f, r), m)), x)");
}

TEST_CASE("a let's value that is a copy nest is computed by a kernel of its own") {
  // The copy hoist-relayout makes of a transposed view: mapGlb over the outer levels (at most
  // three, the outermost highest), mapSeq below, the view read as the kernel's input.
  CHECK(lowered("def f(x: [[float]N]M) = let(r -> map(v -> map(e -> e * 2.0f, v), r), "
                "map(c -> map(e -> id(e), c), transpose(x)))") ==
        "let(r -> mapGlb(1, v -> mapGlb(0, e -> e * 2.0f, v), r), mapGlb(1, c -> mapGlb(0, e "
        "-> id(e), c), transpose(x)))");
  CHECK(lowered("def f(x: [[[[float]N]M]K]J) = let(r -> map(v -> v, r), map(a -> map(b -> "
                "map(c -> map(e -> id(e), c), b), a), x))") ==
        "let(r -> map(v -> v, r), mapGlb(2, a -> mapGlb(1, b -> mapGlb(0, c -> mapSeq(e -> "
        "id(e), c), b), a), x))");
  // Only a let's value: a copy nest elsewhere is a view as before.
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> reduce(0.0f, (a, v) -> a + v, r), map(c -> "
                "map(e -> id(e), c), transpose(x)))") ==
        "mapGlb(0, r -> reduceSeq(0.0f, (a, v) -> a + v, r), map2D(e -> id(e), transpose(x)))");
}

TEST_CASE("a body that computes nothing is copied by a kernel of its own") {
  // Written as it is, one work-item would copy the whole view; the copy nest is parallel over
  // the view's outer levels (at most three), its elements copied by id.
  CHECK(lowered("def f(x: [[float]N]M) = transpose(x)") ==
        "mapGlb(1, e -> mapGlb(0, e_1 -> id(e_1), e), transpose(x))");
  CHECK(lowered("def f(x: [float]N) = x") == "mapGlb(0, e -> id(e), x)");
  CHECK(lowered("def f(x: [float]N) = pad(1, 1, clamp, x)") ==
        "mapGlb(0, e -> id(e), pad(1, 1, clamp, x))");
  CHECK(lowered("def f(x: [[[float]N]M]K) = map(m -> transpose(m), x)") ==
        "mapGlb(2, e -> mapGlb(1, e_1 -> mapGlb(0, e_2 -> id(e_2), e_1), e), map(m -> "
        "transpose(m), x))");
  CHECK(lowered("def f(x: [[[[float]N]M]K]J) = join(x)") ==
        "mapGlb(2, e -> mapGlb(1, e_1 -> mapGlb(0, e_2 -> id(e_2), e_1), e), join(x))");
  CHECK(lowered("def f(x: [float4]N) = x") == "mapGlb(0, e -> id(e), x)");
}

TEST_CASE("low-level primitives already present are kept and never get a same-dimension nest") {
  // An existing mapGlb(1): the map of its result takes dimension 0.
  CHECK(lowered("def f(x: [[float]N]M) = mapGlb(1, r -> map(v -> v + 1.0f, r), x)") ==
        "mapGlb(1, r -> mapGlb(0, v -> v + 1.0f, r), x)");
  // An existing mapGlb(0): nothing below it can be parallel.
  CHECK(lowered("def f(x: [[float]N]M) = mapGlb(0, r -> map(v -> v + 1.0f, r), x)") ==
        "mapGlb(0, r -> mapSeq(v -> v + 1.0f, r), x)");
  // A map around an existing thread mapping stays sequential.
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> mapGlb(0, v -> v + 1.0f, r), x)") ==
        "mapSeq(r -> mapGlb(0, v -> v + 1.0f, r), x)");
  CHECK(lowered("def f(x: [[float]N]M) = map(r -> mapLcl(0, v -> v + 1.0f, r), x)") ==
        "mapSeq(r -> mapLcl(0, v -> v + 1.0f, r), x)");
  // Inside work-group and sequential maps every map is sequential.
  CHECK(lowered("def f(x: [[float]N]M) = mapWrg(0, r -> mapLcl(0, v -> map(w -> w + w, fill(2, "
                "v)), r), x)") ==
        "mapWrg(0, r -> mapLcl(0, v -> mapSeq(w -> w + w, fill(2, v)), r), x)");
  CHECK(lowered("def f(x: [[float]N]M) = mapSeqUnroll(r -> map(v -> v + 1.0f, r), x)") ==
        "mapSeqUnroll(r -> mapSeq(v -> v + 1.0f, r), x)");
  CHECK(lowered("def f(x: [float]N) = toGlobal(y -> reduceSeqUnroll(0.0f, (a, v) -> a + v, y), "
                "x)") == "toGlobal(y -> reduceSeqUnroll(0.0f, (a, v) -> a + v, y), x)");
  // Lowering a lowered program changes nothing.
  for (const char* file : {"examples/conv.weft", "examples/stencil2d.weft", "examples/matmul.weft",
                           "examples/dot.weft"}) {
    CAPTURE(file);
    Definition once = lowerDefault(parseFile(file).definitions.back());
    CHECK(lowerDefault(once).function == once.function);
  }
}

TEST_CASE("the lowering keeps the definition and the source locations") {
  Program program = parseProgram(
      "def f[S >= 2](x: [[float]N]M): [[float]N]M =\n"
      "  map(r -> map(v -> v + 1.0f, r),\n"
      "      x)\n",
      "loc.weft");
  const Definition& original = program.definitions.back();
  Definition low = lowerDefault(original);
  CHECK(low.name == "f");
  CHECK(low.declaredType == original.declaredType);
  CHECK(low.sizeDeclarations == original.sizeDeclarations);
  CHECK(low.loc.line == original.loc.line);
  const Expr& outer = low.function.body();
  const Expr& originalOuter = original.function.body();
  REQUIRE(outer.isPrim(Op::MapGlb));
  REQUIRE(outer.loc().file);
  CHECK(*outer.loc().file == "loc.weft");
  CHECK(outer.loc().line == originalOuter.loc().line);
  CHECK(outer.loc().column == originalOuter.loc().column);
  const Expr& inner = outer.funs()[0].body();
  const Expr& originalInner = originalOuter.funs()[0].body();
  REQUIRE(inner.isPrim(Op::MapGlb));
  CHECK(inner.loc().line == 2);
  CHECK(inner.loc().line == originalInner.loc().line);
  CHECK(inner.loc().column == originalInner.loc().column);
  // Params are the same nodes: the lowered function is alpha-equal to a relabelled original.
  CHECK(low.function.params()[0].paramId() == original.function.params()[0].paramId());
}

TEST_CASE("lowered examples type-check to the same type and compute the same values") {
  struct Case {
    const char* file;
    std::vector<ArithBinding> bindings;  // sizes the inputs do not determine come first
  };
  std::vector<Case> cases = {
      {"examples/dot.weft", {{{"N", 1}}, {{"N", 7}}}},
      {"examples/matmul.weft", {{{"M", 3}, {"K", 4}, {"N", 5}}, {{"M", 1}, {"K", 1}, {"N", 2}}}},
      {"examples/stencil2d.weft", {{{"W", 5}, {"H", 4}}, {{"W", 1}, {"H", 2}}}},
      {"examples/conv.weft", {}},
  };
  for (int64_t p : {0, 1}) {
    for (int64_t s : {1, 2}) {
      cases.back().bindings.push_back(
          {{"P", p}, {"S", s}, {"C", 3}, {"H", 8}, {"W", 8}, {"M", 4}, {"K", 3}});
    }
  }
  std::mt19937_64 rng(42);
  for (const Case& c : cases) {
    CAPTURE(c.file);
    const Definition original = parseFile(c.file).definitions.back();
    const Definition low = lowerDefault(original);
    CHECK(typecheck(low).type == typecheck(original).type);
    for (const ArithBinding& binding : c.bindings) {
      std::vector<Value> inputs;
      for (const Expr& param : original.function.params()) {
        inputs.push_back(testing::randomValue(param.paramType(), binding, rng));
      }
      ArithBinding sizes = bindSizes(original, inputs, binding);
      Value expected = interpret(original, inputs, sizes);
      Value got = interpret(low, inputs, sizes);
      CHECK(got == expected);
    }
  }
}

TEST_CASE("a convolution layer lowers to a 3D mapGlb nest around one sequential reduction") {
  const Definition layer =
      parseProgram(testing::kConvLayerText, "conv_layer").definitions.back();
  const Definition lowered = lowerDefault(layer);
  const std::string text = printExpr(lowered.function.body());
  CHECK(
      text.starts_with("mapGlb(2, kernel -> mapGlb(1, row -> join(mapGlb(0, window -> "
                       "reduceSeq(kernel._1, "));
  // The windows and the channel transposes stay views (high-level maps that compute nothing).
  CHECK(text.find("map(rowOfChannels -> transpose(rowOfChannels), transpose(map(channel -> "
                  "slide2D(3, 1, pad2D(1, constant(0.0f), channel)), input)))") !=
        std::string::npos);
  CHECK(text.find("mapSeq") == std::string::npos);
}
