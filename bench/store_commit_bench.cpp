// Durable mutations per second through drover::store::Store (SQLite WAL,
// synchronous=FULL, group commit), from concurrent producers that each wait
// for their own change to be fsynced, as a controller thread per request would.
//
//   build/bin/store_commit_bench --benchmark_counters_tabular=true
//
// The database lives in a fresh directory under $TMPDIR (or /tmp): put
// TMPDIR on the filesystem you want to measure.
#include <benchmark/benchmark.h>

#include <atomic>
#include <deque>
#include <future>
#include <memory>

#include "rpc/testing.hpp"
#include "store/store.hpp"

namespace drover::store {
namespace {

Schema bench_schema() {
  Schema s;
  s.application = "drover-bench";
  s.migrations.push_back({1, "jobs", create_table({"jobs", ColumnType::kInteger,
                                                   {{"state", ColumnType::kText},
                                                    {"user_id", ColumnType::kInteger}}})});
  return s;
}

// A job-record-sized payload (a serialized job is a few hundred bytes).
const std::string kPayload(512, 'j');

struct Shared {
  std::unique_ptr<rpc::testing::TempDir> dir;
  std::unique_ptr<Store> store;
  std::atomic<int64_t> next_id{1};
};
Shared g;

void open_store(bool full) {
  g.dir = std::make_unique<rpc::testing::TempDir>(rpc::testing::TempDir::create("drover-bench").value());
  StoreOptions options;
  options.synchronous_full = full;
  g.store = Store::open(g.dir->file("state.db"), bench_schema(), options).value();
}

void close_store(benchmark::State& state) {
  StoreStats s = g.store->stats();
  state.counters["batches_per_commit"] = s.commits ? double(s.batches) / double(s.commits) : 0;
  state.counters["fsync_us"] = s.commits ? double(s.commit_micros) / double(s.commits) : 0;
  g.store.reset();
  g.dir.reset();
}

Batch one_job() {
  const int64_t id = g.next_id.fetch_add(1);
  return Batch().put(Put{"jobs", id, kPayload, {{"state", std::string("PENDING")}, {"user_id", int64_t{1000}}}});
}

// Each thread: submit one job record, wait until it is durable, repeat.
void BM_DurableSubmit(benchmark::State& state) {
  if (state.thread_index() == 0) open_store(state.range(0) != 0);
  for (auto _ : state) {
    Status st = g.store->apply(one_job());
    if (!st) state.SkipWithError(st.error().message.c_str());
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) close_store(state);
}
BENCHMARK(BM_DurableSubmit)->ArgName("full")->Arg(1)->Threads(1)->Threads(4)->Threads(16)->Threads(64)
    ->UseRealTime()->MinTime(2.0);
BENCHMARK(BM_DurableSubmit)->ArgName("full")->Arg(0)->Threads(1)->Threads(16)->UseRealTime()->MinTime(2.0);

// One producer that keeps `window` submissions in flight (an event loop
// that replies from completions, like the controller): the store's ceiling.
void BM_PipelinedSubmit(benchmark::State& state) {
  open_store(true);
  const std::size_t window = static_cast<std::size_t>(state.range(0));
  std::deque<std::future<Status>> in_flight;
  for (auto _ : state) {
    in_flight.push_back(g.store->submit(one_job()));
    if (in_flight.size() >= window) {
      if (!in_flight.front().get()) state.SkipWithError("submit failed");
      in_flight.pop_front();
    }
  }
  for (auto& f : in_flight) {
    if (!f.get()) state.SkipWithError("submit failed");
  }
  state.SetItemsProcessed(state.iterations());
  close_store(state);
}
BENCHMARK(BM_PipelinedSubmit)->ArgName("window")->Arg(256)->Arg(4096)->UseRealTime()->MinTime(2.0);

}  // namespace
}  // namespace drover::store
