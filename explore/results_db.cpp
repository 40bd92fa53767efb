// The SQLite results database (see explore/results_db.h): schema, validation of existing files
// before anything is written, one transaction per row written, and merging other databases
// (read through read-only connections, written in one transaction).
#include "explore/results_db.h"

#include <sqlite3.h>

#include <cerrno>

#include <functional>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

namespace weft::explore {

namespace {

// 'weft' in ASCII: the application_id that marks a file as weft's (SQLite's file header field
// for exactly this purpose).
constexpr int kApplicationId = 0x77656674;
// Schema 2 added each variant's workload and strategy (explore/workload.h); a schema 1 file is
// migrated when opened for writing, after a backup copy.
constexpr int kSchemaVersion = 2;

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
  workload TEXT NOT NULL DEFAULT '',
  strategy TEXT NOT NULL DEFAULT '',
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
CREATE TABLE IF NOT EXISTS peer_runs (
  program TEXT NOT NULL,
  device TEXT NOT NULL,
  peer TEXT NOT NULL,
  median_ns INTEGER NOT NULL,
  space_bytes INTEGER,
  source TEXT NOT NULL DEFAULT '',
  written TEXT NOT NULL DEFAULT (datetime('now')),
  PRIMARY KEY (program, device, peer)
);
)";

// SQLite's message for the last error on `db`, with what to do when the disk is full (SQLite
// says "database or disk is full", or an I/O error whose cause is ENOSPC): every row written
// before stays (each is its own transaction), so the same command resumes once there is room.
std::string problemText(sqlite3* db) {
  std::string text = sqlite3_errmsg(db);
  if (sqlite3_errcode(db) == SQLITE_FULL || sqlite3_system_errno(db) == ENOSPC) {
    text += " (the disk holding the database has no room left: the rows written so far are "
            "kept; free some space and run the same command again to go on)";
  }
  return text;
}

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
    throw ResultsDbError(path_.string() + ": " + what + " failed: " + problemText(db_));
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
    "space_bytes, build_ms, message, details, attempts, workload, strategy";
// The same read from a schema 1 file, which has no workload and strategy (read as '').
const char* const kVariantColumnsSchema1 =
    "program, device, compiler, parameters, status, source_hash, samples, median_ns, "
    "space_bytes, build_ms, message, details, attempts, '', ''";
// The column after kVariantColumns (the `written` time in snapshots).
constexpr int kWrittenColumn = 15;

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
  record.workload = row.text(13);
  record.strategy = row.text(14);
  return record;
}

const char* const kReferenceColumns =
    "program, device, compiler, description, flops, samples, median_ns, space_bytes";

ReferenceRecord readReference(const Statement& row) {
  ReferenceRecord reference;
  reference.program = row.text(0);
  reference.device = row.text(1);
  reference.compiler = row.text(2);
  reference.description = row.text(3);
  reference.flops = row.integer(4);
  reference.samplesNs = samplesFromJson(row.text(5));
  reference.medianNs = static_cast<uint64_t>(row.integer(6));
  reference.spaceBytes = row.integer(7);
  return reference;
}

const char* const kPeerColumns = "program, device, peer, median_ns, space_bytes, source";

PeerRecord readPeer(const Statement& row) {
  PeerRecord peer;
  peer.program = row.text(0);
  peer.device = row.text(1);
  peer.peer = row.text(2);
  peer.medianNs = static_cast<uint64_t>(row.integer(3));
  if (!row.isNull(4)) peer.spaceBytes = row.integer(4);
  peer.source = row.text(5);
  return peer;
}

// Binds a peer's columns to ?1..?6 in kPeerColumns order.
void bindPeer(Statement& statement, const PeerRecord& peer) {
  statement.bind(1, peer.program);
  statement.bind(2, peer.device);
  statement.bind(3, peer.peer);
  statement.bind(4, static_cast<int64_t>(peer.medianNs));
  if (peer.spaceBytes) {
    statement.bind(5, *peer.spaceBytes);
  } else {
    statement.bindNull(5);
  }
  statement.bind(6, peer.source);
}

// Binds a variant's key to ?1..?4 (program, device, compiler, parameters).
void bindKey(Statement& statement, const VariantKey& key) {
  statement.bind(1, key.program);
  statement.bind(2, key.device);
  statement.bind(3, key.compiler);
  statement.bind(4, key.parameters);
}

// Binds a reference run's columns to ?1..?8 (program, device, compiler, description, flops,
// samples, median_ns, space_bytes).
void bindReference(Statement& statement, const ReferenceRecord& reference) {
  statement.bind(1, reference.program);
  statement.bind(2, reference.device);
  statement.bind(3, reference.compiler);
  statement.bind(4, reference.description);
  statement.bind(5, reference.flops);
  statement.bind(6, samplesToJson(reference.samplesNs));
  statement.bind(7, static_cast<int64_t>(reference.medianNs));
  statement.bind(8, reference.spaceBytes);
}

// Binds a variant's columns to ?1..?13 in kVariantColumns order.
void bindVariant(Statement& statement, const VariantRecord& record) {
  bindKey(statement, record.key);
  statement.bind(5, std::string(statusName(record.status)));
  statement.bind(6, record.sourceHash);
  statement.bind(7, samplesToJson(record.samplesNs));
  if (record.medianNs) {
    statement.bind(8, static_cast<int64_t>(*record.medianNs));
  } else {
    statement.bindNull(8);
  }
  if (record.spaceBytes) {
    statement.bind(9, *record.spaceBytes);
  } else {
    statement.bindNull(9);
  }
  if (record.buildMs) {
    statement.bind(10, *record.buildMs);
  } else {
    statement.bindNull(10);
  }
  statement.bind(11, record.message);
  statement.bind(12, record.details.empty() ? std::string("{}") : record.details);
  statement.bind(13, static_cast<int64_t>(record.attempts));
  statement.bind(14, record.workload);
  statement.bind(15, record.strategy);
}

// A read-only connection, closed on scope exit.
struct ReadOnlyConnection {
  sqlite3* db = nullptr;
  ~ReadOnlyConnection() {
    if (db) sqlite3_close(db);
  }
};

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
    if (applicationId == kApplicationId && tables > 0 && version < 2) migrateFromSchema1();
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

void ResultsDb::migrateFromSchema1() {
  // The backup first: a consistent copy of the whole file (committed WAL content included),
  // under a name no other file has.
  std::filesystem::path backup = path_.string() + ".schema1-backup";
  for (int n = 2; std::filesystem::exists(backup); ++n) {
    backup = path_.string() + ".schema1-backup" + std::to_string(n);
  }
  Statement vacuum(db_, "VACUUM INTO ?1", path_);
  vacuum.bind(1, backup.string());
  vacuum.step();
  execute("BEGIN IMMEDIATE");
  execute("ALTER TABLE variants ADD COLUMN workload TEXT NOT NULL DEFAULT ''");
  execute("ALTER TABLE variants ADD COLUMN strategy TEXT NOT NULL DEFAULT ''");
  execute("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  execute("COMMIT");
  migrationNote_ = path_.string() +
                   ": migrated from schema 1 to 2 (each variant now names its workload and "
                   "strategy; earlier rows are read as before); the file as it was is kept as " +
                   backup.string();
}

ResultsDb::~ResultsDb() {
  if (db_) sqlite3_close(db_);
}

void ResultsDb::execute(const std::string& sql) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    std::string message = problemText(db_);
    sqlite3_free(error);
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw ResultsDbError(path_.string() + ": " + message);
  }
}

void ResultsDb::inTransaction(const std::function<void()>& body) {
  execute("BEGIN IMMEDIATE");
  try {
    body();
  } catch (...) {
    if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  execute("COMMIT");
}

int ResultsDb::markRunning(const VariantKey& key) {
  int attempts = 0;
  inTransaction([&] {
    {
      Statement insert(db_,
                       "INSERT INTO variants (program, device, compiler, parameters, status, "
                       "attempts) VALUES (?1, ?2, ?3, ?4, 'running', 1) "
                       "ON CONFLICT (program, device, compiler, parameters) DO UPDATE SET "
                       "status = 'running', attempts = attempts + 1, written = datetime('now')",
                       path_);
      bindKey(insert, key);
      insert.step();
    }
    Statement query(db_,
                    "SELECT attempts FROM variants WHERE program = ?1 AND device = ?2 AND "
                    "compiler = ?3 AND parameters = ?4",
                    path_);
    bindKey(query, key);
    if (query.step()) attempts = static_cast<int>(query.integer(0));
  });
  return attempts;
}

void ResultsDb::record(const VariantRecord& record) {
  inTransaction([&] {
    Statement insert(
        db_,
        "INSERT INTO variants (program, device, compiler, parameters, status, source_hash, "
        "samples, median_ns, space_bytes, build_ms, message, details, attempts, workload, "
        "strategy) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
        "ON CONFLICT (program, device, compiler, parameters) DO UPDATE SET "
        "status = excluded.status, source_hash = excluded.source_hash, samples = "
        "excluded.samples, median_ns = excluded.median_ns, space_bytes = excluded.space_bytes, "
        "build_ms = excluded.build_ms, message = excluded.message, details = excluded.details, "
        "attempts = max(attempts, excluded.attempts), workload = excluded.workload, "
        "strategy = excluded.strategy, written = datetime('now')",
        path_);
    bindVariant(insert, record);
    insert.step();
  });
}

std::optional<VariantRecord> ResultsDb::find(const VariantKey& key) const {
  Statement query(db_,
                  std::string("SELECT ") + kVariantColumns +
                      " FROM variants WHERE program = ?1 AND device = ?2 AND compiler = ?3 AND "
                      "parameters = ?4",
                  path_);
  bindKey(query, key);
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
  inTransaction([&] {
    Statement insert(db_,
                     "INSERT OR REPLACE INTO reference_runs (program, device, compiler, "
                     "description, flops, samples, median_ns, space_bytes) VALUES "
                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                     path_);
    bindReference(insert, reference);
    insert.step();
  });
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
  return readReference(query);
}

std::vector<ReferenceRecord> ResultsDb::references() const {
  Statement query(db_,
                  std::string("SELECT ") + kReferenceColumns +
                      " FROM reference_runs ORDER BY program, device, compiler",
                  path_);
  std::vector<ReferenceRecord> references;
  while (query.step()) references.push_back(readReference(query));
  return references;
}

void ResultsDb::recordPeer(const PeerRecord& peer) {
  if (peer.program.empty() || peer.device.empty() || peer.peer.empty() || peer.medianNs == 0) {
    throw ResultsDbError(path_.string() + ": a peer's time needs a program, a device, a peer "
                         "name and a time above zero (got program '" + peer.program +
                         "', peer '" + peer.peer + "')");
  }
  inTransaction([&] {
    Statement insert(db_,
                     std::string("INSERT OR REPLACE INTO peer_runs (") + kPeerColumns +
                         ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                     path_);
    bindPeer(insert, peer);
    insert.step();
  });
}

std::vector<PeerRecord> ResultsDb::peers(const std::string& program,
                                         const std::string& device) const {
  Statement query(db_,
                  std::string("SELECT ") + kPeerColumns +
                      " FROM peer_runs WHERE (?1 = '' OR program = ?1) AND (?2 = '' OR device = "
                      "?2) ORDER BY program, device, peer",
                  path_);
  query.bind(1, program);
  query.bind(2, device);
  std::vector<PeerRecord> peers;
  while (query.step()) peers.push_back(readPeer(query));
  return peers;
}

ResultsSnapshot readResultsSnapshot(const std::filesystem::path& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    throw ResultsDbError(path.string() + ": no such results database");
  }
  if (std::filesystem::is_directory(path, error)) {
    throw ResultsDbError(path.string() + ": is a folder, not a results database file");
  }
  ReadOnlyConnection connection;
  if (sqlite3_open_v2(path.c_str(), &connection.db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    throw ResultsDbError(path.string() + ": cannot open the results database: " +
                         (connection.db ? sqlite3_errmsg(connection.db) : "out of memory"));
  }
  sqlite3_busy_timeout(connection.db, 10000);
  int applicationId = 0;
  int64_t tables = 0;
  int version = 0;
  try {
    Statement idQuery(connection.db, "PRAGMA application_id", path);
    if (idQuery.step()) applicationId = static_cast<int>(idQuery.integer(0));
    Statement tableQuery(connection.db, "SELECT count(*) FROM sqlite_master", path);
    if (tableQuery.step()) tables = tableQuery.integer(0);
    Statement versionQuery(connection.db, "PRAGMA user_version", path);
    if (versionQuery.step()) version = static_cast<int>(versionQuery.integer(0));
  } catch (const ResultsDbError& e) {
    throw ResultsDbError(path.string() +
                         ": not a weft results database (the file is not a readable SQLite "
                         "database): " +
                         std::string(e.what()).substr(path.string().size() + 2));
  }
  if (applicationId != kApplicationId) {
    throw ResultsDbError(path.string() +
                         (tables > 0 ? ": a SQLite database that weft did not create"
                                     : ": not a weft results database (it is empty)"));
  }
  if (version > kSchemaVersion) {
    throw ResultsDbError(path.string() + ": written by a newer weft (schema " +
                         std::to_string(version) + ", this weft reads " +
                         std::to_string(kSchemaVersion) + ")");
  }
  ResultsSnapshot snapshot;
  snapshot.path = path;
  try {
    Statement variants(connection.db,
                       std::string("SELECT ") +
                           (version < 2 ? kVariantColumnsSchema1 : kVariantColumns) +
                           ", written FROM variants ORDER BY id",
                       path);
    while (variants.step()) {
      snapshot.variants.push_back(readVariant(variants));
      snapshot.variantsWritten.push_back(variants.text(kWrittenColumn));
    }
    Statement references(connection.db,
                         std::string("SELECT ") + kReferenceColumns +
                             ", written FROM reference_runs ORDER BY program, device, compiler",
                         path);
    while (references.step()) {
      snapshot.references.push_back(readReference(references));
      snapshot.referencesWritten.push_back(references.text(8));
    }
    // Files made before peer_runs existed have no such table: no peers.
    Statement peerTable(connection.db,
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = "
                        "'peer_runs'",
                        path);
    if (peerTable.step() && peerTable.integer(0) > 0) {
      Statement peers(connection.db,
                      std::string("SELECT ") + kPeerColumns +
                          ", written FROM peer_runs ORDER BY program, device, peer",
                      path);
      while (peers.step()) {
        snapshot.peers.push_back(readPeer(peers));
        snapshot.peersWritten.push_back(peers.text(6));
      }
    }
  } catch (const ResultsDbError& e) {
    throw ResultsDbError(path.string() + ": a damaged weft results database: " +
                         std::string(e.what()).substr(path.string().size() + 2));
  }
  return snapshot;
}

MergeSummary ResultsDb::merge(const std::vector<ResultsSnapshot>& sources) {
  MergeSummary summary;
  summary.sources = sources.size();
  for (const ResultsSnapshot& source : sources) {
    std::error_code error;
    if (std::filesystem::equivalent(source.path, path_, error)) {
      throw ResultsDbError(source.path.string() +
                           ": is the database merged into; give other files as sources");
    }
  }
  inTransaction([&] {
    for (const ResultsSnapshot& source : sources) {
      for (size_t i = 0; i < source.variants.size(); ++i) {
        const VariantRecord& incoming = source.variants[i];
        const std::string written =
            i < source.variantsWritten.size() ? source.variantsWritten[i] : std::string();
        ++summary.variantsRead;
        std::optional<VariantRecord> existing = find(incoming.key);
        if (!existing) {
          Statement insert(db_,
                           std::string("INSERT INTO variants (") + kVariantColumns +
                               ", written) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                               "?11, ?12, ?13, ?14, ?15, "
                               "coalesce(nullif(?16, ''), datetime('now')))",
                           path_);
          bindVariant(insert, incoming);
          insert.bind(16, written);
          insert.step();
          ++summary.added;
          continue;
        }
        const bool targetFinal = existing->status != VariantStatus::Running;
        const bool sourceFinal = incoming.status != VariantStatus::Running;
        if (!targetFinal && sourceFinal) {
          Statement update(db_,
                           "UPDATE variants SET status = ?5, source_hash = ?6, samples = ?7, "
                           "median_ns = ?8, space_bytes = ?9, build_ms = ?10, message = ?11, "
                           "details = ?12, attempts = max(attempts, ?13), workload = ?14, "
                           "strategy = ?15, written = "
                           "coalesce(nullif(?16, ''), datetime('now')) WHERE program = ?1 AND "
                           "device = ?2 AND compiler = ?3 AND parameters = ?4",
                           path_);
          bindVariant(update, incoming);
          update.bind(16, written);
          update.step();
          ++summary.replacedRunning;
        } else if (targetFinal && sourceFinal) {
          if (existing->status == incoming.status && existing->samplesNs == incoming.samplesNs &&
              existing->medianNs == incoming.medianNs) {
            ++summary.identical;
          } else {
            ++summary.conflicts;
          }
        } else {
          ++summary.keptTarget;
        }
      }
      for (size_t i = 0; i < source.references.size(); ++i) {
        const ReferenceRecord& incoming = source.references[i];
        const std::string written =
            i < source.referencesWritten.size() ? source.referencesWritten[i] : std::string();
        Statement insert(db_,
                         "INSERT OR IGNORE INTO reference_runs (program, device, compiler, "
                         "description, flops, samples, median_ns, space_bytes, written) VALUES "
                         "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, coalesce(nullif(?9, ''), "
                         "datetime('now')))",
                         path_);
        bindReference(insert, incoming);
        insert.bind(9, written);
        insert.step();
        if (sqlite3_changes(db_) > 0) {
          ++summary.referencesAdded;
        } else {
          ++summary.referencesKept;
        }
      }
      for (size_t i = 0; i < source.peers.size(); ++i) {
        const std::string written =
            i < source.peersWritten.size() ? source.peersWritten[i] : std::string();
        Statement insert(db_,
                         std::string("INSERT OR IGNORE INTO peer_runs (") + kPeerColumns +
                             ", written) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                             "coalesce(nullif(?7, ''), datetime('now')))",
                         path_);
        bindPeer(insert, source.peers[i]);
        insert.bind(7, written);
        insert.step();
        if (sqlite3_changes(db_) > 0) {
          ++summary.peersAdded;
        } else {
          ++summary.peersKept;
        }
      }
    }
  });
  return summary;
}

ImportSummary ResultsDb::importVariants(const std::vector<VariantRecord>& variants,
                                        const std::optional<ReferenceRecord>& reference) {
  for (const VariantRecord& record : variants) {
    if (record.status == VariantStatus::Running) {
      throw ResultsDbError("an imported variant of " + record.key.program +
                           " has status running; only final results can be imported");
    }
    if (record.key.program.empty() || record.key.device.empty() || record.key.compiler.empty() ||
        record.key.parameters.empty()) {
      throw ResultsDbError("an imported variant has an empty program, device, compiler or "
                           "parameters field");
    }
  }
  // The same rules as merging another database: one snapshot with these rows.
  ResultsSnapshot snapshot;
  snapshot.path = "(imported results)";
  snapshot.variants = variants;
  if (reference) snapshot.references.push_back(*reference);
  MergeSummary merged = merge({snapshot});
  ImportSummary summary;
  summary.variantsRead = merged.variantsRead;
  summary.added = merged.added;
  summary.replacedRunning = merged.replacedRunning;
  summary.identical = merged.identical;
  summary.conflicts = merged.conflicts;
  summary.referenceAdded = merged.referencesAdded > 0;
  return summary;
}

}  // namespace weft::explore
