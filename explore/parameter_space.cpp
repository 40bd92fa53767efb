// Building the parameter space of a parametric program (explore/parameter_space.h): tuning
// variables and their domains, the type checker's constraints with the sizes substituted,
// range constraints between parameters, and hardware constraints read off the symbolically
// generated OpenCL code and a device profile.
#include "explore/parameter_space.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "codegen/codegen.h"
#include "codegen/compile_pipeline.h"
#include "codegen/gen_support.h"
#include "explore/launch_parameters.h"
#include "typecheck/typecheck.h"

namespace weft::explore {

const char* domainKindName(DomainKind kind) {
  switch (kind) {
    case DomainKind::Range:
      return "range";
    case DomainKind::PowerOfTwo:
      return "power-of-two";
    case DomainKind::Switch:
      return "switch";
    case DomainKind::Divisors:
      return "divisors";
  }
  return "?";
}

const char* constraintSourceName(ConstraintSource source) {
  switch (source) {
    case ConstraintSource::Algorithmic:
      return "algorithmic";
    case ConstraintSource::Range:
      return "range";
    case ConstraintSource::Hardware:
      return "hardware";
  }
  return "?";
}

// ---- Parameter ---------------------------------------------------------------------------

std::vector<int64_t> Parameter::values() const {
  std::vector<int64_t> out;
  switch (kind) {
    case DomainKind::Range:
      for (int64_t v = lo; v <= hi; ++v) out.push_back(v);
      break;
    case DomainKind::PowerOfTwo:
      for (int64_t v = 1; v > 0 && v <= hi; v *= 2) {
        if (v >= lo) out.push_back(v);
        if (v > (INT64_MAX >> 1)) break;
      }
      break;
    case DomainKind::Switch:
      for (int64_t v : {0, 1}) {
        if (v >= lo && v <= hi) out.push_back(v);
      }
      break;
    case DomainKind::Divisors:
      for (int64_t v : divisorsOf(dividend)) {
        if (v >= lo && v <= hi) out.push_back(v);
      }
      break;
  }
  return out;
}

uint64_t Parameter::domainSize() const {
  if (kind == DomainKind::Range) return hi < lo ? 0 : static_cast<uint64_t>(hi - lo) + 1;
  return values().size();
}

bool Parameter::contains(int64_t value) const {
  if (value < lo || value > hi) return false;
  switch (kind) {
    case DomainKind::Range:
      return true;
    case DomainKind::PowerOfTwo:
      return value > 0 && (value & (value - 1)) == 0;
    case DomainKind::Switch:
      return value == 0 || value == 1;
    case DomainKind::Divisors:
      return value > 0 && dividend % value == 0;
  }
  return false;
}

std::string Parameter::domainText() const {
  std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  switch (kind) {
    case DomainKind::Range:
      return range;
    case DomainKind::PowerOfTwo:
      return "powers of two in " + range;
    case DomainKind::Divisors:
      return "divisors of " + std::to_string(dividend) + " in " + range;
    case DomainKind::Switch: {
      std::string text = "{";
      for (int64_t v : values()) text += (text.size() > 1 ? ", " : "") + std::to_string(v);
      return text + "}";
    }
  }
  return range;
}

// ---- ParameterSpace ----------------------------------------------------------------------

const Parameter* ParameterSpace::find(const std::string& name) const {
  int index = indexOf(name);
  return index < 0 ? nullptr : &parameters[index];
}

int ParameterSpace::indexOf(const std::string& name) const {
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

std::string ParameterSpace::samplingKey() const {
  std::string key;
  for (const auto& [name, value] : sizes) {
    key += name + "=" + std::to_string(value) + ";";
  }
  key += "|";
  for (const Parameter& p : parameters) {
    key += p.name + ":" + domainKindName(p.kind) +
           (p.kind == DomainKind::Divisors ? std::to_string(p.dividend) : std::string()) + "[" +
           std::to_string(p.lo) + "," + std::to_string(p.hi) + "]" + p.variable.varLo().toString() +
           ".." + (p.variable.varHi() ? p.variable.varHi()->toString() : std::string("-")) + "@" +
           std::to_string(p.launchKernel) + ";";
  }
  key += "|";
  for (const SpaceConstraint& c : constraints) {
    for (const Constraint* side : {&c.constraint, &c.original}) {
      key += std::to_string(static_cast<int>(side->relation)) + "(" + side->lhs.toString() + "," +
             side->rhs.toString() + ")";
    }
    key += ";";
  }
  return key;
}

std::optional<uint64_t> ParameterSpace::unconstrainedSize() const {
  uint64_t product = 1;
  for (const Parameter& p : parameters) {
    uint64_t size = p.domainSize();
    if (size != 0 && product > UINT64_MAX / size) return std::nullopt;
    product *= size;
  }
  return product;
}

double ParameterSpace::unconstrainedSizeApprox() const {
  double product = 1;
  for (const Parameter& p : parameters) product *= static_cast<double>(p.domainSize());
  return product;
}

ArithBinding ParameterSpace::binding(const std::vector<int64_t>& values) const {
  ArithBinding full = sizes;
  for (size_t i = 0; i < parameters.size() && i < values.size(); ++i) {
    full[parameters[i].name] = values[i];
  }
  return full;
}

std::vector<std::string> ParameterSpace::violations(const std::vector<int64_t>& values) const {
  std::vector<std::string> out;
  if (values.size() != parameters.size()) {
    out.push_back("a point needs " + std::to_string(parameters.size()) + " values, got " +
                  std::to_string(values.size()));
    return out;
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (!parameters[i].contains(values[i])) {
      out.push_back(parameters[i].name + " = " + std::to_string(values[i]) + " is outside " +
                    parameters[i].domainText());
    }
  }
  ArithBinding full = binding(values);
  for (const SpaceConstraint& c : constraints) {
    std::optional<bool> holds = c.original.evaluate(full);
    if (!holds) {
      out.push_back(c.original.describe() + " cannot be evaluated (division by zero?)");
    } else if (!*holds) {
      out.push_back(c.original.describe());
    }
  }
  return out;
}

// ---- building ----------------------------------------------------------------------------

namespace {

struct Interval {
  int64_t lo;
  int64_t hi;
};

// Saturating conversion of a 128-bit intermediate to 64 bits (bounds only widen).
int64_t clamp64(__int128 v) {
  if (v > static_cast<__int128>(INT64_MAX)) return INT64_MAX;
  if (v < static_cast<__int128>(INT64_MIN)) return INT64_MIN;
  return static_cast<int64_t>(v);
}

Interval multiply(Interval a, Interval b) {
  __int128 corners[4] = {static_cast<__int128>(a.lo) * b.lo, static_cast<__int128>(a.lo) * b.hi,
                         static_cast<__int128>(a.hi) * b.lo, static_cast<__int128>(a.hi) * b.hi};
  return {clamp64(*std::min_element(corners, corners + 4)),
          clamp64(*std::max_element(corners, corners + 4))};
}

// Sound interval bounds of `e` when every variable lies in its interval in `vars`; nullopt
// when a variable is unknown or a divisor's interval contains 0. Truncating division is
// monotone in each operand on each side of 0 of the divisor, so its extremes are at corners.
std::optional<Interval> intervalOf(const Arith& e, const std::map<std::string, Interval>& vars) {
  switch (e.kind()) {
    case ArithKind::Constant:
      return Interval{*e.constant(), *e.constant()};
    case ArithKind::Var: {
      auto found = vars.find(e.varName());
      if (found == vars.end()) return std::nullopt;
      return found->second;
    }
    case ArithKind::Sum: {
      __int128 lo = e.sumConstant(), hi = e.sumConstant();
      for (const auto& [coefficient, monomial] : e.sumTerms()) {
        auto m = intervalOf(monomial, vars);
        if (!m) return std::nullopt;
        Interval scaled = multiply({coefficient, coefficient}, *m);
        lo += scaled.lo;
        hi += scaled.hi;
      }
      return Interval{clamp64(lo), clamp64(hi)};
    }
    case ArithKind::Product: {
      Interval product{e.productCoefficient(), e.productCoefficient()};
      for (const Arith& factor : e.productFactors()) {
        auto f = intervalOf(factor, vars);
        if (!f) return std::nullopt;
        product = multiply(product, *f);
      }
      return product;
    }
    case ArithKind::Div: {
      auto a = intervalOf(e.operands()[0], vars);
      auto b = intervalOf(e.operands()[1], vars);
      if (!a || !b || (b->lo <= 0 && b->hi >= 0)) return std::nullopt;
      int64_t corners[4] = {a->lo / b->lo, a->lo / b->hi, a->hi / b->lo, a->hi / b->hi};
      return Interval{*std::min_element(corners, corners + 4),
                      *std::max_element(corners, corners + 4)};
    }
    case ArithKind::Mod: {
      auto a = intervalOf(e.operands()[0], vars);
      auto b = intervalOf(e.operands()[1], vars);
      if (!a || !b || (b->lo <= 0 && b->hi >= 0)) return std::nullopt;
      int64_t largest = std::max(std::abs(b->lo), std::abs(b->hi)) - 1;
      if (a->lo >= 0) return Interval{0, std::min(a->hi, largest)};
      if (a->hi <= 0) return Interval{std::max(a->lo, -largest), 0};
      return Interval{-largest, largest};
    }
    case ArithKind::Min:
    case ArithKind::Max: {
      auto a = intervalOf(e.operands()[0], vars);
      auto b = intervalOf(e.operands()[1], vars);
      if (!a || !b) return std::nullopt;
      if (e.kind() == ArithKind::Min) return Interval{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
      return Interval{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    }
    case ArithKind::IfLess: {
      auto then = intervalOf(e.operands()[2], vars);
      auto otherwise = intervalOf(e.operands()[3], vars);
      if (!then || !otherwise) return std::nullopt;
      return Interval{std::min(then->lo, otherwise->lo), std::max(then->hi, otherwise->hi)};
    }
  }
  return std::nullopt;
}

std::string rangeTextOf(const Arith& var) {
  const std::optional<Arith>& hi = var.varHi();
  return "[" + var.varLo().toString() + ", " + (hi ? hi->toString() + "]" : "inf)");
}

ArithSubstitution substitutionOf(const ArithBinding& sizes) {
  ArithSubstitution substitution;
  for (const auto& [name, value] : sizes) substitution[name] = Arith(value);
  return substitution;
}

// Every variable that `e` mentions, and those its variables' ranges mention, transitively.
void collectVariables(const Arith& e, std::map<std::string, Arith>& out) {
  for (const Arith& v : e.vars()) {
    if (out.count(v.varName())) continue;
    out.emplace(v.varName(), v);
    collectVariables(v.varLo(), out);
    if (v.varHi()) collectVariables(*v.varHi(), out);
  }
}

// Substitutes the sizes and keeps the constraint unless it is now provably true.
void addConstraint(ParameterSpace& space, const Constraint& original, ConstraintSource source,
                   const ArithSubstitution& substitution) {
  Constraint substituted = original;
  substituted.lhs = substitute(original.lhs, substitution);
  substituted.rhs = substitute(original.rhs, substitution);
  std::optional<bool> decided = substituted.decide();
  if (decided && *decided) {
    ++space.droppedAsTrue;
    return;
  }
  for (const SpaceConstraint& existing : space.constraints) {
    if (existing.constraint == substituted) return;
  }
  space.constraints.push_back({substituted, original, source});
}

Constraint makeConstraint(Relation relation, Arith lhs, Arith rhs, std::string origin,
                          std::string reason) {
  Constraint c;
  c.relation = relation;
  c.lhs = std::move(lhs);
  c.rhs = std::move(rhs);
  c.origin = std::move(origin);
  c.reason = std::move(reason);
  return c;
}

// An unrolled loop of a program: its iteration count, whether it is a reduction
// (reduceSeqUnroll), and whether it is a map (mapSeqUnroll) that writes registers.
struct UnrolledLoop {
  Arith length;
  bool reduction = false;
  bool writesRegisters = false;
};

// The unrolled loops of `e`. An unrolled map writes registers inside toPrivate or in a
// reduction's accumulator (its initial value and its operator). On a CPU such a map's private
// array with constant indices is bounded by the register budget, and PoCL builds and runs long
// ones well (tiles of over a thousand values), so the space caps it only at
// SpaceOptions::maxUnrolledRegisterIterations: the accumulator may be in global memory after
// all (a hoisted stage), where an unrolled map over a whole array of a size is generated for
// minutes in tens of GiB. An unrolled map that writes global or local memory is capped at
// maxUnrolledIterations: unrolled over a row of a size (a map of 32768 elements split by the
// search) it made 3.4 MB of OpenCL that PoCL built for 100 s. On a GPU every unrolled map is
// capped there: an unrolled map over a row of a size (a matmul's 1024 accumulators and their
// padding) took NVIDIA's compiler 86-91 s to build, spilled and could not be launched. The
// register estimate does not see such a row: the analysis program runs its unrolled maps as
// loops (CodegenOptions::unrolledAsLoops), where the row is a private array indexed at run time,
// counted as memory (memoryResidentPrivateScalars), while the unrolled kernel promotes it to one
// scalar per element (codegen/scalar_promotion.h).
void collectUnrolledLengths(const Expr& e, const TypedDefinition& typed, bool writesRegisters,
                            std::vector<UnrolledLoop>& loops) {
  if (e.isLambda()) {
    collectUnrolledLengths(e.body(), typed, writesRegisters, loops);
    return;
  }
  if (!e.isPrim()) return;
  const bool reduction = e.isPrim(Op::ReduceSeqUnroll);
  if ((reduction || e.isPrim(Op::MapSeqUnroll)) && !e.args().empty()) {
    loops.push_back(
        {typed.typeOf(e.args().back()).arrayLength(), reduction, !reduction && writesRegisters});
  }
  // What toPrivate's function computes is held in registers, and so is a reduction's
  // accumulator: its initial value (the first argument) and what its operator makes of it.
  const bool reduce = opencl::isReduceFamily(e.primOp());
  const bool funsWriteRegisters = writesRegisters || reduce || e.isPrim(Op::ToPrivate);
  for (const Expr& f : e.funs()) collectUnrolledLengths(f, typed, funsWriteRegisters, loops);
  for (size_t i = 0; i < e.args().size(); ++i) {
    collectUnrolledLengths(e.args()[i], typed, reduce && i == 0, loops);
  }
}

}  // namespace

CompiledProgram analysisProgram(const Definition& parametric, const ArithBinding& sizes,
                                bool lowerBeforeCodegen) {
  CompilePipelineOptions passes;
  passes.codegen.specialize = sizes;
  passes.codegen.symbolicPrivateArrays = true;
  passes.codegen.unrolledAsLoops = true;
  passes.lower = lowerBeforeCodegen;
  return compileToOpenCL(parametric, {}, passes);
}

std::vector<Constraint> unrolledLoopConstraints(const Definition& parametric,
                                                const TypedDefinition& typed,
                                                const SpaceOptions& options) {
  std::vector<Constraint> constraints;
  if (!options.device) return constraints;
  std::vector<UnrolledLoop> unrolled;
  collectUnrolledLengths(parametric.function, typed, false, unrolled);
  const bool gpu = options.device->deviceType == "gpu";
  for (const UnrolledLoop& loop : unrolled) {
    const bool registerBudget = loop.writesRegisters && !gpu;
    const int64_t cap =
        registerBudget ? options.maxUnrolledRegisterIterations : options.maxUnrolledIterations;
    if (cap <= 0) continue;
    constraints.push_back(makeConstraint(
        Relation::LessEqual, loop.length, Arith(cap),
        loop.reduction ? "unrolled reduction" : "unrolled map",
        "at most " + std::to_string(cap) +
            " iterations: longer unrolled loops build and run slowly (SpaceOptions::" +
            (registerBudget ? "maxUnrolledRegisterIterations" : "maxUnrolledIterations") + ")"));
  }
  return constraints;
}

namespace {

void addHardwareConstraints(ParameterSpace& space, const Definition& parametric,
                            const SpaceOptions& options, const ArithSubstitution& substitution) {
  const host::DeviceProfile& device = *options.device;
  CompiledProgram compiled;
  try {
    // Private arrays whose length depends on tuning parameters (a fused pipeline's private
    // tile) are counted symbolically, so their register budget becomes a constraint below.
    compiled = analysisProgram(parametric, space.sizes, options.lowerBeforeCodegen);
  } catch (const std::exception& error) {
    space.hardwareConstraints = false;
    space.hardwareNote = std::string("no hardware constraints: OpenCL generation failed for the "
                                     "parametric program: ") +
                         error.what();
    return;
  }
  space.hardwareConstraints = true;
  const std::string dev = " of " + device.name;
  if (options.openLocalSizes) {
    // Kernels without a local size get one as parameters (explore/launch_parameters.h).
    std::vector<OpenLocalSize> open = openLocalSizes(compiled, device);
    for (const OpenLocalSize& entry : open) {
      Parameter p;
      p.name = entry.variable.varName();
      p.kind = entry.constantGlobalSize > 0 ? DomainKind::Divisors : DomainKind::PowerOfTwo;
      p.dividend = entry.constantGlobalSize;
      p.variable = entry.variable;
      p.lo = 1;
      p.hi = *entry.variable.varHi()->constant();
      p.rangeText = "[1, " + std::to_string(p.hi) + "]";
      p.launchKernel = entry.kernel;
      space.parameters.push_back(p);
    }
    std::sort(space.parameters.begin(), space.parameters.end(),
              [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
    for (const Constraint& c : localSizeConstraints(compiled, open, device)) {
      addConstraint(space, c, ConstraintSource::Hardware, substitution);
    }
  }
  if (options.codegenChoices && compiled.alignedVectorStoreSites > 0 && device.nontemporalStores) {
    Parameter p;
    p.name = kStreamingStoresParameter;
    p.kind = DomainKind::Switch;
    p.variable = Arith::var(p.name, VarKind::Tuning, Arith(0), Arith(1));
    p.lo = 0;
    p.hi = 1;
    p.rangeText = "[0, 1]";
    space.parameters.push_back(p);
    std::sort(space.parameters.begin(), space.parameters.end(),
              [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
  }
  // Aligned vector reads: where every misaligned read spans two cache lines (a vector at least
  // a line wide, the line known from the profile) always on (a switch of one value, recorded
  // with the point); where the line is not known or wider than the vectors, explored.
  if (options.codegenChoices && compiled.widestRealignableReadBytes > 0) {
    const bool spansLines =
        device.cacheLineBytes > 0 && compiled.widestRealignableReadBytes >= device.cacheLineBytes;
    Parameter p;
    p.name = kAlignedReadsParameter;
    p.kind = DomainKind::Switch;
    p.variable = Arith::var(p.name, VarKind::Tuning, Arith(spansLines ? 1 : 0), Arith(1));
    p.lo = spansLines ? 1 : 0;
    p.hi = 1;
    p.rangeText = spansLines ? "[1, 1]" : "[0, 1]";
    space.parameters.push_back(p);
    std::sort(space.parameters.begin(), space.parameters.end(),
              [](const Parameter& a, const Parameter& b) { return a.name < b.name; });
  }
  for (const KernelPlan& kernel : compiled.kernels) {
    const std::string k = "kernel " + kernel.name;
    if (kernel.hasLocalSize) {
      Arith groupSize(1);
      for (int d = 0; d < kernel.dimensions; ++d) groupSize = groupSize * kernel.localSize[d];
      addConstraint(space,
                    makeConstraint(Relation::LessEqual, groupSize, Arith(device.maxWorkGroupSize),
                                   k + " work-group size",
                                   "work-items per group at most the maximum work-group size" + dev),
                    ConstraintSource::Hardware, substitution);
      if (std::optional<Constraint> registers = registerFileConstraint(kernel, groupSize, device)) {
        addConstraint(space, *registers, ConstraintSource::Hardware, substitution);
      }
      if (std::optional<Constraint> memory = privateMemoryConstraint(kernel, groupSize, device)) {
        addConstraint(space, *memory, ConstraintSource::Hardware, substitution);
      }
      for (int d = 0; d < kernel.dimensions; ++d) {
        const std::string dim = std::to_string(d);
        addConstraint(
            space,
            makeConstraint(Relation::LessEqual, kernel.localSize[d],
                           Arith(device.maxWorkItemSizes[d]), k + " local size in dimension " + dim,
                           "at most the maximum work-item size in dimension " + dim + dev),
            ConstraintSource::Hardware, substitution);
        addConstraint(space,
                      makeConstraint(Relation::Divides, kernel.localSize[d], kernel.globalSize[d],
                                     k + " launch in dimension " + dim,
                                     "the local size must divide the global size"),
                      ConstraintSource::Hardware, substitution);
      }
    }
    // Generated kernels index with int: every dimension's work-items (its number of
    // work-groups times the local size) must fit.
    for (int d = 0; d < kernel.dimensions; ++d) {
      addConstraint(space,
                    makeConstraint(Relation::LessEqual, kernel.globalSize[d],
                                   Arith(int64_t{2147483647}),
                                   k + " work-items in dimension " + std::to_string(d),
                                   "at most 2^31 - 1: the kernels index with int"),
                    ConstraintSource::Hardware, substitution);
    }
    // The register estimate of code generation (KernelPlan::privateScalars) against the
    // profile's budget: more spills to memory (DESIGN: ~28 float16 accumulators halve the speed
    // on the CPU; Mali has 64 registers per work-item at full occupancy). On a CPU, private
    // arrays whose size follows the parameters (a fused tile) may fill the first-level data
    // cache instead (privateValuesBound); the values of constant size stay within the
    // registers. Private arrays no register file holds (explore/launch_parameters.h) are
    // bounded per work-group instead.
    const int64_t registers = device.registersPerWorkItem;
    const int64_t bound = privateValuesBound(device);
    const Arith privateValues = registerResidentPrivateScalars(kernel, device);
    auto addPrivateBound = [&](const Arith& values, int64_t most, const std::string& what,
                               const std::string& reason) {
      addConstraint(
          space,
          makeConstraint(Relation::LessEqual, values, Arith(most), k + " " + what, reason + dev),
          ConstraintSource::Hardware, substitution);
    };
    if (bound > registers) {
      addPrivateBound(privateValues, bound, "private values per work-item",
                      "at most a vector lane's share of the first-level data cache");
      addPrivateBound(Arith(kernel.privateScalars - memoryResidentPrivateScalars(kernel, device)),
                      registers, "private values of constant size per work-item",
                      "at most the registers per work-item");
    } else {
      addPrivateBound(privateValues, registers, "private values per work-item",
                      "at most the registers per work-item");
    }
    // Local arrays of constant size (declared in the kernel) and local buffer arguments.
    Arith localBytes(kernel.staticLocalBytes);
    bool usesLocal = kernel.staticLocalBytes > 0;
    for (const KernelArg& arg : kernel.args) {
      if (arg.kind == KernelArg::Kind::LocalBuffer) {
        localBytes = localBytes + arg.localBytes;
        usesLocal = true;
      }
    }
    if (usesLocal) {
      addConstraint(space,
                    makeConstraint(Relation::LessEqual, localBytes, Arith(device.localMemoryBytes),
                                   k + " local memory",
                                   "bytes of local memory per work-group at most" + dev + "'s"),
                    ConstraintSource::Hardware, substitution);
    }
  }
  Arith allBytes(0);
  for (const BufferPlan& buffer : compiled.buffers) {
    Arith bytes = buffer.elementCount * Arith(4);  // every buffer holds 4-byte scalars
    allBytes = allBytes + bytes;
    addConstraint(space,
                  makeConstraint(Relation::LessEqual, bytes, Arith(device.maxAllocationBytes),
                                 "buffer " + buffer.name,
                                 "its bytes at most the largest allocation" + dev),
                  ConstraintSource::Hardware, substitution);
  }
  if (device.globalMemoryBytes > 0) {
    addConstraint(space,
                  makeConstraint(Relation::LessEqual, allBytes, Arith(device.globalMemoryBytes),
                                 "all buffers", "their bytes at most the global memory" + dev),
                  ConstraintSource::Hardware, substitution);
  }
}

}  // namespace

Definition tuneUnboundSizes(const Definition& definition, const ArithBinding& sizes) {
  std::map<std::string, Arith> variables;
  for (const Arith& occurrence : variableOccurrences(definition)) {
    collectVariables(occurrence, variables);
  }
  for (const Arith& declared : definition.sizeDeclarations) {
    variables.insert_or_assign(declared.varName(), declared);
  }
  ArithSubstitution toTuning;
  std::vector<Arith> keptDeclarations;
  for (const Arith& declared : definition.sizeDeclarations) {
    if (sizes.count(declared.varName())) keptDeclarations.push_back(declared);
  }
  for (const auto& [name, v] : variables) {
    if (v.varKind() != VarKind::Size || sizes.count(name)) continue;
    if (!v.varHi()) {
      throw SpaceError(definition.name + ": size " + name +
                       " is neither given (--size " + name + "=...) nor declared with an upper "
                       "bound to be a tuning parameter (def " + definition.name + "[1 <= " + name +
                       " <= 64](...))");
    }
    toTuning[name] = Arith::var(name, VarKind::Tuning, v.varLo(), v.varHi());
  }
  if (toTuning.empty()) return definition;
  // Variables are equal by name, so substituting a variable by one of the same name changes
  // nothing: rename through a temporary name that no weft identifier can spell.
  ArithSubstitution toTemporary, fromTemporary;
  for (const auto& [name, tuning] : toTuning) {
    Arith temporary = Arith::var(name + "'", VarKind::Tuning, tuning.varLo(), tuning.varHi());
    toTemporary[name] = temporary;
    fromTemporary[name + "'"] = tuning;
  }
  Definition tuned = definition;
  tuned.function =
      substituteArith(substituteArith(definition.function, toTemporary), fromTemporary);
  if (definition.declaredType) {
    tuned.declaredType =
        substitute(substitute(definition.declaredType, toTemporary), fromTemporary);
  }
  tuned.sizeDeclarations = keptDeclarations;
  return tuned;
}

ParameterSpace buildParameterSpace(const Definition& parametric, const ArithBinding& sizes,
                                   const SpaceOptions& options) {
  ParameterSpace space;
  space.definitionName = parametric.name;
  space.sizes = sizes;
  TypedDefinition typed = typecheck(parametric);

  // Every variable of the program: in its types and size arguments, in its constraints, and
  // in the ranges of those.
  std::map<std::string, Arith> variables;
  for (const Arith& occurrence : variableOccurrences(parametric)) {
    collectVariables(occurrence, variables);
  }
  for (const Constraint& c : typed.constraints) {
    collectVariables(c.lhs, variables);
    collectVariables(c.rhs, variables);
  }
  for (const Arith& declared : parametric.sizeDeclarations) {
    variables.emplace(declared.varName(), declared);
  }

  std::vector<std::string> unbound;
  std::map<std::string, Arith> tuning;
  for (const auto& [name, v] : variables) {
    if (v.varKind() == VarKind::Tuning) {
      tuning.emplace(name, v);
    } else if (v.varKind() == VarKind::Size && !sizes.count(name)) {
      unbound.push_back(name);
    }
  }
  if (!unbound.empty()) {
    std::string names;
    for (const std::string& n : unbound) names += (names.empty() ? "" : ", ") + n;
    throw SpaceError(parametric.name + ": size variable" + (unbound.size() > 1 ? "s " : " ") +
                     names + " must be given a value (e.g. --size " + unbound[0] + "=64)");
  }
  for (const auto& [name, value] : sizes) {
    auto found = variables.find(name);
    if (found == variables.end() || found->second.varKind() != VarKind::Size) {
      throw SpaceError(parametric.name + ": " + name + " is not a size variable of the program");
    }
    const Arith& v = found->second;
    auto lo = v.varLo().constant();
    auto hi = v.varHi() ? v.varHi()->constant() : std::nullopt;
    if ((lo && value < *lo) || (hi && value > *hi)) {
      throw SpaceError(parametric.name + ": size " + name + " = " + std::to_string(value) +
                       " is outside its range " + rangeTextOf(v));
    }
  }
  for (const std::string& name : options.powerOfTwo) {
    if (!tuning.count(name)) {
      throw SpaceError("--power-of-two " + name + ": not a tuning parameter of " + parametric.name);
    }
  }
  for (const std::string& name : options.switches) {
    if (!tuning.count(name)) {
      throw SpaceError("--switch " + name + ": not a tuning parameter of " + parametric.name);
    }
    if (options.powerOfTwo.count(name)) {
      throw SpaceError(name + " cannot be both a power of two and a switch");
    }
  }

  const ArithSubstitution substitution = substitutionOf(sizes);

  // Domains: bounds with the sizes substituted; a bound that still mentions parameters is
  // bounded by interval reasoning over theirs (resolved in dependency order) and becomes a
  // range constraint.
  std::map<std::string, Interval> resolved;
  std::map<std::string, std::pair<Arith, std::optional<Arith>>> bounds;
  for (const auto& [name, v] : tuning) {
    if (!v.varHi()) {
      throw SpaceError("tuning parameter " + name + " has no upper bound (range " +
                       rangeTextOf(v) + ")");
    }
    bounds.emplace(name, std::make_pair(substitute(v.varLo(), substitution),
                                        substitute(*v.varHi(), substitution)));
  }
  bool progress = true;
  while (resolved.size() < tuning.size() && progress) {
    progress = false;
    for (const auto& [name, bound] : bounds) {
      if (resolved.count(name)) continue;
      auto lo = intervalOf(bound.first, resolved);
      auto hi = intervalOf(*bound.second, resolved);
      if (!lo || !hi) continue;
      resolved[name] = Interval{lo->lo, hi->hi};
      progress = true;
    }
  }
  for (const auto& [name, v] : tuning) {
    if (!resolved.count(name)) {
      throw SpaceError("tuning parameter " + name + ": cannot bound its range " + rangeTextOf(v) +
                       " (it depends on parameters in a cycle or on unknown variables)");
    }
    Parameter p;
    p.name = name;
    p.variable = v;
    p.rangeText = rangeTextOf(v);
    p.lo = resolved[name].lo;
    p.hi = resolved[name].hi;
    if (options.powerOfTwo.count(name)) p.kind = DomainKind::PowerOfTwo;
    if (options.switches.count(name)) p.kind = DomainKind::Switch;
    space.parameters.push_back(p);
  }

  for (const Constraint& c : typed.constraints) {
    addConstraint(space, c, ConstraintSource::Algorithmic, substitution);
  }
  for (const auto& [name, v] : tuning) {
    const auto& [lo, hi] = bounds.at(name);
    if (!lo.isConstant()) {
      addConstraint(space,
                    makeConstraint(Relation::LessEqual, v.varLo(), Arith::var(name, VarKind::Tuning),
                                   "range of " + name, "the lower bound the rule gave it"),
                    ConstraintSource::Range, substitution);
    }
    if (!hi->isConstant()) {
      addConstraint(space,
                    makeConstraint(Relation::LessEqual, Arith::var(name, VarKind::Tuning), *v.varHi(),
                                   "range of " + name, "the upper bound the rule gave it"),
                    ConstraintSource::Range, substitution);
    }
  }
  if (options.device) {
    space.deviceName = options.device->name;
    if (options.hardwareAnalysis) addHardwareConstraints(space, parametric, options, substitution);
    for (const Constraint& c : unrolledLoopConstraints(parametric, typed, options)) {
      addConstraint(space, c, ConstraintSource::Hardware, substitution);
    }
  }
  if (options.device && space.hardwareConstraints) {
    space.notes.push_back(
        "private values per work-item are code generation's estimate (private arrays, live "
        "accumulators, twice the widest vector), not a compiler's register count");
  }
  return space;
}

}  // namespace weft::explore
