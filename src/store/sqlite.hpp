// A thin RAII layer over the SQLite C API for the store: connections,
// prepared statements, and errors as Result/Status carrying sqlite3's message.
// Internal to drover_store.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.hpp"
#include "store/value.hpp"

namespace drover::store {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Stmt(Stmt&& other) noexcept : db_(other.db_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Parameters are 1-based, as in SQLite.
  void bind(int index, const Value& value, bool as_blob = false);
  void bind_key(int index, const Key& key);
  // Runs one step: true when a row is available, false when done.
  Result<bool> step();
  // Runs to completion, ignoring rows.
  Status run();
  void reset();

  int columns() const { return sqlite3_column_count(stmt_); }
  std::string column_name(int i) const { return sqlite3_column_name(stmt_, i); }
  Value column(int i) const;
  Key column_key(int i) const;
  std::string column_bytes(int i) const;
  int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

class Db {
 public:
  // flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, or SQLITE_OPEN_READONLY.
  static Result<Db> open(const std::string& path, int flags);
  Db() = default;
  Db(Db&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  Status exec(std::string_view sql);
  Result<Stmt> prepare(std::string_view sql);
  // The single value of a one-row query (a PRAGMA), as text.
  Result<std::string> query_text(std::string_view sql);
  int64_t changes() const { return sqlite3_changes64(db_); }
  std::string error_message() const { return db_ ? sqlite3_errmsg(db_) : "no database"; }
  sqlite3* raw() const { return db_; }

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

}  // namespace drover::store
