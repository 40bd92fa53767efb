// `weft bundle` and `weft import` without a device: bad inputs give clear errors (an unknown
// layer or profile, a bundle folder that was already measured, a missing, malformed or foreign
// results file, a bad status; nothing is written to the database then), and a results file as
// the harness writes it imports into a fresh database under the fingerprint weft computes for
// that device, shows up in `weft report` with its Pareto front, and importing it again changes
// nothing. The whole path on a device is tests/cli/opencl_bundle.cpp.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "explore/results_db.h"
#include "host/device_profile.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace weft {
namespace {

std::string variantLine(const std::string& id, const std::string& status, const std::string& median,
                        const std::string& parameters, int64_t space) {
  return "{\"id\": \"" + id + "\", \"status\": \"" + status + "\", \"medianNs\": " + median +
         ", \"samples\": [" + (median == "null" ? "" : median) +
         "], \"maxError\": 0, \"allowedError\": 0.001, \"buildMs\": 10, \"warmUpNs\": 5, "
         "\"kernels\": [], \"spaceBytes\": " +
         std::to_string(space) + ", \"sourceHash\": \"abc\", \"parameters\": " + parameters +
         ", \"seconds\": 1, \"message\": \"" + (status == "ok" ? "" : "it failed") + "\"}";
}

std::string resultsFile(const std::string& variants) {
  return "{\n\"format\": \"weft-bundle-results 1\",\n\"program\": \"conv_4_8_8_4_3_1_1\",\n"
         "\"compiler\": \"weft 0.1.0\",\n\"description\": \"a tiny layer\",\n\"flops\": 18432,\n"
         "\"tolerance\": 0.001,\n\"device\": {\"name\": \"Mali-G72 \", \"vendor\": \"ARM\", "
         "\"driverVersion\": \"v1.r16p0\", \"platformVersion\": \"OpenCL 2.0 v1.r16p0\", "
         "\"deviceVersion\": \"OpenCL 2.0\", \"platformName\": \"ARM Platform\", "
         "\"computeUnits\": 12, \"hostProcessor\": \"\"},\n"
         "\"reference\": " +
         variantLine("reference", "ok", "9000", "{}", 2640) + ",\n\"variants\": [\n" + variants +
         "\n]\n}\n";
}

const std::string kThreeVariants =
    variantLine("v0001", "ok", "1000", R"({"v":1,"unroll":0,"kappa":2})", 500) + ",\n" +
    variantLine("v0002", "ok", "2000", R"({"v":4,"unroll":0,"kappa":1})", 300) + ",\n" +
    variantLine("v0003", "wrong_answer", "null", R"({"v":2,"unroll":1,"kappa":4})", 400);

}  // namespace

TEST_CASE("weft bundle: an unknown layer or profile and a measured folder are errors") {
  TempDir dir("weft_cli_bundle");
  CommandResult bad = runWeft({"bundle", "--layer", "1,2,3", "--samples", "2", "--profile",
                               "pocl-cpu", "--out", dir.file("b")});
  CHECK(bad.exitCode != 0);
  CHECK_MESSAGE(contains(bad.output, "--layer 1,2,3"), bad.output);
  CommandResult vgg = runWeft({"bundle", "--layer", "vgg16:99", "--samples", "2", "--profile",
                               "pocl-cpu", "--out", dir.file("b")});
  CHECK(vgg.exitCode != 0);
  CHECK_MESSAGE(contains(vgg.output, "vgg16:99"), vgg.output);
  CommandResult profile = runWeft({"bundle", "--layer", "4,8,8,4,3,1,1", "--samples", "2",
                                   "--profile", "no-such-device", "--out", dir.file("b")});
  CHECK(profile.exitCode != 0);
  CHECK_MESSAGE(contains(profile.output, "no-such-device"), profile.output);
  CommandResult noProfile =
      runWeft({"bundle", "--layer", "4,8,8,4,3,1,1", "--samples", "2", "--out", dir.file("b")});
  CHECK(noProfile.exitCode != 0);
  CHECK_MESSAGE(contains(noProfile.output, "--profile"), noProfile.output);
  fs::create_directories(dir.path / "measured");
  dir.write("measured/results.json", "{}");
  CommandResult measured = runWeft({"bundle", "--layer", "4,8,8,4,3,1,1", "--samples", "2",
                                    "--profile", "pocl-cpu", "--out", dir.file("measured")});
  CHECK(measured.exitCode != 0);
  CHECK_MESSAGE(contains(measured.output, "already measured"), measured.output);
  CHECK(!fs::exists(dir.path / "b"));
}

TEST_CASE("weft import: missing, malformed and foreign results files are clear errors") {
  TempDir dir("weft_cli_import_bad");
  const std::string db = dir.file("r.db");
  CommandResult missing = runWeft({"import", dir.file("nothing/results.json"), "--db", db});
  CHECK(missing.exitCode != 0);
  CHECK_MESSAGE(contains(missing.output, "no such file"), missing.output);
  CommandResult folder = runWeft({"import", dir.path.string(), "--db", db});  // no results.json
  CHECK(folder.exitCode != 0);
  CHECK_MESSAGE(contains(folder.output, "results.json: no such file"), folder.output);
  dir.write("cut.json", resultsFile(kThreeVariants).substr(0, 300));
  CommandResult cut = runWeft({"import", dir.file("cut.json"), "--db", db});
  CHECK(cut.exitCode != 0);
  CHECK_MESSAGE(contains(cut.output, "not valid JSON"), cut.output);
  dir.write("foreign.json", "{\"rows\": []}");
  CommandResult foreign = runWeft({"import", dir.file("foreign.json"), "--db", db});
  CHECK(foreign.exitCode != 0);
  CHECK_MESSAGE(contains(foreign.output, "not a results file of a weft bundle harness"),
                foreign.output);
  dir.write("status.json",
            resultsFile(variantLine("v0001", "great", "1", R"({"v":1})", 1)));
  CommandResult status = runWeft({"import", dir.file("status.json"), "--db", db});
  CHECK(status.exitCode != 0);
  CHECK_MESSAGE(contains(status.output, "variant 1 (v0001): unknown status 'great'"),
                status.output);
  CHECK(!fs::exists(db));  // nothing was written
}

TEST_CASE("weft import: results land under the device's fingerprint, idempotently") {
  TempDir dir("weft_cli_import");
  const std::string db = dir.file("r.db");
  dir.write("results.json", resultsFile(kThreeVariants));
  CommandResult first = runWeft({"import", dir.file("results.json"), "--db", db});
  REQUIRE_MESSAGE(first.exitCode == 0, first.output);
  CHECK_MESSAGE(contains(first.output, "3 added"), first.output);
  CHECK_MESSAGE(contains(first.output, "reference added"), first.output);
  CHECK_MESSAGE(!contains(first.output, "names no compute units"), first.output);

  // The fingerprint of the device as weft computes it for a device it queries (the name
  // trimmed, as the OpenCL runtime lists it).
  const std::string fingerprint =
      host::profileFingerprint("Mali-G72", "v1.r16p0", "OpenCL 2.0 v1.r16p0", 12, "");
  CHECK_MESSAGE(contains(first.output, fingerprint), first.output);
  {
    explore::ResultsDb results(db);
    std::vector<explore::VariantRecord> rows = results.variants("conv_4_8_8_4_3_1_1", fingerprint);
    REQUIRE(rows.size() == 3);
    // The explorer's canonical keys: sorted, compact.
    CHECK(rows[0].key.parameters == R"({"kappa":2,"unroll":0,"v":1})");
    CHECK(rows[0].key.compiler == "weft 0.1.0");
    CHECK(rows[0].medianNs == 1000u);
    CHECK(rows[2].status == explore::VariantStatus::WrongAnswer);
    CHECK(!rows[2].medianNs);
    CHECK(results.reference("conv_4_8_8_4_3_1_1", fingerprint));
  }
  CommandResult report = runWeft({"report", "--db", db});
  REQUIRE_MESSAGE(report.exitCode == 0, report.output);
  CHECK_MESSAGE(contains(report.output, "conv_4_8_8_4_3_1_1 on device " + fingerprint),
                report.output);
  CHECK_MESSAGE(contains(report.output, "Pareto front (time vs space), 2 of 2 ok variants"),
                report.output);

  CommandResult again = runWeft({"import", dir.path.string(), "--db", db});  // the folder
  REQUIRE_MESSAGE(again.exitCode == 0, again.output);
  CHECK_MESSAGE(contains(again.output, "0 added, 0 replaced a running marker, 3 already there"),
                again.output);
  CHECK_MESSAGE(contains(again.output, "reference already there"), again.output);
  explore::ResultsDb results(db);
  CHECK(results.variants().size() == 3);
}

TEST_CASE("weft import: an older harness's results, without compute units, say so") {
  TempDir dir("weft_cli_import_older");
  std::string older = resultsFile(kThreeVariants);
  const std::string fields = ", \"computeUnits\": 12, \"hostProcessor\": \"\"";
  older.replace(older.find(fields), fields.size(), "");
  dir.write("results.json", older);
  CommandResult imported = runWeft({"import", dir.file("results.json"), "--db", dir.file("r.db")});
  REQUIRE_MESSAGE(imported.exitCode == 0, imported.output);
  CHECK_MESSAGE(contains(imported.output, "names no compute units (an older harness)"),
                imported.output);
  const std::string fingerprint =
      host::profileFingerprint("Mali-G72", "v1.r16p0", "OpenCL 2.0 v1.r16p0", 0, "");
  CHECK_MESSAGE(contains(imported.output, "fingerprint " + fingerprint), imported.output);
}

}  // namespace weft
