// Command-line tests of `weft run --layer ... --pick` that need no OpenCL device: every way a
// pick fails is reported before a device is opened, with a message that says what the results
// database holds (an empty database, an unknown layer with the layers present, a layer without
// ok variants, a budget nothing fits with the smallest variant named), and bad combinations of
// options. The databases are written here with explore/results_db.h. The runs themselves are
// in opencl_cli_run_pick.cpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "explore/explorer.h"
#include "explore/results_db.h"
#include "workloads/conv/conv_layer.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/npy_inputs.h"
#include "tests/support/run_weft.h"

using namespace weft;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::runWeft;
using weft::testing::TempDir;
using weft::testing::writeFloats;

namespace {

const ConvLayer kLayer{2, 6, 6, 4, 3, 1, 1, ""};  // recorded as conv_2_6_6_4_3_1_1

explore::VariantRecord row(const std::string& program, int id, std::optional<uint64_t> ns,
                           int64_t bytes, explore::VariantStatus status) {
  explore::VariantRecord v;
  v.key = {program, "dev1", explore::compilerVersion(), "{\"id\":" + std::to_string(id) + "}"};
  v.status = status;
  if (status == explore::VariantStatus::Ok) v.medianNs = ns;
  v.spaceBytes = bytes;
  return v;
}

std::vector<std::string> layerInputs(const TempDir& dir) {
  testing::ConvLayerData data = testing::randomConvLayerData(kLayer, 4);
  return {writeFloats(dir, "x.npy", {kLayer.C, kLayer.H, kLayer.W}, data.x),
          writeFloats(dir, "w.npy", {kLayer.M, kLayer.C, kLayer.K, kLayer.K}, data.w),
          writeFloats(dir, "b.npy", {kLayer.M}, data.b)};
}

CommandResult pick(const TempDir& dir, const std::string& db, const std::string& layer,
                   const std::string& spec, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run", "--layer", layer, "--db", db, "--pick", spec, "--in"};
  for (const std::string& input : layerInputs(dir)) args.push_back(input);
  args.push_back("--out");
  args.push_back(dir.file("y.npy"));
  for (const std::string& e : extra) args.push_back(e);
  return runWeft(args);
}

}  // namespace

TEST_CASE("weft run --pick: an empty database") {
  TempDir dir("weft_cli_run_pick");
  { explore::ResultsDb create(dir.file("empty.db")); }
  CommandResult result = pick(dir, dir.file("empty.db"), "2,6,6,4,3,1,1", "fastest");
  INFO(result.output);
  CHECK(result.exitCode != 0);
  CHECK(contains(result.output, "holds no variants yet"));
  CHECK(contains(pick(dir, dir.file("missing.db"), "2,6,6,4,3,1,1", "fastest").output,
                 "missing.db: no such results database"));
}

TEST_CASE("weft run --pick: unknown layer, no ok variants, a budget nothing fits") {
  TempDir dir("weft_cli_run_pick");
  const std::string db = dir.file("results.db");
  {
    explore::ResultsDb writer(db);
    writer.record(row("conv_2_6_6_4_3_1_1", 0, 100'000, 3'000'000, explore::VariantStatus::Ok));
    writer.record(row("conv_2_6_6_4_3_1_1", 1, 50'000, 4'000'000, explore::VariantStatus::Ok));
    writer.record(row("conv_2_6_6_4_3_1_1", 2, std::nullopt, 10, explore::VariantStatus::Crashed));
    writer.record(row("conv1_2", 0, std::nullopt, 10, explore::VariantStatus::WrongAnswer));
  }
  // Another padding: the same input shapes, an unexplored layer.
  CommandResult unknown = pick(dir, db, "2,6,6,4,3,1,2", "fastest");
  INFO(unknown.output);
  CHECK(unknown.exitCode != 0);
  CHECK(contains(unknown.output, "no variants of 'conv_2_6_6_4_3_1_2'"));
  CHECK(contains(unknown.output, "2 programs: conv1_2, conv_2_6_6_4_3_1_1"));

  CommandResult tight = pick(dir, db, "2,6,6,4,3,1,1", "budget=2MB");
  INFO(tight.output);
  CHECK(tight.exitCode != 0);
  CHECK(contains(tight.output, "no ok variant of conv_2_6_6_4_3_1_1 fits in a budget of 2.000 MB"));
  CHECK(contains(tight.output, "the smallest of 2 ok variants takes 3.000 MB (3000000 bytes)"));
  CHECK(contains(tight.output, "{\"id\":0}"));
  CHECK(!contains(tight.output, "picked"));

  CommandResult bad = pick(dir, db, "vgg16:2", "fastest");
  INFO(bad.output);
  CHECK(bad.exitCode != 0);
  // conv1_2's inputs are 64x224x224: the shapes are checked before anything else runs.
  CHECK(contains(bad.output, "must have shape (C, H, W) = (64, 224, 224)"));
}

TEST_CASE("weft run --pick: a layer without ok variants") {
  TempDir dir("weft_cli_run_pick");
  const std::string db = dir.file("results.db");
  {
    explore::ResultsDb writer(db);
    writer.record(row("conv_2_6_6_4_3_1_1", 0, std::nullopt, 10, explore::VariantStatus::Timeout));
    writer.record(row("conv_2_6_6_4_3_1_1", 1, std::nullopt, 10, explore::VariantStatus::BuildError));
  }
  CommandResult result = pick(dir, db, "2,6,6,4,3,1,1", "knee");
  INFO(result.output);
  CHECK(result.exitCode != 0);
  CHECK(contains(result.output, "no ok variants of conv_2_6_6_4_3_1_1"));
  CHECK(contains(result.output, "2 recorded: 1 build_error, 1 timeout"));
}

TEST_CASE("weft run --pick: bad specs and option combinations") {
  TempDir dir("weft_cli_run_pick");
  const std::string db = dir.file("results.db");
  { explore::ResultsDb create(db); }
  CHECK(contains(pick(dir, db, "2,6,6,4,3,1,1", "quickest").output,
                 "expected fastest, smallest, knee, budget=SIZE"));
  CHECK(contains(pick(dir, db, "2,6,6,4,3,1,1", "budget=much").output, "not a memory size"));
  CHECK(contains(pick(dir, db, "2,6,6,4,3,1,1", "fastest", {"--backend", "interp"}).output,
                 "drop --backend interp"));
  CommandResult noDb = runWeft({"run", "--layer", "2,6,6,4,3,1,1", "--pick", "fastest"});
  CHECK(noDb.exitCode != 0);
  CHECK(contains(noDb.output, "needs --db FILE"));
  // A program file is picked among its own records (none in this database).
  const std::string a = writeFloats(dir, "a.npy", {4}, {1, 2, 3, 4});
  CommandResult notExplored =
      runWeft({"run", "examples/dot.weft", "--in", a, a, "--db", db, "--pick", "fastest"});
  CHECK(notExplored.exitCode != 0);
  CAPTURE(notExplored.output);
  CHECK(contains(notExplored.output, "holds no variants yet"));
  CommandResult fileDbAlone = runWeft({"run", "examples/dot.weft", "--in", a, a, "--db", db});
  CHECK(fileDbAlone.exitCode != 0);
  CHECK(contains(fileDbAlone.output, "go with --pick"));
  CommandResult dbAlone = runWeft({"run", "--layer", "2,6,6,4,3,1,1", "--db", db});
  CHECK(dbAlone.exitCode != 0);
  CHECK(contains(dbAlone.output, "go with --pick"));
}
