#include "agent/file_bcast.hpp"

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace drover::agent {
namespace {

// The steps of one block, in the calling process: 0, or the errno of the
// step that failed with that step's name in *what.
int write_here(const FileBlock& b, const char** what) {
  int flags = O_WRONLY | O_CLOEXEC;
  if (b.first) flags |= O_CREAT | (b.force ? O_TRUNC : O_EXCL);
  // Created writable by its owner: later blocks open it again before the
  // last sets the source's mode, which may not be.
  *what = "open";
  int fd = open(b.path.c_str(), flags, 0600);
  if (fd < 0) return errno;
  auto fail = [&](const char* step) {
    int e = errno;
    *what = step;
    close(fd);
    return e;
  };
  size_t done = 0;
  while (done < b.data.size()) {
    ssize_t n = pwrite(fd, b.data.data() + done, b.data.size() - done, static_cast<off_t>(b.offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    done += static_cast<size_t>(n);
  }
  if (b.last) {
    if (fchmod(fd, b.mode & 07777) != 0) return fail("chmod");
    if (b.preserve) {
      timespec times[2] = {{static_cast<time_t>(b.atime), 0}, {static_cast<time_t>(b.mtime), 0}};
      if (futimens(fd, times) != 0) return fail("set times of");
    }
  }
  if (close(fd) != 0) {
    *what = "close";
    return errno;
  }
  return 0;
}

BlockWritten result(int e, const char* what, const std::string& path) {
  if (e == 0) return {};
  return {e, std::string(what) + " " + path + ": " + std::strerror(e)};
}

}  // namespace

BlockWritten write_file_block(const FileBlock& b, const UserInfo& user) {
  if (b.path.empty() || b.path[0] != '/') return {EINVAL, "not an absolute path: " + b.path};
  const char* what = "open";
  if (user.uid == geteuid()) return result(write_here(b, &what), what, b.path);
  if (geteuid() != 0) {
    return {EPERM, "the agent is not root, so it can write files only as uid " + std::to_string(geteuid()) +
                       ", not as " + user.name + " (uid " + std::to_string(user.uid) + ")"};
  }
  // A child becomes the user; it reports the failed step's errno through a
  // pipe (the step's name is one of a few constants, sent as an index).
  static const char* const kSteps[] = {"open", "write", "chmod", "set times of", "close", "become the user for"};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {errno, std::string("pipe: ") + std::strerror(errno)};
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return {e, std::string("fork: ") + std::strerror(e)};
  }
  if (pid == 0) {
    close(fds[0]);
    int out[2] = {0, 0};
    // Raw system calls: in a child of a threaded process, only this thread
    // exists, and glibc's wrappers would try to reach the others.
    if (syscall(SYS_setgroups, user.groups.size(), user.groups.data()) != 0 || syscall(SYS_setgid, user.gid) != 0 ||
        syscall(SYS_setuid, user.uid) != 0) {
      out[0] = errno;
      out[1] = 5;
    } else {
      const char* step = "open";
      out[0] = write_here(b, &step);
      for (int i = 0; i < 5; ++i) {
        if (std::strcmp(step, kSteps[i]) == 0) out[1] = i;
      }
    }
    ssize_t w = write(fds[1], out, sizeof out);
    _exit(w == static_cast<ssize_t>(sizeof out) ? 0 : 1);
  }
  close(fds[1]);
  int got[2] = {EIO, 0};
  ssize_t n;
  do {
    n = read(fds[0], got, sizeof got);
  } while (n < 0 && errno == EINTR);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n != static_cast<ssize_t>(sizeof got)) return {EIO, "the writer for " + b.path + " ended without an answer"};
  return result(got[0], kSteps[got[1] >= 0 && got[1] < 6 ? got[1] : 0], b.path);
}

}  // namespace drover::agent
