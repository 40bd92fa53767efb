// The cache footprint analysis of explore/cache_footprint.h.
#include "explore/cache_footprint.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

namespace weft::explore {

namespace {

// One loop of an access's nest on a core: a dimension's work-groups, its work-items, or a loop
// of the kernel (named by its index variable).
struct NestLoop {
  std::string id;
  double trips = 1;
  double stride = 0;  // scalars per iteration
};

// A reference group: accesses of one buffer in the same loops with the same strides, at
// offsets a constant apart. Its offsets are one more dimension of its footprint, by clusters
// that lie within a line of each other: `clusters` of them, `clusterStride` apart.
struct Reference {
  std::string buffer;
  std::vector<NestLoop> loops;  // outermost first
  double width = 1;             // contiguous scalars one execution touches (a cluster)
  double clusters = 1;
  double clusterStride = 0;
  // The members: offset at the base point and at the probe point, and width.
  std::vector<int64_t> offsets, probeOffsets;
  std::vector<int> widths;
};

// The distinct lines a reference touches during `loops` (any subset of its nest).
double distinctLines(const Reference& reference, const std::vector<NestLoop>& loops,
                     double lineScalars) {
  // By stride; loops of equal stride walk the same addresses: one loop of their trips' sum.
  std::map<double, double> trips;  // stride -> trips
  auto add = [&](double stride, double count) {
    stride = std::abs(stride);
    if (stride == 0 || count <= 1) return;
    auto [it, inserted] = trips.emplace(stride, count);
    if (!inserted) it->second += count - 1;
  };
  for (const NestLoop& loop : loops) add(loop.stride, loop.trips);
  add(reference.clusterStride, reference.clusters);
  double span = reference.width;
  double blocks = 1;
  for (const auto& [stride, count] : trips) {
    if (stride <= span + lineScalars) {
      span += stride * (count - 1);
    } else {
      blocks *= count;
    }
  }
  return blocks * std::ceil(span / lineScalars);
}

}  // namespace

std::optional<double> offsetStepAlong(const Arith& offset, const std::string& variable,
                                      int64_t trips, ArithBinding at) {
  if (trips < 2) return 0.0;
  std::vector<double> steps;
  for (int64_t i : {int64_t{0}, trips / 2 - 1, trips - 2}) {
    at[variable] = std::max<int64_t>(i, 0);
    const std::optional<int64_t> here = tryEvaluate(offset, at);
    at[variable] = std::max<int64_t>(i, 0) + 1;
    const std::optional<int64_t> next = tryEvaluate(offset, at);
    if (!here || !next) return std::nullopt;
    steps.push_back(static_cast<double>(*next - *here));
  }
  std::sort(steps.begin(), steps.end());
  return steps[1];
}

bool kernelHasBarriers(const CompiledProgram& program, const KernelPlan& kernel) {
  const size_t start = program.source.find(" " + kernel.name + "(");
  if (start == std::string::npos) return false;
  const size_t end = program.source.find("kernel void ", start);
  const size_t barrier = program.source.find("barrier(", start);
  return barrier != std::string::npos && (end == std::string::npos || barrier < end);
}

CacheTraffic cacheTraffic(const KernelPlan& kernel, bool hasBarriers, const ArithBinding& binding,
                          const std::array<int64_t, 3>& local, double cacheBytes, double lineBytes,
                          bool explain) {
  constexpr double kBytesPerValue = 4;  // float and int buffers
  constexpr double kPageBytes = 4096;   // the base page of x86-64 and of most ARM systems
  const double lineScalars = std::max(1.0, lineBytes / kBytesPerValue);
  std::array<double, 3> global{1, 1, 1}, items{1, 1, 1}, groups{1, 1, 1};
  for (int d = 0; d < kernel.dimensions; ++d) {
    global[d] = static_cast<double>(std::max<int64_t>(1, evaluate(kernel.globalSize[d], binding)));
    items[d] = local[d] > 0 ? std::min(static_cast<double>(local[d]), global[d]) : global[d];
    groups[d] = std::ceil(global[d] / items[d]);
  }

  std::vector<Reference> references;
  for (const GlobalAccess& access : kernel.globalAccesses) {
    // The base point: every index at its second iteration; the probe point one further.
    ArithBinding at = binding;
    for (const AccessLoop& loop : access.loops) {
      if (!loop.index.isVar()) continue;
      at[loop.index.varName()] = std::min<int64_t>(1, evaluate(loop.tripCount, binding) - 1);
    }
    ArithBinding probe = at;
    for (const AccessLoop& loop : access.loops) {
      if (!loop.index.isVar()) continue;
      const int64_t trips = evaluate(loop.tripCount, binding);
      probe[loop.index.varName()] = std::min<int64_t>(2, trips - 1);
    }
    const std::optional<int64_t> offset = tryEvaluate(access.offset, at);
    const std::optional<int64_t> probeOffset = tryEvaluate(access.offset, probe);
    if (!offset || !probeOffset) continue;

    std::array<double, 3> itemStride{0, 0, 0}, groupStride{0, 0, 0};
    std::vector<NestLoop> body;
    bool usable = true;
    for (const AccessLoop& loop : access.loops) {
      const int64_t trips = evaluate(loop.tripCount, binding);
      if (!loop.index.isVar()) continue;  // an unrolled copy: its own access
      const std::optional<double> stride =
          offsetStepAlong(access.offset, loop.index.varName(), trips, at);
      if (!stride) {
        usable = false;
        break;
      }
      if (!loop.parallel) {
        body.push_back({loop.index.varName(), static_cast<double>(trips), *stride});
        continue;
      }
      const int d = loop.dimension;
      if (d < 0 || d >= 3) continue;
      // The index steps by one per work-item (mapGlb, mapLcl) or per work-group (mapWrg); what
      // the launch does not cover is a loop of the work-item's own.
      double covered = 0;
      if (loop.groupIndex) {
        groupStride[d] += *stride;
        covered = groups[d];
      } else if (loop.localIndex) {
        itemStride[d] += *stride;
        covered = items[d];
      } else {
        itemStride[d] += *stride;
        groupStride[d] += *stride * items[d];
        covered = global[d];
      }
      if (static_cast<double>(trips) > covered) {
        body.push_back({loop.index.varName(), std::ceil(static_cast<double>(trips) / covered),
                        *stride * covered});
      }
    }
    if (!usable) continue;
    std::vector<NestLoop> nest;
    for (int d = kernel.dimensions - 1; d >= 0; --d) {
      nest.push_back({"group " + std::to_string(d), groups[d], groupStride[d]});
    }
    std::vector<NestLoop> workItems;
    for (int d = kernel.dimensions - 1; d >= 0; --d) {
      workItems.push_back({"item " + std::to_string(d), items[d], itemStride[d]});
    }
    if (hasBarriers) {
      nest.insert(nest.end(), body.begin(), body.end());
      nest.insert(nest.end(), workItems.begin(), workItems.end());
    } else {
      nest.insert(nest.end(), workItems.begin(), workItems.end());
      nest.insert(nest.end(), body.begin(), body.end());
    }
    nest.erase(std::remove_if(nest.begin(), nest.end(),
                              [](const NestLoop& loop) { return loop.trips <= 1; }),
               nest.end());

    // Into the reference group of the same buffer, loops and strides whose offsets lie a
    // constant apart from this one's, else a group of its own.
    auto sameLoops = [&](const Reference& r) {
      if (r.buffer != access.buffer || r.loops.size() != nest.size()) return false;
      for (size_t i = 0; i < nest.size(); ++i) {
        if (r.loops[i].id != nest[i].id || r.loops[i].trips != nest[i].trips ||
            r.loops[i].stride != nest[i].stride) {
          return false;
        }
      }
      return *offset - r.offsets.front() == *probeOffset - r.probeOffsets.front();
    };
    auto found = std::find_if(references.begin(), references.end(), sameLoops);
    if (found == references.end()) {
      Reference reference;
      reference.buffer = access.buffer;
      reference.loops = nest;
      references.push_back(std::move(reference));
      found = references.end() - 1;
    }
    found->offsets.push_back(*offset);
    found->probeOffsets.push_back(*probeOffset);
    found->widths.push_back(std::max(1, access.vectorWidth));
  }

  // Each group's offsets by clusters within a line of each other.
  for (Reference& r : references) {
    std::vector<std::pair<int64_t, int>> members;
    for (size_t i = 0; i < r.offsets.size(); ++i) members.emplace_back(r.offsets[i], r.widths[i]);
    std::sort(members.begin(), members.end());
    std::vector<std::pair<double, double>> clusters;  // start, end (exclusive)
    for (const auto& [start, width] : members) {
      const double begin = static_cast<double>(start);
      const double end = begin + width;
      if (!clusters.empty() && begin <= clusters.back().second + lineScalars) {
        clusters.back().second = std::max(clusters.back().second, end);
      } else {
        clusters.emplace_back(begin, end);
      }
    }
    r.width = 1;
    for (const auto& [begin, end] : clusters) r.width = std::max(r.width, end - begin);
    r.clusters = static_cast<double>(clusters.size());
    r.clusterStride = clusters.size() > 1 ? (clusters.back().first - clusters.front().first) /
                                                (static_cast<double>(clusters.size()) - 1)
                                          : 0;
  }

  // The lines each group touches during the loops inside each of its levels.
  std::vector<std::vector<double>> inside(references.size());  // [r][i]: loops i.. of r
  for (size_t r = 0; r < references.size(); ++r) {
    const std::vector<NestLoop>& loops = references[r].loops;
    inside[r].resize(loops.size() + 1);
    for (size_t i = 0; i <= loops.size(); ++i) {
      inside[r][i] = distinctLines(
          references[r], std::vector<NestLoop>(loops.begin() + static_cast<long>(i), loops.end()),
          lineScalars);
    }
  }
  // The kernel's footprint of one iteration of the loop `id`: every group inside it, the lines
  // it touches in the loops inside that one.
  std::map<std::string, double> iterationFootprint;
  for (size_t r = 0; r < references.size(); ++r) {
    const std::vector<NestLoop>& loops = references[r].loops;
    for (size_t i = 0; i < loops.size(); ++i) iterationFootprint[loops[i].id] += inside[r][i + 1];
  }
  const double cacheLines = cacheBytes / lineBytes;

  CacheTraffic traffic;
  for (size_t r = 0; r < references.size(); ++r) {
    const std::vector<NestLoop>& loops = references[r].loops;
    double loads = inside[r][loops.size()];
    for (size_t i = loops.size(); i-- > 0;) {
      if (iterationFootprint[loops[i].id] <= cacheLines) {
        loads += inside[r][i] - inside[r][i + 1];
      } else {
        loads *= loops[i].trips;
      }
    }
    if (explain) {
      std::string text = references[r].buffer + " x" +
                         std::to_string(references[r].offsets.size()) + " width " +
                         std::to_string(references[r].width) + " clusters " +
                         std::to_string(references[r].clusters) + "/" +
                         std::to_string(references[r].clusterStride) + ":";
      for (size_t i = 0; i < loops.size(); ++i) {
        text += " " + loops[i].id + "/" + std::to_string(static_cast<int64_t>(loops[i].trips)) +
                "*" + std::to_string(static_cast<int64_t>(loops[i].stride)) + "[" +
                std::to_string(static_cast<int64_t>(inside[r][i])) + " lines, iteration " +
                std::to_string(static_cast<int64_t>(iterationFootprint[loops[i].id])) + "]";
      }
      traffic.explanation.push_back(text + " -> " + std::to_string(loads) + " loads");
    }
    traffic.lineLoads += loads;
    traffic.lineLoadsByBuffer[references[r].buffer] += loads;
    const double pageScalars = kPageBytes / kBytesPerValue;
    const bool membersOnPages =
        references[r].clusters <= 1 || std::abs(references[r].clusterStride) >= pageScalars;
    if (!loops.empty() && std::abs(loops.back().stride) >= pageScalars && membersOnPages) {
      traffic.pageWalkLineLoads += loads;
    }
    traffic.distinctLines += inside[r][0];
  }
  return traffic;
}

}  // namespace weft::explore
