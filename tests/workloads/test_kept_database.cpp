// The repository's kept database (bench/results/vgg16-explore.db.xz, written by schema 1 before
// records named their workload) still opens and rebuilds the kernels it measured: its rows are
// read under the old names (the conv workload owns them), a sample of every layer's variants is
// rebuilt from its recorded parameters and hashes to the source hash recorded when it was
// measured, and opening it for writing migrates it to schema 2 with a backup that holds the
// file as it was. The H200 database (bench/results/nvidia-h200, schema 2) rebuilds its GPU
// structures (interleaved blocks, the channels-first copy) to the hashes recorded there, and
// its split database (nvidia-explore-split.db.xz) its split structures. The VGG-16 exploration
// with Winograd (bench/results/vgg16-winograd.db.xz) rebuilds its Winograd structures, and the
// other networks' layers (bench/results/other-layers.db.xz) their partial blocks.
//
// A change to code generation that alters recorded kernels on purpose (a simpler index, say)
// lists each altered row in tests/workloads/kept_database_kernel_changes.tsv with its recorded
// hash and today's; a rebuilt kernel must hash to what was recorded or to what that list says,
// so an accidental change still fails. Running this test with WEFT_RECORD_KERNEL_CHANGES=FILE
// appends the rows that differ to FILE instead of failing on them (to regenerate the list, in
// the commit that makes the change and says why).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "explore/measurement.h"
#include "explore/results_db.h"
#include "explore/workload.h"
#include "tests/support/run_weft.h"
#include "workloads/builtin_workloads.h"
#include "workloads/conv/conv_workload.h"

using namespace weft;
using namespace weft::explore;

namespace {

// A kept database decompressed into `folder` (xz is part of every Debian system).
std::filesystem::path keptDatabase(const testing::TempDir& folder,
                                   const std::string& kept = "bench/results/vgg16-explore.db.xz") {
  const char* root = std::getenv("WEFT_SOURCE_DIR");
  const std::filesystem::path source = std::filesystem::path(root ? root : ".") / kept;
  const std::filesystem::path db = folder.path / "kept.db";
  const std::string command = "xz -dc '" + source.string() + "' > '" + db.string() + "'";
  REQUIRE(std::system(command.c_str()) == 0);
  return db;
}

using Parameters = std::map<std::string, int64_t>;

// (kept database, program, parameters) -> (recorded hash, today's hash), from
// kept_database_kernel_changes.tsv: tab-separated, '#' starts a comment line.
using RowKey = std::tuple<std::string, std::string, std::string>;
const std::map<RowKey, std::pair<std::string, std::string>>& kernelChanges() {
  static const std::map<RowKey, std::pair<std::string, std::string>> changes = [] {
    const char* root = std::getenv("WEFT_SOURCE_DIR");
    std::ifstream in(std::filesystem::path(root ? root : ".") / "tests" / "workloads" /
                     "kept_database_kernel_changes.tsv");
    std::map<RowKey, std::pair<std::string, std::string>> rows;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::vector<std::string> fields;
      std::stringstream split(line);
      for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
      REQUIRE(fields.size() == 5);
      rows[{fields[0], fields[1], fields[2]}] = {fields[3], fields[4]};
    }
    return rows;
  }();
  return changes;
}

// The rebuilt kernel of `row` of the kept database `kept` hashes to what was recorded, or to
// the hash the list of intended changes gives for that row.
void checkRebuiltSource(const std::string& kept, const VariantRecord& row,
                        const CompiledProgram& compiled) {
  const std::string hash = sourceHash(compiled.source);
  if (hash == row.sourceHash) return;
  if (const char* record = std::getenv("WEFT_RECORD_KERNEL_CHANGES")) {
    std::ofstream(record, std::ios::app) << kept << '\t' << row.key.program << '\t'
                                         << row.key.parameters << '\t' << row.sourceHash << '\t'
                                         << hash << '\n';
    return;
  }
  const auto change = kernelChanges().find({kept, row.key.program, row.key.parameters});
  INFO("recorded " << row.sourceHash << ", rebuilt " << hash);
  CHECK_MESSAGE(change != kernelChanges().end(),
                "the rebuilt kernel differs from the recorded one, and "
                "kept_database_kernel_changes.tsv does not list the row");
  if (change == kernelChanges().end()) return;
  CHECK(change->second.first == row.sourceHash);
  CHECK(change->second.second == hash);
}

// Rebuilds through the conv workload every ok row of the kept database `kept` that `wanted`
// selects, and every 5th other, checking each against the source hash recorded with it;
// `rebuilt` then sees the row's parameters and program.
void rebuildKeptRows(
    const std::string& kept, const std::function<bool(const Parameters&)>& wanted,
    const std::function<void(const Parameters&, const CompiledProgram&)>& rebuilt) {
  workloads::registerBuiltinWorkloads();
  testing::TempDir folder("weft_kept_db_rows");
  const ResultsSnapshot snapshot = readResultsSnapshot(keptDatabase(folder, kept));
  size_t others = 0;
  for (const VariantRecord& row : snapshot.variants) {
    if (row.status != VariantStatus::Ok || row.sourceHash.empty()) continue;
    CHECK(row.workload == "conv");
    const Parameters parameters = parseRecordedParameters(row.key.parameters);
    if (!wanted(parameters) && others++ % 5 != 0) continue;
    const std::optional<ConvLayer> layer = layerOfProgram(row.key.program);
    REQUIRE(layer);
    CAPTURE(row.key.program);
    CAPTURE(row.key.parameters);
    const CompiledProgram compiled = compileLayerVariant(*layer, row);
    checkRebuiltSource(kept, row, compiled);
    rebuilt(parameters, compiled);
  }
}

}  // namespace

TEST_CASE("the kept database rebuilds the kernels it recorded") {
  workloads::registerBuiltinWorkloads();
  testing::TempDir folder("weft_kept_db");
  const std::filesystem::path db = keptDatabase(folder);
  const ResultsSnapshot snapshot = readResultsSnapshot(db);
  REQUIRE(snapshot.variants.size() > 1000);

  // Per layer: the fastest ok variant and every 97th ok row (both families appear).
  std::map<std::string, std::vector<const VariantRecord*>> chosen;
  std::map<std::string, const VariantRecord*> fastest;
  size_t ok = 0;
  for (const VariantRecord& row : snapshot.variants) {
    if (row.status != VariantStatus::Ok || !row.medianNs || row.sourceHash.empty()) continue;
    CHECK(row.workload.empty());  // schema 1: no workload recorded
    CHECK(workloadOf(row) == convWorkload());
    const VariantRecord*& best = fastest[row.key.program];
    if (!best || *row.medianNs < *best->medianNs) best = &row;
    if (ok++ % 97 == 0) chosen[row.key.program].push_back(&row);
  }
  for (const auto& [program, row] : fastest) chosen[program].push_back(row);
  REQUIRE(chosen.size() == 13);
  size_t rebuilt = 0;
  for (const auto& [program, rows] : chosen) {
    const std::optional<ConvLayer> layer = layerOfProgram(program);
    REQUIRE(layer);
    for (const VariantRecord* row : rows) {
      CAPTURE(program);
      CAPTURE(row->key.parameters);
      const CompiledProgram compiled = compileLayerVariant(*layer, *row);
      checkRebuiltSource("bench/results/vgg16-explore.db.xz", *row, compiled);
      ++rebuilt;
    }
  }
  CHECK(rebuilt > 60);
}

TEST_CASE("the H200's kept database rebuilds its GPU structures' kernels") {
  // Explored on an NVIDIA H200 (bench/results/nvidia-h200): schema 2, the GPU profile's
  // interleaved and channels-first structures among the rows.
  size_t channelsFirst = 0, interleavedInPlace = 0;
  auto firstChannels = [](const Parameters& p) { return p.count("vector_channels_first") != 0; };
  auto inPlace = [&](const Parameters& p) {
    return p.count("vector_interleave") != 0 && !firstChannels(p);
  };
  rebuildKeptRows(
      "bench/results/nvidia-h200/nvidia-explore.db.xz",
      [&](const Parameters& p) { return firstChannels(p) || inPlace(p); },
      [&](const Parameters& p, const CompiledProgram&) {
        channelsFirst += firstChannels(p);
        interleavedInPlace += inPlace(p);
      });
  CHECK(channelsFirst > 20);
  CHECK(interleavedInPlace > 5);
}

TEST_CASE("opening a schema 1 database for writing migrates it, with a backup") {
  testing::TempDir folder("weft_kept_db");
  const std::filesystem::path db = keptDatabase(folder);
  const size_t rows = readResultsSnapshot(db).variants.size();
  std::string note;
  {
    ResultsDb opened(db);
    note = opened.migrationNote();
    CHECK(opened.variants().size() == rows);
  }
  CHECK(note.find("migrated from schema 1 to 2") != std::string::npos);
  const std::filesystem::path backup = db.string() + ".schema1-backup";
  CHECK(note.find(backup.string()) != std::string::npos);
  REQUIRE(std::filesystem::exists(backup));
  // The backup is the file as it was: schema 1, every row.
  CHECK(readResultsSnapshot(backup).variants.size() == rows);
  // Opening again changes nothing more; a new row keeps its workload and strategy.
  ResultsDb again(db);
  CHECK(again.migrationNote().empty());
  VariantRecord record = again.variants().front();
  record.key.parameters = "{\"test\":1}";
  record.workload = "conv";
  record.strategy = "conv-direct";
  again.record(record);
  const std::optional<VariantRecord> found = again.find(record.key);
  REQUIRE(found);
  CHECK(found->workload == "conv");
  CHECK(found->strategy == "conv-direct");
  CHECK(readResultsSnapshot(db).variants.size() == rows + 1);
  CHECK_FALSE(std::filesystem::exists(db.string() + ".schema1-backup2"));
}

TEST_CASE("the H200's split database rebuilds its split structures' kernels") {
  // Explored on an NVIDIA H200 (bench/results/nvidia-h200, "Split over the channels"): the
  // split structures (vector_split) among the rows.
  size_t split = 0;
  auto isSplit = [](const Parameters& p) { return p.count("vector_split") != 0; };
  rebuildKeptRows("bench/results/nvidia-h200/nvidia-explore-split.db.xz", isSplit,
                  [&](const Parameters& p, const CompiledProgram& compiled) {
                    if (!isSplit(p)) return;
                    ++split;
                    CHECK(compiled.kernels.size() == 4);  // re-layout, pad, partial, final sums
                  });
  CHECK(split > 50);
}

TEST_CASE("the kept Winograd exploration rebuilds its Winograd structures' kernels") {
  // Explored on a 2-core AMD EPYC with PoCL (bench/results/vgg16-winograd.db.xz): F(2x2) and
  // F(4x4) structures among the rows; every 3rd Winograd row is rebuilt (each is a few hundred
  // milliseconds of generation), with every 5th other row.
  size_t winograd = 0, tiles4 = 0, considered = 0;
  rebuildKeptRows(
      "bench/results/vgg16-winograd.db.xz",
      [&](const Parameters& p) { return p.count("winograd_m") != 0 && considered++ % 3 == 0; },
      [&](const Parameters& p, const CompiledProgram& compiled) {
        if (!p.count("winograd_m")) return;
        ++winograd;
        tiles4 += p.at("winograd_m") == 4;
        CHECK(compiled.kernels.size() == 6);  // 3 preparation, input, products, output
      });
  CHECK(winograd > 50);
  CHECK(tiles4 > 5);
}

TEST_CASE("the kept exploration of other networks' layers rebuilds its partial blocks") {
  // Explored on a 2-core AMD EPYC with PoCL (bench/other_layers.sh): output widths 55, 27, 13
  // and 7 among them, where blocks of σ pixels leave a partial last block whose surplus is
  // dropped by guarded stores (a line `if (!(...)) X = ...;`). Every 5th row is rebuilt.
  size_t partial = 0;
  const std::regex guardedStore(R"(\n *if \(!\([^\n]*\)\) [^\n{]* = [^\n]*;\n)");
  rebuildKeptRows(
      "bench/results/other-layers.db.xz", [](const Parameters&) { return false; },
      [&](const Parameters& p, const CompiledProgram& compiled) {
        if (p.count("vector_sigma") && std::regex_search(compiled.source, guardedStore)) ++partial;
      });
  MESSAGE(partial << " rows with partial blocks rebuilt");
  CHECK(partial > 3);
}

TEST_CASE("the kept VGG-16 exploration with partial blocks and tiles rebuilds its rows") {
  // Explored on a 2-core AMD EPYC with PoCL (bench/results/vgg16-partial.db.xz): σ = ⌈outW/b⌉
  // blocks, partial Winograd tiles, candidate selection. Every 5th row is rebuilt.
  size_t rebuilt = 0, guarded = 0;
  const std::regex guardedStore(R"(\n *if \(!\([^\n]*\)\) [^\n{]* = [^\n]*;\n)");
  rebuildKeptRows(
      "bench/results/vgg16-partial.db.xz", [](const Parameters&) { return false; },
      [&](const Parameters&, const CompiledProgram& compiled) {
        ++rebuilt;
        if (std::regex_search(compiled.source, guardedStore)) ++guarded;
      });
  MESSAGE(rebuilt << " rows rebuilt, " << guarded << " with guarded stores");
  CHECK(rebuilt > 100);
}
