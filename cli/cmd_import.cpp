// `weft import DIR/results.json [--db results.db]`: brings the measurements of a bundle's
// harness (export/bundle_export.h, written by `weft bundle` and run on another machine) into a
// results database, keyed as `weft explore` keys its rows (explore/results_db.h): the program
// and parameter JSON the bundle recorded, the compiler version that generated the kernels, and
// the device fingerprint computed as host/device_profile.h profileFingerprint does from the
// CL_DEVICE_NAME (surrounding white space trimmed, as host/opencl_runtime lists devices),
// CL_DRIVER_VERSION, CL_PLATFORM_VERSION, CL_DEVICE_MAX_COMPUTE_UNITS and (a CPU device) host
// processor the harness recorded. So `weft report`, `weft emit --pick` and `weft merge` see them
// as if explored locally, and a device explored locally and measured through a bundle gets the
// same fingerprint. A results file of an older harness, without compute units, is imported
// under a fingerprint of its own, and the command says so. Importing the same file again
// changes nothing (ResultsDb::importVariants).
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "explore/database_lock.h"
#include "explore/explorer.h"
#include "explore/results_db.h"
#include "export/bundle_export.h"
#include "host/device_profile.h"

namespace weft::cli {

namespace {

struct ImportCommandOptions {
  std::string results;
  std::string db = "results.db";
};

std::string trimmed(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

explore::VariantRecord variantRecord(const exporting::BundleResult& result,
                                     const exporting::BundleResults& results,
                                     const std::string& fingerprint, const std::string& origin) {
  explore::VariantRecord record;
  // The key's parameters as canonical JSON (sorted keys, compact): explore::parametersJson.
  record.key = {results.program, fingerprint, results.compiler,
                nlohmann::json::parse(result.parameters).dump()};
  record.status = *explore::parseStatus(result.status);
  record.sourceHash = result.sourceHash;
  record.samplesNs = result.samplesNs;
  if (record.status == explore::VariantStatus::Ok) record.medianNs = result.medianNs;
  if (result.spaceBytes > 0) record.spaceBytes = result.spaceBytes;
  record.buildMs = result.buildMs;
  record.message = result.message;
  record.attempts = 1;
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& [name, ns] : result.kernelNs) kernels.push_back({{"name", name}, {"ns", ns}});
  record.details = nlohmann::json{{"device", trimmed(results.device.name)},
                                  {"vendor", results.device.vendor},
                                  {"importedFrom", origin},
                                  {"bundleId", result.id},
                                  {"warmUpNs", result.warmUpNs},
                                  {"kernels", kernels},
                                  {"maxError", result.maxError},
                                  {"allowedError", result.allowedError},
                                  {"tolerance", results.tolerance},
                                  {"childSeconds", result.seconds}}
                       .dump();
  return record;
}

void runImport(const ImportCommandOptions& options) {
  std::filesystem::path path(options.results);
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) path /= "results.json";
  exporting::BundleResults results = exporting::readBundleResults(path);
  const std::string fingerprint = host::profileFingerprint(
      trimmed(results.device.name), results.device.driverVersion, results.device.platformVersion,
      results.device.computeUnits, results.device.hostProcessor);

  std::vector<explore::VariantRecord> records;
  for (const exporting::BundleResult& result : results.variants) {
    records.push_back(variantRecord(result, results, fingerprint, path.string()));
  }
  std::optional<explore::ReferenceRecord> reference;
  if (results.reference && results.reference->status == "ok" && results.reference->medianNs) {
    explore::ReferenceRecord r;
    r.program = results.program;
    r.device = fingerprint;
    r.compiler = results.compiler;
    r.description = results.description;
    r.flops = results.flops;
    r.samplesNs = results.reference->samplesNs;
    r.medianNs = *results.reference->medianNs;
    r.spaceBytes = results.reference->spaceBytes;
    reference = r;
  }
  // Not while an exploration (or another merge or import) writes the same database.
  const explore::DatabaseLock lock(options.db);
  explore::ResultsDb db(options.db);
  if (!db.migrationNote().empty()) std::cerr << db.migrationNote() << "\n";
  explore::ImportSummary summary = db.importVariants(records, reference);

  std::map<std::string, int> statuses;
  for (const explore::VariantRecord& record : records) ++statuses[statusName(record.status)];
  std::string counts;
  for (const auto& [status, count] : statuses) {
    counts += (counts.empty() ? "" : ", ") + status + " " + std::to_string(count);
  }
  std::printf("%s: %zu variants of %s measured on %s (fingerprint %s)%s%s\n",
              path.string().c_str(), records.size(), results.program.c_str(),
              trimmed(results.device.name).c_str(), fingerprint.c_str(),
              counts.empty() ? "" : ": ", counts.c_str());
  if (results.device.computeUnits == 0) {
    std::printf(
        "note: %s names no compute units (an older harness): its fingerprint differs from what "
        "weft explore records for the same device\n",
        path.string().c_str());
  }
  std::printf("into %s: %zu added, %zu replaced a running marker, %zu already there",
              options.db.c_str(), summary.added, summary.replacedRunning, summary.identical);
  if (summary.conflicts > 0) {
    std::printf(", %zu kept (the database has another result for the same key)",
                summary.conflicts);
  }
  std::printf("; reference %s\n", !reference ? "not measured"
                                  : summary.referenceAdded ? "added"
                                                           : "already there");
  if (results.compiler != explore::compilerVersion()) {
    std::printf("note: the bundle was generated by %s, this is %s; the rows are keyed by %s\n",
                results.compiler.c_str(), explore::compilerVersion().c_str(),
                results.compiler.c_str());
  }
}

}  // namespace

void registerImport(CLI::App& app) {
  auto options = std::make_shared<ImportCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "import",
      "Bring the results of a bundle's harness (weft bundle) into a results database, keyed\n"
      "as weft explore keys its rows (device fingerprint from the device the harness ran on),\n"
      "so weft report, weft emit --pick and weft merge see them. Importing twice changes "
      "nothing.");
  command->footer(
      "Example (the bundle of `weft bundle --help`, run):\n"
      "  weft import small-mali/results.json --db bundle.db\n");
  command->add_option("results", options->results, "the results.json (or the bundle folder)")
      ->required();
  command->add_option("--db", options->db, "the results database (default results.db)");
  command->callback([options] { runImport(*options); });
}

}  // namespace weft::cli
