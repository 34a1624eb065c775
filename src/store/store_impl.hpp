// Store internals shared by store.cpp (open, reads) and group_commit.cpp
// (the writer thread). Not part of the interface.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/sqlite.hpp"
#include "store/store.hpp"

namespace drover::store {

// A record table as found in the database after migrations.
struct TableInfo {
  bool integer_key = true;
  std::vector<std::string> columns;  // besides key and payload, in table order
  std::set<std::string> blob_columns;
  bool has(const std::string& column) const;
};
using Tables = std::map<std::string, TableInfo>;

// "table 'x' does not exist (record tables: a, b)" or ok.
Result<const TableInfo*> find_table(const Tables& tables, const std::string& table);

class Store::Impl {
 public:
  Impl(Db writer, Db reader, Tables tables, StoreOptions options);
  ~Impl();

  void start();
  void submit(Batch batch, Completion done);
  void submit_all(std::vector<std::pair<Batch, Completion>> batches);
  void close();
  StoreStats stats() const;

  // Reads share one connection. Recursive: a scan's visitor may read more
  // (SQLite allows several statements in progress on one connection).
  mutable std::recursive_mutex read_mu;
  Db reader;
  const Tables tables;

 private:
  struct Pending {
    Batch batch;
    Completion done;
    std::chrono::steady_clock::time_point queued;
  };

  struct GroupCounts {
    uint64_t failed = 0;
    uint64_t mutations = 0;
    uint64_t commit_us = 0;
  };

  void run();
  void commit_group(std::vector<Pending>& group);
  void apply_group(std::vector<Pending>& group, std::vector<Status>& results, GroupCounts& counts);
  Status apply_batch(const Batch& batch);
  Status apply(const Put& put);
  Status apply(const Erase& erase);
  Status apply(const SetMeta& meta);
  Status exec_cached(const std::string& sql);
  Result<Stmt*> statement(const std::string& sql);
  void fail_store(const Error& error);

  Db writer_;
  StoreOptions options_;
  std::unordered_map<std::string, Stmt> statements_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending> queue_;
  bool closing_ = false;
  bool closed_ = false;
  std::optional<Error> failed_;  // set by the writer after a failed commit
  std::thread thread_;

  mutable std::mutex stats_mu_;
  StoreStats stats_;
};

}  // namespace drover::store
