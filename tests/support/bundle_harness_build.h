// For the tests that run a bundle's measurement harness: building it the way its README says
// (CMake from the bundle's own CMakeLists.txt, C warnings as errors), and planting a statement
// in one of its kernels. Header-only; needs doctest.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/support/export_check.h"
#include "tests/support/run_weft.h"

namespace weft::testing {

// The bundle's harness built in `build`; returns the executable's path (not quoted).
inline std::filesystem::path buildBundleHarness(const std::filesystem::path& bundle,
                                                const std::filesystem::path& build,
                                                const std::filesystem::path& log) {
  std::string generator = std::system("command -v ninja > /dev/null 2>&1") == 0 ? " -G Ninja" : "";
  REQUIRE_MESSAGE(runLogged("cmake -S " + shellQuote(bundle.string()) + " -B " +
                                     shellQuote(build.string()) + generator +
                                     " -DCMAKE_C_FLAGS='-Wall -Wextra -Werror'",
                                 log) == 0,
                  readTextFile(log));
  REQUIRE_MESSAGE(runLogged("cmake --build " + shellQuote(build.string()), log) == 0,
                  readTextFile(log));
  return build / "weft_bundle_harness";
}

// `source` with `statement` inserted before the closing brace of kernel `name`.
inline std::string plantInKernel(const std::string& source, const std::string& name,
                                 const std::string& statement) {
  size_t at = source.find("kernel void " + name + "(");
  REQUIRE(at != std::string::npos);
  size_t open = source.find('{', at);
  REQUIRE(open != std::string::npos);
  int depth = 0;
  for (size_t i = open; i < source.size(); ++i) {
    if (source[i] == '{') ++depth;
    if (source[i] == '}' && --depth == 0) {
      return source.substr(0, i) + statement + "\n" + source.substr(i);
    }
  }
  FAIL("kernel " << name << " has no closing brace");
  return source;
}

}  // namespace weft::testing
