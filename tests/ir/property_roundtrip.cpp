// Property: the text format round-trips. For random programs p (well-typed ones from
// tests/support/random_program.h, and syntax-level ones over every primitive, every kind of
// size expression, size declaration, literal and name clash), parse(print(p)) equals p
// (alpha-equivalence of every definition and user function, the same size declarations and
// every size variable with the same range) and printing is a fixpoint:
// print(parse(print(p))) == print(p). Both the multiline program printer and the one-line
// expression printer are checked.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/random_program.h"
#include "tests/support/size_ranges.h"

using namespace weft;
using weft::testing::describeSizeDeclarations;
using weft::testing::describeVariableRanges;
using weft::testing::RandomProgramGenerator;
using weft::testing::RandomSyntaxGenerator;
using weft::testing::undeclaredRangeUse;

namespace {

// Empty when equal, else what differs.
std::string differences(const Program& a, const Program& b) {
  if (a.userFuns.size() != b.userFuns.size()) return "number of user functions";
  for (size_t i = 0; i < a.userFuns.size(); ++i) {
    if (a.userFuns[i] != b.userFuns[i]) return "user function " + a.userFuns[i].userFunName();
  }
  if (a.definitions.size() != b.definitions.size()) return "number of definitions";
  for (size_t i = 0; i < a.definitions.size(); ++i) {
    const Definition& x = a.definitions[i];
    const Definition& y = b.definitions[i];
    if (x.name != y.name) return "name of definition " + x.name;
    if (x.declaredType != y.declaredType) return "declared type of " + x.name;
    if (x.function != y.function) return "function of " + x.name;
    // Variables compare by name, so ranges are compared spelled out.
    if (describeSizeDeclarations(x) != describeSizeDeclarations(y)) {
      return "size declarations of " + x.name;
    }
    if (std::string use = undeclaredRangeUse(y); !use.empty()) {
      return "a size use in " + x.name + " after parsing: " + use;
    }
    if (describeVariableRanges(x) != describeVariableRanges(y)) {
      return "variable ranges of " + x.name;
    }
  }
  return "";
}

// Checks the round trip of a program inside a rapidcheck property.
void checkRoundTrip(const Program& program) {
  std::string text = printProgram(program);
  RC_LOG() << text;
  Program reparsed = parseProgram(text, "printed.weft");
  RC_ASSERT(differences(program, reparsed) == "");
  RC_ASSERT(printProgram(reparsed) == text);
}

}  // namespace

TEST_CASE("well-typed random programs round-trip through the text format") {
  CHECK(rc::check("parse(print(p)) == p and print is a fixpoint", [](uint64_t seed) {
    RandomProgramGenerator generator(seed);
    Program program;
    int count = 1 + static_cast<int>(seed % 3);
    for (int i = 0; i < count; ++i) {
      Definition d = generator.program().definition;
      d.name = "f" + std::to_string(i);
      program.definitions.push_back(d);
    }
    checkRoundTrip(program);
  }));
}

TEST_CASE("random syntax over every primitive round-trips through the text format") {
  CHECK(rc::check("parse(print(p)) == p and print is a fixpoint", [](uint64_t seed) {
    RandomSyntaxGenerator generator(seed);
    checkRoundTrip(generator.program());
  }));
}

TEST_CASE("one-line printing of random programs round-trips (300 seeds)") {
  for (uint64_t seed = 0; seed < 300; ++seed) {
    CAPTURE(seed);
    RandomProgramGenerator generator(seed);
    testing::RandomProgram p = generator.program();
    // The definition's function is a lambda with typed params: printable as one expression.
    std::string text = printExpr(p.definition.function);
    CAPTURE(text);
    CHECK(text.find('\n') == std::string::npos);
    Expr reparsed = parseExpr(text);
    CHECK(reparsed == p.definition.function);
    CHECK(printExpr(reparsed) == text);

    RandomSyntaxGenerator syntax(seed);
    Program program = syntax.program();
    for (const Definition& d : program.definitions) {
      // A lone expression has no size declarations: declared ranges (which the simplifier
      // uses, e.g. m % m is 0 only when m >= 1) need the whole definition, checked above.
      if (!d.sizeDeclarations.empty()) continue;
      std::string line = printExpr(d.function);
      CAPTURE(line);
      CHECK(parseExpr(line, program) == d.function);
    }
  }
}

TEST_CASE("the generators are reproducible from their seed") {
  for (uint64_t seed : {1u, 2u, 99u}) {
    CHECK(printDefinition(RandomProgramGenerator(seed).program().definition) ==
          printDefinition(RandomProgramGenerator(seed).program().definition));
    CHECK(printProgram(RandomSyntaxGenerator(seed).program()) ==
          printProgram(RandomSyntaxGenerator(seed).program()));
  }
  CHECK(printDefinition(RandomProgramGenerator(1).program().definition) !=
        printDefinition(RandomProgramGenerator(2).program().definition));
}
