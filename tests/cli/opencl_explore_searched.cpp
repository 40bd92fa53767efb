// End to end, the structures of the rewrite-sequence search: `weft explore examples/matmul.weft`
// explores them (recorded as rewrite=HASH with their rule sequence), every variant that ran is
// verified (none is a wrong answer), `weft report` names the rule sequence of the best, `weft
// run FILE --pick` rebuilds a searched variant by replaying its sequence and computes what the
// interpreter computes, `weft emit FILE --pick` writes it as a drop-in naming its sequence (with
// the sizes the database recorded when --size is left out), --search-depth and
// --search-without reach the search (an unknown heuristic is an error), and
// a record whose sequence no longer gives its program is refused with a clear message, as is one
// whose recorded local size no longer fits because the code generator now makes other kernels.
#include <doctest/doctest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ir/npy.h"
#include "tests/support/npy_inputs.h"
#include "tests/support/run_weft.h"

using namespace weft;
using namespace weft::testing;

namespace {

// Runs one SQL statement on the database; fails the test with SQLite's message otherwise.
void execute(const std::string& db, const std::string& sql) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(handle, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error ? error : "";
  sqlite3_free(error);
  sqlite3_close(handle);
  CAPTURE(message);
  REQUIRE(rc == SQLITE_OK);
}

std::vector<float> counting(size_t n, float scale) {
  std::vector<float> values(n);
  for (size_t i = 0; i < n; ++i) values[i] = scale * static_cast<float>((i * 7) % 11) - 2.0f;
  return values;
}

}  // namespace

TEST_CASE("searched structures: explored, verified, reported, picked, emitted, checked on replay") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_explore_searched");
  const std::string db = dir.file("matmul.db");
  const std::vector<std::string> sizes = {"--size", "M=8", "--size", "N=8", "--size", "K=8"};
  std::vector<std::string> explore = {"explore", "examples/matmul.weft", "--samples", "16",
                                      "--order", "random", "--db", db, "--quiet"};
  explore.insert(explore.end(), sizes.begin(), sizes.end());
  CommandResult explored = runWeft(explore);
  CAPTURE(explored.output);
  REQUIRE(explored.exitCode == 0);
  auto status = runWeft({"report", "--db", db});
  REQUIRE(status.exitCode == 0);
  CHECK(contains(status.output, "structures of the rewrite search"));
  CHECK_FALSE(contains(status.output, "wrong_answer"));

  // Keep only the searched variants, so that the fastest is one of them.
  execute(db, "DELETE FROM variants WHERE parameters NOT LIKE '%\"rewrite\"%'");
  auto report = runWeft({"report", "--db", db});
  CAPTURE(report.output);
  REQUIRE(report.exitCode == 0);
  CHECK(contains(report.output, "| rule sequence |"));

  const std::string a = writeFloats(dir, "a.npy", {8, 8}, counting(64, 0.5f));
  const std::string b = writeFloats(dir, "b.npy", {8, 8}, counting(64, 0.25f));
  auto interpreted = runWeft({"run", "examples/matmul.weft", "--in", a, b, "--out",
                              dir.file("expected.npy")});
  REQUIRE(interpreted.exitCode == 0);
  std::vector<std::string> pick = {"run", "examples/matmul.weft", "--in", a, b, "--out",
                                   dir.file("picked.npy"), "--db", db, "--pick", "fastest"};
  auto picked = runWeft(pick);
  CAPTURE(picked.output);
  REQUIRE(picked.exitCode == 0);
  CHECK(contains(picked.output, "structure: rewrite: "));
  NpyArray expected = readNpy(dir.file("expected.npy"));
  NpyArray actual = readNpy(dir.file("picked.npy"));
  REQUIRE(actual.f32.size() == expected.f32.size());
  for (size_t i = 0; i < expected.f32.size(); ++i) {
    CHECK(actual.f32[i] == doctest::Approx(expected.f32[i]).epsilon(1e-4));
  }

  std::vector<std::string> emit = {"emit", "examples/matmul.weft", "--db", db, "--pick",
                                   "fastest", "--out", dir.file("dropin")};
  emit.insert(emit.end(), sizes.begin(), sizes.end());
  auto emitted = runWeft(emit);
  CAPTURE(emitted.output);
  REQUIRE(emitted.exitCode == 0);
  CHECK(contains(dir.read("dropin/README.md"), "rewrite: "));
  // Without --size the sizes come from the database, which holds matmul at one set of them.
  auto recordedSizes = runWeft({"emit", "examples/matmul.weft", "--db", db, "--pick", "fastest",
                                "--out", dir.file("dropin-recorded-sizes")});
  CAPTURE(recordedSizes.output);
  REQUIRE(recordedSizes.exitCode == 0);
  CHECK(dir.read("dropin-recorded-sizes/weft_matmul.cl") == dir.read("dropin/weft_matmul.cl"));

  // The search's depth and heuristics are options of weft explore too.
  std::vector<std::string> shallow = {"explore", "examples/matmul.weft", "--samples", "2",
                                      "--db", dir.file("shallow.db"), "--search-depth", "1",
                                      "--search-without", "intensity-order"};
  shallow.insert(shallow.end(), sizes.begin(), sizes.end());
  auto shallowRun = runWeft(shallow);
  CAPTURE(shallowRun.output);
  CHECK(shallowRun.exitCode == 0);
  // Structures whose code generation fails are summed up by the generator's message (without
  // the program's names), and the last line is the command that exports the best variant.
  CHECK(contains(shallowRun.output, "of them: code generation failed: "));
  CHECK(contains(shallowRun.output,
                 "export: weft emit examples/matmul.weft --size M=8 --size N=8 "
                 "--size K=8 --db " +
                     dir.file("shallow.db") + " --pick fastest --out DIR"));
  auto shallowReport = runWeft({"report", "--db", dir.file("shallow.db")});
  CHECK(contains(shallowReport.output, "level 1 stopped: depth limit"));
  std::vector<std::string> unknown = {"explore", "examples/matmul.weft", "--samples", "2",
                                      "--db", dir.file("unknown.db"), "--search-without", "nope"};
  unknown.insert(unknown.end(), sizes.begin(), sizes.end());
  auto unknownRun = runWeft(unknown);
  CHECK(unknownRun.exitCode == 1);
  CHECK(contains(unknownRun.output, "--search-without: no search heuristic named 'nope'"));

  // A record measured when the code generator made other kernels (here: five, of which the
  // first had a local size of 7): its recorded local size no longer fits, and the message says
  // why.
  const std::string regenerated = dir.file("regenerated.db");
  std::filesystem::copy_file(db, regenerated);
  execute(regenerated, "DELETE FROM variants WHERE parameters NOT LIKE '%\"local_k0_d0\"%'");
  execute(regenerated,
          "UPDATE variants SET parameters = json_set(parameters, '$.local_k0_d0', 7), details = "
          "json_set(details, '$.kernels', json('[{},{},{},{},{}]'))");
  std::vector<std::string> emitRegenerated = {
      "emit",  "examples/matmul.weft", "--db", regenerated, "--pick", "fastest",
      "--out", dir.file("regenerated")};
  emitRegenerated.insert(emitRegenerated.end(), sizes.begin(), sizes.end());
  auto changed = runWeft(emitRegenerated);
  CAPTURE(changed.output);
  CHECK(changed.exitCode == 1);
  CHECK(contains(changed.output, "does not divide its global size"));
  CHECK(contains(changed.output, "ran when it was measured (weft's code generation has changed"));

  // A sequence that gives another program than the recorded one is refused.
  execute(db, "UPDATE variants SET strategy = 'rewrite: map-fission@root'");
  auto stale = runWeft(pick);
  CHECK(stale.exitCode == 1);
  CHECK(contains(stale.output, "the recorded rewrite sequence now gives another program"));
  execute(db, "UPDATE variants SET strategy = 'rewrite: reduce-to-reduceseq@root'");
  auto broken = runWeft(pick);
  CHECK(broken.exitCode == 1);
  CHECK(contains(broken.output, "does not replay"));
}
