// NVIDIA's ptxas report in an OpenCL build log (see register_report.h).
#include "host/register_report.h"

#include <regex>
#include <sstream>

namespace weft::host {

namespace {

// A count from the log (digits only); absurdly long ones saturate instead of throwing.
int countOf(const std::string& digits) {
  return digits.size() > 9 ? 999999999 : std::stoi(digits);
}

}  // namespace

std::vector<KernelRegisterUse> parseRegisterReport(const std::string& buildLog) {
  std::vector<KernelRegisterUse> kernels;
  static const std::regex properties(R"(Function properties for ([A-Za-z_][A-Za-z0-9_]*))");
  static const std::regex spill(R"((\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex entry(R"(Compiling entry function '([A-Za-z_][A-Za-z0-9_]*)')");
  // The kernel a line belongs to: the last one named by "Compiling entry function" or
  // "Function properties for" (ptxas prints the properties, then "Used", per function).
  auto kernelNamed = [&](const std::string& name) -> KernelRegisterUse& {
    for (KernelRegisterUse& k : kernels) {
      if (k.kernel == name) return k;
    }
    kernels.push_back({name});
    return kernels.back();
  };
  std::string current;
  std::istringstream lines(buildLog);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, entry) || std::regex_search(line, m, properties)) {
      current = m[1];
      kernelNamed(current);
      continue;
    }
    if (current.empty()) continue;
    if (std::regex_search(line, m, spill)) {
      KernelRegisterUse& k = kernelNamed(current);
      k.spillStoreBytes = countOf(m[1]);
      k.spillLoadBytes = countOf(m[2]);
    } else if (std::regex_search(line, m, used)) {
      kernelNamed(current).registers = countOf(m[1]);
    }
  }
  return kernels;
}

std::string registerReportOption(const std::string& platformName, const std::string& platformVendor) {
  const bool nvidia = platformName.find("NVIDIA") != std::string::npos ||
                      platformVendor.find("NVIDIA") != std::string::npos;
  return nvidia ? "-cl-nv-verbose" : "";
}

}  // namespace weft::host
