#include "agent/node_check.hpp"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>

#include "common/strings.hpp"

namespace drover::agent {
namespace {

std::string lower_than(const std::string& what, int64_t found, int64_t configured) {
  return what + " (reported:" + std::to_string(found) + " < configured:" + std::to_string(configured) + ")";
}

// A configured type matches a detected one when it is contained in it, case
// aside ("h100" matches "h100_80gb_hbm3"), as gres.conf Type= is matched.
bool type_matches(const std::string& configured, const std::string& detected) {
  return to_lower(detected).find(to_lower(configured)) != std::string::npos;
}

}  // namespace

std::string NodeCheck::drain_reason() const { return join(problems, ", "); }

NodeCheck compare_with_config(const hw::NodeHardware& found, const config::NodeConfig& node) {
  NodeCheck c;
  const int64_t found_sct = static_cast<int64_t>(found.sockets) * found.cores_per_socket * found.threads_per_core;
  const int64_t conf_sct = static_cast<int64_t>(node.boards) * node.sockets * node.cores_per_socket * node.threads_per_core;
  if (found_sct < conf_sct) c.problems.push_back(lower_than("Low socket*core*thread count", found_sct, conf_sct));
  if (found.cpus < node.cpus) c.problems.push_back(lower_than("Low CPUs", found.cpus, node.cpus));
  if (found.real_memory_mb < node.real_memory_mb) {
    c.problems.push_back("Low RealMemory (reported:" + std::to_string(found.real_memory_mb) +
                         " < 100.00% of configured:" + std::to_string(node.real_memory_mb) + ")");
  }
  // Slurm's reason is "Low TmpDisk"; Drover names the two sizes (MB), as for CPUs.
  if (found.tmp_disk_mb < node.tmp_disk_mb) c.problems.push_back(lower_than("Low TmpDisk", found.tmp_disk_mb, node.tmp_disk_mb));
  int64_t configured_gpus = 0;
  for (const auto& g : node.gres) {
    if (g.name == "gpu") configured_gpus += g.count;
  }
  const int64_t found_gpus = static_cast<int64_t>(found.gpus.size());
  if (found_gpus < configured_gpus) {
    c.problems.push_back("gres/gpu count reported lower than configured (" + std::to_string(found_gpus) + " < " +
                         std::to_string(configured_gpus) + ")");
    return c;
  }
  for (const auto& g : node.gres) {
    if (g.name != "gpu" || g.type.empty()) continue;
    int64_t typed = std::count_if(found.gpus.begin(), found.gpus.end(),
                                  [&](const hw::GpuInfo& d) { return type_matches(g.type, d.type); });
    if (typed < g.count) {
      c.problems.push_back("gres/gpu:" + g.type + " count reported lower than configured (" + std::to_string(typed) +
                           " < " + std::to_string(g.count) + ")");
    }
  }
  return c;
}

std::vector<hw::GpuInfo> gpus_from_gres_conf(const config::ClusterConfig& cfg, const std::string& node_name,
                                             std::vector<std::string>* notes) {
  std::vector<hw::GpuInfo> out;
  for (const auto& line : cfg.gres_lines) {
    if (line.name != "gpu") continue;
    if (!line.nodes.empty() && std::find(line.nodes.begin(), line.nodes.end(), node_name) == line.nodes.end()) continue;
    auto add = [&](const std::string& file) {
      hw::GpuInfo g;
      g.index = static_cast<int>(out.size());
      g.type = line.type;
      g.name = line.type.empty() ? "gpu (gres.conf)" : line.type + " (gres.conf)";
      g.device_file = file;
      g.source = "gres.conf";
      struct stat st {};
      if (!file.empty() && stat(file.c_str(), &st) != 0) {
        if (notes) {
          notes->push_back((line.loc.known() ? line.loc.str() + ": " : std::string()) + "gres.conf names " + file +
                           " for " + node_name + ", which does not exist on this node");
        }
        return;
      }
      if (!file.empty() && S_ISCHR(st.st_mode)) g.minor = static_cast<int>(minor(st.st_rdev));
      out.push_back(std::move(g));
    };
    if (!line.files.empty()) {
      for (const auto& f : line.files) add(f);
    } else {
      for (int64_t i = 0; i < line.count.value_or(1); ++i) add("");
    }
  }
  return out;
}

}  // namespace drover::agent
