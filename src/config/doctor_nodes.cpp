// Checks of node hardware lines that quietly waste a node: CPUs that
// disagree with the socket/core/thread layout, GPU nodes left with Slurm's
// default of one CPU or one MB of memory, and default memory per CPU that
// does not fit the node.
#include <algorithm>

#include "common/strings.hpp"
#include "common/units.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

bool written(const NodeConfig& node, const char* key) { return node.key_locs.count(key) > 0; }

// Slurm accepts CPUs equal to the sockets, the cores or the threads of the
// node and otherwise resets CPUs from the layout.
void cpu_layout(const Facts& f, std::size_t n, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  if (!written(node, "CPUs")) return;
  if (!written(node, "Sockets") && !written(node, "CoresPerSocket") && !written(node, "ThreadsPerCore")) return;
  const int64_t sockets = int64_t{node.boards} * node.sockets;
  const int64_t cores = sockets * node.cores_per_socket;
  const int64_t threads = cores * node.threads_per_core;
  if (node.cpus == sockets || node.cpus == cores || node.cpus == threads) return;
  nf.add(n, Severity::kWarning, "node-cpu-layout", key_loc(node.key_locs, "CPUs", node.loc), "CPUs",
         "{nodes}: CPUs=" + std::to_string(node.cpus) + " matches neither the sockets (" + std::to_string(sockets) +
             "), the cores (" + std::to_string(cores) + ") nor the threads (" + std::to_string(threads) +
             ") of Sockets=" + std::to_string(node.sockets) + " CoresPerSocket=" +
             std::to_string(node.cores_per_socket) + " ThreadsPerCore=" + std::to_string(node.threads_per_core) +
             "; Slurm ignores it and uses " + std::to_string(threads),
         "set CPUs=" + std::to_string(threads) + " or correct the socket/core/thread counts to the hardware");
}

void gpu_node_cpus(const Facts& f, std::size_t n, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  const int64_t gpus = f.declared(n, "gpu").total;
  if (gpus <= node.cpus) return;
  const std::string unset = written(node, "CPUs") ? "" : " (CPUs= is not set and 1 is the default)";
  nf.add(n, Severity::kWarning, "gpu-node-few-cpus", key_loc(node.key_locs, "CPUs", node.loc), "CPUs",
         "{nodes}: " + std::to_string(gpus) + " GPUs but only " + std::to_string(node.cpus) + " CPU" +
             (node.cpus == 1 ? "" : "s") + unset + ": every job needs a CPU, so at most " +
             std::to_string(node.cpus) + " job" + (node.cpus == 1 ? "" : "s") +
             " at a time can use these GPUs and multi-task GPU jobs never fit",
         "set CPUs= (with Sockets, CoresPerSocket, ThreadsPerCore) to the node's real CPU count");
}

bool memory_consumable(const ClusterConfig& cfg) {
  return to_lower(cfg.select_type_parameters).find("memory") != std::string::npos;
}

void default_memory(const Facts& f, std::size_t n, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  if (node.real_memory_mb > 1 || !memory_consumable(f.cfg)) return;
  nf.add(n, Severity::kWarning, "node-memory-unset", node.loc, "RealMemory",
         "{nodes}: RealMemory is " + std::to_string(node.real_memory_mb) + " MB" +
             (written(node, "RealMemory") ? "" : " (not set; 1 is the default)") +
             " while memory is a consumable resource (SelectTypeParameters=" + f.cfg.select_type_parameters +
             "): a job that asks for any memory can never run there",
         "set RealMemory= to the node's memory in MB");
}

// Default memory per CPU, from a partition's DefMemPerCPU or the global one.
struct DefMem {
  int64_t mb;
  SourceLoc loc;
  std::string where;  // "DefMemPerCPU=4096" or "partition cpu's DefMemPerCPU=4096"
};

std::vector<DefMem> def_mems_of(const Facts& f, std::size_t n) {
  const auto& cfg = f.cfg;
  std::vector<DefMem> out;
  const auto parts = f.partitions_of(n);
  bool global_applies = parts.empty();
  for (std::size_t p : parts) {
    const auto& part = cfg.partitions[p];
    if (!part.def_mem_per_cpu_mb) {
      global_applies = true;
      continue;
    }
    out.push_back({*part.def_mem_per_cpu_mb, key_loc(part.key_locs, "DefMemPerCPU", part.loc),
                   "partition " + part.name + "'s DefMemPerCPU=" + format_memory_mb(*part.def_mem_per_cpu_mb)});
  }
  if (global_applies && cfg.def_mem_per_cpu_mb) {
    out.push_back({*cfg.def_mem_per_cpu_mb, global_loc(cfg, "DefMemPerCPU"),
                   "DefMemPerCPU=" + format_memory_mb(*cfg.def_mem_per_cpu_mb)});
  }
  return out;
}

void def_mem_fit(const Facts& f, std::size_t n, NodeFindings& nf) {
  const auto& node = f.cfg.nodes[n];
  if (node.real_memory_mb <= 1 || node.cpus <= 0 || !memory_consumable(f.cfg)) return;
  for (const auto& dm : def_mems_of(f, n)) {
    if (dm.mb <= 0 || dm.mb * node.cpus <= node.real_memory_mb) continue;
    const int64_t usable = node.real_memory_mb / dm.mb;
    const std::string per_cpu = std::to_string(node.real_memory_mb / node.cpus);
    nf.add(n, Severity::kWarning, "def-mem-exceeds-node", dm.loc, "DefMemPerCPU",
           "{nodes}: " + dm.where + " gives each CPU " + std::to_string(dm.mb) + " MB by default, but the nodes have " +
               std::to_string(node.cpus) + " CPUs and " +
               std::to_string(node.real_memory_mb) + " MB (" + per_cpu + " MB per CPU): " +
               (usable == 0 ? "a job that takes the default memory cannot run there at all"
                            : "jobs that take the default memory can use at most " + std::to_string(usable) + " of the " +
                                  std::to_string(node.cpus) + " CPUs and the rest stay idle"),
           "lower DefMemPerCPU to at most " + per_cpu + " (RealMemory/CPUs), or give these nodes' partition its own "
           "smaller DefMemPerCPU")
        .related.push_back(node.loc);
  }
}

// With memory consumable and no DefMemPer* for a partition, a job that
// gives no --mem is given all the memory of each node it runs on (Slurm's
// behaviour): one small job then holds a whole node, GPUs and all.
void no_default_memory(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  if (!memory_consumable(cfg) || cfg.partitions.empty()) return;
  if (cfg.def_mem_per_cpu_mb || cfg.def_mem_per_node_mb) return;
  // A default the parser rejected is the parser's error, not a missing default.
  if (global_written(cfg, "DefMemPerCPU") || global_written(cfg, "DefMemPerNode")) return;
  for (const auto& d : cfg.diags.items()) {
    if (d.severity == Severity::kError && (d.key == "DefMemPerCPU" || d.key == "DefMemPerNode")) return;
  }
  // bare: no default at all; gpu_only: a DefMemPerGPU (its own or the
  // global one) that covers only the jobs that ask for GPUs.
  std::vector<std::string> bare, gpu_only;
  for (const auto& part : cfg.partitions) {
    if (part.def_mem_per_cpu_mb || part.def_mem_per_node_mb) continue;
    (part.def_mem_per_gpu_mb || cfg.def_mem_per_gpu_mb ? gpu_only : bare).push_back(part.name);
  }
  if (bare.empty() && gpu_only.empty()) return;
  // The smallest RealMemory/CPUs of any node: a default every node can give.
  int64_t per_cpu = 0;
  for (const auto& node : cfg.nodes) {
    if (node.cpus <= 0 || node.real_memory_mb <= 1) continue;
    int64_t v = node.real_memory_mb / node.cpus;
    per_cpu = per_cpu == 0 ? v : std::min(per_cpu, v);
  }
  const std::string fix = "set a default, e.g. DefMemPerCPU=" + std::to_string(std::max<int64_t>(per_cpu, 1)) +
                          " (the smallest RealMemory/CPUs of the nodes), and let jobs ask for more with --mem";
  auto named = [&](const std::vector<std::string>& parts) {
    return parts.size() == cfg.partitions.size() ? std::string("every partition")
                                                 : "partition" + std::string(parts.size() == 1 ? " " : "s ") + join(parts, ", ");
  };
  auto warn = [&](const std::vector<std::string>& parts, const std::string& which_default, const std::string& who,
                  const std::string& cost) {
    if (parts.empty()) return;
    out.add(Severity::kWarning, "no-default-memory", global_loc(cfg, "SelectTypeParameters"), "DefMemPerCPU",
            "memory is a consumable resource (SelectTypeParameters=" + cfg.select_type_parameters + ") but " +
                which_default + " applies to " + named(parts) + ": " + who +
                " is given all the memory of each node it runs on, so no other job can share those nodes (" + cost +
                ")",
            fix);
  };
  warn(bare, "no DefMemPerCPU or DefMemPerNode", "a job that gives no --mem", "a one-GPU job holds the whole GPU node");
  warn(gpu_only, "only DefMemPerGPU", "a job there that asks for no GPU and gives no --mem", "their GPUs stay idle");
}

}  // namespace

void check_nodes(const Facts& f, Diagnostics& out) {
  no_default_memory(f, out);
  NodeFindings nf;
  for (std::size_t n : f.unique_nodes) {
    if (f.node_line_unreadable(n)) continue;
    cpu_layout(f, n, nf);
    gpu_node_cpus(f, n, nf);
    default_memory(f, n, nf);
    def_mem_fit(f, n, nf);
  }
  nf.flush(f.cfg, out);
}

}  // namespace drover::config::doctor
