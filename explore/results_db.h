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
//   a message (why it failed) and details (JSON: per-kernel times, tolerance, ...).
// A second table holds each program's reference run (the naive default-lowered program).
// Every write is its own transaction; the file is in WAL mode so that readers (weft report)
// can look while an exploration writes.
//
// A file that is not a SQLite database, or a SQLite database that weft did not create (its
// application_id is not weft's and it has tables), raises ResultsDbError with a clear message
// and is never written to.
#pragma once

#include <cstdint>
#include <filesystem>
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

class ResultsDb {
 public:
  // Opens `path`, creating the file and its tables when it does not exist or is empty. Throws
  // ResultsDbError for a corrupt or foreign file (left untouched) or an unusable folder.
  explicit ResultsDb(const std::filesystem::path& path);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  const std::filesystem::path& path() const { return path_; }

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

 private:
  void execute(const std::string& sql);
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
};

// Canonical JSON text of a list of numbers: "[1,2,3]".
std::string samplesToJson(const std::vector<uint64_t>& samples);

}  // namespace weft::explore
