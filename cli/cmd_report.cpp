// `weft report --db results.db [--layer SPEC | --program NAME] [--csv FILE] [--budget SIZE]
// [--format table|csv|json]`: for each explored program (and device) in the results database, the variants by
// status, the naive reference, and the Pareto front of time against space of the ok variants
// (a variant is on the front when no other is at least as fast and at least as small, and
// strictly better in one) as a markdown table, or as CSV.
//
// The best (fastest) point's parameters follow, laid out by the workload that made it
// (explore/workload.h parameterTable: the LIFT paper's Table 4 for conv-direct layers), raw for
// other programs; --format
// json includes them as "best". --svg FILE writes the time/space scatter of every ok variant
// with the front and knee (explore/report_plot.h; several programs or devices: one file each,
// FILE's stem + _program_device); --html FILE writes one self-contained page with a plot and
// the front and best-point tables per program and device. Peers' times for the same work, which
// benchmarks record in the database (weft_bench_table3: PyTorch and CLBlast per layer), are
// printed beside the reference and drawn in the plot.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/commands.h"
#include "explore/pareto.h"
#include "explore/report_plot.h"
#include "explore/variant_pick.h"
#include "explore/results_db.h"
#include "workloads/conv/conv_layer.h"
#include "workloads/conv/conv_targets.h"
#include "workloads/conv/conv_workload.h"

namespace weft::cli {

namespace {

struct ReportCommandOptions {
  std::string db = "results.db";
  std::string layer;
  std::string program;
  std::string csv;
  std::string format = "table";
  std::string budget;  // --budget: the fastest variant within this much memory
  std::string svg;     // --svg: the scatter plot(s)
  std::string html;    // --html: one page with every plot and table
};

// The file of one group's plot: FILE itself when there is one group, else FILE's stem +
// "_program_device" + its extension (characters other than letters, digits, '-' and '_'
// become '_').
std::string plotPath(const std::string& file, const std::string& program,
                     const std::string& device, bool several) {
  if (!several) return file;
  std::filesystem::path path(file);
  std::string tag = program + "_" + device;
  for (char& c : tag) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  std::string extension = path.extension().string().empty() ? ".svg" : path.extension().string();
  return (path.parent_path() / (path.stem().string() + "_" + tag + extension)).string();
}

void writeText(const std::string& file, const std::string& text) {
  std::ofstream out(file);
  if (!out) throw std::runtime_error(file + ": cannot be written");
  out << text;
  if (!out) throw std::runtime_error(file + ": cannot be written");
}

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
  if (!db.migrationNote().empty()) std::cerr << db.migrationNote() << "\n";
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
  size_t groupCount = 0;
  for (const std::string& program : programs) {
    std::set<std::pair<std::string, std::string>> keys;
    for (auto& v : db.variants(program)) keys.insert({v.key.device, v.key.compiler});
    groupCount += keys.size();
  }
  std::vector<explore::HtmlSection> htmlSections;
  std::vector<std::string> written;
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
      const std::vector<explore::PeerRecord> peers = db.peers(program, device);
      std::map<std::string, int> counts;
      for (const auto& v : variants) ++counts[explore::statusName(v.status)];
      std::vector<explore::VariantRecord> front = explore::paretoFront(variants);
      const size_t knee = explore::kneeIndex(front);
      std::optional<explore::VariantRecord> withinBudget;
      if (!options.budget.empty()) {
        withinBudget = explore::fastestWithin(variants, explore::parseByteSize(options.budget));
      }
      // A reference row records the run's operations; without one (a program file explored
      // without a reference), the variants' details do.
      int64_t flops = reference ? reference->flops : 0;
      for (const auto& v : variants) {
        if (flops > 0) break;
        const nlohmann::json details = nlohmann::json::parse(v.details, nullptr, false);
        if (details.is_object() && details.contains("flops") && details["flops"].is_number()) {
          flops = details["flops"].get<int64_t>();
        }
      }
      auto gflops = [&](uint64_t ns) {
        return flops > 0 && ns > 0 ? static_cast<double>(flops) / static_cast<double>(ns) : 0.0;
      };
      auto speedup = [&](uint64_t ns) {
        return reference && reference->medianNs > 0 && ns > 0
                   ? static_cast<double>(reference->medianNs) / static_cast<double>(ns)
                   : 0.0;
      };
      // A peer's time for the same work (recorded by a benchmark) and how the fastest variant
      // compares: "PyTorch conv2d (2 threads): 3.980 ms (the fastest variant is 1.21x faster)".
      auto peerLine = [&](const explore::PeerRecord& peer) {
        std::string line = peer.peer + ": " + fixed(peer.medianNs * 1e-6, 3) + " ms";
        if (!front.empty() && *front.front().medianNs > 0) {
          const double ratio =
              static_cast<double>(peer.medianNs) / static_cast<double>(*front.front().medianNs);
          line += ratio >= 1 ? " (the fastest variant is " + fixed(ratio, 2) + "x faster)"
                             : " (the fastest variant takes " + fixed(1 / ratio, 2) + "x its time)";
        }
        if (!peer.source.empty()) line += ", measured by " + peer.source;
        return line;
      };
      // The best point's parameters (Table 4 for layers), the plot and the HTML section.
      std::vector<explore::ParameterRow> best;
      std::string layout;  // the published layout the best point's table follows, if any
      if (!front.empty()) {
        best = explore::parameterTable(front.front());
        layout = explore::parameterLayout(front.front());
      }
      const std::string title = program + " on device " + device;
      const std::string subtitle =
          (reference && !reference->description.empty() ? reference->description + "; "
                                                         : std::string()) +
          compiler;
      if (!options.svg.empty() || !options.html.empty()) {
        explore::ScatterPlot plot =
            explore::scatterPlotOf(variants, title, subtitle, reference, peers);
        std::string svg = explore::renderScatterSvg(plot);
        if (!options.svg.empty()) {
          std::string file = plotPath(options.svg, program, device + "_" + compiler,
                                      groupCount > 1);
          writeText(file, svg);
          written.push_back(file);
        }
        if (!options.html.empty()) {
          explore::HtmlSection section;
          section.heading = title + " (" + compiler + ")";
          std::string counted = std::to_string(variants.size()) + " variants:";
          for (const auto& [status, count] : counts) {
            counted += " " + status + " " + std::to_string(count);
          }
          section.lines.push_back(counted);
          if (reference) {
            section.lines.push_back(
                "reference (default lowering): " + fixed(reference->medianNs * 1e-6, 3) +
                " ms, " + fixed(reference->spaceBytes / 1e6, 3) + " MB" +
                (flops > 0 ? ", " + fixed(gflops(reference->medianNs), 2) + " GFLOP/s" : ""));
          }
          for (const auto& peer : peers) section.lines.push_back("peer " + peerLine(peer));
          section.svg = svg;
          explore::HtmlTable table{"Pareto front (time vs space), fastest first",
                                   {"#", "median ms", "space MB", "GFLOP/s", "speed-up",
                                    "parameters"},
                                   {}};
          for (size_t i = 0; i < front.size(); ++i) {
            const auto& v = front[i];
            table.rows.push_back(
                {std::to_string(i + 1) + (i == knee ? " (knee)" : ""),
                 fixed(*v.medianNs * 1e-6, 3), fixed(*v.spaceBytes / 1e6, 3),
                 flops > 0 ? fixed(gflops(*v.medianNs), 2) : "-",
                 reference ? fixed(speedup(*v.medianNs), 2) + "x" : "-", v.key.parameters});
          }
          section.tables.push_back(table);
          if (!best.empty()) {
            explore::HtmlTable bestTable{"Best (fastest) point", {"parameter", "value"}, {}};
            for (const auto& row : best) bestTable.rows.push_back({row.name, row.value});
            section.tables.push_back(bestTable);
          }
          htmlSections.push_back(section);
        }
      }
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
        if (!peers.empty()) {
          nlohmann::ordered_json peerTimes = nlohmann::ordered_json::array();
          for (const auto& peer : peers) {
            peerTimes.push_back({{"peer", peer.peer},
                                 {"medianNs", peer.medianNs},
                                 {"source", peer.source}});
            if (peer.spaceBytes) peerTimes.back()["spaceBytes"] = *peer.spaceBytes;
          }
          group["peers"] = peerTimes;
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
        if (!best.empty()) {
          nlohmann::ordered_json table = nlohmann::ordered_json::array();
          for (const auto& row : best) table.push_back({{"name", row.name}, {"value", row.value}});
          group["best"] = {{"medianNs", *front.front().medianNs},
                           {"spaceBytes", *front.front().spaceBytes},
                           {"parameters", nlohmann::ordered_json::parse(
                                              front.front().key.parameters, nullptr, false)},
                           {"table", table}};
        }
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
      for (const auto& peer : peers) std::cout << "peer " << peerLine(peer) << "\n";
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
      std::cout << "\nbest (fastest) point"
                << (layout.empty() ? std::string() : ", laid out like " + layout)
                << ":\n\n| parameter | value |\n|---|---|\n";
      for (const auto& row : best) std::cout << "| " << row.name << " | " << row.value << " |\n";
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
  if (!options.html.empty()) {
    writeText(options.html, explore::renderHtmlReport("weft report: " + options.db, htmlSections));
    written.push_back(options.html);
  }
  if (options.format == "table") {
    for (const std::string& file : written) std::cout << "written: " << file << "\n";
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
      "reference, peers' times a benchmark recorded for the same work (PyTorch's for a layer),\n"
      "and the Pareto front of time against space of the correct variants.");
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
  command->add_option("--svg", options->svg,
                      "also write the time/space scatter plot (log-log, Pareto front and knee "
                      "marked) as SVG; with several programs or devices one file each, named "
                      "FILE's stem + _program_device")
      ->type_name("FILE");
  command->add_option("--html", options->html,
                      "also write one self-contained HTML page: per program and device a plot, "
                      "the front and the best point's parameters")
      ->type_name("FILE");
  command->add_option("--format", options->format,
                      "table (markdown, default), csv, or json (per program and device: status "
                      "counts, the reference and the front)")
      ->check(CLI::IsMember({"table", "csv", "json"}));
  command->footer(
      "Example:\n  weft report --db results.db --layer 8,16,16,8,3,1,1 --csv front.csv\n"
      "  weft report --db results.db --layer 8,16,16,8,3,1,1 --svg front.svg --html report.html\n");
  command->callback([options] { runReport(*options); });
}

}  // namespace weft::cli
