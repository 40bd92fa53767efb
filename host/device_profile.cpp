// Implementation of device profiles (see device_profile.h): JSON reading with precise error
// messages, the built-in profiles embedded from host/profiles/*.json (the generated
// builtin_profiles.cpp defines detail::embeddedProfileTexts), the user's profile folders and the
// OpenCL query of a present device with its documented estimates.
#include "host/device_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "host/opencl_runtime.h"

namespace weft::host {

namespace detail {
// Defined in the build's generated builtin_profiles.cpp: (file name, JSON text) per built-in
// profile, sorted by file name.
std::vector<std::pair<std::string, std::string>> embeddedProfileTexts();
}  // namespace detail

namespace {

using Json = nlohmann::ordered_json;

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool containsWord(std::string_view text, std::string_view word) {
  std::string haystack = lower(text);
  std::size_t pos = haystack.find(word);
  while (pos != std::string::npos) {
    bool startOk = pos == 0 || !std::isalnum(static_cast<unsigned char>(haystack[pos - 1]));
    std::size_t end = pos + word.size();
    bool endOk = end == haystack.size() || !std::isalnum(static_cast<unsigned char>(haystack[end]));
    if (startOk && endOk) return true;
    pos = haystack.find(word, pos + 1);
  }
  return false;
}

// "pthread-skylake-avx512-AMD EPYC" -> "pthread-skylake-avx512-amd-epyc".
std::string slug(std::string_view text) {
  std::string out;
  for (char c : lower(text)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += c;
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

bool validProfileName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

const char* localMemoryTypeName(LocalMemoryType type) {
  return type == LocalMemoryType::Local ? "local" : "global";
}

// Reads the fields of a profile object, checking each one and remembering which keys were used.
class FieldReader {
 public:
  FieldReader(const Json& json, std::string_view origin) : json_(json), origin_(origin) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw ProfileError(fmt::format("{}: {}", origin_, problem));
  }

  const Json* find(const char* key) {
    used_.insert(key);
    auto it = json_.find(key);
    return it == json_.end() ? nullptr : &*it;
  }
  const Json& require(const char* key) {
    const Json* value = find(key);
    if (!value) fail(fmt::format("missing field '{}'", key));
    return *value;
  }

  std::string string(const char* key, const std::string* fallback = nullptr) {
    const Json* value = find(key);
    if (!value) {
      if (fallback) return *fallback;
      fail(fmt::format("missing field '{}'", key));
    }
    if (!value->is_string()) {
      fail(fmt::format("field '{}' must be a string, got {}", key, value->dump()));
    }
    return value->get<std::string>();
  }

  std::int64_t integer(const char* key, std::int64_t min,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    return checkInteger(require(key), key, min, max);
  }

  std::int64_t checkInteger(const Json& value, const std::string& what, std::int64_t min,
                            std::int64_t max) const {
    if (!value.is_number_integer()) {
      fail(fmt::format("field '{}' must be an integer, got {}", what, value.dump()));
    }
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) {
      fail(fmt::format("field '{}' must be at most {}, got {}", what, max, value.dump()));
    }
    std::int64_t n = value.get<std::int64_t>();
    if (n < min || n > max) {
      fail(max == std::numeric_limits<std::int64_t>::max()
               ? fmt::format("field '{}' must be at least {}, got {}", what, min, n)
               : fmt::format("field '{}' must be between {} and {}, got {}", what, min, max, n));
    }
    return n;
  }

  int vectorWidth(const char* key) {
    std::int64_t width = integer(key, 1, 16);
    if (width != 1 && width != 2 && width != 3 && width != 4 && width != 8 && width != 16) {
      fail(fmt::format("field '{}' must be an OpenCL vector width (1, 2, 3, 4, 8 or 16), got {}",
                       key, width));
    }
    return static_cast<int>(width);
  }

  bool boolean(const char* key) {
    const Json& value = require(key);
    if (!value.is_boolean()) {
      fail(fmt::format("field '{}' must be true or false, got {}", key, value.dump()));
    }
    return value.get<bool>();
  }

  // Every key of the object must have been read.
  void rejectUnknownKeys() const {
    for (auto it = json_.begin(); it != json_.end(); ++it) {
      if (!used_.count(it.key())) {
        std::string known;
        for (const Json::string_t& key : kKeyOrder) known += (known.empty() ? "" : ", ") + key;
        fail(fmt::format("unknown field '{}' (the fields of a device profile are: {})", it.key(),
                         known));
      }
    }
  }

  // All keys, in the order profileToJson writes them.
  static inline const std::vector<Json::string_t> kKeyOrder = {"name",
                                                               "deviceName",
                                                               "vendor",
                                                               "deviceType",
                                                               "driverVersion",
                                                               "platformVersion",
                                                               "hostProcessor",
                                                               "computeUnits",
                                                               "maxClockMHz",
                                                               "maxWorkGroupSize",
                                                               "maxWorkItemSizes",
                                                               "workGroupMultiple",
                                                               "localMemoryBytes",
                                                               "localMemoryType",
                                                               "maxConstantBufferBytes",
                                                               "maxAllocationBytes",
                                                               "globalMemoryBytes",
                                                               "preferredFloatVectorWidth",
                                                               "nativeFloatVectorWidth",
                                                               "registersPerWorkItem",
                                                               "registersPerWorkGroup",
                                                               "fmaLanesPerCycle",
                                                               "fmaHalfWidthLanesPerCycle",
                                                               "fmaLatencyCycles",
                                                               "vectorLoadsPerCycle",
                                                               "conflictFreeStoreStreams",
                                                               "conflictingStoreCycles",
                                                               "memoryBytesPerCycle",
                                                               "secondLevelBytesPerCycle",
                                                               "workGroupCycles",
                                                               "fp64",
                                                               "fp16",
                                                               "nontemporalStores",
                                                               "cacheLineBytes",
                                                               "firstLevelCacheBytes",
                                                               "secondLevelCacheBytes",
                                                               "fingerprint",
                                                               "source"};

 private:
  const Json& json_;
  std::string origin_;
  std::set<std::string, std::less<>> used_;
};

std::string readTextFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::error_code ec;
    bool exists = std::filesystem::exists(path, ec);
    throw ProfileError(fmt::format("{}: cannot read device profile: {}", path.string(),
                                   exists ? "permission denied or not a file" : "no such file"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// ---- fingerprints and JSON ----------------------------------------------------------------------

std::string profileFingerprint(std::string_view deviceName, std::string_view driverVersion,
                               std::string_view platformVersion, int computeUnits,
                               std::string_view hostProcessor) {
  // FNV-1a, 64 bit (offset basis and prime from the FNV reference, isthe.com/chongo/tech/comp/fnv).
  std::uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&](std::string_view text) {
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 0x100000001b3ull;
    }
  };
  mix(deviceName);
  mix("\n");
  mix(driverVersion);
  mix("\n");
  mix(platformVersion);
  mix("\n");
  mix(std::to_string(computeUnits));
  mix("\n");
  mix(hostProcessor);
  return fmt::format("{:016x}", hash);
}

std::string hostProcessorFromCpuinfo(std::string_view cpuinfo) {
  auto trim = [](std::string_view text) {
    const char* space = " \t\r";
    const std::size_t first = text.find_first_not_of(space);
    if (first == std::string_view::npos) return std::string_view();
    return text.substr(first, text.find_last_not_of(space) - first + 1);
  };
  std::map<std::string, std::string, std::less<>> fields;  // key -> its first value
  std::size_t at = 0;
  while (at < cpuinfo.size()) {
    std::size_t end = cpuinfo.find('\n', at);
    if (end == std::string_view::npos) end = cpuinfo.size();
    const std::string_view line = cpuinfo.substr(at, end - at);
    at = end + 1;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    fields.emplace(std::string(trim(line.substr(0, colon))),
                   std::string(trim(line.substr(colon + 1))));
  }
  auto field = [&](std::string_view key) -> std::string {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  };
  if (!field("vendor_id").empty() && !field("cpu family").empty() && !field("model").empty()) {
    return field("vendor_id") + " family " + field("cpu family") + " model " + field("model");
  }
  if (!field("CPU implementer").empty() && !field("CPU part").empty()) {
    return "implementer " + field("CPU implementer") + " part " + field("CPU part");
  }
  return "";
}

std::string hostProcessor() {
  std::ifstream in("/proc/cpuinfo", std::ios::binary);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return hostProcessorFromCpuinfo(text.str());
}

nlohmann::ordered_json profileToJson(const DeviceProfile& p) {
  Json json;
  json["name"] = p.name;
  json["deviceName"] = p.deviceName;
  json["vendor"] = p.vendor;
  json["deviceType"] = p.deviceType;
  json["driverVersion"] = p.driverVersion;
  json["platformVersion"] = p.platformVersion;
  if (!p.hostProcessor.empty()) json["hostProcessor"] = p.hostProcessor;
  json["computeUnits"] = p.computeUnits;
  json["maxClockMHz"] = p.maxClockMHz;
  json["maxWorkGroupSize"] = p.maxWorkGroupSize;
  json["maxWorkItemSizes"] = p.maxWorkItemSizes;
  json["workGroupMultiple"] = p.workGroupMultiple;
  json["localMemoryBytes"] = p.localMemoryBytes;
  json["localMemoryType"] = localMemoryTypeName(p.localMemoryType);
  json["maxConstantBufferBytes"] = p.maxConstantBufferBytes;
  json["maxAllocationBytes"] = p.maxAllocationBytes;
  json["globalMemoryBytes"] = p.globalMemoryBytes;
  json["preferredFloatVectorWidth"] = p.preferredFloatVectorWidth;
  json["nativeFloatVectorWidth"] = p.nativeFloatVectorWidth;
  json["registersPerWorkItem"] = p.registersPerWorkItem;
  json["registersPerWorkGroup"] = p.registersPerWorkGroup;
  if (p.fmaLanesPerCycle > 0) json["fmaLanesPerCycle"] = p.fmaLanesPerCycle;
  if (p.fmaHalfWidthLanesPerCycle > 0) {
    json["fmaHalfWidthLanesPerCycle"] = p.fmaHalfWidthLanesPerCycle;
  }
  if (p.fmaLatencyCycles > 0) json["fmaLatencyCycles"] = p.fmaLatencyCycles;
  if (p.vectorLoadsPerCycle > 0) json["vectorLoadsPerCycle"] = p.vectorLoadsPerCycle;
  if (p.conflictFreeStoreStreams > 0) {
    json["conflictFreeStoreStreams"] = p.conflictFreeStoreStreams;
  }
  if (p.conflictingStoreCycles > 0) json["conflictingStoreCycles"] = p.conflictingStoreCycles;
  if (p.memoryBytesPerCycle > 0) json["memoryBytesPerCycle"] = p.memoryBytesPerCycle;
  if (p.secondLevelBytesPerCycle > 0) {
    json["secondLevelBytesPerCycle"] = p.secondLevelBytesPerCycle;
  }
  if (p.workGroupCycles > 0) json["workGroupCycles"] = p.workGroupCycles;
  json["fp64"] = p.fp64;
  json["fp16"] = p.fp16;
  if (p.nontemporalStores) json["nontemporalStores"] = true;
  if (p.cacheLineBytes > 0) json["cacheLineBytes"] = p.cacheLineBytes;
  if (p.firstLevelCacheBytes > 0) json["firstLevelCacheBytes"] = p.firstLevelCacheBytes;
  if (p.secondLevelCacheBytes > 0) json["secondLevelCacheBytes"] = p.secondLevelCacheBytes;
  json["fingerprint"] = p.fingerprint;
  json["source"] = p.source;
  return json;
}

DeviceProfile profileFromJson(const nlohmann::ordered_json& json, std::string_view origin) {
  FieldReader r(json, origin);
  if (!json.is_object())
    r.fail(fmt::format("a device profile must be a JSON object, got {}", json.dump()));
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  DeviceProfile p;
  p.name = r.string("name");
  if (!validProfileName(p.name)) {
    r.fail(
        fmt::format("field 'name' must be a non-empty word of letters, digits, '-', '_' and "
                    "'.', got '{}'",
                    p.name));
  }
  p.deviceName = r.string("deviceName", &p.name);
  const std::string empty;
  p.vendor = r.string("vendor", &empty);
  p.deviceType = r.string("deviceType");
  if (p.deviceType != "gpu" && p.deviceType != "cpu" && p.deviceType != "accelerator") {
    r.fail(
        fmt::format("field 'deviceType' must be \"gpu\", \"cpu\" or \"accelerator\", got "
                    "\"{}\"",
                    p.deviceType));
  }
  p.driverVersion = r.string("driverVersion", &empty);
  p.platformVersion = r.string("platformVersion", &empty);
  p.hostProcessor = r.string("hostProcessor", &empty);

  p.computeUnits = static_cast<int>(r.integer("computeUnits", 1, kIntMax));
  p.maxClockMHz = static_cast<int>(r.integer("maxClockMHz", 0, kIntMax));
  p.maxWorkGroupSize = r.integer("maxWorkGroupSize", 1);
  const Json& sizes = r.require("maxWorkItemSizes");
  if (!sizes.is_array() || sizes.size() != 3) {
    r.fail(
        fmt::format("field 'maxWorkItemSizes' must be an array of 3 integers (dimensions 0, "
                    "1, 2), got {}",
                    sizes.dump()));
  }
  for (std::size_t d = 0; d < 3; ++d) {
    p.maxWorkItemSizes[d] = r.checkInteger(sizes[d], fmt::format("maxWorkItemSizes[{}]", d), 1,
                                           std::numeric_limits<std::int64_t>::max());
  }
  p.workGroupMultiple = static_cast<int>(r.integer("workGroupMultiple", 1, kIntMax));
  p.localMemoryBytes = r.integer("localMemoryBytes", 0);
  std::string localType = r.string("localMemoryType");
  if (localType == "local") {
    p.localMemoryType = LocalMemoryType::Local;
  } else if (localType == "global") {
    p.localMemoryType = LocalMemoryType::Global;
  } else {
    r.fail(
        fmt::format("field 'localMemoryType' must be \"local\" (dedicated on-chip memory) or "
                    "\"global\" (emulated in global memory), got \"{}\"",
                    localType));
  }
  p.maxConstantBufferBytes = r.integer("maxConstantBufferBytes", 0);
  p.maxAllocationBytes = r.integer("maxAllocationBytes", 1);
  p.globalMemoryBytes = r.integer("globalMemoryBytes", 1);
  if (p.maxAllocationBytes > p.globalMemoryBytes) {
    r.fail(fmt::format("maxAllocationBytes ({}) exceeds globalMemoryBytes ({})",
                       p.maxAllocationBytes, p.globalMemoryBytes));
  }
  p.preferredFloatVectorWidth = r.vectorWidth("preferredFloatVectorWidth");
  p.nativeFloatVectorWidth = r.vectorWidth("nativeFloatVectorWidth");
  p.registersPerWorkItem = static_cast<int>(r.integer("registersPerWorkItem", 1, kIntMax));
  if (const Json* shared = r.find("registersPerWorkGroup")) {
    p.registersPerWorkGroup = r.checkInteger(*shared, "registersPerWorkGroup", 0,
                                             std::numeric_limits<std::int64_t>::max());
  }
  // The measured arithmetic rates: optional, 0 (unknown) to 1000.
  auto rate = [&](const char* key, double* field) {
    const Json* value = r.find(key);
    if (!value) return;
    if (!value->is_number() || value->get<double>() < 0 || value->get<double>() > 1000) {
      r.fail(fmt::format("field '{}' must be a number from 0 to 1000, got {}", key, value->dump()));
    }
    *field = value->get<double>();
  };
  rate("fmaLanesPerCycle", &p.fmaLanesPerCycle);
  rate("fmaHalfWidthLanesPerCycle", &p.fmaHalfWidthLanesPerCycle);
  rate("fmaLatencyCycles", &p.fmaLatencyCycles);
  rate("vectorLoadsPerCycle", &p.vectorLoadsPerCycle);
  rate("conflictFreeStoreStreams", &p.conflictFreeStoreStreams);
  rate("conflictingStoreCycles", &p.conflictingStoreCycles);
  rate("memoryBytesPerCycle", &p.memoryBytesPerCycle);
  rate("secondLevelBytesPerCycle", &p.secondLevelBytesPerCycle);
  rate("workGroupCycles", &p.workGroupCycles);
  p.fp64 = r.boolean("fp64");
  p.fp16 = r.boolean("fp16");
  if (const Json* value = r.find("nontemporalStores")) {
    if (!value->is_boolean()) {
      r.fail(fmt::format("field 'nontemporalStores' must be true or false, got {}", value->dump()));
    }
    p.nontemporalStores = value->get<bool>();
  }
  if (const Json* line = r.find("cacheLineBytes")) {
    p.cacheLineBytes = static_cast<int>(r.checkInteger(*line, "cacheLineBytes", 0, 4096));
  }
  if (const Json* cache = r.find("firstLevelCacheBytes")) {
    p.firstLevelCacheBytes =
        r.checkInteger(*cache, "firstLevelCacheBytes", 0, std::int64_t{1} << 40);
  }
  if (const Json* cache = r.find("secondLevelCacheBytes")) {
    p.secondLevelCacheBytes =
        r.checkInteger(*cache, "secondLevelCacheBytes", 0, std::int64_t{1} << 40);
  }
  p.fingerprint = r.string("fingerprint", &empty);
  if (p.fingerprint.empty()) {
    p.fingerprint = profileFingerprint(p.deviceName, p.driverVersion, p.platformVersion,
                                       p.computeUnits, p.hostProcessor);
  }
  p.source = r.string("source", &empty);
  r.rejectUnknownKeys();
  return p;
}

DeviceProfile parseProfile(std::string_view text, std::string_view origin,
                           std::string_view defaultName) {
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // nlohmann: "[json.exception.parse_error.101] parse error at line 3, column 5: <problem>"
    std::string what = e.what();
    static const std::regex located(R"(at line (\d+), column (\d+): (.*))");
    std::smatch m;
    if (std::regex_search(what, m, located)) {
      throw ProfileError(
          fmt::format("{}:{}:{}: invalid JSON: {}", origin, m[1].str(), m[2].str(), m[3].str()));
    }
    std::size_t bracket = what.find("] ");
    throw ProfileError(fmt::format("{}: invalid JSON: {}", origin,
                                   bracket == std::string::npos ? what : what.substr(bracket + 2)));
  } catch (const Json::exception& e) {
    // Valid syntax the reader cannot hold, e.g. a number beyond a double's range.
    const std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    throw ProfileError(fmt::format("{}: unreadable JSON: {}", origin,
                                   bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
  if (json.is_object() && !defaultName.empty() && !json.contains("name")) {
    json["name"] = std::string(defaultName);
  }
  return profileFromJson(json, origin);
}

// ---- built-in and user profiles -----------------------------------------------------------------

std::vector<std::pair<std::string, std::string>> builtinProfileTexts() {
  return detail::embeddedProfileTexts();
}

const std::vector<DeviceProfile>& builtinProfiles() {
  static const std::vector<DeviceProfile> profiles = [] {
    std::vector<DeviceProfile> out;
    for (const auto& [file, text] : detail::embeddedProfileTexts()) {
      std::string stem = std::filesystem::path(file).stem().string();
      out.push_back(parseProfile(text, "built-in profile host/profiles/" + file, stem));
    }
    std::sort(out.begin(), out.end(),
              [](const DeviceProfile& a, const DeviceProfile& b) { return a.name < b.name; });
    return out;
  }();
  return profiles;
}

std::filesystem::path userProfileDir() {
  const char* config = std::getenv("XDG_CONFIG_HOME");
  if (config && *config && std::filesystem::path(config).is_absolute()) {
    return std::filesystem::path(config) / "weft" / "profiles";
  }
  const char* home = std::getenv("HOME");
  if (home && *home) return std::filesystem::path(home) / ".config" / "weft" / "profiles";
  return {};
}

std::vector<std::filesystem::path> profileSearchDirs(
    const std::vector<std::filesystem::path>& extraDirs) {
  std::vector<std::filesystem::path> dirs = extraDirs;
  std::filesystem::path user = userProfileDir();
  if (!user.empty()) dirs.push_back(user);
  return dirs;
}

DeviceProfile loadProfileFile(const std::filesystem::path& path) {
  return parseProfile(readTextFile(path), path.string(), path.stem().string());
}

namespace {
// The *.json files of an existing folder, sorted.
std::vector<std::filesystem::path> profileFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}
}  // namespace

std::vector<DeviceProfile> userProfiles(const std::vector<std::filesystem::path>& dirs) {
  std::vector<DeviceProfile> out;
  for (const auto& dir : dirs) {
    for (const auto& file : profileFiles(dir)) out.push_back(loadProfileFile(file));
  }
  return out;
}

DeviceProfile loadProfile(std::string_view nameOrPath,
                          const std::vector<std::filesystem::path>& dirs) {
  std::string arg(nameOrPath);
  bool isPath = arg.find('/') != std::string::npos ||
                (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".json") == 0);
  if (isPath) return loadProfileFile(arg);

  for (const auto& dir : dirs) {
    std::filesystem::path candidate = dir / (arg + ".json");
    std::error_code ec;
    if (std::filesystem::is_regular_file(candidate, ec)) return loadProfileFile(candidate);
  }
  for (const DeviceProfile& profile : builtinProfiles()) {
    if (profile.name == arg) return profile;
  }

  std::set<std::string> known;
  for (const DeviceProfile& profile : builtinProfiles()) known.insert(profile.name);
  for (const auto& dir : dirs) {
    for (const auto& file : profileFiles(dir)) known.insert(file.stem().string());
  }
  std::string searched;
  for (const auto& dir : dirs) searched += (searched.empty() ? "" : ", ") + dir.string();
  std::string knownList;
  for (const std::string& name : known) knownList += (knownList.empty() ? "" : ", ") + name;
  throw ProfileError(fmt::format(
      "unknown device profile '{}': no built-in profile has that name and no {}.json is in {}; "
      "known profiles: {} (or give the path of a .json file)",
      arg, arg, searched.empty() ? "any profile folder" : searched, knownList));
}

// ---- queried profiles ---------------------------------------------------------------------------

int estimateRegistersPerWorkItem(std::string_view deviceType, std::string_view vendor,
                                 int preferredFloatVectorWidth) {
  if (deviceType == "cpu") {
    int width = std::max(1, preferredFloatVectorWidth);
    int vectorRegisters = width >= 16 ? 32 : 16;
    return (vectorRegisters - 8) * width;
  }
  if (deviceType == "gpu") {
    if (containsWord(vendor, "nvidia")) return 255;
    if (containsWord(vendor, "amd") || containsWord(vendor, "advanced micro devices")) return 256;
    if (containsWord(vendor, "arm")) return 64;
    if (containsWord(vendor, "intel")) return 128;
  }
  return 64;
}

int cpuListCount(std::string_view list) {
  int count = 0;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view range = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    int first = 0, last = 0;
    const size_t dash = range.find('-');
    const std::string text(range);
    if (dash == std::string_view::npos) {
      if (std::sscanf(text.c_str(), "%d", &first) != 1) return 0;
      last = first;
    } else if (std::sscanf(text.c_str(), "%d-%d", &first, &last) != 2) {
      return 0;
    }
    if (first < 0 || last < first) return 0;
    count += last - first + 1;
  }
  return count;
}

namespace {

// The first CPU's data (or unified) cache of `wantedLevel` in bytes, as Linux describes it in
// /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size} (size as "32K"), or with
// `perSharingCpu` its share among the CPUs of its shared_cpu_list; 0 where the files are missing
// or unreadable (another operating system, a container hiding them).
std::int64_t hostDataCacheBytes(int wantedLevel, bool perSharingCpu) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream levelFile(dir + "level"), typeFile(dir + "type"), sizeFile(dir + "size");
    int level = 0;
    std::string type, size;
    if (!(levelFile >> level) || !(typeFile >> type) || !(sizeFile >> size)) continue;
    if (level != wantedLevel || (type != "Data" && type != "Unified")) continue;
    char* end = nullptr;
    const long long value = std::strtoll(size.c_str(), &end, 10);
    if (value <= 0) continue;
    const std::string unit(end);
    std::int64_t bytes = 0;
    if (unit.empty()) bytes = value;
    if (unit == "K") bytes = value << 10;
    if (unit == "M") bytes = value << 20;
    if (bytes == 0) continue;
    if (perSharingCpu) {
      std::ifstream sharedFile(dir + "shared_cpu_list");
      std::string shared;
      if (sharedFile >> shared && cpuListCount(shared) > 1) bytes /= cpuListCount(shared);
    }
    return bytes;
  }
  return 0;
}

// "OpenCL 3.0 PoCL ..." -> 30; 0 when unparsable.
int openclVersion(const std::string& version) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "OpenCL %d.%d", &major, &minor) == 2) return major * 10 + minor;
  return 0;
}

int queryWorkGroupMultiple(const Device& device) {
  if (deviceHasExtension(device.id, "cl_nv_device_attribute_query")) {
    return static_cast<int>(deviceInfo<cl_uint>(device.id, CL_DEVICE_WARP_SIZE_NV));
  }
  if (deviceHasExtension(device.id, "cl_amd_device_attribute_query")) {
    return static_cast<int>(deviceInfo<cl_uint>(device.id, CL_DEVICE_WAVEFRONT_WIDTH_AMD));
  }
  if (openclVersion(device.version) >= 30) {
    // CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (OpenCL 3.0; not declared for a 1.2 target).
    constexpr cl_device_info kPreferredMultiple = 0x1067;
    std::size_t multiple = 0;
    if (clGetDeviceInfo(device.id, kPreferredMultiple, sizeof multiple, &multiple, nullptr) ==
            CL_SUCCESS &&
        multiple > 0) {
      return static_cast<int>(multiple);
    }
  }
  return 1;
}

}  // namespace

DeviceProfile queryProfile(const Device& device) {
  cl_device_id id = device.id;
  DeviceProfile p;
  p.name = slug(device.name);
  p.deviceName = device.name;
  p.vendor = device.vendor;
  std::string type = device.typeName();
  p.deviceType = (type == "gpu" || type == "cpu") ? type : "accelerator";
  p.driverVersion = device.driverVersion;
  p.platformVersion = device.platformVersion;

  p.computeUnits = static_cast<int>(deviceInfo<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
  p.maxClockMHz = static_cast<int>(deviceInfo<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY));
  p.maxWorkGroupSize =
      static_cast<std::int64_t>(deviceInfo<std::size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
  cl_uint dims = deviceInfo<cl_uint>(id, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS);
  std::vector<std::size_t> sizes(std::max<cl_uint>(dims, 3), 1);
  checkCL(clGetDeviceInfo(id, CL_DEVICE_MAX_WORK_ITEM_SIZES, dims * sizeof(std::size_t),
                          sizes.data(), nullptr),
          "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
  for (std::size_t d = 0; d < 3; ++d) p.maxWorkItemSizes[d] = static_cast<std::int64_t>(sizes[d]);
  p.workGroupMultiple = queryWorkGroupMultiple(device);

  p.localMemoryBytes =
      static_cast<std::int64_t>(deviceInfo<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
  p.localMemoryType = deviceInfo<cl_device_local_mem_type>(id, CL_DEVICE_LOCAL_MEM_TYPE) == CL_LOCAL
                          ? LocalMemoryType::Local
                          : LocalMemoryType::Global;
  p.maxConstantBufferBytes =
      static_cast<std::int64_t>(deviceInfo<cl_ulong>(id, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE));
  p.maxAllocationBytes =
      static_cast<std::int64_t>(deviceInfo<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE));
  p.globalMemoryBytes =
      static_cast<std::int64_t>(deviceInfo<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE));

  // A width of 0 (reported by some drivers for "no preference") means scalar code.
  p.preferredFloatVectorWidth = std::max(
      1, static_cast<int>(deviceInfo<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT)));
  p.nativeFloatVectorWidth =
      std::max(1, static_cast<int>(deviceInfo<cl_uint>(id, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT)));
  p.registersPerWorkItem =
      estimateRegistersPerWorkItem(p.deviceType, p.vendor, p.preferredFloatVectorWidth);
  // The register file a work-group shares, where documented (see DeviceProfile).
  if (p.deviceType == "gpu" && containsWord(p.vendor, "nvidia")) p.registersPerWorkGroup = 65536;

  cl_device_fp_config doubleConfig = 0;  // 0 also when an old driver does not know the query
  clGetDeviceInfo(id, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof doubleConfig, &doubleConfig, nullptr);
  p.fp64 = deviceHasExtension(id, "cl_khr_fp64") || doubleConfig != 0;
  p.fp16 = deviceHasExtension(id, "cl_khr_fp16");
  p.cacheLineBytes = static_cast<int>(deviceInfo<cl_uint>(id, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE));
  if (p.deviceType == "cpu") {
    p.hostProcessor = hostProcessor();
    p.firstLevelCacheBytes = hostDataCacheBytes(1, /*perSharingCpu=*/false);
    p.secondLevelCacheBytes = hostDataCacheBytes(2, /*perSharingCpu=*/true);
  }
  p.fingerprint = profileFingerprint(p.deviceName, p.driverVersion, p.platformVersion,
                                     p.computeUnits, p.hostProcessor);
  p.source = fmt::format(
      "queried through OpenCL on platform '{}'; workGroupMultiple and registersPerWorkItem are "
      "estimates (see host/device_profile.h)",
      device.platformName);
  return p;
}

}  // namespace weft::host
