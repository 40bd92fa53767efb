// `weft devices [--json] [--device D] [--profile-dir DIR]`: lists the OpenCL platforms and devices
// of this machine with the key facts of their queried profiles, marks the device weft chooses by
// default (and the one a --device selector chooses), shows where PoCL caches kernel builds, and
// lists the device profiles: the built-in ones and the user's JSON files. Without any OpenCL
// platform it says so and how to install one, still lists the profiles, and exits with status 0.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "host/arithmetic_probe.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"

namespace weft::cli {

namespace {

using host::DeviceProfile;
using Json = nlohmann::ordered_json;

struct DevicesOptions {
  bool json = false;
  std::string device;                    // a --device selector to resolve, if any
  std::vector<std::string> profileDirs;  // extra profile folders
};

// 1048576 -> "1 MiB", 3594160128 -> "3.35 GiB", 49152 -> "48 KiB".
std::string bytesText(std::int64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} bytes", bytes);
  if (value == static_cast<double>(static_cast<std::int64_t>(value))) {
    return fmt::format("{} {}", static_cast<std::int64_t>(value), units[unit]);
  }
  return fmt::format("{:.2f} {}", value, units[unit]);
}

// The facts of a profile as indented lines (for a present device).
void printProfileFacts(std::ostream& out, const DeviceProfile& p, const std::string& indent) {
  out << indent
      << fmt::format("{} compute unit{}{}; global memory {} (largest buffer {})\n", p.computeUnits,
                     p.computeUnits == 1 ? "" : "s",
                     p.maxClockMHz > 0 ? fmt::format(" at {} MHz", p.maxClockMHz) : "",
                     bytesText(p.globalMemoryBytes), bytesText(p.maxAllocationBytes));
  out << indent
      << fmt::format("work-group up to {} ({} x {} x {} per dimension), best in multiples of {}\n",
                     p.maxWorkGroupSize, p.maxWorkItemSizes[0], p.maxWorkItemSizes[1],
                     p.maxWorkItemSizes[2], p.workGroupMultiple);
  out << indent
      << fmt::format("local memory {}{}; constant buffer up to {}\n", bytesText(p.localMemoryBytes),
                     p.hasDedicatedLocalMemory() ? " (dedicated)" : ", emulated in global memory",
                     bytesText(p.maxConstantBufferBytes));
  out << indent
      << fmt::format(
             "float vector width preferred {}, native {}; fp64 {}, fp16 {}; "
             "about {} registers per work-item\n",
             p.preferredFloatVectorWidth, p.nativeFloatVectorWidth, p.fp64 ? "yes" : "no",
             p.fp16 ? "yes" : "no", p.registersPerWorkItem);
  if (p.fmaLanesPerCycle > 0) {
    out << indent
        << fmt::format("per compute unit and cycle at {} MHz (measured by the arithmetic probe): "
                       "{} FMA lanes at float{}, {} at float{}; FMA latency {} cycles; {} vector "
                       "loads\n",
                       p.maxClockMHz, p.fmaLanesPerCycle, p.nativeFloatVectorWidth,
                       p.fmaHalfWidthLanesPerCycle, std::max(1, p.nativeFloatVectorWidth / 2),
                       p.fmaLatencyCycles, p.vectorLoadsPerCycle);
  }
  if (p.conflictFreeStoreStreams > 0 || p.conflictingStoreCycles > 0) {
    out << indent
        << (p.conflictingStoreCycles > 0
                ? fmt::format("stores into {} streams 4 KiB apart without cache conflicts, {} "
                              "cycles lost per store past that (probe)\n",
                              p.conflictFreeStoreStreams, p.conflictingStoreCycles)
                : fmt::format("stores into up to {} streams 4 KiB apart without cache conflicts "
                              "(probe)\n",
                              p.conflictFreeStoreStreams));
  }
  if (p.memoryBytesPerCycle > 0) {
    out << indent
        << fmt::format(
               "memory moves {} bytes per cycle and compute unit in a copy (a written "
               "line read for ownership and written back), {:.1f} GB/s in all (probe)\n",
               p.memoryBytesPerCycle,
               p.memoryBytesPerCycle * p.computeUnits * p.maxClockMHz * 1e6 / 1e9);
  }
  if (p.workGroupCycles > 0) {
    out << indent
        << fmt::format(
               "a work-group costs a compute unit {} cycles besides its work-items' work "
               "(probe)\n",
               p.workGroupCycles);
  }
  if (p.nontemporalStores) {
    out << indent
        << "streaming stores: the compiler takes __builtin_nontemporal_store (explored as "
           "streaming_stores)\n";
  }
  if (p.cacheLineBytes > 0) {
    out << indent << "cache line " << p.cacheLineBytes
        << " bytes (vector reads at least as wide are read aligned: aligned_reads)\n";
  }
  if (p.firstLevelCacheBytes > 0) {
    out << indent << "first-level data cache " << (p.firstLevelCacheBytes >> 10)
        << " KiB per core (a lane's share of it bounds a work-item's private tile: registers "
           "spill into it)\n";
  }
  if (p.secondLevelCacheBytes > 0) {
    out << indent << "second-level cache " << (p.secondLevelCacheBytes >> 10) << " KiB per core";
    if (p.secondLevelBytesPerCycle > 0) {
      out << fmt::format(
          ", read at {:.1f} bytes per cycle (probe): lines it keeps between two "
          "uses come back at that rate, not from memory",
          p.secondLevelBytesPerCycle);
    }
    out << "\n";
  }
  out << indent << "fingerprint " << p.fingerprint;
  if (!p.hostProcessor.empty()) {
    out << " (of the name, driver, compute units and processor " << p.hostProcessor
        << ", from /proc/cpuinfo)";
  }
  out << "\n";
  // Which profile an exploration on this device uses, and where its estimates come from.
  out << indent
      << "profile: queried from the device, what weft explore uses here (--profile NAME for "
         "another)\n"
      << indent << "registers per work-item: "
      << (p.deviceType == "cpu"
              ? fmt::format("an estimate from the preferred vector width {}: {} vector registers "
                            "less 8 for operands, times the width",
                            p.preferredFloatVectorWidth,
                            p.preferredFloatVectorWidth >= 16 ? 32 : 16)
              : std::string("the vendor's documented figure, or 64 where unknown"))
      << "\n";
}

// One line per profile for the profile table.
std::string profileSummary(const DeviceProfile& p) {
  return fmt::format("{} CU, work-group {}, local {}{}, float{} vectors, {} registers",
                     p.computeUnits, p.maxWorkGroupSize, bytesText(p.localMemoryBytes),
                     p.hasDedicatedLocalMemory() ? "" : " (in global)", p.preferredFloatVectorWidth,
                     p.registersPerWorkItem);
}

struct ListedProfile {
  DeviceProfile profile;
  std::string origin;  // "built-in" or the file's path
};

struct DeviceEntry {
  host::Device device;
  std::optional<DeviceProfile> profile;
  std::string profileError;
  std::string probeError;  // the arithmetic probe failed (the profile lacks its facts)
};

void runDevices(const DevicesOptions& options) {
  // ---- gather ----
  std::vector<host::Platform> platforms;
  std::vector<DeviceEntry> devices;
  std::string openclError;
  std::optional<std::size_t> defaultIndex, selectedIndex;
  try {
    platforms = host::listPlatforms();
    std::vector<host::Device> listed = host::listDevices();
    defaultIndex = host::defaultDeviceIndex(listed);
    if (!options.device.empty()) {
      // An unknown selector is an error (exit 1) whose message lists the devices.
      selectedIndex = static_cast<std::size_t>(host::selectDevice(listed, options.device).index);
    }
    for (const host::Device& device : listed) {
      DeviceEntry entry{device, std::nullopt, "", ""};
      try {
        entry.profile = host::queryProfile(device);
        // A CPU's FMA organisation, measured (what weft explore's cost model reads).
        if (entry.profile->deviceType == "cpu") {
          host::Context context(device);
          entry.profile = host::withProbedArithmetic(context, *entry.profile);
        }
      } catch (const std::runtime_error& e) {
        if (!entry.profile) entry.profileError = e.what();
        else entry.probeError = e.what();
      }
      devices.push_back(std::move(entry));
    }
  } catch (const host::NoOpenCLError& e) {
    openclError = e.what();
  }

  std::vector<std::filesystem::path> extraDirs(options.profileDirs.begin(),
                                               options.profileDirs.end());
  std::vector<std::filesystem::path> dirs = host::profileSearchDirs(extraDirs);
  std::vector<ListedProfile> profiles;
  for (const DeviceProfile& p : host::builtinProfiles()) profiles.push_back({p, "built-in"});
  std::vector<std::string> profileErrors;
  for (const auto& dir : dirs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      try {
        profiles.push_back({host::loadProfileFile(file), file.string()});
      } catch (const host::ProfileError& e) {
        profileErrors.push_back(e.what());
      }
    }
  }
  std::string cacheDir = host::kernelCacheDir().string();

  // ---- JSON ----
  if (options.json) {
    Json document;
    Json platformList = Json::array();
    for (const host::Platform& p : platforms) {
      platformList.push_back(
          {{"index", p.index}, {"name", p.name}, {"vendor", p.vendor}, {"version", p.version}});
    }
    Json deviceList = Json::array();
    for (const DeviceEntry& e : devices) {
      const host::Device& d = e.device;
      Json item = {{"index", d.index},
                   {"platformIndex", d.platformIndex},
                   {"name", d.name},
                   {"vendor", d.vendor},
                   {"type", d.typeName()},
                   {"version", d.version},
                   {"driverVersion", d.driverVersion},
                   {"openclCVersion", d.openclCVersion},
                   {"default", defaultIndex && *defaultIndex == static_cast<std::size_t>(d.index)}};
      if (!options.device.empty()) {
        item["selected"] = selectedIndex && *selectedIndex == static_cast<std::size_t>(d.index);
      }
      item["profile"] = e.profile ? host::profileToJson(*e.profile) : Json(nullptr);
      if (!e.profileError.empty()) item["profileError"] = e.profileError;
      if (!e.probeError.empty()) item["probeError"] = e.probeError;
      deviceList.push_back(std::move(item));
    }
    document["platforms"] = platformList;
    document["devices"] = deviceList;
    document["defaultDevice"] = defaultIndex ? Json(*defaultIndex) : Json(nullptr);
    document["error"] = openclError.empty() ? Json(nullptr) : Json(openclError);
    document["kernelCacheDir"] = cacheDir.empty() ? Json(nullptr) : Json(cacheDir);
    Json dirList = Json::array();
    for (const auto& dir : dirs) dirList.push_back(dir.string());
    document["profileDirs"] = dirList;
    Json profileList = Json::array();
    for (const ListedProfile& lp : profiles) {
      Json item = host::profileToJson(lp.profile);
      item["origin"] = lp.origin;
      profileList.push_back(std::move(item));
    }
    document["profiles"] = profileList;
    document["profileErrors"] = profileErrors;
    // replace: a driver string that is not UTF-8 must not abort the listing.
    std::cout << document.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }

  // ---- text ----
  std::ostream& out = std::cout;
  if (!openclError.empty()) {
    out << "OpenCL: " << openclError << ".\n"
        << "weft can still check, interpret and explore programs with the device profiles "
           "below.\n";
  } else {
    out << "OpenCL devices (choose one with --device INDEX, a type gpu/cpu/accelerator, or a part "
           "of the device or platform name):\n";
    for (const host::Platform& platform : platforms) {
      out << fmt::format("\nplatform {}: {} ({}), {}\n", platform.index, platform.name,
                         platform.vendor, platform.version);
      bool any = false;
      for (const DeviceEntry& e : devices) {
        const host::Device& d = e.device;
        if (d.platformIndex != platform.index) continue;
        any = true;
        bool isDefault = defaultIndex && *defaultIndex == static_cast<std::size_t>(d.index);
        bool isSelected = selectedIndex && *selectedIndex == static_cast<std::size_t>(d.index);
        std::string marks;
        if (isDefault) marks += "  [default]";
        if (isSelected) marks += fmt::format("  [chosen by --device {}]", options.device);
        out << fmt::format("  {} {}: {} ({}){}\n", isDefault || isSelected ? '*' : ' ', d.index,
                           d.name, d.typeName(), marks);
        out << fmt::format("       vendor {}, driver {}, {}\n", d.vendor, d.driverVersion,
                           d.version);
        if (e.profile) {
          printProfileFacts(out, *e.profile, "       ");
          if (!e.probeError.empty()) {
            out << "       arithmetic probe failed (the cost model assumes its defaults): "
                << e.probeError << "\n";
          }
        } else {
          out << "       profile query failed: " << e.profileError << "\n";
        }
      }
      if (!any) out << "    (no devices)\n";
    }
    out << "\nPoCL kernel cache: " << (cacheDir.empty() ? "(PoCL's default)" : cacheDir) << "\n";
  }

  std::filesystem::path userDir = host::userProfileDir();
  out << "\nDevice profiles (built in; add your own as NAME.json in "
      << (userDir.empty() ? std::string("a --profile-dir folder") : userDir.string())
      << ", in the format of `weft devices --json`):\n";
  std::size_t width = 0;
  for (const ListedProfile& lp : profiles) width = std::max(width, lp.profile.name.size());
  for (const ListedProfile& lp : profiles) {
    const DeviceProfile& p = lp.profile;
    out << fmt::format("  {:<{}}  {:<3}  {}: {}{}\n", p.name, width, p.deviceType, p.deviceName,
                       profileSummary(p), lp.origin == "built-in" ? "" : "  [" + lp.origin + "]");
  }
  for (const std::string& error : profileErrors) out << "  skipped: " << error << "\n";
}

}  // namespace

void registerDevices(CLI::App& app) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App* command = app.add_subcommand(
      "devices",
      "List the OpenCL platforms and devices of this machine with their key facts (compute\n"
      "units, work-group limits, local memory and whether it is real, vector widths, ...),\n"
      "mark the device weft uses by default (the first GPU, else the first CPU device such as\n"
      "PoCL), and list the device profiles weft knows: built in (mali-g72, nvidia-generic,\n"
      "nvidia-hopper, pocl-cpu) and the user's JSON files. Without an OpenCL platform it says so "
      "and exits 0.");
  command->add_flag("--json", options->json,
                    "print a JSON document (each device's \"profile\" is in the profile file "
                    "format)");
  command
      ->add_option("--device", options->device,
                   "also show which device the selector D chooses: an index, gpu, cpu, "
                   "accelerator, or a part of a device or platform name")
      ->type_name("D");
  command
      ->add_option("--profile-dir", options->profileDirs,
                   "also list the profiles (*.json) in folder DIR (repeatable)")
      ->type_name("DIR");
  command->footer(
      "Example:\n"
      "  $ weft devices\n"
      "  OpenCL devices (choose one with --device INDEX, a type gpu/cpu/accelerator, ...):\n"
      "\n"
      "  platform 0: Portable Computing Language (The pocl project), OpenCL 3.0 PoCL 3.1 ...\n"
      "    * 0: pthread-skylake-avx512-AMD EPYC (cpu)  [default]\n"
      "         vendor AuthenticAMD, driver 3.1+debian, OpenCL 3.0 PoCL HSTR: ...\n"
      "         2 compute units at 2596 MHz; global memory 3.35 GiB (largest buffer 1 GiB)\n"
      "         ...\n"
      "  Device profiles (built in; add your own as NAME.json in ~/.config/weft/profiles, ...):\n"
      "    mali-g72        gpu  Mali-G72: 12 CU, work-group 384, local 32 KiB (in global), ...\n"
      "\n"
      "  $ weft devices --device cpu --json   # which device `--device cpu` picks, as JSON");
  command->callback([options] { runDevices(*options); });
}

}  // namespace weft::cli
