// Tests of the results database (explore/results_db.h): a variant written and read back keeps
// every column; the running marker counts attempts and a final record replaces it; lookups by
// key see only the exact (program, device, compiler, parameters), which is what resuming relies
// on; references round-trip; the file is reopened with its rows; a corrupt file and a foreign
// SQLite database give clear errors and are left byte for byte as they were.
#include <doctest/doctest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "explore/results_db.h"

using namespace weft::explore;

namespace {

struct TempFolder {
  std::filesystem::path path;
  TempFolder() {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           ("weft_results_db_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

VariantKey key(const std::string& parameters, const std::string& program = "conv_8") {
  return {program, "0123456789abcdef", "weft test", parameters};
}

}  // namespace

TEST_CASE("a variant round-trips with every column") {
  TempFolder folder;
  const auto file = folder.path / "results.db";
  VariantRecord written;
  written.key = key(R"({"kappa":2,"v":1})");
  written.status = VariantStatus::Ok;
  written.sourceHash = "feedbeef00112233";
  written.samplesNs = {1200, 1100, 1300, 18446744073709551ull};
  written.medianNs = 1250;
  written.spaceBytes = 123456789012;
  written.buildMs = 12.5;
  written.message = "fine";
  written.details = R"({"kernels":[]})";
  written.attempts = 1;
  {
    ResultsDb db(file);
    db.record(written);
  }
  ResultsDb db(file);  // reopened: the row is in the file
  std::optional<VariantRecord> read = db.find(written.key);
  REQUIRE(read);
  CHECK(read->key == written.key);
  CHECK(read->status == VariantStatus::Ok);
  CHECK(read->sourceHash == written.sourceHash);
  CHECK(read->samplesNs == written.samplesNs);
  CHECK(read->medianNs == written.medianNs);
  CHECK(read->spaceBytes == written.spaceBytes);
  CHECK(read->buildMs == doctest::Approx(12.5));
  CHECK(read->message == "fine");
  CHECK(read->details == written.details);
  CHECK(read->attempts == 1);

  VariantRecord failed;
  failed.key = key(R"({"kappa":4,"v":1})");
  failed.status = VariantStatus::BuildError;
  failed.message = "error: expected ';'";
  db.record(failed);
  std::optional<VariantRecord> readFailed = db.find(failed.key);
  REQUIRE(readFailed);
  CHECK(readFailed->status == VariantStatus::BuildError);
  CHECK_FALSE(readFailed->medianNs);
  CHECK_FALSE(readFailed->spaceBytes);
  CHECK_FALSE(readFailed->buildMs);
  CHECK(db.variants().size() == 2);
  CHECK(db.variants("conv_8").size() == 2);
  CHECK(db.variants("other").empty());
  CHECK(db.programs() == std::vector<std::string>{"conv_8"});
}

TEST_CASE("statuses have stable names") {
  for (VariantStatus status :
       {VariantStatus::Ok, VariantStatus::BuildError, VariantStatus::LaunchError,
        VariantStatus::Crashed, VariantStatus::Timeout, VariantStatus::WrongAnswer,
        VariantStatus::Invalid, VariantStatus::Running}) {
    CHECK(parseStatus(statusName(status)) == status);
  }
  CHECK(std::string(statusName(VariantStatus::WrongAnswer)) == "wrong_answer");
  CHECK_FALSE(parseStatus("fine"));
}

TEST_CASE("the running marker counts attempts and the result replaces it; keys are exact") {
  TempFolder folder;
  ResultsDb db(folder.path / "results.db");
  const VariantKey k = key(R"({"kappa":2})");
  CHECK_FALSE(db.find(k));
  CHECK(db.markRunning(k) == 1);
  std::optional<VariantRecord> marker = db.find(k);
  REQUIRE(marker);
  CHECK(marker->status == VariantStatus::Running);
  CHECK(db.markRunning(k) == 2);  // a resumed run starts it again

  VariantRecord done;
  done.key = k;
  done.status = VariantStatus::Timeout;
  done.attempts = 1;  // smaller than the marker's: the marker's count is kept
  db.record(done);
  std::optional<VariantRecord> read = db.find(k);
  REQUIRE(read);
  CHECK(read->status == VariantStatus::Timeout);
  CHECK(read->attempts == 2);
  CHECK(db.variants().size() == 1);  // replaced, not added

  // Resuming skips by exact key: another device, compiler, program or point is not done.
  VariantKey otherDevice = k;
  otherDevice.device = "fedcba9876543210";
  VariantKey otherCompiler = k;
  otherCompiler.compiler = "weft 9";
  CHECK_FALSE(db.find(otherDevice));
  CHECK_FALSE(db.find(otherCompiler));
  CHECK_FALSE(db.find(key(R"({"kappa":2})", "conv_16")));
  CHECK_FALSE(db.find(key(R"({"kappa":3})")));
}

TEST_CASE("references round-trip") {
  TempFolder folder;
  ResultsDb db(folder.path / "results.db");
  ReferenceRecord reference{"conv_8", "0123456789abcdef", "weft test", "a layer", 74000,
                            {10, 20, 30}, 20, 4096};
  db.recordReference(reference);
  auto read = db.reference("conv_8", "0123456789abcdef");
  REQUIRE(read);
  CHECK(read->description == "a layer");
  CHECK(read->flops == 74000);
  CHECK(read->samplesNs == std::vector<uint64_t>{10, 20, 30});
  CHECK(read->medianNs == 20);
  CHECK(read->spaceBytes == 4096);
  CHECK_FALSE(db.reference("conv_8", "fedcba9876543210"));
  CHECK(db.programs() == std::vector<std::string>{"conv_8"});
}

TEST_CASE("peers' times round-trip, are replaced per peer, and are merged once") {
  TempFolder folder;
  const auto sourceFile = folder.path / "source.db";
  PeerRecord torch{"conv_8", "0123456789abcdef", "PyTorch conv2d (2 threads)", 1500000, {},
                   "weft_bench_table3"};
  PeerRecord clblast{"conv_8", "0123456789abcdef", "CLBlast im2col + SGEMM", 9000000,
                     int64_t{123456}, "weft_bench_table3"};
  {
    ResultsDb db(sourceFile);
    db.recordPeer(torch);
    db.recordPeer(clblast);
    torch.medianNs = 1400000;  // measured again: replaces the earlier time
    db.recordPeer(torch);
    const std::vector<PeerRecord> peers = db.peers("conv_8", "0123456789abcdef");
    REQUIRE(peers.size() == 2);
    CHECK(peers[0].peer == "CLBlast im2col + SGEMM");  // ordered by name
    CHECK(peers[0].spaceBytes == 123456);
    CHECK(peers[1].medianNs == 1400000);
    CHECK_FALSE(peers[1].spaceBytes);
    CHECK(peers[1].source == "weft_bench_table3");
    CHECK(db.peers("conv_8", "fedcba9876543210").empty());
    CHECK(db.peers("conv_9").empty());
    PeerRecord empty = torch;
    empty.medianNs = 0;
    CHECK_THROWS_AS(db.recordPeer(empty), ResultsDbError);
    empty = torch;
    empty.peer = "";
    CHECK_THROWS_AS(db.recordPeer(empty), ResultsDbError);
  }
  const ResultsSnapshot snapshot = readResultsSnapshot(sourceFile);
  REQUIRE(snapshot.peers.size() == 2);
  CHECK(snapshot.peersWritten.size() == 2);
  ResultsDb target(folder.path / "target.db");
  MergeSummary summary = target.merge({snapshot});
  CHECK(summary.peersAdded == 2);
  CHECK(target.peers().size() == 2);
  MergeSummary again = target.merge({readResultsSnapshot(sourceFile)});
  CHECK(again.peersAdded == 0);
  CHECK(again.peersKept == 2);
}

TEST_CASE("a file made before the peers' table reads as having no peers, and gains it") {
  TempFolder folder;
  const auto file = folder.path / "old.db";
  {
    ResultsDb db(file);
    db.recordReference(ReferenceRecord{"conv_8", "0123456789abcdef", "weft test", "", 0, {}, 20,
                                       4096});
  }
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "DROP TABLE peer_runs", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  const ResultsSnapshot snapshot = readResultsSnapshot(file);
  CHECK(snapshot.peers.empty());
  CHECK(snapshot.references.size() == 1);
  ResultsDb reopened(file);
  CHECK(reopened.peers().empty());
  reopened.recordPeer({"conv_8", "0123456789abcdef", "PyTorch", 10, {}, ""});
  CHECK(reopened.peers().size() == 1);
}

TEST_CASE("a corrupt file is an error and is left untouched") {
  TempFolder folder;
  const auto file = folder.path / "results.db";
  std::string garbage;
  std::mt19937 rng(3);
  for (int i = 0; i < 8192; ++i) garbage += static_cast<char>(rng() & 0xff);
  std::ofstream(file, std::ios::binary) << garbage;
  std::string message;
  try {
    ResultsDb db(file);
  } catch (const ResultsDbError& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("not a weft results database") != std::string::npos);
  CHECK(message.find(file.string()) != std::string::npos);
  CHECK(readBytes(file) == garbage);
}

TEST_CASE("a SQLite database of another program is an error and is left untouched") {
  TempFolder folder;
  const auto file = folder.path / "other.db";
  sqlite3* other = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &other) == SQLITE_OK);
  REQUIRE(sqlite3_exec(other, "CREATE TABLE customers (name TEXT); INSERT INTO customers "
                              "VALUES ('ada');",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(other);
  const std::string before = readBytes(file);
  std::string message;
  try {
    ResultsDb db(file);
  } catch (const ResultsDbError& e) {
    message = e.what();
  }
  CAPTURE(message);
  CHECK(message.find("did not create") != std::string::npos);
  CHECK(readBytes(file) == before);
}

TEST_CASE("an empty file becomes a database; a folder is an error") {
  TempFolder folder;
  const auto file = folder.path / "empty.db";
  std::ofstream(file).close();
  {
    ResultsDb db(file);
    CHECK(db.variants().empty());
  }
  CHECK(std::filesystem::file_size(file) > 0);
  CHECK_THROWS_AS(ResultsDb(folder.path), ResultsDbError);
}

// Merging: databases written elsewhere join the target in one transaction.

namespace {

VariantRecord finalRecord(const std::string& parameters, VariantStatus status,
                          std::vector<uint64_t> samples) {
  VariantRecord record;
  record.key = key(parameters);
  record.status = status;
  record.samplesNs = samples;
  if (status == VariantStatus::Ok && !samples.empty()) record.medianNs = samples.front();
  record.spaceBytes = 4096;
  record.message = statusName(status);
  record.attempts = 1;
  return record;
}

ReferenceRecord referenceRecord(uint64_t medianNs) {
  ReferenceRecord reference;
  reference.program = "conv_8";
  reference.device = "0123456789abcdef";
  reference.compiler = "weft test";
  reference.description = "conv_8 reference";
  reference.samplesNs = {medianNs};
  reference.medianNs = medianNs;
  reference.spaceBytes = 1024;
  return reference;
}

}  // namespace

TEST_CASE("merge adds missing rows and references, and keeps every column") {
  TempFolder folder;
  const auto sourceFile = folder.path / "source.db";
  const auto targetFile = folder.path / "target.db";
  VariantRecord a = finalRecord(R"({"kappa":1})", VariantStatus::Ok, {300, 310});
  a.sourceHash = "abcdef";
  a.buildMs = 7.5;
  a.details = R"({"kernels":[1]})";
  VariantRecord b = finalRecord(R"({"kappa":2})", VariantStatus::WrongAnswer, {});
  {
    ResultsDb source(sourceFile);
    source.record(a);
    source.record(b);
    source.recordReference(referenceRecord(500));
  }
  const std::string sourceBytes = readBytes(sourceFile);
  ResultsSnapshot snapshot = readResultsSnapshot(sourceFile);
  CHECK(snapshot.variants.size() == 2);
  CHECK(snapshot.references.size() == 1);
  ResultsDb target(targetFile);
  MergeSummary summary = target.merge({snapshot});
  CHECK(summary.sources == 1);
  CHECK(summary.variantsRead == 2);
  CHECK(summary.added == 2);
  CHECK(summary.conflicts == 0);
  CHECK(summary.referencesAdded == 1);
  auto readA = target.find(a.key);
  REQUIRE(readA);
  CHECK(readA->status == VariantStatus::Ok);
  CHECK(readA->samplesNs == a.samplesNs);
  CHECK(readA->medianNs == a.medianNs);
  CHECK(readA->sourceHash == "abcdef");
  CHECK(readA->buildMs == doctest::Approx(7.5));
  CHECK(readA->details == a.details);
  CHECK(readA->spaceBytes == 4096);
  auto readB = target.find(b.key);
  REQUIRE(readB);
  CHECK(readB->status == VariantStatus::WrongAnswer);
  CHECK_FALSE(readB->medianNs);
  auto reference = target.reference("conv_8", "0123456789abcdef", "weft test");
  REQUIRE(reference);
  CHECK(reference->medianNs == 500);
  // Merging the same source again changes nothing and counts the rows as already there.
  MergeSummary again = target.merge({readResultsSnapshot(sourceFile)});
  CHECK(again.added == 0);
  CHECK(again.identical == 2);
  CHECK(again.conflicts == 0);
  CHECK(again.referencesKept == 1);
  CHECK(target.variants().size() == 2);
  // The source was only read.
  CHECK(readBytes(sourceFile) == sourceBytes);
}

TEST_CASE("merge: a result replaces a running marker, the target's result wins a conflict") {
  TempFolder folder;
  const auto targetFile = folder.path / "target.db";
  const auto sourceFile = folder.path / "source.db";
  const std::string runningHere = R"({"kappa":1})";   // running in target, ok in source
  const std::string conflict = R"({"kappa":2})";      // ok in both, different times
  const std::string runningThere = R"({"kappa":3})";  // ok in target, running in source
  const std::string onlyThere = R"({"kappa":4})";     // running only in source
  ResultsDb target(targetFile);
  target.markRunning(key(runningHere));
  target.markRunning(key(runningHere));  // two attempts here
  target.record(finalRecord(conflict, VariantStatus::Ok, {100}));
  target.record(finalRecord(runningThere, VariantStatus::Timeout, {}));
  target.recordReference(referenceRecord(111));
  {
    ResultsDb source(sourceFile);
    source.record(finalRecord(runningHere, VariantStatus::Ok, {250}));
    source.record(finalRecord(conflict, VariantStatus::Ok, {900}));
    source.markRunning(key(runningThere));
    source.markRunning(key(onlyThere));
    source.recordReference(referenceRecord(999));
  }
  MergeSummary summary = target.merge({readResultsSnapshot(sourceFile)});
  CHECK(summary.variantsRead == 4);
  CHECK(summary.replacedRunning == 1);
  CHECK(summary.conflicts == 1);
  CHECK(summary.keptTarget == 1);
  CHECK(summary.added == 1);
  CHECK(summary.referencesKept == 1);
  CHECK(summary.referencesAdded == 0);
  auto replaced = target.find(key(runningHere));
  REQUIRE(replaced);
  CHECK(replaced->status == VariantStatus::Ok);
  CHECK(replaced->medianNs == 250);
  CHECK(replaced->attempts == 2);  // the larger count of the two
  CHECK(target.find(key(conflict))->medianNs == 100);
  CHECK(target.find(key(runningThere))->status == VariantStatus::Timeout);
  CHECK(target.find(key(onlyThere))->status == VariantStatus::Running);
  CHECK(target.reference("conv_8", "0123456789abcdef", "weft test")->medianNs == 111);
  // Rows of another program or device are distinct keys.
  ResultsDb other(folder.path / "other.db");
  VariantRecord elsewhere = finalRecord(conflict, VariantStatus::Ok, {5});
  elsewhere.key.device = "fedcba9876543210";
  other.record(elsewhere);
  MergeSummary second = target.merge({readResultsSnapshot(folder.path / "other.db")});
  CHECK(second.added == 1);
  CHECK(target.variants().size() == 5);
}

TEST_CASE("merge: corrupt, foreign, missing and self sources are errors and change nothing") {
  TempFolder folder;
  const auto targetFile = folder.path / "target.db";
  const auto goodFile = folder.path / "good.db";
  {
    ResultsDb good(goodFile);
    good.record(finalRecord(R"({"kappa":7})", VariantStatus::Ok, {70}));
  }
  const auto corruptFile = folder.path / "corrupt.db";
  std::string garbage;
  std::mt19937 rng(5);
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>(rng() & 0xff);
  std::ofstream(corruptFile, std::ios::binary) << garbage;
  const auto foreignFile = folder.path / "foreign.db";
  sqlite3* foreign = nullptr;
  REQUIRE(sqlite3_open(foreignFile.c_str(), &foreign) == SQLITE_OK);
  REQUIRE(sqlite3_exec(foreign, "CREATE TABLE variants (x TEXT)", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
  sqlite3_close(foreign);
  const std::string foreignBytes = readBytes(foreignFile);
  const auto emptyFile = folder.path / "empty.db";
  std::ofstream(emptyFile).close();

  auto messageOf = [](const std::filesystem::path& path) {
    try {
      readResultsSnapshot(path);
    } catch (const ResultsDbError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string corrupt = messageOf(corruptFile);
  CAPTURE(corrupt);
  CHECK(corrupt.find("not a weft results database") != std::string::npos);
  CHECK(corrupt.find(corruptFile.string()) != std::string::npos);
  CHECK(readBytes(corruptFile) == garbage);
  CHECK(messageOf(foreignFile).find("did not create") != std::string::npos);
  CHECK(readBytes(foreignFile) == foreignBytes);
  CHECK(messageOf(emptyFile).find("empty") != std::string::npos);
  CHECK(std::filesystem::file_size(emptyFile) == 0);
  CHECK(messageOf(folder.path / "missing.db").find("no such results database") !=
        std::string::npos);
  CHECK(messageOf(folder.path).find("folder") != std::string::npos);

  // The target itself as a source is refused before anything is written.
  ResultsDb target(targetFile);
  target.record(finalRecord(R"({"kappa":1})", VariantStatus::Ok, {10}));
  CHECK_THROWS_AS(target.merge({readResultsSnapshot(goodFile), readResultsSnapshot(targetFile)}),
                  ResultsDbError);
  CHECK(target.variants().size() == 1);
  CHECK_FALSE(target.find(key(R"({"kappa":7})")));
}
