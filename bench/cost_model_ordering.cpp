// weft_bench_cost_model_ordering: how well the static cost model (workloads/conv/cost_model.h) orders
// an exploration's samples, and what measuring them in that order saves (issues 6 and 8).
//
//  (a) offline, on a results database already measured (default /work/explore-runs/vgg16.db,
//      copied to a temporary folder first, never written): per layer and per family, Spearman's
//      rank correlation between the predicted cost and the measured median of the ok variants;
//      where the timed-out variants rank among the predictions; and how many samples (and how
//      many recorded child seconds) it takes to get within 10 % of the layer's best if the
//      samples had been measured in the explorer's cost order (orderFamiliesTakingTurns)
//      instead of their recorded order.
//      Replaying recorded child seconds is an upper bound for the cost order: with a fast
//      variant first, later slow ones would be cut off or timed once sooner than recorded.
//  (b) --live: the same exploration (one layer, --samples, --seed) run twice in this process,
//      with --order random and --order cost, into separate new databases and separate PoCL
//      cache folders (no build cached across the two runs): wall time, samples and seconds
//      until within 10 % of the best of both runs, best time, statuses, variants timed once.
// Writes bench/results/cost_model.json and cost_model.md. The machine is shared: live wall
// times move with its load (the output says so).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench/rank_correlation.h"
#include "workloads/conv/cost_model.h"
#include "explore/explorer.h"
#include "explore/results_db.h"
#include "host/device_profile.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif

namespace {

using Json = nlohmann::ordered_json;
using namespace weft;
using namespace weft::explore;
using weft::bench::ranks;
using weft::bench::spearman;

// A recorded variant's family, from the parameters its structure has.
std::string familyOf(const VariantRecord& row) {
  const std::string& parameters = row.key.parameters;
  if (parameters.find("winograd_m") != std::string::npos) return "winograd";
  if (parameters.find("vector_kappa") != std::string::npos) return "register-blocked-vector";
  if (parameters.find("tiled_rk") != std::string::npos) return "workgroup-tiled";
  return "conv-direct";
}

Json optionalNumber(const std::optional<double>& value) {
  return value ? Json(std::round(*value * 1000) / 1000) : Json(nullptr);
}

std::string fixed(const std::optional<double>& value, int digits = 2) {
  if (!value) return "–";
  std::ostringstream out;
  out.precision(digits);
  out << std::fixed << *value;
  return out.str();
}

double childSeconds(const VariantRecord& row) {
  Json details = Json::parse(row.details, nullptr, false);
  return details.is_object() ? details.value("childSeconds", 0.0) : 0.0;
}

// Position (1-based) of the first row of `order` whose median is within `factor` of `best`,
// and the child seconds recorded up to and including it.
std::pair<std::optional<size_t>, double> untilWithin(const std::vector<const VariantRecord*>& order,
                                                     uint64_t best, double factor) {
  double seconds = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    seconds += childSeconds(*order[i]);
    if (order[i]->status == VariantStatus::Ok && order[i]->medianNs &&
        static_cast<double>(*order[i]->medianNs) <= factor * static_cast<double>(best)) {
      return {i + 1, seconds};
    }
  }
  return {std::nullopt, seconds};
}

std::optional<ConvLayer> vggLayerNamed(const std::string& name) {
  for (const ConvLayer& layer : vgg16Layers()) {
    if (layer.name == name) return layer;
  }
  return std::nullopt;
}

struct OfflineTotals {
  size_t recordedSamples = 0, costSamples = 0;
  double recordedSeconds = 0, costSeconds = 0;
};

Json offline(const std::filesystem::path& source, const host::DeviceProfile& profile,
             std::ostream& md) {
  // A copy: the source may be another run's live database, and is never written.
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / ("weft-cost-model-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  const std::filesystem::path copy = folder / "copy.db";
  std::filesystem::copy_file(source, copy, std::filesystem::copy_options::overwrite_existing);
  for (const char* suffix : {"-wal", "-shm"}) {
    std::filesystem::path side = source.string() + suffix;
    if (std::filesystem::exists(side)) {
      std::filesystem::copy_file(side, copy.string() + suffix,
                                 std::filesystem::copy_options::overwrite_existing);
    }
  }
  Json out;
  out["database"] = source.string();
  out["profile"] = profile.name;
  Json layers = Json::array();
  OfflineTotals totals;
  std::vector<double> allPredicted, allMeasured;
  double predictMicroseconds = 0;
  size_t predictions = 0;
  md << "## (a) Offline: " << source.string() << " (profile " << profile.name << ")\n\n"
     << "Spearman's rank correlation between predicted cost and measured median (ok variants); "
        "timeouts' mean predicted-cost percentile (100 = predicted slowest); samples and recorded "
        "child seconds until a variant within 10 % of the layer's best, in the recorded order vs "
        "in the explorer's cost order (families taking turns near the cheapest prediction).\n\n"
     << "| layer | ok / rows | rho all | rho conv-direct | rho vector | rho winograd | "
        "timeouts' percentile | to 10 %: recorded | to 10 %: cost order | seconds: recorded | "
        "seconds: cost order |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  {
    ResultsDb db(copy);
    for (const std::string& program : db.programs()) {
      std::optional<ConvLayer> layer = vggLayerNamed(program);
      if (!layer) continue;
      std::vector<VariantRecord> rows = db.variants(program);
      std::vector<std::optional<double>> predicted;
      for (const VariantRecord& row : rows) {
        const auto start = std::chrono::steady_clock::now();
        std::optional<CostPrediction> p =
            predictLayerVariantCost(*layer, parseRecordedParameters(row.key.parameters), profile);
        predictMicroseconds += std::chrono::duration<double, std::micro>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
        ++predictions;
        predicted.push_back(p ? std::optional<double>(p->seconds) : std::nullopt);
      }
      // Correlations over the ok rows, all and per family.
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> byFamily;
      std::vector<double> okPredicted, okMeasured;
      uint64_t best = UINT64_MAX;
      size_t ok = 0;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].status != VariantStatus::Ok || !rows[i].medianNs || !predicted[i]) continue;
        ++ok;
        best = std::min(best, *rows[i].medianNs);
        auto& family = byFamily[familyOf(rows[i])];
        family.first.push_back(*predicted[i]);
        family.second.push_back(static_cast<double>(*rows[i].medianNs));
        okPredicted.push_back(*predicted[i]);
        okMeasured.push_back(static_cast<double>(*rows[i].medianNs));
        allPredicted.push_back(*predicted[i]);
        allMeasured.push_back(static_cast<double>(*rows[i].medianNs));
      }
      // Timeouts: the mean percentile of their predictions among all predictions of the layer.
      std::vector<double> everyPrediction;
      for (const auto& p : predicted) {
        if (p) everyPrediction.push_back(*p);
      }
      const std::vector<double> predictedRanks = ranks(everyPrediction);
      std::optional<double> timeoutPercentile;
      {
        double sum = 0;
        size_t count = 0, k = 0;
        for (size_t i = 0; i < rows.size(); ++i) {
          if (!predicted[i]) continue;
          if (rows[i].status == VariantStatus::Timeout) {
            sum += 100.0 * predictedRanks[k] / static_cast<double>(everyPrediction.size());
            ++count;
          }
          ++k;
        }
        if (count) timeoutPercentile = sum / static_cast<double>(count);
      }
      // Recorded order vs the explorer's cost order.
      std::vector<const VariantRecord*> recorded, costOrder;
      for (const VariantRecord& row : rows) recorded.push_back(&row);
      // The explorer's measuring order: the families take turns among the points predicted
      // near the cheapest (orderFamiliesTakingTurns).
      std::vector<size_t> rowFamilies;
      std::map<std::string, size_t> familyNumbers;
      for (const VariantRecord& row : rows) {
        rowFamilies.push_back(familyNumbers.emplace(familyOf(row), familyNumbers.size()).first->second);
      }
      for (size_t i : orderFamiliesTakingTurns(predicted, rowFamilies)) costOrder.push_back(&rows[i]);
      Json entry;
      entry["layer"] = program;
      entry["rows"] = rows.size();
      entry["ok"] = ok;
      entry["bestMs"] = ok ? static_cast<double>(best) * 1e-6 : 0.0;
      entry["spearman"] = optionalNumber(spearman(okPredicted, okMeasured));
      Json families = Json::object();
      for (const auto& [name, pairs] : byFamily) {
        families[name] = {{"ok", pairs.first.size()},
                          {"spearman", optionalNumber(spearman(pairs.first, pairs.second))}};
      }
      entry["families"] = families;
      entry["timeoutsMeanPredictedPercentile"] = optionalNumber(timeoutPercentile);
      auto rhoOf = [&](const std::string& name) -> std::optional<double> {
        if (!byFamily.count(name)) return std::nullopt;
        return spearman(byFamily[name].first, byFamily[name].second);
      };
      const std::optional<double> rhoDirect = rhoOf("conv-direct");
      const std::optional<double> rhoVector = rhoOf("register-blocked-vector");
      const std::optional<double> rhoWinograd = rhoOf("winograd");
      std::string recordedText = "–", costText = "–", recordedSecondsText = "–",
                  costSecondsText = "–";
      if (ok) {
        auto [recordedAt, recordedSeconds] = untilWithin(recorded, best, 1.1);
        auto [costAt, costSeconds] = untilWithin(costOrder, best, 1.1);
        entry["samplesTo10PercentRecorded"] = *recordedAt;
        entry["samplesTo10PercentCostOrder"] = *costAt;
        entry["childSecondsTo10PercentRecorded"] = std::round(recordedSeconds * 10) / 10;
        entry["childSecondsTo10PercentCostOrder"] = std::round(costSeconds * 10) / 10;
        totals.recordedSamples += *recordedAt;
        totals.costSamples += *costAt;
        totals.recordedSeconds += recordedSeconds;
        totals.costSeconds += costSeconds;
        recordedText = std::to_string(*recordedAt);
        costText = std::to_string(*costAt);
        recordedSecondsText = fixed(recordedSeconds, 1);
        costSecondsText = fixed(costSeconds, 1);
      }
      layers.push_back(entry);
      md << "| " << program << " | " << ok << " / " << rows.size() << " | "
         << fixed(spearman(okPredicted, okMeasured)) << " | " << fixed(rhoDirect) << " | "
         << fixed(rhoVector) << " | " << fixed(rhoWinograd) << " | "
         << fixed(timeoutPercentile, 0) << " | " << recordedText
         << " | " << costText << " | " << recordedSecondsText << " | " << costSecondsText
         << " |\n";
    }
  }
  std::filesystem::remove_all(folder);
  out["layers"] = layers;
  out["spearmanAllLayersPooled"] = optionalNumber(spearman(allPredicted, allMeasured));
  out["totals"] = {{"samplesTo10PercentRecorded", totals.recordedSamples},
                   {"samplesTo10PercentCostOrder", totals.costSamples},
                   {"childSecondsTo10PercentRecorded", std::round(totals.recordedSeconds)},
                   {"childSecondsTo10PercentCostOrder", std::round(totals.costSeconds)}};
  out["predictionMicrosecondsMean"] =
      predictions ? predictMicroseconds / static_cast<double>(predictions) : 0.0;
  md << "| **sum** | | " << fixed(spearman(allPredicted, allMeasured)) << " (pooled) | | | | | "
     << totals.recordedSamples << " | " << totals.costSamples << " | "
     << fixed(totals.recordedSeconds, 0) << " | " << fixed(totals.costSeconds, 0) << " |\n\n"
     << "Prediction time: " << fixed(out["predictionMicrosecondsMean"].get<double>(), 1)
     << " µs per point (mean over " << predictions << ").\n\n";
  return out;
}

struct LiveRun {
  double wallSeconds = 0;
  std::vector<std::pair<uint64_t, double>> okTimes;  // (median ns, elapsed s) in measuring order
  size_t measured = 0;
  std::vector<std::string> parameters;  // the set of points (sorted)
  ExploreSummary summary;
  size_t timedOnce = 0;
  std::map<std::string, int> statuses;
  double childSeconds = 0;
};

LiveRun liveRun(const ConvLayer& layer, SampleOrder order, size_t samples, uint64_t seed,
                size_t jobs, const std::filesystem::path& folder) {
  const std::string name = sampleOrderName(order);
  const std::filesystem::path cache = folder / ("pocl-cache-" + name);
  std::filesystem::create_directories(cache);
  setenv("POCL_CACHE_DIR", cache.c_str(), 1);  // the children's PoCL reads it
  ExploreOptions options;
  options.samples = samples;
  options.seed = seed;
  options.db = folder / (name + ".db");
  options.order = order;
  options.jobs = jobs;
  LiveRun run;
  options.progress = [&](const ProgressUpdate& update) {
    if (!update.last) return;
    ++run.measured;
    if (update.last->status == VariantStatus::Ok && update.last->medianNs) {
      run.okTimes.push_back({*update.last->medianNs, update.elapsedSeconds});
    }
    std::cerr << "  [" << name << "] " << update.done << "/" << update.total << " "
              << statusName(update.last->status) << "\n";
  };
  // The structures `weft explore` offers on this device.
  const host::DeviceProfile profile = explorationProfile(options);
  ExploreTarget target = layerTargetStructures(layer, {1, 2, 4, 8, 16}, {0, 1}, &profile);
  const auto start = std::chrono::steady_clock::now();
  run.summary = weft::explore::explore(target, options);
  run.wallSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ResultsDb db(options.db);
  for (const VariantRecord& row : db.variants(target.program)) {
    run.parameters.push_back(row.key.parameters);
    ++run.statuses[statusName(row.status)];
    Json details = Json::parse(row.details, nullptr, false);
    if (details.is_object()) {
      if (details.value("timedOnce", false)) ++run.timedOnce;
      run.childSeconds += details.value("childSeconds", 0.0);
    }
  }
  std::sort(run.parameters.begin(), run.parameters.end());
  return run;
}

Json live(const std::string& layerSpec, size_t samples, uint64_t seed, size_t jobs,
          std::ostream& md) {
  const ConvLayer layer = parseConvLayer(layerSpec);
  const std::filesystem::path folder =
      std::filesystem::path(std::getenv("POCL_CACHE_DIR") ? std::getenv("POCL_CACHE_DIR")
                                                          : std::filesystem::temp_directory_path()
                                                                .string()) /
      ("weft-cost-model-live-" + std::to_string(getpid()));
  std::filesystem::create_directories(folder);
  std::cerr << "live: " << layer.describe() << ", " << samples << " samples, order random\n";
  LiveRun random = liveRun(layer, SampleOrder::Random, samples, seed, jobs, folder);
  std::cerr << "live: order cost\n";
  LiveRun cost = liveRun(layer, SampleOrder::Cost, samples, seed, jobs, folder);
  uint64_t best = UINT64_MAX;
  for (const LiveRun* run : {&random, &cost}) {
    for (const auto& [ns, at] : run->okTimes) best = std::min(best, ns);
  }
  Json out;
  out["layer"] = layer.describe();
  out["samples"] = samples;
  out["seed"] = seed;
  out["jobs"] = jobs;
  out["sameSetOfPoints"] = random.parameters == cost.parameters;
  out["bestOfBothMs"] = static_cast<double>(best) * 1e-6;
  md << "## (b) Live: " << layer.describe() << ", " << samples << " samples, seed " << seed
     << ", --jobs " << jobs << "\n\n"
     << "The same exploration twice in one run, separate databases and PoCL caches. The "
        "machine is shared (2 cores, other people building): wall times move with its load.\n\n"
     << "| order | wall s | samples to 10 % of best | s to 10 % | best ms | timed once | "
        "statuses | sum of child s |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& [name, run] : {std::pair<const char*, const LiveRun*>{"random", &random},
                                  std::pair<const char*, const LiveRun*>{"cost", &cost}}) {
    // When the first variant within 10 % of the best of both runs was recorded.
    std::optional<double> atSeconds;
    for (const auto& [ns, elapsed] : run->okTimes) {
      if (static_cast<double>(ns) <= 1.1 * static_cast<double>(best)) {
        atSeconds = elapsed;
        break;
      }
    }
    uint64_t runBest = UINT64_MAX;
    for (const auto& [ns, elapsed] : run->okTimes) runBest = std::min(runBest, ns);
    Json entry;
    entry["wallSeconds"] = std::round(run->wallSeconds * 10) / 10;
    entry["bestMs"] = runBest == UINT64_MAX ? Json(nullptr) : Json(runBest * 1e-6);
    entry["secondsTo10Percent"] = optionalNumber(atSeconds);
    entry["timedOnce"] = run->timedOnce;
    entry["statuses"] = run->statuses;
    entry["childSeconds"] = std::round(run->childSeconds * 10) / 10;
    out[name] = entry;
    // Samples to 10 %: filled in below from the database, in the order measured.
    out[name]["samplesTo10Percent"] = nullptr;
    std::string statuses;
    for (const auto& [status, count] : run->statuses) {
      statuses += (statuses.empty() ? "" : ", ") + status + " " + std::to_string(count);
    }
    md << "| " << name << " | " << fixed(run->wallSeconds, 1) << " | @SAMPLES_" << name << "@ | "
       << fixed(atSeconds, 1) << " | " << (runBest == UINT64_MAX ? "–" : fixed(runBest * 1e-6, 2))
       << " | " << run->timedOnce << " | " << statuses << " | " << fixed(run->childSeconds, 1)
       << " |\n";
  }
  // Samples to 10 % of the best of both, in measuring order, from each database.
  for (const char* name : {"random", "cost"}) {
    ResultsDb db(folder / (std::string(name) + ".db"));
    std::vector<std::pair<int64_t, const VariantRecord*>> measured;
    std::vector<VariantRecord> rows = db.variants();
    for (const VariantRecord& row : rows) {
      Json details = Json::parse(row.details, nullptr, false);
      measured.push_back({details.is_object() ? details.value("orderPosition", int64_t{0}) : 0,
                          &row});
    }
    std::stable_sort(measured.begin(), measured.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (size_t i = 0; i < measured.size(); ++i) {
      const VariantRecord& row = *measured[i].second;
      if (row.status == VariantStatus::Ok && row.medianNs &&
          static_cast<double>(*row.medianNs) <= 1.1 * static_cast<double>(best)) {
        out[name]["samplesTo10Percent"] = i + 1;
        break;
      }
    }
  }
  out["databases"] = folder.string();
  md << "\nSame set of points in both runs: " << (out["sameSetOfPoints"].get<bool>() ? "yes" : "NO")
     << "; best of both " << fixed(out["bestOfBothMs"].get<double>(), 2) << " ms.\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the cost model's ordering of exploration samples: offline on a results "
               "database, live on one layer"};
  std::string database = "/work/explore-runs/vgg16.db";
  std::string profileName = "pocl-cpu";
  bool runLive = false;
  std::string layer = "vgg16:10";
  size_t samples = 60;
  uint64_t seed = 1;
  size_t jobs = 2;
  std::string output = std::string(WEFT_BENCH_RESULTS_DIR) + "/cost_model";
  app.add_option("--db", database, "measured results to validate the model on (read, copied)");
  app.add_option("--profile", profileName, "the device profile the predictions use");
  app.add_flag("--live", runLive, "also run the exploration twice (random, cost order)");
  app.add_option("--layer", layer, "--live: the layer (default vgg16:10, conv3_1)");
  app.add_option("--samples", samples, "--live: samples (default 60)");
  app.add_option("--seed", seed, "--live: seed (default 1)");
  app.add_option("--jobs", jobs, "--live: pre-build jobs (default 2)");
  app.add_option("--out", output, "output path without extension (.json and .md written)");
  CLI11_PARSE(app, argc, argv);
  try {
    const host::DeviceProfile profile = host::loadProfile(profileName);
    std::ostringstream md;
    md << "# The cost model's ordering of exploration samples (workloads/conv/cost_model.h)\n\n"
       << "Produced by `weft_bench_cost_model_ordering" << (runLive ? " --live" : "")
       << "`. Shared, loaded 2-core machine: times are indicative.\n\n";
    Json out;
    out["note"] = "shared, loaded 2-core machine; live wall times move with its load";
    out["offline"] = offline(database, profile, md);
    std::string text = md.str();
    if (runLive) {
      std::ostringstream liveMd;
      Json liveJson = live(layer, samples, seed, jobs, liveMd);
      std::string liveText = liveMd.str();
      for (const char* name : {"random", "cost"}) {
        const std::string marker = std::string("@SAMPLES_") + name + "@";
        const Json& at = liveJson[name]["samplesTo10Percent"];
        const std::string value = at.is_null() ? "–" : std::to_string(at.get<size_t>());
        if (size_t pos = liveText.find(marker); pos != std::string::npos) {
          liveText.replace(pos, marker.size(), value);
        }
      }
      out["live"] = liveJson;
      text += liveText;
    }
    std::filesystem::create_directories(std::filesystem::path(output).parent_path());
    std::ofstream(output + ".json") << out.dump(2) << "\n";
    std::ofstream(output + ".md") << text;
    std::cout << text;
  } catch (const std::exception& error) {
    std::cerr << "error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
