#include "ctld/controller.hpp"

#include <cstdlib>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <cerrno>
#include <cstring>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <mutex>

#include <fmt/format.h>

#include "common/daemon_files.hpp"
#include "common/strings.hpp"
#include "config/doctor.hpp"
#include "ctld/agent_link.hpp"
#include "ctld/log.hpp"
#include "ctld/persist.hpp"
#include "ctld/services.hpp"
#include "ctld/wire_server.hpp"
#include "rpc/lock_file.hpp"
#include "rpc/server.hpp"
#include "rpc/user_names.hpp"
#include "store/store.hpp"

namespace drover::ctld {

struct ControllerLock {
  rpc::LockFile lock;
};

namespace {

// Every record of `table`, one at a time, to `take`; stops at its first error.
Status stream_records(const store::Store& store, const std::string& table,
                      const std::function<Status(const store::Record&)>& take) {
  Status failed;
  Status read = store.scan(table, [&](store::Record&& r) {
    failed = take(r);
    return static_cast<bool>(failed);
  });
  return read ? failed : read;
}

Result<config::ClusterConfig> load(const std::string& path) {
  auto cfg = config::load_config(config::LoadOptions{path, "", ""});
  if (!cfg) return cfg.error();
  const Diagnostics errors = config::start_errors(*cfg);
  if (!errors.empty()) {
    return make_error(errors.items().front().format() + "\n(drover config check --config " + path +
                      " lists every finding)");
  }
  return cfg;
}

// slurm.conf read and checked, with the settings derived from it (a given
// TCP address replacing SlurmctldHost/SlurmctldPort): at start and at every
// scontrol reconfigure.
struct ReadConfig {
  config::ClusterConfig cfg;
  Settings settings;
};

Result<ReadConfig> read_config(const ControllerOptions& opts) {
  auto cfg = load(opts.conf_path);
  if (!cfg) return cfg.error();
  auto settings = settings_from_config(*cfg, opts.conf_path);
  if (!settings) return settings.error();
  if (!opts.tcp_address.empty()) settings->tcp_address = opts.tcp_address;
  return ReadConfig{std::move(*cfg), std::move(*settings)};
}

Status make_state_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return make_error("cannot create StateSaveLocation " + dir + ": " + std::strerror(errno));
  }
  // The Unix socket is reachable by every local user: the directory must be traversable.
  chmod(dir.c_str(), 0755);
  return {};
}

}  // namespace

Controller::~Controller() { stop(); }

int64_t Controller::now() const { return static_cast<int64_t>(std::time(nullptr)); }

int Controller::tcp_port() const { return server_ ? server_->tcp_port() : 0; }

Result<std::unique_ptr<Controller>> Controller::start(const ControllerOptions& opts) {
  std::unique_ptr<Controller> c(new Controller());
  if (auto st = c->open(opts); !st) return st.error();
  return c;
}

Status Controller::open(const ControllerOptions& opts) {
  opts_ = opts;
  if (const char* mb = std::getenv("DROVER_STATE_RESERVE_MB"); mb != nullptr && *mb != '\0') {
    auto n = parse_int(mb);
    if (!n) {
      return make_error(fmt::format("DROVER_STATE_RESERVE_MB={}: not a number of MiB (0 or more)", mb));
    }
    state_reserve_bytes_ = static_cast<uint64_t>(std::min<int64_t>(*n, int64_t{1} << 40)) << 20;
  }
  auto read = read_config(opts);
  if (!read) return read.error();
  // SlurmctldLogFile (or -L): from here on the log lines go there.
  log_file_ = opts.log_path.empty() ? read->settings.log_file : opts.log_path;
  if (!log_file_.empty()) {
    if (auto st = log_to_file(log_file_); !st) return st;
  }
  auto bridge = CoreBridge::create(read->cfg);
  if (!bridge) return bridge.error();
  if (auto st = make_state_dir(read->settings.state_dir); !st) return st;
  std::string store_path = read->settings.state_dir + "/state.db";
  state_ = std::make_unique<ControllerState>(std::move(read->cfg), std::move(*bridge), std::move(read->settings));
  const Settings& s = state_->settings();
  set_log_level(s.log_level);
  set_log_flags(s.debug_flags);

  rpc::ServerOptions so;
  so.unix_socket_path = s.socket_path;
  so.tcp_address = s.tcp_address;
  if (!so.tcp_address.empty()) so.key_paths = {s.key_path};
  so.key_owner_uids = {s.slurm_user_uid};
  server_ = std::make_unique<rpc::RpcServer>(so);
  // One controller per StateSaveLocation: held for the process's life, before the store is opened.
  auto lock = rpc::LockFile::acquire(s.state_dir + "/controller.lock", "the controller state in " + s.state_dir);
  if (!lock) return lock.error();
  lock_ = std::make_unique<ControllerLock>(ControllerLock{std::move(*lock)});
  if (!s.pid_file.empty()) {
    if (auto st = write_pid_file(s.pid_file); !st) log_error(st.error().message);
  }
  auto opened = store::Store::open(store_path, controller_schema());
  if (!opened) return opened.error();
  store_ = std::move(*opened);
  if (auto st = recover(); !st) return st;
  mailer_ = std::make_unique<Mailer>([](const std::string& line) { log_line(line); });
  scripts_ = std::make_unique<CtldScripts>([this](const CtldScript& s, const ScriptRun& run) {
    post([this, s, run] {
      Effects fx;
      state_->ctld_script_done(s, run, now(), fx);
      commit(std::move(fx), [](const Status&) {});
    });
  });
  agents_ = std::make_unique<AgentLink>(
      state_->config(), s.key_path,
      [this](int64_t job, int64_t step, const std::string& node, int32_t restarts, std::optional<v1::LaunchReply> reply,
             std::string error) {
        post([this, job, step, node, restarts, reply = std::move(reply), error = std::move(error)] {
          Effects fx;
          if (step == kPrologOrderStep) {
            if (!reply) log_error("prolog order of job " + std::to_string(job) + " to " + node + " failed: " + error);
            state_->prolog_result(job, restarts, node, reply, error, now(), fx);
          } else if (step >= 0) {
            if (!reply) log_error("launch of step " + std::to_string(job) + "." + std::to_string(step) + " failed: " + error);
            state_->step_launch_result(job, step, node, reply, error, now(), fx);
          } else if (reply) {
            state_->launch_result(job, restarts, *reply, now(), fx);
          } else {
            log_error("launch of job " + std::to_string(job) + " failed: " + error);
            state_->launch_unreachable(job, restarts, error, now(), fx);
          }
          fx.batch.may_wait = kAgentNewsMayWait;
          commit(std::move(fx), [](const Status&) {});
        });
      },
      [](const std::string& m) { log_line(m); });
  for (auto& svc : make_services(*this, server_->authenticator())) server_->add_service(std::move(svc));
  EventLoop::Hooks hooks;
  hooks.after_batch = [this] { after_batch(); };
  hooks.on_tick = [this] { on_tick(); };
  hooks.tick = std::chrono::milliseconds(250);
  loop_.start(std::move(hooks));
  if (auto st = server_->start(); !st) {
    loop_.stop();
    return st;
  }
  auto wire = WireServer::start(*this, s.state_dir + "/ctld.wire.sock", [this](uint32_t uid, uint32_t gid) {
    return caller_for(uid, gid);
  });
  if (!wire) {
    server_->shutdown(std::chrono::milliseconds(100));
    loop_.stop();
    return wire.error();
  }
  wire_ = std::move(*wire);
  log_line("controller for cluster " + s.cluster_name + " serving on unix:" + s.socket_path +
           (s.tcp_address.empty() ? "" : " and tcp " + s.tcp_address + " (port " + std::to_string(tcp_port()) + ")") +
           "; scheduler: " + CoreBridge::implementation());
  post([this] {
    Effects fx;
    state_->housekeeping(now(), fx);
    need_schedule_ = true;
    commit(std::move(fx), [](const Status&) {});
  });
  return {};
}

Status Controller::recover() {
  auto nodes = store_->load_all(kNodesTable);
  if (!nodes) return nodes.error();
  std::vector<std::pair<std::string, std::string>> node_payloads;
  for (auto& r : *nodes) node_payloads.emplace_back(std::get<std::string>(r.key), std::move(r.payload));
  if (auto st = state_->recover_nodes(node_payloads); !st) return st;
  std::vector<std::string> open_events;
  auto events = store_->scan_where(kEventsTable, "end_time", store::Value{int64_t{0}}, [&](store::Record&& r) {
    open_events.push_back(std::move(r.payload));
    return true;
  });
  if (!events) return events;
  if (auto st = state_->recover_events(open_events); !st) return st;
  auto partition_updates = store_->get_meta(kPartitionUpdatesMeta);
  if (!partition_updates) return partition_updates.error();
  if (*partition_updates && std::holds_alternative<std::string>(**partition_updates)) {
    const std::string& text = std::get<std::string>(**partition_updates);
    auto notes = state_->restore_partition_updates(text);
    if (!notes) {
      return make_error("state database " + store_->path() + ": the scontrol update PartitionName= changes it keeps "
                        "do not apply to " + opts_.conf_path + ": " + notes.error().message);
    }
    for (const auto& n : *notes) log_line(n);
    if (!text.empty()) {
      std::string shown = text.substr(0, text.size() - 1);
      for (char& ch : shown) ch = ch == '\t' ? ' ' : ch == '\n' ? ';' : ch;
      log_line("partition updates from scontrol laid over slurm.conf: " + shown);
    }
  }
  auto reservations = store_->get_meta(kReservationsMeta);
  if (!reservations) return reservations.error();
  auto reservation_seq = store_->get_meta(kReservationSeqMeta);
  if (!reservation_seq) return reservation_seq.error();
  if (*reservations && std::holds_alternative<std::string>(**reservations)) {
    int64_t seq = *reservation_seq && std::holds_alternative<int64_t>(**reservation_seq)
                      ? std::get<int64_t>(**reservation_seq)
                      : 0;
    for (const auto& n : state_->restore_reservations(std::get<std::string>(**reservations), seq)) log_line(n);
    if (!state_->reservations().empty()) {
      log_line("advance reservations recovered: " + std::to_string(state_->reservations().size()));
    }
  }
  // Jobs and steps are streamed: the store keeps every finished job for
  // sacct, and only what MinJobAge keeps in memory is held here.
  const int64_t t = now();
  Status jobs = stream_records(*store_, kJobsTable, [&](const store::Record& r) {
    return state_->recover_job(std::get<int64_t>(r.key), r.payload, t);
  });
  if (!jobs) return jobs;
  auto next = store_->get_meta(kNextJobIdMeta);
  if (!next) return next.error();
  std::optional<int64_t> next_id;
  if (*next && std::holds_alternative<int64_t>(**next)) next_id = std::get<int64_t>(**next);
  state_->recover_next_job_id(next_id);
  Status steps = stream_records(*store_, kStepsTable, [&](const store::Record& r) {
    return state_->recover_step(std::get<std::string>(r.key), r.payload);
  });
  if (!steps) return steps;
  if (auto st = recover_accounting(); !st) return st;
  if (auto st = recover_usage(); !st) return st;
  log_line("recovered " + std::to_string(state_->jobs().size()) + " jobs from " + store_->path() +
           "; next job id " + std::to_string(state_->next_job_id()));
  return {};
}

// The fair-share ledger the passes stored (empty on a first start).
Status Controller::recover_usage() {
  auto rows = store_->load_all(kUsageTable);
  if (!rows) return rows.error();
  std::map<std::pair<std::string, std::string>, double> usage;
  for (auto& r : *rows) {
    const std::string& key = std::get<std::string>(r.key);
    size_t tab = key.find('\t');
    char* end = nullptr;
    double v = std::strtod(r.payload.c_str(), &end);
    if (tab == std::string::npos || end == r.payload.c_str() || *end != '\0') {
      return make_error("state database " + store_->path() + ": usage row \"" + key + "\" is not account<TAB>user "
                        "with a number (\"" + r.payload + "\")");
    }
    usage[{key.substr(0, tab), key.substr(tab + 1)}] = v;
  }
  auto meta_int = [&](const char* name) -> Result<int64_t> {
    auto m = store_->get_meta(name);
    if (!m) return m.error();
    return *m && std::holds_alternative<int64_t>(**m) ? std::get<int64_t>(**m) : int64_t{0};
  };
  auto charged = meta_int(kUsageChargedMeta);
  if (!charged) return charged.error();
  auto decayed = meta_int(kUsageDecayMeta);
  if (!decayed) return decayed.error();
  state_->recover_usage(std::move(usage), *decayed, *charged);
  return {};
}

// The accounts, users and QOS: from the store, or on the very first start
// seeded from qos.conf and committed before anything is served.
Status Controller::recover_accounting() {
  auto seeded = store_->get_meta(kAccountingSeededMeta);
  if (!seeded) return seeded.error();
  if (!*seeded) {
    AccountingDb db = AccountingDb::seed(state_->config());
    store::Batch b;
    db.put_all(b);
    b.set_meta(kAccountingSeededMeta, int64_t{1});
    if (auto st = store_->apply(std::move(b)); !st) return st;
    state_->set_accounting(std::move(db));
    log_line("accounting: seeded " + std::to_string(state_->config().qos.size()) + " QOS from qos.conf; from now "
             "on sacctmgr manages them in " + store_->path());
    return {};
  }
  std::vector<std::string> tables[3];
  const char* names[3] = {kQosTable, kAccountsTable, kUsersTable};
  for (int i = 0; i < 3; ++i) {
    auto rows = store_->load_all(names[i]);
    if (!rows) return rows.error();
    for (auto& r : *rows) tables[i].push_back(std::move(r.payload));
  }
  auto db = AccountingDb::load(tables[0], tables[1], tables[2]);
  if (!db) return db.error();
  state_->set_accounting(std::move(*db));
  return {};
}

Result<Caller> Controller::identify(const grpc::ServerContextBase& ctx, int* grpc_code) const {
  rpc::AuthResult r = server_->authenticator().authenticate(ctx);
  if (!r.ok()) {
    *grpc_code = r.code() == rpc::AuthCode::kUnavailable ? 14 : 16;  // UNAVAILABLE : UNAUTHENTICATED
    return make_error(r.message());
  }
  const rpc::Identity& id = r.identity();
  Caller c = caller_for(id.uid, id.gid);
  if (!id.user_name.empty()) c.user = id.user_name;
  return c;
}

Caller Controller::caller_for(uint32_t uid, uint32_t gid) const {
  const Settings& s = state_->settings();
  Caller c;
  c.uid = uid;
  c.gid = gid;
  c.user = user_names_.lookup(uid);
  c.privileged = uid == 0 || uid == s.slurm_user_uid || uid == geteuid() || s.operator_uids.count(uid);
  return c;
}

void Controller::commit(Effects fx, std::function<void(const Status&)> done) {
  if (fx.reschedule) need_schedule_ = true;
  // Mail, and PrologSlurmctld/EpilogSlurmctld, go once what they tell of or
  // start for is durable, with the batch's commands.
  auto after_durable = [this, prog = state_->settings().mail_prog, mails = std::move(fx.mails),
                        scripts = std::move(fx.scripts), lines = std::move(fx.log)]() mutable {
    for (const auto& [level, line] : lines) log_at(level, line);
    if (!mails.empty() && mailer_) mailer_->send(prog, std::move(mails));
    for (auto& s : scripts) {
      if (scripts_) scripts_->start(std::move(s));
    }
  };
  if (fx.batch.empty()) {
    done(Status{});
    dispatch(std::move(fx.commands));
    after_durable();
    return;
  }
  store::Store::Completion completion = [this, done = std::move(done), cmds = std::move(fx.commands),
                                         after_durable = std::move(after_durable)](const Status& st) mutable {
    done(st);
    if (!st) {
      log_error("state store failed: " + st.error().message + "; stopping (a restart recovers every committed change)");
      store_failed_ = true;
      request_stop();
      return;
    }
    dispatch(std::move(cmds));
    after_durable();
  };
  // On the state thread the batch waits for the end of the loop's batch of
  // tasks (flush_commits), so that a submission and the start the quick pass
  // then makes of it share one commit and one fsync; the reply still waits
  // for its commit.
  if (loop_.on_loop_thread()) {
    held_.emplace_back(std::move(fx.batch), std::move(completion));
    return;
  }
  store_->submit(std::move(fx.batch), std::move(completion));
}

std::string Controller::state_space_shortage() {
  if (state_reserve_bytes_ == 0) return "";
  const std::string& dir = settings().state_dir;
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return "";  // the store's own writes will say what is wrong
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  const bool short_now = free_bytes < state_reserve_bytes_;
  std::string why;
  if (short_now) {
    why = fmt::format("StateSaveLocation {} has {} MiB free, less than the {} MiB the controller keeps for the jobs "
                      "already accepted; no new job is taken until space is freed there",
                      dir, free_bytes >> 20, state_reserve_bytes_ >> 20);
  }
  if (short_now != short_of_space_.exchange(short_now)) {
    if (short_now) {
      log_error(why + " (DROVER_STATE_RESERVE_MB sets the reserve)");
    } else {
      log_line(fmt::format("StateSaveLocation {} has {} MiB free again: new jobs are taken", dir, free_bytes >> 20));
    }
  }
  return why;
}

void Controller::flush_commits() {
  if (held_.empty()) return;
  std::vector<std::pair<store::Batch, std::function<void(const Status&)>>> held;
  held.swap(held_);
  store_->submit_all(std::move(held));
}

void Controller::dispatch(std::vector<AgentCommand> commands) {
  for (const auto& c : commands) agents_->send(c);
}

void Controller::after_batch() {
  if (need_schedule_) {
    need_schedule_ = false;
    Effects fx;
    state_->schedule(core::PassKind::kQuick, now(), fx);
    need_schedule_ = false;  // starts made by this pass need no second pass
    commit(std::move(fx), [](const Status&) {});
  }
  flush_commits();
}

void Controller::on_tick() {
  int64_t t = now();
  Effects fx;
  if (t - last_housekeeping_ >= 1) {
    last_housekeeping_ = t;
    state_->housekeeping(t, fx);
  }
  if (t - last_full_pass_ >= settings().bf_interval_s) {
    last_full_pass_ = t;
    state_->schedule(core::PassKind::kFull, t, fx);
    fx.reschedule = false;
  } else if (need_schedule_) {
    need_schedule_ = false;
    state_->schedule(core::PassKind::kQuick, t, fx);
    fx.reschedule = false;
  }
  commit(std::move(fx), [](const Status&) {});
  flush_commits();
}

Result<std::vector<std::string>> Controller::reconfigure() {
  auto read = read_config(opts_);
  if (!read) return read.error();
  std::vector<std::string> warnings;
  for (const auto& d : read->cfg.diags.items()) {
    if (d.severity == Severity::kWarning) warnings.push_back(d.format());
  }
  Effects fx;
  auto changes = state_->reconfigure(std::move(read->cfg), std::move(read->settings), now(), fx);
  if (!changes) {
    log_error("scontrol reconfigure refused: " + changes.error().message);
    return changes.error();
  }
  state_->cluster_event(now(), fx);  // a new TRES event if the nodes' resources changed
  // Back to slurm.conf's SlurmctldDebug and DebugFlags, as Slurm's reconfigure.
  set_log_level(settings().log_level);
  set_log_flags(settings().debug_flags);
  log_line("reconfigured from " + opts_.conf_path + (changes->empty() ? "" : ": " + join(*changes, "; ")));
  for (const auto& w : warnings) log_line("reconfigure: " + w);
  last_full_pass_ = 0;  // the next tick plans the whole queue with the new configuration
  commit(std::move(fx), [](const Status&) {});
  return std::vector<std::string>{};
}

void Controller::request_stop() { stop_requested_ = true; }

void Controller::wait() {
  std::chrono::steady_clock::time_point give_up{};
  while (!stop_requested_) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!shutdown_asked_) continue;
    // scontrol shutdown: once the agents have answered (or after 6 s), and a
    // moment more for the reply to reach scontrol.
    const auto t = std::chrono::steady_clock::now();
    if (give_up == std::chrono::steady_clock::time_point{}) give_up = t + std::chrono::seconds(6);
    if (*shutdown_ready_ || t >= give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return;
    }
  }
}

int Controller::shutdown(bool controller_only, const std::string& by) {
  std::vector<std::string> nodes;
  if (!controller_only) {
    const auto& rt = state_->nodes();
    const auto& cfg = state_->config().nodes;
    for (size_t i = 0; i < rt.size() && i < cfg.size(); ++i) {
      if (rt[i].registered) nodes.push_back(cfg[i].name);
    }
  }
  log_line("scontrol shutdown by " + by + ": stopping " +
           (controller_only ? std::string("the controller (the agents keep running)")
                            : "the controller and " + std::to_string(nodes.size()) + " agent(s)") +
           "; running jobs keep running");
  if (nodes.empty() || !agents_) {
    *shutdown_ready_ = true;
  } else {
    auto ready = shutdown_ready_;
    agents_->shutdown_agents(nodes, [ready] { *ready = true; });
  }
  shutdown_asked_ = true;
  return static_cast<int>(nodes.size());
}

void Controller::stop() {
  scripts_.reset();  // no PrologSlurmctld result is handed to a stopping loop
  if (wire_) wire_->stop();
  if (server_) server_->shutdown(std::chrono::milliseconds(1000));
  loop_.stop();
  if (store_) {
    flush_commits();  // what the last tasks committed (the loop thread has ended)
    store_->close();
  }
  // Once no commit can send a command: its calls still out are cancelled,
  // and their news is not posted to the stopped loop.
  agents_.reset();
  server_.reset();
  lock_.reset();
}

}  // namespace drover::ctld
