#include "common/daemon_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

namespace drover {

std::string expand_daemon_path(std::string_view pattern, std::string_view node) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
    if (c == 'n') {
      out += node;
    } else if (c == 'h') {
      char host[256] = {};
      gethostname(host, sizeof host - 1);
      std::string h = host;
      out += h.substr(0, h.find('.'));
    } else if (c == '%') {
      out += '%';
    } else {
      out += '%';
      out += c;
    }
  }
  return out;
}

Status log_to_file(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0) return make_error("cannot open the log file " + path + ": " + std::strerror(errno));
  if (dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0) {
    const int e = errno;
    close(fd);
    return make_error("cannot log to " + path + ": " + std::strerror(e));
  }
  close(fd);
  return {};
}

StartStderr::StartStderr() : fd_(fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3)) {}

StartStderr::~StartStderr() {
  if (fd_ >= 0) close(fd_);
}

void StartStderr::say(const std::string& line) const {
  auto put = [&](int fd) {
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t n = write(fd, line.data() + done, line.size() - done);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  };
  std::fflush(stderr);
  put(STDERR_FILENO);
  struct stat now {}, then {};
  if (fd_ >= 0 && fstat(STDERR_FILENO, &now) == 0 && fstat(fd_, &then) == 0 &&
      (now.st_dev != then.st_dev || now.st_ino != then.st_ino)) {
    put(fd_);
  }
}

Status write_pid_file(const std::string& path) {
  const std::string tmp = path + ".new";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error("cannot write the pid file " + path + ": " + std::strerror(errno));
  const std::string text = std::to_string(getpid()) + "\n";
  const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    unlink(tmp.c_str());
    return make_error("cannot write the pid file " + path + ": " + std::strerror(e));
  }
  return {};
}

}  // namespace drover
