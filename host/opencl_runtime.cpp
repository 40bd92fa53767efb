// Implementation of the OpenCL runtime layer (see opencl_runtime.h): error-code names (weft's one
// table, export/opencl_error_names.h), POCL_CACHE_DIR set-up, platform and device listing and
// selection, and the thin RAII classes over contexts, queues, programs, kernels, buffers and
// events.
#include "host/opencl_runtime.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <system_error>

#include "codegen/launch_parts.h"
#include "export/opencl_error_names.h"

namespace weft::host {

// ---- errors -----------------------------------------------------------------------------------

std::string clErrorName(cl_int code) {
  const char* name = exporting::openclErrorName(code);
  return name != nullptr ? name : "unknown OpenCL error";
}

void checkCL(cl_int status, std::string_view call) {
  if (status != CL_SUCCESS) {
    throw OpenCLError(fmt::format("{} failed: {} ({})", call, clErrorName(status), status), status);
  }
}

// ---- environment --------------------------------------------------------------------------------

namespace {

std::string envOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

// $XDG_CACHE_HOME/weft/pocl, or ~/.cache/weft/pocl (XDG base directory rules: a relative
// XDG_CACHE_HOME is ignored). Empty when neither is known.
std::filesystem::path defaultKernelCacheDir() {
  std::string cacheHome = envOrEmpty("XDG_CACHE_HOME");
  if (!cacheHome.empty() && std::filesystem::path(cacheHome).is_absolute()) {
    return std::filesystem::path(cacheHome) / "weft" / "pocl";
  }
  std::string home = envOrEmpty("HOME");
  if (!home.empty()) return std::filesystem::path(home) / ".cache" / "weft" / "pocl";
  return {};
}

}  // namespace

void prepareOpenCLEnvironment() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("POCL_CACHE_DIR") != nullptr) return;  // the user's choice wins
    std::filesystem::path dir = defaultKernelCacheDir();
    if (dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    // Without a usable folder PoCL keeps its own default cache rather than failing builds.
    if (ec || !std::filesystem::is_directory(dir)) return;
    ::setenv("POCL_CACHE_DIR", dir.c_str(), /*overwrite=*/0);
  });
}

std::filesystem::path kernelCacheDir() {
  prepareOpenCLEnvironment();
  return std::filesystem::path(envOrEmpty("POCL_CACHE_DIR"));
}

// ---- platforms and devices ----------------------------------------------------------------------

namespace {

constexpr const char* kNoPlatformMessage =
    "no OpenCL platform found: install an OpenCL driver (e.g. apt-get install pocl-opencl-icd)";

std::string platformInfoString(cl_platform_id platform, cl_platform_info param) {
  std::size_t size = 0;
  checkCL(clGetPlatformInfo(platform, param, 0, nullptr, &size), "clGetPlatformInfo");
  std::string value(size, '\0');
  checkCL(clGetPlatformInfo(platform, param, size, value.data(), nullptr), "clGetPlatformInfo");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string trim(std::string_view text) {
  std::size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string listing(const std::vector<Device>& devices) {
  std::string out;
  for (const Device& device : devices) out += "\n  " + device.describe();
  return out;
}

}  // namespace

std::vector<Platform> listPlatforms() {
  prepareOpenCLEnvironment();
  cl_uint count = 0;
  cl_int status = clGetPlatformIDs(0, nullptr, &count);
  // ocl-icd answers CL_PLATFORM_NOT_FOUND_KHR when no ICD is installed; others answer 0.
  if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && count == 0)) {
    throw NoOpenCLError(kNoPlatformMessage, CL_PLATFORM_NOT_FOUND_KHR);
  }
  checkCL(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> ids(count);
  checkCL(clGetPlatformIDs(count, ids.data(), nullptr), "clGetPlatformIDs");
  std::vector<Platform> platforms;
  for (cl_uint i = 0; i < count; ++i) {
    Platform platform;
    platform.id = ids[i];
    platform.index = static_cast<int>(i);
    platform.name = platformInfoString(ids[i], CL_PLATFORM_NAME);
    platform.vendor = platformInfoString(ids[i], CL_PLATFORM_VENDOR);
    platform.version = platformInfoString(ids[i], CL_PLATFORM_VERSION);
    platforms.push_back(std::move(platform));
  }
  return platforms;
}

std::vector<Device> listDevices() {
  std::vector<Platform> platforms = listPlatforms();
  std::vector<Device> devices;
  for (const Platform& platform : platforms) {
    cl_uint count = 0;
    cl_int status = clGetDeviceIDs(platform.id, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
    if (status == CL_DEVICE_NOT_FOUND || count == 0) continue;  // a platform without devices
    checkCL(status, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(count);
    checkCL(clGetDeviceIDs(platform.id, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr),
            "clGetDeviceIDs");
    for (cl_device_id id : ids) {
      Device device;
      device.id = id;
      device.platform = platform.id;
      device.index = static_cast<int>(devices.size());
      device.platformIndex = platform.index;
      device.name = trim(deviceInfoString(id, CL_DEVICE_NAME));
      device.vendor = trim(deviceInfoString(id, CL_DEVICE_VENDOR));
      device.version = deviceInfoString(id, CL_DEVICE_VERSION);
      device.driverVersion = deviceInfoString(id, CL_DRIVER_VERSION);
      device.openclCVersion = deviceInfoString(id, CL_DEVICE_OPENCL_C_VERSION);
      device.platformName = platform.name;
      device.platformVendor = platform.vendor;
      device.platformVersion = platform.version;
      device.type = deviceInfo<cl_device_type>(id, CL_DEVICE_TYPE);
      devices.push_back(std::move(device));
    }
  }
  if (devices.empty()) {
    std::string names;
    for (const Platform& platform : platforms) {
      names += (names.empty() ? "" : ", ") + platform.name;
    }
    throw NoOpenCLError(fmt::format("no OpenCL device found: the OpenCL platform(s) {} have no "
                                    "devices (is the driver's hardware present?)",
                                    names),
                        CL_DEVICE_NOT_FOUND);
  }
  return devices;
}

std::string Device::typeName() const {
  if (type & CL_DEVICE_TYPE_GPU) return "gpu";
  if (type & CL_DEVICE_TYPE_CPU) return "cpu";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  if (type & CL_DEVICE_TYPE_CUSTOM) return "custom";
  return "default";
}

std::string Device::describe() const {
  return fmt::format("{}: {} ({}; {})", index, name, typeName(), platformName);
}

std::size_t defaultDeviceIndex(const std::vector<Device>& devices) {
  if (devices.empty()) throw NoOpenCLError(kNoPlatformMessage, CL_DEVICE_NOT_FOUND);
  for (cl_device_type wanted : {CL_DEVICE_TYPE_GPU, CL_DEVICE_TYPE_CPU}) {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      if (devices[i].type & wanted) return i;
    }
  }
  return 0;
}

Device selectDevice(const std::vector<Device>& devices, std::string_view selector) {
  if (devices.empty()) throw NoOpenCLError(kNoPlatformMessage, CL_DEVICE_NOT_FOUND);
  std::string wanted = lower(trim(selector));
  if (wanted.empty()) return devices[defaultDeviceIndex(devices)];

  auto fail = [&](const std::string& why) -> OpenCLError {
    return OpenCLError(
        fmt::format("{}; available OpenCL devices (select by index, by type "
                    "gpu/cpu/accelerator or by a part of the name):{}",
                    why, listing(devices)));
  };

  if (std::all_of(wanted.begin(), wanted.end(), [](char c) { return std::isdigit(c); })) {
    std::size_t index = 0;
    try {
      index = std::stoul(wanted);
    } catch (const std::exception&) {
      index = devices.size();  // too large for size_t: out of range below
    }
    if (index >= devices.size()) {
      throw fail(fmt::format("no OpenCL device has index {}", wanted));
    }
    return devices[index];
  }

  const std::pair<const char*, cl_device_type> types[] = {
      {"gpu", CL_DEVICE_TYPE_GPU},
      {"cpu", CL_DEVICE_TYPE_CPU},
      {"accelerator", CL_DEVICE_TYPE_ACCELERATOR}};
  for (const auto& [word, type] : types) {
    if (wanted != word) continue;
    for (const Device& device : devices) {
      if (device.type & type) return device;
    }
    throw fail(fmt::format("no OpenCL device of type {}", word));
  }

  // Names in order of precedence: the device's own name, its platform's name, then the vendors
  // (PoCL's platform is "Portable Computing Language" by "The pocl project").
  using Field = std::string Device::*;
  for (Field field :
       {&Device::name, &Device::platformName, &Device::platformVendor, &Device::vendor}) {
    for (const Device& device : devices) {
      if (lower(device.*field).find(wanted) != std::string::npos) return device;
    }
  }
  throw fail(
      fmt::format("no OpenCL device, platform or vendor name contains '{}'", trim(selector)));
}

Device selectDevice(std::string_view selector) { return selectDevice(listDevices(), selector); }

std::string deviceInfoString(cl_device_id device, cl_device_info param) {
  std::size_t size = 0;
  checkCL(clGetDeviceInfo(device, param, 0, nullptr, &size), "clGetDeviceInfo");
  std::string value(size, '\0');
  checkCL(clGetDeviceInfo(device, param, size, value.data(), nullptr), "clGetDeviceInfo");
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

bool deviceHasExtension(cl_device_id device, std::string_view extension) {
  std::istringstream words(deviceInfoString(device, CL_DEVICE_EXTENSIONS));
  std::string word;
  while (words >> word) {
    if (word == extension) return true;
  }
  return false;
}

// ---- programs, kernels, events
// --------------------------------------------------------------------

std::vector<std::string> Program::kernelNames() const {
  std::size_t size = 0;
  checkCL(clGetProgramInfo(get(), CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &size),
          "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
  std::string joined(size, '\0');
  checkCL(clGetProgramInfo(get(), CL_PROGRAM_KERNEL_NAMES, size, joined.data(), nullptr),
          "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
  while (!joined.empty() && joined.back() == '\0') joined.pop_back();
  std::vector<std::string> names;
  std::size_t start = 0;
  while (start <= joined.size() && !joined.empty()) {
    std::size_t end = joined.find(';', start);
    if (end == std::string::npos) end = joined.size();
    if (end > start) names.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

Kernel::Kernel(const Program& program, const std::string& name) : name_(name) {
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program.get(), name.c_str(), &status);
  if (status == CL_INVALID_KERNEL_NAME) {
    std::string known;
    for (const std::string& k : program.kernelNames()) known += (known.empty() ? "" : ", ") + k;
    throw OpenCLError(fmt::format("clCreateKernel failed: CL_INVALID_KERNEL_NAME ({}): the program "
                                  "has no kernel '{}' (its kernels: {})",
                                  status, name, known.empty() ? "none" : known),
                      status);
  }
  checkCL(status, fmt::format("clCreateKernel('{}')", name));
  kernel_ = KernelHandle(kernel);
}

void Kernel::setArg(cl_uint index, const Buffer& buffer) {
  cl_mem mem = buffer.get();
  setArgBytes(index, &mem, sizeof mem);
}

void Kernel::setArg(cl_uint index, LocalMemory local) {
  checkCL(clSetKernelArg(get(), index, local.bytes, nullptr),
          fmt::format("clSetKernelArg(kernel '{}', argument {}, {} bytes of local memory)", name_,
                      index, local.bytes));
}

void Kernel::setArgBytes(cl_uint index, const void* data, std::size_t bytes) {
  checkCL(clSetKernelArg(get(), index, bytes, data),
          fmt::format("clSetKernelArg(kernel '{}', argument {}, {} bytes)", name_, index, bytes));
}

cl_uint Kernel::argCount() const {
  cl_uint count = 0;
  checkCL(clGetKernelInfo(get(), CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr),
          "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
  return count;
}

std::size_t Kernel::maxWorkGroupSize(const Device& device) const {
  std::size_t size = 0;
  checkCL(clGetKernelWorkGroupInfo(get(), device.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof size, &size,
                                   nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
  return size;
}

std::size_t Kernel::preferredWorkGroupSizeMultiple(const Device& device) const {
  std::size_t multiple = 0;
  checkCL(clGetKernelWorkGroupInfo(get(), device.id, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                   sizeof multiple, &multiple, nullptr),
          "clGetKernelWorkGroupInfo(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)");
  return multiple;
}

void Event::wait() const {
  cl_event event = get();
  cl_int status = clWaitForEvents(1, &event);
  if (status == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) {
    // The command itself failed; its execution status holds the real error code.
    cl_int execution = CL_SUCCESS;
    if (clGetEventInfo(event, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof execution, &execution,
                       nullptr) == CL_SUCCESS &&
        execution < 0) {
      throw OpenCLError(fmt::format("the command failed on the device: {} ({})",
                                    clErrorName(execution), execution),
                        execution);
    }
  }
  checkCL(status, "clWaitForEvents");
}

std::uint64_t Event::durationNs() const {
  wait();
  cl_ulong start = 0, end = 0;
  checkCL(clGetEventProfilingInfo(get(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr),
          "clGetEventProfilingInfo(CL_PROFILING_COMMAND_START)");
  checkCL(clGetEventProfilingInfo(get(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr),
          "clGetEventProfilingInfo(CL_PROFILING_COMMAND_END)");
  return end >= start ? end - start : 0;
}

std::string NDRange::toString() const {
  std::string out = std::to_string(sizes[0]);
  for (cl_uint d = 1; d < dimensions; ++d) out += "x" + std::to_string(sizes[d]);
  return out;
}

// ---- context
// --------------------------------------------------------------------------------------

Context::Context(Device device) : device_(std::move(device)) {
  prepareOpenCLEnvironment();
  checkCL(clGetDeviceInfo(device_.id, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxWorkGroupSize_,
                          &maxWorkGroupSize_, nullptr),
          "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
  cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device_.platform), 0};
  cl_int status = CL_SUCCESS;
  cl_context context = clCreateContext(properties, 1, &device_.id, nullptr, nullptr, &status);
  checkCL(status, fmt::format("clCreateContext(device '{}')", device_.name));
  context_ = ContextHandle(context);
  cl_command_queue queue =
      clCreateCommandQueue(context, device_.id, CL_QUEUE_PROFILING_ENABLE, &status);
  checkCL(status, fmt::format("clCreateCommandQueue(device '{}', profiling)", device_.name));
  queue_ = QueueHandle(queue);
}

namespace {

// What the process writes to its standard error between construction and text(): an OpenCL
// implementation's compiler diagnostics (PoCL's clang prints warnings there, not into the build
// log), kept for the program's build log instead of the terminal. Captures are serialised: the
// descriptor is the process's.
class StderrCapture {
 public:
  StderrCapture() : lock_(mutex()) {
    std::fflush(stderr);
    file_ = std::tmpfile();
    saved_ = file_ ? dup(STDERR_FILENO) : -1;
    if (saved_ >= 0 && dup2(fileno(file_), STDERR_FILENO) < 0) {
      close(saved_);
      saved_ = -1;
    }
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  ~StderrCapture() {
    restore();
    if (file_) std::fclose(file_);
  }
  // Restores standard error and returns what was written to it meanwhile.
  std::string text() {
    restore();
    std::string out;
    if (!file_) return out;
    std::rewind(file_);
    char buffer[4096];
    size_t count = 0;
    while ((count = std::fread(buffer, 1, sizeof buffer, file_)) > 0) out.append(buffer, count);
    return out;
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    dup2(saved_, STDERR_FILENO);
    close(saved_);
    saved_ = -1;
  }
  std::lock_guard<std::mutex> lock_;
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace

Program Context::build(std::string_view source, std::string_view options) {
  const char* text = source.data();
  std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  cl_program raw = clCreateProgramWithSource(get(), 1, &text, &length, &status);
  checkCL(status, "clCreateProgramWithSource");
  ProgramHandle program(raw);

  std::string opts(options);
  std::string diagnostics;
  {
    StderrCapture capture;
    status = clBuildProgram(raw, 1, &device_.id, opts.c_str(), nullptr, nullptr);
    diagnostics = capture.text();
  }

  std::string log;
  std::size_t logSize = 0;
  if (clGetProgramBuildInfo(raw, device_.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &logSize) ==
          CL_SUCCESS &&
      logSize > 0) {
    log.assign(logSize, '\0');
    if (clGetProgramBuildInfo(raw, device_.id, CL_PROGRAM_BUILD_LOG, logSize, log.data(),
                              nullptr) != CL_SUCCESS) {
      log.clear();
    }
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  }
  // The compiler's diagnostics on standard error belong to the build log too.
  while (!diagnostics.empty() && diagnostics.back() == '\n') diagnostics.pop_back();
  if (!diagnostics.empty() && log.find(diagnostics) == std::string::npos) {
    log += (log.empty() ? "" : "\n") + diagnostics;
  }
  if (status != CL_SUCCESS) {
    throw BuildError(
        fmt::format("clBuildProgram failed: {} ({}) on device '{}' with options "
                    "'{}'; build log:\n{}",
                    clErrorName(status), status, device_.name, opts, log.empty() ? "(empty)" : log),
        status, log);
  }
  return Program(std::move(program), std::move(log));
}

Buffer Context::createBuffer(std::size_t bytes, cl_mem_flags flags) {
  if (bytes == 0) {
    throw OpenCLError("clCreateBuffer: a buffer of 0 bytes is not allowed by OpenCL",
                      CL_INVALID_BUFFER_SIZE);
  }
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(get(), flags, bytes, nullptr, &status);
  checkCL(status, fmt::format("clCreateBuffer({} bytes)", bytes));
  return Buffer(MemHandle(mem), bytes);
}

namespace {
void checkRange(const Buffer& buffer, std::size_t bytes, std::size_t offset, const char* what) {
  if (offset > buffer.bytes() || bytes > buffer.bytes() - offset) {
    throw OpenCLError(fmt::format("{} of {} bytes at offset {} does not fit a buffer of {} bytes",
                                  what, bytes, offset, buffer.bytes()),
                      CL_INVALID_VALUE);
  }
}
}  // namespace

void Context::write(const Buffer& buffer, const void* source, std::size_t bytes,
                    std::size_t offset) {
  checkRange(buffer, bytes, offset, "buffer write");
  if (bytes == 0) return;
  checkCL(clEnqueueWriteBuffer(queue(), buffer.get(), CL_TRUE, offset, bytes, source, 0, nullptr,
                               nullptr),
          fmt::format("clEnqueueWriteBuffer({} bytes)", bytes));
}

void Context::read(const Buffer& buffer, void* destination, std::size_t bytes, std::size_t offset) {
  checkRange(buffer, bytes, offset, "buffer read");
  if (bytes == 0) return;
  checkCL(clEnqueueReadBuffer(queue(), buffer.get(), CL_TRUE, offset, bytes, destination, 0,
                              nullptr, nullptr),
          fmt::format("clEnqueueReadBuffer({} bytes)", bytes));
}

void Context::fillZero(const Buffer& buffer) {
  const cl_uchar zero = 0;
  cl_event event = nullptr;
  checkCL(clEnqueueFillBuffer(queue(), buffer.get(), &zero, sizeof zero, 0, buffer.bytes(), 0,
                              nullptr, &event),
          fmt::format("clEnqueueFillBuffer({} bytes)", buffer.bytes()));
  Event(EventHandle(event)).wait();
}

Event Context::enqueue(const Kernel& kernel, const NDRange& global,
                       const std::optional<NDRange>& local, const std::optional<NDRange>& offset) {
  auto where = [&] {
    return fmt::format("launch of kernel '{}' (global {}, local {}{})", kernel.name(),
                       global.toString(), local ? local->toString() : "chosen by the driver",
                       offset ? ", offset " + offset->toString() : "");
  };
  if (offset && offset->dimensions != global.dimensions) {
    throw OpenCLError(fmt::format("{}: global size and offset have different dimensions", where()),
                      CL_INVALID_WORK_DIMENSION);
  }
  if (local) {
    if (local->dimensions != global.dimensions) {
      throw OpenCLError(
          fmt::format("{}: global and local sizes have different dimensions", where()),
          CL_INVALID_WORK_DIMENSION);
    }
    for (cl_uint d = 0; d < global.dimensions; ++d) {
      if (local->sizes[d] == 0 || global.sizes[d] % local->sizes[d] != 0) {
        throw OpenCLError(fmt::format("{}: the global size {} is not a multiple of the local "
                                      "size {} in dimension {} (OpenCL 1.2 requires it)",
                                      where(), global.sizes[d], local->sizes[d], d),
                          CL_INVALID_WORK_GROUP_SIZE);
      }
    }
    // The device's maximum is a hard limit. A kernel's CL_KERNEL_WORK_GROUP_SIZE is not
    // checked here: NVIDIA's OpenCL reports 256 for every kernel, a trivial one of 16
    // registers included, and runs work-groups of 512 and 1024 of them (H100, driver
    // 580.159, 2026-11-23); the driver's own refusal is reported below with that limit.
    if (local->total() > maxWorkGroupSize_) {
      throw OpenCLError(fmt::format("{}: a work-group of {} work-items exceeds the maximum "
                                    "work-group size {} of device '{}'",
                                    where(), local->total(), maxWorkGroupSize_, device_.name),
                        CL_INVALID_WORK_GROUP_SIZE);
    }
  }
  for (cl_uint d = 0; d < global.dimensions; ++d) {
    if (global.sizes[d] == 0) {
      throw OpenCLError(fmt::format("{}: the global size is 0 in dimension {}", where(), d),
                        CL_INVALID_GLOBAL_WORK_SIZE);
    }
  }
  cl_event event = nullptr;
  cl_int status = clEnqueueNDRangeKernel(
      queue(), kernel.get(), global.dimensions, offset ? offset->sizes.data() : nullptr,
      global.sizes.data(), local ? local->sizes.data() : nullptr, 0, nullptr, &event);
  if (status != CL_SUCCESS) {
    std::string detail;
    if (status == CL_INVALID_WORK_GROUP_SIZE && local) {
      std::size_t kernelLimit = kernel.maxWorkGroupSize(device_);
      if (local->total() > kernelLimit) {
        detail = fmt::format(": a work-group of {} work-items exceeds this kernel's limit of {}",
                             local->total(), kernelLimit);
      }
    }
    throw OpenCLError(fmt::format("clEnqueueNDRangeKernel failed: {} ({}) in the {}{}",
                                  clErrorName(status), status, where(), detail),
                      status);
  }
  return Event(EventHandle(event));
}

std::vector<LaunchRange> launchRanges(const NDRange& global, const NDRange& local) {
  std::array<int64_t, 3> globalSizes{}, localSizes{};
  for (size_t d = 0; d < 3; ++d) {
    globalSizes[d] = static_cast<int64_t>(global.sizes[d]);
    localSizes[d] = static_cast<int64_t>(std::max<std::size_t>(local.sizes[d], 1));
  }
  auto range = [&](const std::array<int64_t, 3>& sizes) {
    NDRange r = global;
    for (size_t d = 0; d < 3; ++d) r.sizes[d] = static_cast<std::size_t>(sizes[d]);
    return r;
  };
  std::vector<LaunchRange> ranges;
  for (const LaunchPart& part :
       launchParts(static_cast<int>(global.dimensions), globalSizes, localSizes)) {
    ranges.push_back({range(part.global), range(part.local), range(part.offset)});
  }
  return ranges;
}

std::vector<Event> Context::enqueueInParts(const Kernel& kernel, const NDRange& global,
                                           const NDRange& local) {
  if (local.dimensions != global.dimensions) return {enqueue(kernel, global, local)};
  const std::vector<LaunchRange> ranges = launchRanges(global, local);
  if (ranges.size() == 1) return {enqueue(kernel, global, local)};
  std::vector<Event> events;
  for (const LaunchRange& part : ranges) {
    events.push_back(enqueue(kernel, part.global, part.local, part.offset));
  }
  return events;
}

std::uint64_t Context::launch(const Kernel& kernel, const NDRange& global,
                              const std::optional<NDRange>& local) {
  Event event = enqueue(kernel, global, local);
  try {
    return event.durationNs();
  } catch (const OpenCLError& e) {
    // A kernel that faults reports it through its event (e.g. CL_OUT_OF_RESOURCES, NVIDIA -9999).
    throw OpenCLError(fmt::format("kernel '{}' (global {}) failed: {}", kernel.name(),
                                  global.toString(), e.what()),
                      e.code());
  }
}

void Context::finish() { checkCL(clFinish(queue()), "clFinish"); }

}  // namespace weft::host
