// libFuzzer target: device-profile JSON (`weft explore --profile FILE`, user profile folders).
// Any text is parsed with parseProfile: it must give a profile or throw ProfileError. An accepted
// profile is written with profileToJson and read back, and must give the same JSON again (the
// writer and the reader are inverses on what the reader accepts). Any other exception, a crash
// or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "host/device_profile.h"
#include "fuzz/fuzz_support.h"

using weft::fuzzing::finding;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  weft::host::DeviceProfile profile;
  try {
    profile = weft::host::parseProfile(text, "fuzz.json", "fuzz");
  } catch (const weft::host::ProfileError&) {
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("parseProfile threw something other than ProfileError: ") + e.what(),
            text);
  }
  std::string written;
  try {
    written = weft::host::profileToJson(profile).dump();
    const weft::host::DeviceProfile again = weft::host::parseProfile(written, "written.json");
    const std::string rewritten = weft::host::profileToJson(again).dump();
    if (rewritten != written) {
      finding("a written profile reads back differently:\n" + written + "\n" + rewritten, text);
    }
  } catch (const std::exception& e) {
    finding(std::string("an accepted profile, written, is rejected: ") + e.what() + "\n" +
                written,
            text);
  }
  return 0;
}
