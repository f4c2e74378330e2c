#include "common/sqlite_db.h"

#include <cstdio>
#include <filesystem>

#include "common/error.h"

namespace ptxbench {
namespace {

// SQLite's complaints about the file itself rather than the SQL: the user named the wrong file.
bool is_file_problem(int rc) {
  int primary = rc & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT || primary == SQLITE_CANTOPEN;
}

std::string file_problem(const std::string& path, int rc, const std::string& detail) {
  switch (rc & 0xff) {
    case SQLITE_NOTADB: return path + " is not a SQLite database (" + detail + ")";
    case SQLITE_CORRUPT: return path + " is damaged (" + detail + ")";
    default: return path + " cannot be opened (" + detail + ")";
  }
}

/// Throws StoreError naming `path` for a problem of the file, else LibraryCallError.
[[noreturn]] void throw_sqlite(const std::string& path, int rc, const std::string& detail, const std::string& message) {
  if (is_file_problem(rc)) throw StoreError(file_problem(path, rc, detail));
  throw LibraryCallError("SQLite", rc, message);
}

std::string filename_of(sqlite3* db) {
  const char* f = db ? sqlite3_db_filename(db, "main") : nullptr;
  return f && *f ? f : "the database";
}

/// `path` as a SQLite URI with `query` ("mode=ro"); the characters a URI would read ('%', '?',
/// '#') are escaped, and an absolute path keeps "file://" from reading a folder as a host name.
std::string file_uri(const std::string& path, const std::string& query) {
  std::error_code ec;
  std::string abs = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) abs = path;
  std::string uri = "file:";
  for (char c : abs) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      uri += buf;
    } else {
      uri += c;
    }
  }
  return uri + "?" + query;
}

/// What keeps a file stamped (application_id, user_version) as it is from being a store of `kind`
/// at a schema this build reads; "" when nothing. `blank`: a file without tables or stamp.
std::string stamp_problem(const std::string& path, const std::string& kind, int64_t want_app, int64_t newest, int64_t app,
                          int64_t version, bool blank) {
  if (app == 0 && version == 0) return blank ? "" : path + " is another SQLite database, not a ptxbench " + kind;
  if (app != want_app) return path + " is not a ptxbench " + kind + " (SQLite application_id " + std::to_string(app) + ")";
  if (version > newest)
    return path + " has " + kind + " schema version " + std::to_string(version) + ", newer than this ptxbench reads (" +
           std::to_string(newest) + "); use a newer ptxbench";
  return "";
}

}  // namespace

SqliteDb::SqliteDb(const std::string& path, Mode mode, int busy_timeout_ms)
    : m_path(path), m_mode(mode), m_busy_timeout_ms(busy_timeout_ms) {
  open(mode, busy_timeout_ms);
}

void SqliteDb::open(Mode mode, int busy_timeout_ms) {
  std::error_code ec;
  if (mode != Mode::create && !std::filesystem::exists(m_path, ec)) throw StoreError(m_path + ": no such file");
  std::string name = m_path;
  int flags = SQLITE_OPEN_FULLMUTEX;
  if (mode == Mode::read_only) {
    // SQLITE_OPEN_READONLY alone still creates -wal and -shm beside a WAL database, and a reader
    // cannot remove them. Without a -wal every commit is in the file itself: immutable reads it
    // without locks or side files. With one, a writer is (or was) at work: read through it.
    bool wal = std::filesystem::exists(m_path + "-wal", ec);
    name = file_uri(m_path, wal ? "mode=ro" : "immutable=1");
    flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  } else {
    flags |= SQLITE_OPEN_READWRITE | (mode == Mode::create ? SQLITE_OPEN_CREATE : 0);
  }
  int rc = sqlite3_open_v2(name.c_str(), &m_db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    close();
    throw_sqlite(m_path, rc, msg, "cannot open " + m_path + ": " + msg);
  }
  sqlite3_busy_timeout(m_db, busy_timeout_ms);
  try {
    if (mode == Mode::read_only) {
      // The first read checks the header: a file that is no database fails here, not later.
      exec("SELECT COUNT(*) FROM sqlite_master");
    } else {
      exec("PRAGMA journal_mode=WAL");
      exec("PRAGMA synchronous=NORMAL");
    }
    exec("PRAGMA foreign_keys=ON");
  } catch (...) {
    close();
    throw;
  }
}

void SqliteDb::close() noexcept {
  if (m_db) sqlite3_close_v2(m_db);
  m_db = nullptr;
}

SqliteDb::~SqliteDb() { close(); }

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw_sqlite(m_path, rc, msg, msg + " (in: " + sql.substr(0, 200) + ")");
  }
}

SqliteStatement SqliteDb::prepare(const std::string& sql) { return SqliteStatement(m_db, sql); }

int64_t SqliteDb::changes() const { return sqlite3_changes64(m_db); }

int64_t SqliteDb::pragma_int(const char* name) {
  auto st = prepare(std::string("PRAGMA ") + name);
  st.step();
  return st.integer(0);
}

namespace {
bool has_tables(SqliteDb& db) {
  auto tables = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
  tables.step();
  return tables.integer(0) != 0;
}
}  // namespace

std::string SqliteDb::migrate(const StoreSchema& schema) {
  const auto newest = static_cast<int64_t>(schema.migrations.size());
  SqliteTransaction tx(*this);
  int64_t app = pragma_int("application_id");
  int64_t version = pragma_int("user_version");
  bool blank = app == 0 && version == 0 && !has_tables(*this);
  if (std::string problem = stamp_problem(m_path, schema.kind, schema.application_id, newest, app, version, blank);
      !problem.empty())
    return problem;
  if (blank) exec("PRAGMA application_id = " + std::to_string(schema.application_id));
  for (int64_t v = version; v < newest; ++v) {
    for (const char* sql : schema.migrations[static_cast<std::size_t>(v)]) exec(sql);
    exec("PRAGMA user_version = " + std::to_string(v + 1));
  }
  tx.commit();
  return "";
}

std::string SqliteDb::store_problem(const StoreSchema& schema) {
  if (m_mode != Mode::read_only) return migrate(schema);
  const auto newest = static_cast<int64_t>(schema.migrations.size());
  int64_t app = pragma_int("application_id");
  int64_t version = pragma_int("user_version");
  bool blank = app == 0 && version == 0 && !has_tables(*this);
  if (blank) return m_path + " is empty, not a ptxbench " + schema.kind;
  if (std::string problem = stamp_problem(m_path, schema.kind, schema.application_id, newest, app, version, blank);
      !problem.empty())
    return problem;
  if (version == newest) return "";
  // An older schema: the reader's SQL expects the newest, so the file is migrated once, by a
  // writing connection that is closed (its -wal and -shm removed) before reading again.
  close();
  {
    SqliteDb writer(m_path, Mode::existing, m_busy_timeout_ms);
    if (std::string problem = writer.store_problem(schema); !problem.empty()) return problem;
  }
  open(Mode::read_only, m_busy_timeout_ms);
  return "";
}

SqliteReadSnapshot::SqliteReadSnapshot(SqliteDb& db) : m_db(db) { m_db.exec("BEGIN DEFERRED"); }

SqliteReadSnapshot::~SqliteReadSnapshot() { sqlite3_exec(m_db.handle(), "COMMIT", nullptr, nullptr, nullptr); }

SqliteTransaction::SqliteTransaction(SqliteDb& db) : m_db(db) { m_db.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!m_done) sqlite3_exec(m_db.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  m_db.exec("COMMIT");
  m_done = true;
}

SqliteStatement::SqliteStatement(sqlite3* db, const std::string& sql) : m_db(db), m_sql(sql) {
  int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &m_stmt, nullptr);
  if (rc != SQLITE_OK) fail(rc, "prepare");
}

SqliteStatement::~SqliteStatement() {
  if (m_stmt) sqlite3_finalize(m_stmt);
}

SqliteStatement::SqliteStatement(SqliteStatement&& o) noexcept : m_db(o.m_db), m_stmt(o.m_stmt), m_sql(std::move(o.m_sql)) {
  o.m_stmt = nullptr;
}

void SqliteStatement::fail(int rc, const char* what) const {
  std::string msg = sqlite3_errmsg(m_db);
  throw_sqlite(filename_of(m_db), rc, msg, std::string(what) + " failed: " + msg + " (in: " + m_sql.substr(0, 200) + ")");
}

SqliteStatement& SqliteStatement::bind(int i, const std::string& v) {
  int rc = sqlite3_bind_text(m_stmt, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  if (rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int i, int64_t v) {
  int rc = sqlite3_bind_int64(m_stmt, i, v);
  if (rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind(int i, double v) {
  int rc = sqlite3_bind_double(m_stmt, i, v);
  if (rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

SqliteStatement& SqliteStatement::bind_null(int i) {
  int rc = sqlite3_bind_null(m_stmt, i);
  if (rc != SQLITE_OK) fail(rc, "bind");
  return *this;
}

bool SqliteStatement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc, "step");
}

void SqliteStatement::run() {
  while (step()) {
  }
}

std::string SqliteStatement::text(int c) const {
  const unsigned char* p = sqlite3_column_text(m_stmt, c);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(m_stmt, c))) : "";
}

SqliteStatement& SqliteStatement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

std::optional<double> SqliteStatement::optional_real(int c) const {
  if (is_null(c)) return std::nullopt;
  return real(c);
}

std::optional<std::string> SqliteStatement::optional_text(int c) const {
  if (is_null(c)) return std::nullopt;
  return text(c);
}

int64_t SqliteStatement::integer(int c) const { return sqlite3_column_int64(m_stmt, c); }
double SqliteStatement::real(int c) const { return sqlite3_column_double(m_stmt, c); }
bool SqliteStatement::is_null(int c) const { return sqlite3_column_type(m_stmt, c) == SQLITE_NULL; }

}  // namespace ptxbench
