// Property tests of the address-space rules (rewrite/rules_address_space.cpp) against the
// interpreter: toPrivate/toLocal/toGlobal and id mean the identity, so a rewritten program must
// give exactly the result of the original (the copies compute nothing; float results are
// compared within 1e-6 only to allow for -0/+0, in practice they are bitwise equal).
//
// The programs: for to-private, to-local and to-global a parallel map (mapGlb, mapWrg) over
// the rows of an input [[S]c]m (c a constant so private copies are legal) whose function is a
// random program (tests/support/random_program.h) on one row; for add-id any random program.
// The rule is applied at a random position where it matches, on random inputs with random
// sizes. Each rule must be applied and checked in at least 50 cases; the count is printed.
#include <doctest/doctest.h>
#include <rapidcheck.h>

#include <random>
#include <string>

#include "ir/builders.h"
#include "ir/interp.h"
#include "ir/printer.h"
#include "rewrite/engine.h"
#include "rewrite/library.h"
#include "tests/support/random_program.h"
#include "tests/support/random_values.h"
#include "tests/support/rule_check.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::rewrite;
using weft::testing::RandomProgramGenerator;
using weft::testing::RandomProgramOptions;
using weft::testing::uniformInt;

namespace {

// A parallel map `op` over the rows of the input whose function is a random program.
Definition rowProgram(Op op, std::mt19937_64& rng) {
  Type scalar = uniformInt(rng, 0, 2) == 0 ? Type::intType() : Type::floatType();
  Arith rows = uniformInt(rng, 0, 1) ? Arith::size("n") : Arith(uniformInt(rng, 1, 5));
  Type inputType = Type::array(Type::array(scalar, Arith(uniformInt(rng, 1, 6))), rows);
  RandomProgramOptions options;
  options.lowLevel = false;
  options.symbolicSizes = false;
  RandomProgramGenerator gen(rng(), options);
  weft::testing::RandomProgram inner = gen.program({inputType.arrayElement()});
  Expr row = Expr::param("row");
  Expr body = substituteParams(inner.definition.function.body(),
                               {{inner.definition.function.params()[0], row}});
  Expr input = Expr::param("input", inputType);
  Expr mapped =
      Expr::prim(op, {Arith(uniformInt(rng, 0, 2))}, {Expr::lambda({row}, body)}, {input});
  return Definition{"f", Expr::lambda({input}, mapped), Type(), {}};
}

Definition makeProgram(const std::string& rule, std::mt19937_64& rng) {
  if (rule == "to-local") return rowProgram(Op::MapWrg, rng);
  if (rule == "to-private" || rule == "to-global") {
    return rowProgram(uniformInt(rng, 0, 1) ? Op::MapGlb : Op::MapWrg, rng);
  }
  RandomProgramOptions options;
  options.lowLevel = uniformInt(rng, 0, 1) == 0;
  return RandomProgramGenerator(rng(), options).program().definition;
}

bool checkOnce(const Rule& rule, const Definition& definition, std::mt19937_64& rng) {
  std::vector<Match> matches = findMatches(definition, {rule});
  if (matches.empty()) return false;
  const Match& match = matches[static_cast<size_t>(uniformInt(rng, 0, int(matches.size()) - 1))];
  weft::testing::InputSizes inputs = weft::testing::randomInputSizes(definition, rng);
  RewriteContext context;
  std::optional<Definition> rewritten = applyAt(definition, rule, match.position, {}, context);
  RC_ASSERT(rewritten.has_value());
  RC_ASSERT(context.tuningVariables().empty());
  // Only -0/+0 may differ: the copies compute nothing.
  return weft::testing::sameResults(rule, match.position, definition, *rewritten, inputs,
                                    inputs.sizes, 1e-6, 0.0, rng);
}

void checkRule(const std::string& name) {
  const Rule* rule = findRule(name);
  REQUIRE_MESSAGE(rule != nullptr, name);
  CHECK(rule->family == RuleFamily::AddressSpace);
  weft::testing::checkRuleOverRandomPrograms(
      name, [&](std::mt19937_64& rng) { return checkOnce(*rule, makeProgram(name, rng), rng); });
}

// A definition from text, type-checked by the parser's caller.
Definition mapGlbOverRows() {
  Expr input =
      Expr::param("input", Type::array(Type::array(Type::floatType(), 4), Arith::size("n")));
  Expr row = Expr::param("row");
  Expr body =
      mapGlb(Arith(0), Expr::lambda({row}, mapSeq(lam("x", [](Expr x) { return x; }), row)), input);
  return Definition{"f", Expr::lambda({input}, body), Type(), {}};
}

}  // namespace

TEST_CASE("to-private") { checkRule("to-private"); }
TEST_CASE("to-local") { checkRule("to-local"); }
TEST_CASE("to-global") { checkRule("to-global"); }
TEST_CASE("add-id") { checkRule("add-id"); }

TEST_CASE("address-space rules respect their legality conditions") {
  Definition d = mapGlbOverRows();
  auto positionsOf = [&](const std::string& name) {
    std::vector<std::string> positions;
    for (const Match& m : findMatches(d, {*findRule(name)})) {
      positions.push_back(positionToString(m.position));
    }
    return positions;
  };
  // The row (a data argument of mapSeq inside the mapGlb, constant size 4) can go to private
  // memory; the kernel input cannot (not in a work-item).
  CHECK(positionsOf("to-private") == std::vector<std::string>{"0.0.1"});
  // No mapWrg: nothing is local.
  CHECK(positionsOf("to-local").empty());
  // The kernel-level mapGlb writes to global memory.
  CHECK(positionsOf("to-global") == std::vector<std::string>{"root"});
  // Applying to-private twice at the same place does not stack copies.
  RewriteContext context;
  std::optional<Definition> once =
      applyAt(d, *findRule("to-private"), parsePosition("0.0.1"), {}, context);
  REQUIRE(once.has_value());
  int privateMatches = 0;
  for (const Match& m : findMatches(*once, {*findRule("to-private")})) {
    (void)m;
    ++privateMatches;
  }
  CHECK(privateMatches == 0);
}
