// `weft report --db results.db [--layer SPEC | --program NAME] [--csv FILE] [--budget SIZE]
// [--format table|csv|json]`: for each explored program (and device) in the results database, the variants by
// status, the naive reference, and the Pareto front of time against space of the ok variants
// (a variant is on the front when no other is at least as fast and at least as small, and
// strictly better in one) as a markdown table, or as CSV.
//
// Minimal for now; later (issue 6): JSON export, SVG/HTML plots, the knee, --budget, the best
// point laid out like the LIFT paper's Table 4. The front's computation belongs in explore/
// once those reports exist.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "explore/pareto.h"
#include "explore/results_db.h"
#include "ir/conv_layer.h"

namespace weft::cli {

namespace {

struct ReportCommandOptions {
  std::string db = "results.db";
  std::string layer;
  std::string program;
  std::string csv;
  std::string format = "table";
  std::string budget;  // --budget: the fastest variant within this much memory
};

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(digits);
  text << value;
  return text.str();
}

std::string csvQuoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void runReport(const ReportCommandOptions& options) {
  if (!std::filesystem::exists(options.db)) {
    throw std::runtime_error(options.db + ": no such results database");
  }
  explore::ResultsDb db(options.db);
  std::vector<std::string> programs;
  if (!options.layer.empty()) {
    programs.push_back(parseConvLayer(options.layer).name);
  } else if (!options.program.empty()) {
    programs.push_back(options.program);
  } else {
    programs = db.programs();
  }
  if (programs.empty()) throw std::runtime_error(options.db + ": holds no results yet");

  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  std::ostringstream csv;
  csv << "program,device,compiler,median_ns,space_bytes,gflops,speedup_vs_reference,"
         "source_hash,parameters\n";
  bool any = false;
  for (const std::string& program : programs) {
    // Group by device and compiler.
    std::map<std::pair<std::string, std::string>, std::vector<explore::VariantRecord>> groups;
    for (auto& v : db.variants(program)) {
      groups[{v.key.device, v.key.compiler}].push_back(v);
    }
    if (groups.empty()) {
      if (options.format == "table") std::cout << program << ": no variants in " << options.db << "\n\n";
      continue;
    }
    for (const auto& [group, variants] : groups) {
      any = true;
      const auto& [device, compiler] = group;
      std::optional<explore::ReferenceRecord> reference = db.reference(program, device, compiler);
      std::map<std::string, int> counts;
      for (const auto& v : variants) ++counts[explore::statusName(v.status)];
      std::vector<explore::VariantRecord> front = explore::paretoFront(variants);
      const size_t knee = explore::kneeIndex(front);
      std::optional<explore::VariantRecord> withinBudget;
      if (!options.budget.empty()) {
        withinBudget = explore::fastestWithin(variants, explore::parseByteSize(options.budget));
      }
      const int64_t flops = reference ? reference->flops : 0;
      auto gflops = [&](uint64_t ns) {
        return flops > 0 && ns > 0 ? static_cast<double>(flops) / static_cast<double>(ns) : 0.0;
      };
      auto speedup = [&](uint64_t ns) {
        return reference && reference->medianNs > 0 && ns > 0
                   ? static_cast<double>(reference->medianNs) / static_cast<double>(ns)
                   : 0.0;
      };
      for (const auto& v : front) {
        csv << csvQuoted(program) << "," << device << "," << csvQuoted(compiler) << ","
            << *v.medianNs << "," << *v.spaceBytes << "," << fixed(gflops(*v.medianNs), 3)
            << "," << fixed(speedup(*v.medianNs), 3) << "," << v.sourceHash << ","
            << csvQuoted(v.key.parameters) << "\n";
      }
      if (options.format == "json") {
        nlohmann::ordered_json group = {{"program", program},
                                        {"device", device},
                                        {"compiler", compiler},
                                        {"variants", variants.size()},
                                        {"statusCounts", counts}};
        if (reference) {
          group["reference"] = {{"medianNs", reference->medianNs},
                                {"spaceBytes", reference->spaceBytes},
                                {"gflops", gflops(reference->medianNs)}};
        }
        nlohmann::ordered_json points = nlohmann::ordered_json::array();
        for (const auto& v : front) {
          points.push_back({{"medianNs", *v.medianNs},
                            {"spaceBytes", *v.spaceBytes},
                            {"gflops", gflops(*v.medianNs)},
                            {"speedup", speedup(*v.medianNs)},
                            {"sourceHash", v.sourceHash},
                            {"parameters", nlohmann::ordered_json::parse(v.key.parameters, nullptr,
                                                                         false)}});
        }
        group["front"] = points;
        if (!front.empty()) group["knee"] = knee;
        if (!options.budget.empty()) {
          group["budget"] = {{"bytes", explore::parseByteSize(options.budget)},
                             {"fastest", withinBudget ? nlohmann::ordered_json::parse(
                                                            withinBudget->key.parameters, nullptr,
                                                            false)
                                                      : nlohmann::ordered_json(nullptr)}};
          if (withinBudget) group["budget"]["medianNs"] = *withinBudget->medianNs;
        }
        json.push_back(group);
      }
      if (options.format != "table") continue;
      std::cout << "## " << program << " on device " << device << " (" << compiler << ")\n\n";
      if (reference && !reference->description.empty()) {
        std::cout << reference->description << "\n\n";
      }
      std::cout << variants.size() << " variants:";
      bool first = true;
      for (const auto& [status, count] : counts) {
        std::cout << (first ? " " : ", ") << status << " " << count;
        first = false;
      }
      std::cout << "\n";
      if (reference) {
        std::cout << "reference (default lowering): " << fixed(reference->medianNs * 1e-6, 3)
                  << " ms, " << fixed(reference->spaceBytes / 1e6, 3) << " MB";
        if (flops > 0) std::cout << ", " << fixed(gflops(reference->medianNs), 2) << " GFLOP/s";
        std::cout << "\n";
      }
      std::cout << "\nPareto front (time vs space), " << front.size() << " of "
                << counts["ok"] << " ok variants:\n\n";
      if (front.empty()) {
        std::cout << "(no ok variant)\n\n";
        continue;
      }
      std::cout << "| # | median ms | space MB | GFLOP/s | speed-up | parameters |\n";
      std::cout << "|---|---|---|---|---|---|\n";
      for (size_t i = 0; i < front.size(); ++i) {
        const auto& v = front[i];
        std::cout << "| " << i + 1 << (i == knee ? " (knee)" : "") << " | " << fixed(*v.medianNs * 1e-6, 3) << " | "
                  << fixed(*v.spaceBytes / 1e6, 3) << " | "
                  << (flops > 0 ? fixed(gflops(*v.medianNs), 2) : std::string("-")) << " | "
                  << (reference ? fixed(speedup(*v.medianNs), 2) + "x" : std::string("-"))
                  << " | `" << v.key.parameters << "` |\n";
      }
      std::cout << "\nfastest: #1; smallest: #" << front.size() << "; knee: #" << knee + 1
                << " (farthest from the line between the front's ends)\n";
      if (!options.budget.empty()) {
        if (withinBudget) {
          std::cout << "fastest within " << options.budget << ": "
                    << fixed(*withinBudget->medianNs * 1e-6, 3) << " ms, "
                    << fixed(*withinBudget->spaceBytes / 1e6, 3) << " MB `"
                    << withinBudget->key.parameters << "`\n";
        } else {
          std::cout << "no variant fits in " << options.budget << "; the smallest takes "
                    << fixed(*front.back().spaceBytes / 1e6, 3) << " MB `"
                    << front.back().key.parameters << "`\n";
        }
      }
      std::cout << "\n";
    }
  }
  if (!any && options.format == "table") return;
  if (options.format == "csv") std::cout << csv.str();
  if (options.format == "json") std::cout << json.dump(2) << "\n";
  if (!options.csv.empty()) {
    std::ofstream out(options.csv);
    if (!out) throw std::runtime_error(options.csv + ": cannot be written");
    out << csv.str();
    if (options.format == "table") std::cout << "front written to " << options.csv << "\n";
  }
}

}  // namespace

void registerReport(CLI::App& app) {
  auto options = std::make_shared<ReportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "report",
      "Summarise a results database written by weft explore: variants by status, the naive\n"
      "reference, and the Pareto front of time against space of the correct variants.");
  command->add_option("--db", options->db, "the results database (default results.db)")
      ->type_name("FILE");
  command->add_option("--layer", options->layer,
                      "only this layer (vgg16:N or C,H,W,M,K,stride,pad)")
      ->type_name("SPEC");
  command->add_option("--program", options->program, "only this program name")
      ->type_name("NAME");
  command->add_option("--csv", options->csv, "also write the front(s) as CSV to FILE")
      ->type_name("FILE");
  command->add_option("--budget", options->budget,
                      "also name the fastest variant using at most this much memory, e.g. 25MB")
      ->type_name("SIZE");
  command->add_option("--format", options->format,
                      "table (markdown, default), csv, or json (per program and device: status "
                      "counts, the reference and the front)")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  command->footer("Example:\n  weft report --db results.db --layer vgg16:2 --csv front.csv\n");
  command->callback([options] { runReport(*options); });
}

}  // namespace weft::cli
