#include "sqlite_db.hpp"

#include <fmt/format.h>

#include <cmath>

#include "normlab/base/errors.hpp"

namespace normlab {

SqliteDb::SqliteDb(const std::filesystem::path& file, Mode mode) : file_(file.string()) {
  const int flags =
      mode == Mode::read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(file_.c_str(), &db_, flags, nullptr) != SQLITE_OK) fail("cannot open");
  // A second process (a reader, or a writer that lost a race) waits instead of failing.
  sqlite3_busy_timeout(db_, 30000);
}

SqliteDb::~SqliteDb() {
  sqlite3_close(db_);
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string message = last_error(err != nullptr ? err : sqlite3_errmsg(db_));
    sqlite3_free(err);
    throw InputError(fmt::format("{}: {}", file_, message));
  }
}

void SqliteDb::rollback() noexcept {
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

std::string SqliteDb::last_error(const char* sqlite_message) const {
  if (sqlite3_errcode(db_) == SQLITE_FULL) {
    return "cannot write: the disk is full (or the store reached its size limit); nothing of "
           "this write was kept";
  }
  return fmt::format("sqlite: {}", sqlite_message);
}

int64_t SqliteDb::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

void SqliteDb::fail(const std::string& what) const {
  if (sqlite3_errcode(db_) == SQLITE_FULL) {
    throw InputError(fmt::format("{}: {}", file_, last_error(sqlite3_errmsg(db_))));
  }
  throw InputError(fmt::format("{}: sqlite {}: {}", file_, what, sqlite3_errmsg(db_)));
}

SqliteStatement::SqliteStatement(SqliteDb& db, const char* sql) : db_(db) {
  if (sqlite3_prepare_v2(db.handle(), sql, -1, &st_, nullptr) != SQLITE_OK) {
    db.fail("cannot prepare the statement");
  }
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(st_);
}

SqliteStatement& SqliteStatement::text(int i, const std::string& s) {
  sqlite3_bind_text(st_, i, s.c_str(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  return *this;
}

SqliteStatement& SqliteStatement::integer(int i, int64_t v) {
  sqlite3_bind_int64(st_, i, static_cast<sqlite3_int64>(v));
  return *this;
}

SqliteStatement& SqliteStatement::real(int i, double v) {
  if (std::isfinite(v)) {
    sqlite3_bind_double(st_, i, v);
  } else {
    sqlite3_bind_null(st_, i);
  }
  return *this;
}

SqliteStatement& SqliteStatement::null(int i) {
  sqlite3_bind_null(st_, i);
  return *this;
}

SqliteStatement& SqliteStatement::optional_text(int i, const std::optional<std::string>& s) {
  return s ? text(i, *s) : null(i);
}

SqliteStatement& SqliteStatement::value(int i, const SqliteStatement& from, int c) {
  sqlite3_bind_value(st_, i, sqlite3_column_value(from.st_, c));
  return *this;
}

bool SqliteStatement::step() {
  const int rc = sqlite3_step(st_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) {
    sqlite3_reset(st_);
    db_.fail("statement failed");
  }
  sqlite3_reset(st_);
  return false;
}

void SqliteStatement::run() {
  while (step()) {
  }
  sqlite3_clear_bindings(st_);
}

int SqliteStatement::columns() const {
  return sqlite3_column_count(st_);
}

std::string SqliteStatement::column_name(int c) const {
  const char* name = sqlite3_column_name(st_, c);
  return name != nullptr ? name : "";
}

std::optional<std::string> SqliteStatement::column_text(int c) const {
  if (sqlite3_column_type(st_, c) == SQLITE_NULL) return std::nullopt;
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st_, c));
  return std::string(p, static_cast<size_t>(sqlite3_column_bytes(st_, c)));
}

int64_t SqliteStatement::column_int(int c) const {
  return sqlite3_column_int64(st_, c);
}

int64_t SqliteStatement::single_int(int64_t fallback) {
  const int64_t v = step() ? column_int(0) : fallback;
  while (step()) {
  }
  return v;
}

}  // namespace normlab
