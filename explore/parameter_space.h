// The space of variants of a parametric program: its tuning parameters with their domains and
// every constraint a valid choice of them must satisfy (the LIFT paper's section 5.2).
//
// A parametric program is a weft Definition whose lengths mention tuning variables
// (Arith vars of VarKind::Tuning with a range [lo, hi], created by rewrite rules for the factors
// they were not given). Given a binding of the program's size variables (C=64, H=224, ...),
// buildParameterSpace collects:
//   - the parameters: every tuning variable the definition mentions, with its range after the
//     sizes are substituted, and a domain kind (a plain range, powers of two in the range, or a
//     0/1 switch; the IR stores only ranges, so callers mark the other kinds by name);
//   - algorithmic constraints: those type inference derives (split and asVector divisibility,
//     strict slide coverage, positive lengths, declared result types, ...), with the sizes
//     substituted; each keeps the primitive that produced it;
//   - range constraints: where a parameter's bound mentions another parameter (a rule bounding
//     σ by the windows per tile), lo <= p <= hi is a constraint and the domain is the interval
//     those bounds can reach;
//   - hardware constraints from a device profile, read off the OpenCL code generated with the
//     parameters left symbolic (codegen::generateOpenCL after the default lowering): per kernel
//     the work-group size and each local dimension against the device limits, local sizes
//     dividing global sizes, local memory per work-group; per buffer its bytes against the
//     largest allocation, and all buffers against global memory; kernels without a local size
//     get local-size parameters (explore/launch_parameters.h: launch sizes are part of the
//     space where the program leaves them open). When generation fails for the
//     parametric program, the reason is recorded and only the algorithmic constraints remain.
// Also: code generation's estimate of private values per work-item against the profile's
// register budget, and the work-items per dimension against what int indexing can address.
//
// Constraints that are decided once the sizes are substituted are dropped when true (counted
// in droppedAsTrue) and kept when false, so that an empty space is explained by the constraint
// that empties it.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/compiled_program.h"
#include "host/device_profile.h"
#include "ir/arith.h"
#include "ir/constraint.h"
#include "ir/expr.h"
#include "typecheck/typecheck.h"

namespace weft::explore {

// A program or binding the space cannot be built for (an unbound size, a parameter without an
// upper bound, a marked name that is no parameter, ...).
struct SpaceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DomainKind {
  Range,       // every integer in [lo, hi]
  PowerOfTwo,  // the powers of two in [lo, hi]
  Switch,      // 0 or 1 (within [lo, hi])
  Divisors,    // the divisors of Parameter::dividend in [lo, hi]
};
const char* domainKindName(DomainKind kind);  // "range", "power-of-two", "switch", "divisors"

struct Parameter {
  std::string name;
  DomainKind kind = DomainKind::Range;
  int64_t lo = 0;  // inclusive bounds of the domain after substituting the sizes
  int64_t hi = 0;
  int64_t dividend = 0;  // DomainKind::Divisors: the number whose divisors the domain holds
  Arith variable;       // the tuning variable as the program has it (symbolic range)
  std::string rangeText;  // its range as the rule wrote it, e.g. "[3, H + 2]"
  // >= 0: a local size of that kernel (launch order), added by explore/launch_parameters.h;
  // the sampler decides those after the others.
  int launchKernel = -1;

  std::vector<int64_t> values() const;  // the domain in increasing order
  uint64_t domainSize() const;
  bool contains(int64_t value) const;
  // "[1, 64]", "powers of two in [1, 64]", "{0, 1}", "divisors of 1000 in [1, 64]"
  std::string domainText() const;
};

enum class ConstraintSource {
  Algorithmic,  // from type inference (the primitive that needs it)
  Range,        // a parameter's bound that depends on other parameters
  Hardware,     // from the device profile and the generated code
};
const char* constraintSourceName(ConstraintSource source);  // "algorithmic", "range", "hardware"

struct SpaceConstraint {
  Constraint constraint;  // sizes substituted: mentions parameters only
  Constraint original;    // as derived (sizes still symbolic): re-checked with sizes + values
  ConstraintSource source = ConstraintSource::Algorithmic;
};

struct SpaceOptions {
  std::set<std::string> powerOfTwo;  // parameters whose domain is the powers of two in range
  std::set<std::string> switches;    // parameters whose domain is {0, 1}
  // The device whose limits constrain the space; none: algorithmic constraints only.
  std::optional<host::DeviceProfile> device;
  // Apply the default lowering before code generation (it leaves low-level primitives as they
  // are, so it is harmless on programs that are already lowered).
  bool lowerBeforeCodegen = true;
  // With a device: kernels that leave their local size to the OpenCL implementation get
  // power-of-two local-size parameters (explore/launch_parameters.h).
  bool openLocalSizes = true;
  // With a device: streaming_stores (CodegenOptions::streamingStores) becomes a 0/1 parameter
  // where the generated code stores vectors to global memory at aligned offsets and the
  // device's compiler takes non-temporal stores (DeviceProfile::nontemporalStores). Like local
  // sizes it is not in the program; compileToOpenCL reads it from the point. Program files'
  // targets ask for it (programTarget).
  bool codegenChoices = false;
  // With a device: every unrolled reduction (reduceSeqUnroll) runs at most this many
  // iterations (0: no limit). Longer unrolled loops make kernels of hundreds of kilobytes that
  // are slow to generate and build and, on the devices measured, slower than the same loop
  // rolled (the measurements are in the database kept in bench/results/ and in the commit
  // that set this cap). Unrolled maps that write global or local memory are capped too; on a
  // CPU those that write registers (inside toPrivate, or a reduction's operator: private
  // arrays with constant indices) are bounded by the register budget instead (and by
  // maxUnrolledRegisterIterations), while on a GPU (device type gpu) every unrolled map is
  // capped.
  int64_t maxUnrolledIterations = 256;
  // With a device: on a CPU, an unrolled map that writes registers runs at most this many
  // iterations (0: no limit). The register budget bounds only values that are private: a
  // reduction's operator may update an accumulator held in global memory (a hoisted stage),
  // whose unrolled map over millions of elements takes minutes and tens of GiB to generate.
  // The cap bounds code size only; a private tile that fits the first-level cache is smaller.
  int64_t maxUnrolledRegisterIterations = 4096;
  // With a device: false leaves out the constraints that need the program generated (work-group
  // sizes, registers, memory), keeping the caps on unrolled loops. For a quick test of a
  // structure (explore/z3_encoding.h's unrollCapsLeaveAPoint).
  bool hardwareAnalysis = true;
};

struct ParameterSpace {
  std::string definitionName;
  ArithBinding sizes;                     // the binding the space was built for
  std::vector<Parameter> parameters;      // sorted by name
  std::vector<SpaceConstraint> constraints;  // algorithmic, then range, then hardware
  int droppedAsTrue = 0;                  // constraints that hold for every parameter value
  std::string deviceName;                 // "" without a device
  // Whether hardware constraints could be derived; if not, why (a codegen error's message).
  bool hardwareConstraints = false;
  std::string hardwareNote;
  std::vector<std::string> notes;         // limitations to print with the space

  const Parameter* find(const std::string& name) const;
  int indexOf(const std::string& name) const;  // -1 if absent
  // Everything a Sampler reads from the space, as text: the sizes, each parameter (name, domain,
  // symbolic range, launch kernel) and each constraint (substituted and original, in order).
  // Two spaces with the same key have the same valid points in the same parameter order, so
  // one count (and one sampler) serves both.
  std::string samplingKey() const;
  // The product of the domain sizes, nullopt when it exceeds 2^64 - 1.
  std::optional<uint64_t> unconstrainedSize() const;
  double unconstrainedSizeApprox() const;
  // The full binding for a point (values in the order of `parameters`): sizes + parameters.
  ArithBinding binding(const std::vector<int64_t>& values) const;
  // The constraints a point violates (re-evaluating the original constraints with the full
  // binding, and checking every value lies in its domain), as sentences; empty when valid.
  std::vector<std::string> violations(const std::vector<int64_t>& values) const;
};

// A parametric program from a text one: the text format has no tuning variables (a printed
// parametric program reads them back as sizes), so every size variable that `sizes` leaves
// unbound becomes a tuning parameter with the range the definition declares for it
// (`def f[1 <= kappa <= 64](...)`). Throws SpaceError for an unbound size without an upper
// bound. Variables that are tuning parameters already are kept.
Definition tuneUnboundSizes(const Definition& definition, const ArithBinding& sizes);

// `parametric` compiled to OpenCL for analysis, with its tuning parameters left symbolic: the
// kernels' launch sizes, buffers and private values as expressions in them (private arrays of
// symbolic length counted symbolically), unrolled loops generated as loops (their trip counts
// need not be constant; they change neither launches nor buffers). What the hardware
// constraints and the pipeline cost model read. Throws what code generation throws.
CompiledProgram analysisProgram(const Definition& parametric, const ArithBinding& sizes,
                                bool lowerBeforeCodegen = true);

// The caps SpaceOptions puts on the unrolled loops of `parametric` on options.device, one
// constraint per unrolled loop (none without a device). buildParameterSpace adds them to the
// hardware constraints.
std::vector<Constraint> unrolledLoopConstraints(const Definition& parametric,
                                                const TypedDefinition& typed,
                                                const SpaceOptions& options);

// Builds the space of `parametric` for the given sizes (every size variable the definition
// mentions must be bound). Throws SpaceError for an unusable binding or parameter.
ParameterSpace buildParameterSpace(const Definition& parametric, const ArithBinding& sizes,
                                   const SpaceOptions& options = {});

}  // namespace weft::explore
