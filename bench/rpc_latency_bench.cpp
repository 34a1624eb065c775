// Single-client sequential unary RPC latency (Ping, authenticated) over the
// Unix socket and over TCP with a fresh token per call, plus the cost of
// signing and verifying one token.
//
//   build/bin/rpc_latency_bench
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>

#include "drover/v1/ping.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"
#include "rpc/cluster_key.hpp"
#include "rpc/ping_service.hpp"
#include "rpc/server.hpp"
#include "rpc/testing.hpp"
#include "rpc/token.hpp"

namespace drover::rpc {
namespace {

void BM_PingSequential(benchmark::State& state) {
  auto dir = testing::TempDir::create("drover-bench");
  const std::string key = dir->file("drover.key");
  (void)create_cluster_key(key);
  ServerOptions o;
  o.unix_socket_path = dir->file("ctld.sock");
  o.tcp_address = "127.0.0.1:0";
  o.key_paths = {key};
  RpcServer server(o);
  server.add_service(make_ping_service(server.authenticator(), "bench"));
  if (auto st = server.start(); !st) {
    state.SkipWithError(st.error().message.c_str());
    return;
  }
  ClientOptions co;
  co.target = state.range(0) == 0 ? "unix:" + o.unix_socket_path
                                  : "127.0.0.1:" + std::to_string(server.tcp_port());
  co.key_path = key;
  auto client = RpcClient::connect(co);
  auto stub = v1::PingService::NewStub(client->channel());
  v1::PingRequest request;
  for (auto _ : state) {
    grpc::ClientContext ctx;
    fill_request_header("bench", request.mutable_header());
    v1::PingReply reply;
    grpc::Status st = stub->Ping(&ctx, request, &reply);
    if (!st.ok()) state.SkipWithError(st.error_message().c_str());
  }
  state.SetItemsProcessed(state.iterations());
  server.shutdown();
}
BENCHMARK(BM_PingSequential)->ArgName("transport")->Arg(0)->Arg(1)->UseRealTime()->MinTime(2.0)
    ->Unit(benchmark::kMicrosecond);

ClusterKey bench_key() {
  ClusterKey k;
  k.secret = std::string(64, 'k');
  k.id = key_id(k.secret);
  return k;
}

void BM_SignToken(benchmark::State& state) {
  const ClusterKey key = bench_key();
  for (auto _ : state) benchmark::DoNotOptimize(sign_token(key, new_claims(1000, 1000, unix_now_s(), 60)));
}
BENCHMARK(BM_SignToken)->Unit(benchmark::kMicrosecond);

void BM_VerifyToken(benchmark::State& state) {
  const ClusterKey key = bench_key();
  TokenVerifier verifier({key}, TokenPolicy{});
  std::vector<std::string> tokens;
  for (int i = 0; i < 200'000; ++i) tokens.push_back(sign_token(key, new_claims(1000, 1000, unix_now_s(), 60)));
  std::size_t i = 0;
  for (auto _ : state) {
    if (i == tokens.size()) {
      state.SkipWithError("ran out of pre-signed tokens");
      break;
    }
    benchmark::DoNotOptimize(verifier.verify(tokens[i++]));
  }
}
BENCHMARK(BM_VerifyToken)->Unit(benchmark::kMicrosecond)->Iterations(200'000);

}  // namespace
}  // namespace drover::rpc
