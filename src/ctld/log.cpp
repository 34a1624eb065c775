#include "ctld/log.hpp"

#include <sys/time.h>

#include <cstdio>
#include <ctime>
#include <mutex>

namespace drover::ctld {

void log_line(const std::string& message) {
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

}  // namespace drover::ctld
