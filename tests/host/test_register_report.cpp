// host/register_report.h: NVIDIA's ptxas report in a build log read per kernel (registers, spill
// stores and loads), whatever precedes or follows it; nothing from logs without one; the option
// that asks for it only on NVIDIA's platform. The logs below are written in ptxas's format (the
// lines NVIDIA's OpenCL driver appends with -cl-nv-verbose).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "host/register_report.h"

using namespace weft::host;

TEST_CASE("a ptxas report gives each kernel's registers and spills") {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'weft_conv_k0' for 'sm_90'\n"
      "ptxas info    : Function properties for weft_conv_k0\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 96 registers, 384 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'weft_conv_k1' for 'sm_90'\n"
      "ptxas info    : Function properties for weft_conv_k1\n"
      "ptxas         .     224 bytes stack frame, 284 bytes spill stores, 532 bytes spill loads\n"
      "ptxas info    : Used 255 registers, 16 bytes smem, 480 bytes cmem[0]\n";
  const std::vector<KernelRegisterUse> kernels = parseRegisterReport(log);
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0].kernel == "weft_conv_k0");
  CHECK(kernels[0].registers == 96);
  CHECK_FALSE(kernels[0].spills());
  CHECK(kernels[1].kernel == "weft_conv_k1");
  CHECK(kernels[1].registers == 255);
  CHECK(kernels[1].spillStoreBytes == 284);
  CHECK(kernels[1].spillLoadBytes == 532);
  CHECK(kernels[1].spills());
}

TEST_CASE("logs without a ptxas report give nothing") {
  CHECK(parseRegisterReport("").empty());
  CHECK(parseRegisterReport("<source>:3:5: warning: unused variable 'x'\n").empty());
  // Numbers without a kernel before them belong to none.
  CHECK(parseRegisterReport("    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
                            "ptxas info    : Used 12 registers\n")
            .empty());
  // An absurd count saturates rather than failing the measurement.
  const std::vector<KernelRegisterUse> huge = parseRegisterReport(
      "ptxas info    : Function properties for k\n"
      "    0 bytes stack frame, 99999999999999999999 bytes spill stores, 0 bytes spill loads\n");
  REQUIRE(huge.size() == 1);
  CHECK(huge[0].spills());
}

TEST_CASE("the report is asked for on NVIDIA's platform only") {
  CHECK(registerReportOption("NVIDIA CUDA", "NVIDIA Corporation") == "-cl-nv-verbose");
  CHECK(registerReportOption("Portable Computing Language", "The pocl project").empty());
  CHECK(registerReportOption("ARM Platform", "ARM").empty());
}
