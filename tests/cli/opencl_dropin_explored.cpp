// Issue 7's end-to-end requirement on a real exploration: the real `weft` binary explores two
// small layers (`weft explore --layer ... --samples 6`: two conv-direct, two register-blocked
// vector and two Winograd variants each, measured on the OpenCL device), `weft emit --db --pick`
// exports the fastest and the smallest variant of each, and the drop-in example
// (examples/dropin, nothing from weft linked in) is built by CMake against each export, run on
// the device and compared with the independent reference convolution of
// tests/support/conv_layer_reference.h. One CMake build folder serves every export.
//
// Preparation: a register-blocked vector export re-lays its weights out in PREFIX_prepare (the
// manifest lists its preparation kernels and the buffers they write); the example prepares once
// and runs twice, so the second run reads what the preparation left; a Winograd export prepares
// its weights' transform the same way. Whether or not a pick is of those families, a recorded
// vector and a recorded Winograd variant of the first layer are also exported by their parameters
// (--params), built and compared, so the preparation is always exercised; that export run
// without PREFIX_prepare must be refused with PREFIX_ERROR_NOT_PREPARED, and run with the
// original weights released after PREFIX_prepare (NULL passed for them) it must still be
// right. When no pick is a conv-direct variant (with few samples of small layers the fastest
// and the smallest are often the same vector variant), a recorded conv-direct variant is
// exported the same way.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "explore/results_db.h"
#include "workloads/conv/conv_layer.h"
#include "tests/support/conv_layer_reference.h"
#include "tests/support/dropin_example.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::CommandResult;
using weft::testing::contains;
using weft::testing::readTextFile;
using weft::testing::runWeft;
using weft::testing::TempDir;

namespace weft {
namespace {

// Both layers admit every family: kappa in {4, 8} divides M = 8 and 16, sigma in {2, 4}
// divides the output widths 16 and 12, and both are 3x3 stride-1 layers whose outputs 2 divides.
const std::vector<std::string> kLayers = {"8,16,16,8,3,1,1", "4,12,12,16,3,1,1"};

std::string programName(const std::string& layer) {
  std::string name = "conv_" + layer;
  for (char& c : name) c = c == ',' ? '_' : c;
  return name;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// "vector" (register-blocked vector), "winograd" or "direct" (conv-direct).
std::string familyOf(const nlohmann::json& parameters) {
  if (parameters.contains("winograd_m")) return "winograd";
  if (parameters.contains("vector_kappa")) return "vector";
  return "direct";
}

// The families whose variants re-lay out or transform the weights once (preparation).
bool prepares(const std::string& family) { return family != "direct"; }

// The parameters of the first ok variant of `program` in the database of `family` as --params
// text; "" when there is none.
std::string recordedParameters(const fs::path& db, const std::string& program,
                               const std::string& family) {
  explore::ResultsDb results(db);
  for (const explore::VariantRecord& record : results.variants(program)) {
    nlohmann::json parameters = nlohmann::json::parse(record.key.parameters);
    if (record.status != explore::VariantStatus::Ok || familyOf(parameters) != family) {
      continue;
    }
    std::string text;
    for (const auto& [name, value] : parameters.items()) {
      text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value.get<int64_t>());
    }
    return text;
  }
  return "";
}

struct Export {
  fs::path folder;
  std::string prefix;
  nlohmann::json manifest;
};

Export readExport(const fs::path& folder, const std::string& prefix) {
  Export out{folder, prefix, nlohmann::json::parse(readTextFile(folder / (prefix + ".json")))};
  return out;
}

// A vector or Winograd export must name its preparation: the weight re-layout (and transform)
// kernels and the buffers they write, which only they write and the run reads.
void checkPreparation(const Export& e) {
  const nlohmann::json& preparation = e.manifest["preparation"];
  CHECK(e.manifest["constantInputs"] == nlohmann::json({"weights", "biases"}));
  if (!prepares(familyOf(e.manifest["parameters"]))) return;
  REQUIRE_MESSAGE(!preparation["kernels"].empty(), e.manifest.dump(2));
  CHECK(!preparation["buffers"].empty());
  CHECK(e.manifest["kernels"][0]["preparation"] == true);  // the re-layout comes first
  CHECK(e.manifest["kernels"].back()["preparation"] == false);
  CHECK(contains(readTextFile(e.folder / "README.md"), upper(e.prefix) + "_ERROR_NOT_PREPARED"));
}

// Builds the example against the export, runs it (prepare once, two runs) and compares.
void buildRunAndCompare(const Export& e, const fs::path& build, const fs::path& data,
                        const ConvLayer& layer, const testing::ConvLayerData& values) {
  testing::buildDropinExample(e.folder, e.prefix, build);
  testing::DropinRun run = testing::runDropinExample(build, data, "--repeat 2");
  REQUIRE_MESSAGE(run.exitCode == 0, run.output);
  MESSAGE(e.manifest["program"].get<std::string>() << ": " << run.output);
  size_t preparationKernels = e.manifest["preparation"]["kernels"].size();
  const std::string prepared = "(" + std::to_string(preparationKernels) + " kernels, once)";
  CHECK_MESSAGE(contains(run.output, "prepare "), run.output);
  CHECK_MESSAGE(contains(run.output, prepared), run.output);
  testing::checkDropinOutput(data, layer, values);
}

}  // namespace

TEST_CASE("explored layers: the fastest and the smallest export run in the drop-in example") {
  TempDir dir("weft_dropin_explored");
  const fs::path db = dir.path / "results.db";
  const fs::path build = dir.path / "build";
  std::set<std::string> familiesPicked;
  for (size_t l = 0; l < kLayers.size(); ++l) {
    const std::string& spec = kLayers[l];
    CAPTURE(spec);
    ConvLayer layer = parseConvLayer(spec);
    CommandResult explored =
        runWeft({"explore", "--layer", spec, "--samples", "6", "--db", db.string(), "--min-time",
                 "2", "--min-repeats", "2", "--timeout", "60", "--quiet"});
    REQUIRE_MESSAGE(explored.exitCode == 0, explored.output);
    {
      explore::ResultsDb results(db);
      int ok = 0;
      std::map<std::string, int> perFamily;
      for (const explore::VariantRecord& record : results.variants(programName(spec))) {
        if (record.status != explore::VariantStatus::Ok) continue;
        ++ok;
        ++perFamily[familyOf(nlohmann::json::parse(record.key.parameters))];
      }
      MESSAGE(spec << ": " << ok << " ok variants, " << perFamily["vector"]
                   << " register-blocked vector, " << perFamily["winograd"] << " Winograd");
      REQUIRE(ok >= 2);
      // Every family sampled (an equal share each).
      CHECK(perFamily["vector"] >= 1);
      CHECK(perFamily["winograd"] >= 1);
    }

    const fs::path data = dir.path / ("data" + std::to_string(l));
    fs::create_directories(data);
    testing::ConvLayerData values = testing::randomConvLayerData(layer, 100 + unsigned(l));
    testing::writeListing3Inputs(layer, values, data);
    const std::string prefix = "weft_" + programName(spec);
    for (const std::string pick : {"fastest", "smallest"}) {
      CAPTURE(pick);
      const fs::path out = dir.path / (programName(spec) + "_" + pick);
      CommandResult emitted = runWeft(
          {"emit", "--db", db.string(), "--layer", spec, "--pick", pick, "--out", out.string()});
      REQUIRE_MESSAGE(emitted.exitCode == 0, emitted.output);
      Export e = readExport(out, prefix);
      CHECK(contains(e.manifest["tuning"].get<std::string>(), "--pick " + pick));
      familiesPicked.insert(familyOf(e.manifest["parameters"]));
      checkPreparation(e);
      buildRunAndCompare(e, build, data, layer, values);
    }
  }

  // Every family from the same database by its recorded parameters (--params): the
  // register-blocked vector and Winograd ones always (their preparation, and the refusal
  // without it), the conv-direct one when no pick was of that family (the picks of these small
  // layers often are one and the same variant).
  const std::string spec = kLayers[0];
  ConvLayer layer = parseConvLayer(spec);
  const fs::path data = dir.path / "data0";
  testing::ConvLayerData values = testing::randomConvLayerData(layer, 100);
  for (const std::string family : {"vector", "winograd", "direct"}) {
    CAPTURE(family);
    if (!prepares(family) && familiesPicked.count(family)) continue;
    std::string params = recordedParameters(db, programName(spec), family);
    REQUIRE_MESSAGE(!params.empty(), "no ok variant of the family was recorded for " << spec);
    if (!familiesPicked.count(family)) MESSAGE("no pick of the family; exporting " << params);
    const fs::path out = dir.path / (family + "_params");
    CommandResult emitted =
        runWeft({"emit", "--layer", spec, "--params", params, "--out", out.string()});
    REQUIRE_MESSAGE(emitted.exitCode == 0, emitted.output);
    Export e = readExport(out, "weft_" + programName(spec));
    REQUIRE(familyOf(e.manifest["parameters"]) == family);
    checkPreparation(e);
    buildRunAndCompare(e, build, data, layer, values);
    if (!prepares(family)) continue;

    // The original weights are read only by the re-layout: released after PREFIX_prepare (the
    // runs get NULL for them, PREFIX_run_reads says so), the runs still give the right output.
    const nlohmann::json& releasable = e.manifest["preparation"]["releasableInputs"];
    CHECK(releasable == nlohmann::json::array({"weights"}));
    testing::DropinRun released =
        testing::runDropinExample(build, data, "--release-prepared --repeat 2");
    REQUIRE_MESSAGE(released.exitCode == 0, released.output);
    CHECK_MESSAGE(contains(released.output, "released weights"), released.output);
    CHECK_FALSE(contains(released.output, "released biases"));
    testing::checkDropinOutput(data, layer, values);

    // Without PREFIX_prepare the run refuses the handle, by name.
    testing::DropinRun unprepared = testing::runDropinExample(build, data, "--no-prepare");
    CHECK(unprepared.exitCode != 0);
    CHECK_MESSAGE(contains(unprepared.output, upper(e.prefix) + "_ERROR_NOT_PREPARED"),
                  unprepared.output);
    CHECK_FALSE(fs::exists(data / "y.npy"));
  }
}

}  // namespace weft
