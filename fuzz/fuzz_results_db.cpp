// libFuzzer target: results databases from other machines (`weft merge`, `weft report`, an
// explorer resuming). Any bytes are written to a file and read with readResultsSnapshot: it must
// give a snapshot or throw ResultsDbError. An accepted snapshot is merged into the process's
// merge target, which must then hold each distinct variant key merged into it once: every key
// of this snapshot found, and as many rows as distinct keys so far; a merge refused with
// ResultsDbError leaves the target as it was. The target is made afresh
// every kMergesPerTarget accepted inputs rather than per input (creating a database's schema
// was most of an input's cost). The fuzzed file is also opened
// for writing (ResultsDb), as an explorer given it as --db would: ResultsDbError or a usable
// database. Any other exception, a crash or a sanitizer report is a finding. The seeds are small
// weft databases (corpus/results_db/), so that mutations reach past SQLite's header checks.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <string>

#include "explore/results_db.h"
#include "fuzz/fuzz_support.h"

using weft::fuzzing::finding;

namespace {

// In memory-backed /dev/shm where there is one: SQLite syncs every commit, which on a disk
// would bound the executions per second.
std::string scratchPath(const char* stem) {
  static const std::string folder =
      std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  return folder + "/weft_fuzz_db_" + stem + "_" + std::to_string(getpid()) + ".db";
}

void removeDatabase(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::remove((path + suffix).c_str());
  }
}

constexpr int kMergesPerTarget = 256;

// The merge target and the distinct keys merged into it.
struct MergeTarget {
  std::string path = scratchPath("target");
  std::unique_ptr<weft::explore::ResultsDb> db;
  std::set<std::string> keys;
  int merges = 0;

  weft::explore::ResultsDb& fresh() {
    if (db && merges < kMergesPerTarget) return *db;
    db.reset();
    removeDatabase(path);
    keys.clear();
    merges = 0;
    db = std::make_unique<weft::explore::ResultsDb>(path);
    return *db;
  }
};

std::string keyText(const weft::explore::VariantKey& key) {
  return key.program + '\n' + key.device + '\n' + key.compiler + '\n' + key.parameters;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  static MergeTarget target;
  const std::string input = scratchPath("in");
  removeDatabase(input);
  if (FILE* file = std::fopen(input.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    return 0;
  }
  using namespace weft::explore;
  try {
    const ResultsSnapshot snapshot = readResultsSnapshot(input);
    ResultsDb& merged = target.fresh();
    ++target.merges;
    try {
      merged.merge({snapshot});
      for (const VariantRecord& v : snapshot.variants) {
        target.keys.insert(keyText(v.key));
        if (!merged.find(v.key)) finding("a merged key is missing: " + keyText(v.key));
      }
      const size_t rows = merged.variants().size();
      if (rows != target.keys.size()) {
        finding("a merge target given " + std::to_string(target.keys.size()) +
                " distinct keys holds " + std::to_string(rows) + " rows");
      }
    } catch (const ResultsDbError&) {
      // e.g. a key field SQLite's constraints refuse: reported, and nothing of it written (one
      // transaction), so the target holds what it held before.
      const size_t rows = merged.variants().size();
      if (rows != target.keys.size()) {
        finding("a refused merge changed the target: " + std::to_string(rows) + " rows for " +
                std::to_string(target.keys.size()) + " keys merged before");
      }
    }
  } catch (const ResultsDbError&) {
  } catch (const std::exception& e) {
    finding(std::string("reading threw something other than ResultsDbError: ") + e.what());
  }
  try {
    ResultsDb opened(input);
    (void)opened.variants();
    (void)opened.programs();
  } catch (const ResultsDbError&) {
  } catch (const std::exception& e) {
    finding(std::string("opening threw something other than ResultsDbError: ") + e.what());
  }
  removeDatabase(input);
  return 0;
}
