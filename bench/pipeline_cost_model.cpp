// weft_bench_pipeline_cost_model: how well the pipeline cost model
// (workloads/pipeline/pipeline_cost_model.h) orders the variants of image-pipeline
// explorations already measured. For every program of a results database (copied first, never
// written; .xz decompressed) whose definition is one of examples/pipelines/ and every device in it:
// Spearman's rank correlation between the predicted and the measured median of the ok variants,
// over all of them and per structure; and how many samples it takes to reach one within 10 % of the
// best measured, in the recorded order and in predicted order (families taking turns as the
// explorer does is not replayed: ascending prediction over the union). With --program FILE, the
// explorations of FILE's definitions too (any program, explored with `weft explore FILE`): their
// predictions are the target's cost model as weft explore builds it (the pipeline workload, with
// the rewrite search where it applies), for the structures that model covers. Writes
// bench/results/pipeline_cost_model.json and .md (--out to change).
#include "workloads/pipeline/pipeline_cost_model.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/rank_correlation.h"
#include "explore/cache_footprint.h"
#include "explore/explorer.h"
#include "explore/parameter_space.h"
#include "explore/results_db.h"
#include "host/device_profile.h"
#include "host/opencl_runtime.h"
#include "ir/parser.h"
#include "workloads/pipeline/pipeline_target.h"
#include "workloads/pipeline/pipeline_workload.h"

#ifndef WEFT_BENCH_RESULTS_DIR
#define WEFT_BENCH_RESULTS_DIR "bench/results"
#endif
#ifndef WEFT_SOURCE_DIR
#define WEFT_SOURCE_DIR "."
#endif

namespace {

using Json = nlohmann::ordered_json;
using namespace weft;
using namespace weft::explore;

// "harris[H=2832,W=4256]" as the definition's name and its sizes; nullopt for another form.
std::optional<std::pair<std::string, ArithBinding>> parseProgramName(const std::string& program) {
  const size_t open = program.find('[');
  if (open == std::string::npos || program.back() != ']') return std::nullopt;
  ArithBinding sizes;
  std::stringstream list(program.substr(open + 1, program.size() - open - 2));
  std::string item;
  while (std::getline(list, item, ',')) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos) return std::nullopt;
    sizes[item.substr(0, equals)] = std::stoll(item.substr(equals + 1));
  }
  return std::make_pair(program.substr(0, open), sizes);
}

// The definition named `name` in one of examples/pipelines/*.weft.
std::optional<Definition> pipelineDefinition(const std::string& name) {
  const std::filesystem::path folder = std::filesystem::path(WEFT_SOURCE_DIR) / "examples/pipelines";
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".weft") continue;
    const Program program = parseFile(entry.path().string());
    if (const Definition* found = program.findDefinition(name)) return *found;
  }
  return std::nullopt;
}

// Samples (1-based) until the first within 10 % of `best` in `order`.
size_t untilWithin(const std::vector<double>& measured, const std::vector<size_t>& order,
                   double best) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (measured[order[i]] <= 1.10 * best) return i + 1;
  }
  return order.size();
}

std::string fixed(std::optional<double> value, int digits = 2) {
  if (!value) return "-";
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(digits);
  text << *value;
  return text.str();
}

// Each structure's kernels' global accesses (KernelPlan::globalAccesses) under the binding of
// its first measured variant: buffer, read or write, offset, and the loops around it (outermost
// first: p = parallel, g = a work-group index, u = unrolled, r = unrolled in the kernel proper;
// dimension, index, trips).
void printAccesses(const std::string& program, const ExploreTarget& target,
                   const host::DeviceProfile& profile, const ArithBinding& sizes,
                   const std::vector<const VariantRecord*>& variants) {
  for (const ExploreTarget::Structure& structure : target.structures) {
    const VariantRecord* first = nullptr;
    for (const VariantRecord* v : variants) {
      std::map<std::string, int64_t> parameters = parseRecordedParameters(v->key.parameters);
      bool matches = true;
      for (const auto& [name, value] : structure.fixedParameters) {
        auto found = parameters.find(name);
        if (found == parameters.end() || found->second != value) matches = false;
      }
      if (structure.fixedParameters.empty() && parameters.count("rewrite")) matches = false;
      if (matches) {
        first = v;
        break;
      }
    }
    if (!first) continue;
    std::cout << program << " " << structure.strategy << " " << first->key.parameters << "\n";
    try {
      const CompiledProgram compiled = analysisProgram(structure.parametric, sizes);
      const ArithBinding binding =
          pointBinding(structure.parametric, sizes, parseRecordedParameters(first->key.parameters));
      for (const KernelPlan& kernel : compiled.kernels) {
        std::cout << "  kernel " << kernel.name << " global";
        for (int d = 0; d < kernel.dimensions; ++d) {
          std::cout << " " << tryEvaluate(kernel.globalSize[d], binding).value_or(-1);
        }
        const bool barriers = kernelHasBarriers(compiled, kernel);
        std::cout << (barriers ? ", barriers" : "") << ", work-item loops " << kernel.workItemLoops
                  << "\n";
        for (const GlobalAccess& access : kernel.globalAccesses) {
          std::cout << "    " << (access.written ? "write " : "read ") << access.buffer << "["
                    << access.offset.toString() << "] width " << access.vectorWidth << ":";
          for (const AccessLoop& loop : access.loops) {
            std::cout << " " << (loop.parallel ? "p" : "") << (loop.groupIndex ? "g" : "")
                      << (loop.unrolled ? "u" : "") << (loop.rolled ? "r" : "") << loop.dimension
                      << ":" << loop.index.toString() << "/"
                      << tryEvaluate(loop.tripCount, binding).value_or(-1);
          }
          std::cout << "\n";
        }
        const size_t k = static_cast<size_t>(&kernel - compiled.kernels.data());
        const std::array<int64_t, 3> local =
            kernelLocalSizes(kernel, k, binding, parseRecordedParameters(first->key.parameters));
        const CacheTraffic traffic =
            cacheTraffic(kernel, barriers, binding, local, firstLevelCacheBytesOf(profile),
                         cacheLineBytesOf(profile), true);
        for (const std::string& line : traffic.explanation)
          std::cout << "    group " << line << "\n";
      }
    } catch (const std::exception& error) {
      std::cout << "  (no analysis program: " << error.what() << ")\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Validates the pipeline cost model's order on measured pipeline explorations"};
  std::string database = std::string(WEFT_BENCH_RESULTS_DIR) + "/pipelines-explore.db.xz";
  std::string profileName;
  std::string output = std::string(WEFT_BENCH_RESULTS_DIR) + "/pipeline_cost_model";
  app.add_option("--db", database, "measured pipeline explorations (read from a copy)");
  app.add_option("--profile", profileName,
                 "the device profile the predictions use (default: the OpenCL device's, queried, "
                 "as weft explore does)");
  app.add_option("--out", output, "output path without extension (.json and .md written)");
  std::vector<std::string> programFiles;
  app.add_option("--program", programFiles,
                 "a program file whose explorations to validate as well (weft explore FILE)");
  bool verbose = false;
  app.add_flag("--verbose", verbose, "also print every variant's prediction and its parts");
  bool accesses = false;
  app.add_flag("--accesses", accesses,
               "also print the global accesses of each structure's kernels (--program only), "
               "with the loops around them at the first variant's parameters");
  CLI11_PARSE(app, argc, argv);
  try {
    const host::DeviceProfile profile = profileName.empty()
                                            ? host::queryProfile(host::selectDevice(""))
                                            : host::loadProfile(profileName);
    const std::filesystem::path copy =
        std::filesystem::temp_directory_path() / "weft_bench_pipeline_cost_model.db";
    if (database.size() > 3 && database.substr(database.size() - 3) == ".xz") {
      // The databases kept in bench/results are xz-compressed.
      const std::string command = "xz -dc '" + database + "' > '" + copy.string() + "'";
      if (std::system(command.c_str()) != 0) {
        throw std::runtime_error("could not decompress " + database + " (xz)");
      }
    } else {
      std::filesystem::copy_file(database, copy,
                                 std::filesystem::copy_options::overwrite_existing);
    }
    const ResultsSnapshot snapshot = readResultsSnapshot(copy);
    std::filesystem::remove(copy);

    std::map<std::pair<std::string, std::string>, std::vector<const VariantRecord*>> groups;
    for (const VariantRecord& v : snapshot.variants) {
      if (v.status == VariantStatus::Ok && v.medianNs) {
        groups[{v.key.program, v.key.device}].push_back(&v);
      }
    }
    Json out;
    out["database"] = database;
    out["profile"] = profile.name;
    std::ostringstream md;
    md << "# Pipeline cost model: predicted order against measured explorations\n\n"
       << "Database " << database << ", predictions for profile " << profile.name
       << ". Spearman's rho between predicted and measured medians of the ok variants (1: the "
          "same order); samples to the first within 10 % of the best measured, in the recorded "
          "order and in ascending prediction.\n\n"
       << "| program | device | structure | variants | rho | predicted best, measured (ms) | "
          "best (ms) | recorded order to 10 % | predicted order to 10 % |\n"
       << "|---|---|---|---:|---:|---:|---:|---:|---:|\n";
    Json rows = Json::array();
    for (const auto& [key, variants] : groups) {
      const auto parsed = parseProgramName(key.first);
      if (!parsed) continue;
      std::optional<Definition> definition;
      for (const std::string& file : programFiles) {
        const Program program = parseFile(file);
        if (const Definition* found = program.findDefinition(parsed->first)) definition = *found;
      }
      // A program given with --program: the cost model of the target weft explore builds.
      std::function<std::optional<PipelineCostPrediction>(const std::map<std::string, int64_t>&,
                                                          const host::DeviceProfile&)>
          predictor;
      if (definition) {
        WorkloadRequest request;
        request.program = *definition;
        request.sizes = parsed->second;
        const std::vector<ExploreTarget> targets = pipelineWorkload()->targets(request, &profile);
        if (targets.empty() || !targets.front().predictSeconds) continue;
        // The target's prediction, with the memory model's parts for --verbose (the same
        // model for a program without reductions; beside the reads model for the others).
        const auto seconds = targets.front().predictSeconds;
        if (accesses) printAccesses(key.first, targets.front(), profile, parsed->second, variants);
        const auto parts = pipelineCostPredictor(targets.front().structures, parsed->second, true);
        predictor =
            [seconds, parts](
                const std::map<std::string, int64_t>& parameters,
                const host::DeviceProfile& device) -> std::optional<PipelineCostPrediction> {
          const std::optional<double> predicted = seconds(parameters, device);
          if (!predicted) return std::nullopt;
          PipelineCostPrediction prediction =
              parts(parameters, device).value_or(PipelineCostPrediction{});
          prediction.seconds = *predicted;
          return prediction;
        };
      } else {
        definition = pipelineDefinition(parsed->first);
        if (!definition) continue;
        // The structures weft explore builds on this profile (the vectorising ones take its
        // preferred float width).
        PipelineTargetOptions targetOptions;
        targetOptions.vectorWidth = profile.preferredFloatVectorWidth;
        const ExploreTarget target = pipelineTarget(*definition, parsed->second, targetOptions);
        predictor = pipelineCostPredictor(target.structures, parsed->second, true);
      }
      // By structure, then "all".
      std::map<std::string, std::vector<const VariantRecord*>> byStructure;
      for (const VariantRecord* v : variants) {
        byStructure[v->strategy].push_back(v);
        byStructure["(all)"].push_back(v);
      }
      for (const auto& [structure, members] : byStructure) {
        std::vector<double> predicted, measured;
        for (const VariantRecord* v : members) {
          const auto prediction = predictor(parseRecordedParameters(v->key.parameters), profile);
          if (!prediction) continue;
          if (verbose && structure != "(all)") {
            std::cout << key.first << " " << v->key.parameters << ": measured "
                      << fixed(static_cast<double>(*v->medianNs) / 1e6) << " ms, predicted "
                      << fixed(prediction->seconds * 1e3, 3) << " (compute "
                      << fixed(prediction->computeSeconds * 1e3, 3) << ", memory "
                      << fixed(prediction->memorySeconds * 1e3, 3) << ", accesses "
                      << fixed(prediction->accessSeconds * 1e3, 3) << ", cache "
                      << fixed(prediction->cacheSeconds * 1e3, 3) << ", read operations per read "
                      << fixed(prediction->readOperationsPerRead, 3) << ", work-groups "
                      << fixed(prediction->workGroupSeconds * 1e3, 3) << ", bytes "
                      << prediction->bytes << ", flops " << prediction->flops << ", lanes "
                      << fixed(prediction->laneUse) << ", spill " << fixed(prediction->spillFactor)
                      << ", balance " << fixed(prediction->balanceFactor) << ", kernels "
                      << prediction->kernels << ")\n";
          }
          predicted.push_back(prediction->seconds * 1e3);
          measured.push_back(static_cast<double>(*v->medianNs) / 1e6);
        }
        if (predicted.empty()) continue;
        const double best = *std::min_element(measured.begin(), measured.end());
        std::vector<size_t> recorded(measured.size()), byPrediction(measured.size());
        for (size_t i = 0; i < measured.size(); ++i) recorded[i] = byPrediction[i] = i;
        std::stable_sort(byPrediction.begin(), byPrediction.end(),
                         [&](size_t a, size_t b) { return predicted[a] < predicted[b]; });
        const std::optional<double> rho = weft::bench::spearman(predicted, measured);
        const size_t recordedSamples = untilWithin(measured, recorded, best);
        const size_t predictedSamples = untilWithin(measured, byPrediction, best);
        const double predictedBest = measured[byPrediction.front()];
        rows.push_back({{"program", key.first},
                        {"device", key.second},
                        {"structure", structure},
                        {"variants", predicted.size()},
                        {"spearman", rho ? Json(*rho) : Json(nullptr)},
                        {"measured_of_predicted_best_ms", predictedBest},
                        {"measured_best_ms", best},
                        {"recorded_order_samples_to_10pct", recordedSamples},
                        {"predicted_order_samples_to_10pct", predictedSamples}});
        md << "| " << key.first << " | " << key.second << " | " << structure << " | "
           << predicted.size() << " | " << fixed(rho) << " | " << fixed(predictedBest) << " | "
           << fixed(best) << " | " << recordedSamples << " | " << predictedSamples << " |\n";
      }
    }
    out["rows"] = rows;
    std::ofstream(output + ".json") << out.dump(1) << "\n";
    std::ofstream(output + ".md") << md.str();
    std::cout << md.str();
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "weft_bench_pipeline_cost_model: " << error.what() << "\n";
    return 1;
  }
}
