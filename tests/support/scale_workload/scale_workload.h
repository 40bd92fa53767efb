// A workload written for the tests, to show what adding one takes: this folder and one
// registerWorkload call (tests/explore/test_workload_plugin.cpp). "scale:N" scales a vector of
// N floats by 3, in chunks of T elements (split T, a map per chunk, join): T is the tuning
// parameter, the reference is the plain map, and the cost model prefers larger chunks. Nothing
// in the engine (explore/), the code generator or the host names it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "explore/parameter_space.h"
#include "explore/workload.h"
#include "ir/parser.h"

namespace weft::testing {

class ScaleWorkload final : public explore::Workload {
 public:
  std::string name() const override { return "test-scale"; }
  std::string summary() const override { return "scale:N: a vector of N floats times 3"; }

  bool accepts(const explore::WorkloadRequest& request) const override {
    return request.instance.rfind("scale:", 0) == 0;
  }

  std::vector<explore::ExploreTarget> targets(const explore::WorkloadRequest& request,
                                              const host::DeviceProfile*) const override {
    return {target(request)};
  }

  explore::ExploreTarget structureTarget(const explore::WorkloadRequest& request,
                                         const std::map<std::string, int64_t>&,
                                         const std::string&) const override {
    return target(request);
  }

  std::optional<std::string> programNameOf(const std::string& instance) const override {
    if (instance.rfind("scale:", 0) != 0) return std::nullopt;
    return "scale_" + std::to_string(lengthOf(instance));
  }

  std::vector<std::string> structuralParameters(
      const std::map<std::string, int64_t>&) const override {
    return {};
  }

  bool ownsUnnamedRecord(const explore::VariantRecord&) const override { return false; }

  std::vector<explore::ParameterRow> parameterTable(
      const explore::VariantRecord& record) const override {
    const auto parameters = explore::parseRecordedParameters(record.key.parameters);
    auto chunk = parameters.find("T");
    return {{"Chunk length (T)", chunk == parameters.end() ? "?" : std::to_string(chunk->second)}};
  }

 private:
  static int64_t lengthOf(const std::string& instance) {
    const int64_t n = std::stoll(instance.substr(6));
    if (n < 1) throw std::invalid_argument(instance + ": the length must be positive");
    return n;
  }

  static explore::ExploreTarget target(const explore::WorkloadRequest& request) {
    const int64_t n = lengthOf(request.instance);
    const Program chunked = parseProgram(
        "def scale[1 <= T <= 64](a: [float]N) =\n"
        "  join(map(c -> map(x -> x * 3.0f, c), split(T, a)))\n",
        "scale_workload");
    const Program plain =
        parseProgram("def scale(a: [float]N) = map(x -> x * 3.0f, a)\n", "scale_reference");
    explore::ExploreTarget target;
    target.program = "scale_" + std::to_string(n);
    target.description = "a vector of " + std::to_string(n) + " floats times 3, in chunks";
    target.workload = "test-scale";
    target.strategy = "chunked";
    target.flops = n;
    target.sizes = {{"N", n}};
    target.parametric = explore::tuneUnboundSizes(chunked.definitions.back(), target.sizes);
    target.reference = plain.definitions.back();
    target.predictSeconds = [n](const std::map<std::string, int64_t>& parameters,
                                const host::DeviceProfile&) -> std::optional<double> {
      auto chunk = parameters.find("T");
      if (chunk == parameters.end() || chunk->second < 1) return std::nullopt;
      return static_cast<double>(n) / static_cast<double>(chunk->second);
    };
    return target;
  }
};

}  // namespace weft::testing
