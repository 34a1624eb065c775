// The durable state store: SQLite in WAL mode with synchronous=FULL and group
// commit.
//
// Contract:
// - submit(batch, done): `done` runs exactly once, on the store's writer
//   thread, after the transaction containing the batch is committed and
//   fsynced (status ok) or after the batch failed (status with the reason;
//   none of its mutations is applied). A batch is atomic; batches are
//   applied in submission order; a failing batch does not affect others in
//   the same group. `done` must be quick and must not block on the store
//   (submitting more from it is fine).
// - Group commit: one writer thread takes everything queued while the
//   previous commit was syncing and commits it in one transaction, so the
//   fsync cost is shared by all callers waiting at that moment. A batch with
//   may_wait > 0 is held until a batch without it arrives (they then share a
//   commit), until its wait is over, or until close().
// - Reads (get, scan, load_all, get_meta) see every batch whose `done` has
//   run, use their own connection and never wait for a commit.
// - If a commit itself fails (disk full, I/O error), the store stops: that
//   group and every later submission fail with the error. The process
//   should exit and be restarted; recovery is reopening the store.
// - One process at a time: the controller serializes itself through its
//   lock file (rpc::LockFile under StateSaveLocation) before opening.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/result.hpp"
#include "store/mutation.hpp"
#include "store/schema.hpp"
#include "store/value.hpp"

namespace drover::store {

class Stmt;

struct StoreOptions {
  // FULL fsyncs the WAL at every commit (durable across power loss). Only
  // tests and benchmarks that measure the difference turn it off (NORMAL:
  // durable across process crashes, not power loss).
  bool synchronous_full = true;
  // Most batches committed in one transaction.
  std::size_t max_group_batches = 4096;
  int busy_timeout_ms = 5000;
};

struct Record {
  Key key;
  std::string payload;
  std::map<std::string, Value> columns;
};

struct StoreStats {
  uint64_t commits = 0;         // transactions committed (fsyncs)
  uint64_t batches = 0;         // batches committed
  uint64_t failed_batches = 0;  // batches refused (bad table, duplicate key, ...)
  uint64_t mutations = 0;
  uint64_t largest_group = 0;   // most batches in one commit
  uint64_t commit_micros = 0;   // total time spent in COMMIT (the fsync)
};

class Store {
 public:
  using Completion = std::function<void(const Status&)>;

  // Opens or creates the database at `path` (its directory must exist),
  // applies pending migrations and starts the writer. Refuses a database of
  // another application or of a newer schema version than `schema` knows.
  static Result<std::unique_ptr<Store>> open(const std::string& path, const Schema& schema,
                                             StoreOptions options = {});
  // Commits everything submitted, then stops (see close()).
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  void submit(Batch batch, Completion done);
  // Several batches queued at once, so that they share one commit (one
  // transaction, one fsync) unless the group limit splits them; each keeps
  // its own atomicity and its own `done`, in order.
  void submit_all(std::vector<std::pair<Batch, Completion>> batches);
  std::future<Status> submit(Batch batch);
  // Convenience: submit and wait.
  Status apply(Batch batch) { return submit(std::move(batch)).get(); }

  Result<std::optional<Record>> get(const std::string& table, const Key& key) const;
  // Every record in key order; `visit` returns false to stop early.
  Status scan(const std::string& table, const std::function<bool(Record&&)>& visit) const;
  // Records whose `column` equals `value`, in key order.
  Status scan_where(const std::string& table, const std::string& column, const Value& value,
                    const std::function<bool(Record&&)>& visit) const;
  // Records whose integer `column` is at least `min` (NULLs left out), in key order.
  Status scan_from(const std::string& table, const std::string& column, int64_t min,
                   const std::function<bool(Record&&)>& visit) const;
  // The start-up recovery path: every record of `table`, in key order.
  Result<std::vector<Record>> load_all(const std::string& table) const;
  Result<std::optional<Value>> get_meta(const std::string& key) const;
  Result<int64_t> count(const std::string& table) const;

  // Commits what is queued, stops the writer, checkpoints the WAL and closes.
  // Later submissions fail with "store closed". Idempotent.
  void close();
  int schema_version() const { return schema_version_; }
  const std::string& path() const { return path_; }
  StoreStats stats() const;

  class Impl;  // connections, writer thread and queue (store_impl.hpp)

 private:
  Store(std::string path, int schema_version, std::unique_ptr<Impl> impl);
  Status read_records(const std::string& sql, const std::function<void(Stmt&)>& bind,
                      const std::function<bool(Record&&)>& visit) const;

  std::string path_;
  int schema_version_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace drover::store
