// Tests of the measurement bundle (export/bundle_export.h) without a device: the files a bundle of
// hand-built programs consists of, the line-based description the harness reads (inputs,
// output, buffers with roles and input indices, launch sizes, arguments, the key echoed as
// given, invalid variants), the JSON description, the errors for programs that disagree or bad
// ids, the harness compiling warning-free as C99 (gcc and clang, with and without
// optimisation), and the reading of results files: a valid one, and malformed JSON, a foreign
// file, a missing field and an unknown status, each with a message naming the problem.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "export/bundle_export.h"
#include "tests/support/export_check.h"
#include "tests/support/run_weft.h"

namespace fs = std::filesystem;
using weft::testing::contains;
using weft::testing::haveCompiler;
using weft::testing::runLogged;
using weft::testing::readTextFile;
using weft::testing::TempDir;

namespace weft {
namespace {

Type vectorOf(const Arith& n) { return Type::array(Type::floatType(), n); }

// The reference: out = a + b in one kernel without a local size.
CompiledProgram addProgram(const Arith& n) {
  CompiledProgram program;
  program.definitionName = "add";
  program.source =
      "kernel void r0(global const float* a, global const float* b, global float* out) {\n"
      "  int i = get_global_id(0);\n  out[i] = a[i] + b[i];\n}\n";
  program.buffers = {{"in_a", BufferPlan::Role::Input, 0, ScalarKind::Float, n, vectorOf(n)},
                     {"in_b", BufferPlan::Role::Input, 1, ScalarKind::Float, n, vectorOf(n)},
                     {"out", BufferPlan::Role::Output, -1, ScalarKind::Float, n, vectorOf(n)}};
  program.outputBuffer = 2;
  program.outputType = vectorOf(n);
  program.kernels = {testing::threeBufferKernel("r0", 0, 1, 2, n)};
  return program;
}

// A variant: tmp = a (k0, local memory, a size argument, local size L), out = tmp + b (k1);
// the buffers in another order than the reference's.
CompiledProgram twoKernelVariant() {
  Arith n = Arith::size("N");
  CompiledProgram program;
  program.definitionName = "add";
  program.source =
      "kernel void k0(global const float* a, global float* tmp, int n, local float* s) {\n"
      "  int i = get_global_id(0);\n  if (i < n) tmp[i] = a[i];\n}\n"
      "kernel void k1(global const float* tmp, global const float* b, global float* out) {\n"
      "  int i = get_global_id(0);\n  out[i] = tmp[i] + b[i];\n}\n";
  program.buffers = {{"tmp1", BufferPlan::Role::Temporary, -1, ScalarKind::Float, n, vectorOf(n)},
                     {"in_b", BufferPlan::Role::Input, 1, ScalarKind::Float, n, vectorOf(n)},
                     {"out", BufferPlan::Role::Output, -1, ScalarKind::Float, n, vectorOf(n)},
                     {"in_a", BufferPlan::Role::Input, 0, ScalarKind::Float, n, vectorOf(n)}};
  program.outputBuffer = 2;
  program.outputType = vectorOf(n);
  program.kernels = {testing::localMemoryKernel(3, 0, n),
                     testing::threeBufferKernel("k1", 0, 1, 2, n)};
  return program;
}

exporting::BundleProgram referenceProgram() {
  exporting::BundleProgram reference;
  reference.id = "reference";
  reference.program = addProgram(Arith(64));
  reference.sourceHash = "00000000000000aa";
  reference.spaceBytes = 768;
  return reference;
}

std::vector<exporting::BundleProgram> variantPrograms() {
  exporting::BundleProgram ok;
  ok.id = "v0001";
  ok.key = R"({"L":8,"v":1})";
  ok.parameters = {{"L", 8}, {"v", 1}};
  ok.program = twoKernelVariant();
  ok.binding = {{"N", 64}, {"L", 8}};
  ok.sourceHash = "0123456789abcdef";
  ok.spaceBytes = 1024;
  exporting::BundleProgram invalid;
  invalid.id = "v0002";
  invalid.key = R"({"L":3,"v":1})";
  invalid.invalid = "generation: something\nwent wrong";
  return {ok, invalid};
}

exporting::BundleMetadata metadata() {
  exporting::BundleMetadata m;
  m.program = "add_64";
  m.description = "out = a + b\nfor a test";
  m.flops = 64;
  m.compilerVersion = "weft test-version";
  m.profile = "pocl-cpu";
  m.inputNames = {"a", "b"};
  m.minTimeMs = 0;
  m.buildOptions = "-cl-mad-enable";
  return m;
}

std::string fileOf(const std::vector<exporting::DropinFile>& files, const std::string& name) {
  return testing::exportedFile(files, name, "bundle file");
}

// The lines of `text` from the one starting with `first` up to the next "end".
std::string block(const std::string& text, const std::string& first) {
  size_t start = text.find(first);
  REQUIRE(start != std::string::npos);
  size_t end = text.find("\nend\n", start);
  REQUIRE(end != std::string::npos);
  return text.substr(start, end - start);
}

// A results file as the harness writes it, with one variant line given.
std::string resultsText(const std::string& variantLine) {
  return R"({
"format": "weft-bundle-results 1",
"program": "add_64",
"compiler": "weft test-version",
"description": "out = a + b",
"flops": 64,
"tolerance": 0.001,
"device": {"name": "  Some GPU ", "vendor": "V", "driverVersion": "1.2", "platformVersion": "OpenCL 1.2 X", "deviceVersion": "OpenCL 1.2", "platformName": "P", "computeUnits": 12, "hostProcessor": ""},
"reference": {"id": "reference", "status": "ok", "medianNs": 500, "samples": [400, 500, 600], "maxError": 0, "allowedError": 0, "buildMs": 3.5, "warmUpNs": 700, "kernels": [{"name": "r0", "ns": 400}], "spaceBytes": 768, "sourceHash": "00000000000000aa", "parameters": {}, "seconds": 0.5, "message": ""},
"variants": [
)" + variantLine +
         "\n]\n}\n";
}

const char* kOkLine =
    R"({"id": "v0001", "status": "ok", "medianNs": 200, "samples": [300, 200, 100], "maxError": 1e-07, "allowedError": 0.002, "buildMs": 12.5, "warmUpNs": 900, "kernels": [{"name": "k0", "ns": 50}, {"name": "k1", "ns": 40}], "spaceBytes": 1024, "sourceHash": "0123456789abcdef", "parameters": {"v":1,"L":8}, "seconds": 0.7, "message": ""})";

}  // namespace

TEST_CASE("a bundle has the kernels, both descriptions, the harness, CMake and a README") {
  std::vector<exporting::DropinFile> files =
      exporting::emitBundle(referenceProgram(), variantPrograms(), metadata());
  std::vector<std::string> names;
  for (const exporting::DropinFile& file : files) names.push_back(file.name);
  // No kernel file for the invalid variant.
  CHECK(names == std::vector<std::string>{"kernels/reference.cl", "kernels/v0001.cl",
                                          "variants.txt", "variants.json", "harness.c",
                                          "CMakeLists.txt", "README.md"});
  const std::string kernel = fileOf(files, "kernels/v0001.cl");
  CHECK(contains(kernel, "parameters: L=8, v=1"));
  CHECK(contains(kernel, "k0: global 64, local 8"));
  CHECK(contains(kernel, "k1: global 64, local chosen by the driver"));
  CHECK(contains(kernel, twoKernelVariant().source));
  CHECK(contains(fileOf(files, "CMakeLists.txt"), "add_executable(weft_bundle_harness harness.c)"));
  CHECK(contains(fileOf(files, "README.md"), "weft import results.json --db results.db"));
  // The error names come from the shared table.
  const std::string harness = fileOf(files, "harness.c");
  CHECK(contains(harness, "case -11:\n      return \"CL_BUILD_PROGRAM_FAILURE\";"));
  CHECK(contains(harness, "weft test-version"));
}

TEST_CASE("variants.txt describes every program as the harness reads it") {
  const std::string text = fileOf(
      exporting::emitBundle(referenceProgram(), variantPrograms(), metadata()), "variants.txt");
  std::istringstream lines(text);
  std::string first;
  std::getline(lines, first);
  CHECK(first == "weft-bundle 1");
  CHECK(contains(text, "\nprogram add_64\n"));
  CHECK(contains(text, "\ndescription out = a + b for a test\n"));  // one line
  CHECK(contains(text, "\nmin_time_ms 0\n"));
  CHECK(contains(text, "\nbuild_options -cl-mad-enable\n"));
  CHECK(contains(text, "\ninputs 2\ninput 0 float32 64 a\ninput 1 float32 64 b\n"));
  CHECK(contains(text, "\noutput float32 64\nvariants 2\n"));
  CHECK(block(text, "variant reference") ==
        "variant reference kernels/reference.cl\nhash 00000000000000aa\nspace 768\nkey {}\n"
        "buffers 3\nbuffer input 0 float32 256 a\nbuffer input 1 float32 256 b\n"
        "buffer output -1 float32 256 out\nkernels 1\nkernel r0 1 64 1 1 0 1 1 1 3\nparts 0\n"
        "arg buffer 0\narg buffer 1\narg buffer 2");
  // Buffers in the emitted order (inputs by parameter, output, temporaries); arguments point
  // into that order.
  CHECK(block(text, "variant v0001") ==
        "variant v0001 kernels/v0001.cl\nhash 0123456789abcdef\nspace 1024\n"
        "key {\"L\":8,\"v\":1}\nbuffers 4\nbuffer input 0 float32 256 a\n"
        "buffer input 1 float32 256 b\nbuffer output -1 float32 256 out\n"
        "buffer temporary -1 float32 256 tmp1\nkernels 2\nkernel k0 1 64 1 1 1 8 1 1 4\nparts 0\n"
        "arg buffer 0\narg buffer 3\narg int 64\narg local 32\nkernel k1 1 64 1 1 0 1 1 1 3\nparts "
        "0\n"
        "arg buffer 3\narg buffer 1\narg buffer 2");
  CHECK(block(text, "variant v0002") ==
        "variant v0002 kernels/v0002.cl\nhash -\nspace 0\nkey {\"L\":3,\"v\":1}\n"
        "invalid generation: something went wrong");
}

TEST_CASE("variants.json lists ids, parameters, kernels, buffers and the output buffer") {
  nlohmann::json json = nlohmann::json::parse(fileOf(
      exporting::emitBundle(referenceProgram(), variantPrograms(), metadata()), "variants.json"));
  CHECK(json["program"] == "add_64");
  CHECK(json["profile"] == "pocl-cpu");
  REQUIRE(json["variants"].size() == 2);
  const nlohmann::json& v = json["variants"][0];
  CHECK(v["id"] == "v0001");
  CHECK(v["parameters"] == nlohmann::json{{"L", 8}, {"v", 1}});
  CHECK(v["outputBuffer"] == "out");
  REQUIRE(v["kernels"].size() == 2);
  CHECK(v["kernels"][0]["globalSize"] == nlohmann::json{64});
  CHECK(v["kernels"][0]["localSize"] == nlohmann::json{8});
  CHECK(v["kernels"][1]["localSize"].is_null());
  CHECK(v["kernels"][0]["arguments"][3] == nlohmann::json{{"kind", "local"}, {"bytes", 32}});
  CHECK(v["buffers"][3]["role"] == "temporary");
  CHECK(v["buffers"][1]["input"] == 1);
  CHECK(json["variants"][1]["invalid"] == "generation: something\nwent wrong");
  CHECK(json["reference"]["kernels"][0]["name"] == "r0");
}

TEST_CASE("programs that disagree, bad ids and an invalid reference are errors") {
  std::vector<exporting::BundleProgram> variants = variantPrograms();
  SUBCASE("another output size") {
    variants[0].binding["N"] = 32;
    CHECK_THROWS_WITH_AS(exporting::emitBundle(referenceProgram(), variants, metadata()),
                         doctest::Contains("the programs of a bundle must share their inputs"),
                         exporting::BundleError);
  }
  SUBCASE("an unbound size") {
    variants[0].binding.erase("L");
    CHECK_THROWS_WITH_AS(exporting::emitBundle(referenceProgram(), variants, metadata()),
                         doctest::Contains("v0001: "), exporting::BundleError);
  }
  SUBCASE("an id that is no file name") {
    variants[0].id = "../v1";
    CHECK_THROWS_WITH_AS(exporting::emitBundle(referenceProgram(), variants, metadata()),
                         doctest::Contains("not a plain file name"), exporting::BundleError);
  }
  SUBCASE("two programs with one id") {
    variants[1].id = "v0001";
    CHECK_THROWS_WITH_AS(exporting::emitBundle(referenceProgram(), variants, metadata()),
                         doctest::Contains("two bundle programs have the id 'v0001'"),
                         exporting::BundleError);
  }
  SUBCASE("an invalid reference") {
    exporting::BundleProgram reference = referenceProgram();
    reference.program.reset();
    reference.invalid = "no";
    CHECK_THROWS_AS(exporting::emitBundle(reference, variants, metadata()), exporting::BundleError);
  }
}

TEST_CASE("the harness compiles warning-free as C99 with gcc and clang") {
  TempDir dir("weft_bundle_compile");
  exporting::writeBundle(dir.path,
                         exporting::emitBundle(referenceProgram(), variantPrograms(), metadata()));
  CHECK(fs::exists(dir.path / "kernels" / "v0001.cl"));
  const fs::path log = dir.path / "log.txt";
  const std::string flags = " -std=c99 -pedantic -Wall -Wextra -Werror -c '" +
                            (dir.path / "harness.c").string() + "' -o '" +
                            (dir.path / "harness.o").string() + "'";
  REQUIRE(haveCompiler("gcc"));
  for (const char* optimisation : {" -O0", " -O2"}) {
    CHECK_MESSAGE(runLogged(std::string("gcc") + optimisation + flags, log) == 0,
                  readTextFile(log));
    if (haveCompiler("clang")) {
      CHECK_MESSAGE(runLogged(std::string("clang") + optimisation + flags, log) == 0,
                    readTextFile(log));
    }
  }
}

TEST_CASE("a results file is read back with every field") {
  exporting::BundleResults results = exporting::parseBundleResults(resultsText(kOkLine), "r.json");
  CHECK(results.program == "add_64");
  CHECK(results.compiler == "weft test-version");
  CHECK(results.device.name == "  Some GPU ");
  CHECK(results.device.platformVersion == "OpenCL 1.2 X");
  CHECK(results.device.computeUnits == 12);
  CHECK(results.device.hostProcessor.empty());
  REQUIRE(results.reference);
  CHECK(results.reference->medianNs == 500u);
  REQUIRE(results.variants.size() == 1);
  const exporting::BundleResult& v = results.variants[0];
  CHECK(v.id == "v0001");
  CHECK(v.status == "ok");
  CHECK(v.parameters == R"({"v":1,"L":8})");  // as written; the importer canonicalises
  CHECK(v.medianNs == 200u);
  CHECK(v.samplesNs == std::vector<uint64_t>{300, 200, 100});
  CHECK(v.buildMs == doctest::Approx(12.5));
  CHECK(v.kernelNs.size() == 2);
  CHECK(v.spaceBytes == 1024);
}

TEST_CASE("a results file of an older harness has no compute units or processor") {
  std::string older = resultsText(kOkLine);
  const std::string fields = ", \"computeUnits\": 12, \"hostProcessor\": \"\"";
  older.replace(older.find(fields), fields.size(), "");
  REQUIRE(older.find("computeUnits") == std::string::npos);
  exporting::BundleResults results = exporting::parseBundleResults(older, "r.json");
  CHECK(results.device.computeUnits == 0);
  CHECK(results.device.hostProcessor.empty());
}

TEST_CASE("bad results files give messages that say what is wrong") {
  CHECK_THROWS_WITH_AS(
      exporting::parseBundleResults("{\n\"format\": \"weft-bundle-results 1\",\n x", "r.json"),
      doctest::Contains("r.json:3:"), exporting::BundleError);
  CHECK_THROWS_WITH_AS(exporting::parseBundleResults("{\"variants\": []}", "r.json"),
                       doctest::Contains("not a results file of a weft bundle harness"),
                       exporting::BundleError);
  // A number beyond a double's range (found by fuzz/fuzz_bundle_results).
  CHECK_THROWS_WITH_AS(
      exporting::parseBundleResults("{\"format\": \"weft-bundle-results 1\", \"flops\": 5e7773}",
                                    "r.json"),
      doctest::Contains("r.json: unreadable JSON"), exporting::BundleError);
  std::string noStatus = kOkLine;
  noStatus.replace(noStatus.find("\"status\": \"ok\", "), 16, "");
  CHECK_THROWS_WITH_AS(exporting::parseBundleResults(resultsText(noStatus), "r.json"),
                       doctest::Contains("variant 1 (v0001): no \"status\""),
                       exporting::BundleError);
  std::string unknown = kOkLine;
  unknown.replace(unknown.find("\"ok\""), 4, "\"fine\"");
  CHECK_THROWS_WITH_AS(exporting::parseBundleResults(resultsText(unknown), "r.json"),
                       doctest::Contains("unknown status 'fine'"), exporting::BundleError);
  std::string noMedian = kOkLine;
  noMedian.replace(noMedian.find("200,"), 3, "null");
  CHECK_THROWS_WITH_AS(exporting::parseBundleResults(resultsText(noMedian), "r.json"),
                       doctest::Contains("an ok variant without \"medianNs\""),
                       exporting::BundleError);
  CHECK_THROWS_WITH_AS(
      exporting::parseBundleResults(resultsText(std::string(kOkLine) + ",\n" + kOkLine), "r.json"),
      doctest::Contains("the id appears twice"), exporting::BundleError);
  std::string negativeUnits = resultsText(kOkLine);
  negativeUnits.replace(negativeUnits.find("\"computeUnits\": 12"), 18, "\"computeUnits\": -1");
  CHECK_THROWS_WITH_AS(exporting::parseBundleResults(negativeUnits, "r.json"),
                       doctest::Contains("device: \"computeUnits\" is out of range"),
                       exporting::BundleError);
  TempDir dir("weft_bundle_results");
  CHECK_THROWS_WITH_AS(exporting::readBundleResults(dir.path / "results.json"),
                       doctest::Contains("no such file"), exporting::BundleError);
}

}  // namespace weft
