#include "agent/pmix_server.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>

#include "agent/stepd.hpp"
#include "common/pmix_relay.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"

#if DROVER_HAVE_PMIX
#include <pmix.h>
#include <pmix_server.h>
#endif

namespace drover::agent {

bool wants_pmix(const std::string& mpi) {
  const std::string m = to_lower(mpi);
  return m == "pmix" || m.rfind("pmix_v", 0) == 0;
}

std::string pmix_nspace(const StepKey& key) {
  return "drover." + std::to_string(key.job_id) + "." + (key.is_batch() ? std::string("batch") : std::to_string(key.step_id));
}

#if !DROVER_HAVE_PMIX

bool pmix_available() { return false; }

struct PmixStepServer::Impl {};

PmixStepServer::PmixStepServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PmixStepServer::~PmixStepServer() = default;

Result<std::unique_ptr<PmixStepServer>> PmixStepServer::start(const LaunchRequest&, const UserInfo&, const std::string&) {
  return make_error("this build has no PMIx server (libpmix-dev was not found when it was configured)");
}
Result<std::vector<std::string>> PmixStepServer::task_env(int) { return make_error("no PMIx server"); }
void PmixStepServer::add_poll_fds(std::vector<pollfd>&) const {}
void PmixStepServer::process() {}
std::optional<std::string> PmixStepServer::take_abort() { return std::nullopt; }

#else

bool pmix_available() { return true; }

namespace {

// A PMIx answer with data: the bytes live until PMIx releases them.
struct ModexAnswer {
  pmix_modex_cbfunc_t cb = nullptr;
  void* cbdata = nullptr;

  void operator()(pmix_status_t status, std::string data) const {
    if (!cb) return;
    auto* held = new std::string(std::move(data));
    cb(status, held->data(), held->size(), cbdata, [](void* p) { delete static_cast<std::string*>(p); }, held);
  }
};

// Waits for a PMIx operation's callback (registration calls).
struct Completion {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  pmix_status_t status = PMIX_SUCCESS;

  static void callback(pmix_status_t st, void* self) {
    auto* c = static_cast<Completion*>(self);
    std::lock_guard<std::mutex> lock(c->mu);
    c->status = st;
    c->done = true;
    c->cv.notify_all();
  }
  pmix_status_t wait(pmix_status_t started) {
    if (started == PMIX_OPERATION_SUCCEEDED) return PMIX_SUCCESS;
    if (started != PMIX_SUCCESS) return started;
    std::unique_lock<std::mutex> lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return done; })) return PMIX_ERR_TIMEOUT;
    return status;
  }
};

std::string pmix_error(const char* what, pmix_status_t st) {
  return std::string(what) + ": " + PMIx_Error_string(st);
}

// Builds a pmix_info_t list (PMIx_Info_list_*), nested arrays included.
class InfoList {
 public:
  InfoList() : list_(PMIx_Info_list_start()) {}
  ~InfoList() {
    PMIx_Info_list_release(list_);
    for (auto& a : arrays_) PMIX_DATA_ARRAY_DESTRUCT(&a);
  }
  InfoList(const InfoList&) = delete;
  InfoList& operator=(const InfoList&) = delete;

  void str(const char* key, const std::string& v) { PMIx_Info_list_add(list_, key, v.c_str(), PMIX_STRING); }
  void u32(const char* key, uint32_t v) { PMIx_Info_list_add(list_, key, &v, PMIX_UINT32); }
  void u16(const char* key, uint16_t v) { PMIx_Info_list_add(list_, key, &v, PMIX_UINT16); }
  void rank(const char* key, pmix_rank_t v) { PMIx_Info_list_add(list_, key, &v, PMIX_PROC_RANK); }
  void flag(const char* key, bool v) { PMIx_Info_list_add(list_, key, &v, PMIX_BOOL); }
  void regex(const char* key, char* v) { PMIx_Info_list_add(list_, key, v, PMIX_REGEX); }
  void array(const char* key, InfoList& sub) {
    arrays_.emplace_back();
    PMIx_Info_list_convert(sub.list_, &arrays_.back());
    PMIx_Info_list_add(list_, key, &arrays_.back(), PMIX_DATA_ARRAY);
  }
  // The flat array (valid while this list lives).
  pmix_data_array_t& flat() {
    arrays_.emplace_back();
    PMIx_Info_list_convert(list_, &arrays_.back());
    return arrays_.back();
  }

 private:
  void* list_;
  std::vector<pmix_data_array_t> arrays_;
};

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ",") + std::to_string(r);
  return out;
}

}  // namespace

struct PmixStepServer::Impl {
  LaunchRequest req;
  std::string nspace, tmpdir;
  int node = 0, nnodes = 1;
  std::vector<std::vector<int>> node_ranks;  // per node: its ranks (srun -m: block, cyclic, plane=N)
  std::vector<int> rank_node;                // rank -> node index
  std::vector<int> rank_local;               // rank -> its index among its node's ranks
  uid_t uid = 0;
  gid_t gid = 0;
  bool initialized = false;
  int wake_fd = -1;
  int relay_fd = -1;  // to srun; -1 with one node or once lost
  std::string out;    // frames for srun not yet written
  pmix_wire::FrameReader in;
  std::mutex mu;
  std::vector<std::function<void()>> queue;  // from PMIx's thread, run on the daemon's
  std::map<std::string, uint64_t> fence_seq;  // per participant set
  std::map<std::string, ModexAnswer> fences;  // "<seq> <nodes>"
  std::map<uint64_t, ModexAnswer> dmodex;
  uint64_t next_dmodex = 0;
  std::optional<std::string> abort;

  ~Impl();
  Status init();
  Status register_nspace();
  int leader(int n) const {  // a node's lowest rank (PMIX_LOCALLDR)
    const auto& r = node_ranks[static_cast<std::size_t>(n)];
    return r.empty() ? 0 : *std::min_element(r.begin(), r.end());
  }
  void post(std::function<void()> f);
  void run_queue();
  void send(const std::string& bytes);
  void flush();
  void read_relay();
  void handle(const pmix_wire::Frame& f);
  void relay_lost(const std::string& why);
  void fence(const std::string& nodes, std::string data, ModexAnswer answer);
  int node_of(pmix_rank_t rank) const {
    return rank < rank_node.size() ? rank_node[rank] : -1;
  }
  bool ours(const char* ns) const { return std::strncmp(ns, nspace.c_str(), PMIX_MAX_NSLEN) == 0; }
};

namespace {

PmixStepServer::Impl* g_server = nullptr;  // PMIx's callbacks carry no pointer of ours

// A local task connected or finalized: nothing to do but let it go on.
pmix_status_t on_client(const pmix_proc_t*, void*, pmix_op_cbfunc_t cb, void* cbdata) {
  if (cb) cb(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// PMIx_Abort (MPI_Abort): the step ends, on every node.
pmix_status_t on_abort(const pmix_proc_t* proc, void*, int status, const char msg[], pmix_proc_t[], size_t,
                       pmix_op_cbfunc_t cb, void* cbdata) {
  std::string why = "rank " + std::to_string(proc->rank) + " called PMIx_Abort with status " + std::to_string(status);
  if (msg && *msg) why += ": " + std::string(msg);
  PmixStepServer::Impl* s = g_server;
  if (s) {
    s->post([s, why, status] {
      if (!s->abort) s->abort = why;
      if (s->relay_fd >= 0) s->send(pmix_wire::encode({"A", std::to_string(status)}, why));
    });
  }
  if (cb) cb(PMIX_SUCCESS, cbdata);
  return PMIX_SUCCESS;
}

// Every local participant has entered the fence; `data` is their contribution.
pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t, char* data, size_t ndata,
                       pmix_modex_cbfunc_t cb, void* cbdata) {
  PmixStepServer::Impl* s = g_server;
  if (!s) return PMIX_ERR_INIT;
  std::vector<int> nodes;
  bool all = nprocs == 0;
  for (size_t i = 0; i < nprocs && !all; ++i) {
    int n = procs[i].rank == PMIX_RANK_WILDCARD || !s->ours(procs[i].nspace) ? -1 : s->node_of(procs[i].rank);
    if (n < 0) all = true;
    else nodes.push_back(n);
  }
  if (all) nodes.clear();
  for (int n = 0; all && n < s->nnodes; ++n) nodes.push_back(n);
  std::string set = pmix_wire::nodes_text(nodes, s->nnodes);
  std::string blob(data ? data : "", data ? ndata : 0);
  s->post([s, set, blob = std::move(blob), answer = ModexAnswer{cb, cbdata}]() mutable {
    s->fence(set, std::move(blob), answer);
  });
  return PMIX_SUCCESS;
}

// A local task asks for a remote rank's data that the fences did not bring.
pmix_status_t on_dmodex(const pmix_proc_t* proc, const pmix_info_t[], size_t, pmix_modex_cbfunc_t cb, void* cbdata) {
  PmixStepServer::Impl* s = g_server;
  if (!s) return PMIX_ERR_INIT;
  int target = s->ours(proc->nspace) ? s->node_of(proc->rank) : -1;
  if (target < 0 || target == s->node) return PMIX_ERR_NOT_FOUND;
  pmix_rank_t rank = proc->rank;
  s->post([s, target, rank, answer = ModexAnswer{cb, cbdata}] {
    if (s->relay_fd < 0) return answer(PMIX_ERR_UNREACH, {});
    uint64_t id = s->next_dmodex++;
    s->dmodex[id] = answer;
    s->send(pmix_wire::encode({"D", std::to_string(id), std::to_string(target), std::to_string(rank)}));
  });
  return PMIX_SUCCESS;
}

struct DmodexAsk {
  PmixStepServer::Impl* s;
  std::string id, from;
};

// PMIx's answer to another node's question (PMIx_server_dmodex_request), on PMIx's thread.
void on_dmodex_data(pmix_status_t status, char* data, size_t size, void* cbdata) {
  auto* ask = static_cast<DmodexAsk*>(cbdata);
  std::string blob = status == PMIX_SUCCESS && data ? std::string(data, size) : std::string();
  PmixStepServer::Impl* s = ask->s;
  std::string id = ask->id, from = ask->from;
  delete ask;
  s->post([s, id, from, status, blob = std::move(blob)] {
    if (s->relay_fd >= 0) s->send(pmix_wire::encode({"R", id, from, status == PMIX_SUCCESS ? "0" : "1"}, blob));
  });
}

pmix_server_module_t g_module = [] {
  pmix_server_module_t m;
  std::memset(&m, 0, sizeof m);  // everything else: not supported
  m.client_connected = on_client;
  m.client_finalized = on_client;
  m.abort = on_abort;
  m.fence_nb = on_fence;
  m.direct_modex = on_dmodex;
  return m;
}();

}  // namespace

void PmixStepServer::Impl::post(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(f));
  }
  uint64_t one = 1;
  ssize_t ignored = write(wake_fd, &one, sizeof one);
  (void)ignored;
}

void PmixStepServer::Impl::run_queue() {
  uint64_t count;
  while (read(wake_fd, &count, sizeof count) > 0) {
  }
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> lock(mu);
    work.swap(queue);
  }
  for (auto& f : work) f();
}

void PmixStepServer::Impl::fence(const std::string& nodes, std::string data, ModexAnswer answer) {
  if (nodes == std::to_string(node) || nnodes == 1) return answer(PMIX_SUCCESS, std::move(data));
  if (relay_fd < 0) return answer(PMIX_ERR_UNREACH, {});
  const std::string seq = std::to_string(fence_seq[nodes]++);
  fences[seq + " " + nodes] = answer;
  send(pmix_wire::encode({"F", seq, nodes}, data));
}

void PmixStepServer::Impl::send(const std::string& bytes) {
  out += bytes;
  flush();
}

void PmixStepServer::Impl::flush() {
  while (relay_fd >= 0 && !out.empty()) {
    ssize_t n = write(relay_fd, out.data(), out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) return relay_lost(std::string("writing to srun: ") + std::strerror(errno));
    out.erase(0, static_cast<std::size_t>(n));
  }
}

void PmixStepServer::Impl::read_relay() {
  char buf[65536];
  while (relay_fd >= 0) {
    ssize_t n = read(relay_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) return relay_lost(n == 0 ? "srun closed the connection" : std::strerror(errno));
    in.feed(buf, static_cast<std::size_t>(n));
    pmix_wire::Frame f;
    while (relay_fd >= 0 && in.next(f)) handle(f);
    if (in.bad()) return relay_lost("malformed data from srun");
  }
}

void PmixStepServer::Impl::handle(const pmix_wire::Frame& f) {
  const auto& w = f.words;
  if ((w[0] == "F" || w[0] == "X") && w.size() == 3) {
    auto it = fences.find(w[1] + " " + w[2]);
    if (it == fences.end()) return;
    ModexAnswer answer = it->second;
    fences.erase(it);
    answer(w[0] == "F" ? PMIX_SUCCESS : PMIX_ERROR, f.payload);
  } else if (w[0] == "D" && w.size() == 4) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(std::strtoul(w[3].c_str(), nullptr, 10)));
    auto* ask = new DmodexAsk{this, w[1], w[2]};
    pmix_status_t rc = PMIx_server_dmodex_request(&proc, on_dmodex_data, ask);
    if (rc != PMIX_SUCCESS) {
      delete ask;
      send(pmix_wire::encode({"R", w[1], w[2], "1"}));
    }
  } else if (w[0] == "R" && w.size() == 4) {
    auto it = dmodex.find(std::strtoull(w[1].c_str(), nullptr, 10));
    if (it == dmodex.end()) return;
    ModexAnswer answer = it->second;
    dmodex.erase(it);
    answer(w[3] == "0" ? PMIX_SUCCESS : PMIX_ERR_NOT_FOUND, f.payload);
  } else if (w[0] == "A" && w.size() == 2) {
    if (!abort) abort = "a task on another node of the step called PMIx_Abort (" + f.payload + ")";
  }
}

// srun is gone: what waits for the other nodes fails (the tasks' PMIx calls return errors).
void PmixStepServer::Impl::relay_lost(const std::string& why) {
  if (relay_fd < 0) return;
  std::fprintf(stderr, "drover-stepd[%d]: PMIx exchange with srun lost: %s\n", getpid(), why.c_str());
  close(relay_fd);
  relay_fd = -1;
  out.clear();
  auto f = std::move(fences);
  auto d = std::move(dmodex);
  fences.clear();
  dmodex.clear();
  for (auto& [k, a] : f) a(PMIX_ERR_UNREACH, {});
  for (auto& [k, a] : d) a(PMIX_ERR_UNREACH, {});
}

Status PmixStepServer::Impl::init() {
  std::error_code ec;
  std::filesystem::remove_all(tmpdir, ec);
  if (mkdir(tmpdir.c_str(), 0700) != 0) return make_error("cannot create " + tmpdir + ": " + std::strerror(errno));
  if (geteuid() == 0 && chown(tmpdir.c_str(), uid, gid) != 0) {
    return make_error("cannot give " + tmpdir + " to the job's user: " + std::strerror(errno));
  }
  const std::string host = req.layout.nodes[static_cast<std::size_t>(node)];
  const std::string server_ns = "drover-stepd." + nspace.substr(std::strlen("drover.")) + "." + host;
  pmix_rank_t server_rank = static_cast<pmix_rank_t>(node);
  bool no = false;
  uint32_t user_id = static_cast<uint32_t>(uid), group_id = static_cast<uint32_t>(gid);
  pmix_info_t info[10];
  PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[3], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[4], PMIX_SERVER_SESSION_SUPPORT, &no, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[5], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[6], PMIX_SERVER_NSPACE, server_ns.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[7], PMIX_SERVER_RANK, &server_rank, PMIX_PROC_RANK);
  // The shared-memory store (gds/ds12, ds21) gives its files to this user: the tasks map them.
  PMIX_INFO_LOAD(&info[8], PMIX_USERID, &user_id, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[9], PMIX_GRPID, &group_id, PMIX_UINT32);
  pmix_status_t rc = PMIx_server_init(&g_module, info, 10);
  for (auto& i : info) PMIX_INFO_DESTRUCT(&i);
  if (rc != PMIX_SUCCESS) return make_error(pmix_error("PMIx_server_init", rc));
  initialized = true;
  return register_nspace();
}

// The job-level data every task reads at PMIx_Init: sizes, the node and proc
// maps, the app, each node's peers and each rank's place.
Status PmixStepServer::Impl::register_nspace() {
  const StepLayout& L = req.layout;
  const int ntasks = static_cast<int>(rank_node.size());
  const int here = L.tasks_per_node[static_cast<std::size_t>(node)];
  std::string hosts, ppn;
  for (int n = 0; n < nnodes; ++n) {
    hosts += (n ? "," : "") + L.nodes[static_cast<std::size_t>(n)];
    ppn += (n ? ";" : "") + join_ranks(node_ranks[static_cast<std::size_t>(n)]);
  }
  char* node_map = nullptr;
  char* proc_map = nullptr;
  pmix_status_t rc = PMIx_generate_regex(hosts.c_str(), &node_map);
  if (rc != PMIX_SUCCESS) return make_error(pmix_error("PMIx_generate_regex", rc));
  rc = PMIx_generate_ppn(ppn.c_str(), &proc_map);
  if (rc != PMIX_SUCCESS) {
    free(node_map);
    return make_error(pmix_error("PMIx_generate_ppn", rc));
  }
  InfoList job;
  job.str(PMIX_JOBID, nspace.substr(std::strlen("drover.")));
  job.u32(PMIX_UNIV_SIZE, static_cast<uint32_t>(ntasks));
  job.u32(PMIX_JOB_SIZE, static_cast<uint32_t>(ntasks));
  job.u32(PMIX_MAX_PROCS, static_cast<uint32_t>(ntasks));
  job.u32(PMIX_NUM_NODES, static_cast<uint32_t>(nnodes));
  job.u32(PMIX_JOB_NUM_APPS, 1);
  job.flag(PMIX_SPAWNED, false);
  job.flag(PMIX_TDIR_RMCLEAN, true);
  job.u32(PMIX_USERID, static_cast<uint32_t>(uid));  // the tasks' identity (files PMIx shares with them)
  job.u32(PMIX_GRPID, static_cast<uint32_t>(gid));
  job.regex(PMIX_NODE_MAP, node_map);
  job.regex(PMIX_PROC_MAP, proc_map);
  free(node_map);
  free(proc_map);
  job.u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(here));
  job.str(PMIX_LOCAL_PEERS, join_ranks(node_ranks[static_cast<std::size_t>(node)]));
  job.rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(leader(node)));
  {
    InfoList app;
    app.u32(PMIX_APPNUM, 0);
    app.u32(PMIX_APP_SIZE, static_cast<uint32_t>(ntasks));
    app.rank(PMIX_APPLDR, 0);
    app.str(PMIX_WDIR, req.work_dir.empty() ? req.job.submit_dir : req.work_dir);
    job.array(PMIX_APP_INFO_ARRAY, app);
  }
  for (int n = 0; n < nnodes; ++n) {
    InfoList ni;
    const int count = L.tasks_per_node[static_cast<std::size_t>(n)];
    ni.u32(PMIX_NODEID, static_cast<uint32_t>(n));
    ni.str(PMIX_HOSTNAME, L.nodes[static_cast<std::size_t>(n)]);
    ni.u32(PMIX_LOCAL_SIZE, static_cast<uint32_t>(count));
    ni.u32(PMIX_NODE_SIZE, static_cast<uint32_t>(count));
    ni.str(PMIX_LOCAL_PEERS, join_ranks(node_ranks[static_cast<std::size_t>(n)]));
    ni.rank(PMIX_LOCALLDR, static_cast<pmix_rank_t>(leader(n)));
    job.array(PMIX_NODE_INFO_ARRAY, ni);
  }
  for (int r = 0; r < ntasks; ++r) {
    InfoList pi;
    const int n = rank_node[static_cast<std::size_t>(r)];
    const auto local = static_cast<uint16_t>(rank_local[static_cast<std::size_t>(r)]);
    pi.rank(PMIX_RANK, static_cast<pmix_rank_t>(r));
    pi.u32(PMIX_APPNUM, 0);
    pi.rank(PMIX_APPLDR, 0);
    pi.rank(PMIX_APP_RANK, static_cast<pmix_rank_t>(r));
    pi.rank(PMIX_GLOBAL_RANK, static_cast<pmix_rank_t>(r));
    pi.u16(PMIX_LOCAL_RANK, local);
    pi.u16(PMIX_NODE_RANK, local);
    pi.u32(PMIX_NODEID, static_cast<uint32_t>(n));
    pi.str(PMIX_HOSTNAME, L.nodes[static_cast<std::size_t>(n)]);
    job.array(PMIX_PROC_INFO_ARRAY, pi);
  }
  pmix_data_array_t& flat = job.flat();
  Completion done;
  rc = done.wait(PMIx_server_register_nspace(nspace.c_str(), here, static_cast<pmix_info_t*>(flat.array), flat.size,
                                             Completion::callback, &done));
  if (rc != PMIX_SUCCESS) return make_error(pmix_error("PMIx_server_register_nspace", rc));
  for (int rank : L.global_task_ids) {
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, nspace.c_str(), static_cast<pmix_rank_t>(rank));
    Completion client;
    rc = client.wait(PMIx_server_register_client(&proc, uid, gid, nullptr, Completion::callback, &client));
    if (rc != PMIX_SUCCESS) return make_error(pmix_error("PMIx_server_register_client", rc));
  }
  return {};
}

PmixStepServer::Impl::~Impl() {
  if (initialized) PMIx_server_finalize();
  g_server = nullptr;
  if (wake_fd >= 0) close(wake_fd);
  if (relay_fd >= 0) close(relay_fd);
  if (!tmpdir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tmpdir, ec);
  }
}

PmixStepServer::PmixStepServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PmixStepServer::~PmixStepServer() = default;

Result<std::unique_ptr<PmixStepServer>> PmixStepServer::start(const LaunchRequest& req, const UserInfo& user,
                                                              const std::string& tmp_base) {
  if (g_server) return make_error("a PMIx server runs in this process already");
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.req = req;
  s.nspace = pmix_nspace(req.key);
  s.node = req.layout.node_index;
  s.nnodes = static_cast<int>(req.layout.nodes.size());
  s.uid = user.uid;
  s.gid = user.gid;
  s.node_ranks = ranks_by_node(req.layout.tasks_per_node, req.layout.distribution);
  int ntasks = 0;
  for (int t : req.layout.tasks_per_node) ntasks += t;
  s.rank_node.assign(static_cast<std::size_t>(ntasks), -1);
  s.rank_local.assign(static_cast<std::size_t>(ntasks), 0);
  for (int n = 0; n < s.nnodes; ++n) {
    const auto& ranks = s.node_ranks[static_cast<std::size_t>(n)];
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      s.rank_node[static_cast<std::size_t>(ranks[i])] = n;
      s.rank_local[static_cast<std::size_t>(ranks[i])] = static_cast<int>(i);
    }
  }
  if (s.node_ranks[static_cast<std::size_t>(s.node)] != req.layout.global_task_ids) {
    return make_error("this node's ranks (" + join_ranks(req.layout.global_task_ids) + ") are not the ones -m " +
                      (req.layout.distribution.empty() ? std::string("block") : req.layout.distribution) +
                      " places here (" + join_ranks(s.node_ranks[static_cast<std::size_t>(s.node)]) + ")");
  }
  s.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s.wake_fd < 0) return make_error(std::string("eventfd: ") + std::strerror(errno));
  if (s.nnodes > 1) {
    if (req.layout.launcher_port <= 0) return make_error("a step on several nodes needs srun to relay the PMIx exchange");
    auto fd = connect_to_launcher(req.layout,
                                  "DROVERPMIX " + req.layout.io_key + " " + std::to_string(s.node) + " " +
                                      std::to_string(s.nnodes) + "\n",
                                  "the PMIx exchange");
    if (!fd) return fd.error();
    s.relay_fd = *fd;
    fcntl(s.relay_fd, F_SETFL, fcntl(s.relay_fd, F_GETFL) | O_NONBLOCK);
  }
  // Unique on the host even for two clusters' job 1 (emulated nodes, tests in parallel): the daemon's pid.
  s.tmpdir = tmp_base + "/drover-pmix." + req.layout.nodes[static_cast<std::size_t>(s.node)] + "." +
             std::to_string(req.key.job_id) + "." + std::to_string(req.key.step_id) + "." + std::to_string(getpid());
  g_server = &s;
  if (Status st = s.init(); !st) return st.error();
  return std::unique_ptr<PmixStepServer>(new PmixStepServer(std::move(impl)));
}

Result<std::vector<std::string>> PmixStepServer::task_env(int rank) {
  pmix_proc_t proc;
  PMIX_LOAD_PROCID(&proc, impl_->nspace.c_str(), static_cast<pmix_rank_t>(rank));
  char** env = nullptr;
  pmix_status_t rc = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> out;
  for (char** e = env; e && *e; ++e) {
    out.emplace_back(*e);
    free(*e);
  }
  free(env);
  if (rc != PMIX_SUCCESS) return make_error(pmix_error("PMIx_server_setup_fork", rc));
  out.push_back("SLURM_MPI_TYPE=pmix");
  return out;
}

void PmixStepServer::add_poll_fds(std::vector<pollfd>& fds) const {
  fds.push_back({impl_->wake_fd, POLLIN, 0});
  if (impl_->relay_fd >= 0) {
    fds.push_back({impl_->relay_fd, static_cast<short>(POLLIN | (impl_->out.empty() ? 0 : POLLOUT)), 0});
  }
}

void PmixStepServer::process() {
  impl_->run_queue();
  impl_->read_relay();
  impl_->flush();
}

std::optional<std::string> PmixStepServer::take_abort() {
  std::optional<std::string> a;
  a.swap(impl_->abort);
  if (a) impl_->abort = std::string();  // reported once; later aborts change nothing
  return a && !a->empty() ? a : std::nullopt;
}

#endif

}  // namespace drover::agent
