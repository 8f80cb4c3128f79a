#include "normlab/results_store.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cmath>

#include "normlab/errors.hpp"

namespace normlab {
namespace {

class Db {
 public:
  explicit Db(const std::filesystem::path& file) : file_(file.string()) {
    if (sqlite3_open(file_.c_str(), &db_) != SQLITE_OK) fail("cannot open");
  }
  ~Db() { sqlite3_close(db_); }
  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string message = err != nullptr ? err : "?";
      sqlite3_free(err);
      throw InputError(fmt::format("{}: sqlite: {}", file_, message));
    }
  }
  sqlite3_stmt* prepare(const char* sql) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql, -1, &st, nullptr) != SQLITE_OK) fail("cannot prepare");
    return st;
  }
  void step(sqlite3_stmt* st) {
    if (sqlite3_step(st) != SQLITE_DONE) fail("cannot insert");
    sqlite3_reset(st);
  }
  [[noreturn]] void fail(const char* what) {
    throw InputError(fmt::format("{}: sqlite {}: {}", file_, what, sqlite3_errmsg(db_)));
  }

 private:
  std::string file_;
  sqlite3* db_ = nullptr;
};

void bind_text(sqlite3_stmt* st, int i, const std::string& s) {
  sqlite3_bind_text(st, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

void bind_real(sqlite3_stmt* st, int i, double v) {
  if (std::isfinite(v)) {
    sqlite3_bind_double(st, i, v);
  } else {
    sqlite3_bind_null(st, i);
  }
}

}  // namespace

void write_results_store(const std::filesystem::path& file, const std::string& experiment,
                         const std::string& config_json, const std::vector<StoredRun>& runs,
                         const std::vector<StoredResult>& results) {
  const std::filesystem::path tmp = file.string() + fmt::format(".tmp.{}", ::getpid());
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  {
    Db db(tmp);
    db.exec(
        "CREATE TABLE experiment(name TEXT, config_json TEXT);"
        "CREATE TABLE runs(variant TEXT, scheme TEXT, norm TEXT, seed INTEGER, status TEXT, "
        "run_dir TEXT);"
        "CREATE TABLE results(variant TEXT, scheme TEXT, norm TEXT, seed INTEGER, weights TEXT, "
        "length INTEGER, seq_len INTEGER, metric TEXT, value REAL, ci_low REAL, ci_high REAL, "
        "count INTEGER);"
        "BEGIN;");
    sqlite3_stmt* e = db.prepare("INSERT INTO experiment VALUES(?, ?)");
    bind_text(e, 1, experiment);
    bind_text(e, 2, config_json);
    db.step(e);
    sqlite3_finalize(e);
    sqlite3_stmt* r = db.prepare("INSERT INTO runs VALUES(?, ?, ?, ?, ?, ?)");
    for (const StoredRun& run : runs) {
      bind_text(r, 1, run.variant);
      bind_text(r, 2, run.scheme);
      bind_text(r, 3, run.norm);
      sqlite3_bind_int64(r, 4, static_cast<sqlite3_int64>(run.seed));
      bind_text(r, 5, run.status);
      bind_text(r, 6, run.run_dir);
      db.step(r);
    }
    sqlite3_finalize(r);
    sqlite3_stmt* s = db.prepare("INSERT INTO results VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const StoredResult& x : results) {
      bind_text(s, 1, x.variant);
      bind_text(s, 2, x.scheme);
      bind_text(s, 3, x.norm);
      sqlite3_bind_int64(s, 4, static_cast<sqlite3_int64>(x.seed));
      bind_text(s, 5, x.weights);
      sqlite3_bind_int64(s, 6, x.length);
      sqlite3_bind_int64(s, 7, x.seq_len);
      bind_text(s, 8, x.metric);
      bind_real(s, 9, x.value);
      bind_real(s, 10, x.ci_low);
      bind_real(s, 11, x.ci_high);
      sqlite3_bind_int64(s, 12, x.count);
      db.step(s);
    }
    sqlite3_finalize(s);
    db.exec("COMMIT;");
  }
  std::filesystem::rename(tmp, file, ec);
  if (ec)
    throw InputError(fmt::format("{}: cannot rename into place: {}", file.string(), ec.message()));
}

}  // namespace normlab
