#include "ctld/log.hpp"

#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace drover::ctld {
namespace {

std::atomic<int> g_level{config::kLogInfo};
std::atomic<config::DebugFlags> g_flags{0};

void write_line(const std::string& message) {
  static std::mutex mu;
  struct timeval tv {};
  gettimeofday(&tv, nullptr);
  struct tm tm {};
  localtime_r(&tv.tv_sec, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "%s.%03ld drover-controller: %s\n", when, static_cast<long>(tv.tv_usec / 1000),
               message.c_str());
  std::fflush(stderr);
}

}  // namespace

bool log_enabled(int level) { return level <= g_level.load(std::memory_order_relaxed); }

void log_at(int level, const std::string& message) {
  if (log_enabled(level)) write_line(message);
}

void log_line(const std::string& message) { log_at(config::kLogInfo, message); }

void log_error(const std::string& message) { log_at(config::kLogError, message); }

bool log_flag(config::DebugFlag flag) {
  return (g_flags.load(std::memory_order_relaxed) & config::bit(flag)) != 0 && log_enabled(config::kLogInfo);
}

void set_log_level(int level) { g_level.store(level, std::memory_order_relaxed); }
int log_level() { return g_level.load(std::memory_order_relaxed); }
void set_log_flags(config::DebugFlags flags) { g_flags.store(flags, std::memory_order_relaxed); }
config::DebugFlags log_flags() { return g_flags.load(std::memory_order_relaxed); }

}  // namespace drover::ctld
