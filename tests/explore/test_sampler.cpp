// Tests of explore/sampler: the valid points it enumerates and counts are exactly those a
// brute-force enumeration finds; samples are valid, unique and reproducible from the seed,
// with both methods (enumeration and incremental); frequencies over many seeds are close to
// uniform (chi-square with a generous, fixed-seed bound); device limits hold for every sample;
// a smaller space than requested is reported; an empty space throws with the conflict.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>

#include "explore/sampler.h"
#include "host/device_profile.h"
#include "tests/explore/parametric_programs.h"

using namespace weft;
using namespace weft::explore;
namespace ex = weft::testing::explore;

namespace {

using Points = std::set<std::vector<int64_t>>;

Points toSet(const std::vector<std::vector<int64_t>>& points) {
  return Points(points.begin(), points.end());
}

// The valid points of a space by brute force over the box of its domains, with the space's
// own C++ re-check (violations) as the test.
Points bruteForceValid(const ParameterSpace& space) {
  std::vector<std::pair<int64_t, int64_t>> box;
  for (const Parameter& p : space.parameters) box.push_back({p.lo, p.hi});
  return toSet(ex::bruteForce(
      box, [&](const std::vector<int64_t>& point) { return space.violations(point).empty(); }));
}

SamplerOptions incrementalOnly() {
  SamplerOptions options;
  options.enumerationCap = 0;  // never enumerate: always sample incrementally
  options.counting = false;    // nor by counting (tested in test_counting_sampler.cpp)
  return options;
}

SamplerOptions solverEnumeration() {
  SamplerOptions options;
  options.counting = false;  // the solver-pruned enumeration
  return options;
}

// Sum over points of (observed - expected)^2 / expected.
double chiSquare(const std::map<std::vector<int64_t>, int>& observed, size_t categories,
                 double expected) {
  double sum = 0;
  for (const auto& [point, count] : observed)
    sum += (count - expected) * (count - expected) / expected;
  sum += static_cast<double>(categories - observed.size()) * expected;  // never observed
  return sum;
}

}  // namespace

TEST_CASE("the enumerated valid points are exactly the brute-force ones") {
  rewrite::RewriteContext c1, c2, c3, c4;
  struct Case {
    std::string name;
    ParameterSpace space;
    Points expected;  // from a hand-written predicate
  };
  std::vector<Case> cases;
  for (int64_t n : {64, 96, 100}) {
    Points expected;
    for (int64_t c = 1; c <= n; ++c) {
      if (n % c == 0) expected.insert({c});
    }
    rewrite::RewriteContext context;
    cases.push_back({"split N=" + std::to_string(n),
                     buildParameterSpace(ex::splitOnce(context), {{"N", n}}), expected});
  }
  {
    Points expected;
    for (int64_t a = 1; a <= 96; ++a) {
      for (int64_t b = 1; b <= a; ++b) {
        if (96 % a == 0 && a % b == 0) expected.insert({a, b});
      }
    }
    cases.push_back(
        {"split twice", buildParameterSpace(ex::splitTwice(c1), {{"N", 96}}), expected});
  }
  {
    Points expected;  // tiles of theta with step theta - 2 cover 130 exactly
    for (int64_t t = 3; t <= 130; ++t) {
      if ((130 - t) % (t - 2) == 0) expected.insert({t});
    }
    cases.push_back(
        {"slide tiling",
         buildParameterSpace(ex::applyRules(ex::kStencil1D, {{"slide-tiling", "0.1"}}, c2),
                             {{"N", 130}}),
         expected});
  }
  {
    Points expected;
    for (int64_t c = 1; c <= 4096; ++c) {
      if (4096 % c == 0 && c <= 384) expected.insert({c});
    }
    SpaceOptions mali;
    mali.device = host::loadProfile("mali-g72");
    cases.push_back({"work-groups on mali-g72",
                     buildParameterSpace(ex::workGroups(c3), {{"N", 4096}}, mali), expected});
  }
  for (Case& c : cases) {
    CAPTURE(c.name);
    Points brute = bruteForceValid(c.space);
    CHECK(brute == c.expected);
    Sampler sampler(c.space, solverEnumeration());
    auto listed = sampler.enumerate(1000000);
    REQUIRE(listed.has_value());
    CHECK(toSet(*listed) == brute);
    CHECK(listed->size() == brute.size());  // no point twice
    SpaceCount counted = sampler.count(1000000);
    CHECK(counted.exact);
    CHECK(counted.points == brute.size());
    // With a cap below the size, the enumerated count is a lower bound.
    if (brute.size() > 2) {
      SpaceCount capped = sampler.count(2);
      CHECK_FALSE(capped.exact);
      CHECK(capped.points == 2);
    }
    // Counting (the default) is exact whatever the cap.
    Sampler counting(c.space);
    CHECK(counting.count(2).points == brute.size());
    CHECK(counting.count(2).exact);
    CHECK(counting.count(2).method == "counting");
  }
}

TEST_CASE("samples are valid, unique and reproducible from the seed, with both methods") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 720}});
  Points valid = bruteForceValid(space);
  REQUIRE(valid.size() > 100);
  for (bool incremental : {false, true}) {
    CAPTURE(incremental);
    Sampler sampler(space, incremental ? incrementalOnly() : SamplerOptions{});
    SampleSet first = sampler.sample(60, 42);  // default: counting lists the 300-odd points
    CHECK(first.method == (incremental ? "incremental" : "enumeration"));
    REQUIRE(first.points.size() == 60);
    CHECK(toSet(first.points).size() == 60);
    for (const auto& point : first.points) CHECK(valid.count(point) == 1);
    Sampler again(space, incremental ? incrementalOnly() : SamplerOptions{});
    CHECK(again.sample(60, 42).points == first.points);
    CHECK(again.sample(60, 43).points != first.points);
  }
}

TEST_CASE("enumeration sampling is uniform over the valid points") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 64}});
  Sampler sampler(space, solverEnumeration());
  const size_t size = bruteForceValid(space).size();
  REQUIRE(size == 28);
  std::map<std::vector<int64_t>, int> observed;
  const int runs = 1500, perRun = 4;
  for (int seed = 1; seed <= runs; ++seed) {
    for (const auto& point : sampler.sample(perRun, seed).points) ++observed[point];
  }
  double chi = chiSquare(observed, size, double(runs * perRun) / size);
  CAPTURE(chi);
  // 27 degrees of freedom: mean 27, standard deviation 7.3; a biased sampler (e.g. uniform per
  // parameter: chunk1 = 1 would take 1/7 of the draws instead of 1/28) is far above.
  CHECK(chi < 90);
  CHECK(observed.size() == size);
}

TEST_CASE("incremental sampling is uniform among the extendable values of each parameter") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(
      ex::applyRules(ex::kStencil1D, {{"slide-tiling", "0.1"}}, context), {{"N", 130}});
  const size_t size = bruteForceValid(space).size();
  Sampler sampler(space, incrementalOnly());
  std::map<std::vector<int64_t>, int> observed;
  const int runs = 1400;
  for (int seed = 1; seed <= runs; ++seed) {
    SampleSet s = sampler.sample(1, seed);
    REQUIRE(s.points.size() == 1);
    ++observed[s.points[0]];
  }
  double chi = chiSquare(observed, size, double(runs) / size);
  CAPTURE(chi);
  CAPTURE(size);
  CHECK(chi < 5.0 * size + 20);
  CHECK(observed.size() == size);
}

TEST_CASE("a space smaller than requested gives all its points and says so") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitOnce(context), {{"N", 64}});
  Sampler exact(space);
  SampleSet all = exact.sample(20, 1);
  CHECK(all.points.size() == 7);
  CHECK(all.spaceSmallerThanRequested);
  CHECK(all.spaceSize == 7);
  Sampler incremental(space, incrementalOnly());
  SampleSet found = incremental.sample(20, 1);
  CHECK(toSet(found.points).size() == found.points.size());
  CHECK(found.points.size() == 7);
  CHECK(found.duplicateLimitReached);
}

TEST_CASE("samples never exceed the device's work-group limit") {
  rewrite::RewriteContext context;
  Definition def = ex::workGroups(context);
  for (const char* name : {"mali-g72", "nvidia-generic", "pocl-cpu"}) {
    CAPTURE(name);
    SpaceOptions options;
    options.device = host::loadProfile(name);
    ParameterSpace space = buildParameterSpace(def, {{"N", 1 << 14}}, options);
    for (bool incremental : {false, true}) {
      Sampler sampler(space, incremental ? incrementalOnly() : SamplerOptions{});
      SampleSet s = sampler.sample(100, 9);
      CHECK(!s.points.empty());
      for (const auto& point : s.points) {
        CHECK(point[0] <= options.device->maxWorkGroupSize);
        CHECK((1 << 14) % point[0] == 0);
      }
    }
  }
}

TEST_CASE("parameters are ordered by dependency") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 64}});
  Sampler sampler(space);
  REQUIRE(sampler.order().size() == 2);
  CHECK(space.parameters[sampler.order()[0]].name == "chunk1");  // chunk2's range needs it
  CHECK(sampler.describeOrder().find("1. chunk1 (linked with: chunk2)") != std::string::npos);
}

TEST_CASE("an empty space cannot be sampled and names its conflict") {
  Program program = parseProgram(
      "def f[2 <= kappa <= 64](xs: [float]N): [[float]kappa](N / kappa) = split(kappa, xs)\n");
  Definition tuned = tuneUnboundSizes(program.definitions[0], {{"N", 7}});
  SpaceOptions options;
  options.powerOfTwo = {"kappa"};
  ParameterSpace space = buildParameterSpace(tuned, {{"N", 7}}, options);
  CHECK_THROWS_WITH_AS(Sampler{space}, doctest::Contains("split by kappa requires 7 % kappa = 0"),
                       UnsatisfiableSpace);
}

TEST_CASE("sampling speed on a large range (measured, reported)") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 1 << 16}});
  for (bool incremental : {false, true}) {
    auto start = std::chrono::steady_clock::now();
    Sampler sampler(space, incremental ? incrementalOnly() : SamplerOptions{});
    SampleSet s = sampler.sample(100, 5);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("N=65536, 2 parameters (unconstrained "
            << space.unconstrainedSizeApprox() << "), " << s.method << ": " << s.points.size()
            << " samples in " << seconds << " s, " << s.solverChecks << " solver checks");
    CHECK(s.points.size() == 100);
    CHECK(seconds < 10);
  }
}

TEST_CASE("draws of a parameter that must divide a large length come from its divisors") {
  rewrite::RewriteContext context;
  // chunk1 | N: 21 of 2^20 values. Drawing from the range would reject about 50,000 values
  // per point; the draws are uniform among the 21 divisors.
  const int64_t n = int64_t{1} << 20;
  ParameterSpace space = buildParameterSpace(ex::splitOnce(context), {{"N", n}});
  REQUIRE(space.parameters.size() == 1);
  Sampler sampler(space, incrementalOnly());
  std::map<std::vector<int64_t>, int> observed;
  const auto start = std::chrono::steady_clock::now();
  const int runs = 1050;
  uint64_t valuesTried = 0;
  for (int seed = 1; seed <= runs; ++seed) {
    SampleSet s = sampler.sample(1, seed);
    REQUIRE(s.points.size() == 1);
    CHECK(n % s.points[0][0] == 0);
    ++observed[s.points[0]];
    valuesTried += s.valuesTried;
  }
  // Each draw tries a few of the 21 values, not tens of thousands of the range's.
  CHECK(valuesTried <= static_cast<uint64_t>(runs) * 21);
  const double chi = chiSquare(observed, 21, double(runs) / 21);
  CAPTURE(chi);
  CHECK(observed.size() == 21);
  CHECK(chi < 60);  // 20 degrees of freedom: mean 20, standard deviation 6.3
  // A split of a padded length, chunk | N + rho with rho drawn first: the divisors of each
  // drawn N + rho.
  ParameterSpace padded = buildParameterSpace(
      ex::applyRules(ex::kIncrement, {{"pad-for-tiling", "root"}, {"split-join", "0"}}, context),
      {{"N", n}});
  REQUIRE(padded.parameters.size() == 2);
  Sampler paddedSampler(padded, incrementalOnly());
  SampleSet s = paddedSampler.sample(50, 3);
  CHECK(s.points.size() == 50);
  CHECK(toSet(s.points).size() == 50);
  for (const auto& point : s.points) CHECK(padded.violations(point).empty());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("N=2^20: " << runs << " + 50 incremental draws in " << seconds << " s, " << valuesTried
                     << " + " << s.valuesTried << " values tried");
}
