// Tests of explore/parameter_space: the tuning parameters and domains of parametric programs
// made by rewrite rules and by hand, the algorithmic constraints with sizes substituted, range
// constraints between parameters, hardware constraints from device profiles (work-group size,
// local sizes dividing global sizes, local memory of local buffers and of local arrays declared
// in the kernel, allocations), the fallback when code
// generation fails, and the errors for unusable bindings and options.
#include <doctest/doctest.h>

#include "explore/parameter_space.h"
#include "host/device_profile.h"
#include "ir/builders.h"
#include "ir/parser.h"
#include "rewrite/strategies.h"
#include "tests/explore/parametric_programs.h"

using namespace weft;
using namespace weft::explore;
namespace ex = weft::testing::explore;

namespace {

bool hasConstraint(const ParameterSpace& space, ConstraintSource source, const std::string& text) {
  for (const SpaceConstraint& c : space.constraints) {
    if (c.source == source && c.constraint.describe().find(text) != std::string::npos) return true;
  }
  return false;
}

std::string allConstraints(const ParameterSpace& space) {
  std::string text;
  for (const SpaceConstraint& c : space.constraints) {
    text += std::string(constraintSourceName(c.source)) + ": " + c.constraint.describe() + "\n";
  }
  return text;
}

}  // namespace

TEST_CASE("split-join without a factor gives one parameter with the split's divisibility") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitOnce(context), {{"N", 64}});
  CAPTURE(allConstraints(space));
  REQUIRE(space.parameters.size() == 1);
  const Parameter& chunk = space.parameters[0];
  CHECK(chunk.name == context.tuningVariables()[0].varName());
  CHECK(chunk.kind == DomainKind::Range);
  CHECK(chunk.lo == 1);
  CHECK(chunk.hi == 64);
  CHECK(chunk.rangeText == "[1, N]");
  CHECK(chunk.domainSize() == 64);
  CHECK(space.unconstrainedSize() == 64);
  CHECK(hasConstraint(space, ConstraintSource::Algorithmic, "split by chunk1 requires 64 % chunk1 = 0"));
  for (const SpaceConstraint& c : space.constraints) {
    // Sizes are substituted: only parameters remain.
    for (const Arith& v : c.constraint.vars()) CHECK(v.varKind() == VarKind::Tuning);
    CHECK_FALSE(c.constraint.origin.empty());
  }
  CHECK_FALSE(space.hardwareConstraints);  // no device given
  CHECK(space.violations({16}).empty());
  CHECK_FALSE(space.violations({12}).empty());
  CHECK_FALSE(space.violations({65}).empty());  // outside the domain
}

TEST_CASE("a range that mentions another parameter becomes a range constraint") {
  rewrite::RewriteContext context;
  ParameterSpace space = buildParameterSpace(ex::splitTwice(context), {{"N", 64}});
  CAPTURE(allConstraints(space));
  REQUIRE(space.parameters.size() == 2);
  const Parameter* inner = space.find("chunk2");
  REQUIRE(inner != nullptr);
  CHECK(inner->lo == 1);
  CHECK(inner->hi == 64);  // the interval chunk1's range allows
  CHECK(hasConstraint(space, ConstraintSource::Range, "chunk2 <= chunk1"));
  CHECK(hasConstraint(space, ConstraintSource::Algorithmic, "chunk1 % chunk2 = 0"));
  CHECK(space.violations({8, 4}).empty());
  CHECK_FALSE(space.violations({8, 16}).empty());  // chunk2 > chunk1
  CHECK_FALSE(space.violations({8, 3}).empty());
}

TEST_CASE("power-of-two and switch domains; hand-built tuning variables") {
  Arith kappa = Arith::var("kappa", VarKind::Tuning, 1, 64);
  Arith s = Arith::var("s", VarKind::Tuning, 0, 1);
  Definition def = definition("d", {{"xs", Type::array(Type::floatType(), Arith(96))}},
                              [&](std::vector<Expr> p) { return split(kappa, p[0]); });
  (void)s;
  SpaceOptions options;
  options.powerOfTwo = {"kappa"};
  ParameterSpace space = buildParameterSpace(def, {}, options);
  REQUIRE(space.parameters.size() == 1);
  CHECK(space.parameters[0].values() == std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64});
  CHECK(space.parameters[0].contains(32));
  CHECK_FALSE(space.parameters[0].contains(24));
  CHECK(space.parameters[0].domainText() == "powers of two in [1, 64]");

  Parameter sw;
  sw.kind = DomainKind::Switch;
  sw.lo = 0;
  sw.hi = 1;
  CHECK(sw.values() == std::vector<int64_t>{0, 1});
  CHECK(sw.domainText() == "{0, 1}");

  // The sampling key: the same for the same space, different when a domain differs.
  CHECK(buildParameterSpace(def, {}, options).samplingKey() == space.samplingKey());
  CHECK(buildParameterSpace(def, {}, {}).samplingKey() != space.samplingKey());

  SpaceOptions wrong;
  wrong.switches = {"nothere"};
  CHECK_THROWS_WITH_AS(buildParameterSpace(def, {}, wrong),
                       doctest::Contains("--switch nothere: not a tuning parameter"), SpaceError);
}

TEST_CASE("bindings: every size must be bound, and only sizes") {
  rewrite::RewriteContext context;
  Definition def = ex::splitOnce(context);
  CHECK_THROWS_WITH_AS(buildParameterSpace(def, {}), doctest::Contains("N must be given"),
                       SpaceError);
  CHECK_THROWS_WITH_AS(buildParameterSpace(def, {{"N", 64}, {"Q", 3}}),
                       doctest::Contains("Q is not a size variable"), SpaceError);
}

TEST_CASE("hardware constraints follow the device profile") {
  rewrite::RewriteContext context;
  Definition def = ex::workGroups(context);
  for (const char* name : {"mali-g72", "nvidia-generic"}) {
    CAPTURE(name);
    SpaceOptions options;
    options.device = host::loadProfile(name);
    ParameterSpace space = buildParameterSpace(def, {{"N", 8192}}, options);
    CAPTURE(allConstraints(space));
    REQUIRE(space.hardwareConstraints);
    CHECK(space.deviceName == name);
    std::string limit = std::to_string(options.device->maxWorkGroupSize);
    CHECK(hasConstraint(space, ConstraintSource::Hardware, "chunk1 <= " + limit));
    CHECK(hasConstraint(space, ConstraintSource::Hardware, "local size must divide the global"));
    // A point over the limit is rejected, one under it accepted.
    CHECK_FALSE(space.violations({2048}).empty());
    CHECK(space.violations({256}).empty());
  }
}

TEST_CASE("local memory and allocation limits become constraints") {
  Program program = parseProgram(
      "def g[1 <= kappa <= 65536](xs: [float]N): [float]N =\n"
      "  join(mapWrg(0, chunk -> mapLcl(0, x -> x + 1.0f,\n"
      "    toLocal(c -> mapLcl(0, y -> id(y), c), chunk)), split(kappa, xs)))\n");
  Definition def = tuneUnboundSizes(program.definitions[0], {{"N", 65536}});
  SpaceOptions options;
  options.device = host::loadProfile("mali-g72");
  ParameterSpace space = buildParameterSpace(def, {{"N", 65536}}, options);
  CAPTURE(allConstraints(space));
  REQUIRE(space.hardwareConstraints);
  CHECK(hasConstraint(space, ConstraintSource::Hardware, "local memory"));
  CHECK(hasConstraint(space, ConstraintSource::Hardware, "work-group size"));
  // 16384 floats of local memory are 64 KiB, over the Mali's 32 KiB (and its group limit).
  std::vector<std::string> violated = space.violations({16384});
  bool local = false;
  for (const std::string& v : violated) local = local || v.find("local memory") != std::string::npos;
  CHECK(local);

  // A buffer over the largest allocation empties the space (kept as a false constraint).
  Program copy = parseProgram("def c(xs: [float]N): [float]N = map(x -> x + 1.0f, xs)\n");
  options.device = host::loadProfile("mali-g72");
  ParameterSpace huge = buildParameterSpace(copy.definitions[0], {{"N", int64_t(1) << 29}}, options);
  CHECK(hasConstraint(huge, ConstraintSource::Hardware, "largest allocation"));
}

TEST_CASE("local arrays of constant size count against the local memory too") {
  // The local copy's size does not depend on a parameter, so the kernel declares it
  // (`local float l[n];`) instead of taking a local buffer argument: 4 MiB here, over PoCL's
  // 1 MiB (an unchecked one made PoCL abort the variant's process).
  const std::string text =
      "def f(x: [[float]N]M): [[float]N]M =\n"
      "  mapWrg(0, row -> join(mapLcl(0, c -> mapSeq(v -> v + 1.0f, c),\n"
      "    split(1024, toLocal(y -> join(mapLcl(0, c -> mapSeq(w -> w, c), split(1024, y))),\n"
      "                        row)))), x)\n";
  const Definition def = parseProgram(text).definitions[0];
  SpaceOptions options;
  options.device = host::loadProfile("pocl-cpu");
  ParameterSpace over = buildParameterSpace(def, {{"N", 1 << 20}, {"M", 4}}, options);
  CAPTURE(allConstraints(over));
  REQUIRE(over.hardwareConstraints);
  CHECK(hasConstraint(over, ConstraintSource::Hardware, "local memory"));
  const std::vector<std::string> violated = over.violations({});
  REQUIRE(violated.size() == 1);
  CHECK(violated[0].find("4194304 <= 1048576") != std::string::npos);
  ParameterSpace fits = buildParameterSpace(def, {{"N", 1 << 16}, {"M", 4}}, options);
  CHECK(fits.violations({}).empty());
}

TEST_CASE("code generation failing leaves the algorithmic constraints and says why") {
  Definition stencil = parseFile("examples/stencil2d.weft").definitions.back();
  rewrite::RewriteContext context;
  auto result = rewrite::findStrategy("stencil-tiled-local")->make({})(stencil, context);
  REQUIRE(result.success());
  SpaceOptions options;
  options.device = host::loadProfile("mali-g72");
  ParameterSpace space = buildParameterSpace(*result.definition, {{"H", 32}, {"W", 32}}, options);
  CAPTURE(allConstraints(space));
  CHECK(space.parameters.size() == 2);
  CHECK(hasConstraint(space, ConstraintSource::Algorithmic, "slideStrict"));
  if (!space.hardwareConstraints) {
    CHECK(space.hardwareNote.find("OpenCL generation failed") != std::string::npos);
  }
}

TEST_CASE("tuneUnboundSizes turns declared, unbound sizes into tuning parameters") {
  Program program = parseProgram(
      "def f[2 <= kappa <= 64](xs: [float]N): [[float]kappa](N / kappa) = split(kappa, xs)\n");
  Definition tuned = tuneUnboundSizes(program.definitions[0], {{"N", 48}});
  ParameterSpace space = buildParameterSpace(tuned, {{"N", 48}});
  REQUIRE(space.parameters.size() == 1);
  CHECK(space.parameters[0].name == "kappa");
  CHECK(space.parameters[0].lo == 2);
  CHECK(space.parameters[0].hi == 64);
  CHECK(space.parameters[0].variable.varKind() == VarKind::Tuning);
  CHECK_THROWS_WITH_AS(tuneUnboundSizes(program.definitions[0], {}),
                       doctest::Contains("size N is neither given"), SpaceError);
}
