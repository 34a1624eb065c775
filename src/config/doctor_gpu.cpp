// Checks of how GPU nodes are laid out: one model per node (seed H2), models
// told apart by Feature (H1), GPU nodes kept out of reach of CPU jobs,
// partitions split by workload (4.1), and GPUs shared between jobs without
// isolation (pitfall "GPU memory not isolated").
#include <algorithm>

#include "common/strings.hpp"
#include "config/doctor_internal.hpp"

namespace drover::config::doctor {
namespace {

void mixed_models_on_node(const Facts& f, Diagnostics& out) {
  NodeFindings nf;
  for (std::size_t n : f.unique_nodes) {
    const auto models = f.gpu_models(n);
    if (models.size() < 2) continue;
    const auto& node = f.cfg.nodes[n];
    nf.add(n, Severity::kWarning, "node-mixed-gpu-models", key_loc(node.key_locs, "Gres", node.loc), "Gres",
           "{nodes}: " + std::to_string(models.size()) + " GPU models on one node (" +
               join(std::vector<std::string>(models.begin(), models.end()), ", ") +
               "); one driver must then serve both generations, SXM Fabric Manager matches only one, and a "
               "--constraint on the node's features cannot pick a model (seed 5.2: one model per node)",
           "put each model on its own nodes, mixing models across nodes rather than within one");
  }
  nf.flush(f.cfg, out);
}

int64_t max_weight(const Facts& f, const std::vector<std::size_t>& nodes) {
  int64_t w = 0;
  for (std::size_t n : nodes) w = std::max<int64_t>(w, f.cfg.nodes[n].weight);
  return w;
}

int64_t min_weight(const Facts& f, const std::vector<std::size_t>& nodes) {
  int64_t w = INT64_MAX;
  for (std::size_t n : nodes) w = std::min<int64_t>(w, f.cfg.nodes[n].weight);
  return w;
}

std::vector<SourceLoc> node_line_locs(const Facts& f, const std::vector<std::size_t>& nodes) {
  std::vector<SourceLoc> out;
  for (std::size_t n : nodes) {
    const SourceLoc& loc = f.cfg.nodes[n].loc;
    bool seen = std::any_of(out.begin(), out.end(), [&](const SourceLoc& s) { return s.str() == loc.str(); });
    if (!seen) out.push_back(loc);
  }
  return out;
}

// CPU-only jobs go to the lowest Weight first; GPU nodes in the default
// partition are safe from them only when every GPU node weighs more than
// every CPU node there.
void gpu_nodes_in_default(const Facts& f, Diagnostics& out) {
  const PartitionConfig* p = f.cfg.default_partition();
  if (!p) return;
  std::vector<std::size_t> gpu, cpu;
  for (std::size_t n : f.partition_nodes(*p)) (f.is_gpu_node(n) ? gpu : cpu).push_back(n);
  if (gpu.empty()) return;
  const SourceLoc at = key_loc(p->key_locs, "Nodes", p->loc);
  if (cpu.empty()) {
    bool cpu_nodes_elsewhere = std::any_of(f.unique_nodes.begin(), f.unique_nodes.end(),
                                           [&](std::size_t n) { return !f.is_gpu_node(n); });
    if (!cpu_nodes_elsewhere) return;
    out.add(Severity::kWarning, "gpu-nodes-in-default-partition", at, "Default",
            "the default partition " + p->name + " holds only GPU nodes (" + nodes_str(f.cfg, gpu) +
                "): CPU-only jobs submitted without --partition run there and hold cores and memory the GPUs need",
            "make a CPU partition the default (Default=YES) and keep " + p->name + " for GPU work");
    return;
  }
  const int64_t gpu_min = min_weight(f, gpu), cpu_max = max_weight(f, cpu);
  if (gpu_min > cpu_max) return;
  auto& d = out.add(Severity::kWarning, "gpu-nodes-in-default-partition", at, "Nodes",
                    "the default partition " + p->name + " holds GPU nodes " + nodes_str(f.cfg, gpu) +
                        " whose Weight (lowest " + std::to_string(gpu_min) + ") is not above its CPU nodes' (" +
                        nodes_str(f.cfg, cpu) + ", highest " + std::to_string(cpu_max) +
                        "): CPU-only jobs submitted without --partition can fill the GPU nodes' cores and memory "
                        "and leave their GPUs idle",
                    "give the GPU nodes a higher Weight than the CPU nodes (e.g. Weight=" +
                        std::to_string(std::max<int64_t>(100, cpu_max + 1)) +
                        " on the GPU node lines; the lowest Weight is used first), or take them out of " + p->name);
  d.related = node_line_locs(f, gpu);
}

bool exclusive(const PartitionConfig& p) { return istarts_with(p.oversubscribe, "EXCLUSIVE") || p.exclusive_user; }

// GPUs shared between jobs (MPS, shards) share their memory: co-located jobs
// can OOM each other unless the partition keeps jobs apart.
void shared_gpus(const Facts& f, Diagnostics& out) {
  for (const auto& p : f.cfg.partitions) {
    if (exclusive(p)) continue;
    std::vector<std::size_t> sharing;
    std::set<std::string> kinds;
    for (std::size_t n : f.partition_nodes(p)) {
      for (const char* kind : {"mps", "shard"}) {
        if (f.declared(n, kind).total == 0) continue;
        kinds.insert(kind);
        if (sharing.empty() || sharing.back() != n) sharing.push_back(n);
      }
    }
    if (sharing.empty()) continue;
    out.add(Severity::kWarning, "gpu-partition-not-isolated", key_loc(p.key_locs, "Nodes", p.loc), "OverSubscribe",
            "partition " + p.name + " lets jobs share GPUs (gres " +
                join(std::vector<std::string>(kinds.begin(), kinds.end()), ", ") + " on " +
                nodes_str(f.cfg, sharing) + ") with neither OverSubscribe=EXCLUSIVE nor ExclusiveUser=YES: jobs "
                "on one GPU share its memory and can OOM each other (seed pitfall: GPU memory not isolated)",
            "give jobs whole GPUs (--gres=gpu:N, bound through gres.conf File=) or MIG slices as gres types, or "
            "set OverSubscribe=EXCLUSIVE on " + p.name);
  }
}

// A feature that every node of `model` has and no node of another model has.
bool feature_tells_apart(const Facts& f, const std::map<std::string, std::vector<std::size_t>>& by_model,
                         const std::string& model) {
  const auto& own = by_model.at(model);
  for (const auto& feature : f.cfg.nodes[own.front()].features) {
    auto has = [&](std::size_t n) {
      const auto& fs = f.cfg.nodes[n].features;
      return std::any_of(fs.begin(), fs.end(), [&](const std::string& x) { return iequals(x, feature); });
    };
    bool all_own = std::all_of(own.begin(), own.end(), has);
    bool none_other = std::all_of(by_model.begin(), by_model.end(), [&](const auto& kv) {
      return kv.first == model || std::none_of(kv.second.begin(), kv.second.end(), has);
    });
    if (all_own && none_other) return true;
  }
  return false;
}

void models_without_features(const Facts& f, Diagnostics& out) {
  for (const auto& p : f.cfg.partitions) {
    std::map<std::string, std::vector<std::size_t>> by_model;
    for (std::size_t n : f.partition_nodes(p)) {
      const auto models = f.gpu_models(n);
      if (models.size() == 1) by_model[*models.begin()].push_back(n);
    }
    if (by_model.size() < 2) continue;
    std::vector<std::string> parts, fixes;
    for (const auto& [model, nodes] : by_model) {
      parts.push_back(model + " (" + nodes_str(f.cfg, nodes) + ")");
      if (!feature_tells_apart(f, by_model, model)) fixes.push_back("Feature=" + model + " on " + nodes_str(f.cfg, nodes));
    }
    if (fixes.empty()) continue;
    out.add(Severity::kWarning, "partition-gpu-models-no-feature", key_loc(p.key_locs, "Nodes", p.loc), "Nodes",
            "partition " + p.name + " mixes GPU models " + join(parts, " and ") +
                " and no node Feature tells them apart: jobs cannot choose a model with --constraint "
                "(seed 5.1: --constraint=h100)",
            "add the model as a node feature: " + join(fixes, ", "));
  }
}

// Seed 4.1: partitions isolate workloads physically. With GPU and CPU nodes
// both present, some partition should hold only one kind. (A partition that
// mixes both on purpose, as in the seed's shape B, is fine beside others.)
void partitions_by_workload(const Facts& f, Diagnostics& out) {
  const auto& cfg = f.cfg;
  bool any_gpu = false, any_cpu = false;
  for (std::size_t n : f.unique_nodes) (f.is_gpu_node(n) ? any_gpu : any_cpu) = true;
  if (!any_gpu || !any_cpu || cfg.partitions.empty()) return;
  auto gpu = [&](std::size_t n) { return f.is_gpu_node(n); };
  for (const auto& p : cfg.partitions) {
    const auto nodes = f.partition_nodes(p);
    if (nodes.empty()) continue;
    if (std::all_of(nodes.begin(), nodes.end(), gpu) || std::none_of(nodes.begin(), nodes.end(), gpu)) return;
  }
  out.add(Severity::kWarning, "partitions-not-by-workload", cfg.partitions.front().loc, "PartitionName",
          "every partition mixes GPU and CPU nodes: CPU jobs can hold the GPU nodes while GPU jobs wait "
          "(seed 4.1: partitions by workload isolate resources physically)",
          "split partitions by workload as the seed does: training (GPU nodes), compute (CPU nodes), "
          "interactive, highmem (fat nodes)");
}

}  // namespace

void check_gpu_layout(const Facts& f, Diagnostics& out) {
  mixed_models_on_node(f, out);
  gpu_nodes_in_default(f, out);
  shared_gpus(f, out);
  models_without_features(f, out);
  partitions_by_workload(f, out);
}

}  // namespace drover::config::doctor
