// Reading a bundle harness's results.json (export/bundle_results.h): the JSON parsed, then every
// field checked for presence and type by a Reader that names the file and the item.
#include "export/bundle_results.h"

#include <fmt/format.h>

#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

namespace weft::exporting {

using Json = nlohmann::ordered_json;

const std::vector<std::string>& bundleStatuses() {
  static const std::vector<std::string> statuses = {
      "ok", "build_error", "launch_error", "crashed", "timeout", "wrong_answer", "invalid"};
  return statuses;
}

namespace {

// Field access that names the file and the item on every failure.
struct Reader {
  const std::string& origin;
  std::string where;  // "variant 3 (v0003)"

  [[noreturn]] void fail(const std::string& what) const {
    throw BundleError(origin + ": " + (where.empty() ? "" : where + ": ") + what);
  }
  const Json& field(const Json& object, const char* name) const {
    if (!object.contains(name)) fail(std::string("no \"") + name + "\"");
    return object[name];
  }
  std::string text(const Json& object, const char* name) const {
    const Json& value = field(object, name);
    if (!value.is_string()) fail(std::string("\"") + name + "\" is not a string");
    return value.get<std::string>();
  }
  int64_t integer(const Json& object, const char* name) const {
    const Json& value = field(object, name);
    if (!value.is_number_integer()) fail(std::string("\"") + name + "\" is not an integer");
    return value.get<int64_t>();
  }
  double number(const Json& object, const char* name) const {
    const Json& value = field(object, name);
    if (!value.is_number()) fail(std::string("\"") + name + "\" is not a number");
    return value.get<double>();
  }
  uint64_t count(const Json& value, const std::string& what) const {
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
      fail(what + " is not a non-negative integer");
    }
    return value.get<uint64_t>();
  }
};

BundleResult readResult(const Json& item, const Reader& reader) {
  if (!item.is_object()) reader.fail("not a JSON object");
  BundleResult result;
  result.id = reader.text(item, "id");
  result.status = reader.text(item, "status");
  const std::vector<std::string>& statuses = bundleStatuses();
  if (std::find(statuses.begin(), statuses.end(), result.status) == statuses.end()) {
    reader.fail("unknown status '" + result.status +
                "' (expected ok, build_error, launch_error, crashed, timeout, wrong_answer or "
                "invalid)");
  }
  const Json& parameters = reader.field(item, "parameters");
  if (!parameters.is_object()) reader.fail("\"parameters\" is not a JSON object");
  result.parameters = parameters.dump();
  const Json& median = reader.field(item, "medianNs");
  if (!median.is_null()) result.medianNs = reader.count(median, "\"medianNs\"");
  if (result.status == "ok" && !result.medianNs) reader.fail("an ok variant without \"medianNs\"");
  const Json& samples = reader.field(item, "samples");
  if (!samples.is_array()) reader.fail("\"samples\" is not an array");
  for (const Json& sample : samples) result.samplesNs.push_back(reader.count(sample, "a sample"));
  result.maxError = reader.number(item, "maxError");
  result.allowedError = reader.number(item, "allowedError");
  const Json& build = reader.field(item, "buildMs");
  if (!build.is_null()) result.buildMs = reader.number(item, "buildMs");
  result.warmUpNs = reader.count(reader.field(item, "warmUpNs"), "\"warmUpNs\"");
  const Json& kernels = reader.field(item, "kernels");
  if (!kernels.is_array()) reader.fail("\"kernels\" is not an array");
  for (const Json& kernel : kernels) {
    if (!kernel.is_object()) reader.fail("a kernel time is not an object");
    result.kernelNs.push_back(
        {reader.text(kernel, "name"), reader.count(reader.field(kernel, "ns"), "a kernel time")});
  }
  result.spaceBytes = reader.integer(item, "spaceBytes");
  result.sourceHash = reader.text(item, "sourceHash");
  result.message = reader.text(item, "message");
  if (item.contains("seconds")) result.seconds = reader.number(item, "seconds");
  return result;
}

}  // namespace

BundleResults parseBundleResults(const std::string& text, const std::string& origin) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::parse_error& error) {
    // nlohmann's byte offset as a line and column.
    size_t offset = std::min(static_cast<size_t>(error.byte), text.size());
    size_t line = 1, column = 1;
    for (size_t i = 0; i + 1 < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string what = error.what();
    size_t cut = what.find("; ");  // drop nlohmann's "[json.exception...] parse error at ..."
    throw BundleError(fmt::format("{}:{}:{}: not valid JSON ({}); a results file of the bundle "
                                  "harness is written whole, so this one was edited or cut short",
                                  origin, line, column,
                                  cut == std::string::npos ? what : what.substr(cut + 2)));
  } catch (const Json::exception& error) {
    // Valid syntax the reader cannot hold, e.g. a number beyond a double's range.
    const std::string what = error.what();
    const size_t bracket = what.find("] ");
    throw BundleError(fmt::format("{}: unreadable JSON ({})", origin,
                                  bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
  Reader reader{origin, ""};
  if (!json.is_object() || !json.contains("format") || !json["format"].is_string() ||
      json["format"].get<std::string>() != "weft-bundle-results 1") {
    reader.fail(
        "not a results file of a weft bundle harness (no \"format\": \"weft-bundle-results "
        "1\"); give the results.json the harness wrote");
  }
  BundleResults results;
  results.program = reader.text(json, "program");
  if (results.program.empty()) reader.fail("the program name is empty");
  results.compiler = reader.text(json, "compiler");
  results.description = reader.text(json, "description");
  results.flops = reader.integer(json, "flops");
  results.tolerance = reader.number(json, "tolerance");
  const Json& device = reader.field(json, "device");
  if (!device.is_object()) reader.fail("\"device\" is not an object");
  Reader deviceReader{origin, "device"};
  results.device.name = deviceReader.text(device, "name");
  results.device.vendor = deviceReader.text(device, "vendor");
  results.device.driverVersion = deviceReader.text(device, "driverVersion");
  results.device.platformVersion = deviceReader.text(device, "platformVersion");
  if (device.contains("deviceVersion")) results.device.deviceVersion = deviceReader.text(device, "deviceVersion");
  if (device.contains("platformName")) results.device.platformName = deviceReader.text(device, "platformName");
  if (device.contains("computeUnits")) {
    const int64_t units = deviceReader.integer(device, "computeUnits");
    if (units < 0 || units > std::numeric_limits<int>::max()) {
      deviceReader.fail("\"computeUnits\" is out of range");
    }
    results.device.computeUnits = static_cast<int>(units);
  }
  if (device.contains("hostProcessor")) {
    results.device.hostProcessor = deviceReader.text(device, "hostProcessor");
  }
  if (results.device.name.empty()) deviceReader.fail("the device name is empty");
  const Json& reference = reader.field(json, "reference");
  if (!reference.is_null()) results.reference = readResult(reference, Reader{origin, "reference"});
  const Json& variants = reader.field(json, "variants");
  if (!variants.is_array()) reader.fail("\"variants\" is not an array");
  std::vector<std::string> ids;
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string where = "variant " + std::to_string(i + 1);
    if (variants[i].is_object() && variants[i].contains("id") && variants[i]["id"].is_string()) {
      where += " (" + variants[i]["id"].get<std::string>() + ")";
    }
    BundleResult result = readResult(variants[i], Reader{origin, where});
    if (std::find(ids.begin(), ids.end(), result.id) != ids.end()) {
      Reader{origin, where}.fail("the id appears twice");
    }
    ids.push_back(result.id);
    results.variants.push_back(std::move(result));
  }
  return results;
}

BundleResults readBundleResults(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw BundleError(path.string() +
                      ": no such file (run the bundle's harness first; it writes results.json "
                      "into the bundle folder)");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw BundleError(path.string() + ": is a folder, not a results file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BundleError(path.string() + ": cannot read");
  std::stringstream text;
  text << in.rdbuf();
  return parseBundleResults(text.str(), path.string());
}

}  // namespace weft::exporting
