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

// Writes a new random cluster key (mode 0600) at `path`.
Status write_test_key(const std::string& path);

}  // namespace drover::rpc::testing
