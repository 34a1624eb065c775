// End-to-end durable submissions per second through the API: N client
// threads, each with its own connection (like N concurrent sbatch
// processes), call a toy Submit RPC that authenticates the caller, stores
// one job-sized record through the group-committing store and replies only
// after it is fsynced. Client and server share this process and its CPUs.
//
//   build/bin/rpc_submit_bench --benchmark_counters_tabular=true
//
// transport:0 is the Unix socket (kernel credentials), transport:1 is TCP on
// 127.0.0.1 with a fresh HMAC token per request.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>

#include "drover/testing/v1/bench.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/server.hpp"
#include "rpc/testing.hpp"
#include "store/store.hpp"

namespace drover {
namespace {

namespace bench = ::drover::testing::v1;

store::Schema bench_schema() {
  store::Schema s;
  s.application = "drover-rpc-bench";
  s.migrations.push_back({1, "jobs", store::create_table({"jobs", store::ColumnType::kInteger,
                                                          {{"name", store::ColumnType::kText},
                                                           {"user_id", store::ColumnType::kInteger}}})});
  return s;
}

class SubmitService final : public bench::BenchService::CallbackService {
 public:
  SubmitService(const rpc::CallAuthenticator& auth, store::Store& store) : auth_(auth), store_(store) {}

  grpc::ServerUnaryReactor* Submit(grpc::CallbackServerContext* ctx, const bench::SubmitRequest* request,
                                   bench::SubmitReply* reply) override {
    auto* reactor = ctx->DefaultReactor();
    rpc::AuthResult who = auth_.authenticate(*ctx);
    if (!who.ok()) {
      reactor->Finish(rpc::to_status(who));
      return reactor;
    }
    const int64_t id = next_id_.fetch_add(1);
    rpc::fill_reply_header(request->header(), "rpc_submit_bench", reply->mutable_header());
    rpc::fill_caller(who.identity(), reply->mutable_caller());
    store::Batch batch;
    batch.put(store::Put{"jobs", id, request->payload(),
                         {{"name", request->name()}, {"user_id", int64_t{who.identity().uid}}},
                         store::PutMode::kInsert});
    // The reply goes out from the store's completion: only once the record is durable.
    store_.submit(std::move(batch), [reactor, reply, id](const Status& st) {
      if (!st) {
        reactor->Finish(grpc::Status(grpc::StatusCode::INTERNAL, st.error().message));
        return;
      }
      reply->set_id(id);
      reactor->Finish(grpc::Status::OK);
    });
    return reactor;
  }

 private:
  const rpc::CallAuthenticator& auth_;
  store::Store& store_;
  std::atomic<int64_t> next_id_{1};
};

struct Fixture {
  std::unique_ptr<rpc::testing::TempDir> dir;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<rpc::RpcServer> server;
  std::unique_ptr<SubmitService> service;
  std::string unix_target, tcp_target, key_path;
};
Fixture g;

void start_fixture(benchmark::State& state) {
  g.dir = std::make_unique<rpc::testing::TempDir>(rpc::testing::TempDir::create("drover-bench").value());
  g.key_path = g.dir->file("drover.key");
  (void)rpc::create_cluster_key(g.key_path);
  g.store = store::Store::open(g.dir->file("state.db"), bench_schema()).value();
  rpc::ServerOptions o;
  o.unix_socket_path = g.dir->file("ctld.sock");
  o.tcp_address = "127.0.0.1:0";
  o.key_paths = {g.key_path};
  g.server = std::make_unique<rpc::RpcServer>(o);
  g.service = std::make_unique<SubmitService>(g.server->authenticator(), *g.store);
  g.server->add_service(g.service.get());
  if (auto st = g.server->start(); !st) state.SkipWithError(st.error().message.c_str());
  g.unix_target = "unix:" + o.unix_socket_path;
  g.tcp_target = "127.0.0.1:" + std::to_string(g.server->tcp_port());
}

void stop_fixture(benchmark::State& state) {
  store::StoreStats s = g.store->stats();
  state.counters["batches_per_commit"] = s.commits ? double(s.batches) / double(s.commits) : 0;
  g.server->shutdown();
  g.server.reset();
  g.service.reset();
  g.store.reset();
  g.dir.reset();
}

void BM_SubmitRpc(benchmark::State& state) {
  if (state.thread_index() == 0) start_fixture(state);
  // Created before the timing loop; the loop's opening barrier runs after
  // thread 0's start_fixture, so the first call finds the server up.
  std::unique_ptr<bench::BenchService::Stub> stub;
  bench::SubmitRequest request;
  request.set_name("bench");
  request.set_payload(std::string(512, 'p'));
  bool first = true;
  for (auto _ : state) {
    if (first) {
      rpc::ClientOptions o;
      o.target = state.range(0) == 0 ? g.unix_target : g.tcp_target;
      o.key_path = g.key_path;
      auto client = rpc::RpcClient::connect(o);
      stub = bench::BenchService::NewStub(client->channel());
      first = false;
    }
    grpc::ClientContext ctx;
    rpc::fill_request_header("rpc_submit_bench", request.mutable_header());
    bench::SubmitReply reply;
    grpc::Status st = stub->Submit(&ctx, request, &reply);
    if (!st.ok()) state.SkipWithError(st.error_message().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  stub.reset();
  if (state.thread_index() == 0) stop_fixture(state);
}
BENCHMARK(BM_SubmitRpc)->ArgName("transport")->Arg(0)->Threads(1)->Threads(4)->Threads(16)->Threads(32)
    ->Threads(64)->UseRealTime()->MinTime(3.0);
BENCHMARK(BM_SubmitRpc)->ArgName("transport")->Arg(1)->Threads(1)->Threads(16)->Threads(64)->UseRealTime()
    ->MinTime(3.0);

}  // namespace
}  // namespace drover
