// Tests of device profiles (host/device_profile.h) that need no OpenCL device: the built-in
// profiles (present, sane, equal to the files in host/profiles/ they were embedded from), JSON
// round trips (fixed and random profiles), the lookup by name and path through user folders,
// and the error messages for unknown profiles, malformed JSON and invalid fields, each naming
// the file. Also the register heuristic and the fingerprint (against an independent FNV-1a
// value computed with Python).
#include <doctest/doctest.h>
#include <rapidcheck.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "host/device_profile.h"

namespace fs = std::filesystem;
using weft::host::DeviceProfile;
using weft::host::LocalMemoryType;
using weft::host::ProfileError;

namespace {

// A scratch folder for this test process, removed at exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("weft_test_device_profile_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const TempDir& temp() {
  static TempDir dir;
  return dir;
}

fs::path writeFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path sourceDir() {
  const char* dir = std::getenv("WEFT_SOURCE_DIR");
  return dir ? fs::path(dir) : fs::current_path();
}

const DeviceProfile& builtin(const std::string& name) {
  for (const DeviceProfile& p : weft::host::builtinProfiles()) {
    if (p.name == name) return p;
  }
  FAIL("no built-in profile " << name);
  throw 0;  // unreachable
}

// The JSON text of a valid profile with one field replaced (or removed when value is null).
std::string variant(const std::string& key, const nlohmann::ordered_json& value) {
  nlohmann::ordered_json json = weft::host::profileToJson(builtin("mali-g72"));
  if (value.is_null()) {
    json.erase(key);
  } else {
    json[key] = value;
  }
  return json.dump(2);
}

// Expects loading `text` from a file to fail with a message containing `needle` and starting
// with the file's path.
void expectFileError(const std::string& fileName, const std::string& text,
                     const std::string& needle) {
  fs::path path = writeFile(temp().path / "bad" / fileName, text);
  try {
    weft::host::loadProfileFile(path);
    FAIL("loading " << path << " should fail with: " << needle);
  } catch (const ProfileError& e) {
    std::string message = e.what();
    CHECK_MESSAGE(message.rfind(path.string(), 0) == 0, message);
    CHECK_MESSAGE(message.find(needle) != std::string::npos, message);
  }
}

}  // namespace

TEST_CASE("the built-in profiles are mali-g72, nvidia-generic, nvidia-hopper and pocl-cpu, sane") {
  const auto& profiles = weft::host::builtinProfiles();
  REQUIRE(profiles.size() == 4);
  CHECK(profiles[0].name == "mali-g72");
  CHECK(profiles[1].name == "nvidia-generic");
  CHECK(profiles[2].name == "nvidia-hopper");
  CHECK(profiles[3].name == "pocl-cpu");
  for (const DeviceProfile& p : profiles) {
    INFO(p.name);
    CHECK(p.computeUnits >= 1);
    for (std::int64_t size : p.maxWorkItemSizes) {
      CHECK(size >= 1);
      CHECK(size <= p.maxWorkGroupSize);
    }
    CHECK(p.maxWorkGroupSize % p.workGroupMultiple == 0);
    CHECK(p.localMemoryBytes >= 16 * 1024);  // OpenCL's minimum (embedded profile)
    CHECK(p.maxConstantBufferBytes >= 64 * 1024);
    CHECK(p.maxAllocationBytes * 4 >= p.globalMemoryBytes);  // OpenCL: at least a quarter
    CHECK(p.maxAllocationBytes <= p.globalMemoryBytes);
    CHECK(p.registersPerWorkItem >= 32);
    CHECK(p.fingerprint.size() == 16);
    CHECK(p.source.size() > 40);
  }

  const DeviceProfile& mali = builtin("mali-g72");
  CHECK(mali.deviceType == "gpu");
  CHECK(mali.computeUnits == 12);
  CHECK(mali.maxClockMHz == 767);
  CHECK(mali.maxWorkGroupSize == 384);
  CHECK(mali.localMemoryBytes == 32 * 1024);
  CHECK_FALSE(mali.hasDedicatedLocalMemory());
  CHECK(mali.preferredFloatVectorWidth == 4);
  CHECK(mali.registersPerWorkItem == 64);
  CHECK(mali.registersPerWorkGroup == 384 * 32);
  CHECK(mali.fp16);

  // What an H200 reported through NVIDIA's OpenCL (bench/results/nvidia-h200).
  const DeviceProfile& hopper = builtin("nvidia-hopper");
  CHECK(hopper.deviceType == "gpu");
  CHECK(hopper.computeUnits == 132);
  CHECK(hopper.maxClockMHz == 1980);
  CHECK(hopper.maxWorkGroupSize == 1024);
  CHECK(hopper.localMemoryBytes == 48 * 1024);
  CHECK(hopper.hasDedicatedLocalMemory());
  CHECK(hopper.registersPerWorkItem == 255);
  CHECK(hopper.registersPerWorkGroup == 65536);
  CHECK_FALSE(hopper.fp16);

  const DeviceProfile& nvidia = builtin("nvidia-generic");
  CHECK(nvidia.maxWorkGroupSize == 1024);
  CHECK(nvidia.maxWorkItemSizes == std::array<std::int64_t, 3>{1024, 1024, 64});
  CHECK(nvidia.localMemoryBytes == 48 * 1024);
  CHECK(nvidia.hasDedicatedLocalMemory());
  CHECK(nvidia.workGroupMultiple == 32);
  CHECK(nvidia.preferredFloatVectorWidth == 1);
  CHECK(nvidia.registersPerWorkItem == 255);
  CHECK(nvidia.registersPerWorkGroup == 65536);

  const DeviceProfile& pocl = builtin("pocl-cpu");
  CHECK(pocl.deviceType == "cpu");
  CHECK(pocl.computeUnits == 2);
  CHECK(pocl.maxWorkGroupSize == 4096);
  CHECK(pocl.localMemoryBytes == 1024 * 1024);
  CHECK(pocl.localMemoryType == LocalMemoryType::Global);
  CHECK(pocl.preferredFloatVectorWidth == 16);
  CHECK_FALSE(pocl.fp16);
  CHECK(pocl.nontemporalStores);
  CHECK_FALSE(nvidia.nontemporalStores);
  CHECK(pocl.cacheLineBytes == 64);   // as PoCL reports it (clinfo)
  CHECK(nvidia.cacheLineBytes == 0);  // not stated: unknown
  // The profile's register budget is the documented CPU heuristic.
  CHECK(pocl.registersPerWorkItem ==
        weft::host::estimateRegistersPerWorkItem("cpu", pocl.vendor, 16));
}

TEST_CASE("the embedded profiles are exactly the files in host/profiles/") {
  fs::path dir = sourceDir() / "host" / "profiles";
  REQUIRE_MESSAGE(fs::is_directory(dir), dir);
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  auto embedded = weft::host::builtinProfileTexts();
  REQUIRE(embedded.size() == files.size());
  for (const auto& [name, text] : embedded) {
    INFO(name);
    REQUIRE(fs::exists(dir / name));
    CHECK(text == readFile(dir / name));
    // Each file's profile is named like the file.
    CHECK(weft::host::loadProfileFile(dir / name).name == fs::path(name).stem().string());
  }
}

TEST_CASE("profiles survive a JSON round trip") {
  for (const DeviceProfile& p : weft::host::builtinProfiles()) {
    INFO(p.name);
    nlohmann::ordered_json json = weft::host::profileToJson(p);
    CHECK(weft::host::profileFromJson(json, "test") == p);
    CHECK(weft::host::parseProfile(json.dump(2), "test") == p);
    // Keys come out in declaration order, starting with the name.
    CHECK(json.begin().key() == "name");
    CHECK(json["localMemoryType"] == (p.hasDedicatedLocalMemory() ? "local" : "global"));
  }
}

TEST_CASE("random valid profiles survive a JSON round trip") {
  const int widths[] = {1, 2, 3, 4, 8, 16};
  // Strings of ASCII characters, control characters, quotes and backslashes included (JSON
  // text must be UTF-8; device names from drivers are ASCII in practice).
  auto text = [] { return *rc::gen::container<std::string>(rc::gen::inRange<char>(1, 127)); };
  bool ok = rc::check([&] {
    DeviceProfile p;
    p.name = "p" + std::to_string(*rc::gen::inRange(0, 100000));
    p.deviceName = text();
    p.vendor = text();
    p.deviceType = *rc::gen::element<std::string>("gpu", "cpu", "accelerator");
    p.driverVersion = text();
    p.platformVersion = text();
    p.computeUnits = *rc::gen::inRange(1, 1 << 20);
    p.maxClockMHz = *rc::gen::inRange(0, 10000);
    p.maxWorkGroupSize = *rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 40);
    for (auto& size : p.maxWorkItemSizes) size = *rc::gen::inRange<std::int64_t>(1, 1 << 20);
    p.workGroupMultiple = *rc::gen::inRange(1, 128);
    p.localMemoryBytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 40);
    p.localMemoryType = *rc::gen::element(LocalMemoryType::Local, LocalMemoryType::Global);
    p.maxConstantBufferBytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 40);
    p.globalMemoryBytes = *rc::gen::inRange<std::int64_t>(1, std::int64_t{1} << 50);
    p.maxAllocationBytes = *rc::gen::inRange<std::int64_t>(1, p.globalMemoryBytes + 1);
    p.preferredFloatVectorWidth = widths[*rc::gen::inRange(0, 6)];
    p.nativeFloatVectorWidth = widths[*rc::gen::inRange(0, 6)];
    p.registersPerWorkItem = *rc::gen::inRange(1, 100000);
    p.registersPerWorkGroup = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 40);
    p.fmaLanesPerCycle = *rc::gen::inRange(0, 1000) / 10.0;
    p.fmaHalfWidthLanesPerCycle = *rc::gen::inRange(0, 1000) / 10.0;
    p.fmaLatencyCycles = *rc::gen::inRange(0, 200) / 10.0;
    p.vectorLoadsPerCycle = *rc::gen::inRange(0, 100) / 10.0;
    p.secondLevelBytesPerCycle = *rc::gen::inRange(0, 1000) / 10.0;
    p.fp64 = *rc::gen::arbitrary<bool>();
    p.fp16 = *rc::gen::arbitrary<bool>();
    p.nontemporalStores = *rc::gen::arbitrary<bool>();
    p.cacheLineBytes = *rc::gen::inRange(0, 4097);
    p.firstLevelCacheBytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 30);
    p.secondLevelCacheBytes = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 30);
    p.hostProcessor = *rc::gen::element<std::string>("", "AuthenticAMD family 26 model 2",
                                                     "implementer 0x41 part 0xd0c");
    p.fingerprint = weft::host::profileFingerprint(p.deviceName, p.driverVersion, p.platformVersion,
                                                   p.computeUnits, p.hostProcessor);
    p.source = text();
    std::string text = weft::host::profileToJson(p).dump();
    RC_ASSERT(weft::host::parseProfile(text, "random") == p);
  });
  CHECK(ok);
}

TEST_CASE("optional fields take their defaults") {
  std::string text = R"({
    "name": "tiny", "deviceType": "cpu", "computeUnits": 1, "maxClockMHz": 0,
    "maxWorkGroupSize": 8, "maxWorkItemSizes": [8, 8, 8], "workGroupMultiple": 1,
    "localMemoryBytes": 32768, "localMemoryType": "global", "maxConstantBufferBytes": 65536,
    "maxAllocationBytes": 1024, "globalMemoryBytes": 4096, "preferredFloatVectorWidth": 4,
    "nativeFloatVectorWidth": 4, "registersPerWorkItem": 32, "fp64": false, "fp16": false})";
  DeviceProfile p = weft::host::parseProfile(text, "tiny.json");
  CHECK(p.deviceName == "tiny");
  CHECK(p.vendor.empty());
  CHECK(p.source.empty());
  CHECK(p.hostProcessor.empty());
  CHECK(p.fingerprint == weft::host::profileFingerprint("tiny", "", "", 1, ""));
  CHECK(p.registersPerWorkGroup == 0);  // no register file shared by a work-group
  CHECK(p.fmaLanesPerCycle == 0);  // the arithmetic rates unknown (the cost model's defaults)
  CHECK(p.fmaHalfWidthLanesPerCycle == 0);
  CHECK(p.fmaLatencyCycles == 0);
  CHECK(p.vectorLoadsPerCycle == 0);
  CHECK(p.cacheLineBytes == 0);  // unknown
  CHECK(p.firstLevelCacheBytes == 0);  // unknown
  CHECK(p.secondLevelCacheBytes == 0);
  CHECK(p.secondLevelBytesPerCycle == 0);

  // Without "name", a file's profile is named after the file.
  std::string unnamed = text;
  unnamed.replace(unnamed.find("\"name\": \"tiny\","), 15, "");
  fs::path path = writeFile(temp().path / "named-by-file.json", unnamed);
  CHECK(weft::host::loadProfileFile(path).name == "named-by-file");
}

TEST_CASE("the fingerprint is FNV-1a 64 of name, driver, platform, compute units, processor") {
  using weft::host::profileFingerprint;
  // Expected values computed independently with Python's integers.
  CHECK(profileFingerprint("Mali-G72", "r18p0", "OpenCL 2.0", 12, "") == "6a18da903b3e6c68");
  const char* pocl =
      "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC, SPIR, LLVM 15.0.6, SLEEF, "
      "DISTRO, POCL_DEBUG";
  CHECK(profileFingerprint("pthread-skylake-avx512-AMD EPYC", "3.1+debian", pocl, 2,
                           "AuthenticAMD family 25 model 17") == "6936d528455fdf6d");
  // PoCL names AMD's Zen 4 and Zen 5 alike under a hypervisor; the processor and the compute
  // units tell them apart.
  CHECK(profileFingerprint("pthread-skylake-avx512-AMD EPYC", "3.1+debian", pocl, 2,
                           "AuthenticAMD family 26 model 2") == "3f58c352ed0af3ac");
  CHECK(profileFingerprint("pthread-skylake-avx512-AMD EPYC", "3.1+debian", pocl, 16,
                           "AuthenticAMD family 25 model 17") !=
        profileFingerprint("pthread-skylake-avx512-AMD EPYC", "3.1+debian", pocl, 2,
                           "AuthenticAMD family 25 model 17"));
  // Field boundaries matter.
  CHECK(profileFingerprint("ab", "c", "", 1, "") != profileFingerprint("a", "bc", "", 1, ""));
  CHECK(profileFingerprint("a", "", "", 1, "2") != profileFingerprint("a", "", "", 12, ""));
}

TEST_CASE("the host processor is named from /proc/cpuinfo's first entry") {
  using weft::host::hostProcessorFromCpuinfo;
  // An x86 entry, abridged: "model name" is not "model"; the second processor is not read.
  const std::string x86 =
      "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
      "model name\t: AMD EPYC\nstepping\t: 1\nflags\t\t: fpu vme avx512f\n\n"
      "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n";
  CHECK(hostProcessorFromCpuinfo(x86) == "AuthenticAMD family 26 model 2");
  // An Arm entry.
  const std::string arm =
      "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\n"
      "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
  CHECK(hostProcessorFromCpuinfo(arm) == "implementer 0x41 part 0xd0c");
  // Carriage returns and missing fields.
  CHECK(hostProcessorFromCpuinfo("vendor_id : V \r\ncpu family: 6\r\nmodel :7") ==
        "V family 6 model 7");
  CHECK(hostProcessorFromCpuinfo("vendor_id : V\ncpu family: 6\n").empty());
  CHECK(hostProcessorFromCpuinfo("").empty());
}

TEST_CASE("the register heuristic") {
  using weft::host::estimateRegistersPerWorkItem;
  CHECK(estimateRegistersPerWorkItem("cpu", "AuthenticAMD", 16) == (32 - 8) * 16);
  CHECK(estimateRegistersPerWorkItem("cpu", "GenuineIntel", 8) == (16 - 8) * 8);
  CHECK(estimateRegistersPerWorkItem("cpu", "GenuineIntel", 4) == (16 - 8) * 4);
  CHECK(estimateRegistersPerWorkItem("gpu", "NVIDIA Corporation", 1) == 255);
  CHECK(estimateRegistersPerWorkItem("gpu", "Advanced Micro Devices, Inc.", 4) == 256);
  CHECK(estimateRegistersPerWorkItem("gpu", "AMD", 4) == 256);
  CHECK(estimateRegistersPerWorkItem("gpu", "ARM", 4) == 64);
  CHECK(estimateRegistersPerWorkItem("gpu", "Intel(R) Corporation", 1) == 128);
  CHECK(estimateRegistersPerWorkItem("gpu", "Qualcomm", 1) == 64);
  CHECK(estimateRegistersPerWorkItem("accelerator", "NVIDIA Corporation", 1) == 64);
  // "arm" only as a word: "Charm Devices" is not ARM.
  CHECK(estimateRegistersPerWorkItem("gpu", "Charm Devices", 1) == 64);
}

TEST_CASE("loadProfile finds built-in profiles, user files by name, and paths") {
  fs::path dir = temp().path / "user";
  CHECK(weft::host::loadProfile("mali-g72", {dir}) == builtin("mali-g72"));

  // A user file NAME.json is found by name, and can replace a built-in profile.
  writeFile(dir / "my-gpu.json", variant("name", "my-gpu"));
  DeviceProfile mine = weft::host::loadProfile("my-gpu", {dir});
  CHECK(mine.name == "my-gpu");
  CHECK(mine.computeUnits == 12);
  writeFile(dir / "mali-g72.json", variant("computeUnits", 6));
  CHECK(weft::host::loadProfile("mali-g72", {dir}).computeUnits == 6);
  CHECK(weft::host::loadProfile("mali-g72", {}).computeUnits == 12);
  // Earlier folders win.
  fs::path first = temp().path / "first";
  writeFile(first / "mali-g72.json", variant("computeUnits", 3));
  CHECK(weft::host::loadProfile("mali-g72", {first, dir}).computeUnits == 3);

  // Paths are read directly.
  CHECK(weft::host::loadProfile((dir / "my-gpu.json").string(), {}).name == "my-gpu");

  // userProfiles lists every file of the folders.
  auto listed = weft::host::userProfiles({dir});
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].name == "mali-g72");
  CHECK(listed[1].name == "my-gpu");
}

TEST_CASE("an unknown profile name lists the folders searched and the known profiles") {
  fs::path dir = temp().path / "lookup";
  writeFile(dir / "lab-board.json", variant("name", "lab-board"));
  try {
    weft::host::loadProfile("no-such-gpu", {dir});
    FAIL("expected a ProfileError");
  } catch (const ProfileError& e) {
    std::string message = e.what();
    CHECK_MESSAGE(message.find("unknown device profile 'no-such-gpu'") != std::string::npos,
                  message);
    CHECK_MESSAGE(message.find(dir.string()) != std::string::npos, message);
    CHECK_MESSAGE(message.find("known profiles: lab-board, mali-g72, nvidia-generic, nvidia-hopper, pocl-cpu") !=
                      std::string::npos,
                  message);
  }
  // A missing path names the file.
  fs::path missing = temp().path / "nowhere" / "gone.json";
  std::string expected = missing.string() + ": cannot read device profile: no such file";
  CHECK_THROWS_WITH_AS(weft::host::loadProfile(missing.string(), {}), expected.c_str(),
                       ProfileError);
}

TEST_CASE("malformed JSON is reported with file, line and column") {
  expectFileError("syntax.json", "{\n  \"name\": \"x\",\n  \"computeUnits\": 12,,\n}\n",
                  ":3:22: invalid JSON: syntax error");
  expectFileError("truncated.json", "{\n  \"name\": \"x\",\n", "invalid JSON");
  expectFileError("not-object.json", "[1, 2, 3]", "a device profile must be a JSON object");
}

TEST_CASE("invalid fields are reported with the file name and the field") {
  expectFileError("missing.json", variant("computeUnits", nullptr), "missing field 'computeUnits'");
  expectFileError(
      "typo.json",
      [] {
        nlohmann::ordered_json json = weft::host::profileToJson(builtin("mali-g72"));
        json["computeUnit"] = 12;
        return json.dump();
      }(),
      "unknown field 'computeUnit' (the fields of a device profile are: name, ");
  expectFileError("string-number.json", variant("computeUnits", "12"),
                  "field 'computeUnits' must be an integer, got \"12\"");
  expectFileError("float-number.json", variant("maxWorkGroupSize", 1.5),
                  "field 'maxWorkGroupSize' must be an integer, got 1.5");
  expectFileError("zero.json", variant("computeUnits", 0),
                  "field 'computeUnits' must be between 1 and");
  expectFileError("width.json", variant("preferredFloatVectorWidth", 5),
                  "must be an OpenCL vector width (1, 2, 3, 4, 8 or 16), got 5");
  expectFileError("type.json", variant("deviceType", "tpu"),
                  "field 'deviceType' must be \"gpu\", \"cpu\" or \"accelerator\", got \"tpu\"");
  expectFileError("local.json", variant("localMemoryType", "shared"),
                  "field 'localMemoryType' must be \"local\"");
  expectFileError("sizes.json", variant("maxWorkItemSizes", nlohmann::ordered_json{384, 384}),
                  "field 'maxWorkItemSizes' must be an array of 3 integers");
  expectFileError("size-entry.json",
                  variant("maxWorkItemSizes", nlohmann::ordered_json{384, -1, 384}),
                  "field 'maxWorkItemSizes[1]' must be at least 1, got -1");
  expectFileError("bool.json", variant("fp64", 1), "field 'fp64' must be true or false, got 1");
  expectFileError("alloc.json", variant("maxAllocationBytes", std::int64_t{1} << 40),
                  "maxAllocationBytes (1099511627776) exceeds globalMemoryBytes");
  expectFileError("name.json", variant("name", "my gpu"), "field 'name' must be a non-empty word");
  expectFileError("huge.json", variant("computeUnits", std::uint64_t{1} << 63),
                  "field 'computeUnits' must be at most");
  expectFileError("lanes.json", variant("fmaLanesPerCycle", -1),
                  "field 'fmaLanesPerCycle' must be a number from 0 to 1000, got -1");
  expectFileError("latency.json", variant("fmaLatencyCycles", "four"),
                  "field 'fmaLatencyCycles' must be a number from 0 to 1000");
}

TEST_CASE("the user's profile folder follows XDG_CONFIG_HOME, else HOME") {
  const char* oldConfig = std::getenv("XDG_CONFIG_HOME");
  const char* oldHome = std::getenv("HOME");
  std::string savedConfig = oldConfig ? oldConfig : "";
  std::string savedHome = oldHome ? oldHome : "";

  ::setenv("XDG_CONFIG_HOME", "/tmp/weft-config", 1);
  CHECK(weft::host::userProfileDir() == fs::path("/tmp/weft-config/weft/profiles"));
  ::setenv("XDG_CONFIG_HOME", "relative/ignored", 1);  // XDG: relative paths are invalid
  ::setenv("HOME", "/home/someone", 1);
  CHECK(weft::host::userProfileDir() == fs::path("/home/someone/.config/weft/profiles"));
  ::unsetenv("XDG_CONFIG_HOME");
  CHECK(weft::host::userProfileDir() == fs::path("/home/someone/.config/weft/profiles"));
  auto dirs = weft::host::profileSearchDirs({"/opt/profiles"});
  REQUIRE(dirs.size() == 2);
  CHECK(dirs[0] == fs::path("/opt/profiles"));
  CHECK(dirs[1] == fs::path("/home/someone/.config/weft/profiles"));

  if (oldConfig) ::setenv("XDG_CONFIG_HOME", savedConfig.c_str(), 1);
  if (oldHome) {
    ::setenv("HOME", savedHome.c_str(), 1);
  } else {
    ::unsetenv("HOME");
  }
}

TEST_CASE("a number beyond a double's range is a ProfileError naming the file") {
  // Found by fuzz/fuzz_profile_json (kept in fuzz/regressions/profile_json/): nlohmann's
  // out_of_range escaped as another exception type.
  CHECK_THROWS_WITH_AS(weft::host::parseProfile(R"({"name": "x", "computeUnits": 6E536})",
                                                "huge.json"),
                       doctest::Contains("huge.json: unreadable JSON"), ProfileError);
}

TEST_CASE("a Linux CPU list counts its CPUs") {
  CHECK(weft::host::cpuListCount("0") == 1);
  CHECK(weft::host::cpuListCount("0-3") == 4);
  CHECK(weft::host::cpuListCount("0-3,8") == 5);
  CHECK(weft::host::cpuListCount("0,32") == 2);
  CHECK(weft::host::cpuListCount("0-1,4-5") == 4);
  CHECK(weft::host::cpuListCount("") == 0);
  CHECK(weft::host::cpuListCount("3-1") == 0);
  CHECK(weft::host::cpuListCount("a") == 0);
}
