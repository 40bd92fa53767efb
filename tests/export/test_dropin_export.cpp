// Tests of the drop-in export (export/dropin_export.h) on a hand-built compiled program that has
// what generated ones have: two kernels, a temporary buffer, a size argument, a local-memory
// argument, one launch with and one without a local size, and symbolic sizes bound at export.
// The emitted files are checked for what they must say (parameters, device, compiler, sizes
// evaluated under the binding), the manifest against the program, and the C code is compiled
// with gcc -std=c99 -Wall -Wextra -Werror -pedantic, clang (when installed) and g++; a small C
// program linked against it checks the error names against <CL/cl.h>'s own macros, the buffer
// sizes and shapes, and the argument checks of create and run (none of which needs a device).
// The preparation split: with constant inputs, the kernels that depend only on them are
// launched by P_prepare and not by P_run (checked in the generated function bodies, the
// manifest, the header and the README), for each choice of constant inputs of the program.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "export/dropin_export.h"
#include "tests/support/export_check.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::contains;
using weft::testing::haveCompiler;
using weft::testing::readTextFile;
using weft::testing::runLogged;
using weft::testing::TempDir;

namespace weft {
namespace {

// a: [float]N, b: [float]N -> out: [float]N via tmp = 2a (k0) and out = tmp + b (k1). The
// source's comment holds characters that C string literals must escape (quote, backslash and
// a C99 trigraph).
CompiledProgram twoKernelProgram() {
  Arith n = Arith::size("N");
  Type vector = Type::array(Type::floatType(), n);
  CompiledProgram program;
  program.definitionName = "scaleAdd";
  program.source =
      "/* quote \" backslash \\ trigraph ?\?/ tab\t */\n"
      "kernel void k0(global const float* a, global float* tmp, int n, local float* scratch) {\n"
      "  int i = get_global_id(0);\n"
      "  if (i < n) { scratch[get_local_id(0)] = 2.0f * a[i]; tmp[i] = scratch[get_local_id(0)]; "
      "}\n"
      "}\n"
      "kernel void k1(global const float* tmp, global const float* b, global float* out) {\n"
      "  int i = get_global_id(0);\n"
      "  out[i] = tmp[i] + b[i];\n"
      "}\n";
  BufferPlan a{"in_a", BufferPlan::Role::Input, 0, ScalarKind::Float, n, vector};
  BufferPlan b{"in_b", BufferPlan::Role::Input, 1, ScalarKind::Float, n, vector};
  BufferPlan out{"out", BufferPlan::Role::Output, -1, ScalarKind::Float, n, vector};
  BufferPlan tmp{"tmp1", BufferPlan::Role::Temporary, -1, ScalarKind::Float, n, vector};
  program.buffers = {a, b, out, tmp};
  program.outputBuffer = 2;
  program.outputType = vector;

  program.kernels = {testing::localMemoryKernel(0, 3, n),
                     testing::threeBufferKernel("k1", 3, 1, 2, n)};
  program.openSizes = {n};
  return program;
}

exporting::DropinMetadata metadataFor(const std::string& prefix) {
  exporting::DropinMetadata metadata;
  metadata.prefix = prefix;
  metadata.program = "scaleAdd for a test";
  metadata.inputNames = {"a", "b"};
  metadata.parameters = {{"L", 8}};
  metadata.sizes = {{"N", 64}};
  metadata.compilerVersion = "weft test-version";
  metadata.buildOptions = "-cl-mad-enable";
  metadata.notes = {"a note with */ inside"};
  return metadata;
}

const ArithBinding kBinding = {{"N", 64}, {"L", 8}};

std::string fileOf(const std::vector<exporting::DropinFile>& files, const std::string& name) {
  return testing::exportedFile(files, name, "emitted file");
}

}  // namespace

TEST_CASE("dropinPrefix makes C identifiers starting with weft_") {
  CHECK(exporting::dropinPrefix("conv3_1") == "weft_conv3_1");
  CHECK(exporting::dropinPrefix("dot[N=1024]") == "weft_dot_n_1024");
  CHECK(exporting::dropinPrefix("weft_x") == "weft_x");
  CHECK(exporting::dropinPrefix("3x3 conv") == "weft_3x3_conv");
  CHECK(exporting::dropinPrefix("") == "weft_x");
}

TEST_CASE("the emitted files carry the parameters, the device, the compiler and the sizes") {
  auto files = exporting::emitDropin(twoKernelProgram(), kBinding, metadataFor("weft_scale_add"));
  std::vector<std::string> names;
  for (const exporting::DropinFile& file : files) names.push_back(file.name);
  CHECK(names == std::vector<std::string>{"weft_scale_add.cl", "weft_scale_add.h",
                                          "weft_scale_add.c", "weft_scale_add.json",
                                          "weft_scale_add.cmake", "README.md"});
  std::string cl = fileOf(files, "weft_scale_add.cl");
  CHECK(cl.rfind("/* weft_scale_add.cl", 0) == 0);
  CHECK(contains(cl, "parameters: L=8"));
  CHECK(contains(cl, "not tuned"));
  CHECK(contains(cl, "compiler: weft test-version"));
  CHECK(contains(cl, "k0: global 64, local 8"));
  CHECK(contains(cl, "k1: global 64, local chosen by the driver"));
  CHECK(contains(cl, "a note with * / inside"));
  CHECK(contains(cl, twoKernelProgram().source));  // the kernels follow the comment unchanged

  std::string h = fileOf(files, "weft_scale_add.h");
  CHECK(contains(h, "#define WEFT_SCALE_ADD_BYTES_A ((size_t)256u)"));
  CHECK(contains(h, "#define WEFT_SCALE_ADD_BYTES_TMP1 ((size_t)256u)"));
  CHECK(contains(h,
                 "cl_int weft_scale_add_run(weft_scale_add_t* handle, cl_command_queue queue, "
                 "cl_mem a, cl_mem b,\n    cl_mem output, cl_event* event_out);"));
  CHECK(contains(h, "#define WEFT_SCALE_ADD_KERNEL_COUNT 2"));

  std::string c = fileOf(files, "weft_scale_add.c");
  CHECK(contains(c, "const cl_int value = 64;"));  // the size argument N, baked in
  CHECK(contains(c, "((size_t)32u), NULL);"));     // 4 * L bytes of local memory
  CHECK(contains(c, "trigraph \\?\\?/"));          // no trigraph survives
  CHECK(contains(c, "quote \\\" backslash \\\\"));
  CHECK(contains(c, "\"-cl-mad-enable\""));

  std::string cmake = fileOf(files, "weft_scale_add.cmake");
  CHECK(contains(cmake, "add_library(weft_scale_add STATIC"));
  std::string readme = fileOf(files, "README.md");
  CHECK(contains(readme, "weft_scale_add_run(handle, queue, a, b, output, NULL)"));
}

TEST_CASE("the manifest describes the kernels and buffers under the binding") {
  CompiledProgram program = twoKernelProgram();
  auto files = exporting::emitDropin(program, kBinding, metadataFor("weft_scale_add"));
  auto manifest = nlohmann::json::parse(fileOf(files, "weft_scale_add.json"));
  CHECK(manifest["compiler"] == "weft test-version");
  CHECK(manifest["device"].is_null());
  CHECK(manifest["buildOptions"] == "-cl-mad-enable");
  CHECK(manifest["parameters"]["L"] == 8);
  CHECK(manifest["runArguments"] == nlohmann::json({"a", "b"}));
  REQUIRE(manifest["kernels"].size() == program.kernels.size());
  for (size_t k = 0; k < program.kernels.size(); ++k) {
    const KernelPlan& plan = program.kernels[k];
    const auto& kernel = manifest["kernels"][k];
    CHECK(kernel["name"] == plan.name);
    CHECK(kernel["globalSize"][0] == evaluate(plan.globalSize[0], kBinding));
    if (plan.hasLocalSize) {
      CHECK(kernel["localSize"][0] == evaluate(plan.localSize[0], kBinding));
    } else {
      CHECK(kernel["localSize"].is_null());
    }
    CHECK(kernel["arguments"].size() == plan.args.size());
  }
  CHECK(manifest["kernels"][0]["arguments"][2]["value"] == 64);
  CHECK(manifest["kernels"][0]["arguments"][3]["bytes"] == 32);
  int64_t total = 0;
  REQUIRE(manifest["buffers"].size() == program.buffers.size());
  for (const auto& buffer : manifest["buffers"]) total += buffer["bytes"].get<int64_t>();
  CHECK(total == program.globalBytes(kBinding));
  CHECK(manifest["buffers"][2]["role"] == "output");
  CHECK(manifest["buffers"][3]["role"] == "temporary");

  // Tuned: the device and the tuning appear.
  exporting::DropinMetadata tuned = metadataFor("weft_scale_add");
  tuned.tunedOn = "Test GPU";
  tuned.deviceFingerprint = "0123456789abcdef";
  tuned.tuning = "fastest of 3 ok variants";
  auto tunedFiles = exporting::emitDropin(program, kBinding, tuned);
  auto tunedManifest = nlohmann::json::parse(fileOf(tunedFiles, "weft_scale_add.json"));
  CHECK(tunedManifest["device"]["fingerprint"] == "0123456789abcdef");
  CHECK(contains(fileOf(tunedFiles, "weft_scale_add.cl"),
                 "tuned on Test GPU (fingerprint 0123456789abcdef)"));
  CHECK(contains(fileOf(tunedFiles, "weft_scale_add.h"), "fastest of 3 ok variants"));
}

TEST_CASE("a size left unbound, a bad prefix or a missing output is an error") {
  CompiledProgram program = twoKernelProgram();
  CHECK_THROWS_WITH_AS(exporting::emitDropin(program, {{"N", 64}}, metadataFor("weft_x")),
                       doctest::Contains("size variable L is not bound"), exporting::DropinError);
  CHECK_THROWS_WITH_AS(exporting::emitDropin(program, {{"N", 0}, {"L", 8}}, metadataFor("weft_x")),
                       doctest::Contains("not positive"), exporting::DropinError);
  CHECK_THROWS_WITH_AS(exporting::emitDropin(program, kBinding, metadataFor("9lives")),
                       doctest::Contains("not a C identifier"), exporting::DropinError);
  CHECK_THROWS_AS(exporting::emitDropin(program, kBinding, metadataFor("int")),
                  exporting::DropinError);
  program.outputBuffer = -1;
  CHECK_THROWS_WITH_AS(exporting::emitDropin(program, kBinding, metadataFor("weft_x")),
                       doctest::Contains("no output buffer"), exporting::DropinError);
}

// The text of the emitted C function `name` (from its definition line to the closing brace at
// the start of a line); "" when there is none.
std::string functionBody(const std::string& c, const std::string& name) {
  size_t start = c.find("\ncl_int " + name + "(");
  if (start == std::string::npos) return "";
  size_t end = c.find("\n}\n", start);
  return c.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The indices of the kernels a generated function launches ("handle->kernels[K], ...").
std::vector<int> launchedKernels(const std::string& body) {
  std::vector<int> kernels;
  const std::string marker = "clEnqueueNDRangeKernel(queue, handle->kernels[";
  for (size_t at = body.find(marker); at != std::string::npos; at = body.find(marker, at + 1)) {
    kernels.push_back(std::atoi(body.c_str() + at + marker.size()));
  }
  return kernels;
}

exporting::DropinMetadata withConstants(std::set<int> constants) {
  exporting::DropinMetadata metadata = metadataFor("weft_scale_add");
  metadata.constantInputs = std::move(constants);
  return metadata;
}

TEST_CASE("constant inputs split the kernels into prepare and run") {
  // a is constant: k0 (tmp = 2a) reads only a, so it is the preparation; tmp1 is prepared.
  CompiledProgram program = twoKernelProgram();
  auto files = exporting::emitDropin(program, kBinding, withConstants({0}));
  std::string c = fileOf(files, "weft_scale_add.c");
  CHECK(launchedKernels(functionBody(c, "weft_scale_add_prepare_buffers")) == std::vector<int>{0});
  CHECK(launchedKernels(functionBody(c, "weft_scale_add_run_buffers")) == std::vector<int>{1});
  std::string run = functionBody(c, "weft_scale_add_run_buffers");
  CHECK(contains(run, "if (!handle->prepared) return WEFT_SCALE_ADD_ERROR_NOT_PREPARED;"));
  CHECK(contains(run, "1, &handle->prepared_event"));  // the first run kernel waits for prepare
  CHECK_FALSE(contains(run, "inputs[0] == NULL"));     // a is read only by prepare
  CHECK(contains(run, "inputs[1] == NULL"));
  // PREFIX_run_reads tells the application which inputs it may release after preparing: a.
  CHECK(contains(c, "static const int weft_scale_add_run_uses[4] = {0, 1, 1, 1};"));
  std::string prepare = functionBody(c, "weft_scale_add_prepare_buffers");
  CHECK(contains(prepare, "inputs[0] == NULL"));
  CHECK(contains(prepare, "handle->prepared = 1;"));
  CHECK_FALSE(contains(prepare, "output"));

  std::string h = fileOf(files, "weft_scale_add.h");
  CHECK(contains(h,
                 "cl_int weft_scale_add_prepare(weft_scale_add_t* handle, cl_command_queue "
                 "queue, cl_mem a,\n    cl_event* event_out);"));
  CHECK(contains(h, "#define WEFT_SCALE_ADD_PREPARE_KERNEL_COUNT 1"));
  CHECK(contains(h, "#define WEFT_SCALE_ADD_RUN_KERNEL_COUNT 1"));
  CHECK(contains(h, "#define WEFT_SCALE_ADD_CONSTANT_INPUT_COUNT 1"));
  CHECK(contains(h, "k0: global 64, local 8 (preparation: once, in weft_scale_add_prepare)"));
  CHECK(contains(h, "written by weft_scale_add_prepare"));

  auto manifest = nlohmann::json::parse(fileOf(files, "weft_scale_add.json"));
  CHECK(manifest["constantInputs"] == nlohmann::json({"a"}));
  CHECK(manifest["preparation"]["function"] == "weft_scale_add_prepare");
  CHECK(manifest["preparation"]["kernels"] == nlohmann::json({"k0"}));
  CHECK(manifest["preparation"]["buffers"] == nlohmann::json({"tmp1"}));
  CHECK(manifest["kernels"][0]["preparation"] == true);
  CHECK(manifest["kernels"][1]["preparation"] == false);
  for (const auto& buffer : manifest["buffers"]) {
    CHECK(buffer["prepared"] == (buffer["name"] == "tmp1"));
  }
  std::string readme = fileOf(files, "README.md");
  CHECK(contains(readme, "weft_scale_add_prepare(handle, queue, a, NULL);"));
  CHECK(contains(readme, "`k0`, writing tmp1"));
}

TEST_CASE("without a kernel that depends only on the constant inputs, prepare does nothing") {
  CompiledProgram program = twoKernelProgram();
  // No constant input; b alone (k1 also reads tmp1 from k0, which reads a, and writes the
  // output); a and b together (k1 still writes the output).
  for (std::set<int> constants : {std::set<int>{}, std::set<int>{1}, std::set<int>{0, 1}}) {
    CAPTURE(constants.size());
    auto files = exporting::emitDropin(program, kBinding, withConstants(constants));
    std::string c = fileOf(files, "weft_scale_add.c");
    std::string prepare = functionBody(c, "weft_scale_add_prepare_buffers");
    std::string run = functionBody(c, "weft_scale_add_run_buffers");
    auto manifest = nlohmann::json::parse(fileOf(files, "weft_scale_add.json"));
    CHECK(manifest["constantInputs"].size() == constants.size());
    if (constants.count(0)) {
      // a and b: k0 is still a preparation kernel (it reads only a); k1 writes the output.
      CHECK(launchedKernels(prepare) == std::vector<int>{0});
      CHECK(launchedKernels(run) == std::vector<int>{1});
      continue;
    }
    CHECK(launchedKernels(prepare).empty());
    CHECK(launchedKernels(run) == std::vector<int>{0, 1});
    CHECK(contains(prepare, "handle->prepared = 1;"));
    CHECK_FALSE(contains(run, "ERROR_NOT_PREPARED"));
    CHECK(manifest["preparation"]["kernels"].empty());
    CHECK(manifest["preparation"]["buffers"].empty());
    CHECK(contains(fileOf(files, "weft_scale_add.h"),
                   "#define WEFT_SCALE_ADD_PREPARE_KERNEL_COUNT 0"));
  }
  auto none = exporting::emitDropin(program, kBinding, withConstants({}));
  CHECK(contains(fileOf(none, "weft_scale_add.h"),
                 "cl_int weft_scale_add_prepare(weft_scale_add_t* handle, cl_command_queue "
                 "queue,\n    cl_event* event_out);"));
  CHECK(contains(fileOf(none, "README.md"), "this program has none"));
  CHECK_THROWS_WITH_AS(exporting::emitDropin(program, kBinding, withConstants({2})),
                       doctest::Contains("constant input 2 does not exist"),
                       exporting::DropinError);
}

TEST_CASE("the emitted C compiles warning-free as C99 (gcc, clang) and as C++") {
  for (std::set<int> constants : {std::set<int>{}, std::set<int>{0}}) {
    CAPTURE(constants.size());
    TempDir dir("weft_dropin_compile");
    exporting::writeDropin(
        dir.path, exporting::emitDropin(twoKernelProgram(), kBinding, withConstants(constants)));
    const std::string source = (dir.path / "weft_scale_add.c").string();
    const fs::path log = dir.path / "log.txt";
    std::string flags = " -Wall -Wextra -Werror -I'" + dir.path.string() + "' -c '" + source +
                        "' -o '" + (dir.path / "out.o").string() + "'";
    INFO(readTextFile(log));
    REQUIRE(haveCompiler("gcc"));
    CHECK_MESSAGE(runLogged("gcc -std=c99 -pedantic" + flags, log) == 0, readTextFile(log));
    if (haveCompiler("clang")) {
      CHECK_MESSAGE(runLogged("clang -std=c99 -pedantic" + flags, log) == 0, readTextFile(log));
    } else {
      MESSAGE("clang is not installed; its check is skipped");
    }
    REQUIRE(haveCompiler("g++"));
    CHECK_MESSAGE(runLogged("g++ -x c++ -std=c++17" + flags, log) == 0, readTextFile(log));
    // The header alone, included from C++.
    std::ofstream(dir.path / "use.cpp") << "#include \"weft_scale_add.h\"\nint main() { return "
                                           "WEFT_SCALE_ADD_INPUT_COUNT == 2 ? 0 : 1; }\n";
    CHECK_MESSAGE(runLogged("g++ -std=c++17 -Wall -Wextra -Werror -I'" + dir.path.string() +
                                "' -c '" + (dir.path / "use.cpp").string() + "' -o '" +
                                (dir.path / "use.o").string() + "'",
                            log) == 0,
                  readTextFile(log));
  }
}

TEST_CASE("the emitted queries and argument checks work without a device") {
  TempDir dir("weft_dropin_check");
  exporting::writeDropin(dir.path,
                         exporting::emitDropin(twoKernelProgram(), kBinding, withConstants({0})));
  // Error names are compared with <CL/cl.h>'s macros, written independently of the emitter.
  std::ofstream(dir.path / "check.c") << R"(#include "weft_scale_add.h"
#include <stdio.h>
#include <string.h>
#define NAME(code) if (strcmp(weft_scale_add_error_name(code), #code) != 0) { \
    printf("%s is named %s\n", #code, weft_scale_add_error_name(code)); failures++; }
int main(void) {
  int failures = 0;
  size_t dims[WEFT_SCALE_ADD_MAX_RANK];
  weft_scale_add_t* handle = (weft_scale_add_t*)1;
  NAME(CL_SUCCESS) NAME(CL_DEVICE_NOT_FOUND) NAME(CL_OUT_OF_RESOURCES)
  NAME(CL_BUILD_PROGRAM_FAILURE) NAME(CL_INVALID_VALUE) NAME(CL_INVALID_CONTEXT)
  NAME(CL_INVALID_MEM_OBJECT) NAME(CL_INVALID_PROGRAM_EXECUTABLE) NAME(CL_INVALID_KERNEL_ARGS)
  NAME(CL_INVALID_WORK_GROUP_SIZE) NAME(CL_INVALID_GLOBAL_WORK_SIZE)
  NAME(CL_INVALID_DEVICE_PARTITION_COUNT) NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
  if (strcmp(weft_scale_add_error_name(-12345), "unknown OpenCL error") != 0) failures++;
  if (weft_scale_add_buffer_bytes(WEFT_SCALE_ADD_BUFFER_TMP1) != 256) failures++;
  if (weft_scale_add_buffer_bytes(WEFT_SCALE_ADD_BUFFER_COUNT) != 0) failures++;
  if (strcmp(weft_scale_add_buffer_name(WEFT_SCALE_ADD_BUFFER_B), "b") != 0) failures++;
  if (WEFT_SCALE_ADD_OUTPUT_BUFFER != WEFT_SCALE_ADD_BUFFER_OUT) failures++;
  if (weft_scale_add_run_reads(WEFT_SCALE_ADD_BUFFER_OUT) != 1) failures++;
  if (weft_scale_add_run_reads(WEFT_SCALE_ADD_BUFFER_COUNT) != 0) failures++;
  if (weft_scale_add_buffer_shape(WEFT_SCALE_ADD_BUFFER_OUT, dims) != 1 || dims[0] != 64) {
    failures++;
  }
  if (weft_scale_add_create(NULL, NULL, &handle) != CL_INVALID_CONTEXT || handle != NULL) {
    printf("create without a context\n");
    failures++;
  }
  if (weft_scale_add_create(NULL, NULL, NULL) != CL_INVALID_VALUE) failures++;
  if (weft_scale_add_run(NULL, NULL, NULL, NULL, NULL, NULL) != CL_INVALID_VALUE) failures++;
  if (weft_scale_add_prepare(NULL, NULL, NULL, NULL) != CL_INVALID_VALUE) failures++;
  if (weft_scale_add_prepare_buffers(NULL, NULL, NULL, NULL) != CL_INVALID_VALUE) failures++;
  if (strcmp(weft_scale_add_error_name(WEFT_SCALE_ADD_ERROR_NOT_PREPARED),
             "WEFT_SCALE_ADD_ERROR_NOT_PREPARED") != 0) {
    failures++;
  }
  if (strcmp(weft_scale_add_build_log(NULL), "") != 0) failures++;
  weft_scale_add_destroy(NULL);
  printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
)";
  const fs::path log = dir.path / "log.txt";
  std::string d = dir.path.string();
  int built = runLogged("gcc -std=c99 -Wall -Wextra -Werror -I'" + d + "' '" + d + "/check.c' '" +
                            d + "/weft_scale_add.c' -o '" + d + "/check' -lOpenCL",
                        log);
  REQUIRE_MESSAGE(built == 0, readTextFile(log));
  CHECK_MESSAGE(runLogged("'" + d + "/check'", log) == 0, readTextFile(log));
  CHECK(contains(readTextFile(log), "0 failures"));
}

}  // namespace weft
