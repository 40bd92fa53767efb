// weft_bench_soak: a long exploration under planted faults (issue 32's soak run). One explorer
// process explores small convolution layers one after another (each layer `--samples` variants,
// then the next, and round after round with a new seed) for `--minutes`, with
//   - faults planted through the explorer's test hooks (explore/explorer.h), drawn per variant
//     from a seeded hash: wrong results (an output value changed before verification), crashes
//     (an invalid access in the measuring child), hangs (the measuring child sleeps past the
//     phase timeout), kernels that do not build, and crashes and hangs in code generation (the
//     generator process);
//   - children SIGKILLed from outside at random moments (seeded): the measuring child, the
//     generator or a pre-build, and the launcher in turn, only while variants are measured;
//   - this process watching the explorer every few seconds: its resident memory, its open file
//     descriptors, its descendants, and the size of the PoCL kernel cache.
// The explorer is a forked child of this process, so that its death is seen and reported, not
// suffered. At the end every sampled variant must be in the database exactly once (those the
// time limit left unstarted apart), none `running`, no variant started again more often than the
// kills explain, and no descendant left 5 s after the explorer ended. Figures go to
// bench/results/soak.{json,md} with the targets (≥ 1 h, no explorer death, memory growth < 10 %
// from the end of the first round, every layer explored once, to the end).
//
//   build/bench/weft_bench_soak [--minutes 60] [--samples 300] [--kill-every 30] [--db FILE]
//       [--layers C,H,W,M,K,S,P;...] [--out FILE.json]
#include <fmt/core.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.h"
#include "explore/explorer.h"
#include "explore/results_db.h"
#include "explore/workload.h"
#include "tests/support/processes.h"
#include "workloads/builtin_workloads.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

struct Options {
  double minutes = 60;
  size_t samples = 300;
  double killEverySeconds = 30;
  double timeoutSeconds = 10;
  uint64_t seed = 1;
  std::string db;
  std::string out;
  std::string device;
  std::vector<std::string> layers = {"8,16,16,8,3,1,1", "16,14,14,16,3,1,1", "8,20,20,16,5,1,2",
                                     "16,12,12,32,1,1,0", "3,32,32,16,3,2,1", "16,9,9,8,3,1,0"};
  // Planted faults per thousand variants, each kind on its own.
  int wrongPerMille = 15;
  int crashPerMille = 10;
  int hangPerMille = 3;
  int buildErrorPerMille = 10;
  int generationCrashPerMille = 5;
  int generationHangPerMille = 2;
};

// What the explorer tells this process while it runs (shared memory mapped before the fork).
struct Shared {
  std::atomic<int> measuring{0};           // 1 while runExploration runs
  std::atomic<long> explorationsDone{0};
  std::atomic<long> firstExplorationRssKb{0};  // the explorer's resident memory after it
  std::atomic<long> firstRoundRssKb{0};        // after every layer was explored once
};

// A fault kind for variant `variant` of exploration `exploration`: a hash into [0, 1000).
int faultDraw(uint64_t seed, long exploration, size_t variant, int salt) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(exploration) * 0xBF58476D1CE4E5B9ull ^
               (static_cast<uint64_t>(variant) + 1) * 0x94D049BB133111EBull ^
               static_cast<uint64_t>(salt) * 0x2545F4914F6CDD1Dull;
  x ^= x >> 31;
  x *= 0xD6E8FEB86989AC3Dull;
  x ^= x >> 29;
  return static_cast<int>(x % 1000);
}

long statusField(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

long openDescriptors(pid_t pid) {
  std::error_code error;
  long count = 0;
  for (auto it = fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    ++count;
  }
  return error && count == 0 ? -1 : count;
}

uint64_t folderBytes(const fs::path& folder) {
  uint64_t bytes = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(folder, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    std::error_code sizeError;
    if (it->is_regular_file(sizeError)) bytes += it->file_size(sizeError);
  }
  return bytes;
}

std::vector<pid_t> descendantsOf(pid_t root) {
  const auto processes = testing::liveProcesses();
  std::vector<pid_t> found, frontier{root};
  while (!frontier.empty()) {
    const pid_t next = frontier.back();
    frontier.pop_back();
    for (pid_t child : testing::childrenOf(processes, next)) {
      found.push_back(child);
      frontier.push_back(child);
    }
  }
  return found;
}

using testing::ExplorerRole;
const char* roleName(ExplorerRole role) {
  switch (role) {
    case ExplorerRole::MeasuringChild:
      return "measuring child";
    case ExplorerRole::LeafChild:
      return "generator or pre-build";
    case ExplorerRole::Launcher:
      return "launcher";
  }
  return "?";
}

// A live process of that role under the explorer, or -1.
pid_t findVictim(ExplorerRole role, pid_t explorer, std::mt19937_64& rng) {
  const std::vector<pid_t> candidates = testing::explorerProcesses(role, explorer);
  if (candidates.empty()) return -1;
  return candidates[std::uniform_int_distribution<size_t>(0, candidates.size() - 1)(rng)];
}

// The explorer's life: explorations of the layers in turn until the deadline. Each exploration's
// sampled keys and summary are appended to `journal` (one JSON line each), so that this
// process can check the database against them.
[[noreturn]] void explorerMain(const Options& o, Shared& shared, const fs::path& journal,
                               Clock::time_point deadline) {
  int exitCode = 0;
  try {
    workloads::registerBuiltinWorkloads();
    explore::ExploreOptions base;
    base.samples = o.samples;
    base.db = o.db;
    base.device = o.device;
    base.timeoutSeconds = o.timeoutSeconds;
    base.measurement.minMeasuredNs = 2'000'000;
    base.measurement.maxRepeats = 20;
    base.jobs = 2;
    const host::DeviceProfile profile = explore::explorationProfile(base);
    long exploration = 0;
    for (uint64_t round = 0; Clock::now() < deadline; ++round) {
      for (const std::string& layer : o.layers) {
        if (Clock::now() >= deadline) break;
        explore::ExploreOptions options = base;
        options.seed = o.seed + round;
        options.timeLimitSeconds =
            std::chrono::duration<double>(deadline - Clock::now()).count();
        const long index = exploration++;
        const uint64_t seed = o.seed;
        options.tamperOutput = [&o, index, seed](size_t variant, std::vector<float>& output) {
          int draw = faultDraw(seed, index, variant, 1);
          if ((draw -= o.wrongPerMille) < 0 && !output.empty()) output[output.size() / 2] += 1.0f;
          else if ((draw -= o.crashPerMille) < 0) *static_cast<volatile int*>(nullptr) = 1;
          else if ((draw -= o.hangPerMille) < 0) sleep(3600);
        };
        options.tamperProgram = [&o, index, seed](size_t variant, CompiledProgram& program) {
          if (faultDraw(seed, index, variant, 2) < o.buildErrorPerMille) {
            program.source = "#error planted build failure\n" + program.source;
          }
        };
        options.tamperGeneration = [&o, index, seed](size_t variant) {
          int draw = faultDraw(seed, index, variant, 3);
          if ((draw -= o.generationCrashPerMille) < 0) *static_cast<volatile int*>(nullptr) = 1;
          else if ((draw -= o.generationHangPerMille) < 0) sleep(3600);
        };
        explore::WorkloadRequest request;
        request.instance = layer;
        const std::vector<explore::ExploreTarget> targets =
            explore::workloadFor(request)->targets(request, &profile);
        nlohmann::json line = {{"exploration", index}, {"layer", layer}, {"seed", options.seed}};
        try {
          const explore::Preparation prep = explore::prepareExploration(targets.at(0), options);
          nlohmann::json keys = nlohmann::json::array();
          for (size_t i = 0; i < prep.points.size(); ++i) keys.push_back(prep.parametersOf(i));
          line["program"] = prep.target.program;
          line["keys"] = keys;
          shared.measuring = 1;
          const explore::ExploreSummary summary = explore::runExploration(prep, options);
          shared.measuring = 0;
          line["ran"] = summary.ran;
          line["skipped"] = summary.skipped;
          line["left_by_time_limit"] = summary.leftByTimeLimit;
          line["statuses"] = summary.statusCounts;
          line["seconds"] = summary.seconds;
        } catch (const std::exception& e) {
          shared.measuring = 0;
          line["error"] = e.what();
        }
        std::ofstream(journal, std::ios::app) << line.dump() << "\n";
        if (shared.explorationsDone++ == 0) {
          shared.firstExplorationRssKb = statusField(getpid(), "VmRSS");
        }
      }
      if (round == 0) shared.firstRoundRssKb = statusField(getpid(), "VmRSS");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "explorer: %s\n", e.what());
    exitCode = 1;
  }
  std::fflush(nullptr);
  _exit(exitCode);
}

struct Sample {
  double minutes = 0;
  long rssKb = 0;
  long descriptors = 0;
  size_t descendants = 0;
  uint64_t poclCacheBytes = 0;
};

int run(Options o) {
  const fs::path folder = fs::temp_directory_path() / ("weft_soak_" + std::to_string(getpid()));
  fs::create_directories(folder);
  if (o.db.empty()) o.db = (folder / "soak.db").string();
  const fs::path journal = folder / "journal.jsonl";
  const char* cacheEnv = std::getenv("POCL_CACHE_DIR");
  const fs::path poclCache = cacheEnv ? fs::path(cacheEnv) : fs::path();
  // The device's description, queried in a child (this process forks the explorer and must not
  // hold an OpenCL driver).
  explore::ExploreOptions query;
  query.device = o.device;
  const host::DeviceProfile profile = explore::explorationProfile(query);

  auto* shared = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) throw std::runtime_error("mmap of the shared counters failed");
  new (shared) Shared();
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(o.minutes * 60));
  // The explorer's processes that outlive it are handed to this process (not to init), so that
  // they can be found and counted after it ended.
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) throw std::runtime_error("PR_SET_CHILD_SUBREAPER failed");
  std::fflush(nullptr);
  const pid_t explorer = fork();
  if (explorer < 0) throw std::runtime_error("fork failed");
  if (explorer == 0) explorerMain(o, *shared, journal, deadline);

  fmt::print("soak: explorer {} for {} min on {}, database {}\n", explorer, o.minutes,
             profile.deviceName, o.db);
  std::mt19937_64 rng(o.seed * 7919 + 17);
  const ExplorerRole order[] = {ExplorerRole::MeasuringChild, ExplorerRole::LeafChild,
                                ExplorerRole::Launcher};
  std::map<std::string, int> kills;
  int killCount = 0;
  std::vector<Sample> samples;
  auto nextKill = start + std::chrono::milliseconds(static_cast<int64_t>(
                              o.killEverySeconds * 1000 *
                              std::uniform_real_distribution<double>(0.5, 1.5)(rng)));
  auto nextSample = start;
  int explorerStatus = 0;
  auto minutesSince = [&](Clock::time_point t) {
    return std::chrono::duration<double>(t - start).count() / 60;
  };
  // Reaps the processes handed to this process; true once the explorer itself has ended.
  auto reap = [&] {
    bool explorerEnded = false;
    int status = 0;
    for (pid_t pid; (pid = waitpid(-1, &status, WNOHANG)) > 0;) {
      if (pid == explorer) {
        explorerStatus = status;
        explorerEnded = true;
      }
    }
    return explorerEnded;
  };
  for (;;) {
    if (reap()) break;
    const auto now = Clock::now();
    if (now >= nextSample) {
      Sample s;
      s.minutes = minutesSince(now);
      s.rssKb = statusField(explorer, "VmRSS");
      s.descriptors = openDescriptors(explorer);
      s.descendants = descendantsOf(explorer).size();
      // The cache is walked once a minute (it holds thousands of files).
      s.poclCacheBytes = poclCache.empty() || samples.size() % 12 != 0
                             ? (samples.empty() ? 0 : samples.back().poclCacheBytes)
                             : folderBytes(poclCache);
      samples.push_back(s);
      if (samples.size() % 60 == 1) {
        fmt::print("soak: {:.1f} min, explorer {} MB resident, {} descriptors, {} kills\n",
                   s.minutes, s.rssKb / 1024, s.descriptors, killCount);
        std::fflush(stdout);
      }
      nextSample = now + std::chrono::seconds(5);
    }
    if (now >= nextKill && shared->measuring.load()) {
      const ExplorerRole victim = order[killCount % 3];
      const pid_t target = findVictim(victim, explorer, rng);
      if (target > 0 && shared->measuring.load() && kill(target, SIGKILL) == 0) {
        ++kills[roleName(victim)];
        ++killCount;
        nextKill = now + std::chrono::milliseconds(static_cast<int64_t>(
                             o.killEverySeconds * 1000 *
                             std::uniform_real_distribution<double>(0.5, 1.5)(rng)));
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto ended = Clock::now();
  // Its processes end with it (each watches its parent): none may be left 5 s later. Any that
  // outlived it are this process's descendants now (the subreaper above).
  std::vector<pid_t> leftBehind;
  for (int tenth = 0; tenth < 50; ++tenth) {
    reap();
    leftBehind = descendantsOf(getpid());
    if (leftBehind.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (pid_t pid : leftBehind) kill(pid, SIGKILL);
  const bool explorerDied = !(WIFEXITED(explorerStatus) && WEXITSTATUS(explorerStatus) == 0);
  const std::string explorerEnd =
      WIFSIGNALED(explorerStatus) ? "signal " + std::to_string(WTERMSIG(explorerStatus))
                                  : "exit code " + std::to_string(WEXITSTATUS(explorerStatus));

  // The database against the journal: every sampled key once, apart from those the time limit
  // left; none running; reruns within what the kills explain.
  std::map<std::string, std::set<std::string>> sampled;
  size_t leftByTimeLimit = 0, explorations = 0;
  std::vector<std::string> explorationErrors;
  {
    std::ifstream in(journal);
    std::string text;
    while (std::getline(in, text)) {
      const nlohmann::json line = nlohmann::json::parse(text);
      ++explorations;
      if (line.contains("error")) {
        explorationErrors.push_back(line["layer"].get<std::string>() + ": " +
                                    line["error"].get<std::string>());
        continue;
      }
      for (const auto& key : line["keys"]) {
        sampled[line["program"].get<std::string>()].insert(key.get<std::string>());
      }
      leftByTimeLimit += line.value("left_by_time_limit", size_t{0});
    }
  }
  size_t sampledCount = 0, rowCount = 0, duplicated = 0, running = 0, unknown = 0, reruns = 0;
  std::map<std::string, int> statuses;
  {
    explore::ResultsDb db(o.db);
    for (const auto& [program, keys] : sampled) {
      sampledCount += keys.size();
      std::set<std::string> seen;
      for (const explore::VariantRecord& row : db.variants(program)) {
        ++rowCount;
        if (!seen.insert(row.key.parameters).second) ++duplicated;
        if (!keys.count(row.key.parameters)) ++unknown;
        if (row.status == explore::VariantStatus::Running) ++running;
        reruns += static_cast<size_t>(std::max(0, row.attempts - 1));
        ++statuses[explore::statusName(row.status)];
      }
    }
  }
  const size_t lost = sampledCount - std::min(sampledCount, rowCount - duplicated + leftByTimeLimit);

  const double minutes = minutesSince(ended);
  // Memory is judged from the end of the first round (every layer's spaces, structures and
  // caches met once) to the end: later rounds repeat the same layers, so what grows then grows
  // with the variants. A run shorter than one round is judged from its first exploration.
  const long rssFirst = shared->firstExplorationRssKb.load();
  const long rssRound = shared->firstRoundRssKb.load();
  const long rssBase = rssRound > 0 ? rssRound : rssFirst;
  const long rssEnd = samples.empty() ? -1 : samples.back().rssKb;
  long rssMax = 0;
  for (const Sample& s : samples) rssMax = std::max(rssMax, s.rssKb);
  const double growth = rssBase > 0 && rssEnd > 0 ? static_cast<double>(rssEnd) / rssBase - 1 : NAN;
  const size_t recorded = rowCount - running;

  nlohmann::ordered_json report;
  report["benchmark"] = "soak";
  report["date"] = utcNow();
  report["device"] = {{"name", profile.deviceName}, {"fingerprint", profile.fingerprint}};
  report["minutes"] = minutes;
  report["layers"] = o.layers;
  report["samples_per_exploration"] = o.samples;
  report["explorations"] = explorations;
  report["exploration_errors"] = explorationErrors;
  report["explorer_end"] = explorerEnd;
  report["variants_recorded"] = recorded;
  report["variants_per_minute"] = minutes > 0 ? recorded / minutes : 0;
  report["statuses"] = statuses;
  report["planted_per_mille"] = {{"wrong", o.wrongPerMille},
                                 {"crash", o.crashPerMille},
                                 {"hang", o.hangPerMille},
                                 {"build_error", o.buildErrorPerMille},
                                 {"generation_crash", o.generationCrashPerMille},
                                 {"generation_hang", o.generationHangPerMille}};
  report["kills"] = kills;
  report["sampled"] = sampledCount;
  report["left_by_time_limit"] = leftByTimeLimit;
  report["lost"] = lost;
  report["duplicated"] = duplicated;
  report["not_sampled_rows"] = unknown;
  report["running_left"] = running;
  report["reruns"] = reruns;
  report["processes_left_5s_after"] = leftBehind.size();
  report["rss_kb"] = {{"first_sample", samples.empty() ? -1 : samples.front().rssKb},
                      {"after_first_exploration", rssFirst},
                      {"after_first_round", rssRound},
                      {"max", rssMax},
                      {"end", rssEnd}};
  report["rss_growth"] = growth;
  long descriptorsMax = -1;
  for (const Sample& s : samples) descriptorsMax = std::max(descriptorsMax, s.descriptors);
  report["descriptors"] = {{"first", samples.empty() ? -1 : samples.front().descriptors},
                           {"max", descriptorsMax},
                           {"end", samples.empty() ? -1 : samples.back().descriptors}};
  report["pocl_cache_bytes"] = {{"start", samples.empty() ? 0 : samples.front().poclCacheBytes},
                                {"end", poclCache.empty() ? 0 : folderBytes(poclCache)}};
  nlohmann::json series = nlohmann::json::array();
  for (size_t i = 0; i < samples.size(); i += 12) {
    series.push_back({samples[i].minutes, samples[i].rssKb, samples[i].descriptors,
                      samples[i].descendants});
  }
  report["series_minutes_rsskb_fds_descendants"] = series;
  const bool longEnough = minutes >= 60;
  const bool invariantsHold = lost == 0 && duplicated == 0 && unknown == 0 && running == 0 &&
                              reruns <= static_cast<size_t>(killCount) && leftBehind.empty();
  const bool memoryHolds = !std::isnan(growth) && growth < 0.10;
  report["targets"] = {{"at_least_60_minutes", longEnough},
                       {"no_explorer_death", !explorerDied},
                       {"memory_growth_under_10_percent", memoryHolds},
                       {"every_variant_once", invariantsHold}};
  const fs::path jsonPath = writeResultsJson(report, o.out, fs::path(WEFT_BENCH_RESULTS_DIR) / "soak.json");

  fs::path mdPath = jsonPath;
  mdPath.replace_extension(".md");
  std::ofstream md(mdPath);
  md << "# Soak: a long exploration under planted faults (issue 32)\n\n"
     << report["date"].get<std::string>() << " on " << profile.deviceName
     << " (fingerprint " << profile.fingerprint << "). `weft_bench_soak --minutes " << o.minutes
     << " --samples " << o.samples << " --kill-every " << o.killEverySeconds
     << "`: one explorer process explores the layers " << fmt::format("{}", fmt::join(o.layers, "; "))
     << " in turn (" << o.samples << " samples each, a new seed each round), with faults planted per"
     << " variant (per mille: wrong " << o.wrongPerMille << ", crash " << o.crashPerMille
     << ", hang " << o.hangPerMille << ", build error " << o.buildErrorPerMille
     << ", crash in generation " << o.generationCrashPerMille << ", hang in generation "
     << o.generationHangPerMille << ") and children SIGKILLed about every " << o.killEverySeconds
     << " s.\n\n"
     << "| figure | value |\n|---|---:|\n"
     << fmt::format("| minutes | {:.1f} |\n", minutes)
     << fmt::format("| explorations | {} ({} failed) |\n", explorations, explorationErrors.size())
     << fmt::format("| explorer's end | {} |\n", explorerEnd)
     << fmt::format("| variants recorded | {} |\n", recorded)
     << fmt::format("| variants per minute | {:.1f} |\n", minutes > 0 ? recorded / minutes : 0.0);
  for (const auto& [status, count] : statuses) md << "| status " << status << " | " << count << " |\n";
  for (const auto& [victim, count] : kills) md << "| kills of the " << victim << " | " << count << " |\n";
  md << fmt::format("| sampled / lost / duplicated / left running | {} / {} / {} / {} |\n",
                    sampledCount, lost, duplicated, running)
     << fmt::format("| left unstarted by the time limit | {} |\n", leftByTimeLimit)
     << fmt::format("| variants started again (at most the kills, {}) | {} |\n", killCount, reruns)
     << fmt::format("| processes left 5 s after the explorer ended | {} |\n", leftBehind.size())
     << fmt::format("| explorer resident memory: after the first exploration / after the first "
                    "round / max / end (MB) | {:.1f} / {:.1f} / {:.1f} / {:.1f} |\n",
                    rssFirst / 1024.0, rssRound / 1024.0, rssMax / 1024.0, rssEnd / 1024.0)
     << fmt::format("| memory growth from the end of the first {} | {:.1f} % |\n",
                    rssRound > 0 ? "round (every layer once)" : "exploration", growth * 100)
     << fmt::format("| open descriptors: first / end | {} / {} |\n",
                    report["descriptors"]["first"].get<long>(), report["descriptors"]["end"].get<long>())
     << fmt::format("| PoCL cache: start / end (MB) | {:.1f} / {:.1f} |\n",
                    report["pocl_cache_bytes"]["start"].get<uint64_t>() / 1048576.0,
                    report["pocl_cache_bytes"]["end"].get<uint64_t>() / 1048576.0)
     << "\n## Targets\n\n| target | verdict |\n|---|---|\n"
     << "| at least 60 minutes | " << (longEnough ? "MET" : "NOT MET") << " |\n"
     << "| no explorer death | " << (!explorerDied ? "MET" : "NOT MET") << " |\n"
     << "| memory growth < 10 % | " << (memoryHolds ? "MET" : "NOT MET") << " |\n"
     << "| every sampled variant recorded once, none running, no process left | "
     << (invariantsHold ? "MET" : "NOT MET") << " |\n";
  if (!explorationErrors.empty()) {
    md << "\n## Explorations that failed\n\n";
    for (const std::string& error : explorationErrors) md << "- " << error << "\n";
  }
  fmt::print("soak: {:.1f} min, {} variants, explorer {}, lost {}, duplicated {}, running {}, "
             "memory growth {:.1f} %; {} and {}\n",
             minutes, recorded, explorerEnd, lost, duplicated, running, growth * 100,
             jsonPath.string(), mdPath.string());
  std::error_code ignored;
  if (o.db.rfind(folder.string(), 0) != 0) fs::remove_all(folder, ignored);
  return explorerDied || !invariantsHold ? 1 : 0;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Options options;
  CLI::App app{"A long exploration of small layers with planted faults and killed children; "
               "writes bench/results/soak.{json,md}"};
  app.add_option("--minutes", options.minutes, "how long the exploration runs (60)");
  app.add_option("--samples", options.samples, "samples per layer and round (300)");
  app.add_option("--kill-every", options.killEverySeconds,
                 "seconds between kills of a child, on average (30; 0.5x to 1.5x at random)");
  app.add_option("--timeout", options.timeoutSeconds, "the explorer's cap per phase (10 s)");
  app.add_option("--seed", options.seed, "seed of the sampler, the faults and the kills (1)");
  app.add_option("--db", options.db, "the results database (default: a temporary folder's)");
  app.add_option("--device", options.device, "OpenCL device");
  app.add_option("--out", options.out, "results JSON (default bench/results/soak.json)");
  app.add_option("--layers", options.layers, "layers C,H,W,M,K,S,P, separated by ';'")->delimiter(';');
  return weft::bench::parseAndRun(app, argc, argv, "weft_bench_soak",
                                  [&] { return weft::bench::run(options); });
}
