// Tests of the OpenCL runtime's parts that need no OpenCL device, so they run on every machine:
// the error-code names (checked against the values of the Khronos headers), device selection
// over a made-up device list (default choice, index, type, name, platform and vendor matches,
// and error messages that list the devices), NDRange text, and the POCL_CACHE_DIR set-up.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "host/opencl_runtime.h"

namespace fs = std::filesystem;
using weft::host::Device;
using weft::host::OpenCLError;

TEST_CASE("every OpenCL 1.2 error code has its symbolic name") {
#define WEFT_CHECK_NAME(code) CHECK(weft::host::clErrorName(code) == #code)
  WEFT_CHECK_NAME(CL_SUCCESS);
  WEFT_CHECK_NAME(CL_DEVICE_NOT_FOUND);
  WEFT_CHECK_NAME(CL_DEVICE_NOT_AVAILABLE);
  WEFT_CHECK_NAME(CL_COMPILER_NOT_AVAILABLE);
  WEFT_CHECK_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE);
  WEFT_CHECK_NAME(CL_OUT_OF_RESOURCES);
  WEFT_CHECK_NAME(CL_OUT_OF_HOST_MEMORY);
  WEFT_CHECK_NAME(CL_PROFILING_INFO_NOT_AVAILABLE);
  WEFT_CHECK_NAME(CL_MEM_COPY_OVERLAP);
  WEFT_CHECK_NAME(CL_IMAGE_FORMAT_MISMATCH);
  WEFT_CHECK_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED);
  WEFT_CHECK_NAME(CL_BUILD_PROGRAM_FAILURE);
  WEFT_CHECK_NAME(CL_MAP_FAILURE);
  WEFT_CHECK_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET);
  WEFT_CHECK_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
  WEFT_CHECK_NAME(CL_COMPILE_PROGRAM_FAILURE);
  WEFT_CHECK_NAME(CL_LINKER_NOT_AVAILABLE);
  WEFT_CHECK_NAME(CL_LINK_PROGRAM_FAILURE);
  WEFT_CHECK_NAME(CL_DEVICE_PARTITION_FAILED);
  WEFT_CHECK_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
  WEFT_CHECK_NAME(CL_INVALID_VALUE);
  WEFT_CHECK_NAME(CL_INVALID_DEVICE_TYPE);
  WEFT_CHECK_NAME(CL_INVALID_PLATFORM);
  WEFT_CHECK_NAME(CL_INVALID_DEVICE);
  WEFT_CHECK_NAME(CL_INVALID_CONTEXT);
  WEFT_CHECK_NAME(CL_INVALID_QUEUE_PROPERTIES);
  WEFT_CHECK_NAME(CL_INVALID_COMMAND_QUEUE);
  WEFT_CHECK_NAME(CL_INVALID_HOST_PTR);
  WEFT_CHECK_NAME(CL_INVALID_MEM_OBJECT);
  WEFT_CHECK_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
  WEFT_CHECK_NAME(CL_INVALID_IMAGE_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_SAMPLER);
  WEFT_CHECK_NAME(CL_INVALID_BINARY);
  WEFT_CHECK_NAME(CL_INVALID_BUILD_OPTIONS);
  WEFT_CHECK_NAME(CL_INVALID_PROGRAM);
  WEFT_CHECK_NAME(CL_INVALID_PROGRAM_EXECUTABLE);
  WEFT_CHECK_NAME(CL_INVALID_KERNEL_NAME);
  WEFT_CHECK_NAME(CL_INVALID_KERNEL_DEFINITION);
  WEFT_CHECK_NAME(CL_INVALID_KERNEL);
  WEFT_CHECK_NAME(CL_INVALID_ARG_INDEX);
  WEFT_CHECK_NAME(CL_INVALID_ARG_VALUE);
  WEFT_CHECK_NAME(CL_INVALID_ARG_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_KERNEL_ARGS);
  WEFT_CHECK_NAME(CL_INVALID_WORK_DIMENSION);
  WEFT_CHECK_NAME(CL_INVALID_WORK_GROUP_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_WORK_ITEM_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_GLOBAL_OFFSET);
  WEFT_CHECK_NAME(CL_INVALID_EVENT_WAIT_LIST);
  WEFT_CHECK_NAME(CL_INVALID_EVENT);
  WEFT_CHECK_NAME(CL_INVALID_OPERATION);
  WEFT_CHECK_NAME(CL_INVALID_GL_OBJECT);
  WEFT_CHECK_NAME(CL_INVALID_BUFFER_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_MIP_LEVEL);
  WEFT_CHECK_NAME(CL_INVALID_GLOBAL_WORK_SIZE);
  WEFT_CHECK_NAME(CL_INVALID_PROPERTY);
  WEFT_CHECK_NAME(CL_INVALID_IMAGE_DESCRIPTOR);
  WEFT_CHECK_NAME(CL_INVALID_COMPILER_OPTIONS);
  WEFT_CHECK_NAME(CL_INVALID_LINKER_OPTIONS);
  WEFT_CHECK_NAME(CL_INVALID_DEVICE_PARTITION_COUNT);
  WEFT_CHECK_NAME(CL_PLATFORM_NOT_FOUND_KHR);
#undef WEFT_CHECK_NAME
  // Codes of later OpenCL versions, which a newer driver may still return.
  CHECK(weft::host::clErrorName(-69) == "CL_INVALID_PIPE_SIZE");
  CHECK(weft::host::clErrorName(-72) == "CL_MAX_SIZE_RESTRICTION_EXCEEDED");
  CHECK(weft::host::clErrorName(-20) == "unknown OpenCL error");
  CHECK(weft::host::clErrorName(12345) == "unknown OpenCL error");
}

TEST_CASE("checkCL names the call, the code's name and its number") {
  CHECK_NOTHROW(weft::host::checkCL(CL_SUCCESS, "clFinish"));
  try {
    weft::host::checkCL(CL_OUT_OF_RESOURCES, "clEnqueueNDRangeKernel");
    FAIL("expected an OpenCLError");
  } catch (const OpenCLError& e) {
    CHECK(std::string(e.what()) == "clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES (-5)");
    CHECK(e.code() == CL_OUT_OF_RESOURCES);
  }
}

namespace {

Device fakeDevice(int index, std::string name, cl_device_type type, std::string platformName,
                  std::string platformVendor, std::string vendor) {
  Device d;
  d.index = index;
  d.name = std::move(name);
  d.type = type;
  d.platformName = std::move(platformName);
  d.platformVendor = std::move(platformVendor);
  d.vendor = std::move(vendor);
  return d;
}

// A machine with PoCL's CPU device first, then two NVIDIA GPUs and an accelerator.
std::vector<Device> machine() {
  return {fakeDevice(0, "pthread-znver4-AMD EPYC", CL_DEVICE_TYPE_CPU,
                     "Portable Computing Language", "The pocl project", "AuthenticAMD"),
          fakeDevice(1, "NVIDIA H100 80GB HBM3", CL_DEVICE_TYPE_GPU, "NVIDIA CUDA",
                     "NVIDIA Corporation", "NVIDIA Corporation"),
          fakeDevice(2, "NVIDIA A100", CL_DEVICE_TYPE_GPU, "NVIDIA CUDA", "NVIDIA Corporation",
                     "NVIDIA Corporation"),
          fakeDevice(3, "Intel FPGA Emulation Device", CL_DEVICE_TYPE_ACCELERATOR,
                     "Intel(R) FPGA Emulation Platform", "Intel(R) Corporation",
                     "Intel(R) Corporation")};
}

std::string selectionError(const std::vector<Device>& devices, const std::string& selector) {
  try {
    weft::host::selectDevice(devices, selector);
  } catch (const OpenCLError& e) {
    return e.what();
  }
  FAIL("selector '" << selector << "' should fail");
  return "";
}

}  // namespace

TEST_CASE("the default device is the first GPU, else the first CPU, else the first device") {
  auto devices = machine();
  CHECK(weft::host::defaultDeviceIndex(devices) == 1);
  CHECK(weft::host::selectDevice(devices, "").index == 1);
  CHECK(weft::host::selectDevice(devices, "  ").index == 1);
  devices.erase(devices.begin() + 1, devices.begin() + 3);  // no GPU left
  CHECK(weft::host::defaultDeviceIndex(devices) == 0);
  devices.erase(devices.begin());  // only the accelerator
  CHECK(weft::host::defaultDeviceIndex(devices) == 0);
  CHECK(weft::host::selectDevice(devices, "").name == "Intel FPGA Emulation Device");
}

TEST_CASE("devices are selected by index, type and name") {
  auto devices = machine();
  CHECK(weft::host::selectDevice(devices, "0").index == 0);
  CHECK(weft::host::selectDevice(devices, "2").index == 2);
  CHECK(weft::host::selectDevice(devices, "cpu").index == 0);
  CHECK(weft::host::selectDevice(devices, "GPU").index == 1);
  CHECK(weft::host::selectDevice(devices, "accelerator").index == 3);
  CHECK(weft::host::selectDevice(devices, "a100").index == 2);    // device name
  CHECK(weft::host::selectDevice(devices, "nvidia").index == 1);  // first of several
  CHECK(weft::host::selectDevice(devices, "cuda").index == 1);    // platform name
  CHECK(weft::host::selectDevice(devices, "pocl").index == 0);    // platform vendor
  CHECK(weft::host::selectDevice(devices, "Portable").index == 0);
  // A name match on a later device wins over a vendor match on an earlier one.
  std::vector<Device> amd = {
      fakeDevice(0, "pthread-cpu", CL_DEVICE_TYPE_CPU, "Portable Computing Language",
                 "The pocl project", "AuthenticAMD"),
      fakeDevice(1, "AMD Radeon RX 7900", CL_DEVICE_TYPE_GPU, "AMD Accelerated Parallel Processing",
                 "Advanced Micro Devices, Inc.", "Advanced Micro Devices, Inc.")};
  CHECK(weft::host::selectDevice(amd, "amd").index == 1);
  CHECK(weft::host::selectDevice(amd, "pocl").index == 0);
  CHECK(weft::host::selectDevice(devices, "authenticamd").index == 0);  // device vendor
}

TEST_CASE("a selector that matches nothing lists the available devices") {
  auto devices = machine();
  for (const char* selector : {"7", "tpu", "99999999999999999999999"}) {
    std::string message = selectionError(devices, selector);
    INFO(message);
    CHECK(message.find("available OpenCL devices") != std::string::npos);
    for (const Device& d : devices) CHECK(message.find(d.describe()) != std::string::npos);
  }
  CHECK(selectionError(devices, "7").find("no OpenCL device has index 7") != std::string::npos);
  CHECK(selectionError(devices, "tpu")
            .find("no OpenCL device, platform or vendor name contains 'tpu'") != std::string::npos);
  devices.pop_back();
  CHECK(selectionError(devices, "accelerator").find("no OpenCL device of type accelerator") !=
        std::string::npos);
  CHECK(devices[1].describe() == "1: NVIDIA H100 80GB HBM3 (gpu; NVIDIA CUDA)");
  CHECK_THROWS_AS(weft::host::selectDevice(std::vector<Device>{}, ""), weft::host::NoOpenCLError);
}

TEST_CASE("NDRange") {
  weft::host::NDRange a(64);
  weft::host::NDRange b(64, 8);
  weft::host::NDRange c(64, 8, 2);
  CHECK(a.toString() == "64");
  CHECK(b.toString() == "64x8");
  CHECK(c.toString() == "64x8x2");
  CHECK(c.total() == 1024);
  CHECK(c.dimensions == 3);
}

TEST_CASE("POCL_CACHE_DIR defaults to the user's cache folder and is created") {
  // This process has made no OpenCL call yet, so the runtime still sets the variable up.
  fs::path cache = fs::temp_directory_path() / ("weft_test_runtime_" + std::to_string(::getpid()));
  fs::remove_all(cache);
  ::unsetenv("POCL_CACHE_DIR");
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  fs::path dir = weft::host::kernelCacheDir();
  CHECK(dir == cache / "weft" / "pocl");
  CHECK(fs::is_directory(dir));
  const char* env = std::getenv("POCL_CACHE_DIR");
  REQUIRE(env != nullptr);
  CHECK(fs::path(env) == dir);
  // Later calls change nothing (set-up happens once, before the first OpenCL call).
  ::setenv("XDG_CACHE_HOME", "/elsewhere", 1);
  CHECK(weft::host::kernelCacheDir() == dir);
  fs::remove_all(cache);
}
