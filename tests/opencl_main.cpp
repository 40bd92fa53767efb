// The main() of the opencl_* test executables (see tests/CMakeLists.txt). Before running any
// test it asks the OpenCL runtime for a device: on a machine without an OpenCL platform (or with
// platforms but no device) it prints why and exits with code 77, which CTest reports as
// "skipped" (SKIP_RETURN_CODE), so OpenCL tests are never counted as passed where they could not
// run. Any other OpenCL failure during that check is a real failure (exit code 1).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include "host/opencl_runtime.h"

int main(int argc, char** argv) {
  try {
    weft::host::listDevices();
  } catch (const weft::host::NoOpenCLError& e) {
    std::printf("SKIPPED: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "OpenCL is installed but failed: %s\n", e.what());
    return 1;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
