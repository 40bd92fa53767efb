// `weft explore --layer vgg16:N | --layer C,H,W,M,K,stride,pad | --all-vgg16 | FILE
// [--size N=V]... --samples K --seed S --db results.db [--shard i/N] [--device D] [--profile P]
// [--vector-width V] [--unroll 0|1] [--timeout SECONDS] [--jobs J] [--order cost|random] [--quiet]
// [--json]`: samples K variants
// of a layer (the conv-direct strategy on Listing 3, over every (v, unroll) structure unless
// --vector-width / --unroll fix them) or of a program file (its unbound
// size variables are the tuning parameters), and builds, runs, verifies and times each one in a
// child process (explore/explorer.h), writing every result to the SQLite database as it comes.
// Re-running the same command resumes: variants already in the database are skipped.
// --all-vgg16 explores the 13 VGG-16 layers one after the other (K samples each) into the same
// database, each under its own program name (conv1_1 ... conv5_3).
// --shard i/N (1 <= i <= N, counted from 1 like a Slurm array's task ids) runs only the sampled
// points whose index (from 0) satisfies index % N == i - 1; every shard samples the same list,
// so N machines with the same seed and profile share one exploration, and `weft merge` joins
// their databases.
// --jobs J (default: the number of cores) builds up to J variants ahead at once in pre-build
// processes that fill the OpenCL build cache; the variants are still run and timed one at a
// time, with the pre-builds stopped meanwhile (explore/explorer.h). --jobs 1 builds each
// variant in its measuring process only.
// --order cost (default) measures the sampled variants of a layer in ascending predicted cost
// (workloads/conv/cost_model.h), the families taking turns among those predicted near the
// cheapest (explore/explorer.h orderFamiliesTakingTurns), so that the fast ones set the
// cut-offs before the slow ones run;
// --order random keeps the sampled order. The set of variants is the same either way.
// --candidates C (default 8) samples C times as many points, and one of every structure those
// miss, and keeps --samples of them: half the cheapest the cost model predicts, half a seeded
// draw from the rest (explore/explorer.h sampleCandidates); 1 keeps the points as sampled.
//
// Progress goes to stderr (done/total, failures by status, best time, ETA; one line per
// variant when stderr is not a terminal); --quiet leaves it out. Structures whose space is empty
// with these sizes on this device are one summary line (--verbose: each with its conflicting
// constraints). The summary goes to stdout;
// with --json every variant is one JSON line on stdout and the summary the last one.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/program_loading.h"
#include "explore/database_lock.h"
#include "explore/explorer.h"
#include "explore/workload.h"
#include "ir/parser.h"
#include "rewrite/sequence_search.h"
#include "workloads/conv/conv_targets.h"

namespace weft::cli {

namespace {

using Json = nlohmann::json;

struct ExploreCommandOptions {
  std::string file;
  std::string definition;
  std::vector<std::string> sizes;
  std::string layer;
  std::string instance;  // a named instance of any registered workload
  bool allVgg16 = false;
  std::string shard;     // "i/N", 1-based
  int vectorWidth = -1;  // -1: every width (1, 2, 4, 8, 16)
  int unroll = -1;       // -1: both
  std::string family;    // --layer: only these families (comma-separated)
  size_t samples = 1000;
  uint64_t seed = 1;
  std::string db = "results.db";
  std::string device;
  std::string profile;
  double timeout = 120;
  double timeLimit = 0;
  double minTimeMs = 100;
  int minRepeats = 3;
  size_t jobs = std::max(1u, std::thread::hardware_concurrency());
  bool buildWhileTiming = false;
  std::string order = "cost";
  size_t candidates = 8;
  std::string fusion =
      "auto";  // FILE: auto, none or strategy names (workloads/pipeline/pipeline_target.h)
  std::string search = "auto";             // FILE: the rewrite-sequence search: auto, on or off
  int searchDepth = -1;                    // FILE: its algorithmic steps (-1: the default)
  std::vector<std::string> searchWithout;  // FILE: its heuristics switched off
  bool quiet = false;
  bool verbose = false;
  bool json = false;
};

std::string durationText(double seconds) {
  long total = static_cast<long>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  return text;
}

std::string millisecondsText(uint64_t nanoseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(nanoseconds) * 1e-6);
  return text;
}

std::string progressLine(const explore::ProgressUpdate& update) {
  std::ostringstream line;
  line << "[" << update.done << "/" << update.total << "]";
  std::string failures;
  for (const auto& [status, count] : update.statusCounts) {
    line << " " << status << " " << count;
  }
  line << " | best " << (update.bestNs ? millisecondsText(*update.bestNs) : std::string("-"));
  if (update.etaSeconds) line << " | ETA " << durationText(*update.etaSeconds);
  return line.str();
}

// "i/N" with 1 <= i <= N -> (i - 1, N).
std::pair<size_t, size_t> parseShard(const std::string& text) {
  const std::string expected = "--shard " + text +
                               ": expected i/N with 1 <= i <= N (shards are counted from 1, "
                               "e.g. --shard 1/8 ... --shard 8/8 as Slurm's --array=1-8)";
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size()) {
    throw std::invalid_argument(expected);
  }
  auto number = [&](const std::string& part) -> size_t {
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string::npos) {
      throw std::invalid_argument(expected);
    }
    return static_cast<size_t>(std::stoul(part));
  };
  size_t index = number(text.substr(0, slash));
  size_t count = number(text.substr(slash + 1));
  if (count == 0 || index == 0 || index > count) throw std::invalid_argument(expected);
  return {index - 1, count};
}

Json recordJson(const explore::VariantRecord& record) {
  Json out{{"program", record.key.program},
           {"device", record.key.device},
           {"parameters", Json::parse(record.key.parameters, nullptr, false)},
           {"status", explore::statusName(record.status)},
           {"message", record.message},
           {"sourceHash", record.sourceHash},
           {"samplesNs", record.samplesNs}};
  out["medianNs"] = record.medianNs ? Json(*record.medianNs) : Json(nullptr);
  out["spaceBytes"] = record.spaceBytes ? Json(*record.spaceBytes) : Json(nullptr);
  out["buildMs"] = record.buildMs ? Json(*record.buildMs) : Json(nullptr);
  return out;
}

// The request the options make (a program FILE, a --layer, every VGG-16 layer or an
// --instance) and the workload that accepts it (explore/workload.h); bad options are
// reported here, before the device is queried.
std::pair<explore::WorkloadRequest, std::shared_ptr<const explore::Workload>> exploreRequest(
    const ExploreCommandOptions& options) {
  const int sources = (options.layer.empty() ? 0 : 1) + (options.allVgg16 ? 1 : 0) +
                      (options.file.empty() ? 0 : 1) + (options.instance.empty() ? 0 : 1);
  if (sources > 1) {
    throw std::invalid_argument("give one of FILE, --layer, --all-vgg16 or --instance");
  }
  if (sources == 0) throw std::invalid_argument("give a FILE, --layer or --all-vgg16");
  explore::WorkloadRequest request;
  if (!options.file.empty()) {
    Program program = parseFile(options.file);
    const Definition& definition =
        chooseFunctionDefinition(program, options.file, options.definition, "explore");
    std::set<std::string> known = mentionedSizeNames(definition);
    for (const Arith& declared : definition.sizeDeclarations) known.insert(declared.varName());
    request.sizes = parseSizeOptions(options.sizes, definition, known);
    checkSizeValues(definition, request.sizes);
    request.program = definition;
    request.options["fusion"] = options.fusion;
    request.options["search"] = options.search;
    if (options.searchDepth >= 0) {
      request.options["search-depth"] = std::to_string(options.searchDepth);
    }
    for (const std::string& name : options.searchWithout) {
      std::string& list = request.options["search-without"];
      list += (list.empty() ? "" : ",") + name;
    }
  } else {
    if (!options.sizes.empty()) {
      throw std::invalid_argument("--size is for FILE, not --layer or --all-vgg16");
    }
    request.instance = options.allVgg16            ? "vgg16"
                       : !options.instance.empty() ? options.instance
                                                   : options.layer;
    if (options.vectorWidth >= 0) {
      request.options["vector-width"] = std::to_string(options.vectorWidth);
    }
    if (options.unroll >= 0) request.options["unroll"] = std::to_string(options.unroll);
    if (!options.family.empty()) request.options["family"] = options.family;
    // Checked here too, so that a bad value is reported before a layer spec is read.
    explore::convDirectChoices(options.vectorWidth, options.unroll);
  }
  std::shared_ptr<const explore::Workload> workload = explore::workloadFor(request);
  return {std::move(request), workload};
}

// Why code generation failed for a structure, without the names and numbers of the program it
// failed on: the code generator's message up to its first parenthesis or semicolon; "" where
// `text` does not say that generation failed.
std::string codegenFailure(const std::string& text) {
  const std::string marker = "codegen error: ";
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  std::string message = text.substr(at + marker.size());
  message =
      message.substr(0, std::min({message.find(" ("), message.find(';'), message.find('\n')}));
  return "code generation failed: " + message;
}

// One line for the structures without valid variants (a space that is empty on this device is
// expected: a register budget or a vector width rules out some blocks), with the most frequent
// reason: the phrase in parentheses that ends the last explained constraint of each conflict,
// or the code generator's message.
std::string emptyStructuresSummary(const std::vector<std::string>& empty, size_t withVariants) {
  std::map<std::string, size_t> reasons;
  for (const std::string& text : empty) {
    std::string reason = codegenFailure(text);
    if (reason.empty()) reason = text.substr(0, text.find('\n'));
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const size_t open = line.rfind(" (");
      if (line.rfind("  - ", 0) == 0 && !line.empty() && line.back() == ')' &&
          open != std::string::npos) {
        reason = line.substr(open + 2, line.size() - open - 3);
      }
    }
    ++reasons[reason];
  }
  const auto most =
      std::max_element(reasons.begin(), reasons.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  return std::to_string(empty.size()) + " of " + std::to_string(empty.size() + withVariants) +
         " structures have no valid variant (with these sizes and this device; " +
         std::to_string(most->second) + " of them: " + most->first +
         "); --verbose lists each with its conflicting constraints";
}

// Explores one target (prepare, then run) and prints its summary.
void exploreOne(const explore::ExploreTarget& target, const explore::ExploreOptions& explore,
                const ExploreCommandOptions& options, const std::string& position) {
  const bool terminal = isatty(STDERR_FILENO);
  if (!options.quiet) {
    std::cerr << "weft explore" << position << ": " << target.description << "\n";
    std::cerr << "preparing: device query, reference run, space and " << options.samples
              << " samples...\n";
  }
  // Counting the structures' spaces can take a while: after two seconds, a line every two
  // seconds says how far it is.
  explore::ExploreOptions preparing = explore;
  if (!options.quiet) {
    using Clock = std::chrono::steady_clock;
    auto started = std::make_shared<std::optional<Clock::time_point>>();
    auto shown = std::make_shared<std::optional<Clock::time_point>>();
    preparing.sampler.onSpaceCounted = [=](size_t counted, size_t spaces) {
      const Clock::time_point now = Clock::now();
      if (!*started) *started = now;
      const bool last = counted == spaces;
      const bool due = now - **started >= std::chrono::seconds(2) &&
                       (!*shown || now - **shown >= std::chrono::seconds(2));
      if (!due && !(last && *shown)) return;
      *shown = now;
      const double seconds = std::chrono::duration<double>(now - **started).count();
      std::ostringstream line;
      line << "counting the structures' spaces: " << counted << " of " << spaces << " ("
           << std::fixed << std::setprecision(0) << seconds << " s)";
      if (terminal) {
        std::cerr << "\r\033[K" << line.str() << (last ? "\n" : "") << std::flush;
      } else {
        std::cerr << line.str() << "\n";
      }
    };
  }
  explore::Preparation prep = explore::prepareExploration(target, preparing);
  if (!options.quiet) {
    std::cerr << "device " << prep.device.deviceName << " (" << prep.device.fingerprint
              << "), constraints from profile " << prep.deviceProfileName << "; "
              << prep.points.size() << " points";
    if (explore.shardCount > 1) {
      std::cerr << " (shard " << explore.shardIndex + 1 << "/" << explore.shardCount << " of "
                << prep.sampledBeforeShard << ")";
    }
    std::cerr << " (" << prep.samplingMethod << ", " << prep.samplingSeconds << " s)"
              << (prep.fewerThanRequested ? ", fewer valid points than requested" : "");
    if (prep.candidatesDrawn > 0) {
      std::cerr << "; kept of " << prep.candidatesDrawn
                << " candidates: half the cheapest predicted, half at random";
    }
    std::cerr << "\n";
    if (options.verbose) {
      for (const std::string& empty : prep.emptyStructures) {
        std::cerr << "structure without valid variants: " << empty << "\n";
      }
    } else if (!prep.emptyStructures.empty()) {
      std::cerr << emptyStructuresSummary(prep.emptyStructures, prep.spaces.size()) << "\n";
    }
    if (prep.reference) {
      std::cerr << "reference (default lowering): " << millisecondsText(prep.reference->medianNs)
                << "; " << prep.referenceCheck << "\n";
    } else {
      std::cerr << prep.referenceCheck << "\n";
    }
  }
  explore::ExploreSummary summary = explore::runExploration(prep, explore);
  if (!options.quiet && terminal) std::cerr << "\n";

  if (options.json) {
    Json out{{"program", target.program},
             {"device", prep.device.fingerprint},
             {"db", options.db},
             {"sampled", summary.sampled},
             {"skipped", summary.skipped},
             {"ran", summary.ran},
             {"leftByTimeLimit", summary.leftByTimeLimit},
             {"statusCounts", summary.statusCounts},
             {"seconds", summary.seconds},
             {"weftSeconds", summary.weftSeconds}};
    if (explore.shardCount > 1) {
      out["shard"] =
          std::to_string(explore.shardIndex + 1) + "/" + std::to_string(explore.shardCount);
      out["sampledAllShards"] = prep.sampledBeforeShard;
    }
    out["bestNs"] = summary.bestNs ? Json(*summary.bestNs) : Json(nullptr);
    out["bestParameters"] = summary.bestParameters.empty()
                                ? Json(nullptr)
                                : Json::parse(summary.bestParameters, nullptr, false);
    if (prep.reference) out["referenceNs"] = prep.reference->medianNs;
    std::cout << out.dump() << std::endl;
    return;
  }
  std::cout << target.program << ": " << summary.sampled << " sampled";
  if (explore.shardCount > 1) {
    std::cout << " (shard " << explore.shardIndex + 1 << "/" << explore.shardCount << " of "
              << prep.sampledBeforeShard << ")";
  }
  std::cout << ", " << summary.skipped << " already in " << options.db << ", " << summary.ran
            << " run";
  for (const auto& [status, count] : summary.statusCounts) {
    std::cout << (status == summary.statusCounts.begin()->first ? ": " : ", ") << status << " "
              << count;
  }
  std::cout << " (" << summary.seconds << " s)\n";
  if (summary.leftByTimeLimit > 0) {
    std::cout << "stopped at the time limit: " << summary.leftByTimeLimit
              << " variants left for a later run of the same command\n";
  }
  if (summary.ran > 0) {
    // Sampling is paid once per run, whatever the number of variants; the rest per variant.
    const double ran = static_cast<double>(summary.ran);
    char weftTime[256];
    std::snprintf(weftTime, sizeof weftTime,
                  "%.2f ms per variant (code generation, bookkeeping), plus sampling once: "
                  "%.3f s (%.2f ms per variant over these %zu)",
                  1e3 * (summary.weftSeconds - summary.samplingSeconds) / ran,
                  summary.samplingSeconds, 1e3 * summary.samplingSeconds / ran, summary.ran);
    std::cout << "weft's own time (not the OpenCL builds, runs or checks): " << weftTime << "\n";
  }
  if (summary.bestNs) {
    std::cout << "best: " << millisecondsText(*summary.bestNs) << " " << summary.bestParameters;
    if (prep.reference && *summary.bestNs > 0) {
      std::cout << " ("
                << static_cast<double>(prep.reference->medianNs) /
                       static_cast<double>(*summary.bestNs)
                << "x the default lowering's " << millisecondsText(prep.reference->medianNs) << ")";
    }
    std::cout << "\n";
  } else {
    std::cout << "no variant ran correctly yet\n";
  }
}

void runExplore(const ExploreCommandOptions& options) {
  explore::ExploreOptions explore;
  if (!options.shard.empty()) {
    std::tie(explore.shardIndex, explore.shardCount) = parseShard(options.shard);
  }
  const auto [request, workload] = exploreRequest(options);
  // Held until the command ends: a second explorer on this database is refused.
  const explore::DatabaseLock lock(options.db);
  explore.samples = options.samples;
  explore.seed = options.seed;
  explore.db = options.db;
  explore.device = options.device;
  explore.profile = options.profile;
  // The workload shapes its targets by the device whose constraints the exploration uses
  // (a GPU's space differs from a CPU's).
  const host::DeviceProfile profile = explore::explorationProfile(explore);
  std::vector<explore::ExploreTarget> targets = workload->targets(request, &profile);
  explore.timeoutSeconds = options.timeout;
  if (options.timeLimit < 0) throw std::invalid_argument("--time-limit must not be negative");
  explore.timeLimitSeconds = options.timeLimit;
  if (options.jobs < 1) throw std::invalid_argument("--jobs must be at least 1");
  explore.jobs = options.jobs;
  explore.buildWhileTiming = options.buildWhileTiming;
  explore.order = *explore::parseSampleOrder(options.order);  // checked by CLI11
  if (options.candidates < 1) throw std::invalid_argument("--candidates must be at least 1");
  explore.candidates = options.candidates;
  explore.measurement.minMeasuredNs = static_cast<uint64_t>(options.minTimeMs * 1e6);
  explore.measurement.minRepeats = options.minRepeats;
  const bool terminal = isatty(STDERR_FILENO);
  explore.progress = [&](const explore::ProgressUpdate& update) {
    if (options.json && update.last) std::cout << recordJson(*update.last).dump() << std::endl;
    if (options.quiet) return;
    std::string line = progressLine(update);
    if (terminal) {
      std::cerr << "\r\033[K" << line << std::flush;
    } else if (update.last) {
      const explore::VariantRecord& last = *update.last;
      std::cerr << line << " | " << explore::statusName(last.status) << " "
                << (last.medianNs ? millisecondsText(*last.medianNs) : std::string()) << " "
                << last.key.parameters << "\n";
    } else {
      std::cerr << line << " (" << update.skipped << " already in the database)\n";
    }
  };

  // A corrupt or foreign database is reported before the (long) preparation.
  {
    explore::ResultsDb check(options.db);
    if (!check.migrationNote().empty()) std::cerr << check.migrationNote() << "\n";
  }
  if (targets.size() == 1) {
    exploreOne(targets.front(), explore, options, "");
  } else {
    // Several layers: one that cannot be explored (no valid variant, a failing reference) is
    // reported and the others go on; the command fails at the end. A bad database stops all.
    std::vector<std::string> failed;
    for (size_t i = 0; i < targets.size(); ++i) {
      try {
        exploreOne(targets[i], explore, options,
                   " [" + std::to_string(i + 1) + "/" + std::to_string(targets.size()) + "]");
      } catch (const explore::ResultsDbError&) {
        throw;
      } catch (const std::exception& error) {
        std::cerr << "weft explore: " << targets[i].program << " skipped: " << error.what() << "\n";
        failed.push_back(targets[i].program);
      }
    }
    if (!failed.empty()) {
      std::string names;
      for (const std::string& name : failed) names += (names.empty() ? "" : ", ") + name;
      if (!options.json) std::cout << "report: weft report --db " << options.db << "\n";
      throw std::runtime_error(std::to_string(failed.size()) + " of " +
                               std::to_string(targets.size()) +
                               " layers could not be explored: " + names);
    }
  }
  if (!options.json) {
    std::cout << "report: weft report --db " << options.db << "\n";
    // The command that exports the best variant as a drop-in, where one target was explored.
    if (targets.size() == 1 && (!options.file.empty() || !options.layer.empty())) {
      std::string source = options.file.empty() ? "--layer " + options.layer : options.file;
      if (!options.definition.empty()) source += " --def " + options.definition;
      for (const std::string& size : options.sizes) source += " --size " + size;
      std::cout << "export: weft emit " << source << " --db " << options.db
                << " --pick fastest --out DIR\n";
    }
  }
}

}  // namespace

void registerExplore(CLI::App& app) {
  auto options = std::make_shared<ExploreCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "explore",
      "Sample variants of a layer (the conv-direct strategy) or of a parametric program,\n"
      "build, run, verify and time each one in its own process, and record every result\n"
      "in a SQLite database. Re-running the same command resumes where it stopped.");
  command->add_option("file", options->file, "a .weft file (or --layer)");
  command
      ->add_option("--layer", options->layer,
                   "a convolution layer: vgg16:N (the LIFT paper's numbers 0, 2, 5, ... 28) "
                   "or C,H,W,M,K,stride,pad")
      ->type_name("SPEC");
  command
      ->add_option("--instance", options->instance,
                   "a named instance of any registered workload (listed below); a layer "
                   "spec is one")
      ->type_name("SPEC");
  command->add_flag("--all-vgg16", options->allVgg16,
                    "explore the 13 VGG-16 layers one after the other (--samples each) into "
                    "the same database, each under its own name (conv1_1 ... conv5_3)");
  command
      ->add_option("--shard", options->shard,
                   "run only shard i of N (1 <= i <= N) of the sampled points: those whose "
                   "index (from 0) % N == i - 1; same --seed and --profile on every machine, "
                   "then weft merge")
      ->type_name("i/N");
  command->add_option("--def", options->definition, "FILE: the definition (default: the last)")
      ->type_name("NAME");
  command->add_option("--size", options->sizes, "FILE: bind a size variable, e.g. N=1024")
      ->type_name("N=V")
      ->allow_extra_args(false);
  command
      ->add_option("--vector-width", options->vectorWidth,
                   "--layer: only conv-direct's vector width v (1, 2, 4, 8 or 16; default: "
                   "every width, sampled uniformly over all variants)")
      ->type_name("V");
  command
      ->add_option("--unroll", options->unroll,
                   "--layer: only conv-direct's unroll setting (0 or 1; default: both)")
      ->type_name("0|1");
  command
      ->add_option("--family", options->family,
                   "--layer/--all-vgg16: only these families of structures, comma-separated "
                   "(conv-direct, register-blocked-vector, winograd, workgroup-tiled; default: "
                   "every family the device's space offers, each with its share of the samples)")
      ->type_name("NAME,...");
  command
      ->add_option("--samples", options->samples,
                   "variants to sample (default 1000, the LIFT paper's count per layer)")
      ->type_name("K");
  command->add_option("--seed", options->seed, "seed of the sampler (default 1)")->type_name("S");
  command->add_option("--db", options->db,
                      "the results database (default results.db); one explorer at a time "
                      "writes it (FILE.lock), a second is refused")
      ->type_name("FILE");
  command
      ->add_option("--device", options->device,
                   "OpenCL device: an index, gpu, cpu, or part of its name (default: the "
                   "first GPU, else the first CPU)")
      ->type_name("D");
  command
      ->add_option("--profile", options->profile,
                   "device profile for the hardware constraints (built-in name, user profile "
                   "or .json; default: the queried device)")
      ->type_name("PROFILE");
  command
      ->add_option("--timeout", options->timeout,
                   "cap in seconds on each phase of a variant (default 120); the warm-up run "
                   "is also cut off at 10x the best time + 5 s + 5x the variant's build time "
                   "(for what the device compiles at a first launch)")
      ->type_name("SECONDS");
  command
      ->add_option("--time-limit", options->timeLimit,
                   "start no variant after this many seconds of measuring (default 0: no "
                   "limit; the preparation is not counted); the variant running then "
                   "finishes, and running the same command again goes on with the rest")
      ->type_name("SECONDS");
  command
      ->add_option("--min-time", options->minTimeMs,
                   "time each variant until this many ms of kernel time (default 100)")
      ->type_name("MS");
  command
      ->add_option(
          "--min-repeats", options->minRepeats,
          "time each variant at least this many times (default 3); a variant whose warm-up "
          "run is over 10x the best time so far is timed by that run alone")
      ->type_name("N");
  command
      ->add_option("--jobs", options->jobs,
                   "variants built at once ahead of the one being measured, in their own "
                   "processes (default: the number of cores); runs stay one at a time")
      ->type_name("J");
  command->add_flag("--build-while-timing", options->buildWhileTiming,
                    "let those builds go on while a variant is timed (for GPUs; by default "
                    "they stop, so that they do not compete with kernels on a CPU device)");
  command
      ->add_option("--order", options->order,
                   "in which order the sampled variants are measured: cost (default; layers: "
                   "ascending predicted cost, the structure families taking turns among the "
                   "variants predicted within 3x of the cheapest, so that cut-offs bite early) "
                   "or random (the sampled order); the set of variants is the same")
      ->check(CLI::IsMember({"cost", "random"}))
      ->type_name("cost|random");
  command
      ->add_option("--candidates", options->candidates,
                   "sample this many times --samples points (and one of every structure they "
                   "miss) and keep --samples of them: half the cheapest the workload's cost "
                   "model predicts, half at random from the rest (default 8; 1: keep the "
                   "points as sampled; without a cost model the points are kept as sampled)")
      ->type_name("C");
  command
      ->add_option("--fusion", options->fusion,
                   "FILE: which fusions of an image pipeline to explore besides the program "
                   "as written: auto (default: every fusion strategy that applies, "
                   "pipeline-fused-private, pipeline-fused-local, "
                   "pipeline-fused-private-pointwise, pipeline-fused-private-chain, "
                   "pipeline-fused-private-tuples, pipeline-fused-sliding-window, "
                   "pipeline-fused-sliding-window-tuples, "
                   "pipeline-fused-sliding-window-pointwise, "
                   "pipeline-line-buffered-pointwise, pipeline-line-buffered, "
                   "pipeline-fused-inlined, pipeline-inlined-rows, "
                   "pipeline-fused-private-chain-pairs and pipeline-column-walk, each a "
                   "structure whose tile sizes or strip heights and local sizes are sampled; "
                   "recorded as fusion=1 to 14, 9, 10, 12 and 14 with the device's vector width "
                   "as vector_width (where it does not divide the rows: vector_pad=1, rows "
                   "padded to whole vectors, and the widest width that divides them); 0 is the "
                   "program as written), none, or a comma-separated "
                   "list of strategy names")
      ->type_name("auto|none|NAME,...");
  command
      ->add_option("--search", options->search,
                   "FILE: explore the programs the rewrite-sequence search reaches from the "
                   "program (algorithmic rules, then lowering choices; see weft rewrite "
                   "--search): auto (default: when no fusion strategy applies), on, or off; "
                   "recorded as rewrite=HASH with the rule sequence as the strategy")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->type_name("auto|on|off");
  command
      ->add_option("--search-depth", options->searchDepth,
                   "FILE: algorithmic steps of the rewrite search (default 3)")
      ->check(CLI::Range(0, 6));
  command
      ->add_option("--search-without", options->searchWithout,
                   "FILE: switch a heuristic of the rewrite search off (" +
                       rewrite::searchHeuristicNames() + ")")
      ->type_name("HEURISTIC");
  command->add_flag("--quiet", options->quiet, "no progress on stderr");
  command->add_flag("--verbose", options->verbose,
                    "list every structure without valid variants with the constraints that "
                    "conflict (by default one summary line)");
  command->add_flag("--json", options->json,
                    "one JSON line per variant on stdout, then a JSON summary");
  std::string workloads;
  for (const auto& workload : explore::registeredWorkloads()) {
    workloads += "  " + workload->name() + ": " + workload->summary() + "\n";
  }
  command->footer(
      "Workloads (what can be explored; each variant is recorded with its workload):\n" +
      workloads +
      "\nExamples (a small layer, a few samples; the paper's runs are --layer vgg16:N "
      "--samples 1000, or --all-vgg16):\n"
      "  weft explore --layer 8,16,16,8,3,1,1 --samples 12 --seed 1 --db results.db\n"
      "  weft report --db results.db\n"
      "  weft explore examples/matmul.weft --size M=64 --size N=64 --size K=64 --samples 4 "
      "--db results.db\n"
      "  # one of 3 shards of the same points (each machine runs one; then weft merge):\n"
      "  weft explore --layer 8,16,16,8,3,1,1 --samples 12 --seed 1 --shard 2/3 --db "
      "shard-2.db\n");
  command->callback([options] { runExplore(*options); });
}

}  // namespace weft::cli
