// The writer side of the store: one thread that applies queued batches and
// commits them in groups (see store.hpp for the contract).
#include <chrono>

#include <fmt/format.h>

#include "store/store_impl.hpp"

namespace drover::store {
namespace {

constexpr const char* kReservedMetaPrefix = "store.";

std::string join_names(const std::vector<std::string>& names, std::string_view prefix) {
  std::string out;
  for (const auto& n : names) out += fmt::format(", {}{}", prefix, n);
  return out;
}

Status check_key(const std::string& table, const TableInfo& info, const Key& key) {
  const bool is_int = std::holds_alternative<int64_t>(key);
  if (is_int == info.integer_key) return {};
  return make_error(fmt::format("store: table {} has {} keys; got {}", table,
                                info.integer_key ? "integer" : "text", to_string(key)));
}

Status check_columns(const std::string& table, const TableInfo& info, const Put& put) {
  std::set<std::string> seen;
  for (const auto& [name, value] : put.columns) {
    if (!info.has(name)) {
      return make_error(fmt::format("store: table {} has no column '{}' (columns: {})", table, name,
                                    info.columns.empty() ? "none" : join_names(info.columns, "").substr(2)));
    }
    if (!seen.insert(name).second) {
      return make_error(fmt::format("store: column '{}' of table {} given twice", name, table));
    }
  }
  return {};
}

}  // namespace

Store::Impl::Impl(Db writer, Db reader_db, Tables tables_in, StoreOptions options)
    : reader(std::move(reader_db)), tables(std::move(tables_in)), writer_(std::move(writer)),
      options_(options) {}

Store::Impl::~Impl() { close(); }

void Store::Impl::start() { thread_ = std::thread([this] { run(); }); }

void Store::Impl::submit(Batch batch, Completion done) {
  std::vector<std::pair<Batch, Completion>> one;
  one.emplace_back(std::move(batch), std::move(done));
  submit_all(std::move(one));
}

void Store::Impl::submit_all(std::vector<std::pair<Batch, Completion>> batches) {
  {
    std::lock_guard lock(mu_);
    if (!closing_) {
      const auto now = std::chrono::steady_clock::now();
      for (auto& [batch, done] : batches) queue_.push_back(Pending{std::move(batch), std::move(done), now});
      cv_.notify_one();
      return;
    }
  }
  for (auto& b : batches) b.second(make_error("store: closed; the change was not saved"));
}

void Store::Impl::close() {
  {
    std::lock_guard lock(mu_);
    if (closed_) return;
    closing_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  statements_.clear();
  if (!failed_) (void)writer_.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  std::lock_guard lock(mu_);
  closed_ = true;
}

StoreStats Store::Impl::stats() const {
  std::lock_guard lock(stats_mu_);
  return stats_;
}

void Store::Impl::run() {
  for (;;) {
    std::vector<Pending> group;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty() || closing_; });
      if (queue_.empty()) return;  // closing, and everything is committed
      // Batches that may wait are committed with the next one in a hurry, or
      // when the first of them has waited its time.
      auto deadline = std::chrono::steady_clock::time_point::max();
      auto all_may_wait = [this, &deadline] {
        for (const auto& p : queue_) {
          if (p.batch.may_wait.count() <= 0) return false;
          deadline = std::min(deadline, p.queued + p.batch.may_wait);
        }
        return true;
      };
      while (!closing_ && all_may_wait() && std::chrono::steady_clock::now() < deadline) {
        cv_.wait_until(lock, deadline);
      }
      const std::size_t n = std::min(queue_.size(), options_.max_group_batches);
      group.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    commit_group(group);
  }
}

Result<Stmt*> Store::Impl::statement(const std::string& sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) {
    auto stmt = writer_.prepare(sql);
    if (!stmt) return stmt.error();
    it = statements_.emplace(sql, std::move(*stmt)).first;
  }
  it->second.reset();
  return &it->second;
}

Status Store::Impl::exec_cached(const std::string& sql) {
  auto stmt = statement(sql);
  if (!stmt) return stmt.error();
  return (*stmt)->run();
}

void Store::Impl::fail_store(const Error& error) {
  failed_ = make_error(fmt::format(
      "store: {}; the state store has stopped accepting changes: restart the daemon (it "
      "recovers everything committed)",
      error.message));
  (void)writer_.exec("ROLLBACK");
}

// Each batch runs inside a savepoint so that one failing batch is undone
// alone; the group's single COMMIT is the fsync every caller waits for.
void Store::Impl::commit_group(std::vector<Pending>& group) {
  std::vector<Status> results(group.size());
  GroupCounts counts;
  if (!failed_) {
    if (auto begun = exec_cached("BEGIN IMMEDIATE"); !begun) fail_store(begun.error());
  }
  if (!failed_) apply_group(group, results, counts);
  if (!failed_) {
    auto t0 = std::chrono::steady_clock::now();
    if (auto committed = exec_cached("COMMIT"); !committed) fail_store(committed.error());
    counts.commit_us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - t0).count();
  }
  if (failed_) {
    for (auto& r : results) r = *failed_;
  } else {
    std::lock_guard lock(stats_mu_);
    stats_.commits += 1;
    stats_.batches += group.size() - counts.failed;
    stats_.failed_batches += counts.failed;
    stats_.mutations += counts.mutations;
    stats_.largest_group = std::max<uint64_t>(stats_.largest_group, group.size());
    stats_.commit_micros += counts.commit_us;
  }
  for (std::size_t i = 0; i < group.size(); ++i) group[i].done(results[i]);
}

void Store::Impl::apply_group(std::vector<Pending>& group, std::vector<Status>& results, GroupCounts& counts) {
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (auto saved = exec_cached("SAVEPOINT batch"); !saved) return fail_store(saved.error());
    results[i] = apply_batch(group[i].batch);
    if (results[i]) {
      counts.mutations += group[i].batch.mutations.size();
    } else if (sqlite3_get_autocommit(writer_.raw()) != 0) {
      // Some errors (disk full, I/O) make SQLite roll back the whole transaction.
      return fail_store(results[i].error());
    } else {
      ++counts.failed;
      (void)exec_cached("ROLLBACK TO batch");
    }
    (void)exec_cached("RELEASE batch");
  }
}

Status Store::Impl::apply_batch(const Batch& batch) {
  for (const auto& m : batch.mutations) {
    Status st = std::visit([this](const auto& mutation) { return apply(mutation); }, m);
    if (!st) return st;
  }
  return {};
}

namespace {

// A Put's SQL depends only on its table, its listed columns and its mode,
// so the statement cache sees few distinct texts.
std::string put_sql(const Put& put, const TableInfo& info) {
  if (put.mode == PutMode::kUpdate) {
    // Every column is set: listed ones to their value, the rest to NULL.
    std::string sql = fmt::format("UPDATE {} SET payload = ?", put.table);
    for (const auto& c : info.columns) sql += fmt::format(", {} = ?", c);
    return sql + " WHERE key = ?";
  }
  std::string names, params;
  for (const auto& [name, value] : put.columns) {
    names += ", " + name;
    params += ", ?";
  }
  return fmt::format("INSERT {}INTO {}(key, payload{}) VALUES(?, ?{})",
                     put.mode == PutMode::kUpsert ? "OR REPLACE " : "", put.table, names, params);
}

void bind_put(Stmt& s, const Put& put, const TableInfo& info) {
  int index = 1;
  if (put.mode != PutMode::kUpdate) {
    s.bind_key(index++, put.key);
    s.bind(index++, put.payload, true);
    for (const auto& [name, value] : put.columns) s.bind(index++, value, info.blob_columns.count(name) != 0);
    return;
  }
  s.bind(index++, put.payload, true);
  for (const auto& c : info.columns) {
    Value v;
    for (const auto& [name, value] : put.columns) {
      if (name == c) v = value;
    }
    s.bind(index++, v, info.blob_columns.count(c) != 0);
  }
  s.bind_key(index, put.key);
}

}  // namespace

Status Store::Impl::apply(const Put& put) {
  auto found = find_table(tables, put.table);
  if (!found) return found.error();
  const TableInfo& info = **found;
  if (auto ok = check_key(put.table, info, put.key); !ok) return ok;
  if (auto ok = check_columns(put.table, info, put); !ok) return ok;
  auto stmt = statement(put_sql(put, info));
  if (!stmt) return stmt.error();
  bind_put(**stmt, put, info);
  if (auto ran = (*stmt)->run(); !ran) {
    if (sqlite3_extended_errcode(writer_.raw()) == SQLITE_CONSTRAINT_PRIMARYKEY) {
      return make_error(fmt::format("store: {} {} already exists", put.table, to_string(put.key)));
    }
    return make_error(fmt::format("store: writing {} {}: {}", put.table, to_string(put.key),
                                  ran.error().message));
  }
  if (put.mode == PutMode::kUpdate && writer_.changes() == 0) {
    return make_error(fmt::format("store: {} {} does not exist", put.table, to_string(put.key)));
  }
  return {};
}

Status Store::Impl::apply(const Erase& erase) {
  auto info = find_table(tables, erase.table);
  if (!info) return info.error();
  if (auto ok = check_key(erase.table, **info, erase.key); !ok) return ok;
  auto stmt = statement(fmt::format("DELETE FROM {} WHERE key = ?", erase.table));
  if (!stmt) return stmt.error();
  (*stmt)->bind_key(1, erase.key);
  if (auto ran = (*stmt)->run(); !ran) return ran;
  if (erase.must_exist && writer_.changes() == 0) {
    return make_error(fmt::format("store: {} {} does not exist", erase.table, to_string(erase.key)));
  }
  return {};
}

Status Store::Impl::apply(const SetMeta& meta) {
  if (meta.key.starts_with(kReservedMetaPrefix) || meta.key.empty()) {
    return make_error(fmt::format("store: meta key '{}' is reserved or empty", meta.key));
  }
  auto stmt = statement("INSERT OR REPLACE INTO _drover_meta(key, value) VALUES(?, ?)");
  if (!stmt) return stmt.error();
  (*stmt)->bind(1, meta.key);
  (*stmt)->bind(2, meta.value);
  return (*stmt)->run();
}

}  // namespace drover::store
