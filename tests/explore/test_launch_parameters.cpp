// Tests of explore/launch_parameters: kernels that leave their local size open get local-size
// parameters in the space (bounded by the device, dividing the global size: powers of two, or
// every divisor where the global size is a constant), the
// sampler finds exactly the valid ones (brute force over the box), samples respect the device's
// work-group limits (the register file a work-group shares included, where the profile has
// one), and compileVariant applies the sampled local sizes to the kernels. Private arrays past
// the register budget (a line buffer's ring) count against a per-work-group bound, not the
// registers.
#include <doctest/doctest.h>

#include <optional>
#include <set>

#include "explore/launch_parameters.h"
#include "explore/measurement.h"
#include "explore/parameter_space.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "ir/parser.h"
#include "tests/explore/parametric_programs.h"

using namespace weft;
using namespace weft::explore;
namespace ex = weft::testing::explore;

namespace {

using Points = std::set<std::vector<int64_t>>;

// Every point of the box that lies in the domains and satisfies every constraint, evaluated
// independently of the sampler (ParameterSpace::violations re-evaluates the originals).
Points bruteForceValid(const ParameterSpace& space) {
  Points valid;
  std::vector<int64_t> point(space.parameters.size());
  std::function<void(size_t)> walk = [&](size_t i) {
    if (i == point.size()) {
      if (space.violations(point).empty()) valid.insert(point);
      return;
    }
    for (int64_t v : space.parameters[i].values()) {
      point[i] = v;
      walk(i + 1);
    }
  };
  walk(0);
  return valid;
}

}  // namespace

TEST_CASE("a kernel without a local size gets a local-size parameter per dimension") {
  rewrite::RewriteContext context;
  // One kernel, mapGlb(1) over the N / chunk1 chunks and mapGlb(0) within a chunk.
  Definition parametric = ex::splitOnce(context);
  SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  ParameterSpace space = buildParameterSpace(parametric, {{"N", 64}}, options);
  REQUIRE(space.find(localSizeParameterName(0, 1)) != nullptr);
  const Parameter* local = space.find(localSizeParameterName(0, 0));
  REQUIRE(local != nullptr);
  CHECK(local->kind == DomainKind::PowerOfTwo);
  CHECK(local->lo == 1);
  CHECK(local->hi <= options.device->maxWorkGroupSize);
  bool divides = false;
  for (const SpaceConstraint& c : space.constraints) {
    if (c.source == ConstraintSource::Hardware &&
        c.constraint.describe().find(local->name) != std::string::npos &&
        c.constraint.relation == Relation::Divides) {
      divides = true;
    }
  }
  CHECK(divides);

  // chunk1 = 2^a divides 64; the local sizes are powers of two dividing chunk1 (dimension 0:
  // a + 1 choices) and 64 / chunk1 (dimension 1: 7 - a): sum over a = 0..6 of (a + 1)(7 - a)
  // = 84 points. The brute force and the sampler must both find exactly those.
  Points brute = bruteForceValid(space);
  CHECK(brute.size() == 84);
  Sampler sampler(space);
  SpaceCount count = sampler.count(1000);
  CHECK(count.exact);
  CHECK(count.launchSizesNotCounted);
  CHECK(count.points == 7);  // chunk1 alone: the first stage
  REQUIRE(count.withLaunchSizes.has_value());
  CHECK(*count.withLaunchSizes == brute.size());
  // Fewer samples than first-stage points: one launch size each, so distinct chunk1 values.
  SampleSet few = sampler.sample(5, 3);
  REQUIRE(few.points.size() == 5);
  std::set<int64_t> chunks;
  const int chunkIndex = space.indexOf(context.tuningVariables()[0].varName());
  for (const std::vector<int64_t>& point : few.points) chunks.insert(point[chunkIndex]);
  CHECK(chunks.size() == 5);
  // More than the first stage has: the full points are listed, so every one comes back.
  SampleSet all = sampler.sample(1000, 3);
  CHECK(Points(all.points.begin(), all.points.end()) == brute);

  SpaceOptions without = options;
  without.openLocalSizes = false;
  CHECK(buildParameterSpace(parametric, {{"N", 64}}, without).find(local->name) == nullptr);
  SpaceOptions noDevice;
  CHECK(buildParameterSpace(parametric, {{"N", 64}}, noDevice).find(local->name) == nullptr);
}

TEST_CASE(
    "a constant global size offers every divisor of it as a local size, not only powers of two") {
  // One mapGlb kernel over all N elements: at N = 2 * 773 * 2713 the only powers of two that
  // divide the global size are 1 and 2; its other divisors within the device's 4096 are
  // 773, 1546 and 2713.
  Definition program =
      parseProgram("def scale(x: [float]N): [float]N = map(a -> a * 2.0f, x)").definitions.back();
  SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  const int64_t awkward = 2 * 773 * 2713;
  ParameterSpace space = buildParameterSpace(program, {{"N", awkward}}, options);
  const Parameter* local = space.find(localSizeParameterName(0, 0));
  REQUIRE(local != nullptr);
  CHECK(local->kind == DomainKind::Divisors);
  CHECK(local->dividend == awkward);
  CHECK(local->values() == std::vector<int64_t>{1, 2, 773, 1546, 2713});
  CHECK(local->contains(1546));
  CHECK_FALSE(local->contains(4));
  CHECK(local->domainText() == "divisors of 4194298 in [1, 4096]");
  const Points valid = bruteForceValid(space);
  CHECK(valid.size() == 5);
  Sampler sampler(space);
  const SampleSet all = sampler.sample(100, 1);
  CHECK(Points(all.points.begin(), all.points.end()) == valid);

  // At a power of two the divisors are the powers of two up to the device's limit.
  ParameterSpace nice = buildParameterSpace(program, {{"N", 1 << 20}}, options);
  const Parameter* niceLocal = nice.find(localSizeParameterName(0, 0));
  REQUIRE(niceLocal != nullptr);
  std::vector<int64_t> powers;
  for (int64_t v = 1; v <= options.device->maxWorkGroupSize; v *= 2) powers.push_back(v);
  CHECK(niceLocal->values() == powers);
}

TEST_CASE("kernels with a local size get no parameter; samples keep within device limits") {
  rewrite::RewriteContext context;
  Definition parametric = ex::workGroups(context);  // mapWrg/mapLcl: local size = chunk1
  for (const char* profile : {"pocl-cpu", "mali-g72"}) {
    CAPTURE(profile);
    SpaceOptions options;
    options.device = host::loadProfile(profile);
    ParameterSpace space = buildParameterSpace(parametric, {{"N", 4096}}, options);
    for (const Parameter& p : space.parameters) CHECK(p.name.rfind("local_k", 0) != 0);
  }
}

TEST_CASE("a 2D kernel's local sizes: product within the work-group limit, applied by compileVariant") {
  const char* text =
      "def twice(xs: [[float]M]N): [[float]M]N = map(row -> map(x -> x * 2.0f, row), xs)\n";
  Definition definition = parseProgram(text).definitions.back();
  SpaceOptions options;
  options.device = host::loadProfile("mali-g72");
  ArithBinding sizes{{"N", 512}, {"M", 512}};
  ParameterSpace space = buildParameterSpace(definition, sizes, options);
  std::vector<std::string> localNames;
  for (const Parameter& p : space.parameters) {
    if (p.name.rfind("local_k0_d", 0) == 0) localNames.push_back(p.name);
  }
  CAPTURE(space.parameters.size());
  REQUIRE(!localNames.empty());
  Sampler sampler(space);
  SampleSet samples = sampler.sample(200, 11);
  REQUIRE(!samples.points.empty());
  bool sawExplicit = false;
  for (const std::vector<int64_t>& point : samples.points) {
    CHECK(space.violations(point).empty());
    ArithBinding binding = space.binding(point);
    CompiledProgram program = compileVariant(definition, binding);
    REQUIRE(program.kernels.size() == 1);
    const KernelPlan& kernel = program.kernels[0];
    REQUIRE(kernel.hasLocalSize);
    int64_t group = 1;
    for (int d = 0; d < kernel.dimensions; ++d) {
      int64_t local = evaluate(kernel.localSize[d], binding);
      int64_t global = evaluate(kernel.globalSize[d], binding);
      CHECK(local == binding.at(localSizeParameterName(0, d)));
      CHECK(global % local == 0);
      CHECK(local <= options.device->maxWorkItemSizes[static_cast<size_t>(d)]);
      group *= local;
      if (local > 1) sawExplicit = true;
    }
    CHECK(group <= options.device->maxWorkGroupSize);
  }
  CHECK(sawExplicit);
  // Without the parameters in the binding the local size stays open.
  CompiledProgram open = compileVariant(definition, sizes);
  CHECK_FALSE(open.kernels[0].hasLocalSize);
}

TEST_CASE("where work-items share a register file, local size x registers stays within it") {
  const char* text =
      "def twice(xs: [[float]M]N): [[float]M]N = map(row -> map(x -> x * 2.0f, row), xs)\n";
  Definition definition = parseProgram(text).definitions.back();
  ArithBinding sizes{{"N", 512}, {"M", 512}};
  SpaceOptions options;
  options.device = host::loadProfile("nvidia-generic");
  const int64_t perItem =
      evaluate(compileVariant(definition, sizes).kernels[0].privateScalarsExpr, sizes) +
      kRegistersBesidePrivateValues;
  // A file that holds 64 work-items' registers: 1024-item groups become invalid.
  options.device->registersPerWorkGroup = 64 * perItem;
  ParameterSpace limited = buildParameterSpace(definition, sizes, options);
  bool named = false;
  for (const SpaceConstraint& c : limited.constraints) {
    named = named || c.constraint.origin.find("registers per work-group") != std::string::npos;
  }
  CHECK(named);
  Sampler sampler(limited);
  SampleSet samples = sampler.sample(200, 5);
  REQUIRE(!samples.points.empty());
  int64_t largest = 0;
  for (const std::vector<int64_t>& point : samples.points) {
    CHECK(limited.violations(point).empty());
    const ArithBinding binding = limited.binding(point);
    const int64_t group = binding.at(localSizeParameterName(0, 0)) *
                          binding.at(localSizeParameterName(0, 1));
    CHECK(group * perItem <= 64 * perItem);
    largest = std::max(largest, group);
  }
  CHECK(largest == 64);  // the limit binds, and is reached
  // Without a shared register file (a CPU, registersPerWorkGroup 0) there is no such constraint.
  options.device->registersPerWorkGroup = 0;
  ParameterSpace unlimited = buildParameterSpace(definition, sizes, options);
  for (const SpaceConstraint& c : unlimited.constraints) {
    CHECK(c.constraint.origin.find("registers per work-group") == std::string::npos);
  }
}

TEST_CASE("private arrays beyond the registers are bounded per work-group, not by the registers") {
  const host::DeviceProfile cpu = host::loadProfile("pocl-cpu");  // 384 registers per work-item
  KernelPlan kernel;
  kernel.name = "ring";
  // A ring of 5 rows of 4256 pairs (two arrays), a small tile, and 40 other private values.
  kernel.privateArrayScalars = {21280, 21280, 64};
  kernel.privateScalars = 21280 + 21280 + 64 + 40;
  kernel.privateScalarsExpr = Arith(kernel.privateScalars);
  CHECK(memoryResidentPrivateScalars(kernel, cpu) == 42560);
  CHECK(registerResidentPrivateScalars(kernel, cpu).constant() == std::optional<int64_t>(104));

  const Arith group = Arith::var("g", VarKind::Tuning, Arith(1), Arith(4096));
  std::optional<Constraint> memory = privateMemoryConstraint(kernel, group, cpu);
  REQUIRE(memory.has_value());
  // 170240 bytes per work-item: 24 fit in 4 MiB, 25 do not.
  CHECK(memory->evaluate({{"g", 24}}) == std::optional<bool>(true));
  CHECK(memory->evaluate({{"g", 25}}) == std::optional<bool>(false));

  // Arrays within the registers (a fused tile unrolled into registers) stay in the estimate.
  kernel.privateArrayScalars = {300};
  kernel.privateScalarsExpr = Arith(int64_t{340});
  CHECK(memoryResidentPrivateScalars(kernel, cpu) == 0);
  CHECK(registerResidentPrivateScalars(kernel, cpu).constant() == std::optional<int64_t>(340));
  CHECK_FALSE(privateMemoryConstraint(kernel, group, cpu).has_value());

  // Arrays that fit one by one but not together: the smallest fill the registers first.
  kernel.privateArrayScalars = {320, 320};
  CHECK(memoryResidentPrivateScalars(kernel, cpu) == 320);
  kernel.privateArrayScalars = {320, 100, 320};
  CHECK(memoryResidentPrivateScalars(kernel, cpu) == 640);
}

TEST_CASE(
    "a prime global size offers the powers of two where the kernel can be launched in parts") {
  // 4194301 is prime: no divisor makes a work-group of the device's multiple (8 on pocl-cpu).
  // The map's kernel reads its place only from get_global_id, so it is launched in parts
  // (codegen/launch_parts.h): every power of two within the device's limit, none dividing.
  const int64_t prime = 4194301;
  SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  Definition map =
      parseProgram("def scale(x: [float]N): [float]N = map(a -> a * 2.0f, x)").definitions.back();
  ParameterSpace space = buildParameterSpace(map, {{"N", prime}}, options);
  const Parameter* local = space.find(localSizeParameterName(0, 0));
  REQUIRE(local != nullptr);
  CHECK(local->kind == DomainKind::PowerOfTwo);
  std::vector<int64_t> powers;
  for (int64_t v = 1; v <= options.device->maxWorkGroupSize; v *= 2) powers.push_back(v);
  CHECK(local->values() == powers);
  CHECK(bruteForceValid(space).size() == powers.size());

  // The same length in a kernel that bounds its work-group by get_group_id (a clamped stencil's
  // interior fast path) keeps the divisors: 1 alone.
  Definition clamped =
      parseProgram(
          "def f(x: [float]N): [float]N = join(mapGlb(0, w -> toGlobal(r -> mapSeq(y -> id(y), "
          "r),\n  reduceSeqUnroll(toPrivate(z -> id(z), 0.0f), (acc, p) -> acc + p, w)),\n"
          "  slide(3, 1, pad(1, 1, clamp, x))))")
          .definitions.back();
  ParameterSpace guarded = buildParameterSpace(clamped, {{"N", prime}}, options);
  const Parameter* guardedLocal = guarded.find(localSizeParameterName(0, 0));
  REQUIRE(guardedLocal != nullptr);
  CHECK(guardedLocal->kind == DomainKind::Divisors);
  CHECK(guardedLocal->values() == std::vector<int64_t>{1});

  // A length whose divisors make such work-groups keeps them (2 * 773 * 2713: 773, 1546, 2713).
  const int64_t awkward = 2 * 773 * 2713;
  ParameterSpace divisors = buildParameterSpace(map, {{"N", awkward}}, options);
  CHECK(divisors.find(localSizeParameterName(0, 0))->kind == DomainKind::Divisors);
}
