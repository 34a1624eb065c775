#include "harness.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/strings.hpp"
#include "rpc/testing.hpp"

namespace drover::e2e {
namespace {

std::string bin_dir() {
  const char* b = std::getenv("DROVER_BINARY_DIR");
  return std::string(b ? b : DROVER_BINARY_DIR) + "/bin";
}

NodeDef gpu_node(const std::string& name, const std::string& type, int count) {
  NodeDef n;
  n.name = name;
  n.gpu_type = type;
  n.gpus = count;
  n.features = type;
  return n;
}

NodeDef cpu_node(const std::string& name) {
  NodeDef n;
  n.name = name;
  return n;
}

std::map<std::string, std::string> key_values(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos && !out.count(word.substr(0, eq))) out[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return out;
}

}  // namespace

ClusterDef small_cluster() {
  ClusterDef d;
  d.nodes = {gpu_node("hgpu1", "h100", 8), gpu_node("lgpu1", "a100", 4), cpu_node("cpu1"), cpu_node("cpu2")};
  d.nodes[1].weight = 100;
  d.partitions = {"PartitionName=compute Nodes=cpu[1-2],lgpu1 Default=YES MaxTime=7-00:00:00",
                  "PartitionName=gpu Nodes=hgpu1,lgpu1 MaxTime=1-00:00:00"};
  return d;
}

ClusterDef seed_cluster() {
  ClusterDef d;
  for (int i = 1; i <= 4; ++i) d.nodes.push_back(gpu_node("hgpu" + std::to_string(i), "h100", 8));
  d.nodes.push_back(gpu_node("lgpu1", "a100", 4));
  d.nodes.back().weight = 100;
  d.nodes.push_back(cpu_node("cpu1"));
  d.nodes.push_back(cpu_node("cpu2"));
  d.partitions = {"PartitionName=training Nodes=hgpu[1-4] MaxTime=INFINITE OverSubscribe=EXCLUSIVE",
                  "PartitionName=compute Nodes=cpu[1-2],lgpu1 Default=YES MaxTime=7-00:00:00"};
  return d;
}

bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : split(text, '\n')) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

std::string sacct_p(const TestCluster& c, const std::vector<std::string>& args) {
  std::vector<std::string> a{"-P", "-n"};
  a.insert(a.end(), args.begin(), args.end());
  auto r = c.run("sacct", a);
  EXPECT_EQ(r.rc, 0) << r.err;
  return r.out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TestCluster::TestCluster(ClusterDef def) : def_(std::move(def)), bin_(bin_dir()) {
  char tmpl[] = "/tmp/dre2e-XXXXXX";
  if (!mkdtemp(tmpl)) {
    error_ = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  dir_ = tmpl;
  chmod(dir_.c_str(), 0755);
  conf_ = dir_ + "/slurm.conf";
  work_ = dir_ + "/work";
  mkdir(work_.c_str(), 01777);
  chmod(work_.c_str(), 01777);
  mkdir((work_ + "/bin").c_str(), 0755);
  if (!write_config()) return;
  if (!start_controller()) return;
  for (const auto& n : def_.nodes) {
    if (!start_agent(n.name)) return;
  }
  if (!wait_nodes_responding()) {
    // Say why: sinfo, and the log of every agent that is no longer running.
    error_ = "not every node registered: " + run("sinfo", {"-N"}).out;
    for (auto& [node, pid] : agents_) {
      if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        error_ += "agent " + node + " exited; its log:\n" + log("agent-" + node);
      }
    }
  }
}

TestCluster::~TestCluster() {
  stop_all();
  // The agents' cgroups (drover_<ClusterName> in each hierarchy): a test
  // that kills an agent leaves its node's directories, and a job that
  // outlives it (--no-kill) its processes. Those are killed (cgroup v2's
  // cgroup.kill) and the then empty directories removed.
  if (!cluster_name_.empty()) {
    const std::string base = "drover_" + cluster_name_;
    std::string cmd = "for d in $(find /sys/fs/cgroup -type d -name '" + base + "' 2>/dev/null); do "
                      "[ -e \"$d/cgroup.kill\" ] && echo 1 > \"$d/cgroup.kill\"; done; "
                      "for i in 1 2 3 4 5; do find /sys/fs/cgroup -depth -type d -path '*/" + base +
                      "*' -exec rmdir {} + 2>/dev/null || sleep 0.1; done";
    (void)std::system(cmd.c_str());
  }
  if (!dir_.empty() && std::getenv("DROVER_E2E_KEEP") == nullptr) {
    std::string cmd = "rm -rf '" + dir_ + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir_.c_str());
  }
}

bool TestCluster::write_config() {
  auto port = rpc::testing::HeldPort::take("127.0.0.1");
  if (!port) return error_ = port.error().message, false;
  ctld_port_ = port->port();
  held_ports_.push_back(std::move(*port));
  if (auto st = rpc::testing::write_test_key(dir_ + "/drover.key"); !st) return error_ = st.error().message, false;
  std::ostringstream c, g;
  // A cluster name of its own: the agents' cgroups live under drover_<ClusterName>.
  // cred_expire=4: a requeued job starts again 5 s after its requeue (Slurm's default is 121 s).
  cluster_name_ = "e2e" + std::to_string(getpid()) + "x" + std::to_string(ctld_port_);
  c << "ClusterName=" << cluster_name_ << "\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=" << ctld_port_ << "\n"
    << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool/%n\n"
    << "AuthInfo=key=" << dir_ << "/drover.key,socket=" << dir_ << "/auth.sock,cred_expire=4\nSlurmdParameters=config_overrides\nDisableRootJobs=NO\n"
    << "ReturnToService=2\nSlurmdTimeout=30\nKillWait=1\nMinJobAge=3600\nDefMemPerCPU=1024\nGresTypes=gpu\n"
    << "SchedulerParameters=bf_interval=2\n";
  for (const auto& line : def_.extra) c << line << "\n";
  g << "AutoDetect=off\n";
  int n = 1;
  for (const auto& node : def_.nodes) {
    std::string addr = "127.0.1." + std::to_string(n++);
    auto held = rpc::testing::HeldPort::take(addr);
    if (!held) return error_ = held.error().message, false;
    const int p = held->port();
    held_ports_.push_back(std::move(*held));
    agent_ports_[node.name] = p;
    c << "NodeName=" << node.name << " NodeHostname=localhost NodeAddr=" << addr << " Port=" << p
      << " CPUs=" << node.cpus << " Sockets=" << node.sockets << " CoresPerSocket=" << node.cpus / node.sockets
      << " ThreadsPerCore=1 RealMemory=" << node.mem_mb << " Weight=" << node.weight;
    if (node.tmp_disk_mb > 0) c << " TmpDisk=" << node.tmp_disk_mb;
    if (node.gpus > 0) {
      c << " Gres=gpu:" << node.gpu_type << ":" << node.gpus;
      g << "NodeName=" << node.name << " Name=gpu Type=" << node.gpu_type << " File=/dev/nvidia[0-" << node.gpus - 1
        << "]\n";
    }
    if (!node.features.empty()) c << " Feature=" << node.features;
    c << "\n";
  }
  for (const auto& p : def_.partitions) c << p << "\n";
  std::ofstream(conf_) << c.str();
  std::ofstream(dir_ + "/gres.conf") << g.str();
  if (!def_.qos_conf.empty()) std::ofstream(dir_ + "/qos.conf") << def_.qos_conf;
  return true;
}

pid_t TestCluster::spawn_daemon(const std::vector<std::string>& args, const std::string& log) {
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

bool TestCluster::start_controller() {
  controller_ = spawn_daemon({bin_ + "/drover", "controller", "--config", conf_}, dir_ + "/controller.log");
  bool up = eventually([&] { return run("scontrol", {"ping"}).rc == 0; }, std::chrono::seconds(15));
  if (!up) error_ = "the controller did not start: " + log("controller");
  return up;
}

void TestCluster::kill_controller(int sig) {
  if (controller_ <= 0) return;
  kill(controller_, sig);
  waitpid(controller_, nullptr, 0);
  controller_ = -1;
}

bool TestCluster::start_agent(const std::string& node, const std::string& fake_gpus) {
  std::string gpus = fake_gpus;
  if (gpus.empty()) {
    for (const auto& n : def_.nodes) {
      if (n.name == node) gpus = n.fake_gpus;
    }
  }
  agents_[node] = spawn_daemon({bin_ + "/drover", "agent", "--node", node, "--config", conf_, "--fake-gpus=" + gpus},
                               dir_ + "/agent-" + node + ".log");
  return agents_[node] > 0;
}

void TestCluster::kill_agent(const std::string& node, int sig) {
  auto it = agents_.find(node);
  if (it == agents_.end() || it->second <= 0) return;
  kill(it->second, sig);
  waitpid(it->second, nullptr, 0);
  it->second = -1;
}

bool TestCluster::daemon_exited(const std::string& daemon, std::chrono::milliseconds timeout) {
  pid_t* pid = daemon == "controller" ? &controller_ : nullptr;
  if (daemon.rfind("agent-", 0) == 0) {
    auto it = agents_.find(daemon.substr(6));
    if (it != agents_.end()) pid = &it->second;
  }
  if (pid == nullptr) return false;
  return eventually(
      [&] {
        if (*pid <= 0) return true;
        if (waitpid(*pid, nullptr, WNOHANG) != *pid) return false;
        *pid = -1;
        return true;
      },
      timeout);
}

bool TestCluster::wait_nodes_responding(std::chrono::milliseconds timeout) const {
  return eventually(
      [&] {
        auto r = run("sinfo", {"-h", "-N", "-o", "%N %t"});
        if (r.rc != 0) return false;
        int lines = 0;
        std::istringstream in(r.out);
        std::string name, st;
        while (in >> name >> st) {
          if (st.find('*') != std::string::npos || st == "unk") return false;
          ++lines;
        }
        return lines >= static_cast<int>(def_.nodes.size());
      },
      timeout);
}

std::string TestCluster::log(const std::string& daemon) const { return read_file(dir_ + "/" + daemon + ".log"); }

void TestCluster::stop_all() {
  if (controller_ > 0) {
    run("scancel", {"-t", "PD,R"});
    eventually([&] { return run("squeue", {"-h", "-t", "R,CG"}).out.empty(); }, std::chrono::seconds(10));
  }
  for (auto& [node, pid] : agents_) {
    if (pid > 0) kill(pid, SIGTERM);
  }
  for (auto& [node, pid] : agents_) {
    if (pid > 0) waitpid(pid, nullptr, 0);
    pid = -1;
  }
  kill_controller(SIGTERM);
}

CmdResult TestCluster::run(const std::string& command, const std::vector<std::string>& args, const RunAs& as,
                           const std::string& stdin_text, const std::string& cwd) const {
  return run_program(command.rfind('/', 0) == 0 ? command : bin_ + "/" + command, args, as, stdin_text, cwd);
}

CmdResult TestCluster::run_program(const std::string& path, const std::vector<std::string>& args, const RunAs& as,
                                   const std::string& stdin_text, const std::string& cwd) const {
  // Close-on-exec: a command another thread starts meanwhile must not inherit
  // these (its copy of `out` would keep this read open until it exits; that
  // made Steps.AStepSurvivesAControllerKill miss its job's RUNNING once).
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {out[0], out[1], err[0], err[1], in[0], in[1]}) close(fd);
    if (chdir((cwd.empty() ? work_ : cwd).c_str()) != 0) _exit(126);
    if (as.set) {
      struct passwd* pw = getpwuid(as.uid);
      if (pw) initgroups(pw->pw_name, as.gid);
      if (setgid(as.gid) != 0 || setuid(as.uid) != 0) _exit(125);
      if (pw) setenv("HOME", pw->pw_dir, 1), setenv("USER", pw->pw_name, 1), setenv("LOGNAME", pw->pw_name, 1);
    } else if (struct passwd* me = getpwuid(getuid()); me && !getenv("USER")) {
      setenv("USER", me->pw_name, 1);
    }
    setenv("DROVER_CONF", conf_.c_str(), 1);
    setenv("PATH", (work_ + "/bin:" + bin_ + ":/usr/local/bin:/usr/bin:/bin").c_str(), 1);
    std::vector<char*> argv{const_cast<char*>(path.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(path.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(in[0]);
  if (!stdin_text.empty()) {
    ssize_t w = write(in[1], stdin_text.data(), stdin_text.size());
    (void)w;
  }
  close(in[1]);
  CmdResult r;
  // Read both pipes without blocking on either.
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  int st = 0;
  bool reaped = false;
  while (open_fds > 0) {
    if (poll(fds, 2, 30000) <= 0) {
      // Quiet for 30 s: go on while the program runs (a workflow manager may
      // wait that long); once it is gone, stop waiting for what it left running.
      if (waitpid(pid, &st, WNOHANG) == pid) {
        reaped = true;
        break;
      }
      continue;
    }
    for (auto& f : fds) {
      if (f.fd < 0 || !(f.revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(f.fd, buf, sizeof buf);
      if (n <= 0) {
        close(f.fd);
        f.fd = -1;
        --open_fds;
      } else {
        (f.fd == out[0] ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (!reaped) waitpid(pid, &st, 0);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

int64_t TestCluster::submit(const std::vector<std::string>& args, const RunAs& as) const {
  std::vector<std::string> a{"--parsable"};
  a.insert(a.end(), args.begin(), args.end());
  CmdResult r = run("sbatch", a, as);
  if (r.rc != 0) {
    last_error_ = r.err;
    return -1;
  }
  return std::atoll(r.out.c_str());
}

std::string TestCluster::state(const std::string& id) const {
  CmdResult r = run("squeue", {"-h", "-r", "-t", "all", "-j", id, "-o", "%T"});
  std::string s = r.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s.substr(0, s.find('\n'));
}

std::string TestCluster::reason(const std::string& id) const {
  CmdResult r = run("squeue", {"-h", "-r", "-t", "all", "-j", id, "-o", "%r"});
  std::string s = r.out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

bool TestCluster::wait_state(const std::string& id, const std::vector<std::string>& states,
                             std::chrono::milliseconds timeout) const {
  return eventually(
      [&] {
        std::string s = state(id);
        for (const auto& want : states) {
          if (s == want) return true;
        }
        return false;
      },
      timeout);
}

bool TestCluster::wait_done(const std::string& id, std::chrono::milliseconds timeout) const {
  return wait_state(id, {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL"}, timeout);
}

std::map<std::string, std::string> TestCluster::job_fields(const std::string& id) const {
  return key_values(run("scontrol", {"show", "job", id}).out);
}

std::map<std::string, std::string> TestCluster::node_fields(const std::string& node) const {
  return key_values(run("scontrol", {"show", "node", node}).out);
}

std::optional<TestUser> ensure_user(const std::string& name) {
  if (geteuid() != 0) return std::nullopt;
  struct passwd* pw = getpwnam(name.c_str());
  if (!pw) {
    std::string cmd = "useradd -M -s /bin/sh " + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) return std::nullopt;
    pw = getpwnam(name.c_str());
  }
  if (!pw) return std::nullopt;
  return TestUser{name, pw->pw_uid, pw->pw_gid};
}

}  // namespace drover::e2e
