#include "store/sqlite.hpp"

#include <fmt/format.h>

namespace drover::store {

std::string to_string(const Key& key) {
  if (const auto* i = std::get_if<int64_t>(&key)) return std::to_string(*i);
  return fmt::format("'{}'", std::get<std::string>(key));
}

std::string to_string(const Value& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "NULL";
        else if constexpr (std::is_same_v<T, std::string>) return fmt::format("'{}'", v);
        else return fmt::format("{}", v);
      },
      value);
}

Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = other.stmt_;
    other.stmt_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

void Stmt::bind(int index, const Value& value, bool as_blob) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          sqlite3_bind_null(stmt_, index);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          sqlite3_bind_int64(stmt_, index, v);
        } else if constexpr (std::is_same_v<T, double>) {
          sqlite3_bind_double(stmt_, index, v);
        } else if (as_blob) {
          sqlite3_bind_blob64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT);
        } else {
          sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
        }
      },
      value);
}

void Stmt::bind_key(int index, const Key& key) {
  if (const auto* i = std::get_if<int64_t>(&key)) {
    sqlite3_bind_int64(stmt_, index, *i);
  } else {
    const auto& s = std::get<std::string>(key);
    sqlite3_bind_text64(stmt_, index, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  }
}

Result<bool> Stmt::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return make_error(sqlite3_errmsg(db_));
}

Status Stmt::run() {
  for (;;) {
    auto more = step();
    if (!more) return more.error();
    if (!*more) return {};
  }
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::column_bytes(int i) const {
  const void* data = sqlite3_column_blob(stmt_, i);
  int size = sqlite3_column_bytes(stmt_, i);
  return data ? std::string(static_cast<const char*>(data), static_cast<std::size_t>(size)) : std::string();
}

Value Stmt::column(int i) const {
  switch (sqlite3_column_type(stmt_, i)) {
    case SQLITE_INTEGER: return static_cast<int64_t>(sqlite3_column_int64(stmt_, i));
    case SQLITE_FLOAT: return sqlite3_column_double(stmt_, i);
    case SQLITE_NULL: return std::monostate{};
    default: return column_bytes(i);
  }
}

Key Stmt::column_key(int i) const {
  if (sqlite3_column_type(stmt_, i) == SQLITE_INTEGER) return static_cast<int64_t>(sqlite3_column_int64(stmt_, i));
  return column_bytes(i);
}

Result<Db> Db::open(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  Db db(raw);
  if (rc != SQLITE_OK) {
    return make_error(fmt::format("cannot open state database {}: {}", path,
                                  raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  return db;
}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    sqlite3_close_v2(db_);
    db_ = other.db_;
    other.db_ = nullptr;
  }
  return *this;
}

Db::~Db() { sqlite3_close_v2(db_); }

Status Db::exec(std::string_view sql) {
  char* err = nullptr;
  std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string message = err ? err : error_message();
    sqlite3_free(err);
    return make_error(message);
  }
  return {};
}

Result<Stmt> Db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                         &stmt, nullptr) != SQLITE_OK) {
    return make_error(fmt::format("{} (in: {})", error_message(), sql));
  }
  return Stmt(db_, stmt);
}

Result<std::string> Db::query_text(std::string_view sql) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return std::string();
  return stmt->column_bytes(0);
}

}  // namespace drover::store
