// Helpers for tests and benchmarks that start real servers: private
// directories and free ports, so that two test runs on one machine never
// collide. Not used by daemons.
#pragma once

#include <string>
#include <string_view>

#include "common/result.hpp"

namespace drover::rpc::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with its contents on
// destruction. Short, because Unix socket paths are limited to 107 bytes.
class TempDir {
 public:
  static Result<TempDir> create(std::string_view prefix = "drover");
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  std::string file(std::string_view name) const { return path_ + "/" + std::string(name); }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// A TCP port that was free on `host` a moment ago (bound to port 0 and
// released). For configs that must name a port before the daemon starts;
// a server that can report its port should bind port 0 itself instead.
Result<int> reserve_tcp_port(const std::string& host = "127.0.0.1");

// A free port on `host` that stays taken while this object lives: its socket
// is bound with SO_REUSEADDR and never listens, so a server that also sets
// SO_REUSEADDR (gRPC does) can bind and listen there, while no other
// program's bind (port 0 or this port) gets it in between. For a config
// written before its daemons start, and restarted daemons after.
class HeldPort {
 public:
  static Result<HeldPort> take(const std::string& host = "127.0.0.1");
  HeldPort(HeldPort&& other) noexcept : fd_(other.fd_), port_(other.port_) { other.fd_ = -1; }
  HeldPort& operator=(HeldPort&&) = delete;
  HeldPort(const HeldPort&) = delete;
  ~HeldPort();

  int port() const { return port_; }

 private:
  HeldPort(int fd, int port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  int port_ = 0;
};

// Writes a new random cluster key (mode 0600) at `path`.
Status write_test_key(const std::string& path);

}  // namespace drover::rpc::testing
