// Tests of the one table of OpenCL error names (export/opencl_error_names.h): every code once,
// every name a symbol, the lookup, and the C that the drop-in export writes naming every entry
// (the bundle harness's cases are checked in test_bundle_harness.cpp; the names against
// <CL/cl.h>'s macros in tests/host/test_runtime.cpp).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "export/dropin_export.h"
#include "export/opencl_error_names.h"
#include "tests/support/export_check.h"
#include "tests/support/run_weft.h"

using weft::testing::contains;

namespace weft {

TEST_CASE("the table has every code once and a name for each") {
  std::set<int> codes;
  for (const exporting::OpenclErrorName& error : exporting::kOpenclErrorNames) {
    CAPTURE(error.code);
    CHECK(codes.insert(error.code).second);
    REQUIRE(error.name != nullptr);
    CHECK(std::string(error.name).size() > 3);
  }
  // OpenCL 1.2's core codes, the later core codes, the extensions the runtime names.
  for (int code = 0; code >= -19; --code) CHECK(codes.count(code) == 1);
  for (int code = -30; code >= -72; --code) CHECK(codes.count(code) == 1);
  for (int code : {-1000, -1001, -1005, -1057, -1059, -1092, -1093, -9999}) {
    CHECK(codes.count(code) == 1);
  }
}

TEST_CASE("openclErrorName finds a code's name, or nothing") {
  CHECK(std::string(exporting::openclErrorName(0)) == "CL_SUCCESS");
  CHECK(std::string(exporting::openclErrorName(-30)) == "CL_INVALID_VALUE");
  CHECK(std::string(exporting::openclErrorName(-1001)) == "CL_PLATFORM_NOT_FOUND_KHR");
  CHECK(exporting::openclErrorName(-20) == nullptr);
  CHECK(exporting::openclErrorName(12345) == nullptr);
}

TEST_CASE("the drop-in's P_error_name has a case for every entry of the table") {
  const CompiledProgram program = testing::addProgram(
      16,
      "kernel void r0(global const float* a, global const float* b, "
      "global float* out) { int i = get_global_id(0); out[i] = a[i] + b[i]; }\n");
  exporting::DropinMetadata metadata;
  metadata.prefix = "weft_add";
  metadata.compilerVersion = "weft test-version";
  const std::string c = testing::exportedFile(exporting::emitDropin(program, {}, metadata),
                                              "weft_add.c", "emitted file");
  std::string cases;
  for (const exporting::OpenclErrorName& error : exporting::kOpenclErrorNames) {
    cases += "    case " + std::to_string(error.code) + ": return \"" + error.name + "\";\n";
  }
  CHECK(contains(c, "const char* weft_add_error_name(cl_int code) {\n  switch (code) {\n" + cases));
}

}  // namespace weft
