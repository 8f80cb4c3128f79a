// SqliteDb (src/store/sqlite_db.hpp) when a write runs out of room: the error says so in
// normlab's words, and ending the transaction never replaces it with a second error (SQLite
// may already have rolled the transaction back). PRAGMA max_page_count stands in for a full
// disk: SQLite answers both with SQLITE_FULL.
#include <gtest/gtest.h>

#include <string>

#include "normlab/base/errors.hpp"
#include "store/sqlite_db.hpp"
#include "support/cli.hpp"

namespace normlab {
namespace {

TEST(SqliteDb, AFullDiskIsSaidAndTheTransactionEndsCleanly) {
  testing::TempDir tmp;
  SqliteDb db(tmp / "s.sqlite", SqliteDb::Mode::read_write_create);
  db.exec("CREATE TABLE t(x TEXT)");
  db.exec("INSERT INTO t VALUES('kept')");
  const int64_t pages = SqliteStatement(db, "PRAGMA page_count").single_int(0);
  db.exec("PRAGMA max_page_count = " + std::to_string(pages + 1));
  std::string message;
  db.exec("BEGIN IMMEDIATE");
  try {
    SqliteStatement insert(db, "INSERT INTO t VALUES(?)");
    for (int i = 0; i < 1000; ++i) insert.text(1, std::string(4000, 'x')).run();
    db.exec("COMMIT");
  } catch (const InputError& e) {
    message = e.what();
    db.rollback();  // must not throw, whether or not SQLite ended the transaction
  }
  EXPECT_NE(message.find("cannot write: the disk is full"), std::string::npos) << message;
  EXPECT_EQ(message.find("cannot rollback"), std::string::npos) << message;
  // Nothing of the failed transaction is kept, and the connection is usable again.
  EXPECT_EQ(SqliteStatement(db, "SELECT COUNT(*) FROM t").single_int(-1), 1);
  db.exec("BEGIN IMMEDIATE");
  db.exec("INSERT INTO t VALUES('after')");
  db.exec("COMMIT");
  EXPECT_EQ(SqliteStatement(db, "SELECT COUNT(*) FROM t").single_int(-1), 2);
}

TEST(SqliteDb, RollbackOutsideATransactionDoesNothing) {
  testing::TempDir tmp;
  SqliteDb db(tmp / "s.sqlite", SqliteDb::Mode::read_write_create);
  db.exec("CREATE TABLE t(x)");
  db.rollback();
  db.exec("INSERT INTO t VALUES(1)");
  EXPECT_EQ(SqliteStatement(db, "SELECT COUNT(*) FROM t").single_int(-1), 1);
}

}  // namespace
}  // namespace normlab
