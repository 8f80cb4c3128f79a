// A thin RAII layer over SQLite's C API for the results store: one connection, prepared
// statements with typed binds, and errors as InputError naming the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <sqlite3.h>

namespace normlab {

class SqliteDb;

// One prepared statement; bind values by 1-based index, then step().
class SqliteStatement {
 public:
  SqliteStatement(SqliteDb& db, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& text(int i, const std::string& s);
  SqliteStatement& integer(int i, int64_t v);
  SqliteStatement& real(int i, double v);  // NaN and Inf are stored as NULL
  SqliteStatement& null(int i);
  SqliteStatement& optional_text(int i, const std::optional<std::string>& s);
  // Binds a copy of column c of the row `from` stands on (another connection's statement may
  // be it), whatever its type: a row copied between stores keeps its values exactly.
  SqliteStatement& value(int i, const SqliteStatement& from, int c);
  // Runs the statement: true while it yields a row, false when done (then it is reset).
  bool step();
  // Runs a statement that yields no row, then resets it for new binds.
  void run();
  int columns() const;
  std::string column_name(int c) const;
  std::optional<std::string> column_text(int c) const;  // nullopt for NULL
  int64_t column_int(int c) const;
  // For a query of one integer (a count, an id, a pragma): steps once, returns column 0 of the
  // first row (`fallback` when there is none) and finishes the statement.
  int64_t single_int(int64_t fallback);

 private:
  SqliteDb& db_;
  sqlite3_stmt* st_ = nullptr;
};

class SqliteDb {
 public:
  enum class Mode { read_write_create, read_only };
  SqliteDb(const std::filesystem::path& file, Mode mode);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);
  // After a failure inside a transaction this connection began: a ROLLBACK if SQLite still
  // has the transaction open (after a full disk, among other errors, SQLite has already
  // rolled it back). Never throws: the caller rethrows the failure that brought it here.
  void rollback() noexcept;
  int64_t last_insert_rowid() const;
  sqlite3* handle() { return db_; }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  // The last error in normlab's words where SQLite's would mislead (a full disk), else
  // SQLite's message after "sqlite".
  std::string last_error(const char* sqlite_message) const;

  std::string file_;
  sqlite3* db_ = nullptr;
};

}  // namespace normlab
