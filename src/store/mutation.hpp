// Changes submitted to the store. A Batch is atomic: all of its mutations
// are committed together or none is (a job end = job record + node records
// + an accounting row).
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "store/value.hpp"

namespace drover::store {

enum class PutMode {
  kUpsert,  // insert, or replace the whole existing record
  kInsert,  // insert; fails if the key exists (a new job id must be new)
  kUpdate,  // replace an existing record; fails if the key does not exist
};

// Writes a whole record: payload and every column. Columns not listed
// become NULL (a record is replaced, never merged).
struct Put {
  std::string table;
  Key key;
  std::string payload;
  std::vector<std::pair<std::string, Value>> columns;
  PutMode mode = PutMode::kUpsert;
};

struct Erase {
  std::string table;
  Key key;
  bool must_exist = false;  // fail if there is no such record
};

// A small named value outside any table (next job id, last backfill time).
// Keys starting with "store." are reserved.
struct SetMeta {
  std::string key;
  Value value;
};

using Mutation = std::variant<Put, Erase, SetMeta>;

struct Batch {
  std::vector<Mutation> mutations;
  // How long the batch may wait for others to share its commit (and fsync)
  // when nothing queued beside it is in a hurry. 0: commit at once. For
  // changes whose sender can wait a little (an agent's report): a sequential
  // client's next change then carries them in its own commit.
  std::chrono::milliseconds may_wait{0};

  Batch& put(Put p) { mutations.emplace_back(std::move(p)); return *this; }
  Batch& erase(Erase e) { mutations.emplace_back(std::move(e)); return *this; }
  Batch& set_meta(std::string key, Value value) {
    mutations.emplace_back(SetMeta{std::move(key), std::move(value)});
    return *this;
  }
  bool empty() const { return mutations.empty(); }
};

}  // namespace drover::store
