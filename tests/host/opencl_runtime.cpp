// Tests of the OpenCL runtime on a real device (label opencl; skipped by tests/opencl_main.cpp
// where no OpenCL platform exists). They list and select devices, build and run kernels on the
// default device (PoCL on weft's build machines) and check the results element by element, the
// profiled kernel time, local-memory and scalar arguments, buffer transfers, and the error
// messages for build failures (with the compiler's log), bad selectors, wrong kernel names,
// wrong argument sizes and invalid launch sizes. A queried profile must agree with OpenCL.
#include "host/opencl_runtime.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/device_profile.h"

namespace fs = std::filesystem;
using namespace weft::host;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// One context on the default device, shared by the tests of this file.
Context& context() {
  static Context ctx(selectDevice(""));
  return ctx;
}

const char* kVectorAdd = R"CL(
__kernel void vadd(__global const float* a, __global const float* b, __global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i] + OFFSET;
}
)CL";

// out[g] = in[neighbour in the same work-group] * factor, staged through __local memory so that
// the local argument and the barrier matter.
const char* kNeighbours = R"CL(
__kernel void neighbours(__global float* out, __global const float* in, float factor,
                     __local float* scratch) {
  size_t lid = get_local_id(0), size = get_local_size(0), gid = get_global_id(0);
  scratch[lid] = in[gid] * factor;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[gid] = scratch[(lid + 1) % size];
}
)CL";

}  // namespace

TEST_CASE("platforms and devices are listed") {
  auto platforms = listPlatforms();
  REQUIRE(!platforms.empty());
  for (const Platform& p : platforms) CHECK(!p.name.empty());
  auto devices = listDevices();
  REQUIRE(!devices.empty());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    INFO(devices[i].describe());
    CHECK(devices[i].index == static_cast<int>(i));
    CHECK(!devices[i].name.empty());
    CHECK(contains(devices[i].version, "OpenCL"));
    CHECK(devices[i].platformIndex < static_cast<int>(platforms.size()));
    CHECK(devices[i].platformName == platforms[devices[i].platformIndex].name);
  }
}

TEST_CASE("devices are selected by index, type and name") {
  auto devices = listDevices();
  const Device& first = devices[0];
  CHECK(selectDevice("0").id == first.id);
  CHECK((selectDevice(first.typeName()).type & first.type) != 0);
  // A part of the name, in other case.
  std::string part = first.name.substr(0, std::min<std::size_t>(first.name.size(), 5));
  std::transform(part.begin(), part.end(), part.begin(), ::toupper);
  CHECK(selectDevice(part).index <= first.index);

  bool hasPocl = std::any_of(devices.begin(), devices.end(), [](const Device& d) {
    return contains(d.platformVendor, "pocl") || contains(d.platformVersion, "PoCL");
  });
  if (hasPocl) {
    Device pocl = selectDevice("pocl");
    CHECK(contains(pocl.platformVersion, "PoCL"));
    CHECK((selectDevice("cpu").type & CL_DEVICE_TYPE_CPU) != 0);
  }

  // The default is a GPU if there is one.
  bool hasGpu = std::any_of(devices.begin(), devices.end(),
                            [](const Device& d) { return (d.type & CL_DEVICE_TYPE_GPU) != 0; });
  CHECK(((selectDevice("").type & CL_DEVICE_TYPE_GPU) != 0) == hasGpu);

  try {
    selectDevice("no-such-device-anywhere");
    FAIL("expected an OpenCLError");
  } catch (const OpenCLError& e) {
    std::string message = e.what();
    CHECK(contains(message, "'no-such-device-anywhere'"));
    for (const Device& d : devices) CHECK(contains(message, d.describe()));
  }
  CHECK_THROWS_WITH_AS(selectDevice(std::to_string(devices.size())),
                       doctest::Contains("available OpenCL devices"), OpenCLError);
}

TEST_CASE("a vector addition runs and its kernel time is measured") {
  Context& ctx = context();
  Program program = ctx.build(kVectorAdd, "-DOFFSET=0.5f");
  CHECK(program.kernelNames() == std::vector<std::string>{"vadd"});
  Kernel kernel(program, "vadd");
  CHECK(kernel.argCount() == 4);

  for (auto [n, local] : {std::pair<int, std::size_t>{1000, 0}, {4096, 64}}) {
    INFO("n = " << n << ", local = " << local);
    std::vector<float> a(n), b(n);
    for (int i = 0; i < n; ++i) {
      a[i] = 0.25f * static_cast<float>(i);
      b[i] = 1000.0f - static_cast<float>(3 * i);
    }
    Buffer bufA = ctx.createBuffer(std::span<const float>(a), CL_MEM_READ_ONLY);
    Buffer bufB = ctx.createBuffer(std::span<const float>(b), CL_MEM_READ_ONLY);
    Buffer bufC = ctx.createBuffer(n * sizeof(float));
    kernel.setArgs(bufA, bufB, bufC, std::int32_t{n});
    std::uint64_t ns = local == 0 ? ctx.launch(kernel, NDRange(n))
                                  : ctx.launch(kernel, NDRange(n), NDRange(local));
    CHECK(ns > 0);
    std::vector<float> c = ctx.read<float>(bufC);
    REQUIRE(c.size() == static_cast<std::size_t>(n));
    int wrong = 0;
    for (int i = 0; i < n; ++i) {
      if (c[i] != a[i] + b[i] + 0.5f) ++wrong;
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("local memory, float arguments and 2D launches") {
  Context& ctx = context();
  Program program = ctx.build(kNeighbours);
  Kernel kernel(program, "neighbours");
  const std::size_t n = 256, group = 16;
  std::vector<float> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  Buffer input = ctx.createBuffer(std::span<const float>(in));
  Buffer output = ctx.createBuffer(n * sizeof(float));
  kernel.setArgs(output, input, 2.0f, LocalMemory{group * sizeof(float)});
  Event event = ctx.enqueue(kernel, NDRange(n), NDRange(group));
  CHECK(event.durationNs() > 0);
  std::vector<float> out = ctx.read<float>(output);
  for (std::size_t g = 0; g < n; ++g) {
    std::size_t expected = (g / group) * group + (g % group + 1) % group;
    INFO("g = " << g);
    REQUIRE(out[g] == 2.0f * static_cast<float>(expected));
  }

  // A 2D launch: each work-item writes its linear index.
  Program grid = ctx.build(R"CL(
    __kernel void ids(__global int* out) {
      out[get_global_id(1) * get_global_size(0) + get_global_id(0)] =
          (int)(get_global_id(1) * 1000 + get_global_id(0));
    })CL");
  Kernel ids(grid, "ids");
  Buffer buffer = ctx.createBuffer(32 * 8 * sizeof(std::int32_t));
  ids.setArg(0, buffer);
  ctx.launch(ids, NDRange(32, 8), NDRange(8, 4));
  std::vector<std::int32_t> values = ctx.read<std::int32_t>(buffer);
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 32; ++x) REQUIRE(values[y * 32 + x] == y * 1000 + x);
  }
}

TEST_CASE("buffers: partial writes and reads, fill with zero, range checks") {
  Context& ctx = context();
  Buffer buffer = ctx.createBuffer(16 * sizeof(float));
  std::vector<float> ones(16, 1.0f);
  ctx.write(buffer, std::span<const float>(ones));
  float two[2] = {2.0f, 3.0f};
  ctx.write(buffer, two, sizeof two, 4 * sizeof(float));
  std::vector<float> back = ctx.read<float>(buffer);
  CHECK(back[3] == 1.0f);
  CHECK(back[4] == 2.0f);
  CHECK(back[5] == 3.0f);
  CHECK(back[6] == 1.0f);
  float tail[2];
  ctx.read(buffer, tail, sizeof tail, 4 * sizeof(float));
  CHECK(tail[1] == 3.0f);

  ctx.fillZero(buffer);
  back = ctx.read<float>(buffer);
  CHECK(std::all_of(back.begin(), back.end(), [](float v) { return v == 0.0f; }));

  CHECK_THROWS_WITH_AS(ctx.write(buffer, two, sizeof two, 15 * sizeof(float)),
                       "buffer write of 8 bytes at offset 60 does not fit a buffer of 64 bytes",
                       OpenCLError);
  CHECK_THROWS_WITH_AS(ctx.createBuffer(0), doctest::Contains("0 bytes"), OpenCLError);
}

TEST_CASE("a build failure shows the build log") {
  Context& ctx = context();
  const char* broken = R"CL(
    __kernel void broken(__global float* out) {
      out[get_global_id(0)] = undeclared_identifier_xyz * 2.0f;
    })CL";
  try {
    ctx.build(broken, "-cl-fast-relaxed-math");
    FAIL("the build should fail");
  } catch (const BuildError& e) {
    std::string message = e.what();
    INFO(message);
    CHECK(contains(message, "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11)"));
    CHECK(contains(message, "with options '-cl-fast-relaxed-math'"));
    CHECK(contains(message, ctx.device().name));
    CHECK(contains(message, "undeclared_identifier_xyz"));  // the compiler's log
    CHECK(contains(e.buildLog(), "undeclared_identifier_xyz"));
    CHECK(e.code() == CL_BUILD_PROGRAM_FAILURE);
  }
  // Options reach the compiler: an unknown one fails the build.
  CHECK_THROWS_WITH_AS(ctx.build(kVectorAdd, "-DOFFSET=0 -no-such-option-qq"),
                       doctest::Contains("clBuildProgram failed"), OpenCLError);
}

TEST_CASE("compiler warnings go to the build log, not to the terminal") {
  Context& ctx = context();
  // Division by zero: a warning clang gives by default (OpenCL C is compiled by clang in PoCL
  // and in NVIDIA's driver alike); a source of its own, so that no cache answers the build.
  const std::string source =
      "__kernel void warned(__global int* out) {\n"
      "  out[get_global_id(0)] = 1 / 0; /* " +
      std::to_string(std::rand()) + std::to_string(getpid()) + " */\n}\n";
  // Standard error redirected to a file while building: nothing may reach it.
  std::fflush(stderr);
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  const int saved = dup(STDERR_FILENO);
  REQUIRE(dup2(fileno(file), STDERR_FILENO) >= 0);
  Program program = ctx.build(source, "");
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::rewind(file);
  char buffer[4096];
  const size_t printed = std::fread(buffer, 1, sizeof buffer, file);
  std::fclose(file);
  CHECK_MESSAGE(printed == 0, std::string(buffer, printed));
  INFO(program.buildLog());
  CHECK(contains(program.buildLog(), "division by zero"));
}

TEST_CASE("kernel and launch errors name the kernel and the problem") {
  Context& ctx = context();
  Program program = ctx.build(kVectorAdd, "-DOFFSET=0");
  CHECK_THROWS_WITH_AS(Kernel(program, "vsub"),
                       doctest::Contains("the program has no kernel 'vsub' (its kernels: vadd)"),
                       OpenCLError);

  Kernel kernel(program, "vadd");
  // int parameter given 8 bytes.
  CHECK_THROWS_WITH_AS(kernel.setArg(3, std::int64_t{5}),
                       doctest::Contains("clSetKernelArg(kernel 'vadd', argument 3, 8 bytes) "
                                         "failed: CL_INVALID_ARG_SIZE (-51)"),
                       OpenCLError);
  CHECK_THROWS_WITH_AS(kernel.setArg(9, std::int32_t{5}),
                       doctest::Contains("CL_INVALID_ARG_INDEX (-49)"), OpenCLError);

  Buffer buffer = ctx.createBuffer(1024 * sizeof(float));
  kernel.setArgs(buffer, buffer, buffer, std::int32_t{1000});
  CHECK_THROWS_WITH_AS(
      ctx.launch(kernel, NDRange(1000), NDRange(64)),
      doctest::Contains("launch of kernel 'vadd' (global 1000, local 64): the global size 1000 is "
                        "not a multiple of the local size 64 in dimension 0"),
      OpenCLError);
  CHECK_THROWS_WITH_AS(ctx.launch(kernel, NDRange(1024), NDRange(32, 2)),
                       doctest::Contains("different dimensions"), OpenCLError);
  CHECK(kernel.maxWorkGroupSize(ctx.device()) >= 1);
  const std::size_t deviceLimit = ctx.maxWorkGroupSize();
  CHECK(deviceLimit == static_cast<std::size_t>(queryProfile(ctx.device()).maxWorkGroupSize));
  REQUIRE(deviceLimit >= 1);
  const std::string tooLarge = "exceeds the maximum work-group size " + std::to_string(deviceLimit);
  CHECK_THROWS_WITH_AS(ctx.launch(kernel, NDRange(deviceLimit * 4), NDRange(deviceLimit * 2)),
                       doctest::Contains(tooLarge.c_str()), OpenCLError);
}

TEST_CASE("a queried profile agrees with OpenCL and survives JSON") {
  for (const Device& device : listDevices()) {
    INFO(device.describe());
    DeviceProfile p = queryProfile(device);
    CHECK(p.deviceName == device.name);
    CHECK(p.computeUnits ==
          static_cast<int>(deviceInfo<cl_uint>(device.id, CL_DEVICE_MAX_COMPUTE_UNITS)));
    CHECK(p.maxWorkGroupSize == static_cast<std::int64_t>(deviceInfo<std::size_t>(
                                    device.id, CL_DEVICE_MAX_WORK_GROUP_SIZE)));
    CHECK(p.localMemoryBytes ==
          static_cast<std::int64_t>(deviceInfo<cl_ulong>(device.id, CL_DEVICE_LOCAL_MEM_SIZE)));
    // A CPU device names the processor behind it; others none.
    CHECK(p.hostProcessor == ((device.type & CL_DEVICE_TYPE_CPU) ? hostProcessor() : ""));
    CHECK(p.fingerprint == profileFingerprint(device.name, device.driverVersion,
                                              device.platformVersion, p.computeUnits,
                                              p.hostProcessor));
    CHECK(p.registersPerWorkItem ==
          estimateRegistersPerWorkItem(p.deviceType, p.vendor, p.preferredFloatVectorWidth));
    CHECK(p.cacheLineBytes ==
          static_cast<int>(deviceInfo<cl_uint>(device.id, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE)));
    CHECK(parseProfile(profileToJson(p).dump(), "queried") == p);
    if (contains(device.platformVersion, "PoCL") && (device.type & CL_DEVICE_TYPE_CPU)) {
      CHECK(p.cacheLineBytes > 0);
      // Linux describes the CPU's caches (CI and the benches run on Linux): at least the
      // smallest first-level data cache of a current x86 or Arm core, 16 KiB.
      if (std::ifstream("/sys/devices/system/cpu/cpu0/cache/index0/size")) {
        CHECK(p.firstLevelCacheBytes >= (16 << 10));
      }
      // Where the second level is described, it is larger than the first.
      if (p.secondLevelCacheBytes > 0) CHECK(p.secondLevelCacheBytes > p.firstLevelCacheBytes);
      CHECK_FALSE(p.hasDedicatedLocalMemory());  // PoCL emulates local memory in RAM
      CHECK(p.deviceType == "cpu");
      // Linux names the processor (x86 and Arm entries both known).
      if (std::ifstream("/proc/cpuinfo")) CHECK_FALSE(p.hostProcessor.empty());
    }
  }
}

TEST_CASE("PoCL caches kernel builds in weft's cache folder") {
  fs::path dir = kernelCacheDir();
  if (dir.empty() || !contains(context().device().platformVersion, "PoCL")) return;
  CHECK(fs::is_directory(dir));
  context().build(kVectorAdd, "-DOFFSET=1.0f");
  bool any = fs::recursive_directory_iterator(dir) != fs::recursive_directory_iterator();
  CHECK_MESSAGE(any, "no PoCL cache entries in " << dir);
}
