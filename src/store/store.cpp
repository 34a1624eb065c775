// Opening the store (configuration, schema check, migrations, introspection)
// and the read path.
#include "store/store.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "store/store_impl.hpp"

namespace drover::store {
namespace {

constexpr const char* kApplicationKey = "store.application";

Status configure(Db& db, const std::string& path, const StoreOptions& options) {
  sqlite3_busy_timeout(db.raw(), options.busy_timeout_ms);
  auto mode = db.query_text("PRAGMA journal_mode=WAL");
  if (!mode) return make_error(fmt::format("state database {}: {}", path, mode.error().message));
  if (*mode != "wal") {
    return make_error(fmt::format("state database {}: cannot use write-ahead logging (journal mode "
                                  "stays '{}'); put StateSaveLocation on a local filesystem",
                                  path, *mode));
  }
  return db.exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
}

// Marks a new database as this application's, or checks an existing mark.
Status claim_database(Db& db, const std::string& path, const Schema& schema) {
  if (auto ok = db.exec("BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS _drover_meta("
                        "key TEXT PRIMARY KEY NOT NULL, value)");
      !ok) {
    return make_error(fmt::format("state database {}: {}", path, ok.error().message));
  }
  auto owner = db.query_text(fmt::format("SELECT value FROM _drover_meta WHERE key = '{}'", kApplicationKey));
  auto version = db.query_text("PRAGMA user_version");
  Status result;
  if (!owner || !version) {
    result = make_error(fmt::format("state database {}: {}", path, (!owner ? owner : version).error().message));
  } else if (owner->empty() && *version != "0") {
    result = make_error(fmt::format("{} is not a Drover state database (schema version {} but no owner)",
                                    path, *version));
  } else if (owner->empty()) {
    result = db.exec(fmt::format("INSERT INTO _drover_meta(key, value) VALUES('{}', '{}')", kApplicationKey,
                                 schema.application));
  } else if (*owner != schema.application) {
    result = make_error(fmt::format("state database {} belongs to '{}', not '{}'; point this daemon at "
                                    "its own StateSaveLocation",
                                    path, *owner, schema.application));
  }
  (void)db.exec(result ? "COMMIT" : "ROLLBACK");
  return result;
}

Result<int> migrate(Db& db, const std::string& path, const Schema& schema) {
  auto text = db.query_text("PRAGMA user_version");
  if (!text) return text.error();
  const int current = std::stoi(*text);
  if (current > schema.latest_version()) {
    return make_error(fmt::format(
        "state database {} has schema version {}, newer than this Drover knows ({}): it was written "
        "by a newer release; run that release or restore a backup",
        path, current, schema.latest_version()));
  }
  for (const auto& m : schema.migrations) {
    if (m.version <= current) continue;
    Status st = db.exec("BEGIN IMMEDIATE");
    for (std::size_t i = 0; st && i < m.sql.size(); ++i) st = db.exec(m.sql[i]);
    if (st) st = db.exec(fmt::format("PRAGMA user_version = {}", m.version));
    if (st) st = db.exec("COMMIT");
    if (!st) {
      (void)db.exec("ROLLBACK");
      return make_error(fmt::format("state database {}: migration {} ({}) failed: {}", path, m.version,
                                    m.description, st.error().message));
    }
  }
  return std::max(current, schema.latest_version());
}

// Record tables are those with `key` and `payload` columns.
Result<Tables> introspect(Db& db) {
  Tables tables;
  auto list = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%' "
                         "AND name NOT LIKE '\\_drover%' ESCAPE '\\' ORDER BY name");
  if (!list) return list.error();
  std::vector<std::string> names;
  for (;;) {
    auto row = list->step();
    if (!row) return row.error();
    if (!*row) break;
    names.push_back(list->column_bytes(0));
  }
  for (const auto& name : names) {
    auto info = db.prepare(fmt::format("PRAGMA table_info({})", name));
    if (!info) return info.error();
    TableInfo t;
    bool has_key = false, has_payload = false;
    for (;;) {
      auto row = info->step();
      if (!row) return row.error();
      if (!*row) break;
      std::string column = info->column_bytes(1), type = info->column_bytes(2);
      if (column == "key") {
        has_key = true;
        t.integer_key = type == "INTEGER";
      } else if (column == "payload") {
        has_payload = true;
      } else {
        t.columns.push_back(column);
        if (type == "BLOB") t.blob_columns.insert(column);
      }
    }
    if (has_key && has_payload) tables.emplace(name, std::move(t));
  }
  return tables;
}

Status check_directory(const std::string& path) {
  auto dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) return {};
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return make_error(fmt::format("state directory {} does not exist; create it (StateSaveLocation) first",
                                  dir.string()));
  }
  return {};
}

Record read_record(const Stmt& stmt) {
  Record r;
  for (int i = 0; i < stmt.columns(); ++i) {
    std::string name = stmt.column_name(i);
    if (name == "key") r.key = stmt.column_key(i);
    else if (name == "payload") r.payload = stmt.column_bytes(i);
    else r.columns.emplace(std::move(name), stmt.column(i));
  }
  return r;
}

}  // namespace

bool TableInfo::has(const std::string& column) const {
  return std::find(columns.begin(), columns.end(), column) != columns.end();
}

Result<const TableInfo*> find_table(const Tables& tables, const std::string& table) {
  auto it = tables.find(table);
  if (it != tables.end()) return &it->second;
  std::string known;
  for (const auto& [name, info] : tables) known += (known.empty() ? "" : ", ") + name;
  return make_error(fmt::format("store: no record table '{}' (record tables: {})", table,
                                known.empty() ? "none" : known));
}

Store::Store(std::string path, int schema_version, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), schema_version_(schema_version), impl_(std::move(impl)) {}

Store::~Store() { close(); }

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const Schema& schema,
                                           StoreOptions options) {
  if (auto ok = check_schema(schema); !ok) return ok.error();
  if (auto ok = check_directory(path); !ok) return ok.error();
  auto writer = Db::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (!writer) return writer.error();
  if (auto ok = configure(*writer, path, options); !ok) return ok.error();
  if (auto ok = claim_database(*writer, path, schema); !ok) return ok.error();
  auto version = migrate(*writer, path, schema);
  if (!version) return version.error();
  auto tables = introspect(*writer);
  if (!tables) return make_error(fmt::format("state database {}: {}", path, tables.error().message));
  auto reader = Db::open(path, SQLITE_OPEN_READONLY);
  if (!reader) return reader.error();
  sqlite3_busy_timeout(reader->raw(), options.busy_timeout_ms);
  auto impl = std::make_unique<Impl>(std::move(*writer), std::move(*reader), std::move(*tables), options);
  impl->start();
  return std::unique_ptr<Store>(new Store(path, *version, std::move(impl)));
}

void Store::submit(Batch batch, Completion done) { impl_->submit(std::move(batch), std::move(done)); }

void Store::submit_all(std::vector<std::pair<Batch, Completion>> batches) { impl_->submit_all(std::move(batches)); }

std::future<Status> Store::submit(Batch batch) {
  auto promise = std::make_shared<std::promise<Status>>();
  auto future = promise->get_future();
  impl_->submit(std::move(batch), [promise](const Status& st) { promise->set_value(st); });
  return future;
}

void Store::close() { impl_->close(); }

StoreStats Store::stats() const { return impl_->stats(); }

Status Store::read_records(const std::string& sql, const std::function<void(Stmt&)>& bind,
                           const std::function<bool(Record&&)>& visit) const {
  std::lock_guard lock(impl_->read_mu);
  auto stmt = impl_->reader.prepare(sql);
  if (!stmt) return stmt.error();
  bind(*stmt);
  for (;;) {
    auto row = stmt->step();
    if (!row) return make_error(fmt::format("store: reading {}: {}", path_, row.error().message));
    if (!*row || !visit(read_record(*stmt))) return {};
  }
}

Result<std::optional<Record>> Store::get(const std::string& table, const Key& key) const {
  if (auto t = find_table(impl_->tables, table); !t) return t.error();
  std::optional<Record> found;
  Status st = read_records(fmt::format("SELECT * FROM {} WHERE key = ?", table),
                           [&](Stmt& s) { s.bind_key(1, key); },
                           [&](Record&& r) { found = std::move(r); return false; });
  if (!st) return st.error();
  return found;
}

Status Store::scan(const std::string& table, const std::function<bool(Record&&)>& visit) const {
  if (auto t = find_table(impl_->tables, table); !t) return t.error();
  return read_records(fmt::format("SELECT * FROM {} ORDER BY key", table), [](Stmt&) {}, visit);
}

Status Store::scan_where(const std::string& table, const std::string& column, const Value& value,
                         const std::function<bool(Record&&)>& visit) const {
  auto t = find_table(impl_->tables, table);
  if (!t) return t.error();
  if (!(*t)->has(column)) {
    return make_error(fmt::format("store: table {} has no column '{}'", table, column));
  }
  const bool blob = (*t)->blob_columns.count(column) != 0;
  return read_records(fmt::format("SELECT * FROM {} WHERE {} IS ? ORDER BY key", table, column),
                      [&](Stmt& s) { s.bind(1, value, blob); }, visit);
}

Status Store::scan_from(const std::string& table, const std::string& column, int64_t min,
                        const std::function<bool(Record&&)>& visit) const {
  auto t = find_table(impl_->tables, table);
  if (!t) return t.error();
  if (!(*t)->has(column)) {
    return make_error(fmt::format("store: table {} has no column '{}'", table, column));
  }
  return read_records(fmt::format("SELECT * FROM {} WHERE {} >= ? ORDER BY key", table, column),
                      [&](Stmt& s) { s.bind(1, Value{min}, false); }, visit);
}

Result<std::vector<Record>> Store::load_all(const std::string& table) const {
  std::vector<Record> out;
  Status st = scan(table, [&](Record&& r) { out.push_back(std::move(r)); return true; });
  if (!st) return st.error();
  return out;
}

Result<std::optional<Value>> Store::get_meta(const std::string& key) const {
  std::lock_guard lock(impl_->read_mu);
  auto stmt = impl_->reader.prepare("SELECT value FROM _drover_meta WHERE key = ?");
  if (!stmt) return stmt.error();
  stmt->bind(1, key);
  auto row = stmt->step();
  if (!row) return row.error();
  if (!*row) return std::optional<Value>();
  return std::optional<Value>(stmt->column(0));
}

Result<int64_t> Store::count(const std::string& table) const {
  if (auto t = find_table(impl_->tables, table); !t) return t.error();
  std::lock_guard lock(impl_->read_mu);
  auto stmt = impl_->reader.prepare(fmt::format("SELECT count(*) FROM {}", table));
  if (!stmt) return stmt.error();
  auto row = stmt->step();
  if (!row) return row.error();
  return stmt->column_int(0);
}

}  // namespace drover::store
