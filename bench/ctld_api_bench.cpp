// Durable submissions per second through the controller's API from
// concurrent clients: a real `drover controller` (build/bin/drover, its own
// process, fresh StateSaveLocation) and N client threads, each with its own
// connection, submitting held batch jobs (so nothing launches) and waiting
// for each reply, which the controller sends only once the job is fsynced.
//
//   build/bin/ctld_api_bench --benchmark_counters_tabular=true
//
// transport:0 the local fast path (ctld.wire.sock), transport:1 gRPC on the
// Unix socket (ctld.sock). Jobs are cancelled between runs.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "client/api.hpp"
#include "client/grpc_transport.hpp"
#include "rpc/cluster_key.hpp"

namespace drover {
namespace {

struct Controller {
  std::string dir, conf;
  pid_t pid = -1;

  Controller() {
    char tmpl[] = "/tmp/drbench-XXXXXX";
    dir = mkdtemp(tmpl);
    conf = dir + "/slurm.conf";
    (void)rpc::create_cluster_key(dir + "/drover.key");
    std::ofstream(conf) << "ClusterName=bench\nSlurmctldHost=localhost\nAuthInfo=key=" << dir
                        << "/drover.key\nStateSaveLocation=" << dir
                        << "/state\nMaxJobCount=1000000\nMinJobAge=1\n"
                           "NodeName=n[1-4] CPUs=64 RealMemory=256000 NodeAddr=127.0.0.1\n"
                           "PartitionName=compute Nodes=n[1-4] Default=YES\n";
    pid = fork();
    if (pid == 0) {
      std::string bin = std::string(DROVER_BINARY_DIR) + "/bin/drover";
      int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 2);
      execl(bin.c_str(), bin.c_str(), "controller", "--config", conf.c_str(), "--tcp", "127.0.0.1:0", nullptr);
      _exit(127);
    }
    for (int i = 0; i < 200; ++i) {
      struct stat st {};
      if (stat((dir + "/state/ctld.wire.sock").c_str(), &st) == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~Controller() {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    std::system(("rm -rf '" + dir + "'").c_str());
  }
};

Controller& controller() {
  static Controller c;
  return c;
}

std::unique_ptr<client::ControllerApi> connect(bool grpc) {
  auto ep = client::find_controller(controller().conf);
  if (!ep) return nullptr;
  if (grpc) {
    client::enable_grpc_transport();
    ep->wire_path.clear();
    ep->target = "unix:" + controller().dir + "/state/ctld.sock";
  }
  auto api = client::ControllerApi::connect(*ep, "ctld_api_bench");
  return api ? std::move(*api) : nullptr;
}

v1::JobDescriptor held_job() {
  v1::JobDescriptor d;
  d.set_batch(true);
  d.set_name("bench");
  d.set_script("#!/bin/sh\ntrue\n");
  d.set_work_dir("/tmp");
  d.set_hold(true);
  d.set_std_out("/dev/null");
  for (int i = 0; i < 30; ++i) d.add_environment("VAR" + std::to_string(i) + "=some value of a typical length");
  return d;
}

void cancel_all() {
  auto api = connect(false);
  if (!api) return;
  v1::CancelRequest req;
  req.add_states(v1::PENDING);
  (void)api->cancel(req);
}

void BM_DurableSubmit(benchmark::State& state) {
  bool grpc = state.range(0) == 1;
  auto api = connect(grpc);
  if (!api) {
    state.SkipWithError("cannot reach the controller");
    return;
  }
  v1::JobDescriptor job = held_job();
  int64_t failures = 0;
  std::string first_error;
  for (auto _ : state) {
    auto r = api->submit(job, false);
    if (!r) {
      if (failures++ == 0) first_error = r.error().message;
    }
  }
  if (!first_error.empty()) state.SetLabel(first_error.substr(0, 120));
  state.SetItemsProcessed(state.iterations());
  state.counters["failures"] = static_cast<double>(failures);
  if (state.thread_index() == 0) cancel_all();
}

BENCHMARK(BM_DurableSubmit)->ArgName("transport")->Arg(0)->Arg(1)->Threads(1)->Threads(4)->Threads(16)->Threads(64)
    ->UseRealTime()->MinTime(2.0);

void BM_QueueQuery(benchmark::State& state) {
  auto api = connect(false);
  if (!api) {
    state.SkipWithError("cannot reach the controller");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(api->get_jobs({}, false));
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_QueueQuery)->UseRealTime()->MinTime(1.0);

}  // namespace
}  // namespace drover
