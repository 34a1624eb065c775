// The slurm.conf parser: any text loads without crashing, leaking or
// undefined behaviour; problems become diagnostics.
//
// Entry point: config::parse_slurm_conf_text (config/parse.hpp) when the
// parser provides it, with Include lines not followed, so the fuzzer touches
// no file. Until then: config::load_config on a temporary slurm.conf in a
// private directory (no gres.conf or qos.conf beside it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unistd.h>

#if __has_include("config/parse.hpp")
#include "config/parse.hpp"
#define DROVER_FUZZ_TEXT_ENTRY 1
#else
#include "config/model.hpp"
#define DROVER_FUZZ_TEXT_ENTRY 0
#endif

namespace {

#if !DROVER_FUZZ_TEXT_ENTRY
const std::string& temp_conf_path() {
  static const std::string path = [] {
    char dir[] = "/tmp/drover-fuzz-XXXXXX";
    if (!mkdtemp(dir)) std::abort();
    return std::string(dir) + "/slurm.conf";
  }();
  return path;
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
#if DROVER_FUZZ_TEXT_ENTRY
  drover::config::ParseOptions opts;
  opts.follow_includes = false;
  auto cfg = drover::config::parse_slurm_conf_text(text, "fuzz/slurm.conf", opts);
  (void)cfg.diags.items().size();
#else
  const std::string& path = temp_conf_path();
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  std::fwrite(text.data(), 1, text.size(), f);
  std::fclose(f);
  auto cfg = drover::config::load_config({path, "", ""});
  if (cfg) (void)cfg->diags.items().size();
#endif
  return 0;
}
