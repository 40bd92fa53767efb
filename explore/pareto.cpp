// pareto.h: the front, its knee, the fastest variant within a budget, byte sizes.
#include "explore/pareto.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <tuple>

namespace weft::explore {

std::vector<VariantRecord> paretoFront(const std::vector<VariantRecord>& variants) {
  std::vector<VariantRecord> ok;
  for (const VariantRecord& v : variants) {
    if (v.status == VariantStatus::Ok && v.medianNs && v.spaceBytes) ok.push_back(v);
  }
  // By space, then time: a variant is on the front when it is faster than every smaller one.
  std::sort(ok.begin(), ok.end(), [](const VariantRecord& a, const VariantRecord& b) {
    return std::tie(*a.spaceBytes, *a.medianNs) < std::tie(*b.spaceBytes, *b.medianNs);
  });
  std::vector<VariantRecord> front;
  for (const VariantRecord& v : ok) {
    if (front.empty() || *v.medianNs < *front.back().medianNs) front.push_back(v);
  }
  std::reverse(front.begin(), front.end());  // fastest (and largest) first
  return front;
}

size_t kneeIndex(const std::vector<VariantRecord>& front) {
  if (front.size() <= 2) return 0;
  const double t0 = static_cast<double>(*front.front().medianNs);
  const double t1 = static_cast<double>(*front.back().medianNs);
  const double s0 = static_cast<double>(*front.front().spaceBytes);
  const double s1 = static_cast<double>(*front.back().spaceBytes);
  auto scaled = [](double value, double from, double to) {
    return to == from ? 0.0 : (value - from) / (to - from);
  };
  // In scaled coordinates the ends are (0, 0) and (1, 1): the distance to the line x = y is
  // |x - y| / sqrt(2); the largest wins (the first on ties).
  size_t best = 0;
  double bestDistance = -1;
  for (size_t i = 0; i < front.size(); ++i) {
    double x = scaled(static_cast<double>(*front[i].medianNs), t0, t1);
    double y = scaled(static_cast<double>(*front[i].spaceBytes), s0, s1);
    double distance = std::fabs(x - y);
    if (distance > bestDistance) {
      bestDistance = distance;
      best = i;
    }
  }
  return best;
}

std::optional<VariantRecord> fastestWithin(const std::vector<VariantRecord>& variants,
                                           int64_t budgetBytes) {
  std::optional<VariantRecord> best;
  for (const VariantRecord& v : variants) {
    if (v.status != VariantStatus::Ok || !v.medianNs || !v.spaceBytes) continue;
    if (*v.spaceBytes > budgetBytes) continue;
    if (!best || *v.medianNs < *best->medianNs) best = v;
  }
  return best;
}

int64_t parseByteSize(const std::string& text) {
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  std::string unit = text.substr(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double factor = 0;
  if (unit.empty() || unit == "B") factor = 1;
  if (unit == "KB") factor = 1e3;
  if (unit == "MB") factor = 1e6;
  if (unit == "GB") factor = 1e9;
  if (unit == "KIB") factor = 1024.0;
  if (unit == "MIB") factor = 1024.0 * 1024.0;
  if (unit == "GIB") factor = 1024.0 * 1024.0 * 1024.0;
  if (end == 0 || factor == 0 || !(value >= 0) || value * factor > 9.0e18) {
    throw std::invalid_argument("'" + text +
                                "' is not a memory size: expected a number with an optional "
                                "unit B, KB, MB, GB, KiB, MiB or GiB (e.g. 25MB)");
  }
  return static_cast<int64_t>(std::llround(value * factor));
}

}  // namespace weft::explore
