// The shared SQLite opener (common/sqlite_db.h): a missing, foreign, damaged or newer store is a
// StoreError naming the file (exit 2 in the CLI), and a read-only open leaves nothing beside it.
#include <gtest/gtest.h>

#include "common/fs.h"
#include "common/sqlite_db.h"

using namespace ptxbench;

namespace {

constexpr int64_t kAppId = 0x50544254;  // any id: these tests define their own kind of store
const StoreSchema kSchema = {kAppId,
                             "test store",
                             {
                                 {"CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL)"},
                                 {"ALTER TABLE items ADD COLUMN note TEXT NOT NULL DEFAULT ''"},
                             }};

/// A store's own error type, as NotesStore has (open_store<E> throws it instead of StoreError).
class TestStoreError : public Error {
 public:
  explicit TestStoreError(const std::string& message) : Error("test store", message) {}
};

class SqliteDbTest : public ::testing::Test {
 protected:
  TempDir dir{"ptxbench-sqlite"};
  [[nodiscard]] std::string path(const std::string& name = "store.db") const { return (dir.path() / name).string(); }
  /// A store of the test kind, written (WAL) and closed, with one row.
  void make_store(const std::string& file) {
    SqliteDb db(file);
    db.open_store(kSchema);
    db.exec("INSERT INTO items (name) VALUES ('first')");
  }
  [[nodiscard]] std::vector<std::string> beside(const std::string& file) const {
    std::vector<std::string> out;
    for (const char* suffix : {"-wal", "-shm", "-journal"})
      if (fs::exists(file + suffix)) out.push_back(file + suffix);
    return out;
  }
};

/// The message of the StoreError `f` throws; fails the test when it throws nothing or another type.
template <class F>
std::string store_error(F&& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a StoreError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "no error";
  return "";
}

bool contains(const std::string& text, const std::string& fragment) { return text.find(fragment) != std::string::npos; }

}  // namespace

TEST_F(SqliteDbTest, StoreErrorsAreInputErrorsNamingTheFile) {
  static_assert(std::is_base_of_v<InputError, StoreError>);
  const std::string missing = path("missing.db");
  for (SqliteDb::Mode mode : {SqliteDb::Mode::existing, SqliteDb::Mode::read_only}) {
    std::string e = store_error([&] { SqliteDb db(missing, mode); });
    EXPECT_TRUE(contains(e, missing)) << e;
    EXPECT_TRUE(contains(e, "no such file")) << e;
  }
  EXPECT_FALSE(fs::exists(missing));  // never created by a reader

  const std::string junk = path("junk.db");
  write_file_atomic(junk, std::string(4096, 'x'));
  for (SqliteDb::Mode mode : {SqliteDb::Mode::create, SqliteDb::Mode::existing, SqliteDb::Mode::read_only}) {
    std::string e = store_error([&] { SqliteDb db(junk, mode); });
    EXPECT_TRUE(contains(e, junk)) << e;
    EXPECT_TRUE(contains(e, "not a SQLite database")) << e;
  }

  const std::string folder = path("folder.db");
  fs::create_directories(folder);
  EXPECT_TRUE(contains(store_error([&] { SqliteDb db(folder, SqliteDb::Mode::existing); }), folder));
}

TEST_F(SqliteDbTest, OpenStoreRefusesForeignEmptyAndNewerFiles) {
  const std::string other = path("other.db");
  {
    SqliteDb db(other);
    db.exec("CREATE TABLE tasks (id TEXT)");
  }
  std::string e = store_error([&] { SqliteDb(other).open_store(kSchema); });
  EXPECT_TRUE(contains(e, other + " is another SQLite database, not a ptxbench test store")) << e;
  e = store_error([&] { SqliteDb(other, SqliteDb::Mode::read_only).open_store(kSchema); });
  EXPECT_TRUE(contains(e, "not a ptxbench test store")) << e;

  const std::string empty = path("empty.db");
  write_file_atomic(empty, "");
  e = store_error([&] { SqliteDb(empty, SqliteDb::Mode::read_only).open_store(kSchema); });
  EXPECT_TRUE(contains(e, empty + " is empty")) << e;

  const std::string newer = path("newer.db");
  make_store(newer);
  SqliteDb(newer).exec("PRAGMA user_version = 7");
  e = store_error([&] { SqliteDb(newer, SqliteDb::Mode::read_only).open_store(kSchema); });
  EXPECT_TRUE(contains(e, "schema version 7, newer")) << e;
}

// SQLITE_OPEN_READONLY alone leaves -wal and -shm beside a WAL database (a reader cannot remove
// them); read_only must not, whether or not a writer is at work.
TEST_F(SqliteDbTest, ReadOnlyLeavesNothingBesideTheFile) {
  const std::string file = path();
  make_store(file);
  ASSERT_EQ(beside(file), std::vector<std::string>{}) << "the writer's close removes its side files";
  {
    SqliteDb db(file, SqliteDb::Mode::read_only);
    db.open_store(kSchema);
    auto st = db.prepare("SELECT name FROM items");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.text(0), "first");
    EXPECT_EQ(beside(file), std::vector<std::string>{});
    EXPECT_THROW(db.exec("INSERT INTO items (name) VALUES ('second')"), Error);
  }
  EXPECT_EQ(beside(file), std::vector<std::string>{});

  // With a writer at work, the reader sees its commits (through the WAL the writer made).
  {
    SqliteDb writer(file, SqliteDb::Mode::existing);
    writer.exec("INSERT INTO items (name) VALUES ('second')");
    ASSERT_TRUE(fs::exists(file + "-wal"));
    SqliteDb reader(file, SqliteDb::Mode::read_only);
    auto st = reader.prepare("SELECT COUNT(*) FROM items");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.integer(0), 2);
  }
  EXPECT_EQ(beside(file), std::vector<std::string>{});
}

// A reader of an older schema: the file is migrated once by a brief writer, then read; nothing is
// left beside it.
TEST_F(SqliteDbTest, ReadOnlyMigratesAnOlderSchemaThenReads) {
  const std::string file = path();
  {
    SqliteDb db(file);
    db.open_store(StoreSchema{kAppId, "test store", {kSchema.migrations[0]}});  // version 1
    db.exec("INSERT INTO items (name) VALUES ('old')");
  }
  SqliteDb db(file, SqliteDb::Mode::read_only);
  db.open_store(kSchema);
  EXPECT_EQ(db.pragma_int("user_version"), 2);
  auto st = db.prepare("SELECT name, note FROM items");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "old");
  EXPECT_EQ(st.text(1), "");
  EXPECT_EQ(beside(file), std::vector<std::string>{});
}

TEST_F(SqliteDbTest, ExistingOpensButNeverCreates) {
  const std::string file = path();
  make_store(file);
  SqliteDb db(file, SqliteDb::Mode::existing);
  db.open_store(kSchema);
  db.exec("INSERT INTO items (name) VALUES ('more')");
  EXPECT_EQ(db.mode(), SqliteDb::Mode::existing);
  EXPECT_EQ(db.path(), file);
}

TEST_F(SqliteDbTest, OpenStoreThrowsTheStoresOwnErrorTypeWhenAsked) {
  const std::string other = path("other.db");
  SqliteDb(other).exec("CREATE TABLE tasks (id TEXT)");
  try {
    SqliteDb(other).open_store<TestStoreError>(kSchema);
    ADD_FAILURE() << "a foreign file was opened as a test store";
  } catch (const TestStoreError& e) {
    EXPECT_TRUE(contains(e.what(), other + " is another SQLite database, not a ptxbench test store")) << e.what();
  }
  const std::string file = path();
  SqliteDb(file).open_store<TestStoreError>(kSchema);  // a new file becomes a store, nothing thrown
  SqliteDb db(file, SqliteDb::Mode::existing);
  EXPECT_EQ(db.pragma_int("application_id"), kAppId);
  EXPECT_EQ(db.pragma_int("user_version"), 2);
}
