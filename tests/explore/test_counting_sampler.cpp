// Tests of explore/compiled_constraint and explore/counting_sampler: compiled constraints agree
// with Constraint::evaluate on random points (undefined values included); exact counts and the
// listed valid points equal brute force, with and without relaxed constraints (forced by
// maxKeptArity) and on a small conv-direct space; descent sampling and counting with rejection
// are uniform (chi-square, fixed seeds); 1000 samples of a VGG-16 layer's space are unique,
// valid, reproducible and fast.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <random>
#include <set>

#include "explore/compiled_constraint.h"
#include "explore/counting_sampler.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "rewrite/strategies.h"
#include "tests/explore/parametric_programs.h"

using namespace weft;
using namespace weft::explore;
namespace ex = weft::testing::explore;

namespace {

using Points = std::set<std::vector<int64_t>>;

// The conv-direct space of a layer, as `weft space --layer` builds it.
ParameterSpace convDirectSpace(const std::string& layerSpec, const char* profile,
                               bool openLocalSizes = true) {
  rewrite::RewriteContext context;
  auto rewritten =
      rewrite::findStrategy("conv-direct")
          ->make({{"v", Arith(1)}, {"unroll", Arith(0)}})(convListing3Definition(), context);
  REQUIRE(rewritten.success());
  SpaceOptions options;
  for (const Arith& v : context.tuningVariables()) {
    if (v.varLo() == Arith(0) && v.varHi() && *v.varHi() == Arith(1)) {
      options.switches.insert(v.varName());
    }
  }
  if (profile) options.device = host::loadProfile(profile);
  options.openLocalSizes = openLocalSizes;
  return buildParameterSpace(*rewritten.definition, convListing3Sizes(parseConvLayer(layerSpec)),
                             options);
}

// Brute force over the box of the domains with the space's own re-check.
Points bruteForceValid(const ParameterSpace& space) {
  std::vector<std::pair<int64_t, int64_t>> box;
  for (const Parameter& p : space.parameters) box.push_back({p.lo, p.hi});
  auto points = ex::bruteForce(
      box, [&](const std::vector<int64_t>& point) { return space.violations(point).empty(); });
  return Points(points.begin(), points.end());
}

Points listValid(CountingSampler& counting) {
  Points out;
  auto walked = counting.forEachValid(
      [&](const std::vector<int64_t>& point) {
        CHECK(out.insert(point).second);  // no point twice
        return true;
      },
      UINT64_MAX);
  CHECK(walked == CountingSampler::Walk::Complete);
  return out;
}

double chiSquare(const std::map<std::vector<int64_t>, int>& observed, size_t categories,
                 double expected) {
  double sum = 0;
  for (const auto& [point, count] : observed)
    sum += (count - expected) * (count - expected) / expected;
  sum += static_cast<double>(categories - observed.size()) * expected;
  return sum;
}

// Adds `lhs relation rhs` to the space as an algorithmic constraint.
void addTestConstraint(ParameterSpace& space, Relation relation, Arith lhs, Arith rhs) {
  Constraint c;
  c.relation = relation;
  c.lhs = lhs;
  c.rhs = rhs;
  c.origin = "test";
  c.reason = "a test constraint";
  space.constraints.push_back({c, c, ConstraintSource::Algorithmic});
}

// A space with a constraint on three parameters, so that maxKeptArity = 2 relaxes it:
// a | 3600, b | a, c | 3600 (c <= 12), a*b*c <= 100, a + b <= c + 10.
ParameterSpace threeParameterSpace() {
  Program program = parseProgram(
      "def f[1 <= a <= 60, 1 <= b <= 60, 1 <= c <= 12](xs: [float]N) ="
      " map(r -> split(b, r), split(a, join(split(c, xs))))\n");
  Definition tuned = tuneUnboundSizes(program.definitions[0], {{"N", 3600}});
  ParameterSpace space = buildParameterSpace(tuned, {{"N", 3600}});
  auto add = [&](Relation relation, Arith lhs, Arith rhs) {
    addTestConstraint(space, relation, lhs, rhs);
  };
  Arith a = space.find("a")->variable, b = space.find("b")->variable, c = space.find("c")->variable;
  add(Relation::LessEqual, a * b * c, Arith(100));
  add(Relation::LessEqual, a + b, c + 10);
  return space;
}

// The shape of the spaces the rewrite search gives padding rules: a split size, two paddings
// up to a size each, their ranges dependent on the split and the same bounds repeated as
// constraints (with `small`, the second's bound is a constraint only, and a small parameter is
// bounded strictly by it); with `relaxable`, a constraint on three parameters too.
ParameterSpace paddingSpace(int64_t n, bool relaxable, bool small = true) {
  Program program = parseProgram("def f[1 <= chunk <= " + std::to_string(n) +
                                 "](xs: [float]N) = split(chunk, xs)\n");
  Definition tuned = tuneUnboundSizes(program.definitions[0], {{"N", n}});
  ParameterSpace space = buildParameterSpace(tuned, {{"N", n}});
  REQUIRE(space.parameters.size() == 1);
  const Arith chunk = space.find("chunk")->variable;
  auto addParameter = [&](const std::string& name, int64_t hi, std::optional<Arith> rangeHi) {
    Parameter p;
    p.name = name;
    p.lo = 0;
    p.hi = hi;
    p.variable = Arith::var(name, VarKind::Tuning, Arith(0), rangeHi.value_or(Arith(hi)));
    space.parameters.push_back(p);
    return p.variable;
  };
  const Arith rho2 = addParameter("rho2", n, Arith(n) / chunk);
  const Arith rho3 = addParameter("rho3", n, small ? std::nullopt : std::optional<Arith>(chunk));
  auto add = [&](Relation relation, Arith lhs, Arith rhs) {
    addTestConstraint(space, relation, lhs, rhs);
  };
  add(Relation::LessEqual, rho2, Arith(n) / chunk);
  add(Relation::LessEqual, rho3, chunk);
  if (small) {
    const Arith s = addParameter("small", 8, std::nullopt);
    add(Relation::Less, s, rho3 + 3);
    add(Relation::LessEqual, Arith(1), s);
  }
  if (relaxable) add(Relation::LessEqual, chunk + rho2 + rho3, Arith(n + 2));
  return space;
}

}  // namespace

TEST_CASE("compiled constraints agree with Constraint::evaluate at random points") {
  std::vector<ParameterSpace> spaces;
  spaces.push_back(convDirectSpace("vgg16:2", "mali-g72"));
  spaces.push_back(convDirectSpace("vgg16:0", "pocl-cpu"));
  spaces.push_back(threeParameterSpace());
  std::mt19937_64 rng(7);
  int compared = 0, undefined = 0;
  for (const ParameterSpace& space : spaces) {
    auto slotOf = [&](const std::string& name) { return space.indexOf(name); };
    for (const SpaceConstraint& c : space.constraints) {
      CompiledConstraint compiled(c.constraint, slotOf);
      for (int trial = 0; trial < 300; ++trial) {
        std::vector<int64_t> point;
        for (const Parameter& p : space.parameters) {
          // Mostly in the domain; sometimes 0, negative or huge (division by zero, overflow).
          int pick = static_cast<int>(rng() % 10);
          int64_t v = pick == 0   ? 0
                      : pick == 1 ? -static_cast<int64_t>(rng() % 1000)
                      : pick == 2 ? static_cast<int64_t>(rng() >> 2)
                                  : p.lo + static_cast<int64_t>(rng() % (p.hi - p.lo + 1));
          point.push_back(v);
        }
        ArithBinding binding = space.binding(point);
        std::optional<bool> expected = c.constraint.evaluate(binding);
        if (!expected) ++undefined;
        CAPTURE(c.constraint.describe());
        CHECK(compiled.holds(point.data()) == expected.value_or(false));
        ++compared;
      }
    }
  }
  MESSAGE(compared << " comparisons, " << undefined << " with an undefined side");
  CHECK(undefined > 0);
}

TEST_CASE("exact counts and listed points equal brute force") {
  rewrite::RewriteContext c1, c2, c3;
  SpaceOptions mali;
  mali.device = host::loadProfile("mali-g72");
  std::vector<std::pair<std::string, ParameterSpace>> cases;
  cases.push_back({"split twice", buildParameterSpace(ex::splitTwice(c1), {{"N", 720}})});
  cases.push_back(
      {"slide tiling",
       buildParameterSpace(ex::applyRules(ex::kStencil1D, {{"slide-tiling", "0.1"}}, c2),
                           {{"N", 130}})});
  cases.push_back({"work-groups", buildParameterSpace(ex::workGroups(c3), {{"N", 4096}}, mali)});
  cases.push_back({"three parameters", threeParameterSpace()});
  cases.push_back({"paddings", paddingSpace(24, false)});
  cases.push_back({"paddings, relaxable", paddingSpace(24, true)});
  cases.push_back({"paddings, both ranges dependent", paddingSpace(24, true, false)});
  for (auto& [name, space] : cases) {
    CAPTURE(name);
    Points brute = bruteForceValid(space);
    REQUIRE(!brute.empty());
    for (int arity : {1 << 30, 2, 1}) {
      CAPTURE(arity);
      CountingOptions options;
      options.maxKeptArity = arity;
      CountingSampler counting(space, options);
      REQUIRE(counting.ok());
      CHECK(counting.relaxedCount() >= brute.size());
      if (counting.exact()) CHECK(counting.relaxedCount() == brute.size());
      CHECK(listValid(counting) == brute);
    }
  }
}

TEST_CASE("paddings up to a large size are counted by their ranges, not value by value") {
  // Two paddings of up to 2^20 each: a walk over their values takes tens of millions of nodes.
  const int64_t n = int64_t(1) << 20;
  ParameterSpace space = paddingSpace(n, false);
  auto start = std::chrono::steady_clock::now();
  CountingSampler counting(space);
  REQUIRE(counting.ok());
  REQUIRE(counting.exact());
  // chunk | n; rho2 in [0, n/chunk]; rho3 in [0, chunk]; small in [1, min(8, rho3 + 2)].
  PointCount expected = 0;
  for (int64_t chunk = 1; chunk <= n; chunk *= 2) {
    for (int64_t rho3 = 0; rho3 <= chunk; ++rho3) {
      expected += PointCount(n / chunk + 1) * PointCount(std::min<int64_t>(8, rho3 + 2));
    }
  }
  CHECK(countToString(counting.relaxedCount()) == countToString(expected));
  CHECK(counting.nodesVisited() < 5000000);
  MESSAGE(counting.describePlan());
  CHECK(counting.describePlan().find("rho2 (bounded by: ") != std::string::npos);
  Sampler sampler(space);
  SpaceCount counted = sampler.count(UINT64_MAX);
  CHECK(counted.method == "counting");
  CHECK(counted.exact);
  SampleSet s = sampler.sample(200, 5);
  CHECK(s.method == "counting");
  REQUIRE(s.points.size() == 200);
  for (const auto& point : s.points) CHECK(space.violations(point).empty());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5);
}

TEST_CASE("without a counting plan, the solver-pruned enumeration stops at its solver budget") {
  // The paddings' space with counting switched off: every value of the first padding would ask
  // the solver whether the rest can be completed.
  ParameterSpace space = paddingSpace(int64_t(1) << 20, false, /*small=*/false);
  SamplerOptions options;
  options.counting = false;
  options.enumerationSolverChecks = 500;
  auto start = std::chrono::steady_clock::now();
  Sampler sampler(space, options);
  SpaceCount counted = sampler.count(UINT64_MAX);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("count without a plan: " << counted.points << " points (lower bound) in " << seconds
                                   << " s, " << sampler.solver().checks() << " solver checks");
  CHECK_FALSE(counted.exact);
  CHECK(counted.points > 0);
  CHECK(sampler.solver().checks() <= 500 + 10);
  CHECK(seconds < 10);
}

TEST_CASE("a slide's step condition lists its tile sizes as divisors, at any size") {
  // slide-tiling then split-join: (L - theta) % (theta - 2) = 0 mentions theta on both sides;
  // it holds exactly when theta - 2 divides L - 2, so the tile sizes come from that divisor set
  // instead of a walk over a range as long as the input.
  for (int64_t n : {int64_t(130), int64_t(1) << 22}) {
    CAPTURE(n);
    rewrite::RewriteContext context;
    Definition tiled = ex::applyRules(ex::kStencil1D, {{"slide-tiling", "0.1"}}, context);
    ParameterSpace space = buildParameterSpace(tiled, {{"N", n}});
    REQUIRE(space.parameters.size() == 1);
    const Parameter& theta = space.parameters[0];
    auto start = std::chrono::steady_clock::now();
    CountingSampler counting(space);
    REQUIRE(counting.ok());
    REQUIRE(counting.exact());
    CHECK(counting.describePlan().find("(divisors, from: ") != std::string::npos);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(seconds < 1);
    // The oracle: every value of the domain through the compiled constraints.
    auto slotOf = [&](const std::string& name) { return space.indexOf(name); };
    std::vector<CompiledConstraint> compiled;
    for (const SpaceConstraint& c : space.constraints) compiled.emplace_back(c.constraint, slotOf);
    Points brute;
    for (int64_t v = theta.lo; v <= theta.hi; ++v) {
      if (!theta.contains(v)) continue;
      std::vector<int64_t> point{v};
      if (std::all_of(compiled.begin(), compiled.end(),
                      [&](const CompiledConstraint& c) { return c.holds(point.data()); })) {
        brute.insert(point);
      }
    }
    CHECK(countToString(counting.relaxedCount()) == std::to_string(brute.size()));
    CHECK(listValid(counting) == brute);
  }
}

TEST_CASE("descent through levels counted by their ranges is uniform") {
  ParameterSpace space = paddingSpace(8, false);
  const Points valid = bruteForceValid(space);
  SamplerOptions options;
  options.enumerationCap = 0;  // never list: always descend by counts
  Sampler sampler(space, options);
  REQUIRE(sampler.counting() != nullptr);
  REQUIRE(sampler.counting()->describePlan().find("counted by its range") != std::string::npos);
  std::map<std::vector<int64_t>, int> observed;
  const int runs = 4000;
  for (int seed = 1; seed <= runs; ++seed) {
    SampleSet s = sampler.sample(1, seed);
    REQUIRE(s.points.size() == 1);
    CHECK(s.method == "counting");
    CHECK(valid.count(s.points[0]) == 1);
    ++observed[s.points[0]];
  }
  double chi = chiSquare(observed, valid.size(), double(runs) / valid.size());
  CAPTURE(valid.size());
  CAPTURE(chi);
  const double dof = double(valid.size() - 1);
  CHECK(chi < dof + 6 * std::sqrt(2 * dof));
  CHECK(observed.size() > valid.size() * 9 / 10);
}

TEST_CASE("a small conv-direct space: counting equals brute force, relaxed or not") {
  // Without the local sizes of the kernels that leave them open (test_launch_parameters covers
  // those), so that the brute force stays a few million points.
  ParameterSpace space = convDirectSpace("2,6,6,2,3,1,1", "mali-g72", false);
  REQUIRE(space.parameters.size() == 6);
  // Brute force over the box with the compiled checks (themselves compared with
  // Constraint::evaluate above); the box has a few million points.
  auto slotOf = [&](const std::string& name) { return space.indexOf(name); };
  std::vector<CompiledConstraint> compiled;
  for (const SpaceConstraint& c : space.constraints) compiled.emplace_back(c.constraint, slotOf);
  std::vector<std::pair<int64_t, int64_t>> box;
  for (const Parameter& p : space.parameters) box.push_back({p.lo, p.hi});
  Points brute;
  std::vector<int64_t> point(box.size());
  std::function<void(size_t)> walk = [&](size_t i) {
    if (i == box.size()) {
      for (const CompiledConstraint& c : compiled) {
        if (!c.holds(point.data())) return;
      }
      brute.insert(point);
      return;
    }
    for (int64_t v = box[i].first; v <= box[i].second; ++v) {
      if (!space.parameters[i].contains(v)) continue;
      point[i] = v;
      walk(i + 1);
    }
  };
  walk(0);
  MESSAGE("small conv-direct space: " << space.unconstrainedSizeApprox() << " unconstrained, "
                                      << brute.size() << " valid");
  REQUIRE(brute.size() > 100);
  int sampled = 0;
  for (const Points::value_type& p : brute) {  // spot-check with the independent re-check
    if (sampled++ % 97 == 0) CHECK(space.violations(p).empty());
  }
  for (int arity : {1 << 30, 3, 2}) {
    CAPTURE(arity);
    CountingOptions options;
    options.maxKeptArity = arity;
    CountingSampler counting(space, options);
    REQUIRE(counting.ok());
    if (counting.exact()) CHECK(counting.relaxedCount() == brute.size());
    CHECK(listValid(counting) == brute);
  }
}

TEST_CASE("descent sampling is uniform over the valid points") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 64}});
  SamplerOptions options;
  options.enumerationCap = 0;  // never list: always descend by counts
  Sampler sampler(space, options);
  const size_t size = bruteForceValid(space).size();
  REQUIRE(size == 28);
  std::map<std::vector<int64_t>, int> observed;
  const int runs = 1500, perRun = 4;
  for (int seed = 1; seed <= runs; ++seed) {
    SampleSet s = sampler.sample(perRun, seed);
    CHECK(s.method == "counting");
    CHECK(s.spaceSize == size);
    for (const auto& point : s.points) ++observed[point];
  }
  double chi = chiSquare(observed, size, double(runs * perRun) / size);
  CAPTURE(chi);
  // 27 degrees of freedom: mean 27, standard deviation 7.3. Uniform per parameter instead
  // (chunk1 = 1 drawn 1/7 of the time, not 1/28) is far above.
  CHECK(chi < 90);
  CHECK(observed.size() == size);
}

TEST_CASE("counting with rejection is uniform over the valid points") {
  ParameterSpace space = threeParameterSpace();
  const Points valid = bruteForceValid(space);
  SamplerOptions options;
  options.enumerationCap = 0;
  options.countingOptions.maxKeptArity = 2;  // relax a*b*c <= 100
  Sampler sampler(space, options);
  REQUIRE(sampler.counting() != nullptr);
  REQUIRE_FALSE(sampler.counting()->exact());
  std::map<std::vector<int64_t>, int> observed;
  const int runs = 3000;
  double estimate = 0;
  for (int seed = 1; seed <= runs; ++seed) {
    SampleSet s = sampler.sample(1, seed);
    REQUIRE(s.points.size() == 1);
    CHECK(s.method == "counting+rejection");
    CHECK(valid.count(s.points[0]) == 1);
    ++observed[s.points[0]];
    if (seed == 1) {
      SampleSet many = sampler.sample(valid.size() / 2, 99);
      REQUIRE(many.spaceEstimate.has_value());
      estimate = *many.spaceEstimate;
    }
  }
  const double expected = double(runs) / valid.size();
  double chi = chiSquare(observed, valid.size(), expected);
  CAPTURE(valid.size());
  CAPTURE(chi);
  // valid.size() - 1 degrees of freedom; allow mean + 6 standard deviations.
  const double dof = double(valid.size() - 1);
  CHECK(chi < dof + 6 * std::sqrt(2 * dof));
  CHECK(estimate > 0.5 * valid.size());
  CHECK(estimate < 2.0 * valid.size());
}

TEST_CASE("1000 samples of a VGG-16 layer: unique, valid, reproducible, fast") {
  for (std::string profile : {"mali-g72", "pocl-cpu"}) {
    CAPTURE(profile);
    ParameterSpace space = convDirectSpace("vgg16:2", profile.c_str());
    auto start = std::chrono::steady_clock::now();
    Sampler sampler(space);
    SampleSet s = sampler.sample(1000, 3);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("vgg16:2 on " << profile << ": " << s.points.size() << " samples in " << seconds
                          << " s (" << s.method << ", " << s.draws << " draws, " << s.solverChecks
                          << " solver checks)");
    REQUIRE(s.points.size() == 1000);
    CHECK(Points(s.points.begin(), s.points.end()).size() == 1000);
    for (const auto& point : s.points) CHECK(space.violations(point).empty());
    CHECK(seconds < 10);
    Sampler again(space);
    CHECK(again.sample(1000, 3).points == s.points);
    // The hardware limits hold: work-group size (576/omega)*((theta-2)^2/sigma).
    const host::DeviceProfile device = host::loadProfile(profile);
    const int omega = space.indexOf("omega6"), theta = space.indexOf("theta2"),
              sigma = space.indexOf("sigma5");
    REQUIRE(omega >= 0);
    REQUIRE(theta >= 0);
    REQUIRE(sigma >= 0);
    for (const auto& p : s.points) {
      int64_t windows = (p[theta] - 2) * (p[theta] - 2);
      CHECK((576 / p[omega]) * (windows / p[sigma]) <= device.maxWorkGroupSize);
    }
  }
}

TEST_CASE("a walk with a leaf budget stops exactly where a point-by-point walk would") {
  // The walk skips a subtree whose relaxed constraint already fails, counting its points
  // against the budget. The oracle: the relaxed points (domains, ranges and kept
  // constraints) by brute force, in the walk's order (lexicographic in order(), values
  // ascending); a budget of b visits the valid ones among the first b, and runs out of
  // budget exactly when fewer than all relaxed points fit.
  std::vector<std::pair<std::string, ParameterSpace>> cases;
  cases.push_back({"three parameters", threeParameterSpace()});
  cases.push_back({"small conv-direct", convDirectSpace("2,6,6,2,3,1,1", "mali-g72", false)});
  // A fourth parameter whose range depends on the other three comes after them, so the walk
  // can skip its values under a prefix that fails the relaxed a*b*c <= 100.
  ParameterSpace four = threeParameterSpace();
  {
    Arith a = four.find("a")->variable, b = four.find("b")->variable;
    Arith c = four.find("c")->variable;
    Parameter z;
    z.name = "z";
    z.lo = 1;
    z.hi = 130;
    z.variable = Arith::var("z", VarKind::Tuning, Arith(1), a + b + c - 2);
    four.parameters.push_back(z);
  }
  cases.push_back({"four parameters, the last one dependent", four});
  for (auto& [name, space] : cases) {
    CAPTURE(name);
    auto slotOf = [&](const std::string& n) { return space.indexOf(n); };
    // The box's points in the domains and the (possibly dependent) ranges; a range that cannot
    // be evaluated keeps the static bound, as the counting sampler does.
    ArithSubstitution sizes;
    for (const auto& [n, value] : space.sizes) sizes[n] = Arith(value);
    std::vector<CompiledArith> lo, hi;
    for (const Parameter& p : space.parameters) {
      lo.emplace_back(substitute(p.variable.varLo(), sizes), slotOf);
      hi.emplace_back(p.variable.varHi() ? substitute(*p.variable.varHi(), sizes) : Arith(p.hi),
                      slotOf);
    }
    std::vector<std::pair<int64_t, int64_t>> box;
    for (const Parameter& p : space.parameters) box.push_back({p.lo, p.hi});
    const auto inRanges = ex::bruteForce(box, [&](const std::vector<int64_t>& point) {
      for (size_t i = 0; i < point.size(); ++i) {
        if (!space.parameters[i].contains(point[i])) return false;
        auto low = lo[i].evaluate(point.data());
        auto high = hi[i].evaluate(point.data());
        if ((low && point[i] < *low) || (high && point[i] > *high)) return false;
      }
      return true;
    });
    for (int arity : {3, 2, 1}) {
      CAPTURE(arity);
      CountingOptions options;
      options.maxKeptArity = arity;
      CountingSampler counting(space, options);
      REQUIRE(counting.ok());
      if (counting.exact()) continue;
      std::set<size_t> relaxed(counting.relaxedConstraints().begin(),
                               counting.relaxedConstraints().end());
      std::vector<CompiledConstraint> kept, checked;
      for (size_t c = 0; c < space.constraints.size(); ++c) {
        (relaxed.count(c) ? checked : kept).emplace_back(space.constraints[c].constraint, slotOf);
      }
      std::vector<std::vector<int64_t>> relaxedPoints;
      for (const std::vector<int64_t>& point : inRanges) {
        if (std::all_of(kept.begin(), kept.end(),
                        [&](const CompiledConstraint& c) { return c.holds(point.data()); })) {
          relaxedPoints.push_back(point);
        }
      }
      const std::vector<int>& order = counting.order();
      std::sort(relaxedPoints.begin(), relaxedPoints.end(),
                [&](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
                  for (int p : order) {
                    if (a[p] != b[p]) return a[p] < b[p];
                  }
                  return false;
                });
      REQUIRE(counting.relaxedCount() == relaxedPoints.size());
      const uint64_t total = relaxedPoints.size();
      std::vector<uint64_t> budgets = {0,         1,         total / 7, total / 3,
                                       total / 2, total - 1, total,     total + 1};
      for (uint64_t b = 0; b < 40 && b < total; ++b) budgets.push_back(total * b / 40 + b % 3);
      for (uint64_t budget : budgets) {
        CAPTURE(budget);
        std::vector<std::vector<int64_t>> expected;
        for (uint64_t i = 0; i < std::min(budget, total); ++i) {
          const std::vector<int64_t>& point = relaxedPoints[i];
          bool valid =
              std::all_of(checked.begin(), checked.end(),
                          [&](const CompiledConstraint& c) { return c.holds(point.data()); });
          if (valid) expected.push_back(point);
        }
        std::vector<std::vector<int64_t>> visited;
        auto walked = counting.forEachValid(
            [&](const std::vector<int64_t>& point) {
              visited.push_back(point);
              return true;
            },
            budget);
        CHECK(visited == expected);
        CHECK((walked == CountingSampler::Walk::OutOfBudget) == (budget < total));
      }
    }
  }
}
