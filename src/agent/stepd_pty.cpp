// srun --pty: task 0 runs with a pseudo-terminal as its stdin, stdout and
// stderr and as its controlling terminal; the step daemon holds the master
// side and relays it to srun over the task's stream connections (keystrokes
// in on stream 0, the terminal's output back on stream 1) and applies the
// window sizes srun sends on a connection of their own (kWinchStream), so
// that the task's foreground programs get SIGWINCH as in a local terminal.
// Nothing blocks: each direction keeps what could not be written yet and
// stops reading its source while that is large.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "agent/stepd.hpp"

namespace drover::agent {
namespace {

constexpr std::size_t kMaxPending = 64 * 1024;

void set_nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Writes what it can of `pending` to `fd`; false when `fd` is broken.
bool write_some(int fd, std::string& pending) {
  while (!pending.empty()) {
    ssize_t w = write(fd, pending.data(), pending.size());
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EAGAIN) return true;
    if (w <= 0) return false;
    pending.erase(0, static_cast<std::size_t>(w));
  }
  return true;
}

}  // namespace

Status StepDaemon::open_task_pty(TaskPlan& t) {
  const StepLayout& L = req_.layout;
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return make_error(std::string("--pty: cannot open a pseudo-terminal: ") + std::strerror(errno));
  char name[128] = {};
  if (grantpt(master) != 0 || unlockpt(master) != 0 || ptsname_r(master, name, sizeof name) != 0) {
    int e = errno;
    close(master);
    return make_error(std::string("--pty: cannot unlock the pseudo-terminal: ") + std::strerror(e));
  }
  int slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) {
    int e = errno;
    close(master);
    return make_error(std::string("--pty: cannot open ") + name + ": " + std::strerror(e));
  }
  // The terminal belongs to the job's user, readable by nobody else (as a login's).
  if (geteuid() == 0 && user_.uid != 0) {
    if (fchown(slave, user_.uid, user_.gid) != 0 || fchmod(slave, 0600) != 0) {
      status_.warnings.push_back(std::string("--pty: cannot give ") + name + " to user " + user_.name + ": " +
                                 std::strerror(errno));
    }
  }
  if (L.pty_rows > 0 && L.pty_cols > 0) {
    winsize ws{};
    ws.ws_row = static_cast<unsigned short>(L.pty_rows);
    ws.ws_col = static_cast<unsigned short>(L.pty_cols);
    ioctl(master, TIOCSWINSZ, &ws);
  }
  pty_master_ = master;
  t.in_fd = slave;
  t.out_fd = dup(slave);
  t.err_fd = dup(slave);
  t.controlling_tty = true;
  t.out_path = t.err_path = "srun " + L.launcher_host + ":" + std::to_string(L.launcher_port) + " (terminal " + name + ")";
  if (t.out_fd < 0 || t.err_fd < 0) return make_error(std::string("--pty: dup: ") + std::strerror(errno));
  for (auto [stream, fd] : {std::pair{1, &pty_out_}, std::pair{0, &pty_in_}, std::pair{kWinchStream, &pty_winch_}}) {
    auto c = connect_task_stream(L, t.rank, stream);
    if (!c) return c.error();
    *fd = *c;
  }
  for (int fd : {pty_master_, pty_in_, pty_out_, pty_winch_}) set_nonblocking(fd);
  return {};
}

void StepDaemon::pty_poll_fds(std::vector<pollfd>& fds) const {
  if (pty_master_ >= 0) {
    short ev = static_cast<short>((pty_to_srun_.size() < kMaxPending ? POLLIN : 0) | (pty_to_task_.empty() ? 0 : POLLOUT));
    if (ev) fds.push_back({pty_master_, ev, 0});
  }
  if (pty_out_ >= 0 && !pty_to_srun_.empty()) fds.push_back({pty_out_, POLLOUT, 0});
  if (pty_in_ >= 0 && pty_to_task_.size() < kMaxPending) fds.push_back({pty_in_, POLLIN, 0});
  if (pty_winch_ >= 0) fds.push_back({pty_winch_, POLLIN, 0});
}

// Moves what is ready in each direction, without blocking.
void StepDaemon::pty_pump() {
  if (pty_master_ < 0 && pty_out_ < 0 && pty_in_ < 0 && pty_winch_ < 0) return;
  char buf[16384];
  // The terminal's output, to srun. EIO: every process closed the terminal.
  while (pty_master_ >= 0 && pty_to_srun_.size() < kMaxPending) {
    ssize_t n = read(pty_master_, buf, sizeof buf);
    if (n > 0) {
      if (pty_out_ >= 0) pty_to_srun_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    close_fd(pty_master_);
  }
  if (pty_out_ >= 0 && !write_some(pty_out_, pty_to_srun_)) {  // srun is gone: the output has nowhere to go
    close_fd(pty_out_);
    pty_to_srun_.clear();
  }
  if (pty_master_ < 0 && pty_to_srun_.empty()) close_fd(pty_out_);  // srun sees the end of the output
  // srun's keystrokes, to the terminal. At the end of srun's input the
  // terminal gets its end-of-file character, as a local one would from ^D.
  while (pty_in_ >= 0 && pty_to_task_.size() < kMaxPending) {
    ssize_t n = read(pty_in_, buf, sizeof buf);
    if (n > 0) {
      pty_to_task_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    termios tio{};
    if (pty_master_ >= 0 && tcgetattr(pty_master_, &tio) == 0 && (tio.c_lflag & ICANON)) {
      pty_to_task_.push_back(static_cast<char>(tio.c_cc[VEOF]));
    }
    close_fd(pty_in_);
  }
  if (pty_master_ >= 0 && !write_some(pty_master_, pty_to_task_)) pty_to_task_.clear();
  if (pty_master_ < 0) pty_to_task_.clear();
  // Window sizes: "ROWS COLS" lines; the kernel signals the terminal's foreground group.
  while (pty_winch_ >= 0) {
    ssize_t n = read(pty_winch_, buf, sizeof buf);
    if (n > 0) {
      pty_winch_buf_.append(buf, static_cast<std::size_t>(n));
      if (pty_winch_buf_.size() > 4096) pty_winch_buf_.clear();  // not srun's
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || errno != EAGAIN) close_fd(pty_winch_);
    break;
  }
  std::size_t nl;
  while ((nl = pty_winch_buf_.find('\n')) != std::string::npos) {
    int rows = 0, cols = 0;
    if (std::sscanf(pty_winch_buf_.substr(0, nl).c_str(), "%d %d", &rows, &cols) == 2 && rows > 0 && cols > 0 &&
        rows < 65536 && cols < 65536 && pty_master_ >= 0) {
      winsize ws{};
      ws.ws_row = static_cast<unsigned short>(rows);
      ws.ws_col = static_cast<unsigned short>(cols);
      ioctl(pty_master_, TIOCSWINSZ, &ws);
    }
    pty_winch_buf_.erase(0, nl + 1);
  }
}

// The step is over: what the terminal still holds goes to srun (for up to
// 2 s if srun reads slowly), then every connection closes.
void StepDaemon::pty_close() {
  if (pty_master_ < 0 && pty_out_ < 0 && pty_in_ < 0 && pty_winch_ < 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  close_fd(pty_in_);
  close_fd(pty_winch_);
  while ((pty_master_ >= 0 || !pty_to_srun_.empty()) && pty_out_ >= 0 && std::chrono::steady_clock::now() < until) {
    pty_pump();
    if (pty_out_ < 0) break;
    pollfd p{pty_out_, POLLOUT, 0};
    if (!pty_to_srun_.empty()) {
      poll(&p, 1, 100);
    } else if (pty_master_ >= 0) {
      // Nothing more to read now: the terminal is still open somewhere (a
      // process that outlived the step), so what it has is all there is.
      break;
    }
  }
  close_fd(pty_master_);
  close_fd(pty_out_);
  pty_to_srun_.clear();
  pty_to_task_.clear();
}

}  // namespace drover::agent
