// Device profiles: the hardware facts weft's constraint solver and code generator need about an
// OpenCL device (work-group limits, local memory size and whether it is real, allocation limits,
// vector widths, a register budget, ...), independent of whether the device is present. A profile
// comes from one of three places:
//   - built in: host/profiles/*.json (ARM Mali-G72 MP12 as in the LIFT paper, a generic NVIDIA GPU
//     and the Hopper class (H100/H200) through OpenCL, the PoCL CPU device), embedded into the
//     library at build time;
//   - a user's JSON file, in --profile-dir folders or $XDG_CONFIG_HOME/weft/profiles
//     (~/.config/weft/profiles), or given by path;
//   - queried from a present device through OpenCL (queryProfile).
// Profiles are stored as JSON objects whose keys are the field names below; sizes are in bytes.
// `weft devices --json` prints queried profiles in this format, so a user can save one as a file.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace weft::host {

struct Device;

// A malformed, invalid or unknown profile; the message starts with the file (or origin) name.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where a device's __local memory lives: in dedicated on-chip memory (CL_LOCAL) or emulated in
// ordinary global memory (CL_GLOBAL: Mali GPUs, CPU devices such as PoCL), where staging data in
// local memory brings no speed.
enum class LocalMemoryType { Local, Global };

struct DeviceProfile {
  std::string name;           // profile name, e.g. "mali-g72"; a queried profile gets a slug of the
                              // device name ("pthread-skylake-avx512-amd-epyc")
  std::string deviceName;     // CL_DEVICE_NAME
  std::string vendor;         // CL_DEVICE_VENDOR
  std::string deviceType;     // "gpu", "cpu" or "accelerator"
  std::string driverVersion;  // CL_DRIVER_VERSION ("" when unknown)
  std::string platformVersion;  // CL_PLATFORM_VERSION ("" when unknown)
  // The processor behind a CPU device, as hostProcessorFromCpuinfo names it ("AuthenticAMD
  // family 26 model 2"); "" for other devices and where unknown. A CPU implementation's device
  // name may leave the processor's generation out (PoCL under a hypervisor names AMD's Zen 4
  // and Zen 5 alike "pthread-skylake-avx512-AMD EPYC"), so the fingerprint mixes it in.
  std::string hostProcessor;

  int computeUnits = 1;               // CL_DEVICE_MAX_COMPUTE_UNITS
  int maxClockMHz = 0;                // CL_DEVICE_MAX_CLOCK_FREQUENCY (0: unknown)
  std::int64_t maxWorkGroupSize = 1;  // CL_DEVICE_MAX_WORK_GROUP_SIZE
  std::array<std::int64_t, 3> maxWorkItemSizes{1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
  // Work-items that execute in lockstep (NVIDIA warp, AMD wavefront, Mali quad, CPU SIMD loop):
  // good work-group sizes are multiples of it.
  int workGroupMultiple = 1;
  std::int64_t localMemoryBytes = 0;  // CL_DEVICE_LOCAL_MEM_SIZE, per work-group
  LocalMemoryType localMemoryType = LocalMemoryType::Global;  // CL_DEVICE_LOCAL_MEM_TYPE
  std::int64_t maxConstantBufferBytes = 0;                    // CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE
  std::int64_t maxAllocationBytes = 0;                        // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  std::int64_t globalMemoryBytes = 0;                         // CL_DEVICE_GLOBAL_MEM_SIZE
  int preferredFloatVectorWidth = 1;  // CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT
  int nativeFloatVectorWidth = 1;     // CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT
  // The number of 32-bit values a work-item can keep in registers without spilling (or, on a
  // GPU, without losing the occupancy the profile's source names): the solver's budget for
  // private memory. Built-in profiles take it from vendor documentation; queried ones from the
  // heuristic documented at queryProfile.
  int registersPerWorkItem = 1;
  // The 32-bit registers all work-items of one work-group share (0: no such limit, e.g. a CPU):
  // a kernel using r registers per work-item runs in work-groups of at most this / r
  // work-items. NVIDIA: 65536 per thread block (CUDA C++ Programming Guide, 'Technical
  // Specifications per Compute Capability', 5.0 to 9.0): a thread block of 1024 threads has
  // at most 64 registers per thread. Arm Mali Bifrost: 384 x 32 (a kernel of more than 32
  // registers runs work-groups of at most 192). Optional in a profile's JSON (default 0).
  std::int64_t registersPerWorkGroup = 0;
  // A CPU's arithmetic rates, which OpenCL does not report, per compute unit and per cycle of
  // the profile's clock (maxClockMHz: a turbo clock above it shows as more per cycle): float
  // FMA lanes at the native vector width and at half of it (a half-width FMA may occupy a whole
  // pipe), the cycles from an FMA to the next one using its result, and vector loads of the
  // native width from the first-level cache. 0: unknown (a queried profile gets them from the
  // arithmetic probe, host/arithmetic_probe.h; the cost model otherwise assumes AMD Zen 4's).
  // Optional in the JSON.
  double fmaLanesPerCycle = 0;
  double fmaHalfWidthLanesPerCycle = 0;
  double fmaLatencyCycles = 0;
  double vectorLoadsPerCycle = 0;
  // A CPU core's store streams: how many streams of stores a multiple of 4 KiB apart (the
  // planes of an output whose plane is such a multiple) it keeps without first-level cache
  // conflicts, and the cycles each store loses past that. 0 and 0: unknown (the cost model
  // then counts no conflicts). Measured by the arithmetic probe; optional in the JSON.
  double conflictFreeStoreStreams = 0;
  double conflictingStoreCycles = 0;
  // The bytes a compute unit moves between global memory and the cores per cycle of the
  // profile's clock while every compute unit copies buffers far larger than the device's caches
  // (a written line counted twice, as it is read for ownership and written back): the memory
  // bandwidth over compute units and clock (0: unknown; a cost model then assumes a nominal
  // one). Measured by the arithmetic probe on a CPU; optional in the JSON.
  double memoryBytesPerCycle = 0;
  // The bytes a CPU core reads per cycle of the profile's clock from its second-level cache
  // (contiguous vectors of a buffer half that cache's size, while every compute unit reads
  // its own): the rate at which lines no first-level cache keeps come back when the
  // second-level cache keeps them (0: unknown, or no such cache; a cost model then charges them
  // at the memory bandwidth). Measured by the arithmetic probe; optional in the JSON.
  double secondLevelBytesPerCycle = 0;
  // The cycles a compute unit spends per work-group beyond the work of its work-items (a CPU
  // implementation's scheduling of each group; a kernel in groups of a few work-items pays it
  // per item). 0: unknown (a cost model then assumes a nominal one on a CPU, none on a GPU,
  // whose schedulers launch blocks in hardware). Measured by the arithmetic probe on a CPU;
  // optional in the JSON.
  double workGroupCycles = 0;
  bool fp64 = false;  // cl_khr_fp64
  bool fp16 = false;  // cl_khr_fp16
  // The device's OpenCL compiler accepts clang's __builtin_nontemporal_store (PoCL and other
  // clang-based CPU compilers turn it into streaming stores): code generation may then store a
  // large output without caching it (CodegenOptions::streamingStores). Found by building a
  // one-line kernel (host/arithmetic_probe.h, CPU devices); optional in the JSON (default
  // false, written only when true).
  bool nontemporalStores = false;
  // The global memory cache's line in bytes (CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE; 0: unknown).
  // A vector read of at least this many bytes that is not aligned to its width always spans
  // two lines, which code generation avoids by reading aligned vectors
  // (CodegenOptions::alignedVectorReads). Optional in the JSON (written when known).
  int cacheLineBytes = 0;
  // A CPU core's first-level data cache in bytes (0: unknown; GPUs leave it 0). OpenCL reports
  // only the global memory cache (on PoCL the last level), so a queried CPU profile reads it
  // from the operating system (Linux: /sys/devices/system/cpu/cpu0/cache). Private values
  // beyond the registers spill to the work-item's stack, which stays in this cache: the
  // parameter space bounds a CPU work-item's private tile by a vector lane's share of it rather
  // than by the register file (explore/launch_parameters.h privateValuesBound). Optional in the
  // JSON (written when known).
  std::int64_t firstLevelCacheBytes = 0;
  // A CPU core's share of its second-level cache in bytes (0: unknown; GPUs leave it 0), read
  // from the operating system as the first-level one is, divided among the CPUs that share it
  // (a cluster's cache shared by four cores gives each a quarter). What lies between two uses of a
  // line beyond the first-level cache but within this one comes back at secondLevelBytesPerCycle.
  // Optional in the JSON (written when known).
  std::int64_t secondLevelCacheBytes = 0;
  // 16 hex digits identifying the device and its software: profileFingerprint(deviceName,
  // driverVersion, platformVersion, computeUnits, hostProcessor). Results measured on a device
  // are keyed by it.
  std::string fingerprint;
  // Where the numbers come from (documents cited, or "queried through OpenCL").
  std::string source;

  bool hasDedicatedLocalMemory() const { return localMemoryType == LocalMemoryType::Local; }
  bool operator==(const DeviceProfile&) const = default;
};

// The number of CPUs a Linux CPU list names ("0-3,8" -> 5; 0 for an empty or malformed one), as
// in /sys/devices/system/cpu/cpu0/cache/index*/shared_cpu_list.
int cpuListCount(std::string_view list);

// The first processor of a Linux /proc/cpuinfo text: "VENDOR family F model M" from an x86
// entry's vendor_id, cpu family and model ("AuthenticAMD family 26 model 2"), "implementer I
// part P" from an Arm entry's CPU implementer and CPU part ("implementer 0x41 part 0xd0c");
// "" when the text has neither. Each field is its line's first occurrence, the value after the
// colon with surrounding white space trimmed. The bundle harness (export/bundle_harness.c)
// names the processor by the same rules, so that results measured through a bundle get the
// fingerprint a local exploration records.
std::string hostProcessorFromCpuinfo(std::string_view cpuinfo);
// hostProcessorFromCpuinfo of this machine's /proc/cpuinfo ("" where it cannot be read).
std::string hostProcessor();

// FNV-1a 64-bit hash of the device name, driver version, platform version, compute units (in
// decimal) and host processor (newline-separated) as 16 lower-case hex digits; the same on
// every machine and compiler. The compute units and the processor tell apart devices of one
// name that measure differently: virtual machines of one CPU with different numbers of cores,
// or processors of different generations that a hypervisor names alike.
std::string profileFingerprint(std::string_view deviceName, std::string_view driverVersion,
                               std::string_view platformVersion, int computeUnits,
                               std::string_view hostProcessor);

// JSON form of a profile: one key per field, in declaration order (an ordered_json, so files
// and `weft devices --json` read like the struct; the fma facts only when known);
// localMemoryType is "local" or "global".
nlohmann::ordered_json profileToJson(const DeviceProfile& profile);
// Reads and validates a profile. Every key except source, fingerprint, driverVersion,
// platformVersion, hostProcessor (default: ""), deviceName (default: name), vendor (default: ""),
// registersPerWorkGroup and the fma facts (default 0) is required; unknown keys are errors (they
// are usually typos). A missing fingerprint is computed. Throws ProfileError
// "<origin>: <problem>".
DeviceProfile profileFromJson(const nlohmann::ordered_json& json, std::string_view origin);
// Parses JSON text; a syntax error reports "<origin>:<line>:<column>: invalid JSON: ...". A
// profile without "name" takes `defaultName` (the file's stem when read from a file).
DeviceProfile parseProfile(std::string_view text, std::string_view origin,
                           std::string_view defaultName = {});

// The built-in profiles, sorted by name: mali-g72, nvidia-generic, nvidia-hopper, pocl-cpu.
const std::vector<DeviceProfile>& builtinProfiles();
// The embedded JSON texts of the built-in profiles as (file name, text) pairs, e.g.
// ("mali-g72.json", "{...}"); tests compare them with host/profiles/.
std::vector<std::pair<std::string, std::string>> builtinProfileTexts();

// The user's profile folder: $XDG_CONFIG_HOME/weft/profiles, else ~/.config/weft/profiles
// (empty when neither is known). It need not exist.
std::filesystem::path userProfileDir();
// The folders searched for profiles by name: `extraDirs` (--profile-dir) in order, then
// userProfileDir().
std::vector<std::filesystem::path> profileSearchDirs(
    const std::vector<std::filesystem::path>& extraDirs = {});

// Reads one profile file (name defaults to the file's stem).
DeviceProfile loadProfileFile(const std::filesystem::path& path);
// Every *.json profile in the existing folders of `dirs`, sorted by name within each folder. A
// broken file is an error naming the file.
std::vector<DeviceProfile> userProfiles(const std::vector<std::filesystem::path>& dirs);

// Finds a profile by name or path:
//   - a path (contains '/' or ends in ".json") is read as a file;
//   - a name NAME is looked up as NAME.json in `dirs` in order (so a user file can replace a
//     built-in one), then among the built-in profiles.
// An unknown name throws ProfileError listing the folders searched and the known profiles.
DeviceProfile loadProfile(std::string_view nameOrPath,
                          const std::vector<std::filesystem::path>& dirs = profileSearchDirs());

// The profile of a present device, queried through OpenCL. Facts OpenCL does not report are
// estimated:
//   - workGroupMultiple: CL_DEVICE_WARP_SIZE_NV (NVIDIA), CL_DEVICE_WAVEFRONT_WIDTH_AMD (AMD),
//     CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE (OpenCL 3.0 devices), else 1;
//   - registersPerWorkItem: see estimateRegistersPerWorkItem.
DeviceProfile queryProfile(const Device& device);

// The register-budget heuristic for a queried device (32-bit registers per work-item):
//   - CPU: the SIMD register file left for data, 32-bit lanes: (R - 8) * w, where w is the
//     preferred float vector width and R the architectural vector registers (32 when w >= 16,
//     i.e. AVX-512; else 16 as for x86-64 SSE/AVX); 8 registers are kept for operands and
//     addresses. PoCL on AVX-512: (32 - 8) * 16 = 384, i.e. 24 float16 accumulators, just below
//     the ~28 at which hand-written PoCL convolutions were measured to spill.
//   - NVIDIA GPU: 255, the per-thread limit of the CUDA ISA since compute capability 3.5.
//   - AMD GPU: 256 (VGPRs per work-item at the lowest occupancy, GCN/RDNA).
//   - ARM Mali GPU: 64 (Bifrost/Valhall: 64 32-bit registers per thread at half occupancy).
//   - Intel GPU: 128 (one GRF of 128 registers per hardware thread, SIMD8).
//   - other GPUs and accelerators: 64.
int estimateRegistersPerWorkItem(std::string_view deviceType, std::string_view vendor,
                                 int preferredFloatVectorWidth);

}  // namespace weft::host
