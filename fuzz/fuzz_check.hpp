// Shared by the fuzz targets: a failed property stops the run with a message
// naming the target, the property and the text involved, so libFuzzer saves
// the input as a crash.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace drover::fuzz {

inline void check(bool ok, const char* target, const char* what, const std::string& text) {
  if (ok) return;
  std::fprintf(stderr, "%s: %s: \"%s\"\n", target, what, text.c_str());
  std::abort();
}

}  // namespace drover::fuzz
