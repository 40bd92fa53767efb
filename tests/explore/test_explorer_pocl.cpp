// End-to-end tests of the exploration loop (explore/explorer.h) on the default OpenCL device
// (PoCL): a small layer (C = H = W = M = 8, 3×3 kernels, stride 1, pad 1) with 6 sampled
// conv-direct variants. Every variant is recorded ok (with its time samples, median, space and
// a verification error within the tolerance) or with a failure status; the reference is
// checked against the interpreter; re-running resumes and runs nothing. Test hooks plant a
// wrong answer (the output changed before verification), a crash (SIGSEGV in the variant's
// process) and a hang (the process sleeps): they are recorded as wrong_answer, crashed and
// timeout and the run goes on with the other variants; a kernel changed to write one value
// past the end of its output (tamperProgram) is caught by the canary regions as wrong_answer.
// A compiler warning planted in a variant's kernel is kept in its details (buildLog). A
// reference over the interpreter's limit is checked at sizes cut to 16 (smallerSizes), or says
// why it could not run there; a program file's declared tuning parameters are bound for its
// reference (boundReference) to the first point valid at both sizes.
// A variant found running (the marker) is run again once, and recorded as crashed without
// running when found running twice. A crash or a hang planted in code generation (the
// generator process) is recorded as crashed / timeout for that variant only. A launcher killed
// from outside (by a planted measuring child) costs nothing: the variant runs again; a second
// death on it records it crashed. With pre-builds (jobs = 2) the same variants get the same
// statuses, and the recorded build time is the pre-build's.
//
// Not an opencl_* test on purpose: those run opencl_main.cpp, which lists the OpenCL devices in
// the test process before any test, and a driver initialised before fork() does not work in
// the forked children (PoCL's worker threads are not copied: the children hang). The explorer
// never calls OpenCL in its own process; this test does the same and checks for a device in a
// child process, passing with a message where there is none (no OpenCL to explore on).
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>

#include "explore/explorer.h"
#include "host/opencl_runtime.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "tests/support/run_weft.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;
using namespace weft::explore;

namespace {

// A fresh folder under the system's temporary folder, removed at the end of the test.
struct TempFolder : testing::TempDir {
  TempFolder() : TempDir("weft_explorer") {}
};

// Whether an OpenCL device exists, asked in a child process (this process must not initialise
// OpenCL before the explorer forks).
bool haveOpenCLDevice() {
  static const bool have = [] {
    pid_t pid = fork();
    if (pid == 0) {
      try {
        weft::host::listDevices();
        _exit(0);
      } catch (...) {
        _exit(77);
      }
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  if (!have) MESSAGE("no OpenCL device: the explorer tests have nothing to run on");
  return have;
}

ExploreOptions smallOptions(const std::filesystem::path& db) {
  ExploreOptions options;
  options.samples = 6;
  options.seed = 3;
  options.db = db;
  options.timeoutSeconds = 20;
  options.marginSeconds = 1;
  options.measurement.minMeasuredNs = 2'000'000;  // 2 ms: enough to test the protocol
  options.measurement.maxRepeats = 20;
  return options;
}

// Prepared once: the device query, the reference run and the sampling are shared by the tests.
const Preparation& preparation() {
  static const Preparation prep = [] {
    TempFolder unused;
    return prepareExploration(layerTarget(parseConvLayer("8,8,8,8,3,1,1"), 1, 0),
                              smallOptions(unused.path / "unused.db"));
  }();
  return prep;
}

VariantKey keyOf(const Preparation& prep, size_t index) {
  return {prep.target.program, prep.device.fingerprint, compilerVersion(),
          parametersJson(prep.space, prep.points[index], prep.target.fixedParameters)};
}

}  // namespace

TEST_CASE("a small layer: every variant recorded, verified and timed; a re-run resumes") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  REQUIRE(prep.points.size() == 6);
  REQUIRE(prep.reference);
  CHECK(prep.reference->medianNs > 0);
  CHECK(prep.referenceCheck.find("checked against the interpreter") != std::string::npos);
  REQUIRE(prep.inputs.expected);
  CHECK(prep.inputs.expected->size() == 8 * 8 * 8);

  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  int updates = 0;
  options.progress = [&](const ProgressUpdate& update) {
    ++updates;
    CHECK(update.total == 6);
    CHECK(update.done <= update.total);
  };
  ExploreSummary first = runExploration(prep, options);
  CHECK(first.sampled == 6);
  CHECK(first.ran == 6);
  CHECK(first.skipped == 0);
  CHECK(updates == 7);  // the initial one, then one per variant

  ResultsDb db(options.db);
  std::vector<VariantRecord> rows = db.variants(prep.target.program);
  REQUIRE(rows.size() == 6);
  std::set<std::string> parameters;
  int ok = 0;
  for (const VariantRecord& row : rows) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    parameters.insert(row.key.parameters);
    CHECK(row.status != VariantStatus::Running);
    CHECK(row.key.device == prep.device.fingerprint);
    auto details = nlohmann::json::parse(row.details);
    if (row.status != VariantStatus::Ok) {
      CHECK_FALSE(row.message.empty());
      continue;
    }
    ++ok;
    REQUIRE(row.medianNs);
    CHECK(*row.medianNs > 0);
    // A variant over 10x the best so far is timed once (details.timedOnce); others fully.
    if (details.value("timedOnce", false)) {
      CHECK(row.samplesNs.size() == 1);
    } else {
      CHECK(row.samplesNs.size() >= 3);
    }
    CHECK(details.value("generateMs", 0.0) > 0);
    CHECK(details.value("weftMs", 0.0) >= details.value("generateMs", 0.0));
    // weft's own work in CPU time: the explorer's plus the generator's, which holds generation.
    CHECK(details.value("explorerCpuMs", -1.0) > 0);
    REQUIRE(details.contains("generator"));
    CHECK(details.value("weftCpuMs", 0.0) >=
          details.value("explorerCpuMs", 0.0) + details["generator"].value("generateCpuMs", 1.0));
    CHECK(row.spaceBytes.value_or(0) >= 4 * (8 * 8 * 8 * 2 + 8 * 9 * 8));  // input, output, weights
    CHECK(row.buildMs.value_or(-1) >= 0);
    CHECK(row.sourceHash.size() == 16);
    // The verification really compared: a recorded error, within the allowed one.
    CHECK(details["allowedError"].get<double>() > 0);
    CHECK(details["maxError"].get<double>() <= details["allowedError"].get<double>());
    CHECK(details["kernels"].size() == 4);  // pad, partial convolution, reduction, crop
  }
  CHECK(parameters.size() == 6);
  CHECK(ok >= 1);  // conv-direct's variants of a valid point are expected to work
  CHECK(first.bestNs);
  CHECK(db.reference(prep.target.program, prep.device.fingerprint));

  ExploreSummary second = runExploration(prep, options);
  CHECK(second.ran == 0);
  CHECK(second.skipped == 6);
  CHECK(db.variants(prep.target.program).size() == 6);

  // The same exploration with pre-builds (--jobs 2): the same variants, the same statuses
  // (a timeout on one side may be an ok on the other on a loaded machine: the cut-off is
  // relative to the best time), the build time the pre-build's, the cached build's in details.
  ExploreOptions parallel = smallOptions(folder.path / "parallel.db");
  parallel.jobs = 2;
  ExploreSummary third = runExploration(prep, parallel);
  CHECK(third.ran == 6);
  ResultsDb parallelDb(parallel.db);
  std::vector<VariantRecord> parallelRows = parallelDb.variants(prep.target.program);
  REQUIRE(parallelRows.size() == 6);
  std::map<std::string, std::string> serialStatus;
  for (const VariantRecord& row : rows) serialStatus[row.key.parameters] = statusName(row.status);
  for (const VariantRecord& row : parallelRows) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    REQUIRE(serialStatus.count(row.key.parameters) == 1);
    const std::string status = statusName(row.status);
    const std::string serial = serialStatus[row.key.parameters];
    if (status != serial) {
      CHECK(((status == "ok" && serial == "timeout") || (status == "timeout" && serial == "ok")));
    }
    auto details = nlohmann::json::parse(row.details);
    if (row.status != VariantStatus::Ok) continue;
    CAPTURE(row.details);
    REQUIRE(details.contains("prebuild"));
    CHECK(details["prebuild"]["status"] == "ok");
    CHECK(row.buildMs.value_or(-1) >= 0);
    CHECK(details.contains("cachedBuildMs"));
  }
}

TEST_CASE("planted wrong answers, crashes and hangs are recorded and the run goes on") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  options.tamperOutput = [](size_t variant, std::vector<float>& output) {
    if (variant == 0) output[output.size() / 2] += 0.5f;         // an off-by-something result
    if (variant == 2) *static_cast<volatile int*>(nullptr) = 1;  // a real invalid access
    if (variant == 3) sleep(60);
  };
  // Variant 5 writes one value past the end of its output (work-item 0 of the kernel that
  // writes the output): its result is right, only the canary region shows the write.
  options.tamperProgram = [&prep](size_t variant, CompiledProgram& program) {
    if (variant != 5) return;
    ArithBinding all = prep.inputs.sizes;
    for (const auto& [name, value] : prep.spaceOf(variant).binding(prep.points[variant])) {
      all[name] = value;
    }
    const BufferPlan& out = program.buffers.at(static_cast<size_t>(program.outputBuffer));
    const std::string parameter = "global float* restrict " + out.name;
    size_t at = program.source.find(parameter);
    while (at != std::string::npos && at >= 6 && program.source.compare(at - 6, 6, "const ") == 0) {
      at = program.source.find(parameter, at + 1);  // a kernel that only reads it
    }
    const size_t body = at == std::string::npos ? at : program.source.find(") {\n", at);
    // Runs in the variant's process: a failure here is recorded (crashed), failing the test.
    if (body == std::string::npos) throw std::runtime_error("no kernel writes " + out.name);
    program.source.insert(body + 4,
                          "  if (get_global_id(0) == 0 && get_global_id(1) == 0 && "
                          "get_global_id(2) == 0) " +
                              out.name + "[" + std::to_string(evaluate(out.elementCount, all)) +
                              "] = 1.0f;\n");
  };
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 6);
  ResultsDb db(options.db);
  auto statusOf = [&](size_t index) {
    std::optional<VariantRecord> row = db.find(keyOf(prep, index));
    REQUIRE(row);
    CAPTURE(row->message);
    return row->status;
  };
  CHECK(statusOf(0) == VariantStatus::WrongAnswer);
  CHECK(db.find(keyOf(prep, 0))->message.find("expected") != std::string::npos);
  CHECK(statusOf(2) == VariantStatus::Crashed);
  CHECK(db.find(keyOf(prep, 2))->message.find("SIGSEGV") != std::string::npos);
  CHECK(statusOf(3) == VariantStatus::Timeout);
  const VariantRecord outOfBounds = *db.find(keyOf(prep, 5));
  CHECK(outOfBounds.status == VariantStatus::WrongAnswer);
  CHECK(outOfBounds.message.find("wrote 1 value past the end of buffer") != std::string::npos);
  // The variants after them ran normally.
  for (size_t index : {1, 4}) {
    CAPTURE(index);
    VariantStatus status = statusOf(index);
    CHECK((status == VariantStatus::Ok || status == VariantStatus::BuildError ||
           status == VariantStatus::LaunchError || status == VariantStatus::Invalid));
  }
  CHECK(summary.statusCounts["wrong_answer"] == 2);
  CHECK(summary.statusCounts["crashed"] == 1);
  CHECK(summary.statusCounts["timeout"] == 1);
}

TEST_CASE("the compiler's warnings are kept with the variant, not printed") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  options.samples = 2;
  // Variant 0's first kernel gets a division by zero, a warning clang gives by default.
  options.tamperProgram = [](size_t variant, CompiledProgram& program) {
    if (variant != 0) return;
    const size_t kernel = program.source.find("kernel void");
    const size_t body = program.source.find(") {\n", kernel);
    if (body == std::string::npos) throw std::runtime_error("no kernel body");
    program.source.insert(body + 4, "  volatile int weft_warning_probe = 1 / 0;\n");
  };
  runExploration(prep, options);
  ResultsDb db(options.db);
  std::optional<VariantRecord> row = db.find(keyOf(prep, 0));
  REQUIRE(row);
  CAPTURE(row->details);
  const nlohmann::json details = nlohmann::json::parse(row->details);
  REQUIRE(details.contains("buildLog"));
  CHECK(details["buildLog"].get<std::string>().find("division by zero") != std::string::npos);
}

TEST_CASE("a crash or a hang in code generation costs that variant only") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  options.timeoutSeconds = 5;           // the cap: generation's deadline
  options.order = SampleOrder::Random;  // variants measured in index order
  // Run in the generator process: a crash there kills it, a hang gets it killed; a new one
  // generates the next variant.
  options.tamperGeneration = [](size_t variant) {
    if (variant == 1) *static_cast<volatile int*>(nullptr) = 1;
    if (variant == 3) sleep(60);
  };
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 6);
  ResultsDb db(options.db);
  const VariantRecord crashed = *db.find(keyOf(prep, 1));
  CAPTURE(crashed.message);
  CHECK(crashed.status == VariantStatus::Crashed);
  CHECK(crashed.message.find("SIGSEGV") != std::string::npos);
  CHECK(crashed.message.find("in the generation") != std::string::npos);
  const VariantRecord hung = *db.find(keyOf(prep, 3));
  CAPTURE(hung.message);
  CHECK(hung.status == VariantStatus::Timeout);
  CHECK(hung.message.find("in the generation") != std::string::npos);
  for (size_t index : {0, 2, 4, 5}) {
    CAPTURE(index);
    const VariantRecord row = *db.find(keyOf(prep, index));
    CAPTURE(row.message);
    CHECK((row.status == VariantStatus::Ok || row.status == VariantStatus::Timeout));
    if (row.status == VariantStatus::Ok) {
      // The generator's own figures are recorded with the row.
      const nlohmann::json details = nlohmann::json::parse(row.details);
      CHECK(details.contains("generator"));
      CHECK(details["generator"].value("generateCpuMs", -1.0) > 0);
    }
  }
  CHECK(summary.statusCounts["crashed"] == 1);
}

TEST_CASE("a variant found running is run again once, and recorded crashed the second time") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  {
    ResultsDb db(options.db);
    db.markRunning(keyOf(prep, 0));  // the explorer died once while variant 0 ran
    db.markRunning(keyOf(prep, 1));  // ... and twice while variant 1 ran
    db.markRunning(keyOf(prep, 1));
  }
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 5);
  CHECK(summary.skipped == 1);
  ResultsDb db(options.db);
  std::optional<VariantRecord> again = db.find(keyOf(prep, 0));
  REQUIRE(again);
  CHECK(again->status != VariantStatus::Running);
  CHECK(again->attempts == 2);
  std::optional<VariantRecord> killer = db.find(keyOf(prep, 1));
  REQUIRE(killer);
  CHECK(killer->status == VariantStatus::Crashed);
  CHECK(killer->message.find("died twice") != std::string::npos);
  CHECK(db.variants(prep.target.program).size() == 6);
}

TEST_CASE("several structures: samples spread over (v, unroll), each run with its own program") {
  if (!haveOpenCLDevice()) return;
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  options.samples = 8;
  // 8x8x8 -> 8, K = 3: windows of 72 values, so v = 1, 2, 4, 8 all have valid points.
  Preparation prep = prepareExploration(
      layerTargetStructures(parseConvLayer("8,8,8,8,3,1,1"), {1, 4}, {0, 1}), options);
  REQUIRE(prep.points.size() == 8);
  CHECK(prep.spaces.size() == 4);
  CHECK(prep.emptyStructures.empty());
  std::set<std::string> keys;
  std::set<size_t> spacesUsed;
  for (size_t i = 0; i < prep.points.size(); ++i) {
    const std::string parameters = prep.parametersOf(i);
    keys.insert(parameters);
    spacesUsed.insert(prep.pointSpace[i]);
    // The recorded v is the structure's and its program is that structure's.
    const bool vectorized = parameters.find("\"v\":4") != std::string::npos;
    bool hasDot = false;
    forEachNode(prep.programOf(i).function.body(),
                [&](const Expr& node) { hasDot = hasDot || node.isPrim(Op::Dot); });
    CHECK(vectorized == hasDot);
  }
  CHECK(keys.size() == 8);        // unique
  CHECK(spacesUsed.size() >= 2);  // spread over structures (4 of similar size, 8 draws)
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 8);
  ResultsDb db(options.db);
  for (const VariantRecord& row : db.variants(prep.target.program, prep.device.fingerprint)) {
    CAPTURE(row.key.parameters);
    CAPTURE(row.message);
    // Correct, or cut off as slow (10 x the best + margin: a loaded machine can do that).
    const std::string status = statusName(row.status);
    CHECK((status == "ok" || status == "timeout"));
  }
}

TEST_CASE(
    "a launcher killed from outside: the variant is measured again, crashed the second time") {
  if (!haveOpenCLDevice()) return;
  const Preparation& prep = preparation();
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  // The measuring child of variant 2 kills its parent, the launcher, once; that of variant 4
  // twice (each kill takes one token file, so the runs after them go through). The child dies
  // with the launcher (PR_SET_PDEATHSIG).
  const std::filesystem::path tokens = folder.path / "tokens";
  std::filesystem::create_directories(tokens);
  for (const char* name : {"2-a", "4-a", "4-b"}) std::ofstream(tokens / name) << "x";
  options.tamperProgram = [&tokens](size_t variant, CompiledProgram&) {
    for (const char* suffix : {"-a", "-b"}) {
      if (std::filesystem::remove(tokens / (std::to_string(variant) + suffix))) {
        kill(getppid(), SIGKILL);
        pause();
      }
    }
  };
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 6);
  CHECK(std::filesystem::is_empty(tokens));  // every planted kill happened
  ResultsDb db(options.db);
  const VariantRecord again = *db.find(keyOf(prep, 2));
  CAPTURE(again.message);
  CHECK(again.attempts == 2);
  CHECK(again.status != VariantStatus::Crashed);
  CHECK(again.status != VariantStatus::Running);
  const VariantRecord twice = *db.find(keyOf(prep, 4));
  CAPTURE(twice.message);
  CHECK(twice.status == VariantStatus::Crashed);
  CHECK(twice.message.find("launcher died twice") != std::string::npos);
  for (size_t index : {0, 1, 3, 5}) {
    CAPTURE(index);
    const VariantRecord row = *db.find(keyOf(prep, index));
    CAPTURE(row.message);
    CHECK(row.attempts == 1);
    CHECK(row.status != VariantStatus::Crashed);
    CHECK(row.status != VariantStatus::Running);
  }
  CHECK(summary.statusCounts["crashed"] == 1);
  CHECK(db.variants(prep.target.program).size() == 6);
}

TEST_CASE("a reference binds the tuning parameters a program file declares") {
  // Sums of chunks of kappa values, kappa declared in `range`.
  auto chunkSums = [](const std::string& range) {
    return parseProgram("def sums[" + range +
                            "](xs: [float]N): [float](N / kappa) =\n"
                            "  join(map(chunk -> reduce(0.0f, (acc, x) -> acc + x, chunk), "
                            "split(kappa, xs)))\n",
                        "sums.weft")
        .definitions.back();
  };
  const Definition sums = chunkSums("2 <= kappa <= 64");
  // kappa = 2 is the smallest value that divides N both at N = 96 and at the check's N = 16.
  const ExploreTarget target = programTarget(sums, {{"N", 96}});
  const std::optional<Definition> reference = boundReference(sums, target);
  REQUIRE(reference);
  const std::string text = printDefinition(*reference);
  CAPTURE(text);
  CHECK(text.find("split(2, xs)") != std::string::npos);
  // Its floating-point operations are counted at that point (N additions), not left unknown.
  CHECK(target.flops == 96);
  // Nothing left to tune.
  CHECK(buildParameterSpace(tuneUnboundSizes(*reference, {{"N", 96}}), {{"N", 96}})
            .parameters.empty());
  // kappa in [5, 6]: 6 divides 96 but not 16, 5 neither: no point is valid at both, and the
  // reference takes the first valid at N = 96.
  const Definition narrow = chunkSums("5 <= kappa <= 6");
  const std::optional<Definition> six = boundReference(narrow, programTarget(narrow, {{"N", 96}}));
  REQUIRE(six);
  CHECK(printDefinition(*six).find("split(6, xs)") != std::string::npos);
  // kappa = 5 alone: no valid point.
  const Definition five = chunkSums("5 <= kappa <= 5");
  CHECK_FALSE(boundReference(five, programTarget(five, {{"N", 96}})));
  // A program without tuning parameters is its own reference.
  const Definition plain = parseProgram(R"(
def twice(xs: [float]N): [float]N = map(x -> x + x, xs)
)",
                                        "plain.weft")
                               .definitions.back();
  const std::optional<Definition> same = boundReference(plain, programTarget(plain, {{"N", 8}}));
  REQUIRE(same);
  CHECK(printDefinition(*same) == printDefinition(plain));
  if (!haveOpenCLDevice()) return;
  // The bound reference runs on the device (where the unbound one could not even be sized)
  // and computes what the interpreter computes.
  TempFolder folder;
  ExploreTarget explored = target;
  explored.reference = reference;
  ExploreOptions options = smallOptions(folder.path / "sums.db");
  options.samples = 2;
  Preparation prep = prepareExploration(explored, options);
  CAPTURE(prep.referenceCheck);
  CHECK(prep.referenceCheck.find("reference checked against the interpreter") != std::string::npos);
  REQUIRE(prep.reference);
  CHECK(prep.reference->medianNs > 0);
}

TEST_CASE("a reference too large for the interpreter is checked at smaller sizes") {
  CHECK(smallerSizes({{"M", 1024}, {"N", 96}, {"K", 7}, {"P", 34}}) ==
        ArithBinding{{"M", 16}, {"N", 16}, {"K", 7}, {"P", 2}});
  if (!haveOpenCLDevice()) return;
  const Definition matmul = parseProgram(R"(
def matmul(A: [[float]K]M, B: [[float]N]K): [[float]N]M =
  map(row -> join(map(col -> reduce(0.0f, (acc, p) -> acc + p._0 * p._1, zip(row, col)),
                      transpose(B))),
      A)
)", "matmul.weft").definitions.back();
  TempFolder folder;
  ExploreTarget target = programTarget(matmul, {{"M", 64}, {"N", 64}, {"K", 64}});
  target.reference = matmul;
  target.interpreterCheckLimit = 1000;  // 64³ multiply-adds are over it
  target.inputValues = InputValues::SmallIntegers;
  ExploreOptions options = smallOptions(folder.path / "small.db");
  options.samples = 2;
  Preparation prep = prepareExploration(target, options);
  CHECK(prep.referenceCheck.find("checked against the interpreter at K=16,M=16,N=16") !=
        std::string::npos);
  // Sizes at which the program cannot run leave the check undone, and say why.
  const Definition window = parseProgram(R"(
def window(x: [float]N): [[float]17]((N - 17) + 1) = slide(17, 1, x)
)", "window.weft").definitions.back();
  ExploreTarget big = programTarget(window, {{"N", 64}});
  big.reference = window;
  big.interpreterCheckLimit = -1;
  Preparation unchecked = prepareExploration(big, options);
  CHECK(unchecked.referenceCheck.find("could not run at N=16") != std::string::npos);
}

TEST_CASE("a variant its pre-build finds invalid is recorded so, without being built again") {
  // A device of 1000 bytes: every variant's buffers exceed it, which the pre-build finds (as it
  // finds kernels that spill registers on NVIDIA's driver, whose build cache keeps no log for
  // the measuring child's build to show the spills in).
  if (!haveOpenCLDevice()) return;
  Preparation prep = preparation();
  prep.device.globalMemoryBytes = 1000;
  TempFolder folder;
  ExploreOptions options = smallOptions(folder.path / "results.db");
  options.jobs = 2;
  ExploreSummary summary = runExploration(prep, options);
  CHECK(summary.ran == 6);
  ResultsDb db(options.db);
  const std::vector<VariantRecord> rows = db.variants(prep.target.program);
  REQUIRE(rows.size() == 6);
  for (const VariantRecord& row : rows) {
    CAPTURE(row.message);
    CHECK(row.status == VariantStatus::Invalid);
    CHECK(row.message.find("does not fit the device") != std::string::npos);
    CHECK(row.message.find("found by its pre-build") != std::string::npos);
    const auto details = nlohmann::json::parse(row.details);
    CHECK(details.value("phase", "") == "pre-build");
    CHECK(details["prebuild"]["status"] == "invalid");
  }
}
