// The slurm.conf parser: any text parses without crashing, leaking or
// undefined behaviour; every problem becomes a diagnostic. Include lines are
// not followed, so the fuzzer touches no file.
#include <cstdint>
#include <string_view>

#include "config/parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  drover::config::ParseOptions opts;
  opts.follow_includes = false;
  opts.max_nodes = 4096;
  opts.max_partition_members = 16384;
  drover::config::ClusterConfig cfg = drover::config::parse_slurm_conf_text(text, "fuzz/slurm.conf", opts);
  for (const auto& d : cfg.diags.items()) (void)d.format();
  return 0;
}
