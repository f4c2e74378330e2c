// RAII over the SQLite C API: a connection (WAL, busy timeout, foreign keys) and prepared
// statements with typed binds. A file that is missing, not a database, damaged or of another kind
// throws StoreError naming it (bad input, exit 2); other failures throw LibraryCallError("SQLite",
// ...) with the SQL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace ptxbench {

class SqliteStatement;

/// What makes a SQLite file a ptxbench store of one kind: the stamp in its header and the
/// statements that build its schema, version by version.
struct StoreSchema {
  int64_t application_id = 0;  ///< PRAGMA application_id: four letters ("PTBR" for the run store)
  std::string kind;            ///< for messages: "run store"
  /// migrations[v]: the statements taking version v to v + 1 (PRAGMA user_version). Append, never
  /// edit: migrations.size() is the newest version.
  std::vector<std::vector<const char*>> migrations;
};

/// A store file that cannot be used as given: missing where it must exist, not a SQLite database,
/// damaged, of another kind or of a newer schema. The message names the file. An InputError: the
/// user pointed at the wrong file (exit 2), not our bug.
class StoreError : public InputError {
 public:
  explicit StoreError(const std::string& message) : InputError("store", message) {}
};

class SqliteDb {
 public:
  enum class Mode {
    /// Opens the file, creating it when missing; WAL, so several processes share it (the service
    /// and its workers, a run and its reports).
    create,
    /// As create, but a missing file is a StoreError (a command that reads or extends a store).
    existing,
    /// Reads only, and leaves nothing beside the file: no -wal/-shm is created. A file being
    /// written (its -wal is there) is read through the WAL, whose files the writer made; a file
    /// without one holds every commit and is opened immutable (SQLite takes no locks and makes no
    /// files; a writer that starts meanwhile is not seen). Writes fail (SQLITE_READONLY).
    read_only,
  };

  /// Opens `path` in `mode`; a missing file (existing, read_only), a file that is not a SQLite
  /// database or is damaged throws StoreError naming it.
  explicit SqliteDb(const std::string& path, Mode mode = Mode::create, int busy_timeout_ms = 10000);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  void exec(const std::string& sql);
  [[nodiscard]] SqliteStatement prepare(const std::string& sql);
  [[nodiscard]] sqlite3* handle() const noexcept { return m_db; }
  [[nodiscard]] int64_t changes() const;
  /// The integer value of `PRAGMA name` (user_version, application_id, ...).
  [[nodiscard]] int64_t pragma_int(const char* name);
  /// What a store's constructor calls: makes this file a store of `schema` at its newest version,
  /// or throws `E` (StoreError, or the store's own error type) with the problem ("PATH is not a
  /// ptxbench KIND ..."). Writable modes run migrate(). In read_only mode nothing is written: a
  /// file of this kind at an older schema is migrated through a brief writing connection first
  /// (whose close removes its -wal/-shm again), then read; an empty or foreign file, or a newer
  /// schema, is refused.
  template <class E = StoreError>
  void open_store(const StoreSchema& schema) {
    if (std::string problem = store_problem(schema); !problem.empty()) throw E(problem);
  }
  [[nodiscard]] Mode mode() const noexcept { return m_mode; }
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  void open(Mode mode, int busy_timeout_ms);
  void close() noexcept;
  /// open_store's work: "" when the file is a store of `schema` at its newest version, else the
  /// problem.
  [[nodiscard]] std::string store_problem(const StoreSchema& schema);
  /// In one transaction: stamps an empty file with the schema's application_id, refuses a file of
  /// another kind or a newer schema, then runs the migrations from the file's version to the
  /// newest. Returns "" when done, else the problem.
  [[nodiscard]] std::string migrate(const StoreSchema& schema);
  sqlite3* m_db = nullptr;
  std::string m_path;
  Mode m_mode = Mode::create;
  int m_busy_timeout_ms = 10000;
};

/// BEGIN IMMEDIATE … COMMIT, rolled back if not committed (an exception unwinding through it).
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDb& db);
  ~SqliteTransaction();
  void commit();

 private:
  SqliteDb& m_db;
  bool m_done = false;
};

/// A read snapshot: the SELECTs run while it lives see one committed state (WAL readers never
/// block). BEGIN DEFERRED … COMMIT; the COMMIT of a read cannot fail in a way worth throwing for.
class SqliteReadSnapshot {
 public:
  explicit SqliteReadSnapshot(SqliteDb& db);
  ~SqliteReadSnapshot();
  SqliteReadSnapshot(const SqliteReadSnapshot&) = delete;
  SqliteReadSnapshot& operator=(const SqliteReadSnapshot&) = delete;

 private:
  SqliteDb& m_db;
};

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& o) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, const std::string& value);
  SqliteStatement& bind(int index, int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind_null(int index);
  SqliteStatement& bind(int index, const std::optional<double>& value);  ///< NULL when unset
  /// Binds `values` to parameters 1, 2, … in order, each through the bind overload of its type.
  template <class... T>
  SqliteStatement& bind_all(const T&... values) {
    int index = 0;
    (bind(++index, values), ...);
    return *this;
  }
  /// True while a row is available; false when done.
  bool step();
  /// Runs to completion (for statements without rows).
  void run();
  [[nodiscard]] std::string text(int column) const;
  [[nodiscard]] std::optional<std::string> optional_text(int column) const;
  [[nodiscard]] int64_t integer(int column) const;
  [[nodiscard]] double real(int column) const;
  [[nodiscard]] std::optional<double> optional_real(int column) const;  ///< unset for NULL
  [[nodiscard]] bool is_null(int column) const;

 private:
  [[noreturn]] void fail(int rc, const char* what) const;
  sqlite3* m_db;
  sqlite3_stmt* m_stmt = nullptr;
  std::string m_sql;
};

}  // namespace ptxbench
