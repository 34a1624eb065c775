#include "ctld/persist.hpp"

#include "ctld/state.hpp"

namespace drover::ctld {

store::Schema controller_schema() {
  store::Schema schema;
  schema.application = "drover-controller";
  auto tables = store::create_table({kJobsTable,
                                     store::ColumnType::kInteger,
                                     {{"state", store::ColumnType::kText},
                                      {"user_id", store::ColumnType::kInteger},
                                      {"array_job_id", store::ColumnType::kInteger},
                                      {"end_time", store::ColumnType::kInteger},
                                      {"partition", store::ColumnType::kText, false}}});
  auto nodes = store::create_table({kNodesTable, store::ColumnType::kText, {{"state", store::ColumnType::kText, false}}});
  tables.insert(tables.end(), nodes.begin(), nodes.end());
  schema.migrations.push_back({1, "jobs and nodes", tables});
  // Job steps (steps.hpp documents the columns; sacct reads them).
  schema.migrations.push_back(
      {2, "job steps",
       store::create_table({kStepsTable,
                            store::ColumnType::kText,
                            {{"job_id", store::ColumnType::kInteger},
                             {"step_id", store::ColumnType::kInteger, false},
                             {"name", store::ColumnType::kText, false},
                             {"nodes", store::ColumnType::kText, false},
                             {"ntasks", store::ColumnType::kInteger, false},
                             {"cpus", store::ColumnType::kInteger, false},
                             {"tres", store::ColumnType::kText, false},
                             {"start_time", store::ColumnType::kInteger, false},
                             {"end_time", store::ColumnType::kInteger, false},
                             {"state", store::ColumnType::kText, false},
                             {"exit_code", store::ColumnType::kInteger, false},
                             {"exit_signal", store::ColumnType::kInteger, false}}})});
  std::vector<std::string> acct;
  for (const char* t : {kQosTable, kAccountsTable, kUsersTable}) {
    auto sql = store::create_table({t, store::ColumnType::kText, {}});
    acct.insert(acct.end(), sql.begin(), sql.end());
  }
  schema.migrations.push_back({3, "accounting: qos, accounts, users (sacctmgr)", acct});
  schema.migrations.push_back(
      {4, "fair-share usage per association", store::create_table({kUsageTable, store::ColumnType::kText, {}})});
  // No query reads jobs by state or by user (sacct scans by end time or by
  // array, recovery loads everything), while every write of a job record
  // (INSERT OR REPLACE: delete and insert) rewrote both indexes: two to four
  // of the ~10 pages each job commit wrote and fsynced. The columns stay, as
  // copies to read with sqlite3.
  schema.migrations.push_back({5, "jobs: drop the state and user indexes, which no query uses",
                               {"DROP INDEX IF EXISTS jobs__state", "DROP INDEX IF EXISTS jobs__user_id"}});
  schema.migrations.push_back({6, "a requeued job's earlier runs (sacct -D)",
                               store::create_table({kJobRunsTable,
                                                    store::ColumnType::kText,
                                                    {{"job_id", store::ColumnType::kInteger}}})});
  schema.migrations.push_back({7, "node and cluster events (sreport, sacctmgr show event)",
                               store::create_table({kEventsTable,
                                                    store::ColumnType::kText,
                                                    {{"end_time", store::ColumnType::kInteger},
                                                     {"node", store::ColumnType::kText, false}}})});
  return schema;
}

void ControllerState::put_job(const Job& j, Effects& fx, bool insert) {
  if (is_pending(j) || holds_resources(j)) {
    active_.insert(j.rec.job_id());
  } else {
    active_.erase(j.rec.job_id());
  }
  std::string payload;
  j.rec.SerializeToString(&payload);
  fx.batch.put(store::Put{kJobsTable,
                          j.rec.job_id(),
                          std::move(payload),
                          {{"state", std::string(state_name(j.rec.state()))},
                           {"user_id", static_cast<int64_t>(j.rec.uid())},
                           {"array_job_id", j.rec.array_job_id()},
                           {"end_time", j.rec.end_time()},
                           {"partition", j.rec.partition()}},
                          insert ? store::PutMode::kInsert : store::PutMode::kUpsert});
}

void ControllerState::put_node(core::NodeIndex i, int64_t now, Effects& fx) {
  const NodeRt& n = nodes_[i];
  v1::NodeInfo info;
  info.set_name(bridge_->cluster().nodes[i].name);
  info.set_drain(n.drain);
  info.set_fail(n.fail);
  info.set_base(n.down ? v1::NODE_DOWN : v1::NODE_IDLE);
  info.set_invalid_reg(n.invalid_reg);
  info.set_reason(n.reason);
  info.set_reason_time(n.reason_time);
  info.set_reason_uid(n.reason_uid);
  info.set_reason_user(n.reason_user);
  for (const auto& [k, v] : n.updates) (*info.mutable_updates())[k] = v;
  info.set_comment(n.comment);
  std::string payload;
  info.SerializeToString(&payload);
  std::string state = n.down ? "DOWN" : n.drain ? "DRAIN" : n.fail ? "FAIL" : "UP";
  fx.batch.put(store::Put{kNodesTable, info.name(), std::move(payload), {{"state", state}}});
  node_event(i, now, fx);
}

Status ControllerState::recover(const std::vector<std::pair<int64_t, std::string>>& job_payloads,
                                const std::vector<std::pair<std::string, std::string>>& node_payloads,
                                std::optional<int64_t> next_job_id, int64_t now) {
  if (auto st = recover_nodes(node_payloads); !st) return st;
  for (const auto& [id, payload] : job_payloads) {
    if (auto st = recover_job(id, payload, now); !st) return st;
  }
  recover_next_job_id(next_job_id);
  return {};
}

Status ControllerState::recover_nodes(const std::vector<std::pair<std::string, std::string>>& node_payloads) {
  for (const auto& [name, payload] : node_payloads) {
    v1::NodeInfo info;
    if (!info.ParseFromString(payload)) return make_error("state store: node record '" + name + "' is unreadable");
    core::NodeIndex i = bridge_->find_node(name);
    if (i < 0) continue;  // removed from slurm.conf
    NodeRt& n = nodes_[i];
    n.drain = info.drain();
    n.fail = info.fail();
    n.down = info.base() == v1::NODE_DOWN;
    n.invalid_reg = info.invalid_reg();
    n.reason = info.reason();
    n.reason_time = info.reason_time();
    n.reason_uid = info.reason_uid();
    n.reason_user = info.reason_user();
    n.updates = {info.updates().begin(), info.updates().end()};
    n.comment = info.comment();
  }
  return restore_node_updates();
}

Status ControllerState::recover_job(int64_t id, const std::string& payload, int64_t now) {
  recovered_highest_id_ = std::max(recovered_highest_id_, id);
  Job j;
  if (!j.rec.ParseFromString(payload)) {
    return make_error("state store: job record " + std::to_string(id) + " is unreadable");
  }
  bool old = is_final(j.rec.state()) && !j.rec.completing() && j.rec.end_time() + settings_.min_job_age_s < now;
  if (old) return {};
  refresh_spec(j);
  if (holds_resources(j)) {
    j.alloc = allocation_from_proto(*bridge_, j.rec.alloc());
    j.awaiting_node = is_started(j.rec);
  }
  auto [it, _] = jobs_.emplace(id, std::move(j));
  index_array(it->second);
  index_submit_request(it->second);
  if (is_pending(it->second) || holds_resources(it->second)) active_.insert(id);
  return {};
}

void ControllerState::recover_next_job_id(std::optional<int64_t> stored) {
  next_job_id_ = std::max({stored.value_or(1), recovered_highest_id_ + 1, settings_.first_job_id});
}

}  // namespace drover::ctld
