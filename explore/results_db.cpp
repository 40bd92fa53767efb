// The SQLite results database (see explore/results_db.h): schema, validation of existing files
// before anything is written, and one transaction per row written.
#include "explore/results_db.h"

#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

namespace weft::explore {

namespace {

// 'weft' in ASCII: the application_id that marks a file as weft's (SQLite's file header field
// for exactly this purpose).
constexpr int kApplicationId = 0x77656674;
constexpr int kSchemaVersion = 1;

const char* const kSchema = R"(
CREATE TABLE IF NOT EXISTS variants (
  id INTEGER PRIMARY KEY,
  program TEXT NOT NULL,
  device TEXT NOT NULL,
  compiler TEXT NOT NULL,
  parameters TEXT NOT NULL,
  status TEXT NOT NULL,
  source_hash TEXT NOT NULL DEFAULT '',
  samples TEXT NOT NULL DEFAULT '[]',
  median_ns INTEGER,
  space_bytes INTEGER,
  build_ms REAL,
  message TEXT NOT NULL DEFAULT '',
  details TEXT NOT NULL DEFAULT '{}',
  attempts INTEGER NOT NULL DEFAULT 0,
  written TEXT NOT NULL DEFAULT (datetime('now')),
  UNIQUE (program, device, compiler, parameters)
);
CREATE TABLE IF NOT EXISTS reference_runs (
  program TEXT NOT NULL,
  device TEXT NOT NULL,
  compiler TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  flops INTEGER NOT NULL DEFAULT 0,
  samples TEXT NOT NULL DEFAULT '[]',
  median_ns INTEGER NOT NULL,
  space_bytes INTEGER NOT NULL,
  written TEXT NOT NULL DEFAULT (datetime('now')),
  PRIMARY KEY (program, device, compiler)
);
)";

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& path)
      : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) {
      fail("preparing a query");
    }
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int index, const std::string& text) {
    check(sqlite3_bind_text(statement_, index, text.c_str(), static_cast<int>(text.size()),
                            SQLITE_TRANSIENT));
  }
  void bind(int index, int64_t value) { check(sqlite3_bind_int64(statement_, index, value)); }
  void bind(int index, double value) { check(sqlite3_bind_double(statement_, index, value)); }
  void bindNull(int index) { check(sqlite3_bind_null(statement_, index)); }

  // True while a row is available.
  bool step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("a query");
    return false;
  }
  bool isNull(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }
  std::string text(int column) const {
    const unsigned char* data = sqlite3_column_text(statement_, column);
    return data ? reinterpret_cast<const char*>(data) : "";
  }
  int64_t integer(int column) const { return sqlite3_column_int64(statement_, column); }
  double real(int column) const { return sqlite3_column_double(statement_, column); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) fail("binding a value");
  }
  [[noreturn]] void fail(const std::string& what) {
    throw ResultsDbError(path_.string() + ": " + what + " failed: " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::filesystem::path path_;
  sqlite3_stmt* statement_ = nullptr;
};

std::vector<uint64_t> samplesFromJson(const std::string& text) {
  std::vector<uint64_t> samples;
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_array()) {
    for (const auto& value : json) {
      if (value.is_number_unsigned() || value.is_number_integer()) {
        samples.push_back(value.get<uint64_t>());
      }
    }
  }
  return samples;
}

const char* const kVariantColumns =
    "program, device, compiler, parameters, status, source_hash, samples, median_ns, "
    "space_bytes, build_ms, message, details, attempts";

VariantRecord readVariant(const Statement& row) {
  VariantRecord record;
  record.key = {row.text(0), row.text(1), row.text(2), row.text(3)};
  record.status = parseStatus(row.text(4)).value_or(VariantStatus::Invalid);
  record.sourceHash = row.text(5);
  record.samplesNs = samplesFromJson(row.text(6));
  if (!row.isNull(7)) record.medianNs = static_cast<uint64_t>(row.integer(7));
  if (!row.isNull(8)) record.spaceBytes = row.integer(8);
  if (!row.isNull(9)) record.buildMs = row.real(9);
  record.message = row.text(10);
  record.details = row.text(11);
  record.attempts = static_cast<int>(row.integer(12));
  return record;
}

}  // namespace

const char* statusName(VariantStatus status) {
  switch (status) {
    case VariantStatus::Ok:
      return "ok";
    case VariantStatus::BuildError:
      return "build_error";
    case VariantStatus::LaunchError:
      return "launch_error";
    case VariantStatus::Crashed:
      return "crashed";
    case VariantStatus::Timeout:
      return "timeout";
    case VariantStatus::WrongAnswer:
      return "wrong_answer";
    case VariantStatus::Invalid:
      return "invalid";
    case VariantStatus::Running:
      return "running";
  }
  return "?";
}

std::optional<VariantStatus> parseStatus(const std::string& name) {
  for (VariantStatus status :
       {VariantStatus::Ok, VariantStatus::BuildError, VariantStatus::LaunchError,
        VariantStatus::Crashed, VariantStatus::Timeout, VariantStatus::WrongAnswer,
        VariantStatus::Invalid, VariantStatus::Running}) {
    if (name == statusName(status)) return status;
  }
  return std::nullopt;
}

std::string samplesToJson(const std::vector<uint64_t>& samples) {
  return nlohmann::json(samples).dump();
}

ResultsDb::ResultsDb(const std::filesystem::path& path) : path_(path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw ResultsDbError(path.string() + ": is a folder, not a results database file");
  }
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw ResultsDbError(path.string() + ": cannot open the results database: " + message);
  }
  sqlite3_busy_timeout(db_, 10000);
  // Read-only checks first: nothing is written until the file is known to be weft's or new.
  int applicationId = 0;
  int64_t tables = 0;
  int version = 0;
  try {
    {
      Statement query(db_, "PRAGMA application_id", path_);
      if (query.step()) applicationId = static_cast<int>(query.integer(0));
    }
    {
      Statement query(db_, "SELECT count(*) FROM sqlite_master", path_);
      if (query.step()) tables = query.integer(0);
    }
    {
      Statement query(db_, "PRAGMA user_version", path_);
      if (query.step()) version = static_cast<int>(query.integer(0));
    }
  } catch (const ResultsDbError& e) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw ResultsDbError(path.string() +
                         ": not a weft results database (the file is not a readable SQLite "
                         "database; it was left as it is): " +
                         std::string(e.what()).substr(path.string().size() + 2));
  }
  if (applicationId != kApplicationId && tables > 0) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw ResultsDbError(path.string() +
                         ": a SQLite database that weft did not create (it was left as it is); "
                         "give another --db file");
  }
  if (applicationId == kApplicationId && version > kSchemaVersion) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw ResultsDbError(path.string() + ": written by a newer weft (schema " +
                         std::to_string(version) + ", this weft reads " +
                         std::to_string(kSchemaVersion) + ")");
  }
  try {
    execute("PRAGMA journal_mode=WAL");
    execute("BEGIN IMMEDIATE");
    execute(kSchema);
    execute("PRAGMA application_id=" + std::to_string(kApplicationId));
    execute("PRAGMA user_version=" + std::to_string(kSchemaVersion));
    execute("COMMIT");
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

ResultsDb::~ResultsDb() {
  if (db_) sqlite3_close(db_);
}

void ResultsDb::execute(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw ResultsDbError(path_.string() + ": " + message);
  }
}

int ResultsDb::markRunning(const VariantKey& key) {
  execute("BEGIN IMMEDIATE");
  try {
    {
      Statement insert(db_,
                       "INSERT INTO variants (program, device, compiler, parameters, status, "
                       "attempts) VALUES (?1, ?2, ?3, ?4, 'running', 1) "
                       "ON CONFLICT (program, device, compiler, parameters) DO UPDATE SET "
                       "status = 'running', attempts = attempts + 1, written = datetime('now')",
                       path_);
      insert.bind(1, key.program);
      insert.bind(2, key.device);
      insert.bind(3, key.compiler);
      insert.bind(4, key.parameters);
      insert.step();
    }
    int attempts = 0;
    {
      Statement query(db_,
                      "SELECT attempts FROM variants WHERE program = ?1 AND device = ?2 AND "
                      "compiler = ?3 AND parameters = ?4",
                      path_);
      query.bind(1, key.program);
      query.bind(2, key.device);
      query.bind(3, key.compiler);
      query.bind(4, key.parameters);
      if (query.step()) attempts = static_cast<int>(query.integer(0));
    }
    execute("COMMIT");
    return attempts;
  } catch (...) {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void ResultsDb::record(const VariantRecord& record) {
  execute("BEGIN IMMEDIATE");
  try {
    Statement insert(
        db_,
        "INSERT INTO variants (program, device, compiler, parameters, status, source_hash, "
        "samples, median_ns, space_bytes, build_ms, message, details, attempts) VALUES "
        "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
        "ON CONFLICT (program, device, compiler, parameters) DO UPDATE SET "
        "status = excluded.status, source_hash = excluded.source_hash, samples = "
        "excluded.samples, median_ns = excluded.median_ns, space_bytes = excluded.space_bytes, "
        "build_ms = excluded.build_ms, message = excluded.message, details = excluded.details, "
        "attempts = max(attempts, excluded.attempts), written = datetime('now')",
        path_);
    insert.bind(1, record.key.program);
    insert.bind(2, record.key.device);
    insert.bind(3, record.key.compiler);
    insert.bind(4, record.key.parameters);
    insert.bind(5, std::string(statusName(record.status)));
    insert.bind(6, record.sourceHash);
    insert.bind(7, samplesToJson(record.samplesNs));
    if (record.medianNs) {
      insert.bind(8, static_cast<int64_t>(*record.medianNs));
    } else {
      insert.bindNull(8);
    }
    if (record.spaceBytes) {
      insert.bind(9, *record.spaceBytes);
    } else {
      insert.bindNull(9);
    }
    if (record.buildMs) {
      insert.bind(10, *record.buildMs);
    } else {
      insert.bindNull(10);
    }
    insert.bind(11, record.message);
    insert.bind(12, record.details.empty() ? std::string("{}") : record.details);
    insert.bind(13, static_cast<int64_t>(record.attempts));
    insert.step();
  } catch (...) {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  execute("COMMIT");
}

std::optional<VariantRecord> ResultsDb::find(const VariantKey& key) const {
  Statement query(db_,
                  std::string("SELECT ") + kVariantColumns +
                      " FROM variants WHERE program = ?1 AND device = ?2 AND compiler = ?3 AND "
                      "parameters = ?4",
                  path_);
  query.bind(1, key.program);
  query.bind(2, key.device);
  query.bind(3, key.compiler);
  query.bind(4, key.parameters);
  if (!query.step()) return std::nullopt;
  return readVariant(query);
}

std::vector<VariantRecord> ResultsDb::variants(const std::string& program,
                                               const std::string& device) const {
  Statement query(db_,
                  std::string("SELECT ") + kVariantColumns +
                      " FROM variants WHERE (?1 = '' OR program = ?1) AND (?2 = '' OR device = "
                      "?2) ORDER BY id",
                  path_);
  query.bind(1, program);
  query.bind(2, device);
  std::vector<VariantRecord> records;
  while (query.step()) records.push_back(readVariant(query));
  return records;
}

std::vector<std::string> ResultsDb::programs() const {
  Statement query(db_,
                  "SELECT program FROM variants UNION SELECT program FROM reference_runs "
                  "ORDER BY program",
                  path_);
  std::vector<std::string> names;
  while (query.step()) names.push_back(query.text(0));
  return names;
}

void ResultsDb::recordReference(const ReferenceRecord& reference) {
  execute("BEGIN IMMEDIATE");
  try {
    Statement insert(db_,
                     "INSERT OR REPLACE INTO reference_runs (program, device, compiler, "
                     "description, flops, samples, median_ns, space_bytes) VALUES "
                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                     path_);
    insert.bind(1, reference.program);
    insert.bind(2, reference.device);
    insert.bind(3, reference.compiler);
    insert.bind(4, reference.description);
    insert.bind(5, reference.flops);
    insert.bind(6, samplesToJson(reference.samplesNs));
    insert.bind(7, static_cast<int64_t>(reference.medianNs));
    insert.bind(8, reference.spaceBytes);
    insert.step();
  } catch (...) {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  execute("COMMIT");
}

std::optional<ReferenceRecord> ResultsDb::reference(const std::string& program,
                                                    const std::string& device,
                                                    const std::string& compiler) const {
  Statement query(db_,
                  "SELECT program, device, compiler, description, flops, samples, median_ns, "
                  "space_bytes FROM reference_runs WHERE program = ?1 AND (?2 = '' OR device = "
                  "?2) AND (?3 = '' OR compiler = ?3) ORDER BY written DESC LIMIT 1",
                  path_);
  query.bind(1, program);
  query.bind(2, device);
  query.bind(3, compiler);
  if (!query.step()) return std::nullopt;
  ReferenceRecord reference;
  reference.program = query.text(0);
  reference.device = query.text(1);
  reference.compiler = query.text(2);
  reference.description = query.text(3);
  reference.flops = query.integer(4);
  reference.samplesNs = samplesFromJson(query.text(5));
  reference.medianNs = static_cast<uint64_t>(query.integer(6));
  reference.spaceBytes = query.integer(7);
  return reference;
}

}  // namespace weft::explore
