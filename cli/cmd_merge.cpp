// `weft merge --db TARGET SOURCE...`: adds the results of other databases (explorations run on
// other machines, the shards of one exploration) to TARGET, creating it when it does not exist.
// Every source is read read-only and validated before TARGET is opened, and all rows go in as
// one transaction, so a corrupt or foreign source is reported and nothing changes. Rows are
// matched by (program, device fingerprint, compiler, parameters): a result replaces a `running`
// marker, and between two results the target's stays (counted as a conflict when they differ).
// Reference runs are added where the target has none for their (program, device, compiler).
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "explore/database_lock.h"
#include "explore/results_db.h"

namespace weft::cli {

namespace {

struct MergeCommandOptions {
  std::string db;
  std::vector<std::string> sources;
  bool json = false;
};

void runMerge(const MergeCommandOptions& options) {
  if (options.sources.empty()) throw std::invalid_argument("give at least one SOURCE database");
  std::vector<explore::ResultsSnapshot> snapshots;
  for (const std::string& source : options.sources) {
    snapshots.push_back(explore::readResultsSnapshot(source));
  }
  // Not while an exploration (or another merge or import) writes the same database.
  const explore::DatabaseLock lock(options.db);
  explore::ResultsDb target(options.db);
  if (!target.migrationNote().empty()) std::cerr << target.migrationNote() << "\n";
  explore::MergeSummary summary = target.merge(snapshots);
  if (options.json) {
    nlohmann::json out{{"db", options.db},
                       {"sources", summary.sources},
                       {"variantsRead", summary.variantsRead},
                       {"added", summary.added},
                       {"replacedRunning", summary.replacedRunning},
                       {"identical", summary.identical},
                       {"conflicts", summary.conflicts},
                       {"keptTarget", summary.keptTarget},
                       {"referencesAdded", summary.referencesAdded},
                       {"referencesKept", summary.referencesKept},
                       {"peersAdded", summary.peersAdded},
                       {"peersKept", summary.peersKept},
                       {"variants", target.variants().size()}};
    std::cout << out.dump() << std::endl;
    return;
  }
  std::cout << "merged " << summary.sources << " database" << (summary.sources == 1 ? "" : "s")
            << " into " << options.db << ": " << summary.variantsRead << " variants read, "
            << summary.added << " added, " << summary.replacedRunning
            << " replaced a running marker, " << summary.identical << " already there, "
            << summary.conflicts << " conflicts (kept " << options.db << "'s result), "
            << summary.keptTarget << " running markers ignored; " << summary.referencesAdded
            << " reference runs added, " << summary.referencesKept << " already there";
  if (summary.peersAdded + summary.peersKept > 0) {
    std::cout << "; " << summary.peersAdded << " peer times added, " << summary.peersKept
              << " already there";
  }
  std::cout << "\n";
  std::cout << options.db << " now holds " << target.variants().size() << " variants\n";
}

}  // namespace

void registerMerge(CLI::App& app) {
  auto options = std::make_shared<MergeCommandOptions>();
  CLI::App* command = app.add_subcommand(
      "merge",
      "Merge the results of other databases (other machines, shards of one exploration)\n"
      "into --db, in one transaction. A result replaces a 'running' marker; when both hold\n"
      "a result for the same variant, --db's is kept and counted as a conflict.");
  command->add_option("--db", options->db, "the database merged into (created when missing)")
      ->type_name("FILE")
      ->required();
  command->add_option("sources", options->sources, "the databases to read (left unchanged)")
      ->type_name("SOURCE")
      ->required();
  command->add_flag("--json", options->json, "the counts as one JSON object");
  command->footer(
      "Example (shards of one exploration, each run on its own machine, e.g. a Slurm job array):\n"
      "  weft explore --layer 8,16,16,8,3,1,1 --samples 12 --seed 1 --shard 1/2 --db results-1.db\n"
      "  weft explore --layer 8,16,16,8,3,1,1 --samples 12 --seed 1 --shard 2/2 --db results-2.db\n"
      "  weft merge --db merged.db results-1.db results-2.db\n");
  command->callback([options] { runMerge(*options); });
}

}  // namespace weft::cli
