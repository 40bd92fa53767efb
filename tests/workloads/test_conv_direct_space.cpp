// Tests of workloads/conv/conv_direct_space: the union over (v, unroll) of conv-direct's spaces for a
// small layer — its count is the sum of the structures' exact counts, empty structures are
// reported, samples are unique, reproducible and spread over the structures in proportion to
// their sizes (chi-square with a fixed seed), and instantiated samples compute the layer (the
// interpreter on the instantiated program equals the interpreter on Listing 3).
#include <doctest/doctest.h>

#include <map>
#include <random>
#include <set>

#include "workloads/conv/conv_direct_space.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "ir/interp.h"
#include "tests/support/random_values.h"
#include "typecheck/typecheck.h"

using namespace weft;
using namespace weft::explore;

namespace {

// C=2, H=W=6, M=4, K=3, stride 1, pad 1: windows of 18 values, so v = 4, 8, 16 have no ω.
ConvLayer smallLayer() { return ConvLayer{2, 6, 6, 4, 3, 1, 1, ""}; }

SpaceOptions poclOptions() {
  SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  return options;
}

}  // namespace

TEST_CASE("the conv-direct space of a layer is the union of its structures") {
  ConvDirectSpace space = buildConvDirectSpace(smallLayer(), poclOptions());
  // Only v = 1 and v = 2 have valid points: ω divides 18 and v must divide ω.
  std::set<int> widths;
  for (const ConvDirectSubspace& s : space.subspaces) widths.insert(s.structure.vectorWidth);
  CHECK(widths == std::set<int>{1, 2});
  CHECK(space.subspaces.size() == 4);
  CHECK(space.emptyStructures.size() == 6);
  uint64_t sum = 0;
  for (const ConvDirectSubspace& s : space.subspaces) {
    CHECK(s.count.exact);
    CHECK(s.count.points > 0);
    sum += s.count.points;
  }
  CHECK(space.exact());
  CHECK(space.validPoints() == sum);
}

TEST_CASE("conv-direct samples are unique, reproducible, spread by size and compute the layer") {
  ConvDirectSpace space = buildConvDirectSpace(smallLayer(), poclOptions());
  const size_t n = 400;
  std::vector<ConvDirectPoint> points = sampleConvDirect(space, n, 42);
  REQUIRE(points.size() == n);
  std::set<std::string> seen;
  for (const ConvDirectPoint& p : points) seen.insert(p.describe(space));
  CHECK(seen.size() == n);
  std::vector<ConvDirectPoint> again = sampleConvDirect(space, n, 42);
  REQUIRE(again.size() == n);
  for (size_t i = 0; i < n; ++i) CHECK(again[i].describe(space) == points[i].describe(space));

  // Structures are chosen in proportion to their counts: chi-square over the structures with
  // a generous bound (3 degrees of freedom; 30 is far in the tail).
  std::map<size_t, double> observed;
  for (const ConvDirectPoint& p : points) observed[p.subspace] += 1;
  double chiSquare = 0;
  for (size_t i = 0; i < space.subspaces.size(); ++i) {
    double expected = static_cast<double>(n) * static_cast<double>(space.subspaces[i].count.points) /
                      static_cast<double>(space.validPoints());
    chiSquare += (observed[i] - expected) * (observed[i] - expected) / expected;
  }
  CAPTURE(chiSquare);
  CHECK(chiSquare < 30);

  // A few instantiated variants compute the layer.
  const Definition listing3 = convListing3Definition();
  std::mt19937_64 rng(3);
  std::vector<Value> inputs;
  for (const Expr& param : listing3.function.params()) {
    inputs.push_back(testing::randomValue(param.paramType(), space.sizes, rng));
  }
  const Value expected = interpret(listing3, inputs, space.sizes);
  for (size_t i = 0; i < 6; ++i) {
    CAPTURE(points[i].describe(space));
    Definition concrete = instantiate(space, points[i]);
    CHECK_NOTHROW(typecheck(concrete));
    Value actual = interpret(concrete, inputs, space.sizes);
    CHECK(approximatelyEqual(expected, actual, 1e-4, 1e-4));
  }
}
