// What the fuzz targets share: a finding ends the run (abort, so that libFuzzer keeps the input)
// after printing what went wrong and, for text inputs, the input itself.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace weft::fuzzing {

[[noreturn]] inline void finding(const std::string& what, const std::string& text = "") {
  if (text.empty()) {
    std::fprintf(stderr, "finding: %s\n", what.c_str());
  } else {
    std::fprintf(stderr, "finding: %s\n--- input ---\n%s\n", what.c_str(), text.c_str());
  }
  std::abort();
}

}  // namespace weft::fuzzing
