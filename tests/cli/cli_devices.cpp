// Tests of `weft devices`: runs the built binary ($WEFT_BINARY) and checks the JSON document
// (platforms, devices with their profiles, exactly one default, the built-in profiles), the
// text listing, user profile folders (a good file is listed with its path, a broken one is
// reported and skipped), a --device selector, and the behaviour without any OpenCL platform
// (simulated by pointing the ICD loader at an empty vendors folder): a clear message, exit
// status 0, and the built-in profiles still listed.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/run_weft.h"

namespace fs = std::filesystem;

namespace {

using RunResult = weft::testing::SeparateOutputs;
using weft::testing::contains;

const fs::path& tempDir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("weft_cli_devices_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// Runs `env... weft args` and captures its output.
RunResult runWeft(const std::string& args, const std::string& env = "") {
  return weft::testing::runWeftShell(args, tempDir(), env);
}

// An ICD vendors folder with no drivers: ocl-icd then finds no platform.
std::string noOpenCL() {
  fs::path vendors = tempDir() / "no-vendors";
  fs::create_directories(vendors);
  return "OCL_ICD_VENDORS='" + vendors.string() + "'";
}

}  // namespace

TEST_CASE("weft devices --json lists devices, their profiles and the built-in profiles") {
  RunResult r = runWeft("devices --json");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::vector<std::string> builtins;
  for (const auto& p : doc["profiles"]) {
    if (p["origin"] == "built-in") builtins.push_back(p["name"]);
  }
  CHECK(builtins ==
        std::vector<std::string>{"mali-g72", "nvidia-generic", "nvidia-hopper", "pocl-cpu"});

  if (doc["error"].is_null()) {
    REQUIRE(!doc["devices"].empty());
    int defaults = 0;
    for (const auto& d : doc["devices"]) {
      if (d["default"].get<bool>()) ++defaults;
      CHECK(d["profile"]["deviceName"] == d["name"]);
      CHECK(d["profile"]["computeUnits"].get<int>() >= 1);
    }
    CHECK(defaults == 1);
    CHECK(doc["devices"][doc["defaultDevice"].get<int>()]["default"].get<bool>());
    CHECK(!doc["platforms"].empty());
  } else {
    CHECK(contains(doc["error"].get<std::string>(), "no OpenCL"));
  }
}

TEST_CASE("weft devices prints the devices and marks the default") {
  RunResult r = runWeft("devices");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(contains(r.out, "Device profiles"));
  CHECK(contains(r.out, "mali-g72"));
  CHECK(contains(r.out, "nvidia-generic"));
  CHECK(contains(r.out, "pocl-cpu"));
  if (!contains(r.out, "no OpenCL platform found")) {
    CHECK(contains(r.out, "[default]"));
    CHECK(contains(r.out, "compute unit"));
    CHECK(contains(r.out, "fingerprint "));
    // Which profile an exploration here uses, and where its register figure comes from.
    CHECK(contains(r.out, "profile: queried from the device, what weft explore uses here"));
    CHECK(contains(r.out, "registers per work-item: "));
  }
  // The built-in CPU entry names the class it describes, not one machine.
  CHECK(contains(r.out, "PoCL CPU, AVX-512 class"));
}

TEST_CASE("without an OpenCL platform weft devices says so and exits 0") {
  RunResult r = runWeft("devices", noOpenCL());
  CHECK_MESSAGE(r.status == 0, r.err);
  CHECK(contains(r.out,
                 "no OpenCL platform found: install an OpenCL driver (e.g. apt-get "
                 "install pocl-opencl-icd)"));
  CHECK(contains(r.out, "pocl-cpu"));

  RunResult json = runWeft("devices --json", noOpenCL());
  REQUIRE(json.status == 0);
  nlohmann::json doc = nlohmann::json::parse(json.out);
  CHECK(doc["devices"].empty());
  CHECK(doc["defaultDevice"].is_null());
  CHECK(contains(doc["error"].get<std::string>(), "no OpenCL platform found"));
  CHECK(doc["profiles"].size() >= 3);
}

TEST_CASE("weft devices lists user profiles and reports broken ones") {
  fs::path dir = tempDir() / "profiles";
  fs::create_directories(dir);
  // A valid user profile: a built-in one renamed.
  RunResult builtin = runWeft("devices --json", noOpenCL());
  nlohmann::json doc = nlohmann::json::parse(builtin.out);
  nlohmann::json mine = doc["profiles"][0];
  mine.erase("origin");
  mine["name"] = "lab-board";
  std::ofstream(dir / "lab-board.json") << mine.dump(2);
  std::ofstream(dir / "broken.json") << "{\n  \"name\": \"broken\",\n";

  RunResult r = runWeft("devices --profile-dir '" + dir.string() + "'", noOpenCL());
  REQUIRE_MESSAGE(r.status == 0, r.err);
  CHECK(contains(r.out, "lab-board"));
  CHECK(contains(r.out, "[" + (dir / "lab-board.json").string() + "]"));
  CHECK(contains(r.out, "skipped: " + (dir / "broken.json").string() + ":"));
  CHECK(contains(r.out, "invalid JSON"));
}

TEST_CASE("weft devices --device shows the chosen device or lists the devices") {
  RunResult r = runWeft("devices --device no-such-device-anywhere");
  if (contains(r.out, "no OpenCL platform found")) return;  // nothing to choose from
  CHECK(r.status == 1);
  CHECK(contains(r.err,
                 "no OpenCL device, platform or vendor name contains "
                 "'no-such-device-anywhere'"));
  CHECK(contains(r.err, "0: "));  // the listing

  RunResult chosen = runWeft("devices --device 0");
  CHECK(chosen.status == 0);
  CHECK(contains(chosen.out, "[chosen by --device 0]"));
}

TEST_CASE("weft devices --help shows an example") {
  RunResult r = runWeft("devices --help");
  CHECK(r.status == 0);
  CHECK(contains(r.out, "Example:"));
  CHECK(contains(r.out, "--json"));
  CHECK(contains(r.out, "--device"));
}
