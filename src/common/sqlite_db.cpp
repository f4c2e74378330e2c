#include "common/sqlite_db.h"

#include "common/error.h"

namespace ptxbench {

SqliteDb::SqliteDb(const std::string& path, int busy_timeout_ms) : m_path(path) {
  int rc = sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    if (m_db) sqlite3_close(m_db);
    m_db = nullptr;
    throw LibraryCallError("SQLite", rc, "cannot open " + path + ": " + msg);
  }
  sqlite3_busy_timeout(m_db, busy_timeout_ms);
  exec("PRAGMA journal_mode=WAL");
  exec("PRAGMA synchronous=NORMAL");
  exec("PRAGMA foreign_keys=ON");
}

SqliteDb::~SqliteDb() {
  if (m_db) sqlite3_close_v2(m_db);
}

void SqliteDb::exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw LibraryCallError("SQLite", rc, msg + " (in: " + sql.substr(0, 200) + ")");
  }
}

SqliteStatement SqliteDb::prepare(const std::string& sql) { return SqliteStatement(m_db, sql); }

int64_t SqliteDb::changes() const { return sqlite3_changes64(m_db); }

int64_t SqliteDb::pragma_int(const char* name) {
  auto st = prepare(std::string("PRAGMA ") + name);
  st.step();
  return st.integer(0);
}

std::string SqliteDb::migrate(int64_t application_id, const std::string& kind,
                              const std::vector<std::vector<const char*>>& migrations) {
  const auto newest = static_cast<int64_t>(migrations.size());
  SqliteTransaction tx(*this);
  int64_t app = pragma_int("application_id");
  int64_t version = pragma_int("user_version");
  if (app == 0 && version == 0) {
    auto tables = prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
    tables.step();
    if (tables.integer(0) != 0) return m_path + " is another SQLite database, not a ptxbench " + kind;
    exec("PRAGMA application_id = " + std::to_string(application_id));
  } else if (app != application_id) {
    return m_path + " is not a ptxbench " + kind + " (SQLite application_id " + std::to_string(app) + ")";
  }
  if (version > newest)
    return m_path + " has " + kind + " schema version " + std::to_string(version) + ", newer than this ptxbench reads (" +
           std::to_string(newest) + "); use a newer ptxbench";
  for (int64_t v = version; v < newest; ++v) {
    for (const char* sql : migrations[static_cast<std::size_t>(v)]) exec(sql);
    exec("PRAGMA user_version = " + std::to_string(v + 1));
  }
  tx.commit();
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
  throw LibraryCallError("SQLite", rc, std::string(what) + " failed: " + sqlite3_errmsg(m_db) + " (in: " + m_sql.substr(0, 200) + ")");
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
