// Tests of `weft rules` and `weft rewrite`: the rule listing, --list on an example, --apply
// chains (with given factors and with fresh tuning variables), that the printed program parses,
// type-checks and means the same as the original, and the errors for unknown rules, positions
// where the rule does not match, bad factors and missing modes.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ir/interp.h"
#include "ir/parser.h"
#include "tests/support/run_weft.h"
#include "typecheck/typecheck.h"

using weft::testing::contains;
using weft::testing::runWeft;

namespace {

std::string writeProgram(const std::string& name, const std::string& text) {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("weft_cli_rewrite_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

const char* kTwoMaps =
    "def twice(xs: [float]N): [float]N = map(x -> x + 1.0f, map(y -> y * 2.0f, xs))\n";

}  // namespace

TEST_CASE("weft rules lists names, families, factors and notations") {
  auto result = runWeft({"rules"});
  CHECK(result.exitCode == 0);
  for (const char* name :
       {"map-fusion", "map-fission", "split-join", "join-split-id", "split-join-id",
        "transpose-transpose-id", "asscalar-asvector-id", "asvector-asscalar-id", "map-to-mapglb",
        "map-to-mapwrg", "map-to-maplcl", "map-to-mapseq", "map-to-mapseq-unroll",
        "reduce-to-reduceseq", "reduce-to-reduceseq-unroll"}) {
    CHECK_MESSAGE(contains(result.output, std::string(name) + "  ["), name);
  }
  CHECK(contains(result.output, "split-join  [tiling]  factors: n"));
  CHECK(contains(result.output, "map(f) => join ∘ map(map(f)) ∘ split(n)"));
}

TEST_CASE("weft rewrite --list shows rule@position with a preview") {
  std::string file = writeProgram("two.weft", kTwoMaps);
  auto result = runWeft({"rewrite", file, "--list"});
  CHECK(result.exitCode == 0);
  CHECK(contains(result.output, "def twice:"));
  CHECK(contains(result.output, "map-fusion@root"));
  CHECK(contains(result.output, "split-join@1 "));
  CHECK(contains(result.output, "map(y -> y * 2.0f, xs)"));
  CHECK_FALSE(contains(result.output, "reduce-to-reduceseq"));

  auto dot = runWeft({"rewrite", "examples/dot.weft", "--list"});
  CHECK(dot.exitCode == 0);
  CHECK(contains(dot.output, "reduce-to-reduceseq@root"));
}

TEST_CASE("weft rewrite --apply chains rules and prints a program that means the same") {
  std::string file = writeProgram("two.weft", kTwoMaps);
  auto result = runWeft({"rewrite", file, "--apply", "map-fusion@root", "--apply",
                         "split-join@root", "--apply", "map-to-mapglb@0.0.0:dim=0"});
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.output, "split(chunk1, xs)"));
  CHECK(contains(result.output, "mapGlb(0,"));
  CHECK(contains(result.output, "//   chunk1 in [1, N]"));
  // The printed program parses, type-checks and computes what the original does.
  std::string program = result.output.substr(0, result.output.find("// tuning variables"));
  weft::Program rewritten = weft::parseProgram(program, "rewritten.weft");
  REQUIRE(rewritten.definitions.size() == 1);
  weft::typecheck(rewritten.definitions[0]);
  weft::Program original = weft::parseProgram(kTwoMaps);
  std::vector<weft::Value> inputs{weft::Value::array(
      {weft::Value::ofFloat(1), weft::Value::ofFloat(-2), weft::Value::ofFloat(0.5f),
       weft::Value::ofFloat(3), weft::Value::ofFloat(4), weft::Value::ofFloat(7)})};
  weft::ArithBinding sizes = weft::bindSizes(original.definitions[0], inputs);
  weft::ArithBinding tuned = sizes;
  tuned["chunk1"] = 3;
  CHECK(weft::interpret(rewritten.definitions[0], inputs, tuned) ==
        weft::interpret(original.definitions[0], inputs, sizes));

  auto given = runWeft({"rewrite", file, "--apply", "split-join@1:n=2"});
  REQUIRE(given.exitCode == 0);
  CHECK(contains(given.output, "split(2, xs)"));
  CHECK(contains(given.output, "// tuning variables: none"));
}

TEST_CASE("weft rewrite reports bad requests") {
  std::string file = writeProgram("two.weft", kTwoMaps);
  auto unknown = runWeft({"rewrite", file, "--apply", "no-such-rule@root"});
  CHECK(unknown.exitCode == 1);
  CHECK(contains(unknown.output, "no rule named 'no-such-rule'"));
  auto nomatch = runWeft({"rewrite", file, "--apply", "reduce-to-reduceseq@root"});
  CHECK(nomatch.exitCode == 1);
  CHECK(contains(nomatch.output, "does not match at root"));
  auto badPosition = runWeft({"rewrite", file, "--apply", "map-fusion@7.3"});
  CHECK(badPosition.exitCode == 1);
  CHECK(contains(badPosition.output, "no node at position 7.3"));
  auto badFactor = runWeft({"rewrite", file, "--apply", "split-join@root:k=2"});
  CHECK(badFactor.exitCode == 1);
  CHECK(contains(badFactor.output, "has no factor 'k' (it takes n)"));
  auto noMode = runWeft({"rewrite", file});
  CHECK(noMode.exitCode == 1);
  CHECK(contains(noMode.output, "give one of --list, --search, or one or more --apply"));
  auto badHeuristic = runWeft({"rewrite", file, "--search", "--without", "no-such"});
  CHECK(badHeuristic.exitCode == 1);
  CHECK(contains(badHeuristic.output, "--search: no search heuristic named 'no-such'"));
  auto noDef = runWeft({"rewrite", file, "--def", "nope", "--list"});
  CHECK(noDef.exitCode == 1);
  CHECK(contains(noDef.output, "no definition named 'nope'"));
}
