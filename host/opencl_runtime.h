// weft's OpenCL runtime: a small RAII layer over the OpenCL 1.2 C API, reached through the ICD
// loader (ocl-icd), so any installed driver works: PoCL on the CPU, NVIDIA, Mali, ... It lists
// platforms and devices, chooses one from a selector string (`--device 0|gpu|cpu|pocl|...`),
// builds programs (a failed build throws with the full build log), sets typed kernel arguments,
// moves buffers and launches kernels on an in-order queue with profiling enabled, returning the
// kernel's cl_event time in nanoseconds. Every OpenCL failure becomes an OpenCLError naming the
// call and the error code's symbolic name; a machine without any OpenCL platform gives a
// NoOpenCLError that says how to install one. Before the first OpenCL call the runtime points
// PoCL's kernel cache (POCL_CACHE_DIR) at the user's cache directory so that kernel builds are
// reused across runs.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>  // CL_PLATFORM_NOT_FOUND_KHR and vendor queries

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace weft::host {

// ---- errors -----------------------------------------------------------------------------------

// Any failure reported by OpenCL (or a misuse caught before OpenCL sees it, code CL_SUCCESS then).
class OpenCLError : public std::runtime_error {
 public:
  explicit OpenCLError(const std::string& message, cl_int code = CL_SUCCESS)
      : std::runtime_error(message), code_(code) {}
  cl_int code() const { return code_; }

 private:
  cl_int code_;
};

// No OpenCL platform (or no device on any platform) is installed: nothing can run on OpenCL.
class NoOpenCLError : public OpenCLError {
 public:
  using OpenCLError::OpenCLError;
};

// clBuildProgram failed; what() holds the call, the device, the options and the full build log.
class BuildError : public OpenCLError {
 public:
  BuildError(const std::string& message, cl_int code, std::string buildLog)
      : OpenCLError(message, code), buildLog_(std::move(buildLog)) {}
  const std::string& buildLog() const { return buildLog_; }

 private:
  std::string buildLog_;
};

// The symbolic name of an OpenCL error code ("CL_OUT_OF_RESOURCES" for -5): every code of
// OpenCL 1.2 and the later core codes, common extension codes, and NVIDIA's unofficial -9999
// (the table of export/opencl_error_names.h). Unknown codes give "unknown OpenCL error".
std::string clErrorName(cl_int code);

// Throws OpenCLError("<call> failed: <NAME> (<code>)") unless status is CL_SUCCESS.
void checkCL(cl_int status, std::string_view call);

// ---- environment --------------------------------------------------------------------------------

// Prepares the process for its first OpenCL call (idempotent, thread-safe): unless POCL_CACHE_DIR
// is already set, sets it to "$XDG_CACHE_HOME/weft/pocl" (default "~/.cache/weft/pocl") and
// creates that folder. Every function below that talks to OpenCL calls it first.
void prepareOpenCLEnvironment();

// The folder PoCL caches kernel builds in (POCL_CACHE_DIR after prepareOpenCLEnvironment), or an
// empty path when neither POCL_CACHE_DIR nor a home or cache directory is known.
std::filesystem::path kernelCacheDir();

// ---- platforms and devices ----------------------------------------------------------------------

struct Platform {
  cl_platform_id id = nullptr;
  int index = 0;  // position in clGetPlatformIDs order
  std::string name, vendor, version;
};

struct Device {
  cl_device_id id = nullptr;
  cl_platform_id platform = nullptr;
  int index = 0;          // global index over all platforms' devices, the `--device N` number
  int platformIndex = 0;  // index of its platform
  std::string name, vendor, version, driverVersion, openclCVersion;
  std::string platformName, platformVendor, platformVersion;
  cl_device_type type = 0;

  // "gpu", "cpu", "accelerator", "custom" or "default".
  std::string typeName() const;
  // One line for listings: "0: pthread-... (cpu; Portable Computing Language)".
  std::string describe() const;
};

// Every platform, in clGetPlatformIDs order. Throws NoOpenCLError when there is none.
std::vector<Platform> listPlatforms();

// Every device of every platform (CL_DEVICE_TYPE_ALL), numbered by Device::index. Throws
// NoOpenCLError when there is no platform or no platform has a device.
std::vector<Device> listDevices();

// Position in `devices` of the default choice: the first GPU, else the first CPU (PoCL), else
// the first device. `devices` must not be empty.
std::size_t defaultDeviceIndex(const std::vector<Device>& devices);

// Chooses a device from `devices` by selector:
//   ""                    the default (defaultDeviceIndex)
//   "0", "1", ...         the global index
//   "gpu", "cpu", "accelerator"   the first device of that type
//   anything else         a device whose name contains the selector, case-insensitively
//                         ("nvidia", "mali"); else one whose platform name, platform vendor or
//                         device vendor contains it ("pocl": vendor "The pocl project"); the
//                         first by index at the first of these levels that matches
// Throws OpenCLError listing the available devices when nothing matches.
Device selectDevice(const std::vector<Device>& devices, std::string_view selector);

// selectDevice(listDevices(), selector).
Device selectDevice(std::string_view selector = "");

// Raw device queries, for device profiles and tests. Throw OpenCLError on failure.
std::string deviceInfoString(cl_device_id device, cl_device_info param);
template <class T>
T deviceInfo(cl_device_id device, cl_device_info param) {
  static_assert(std::is_trivially_copyable_v<T>);
  T value{};
  checkCL(clGetDeviceInfo(device, param, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}
// Whether the device's CL_DEVICE_EXTENSIONS lists `extension` (a whole word match).
bool deviceHasExtension(cl_device_id device, std::string_view extension);

// ---- handles ------------------------------------------------------------------------------------

namespace detail {
// A reference-counted OpenCL object: copying retains it, destruction releases it.
template <class H, cl_int(CL_API_CALL* Retain)(H), cl_int(CL_API_CALL* Release)(H)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(H handle) : handle_(handle) {}  // takes over one reference
  Handle(const Handle& other) : handle_(other.handle_) {
    if (handle_) Retain(handle_);
  }
  Handle(Handle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Handle& operator=(Handle other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  ~Handle() {
    if (handle_) Release(handle_);
  }
  H get() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  H handle_ = nullptr;
};
}  // namespace detail

using ContextHandle = detail::Handle<cl_context, clRetainContext, clReleaseContext>;
using QueueHandle = detail::Handle<cl_command_queue, clRetainCommandQueue, clReleaseCommandQueue>;
using ProgramHandle = detail::Handle<cl_program, clRetainProgram, clReleaseProgram>;
using KernelHandle = detail::Handle<cl_kernel, clRetainKernel, clReleaseKernel>;
using MemHandle = detail::Handle<cl_mem, clRetainMemObject, clReleaseMemObject>;
using EventHandle = detail::Handle<cl_event, clRetainEvent, clReleaseEvent>;

// ---- buffers, programs, kernels, events ---------------------------------------------------------

// A global-memory buffer of a fixed size in bytes.
class Buffer {
 public:
  Buffer() = default;
  Buffer(MemHandle mem, std::size_t bytes) : mem_(std::move(mem)), bytes_(bytes) {}
  cl_mem get() const { return mem_.get(); }
  std::size_t bytes() const { return bytes_; }

 private:
  MemHandle mem_;
  std::size_t bytes_ = 0;
};

// A program built for one device. buildLog() keeps the compiler's output (warnings) of a
// successful build.
class Program {
 public:
  Program(ProgramHandle program, std::string buildLog)
      : program_(std::move(program)), buildLog_(std::move(buildLog)) {}
  cl_program get() const { return program_.get(); }
  const std::string& buildLog() const { return buildLog_; }
  // The names of the program's kernels (CL_PROGRAM_KERNEL_NAMES).
  std::vector<std::string> kernelNames() const;

 private:
  ProgramHandle program_;
  std::string buildLog_;
};

// The size of a __local kernel argument.
struct LocalMemory {
  std::size_t bytes;
};

// A kernel of a built program with typed argument setting. Scalar arguments must have exactly
// the kernel parameter's type: int32 for int, uint32 for uint, float for float, and so on.
class Kernel {
 public:
  Kernel(const Program& program, const std::string& name);

  void setArg(cl_uint index, const Buffer& buffer);
  void setArg(cl_uint index, LocalMemory local);
  void setArg(cl_uint index, std::int32_t value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, std::uint32_t value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, std::int64_t value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, std::uint64_t value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, float value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, double value) { setArgBytes(index, &value, sizeof value); }
  void setArg(cl_uint index, bool) = delete;  // OpenCL forbids bool kernel parameters
  // Any other by-value argument (vector types such as cl_float4, structs).
  void setArgBytes(cl_uint index, const void* data, std::size_t bytes);

  // Sets arguments 0, 1, 2, ... in order.
  template <class... Args>
  void setArgs(const Args&... args) {
    cl_uint index = 0;
    (setArg(index++, args), ...);
  }

  const std::string& name() const { return name_; }
  cl_kernel get() const { return kernel_.get(); }
  cl_uint argCount() const;
  // The largest work-group the driver says this kernel can be launched with on `device`
  // (CL_KERNEL_WORK_GROUP_SIZE). Not always true: NVIDIA's OpenCL reports 256 for every kernel
  // and runs larger work-groups (Context::enqueue only cites it when the driver refuses one).
  std::size_t maxWorkGroupSize(const Device& device) const;
  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE: work-groups a multiple of it run best (the
  // SIMD width a CPU implementation vectorises work-items to, a GPU's warp).
  std::size_t preferredWorkGroupSizeMultiple(const Device& device) const;

 private:
  KernelHandle kernel_;
  std::string name_;
};

// A command's event. durationNs() waits for the command and returns END - START of its
// profiling information (the queue has profiling enabled).
class Event {
 public:
  explicit Event(EventHandle event) : event_(std::move(event)) {}
  cl_event get() const { return event_.get(); }
  void wait() const;
  std::uint64_t durationNs() const;

 private:
  EventHandle event_;
};

// Global or local work sizes in 1, 2 or 3 dimensions.
struct NDRange {
  std::array<std::size_t, 3> sizes{1, 1, 1};
  cl_uint dimensions = 1;

  NDRange(std::size_t x) : sizes{x, 1, 1}, dimensions(1) {}  // NOLINT: implicit on purpose
  NDRange(std::size_t x, std::size_t y) : sizes{x, y, 1}, dimensions(2) {}
  NDRange(std::size_t x, std::size_t y, std::size_t z) : sizes{x, y, z}, dimensions(3) {}
  std::size_t total() const { return sizes[0] * sizes[1] * sizes[2]; }
  std::string toString() const;  // "64", "64x8", "64x8x2"
};

// One launch of a kernel in a split launch: its global size, local size and global offset.
struct LaunchRange {
  NDRange global, local, offset;
};
// The parts (codegen/launch_parts.h) of a launch of `global` in work-groups of `local`, in
// launch order: one when local divides global.
std::vector<LaunchRange> launchRanges(const NDRange& global, const NDRange& local);

// ---- context
// --------------------------------------------------------------------------------------

// An OpenCL context on one device with one in-order command queue that records profiling
// information. Copies share the same context and queue.
class Context {
 public:
  explicit Context(Device device);

  const Device& device() const { return device_; }
  // The device's CL_DEVICE_MAX_WORK_GROUP_SIZE, queried once when the context is made: the
  // largest work-group enqueue accepts.
  std::size_t maxWorkGroupSize() const { return maxWorkGroupSize_; }
  cl_context get() const { return context_.get(); }
  cl_command_queue queue() const { return queue_.get(); }

  // Builds `source` with `options` (e.g. "-cl-fast-relaxed-math"). On failure throws BuildError
  // whose message holds the device, the options and the full build log.
  Program build(std::string_view source, std::string_view options = {});

  // Uninitialised buffer of `bytes` (> 0) bytes.
  Buffer createBuffer(std::size_t bytes, cl_mem_flags flags = CL_MEM_READ_WRITE);
  // Buffer holding a copy of `data`.
  template <class T>
  Buffer createBuffer(std::span<const T> data, cl_mem_flags flags = CL_MEM_READ_WRITE) {
    Buffer buffer = createBuffer(data.size_bytes(), flags);
    write(buffer, data.data(), data.size_bytes());
    return buffer;
  }

  // Blocking copies between host memory and a buffer; offset and size are checked against the
  // buffer's size before OpenCL sees them.
  void write(const Buffer& buffer, const void* source, std::size_t bytes, std::size_t offset = 0);
  void read(const Buffer& buffer, void* destination, std::size_t bytes, std::size_t offset = 0);
  template <class T>
  void write(const Buffer& buffer, std::span<const T> data) {
    write(buffer, data.data(), data.size_bytes());
  }
  template <class T>
  std::vector<T> read(const Buffer& buffer) {
    std::vector<T> out(buffer.bytes() / sizeof(T));
    read(buffer, out.data(), out.size() * sizeof(T));
    return out;
  }
  // Sets every byte of the buffer to zero and waits.
  void fillZero(const Buffer& buffer);

  // Enqueues `kernel` over `global` work-items in work-groups of `local` (nullopt lets the driver
  // choose). Checks first that the dimensions agree, that local divides global in every
  // dimension and that the work-group fits the device, naming the kernel and sizes if not.
  // `offset`, when given, is the global offset of the launch (get_global_id counts from it).
  Event enqueue(const Kernel& kernel, const NDRange& global,
                const std::optional<NDRange>& local = std::nullopt,
                const std::optional<NDRange>& offset = std::nullopt);
  // Enqueues `kernel` over `global` in work-groups of `local` that need not divide it, as the
  // parts of codegen/launch_parts.h (one launch when local divides global); only for a kernel
  // that is launchable in parts (KernelPlan::launchableInParts). One event per part, in order.
  std::vector<Event> enqueueInParts(const Kernel& kernel, const NDRange& global,
                                    const NDRange& local);
  // enqueue, wait, and return the kernel's execution time in nanoseconds (from its cl_event).
  std::uint64_t launch(const Kernel& kernel, const NDRange& global,
                       const std::optional<NDRange>& local = std::nullopt);

  // Waits until every enqueued command has completed.
  void finish();

 private:
  Device device_;
  std::size_t maxWorkGroupSize_ = 0;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
  ContextHandle context_;
  QueueHandle queue_;
};

}  // namespace weft::host
