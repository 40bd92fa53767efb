// Tests of `weft explore` and `weft report` end to end on a small layer (8×8×8 → 8, 3×3
// kernels) with 4 samples on the default OpenCL device: the database is written with one row
// per variant, the summary and --json output agree with it, a re-run resumes (runs nothing),
// and the report prints the Pareto front as a table and as CSV. A corrupt --db file is an
// error that names the file and leaves it as it was. Sharding: --shard 1/2 and 2/2 into two
// databases share the points without overlap, and once merged with `weft merge` the unsharded
// command finds every one of its points done (it runs nothing). A bad --shard, --all-vgg16 with
// --layer, and a corrupt merge source are clear errors that change nothing. Structures whose space
// is empty (conv-direct's v = 16 on a layer whose window of 72 values it cannot split into 16-wide
// chunks) are one summary line with the reason, each listed only with --verbose. Without an
// OpenCL device (weft devices fails) the exploration tests pass with a message. For a program
// file (examples/matmul.weft) the report gives GFLOP/s from the IR's count, 2 M N K.
// --time-limit: a run stopped by it records what it started, and the same command goes on.
// A second explorer on a database another holds is refused with the holder's process id.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "explore/database_lock.h"
#include "explore/results_db.h"
#include "tests/support/run_weft.h"

using weft::testing::contains;
using weft::testing::haveOpenCLDevice;
using weft::testing::jsonLines;
using weft::testing::runWeft;
using weft::testing::TempDir;

TEST_CASE("weft explore writes the database, resumes, and weft report prints the front") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore");
  const std::string db = dir.file("results.db");
  auto first = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "4", "--seed", "2",
                        "--db", db, "--min-time", "2", "--json", "--quiet"});
  CAPTURE(first.output);
  REQUIRE(first.exitCode == 0);
  // One JSON line per variant, then the summary.
  std::vector<nlohmann::json> lines = jsonLines(first.output);
  REQUIRE(lines.size() == 5);
  const nlohmann::json& summary = lines.back();
  CHECK(summary["program"] == "conv_8_8_8_8_3_1_1");
  CHECK(summary["sampled"] == 4);
  CHECK(summary["ran"] == 4);
  int ok = 0;
  for (size_t i = 0; i < 4; ++i) {
    CHECK(lines[i]["program"] == "conv_8_8_8_8_3_1_1");
    // conv-direct's kappa, the register-blocked vector family's vector_kappa or the Winograd
    // family's winograd_kappa.
    CHECK((lines[i]["parameters"].contains("kappa") ||
           lines[i]["parameters"].contains("vector_kappa") ||
           lines[i]["parameters"].contains("winograd_kappa")));
    if (lines[i]["status"] == "ok") {
      ++ok;
      CHECK(lines[i]["medianNs"].get<uint64_t>() > 0);
      CHECK(lines[i]["spaceBytes"].get<int64_t>() > 0);
    }
  }
  CHECK(ok >= 1);
  CHECK(summary["statusCounts"]["ok"] == ok);
  CHECK(summary["bestNs"].get<uint64_t>() > 0);

  auto again = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "4", "--seed", "2",
                        "--db", db, "--quiet"});
  CAPTURE(again.output);
  REQUIRE(again.exitCode == 0);
  CHECK(contains(again.output, "4 sampled, 4 already in"));
  CHECK(contains(again.output, "0 run"));

  auto report = runWeft({"report", "--db", db, "--csv", dir.file("front.csv")});
  CAPTURE(report.output);
  REQUIRE(report.exitCode == 0);
  CHECK(contains(report.output, "## conv_8_8_8_8_3_1_1"));
  CHECK(contains(report.output, "Pareto front (time vs space)"));
  CHECK(contains(report.output, "| 1 "));
  CHECK(contains(report.output, "fastest: #1; smallest: #"));
  CHECK(contains(report.output, "reference (default lowering)"));
  CHECK(contains(report.output, "4 variants: "));
  const std::string csv = dir.read("front.csv");
  CHECK(contains(csv, "program,device,compiler,median_ns,space_bytes"));
  CHECK(contains(csv, "\"conv_8_8_8_8_3_1_1\""));

  auto csvOut = runWeft({"report", "--db", db, "--layer", "8,8,8,8,3,1,1", "--format", "csv"});
  REQUIRE(csvOut.exitCode == 0);
  CHECK(contains(csvOut.output, "median_ns"));
  CHECK_FALSE(contains(csvOut.output, "Pareto"));

  auto jsonOut = runWeft({"report", "--db", db, "--format", "json"});
  REQUIRE(jsonOut.exitCode == 0);
  nlohmann::json parsed = nlohmann::json::parse(jsonOut.output, nullptr, false);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 1);
  CHECK(parsed[0]["program"] == "conv_8_8_8_8_3_1_1");
  CHECK(parsed[0]["variants"] == 4);
  REQUIRE(parsed[0]["front"].is_array());
  REQUIRE_FALSE(parsed[0]["front"].empty());
  CHECK(parsed[0]["front"][0]["medianNs"].get<uint64_t>() > 0);
  CHECK(parsed[0]["front"][0]["parameters"].is_object());
}

TEST_CASE("--time-limit stops starting variants, and the same command goes on with the rest") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_time_limit");
  const std::string db = dir.file("results.db");
  const std::vector<std::string> command = {
      "explore", "--layer", "8,8,8,8,3,1,1", "--samples", "6",      "--seed", "3",
      "--db",    db,        "--min-time",    "2",         "--json", "--quiet"};
  std::vector<std::string> limited = command;
  limited.insert(limited.end(), {"--time-limit", "0.001"});
  auto first = runWeft(limited);
  CAPTURE(first.output);
  REQUIRE(first.exitCode == 0);
  const nlohmann::json summary = jsonLines(first.output).back();
  // The first variant starts at once; the limit has passed when it ends.
  CHECK(summary["ran"] == 1);
  CHECK(summary["leftByTimeLimit"] == 5);
  auto rest = runWeft(command);
  CAPTURE(rest.output);
  REQUIRE(rest.exitCode == 0);
  const nlohmann::json after = jsonLines(rest.output).back();
  CHECK(after["skipped"] == 1);
  CHECK(after["ran"] == 5);
  CHECK(after["leftByTimeLimit"] == 0);
  auto bad = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--db", db, "--time-limit", "-1"});
  CHECK(bad.exitCode != 0);
  CHECK(contains(bad.output, "--time-limit must not be negative"));
}

TEST_CASE("a second explorer on a database that one is writing is refused, naming the holder") {
  TempDir dir("weft_cli_explore_lock");
  const std::string db = dir.file("results.db");
  // This process plays the first explorer: it holds the lock as weft explore would.
  {
    const weft::explore::DatabaseLock held(db);
    auto second = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "2", "--db", db,
                           "--quiet"});
    CAPTURE(second.output);
    CHECK(second.exitCode != 0);
    CHECK(contains(second.output, "another weft explore, merge or import is writing " + db));
    CHECK(contains(second.output, "(process " + std::to_string(::getpid()) + ")"));
    CHECK(contains(second.output, "weft merge"));
    // weft merge and weft import write it too: refused the same way, the database untouched.
    const std::string source = dir.file("other.db");
    weft::explore::ResultsDb{source};
    auto merged = runWeft({"merge", "--db", db, source});
    CHECK(merged.exitCode != 0);
    CHECK(contains(merged.output, "another weft explore, merge or import is writing " + db));
    // (A bundle's results file the import reads, then finds the database taken.)
    auto imported =
        runWeft({"import", "fuzz/corpus/bundle_results/two_variants.json", "--db", db});
    CHECK(imported.exitCode != 0);
    CHECK(contains(imported.output, "another weft explore, merge or import is writing " + db));
    CHECK(!std::filesystem::exists(db));
  }
  // Released with its holder: the lock file stays and takes the next lock.
  CHECK(std::filesystem::exists(weft::explore::DatabaseLock::lockPath(db)));
  const weft::explore::DatabaseLock again(db);
}

TEST_CASE("structures without valid variants: one summary line, each with --verbose") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore_empty");
  const std::vector<std::string> command = {"explore",   "--layer", "8,15,15,16,3,2,1",
                                            "--samples", "1",       "--min-time",
                                            "1",         "--db",    dir.file("r.db")};
  auto quiet = runWeft(command);
  CAPTURE(quiet.output);
  REQUIRE(quiet.exitCode == 0);
  CHECK(contains(quiet.output, "structures have no valid variant (with these sizes"));
  CHECK(contains(quiet.output, "the vector width must divide the length"));
  CHECK_FALSE(contains(quiet.output, "structure without valid variants:"));
  std::vector<std::string> verboseCommand = command;
  verboseCommand.back() = dir.file("v.db");
  verboseCommand.push_back("--verbose");
  auto verbose = runWeft(verboseCommand);
  CAPTURE(verbose.output);
  REQUIRE(verbose.exitCode == 0);
  CHECK(contains(verbose.output, "structure without valid variants: unroll=0 v=16"));
  CHECK(contains(verbose.output, "asVector to width 16 requires"));
}

TEST_CASE("weft explore and weft report refuse a corrupt database and leave it alone") {
  TempDir dir("weft_cli_explore");
  const std::string db = dir.write("results.db", "this is not a database, it is a poem\n");
  auto report = runWeft({"report", "--db", db});
  CAPTURE(report.output);
  CHECK(report.exitCode == 1);
  CHECK(contains(report.output, "not a weft results database"));
  if (haveOpenCLDevice()) {
    auto explore = runWeft({"explore", "--layer", "8,8,8,8,3,1,1", "--samples", "2", "--db", db,
                            "--quiet", "--min-time", "1"});
    CAPTURE(explore.output);
    CHECK(explore.exitCode == 1);
    CHECK(contains(explore.output, "not a weft results database"));
  }
  CHECK(dir.read("results.db") == "this is not a database, it is a poem\n");
  auto missing = runWeft({"report", "--db", dir.file("none.db")});
  CHECK(missing.exitCode == 1);
  CHECK(contains(missing.output, "no such results database"));
}

namespace {

std::set<std::string> parameterKeys(const std::string& db) {
  std::set<std::string> keys;
  weft::explore::ResultsDb results(db);
  for (const auto& row : results.variants()) {
    CHECK(row.status != weft::explore::VariantStatus::Running);
    keys.insert(row.key.parameters);
  }
  return keys;
}

}  // namespace

TEST_CASE("two shards merged give the variants of the unsharded run") {
  if (!haveOpenCLDevice()) return;
  TempDir dir("weft_cli_explore");
  const std::vector<std::string> common = {
      "explore", "--layer", "8,8,8,8,3,1,1", "--samples", "4",
      "--seed",  "3",       "--min-time",    "1",         "--quiet"};
  auto run = [&](const std::string& db, const std::string& shard) {
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--db", db});
    if (!shard.empty()) args.insert(args.end(), {"--shard", shard});
    auto result = runWeft(args);
    CAPTURE(result.output);
    REQUIRE(result.exitCode == 0);
    return result.output;
  };
  const std::string first = run(dir.file("shard-1.db"), "1/2");
  CHECK(contains(first, "2 sampled (shard 1/2 of 4)"));
  run(dir.file("shard-2.db"), "2/2");
  const std::set<std::string> one = parameterKeys(dir.file("shard-1.db"));
  const std::set<std::string> two = parameterKeys(dir.file("shard-2.db"));
  CHECK(one.size() == 2);
  CHECK(two.size() == 2);
  for (const std::string& k : one) CHECK(two.count(k) == 0);

  auto merge = runWeft({"merge", "--db", dir.file("merged.db"), dir.file("shard-1.db"),
                        dir.file("shard-2.db"), "--json"});
  CAPTURE(merge.output);
  REQUIRE(merge.exitCode == 0);
  auto counts = nlohmann::json::parse(merge.output, nullptr, false);
  REQUIRE(counts.is_object());
  CHECK(counts["added"] == 4);
  CHECK(counts["conflicts"] == 0);
  CHECK(counts["referencesAdded"] == 1);  // both shards ran the same reference
  std::set<std::string> both = one;
  both.insert(two.begin(), two.end());
  CHECK(parameterKeys(dir.file("merged.db")) == both);

  // The unsharded run samples the same 4 points and finds every one of them in the merge.
  const std::string full = run(dir.file("merged.db"), "");
  CHECK(contains(full, "4 sampled, 4 already in"));
  CHECK(contains(full, ", 0 run"));
  CHECK(parameterKeys(dir.file("merged.db")) == both);

  // Merging a shard again: its rows are there already, unchanged.
  auto again = runWeft({"merge", "--db", dir.file("merged.db"), dir.file("shard-2.db")});
  CAPTURE(again.output);
  REQUIRE(again.exitCode == 0);
  CHECK(contains(again.output, "2 variants read, 0 added, 0 replaced a running marker, 2 already"));

  auto report = runWeft({"report", "--db", dir.file("merged.db")});
  CAPTURE(report.output);
  REQUIRE(report.exitCode == 0);
  CHECK(contains(report.output, "4 variants: "));
}

TEST_CASE("--size values outside a size's range, or too large for int indexing, are refused") {
  TempDir dir("weft_cli_explore_sizes");
  for (const std::string bad : {"M=0", "M=-3"}) {
    auto refused = runWeft({"explore", "examples/matmul.weft", "--size", bad, "--size", "N=4",
                            "--size", "K=4", "--samples", "1", "--db", dir.file("s.db")});
    CAPTURE(refused.output);
    CHECK(refused.exitCode == 1);
    CHECK(contains(refused.output, "--size " + bad +
                                       ": size M of 'matmul' is outside its range "
                                       "[1, inf); sizes are at least 1 unless declared otherwise"));
  }
  auto huge = runWeft({"explore", "examples/matmul.weft", "--size", "M=99999999999", "--size",
                       "N=4", "--size", "K=4", "--samples", "1", "--db", dir.file("s.db")});
  CHECK(huge.exitCode == 1);
  CHECK(contains(huge.output,
                 "input 'A' of 'matmul' would hold 4e+11 values; the kernels "
                 "index with int"));
  auto emit = runWeft({"emit", "examples/matmul.weft", "--size", "M=0", "--size", "N=4", "--size",
                       "K=4", "--params", "", "--out", dir.file("out")});
  CHECK(emit.exitCode != 0);
  CHECK(contains(emit.output, "--size M=0: size M of 'matmul' is outside its range"));
  CHECK_FALSE(std::filesystem::exists(dir.file("s.db")));
  // Inputs within int indexing but past a third of this machine's memory (below 51 GB of it,
  // 2^31 - 1 values per input reach that) are refused before they are made.
  const double memory =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (memory < 51e9) {
    auto tooLarge = runWeft({"explore", "examples/dot.weft", "--size", "N=2147483647",
                             "--samples", "1", "--db", dir.file("s.db")});
    CAPTURE(tooLarge.output);
    CHECK(tooLarge.exitCode == 1);
    CHECK(contains(tooLarge.output, "the inputs of dot[N=2147483647] need 17.17 GB, more than a "
                                    "third of this machine's memory"));
  }
}

TEST_CASE("bad --shard values, --all-vgg16 with --layer, and bad merge sources are errors") {
  TempDir dir("weft_cli_explore");
  for (const std::string shard : {"0/2", "3/2", "1/0", "2", "a/b", "-1/2", "1/2/3"}) {
    auto result = runWeft(
        {"explore", "--layer", "8,8,8,8,3,1,1", "--shard", shard, "--db", dir.file("never.db")});
    CAPTURE(shard);
    CAPTURE(result.output);
    CHECK(result.exitCode != 0);
    CHECK(contains(result.output, "counted from 1"));
  }
  auto both =
      runWeft({"explore", "--all-vgg16", "--layer", "vgg16:2", "--db", dir.file("never.db")});
  CAPTURE(both.output);
  CHECK(both.exitCode == 1);
  CHECK(contains(both.output, "give one of FILE, --layer, --all-vgg16 or --instance"));
  CHECK_FALSE(std::filesystem::exists(dir.file("never.db")));
  // An instance no registered workload serves: the error lists the workloads.
  auto unknown = runWeft({"explore", "--instance", "scale:3", "--db", dir.file("never.db")});
  CAPTURE(unknown.output);
  CHECK(unknown.exitCode == 1);
  CHECK(contains(unknown.output, "no workload explores this request"));
  CHECK(contains(unknown.output, "conv: "));
  CHECK(contains(unknown.output, "pipeline: "));
  CHECK_FALSE(std::filesystem::exists(dir.file("never.db")));

  const std::string poem = dir.write("poem.db", "roses are red\n");
  auto corrupt = runWeft({"merge", "--db", dir.file("target.db"), poem});
  CAPTURE(corrupt.output);
  CHECK(corrupt.exitCode == 1);
  CHECK(contains(corrupt.output, "not a weft results database"));
  CHECK(contains(corrupt.output, "poem.db"));
  CHECK_FALSE(std::filesystem::exists(dir.file("target.db")));  // nothing was created
  CHECK(dir.read("poem.db") == "roses are red\n");
  // A good source next to a corrupt one: the existing target stays as it was.
  {
    weft::explore::ResultsDb good(dir.file("good.db"));
    weft::explore::VariantRecord row;
    row.key = {"conv_x", "0123456789abcdef", "weft test", R"({"kappa":1})"};
    row.status = weft::explore::VariantStatus::Ok;
    row.medianNs = 5;
    good.record(row);
    weft::explore::ResultsDb existing(dir.file("existing.db"));
  }
  auto mixed = runWeft({"merge", "--db", dir.file("existing.db"), dir.file("good.db"), poem});
  CAPTURE(mixed.output);
  CHECK(mixed.exitCode == 1);
  CHECK(weft::explore::ResultsDb(dir.file("existing.db")).variants().empty());
  auto fine = runWeft({"merge", "--db", dir.file("existing.db"), dir.file("good.db")});
  CAPTURE(fine.output);
  CHECK(fine.exitCode == 0);
  CHECK(weft::explore::ResultsDb(dir.file("existing.db")).variants().size() == 1);
  auto missing = runWeft({"merge", "--db", dir.file("target.db"), dir.file("none.db")});
  CHECK(missing.exitCode == 1);
  CHECK(contains(missing.output, "no such results database"));
  auto none = runWeft({"merge", "--db", dir.file("target.db")});
  CHECK(none.exitCode != 0);
}

TEST_CASE("weft report gives a program file's GFLOP/s from the IR's operation count") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  TempDir dir("weft_cli_explore_program_flops");
  const std::string db = dir.file("matmul.db");
  auto explore = runWeft({"explore", "examples/matmul.weft", "--size", "M=16", "--size", "N=16",
                          "--size", "K=16", "--samples", "2", "--db", db, "--quiet"});
  CAPTURE(explore.output);
  REQUIRE(explore.exitCode == 0);
  auto report = runWeft({"report", "--db", db, "--format", "json"});
  REQUIRE(report.exitCode == 0);
  nlohmann::json parsed = nlohmann::json::parse(report.output, nullptr, false);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 1);
  // 2 M N K operations: GFLOP/s times nanoseconds gives them back (the program has no
  // reference row: the variants' details carry the count).
  REQUIRE_FALSE(parsed[0]["front"].empty());
  const nlohmann::json& best = parsed[0]["front"][0];
  const double flops = best["gflops"].get<double>() * best["medianNs"].get<double>();
  CHECK(flops == doctest::Approx(2.0 * 16 * 16 * 16).epsilon(1e-6));
}

TEST_CASE("a large program explored as written is checked against its default lowering") {
  if (!haveOpenCLDevice()) {
    MESSAGE("no OpenCL device: skipped");
    return;
  }
  // 512³ multiply-adds: the interpreter would take about a minute per variant, over the cap.
  // The program default-lowered on the device is the reference instead (checked against the
  // interpreter at smaller sizes), so both variants run and are verified within it.
  TempDir dir("weft_cli_explore_large_as_written");
  const std::string db = dir.file("matmul.db");
  auto explore = runWeft({"explore", "examples/matmul.weft", "--size", "M=512", "--size", "N=512",
                          "--size", "K=512", "--search", "off", "--samples", "2", "--timeout", "20",
                          "--db", db, "--quiet"});
  CAPTURE(explore.output);
  REQUIRE(explore.exitCode == 0);
  auto report = runWeft({"report", "--db", db, "--format", "json"});
  REQUIRE(report.exitCode == 0);
  nlohmann::json parsed = nlohmann::json::parse(report.output, nullptr, false);
  REQUIRE(parsed.is_array());
  REQUIRE(parsed.size() == 1);
  CHECK_FALSE(parsed[0]["front"].empty());
}
