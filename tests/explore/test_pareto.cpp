// Tests of explore/pareto: the front keeps exactly the non-dominated ok variants (checked
// against a brute-force dominance test on random sets), fastest first; the knee of a convex
// front is its bend; the fastest variant within a budget; memory sizes with units.
#include <doctest/doctest.h>

#include <random>
#include <stdexcept>

#include "explore/pareto.h"

using namespace weft;
using namespace weft::explore;

namespace {

VariantRecord variant(uint64_t ns, int64_t bytes, VariantStatus status = VariantStatus::Ok) {
  VariantRecord v;
  v.key.parameters = "{\"ns\":" + std::to_string(ns) + ",\"bytes\":" + std::to_string(bytes) + "}";
  v.status = status;
  v.medianNs = ns;
  v.spaceBytes = bytes;
  return v;
}

}  // namespace

TEST_CASE("the front is the set of non-dominated ok variants, fastest first") {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<VariantRecord> variants;
    const int n = std::uniform_int_distribution<int>(0, 30)(rng);
    for (int i = 0; i < n; ++i) {
      VariantStatus status =
          std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? VariantStatus::Timeout
                                                             : VariantStatus::Ok;
      variants.push_back(variant(std::uniform_int_distribution<uint64_t>(1, 50)(rng),
                                 std::uniform_int_distribution<int64_t>(1, 50)(rng), status));
    }
    std::vector<VariantRecord> front = paretoFront(variants);
    for (size_t i = 1; i < front.size(); ++i) {
      CHECK(*front[i - 1].medianNs < *front[i].medianNs);
      CHECK(*front[i - 1].spaceBytes > *front[i].spaceBytes);
    }
    // Brute force: an ok variant is dominated when another ok one is no worse in both and
    // better in one; every non-dominated (time, space) pair appears on the front once.
    for (const VariantRecord& v : variants) {
      if (v.status != VariantStatus::Ok) continue;
      bool dominated = false;
      for (const VariantRecord& w : variants) {
        if (w.status != VariantStatus::Ok) continue;
        if (*w.medianNs <= *v.medianNs && *w.spaceBytes <= *v.spaceBytes &&
            (*w.medianNs < *v.medianNs || *w.spaceBytes < *v.spaceBytes)) {
          dominated = true;
        }
      }
      bool onFront = false;
      for (const VariantRecord& f : front) {
        onFront = onFront || (*f.medianNs == *v.medianNs && *f.spaceBytes == *v.spaceBytes);
      }
      CHECK(onFront == !dominated);
    }
  }
}

TEST_CASE("the knee is the bend of the front; budgets pick the fastest that fits") {
  // Time falls steeply until 20 bytes, then barely: the bend is the 20-byte variant.
  std::vector<VariantRecord> variants = {variant(100, 10), variant(30, 20), variant(25, 60),
                                         variant(24, 100), variant(200, 5)};
  std::vector<VariantRecord> front = paretoFront(variants);
  REQUIRE(front.size() == 5);
  CHECK(*front[kneeIndex(front)].spaceBytes == 20);
  CHECK(kneeIndex({variant(1, 1)}) == 0);

  std::optional<VariantRecord> within = fastestWithin(variants, 60);
  REQUIRE(within);
  CHECK(*within->medianNs == 25);
  CHECK_FALSE(fastestWithin(variants, 4));
  variants.push_back(variant(1, 1, VariantStatus::WrongAnswer));
  CHECK(*fastestWithin(variants, 60)->medianNs == 25);  // failed variants never count
}

TEST_CASE("memory sizes with units") {
  CHECK(parseByteSize("25MB") == 25'000'000);
  CHECK(parseByteSize("1.5GB") == 1'500'000'000);
  CHECK(parseByteSize("512KiB") == 512 * 1024);
  CHECK(parseByteSize("2mib") == 2 * 1024 * 1024);
  CHECK(parseByteSize("1000") == 1000);
  CHECK_THROWS_AS(parseByteSize("MB"), std::invalid_argument);
  CHECK_THROWS_AS(parseByteSize("12 apples"), std::invalid_argument);
  CHECK_THROWS_AS(parseByteSize("-1MB"), std::invalid_argument);
}
