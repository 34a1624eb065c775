#include "store/store.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>

#include "store/sqlite.hpp"

namespace drover::store {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "drover-store-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

Schema test_schema() {
  Schema s;
  s.application = "drover-test";
  s.migrations.push_back({1, "jobs and nodes",
                          [] {
                            auto sql = create_table({"jobs", ColumnType::kInteger,
                                                     {{"state", ColumnType::kText},
                                                      {"user_id", ColumnType::kInteger},
                                                      {"tag", ColumnType::kBlob, false}}});
                            auto nodes = create_table({"nodes", ColumnType::kText, {{"state", ColumnType::kText}}});
                            sql.insert(sql.end(), nodes.begin(), nodes.end());
                            return sql;
                          }()});
  return s;
}

Put job(int64_t id, std::string payload, std::string state = "PENDING", int64_t user = 1000,
        PutMode mode = PutMode::kUpsert) {
  return Put{"jobs", id, std::move(payload), {{"state", state}, {"user_id", user}}, mode};
}

std::unique_ptr<Store> open_ok(const std::string& path, const Schema& schema = test_schema()) {
  auto store = Store::open(path, schema);
  EXPECT_TRUE(store.ok()) << (store.ok() ? "" : store.error().message);
  return store.ok() ? std::move(*store) : nullptr;
}

TEST(StoreOpen, CreatesAppliesMigrationsAndReopens) {
  TempDir dir;
  {
    auto store = open_ok(dir.file("state.db"));
    ASSERT_TRUE(store);
    EXPECT_EQ(store->schema_version(), 1);
    ASSERT_TRUE(store->apply(Batch().put(job(1, "a"))).ok());
  }
  auto again = open_ok(dir.file("state.db"));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->schema_version(), 1);
  EXPECT_EQ(*again->count("jobs"), 1);
}

TEST(StoreOpen, UsesWriteAheadLogging) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  auto db = Db::open(dir.file("state.db"), SQLITE_OPEN_READONLY);
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*db->query_text("PRAGMA journal_mode"), "wal");
}

TEST(StoreOpen, AppliesOnlyNewMigrationsOnUpgrade) {
  TempDir dir;
  ASSERT_TRUE(open_ok(dir.file("state.db")));
  Schema v2 = test_schema();
  v2.migrations.push_back({2, "jobs.partition", add_column("jobs", {"partition", ColumnType::kText})});
  auto store = open_ok(dir.file("state.db"), v2);
  ASSERT_TRUE(store);
  EXPECT_EQ(store->schema_version(), 2);
  Put p = job(7, "x");
  p.columns.push_back({"partition", std::string("gpu")});
  ASSERT_TRUE(store->apply(Batch().put(p)).ok());
  auto rec = store->get("jobs", int64_t{7});
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(std::get<std::string>((*rec)->columns.at("partition")), "gpu");
}

struct OpenRefusal {
  std::string name;
  std::function<Schema()> schema_for_reopen;
  std::string expected;
};

TEST(StoreOpen, RefusesWhatItCannotOpenSafely) {
  std::vector<OpenRefusal> cases = {
      {"newer schema", [] { Schema s = test_schema(); s.migrations.clear(); return s; },
       "has schema version 1, newer than this Drover knows (0)"},
      {"other application", [] { Schema s = test_schema(); s.application = "other"; return s; },
       "belongs to 'drover-test', not 'other'"},
      {"failing migration",
       [] { Schema s = test_schema(); s.migrations.push_back({2, "broken", {"CREATE TABLE jobs (x)"}}); return s; },
       "migration 2 (broken) failed: table jobs already exists"},
      {"gap in versions",
       [] { Schema s = test_schema(); s.migrations.push_back({3, "skips", {}}); return s; },
       "has version 3; expected 2"},
  };
  for (const auto& c : cases) {
    TempDir dir;
    ASSERT_TRUE(open_ok(dir.file("state.db")));
    auto store = Store::open(dir.file("state.db"), c.schema_for_reopen());
    ASSERT_FALSE(store.ok()) << c.name;
    EXPECT_NE(store.error().message.find(c.expected), std::string::npos) << c.name << ": " << store.error().message;
    // Nothing was changed by the refusal.
    auto again = open_ok(dir.file("state.db"));
    ASSERT_TRUE(again) << c.name;
    EXPECT_EQ(again->schema_version(), 1) << c.name;
  }
}

TEST(StoreOpen, MissingDirectoryIsNamed) {
  auto store = Store::open("/nonexistent-drover-dir/state.db", test_schema());
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.error().message.find("state directory /nonexistent-drover-dir does not exist"),
            std::string::npos)
      << store.error().message;
}

TEST(StoreWrite, PutReplacesTheWholeRecord) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  Put first = job(5, "v1");
  first.columns.push_back({"tag", std::string("\0bin", 4)});
  ASSERT_TRUE(store->apply(Batch().put(first)).ok());
  auto rec = store->get("jobs", int64_t{5});
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ(std::get<std::string>((*rec)->columns.at("tag")), std::string("\0bin", 4));
  ASSERT_TRUE(store->apply(Batch().put(Put{"jobs", int64_t{5}, "v2", {{"state", std::string("RUNNING")}}})).ok());
  rec = store->get("jobs", int64_t{5});
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->payload, "v2");
  EXPECT_EQ(std::get<std::string>((*rec)->columns.at("state")), "RUNNING");
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*rec)->columns.at("user_id")));
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*rec)->columns.at("tag")));
}

TEST(StoreWrite, UpdateModeSetsUnlistedColumnsToNull) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->apply(Batch().put(job(5, "v1", "PENDING", 42))).ok());
  ASSERT_TRUE(store->apply(Batch().put(Put{"jobs", int64_t{5}, "v2", {{"state", std::string("RUNNING")}},
                                           PutMode::kUpdate}))
                  .ok());
  auto rec = store->get("jobs", int64_t{5});
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->payload, "v2");
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*rec)->columns.at("user_id")));
}

struct RefusedBatch {
  std::string name;
  Batch batch;
  std::string expected;
};

TEST(StoreWrite, RefusedBatchesSayWhyAndChangeNothing) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->apply(Batch().put(job(1, "one"))).ok());
  std::vector<RefusedBatch> cases = {
      {"duplicate insert", Batch().put(job(2, "two")).put(job(1, "dup", "PENDING", 1, PutMode::kInsert)),
       "store: jobs 1 already exists"},
      {"update of missing", Batch().put(job(2, "two")).put(job(9, "x", "PENDING", 1, PutMode::kUpdate)),
       "store: jobs 9 does not exist"},
      {"erase of missing", Batch().put(job(2, "two")).erase({"jobs", int64_t{9}, true}),
       "store: jobs 9 does not exist"},
      {"unknown table", Batch().put(job(2, "two")).put(Put{"jbos", int64_t{1}, "x", {}}),
       "store: no record table 'jbos' (record tables: jobs, nodes)"},
      {"unknown column", Batch().put(job(2, "two")).put(Put{"jobs", int64_t{3}, "x", {{"stat", int64_t{1}}}}),
       "store: table jobs has no column 'stat' (columns: state, user_id, tag)"},
      {"wrong key type", Batch().put(job(2, "two")).put(Put{"nodes", int64_t{3}, "x", {}}),
       "store: table nodes has text keys; got 3"},
      {"reserved meta", Batch().put(job(2, "two")).set_meta("store.application", std::string("x")),
       "store: meta key 'store.application' is reserved"},
  };
  for (auto& c : cases) {
    Status st = store->apply(std::move(c.batch));
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_EQ(st.error().message.substr(0, c.expected.size()), c.expected) << c.name << ": " << st.error().message;
    EXPECT_FALSE(store->get("jobs", int64_t{2})->has_value()) << c.name << ": batch was not atomic";
    EXPECT_EQ(store->get("jobs", int64_t{1})->value().payload, "one") << c.name;
  }
  EXPECT_EQ(store->stats().failed_batches, cases.size());
}

TEST(StoreWrite, FailingBatchDoesNotAffectOthersInItsGroup) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  constexpr int kBatches = 200;
  std::vector<std::future<Status>> results;
  for (int i = 0; i < kBatches; ++i) {
    // Every third batch inserts a key that an earlier batch already used.
    PutMode mode = i % 3 == 2 ? PutMode::kInsert : PutMode::kUpsert;
    int64_t id = i % 3 == 2 ? i - 1 : i;
    results.push_back(store->submit(Batch().put(job(id, "p" + std::to_string(i), "PENDING", 1, mode))
                                        .set_meta("last", int64_t{i})));
  }
  for (int i = 0; i < kBatches; ++i) {
    Status st = results[i].get();
    EXPECT_EQ(st.ok(), i % 3 != 2) << i;
  }
  EXPECT_EQ(*store->count("jobs"), kBatches - kBatches / 3);
  auto last = store->get_meta("last");
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ(std::get<int64_t>(**last), kBatches - 1);  // batch 199 succeeded (199 % 3 == 1)
}

TEST(StoreWrite, CompletionRunsAfterTheChangeIsReadable) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  std::promise<bool> seen;
  store->submit(Batch().put(job(11, "eleven")), [&](const Status& st) {
    auto rec = store->get("jobs", int64_t{11});
    seen.set_value(st.ok() && rec.ok() && rec->has_value() && (*rec)->payload == "eleven");
  });
  EXPECT_TRUE(seen.get_future().get());
}

TEST(StoreWrite, ConcurrentProducersAllLand) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  constexpr int kThreads = 8, kEach = 50;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        if (!store->apply(Batch().put(job(t * 1000 + i, "x"))).ok()) failures++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(*store->count("jobs"), kThreads * kEach);
  EXPECT_EQ(store->stats().batches, static_cast<uint64_t>(kThreads * kEach));
}

TEST(StoreWrite, SubmitAllSharesOneCommitAndKeepsEachBatchApart) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  const uint64_t commits_before = store->stats().commits;
  std::vector<std::string> order;
  std::mutex mu;
  std::promise<void> all_done;
  auto note = [&](std::string what) {
    return [&, what](const Status& st) {
      std::lock_guard lock(mu);
      order.push_back(what + (st.ok() ? " ok" : " refused"));
      if (order.size() == 3) all_done.set_value();
    };
  };
  std::vector<std::pair<Batch, Store::Completion>> batches;
  batches.emplace_back(Batch().put(job(1, "submitted")), note("submit"));
  batches.emplace_back(Batch().put(job(1, "dup", "PENDING", 1, PutMode::kInsert)), note("duplicate"));
  batches.emplace_back(Batch().put(job(1, "started", "RUNNING")), note("start"));
  store->submit_all(std::move(batches));
  all_done.get_future().get();
  EXPECT_EQ(order, (std::vector<std::string>{"submit ok", "duplicate refused", "start ok"}));
  EXPECT_EQ(store->stats().commits, commits_before + 1) << "one transaction, one fsync";
  EXPECT_EQ(store->stats().largest_group, 3u);
  auto rec = store->get("jobs", int64_t{1});
  ASSERT_TRUE(rec.ok() && rec->has_value());
  EXPECT_EQ((*rec)->payload, "started");
  store->close();
  std::vector<std::pair<Batch, Store::Completion>> late;
  std::promise<std::string> refused;
  late.emplace_back(Batch().put(job(2, "late")), [&](const Status& st) { refused.set_value(st.ok() ? "" : st.error().message); });
  store->submit_all(std::move(late));
  EXPECT_NE(refused.get_future().get().find("closed"), std::string::npos);
}

TEST(StoreWrite, ABatchThatMayWaitRidesWithTheNextOneInAHurry) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  const uint64_t commits_before = store->stats().commits;
  // An agent's news: may wait a long time here, so that only the next batch
  // (or close) can commit it.
  Batch news;
  news.put(job(1, "ended", "COMPLETED"));
  news.may_wait = std::chrono::minutes(10);
  auto news_done = store->submit(std::move(news));
  EXPECT_EQ(news_done.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "committed before its company came";
  EXPECT_TRUE(store->apply(Batch().put(job(2, "submitted"))).ok());  // a client waits for this one
  ASSERT_EQ(news_done.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(news_done.get().ok());
  EXPECT_EQ(store->stats().commits, commits_before + 1) << "both in one transaction, one fsync";
  EXPECT_EQ(store->stats().largest_group, 2u);

  // Alone, it is committed once its time is up; and close() commits one still waiting.
  Batch soon;
  soon.put(job(3, "ended"));
  soon.may_wait = std::chrono::milliseconds(20);
  EXPECT_TRUE(store->submit(std::move(soon)).get().ok());
  Batch last;
  last.put(job(4, "ended"));
  last.may_wait = std::chrono::minutes(10);
  auto last_done = store->submit(std::move(last));
  store->close();
  ASSERT_EQ(last_done.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_TRUE(last_done.get().ok());
  auto reopened = open_ok(dir.file("state.db"));
  EXPECT_EQ(*reopened->count("jobs"), 4);
}

TEST(StoreWrite, SubmitAfterCloseFails) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  auto pending = store->submit(Batch().put(job(1, "before close")));
  store->close();
  EXPECT_TRUE(pending.get().ok());  // queued before close: committed
  Status st = store->apply(Batch().put(job(2, "after close")));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("closed"), std::string::npos);
  auto reopened = open_ok(dir.file("state.db"));
  EXPECT_EQ(*reopened->count("jobs"), 1);
}

TEST(StoreRead, ScansInKeyOrderAndByColumn) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  Batch b;
  for (int64_t id : {30, 10, 20, 40}) b.put(job(id, "j" + std::to_string(id), id >= 30 ? "RUNNING" : "PENDING"));
  b.put(Put{"nodes", std::string("gpu02"), "n2", {{"state", std::string("IDLE")}}});
  b.put(Put{"nodes", std::string("gpu01"), "n1", {{"state", std::string("DRAIN")}}});
  ASSERT_TRUE(store->apply(std::move(b)).ok());

  auto jobs = store->load_all("jobs");
  ASSERT_TRUE(jobs.ok());
  std::vector<int64_t> ids;
  for (const auto& r : *jobs) ids.push_back(std::get<int64_t>(r.key));
  EXPECT_EQ(ids, (std::vector<int64_t>{10, 20, 30, 40}));

  std::vector<int64_t> running;
  ASSERT_TRUE(store->scan_where("jobs", "state", std::string("RUNNING"), [&](Record&& r) {
    running.push_back(std::get<int64_t>(r.key));
    return true;
  }).ok());
  EXPECT_EQ(running, (std::vector<int64_t>{30, 40}));

  // scan_from: an integer column at least a value (sacct's end_time window); NULLs never match.
  ASSERT_TRUE(store->apply(Batch().put(job(50, "j50", "DONE", 7)).put(job(60, "j60", "DONE", 2))).ok());
  std::vector<int64_t> from;
  ASSERT_TRUE(store->scan_from("jobs", "user_id", 5, [&](Record&& r) {
    from.push_back(std::get<int64_t>(r.key));
    return true;
  }).ok());
  EXPECT_EQ(from, (std::vector<int64_t>{10, 20, 30, 40, 50}));
  EXPECT_FALSE(store->scan_from("jobs", "nope", 0, [](Record&&) { return true; }).ok());

  auto nodes = store->load_all("nodes");
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ(std::get<std::string>(nodes->front().key), "gpu01");

  auto bad = store->scan_where("jobs", "nope", int64_t{1}, [](Record&&) { return true; });
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "store: table jobs has no column 'nope'");
}

TEST(StoreRead, MetaValuesRoundTrip) {
  TempDir dir;
  auto store = open_ok(dir.file("state.db"));
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->get_meta("next_job_id")->has_value());
  ASSERT_TRUE(store->apply(Batch().set_meta("next_job_id", int64_t{1001}).set_meta("note", std::string("hi"))).ok());
  EXPECT_EQ(std::get<int64_t>(**store->get_meta("next_job_id")), 1001);
  EXPECT_EQ(std::get<std::string>(**store->get_meta("note")), "hi");
}

}  // namespace
}  // namespace drover::store
