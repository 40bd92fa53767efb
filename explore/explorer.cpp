// The exploration loop (see explore/explorer.h): the device child for the profile and the
// reference, sampling, then each pending variant through the generator process and the
// launcher's measuring child (their plumbing: explore/child_process.h, generator_process.h,
// measuring_launcher.h, prebuild_pool.h), with phase deadlines and results written as they
// come.
#include "explore/explorer.h"

#include <fmt/core.h>
#include <sys/resource.h>
#include <csignal>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <stdexcept>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "explore/child_process.h"
#include "explore/generator_process.h"
#include "explore/measuring_launcher.h"
#include "explore/prebuild_pool.h"
#include "explore/structure_sampling.h"
#include "host/arithmetic_probe.h"
#include "host/opencl_runtime.h"
#include "host/program_runner.h"
#include "ir/interp.h"
#include "typecheck/flop_count.h"

#ifndef WEFT_VERSION
#define WEFT_VERSION "0.x"
#endif

namespace weft::explore {

namespace {

using process::after;
using process::ChildOutcome;
using process::Clock;
using process::GeneratorProcess;
using process::Json;
using process::LaunchRequest;
using process::MeasuringLauncher;
using process::msSince;
using process::PrebuildPool;
using process::runInChild;
using process::sendLine;
using process::signalText;
using process::threadCpuMs;
using process::writeAll;

Json measurementJson(const Measurement& m) {
  Json out{{"event", "result"},
           {"status", statusName(m.status)},
           {"message", m.message},
           {"hash", m.sourceHash},
           {"warmNs", m.warmUpNs},
           {"samples", m.samplesNs},
           {"maxError", std::isfinite(m.maxError) ? m.maxError : -1.0},
           {"allowedError", m.allowedError}};
  if (m.spaceBytes) out["space"] = *m.spaceBytes;
  if (m.buildMs) out["buildMs"] = *m.buildMs;
  if (!m.buildLog.empty()) out["buildLog"] = m.buildLog;
  if (m.medianNs) out["median"] = *m.medianNs;
  if (m.preparationNs) out["preparationNs"] = *m.preparationNs;
  if (m.allBuffersBytes) out["allBuffersBytes"] = *m.allBuffersBytes;
  out["timedOnce"] = m.timedOnce;
  out["generateMs"] = m.generateMs;
  Json kernels = Json::array();
  for (size_t k = 0; k < m.kernelNs.size(); ++k) {
    Json kernel{{"name", m.kernelNs[k].first}, {"ns", m.kernelNs[k].second}};
    if (k < m.preparationKernels.size() && m.preparationKernels[k]) kernel["preparation"] = true;
    kernels.push_back(std::move(kernel));
  }
  out["kernels"] = kernels;
  return out;
}

// The definition's tuning variables' names, for marking switches.
std::vector<Arith> tuningVariablesOf(const Definition& definition) {
  std::vector<Arith> found;
  for (const Arith& variable : variableOccurrences(definition)) {
    if (!variable.isVar() || variable.varKind() != VarKind::Tuning) continue;
    bool seen = false;
    for (const Arith& known : found) seen = seen || known.varName() == variable.varName();
    if (!seen) found.push_back(variable);
  }
  return found;
}

// Multiply-adds of a layer (for the interpreter check of the reference).
int64_t multiplyAdds(const ExploreTarget& target) { return target.flops / 2; }

}  // namespace

std::string compilerVersion() { return std::string("weft ") + WEFT_VERSION; }

const ParameterSpace& Preparation::spaceOf(size_t point) const {
  return spaces.empty() ? space : spaces.at(pointSpace.at(point));
}

const Definition& Preparation::programOf(size_t point) const {
  if (spaces.empty()) return target.parametric;
  return target.structures.at(spaceStructure.at(pointSpace.at(point))).parametric;
}

const std::string& Preparation::strategyOf(size_t point) const {
  if (spaces.empty()) return target.strategy;
  return target.structures.at(spaceStructure.at(pointSpace.at(point))).strategy;
}

std::string Preparation::parametersOf(size_t point) const {
  if (spaces.empty()) return parametersJson(space, points.at(point), target.fixedParameters);
  const ExploreTarget::Structure& structure =
      target.structures.at(spaceStructure.at(pointSpace.at(point)));
  return parametersJson(spaces.at(pointSpace.at(point)), points.at(point),
                        structure.fixedParameters);
}

void adoptStructure(ExploreTarget& target, const ExploreTarget::Structure& structure) {
  target.parametric = structure.parametric;
  target.switches = structure.switches;
  target.fixedParameters = structure.fixedParameters;
  target.strategy = structure.strategy;
}

ArithBinding smallerSizes(const ArithBinding& sizes, int64_t cap) {
  ArithBinding smaller;
  for (const auto& [name, value] : sizes) {
    int64_t divisor = 1;
    for (int64_t d = 1; d <= std::min(cap, value); ++d) {
      if (value % d == 0) divisor = d;
    }
    smaller[name] = value > 0 ? divisor : value;
  }
  return smaller;
}

ExploreTarget programTarget(const Definition& definition, const ArithBinding& sizes) {
  ExploreTarget target;
  std::string sizeText;
  for (const auto& [name, value] : sizes) {
    sizeText += (sizeText.empty() ? "" : ",") + name + "=" + std::to_string(value);
  }
  target.program = definition.name + (sizeText.empty() ? "" : "[" + sizeText + "]");
  target.description = "definition " + definition.name + " with " +
                       (sizeText.empty() ? std::string("no sizes") : sizeText);
  target.parametric = tuneUnboundSizes(definition, sizes);
  target.sizes = sizes;
  target.interpreterCheckLimit = std::numeric_limits<int64_t>::max();
  target.referenceCheckSizes = smallerSizes(sizes);
  // GFLOP/s in the report: the IR's floating-point operations at these sizes; with a size left
  // to tune, those of the program at its reference's point (boundReference: how it is tuned
  // changes how it computes, not what); 0, unknown, where there is none. Workloads also compare
  // it with the interpreter's limit. The reference stays checked against the interpreter
  // whatever the count (a workload sets a limit where that would take too long).
  try {
    target.flops = countFlops(definition, sizes);
  } catch (const std::invalid_argument&) {
    target.flops = 0;
    try {
      if (std::optional<Definition> bound = boundReference(definition, target)) {
        target.flops = countFlops(*bound, sizes);
      }
    } catch (const std::exception&) {
      target.flops = 0;
    }
  }
  // Streaming stores are a choice wherever the kernels store vectors at aligned offsets (an
  // image pipeline's output, a searched structure's vectorised result).
  target.codegenChoices = true;
  for (const Arith& v : tuningVariablesOf(target.parametric)) {
    if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
      target.switches.insert(v.varName());
    }
  }
  return target;
}

std::optional<Definition> boundReference(const Definition& definition,
                                         const ExploreTarget& target) {
  const std::vector<Arith> unbound = tuningVariablesOf(target.parametric);
  if (unbound.empty()) return definition;
  const ParameterSpace full = buildParameterSpace(target.parametric, target.sizes);
  std::optional<ParameterSpace> small;
  if (!target.referenceCheckSizes.empty()) {
    try {
      small = buildParameterSpace(target.parametric, target.referenceCheckSizes);
    } catch (const SpaceError&) {
      // Not a space at the smaller sizes: the points are chosen at the explored sizes alone.
    }
  }
  // Each domain's smallest values (more than the points tried could reach is never needed);
  // the points in lexicographic order of the parameters (sorted by name), each over its domain
  // in increasing order: an odometer whose first parameter turns slowest.
  constexpr int kMaxTried = 4096;
  std::vector<std::vector<int64_t>> domains;
  for (const Parameter& p : full.parameters) {
    if (p.kind == DomainKind::Range && p.domainSize() > kMaxTried) {
      std::vector<int64_t> smallest;
      for (int64_t v = p.lo; v < p.lo + kMaxTried; ++v) smallest.push_back(v);
      domains.push_back(std::move(smallest));
    } else {
      domains.push_back(p.values());
    }
  }
  for (const std::vector<int64_t>& domain : domains) {
    if (domain.empty()) return std::nullopt;
  }
  auto bound = [&](const std::vector<int64_t>& point) {
    ArithSubstitution values;
    for (size_t i = 0; i < point.size(); ++i) {
      values.emplace(full.parameters[i].name, Arith(point[i]));
    }
    return withSizesFixed(definition, values);
  };
  std::optional<std::vector<int64_t>> validAtFullSizes;
  std::vector<size_t> digits(domains.size(), 0);
  for (int tried = 0; tried < kMaxTried; ++tried) {
    std::vector<int64_t> point(domains.size());
    for (size_t i = 0; i < domains.size(); ++i) point[i] = domains[i][digits[i]];
    bool valid = full.violations(point).empty();
    if (valid && !validAtFullSizes) validAtFullSizes = point;
    if (valid && small) {
      // The same parameters, named alike and sorted alike, at the smaller sizes.
      std::vector<int64_t> atSmall;
      for (const Parameter& p : small->parameters) {
        const int index = full.indexOf(p.name);
        if (index < 0) {
          valid = false;
          break;
        }
        atSmall.push_back(point[static_cast<size_t>(index)]);
      }
      valid = valid && small->violations(atSmall).empty();
    }
    if (valid) return bound(point);
    size_t d = domains.size();
    bool wrapped = false;
    while (d > 0) {
      --d;
      if (++digits[d] < domains[d].size()) break;
      digits[d] = 0;
      wrapped = d == 0;
    }
    if (wrapped) break;  // every point tried
  }
  if (validAtFullSizes) return bound(*validAtFullSizes);
  return std::nullopt;
}

std::string parametersJson(const ParameterSpace& space, const std::vector<int64_t>& point,
                           const std::map<std::string, int64_t>& fixed) {
  std::map<std::string, int> stems;
  auto stemOf = [](const std::string& name) {
    size_t end = name.find_last_not_of("0123456789");
    return end == std::string::npos ? name : name.substr(0, end + 1);
  };
  for (const Parameter& p : space.parameters) ++stems[stemOf(p.name)];
  Json out = Json::object();
  for (size_t i = 0; i < point.size() && i < space.parameters.size(); ++i) {
    const std::string& name = space.parameters[i].name;
    std::string stem = stemOf(name);
    // Rule-made names lose their numeric suffix (theta2 -> theta) where unambiguous; launch
    // sizes (local_k1_d0) keep their full names, whose digits are kernel and dimension.
    bool unique = stems[stem] == 1 && !fixed.count(stem) && space.parameters[i].launchKernel < 0;
    out[unique ? stem : name] = point[i];
  }
  for (const auto& [name, value] : fixed) out[name] = value;
  return out.dump();  // nlohmann::json objects keep their keys sorted: canonical
}

std::map<std::string, int64_t> parseRecordedParameters(const std::string& json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, false);
  if (!parsed.is_object()) {
    throw std::invalid_argument("recorded parameters are not a JSON object: " + json);
  }
  std::map<std::string, int64_t> out;
  for (const auto& [name, value] : parsed.items()) {
    if (value.is_number_integer()) out[name] = value.get<int64_t>();
  }
  return out;
}

SampledTarget sampleTarget(const ExploreTarget& target,
                           const std::optional<host::DeviceProfile>& profile, size_t samples,
                           uint64_t seed, const SamplerOptions& samplerOptions,
                           StructureCoverage coverage) {
  const auto start = Clock::now();
  SpaceOptions spaceOptions;
  spaceOptions.switches = target.switches;
  spaceOptions.powerOfTwo = target.powerOfTwo;
  spaceOptions.codegenChoices = target.codegenChoices;
  spaceOptions.device = profile;
  SampledTarget out;
  if (target.structures.empty()) {
    out.spaces.push_back(buildParameterSpace(target.parametric, target.sizes, spaceOptions));
    Sampler sampler(out.spaces.front(), samplerOptions);
    SampleSet set = sampler.sample(samples, seed);
    out.points = std::move(set.points);
    out.pointSpace.assign(out.points.size(), 0);
    out.method = set.method;
    if (set.spaceSize) out.validPoints = *set.spaceSize;
    out.fewerThanRequested = set.spaceSmallerThanRequested || set.duplicateLimitReached;
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return out;
  }
  // The union of the structures' spaces: each family gets an equal share of the sample count
  // (an exact split: k / F each, the remainder to families drawn at random, and what a family
  // cannot take for lack of points goes to the others), and within a family the share is split
  // over its structures multinomially in proportion to their counts of valid points; then
  // uniform points of each structure.
  // Each structure's space, counted (StructureSampling: in forked workers where there are many;
  // structures whose spaces are the same to a sampler are counted once and share a sampler,
  // e.g. conv-direct's unroll 0 and 1 where the cap on unrolled reductions does not bind,
  // which changes the code but no parameter or constraint).
  std::vector<uint64_t> counts;
  std::vector<uint64_t> fullCounts;  // counts, or the full points where the sampler counted them
  std::vector<std::string> families;
  std::vector<std::unique_ptr<ParameterSpace>> built(target.structures.size());
  std::vector<std::string> buildErrors(target.structures.size());
  std::vector<const ParameterSpace*> builtSpaces;
  for (size_t i = 0; i < target.structures.size(); ++i) {
    const ExploreTarget::Structure& structure = target.structures[i];
    SpaceOptions structureOptions = spaceOptions;
    structureOptions.switches = structure.switches;
    try {
      auto space = std::make_unique<ParameterSpace>(
          buildParameterSpace(structure.parametric, target.sizes, structureOptions));
      if (structure.needsGeneration && structureOptions.device && !space->hardwareConstraints) {
        throw std::runtime_error(space->hardwareNote);
      }
      builtSpaces.push_back(space.get());
      built[i] = std::move(space);
    } catch (const std::exception& error) {
      buildErrors[i] = error.what();
    }
  }
  StructureSampling sampling(builtSpaces, samplerOptions, samplingWorkers(builtSpaces.size()));
  const std::vector<CountedSpace> counted = sampling.count();
  std::vector<std::unique_ptr<ParameterSpace>> spaces;
  std::vector<size_t> builtIndex;  // spaces[j] is builtSpaces[builtIndex[j]]
  for (size_t i = 0, b = 0; i < target.structures.size(); ++i) {
    const ExploreTarget::Structure& structure = target.structures[i];
    std::string error = buildErrors[i];
    if (built[i]) {
      const CountedSpace& one = counted[b];
      if (!one.count) {
        error = one.error;
      } else if (one.count->points == 0) {
        error = "no valid point";
      } else {
        spaces.push_back(std::move(built[i]));
        builtIndex.push_back(b);
        out.spaceStructure.push_back(i);
        out.counts.push_back(*one.count);
        counts.push_back(one.count->points);
        fullCounts.push_back(std::max(one.count->points, one.count->withLaunchSizes.value_or(0)));
        families.push_back(structure.family);
      }
      ++b;
    }
    if (!error.empty()) {
      std::string name;
      for (const auto& [k, v] : structure.fixedParameters) {
        name += (name.empty() ? "" : " ") + k + "=" + std::to_string(v);
      }
      out.emptyStructures.push_back(name + ": " + error);
    }
  }
  if (spaces.empty()) {
    std::string why;
    for (const std::string& e : out.emptyStructures) why += "\n  " + e;
    throw std::runtime_error("no structure has a valid variant:" + why);
  }
  // What each structure can give: its points without local sizes (what sampling is uniform
  // over), or, when those are fewer than the samples asked for in all, its points with every
  // valid local size (a program with no parameter of its own is still explored over those).
  uint64_t total = 0;
  for (uint64_t c : counts) total += c;
  const std::vector<uint64_t>& capacities = total < samples ? fullCounts : counts;
  std::map<std::string, double> familyTotals, familyCapacities;
  for (size_t i = 0; i < counts.size(); ++i) {
    familyTotals[families[i]] += static_cast<double>(counts[i]);
    familyCapacities[families[i]] += static_cast<double>(capacities[i]);
  }
  std::mt19937_64 rng(seed);
  std::vector<double> weights;
  for (size_t i = 0; i < counts.size(); ++i) {
    weights.push_back(static_cast<double>(counts[i]) / familyTotals[families[i]]);
  }
  std::vector<size_t> wanted(counts.size(), 0);
  uint64_t capacity = 0;
  for (uint64_t c : capacities) capacity += c;
  out.validPoints = total;
  const size_t targetCount = static_cast<size_t>(std::min<uint64_t>(samples, capacity));
  // The families' shares.
  std::vector<std::string> familyNames;
  for (const auto& [name, points] : familyTotals) familyNames.push_back(name);
  std::shuffle(familyNames.begin(), familyNames.end(), rng);
  std::map<std::string, uint64_t> familyShare;
  for (size_t left = targetCount; left > 0;) {
    std::vector<std::string> open;
    for (const std::string& name : familyNames) {
      if (familyShare[name] < static_cast<uint64_t>(familyCapacities[name])) open.push_back(name);
    }
    if (open.empty()) break;
    const size_t each = std::max<size_t>(left / open.size(), 1);
    for (const std::string& name : open) {
      if (left == 0) break;
      const uint64_t room = static_cast<uint64_t>(familyCapacities[name]) - familyShare[name];
      const uint64_t given = std::min<uint64_t>({each, room, left});
      familyShare[name] += given;
      left -= given;
    }
  }
  // Each family's share over its structures.
  for (const std::string& name : familyNames) {
    std::vector<double> familyWeights(weights.size(), 0.0);
    for (size_t i = 0; i < counts.size(); ++i) {
      if (families[i] == name) familyWeights[i] = weights[i];
    }
    for (uint64_t assigned = 0; assigned < familyShare[name];) {
      std::discrete_distribution<size_t> pick(familyWeights.begin(), familyWeights.end());
      size_t i = pick(rng);
      if (wanted[i] >= capacities[i]) {
        familyWeights[i] = 0;
        continue;
      }
      ++wanted[i];
      ++assigned;
    }
  }
  if (coverage == StructureCoverage::EveryStructure) {
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (wanted[i] == 0 && capacities[i] > 0) wanted[i] = 1;
    }
  }
  std::vector<size_t> wantedOfBuilt(builtSpaces.size(), 0);
  std::vector<uint64_t> seedOfBuilt(builtSpaces.size(), 0);
  for (size_t i = 0; i < spaces.size(); ++i) {
    wantedOfBuilt[builtIndex[i]] = wanted[i];
    seedOfBuilt[builtIndex[i]] = seed * 1000003u + i;
  }
  std::vector<SampleSet> sets = sampling.sample(wantedOfBuilt, seedOfBuilt);
  std::vector<std::pair<size_t, std::vector<int64_t>>> drawn;
  for (size_t i = 0; i < spaces.size(); ++i) {
    if (wanted[i] == 0) continue;
    SampleSet& set = sets[builtIndex[i]];
    if (out.method.find(set.method) == std::string::npos) {
      out.method += (out.method.empty() ? "" : ", ") + set.method;
    }
    out.fewerThanRequested =
        out.fewerThanRequested || set.spaceSmallerThanRequested || set.duplicateLimitReached;
    for (std::vector<int64_t>& point : set.points) drawn.push_back({i, std::move(point)});
  }
  for (std::unique_ptr<ParameterSpace>& space : spaces) out.spaces.push_back(std::move(*space));
  // A seeded interleaving, so that the first variants run already span the structures.
  std::shuffle(drawn.begin(), drawn.end(), rng);
  for (auto& [space, point] : drawn) {
    out.pointSpace.push_back(space);
    out.points.push_back(std::move(point));
  }
  out.fewerThanRequested = out.fewerThanRequested || out.points.size() < samples;
  out.method += " over " + std::to_string(out.spaces.size()) + " structures";
  if (familyTotals.size() > 1) {
    out.method += " in " + std::to_string(familyTotals.size()) + " families";
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return out;
}

namespace {

// The target's predicted seconds for a point with these recorded parameters (JSON), when the
// model covers it and the prediction is finite.
std::optional<double> predictedSeconds(const ExploreTarget& target, const std::string& parameters,
                                       const host::DeviceProfile& device) {
  std::optional<double> seconds =
      target.predictSeconds(parseRecordedParameters(parameters), device);
  if (seconds && std::isfinite(*seconds)) return seconds;
  return std::nullopt;
}

// Each point's family (the structure its space belongs to), numbered in order of first
// appearance; all zero for a target without structures.
std::vector<size_t> familyOfEachPoint(const ExploreTarget& target,
                                      const std::vector<size_t>& spaceStructure,
                                      const std::vector<size_t>& pointSpace, size_t pointCount) {
  std::vector<size_t> families(pointCount, 0);
  if (target.structures.empty()) return families;
  std::map<std::string, size_t> number;
  for (size_t j = 0; j < pointCount; ++j) {
    const std::string& family = target.structures.at(spaceStructure.at(pointSpace.at(j))).family;
    families[j] = number.emplace(family, number.size()).first->second;
  }
  return families;
}

}  // namespace

SampledTarget sampleCandidates(const ExploreTarget& target,
                               const std::optional<host::DeviceProfile>& profile, size_t samples,
                               uint64_t seed, size_t candidates, const SamplerOptions& options) {
  if (candidates <= 1 || !target.predictSeconds || !profile) {
    return sampleTarget(target, profile, samples, seed, options);
  }
  SampledTarget drawn = sampleTarget(target, profile, samples * std::min<size_t>(candidates, 1000),
                                     seed, options, StructureCoverage::EveryStructure);
  if (drawn.points.size() <= samples) return drawn;
  const host::DeviceProfile reported = host::withoutProbedRates(*profile);
  std::vector<std::optional<double>> costs(drawn.points.size());
  for (size_t j = 0; j < drawn.points.size(); ++j) {
    const bool structured = !target.structures.empty();
    const ParameterSpace& space = drawn.spaces.at(structured ? drawn.pointSpace.at(j) : 0);
    const std::map<std::string, int64_t>& fixed =
        structured
            ? target.structures.at(drawn.spaceStructure.at(drawn.pointSpace.at(j))).fixedParameters
            : target.fixedParameters;
    costs[j] = predictedSeconds(target, parametersJson(space, drawn.points[j], fixed), reported);
  }
  // Each point's family (the structure's), so that the cheap half is shared among the families
  // as the samples are: the cost model ranks well within a family, less well across them.
  const std::vector<size_t> families =
      familyOfEachPoint(target, drawn.spaceStructure, drawn.pointSpace, drawn.points.size());
  SampledTarget kept = std::move(drawn);
  std::vector<std::vector<int64_t>> points;
  std::vector<size_t> pointSpace;
  for (size_t j : selectCandidates(costs, samples, seed, families)) {
    points.push_back(std::move(kept.points[j]));
    if (j < kept.pointSpace.size()) pointSpace.push_back(kept.pointSpace[j]);
  }
  kept.candidatesDrawn = costs.size();
  kept.points = std::move(points);
  kept.pointSpace = std::move(pointSpace);
  kept.fewerThanRequested = false;
  return kept;
}

namespace {
Preparation prepareAllShards(const ExploreTarget& target, const ExploreOptions& options);
}  // namespace

// Samples the points of every shard, then keeps this shard's: index % count == shard index.
Preparation prepareExploration(const ExploreTarget& target, const ExploreOptions& options) {
  if (options.shardCount == 0 || options.shardIndex >= options.shardCount) {
    throw std::invalid_argument("shard " + std::to_string(options.shardIndex) + " of " +
                                std::to_string(options.shardCount) +
                                ": the shard index must be below the shard count");
  }
  Preparation prep = prepareAllShards(target, options);
  prep.sampledBeforeShard = prep.points.size();
  if (options.shardCount == 1) return prep;
  std::vector<std::vector<int64_t>> points;
  std::vector<size_t> pointSpace;
  for (size_t i = options.shardIndex; i < prep.points.size(); i += options.shardCount) {
    points.push_back(std::move(prep.points[i]));
    if (i < prep.pointSpace.size()) pointSpace.push_back(prep.pointSpace[i]);
  }
  prep.points = std::move(points);
  prep.pointSpace = std::move(pointSpace);
  return prep;
}

host::DeviceProfile explorationProfile(const ExploreOptions& options) {
  if (!options.profile.empty()) return host::loadProfile(options.profile);
  auto queryInChild = [&] {
    return runInChild(
        [&](int fd) {
          host::Device device = host::selectDevice(options.device);
          writeAll(fd, host::profileToJson(host::queryProfile(device)).dump() + "\n");
        },
        after(60.0));
  };
  ChildOutcome outcome = queryInChild();
  // A child killed by a signal (the OOM killer, a stray kill, a driver's crash) is queried once
  // more: a passing cause must not end an exploration, and a crash that repeats is reported.
  if (outcome.signaled) outcome = queryInChild();
  const nlohmann::ordered_json profile =
      nlohmann::ordered_json::parse(outcome.data, nullptr, false);
  if (outcome.timedOut || outcome.signaled || !profile.is_object() || !profile.contains("name")) {
    // The child reports an exception as {"event": "error", "message": ...}.
    const std::string why =
        outcome.timedOut   ? "it took longer than 60 s"
        : outcome.signaled ? "it died from " + signalText(outcome.signal)
        : profile.is_object() && profile.contains("message") && profile["message"].is_string()
            ? profile["message"].get<std::string>()
            : "exit code " + std::to_string(outcome.exitCode);
    throw std::runtime_error("the device query failed: " + why);
  }
  return host::profileFromJson(profile, "queried device");
}

namespace {

// The reference default-lowered and run on the device at target.referenceCheckSizes, against
// the interpreter at those sizes: {ok, maxError, message, sizes}.
Json smallReferenceCheck(host::Context& context, const ExploreTarget& target,
                         const ExploreOptions& options) {
  std::string sizesText;
  for (const auto& [name, value] : target.referenceCheckSizes) {
    sizesText += (sizesText.empty() ? "" : ",") + name + "=" + std::to_string(value);
  }
  const ArithBinding& small = target.referenceCheckSizes;
  // Sizes that do not make a program (a window larger than the image, ...) leave the check
  // undone, said so; only a disagreement is an error.
  std::vector<float> output, expected;
  try {
    std::vector<Value> inputs =
        randomInputs(*target.reference, small, options.dataSeed, target.inputValues);
    CompilePipelineOptions compile;
    compile.codegen.specialize = small;
    CompiledProgram program = compileToOpenCL(*target.reference, {}, compile);
    output = flattenToFloats(host::runProgram(context, program, inputs, small).output);
    expected = flattenToFloats(interpret(*target.reference, inputs, small));
  } catch (const std::exception& error) {
    return {{"skipped", error.what()}, {"sizes", sizesText}};
  }
  Comparison check = compareOutputs(output, expected, options.measurement.tolerance);
  return {{"ok", check.ok},
          {"maxError", check.maxError},
          {"message", check.message},
          {"sizes", sizesText}};
}

// The values a parameter of type `type` holds under `sizes` (vector lanes counted; a tuple's
// components added).
int64_t valuesOf(const Type& type, const ArithBinding& sizes) {
  switch (type.kind()) {
    case TypeKind::Scalar:
      return 1;
    case TypeKind::Vector:
      return type.vectorWidth();
    case TypeKind::Array:
      return std::max<int64_t>(evaluate(type.arrayLength(), sizes), 0) *
             valuesOf(type.arrayElement(), sizes);
    case TypeKind::Tuple: {
      int64_t total = 0;
      for (const Type& element : type.tupleElements()) total += valuesOf(element, sizes);
      return total;
    }
  }
  return 1;
}

// The explorer holds the inputs for the whole exploration while each run writes them to the
// device (on a CPU device, host memory again): inputs over a third of the machine's memory are
// refused before they are made, naming the sizes, rather than ending the machine's memory.
void checkInputsFitMemory(const ExploreTarget& target) {
  int64_t bytes = 0;
  for (const Expr& param : target.parametric.function.params()) {
    bytes += valuesOf(param.paramType(), target.sizes) * 4;
  }
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(pageSize);
  if (static_cast<double>(bytes) > memory / 3) {
    throw std::runtime_error(
        "the inputs of " + target.program + " need " +
        std::to_string(static_cast<double>(bytes) / 1e9).substr(0, 5) + " GB, more than a third "
        "of this machine's memory (" + std::to_string(memory / 1e9).substr(0, 5) +
        " GB): the explorer holds them while every run copies them to the device; choose "
        "smaller sizes");
  }
}

Preparation prepareAllShards(const ExploreTarget& target, const ExploreOptions& options) {
  checkInputsFitMemory(target);
  Preparation prep;
  prep.target = target;
  prep.inputs.sizes = target.sizes;
  // The device child: profile, and the reference run (checked against the interpreter when
  // small). It sends one JSON header line, then the reference output as raw floats.
  const bool checkWithInterpreter =
      target.reference && multiplyAdds(target) <= target.interpreterCheckLimit;
  // The inputs' Values only where the interpreter reads them (the reference check, or every
  // variant's expected output when there is no reference); else only the flat form, made
  // directly: a Value takes about 40 bytes per element, too much for large inputs.
  // A tuple input has no flat form: then the Values stay, and device runs say what they lack.
  if (!checkWithInterpreter && target.reference) {
    try {
      prep.inputs.flat =
          randomFlatInputs(target.parametric, target.sizes, options.dataSeed, target.inputValues);
    } catch (const std::invalid_argument&) {
    }
  }
  if (prep.inputs.flat.empty()) {
    prep.inputs.inputs =
        randomInputs(target.parametric, target.sizes, options.dataSeed, target.inputValues);
    try {
      prep.inputs.flat = host::flatInputsOf(prep.inputs.inputs);
    } catch (const std::invalid_argument&) {
    }
  }
  // The child runs once more when it was killed from outside (SIGKILL, as an out-of-memory
  // killer or a user's kill would): that says nothing about the program. Any other death is
  // the program's or the device's, and reported.
  auto deviceChild = [&]() {
    return runInChild(
        [&](int fd) {
          host::Device device = host::selectDevice(options.device);
          host::Context context(device);
          Json header;
          const host::DeviceProfile queried = host::queryProfile(device);
          // The profile with a CPU's FMA organisation measured (the cost model's facts).
          header["profile"] = Json::parse(
              host::profileToJson(host::withProbedArithmetic(context, queried)).dump());
          std::vector<float> output;
          if (target.reference) {
            CompilePipelineOptions compile;
            compile.codegen.specialize = target.sizes;
            CompiledProgram program = compileToOpenCL(*target.reference, {}, compile);
            MeasurementOptions limits = options.measurement;
            limits.deviceMemoryBytes = queried.globalMemoryBytes;
            limits.maxBufferBytes = queried.maxAllocationBytes;
            if (const std::string problem = deviceMemoryProblem(program, target.sizes, limits);
                !problem.empty()) {
              throw std::runtime_error("the program at these sizes does not fit the device: the "
                                       "reference (default-lowered program): " + problem);
            }
            Measurement m =
                measureCompiled(context, program, prep.inputs, options.measurement, &output);
            if (m.status != VariantStatus::Ok) {
              throw std::runtime_error(std::string("the reference (default-lowered program) is ") +
                                       statusName(m.status) + ": " + m.message);
            }
            header["reference"] = measurementJson(m);
            if (!checkWithInterpreter && !target.referenceCheckSizes.empty()) {
              header["smallCheck"] = smallReferenceCheck(context, target, options);
            }
            if (checkWithInterpreter) {
              std::vector<float> expected =
                  flattenToFloats(interpret(*target.reference, prep.inputs.inputs, target.sizes));
              Comparison check = compareOutputs(output, expected, options.measurement.tolerance);
              header["check"] = {{"ok", check.ok},
                                 {"maxError", check.maxError},
                                 {"allowed", check.allowed},
                                 {"message", check.message}};
            }
          }
          header["floats"] = output.size();
          writeAll(fd, header.dump() + "\n");
          writeAll(fd, std::string(reinterpret_cast<const char*>(output.data()),
                                   output.size() * sizeof(float)));
        },
        after(std::max(options.timeoutSeconds * 5, 60.0)));
  };
  ChildOutcome outcome = deviceChild();
  if (outcome.signaled && outcome.signal == SIGKILL && !outcome.timedOut) outcome = deviceChild();
  if (outcome.timedOut) {
    throw std::runtime_error("the device query and reference run took longer than " +
                             std::to_string(static_cast<int>(options.timeoutSeconds * 5)) + " s");
  }
  size_t newline = outcome.data.find('\n');
  Json header = newline == std::string::npos
                    ? Json()
                    : Json::parse(outcome.data.substr(0, newline), nullptr, false);
  if (outcome.signaled || !header.is_object() || header.contains("event")) {
    std::string why = header.is_object() && header.contains("message")
                          ? header["message"].get<std::string>()
                      : outcome.signaled ? "it died from " + signalText(outcome.signal)
                                         : "exit code " + std::to_string(outcome.exitCode);
    throw std::runtime_error("the device query / reference run failed: " + why);
  }
  prep.device = host::profileFromJson(nlohmann::ordered_json::parse(header["profile"].dump()),
                                      "queried device");
  if (target.reference) {
    const Json& r = header["reference"];
    size_t count = header["floats"].get<size_t>();
    if (outcome.data.size() - newline - 1 != count * sizeof(float)) {
      throw std::runtime_error("the reference run sent a truncated output");
    }
    std::vector<float> expected(count);
    std::memcpy(expected.data(), outcome.data.data() + newline + 1, count * sizeof(float));
    prep.inputs.expected = std::move(expected);
    // Every variant is checked against this output, so the interpreter no longer needs the
    // inputs' Value form, which takes ten times the memory of the flat form device runs read:
    // dropped, so that the explorer's forks (pre-builds, generator, launcher) do not copy the
    // page tables of it.
    if (!prep.inputs.flat.empty()) {
      prep.inputs.inputs.clear();
      prep.inputs.inputs.shrink_to_fit();
    }
    ReferenceRecord reference;
    reference.program = target.program;
    reference.device = prep.device.fingerprint;
    reference.compiler = compilerVersion();
    reference.description = target.description;
    reference.flops = target.flops;
    reference.samplesNs = r["samples"].get<std::vector<uint64_t>>();
    reference.medianNs = r.value("median", uint64_t{0});
    reference.spaceBytes = r.value("space", int64_t{0});
    prep.reference = reference;
    if (header.contains("check")) {
      const Json& check = header["check"];
      if (!check["ok"].get<bool>()) {
        throw std::runtime_error(
            "the reference (default-lowered program) disagrees with the interpreter: " +
            check["message"].get<std::string>());
      }
      prep.referenceCheck = "reference checked against the interpreter (max difference " +
                            std::to_string(check["maxError"].get<double>()) + ")";
    } else if (header.contains("smallCheck") && header["smallCheck"].contains("skipped")) {
      prep.referenceCheck =
          "reference too large for the interpreter check, and it could not "
          "run at " +
          header["smallCheck"]["sizes"].get<std::string>() + ": " +
          header["smallCheck"]["skipped"].get<std::string>();
    } else if (header.contains("smallCheck")) {
      const Json& check = header["smallCheck"];
      if (!check["ok"].get<bool>()) {
        throw std::runtime_error(
            "the reference (default-lowered program) disagrees with the interpreter at " +
            check["sizes"].get<std::string>() + ": " + check["message"].get<std::string>());
      }
      prep.referenceCheck = "reference checked against the interpreter at " +
                            check["sizes"].get<std::string>() + " (max difference " +
                            std::to_string(check["maxError"].get<double>()) +
                            "; too large for it at full size)";
    } else {
      prep.referenceCheck = "reference too large for the interpreter check";
    }
  } else {
    prep.referenceCheck = "each variant checked against the interpreter";
  }

  SpaceOptions spaceOptions;
  spaceOptions.switches = target.switches;
  spaceOptions.powerOfTwo = target.powerOfTwo;
  spaceOptions.codegenChoices = target.codegenChoices;
  spaceOptions.device = options.profile.empty() ? prep.device : host::loadProfile(options.profile);
  prep.deviceProfileName = spaceOptions.device->name;
  SampledTarget sampled = sampleCandidates(target, *spaceOptions.device, options.samples,
                                           options.seed, options.candidates, options.sampler);
  prep.spaces = std::move(sampled.spaces);
  prep.spaceStructure = std::move(sampled.spaceStructure);
  prep.pointSpace = std::move(sampled.pointSpace);
  prep.points = std::move(sampled.points);
  prep.emptyStructures = std::move(sampled.emptyStructures);
  prep.samplingMethod = sampled.method;
  prep.fewerThanRequested = sampled.fewerThanRequested;
  prep.samplingSeconds = sampled.seconds;
  prep.candidatesDrawn = sampled.candidatesDrawn;
  if (target.structures.empty()) {
    prep.space = std::move(prep.spaces.front());
    prep.spaces.clear();
    prep.pointSpace.clear();
  } else {
    prep.space = prep.spaces.front();
  }
  return prep;
}

}  // namespace

const char* sampleOrderName(SampleOrder order) {
  return order == SampleOrder::Cost ? "cost" : "random";
}

std::optional<SampleOrder> parseSampleOrder(const std::string& text) {
  if (text == "cost") return SampleOrder::Cost;
  if (text == "random") return SampleOrder::Random;
  return std::nullopt;
}

std::vector<std::optional<double>> predictedCosts(const Preparation& prep) {
  std::vector<std::optional<double>> costs(prep.points.size());
  if (!prep.target.predictSeconds) return costs;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    costs[i] = predictedSeconds(prep.target, prep.parametersOf(i), prep.device);
  }
  return costs;
}

std::vector<size_t> orderByPredictedCost(const std::vector<std::optional<double>>& costs) {
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // A cost that is missing or not finite (NaN would break the ordering) counts as unknown.
  auto known = [&](size_t i) { return costs[i].has_value() && std::isfinite(*costs[i]); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (!known(a) || !known(b)) return known(a) && !known(b);
    return *costs[a] < *costs[b];
  });
  return order;
}

std::vector<size_t> selectCandidates(const std::vector<std::optional<double>>& costs, size_t wanted,
                                     uint64_t seed, const std::vector<size_t>& families) {
  std::vector<size_t> kept;
  if (costs.size() <= wanted) {
    kept.resize(costs.size());
    std::iota(kept.begin(), kept.end(), size_t{0});
    return kept;
  }
  // Each family's candidates in ascending predicted cost (one family when none are given), the
  // families in the order of their cheapest: where the cheap half has fewer places than there
  // are families (a search's many algorithmic families, a few samples), the families the model
  // predicts cheapest take them (across families it ranks only to about
  // kFamiliesTakeTurnsWithin, but better than a random order within that band:
  // bench/results/candidate-coverage-s69-amd.md).
  std::vector<std::vector<size_t>> byFamily;
  std::map<size_t, size_t> familyPosition;
  for (size_t i : orderByPredictedCost(costs)) {
    auto [it, added] =
        familyPosition.try_emplace(families.empty() ? 0 : families.at(i), byFamily.size());
    if (added) byFamily.emplace_back();
    byFamily[it->second].push_back(i);
  }
  // The cheap half: the families in turn, each giving its next cheapest, until a family has no
  // more (the others go on).
  const size_t byCost = (wanted + 1) / 2;
  std::vector<bool> taken(costs.size(), false);
  std::vector<size_t> next(byFamily.size(), 0);
  while (kept.size() < byCost) {
    for (size_t f = 0; f < byFamily.size() && kept.size() < byCost; ++f) {
      if (next[f] < byFamily[f].size()) {
        kept.push_back(byFamily[f][next[f]]);
        taken[byFamily[f][next[f]]] = true;
        ++next[f];
      }
    }
  }
  std::vector<size_t> rest;
  for (size_t i = 0; i < costs.size(); ++i) {
    if (!taken[i]) rest.push_back(i);
  }
  std::mt19937_64 rng(seed);
  std::shuffle(rest.begin(), rest.end(), rng);
  kept.insert(kept.end(), rest.begin(),
              rest.begin() + static_cast<std::ptrdiff_t>(wanted - byCost));
  std::sort(kept.begin(), kept.end());
  return kept;
}

std::vector<size_t> orderFamiliesTakingTurns(const std::vector<std::optional<double>>& costs,
                                             const std::vector<size_t>& families) {
  std::vector<size_t> byCost = orderByPredictedCost(costs);
  if (families.empty() || byCost.empty()) return byCost;
  auto known = [&](size_t i) { return costs[i].has_value() && std::isfinite(*costs[i]); };
  if (!known(byCost.front())) return byCost;
  const double near = kFamiliesTakeTurnsWithin * *costs[byCost.front()];
  // Each family's near points in ascending cost; families in the order of their cheapest.
  std::vector<size_t> familyOrder;
  std::map<size_t, std::vector<size_t>> nearByFamily;
  std::vector<size_t> rest;
  for (size_t i : byCost) {
    if (known(i) && *costs[i] <= near) {
      auto [it, added] = nearByFamily.try_emplace(families.at(i));
      if (added) familyOrder.push_back(families.at(i));
      it->second.push_back(i);
    } else {
      rest.push_back(i);
    }
  }
  std::vector<size_t> ordered;
  ordered.reserve(costs.size());
  for (size_t turn = 0; ordered.size() + rest.size() < costs.size(); ++turn) {
    for (size_t family : familyOrder) {
      const std::vector<size_t>& members = nearByFamily[family];
      if (turn < members.size()) ordered.push_back(members[turn]);
    }
  }
  ordered.insert(ordered.end(), rest.begin(), rest.end());
  return ordered;
}

std::vector<size_t> measurementOrder(const std::vector<size_t>& pending,
                                     const std::vector<std::optional<double>>& costs,
                                     SampleOrder order, const std::vector<size_t>& families) {
  if (order == SampleOrder::Random) return pending;
  std::vector<std::optional<double>> pendingCosts;
  std::vector<size_t> pendingFamilies;
  for (size_t index : pending) {
    pendingCosts.push_back(index < costs.size() ? costs[index] : std::nullopt);
    if (!families.empty()) pendingFamilies.push_back(families.at(index));
  }
  std::vector<size_t> ordered;
  for (size_t position : orderFamiliesTakingTurns(pendingCosts, pendingFamilies)) {
    ordered.push_back(pending[position]);
  }
  return ordered;
}

std::vector<size_t> pointFamilies(const Preparation& prep) {
  if (prep.spaces.empty()) return std::vector<size_t>(prep.points.size(), 0);
  return familyOfEachPoint(prep.target, prep.spaceStructure, prep.pointSpace, prep.points.size());
}

double warmUpDeadlineSeconds(const ExploreOptions& options, std::optional<uint64_t> bestNs,
                             double buildSeconds) {
  const double cap = options.timeoutSeconds;
  if (!bestNs) return cap;
  return std::min(cap, options.slowdownCutoff * static_cast<double>(*bestNs) * 1e-9 +
                           options.marginSeconds +
                           options.firstLaunchCompileFactor * std::max(0.0, buildSeconds));
}

namespace {

// What a variant's pre-build reported, for its record's details.
Json prebuildDetails(const PrebuildPool::Result& prebuilt) {
  Json details{{"status", prebuilt.status},
               {"message", prebuilt.message},
               {"waitedSeconds", prebuilt.waitedSeconds}};
  if (!prebuilt.buildLog.empty()) details["buildLog"] = prebuilt.buildLog;
  return details;
}

}  // namespace

ExploreSummary runExploration(const Preparation& prep, const ExploreOptions& options) {
  const auto start = Clock::now();
  ResultsDb db(options.db);
  const std::string device = prep.device.fingerprint;
  const std::string compiler = compilerVersion();
  if (prep.reference) db.recordReference(*prep.reference);

  ExploreSummary summary;
  summary.sampled = prep.points.size();
  ProgressUpdate progress;
  progress.total = prep.points.size();
  for (const VariantRecord& row : db.variants(prep.target.program, device)) {
    if (row.key.compiler == compiler && row.status == VariantStatus::Ok && row.medianNs &&
        (!progress.bestNs || *row.medianNs < *progress.bestNs)) {
      progress.bestNs = row.medianNs;
    }
  }

  // Skip what is done.
  std::vector<size_t> pending;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    VariantKey key{prep.target.program, device, compiler, prep.parametersOf(i)};
    std::optional<VariantRecord> existing = db.find(key);
    if (existing && existing->status != VariantStatus::Running) {
      ++summary.skipped;
      ++progress.statusCounts[statusName(existing->status)];
      continue;
    }
    if (existing && existing->attempts >= 2) {
      VariantRecord crashed = *existing;
      crashed.workload = prep.target.workload;
      crashed.strategy = prep.strategyOf(i);
      crashed.status = VariantStatus::Crashed;
      crashed.message = "the explorer died twice while this variant ran (" +
                        std::to_string(existing->attempts) + " attempts); not run again";
      db.record(crashed);
      ++summary.skipped;
      ++progress.statusCounts["crashed"];
      continue;
    }
    pending.push_back(i);
  }
  // Measure the cheapest predicted first, the families taking turns (ExploreOptions::order);
  // the set stays `pending`.
  const std::vector<std::optional<double>> costs = predictedCosts(prep);
  pending = measurementOrder(pending, costs, options.order, pointFamilies(prep));
  progress.skipped = summary.skipped;
  progress.done = summary.skipped;
  if (options.progress) options.progress(progress);

  // --jobs: pre-build children for the next `jobs` pending variants
  // (explore/prebuild_pool.h).
  const size_t jobs = std::max<size_t>(options.jobs, 1);
  PrebuildPool prebuilds;
  auto prebuildBody = [&prep, &options](size_t variant) {
    return [&prep, &options, variant](int fd) {
      host::Device selected = host::selectDevice(options.device);
      host::Context context(selected);
      MeasurementOptions buildOnly = options.measurement;
      buildOnly.deviceMemoryBytes = prep.device.globalMemoryBytes;
      buildOnly.maxBufferBytes = prep.device.maxAllocationBytes;
      buildOnly.stopAfterBuild = true;
      // A CPU implementation (PoCL) compiles each kernel again for its local size at its first
      // launch: done here too, off the measuring child's path.
      buildOnly.compileFirstLaunch = prep.device.deviceType == "cpu";
      // Its build done, before the first launches (PrebuildPool::take's second deadline).
      MeasurementEvents events;
      events.phase = [fd](const std::string& phase, uint64_t ns) {
        if (phase == "built") sendLine(fd, Json{{"event", "built"}, {"ns", ns}});
      };
      Measurement m = measureVariant(context, prep.programOf(variant),
                                     prep.spaceOf(variant).binding(prep.points[variant]),
                                     prep.inputs, buildOnly, events);
      Json out{{"event", "prebuilt"}, {"status", statusName(m.status)}, {"message", m.message}};
      if (m.buildMs) out["buildMs"] = *m.buildMs;
      if (!m.buildLog.empty()) out["buildLog"] = m.buildLog;
      sendLine(fd, out);
    };
  };

  // The options of one variant's measurement: the target's constant inputs, and the time-once
  // threshold from the best time so far (`best`: ns or null).
  auto measurementOptionsFor = [&prep, &options](const Json& best) {
    MeasurementOptions measurementOptions = options.measurement;
    measurementOptions.constantInputs = prep.target.constantInputs;
    measurementOptions.deviceMemoryBytes = prep.device.globalMemoryBytes;
    measurementOptions.maxBufferBytes = prep.device.maxAllocationBytes;
    if (best.is_number() && options.timeOnceFactor > 0) {
      measurementOptions.timeOnceAboveNs =
          static_cast<uint64_t>(options.timeOnceFactor * static_cast<double>(best.get<uint64_t>()));
    }
    return measurementOptions;
  };

  // The measuring child (forked by the launcher): builds, runs, verifies and times the variant
  // the generator generated, reporting on the generator's event pipe.
  MeasuringLauncher launcher;
  launcher.start([&prep, &options, &measurementOptionsFor](LaunchRequest& launch, int fd) {
    sendLine(fd, Json{{"event", "started"}, {"pid", getpid()}});
    const MeasurementOptions measurementOptions = measurementOptionsFor(launch.best);
    GeneratedVariant& variant = launch.generated;
    const size_t index = launch.variant;
    if (prep.inputs.expected) variant.expected = *prep.inputs.expected;
    Measurement m;
    if (measurementOptions.stopAfterGeneration) {
      m = variant.measurement;
      m.status = VariantStatus::Ok;
      m.message = "generated (not built: stopAfterGeneration)";
    } else {
      host::Device selected = host::selectDevice(options.device);
      host::Context context(selected);
      MeasurementEvents events;
      events.phase = [fd](const std::string& name, uint64_t ns) {
        sendLine(fd, Json{{"event", name}, {"ns", ns}});
      };
      if (options.tamperOutput) {
        events.tamperOutput = [&](std::vector<float>& output) {
          options.tamperOutput(index, output);
        };
      }
      if (options.tamperProgram) {
        events.tamperProgram = [&](CompiledProgram& program) {
          options.tamperProgram(index, program);
        };
      }
      m = measureGenerated(context, variant, prep.inputs, measurementOptions, events);
    }
    sendLine(fd, measurementJson(m));
  });

  // The generator process (explore/generator_process.h): per request it generates the variant,
  // then hands it to the launcher, which forks the measuring child, and reports how that ended.
  // The interpreter's last output, for the next variant of the same program (a program
  // without a reference is checked against the interpreter on every variant's instance).
  InterpretedOutput lastInterpreted;
  auto serve = [&prep, &options, &launcher, &measurementOptionsFor, &lastInterpreted](
                   const Json& request, int eventFd) {
    const auto busyStart = Clock::now();
    const double cpuStart = threadCpuMs();
    const size_t index = request.at("variant").get<size_t>();
    const Json best = request.contains("best") ? request["best"] : Json();
    const MeasurementOptions measurementOptions = measurementOptionsFor(best);
    Json exited{{"event", "exited"}};
    double waitedMs = 0;
    if (options.tamperGeneration) options.tamperGeneration(index);
    rusage before{};
    getrusage(RUSAGE_THREAD, &before);
    {
      GeneratedVariant variant =
          generateVariant(prep.programOf(index), prep.spaceOf(index).binding(prep.points[index]),
                          prep.inputs, measurementOptions, &lastInterpreted);
      exited["generateCpuMs"] = threadCpuMs() - cpuStart;
      rusage after{};
      getrusage(RUSAGE_THREAD, &after);
      exited["generateMinorFaults"] = after.ru_minflt - before.ru_minflt;
      if (!variant.program) {
        sendLine(eventFd, measurementJson(variant.measurement));  // invalid: no child
      } else {
        sendLine(eventFd, Json{{"event", "generated"}, {"ns", 0}});
        // "fork": handing the variant to the launcher (serialised, sent); the launcher's own
        // fork of the child is launcherForkMs.
        const auto forkStart = Clock::now();
        const double forkCpuStart = threadCpuMs();
        const std::string id =
            launcher.send(index, best, variant, !prep.inputs.expected.has_value(), eventFd);
        exited["forkMs"] = msSince(forkStart);
        exited["forkCpuMs"] = threadCpuMs() - forkCpuStart;
        const auto waitStart = Clock::now();
        const Json reply = launcher.waitFor(id);
        waitedMs = msSince(waitStart);
        if (reply.contains("forkError")) {
          throw std::runtime_error("fork (launcher): " + reply["forkError"].get<std::string>());
        }
        for (const char* key : {"childCpuMs", "launcherForkMs", "signaled", "signal", "code"}) {
          if (reply.contains(key)) exited[key] = reply[key];
        }
      }
    }  // the variant's program is freed here, on the generator's time
    exited["cpuMs"] = threadCpuMs() - cpuStart;
    exited["busyMs"] = msSince(busyStart) - waitedMs;
    sendLine(eventFd, exited);
  };
  GeneratorProcess generator(serve);

  double runSeconds = 0;
  summary.weftSeconds = prep.samplingSeconds;
  summary.samplingSeconds = prep.samplingSeconds;
  size_t launcherRetryOf = std::numeric_limits<size_t>::max();  // the variant run again
  const auto measuringStart = Clock::now();
  for (size_t position = 0; position < pending.size(); ++position) {
    if (options.timeLimitSeconds > 0 &&
        std::chrono::duration<double>(Clock::now() - measuringStart).count() >=
            options.timeLimitSeconds) {
      summary.leftByTimeLimit = pending.size() - position;
      break;
    }
    const auto iterationStart = Clock::now();
    const double iterationCpuStart = threadCpuMs();
    const size_t index = pending[position];
    PrebuildPool::Result prebuilt;
    if (jobs > 1) {
      for (size_t ahead = position; ahead < std::min(pending.size(), position + jobs); ++ahead) {
        if (!prebuilds.started(pending[ahead])) {
          prebuilds.start(pending[ahead], prebuildBody(pending[ahead]));
        }
      }
      prebuilt = prebuilds.take(index, options.timeoutSeconds, [&](double buildSeconds) {
        return warmUpDeadlineSeconds(options, progress.bestNs, buildSeconds);
      });
      runSeconds += prebuilt.waitedSeconds;
    }
    VariantKey key{prep.target.program, device, compiler, prep.parametersOf(index)};
    VariantRecord record;
    record.key = key;
    record.workload = prep.target.workload;
    record.strategy = prep.strategyOf(index);
    record.attempts = db.markRunning(key);

    const double cap = options.timeoutSeconds;
    std::optional<uint64_t> best = progress.bestNs;
    std::string phase = "generation";
    double buildSeconds = 0;  // the variant's uncached build, once it is built
    // Wall-clock time from "built" to "warm": the warm-up run with whatever the implementation
    // compiles at a first launch (its event times do not show that).
    std::optional<Clock::time_point> builtAt;
    std::optional<double> warmUpWallSeconds;
    Json result;
    auto onLine = [&](const std::string& line) -> std::optional<Clock::time_point> {
      Json message = Json::parse(line, nullptr, false);
      if (!message.is_object()) return std::nullopt;
      std::string event = message.value("event", "");
      if (event == "generated") {
        phase = "build";
        return after(cap);
      }
      if (event == "built") {
        phase = "warm-up run";
        // No build beside the runs: pre-builds wait until this variant's process ends.
        if (!options.buildWhileTiming) prebuilds.pause();
        // The child's build is a cache hit when a pre-build built the same source: the
        // pre-build's time is then the uncached one.
        const double childBuild = static_cast<double>(message.value("ns", uint64_t{0})) * 1e-9;
        buildSeconds = std::max(childBuild, prebuilt.buildMs.value_or(0.0) * 1e-3);
        builtAt = Clock::now();
        return after(warmUpDeadlineSeconds(options, best, buildSeconds));
      }
      if (event == "warm") {
        phase = "timed runs";
        if (builtAt) {
          warmUpWallSeconds = std::chrono::duration<double>(Clock::now() - *builtAt).count();
        }
        double warm = static_cast<double>(message.value("ns", uint64_t{0})) * 1e-9;
        double measured = std::max(static_cast<double>(options.measurement.minMeasuredNs) * 1e-9,
                                   options.measurement.minRepeats * warm);
        return after(std::min(cap, options.marginSeconds + 4 * measured));
      }
      if (event == "result" || event == "error") result = message;
      return std::nullopt;
    };
    // A pre-build that found the variant invalid (its kernels spill registers, or it does not
    // fit the device) decides it: the same source would be built again only to be rejected or,
    // where the platform caches builds without their log (NVIDIA), launched and fail.
    const bool invalidWhenPrebuilt = prebuilt.ran && prebuilt.status == "invalid";
    const GeneratorProcess::Outcome served =
        invalidWhenPrebuilt
            ? GeneratorProcess::Outcome{}
            : generator.run(Json{{"variant", index}, {"best", best ? Json(*best) : Json(nullptr)}},
                            after(cap), onLine);
    const ChildOutcome& outcome = served.child;
    // The generator's own time for this variant (generation, the fork, messages; not the
    // wait for the measuring child), 0 when it died or was killed.
    const Json& exited = served.exited;
    const double generatorBusyMs = exited.is_object() ? exited.value("busyMs", 0.0) : 0.0;
    prebuilds.resume();
    runSeconds += outcome.seconds;

    // The launcher died under this variant (killed from outside: its measuring child died with
    // it, so whatever the variant's process reported says nothing about the variant). A new
    // launcher, a new generator holding its socket, and the variant is measured again once; a
    // second death on the same variant is recorded against it (crashed), like a variant found
    // running twice after the explorer died.
    bool launcherDied = false;
    if (launcher.died()) {
      launcher.restart();
      generator.discard();
      if (launcherRetryOf != index) {
        launcherRetryOf = index;
        --position;
        continue;
      }
      launcherDied = true;
    }

    if (invalidWhenPrebuilt) {
      record.status = VariantStatus::Invalid;
      record.message = prebuilt.message + " (found by its pre-build)";
      record.buildMs = prebuilt.buildMs;
      Json details{{"phase", "pre-build"}, {"prebuild", prebuildDetails(prebuilt)}};
      record.details = details.dump();
    } else if (launcherDied) {
      record.status = VariantStatus::Crashed;
      record.message =
          "the measuring launcher died twice while this variant was measured (in "
          "the " +
          phase + "); not run again";
      record.details = Json{{"phase", phase}, {"childSeconds", outcome.seconds}}.dump();
    } else if (result.is_object() && result.value("event", "") == "result") {
      record.status = parseStatus(result.value("status", "")).value_or(VariantStatus::Invalid);
      record.message = result.value("message", "");
      record.sourceHash = result.value("hash", "");
      record.samplesNs = result.value("samples", std::vector<uint64_t>{});
      if (result.contains("median")) record.medianNs = result["median"].get<uint64_t>();
      if (result.contains("space")) record.spaceBytes = result["space"].get<int64_t>();
      if (result.contains("buildMs")) record.buildMs = result["buildMs"].get<double>();
      Json details{{"warmUpNs", result.value("warmNs", uint64_t{0})},
                   {"kernels", result.value("kernels", Json::array())},
                   {"maxError", result.value("maxError", 0.0)},
                   {"allowedError", result.value("allowedError", 0.0)},
                   {"tolerance", options.measurement.tolerance},
                   {"childSeconds", outcome.seconds},
                   {"generateMs", result.value("generateMs", 0.0)},
                   {"timedOnce", result.value("timedOnce", false)}};
      if (warmUpWallSeconds) details["warmUpWallSeconds"] = *warmUpWallSeconds;
      if (result.contains("preparationNs")) details["preparationNs"] = result["preparationNs"];
      if (result.contains("allBuffersBytes"))
        details["allBuffersBytes"] = result["allBuffersBytes"];
      // The compiler's messages (warnings), kept with the variant rather than printed.
      if (result.contains("buildLog")) details["buildLog"] = result["buildLog"];
      if (prebuilt.ran) {
        // build_ms is the pre-build's (the uncached build); the measuring child's build, a
        // cache hit when the implementation caches builds (PoCL), is kept in the details.
        if (prebuilt.buildMs && record.status != VariantStatus::BuildError &&
            record.status != VariantStatus::Invalid) {
          details["cachedBuildMs"] = record.buildMs ? Json(*record.buildMs) : Json(nullptr);
          record.buildMs = prebuilt.buildMs;
        }
        details["prebuild"] = prebuildDetails(prebuilt);
      }
      // weft's own time for this variant: the generator's (generation, its fork of the
      // measuring child, messages) plus the explorer's work around the generator (everything
      // in this iteration but the request and the wait for its pre-build), up to here.
      const double aroundChild =
          std::chrono::duration<double>(Clock::now() - iterationStart).count() - outcome.seconds -
          prebuilt.waitedSeconds;
      details["weftMs"] = 1e3 * std::max(aroundChild, 0.0) + generatorBusyMs;
      // The same work in CPU time: the explorer thread's (its waits for the pre-build and the
      // child take none) plus the generator's. Unlike the wall figure it does not grow when
      // the pre-builds running beside it (OpenCL builds, not weft's work) take the cores.
      const double explorerCpuMs = threadCpuMs() - iterationCpuStart;
      details["explorerCpuMs"] = explorerCpuMs;
      details["weftCpuMs"] =
          explorerCpuMs + (exited.is_object() ? exited.value("cpuMs", 0.0) : 0.0);
      if (exited.is_object()) {
        // Thread CPU milliseconds: the generator's in all and for generating; handing the variant
        // to the launcher (wall and CPU) and the launcher's fork of the measuring child (wall);
        // the measuring child's CPU (build and runs included).
        Json generator{{"cpuMs", exited.value("cpuMs", 0.0)},
                       {"generateCpuMs", exited.value("generateCpuMs", 0.0)},
                       {"busyMs", generatorBusyMs}};
        for (const char* key :
             {"forkMs", "forkCpuMs", "launcherForkMs", "childCpuMs", "generateMinorFaults"}) {
          if (exited.contains(key)) generator[key] = exited[key];
        }
        details["generator"] = generator;
      }
      // The run's floating-point operations, for GFLOP/s where no reference row records them.
      if (prep.target.flops > 0) details["flops"] = prep.target.flops;
      record.details = details.dump();
    } else {
      if (outcome.timedOut) {
        record.status = VariantStatus::Timeout;
        const bool cutOff = best && phase == "warm-up run" &&
                            warmUpDeadlineSeconds(options, best, buildSeconds) < cap;
        record.message =
            "killed after " + fmt::format("{:.2f}", outcome.seconds) + " s in the " + phase +
            (cutOff ? fmt::format(
                          " (cut-off {:g} x best {:.2f} ms + {:g} s + {:g} x build {:.2f} s)",
                          options.slowdownCutoff, static_cast<double>(*best) * 1e-6,
                          options.marginSeconds, options.firstLaunchCompileFactor, buildSeconds)
                    : fmt::format(" (cap {:g} s)", cap));
      } else if (outcome.signaled) {
        record.status = VariantStatus::Crashed;
        record.message =
            "the variant's process died from " + signalText(outcome.signal) + " in the " + phase;
      } else {
        record.status = VariantStatus::Crashed;
        record.message = "the variant's process exited with code " +
                         std::to_string(outcome.exitCode) + " in the " + phase +
                         (result.is_object() ? ": " + result.value("message", "") : "");
      }
      Json details{{"phase", phase}, {"childSeconds", outcome.seconds}};
      if (phase == "warm-up run") details["uncachedBuildSeconds"] = buildSeconds;
      if (prebuilt.ran) details["prebuild"] = prebuildDetails(prebuilt);
      record.details = details.dump();
    }
    // The cost model's prediction and the order the variant was measured in.
    {
      Json details = Json::parse(record.details, nullptr, false);
      if (!details.is_object()) details = Json::object();
      if (costs[index]) details["predictedNs"] = std::llround(*costs[index] * 1e9);
      details["order"] = sampleOrderName(options.order);
      details["orderPosition"] = position;
      record.details = details.dump();
    }
    db.record(record);
    summary.weftSeconds +=
        std::max(std::chrono::duration<double>(Clock::now() - iterationStart).count() -
                     outcome.seconds - prebuilt.waitedSeconds,
                 0.0) +
        1e-3 * generatorBusyMs;

    ++summary.ran;
    ++summary.statusCounts[statusName(record.status)];
    ++progress.statusCounts[statusName(record.status)];
    if (record.status == VariantStatus::Ok && record.medianNs &&
        (!progress.bestNs || *record.medianNs < *progress.bestNs)) {
      progress.bestNs = record.medianNs;
    }
    ++progress.done;
    progress.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
    const size_t remaining = progress.total - progress.done;
    progress.etaSeconds = runSeconds / static_cast<double>(summary.ran) * remaining;
    progress.last = &record;
    if (options.progress) options.progress(progress);
    progress.last = nullptr;
  }

  for (const VariantRecord& row : db.variants(prep.target.program, device)) {
    if (row.key.compiler == compiler && row.status == VariantStatus::Ok && row.medianNs &&
        (!summary.bestNs || *row.medianNs < *summary.bestNs)) {
      summary.bestNs = row.medianNs;
      summary.bestParameters = row.key.parameters;
    }
  }
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return summary;
}

ExploreSummary explore(const ExploreTarget& target, const ExploreOptions& options) {
  return runExploration(prepareExploration(target, options), options);
}

}  // namespace weft::explore
