// srun's side of a step: a TCP listener the tasks' streams connect to (the
// step daemons open one connection per task and stream, announced with
// "DROVERIO <key> <rank> <stream>"), output written line by line (or as it
// comes with -u) with "R: " labels under -l, stdin forwarded, Ctrl-C and
// other signals handled as srun(1) describes, and the step's end read from
// the controller. With --mpi=pmix each node's step daemon also opens one
// connection ("DROVERPMIX <key> <node> <nnodes>") that srun relays PMIx
// fences and modex requests over (common/pmix_relay.hpp).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <thread>

#include "client/launch.hpp"
#include "client/session.hpp"
#include "common/fd_io.hpp"
#include "common/job_errors.hpp"
#include "common/net.hpp"
#include "common/pmix_relay.hpp"
#include "common/strings.hpp"

namespace drover::client {
namespace {

using Clock = std::chrono::steady_clock;

// srun's exit status when a node's Prolog failed and the step was aborted
// (Slurm 22.05's srun exited 182 on the anchor cluster, every time).
constexpr int kPrologFailedExit = 182;

int g_signal_pipe[2] = {-1, -1};

extern "C" void on_signal(int sig) {
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_pipe[1], &b, 1);
  (void)ignored;
}

void install_signals() {
  if (g_signal_pipe[0] < 0) {
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT}) sigaction(sig, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::string random_key() {
  std::random_device rd;
  static const char* hex = "0123456789abcdef";
  std::string k;
  for (int i = 0; i < 32; ++i) k += hex[rd() & 15];
  return k;
}

// The address the nodes reach srun at (SLURM_SRUN_COMM_HOST,
// SLURM_LAUNCH_NODE_IPADDR): this host name's IPv4 address, else loopback.
std::string launcher_host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  std::string ip = ipv4_address(buf);
  return ip.empty() ? "127.0.0.1" : ip;
}

constexpr int kPmixStream = 3;
constexpr int kWinchStream = 4;  // srun --pty: the window sizes srun sends to task 0's node ("ROWS COLS\n")

// srun --pty: srun's own terminal passes every byte through (Ctrl-C, Ctrl-Z
// and the rest reach the task's terminal, which acts on them) until srun
// restores it, before it prints the step's end.
class RawTerminal {
 public:
  void enter() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    cfmakeraw(&raw);
    raw.c_cc[VMIN] = 1;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  void leave() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    active_ = false;
  }
  ~RawTerminal() { leave(); }

 private:
  termios saved_{};
  bool active_ = false;
};

struct Conn {
  int fd = -1;
  bool hello = false;  // announced
  int rank = -1;
  int stream = -1;     // 0 stdin, 1 stdout, 2 stderr, kPmixStream: a node's PMIx exchange (rank: the node)
  std::string buf;     // hello bytes, then output not yet written (a partial line)
  bool at_line_start = true;
  std::string pending_in;  // stdin bytes not yet written to the task
};

class StepIo {
 public:
  StepIo(const std::string& program, ControllerApi& api, const StepOutput& out)
      : program_(program), api_(api), out_(out) {}

  int run(v1::CreateStepRequest req);

 private:
  bool listen_socket(int& port);
  bool create(v1::CreateStepRequest& req);
  void accept_all();
  void read_conn(Conn& c);
  void emit(Conn& c, const char* data, std::size_t n, bool final);
  std::string label(int rank) const;
  void read_stdin();
  void flush_stdin(Conn& c);
  void handle_signal(int sig);
  void send(int sig, bool cancel);  // to the step's tasks, saying so when it fails
  void print_status();
  bool poll_step();
  int finish();
  int stdin_conns_open() const;
  void pmix_hello(Conn& c, const std::string& line);
  bool pmix_feed(Conn& c, const char* data, std::size_t n);
  void pmix_send(int node, const std::string& bytes);
  void send_window_size();

  std::string program_;
  ControllerApi& api_;
  StepOutput out_;
  int listen_fd_ = -1;
  std::string key_;
  std::vector<std::unique_ptr<Conn>> conns_;
  int64_t job_ = 0, step_ = 0;
  v1::StepInfo rec_;
  bool final_ = false;
  std::optional<Clock::time_point> decided_at_;  // when the controller first said the step was over
  bool stdin_eof_ = false;
  // The tasks' stdin connections arrive one by one while srun reads its own
  // stdin: what was read before the last of them came is kept (up to
  // kStdinReplayMax, reading pauses beyond) and given to each late one, so
  // every task reads it all.
  int expected_in_ = 0;
  int seen_in_ = 0;
  std::string stdin_replay_;
  static constexpr std::size_t kStdinReplayMax = 16u << 20;
  int label_width_ = 1;
  int expected_out_ = 0;  // output connections to expect
  int eof_out_ = 0;
  Clock::time_point last_int_{};
  bool have_int_ = false;
  bool cancelled_ = false;
  bool forced_ = false;       // Ctrl-C twice (or --quit-on-interrupt's once) cancelled the step
  bool interrupted_ = false;  // -X passed a Ctrl-C on: a task it ends is not "Force Terminated"
  // srun -W: when the first task ended, known from its streams' ends (when
  // they come to srun) or its node's report, whichever is first.
  int streams_per_task_ = 0;
  std::vector<int> rank_eofs_;
  std::optional<Clock::time_point> first_exit_;
  bool wait_fired_ = false;
  bool rank_exited(int rank, bool node_ended) const {
    return node_ended || (streams_per_task_ > 0 && rank < static_cast<int>(rank_eofs_.size()) &&
                          rank_eofs_[static_cast<std::size_t>(rank)] >= streams_per_task_);
  }
  std::unique_ptr<pmix_wire::Relay> relay_;  // the first DROVERPMIX connection starts it
  RawTerminal terminal_;                     // --pty
};

bool StepIo::listen_socket(int& port) {
  listen_fd_ = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  bool v6 = listen_fd_ >= 0;
  if (v6) {
    int off = 0;
    setsockopt(listen_fd_, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(listen_fd_);
      v6 = false;
    }
  }
  if (!v6) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
  }
  if (listen(listen_fd_, 1024) != 0) return false;
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
  port = ntohs(ss.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                                        : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return true;
}

// CreateStep, waiting while other steps hold the CPUs or GPUs it needs
// (Slurm's messages); with -I only as long as that allows.
bool StepIo::create(v1::CreateStepRequest& req) {
  bool said = false;
  const auto start = Clock::now();
  for (;;) {
    auto r = api_.create_step(req);
    if (!r) {
      const std::string& m = r.error().message;
      const std::string first = r.error().headline();
      if (first == kInvalidJobId) {  // no such allocation: Slurm 22.05's two lines (anchor cluster)
        std::fprintf(stderr, "%s: error: Unable to confirm allocation for job %lld: %s\n", program_.c_str(),
                     static_cast<long long>(req.job_id()), first.c_str());
        std::fprintf(stderr, "%s: Check SLURM_JOB_ID environment variable. Expired or invalid job %lld\n",
                     program_.c_str(), static_cast<long long>(req.job_id()));
        return false;
      }
      if (first.starts_with("Only allocated ")) {  // Slurm's srun's one line ("Only allocated 1 nodes asked for 2")
        std::fprintf(stderr, "%s: error: %s\n", program_.c_str(), first.c_str());
        return false;
      }
      const std::string why = m.find('\n') == std::string::npos ? std::string() : m.substr(m.find('\n') + 1);
      // Slurm's srun says what is wrong with a GRES request before that it failed.
      const bool why_first = first == kInvalidGres;
      if (why_first && !why.empty()) print_error_lines(program_, why);
      std::fprintf(stderr, "%s: error: Unable to create step for job %lld: %s\n", program_.c_str(),
                   static_cast<long long>(req.job_id()), first.c_str());
      if (!why_first && !why.empty()) print_error_lines(program_, why);
      return false;
    }
    if (r->busy().empty()) {
      rec_ = r->step();
      // Slurm 22.05's words after a wait (anchor cluster, in salloc and in a batch job).
      if (said) std::fprintf(stderr, "%s: Step created for job %lld\n", program_.c_str(), static_cast<long long>(rec_.job_id()));
      return true;
    }
    if (out_.immediate_s >= 0 && Clock::now() - start >= std::chrono::seconds(out_.immediate_s)) {
      std::fprintf(stderr, "%s: error: Unable to create step for job %lld: %s\n", program_.c_str(),
                   static_cast<long long>(req.job_id()), r->busy().c_str());
      return false;
    }
    if (!said) {
      std::fprintf(stderr, "%s: Job %lld step creation temporarily disabled, retrying (%s)\n", program_.c_str(),
                   static_cast<long long>(req.job_id()), r->busy().c_str());
      said = true;
    }
    pollfd p{g_signal_pipe[0], POLLIN, 0};
    if (poll(&p, 1, 200) > 0) {
      unsigned char sig = 0;
      if (read(g_signal_pipe[0], &sig, 1) == 1 && (sig == SIGINT || sig == SIGTERM || sig == SIGQUIT)) {
        std::fprintf(stderr, "%s: error: Unable to create step for job %lld: interrupted while waiting\n",
                     program_.c_str(), static_cast<long long>(req.job_id()));
        return false;
      }
    }
  }
}

std::string StepIo::label(int rank) const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%*d: ", label_width_, rank);
  return buf;
}

void StepIo::emit(Conn& c, const char* data, std::size_t n, bool final) {
  int fd = c.stream == 2 ? 2 : 1;
  if (forced_ && fd == 2) {  // the step daemon's notice of the cancel Ctrl-C made: not said (see handle_signal)
    const std::string_view chunk(data, n);
    if (chunk.starts_with("slurmstepd-") && chunk.find(": error: *** STEP ") != std::string_view::npos &&
        chunk.find(" CANCELLED AT ") != std::string_view::npos && chunk.ends_with(" ***\n")) {
      return;
    }
  }
  if (!out_.label) {
    if (out_.unbuffered) {
      write_all(fd, data, n);
      return;
    }
    c.buf.append(data, n);
    std::size_t cut = final ? c.buf.size() : c.buf.rfind('\n');
    if (cut == std::string::npos) return;
    std::size_t len = final ? cut : cut + 1;
    write_all(fd, c.buf.data(), len);
    c.buf.erase(0, len);
    return;
  }
  // Labelled: whole lines with their prefix (a last line without newline too).
  c.buf.append(data, n);
  std::string outbuf;
  std::size_t start = 0;
  for (;;) {
    std::size_t nl = c.buf.find('\n', start);
    if (nl == std::string::npos) break;
    outbuf += label(c.rank);
    outbuf.append(c.buf, start, nl + 1 - start);
    start = nl + 1;
  }
  c.buf.erase(0, start);
  if ((final || out_.unbuffered) && !c.buf.empty()) {
    outbuf += label(c.rank) + c.buf;
    if (final) outbuf += "\n";  // Slurm ends a labelled partial line
    c.buf.clear();
  }
  if (!outbuf.empty()) write_all(fd, outbuf.data(), outbuf.size());
}

void StepIo::accept_all() {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    conns_.push_back(std::move(c));
  }
}

void StepIo::read_conn(Conn& c) {
  char buf[65536];
  for (;;) {
    ssize_t n = read(c.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN
    if (n == 0) {
      if (c.hello && c.stream == kPmixStream) {
        relay_->left(c.rank);
      } else if (c.hello && c.stream != 0) {
        emit(c, "", 0, true);
        ++eof_out_;
        if (c.rank >= 0 && c.rank < static_cast<int>(rank_eofs_.size()) &&
            ++rank_eofs_[static_cast<std::size_t>(c.rank)] == streams_per_task_ && !first_exit_) {
          first_exit_ = Clock::now();
        }
      }
      close(c.fd);
      c.fd = -1;
      return;
    }
    if (!c.hello) {
      c.buf.append(buf, static_cast<std::size_t>(n));
      auto nl = c.buf.find('\n');
      if (nl == std::string::npos) {
        if (c.buf.size() > 256) { close(c.fd); c.fd = -1; }
        continue;
      }
      char key[80] = {};
      int rank = -1, stream = -1;
      std::string line = c.buf.substr(0, nl);
      std::string rest = c.buf.substr(nl + 1);
      c.buf.clear();
      if (line.rfind("DROVERPMIX ", 0) == 0) {
        pmix_hello(c, line);
        if (c.fd < 0 || !pmix_feed(c, rest.data(), rest.size())) return;
        continue;
      }
      if (std::sscanf(line.c_str(), "DROVERIO %79s %d %d", key, &rank, &stream) != 3 || key_ != key || stream < 0 ||
          (stream > 2 && !(stream == kWinchStream && out_.pty))) {
        close(c.fd);  // not one of this step's tasks
        c.fd = -1;
        return;
      }
      c.hello = true;
      c.rank = rank;
      c.stream = stream;
      if (stream == 0 && ++seen_in_ <= expected_in_) {
        c.pending_in = stdin_replay_;
        if (seen_in_ == expected_in_) std::string().swap(stdin_replay_);
      }
      if (stream == 0 || stream == kWinchStream) {
        shutdown(c.fd, SHUT_RD);
        if (stream == kWinchStream) send_window_size();  // a change before it connected
        return;
      }
      if (!rest.empty()) emit(c, rest.data(), rest.size(), false);
      continue;
    }
    if (c.stream == kPmixStream) {
      if (!pmix_feed(c, buf, static_cast<std::size_t>(n))) return;
      continue;
    }
    emit(c, buf, static_cast<std::size_t>(n), false);
  }
}

// A step daemon's PMIx exchange: "DROVERPMIX <key> <node> <nnodes>".
void StepIo::pmix_hello(Conn& c, const std::string& line) {
  char key[80] = {};
  int node = -1, nnodes = 0;
  if (std::sscanf(line.c_str(), "DROVERPMIX %79s %d %d", key, &node, &nnodes) != 3 || key_ != key || nnodes <= 0 ||
      node < 0 || node >= nnodes) {
    close(c.fd);
    c.fd = -1;
    return;
  }
  if (!relay_) relay_ = std::make_unique<pmix_wire::Relay>(nnodes, [this](int n, const std::string& b) { pmix_send(n, b); });
  c.hello = true;
  c.rank = node;
  c.stream = kPmixStream;
  relay_->joined(node);
}

// Bytes from a node's PMIx connection; false (and the connection closed) when malformed.
bool StepIo::pmix_feed(Conn& c, const char* data, std::size_t n) {
  if (relay_->feed(c.rank, data, n)) return true;
  relay_->left(c.rank);
  close(c.fd);
  c.fd = -1;
  return false;
}

// Blocking with a deadline: the step daemons read whatever srun sends at once.
void StepIo::pmix_send(int node, const std::string& bytes) {
  for (auto& c : conns_) {
    if (c->fd < 0 || !c->hello || c->stream != kPmixStream || c->rank != node) continue;
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    auto deadline = Clock::now() + std::chrono::seconds(30);
    while (left > 0 && Clock::now() < deadline) {
      ssize_t w = write(c->fd, p, left);
      if (w > 0) {
        p += w;
        left -= static_cast<std::size_t>(w);
      } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
        pollfd pf{c->fd, POLLOUT, 0};
        poll(&pf, 1, 100);
      } else {
        break;
      }
    }
    return;
  }
}

// srun --pty: the terminal's size now, to the task's terminal (its programs get SIGWINCH).
void StepIo::send_window_size() {
  winsize ws{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) return;
  std::string line = std::to_string(ws.ws_row) + " " + std::to_string(ws.ws_col) + "\n";
  for (auto& c : conns_) {
    if (c->fd >= 0 && c->hello && c->stream == kWinchStream) {
      if (!write_all(c->fd, line.data(), line.size())) {
        close(c->fd);
        c->fd = -1;
      }
    }
  }
}

int StepIo::stdin_conns_open() const {
  int n = 0;
  for (const auto& c : conns_) n += c->fd >= 0 && c->hello && c->stream == 0;
  return n;
}

void StepIo::flush_stdin(Conn& c) {
  while (!c.pending_in.empty()) {
    ssize_t w = write(c.fd, c.pending_in.data(), c.pending_in.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return;
    if (w <= 0) {  // the task closed its stdin
      close(c.fd);
      c.fd = -1;
      return;
    }
    c.pending_in.erase(0, static_cast<std::size_t>(w));
  }
  if (stdin_eof_) {
    close(c.fd);
    c.fd = -1;
  }
}

void StepIo::read_stdin() {
  char buf[65536];
  ssize_t n = read(0, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) stdin_eof_ = true;
  if (n > 0 && seen_in_ < expected_in_) stdin_replay_.append(buf, static_cast<std::size_t>(n));
  for (auto& c : conns_) {
    if (c->fd < 0 || !c->hello || c->stream != 0) continue;
    if (n > 0) c->pending_in.append(buf, static_cast<std::size_t>(n));
    flush_stdin(*c);
  }
}

// "StepId=J.S tasks 0-1: running", a line for each run of tasks in the same state.
void StepIo::print_status() {
  auto r = api_.get_step(job_, step_);
  if (!r) return;
  int rank = 0;
  for (const auto& n : r->step().nodes()) {
    for (int from = rank, end = rank + n.tasks(); from < end;) {
      const bool exited = rank_exited(from, n.ended());
      int to = from;
      while (to + 1 < end && rank_exited(to + 1, n.ended()) == exited) ++to;
      std::string range = from == to ? "task " + std::to_string(from)
                                     : "tasks " + std::to_string(from) + "-" + std::to_string(to);
      std::fprintf(stderr, "%s: StepId=%lld.%lld %s: %s\n", program_.c_str(), static_cast<long long>(job_),
                   static_cast<long long>(step_), range.c_str(), exited ? "exited" : "running");
      from = to + 1;
    }
    rank += n.tasks();
  }
}

// srun(1): Ctrl-C once reports the tasks' status; again within a second the
// step is ended. Other signals are sent to the tasks.
void StepIo::handle_signal(int sig) {
  if (sig == SIGWINCH) {
    send_window_size();
    return;
  }
  if (sig == SIGINT && out_.disable_status && !out_.quit_on_interrupt) {
    // -X: each Ctrl-C goes to the tasks, as Slurm's srun says it.
    std::fprintf(stderr, "%s: sending Ctrl-C to StepId=%lld.%lld\n", program_.c_str(), static_cast<long long>(job_),
                 static_cast<long long>(step_));
    send(SIGINT, false);
    interrupted_ = true;
    return;
  }
  if (sig == SIGINT) {
    auto now = Clock::now();
    if (out_.quit_on_interrupt || (have_int_ && now - last_int_ < std::chrono::seconds(1))) {
      if (!cancelled_) {
        // As Slurm 22.05's srun on the anchor cluster: the tasks get the
        // Ctrl-C, then the step is cancelled; srun says it is aborted and
        // exits 130, saying nothing of each task (nor passing on the step
        // daemon's "CANCELLED AT" line).
        std::fprintf(stderr, "%s: sending Ctrl-C to StepId=%lld.%lld\n", program_.c_str(),
                     static_cast<long long>(job_), static_cast<long long>(step_));
        send(SIGINT, false);
        std::fprintf(stderr, "%s: forcing job termination\n", program_.c_str());
        send(SIGKILL, true);
        std::fprintf(stderr, "%s: Job step aborted: Waiting up to %d seconds for job step to finish.\n",
                     program_.c_str(), out_.kill_wait_s + 2);
        cancelled_ = true;
        forced_ = true;
      }
      return;
    }
    have_int_ = true;
    last_int_ = now;
    std::fprintf(stderr, "%s: interrupt (one more within 1 sec to abort)\n", program_.c_str());
    print_status();
    return;
  }
  if (sig == SIGQUIT) {
    send(SIGKILL, true);
    cancelled_ = true;
    return;
  }
  // What Slurm 22.05's srun said of these (a cancel of the job it runs in
  // sends it both, anchor cluster); they are passed on to the tasks.
  if (sig == SIGCONT && !out_.quiet) std::fprintf(stderr, "%s: got SIGCONT\n", program_.c_str());
  if (sig == SIGTERM && !out_.quiet) std::fprintf(stderr, "%s: forcing job termination\n", program_.c_str());
  send(sig, false);
}

void StepIo::send(int sig, bool cancel) {
  auto r = api_.signal_step(job_, step_, sig, cancel);
  // The job or the step is over already (a cancel of the job sends srun
  // SIGCONT and SIGTERM too): nothing to say.
  if (!r && (r.error().headline() == kInvalidJobId || r.error().headline() == kNoSuchStep)) return;
  if (!r) {
    std::fprintf(stderr, "%s: error: Unable to send signal %d to StepId=%lld.%lld: %s\n", program_.c_str(), sig,
                 static_cast<long long>(job_), static_cast<long long>(step_), r.error().message.c_str());
  }
}

// The step is over once the controller says so and every node has reported
// its tasks' ends; a step the job's end decided (a cancelled allocation) may
// be over before its nodes report: srun waits for them as long as Slurm's
// said it would ("Waiting up to KillWait+2 seconds for job step to finish").
bool StepIo::poll_step() {
  auto r = api_.get_step(job_, step_, out_.own_allocation);
  if (!r) return false;  // the controller may be restarting: ask again later
  rec_ = r->step();
  if (!first_exit_ && std::any_of(rec_.nodes().begin(), rec_.nodes().end(), [](const auto& n) { return n.ended(); })) {
    first_exit_ = Clock::now();
  }
  if (rec_.state().empty() || rec_.state() == "RUNNING") return false;
  const auto now = Clock::now();
  if (!decided_at_) decided_at_ = now;
  const bool reported = std::all_of(rec_.nodes().begin(), rec_.nodes().end(), [](const auto& n) { return n.ended(); });
  final_ = reported || now - *decided_at_ > std::chrono::seconds(out_.kill_wait_s + 2);
  return final_;
}

// The node and rank of the task whose end made --kill-on-bad-exit end the
// step, from the step's reason ("cpu02: task 1 exited 4:0 (--kill-on-bad-exit)").
void kill_on_bad_exit_task(const std::string& reason, std::string& node, int& rank) {
  const auto colon = reason.find(": task ");
  int r = -1;
  if (colon == std::string::npos || !reason.ends_with(" (--kill-on-bad-exit)") ||
      std::sscanf(reason.c_str() + colon, ": task %d exited", &r) != 1) {
    return;
  }
  node = reason.substr(0, colon);
  rank = r;
}

std::string task_range(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return "task " + std::to_string(ranks[0]);
  return "tasks " + compress_ranges(std::vector<int64_t>(ranks.begin(), ranks.end()));
}

// Slurm's lines for tasks that did not end well, and the exit status.
int StepIo::finish() {
  constexpr int kInterruptedExit = 128 + SIGINT;
  if (forced_) return kInterruptedExit;
  int rc = 0;
  std::vector<std::string> prolog_failed_on;
  const std::string step = std::to_string(job_) + "." + std::to_string(step_);
  // A step that something else ended (scancel of it or of the job, the
  // job's time limit or its script's end): Slurm 22.05's srun said this
  // first, its step daemon's "*** STEP ... CANCELLED AT ... ***" coming on
  // the tasks' stderr (anchor cluster).
  const bool aborted = rec_.state() == "CANCELLED" && !cancelled_;
  if (aborted && !out_.quiet) {
    std::fprintf(stderr, "%s: Job step aborted: Waiting up to %d seconds for job step to finish.\n", program_.c_str(),
                 out_.kill_wait_s + 2);
  }
  // --kill-on-bad-exit ended the step: the task that ended it is said first,
  // then that srun ends the others, as Slurm 22.05's srun did.
  std::string bad_node;
  int bad_rank = -1;
  if (rec_.kill_on_bad_exit()) kill_on_bad_exit_task(rec_.reason(), bad_node, bad_rank);
  std::vector<std::string> first, rest;  // "node: tasks: how" lines
  bool signalled = false;
  for (const auto& n : rec_.nodes()) {
    if (n.tasks_ended().empty()) {
      // A node lost while the step ran (the controller's "node X not responding" / "set DOWN").
      if (n.state() == "NODE_FAIL" && n.reason().rfind("node " + n.node() + " ", 0) == 0) {
        std::fprintf(stderr, "%s: error: Node failure on %s\n", program_.c_str(), n.node().c_str());
        rc = std::max(rc, 1);
      } else if (n.state() != "COMPLETED" && !n.reason().empty()) {
        std::fprintf(stderr, "%s: error: Task launch for StepId=%s failed on node %s: %s\n", program_.c_str(),
                     step.c_str(), n.node().c_str(), n.reason().c_str());
        if (n.reason() == "Job prolog failed") prolog_failed_on.push_back(n.node());
        rc = std::max(rc, 1);
      }
      rc = std::max(rc, n.exit_signal() ? 128 + n.exit_signal() : n.exit_code());
      continue;
    }
    std::map<std::string, std::vector<int>> by_end;  // message -> ranks
    for (const auto& t : n.tasks_ended()) {
      rc = std::max(rc, t.exit_signal() ? 128 + t.exit_signal() : t.exit_code());
      signalled = signalled || t.exit_signal() == SIGTERM || t.exit_signal() == SIGKILL;
      if (!t.error().empty()) {
        std::fprintf(stderr, "%s: error: %s: task %d: %s\n", program_.c_str(), n.node().c_str(), t.rank(),
                     t.error().c_str());
      }
      if (t.exit_signal()) {
        by_end[strsignal(t.exit_signal())].push_back(t.rank());
      } else if (t.exit_code()) {
        by_end["Exited with exit code " + std::to_string(t.exit_code())].push_back(t.rank());
      }
    }
    for (auto& [what, ranks] : by_end) {
      std::sort(ranks.begin(), ranks.end());
      const bool culprit = n.node() == bad_node && std::find(ranks.begin(), ranks.end(), bad_rank) != ranks.end();
      (culprit ? first : rest).push_back(program_ + ": error: " + n.node() + ": " + task_range(ranks) + ": " + what + "\n");
    }
  }
  for (const auto& line : first) std::fputs(line.c_str(), stderr);
  if (!first.empty() && !out_.quiet) {
    std::fprintf(stderr, "%s: launch/slurm: _step_signal: Terminating StepId=%s\n", program_.c_str(), step.c_str());
  }
  for (const auto& line : rest) std::fputs(line.c_str(), stderr);
  if (!prolog_failed_on.empty()) {  // as Slurm's srun said it on the anchor cluster, and its exit status
    std::fprintf(stderr, "%s: error: Application launch failed: Job prolog failed\n", program_.c_str());
    std::fprintf(stderr, "%s: Job step aborted\n", program_.c_str());
    for (const auto& node : prolog_failed_on) {
      std::fprintf(stderr, "%s: Prolog failure on node %s\n", program_.c_str(), node.c_str());
    }
    rc = kPrologFailedExit;
  }
  // The step's own time limit (srun -t): its step daemon said "*** STEP
  // ... CANCELLED AT ... DUE TO TIME LIMIT ***"; srun ends with this, its
  // exit status the signal that ended the tasks (15: Slurm 22.05's srun -t 1
  // of `sleep 200` exited 15 on the anchor cluster, not 143).
  // A task SIGTERM or SIGKILL ended (its own, srun's for --kill-on-bad-exit,
  // or the step's time limit's) ends srun's lines with this, as Slurm 22.05's
  // srun said it (not for SIGINT, SIGSEGV, SIGABRT, SIGHUP or SIGUSR1 on the
  // anchor cluster); not when the step was cancelled (scancel, the job's end,
  // Ctrl-C).
  const bool timeout = rec_.state() == "TIMEOUT";
  if ((timeout || (signalled && !aborted && !cancelled_ && !interrupted_)) && !out_.quiet) {
    std::fprintf(stderr, "%s: Force Terminated StepId=%s\n", program_.c_str(), step.c_str());
  }
  if (timeout) {
    int sig = 0;
    for (const auto& n : rec_.nodes()) {
      for (const auto& t : n.tasks_ended()) sig = std::max(sig, t.exit_signal());
    }
    if (sig != 0) rc = sig;
  }
  if (rc == 0 && rec_.state() != "COMPLETED") rc = 1;
  return rc;
}

int StepIo::run(v1::CreateStepRequest req) {
  install_signals();
  int port = 0;
  // The tasks' streams come here unless -o sends them to files; the address
  // is in the tasks' environment either way (SLURM_SRUN_COMM_HOST/PORT).
  bool to_srun = req.stdout_pattern().empty();
  if (!listen_socket(port)) {
    std::fprintf(stderr, "%s: error: cannot listen for the tasks' output: %s\n", program_.c_str(), std::strerror(errno));
    return 1;
  }
  key_ = random_key();
  if (out_.pty) {  // srun's terminal is task 0's alone
    req.set_pty(true);
    req.set_stdin_all(false);
    req.set_stdin_task(0);
    req.set_pty_rows(out_.pty_rows);
    req.set_pty_cols(out_.pty_cols);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, nullptr);
  }
  req.set_launcher_host(launcher_host());
  req.set_launcher_port(port);
  req.set_io_key(key_);
  const auto t_begin = Clock::now();
  auto trace = [&](const char* what) {
    if (out_.verbose > 1) {
      std::fprintf(stderr, "%s: %s at +%.1f ms\n", program_.c_str(), what,
                   std::chrono::duration<double, std::milli>(Clock::now() - t_begin).count());
    }
  };
  if (!create(req)) return 1;
  ControllerApi::OneAttempt polling(api_);  // the loop below asks again when the controller is away
  trace("step created");
  job_ = rec_.job_id();
  step_ = rec_.step_id();
  if (out_.created_step) *out_.created_step = step_;
  for (int n = rec_.ntasks() - 1; n >= 10; n /= 10) ++label_width_;
  // With --pty only task 0's terminal comes back (stdout and stderr are one).
  expected_out_ = !to_srun ? 0 : out_.pty ? 1 : rec_.ntasks() * (req.stderr_pattern().empty() ? 2 : 1);
  streams_per_task_ = !to_srun || out_.pty ? 0 : req.stderr_pattern().empty() ? 2 : 1;
  rank_eofs_.assign(static_cast<std::size_t>(rec_.ntasks()), 0);
  if (to_srun && req.stdin_pattern().empty()) {
    expected_in_ = out_.pty ? 1 : req.stdin_all() ? rec_.ntasks() : req.stdin_task() < rec_.ntasks() ? 1 : 0;
  }
  if (out_.pty) terminal_.enter();
  if (out_.verbose > 0) {
    std::fprintf(stderr, "%s: launching StepId=%lld.%lld on host(s) %d: %d tasks\n", program_.c_str(),
                 static_cast<long long>(job_), static_cast<long long>(step_), rec_.nodes_size(), rec_.ntasks());
  }
  auto next_poll = Clock::now() + std::chrono::milliseconds(200);
  auto final_at = Clock::time_point{};
  int interval_ms = 5;
  bool streams_were_done = false;
  auto streams_closed_at = Clock::now();
  for (;;) {
    std::vector<pollfd> fds;
    fds.push_back({g_signal_pipe[0], POLLIN, 0});
    if (listen_fd_ >= 0) fds.push_back({listen_fd_, POLLIN, 0});
    bool want_stdin = !stdin_eof_ && stdin_conns_open() > 0 &&
                      (seen_in_ >= expected_in_ || stdin_replay_.size() < kStdinReplayMax);
    for (const auto& c : conns_) {
      if (c->fd < 0 || (c->hello && c->stream == kWinchStream)) continue;
      short ev = c->hello && c->stream == 0 ? (c->pending_in.empty() ? 0 : POLLOUT) : POLLIN;
      if (c->hello && c->stream == 0 && !c->pending_in.empty()) want_stdin = false;
      fds.push_back({c->fd, ev, 0});
    }
    if (want_stdin) fds.push_back({0, POLLIN, 0});
    auto now = Clock::now();
    int wait = static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(next_poll - now).count()));
    poll(fds.data(), fds.size(), wait);
    unsigned char sig;
    while (read(g_signal_pipe[0], &sig, 1) == 1) handle_signal(sig);
    if (listen_fd_ >= 0) accept_all();
    for (auto& c : conns_) {
      if (c->fd < 0 || (c->hello && c->stream == kWinchStream)) continue;
      if (c->hello && c->stream == 0) {
        flush_stdin(*c);
      } else {
        read_conn(*c);
      }
    }
    if (want_stdin) {
      pollfd p{0, POLLIN, 0};
      if (poll(&p, 1, 0) > 0) read_stdin();
    }
    bool streams_done = eof_out_ >= expected_out_;
    now = Clock::now();
    if (streams_done && !streams_were_done) {
      trace("the tasks' streams closed");
      streams_were_done = true;  // the end is near: ask at once, then often
      streams_closed_at = now;
      interval_ms = 1;
      next_poll = now;
    }
    if (!final_ && (now >= next_poll)) {
      if (poll_step()) {
        final_at = now;
        trace("the step ended");
      }
      // A node whose part ended (its launch failed, say) takes part in no
      // more fences, connected or not: the others' fail instead of waiting.
      for (int i = 0; relay_ && i < rec_.nodes_size(); ++i) {
        if (rec_.nodes(i).ended()) relay_->left(i);
      }
      // Once the streams are closed the end is near (the agent reports it at
      // once): ask every few ms for a second, then every 100 ms; before, now and then.
      bool recent = streams_done && now - streams_closed_at < std::chrono::seconds(1);
      interval_ms = !streams_done ? 250 : recent ? std::min(interval_ms * 2, 8) : 100;
      next_poll = now + std::chrono::milliseconds(interval_ms);
    }
    if (out_.task_wait_s > 0 && first_exit_ && !wait_fired_ && !final_ &&
        now - *first_exit_ >= std::chrono::seconds(out_.task_wait_s)) {
      // srun -W: the others are killed, said as Slurm 22.05's srun said it
      // (the step then ends as aborted: "Job step aborted: Waiting up to ...").
      wait_fired_ = true;
      std::fprintf(stderr, "%s: First task exited %ds ago\n", program_.c_str(), out_.task_wait_s);
      print_status();
      std::fprintf(stderr, "%s: launch/slurm: _step_signal: Terminating StepId=%lld.%lld\n", program_.c_str(),
                   static_cast<long long>(job_), static_cast<long long>(step_));
      send(SIGKILL, true);
    }
    if (final_) {
      // The tasks are gone; their last bytes are in flight at most.
      if (streams_done || now - final_at > std::chrono::seconds(2)) break;
      next_poll = now + std::chrono::milliseconds(20);
    }
  }
  for (auto& c : conns_) {
    if (c->fd < 0) continue;
    if (c->hello && (c->stream == 1 || c->stream == 2)) emit(*c, "", 0, true);
    close(c->fd);
  }
  if (listen_fd_ >= 0) close(listen_fd_);
  terminal_.leave();
  return finish();
}

}  // namespace

int run_step(const std::string& program, ControllerApi& api, v1::CreateStepRequest req, const StepOutput& out) {
  StepIo io(program, api, out);
  return io.run(std::move(req));
}

}  // namespace drover::client
