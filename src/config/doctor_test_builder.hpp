// Test helper for the doctor's unit tests: builds ClusterConfig values
// directly (no parser involved), starting from a small clean cluster that has
// no findings at all, so that each test adds exactly one mistake.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "config/model.hpp"

namespace drover::config::testing {

inline SourceLoc at(const std::string& file, int line, int column = 0) { return SourceLoc{file, line, column}; }

// "gpu", 1, 2, 2 -> gpu01 gpu02
inline std::vector<std::string> names(const std::string& prefix, int first, int last, int width = 2) {
  std::vector<std::string> out;
  for (int i = first; i <= last; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%0*d", width, i);
    out.push_back(prefix + buf);
  }
  return out;
}

class ConfigBuilder {
 public:
  using NodeEdit = std::function<void(NodeConfig&)>;

  // The clean baseline:
  //   slurm.conf:2  GresTypes=gpu
  //   slurm.conf:3  PriorityType=priority/multifactor (Age 1000, Fairshare 10000, QOS 10000)
  //   slurm.conf:4  DefMemPerCPU=1000
  //   slurm.conf:5  NodeName=gpu[01-02] CPUs=32 RealMemory=256000 Sockets=2 CoresPerSocket=16 Gres=gpu:4
  //   slurm.conf:6  NodeName=cpu[01-02] CPUs=32 RealMemory=128000 Sockets=2 CoresPerSocket=16
  //   slurm.conf:8  PartitionName=gpu Nodes=gpu[01-02] MaxTime=2-00:00:00
  //   slurm.conf:9  PartitionName=cpu Nodes=cpu[01-02] Default=YES MaxTime=2-00:00:00
  //   gres.conf:1   NodeName=gpu[01-02] Name=gpu File=/dev/nvidia[0-3]
  //   qos.conf:1    Name=normal Priority=100 GrpTRES=gres/gpu=4
  static ClusterConfig clean() {
    ConfigBuilder b;
    b.global("GresTypes", "gpu", 2);
    b.cfg.gres_types = {"gpu"};
    b.global("PriorityType", "priority/multifactor", 3);
    b.cfg.priority_type = "priority/multifactor";
    b.cfg.priority_weight_age = 1000;
    b.cfg.priority_weight_fairshare = 10000;
    b.cfg.priority_weight_qos = 10000;
    b.global("DefMemPerCPU", "1000", 4);
    b.cfg.def_mem_per_cpu_mb = 1000;
    b.nodes(names("gpu", 1, 2), 5, [](NodeConfig& n) { n.gres = {{"gpu", "", 4}}; });
    b.nodes(names("cpu", 1, 2), 6, [](NodeConfig& n) { n.real_memory_mb = 128000; });
    b.partition("gpu", names("gpu", 1, 2), 8);
    b.partition("cpu", names("cpu", 1, 2), 9).is_default = true;
    b.gres_line(names("gpu", 1, 2), "gpu", "", {"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3"}, 1);
    QosConfig& normal = b.qos("normal", 1);
    normal.grp_tres = {{"gres/gpu", 4}};
    normal.priority = 100;
    return b.cfg;
  }

  ConfigBuilder() {
    cfg.slurm_conf_path = "slurm.conf";
    cfg.gres_conf_path = "gres.conf";
    cfg.qos_conf_path = "qos.conf";
  }

  ClusterConfig cfg;

  void global(const std::string& key, const std::string& value, int line) {
    cfg.globals_written[key] = {value, at("slurm.conf", line)};
  }

  // One NodeName line defining `names`, with every hardware key written.
  void nodes(const std::vector<std::string>& node_names, int line, const NodeEdit& edit = {}) {
    for (const auto& name : node_names) {
      NodeConfig n;
      n.name = name;
      n.cpus = 32;
      n.sockets = 2;
      n.cores_per_socket = 16;
      n.real_memory_mb = 256000;
      n.loc = at("slurm.conf", line);
      n.key_locs = {{"NodeName", at("slurm.conf", line, 1)},    {"CPUs", at("slurm.conf", line, 21)},
                    {"RealMemory", at("slurm.conf", line, 29)}, {"Sockets", at("slurm.conf", line, 47)},
                    {"CoresPerSocket", at("slurm.conf", line, 57)}, {"Gres", at("slurm.conf", line, 75)}};
      if (edit) edit(n);
      cfg.nodes.push_back(std::move(n));
    }
  }

  PartitionConfig& partition(const std::string& name, const std::vector<std::string>& node_names, int line) {
    PartitionConfig p;
    p.name = name;
    p.nodes = node_names;
    p.nodes_expr = "(test)";
    p.max_time = 2 * 86400;
    p.loc = at("slurm.conf", line);
    p.key_locs = {{"Nodes", at("slurm.conf", line, 20)}, {"Default", at("slurm.conf", line, 40)},
                  {"MaxTime", at("slurm.conf", line, 52)}};
    cfg.partitions.push_back(std::move(p));
    return cfg.partitions.back();
  }

  GresLine& gres_line(const std::vector<std::string>& node_names, const std::string& name, const std::string& type,
                      const std::vector<std::string>& files, int line) {
    GresLine g;
    g.node_expr = node_names.empty() ? "" : "(test)";
    g.nodes = node_names;
    g.name = name;
    g.type = type;
    g.files = files;
    g.loc = at("gres.conf", line);
    g.key_locs = {{"NodeName", at("gres.conf", line, 1)}, {"Name", at("gres.conf", line, 22)},
                  {"File", at("gres.conf", line, 31)}};
    cfg.gres_lines.push_back(std::move(g));
    return cfg.gres_lines.back();
  }

  QosConfig& qos(const std::string& name, int line) {
    QosConfig q;
    q.name = name;
    q.loc = at("qos.conf", line);
    q.key_locs = {{"Name", at("qos.conf", line, 1)},     {"Priority", at("qos.conf", line, 13)},
                  {"GrpTRES", at("qos.conf", line, 27)}, {"MaxWall", at("qos.conf", line, 45)},
                  {"MaxTRESPerJob", at("qos.conf", line, 60)}, {"MaxTRESPerNode", at("qos.conf", line, 80)}};
    cfg.qos.push_back(std::move(q));
    return cfg.qos.back();
  }
};

}  // namespace drover::config::testing
