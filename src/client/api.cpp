#include "client/api.hpp"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "common/strings.hpp"
#include "config/model.hpp"
#include "drover/v1/cluster.grpc.pb.h"
#include "drover/v1/jobs.grpc.pb.h"
#include "rpc/call.hpp"
#include "rpc/client.hpp"

namespace drover::client {
namespace {

std::string list_value(const config::ClusterConfig& cfg, const char* key, std::string_view item) {
  auto it = cfg.passive_values.find(key);
  if (it == cfg.passive_values.end()) return "";
  for (const auto& p : split(it->second, ',')) {
    auto eq = p.find('=');
    if (eq != std::string::npos && iequals(p.substr(0, eq), item)) return p.substr(eq + 1);
  }
  return "";
}

bool is_socket(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
}

}  // namespace

Result<Endpoint> find_controller(const std::string& config_flag) {
  Endpoint ep;
  ep.conf_path = config::resolve_config_path(config_flag);
  auto cfg = config::load_config(config::LoadOptions{ep.conf_path, "", ""});
  if (!cfg) {
    return make_error(cfg.error().message +
                      " (the commands read the cluster's slurm.conf from --config, DROVER_CONF or "
                      "/etc/drover/slurm.conf; `drover up` prints the export DROVER_CONF=... line)");
  }
  ep.cluster = cfg->cluster_name;
  std::string socket = cfg->state_save_location + "/ctld.sock";
  std::string key = list_value(*cfg, "AuthInfo", "key");
  ep.key_path = key.empty() ? "/etc/drover/drover.key" : key;
  if (is_socket(socket) || cfg->slurmctld_hosts.empty()) {
    ep.target = "unix:" + socket;
    return ep;
  }
  std::string host = cfg->slurmctld_hosts.front();
  auto open = host.find('(');
  if (open != std::string::npos) host = host.substr(open + 1, host.size() - open - 2);
  ep.target = host + ":" + std::to_string(cfg->slurmctld_port);
  return ep;
}

struct ControllerApi::Impl {
  rpc::RpcClient client;
  std::string name;
  std::unique_ptr<v1::JobService::Stub> jobs;
  std::unique_ptr<v1::ClusterService::Stub> cluster;

  template <class Req, class Rep, class Call>
  ApiResult<Rep> call(Req req, Call fn, int timeout_s = 60) {
    grpc::ClientContext ctx;
    rpc::set_timeout(ctx, std::chrono::seconds(timeout_s));
    rpc::fill_request_header(name, req.mutable_header());
    Rep rep;
    grpc::Status st = fn(&ctx, req, &rep);
    if (st.ok()) return rep;
    ApiError e;
    e.code = st.error_code();
    e.unreachable = st.error_code() == grpc::StatusCode::UNAVAILABLE ||
                    (st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && rep.ByteSizeLong() == 0 &&
                     st.error_message().find("Deadline") != std::string::npos);
    e.message = client.explain_failure(st.error_code(), st.error_message());
    return e;
  }
};

ControllerApi::ControllerApi(Endpoint ep, std::unique_ptr<Impl> impl) : ep_(std::move(ep)), impl_(std::move(impl)) {}
ControllerApi::~ControllerApi() = default;

Result<std::unique_ptr<ControllerApi>> ControllerApi::connect(const Endpoint& ep, std::string client_name) {
  rpc::ClientOptions o;
  o.target = ep.target;
  o.key_path = ep.key_path;
  auto client = rpc::RpcClient::connect(o);
  if (!client) return client.error();
  auto impl = std::make_unique<Impl>(Impl{std::move(*client), std::move(client_name), nullptr, nullptr});
  impl->jobs = v1::JobService::NewStub(impl->client.channel());
  impl->cluster = v1::ClusterService::NewStub(impl->client.channel());
  return std::unique_ptr<ControllerApi>(new ControllerApi(ep, std::move(impl)));
}

ApiResult<v1::SubmitReply> ControllerApi::submit(const v1::JobDescriptor& job, bool test_only) {
  v1::SubmitRequest req;
  *req.mutable_job() = job;
  req.set_test_only(test_only);
  return impl_->call<v1::SubmitRequest, v1::SubmitReply>(
      std::move(req), [&](auto* c, const auto& r, auto* p) { return impl_->jobs->Submit(c, r, p); });
}

ApiResult<v1::GetJobsReply> ControllerApi::get_jobs(const std::vector<int64_t>& ids, bool detail) {
  v1::GetJobsRequest req;
  for (int64_t id : ids) req.add_job_ids(id);
  req.set_detail(detail);
  return impl_->call<v1::GetJobsRequest, v1::GetJobsReply>(
      std::move(req), [&](auto* c, const auto& r, auto* p) { return impl_->jobs->GetJobs(c, r, p); });
}

ApiResult<v1::CancelReply> ControllerApi::cancel(const v1::CancelRequest& req) {
  return impl_->call<v1::CancelRequest, v1::CancelReply>(
      req, [&](auto* c, const auto& r, auto* p) { return impl_->jobs->Cancel(c, r, p); });
}

ApiResult<v1::ControlReply> ControllerApi::control(const v1::ControlRequest& req) {
  return impl_->call<v1::ControlRequest, v1::ControlReply>(
      req, [&](auto* c, const auto& r, auto* p) { return impl_->jobs->Control(c, r, p); });
}

ApiResult<v1::UpdateJobReply> ControllerApi::update_job(const v1::UpdateJobRequest& req) {
  return impl_->call<v1::UpdateJobRequest, v1::UpdateJobReply>(
      req, [&](auto* c, const auto& r, auto* p) { return impl_->jobs->Update(c, r, p); });
}

ApiResult<v1::GetNodesReply> ControllerApi::get_nodes(const std::vector<std::string>& names) {
  v1::GetNodesRequest req;
  for (const auto& n : names) req.add_names(n);
  return impl_->call<v1::GetNodesRequest, v1::GetNodesReply>(
      std::move(req), [&](auto* c, const auto& r, auto* p) { return impl_->cluster->GetNodes(c, r, p); });
}

ApiResult<v1::GetPartitionsReply> ControllerApi::get_partitions() {
  return impl_->call<v1::GetPartitionsRequest, v1::GetPartitionsReply>(
      v1::GetPartitionsRequest{}, [&](auto* c, const auto& r, auto* p) { return impl_->cluster->GetPartitions(c, r, p); });
}

ApiResult<v1::UpdateNodeReply> ControllerApi::update_node(const v1::UpdateNodeRequest& req) {
  return impl_->call<v1::UpdateNodeRequest, v1::UpdateNodeReply>(
      req, [&](auto* c, const auto& r, auto* p) { return impl_->cluster->UpdateNode(c, r, p); });
}

ApiResult<v1::GetConfigReply> ControllerApi::get_config() {
  return impl_->call<v1::GetConfigRequest, v1::GetConfigReply>(
      v1::GetConfigRequest{}, [&](auto* c, const auto& r, auto* p) { return impl_->cluster->GetConfig(c, r, p); });
}

ApiResult<v1::ReconfigureReply> ControllerApi::reconfigure() {
  return impl_->call<v1::ReconfigureRequest, v1::ReconfigureReply>(
      v1::ReconfigureRequest{}, [&](auto* c, const auto& r, auto* p) { return impl_->cluster->Reconfigure(c, r, p); });
}

ApiResult<v1::StatusReply> ControllerApi::status() {
  return impl_->call<v1::StatusRequest, v1::StatusReply>(
      v1::StatusRequest{}, [&](auto* c, const auto& r, auto* p) { return impl_->cluster->Status(c, r, p); }, 10);
}

std::string unreachable_text(const std::string& program, const ApiError& e, const Endpoint& ep) {
  return program + ": error: Unable to contact slurm controller (connect failure)\n" + program +
         ": error: the controller at " + ep.target + " (from " + ep.conf_path + ") did not answer: " + e.message +
         "; is it running? (`drover up` starts a local cluster)\n";
}

}  // namespace drover::client
