// libFuzzer target: the .npy reader. Any bytes are written to a file and read back with
// readNpy: it must return an array whose data matches its shape, or throw NpyError; any other
// exception, a crash or a sanitizer report is a finding. An array it accepts is written with
// writeNpy and read again to the same shape and values.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ir/npy.h"
#include "fuzz/fuzz_support.h"

using weft::fuzzing::finding;

namespace {

std::string scratchPath(const char* stem) {
  return std::string("/tmp/weft_fuzz_") + stem + "_" + std::to_string(getpid()) + ".npy";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = scratchPath("in");
  if (FILE* file = std::fopen(path.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    return 0;
  }
  weft::NpyArray array;
  try {
    array = weft::readNpy(path);
  } catch (const weft::NpyError&) {
    return 0;
  } catch (const std::exception& error) {
    finding(std::string("readNpy threw something other than an NpyError: ") + error.what());
  }
  size_t elements = 1;
  for (int64_t extent : array.shape) {
    if (extent < 0) finding("a negative extent was accepted");
    elements *= static_cast<size_t>(extent);
  }
  const size_t held = array.dtype == weft::NpyDType::Float32 ? array.f32.size() : array.i32.size();
  if (held != elements) finding("the data does not match the shape");
  const std::string out = scratchPath("out");
  weft::writeNpy(out, array);
  const weft::NpyArray back = weft::readNpy(out);
  if (back.shape != array.shape || back.dtype != array.dtype ||
      back.f32.size() != array.f32.size() ||
      (!array.f32.empty() &&
       std::memcmp(back.f32.data(), array.f32.data(), array.f32.size() * sizeof(float)) != 0) ||
      back.i32 != array.i32) {
    finding("writeNpy then readNpy changed the array");
  }
  return 0;
}
