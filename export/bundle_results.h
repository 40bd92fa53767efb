// The results.json a measurement bundle's harness writes (export/bundle_export.h), read back and
// validated: the device the harness ran on, the reference's and every variant's status, times
// and errors. Every problem is a BundleError naming the file and the item (and, for text that
// is not JSON, the position). Apart from the bundle's writer so that the reader, which takes
// files from other machines, stands alone (fuzz/fuzz_bundle_results.cpp fuzzes it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft::exporting {

struct BundleError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct BundleDevice {
  std::string name;             // CL_DEVICE_NAME as the driver reports it
  std::string vendor;           // CL_DEVICE_VENDOR
  std::string driverVersion;    // CL_DRIVER_VERSION
  std::string platformVersion;  // CL_PLATFORM_VERSION
  std::string deviceVersion;    // CL_DEVICE_VERSION
  std::string platformName;     // CL_PLATFORM_NAME
  // CL_DEVICE_MAX_COMPUTE_UNITS, and for a CPU device the processor named as
  // host::hostProcessorFromCpuinfo names it; both 0 / "" in results of an older harness, whose
  // fingerprint then cannot match a local exploration's.
  int computeUnits = 0;
  std::string hostProcessor;
};

struct BundleResult {
  std::string id;
  std::string status;      // ok, build_error, launch_error, crashed, timeout, wrong_answer, invalid
  std::string parameters;  // the key's JSON text as the harness echoed it
  std::optional<uint64_t> medianNs;
  std::vector<uint64_t> samplesNs;
  double maxError = 0;
  double allowedError = 0;
  std::optional<double> buildMs;
  uint64_t warmUpNs = 0;
  std::vector<std::pair<std::string, uint64_t>> kernelNs;  // fastest run of each kernel
  int64_t spaceBytes = 0;
  std::string sourceHash;
  std::string message;
  double seconds = 0;  // the child's wall time
};

struct BundleResults {
  std::string program;
  std::string compiler;
  std::string description;
  int64_t flops = 0;
  double tolerance = 0;
  BundleDevice device;
  std::optional<BundleResult> reference;
  std::vector<BundleResult> variants;
};

// The statuses a results file may hold.
const std::vector<std::string>& bundleStatuses();

// Reads and validates `path`. Throws BundleError naming the file: missing, unreadable, not JSON
// (with the position), not a results file of the bundle harness, or a field missing or of the
// wrong type (naming the variant).
BundleResults readBundleResults(const std::filesystem::path& path);
BundleResults parseBundleResults(const std::string& text, const std::string& origin);

}  // namespace weft::exporting
