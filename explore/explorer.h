// The exploration loop (`weft explore`): sample points of a parametric program's space, and for
// each one not yet in the results database build, run, verify and time the variant in a child
// process, recording its result (explore/results_db.h) as soon as it is known.
//
// Processes. The explorer never calls OpenCL (a driver's threads do not survive fork) nor
// generates code: its children do (explore/child_process.h). A device child queries the device
// (its profile and fingerprint) and runs the reference. Each variant is generated in a
// long-lived generator process (explore/generator_process.h) and built, run, verified and timed
// in a measuring child forked by a small launcher process (explore/measuring_launcher.h), which
// reports its phases as JSON lines (generated — from the generator —, built, warm, verified,
// result).
//
// Deadlines. The explorer enforces a deadline per phase: code generation and the build get the
// absolute cap (--timeout); the warm-up run gets min(cap, k × best median so far + margin + c ×
// the variant's uncached build time), the cut-off of variants far slower than the best (k = 10
// by default; c = firstLaunchCompileFactor allows for the compile an implementation does at a
// program's first launch); the timed runs get min(cap,
// margin + 4 × max(minimum measured time, minimum repeats × warm-up time)). A measuring child
// past its deadline is killed (status timeout); one that dies from a signal or exits without a
// result is recorded as crashed. A generator that dies while generating makes that variant
// crashed, one past the generation deadline is killed (timeout), and the next variant gets a new
// generator: one variant never ends the exploration. A launcher killed from outside (the
// out-of-memory killer) takes its measuring child with it: the explorer starts a new launcher
// and a new generator and measures that variant again, and records it crashed if the launcher
// dies under it a second time. Each row's details hold the generator's own figures (generator:
// cpuMs, generateCpuMs, generateMinorFaults, forkMs and forkCpuMs = handing the variant to the
// launcher, launcherForkMs = the launcher's fork, childCpuMs), weftMs (wall: weft's work for the
// variant, the generator's and the explorer's around the child) and weftCpuMs (the same in CPU
// time: explorerCpuMs + the generator's cpuMs).
//
// Resume. Points come from the seeded sampler, so the same command samples the same points;
// those already recorded with a final status are skipped. Before a variant runs its row is
// marked `running` (attempts + 1); a resumed run finds the marker of the variant under way when
// the explorer died and runs it again, and records a variant found running for the second
// time as crashed (it killed the explorer twice) instead of running it a third time.
//
// Verification. Against the target's reference (ExploreTarget::reference, e.g. a layer's naive
// direct convolution), default-lowered and run on the same device with the same inputs; the
// reference itself is checked against the interpreter when it is small (at most
// `interpreterCheckLimit` multiply-adds). Targets without a reference: against the interpreter
// on the instantiated program, per variant.
// Tolerance: MeasurementOptions::tolerance (explore/measurement.h).
//
// Order. The pending points are measured in ascending predicted cost (ExploreOptions::order,
// ExploreTarget::predictSeconds: the workload's cost model) so that the cut-offs bite early; the
// predicted cost is recorded in each row's details (predictedNs). Ordering happens after sharding
// and skipping, so neither the set of points, nor a shard's share, nor what a resumed run skips
// depends on it.
//
// Shards. ExploreOptions::shardIndex/shardCount split one exploration over several machines:
// every machine samples the same list of points (same seed, same space: the same device
// profile, so give --profile when the machines' devices could differ) and keeps the points whose
// index in that list satisfies index % shardCount == shardIndex (0-based here; the command line
// counts shards from 1). Each machine writes its own database; `weft merge` joins them.
//
// Parallel builds (ExploreOptions::jobs = J > 1). Variants are still measured one after the
// other, but pre-build children fill the OpenCL build cache for up to J variants ahead and are
// stopped while a variant is timed (explore/prebuild_pool.h). The recorded build_ms is the
// pre-build's (the uncached build time, taken while up to J builds share the cores, so longer
// than a lone build); the measuring child's (cached) build time is in the details as
// cachedBuildMs, with the pre-build's status. A failed pre-build only loses the head start: the
// measuring child builds again and records the failure. Pre-builds never touch the database, so
// resume works as without them (a variant is marked running when its measuring child starts).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "explore/measurement.h"
#include "explore/parameter_space.h"
#include "explore/results_db.h"
#include "explore/sampler.h"
#include "host/device_profile.h"
#include "ir/expr.h"

namespace weft::explore {

// weft's version as recorded in results ("weft 0.1.0").
std::string compilerVersion();

// What to explore: made by a workload (explore/workload.h) for the engine.
struct ExploreTarget {
  std::string program;      // the name results are recorded under
  std::string description;  // one line for humans
  std::string workload;     // the workload that made it, recorded with every variant
  std::string strategy;     // the strategy that made `parametric`, recorded with its variants
  int64_t flops = 0;        // floating-point operations of one run, 0 when unknown
  Definition parametric;    // the program with tuning variables
  ArithBinding sizes;       // its size variables
  std::set<std::string> switches;    // 0/1 parameters
  std::set<std::string> powerOfTwo;  // power-of-two parameters
  // The code generation choices as parameters (SpaceOptions::codegenChoices).
  bool codegenChoices = false;
  // Structural choices made before sampling (e.g. a strategy's vector width): part of each
  // variant's recorded parameters.
  std::map<std::string, int64_t> fixedParameters;
  // Inputs that stay the same across inferences (parameter indices, e.g. a layer's weights):
  // kernels depending only on them are timed apart as preparation
  // (MeasurementOptions::constantInputs).
  std::set<int> constantInputs;
  // A high-level program computing the same result, default-lowered and run on the device as
  // the reference. None: every variant is checked with the interpreter.
  std::optional<Definition> reference;
  // The reference run is checked against the interpreter when flops / 2 is at most this.
  int64_t interpreterCheckLimit = 2'000'000;
  // Beyond that limit: smaller sizes of the same program at which the reference, default-
  // lowered and run on the device, is checked against the interpreter instead (empty: it is
  // not checked). smallerSizes gives such sizes.
  ArithBinding referenceCheckSizes;
  // How the random inputs every variant and the reference run on are drawn.
  InputValues inputValues = InputValues::UniformFloats;
  // Alternative structures, each with its own parametric program, switches and fixed
  // parameters. When present they replace parametric, switches, fixedParameters and strategy
  // above: the space is their union. Structures come in families: each family present gets an
  // equal share of the samples, and within a family each structure gets samples in proportion
  // to its count of valid points (one family's millions of points would otherwise leave
  // another, with hundreds, unsampled).
  struct Structure {
    Definition parametric;
    std::set<std::string> switches;
    std::map<std::string, int64_t> fixedParameters;
    std::string family;
    std::string strategy;  // recorded with its variants
    // When code generation fails on the parametric program (the space's analysis, with a
    // device), the structure has no valid variant: set for structures that nothing but a
    // search vouches for (a mapGlb whose result a kernel would read back, ...).
    bool needsGeneration = false;
  };
  std::vector<Structure> structures;
  // An optional cost model: the predicted seconds of one run of a point, from its recorded
  // parameters (parametersJson, parsed) and the device profile the space was built for;
  // nullopt where it predicts nothing. Points are measured in ascending predicted cost.
  std::function<std::optional<double>(const std::map<std::string, int64_t>& parameters,
                                      const host::DeviceProfile& device)>
      predictSeconds;
};

// The sampled points of a target for a device profile, as exploration lays them out (the
// union of structures: see ExploreTarget::Structure). Structures whose spaces have the same
// ParameterSpace::samplingKey are counted once and sampled from one Sampler (each with its own
// seed): the points are those that separate samplers would draw.
struct SampledTarget {
  std::vector<ParameterSpace> spaces;
  std::vector<size_t> spaceStructure;  // spaces[i] belongs to target.structures[spaceStructure[i]]
  std::vector<size_t> pointSpace;      // points[j] belongs to spaces[pointSpace[j]]
  std::vector<std::vector<int64_t>> points;
  std::vector<SpaceCount> counts;  // with structures: counts[i] is spaces[i]'s
  std::vector<std::string> emptyStructures;
  std::string method;
  uint64_t validPoints = 0;  // 0 when not counted (one structure sampled without counting)
  bool fewerThanRequested = false;
  double seconds = 0;
  // sampleCandidates: the points drawn, of which `points` were kept (0: no selection).
  size_t candidatesDrawn = 0;
};
// How sampleTarget shares the samples over a target's structures.
enum class StructureCoverage {
  // Families equally, each family's share in proportion to its structures' valid points.
  Proportional,
  // The same, then one point more of every structure that share left without any: candidates
  // for a cost model, which can only rank what was drawn. A structure with few valid points (its
  // tiles must divide an awkward size) is otherwise seldom drawn however cheap its points are.
  EveryStructure,
};

// `profile` constrains the spaces with a device's limits (none: algorithmic constraints only).
SampledTarget sampleTarget(const ExploreTarget& target,
                           const std::optional<host::DeviceProfile>& profile, size_t samples,
                           uint64_t seed, const SamplerOptions& options = {},
                           StructureCoverage coverage = StructureCoverage::Proportional);
// sampleTarget of `candidates` × `samples` points, every structure among them
// (StructureCoverage::EveryStructure), of which `samples` are kept by
// selectCandidates on the target's predicted costs, the structures' families sharing the
// cheap half (ExploreOptions::candidates). The costs are
// predicted with `profile` less every rate the probe measures (host::withoutProbedRates: the
// cost models' defaults instead), so that the same seed keeps the same points on every run of
// one device, whatever the probe measured. Without a cost model, a profile or with candidates ≤ 1:
// sampleTarget.
SampledTarget sampleCandidates(const ExploreTarget& target,
                               const std::optional<host::DeviceProfile>& profile, size_t samples,
                               uint64_t seed, size_t candidates,
                               const SamplerOptions& options = {});

// `target` narrowed to one of its structures: its program, switches, fixed parameters and
// strategy replace the target's (what rebuilding a recorded variant needs).
void adoptStructure(ExploreTarget& target, const ExploreTarget::Structure& structure);

// A program whose unbound size variables are its tuning parameters (explore::tuneUnboundSizes).
ExploreTarget programTarget(const Definition& definition, const ArithBinding& sizes);

// The program a device reference runs for a program file explored as `target` (made by
// programTarget from `definition`): the definition itself when the target's sizes bind all its
// size variables; else each one they leave unbound (a declared tuning parameter,
// `def f[1 <= kappa <= 64]`) bound, as a size of that one value, to the first point of its
// space, smallest values first, that is valid at the target's sizes and at its reference check
// sizes, else to the first valid at the target's sizes (its check at the smaller sizes then
// says it cannot run there). The tuning values change how a program computes, not what, so any
// valid point serves. nullopt when none of the first 4096 points tried is valid.
std::optional<Definition> boundReference(const Definition& definition, const ExploreTarget& target);

// Each size replaced by its largest divisor of at most `cap` (so that sizes that divide one
// another mostly still do): where the interpreter checks a program too large for it at full
// size (ExploreTarget::referenceCheckSizes).
ArithBinding smallerSizes(const ArithBinding& sizes, int64_t cap = 16);

// One update after each variant (and once for skipped ones in bulk).
struct ProgressUpdate {
  size_t done = 0;   // variants finished or skipped
  size_t total = 0;  // sampled points
  size_t skipped = 0;
  std::map<std::string, int> statusCounts;  // of every finished variant, skipped included
  std::optional<uint64_t> bestNs;
  double elapsedSeconds = 0;
  std::optional<double> etaSeconds;
  const VariantRecord* last = nullptr;  // the variant just recorded (null for the skip update)
};

// In which order runExploration measures the pending points. Cost: ascending predicted cost
// (ExploreTarget::predictSeconds; points without a prediction, e.g. of a workload without a
// cost model, keep the sampled order after the others), so that a fast variant sets the cut-offs (k
// × best and the timed-once factor) early and the slow ones are cut off or timed once. Random: the
// sampled order (already a seeded interleaving of the structures).
enum class SampleOrder { Cost, Random };
// "cost" / "random"; parseSampleOrder returns nullopt for anything else.
const char* sampleOrderName(SampleOrder order);
std::optional<SampleOrder> parseSampleOrder(const std::string& text);

struct ExploreOptions {
  size_t samples = 1000;
  uint64_t seed = 1;
  uint64_t dataSeed = 20200222;  // inputs of the runs
  std::filesystem::path db = "results.db";
  std::string device;           // OpenCL device selector (host/opencl_runtime.h selectDevice)
  std::string profile;          // device profile for hardware constraints; "": the queried device's
  double timeoutSeconds = 120;  // the absolute cap per phase
  // No variant is started once this many seconds have passed since the first one was (0: no
  // limit); the preparation is not counted. The variant running then finishes and is recorded;
  // the rest stay for a later run of the same command.
  double timeLimitSeconds = 0;
  // k: a warm-up run slower than k × best + margin (+ the first-launch allowance below) is cut
  // off.
  double slowdownCutoff = 10;
  double marginSeconds = 5;
  // The warm-up run is a program's first launch, and an implementation may compile then what
  // its build left: PoCL compiles each kernel's work-group function for its local size at the
  // first launch, after clBuildProgram, and its program cache can hold a built program (a
  // pre-build's) whose work-group functions are not compiled yet. The cut-off allows this many
  // times the variant's uncached build time (the pre-build's, else the measuring child's) on
  // top of k × best + margin (PoCL's first launches of Winograd kernels took up to about 3.7
  // times their build).
  double firstLaunchCompileFactor = 5;
  // A variant whose warm-up run is slower than this many times the best time so far is timed by
  // one run (MeasurementOptions::timeOnceAboveNs); 0 times every variant fully.
  double timeOnceFactor = 10;
  MeasurementOptions measurement;
  SamplerOptions sampler;
  std::function<void(const ProgressUpdate&)> progress;
  // Test hook, run in the variant's child with its index among the sampled points and its
  // warm-up output (see MeasurementEvents::tamperOutput).
  std::function<void(size_t variant, std::vector<float>& output)> tamperOutput;
  // Test hook, run in the variant's measuring child with the generated program before its build
  // (see MeasurementEvents::tamperProgram); pre-builds build the untampered program.
  std::function<void(size_t variant, CompiledProgram& program)> tamperProgram;
  // Test hook, run in the generator process (see the file comment) just before it generates
  // variant `variant`: a test plants a crash or a hang in generation with it.
  std::function<void(size_t variant)> tamperGeneration;
  // This machine's share of the sampled points (see the file comment): 0 <= shardIndex <
  // shardCount. Variant indices (tamperOutput) are positions in the shard's list.
  size_t shardIndex = 0;
  size_t shardCount = 1;
  // Parallel builds (see the file comment): up to `jobs` variants ahead are generated and built
  // in pre-build children at once; 1 builds each variant in its measuring child only.
  size_t jobs = 1;
  // Let pre-builds go on while a variant is warmed up and timed (a GPU, where the builds use
  // the host's cores and the runs the device); by default they are stopped meanwhile.
  bool buildWhileTiming = false;
  // The order in which the pending points are measured (see measurementOrder). The set of
  // points, the shards and what a resumed run skips do not depend on it.
  SampleOrder order = SampleOrder::Cost;
  // Candidates per sample: with C > 1 and a target that predicts costs, C × samples points are
  // sampled and `samples` of them kept (sampleCandidates): half the cheapest predicted, half a
  // seeded draw from the rest, so that a space of many structures is not spread thin while the
  // model's blind spots are still measured. The prediction uses the profile that constrains the
  // space with the cost model's default arithmetic rates (not the probe's measured ones, which
  // vary from run to run), so that a resumed or sharded run keeps the same points. 1: the
  // sampled points as drawn.
  size_t candidates = 1;
};

// What every variant of one exploration shares: the device, the space and its samples, the
// inputs and the reference.
struct Preparation {
  ExploreTarget target;
  host::DeviceProfile device;     // queried from the selected device
  std::string deviceProfileName;  // the profile constraining the space
  ParameterSpace space;           // the first structure's space (the only one without structures)
  std::vector<std::vector<int64_t>> points;
  // With structures: every structure's space (empty ones included, as nullopt-like empty
  // parameter lists are not possible: spaces[i] belongs to structure structureIndex[i]), and for
  // each point the index into `spaces`.
  std::vector<ParameterSpace> spaces;
  std::vector<size_t> spaceStructure;        // spaces[i] is target.structures[spaceStructure[i]]
  std::vector<size_t> pointSpace;            // points[j] belongs to spaces[pointSpace[j]]
  std::vector<std::string> emptyStructures;  // structures without valid points, with why
  // The space, program and recorded parameters of point j.
  const ParameterSpace& spaceOf(size_t point) const;
  const Definition& programOf(size_t point) const;
  std::string parametersOf(size_t point) const;
  // The strategy of the structure point j belongs to (recorded with it).
  const std::string& strategyOf(size_t point) const;
  std::string samplingMethod;
  size_t sampledBeforeShard = 0;  // points sampled for all shards together
  bool fewerThanRequested = false;
  size_t candidatesDrawn = 0;  // SampledTarget::candidatesDrawn
  double samplingSeconds = 0;
  MeasurementInputs inputs;
  std::optional<ReferenceRecord> reference;  // the reference's measurement
  std::string referenceCheck;                // how the reference was checked
};

struct ExploreSummary {
  size_t sampled = 0;
  size_t skipped = 0;  // already in the database
  size_t ran = 0;
  std::map<std::string, int> statusCounts;  // of the variants run now
  std::optional<uint64_t> bestNs;           // over the database (this program and device)
  std::string bestParameters;
  double seconds = 0;
  // weft's own time over the variants run now: sampling, generating code, and the explorer's
  // bookkeeping (process set-up, messages, database writes) — everything but the OpenCL
  // builds, the device runs and the verification.
  double weftSeconds = 0;
  double samplingSeconds = 0;  // the part of weftSeconds spent sampling, once per run
  size_t leftByTimeLimit = 0;  // variants not started because of ExploreOptions::timeLimitSeconds
};

// The device profile whose facts an exploration with these options uses: options.profile when
// given, else the selected device queried in a child process (so that the caller's process
// never loads an OpenCL driver before it forks); the shapes of the space come from it, not the
// arithmetic rates (the preparation's device child measures those, for the cost model). Workloads
// shape their targets by it (Workload::targets). Throws std::runtime_error when the query fails.
host::DeviceProfile explorationProfile(const ExploreOptions& options);

// Queries the device and runs the reference (in a child), builds the space and samples it.
// Throws std::runtime_error (SpaceError, UnsatisfiableSpace, ...) when that fails.
Preparation prepareExploration(const ExploreTarget& target, const ExploreOptions& options);

// How long, in seconds from its "built" event, a variant's warm-up run may take: the cap
// (options.timeoutSeconds) while no variant has a time (bestNs empty), else slowdownCutoff ×
// best + marginSeconds + firstLaunchCompileFactor × buildSeconds (its uncached build), never
// past the cap.
double warmUpDeadlineSeconds(const ExploreOptions& options, std::optional<uint64_t> bestNs,
                             double buildSeconds);

// Runs every sampled point not yet in options.db. Throws ResultsDbError for a bad database.
ExploreSummary runExploration(const Preparation& preparation, const ExploreOptions& options);

// The predicted cost in seconds of each sampled point of `preparation` on its queried device
// (ExploreTarget::predictSeconds), nullopt for points the model does not cover (no cost model,
// or a structure it does not know).
std::vector<std::optional<double>> predictedCosts(const Preparation& preparation);

// The candidates to keep of those with these predicted costs (ExploreOptions::candidates):
// ⌈wanted / 2⌉ of the cheapest — each family's cheapest in turn, the families in the order of
// their cheapest (`families[i]` is candidate i's; empty: one family), ties in their original
// order, unknown costs last — and the others drawn
// uniformly, seeded, from the rest. Indices into `costs`, ascending; all of them when there are
// no more than `wanted`.
std::vector<size_t> selectCandidates(const std::vector<std::optional<double>>& costs, size_t wanted,
                                     uint64_t seed, const std::vector<size_t>& families = {});

// The order in which to measure points with these predicted costs: indices into `costs`,
// ascending cost, ties and equal costs in their original order (stable); points without a
// prediction (nullopt) last, in their original order. A permutation of 0..costs.size()-1.
std::vector<size_t> orderByPredictedCost(const std::vector<std::optional<double>>& costs);

// How far apart two families' predictions may be and still be trusted to rank them: the model
// ranks well within a family and only to about this factor across families (each family's
// kernels are costed by their own rules: blocks of FMAs, transforms as copies, dot products).
inline constexpr double kFamiliesTakeTurnsWithin = 3.0;

// The order in which to measure points with these predicted costs when they come from several
// families (`families[i]` is point i's; empty: one family): the points predicted within
// kFamiliesTakeTurnsWithin of the cheapest are taken by the families in turn, each giving its
// next cheapest (the family with the cheapest point first), so that the model's error across
// families cannot put one family's every point behind another's; then the rest in ascending
// cost, unknown costs last. A permutation of 0..costs.size()-1; orderByPredictedCost when there
// is one family.
std::vector<size_t> orderFamiliesTakingTurns(const std::vector<std::optional<double>>& costs,
                                             const std::vector<size_t>& families);

// The positions of `pending` (indices of preparation's points) in measuring order: for Cost,
// orderFamiliesTakingTurns on predictedCosts and the points' families (`families` indexed like
// `costs`; empty: one family); for Random, unchanged. Always a permutation of `pending`.
std::vector<size_t> measurementOrder(const std::vector<size_t>& pending,
                                     const std::vector<std::optional<double>>& costs,
                                     SampleOrder order, const std::vector<size_t>& families = {});

// Each point's family as a number (points of one family share it), from its structure's
// family; all 0 without structures.
std::vector<size_t> pointFamilies(const Preparation& preparation);

// prepareExploration then runExploration.
ExploreSummary explore(const ExploreTarget& target, const ExploreOptions& options);

// The recorded parameters of a point: tuning variables under their names without the numeric
// suffix the rewrite gave them ("kappa4" -> "kappa") when that is unambiguous, plus the fixed
// parameters, as canonical JSON.
std::string parametersJson(const ParameterSpace& space, const std::vector<int64_t>& point,
                           const std::map<std::string, int64_t>& fixed);

// A recorded parameter object ({"kappa":4,"v":2,...}: parametersJson) as a map; values that
// are not integers are left out. Throws std::invalid_argument when the text is not a JSON object.
std::map<std::string, int64_t> parseRecordedParameters(const std::string& json);

}  // namespace weft::explore
