// libFuzzer target: results databases from other machines (`weft merge`, `weft report`, an
// explorer resuming). Any bytes are written to a file and read with readResultsSnapshot: it must
// give a snapshot or throw ResultsDbError. An accepted snapshot is merged into a fresh database,
// which must then hold each of its distinct variant keys once. The fuzzed file is also opened
// for writing (ResultsDb), as an explorer given it as --db would: ResultsDbError or a usable
// database. Any other exception, a crash or a sanitizer report is a finding. The seeds are small
// weft databases (corpus/results_db/), so that mutations reach past SQLite's header checks.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string input = scratchPath("in"), target = scratchPath("target");
  removeDatabase(input);
  removeDatabase(target);
  if (FILE* file = std::fopen(input.c_str(), "wb")) {
    if (size > 0) std::fwrite(data, 1, size, file);
    std::fclose(file);
  } else {
    return 0;
  }
  using namespace weft::explore;
  try {
    const ResultsSnapshot snapshot = readResultsSnapshot(input);
    std::set<std::string> keys;
    for (const VariantRecord& v : snapshot.variants) {
      keys.insert(v.key.program + '\n' + v.key.device + '\n' + v.key.compiler + '\n' +
                  v.key.parameters);
    }
    try {
      ResultsDb merged(target);
      merged.merge({snapshot});
      if (merged.variants().size() != keys.size()) {
        finding("a merge of " + std::to_string(keys.size()) + " distinct keys holds " +
                std::to_string(merged.variants().size()) + " rows");
      }
    } catch (const ResultsDbError&) {
      // e.g. a key field SQLite's constraints refuse: reported, nothing half-written
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
  removeDatabase(target);
  return 0;
}
