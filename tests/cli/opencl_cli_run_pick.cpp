// End-to-end tests of `weft run --layer ... --db ... --pick`: a tiny layer is explored into a
// temporary results database (weft explore, 4 variants of one
// structure, v = 2), then the fastest, smallest and knee
// variants are rebuilt from their recorded parameters and run on random inputs; each output
// must equal the plain NCHW loops of tests/support/conv_layer_reference.h and the interpreter
// backend's. Also: the shape check with --pick, and picking among several devices (the
// running device's results are preferred; --db-device names another; a layer explored only on
// other devices lists them). Label opencl: skipped where no OpenCL platform exists.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/results_db.h"
#include "workloads/conv/conv_layer.h"
#include "ir/npy.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/npy_inputs.h"
#include "tests/support/run_weft.h"

using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace {

const ConvLayer kLayer{4, 8, 8, 4, 3, 1, 1, ""};
const std::string kSpec = "4,8,8,4,3,1,1";

CommandResult runPicked(const std::string& db,
                        const std::vector<std::string>& inputs, const std::string& spec,
                        const std::string& out, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run", "--layer", kSpec, "--db", db, "--pick", spec, "--in"};
  for (const std::string& input : inputs) args.push_back(input);
  args.push_back("--out");
  args.push_back(out);
  for (const std::string& e : extra) args.push_back(e);
  return runWeft(args);
}

}  // namespace

TEST_CASE("weft run --pick runs explored variants that compute the layer") {
  TempDir dir("weft_cli_run_pick_opencl");
  const std::string db = dir.file("results.db");
  CommandResult explored = runWeft(
      {"explore", "--layer", kSpec, "--samples", "4", "--vector-width", "2", "--unroll", "0",
       "--min-time", "1", "--db", db, "--timeout", "60"});
  INFO(explored.output);
  REQUIRE(explored.exitCode == 0);

  testing::ConvLayerData data = testing::randomConvLayerData(kLayer, 21);
  std::vector<std::string> inputs = testing::writeLayerInputs(dir, kLayer, data);
  CommandResult interp = runWeft({"run", "--layer", kSpec, "--in", inputs[0], inputs[1],
                                  inputs[2], "--out", dir.file("interp.npy")});
  REQUIRE(interp.exitCode == 0);
  const NpyArray expected = readNpy(dir.file("interp.npy"));

  for (const std::string spec : {"fastest", "smallest", "knee", "budget=1GB"}) {
    CAPTURE(spec);
    const std::string out = dir.file("picked.npy");
    CommandResult result = runPicked(db, inputs, spec, out);
    INFO(result.output);
    REQUIRE(result.exitCode == 0);
    CHECK(contains(result.output, "picked {"));
    CHECK(contains(result.output, "\"v\":"));
    CHECK(contains(result.output, "recorded median"));
    CHECK(contains(result.output, "ms kernel time"));
    const std::string why = spec == "budget=1GB" ? "fastest within 1000.000 MB" : spec;
    CHECK(contains(result.output, why));
    NpyArray y = readNpy(out);
    CHECK(y.shape == std::vector<int64_t>{kLayer.M, kLayer.outH(), kLayer.outW()});
    testing::ConvMismatches mismatches = testing::compareWithReference(kLayer, data, y.f32);
    CHECK_MESSAGE(mismatches.count == 0, mismatches.first);
    REQUIRE(y.f32.size() == expected.f32.size());
    double worst = 0;
    for (size_t i = 0; i < y.f32.size(); ++i) {
      worst = std::max(worst, static_cast<double>(std::fabs(y.f32[i] - expected.f32[i])));
    }
    CHECK(worst < 1e-4);
  }
  // fastest and budget=1GB (everything fits) pick the same variant.
  CommandResult fastest = runPicked(db, inputs, "fastest", dir.file("out_a.npy"));
  CommandResult budget = runPicked(db, inputs, "budget=1GB", dir.file("out_b.npy"));
  auto pickedLine = [](const std::string& output) {
    return output.substr(0, output.find(" ("));
  };
  CHECK(pickedLine(fastest.output) == pickedLine(budget.output));

  // Wrong shapes are refused before anything runs.
  std::vector<std::string> wrong = inputs;
  wrong[1] = testing::writeFloats(dir, "w_bad.npy", {4, 4, 3, 2}, std::vector<float>(96, 0.f));
  CommandResult shape = runPicked(db, wrong, "fastest", dir.file("out_c.npy"));
  CHECK(shape.exitCode != 0);
  CHECK(contains(shape.output, "must have shape (M, C, K, K) = (4, 4, 3, 3)"));

  // Other devices in the database: this device's results are still preferred; --db-device
  // picks another's (here a row that is no conv-direct variant, refused clearly).
  {
    explore::ResultsDb writer(db);
    explore::VariantRecord other;
    other.key = {"conv_4_8_8_4_3_1_1", "otherdevice", explore::compilerVersion(), "{\"id\":1}"};
    other.status = explore::VariantStatus::Ok;
    other.medianNs = 1;
    other.spaceBytes = 1;
    writer.record(other);
    other.key.program = "conv_2_6_6_4_3_1_1";
    writer.record(other);
    other.key.device = "thirddevice";
    writer.record(other);
  }
  CommandResult preferred = runPicked(db, inputs, "fastest", dir.file("out_d.npy"));
  INFO(preferred.output);
  CHECK(preferred.exitCode == 0);
  CHECK(!contains(preferred.output, "otherdevice"));
  CommandResult named =
      runPicked(db, inputs, "fastest", dir.file("out_e.npy"), {"--db-device", "otherdevice"});
  CHECK(named.exitCode != 0);
  CHECK(contains(named.output, "is not a conv variant"));
  CommandResult several = runWeft({"run", "--layer", "2,6,6,4,3,1,1", "--db", db, "--pick",
                                   "fastest", "--in",
                                   testing::writeFloats(dir, "x2.npy", {2, 6, 6}, std::vector<float>(72)),
                                   testing::writeFloats(dir, "w2.npy", {4, 2, 3, 3}, std::vector<float>(72)),
                                   testing::writeFloats(dir, "b2.npy", {4}, std::vector<float>(4)),
                                   "--out", dir.file("out_f.npy")});
  CHECK(several.exitCode != 0);
  CHECK(contains(several.output, "explored on 2 devices"));
  CHECK(contains(several.output, "otherdevice (1 variant), thirddevice (1 variant)"));
}
