// libFuzzer target: a measurement bundle's results.json (`weft import`), written by the bundle's
// harness on another machine. Any text is read with parseBundleResults: it must give results or
// throw BundleError. Accepted results must hold what `weft import` relies on: a known status for
// the reference and every variant, a non-empty device name, distinct variant ids. Any other
// exception, a crash or a sanitizer report is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "export/bundle_results.h"
#include "fuzz/fuzz_support.h"

using weft::fuzzing::finding;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 16384) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace weft::exporting;
  BundleResults results;
  try {
    results = parseBundleResults(text, "fuzz/results.json");
  } catch (const BundleError&) {
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("parseBundleResults threw something other than BundleError: ") +
                e.what(),
            text);
  }
  const std::vector<std::string>& statuses = bundleStatuses();
  auto known = [&](const std::string& status) {
    return std::find(statuses.begin(), statuses.end(), status) != statuses.end();
  };
  if (results.device.name.empty()) finding("accepted with an empty device name", text);
  if (results.reference && !known(results.reference->status)) {
    finding("accepted a reference with status " + results.reference->status, text);
  }
  std::set<std::string> ids;
  for (const BundleResult& variant : results.variants) {
    if (!known(variant.status)) finding("accepted a variant with status " + variant.status, text);
    if (!ids.insert(variant.id).second) finding("accepted the id " + variant.id + " twice", text);
  }
  return 0;
}
