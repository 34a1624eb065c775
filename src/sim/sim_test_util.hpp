// Test helpers (header-only, for *_test.cpp): a core cluster from
// slurm.conf / gres.conf / qos.conf text, and a trace from native CSV text.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "config/core_cluster.hpp"
#include "config/model.hpp"
#include "config/parse.hpp"
#include "sim/gen.hpp"
#include "sim/trace.hpp"

namespace drover::sim::testing {

inline core::Cluster cluster_from(const std::string& slurm_conf, const std::string& gres_conf = "",
                                  const std::string& qos_conf = "") {
  config::ClusterConfig cfg = config::parse_slurm_conf_text(
      "ClusterName=t\nSlurmctldHost=head\n" + slurm_conf, "slurm.conf", config::ParseOptions{false, 0, 0});
  if (!gres_conf.empty()) config::parse_gres_conf_text(gres_conf, "gres.conf", cfg);
  if (!qos_conf.empty()) config::parse_qos_conf_text(qos_conf, "qos.conf", cfg);
  for (const auto& d : cfg.diags.items()) {
    EXPECT_NE(d.severity, Severity::kError) << d.format();
  }
  auto c = config::build_core_cluster(cfg);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? std::move(*c) : core::Cluster{};
}

// A configuration of the source tree (e.g. "examples/seed/slurm.conf", with
// the gres.conf and qos.conf beside it).
inline core::Cluster cluster_at(const std::string& rel) {
  auto cfg = config::load_config({std::string(DROVER_SOURCE_DIR) + "/" + rel, {}, {}});
  EXPECT_TRUE(cfg.ok()) << (cfg.ok() ? "" : cfg.error().message);
  if (!cfg.ok()) return {};
  auto c = config::build_core_cluster(*cfg);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? std::move(*c) : core::Cluster{};
}

// CSV text (docs/sim.md's columns) with the default trace options applied.
inline Trace trace_from(const std::string& csv, const TraceOptions& opts = {}) {
  auto t = read_native_csv(csv, "t.csv");
  EXPECT_TRUE(t.ok()) << (t.ok() ? "" : t.error().message);
  if (!t.ok()) return {};
  auto st = apply_trace_options(*t, opts);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return std::move(*t);
}

// Four single-CPU nodes in one partition; `sched` is the scheduling lines.
inline std::string four_nodes(const std::string& sched) {
  return sched +
         "\nSelectTypeParameters=CR_Core\n"
         "NodeName=n[1-4] CPUs=1 Sockets=1 CoresPerSocket=1 ThreadsPerCore=1 RealMemory=1000\n"
         "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n";
}

// A generated workload (drover sim gen) for the cluster, from 12 users.
inline Trace generated(const core::Cluster& c, int64_t jobs, double rate_per_hour, uint64_t seed,
                       double runtime_scale = 1.0) {
  GenOptions o;
  o.runtime_scale = runtime_scale;
  o.jobs = jobs;
  o.rate_per_hour = rate_per_hour;
  o.seed = seed;
  o.users = 12;
  auto targets = targets_for(c, o);
  EXPECT_TRUE(targets.ok()) << (targets.ok() ? "" : targets.error().message);
  Trace t;
  if (targets.ok()) t.jobs = generate(o, *targets);
  return t;
}

inline const char* kEasy =
    "SchedulerType=sched/backfill\nSchedulerParameters=bf_reserve_depth=1,bf_interval=0,bf_resolution=1\n"
    "PriorityType=priority/basic";

}  // namespace drover::sim::testing
