// slurm.conf parser: every kind of key, defaults, DEFAULT lines,
// continuations, case-insensitivity, Include, and every diagnostic with its
// exact text (golden files of `drover config check` depend on them).
#include <functional>

#include <gtest/gtest.h>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/parse.hpp"
#include "config/test_files.hpp"

namespace drover::config {
namespace {

ClusterConfig parse(std::string_view text) {
  ParseOptions opts;
  opts.follow_includes = false;
  return parse_slurm_conf_text(text, "slurm.conf", opts);
}

std::vector<std::string> formatted(const Diagnostics& diags) {
  std::vector<std::string> out;
  for (const auto& d : diags.items()) out.push_back(d.format());
  return out;
}

// ---------------------------------------------------------------- values

struct ValueCase {
  const char* name;
  const char* text;
  std::function<std::string(const ClusterConfig&)> get;
  std::string want;
};

class SlurmConfValues : public ::testing::TestWithParam<ValueCase> {};

TEST_P(SlurmConfValues, ParsesWithoutFindings) {
  const auto& c = GetParam();
  ClusterConfig cfg = parse(c.text);
  EXPECT_EQ(formatted(cfg.diags), std::vector<std::string>{}) << c.text;
  EXPECT_EQ(c.get(cfg), c.want) << c.text;
}

using C = const ClusterConfig&;
const NodeConfig& node(C c, const char* name) {
  static const NodeConfig kMissing{};
  const auto* n = c.find_node(name);
  return n ? *n : kMissing;
}
const PartitionConfig& part(C c, const char* name) {
  static const PartitionConfig kMissing{};
  const auto* p = c.find_partition(name);
  return p ? *p : kMissing;
}

INSTANTIATE_TEST_SUITE_P(
    Globals, SlurmConfValues,
    ::testing::Values(
        ValueCase{"cluster_name", "ClusterName=anchor", [](C c) { return c.cluster_name; }, "anchor"},
        ValueCase{"keys_case_insensitive", "clustername=a SLURMDPORT=7000",
                  [](C c) { return c.cluster_name + " " + std::to_string(c.slurmd_port); }, "a 7000"},
        ValueCase{"ctld_hosts_repeat", "SlurmctldHost=ctl1(10.0.0.1)\nSlurmctldHost=ctl2\nControlMachine=old",
                  [](C c) { return join(c.slurmctld_hosts, " "); }, "ctl1(10.0.0.1) ctl2 old"},
        ValueCase{"ctld_port_range", "SlurmctldPort=6817-6820", [](C c) { return std::to_string(c.slurmctld_port); },
                  "6817"},
        ValueCase{"default_ports", "", [](C c) { return std::to_string(c.slurmctld_port) + "/" + std::to_string(c.slurmd_port); },
                  "6817/6818"},
        ValueCase{"select_params_canonical", "SelectTypeParameters=cr_core_memory,CR_ONE_TASK_PER_CORE",
                  [](C c) { return c.select_type_parameters; }, "CR_Core_Memory,CR_ONE_TASK_PER_CORE"},
        ValueCase{"scheduler_type", "SchedulerType=SCHED/BUILTIN", [](C c) { return c.scheduler_type; }, "sched/builtin"},
        ValueCase{"licenses", "Licenses=fsbw:20,matlab,,ansys*3",
                  [](C c) {
                    std::string out;
                    for (const auto& [name, n] : c.licenses) out += name + "=" + std::to_string(n) + " ";
                    return out;
                  },
                  "ansys=3 fsbw=20 matlab=1 "},
        ValueCase{"priority_type", "PriorityType=priority/multifactor", [](C c) { return c.priority_type; },
                  "priority/multifactor"},
        ValueCase{"weights", "PriorityWeightAge=1000 PriorityWeightFairShare=10000 PriorityWeightJobSize=3 "
                             "PriorityWeightPartition=4 PriorityWeightQOS=5",
                  [](C c) {
                    return std::to_string(c.priority_weight_age) + "," + std::to_string(c.priority_weight_fairshare) +
                           "," + std::to_string(c.priority_weight_job_size) + "," +
                           std::to_string(c.priority_weight_partition) + "," + std::to_string(c.priority_weight_qos);
                  },
                  "1000,10000,3,4,5"},
        ValueCase{"weight_tres", "PriorityWeightTRES=CPU=1000,GRES/gpu=5000,Mem=0.5",
                  [](C c) {
                    std::string out;
                    for (const auto& [k, v] : c.priority_weight_tres) out += k + "=" + std::to_string(v) + " ";
                    return out;
                  },
                  "cpu=1000.000000 gres/gpu=5000.000000 mem=0.500000 "},
        ValueCase{"decay_and_max_age", "PriorityDecayHalfLife=7-0 PriorityMaxAge=1-12:00:00",
                  [](C c) { return std::to_string(c.priority_decay_half_life) + " " + std::to_string(c.priority_max_age); },
                  "604800 129600"},
        ValueCase{"favor_small", "PriorityFavorSmall=yes", [](C c) { return std::to_string(c.priority_favor_small); }, "1"},
        ValueCase{"gres_types", "GresTypes=gpu,mps", [](C c) { return join(c.gres_types, "|"); }, "gpu|mps"},
        ValueCase{"acct_tres", "AccountingStorageTRES=GRES/gpu,gres/gpu:h100,License/fsbw",
                  [](C c) { return join(c.accounting_storage_tres, "|"); }, "gres/gpu|gres/gpu:h100|license/fsbw"},
        ValueCase{"enforce_part_limits", "EnforcePartLimits=all", [](C c) { return c.enforce_part_limits; }, "ALL"},
        ValueCase{"counts", "MaxJobCount=50000 MaxArraySize=10001 MinJobAge=60 KillWait=10",
                  [](C c) {
                    return std::to_string(c.max_job_count) + "," + std::to_string(c.max_array_size) + "," +
                           std::to_string(c.min_job_age) + "," + std::to_string(c.kill_wait);
                  },
                  "50000,10001,60,10"},
        ValueCase{"memory_defaults", "DefMemPerCPU=4096 DefMemPerGPU=64G MaxMemPerCPU=8G DefMemPerNode=1T",
                  [](C c) {
                    return std::to_string(*c.def_mem_per_cpu_mb) + "," + std::to_string(*c.def_mem_per_gpu_mb) + "," +
                           std::to_string(*c.max_mem_per_cpu_mb) + "," + std::to_string(*c.def_mem_per_node_mb);
                  },
                  "4096,65536,8192,1048576"},
        ValueCase{"memory_unset_by_default", "", [](C c) { return std::to_string(c.def_mem_per_cpu_mb.has_value()); }, "0"},
        ValueCase{"sched_defaults", "",
                  [](C c) {
                    const auto& s = c.sched;
                    return std::to_string(s.bf_interval) + "," + std::to_string(s.bf_max_job_test) + "," +
                           std::to_string(s.bf_resolution) + "," + std::to_string(s.bf_window_minutes) + "," +
                           std::to_string(s.bf_reserve_depth) + "," + std::to_string(s.bf_continue);
                  },
                  "30,-1,60,1440,-1,0"},
        ValueCase{"sched_items", "SchedulerParameters=bf_interval=0,bf_reserve_depth=1,bf_continue,bf_window=2880,"
                                 "bf_max_job_test=UNLIMITED,default_queue_depth=500,bf_busy_nodes",
                  [](C c) {
                    const auto& s = c.sched;
                    return std::to_string(s.bf_interval) + "," + std::to_string(s.bf_reserve_depth) + "," +
                           std::to_string(s.bf_continue) + "," + std::to_string(s.bf_window_minutes) + "," +
                           std::to_string(s.bf_max_job_test) + "," + std::to_string(s.default_queue_depth) + "," +
                           std::to_string(s.raw.count("bf_busy_nodes"));
                  },
                  "0,1,1,2880,-1,500,1"},
        ValueCase{"continuation_joins_words", "ClusterName=a \\\n  SlurmUser=slurm",
                  [](C c) { return c.cluster_name + "/" + c.slurm_user; }, "a/slurm"},
        ValueCase{"quoted_value", "ClusterName=\"my cluster\"", [](C c) { return c.cluster_name; }, "my cluster"},
        ValueCase{"globals_written", "ClusterName=x\n\nSlurmUser=slurm",
                  [](C c) {
                    const auto& [v, loc] = c.globals_written.at("SlurmUser");
                    return v + "@" + loc.str();
                  },
                  "slurm@slurm.conf:3:1"}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Nodes, SlurmConfValues,
    ::testing::Values(
        ValueCase{"seed_line",
                  "NodeName=gpu[01-32] Gres=gpu:8 CPUs=128 RealMemory=1000000 Sockets=2 CoresPerSocket=64 ThreadsPerCore=1",
                  [](C c) {
                    const auto& n = node(c, "gpu32");
                    return std::to_string(c.nodes.size()) + " " + n.name + " " + std::to_string(n.cpus) + " " +
                           std::to_string(n.real_memory_mb) + " " + n.gres.at(0).str() + " " + n.hostname + " " + n.addr;
                  },
                  "32 gpu32 128 1000000 gpu:8 gpu32 gpu32"},
        ValueCase{"node_defaults", "NodeName=n1",
                  [](C c) {
                    const auto& n = node(c, "n1");
                    return std::to_string(n.cpus) + "," + std::to_string(n.boards) + "," + std::to_string(n.sockets) +
                           "," + std::to_string(n.cores_per_socket) + "," + std::to_string(n.threads_per_core) + "," +
                           std::to_string(n.real_memory_mb) + "," + std::to_string(n.tmp_disk_mb) + "," +
                           std::to_string(n.weight) + "," + n.state + "," + std::to_string(n.port);
                  },
                  "1,1,1,1,1,1,0,1,UNKNOWN,0"},
        ValueCase{"cpus_from_topology", "NodeName=n1 Boards=2 Sockets=2 CoresPerSocket=16 ThreadsPerCore=2",
                  [](C c) { return std::to_string(node(c, "n1").cpus); }, "128"},
        ValueCase{"sockets_from_cpus", "NodeName=n1 CPUs=64 CoresPerSocket=32",
                  [](C c) { return std::to_string(node(c, "n1").sockets); }, "2"},
        ValueCase{"procs_alias", "NodeName=n1 Procs=12", [](C c) { return std::to_string(node(c, "n1").cpus); }, "12"},
        ValueCase{"feature_alias_and_case", "nodename=n1 feature=h100,bigmem REALMEMORY=64G",
                  [](C c) {
                    const auto& n = node(c, "n1");
                    return join(n.features, "|") + " " + std::to_string(n.real_memory_mb);
                  },
                  "h100|bigmem 65536"},
        ValueCase{"typed_gres_and_weight_state_reason",
                  "NodeName=n1 Gres=gpu:h100:4,gpu:1g.10gb:2 Weight=100 State=drain Reason=\"bad fan\" TmpDisk=100G",
                  [](C c) {
                    const auto& n = node(c, "n1");
                    return std::to_string(n.gres.size()) + " " + n.gres[1].type + " " + std::to_string(n.weight) + " " +
                           n.state + " " + n.reason + " " + std::to_string(n.tmp_disk_mb);
                  },
                  "2 1g.10gb 100 DRAIN bad fan 102400"},
        ValueCase{"default_line_applies_to_later_lines",
                  "NodeName=DEFAULT RealMemory=1000 Gres=gpu:2\nNodeName=n[1-2] CPUs=4\n"
                  "NodeName=DEFAULT CPUs=8\nNodeName=m1 RealMemory=5",
                  [](C c) {
                    const auto& n = node(c, "n2");
                    const auto& m = node(c, "m1");
                    return std::to_string(n.real_memory_mb) + " " + std::to_string(n.cpus) + " " +
                           std::to_string(m.real_memory_mb) + " " + std::to_string(m.cpus) + " " +
                           format_gres_list(m.gres) + " " + n.key_locs.at("RealMemory").str();
                  },
                  "1000 4 5 8 gpu:2 slurm.conf:1:18"},
        ValueCase{"per_node_ports_and_shared_host",
                  "NodeName=g[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[17001-17002]",
                  [](C c) {
                    const auto& a = node(c, "g1");
                    const auto& b = node(c, "g2");
                    return a.hostname + " " + a.addr + " " + std::to_string(a.port) + " " + std::to_string(b.port);
                  },
                  "localhost 127.0.0.1 17001 17002"},
        ValueCase{"per_node_addresses", "NodeName=n[1-2] NodeAddr=10.0.0.[1-2]",
                  [](C c) { return node(c, "n1").addr + " " + node(c, "n2").addr + " " + node(c, "n2").hostname; },
                  "10.0.0.1 10.0.0.2 n2"},
        ValueCase{"node_loc_and_key_loc", "\nNodeName=n1 CPUs=2",
                  [](C c) { return node(c, "n1").loc.str() + " " + node(c, "n1").key_locs.at("CPUs").str(); },
                  "slurm.conf:2:1 slurm.conf:2:13"},
        ValueCase{"comma_node_list", "NodeName=alpha,beta CPUs=2",
                  [](C c) { return c.nodes.at(0).name + "," + c.nodes.at(1).name; }, "alpha,beta"}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Partitions, SlurmConfValues,
    ::testing::Values(
        ValueCase{"seed_lines",
                  "NodeName=gpu[01-02],cpu[01-02]\n"
                  "PartitionName=training Nodes=gpu[01-02] Default=NO MaxTime=INFINITE State=UP\n"
                  "PartitionName=compute Nodes=cpu[01-02] Default=YES MaxTime=7-00:00:00 State=UP",
                  [](C c) {
                    const auto& t = part(c, "training");
                    const auto& p = part(c, "compute");
                    return join(t.nodes, ",") + " " + std::to_string(t.max_time == kInfinite) + " " +
                           std::to_string(p.max_time) + " " + c.default_partition()->name;
                  },
                  "gpu01,gpu02 1 604800 compute"},
        ValueCase{"partition_defaults", "PartitionName=p",
                  [](C c) {
                    const auto& p = part(c, "p");
                    return std::to_string(p.is_default) + "," + std::to_string(p.max_time == kInfinite) + "," +
                           std::to_string(p.default_time.has_value()) + "," + std::to_string(p.max_nodes) + "," +
                           std::to_string(p.min_nodes) + "," + p.state + "," + std::to_string(p.priority_tier) + "," +
                           std::to_string(p.priority_job_factor) + "," + p.oversubscribe + "," +
                           std::to_string(p.allow_qos.empty()) + "," + std::to_string(p.exclusive_user);
                  },
                  "0,1,0,-1,0,UP,1,1,NO,1,0"},
        ValueCase{"nodes_all", "NodeName=a1,b1\nPartitionName=all Nodes=ALL\nNodeName=c1",
                  [](C c) { return join(part(c, "all").nodes, ","); }, "a1,b1,c1"},
        ValueCase{"default_line", "PartitionName=DEFAULT MaxTime=1:00:00 State=DOWN\nPartitionName=a\nPartitionName=b State=up",
                  [](C c) {
                    return std::to_string(part(c, "a").max_time) + part(c, "a").state + part(c, "b").state +
                           part(c, "a").key_locs.at("MaxTime").str();
                  },
                  "3600DOWNUPslurm.conf:1:23"},
        ValueCase{"limits_and_lists",
                  "PartitionName=p MaxNodes=UNLIMITED MinNodes=2 DefaultTime=30 PriorityTier=10 PriorityJobFactor=5 "
                  "QOS=part AllowQos=normal,debug DenyQos=bad AllowAccounts=ALL DenyAccounts=x,y ExclusiveUser=YES",
                  [](C c) {
                    const auto& p = part(c, "p");
                    return std::to_string(p.max_nodes) + "," + std::to_string(p.min_nodes) + "," +
                           std::to_string(*p.default_time) + "," + std::to_string(p.priority_tier) + "," +
                           std::to_string(p.priority_job_factor) + "," + p.qos + "," + join(p.allow_qos, "|") + "," +
                           join(p.deny_qos, "|") + "," + std::to_string(p.allow_accounts.size()) + "," +
                           join(p.deny_accounts, "|") + "," + std::to_string(p.exclusive_user);
                  },
                  "-1,2,1800,10,5,part,normal|debug,bad,0,x|y,1"},
        // Slurm 22.05 still reads a partition's Priority=: both PriorityJobFactor and PriorityTier.
        ValueCase{"legacy_partition_priority", "PartitionName=p Priority=7\nPartitionName=q PriorityTier=3",
                  [](C c) {
                    return std::to_string(part(c, "p").priority_job_factor) + "," +
                           std::to_string(part(c, "p").priority_tier) + " " +
                           std::to_string(part(c, "q").priority_job_factor) + "," +
                           std::to_string(part(c, "q").priority_tier);
                  },
                  "7,7 1,3"},
        // Blanks around '=', as Slurm reads them (checked on Slurm 22.05: "SlurmctldPort = 6818" is read).
        ValueCase{"blanks_around_equals", "ClusterName = anchor\nPartitionName = p  MaxTime= 60 \\\n  State =DOWN",
                  [](C c) {
                    return c.cluster_name + " " + std::to_string(part(c, "p").max_time) + " " + part(c, "p").state;
                  },
                  "anchor 3600 DOWN"},
        ValueCase{"oversubscribe_forms", "PartitionName=a OverSubscribe=force:4\nPartitionName=b Shared=EXCLUSIVE",
                  [](C c) { return part(c, "a").oversubscribe + " " + part(c, "b").oversubscribe; }, "FORCE:4 EXCLUSIVE"},
        ValueCase{"memory_keys", "PartitionName=p DefMemPerCPU=2G DefMemPerGPU=10000 MaxMemPerNode=500G MaxMemPerCPU=8G",
                  [](C c) {
                    const auto& p = part(c, "p");
                    return std::to_string(*p.def_mem_per_cpu_mb) + "," + std::to_string(*p.def_mem_per_gpu_mb) + "," +
                           std::to_string(*p.max_mem_per_node_mb) + "," + std::to_string(*p.max_mem_per_cpu_mb);
                  },
                  "2048,10000,512000,8192"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---------------------------------------------------------------- diagnostics

struct DiagCase {
  const char* name;
  const char* text;
  std::vector<std::string> want;  // Diagnostic::format() of each finding, in order
};

class SlurmConfDiagnostics : public ::testing::TestWithParam<DiagCase> {};

TEST_P(SlurmConfDiagnostics, ReportsExactly) {
  ClusterConfig cfg = parse(GetParam().text);
  EXPECT_EQ(formatted(cfg.diags), GetParam().want) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Errors, SlurmConfDiagnostics,
    ::testing::Values(
        DiagCase{"bad_integer", "NodeName=n1 CPUs=abc",
                 {"slurm.conf:1:18: error: invalid value \"abc\" for CPUs: expected an integer from 1 to 1048576 [bad-value]"}},
        DiagCase{"integer_out_of_range", "NodeName=n1 ThreadsPerCore=0",
                 {"slurm.conf:1:28: error: invalid value \"0\" for ThreadsPerCore: expected an integer from 1 to 1024 [bad-value]"}},
        DiagCase{"bad_license_count", "Licenses=fsbw:lots",
                 {"slurm.conf:1:10: error: invalid value \"fsbw:lots\" for Licenses: license fsbw: expected a count from 0 "
                  "to 2147483647 after ':' (got \"lots\") [bad-value]"}},
        DiagCase{"license_twice", "Licenses=fsbw:2,matlab,fsbw:3",
                 {"slurm.conf:1:10: error: invalid value \"fsbw:2,matlab,fsbw:3\" for Licenses: license fsbw is listed "
                  "twice [bad-value]"}},
        DiagCase{"bad_port", "SlurmctldPort=70000",
                 {"slurm.conf:1:15: error: invalid value \"70000\" for SlurmctldPort: expected a port number from 1 to 65535 [bad-value]"}},
        DiagCase{"bad_yes_no", "PartitionName=p Default=maybe",
                 {"slurm.conf:1:25: error: invalid value \"maybe\" for Default: expected YES or NO [bad-value]"}},
        DiagCase{"bad_choice", "SchedulerType=sched/fifo",
                 {"slurm.conf:1:15: error: invalid value \"sched/fifo\" for SchedulerType: expected sched/backfill or sched/builtin [bad-value]"}},
        DiagCase{"bad_time", "PartitionName=p MaxTime=forever",
                 {"slurm.conf:1:25: error: invalid value \"forever\" for MaxTime: expected a time such as 60 (minutes), "
                  "04:00:00, 7-00:00:00 or INFINITE [bad-value]"}},
        DiagCase{"bad_memory", "NodeName=n1 RealMemory=lots",
                 {"slurm.conf:1:24: error: invalid value \"lots\" for RealMemory: expected a memory size in megabytes such "
                  "as 1000000, or with a unit such as 64G or 1T [bad-value]"}},
        DiagCase{"empty_text", "ClusterName=",
                 {"slurm.conf:1:13: error: invalid value \"\" for ClusterName: expected a value [bad-value]"}},
        DiagCase{"bad_ctld_host", "SlurmctldHost=ctl(",
                 {"slurm.conf:1:15: error: invalid value \"ctl(\" for SlurmctldHost: expected a host name, or "
                  "name(address) [bad-value]"}},
        DiagCase{"bad_select_params", "SelectTypeParameters=CR_Core,CR_Bogus",
                 {"slurm.conf:1:22: error: invalid value \"CR_Core,CR_Bogus\" for SelectTypeParameters: expected "
                  "comma-separated options from CR_CPU, CR_CPU_Memory, CR_Core, CR_Core_Memory, CR_Socket, "
                  "CR_Socket_Memory, CR_Memory, CR_LLN, CR_Pack_Nodes, CR_ONE_TASK_PER_CORE, "
                  "CR_CORE_DEFAULT_DIST_BLOCK, OTHER_CONS_RES or OTHER_CONS_TRES [bad-value]"}},
        DiagCase{"bad_weight_tres", "PriorityWeightTRES=CPU=lots",
                 {"slurm.conf:1:20: error: invalid value \"CPU=lots\" for PriorityWeightTRES: expected comma-separated "
                  "TRES=weight items such as CPU=1000,GRES/gpu=5000 (bad item \"CPU=lots\") [bad-value]"}},
        DiagCase{"bad_oversubscribe", "PartitionName=p OverSubscribe=YES:0",
                 {"slurm.conf:1:31: error: invalid value \"YES:0\" for OverSubscribe: expected NO, YES, YES:N, FORCE, "
                  "FORCE:N or EXCLUSIVE (N from 1 to 65535) [bad-value]"}},
        DiagCase{"bad_sched_item", "SchedulerParameters=bf_interval=abc",
                 {"slurm.conf:1:21: error: invalid value \"bf_interval=abc\" for SchedulerParameters: bad item "
                  "\"bf_interval=abc\": bf_interval expected an integer from -1 to 10800 [bad-value]"}},
        DiagCase{"flag_with_value", "SchedulerParameters=bf_continue=1",
                 {"slurm.conf:1:21: error: invalid value \"bf_continue=1\" for SchedulerParameters: bad item "
                  "\"bf_continue=1\": bf_continue expected no value (it is a flag: write it alone) [bad-value]"}},
        DiagCase{"port_count_mismatch", "NodeName=n[1-3] Port=[17001-17002]",
                 {"slurm.conf:1:22: error: invalid value \"[17001-17002]\" for Port: expected one port, or one per "
                  "node of the line (3), found 2 [bad-value]"}},
        DiagCase{"bad_port_list", "NodeName=n1 Port=[9-x]",
                 {"slurm.conf:1:18: error: invalid value \"[9-x]\" for Port: expected a port from 1 to 65535, or a "
                  "list such as [17001-17004] [bad-value]"}},
        DiagCase{"hostname_count_mismatch", "NodeName=n[1-3] NodeHostname=h[1-2]",
                 {"slurm.conf:1:30: error: invalid value \"h[1-2]\" for NodeHostname: expected one name, or one per "
                  "node of the line (3), found 2 [bad-value]"}},
        DiagCase{"nodename_all_reserved", "NodeName=ALL CPUs=1",
                 {"slurm.conf:1:10: error: invalid value \"ALL\" for NodeName: expected a host list such as gpu[01-32] "
                  "(ALL is reserved) [bad-value]"}},
        DiagCase{"bad_syntax_word", "ClusterName",
                 {"slurm.conf:1:1: error: expected Key=Value, found \"ClusterName\" (ignored) [bad-syntax]\n"
                  "    fix: a setting is written Key=Value; remove the word or give it a key"}},
        DiagCase{"nodename_without_value", "NodeName",
                 {"slurm.conf:1:1: error: expected Key=Value, found \"NodeName\" (ignored) [bad-syntax]\n"
                  "    fix: a setting is written Key=Value; remove the word or give it a key"}},
        DiagCase{"nodename_not_first", "ClusterName=x NodeName=n1",
                 {"slurm.conf:1:15: error: NodeName= must start its own line; this word was ignored [bad-syntax]\n"
                  "    fix: start a new line with it"}},
        DiagCase{"duplicate_partition", "PartitionName=p\nPartitionName=p",
                 {"slurm.conf:2:15: error: partition p is defined twice (first at slurm.conf:1:1); this line is "
                  "ignored [duplicate-partition]\n    see: slurm.conf:1:1\n    fix: merge the two lines into one"}},
        DiagCase{"bad_include_syntax", "Include",
                 {"slurm.conf:1:1: error: expected \"Include PATH\" with one file name [bad-syntax]\n"
                  "    fix: write: Include /etc/slurm/nodes.conf"}}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Warnings, SlurmConfDiagnostics,
    ::testing::Values(
        DiagCase{"unknown_key_with_guess", "NodeName=n1 RealMemroy=10",
                 {"slurm.conf:1:13: warning: unknown key \"RealMemroy\" on a NodeName line (ignored); did you mean "
                  "RealMemory? [unknown-key]\n    fix: write RealMemory=..., or remove the key"}},
        DiagCase{"unknown_global_with_guess", "ClusterNmae=x",
                 {"slurm.conf:1:1: warning: unknown key \"ClusterNmae\" on a global line of slurm.conf (ignored); did "
                  "you mean ClusterName? [unknown-key]\n    fix: write ClusterName=..., or remove the key"}},
        DiagCase{"unknown_key_no_guess", "Zzzzzzzzzzzzzz=1",
                 {"slurm.conf:1:1: warning: unknown key \"Zzzzzzzzzzzzzz\" on a global line of slurm.conf (ignored) "
                  "[unknown-key]\n    fix: remove the key; `drover config reference` lists every key Drover reads"}},
        DiagCase{"seed_maxnodes_at_top_level", "MaxNodes=32",
                 {"slurm.conf:1:1: warning: MaxNodes is a PartitionName option; on a global line of slurm.conf it has "
                  "no effect [key-wrong-section]\n    fix: move it onto the PartitionName line(s) it should apply to, or "
                  "delete it"}},
        DiagCase{"node_key_at_top_level", "Gres=gpu:8",
                 {"slurm.conf:1:1: warning: Gres is a NodeName option; on a global line of slurm.conf it has no effect "
                  "[key-wrong-section]\n    fix: move it onto the NodeName line(s) it describes, or delete it"}},
        DiagCase{"global_key_on_node_line", "NodeName=n1 ClusterName=x",
                 {"slurm.conf:1:13: warning: ClusterName is a global slurm.conf option; on a NodeName line it has no "
                  "effect [key-wrong-section]\n    fix: move it to a line of its own, outside NodeName/PartitionName "
                  "lines"}},
        DiagCase{"node_key_on_partition_line", "PartitionName=p RealMemory=5",
                 {"slurm.conf:1:17: warning: RealMemory is a NodeName option; on a PartitionName line it has no effect "
                  "[key-wrong-section]\n    fix: move it onto the NodeName line(s) it describes, or delete it"}},
        DiagCase{"duplicate_global", "ClusterName=a\nClusterName=b",
                 {"slurm.conf:2:1: warning: ClusterName is set again (first set at slurm.conf:1:1); the later value is "
                  "used [duplicate-key]\n    see: slurm.conf:1:1\n    fix: keep one ClusterName line"}},
        DiagCase{"duplicate_on_line", "NodeName=n1 CPUs=2 cpus=4",
                 {"slurm.conf:1:20: warning: CPUs is given twice on a NodeName line; the last value is used "
                  "[duplicate-key]\n    fix: remove one of them"}},
        DiagCase{"unknown_sched_item", "SchedulerParameters=bf_busy_nodes,bf_windw=10",
                 {"slurm.conf:1:35: warning: unknown SchedulerParameters item \"bf_windw\" (ignored); did you mean "
                  "bf_window? [unknown-scheduler-parameter]\n    fix: correct or remove it; `drover config reference` "
                  "lists the items Drover knows"}}),
    [](const auto& info) { return std::string(info.param.name); });

INSTANTIATE_TEST_SUITE_P(
    Info, SlurmConfDiagnostics,
    ::testing::Values(
        DiagCase{"passive_keys_once_per_file",
                 "SwitchType=switch/none\nProctrackType=proctrack/linuxproc\nNodeName=n1 CpuBind=core\n"
                 "SwitchType=x\nMailProg=/bin/true",
                 // ProctrackType is read by the agents (with TaskPlugin), MailProg by the controller: not reported.
                 {"slurm.conf:1:1: info: accepted, no effect in Drover: SwitchType, CpuBind [key-no-effect]"}},
        DiagCase{"passive_line_kind", "DownNodes=n1 State=DOWN",
                 {"slurm.conf:1:1: info: accepted, no effect in Drover: DownNodes lines [key-no-effect]"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SlurmConf, BadHostListNamesTheHostListError) {
  ClusterConfig cfg = parse("NodeName=n[3-1] CPUs=2");
  auto err = hostlist_expand("n[3-1]");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"slurm.conf:1:10: error: invalid value \"n[3-1]\" for NodeName: expected a host "
                                     "list such as gpu[01-32], with at most 262144 nodes in all (" +
                                     err.error().message + ") [bad-value]"});
  EXPECT_TRUE(cfg.nodes.empty());
}

TEST(SlurmConf, BadPartitionNodesPointAtTheValue) {
  ClusterConfig cfg = parse("PartitionName=p Default=YES Nodes=a[1-");
  auto err = hostlist_expand("a[1-");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"slurm.conf:1:35: error: invalid value \"a[1-\" for Nodes: expected a host list "
                                     "such as gpu[01-32],cpu[01-16], NodeSet names, or ALL (" + err.error().message +
                                     ") [bad-value]"});
}

// NodeSet=NAME with Nodes= and/or Feature=: a partition's Nodes= may name it
// beside host lists (slurm.conf(5)); each node once, in the order named.
TEST(SlurmConf, NodeSetsExpandInAPartitionsNodes) {
  ClusterConfig cfg = parse(
      "NodeName=c[1-3] Feature=cpu\n"
      "NodeName=g[1-2] Feature=gpu,a100\n"
      "NodeName=h1 Feature=gpu,h100\n"
      "NodeSet=gpus Feature=gpu\n"
      "NodeSet=some Nodes=c[2-3]\n"
      "PartitionName=gpu Nodes=gpus Default=YES\n"
      "PartitionName=mixed Nodes=some,c1,gpus,c2\n"
      "PartitionName=plain Nodes=c[1-2],c1\n");
  EXPECT_TRUE(cfg.diags.items().empty()) << formatted(cfg.diags).front();
  EXPECT_EQ(cfg.find_partition("gpu")->nodes, (std::vector<std::string>{"g1", "g2", "h1"}));
  EXPECT_EQ(cfg.find_partition("mixed")->nodes, (std::vector<std::string>{"c2", "c3", "c1", "g1", "g2", "h1"}));
  EXPECT_EQ(cfg.find_partition("plain")->nodes, (std::vector<std::string>{"c1", "c2", "c1"}));  // as before
  auto updated = update_partition_config(cfg, *cfg.find_partition("plain"), {{"Nodes", "some"}});
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_EQ(updated->nodes, (std::vector<std::string>{"c2", "c3"}));

  ClusterConfig bad = parse("NodeName=c1\nNodeSet=empty\nNodeSet=x Nodes=c1 Color=red\nNodeSet=x Nodes=c1\n");
  EXPECT_EQ(formatted(bad.diags),
            (std::vector<std::string>{
                "slurm.conf:2:9: error: node set empty has neither Nodes= nor Feature=, so it holds no node "
                "[bad-value]\n    fix: add Nodes=<host list> or Feature=<feature>",
                "slurm.conf:3:20: warning: unknown key \"Color\" on a NodeSet line (ignored) [unknown-key]\n"
                "    fix: remove the key; `drover config reference` lists every key Drover reads",
                "slurm.conf:4:9: error: node set x is defined twice (first at slurm.conf:3:1); this line is ignored "
                "[duplicate-node-set]\n    fix: merge the two lines into one"}));
}

TEST(SlurmConf, BadNodeAddrListIsAnError) {
  ClusterConfig cfg = parse("NodeName=n[1-2] NodeAddr=10.0.0.[2-1]");
  auto err = hostlist_expand("10.0.0.[2-1]");
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"slurm.conf:1:26: error: invalid value \"10.0.0.[2-1]\" for NodeAddr: expected a "
                                     "name, or a host list with one name per node of the line (" +
                                     err.error().message + ") [bad-value]"});
  EXPECT_EQ(cfg.find_node("n2")->addr, "n2");
}

TEST(SlurmConf, LongerAddressListThanNodesIsAnError) {
  ClusterConfig cfg = parse("NodeName=n[1-2] NodeAddr=h[1-5]");
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{"slurm.conf:1:26: error: invalid value \"h[1-5]\" for NodeAddr: expected one "
                                     "name, or one per node of the line (2), found 5 [bad-value]"});
}

TEST(SlurmConf, TooManyNodesIsAnErrorNotAnAllocation) {
  ClusterConfig cfg = parse("NodeName=n[1-100000000]");
  ASSERT_EQ(cfg.diags.items().size(), 1u);
  EXPECT_EQ(cfg.diags.items()[0].code, "bad-value");
  EXPECT_TRUE(cfg.nodes.empty());
}

// TRESBillingWeights: a weight per unit; a suffix makes it per that many of
// the TRES's unit (megabytes for memory: Mem=0.25G is 0.25 per 1024 MB);
// negative weights are allowed, as in slurm.conf(5). A bad item is an error
// at its place, naming the item, and leaves the partition billing its CPUs.
TEST(SlurmConf, TresBillingWeightsAreReadPerUnit) {
  ClusterConfig cfg = parse("PartitionName=p TRESBillingWeights=\"CPU=1.0,Mem=0.25G,GRES/gpu=2.0,Node=-1,license/x=2K\"");
  ASSERT_NE(cfg.find_partition("p"), nullptr);
  const auto& w = cfg.find_partition("p")->tres_billing;
  EXPECT_EQ(w, (std::map<std::string, double>{
                   {"cpu", 1.0}, {"mem", 0.25 / 1024}, {"gres/gpu", 2.0}, {"node", -1.0}, {"license/x", 2048.0}}));
  EXPECT_EQ(cfg.find_partition("p")->tres_billing_weights, "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,Node=-1,license/x=2K");
  ClusterConfig bad = parse("PartitionName=p\nPartitionName=q TRESBillingWeights=CPU=1.0,Mem=lots");
  ASSERT_EQ(bad.diags.items().size(), 1u);
  EXPECT_EQ(bad.diags.items()[0].code, "bad-value");
  EXPECT_NE(formatted(bad.diags)[0].find("slurm.conf:2:"), std::string::npos) << formatted(bad.diags)[0];
  EXPECT_NE(formatted(bad.diags)[0].find("bad item \"Mem=lots\""), std::string::npos) << formatted(bad.diags)[0];
  ASSERT_NE(bad.find_partition("q"), nullptr);
  EXPECT_TRUE(bad.find_partition("q")->tres_billing.empty());
}

TEST(SlurmConf, BadValueKeepsTheDefault) {
  ClusterConfig cfg = parse("NodeName=n1 CPUs=abc RealMemory=100");
  ASSERT_NE(cfg.find_node("n1"), nullptr);
  EXPECT_EQ(cfg.find_node("n1")->cpus, 1);
  EXPECT_EQ(cfg.find_node("n1")->real_memory_mb, 100);
}

// ---------------------------------------------------------------- Include

TEST(SlurmConfInclude, ReadsRelativeToTheIncludingFileWithClusterName) {
  testing::ScratchDir dir;
  dir.write("conf.d/nodes.conf", "NodeName=n1 CPUs=abc\n");
  dir.write("conf.d/c1_parts.conf", "Include nodes.conf\nPartitionName=p Nodes=n1\n");
  std::string main = dir.write("slurm.conf", "ClusterName=c1\nInclude conf.d/%c_parts.conf\n");
  ClusterConfig cfg = parse_slurm_conf_text("ClusterName=c1\nInclude conf.d/%c_parts.conf\n", main);
  EXPECT_EQ(cfg.files_read, (std::vector<std::string>{main, dir.path("conf.d/c1_parts.conf"),
                                                       dir.path("conf.d/nodes.conf")}));
  ASSERT_NE(cfg.find_partition("p"), nullptr);
  EXPECT_EQ(cfg.find_partition("p")->nodes, std::vector<std::string>{"n1"});
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{dir.path("conf.d/nodes.conf") +
                                     ":1:18: error: invalid value \"abc\" for CPUs: expected an integer from 1 to "
                                     "1048576 [bad-value]"});
}

TEST(SlurmConfInclude, CycleIsAnErrorAtTheIncludeThatClosesIt) {
  testing::ScratchDir dir;
  std::string a = dir.write("a.conf", "Include b.conf\nClusterName=x\n");
  dir.write("b.conf", "\nInclude a.conf\n");
  ClusterConfig cfg = parse_slurm_conf_text("Include b.conf\nClusterName=x\n", a);
  EXPECT_EQ(cfg.cluster_name, "x");
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{dir.path("b.conf") + ":2:9: error: Include of " + dir.path("a.conf") +
                                     " would read it again (include cycle) [include-cycle]\n"
                                     "    fix: remove the Include that closes the cycle"});
}

TEST(SlurmConfInclude, MissingFileIsAnError) {
  testing::ScratchDir dir;
  std::string main = dir.path("slurm.conf");
  ClusterConfig cfg = parse_slurm_conf_text("include missing.conf", main);
  EXPECT_EQ(formatted(cfg.diags),
            std::vector<std::string>{main + ":1:9: error: cannot read " + dir.path("missing.conf") +
                                     ": No such file or directory [include-failed]\n"
                                     "    fix: check the path; relative paths are taken from the including file's "
                                     "directory"});
}

TEST(SlurmConfInclude, NotFollowedWhenDisabled) {
  ClusterConfig cfg = parse("Include /etc/passwd\nClusterName=x");
  EXPECT_TRUE(cfg.diags.empty());
  EXPECT_EQ(cfg.files_read, std::vector<std::string>{"slurm.conf"});
}

}  // namespace
}  // namespace drover::config
