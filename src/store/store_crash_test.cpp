// Crash safety: a child process writes through the store from several
// threads and reports each acknowledged batch to the parent through a pipe;
// the parent SIGKILLs it mid-stream, reopens the database and checks that
// every acknowledged batch is there, whole, and no batch is there in part.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "store/store.hpp"

namespace drover::store {
namespace {

constexpr int kWriterThreads = 4;
constexpr int64_t kSecondRowOffset = 500'000;

Schema crash_schema() {
  Schema s;
  s.application = "drover-crash-test";
  auto jobs = create_table({"jobs", ColumnType::kInteger, {{"state", ColumnType::kText}}});
  auto nodes = create_table({"nodes", ColumnType::kText, {}});
  jobs.insert(jobs.end(), nodes.begin(), nodes.end());
  s.migrations.push_back({1, "tables", jobs});
  return s;
}

std::string payload_for(int64_t id) { return "job-" + std::to_string(id) + std::string(200, 'x'); }

// One atomic batch: two job rows and a node row.
Batch batch_for(int64_t id) {
  Batch b;
  b.put(Put{"jobs", id, payload_for(id), {{"state", std::string("PENDING")}}});
  b.put(Put{"jobs", id + kSecondRowOffset, payload_for(id + kSecondRowOffset), {}});
  b.put(Put{"nodes", "n" + std::to_string(id), payload_for(id), {}});
  return b;
}

[[noreturn]] void run_child(const std::string& path, int ack_fd, int64_t base) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  auto store = Store::open(path, crash_schema());
  if (!store) {
    std::fprintf(stderr, "child: %s\n", store.error().message.c_str());
    ::_exit(2);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int64_t n = 0; n < 100'000; ++n) {
        const int64_t id = base + t * 10'000 + n;
        if (!(*store)->apply(batch_for(id)).ok()) ::_exit(3);
        if (::write(ack_fd, &id, sizeof id) != sizeof id) ::_exit(4);
      }
    });
  }
  for (auto& th : threads) th.join();
  ::_exit(0);
}

// Reads acknowledged ids until `want` arrived (then kills the child) and on to EOF.
std::set<int64_t> collect_acks(int fd, pid_t child, std::size_t want) {
  std::set<int64_t> acked;
  bool killed = false;
  int64_t id = 0;
  std::size_t have = 0;
  char* buf = reinterpret_cast<char*>(&id);
  for (;;) {
    ssize_t n = ::read(fd, buf + have, sizeof id - have);
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
    if (have < sizeof id) continue;
    have = 0;
    acked.insert(id);
    if (!killed && acked.size() >= want) {
      ::kill(child, SIGKILL);
      killed = true;
    }
  }
  if (!killed) ::kill(child, SIGKILL);
  return acked;
}

TEST(StoreCrash, EveryAcknowledgedBatchSurvivesSigkill) {
  std::string pattern = (std::filesystem::temp_directory_path() / "drover-crash-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  std::shared_ptr<void> remove_at_exit(nullptr, [&](void*) { std::filesystem::remove_all(pattern); });
  const std::string path = pattern + "/state.db";
  std::size_t total_acked = 0;
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(fds[0]);
      run_child(path, fds[1], int64_t{round + 1} * 100'000'000);
    }
    ::close(fds[1]);
    // A different stopping point each round: somewhere in the first few hundred batches.
    auto acked = collect_acks(fds[0], child, 150 + 120 * static_cast<std::size_t>(round));
    ::close(fds[0]);
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "child ended on its own (status " << status << ") before it could be killed";
    ASSERT_GE(acked.size(), 150u);
    total_acked += acked.size();

    auto store = Store::open(path, crash_schema());
    ASSERT_TRUE(store.ok()) << store.error().message;
    for (int64_t id : acked) {
      auto rec = (*store)->get("jobs", id);
      ASSERT_TRUE(rec.ok() && rec->has_value()) << "acknowledged job " << id << " lost in round " << round;
      EXPECT_EQ((*rec)->payload, payload_for(id));
    }
    // Atomicity: every batch present (acknowledged or not) is present whole.
    std::size_t batches = 0;
    ASSERT_TRUE((*store)->scan("jobs", [&](Record&& r) {
      const int64_t id = std::get<int64_t>(r.key);
      if (id % 100'000'000 >= kSecondRowOffset) return true;  // a second row; checked from its first
      ++batches;
      EXPECT_TRUE((*store)->get("jobs", id + kSecondRowOffset)->has_value()) << "partial batch " << id;
      EXPECT_TRUE((*store)->get("nodes", "n" + std::to_string(id))->has_value()) << "partial batch " << id;
      return true;
    }).ok());
    EXPECT_EQ(*(*store)->count("nodes"), static_cast<int64_t>(batches));
    EXPECT_GE(batches, total_acked);
  }
}

}  // namespace
}  // namespace drover::store
