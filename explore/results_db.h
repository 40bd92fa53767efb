// The results database of exploration: one SQLite file holding every variant weft measured,
// written as results are produced so that an interrupted exploration resumes where it stopped.
//
// One row per variant, keyed by (program, device fingerprint, compiler version, parameters):
//   program      the layer or program name ("conv1_2", "conv_8_8_8_8_3_1_1", "dot[N=1024]")
//   device       the device fingerprint (host/device_profile.h: profileFingerprint)
//   compiler     weft's version ("weft 0.1.0"); results of another version are not reused
//   parameters   the point as canonical JSON (an object with sorted keys)
//   status       ok, build_error, launch_error, crashed, timeout, wrong_answer, invalid; or
//                running: the marker written before a variant runs, so that a resumed run knows
//                which variant was under way when the explorer died (attempts counts them)
//   source hash, time samples (JSON array of nanoseconds), median, space bytes, build ms,
//   a message (why it failed) and details (JSON: per-kernel times, tolerance, ...);
//   workload, strategy  the workload that made the variant and its structure's strategy
//                (explore/workload.h); '' in rows written by schema 1.
// A schema 1 file opened for writing is migrated to schema 2 (two columns added) after a
// backup copy next to it (FILE.schema1-backup); migrationNote() says so. Read-only snapshots of
// schema 1 files read the new columns as ''.
// A second table holds each program's reference run (the naive default-lowered program). A
// third, peer_runs, holds times a benchmark measured for the same work with another
// implementation (PyTorch's conv2d for a layer, CLBlast's SGEMM for a matmul), so that
// `weft report` can draw them beside the variants. It was added without a schema change: files
// made before it lack the table (read as no peers; opening one for writing creates it), and an
// older weft ignores it.
// Every write is its own transaction; the file is in WAL mode so that readers (weft report)
// can look while an exploration writes.
//
// A file that is not a SQLite database, or a SQLite database that weft did not create (its
// application_id is not weft's and it has tables), raises ResultsDbError with a clear message
// and is never written to.
//
// Merging (`weft merge`): databases written elsewhere (other machines, the shards of one
// exploration) are read read-only and validated as a whole (readResultsSnapshot) before
// anything is written; ResultsDb::merge then adds their rows to this database in one
// transaction. Variants are matched by their key; a row found in both keeps the one with a
// final status (a `running` marker gives way to a result), and between two final rows the
// target's stays (counted as a conflict when the two differ). References are added when the
// target has none for their (program, device, compiler).
//
// Importing (`weft import`): results measured by a bundle's harness on another machine
// (export/bundle_export.h) arrive as VariantRecords keyed exactly as the explorer keys them (same
// program name and parameter JSON; the device fingerprint computed from the names the harness
// recorded; the compiler version that generated the kernels). ResultsDb::importVariants writes
// them in one transaction with merge's rules: a new key is added, a `running` marker gives way,
// a final row with the same status and time samples is left as it is (so importing the same
// file again changes nothing), and a final row that differs is kept and counted as a conflict.
// A reference is added when the database has none for its (program, device, compiler).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace weft::explore {

struct ResultsDbError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class VariantStatus {
  Ok,
  BuildError,
  LaunchError,
  Crashed,
  Timeout,
  WrongAnswer,
  Invalid,
  Running,  // the marker: written before the variant runs, replaced by its result
};
// "ok", "build_error", "launch_error", "crashed", "timeout", "wrong_answer", "invalid", "running"
const char* statusName(VariantStatus status);
// The status of a name statusName gives; nullopt for an unknown name.
std::optional<VariantStatus> parseStatus(const std::string& name);

struct VariantKey {
  std::string program;
  std::string device;
  std::string compiler;
  std::string parameters;  // canonical JSON object text
  bool operator==(const VariantKey&) const = default;
};

struct VariantRecord {
  VariantKey key;
  VariantStatus status = VariantStatus::Running;
  std::string sourceHash;
  std::vector<uint64_t> samplesNs;   // every measured repeat (sum of the kernels' event times)
  std::optional<uint64_t> medianNs;  // ok variants
  std::optional<int64_t> spaceBytes; // global memory of all buffers, when generation succeeded
  std::optional<double> buildMs;     // clBuildProgram wall time
  std::string message;               // why it failed, or notes
  std::string details = "{}";        // JSON object
  int attempts = 0;                  // how many times the variant was started
  // The workload that made it and the strategy of its structure (explore/workload.h); "" in
  // rows written before variants named them (schema 1).
  std::string workload;
  std::string strategy;
};

// The naive reference of a program on a device (the default lowering), for speed-ups.
struct ReferenceRecord {
  std::string program;
  std::string device;
  std::string compiler;
  std::string description;  // "conv1_2: 64x224x224 -> 64x224x224 (...)"
  int64_t flops = 0;        // 0 when unknown
  std::vector<uint64_t> samplesNs;
  uint64_t medianNs = 0;
  int64_t spaceBytes = 0;
};

// A time a benchmark measured for the same work as `program` with another implementation, on
// the machine of `device` (the explored device's fingerprint: the peer itself may run on the
// host CPU), for `weft report` to compare with.
struct PeerRecord {
  std::string program;
  std::string device;
  std::string peer;         // "PyTorch 1.13 conv2d (2 threads)"
  uint64_t medianNs = 0;
  std::optional<int64_t> spaceBytes;  // its memory, when the benchmark knows it
  std::string source;       // what measured it: "weft_bench_table3"
};

// Every row of a results database, read without writing to it (see readResultsSnapshot).
struct ResultsSnapshot {
  std::filesystem::path path;
  std::vector<VariantRecord> variants;
  std::vector<std::string> variantsWritten;  // each variant's `written` time, same order
  std::vector<ReferenceRecord> references;
  std::vector<std::string> referencesWritten;
  std::vector<PeerRecord> peers;
  std::vector<std::string> peersWritten;
};

// Reads `path` read-only. Throws ResultsDbError naming the file when it is missing, a folder,
// not a SQLite database, a SQLite database weft did not create (or an empty one), or of a
// newer schema; the file is never written (nor its WAL checkpointed).
ResultsSnapshot readResultsSnapshot(const std::filesystem::path& path);

// What ResultsDb::merge did.
struct MergeSummary {
  size_t sources = 0;
  size_t variantsRead = 0;
  size_t added = 0;            // keys the target did not have
  size_t replacedRunning = 0;  // target's `running` marker replaced by a source's result
  size_t identical = 0;        // both final with the same status and time samples
  size_t conflicts = 0;        // both final and different: the target's row kept
  size_t keptTarget = 0;       // the source's row was only a `running` marker
  size_t referencesAdded = 0;
  size_t referencesKept = 0;  // the target already had a reference for that key
  size_t peersAdded = 0;
  size_t peersKept = 0;  // the target already had that peer's time for the program and device
};

// What ResultsDb::importVariants did.
struct ImportSummary {
  size_t variantsRead = 0;
  size_t added = 0;            // keys the database did not have
  size_t replacedRunning = 0;  // a `running` marker replaced by the imported result
  size_t identical = 0;        // already there with the same status and samples
  size_t conflicts = 0;        // already there with another final result: kept
  bool referenceAdded = false;
};

class ResultsDb {
 public:
  // Opens `path`, creating the file and its tables when it does not exist or is empty. Throws
  // ResultsDbError for a corrupt or foreign file (left untouched) or an unusable folder.
  explicit ResultsDb(const std::filesystem::path& path);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // What opening the file changed, for the user: "" or a line saying that an older file was
  // migrated to this schema and where its backup is.
  const std::string& migrationNote() const { return migrationNote_; }

  // Writes the marker for `key` (status running, attempts + 1, other columns kept) and returns
  // the attempts count after the increment.
  int markRunning(const VariantKey& key);
  // Inserts or replaces the row of record.key (attempts kept from the marker when larger).
  void record(const VariantRecord& record);
  std::optional<VariantRecord> find(const VariantKey& key) const;
  // Every variant, optionally of one program and/or device ("" matches all), in insertion order.
  std::vector<VariantRecord> variants(const std::string& program = "",
                                      const std::string& device = "") const;
  // The distinct program names, sorted.
  std::vector<std::string> programs() const;

  void recordReference(const ReferenceRecord& reference);
  std::optional<ReferenceRecord> reference(const std::string& program, const std::string& device,
                                           const std::string& compiler = "") const;
  // Every reference run, ordered by (program, device, compiler).
  std::vector<ReferenceRecord> references() const;

  // Records (or replaces) a peer's time for (program, device, peer). Throws ResultsDbError for
  // an empty key field or a zero time.
  void recordPeer(const PeerRecord& peer);
  // The peers' times of `program` on `device` ("" matches all), ordered by peer name.
  std::vector<PeerRecord> peers(const std::string& program = "",
                                const std::string& device = "") const;

  // Adds the rows of `sources` (in order: a later source meets what earlier ones added) in one
  // transaction: on any error nothing is written and ResultsDbError is thrown.
  MergeSummary merge(const std::vector<ResultsSnapshot>& sources);

  // Records variants measured elsewhere (see the file comment) and their reference, in one
  // transaction. Throws ResultsDbError (nothing written) for a record with status running or an
  // empty key field.
  ImportSummary importVariants(const std::vector<VariantRecord>& variants,
                               const std::optional<ReferenceRecord>& reference);

 private:
  void migrateFromSchema1();
  void execute(const std::string& sql);
  // Runs body between BEGIN IMMEDIATE and COMMIT; rolls back and rethrows if it throws.
  void inTransaction(const std::function<void()>& body);
  std::filesystem::path path_;
  std::string migrationNote_;
  sqlite3* db_ = nullptr;
};

// Canonical JSON text of a list of numbers: "[1,2,3]".
std::string samplesToJson(const std::vector<uint64_t>& samples);

}  // namespace weft::explore
