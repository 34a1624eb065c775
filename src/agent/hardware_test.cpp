#include "agent/hw/hardware.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "agent/agent_test_util.hpp"
#include "agent/hw/nvidia_smi.hpp"
#include "agent/hw/nvml.hpp"
#include "agent/node_check.hpp"

namespace drover::agent {
namespace {

using testing::spit;
using testing::TempDir;

std::string fake_nvml() { return std::string(DROVER_BINARY_DIR) + "/tests/libnvidia-ml-fake.so"; }

TEST(CpuList, Parse) {
  EXPECT_EQ(hw::parse_cpu_list("0-3,8,10-11\n").value(), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(hw::parse_cpu_list("5").value(), std::vector<int>{5});
  EXPECT_TRUE(hw::parse_cpu_list("").value().empty());
  EXPECT_FALSE(hw::parse_cpu_list("3-1").has_value());
  EXPECT_FALSE(hw::parse_cpu_list("a-b").has_value());
}

// A prepared /sys tree: 2 sockets x 2 cores x 2 threads.
TEST(DetectCpus, TopologyFromSys) {
  TempDir t;
  const std::string base = t.sub("sys/devices/system/cpu");
  spit(base + "/online", "0-7\n");
  for (int cpu = 0; cpu < 8; ++cpu) {
    std::string topo = base + "/cpu" + std::to_string(cpu) + "/topology";
    std::filesystem::create_directories(topo);
    spit(topo + "/physical_package_id", std::to_string(cpu / 4) + "\n");
    spit(topo + "/core_id", std::to_string((cpu / 2) % 2) + "\n");
  }
  hw::NodeHardware h;
  ASSERT_TRUE(hw::detect_cpus(t.path() + "/sys", h).ok());
  EXPECT_EQ(h.cpus, 8);
  EXPECT_EQ(h.sockets, 2);
  EXPECT_EQ(h.cores_per_socket, 2);
  EXPECT_EQ(h.threads_per_core, 2);
  EXPECT_EQ(hw::slurm_conf_line(h, "n1"),
            "NodeName=n1 CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=0");
  hw::NodeHardware none;
  auto st = hw::detect_cpus(t.path() + "/nowhere", none);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("online"), std::string::npos);
}

TEST(DetectHardware, ThisMachine) {
  hw::DetectOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  auto h = hw::detect_hardware(o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->cpus, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_EQ(h->sockets * h->cores_per_socket * h->threads_per_core, h->cpus);
  EXPECT_EQ(h->real_memory_mb, static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE) / (1024 * 1024));
  EXPECT_TRUE(h->gpus.empty());
  EXPECT_EQ(h->gpu_source, "none");
  EXPECT_EQ(h->nvml_status.rfind("no NVML here: cannot load /nonexistent/libnvidia-ml.so.1", 0), 0u) << h->nvml_status;
  auto doc = hw::hardware_json(*h, "cpu01");
  EXPECT_EQ(doc["gpu_count"], 0);
  EXPECT_EQ(doc["slurm_conf"].get<std::string>().rfind("NodeName=cpu01 CPUs=", 0), 0u);
}

TEST(DetectHardware, ThroughNvml) {
  hw::DetectOptions o;
  o.nvml_library = fake_nvml();
  auto h = hw::detect_hardware(o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->gpu_source, "nvml");
  EXPECT_EQ(h->driver_version, "550.54.15");
  EXPECT_EQ(h->cuda_driver_version, "12.4");
  ASSERT_EQ(h->gpus.size(), 2u);
  const auto& g = h->gpus[1];
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.type, "h100_80gb_hbm3");
  EXPECT_EQ(g.minor, 5);
  EXPECT_EQ(g.device_file, "/dev/nvidia5");
  EXPECT_EQ(g.memory_mb, 81559);
  EXPECT_EQ(g.pci_bus_id, "00000000:2A:00.0");
  EXPECT_EQ(h->gpus[0].nvlinks_active, 18);
  EXPECT_EQ(g.nvlinks_active, 4);
  EXPECT_EQ(h->gpus[0].fabric_state, "completed");
  EXPECT_EQ(g.fabric_state, "not-started");
  ASSERT_EQ(h->notes.size(), 1u);
  EXPECT_NE(h->notes[0].find("GPU 1 (NVIDIA H100 80GB HBM3): Fabric Manager state is not-started"), std::string::npos);
  EXPECT_NE(h->nvml_status.find("NVML 12.550.54.15"), std::string::npos);
  EXPECT_NE(hw::slurm_conf_line(*h, "gpu01").find(" Gres=gpu:h100_80gb_hbm3:2"), std::string::npos);
}

TEST(DetectHardware, FakeGpus) {
  auto gpus = hw::parse_fake_gpus("h100:2,a100:1", "/tmp/fakegpu");
  ASSERT_TRUE(gpus.ok());
  ASSERT_EQ(gpus->size(), 3u);
  EXPECT_EQ((*gpus)[2].type, "a100");
  EXPECT_EQ((*gpus)[2].device_file, "/tmp/fakegpu/nvidia2");
  EXPECT_EQ((*gpus)[2].minor, 2);
  EXPECT_EQ(hw::parse_fake_gpus("4", "/dev")->size(), 4u);
  for (const char* bad : {"h100:0", "h100:x", "", "h100:"}) {
    auto r = hw::parse_fake_gpus(bad, "/dev");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.error().message.find("--fake-gpus"), std::string::npos);
  }
  hw::DetectOptions o;
  o.fake_gpus = "h100:4";
  o.nvml_library = fake_nvml();
  auto h = hw::detect_hardware(o);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->gpu_source, "fake");
  EXPECT_EQ(h->gpus.size(), 4u) << "fake GPUs replace NVML's";
}

TEST(GresType, FromModelName) {
  EXPECT_EQ(hw::gres_type_from_name("NVIDIA H100 80GB HBM3"), "h100_80gb_hbm3");
  EXPECT_EQ(hw::gres_type_from_name("Tesla V100-SXM2-16GB"), "v100-sxm2-16gb");
  EXPECT_EQ(hw::gres_type_from_name("NVIDIA A100-SXM4-40GB"), "a100-sxm4-40gb");
}

TEST(NvidiaSmi, ParseAndCompare) {
  auto rows = hw::parse_smi_csv("0, NVIDIA H100 80GB HBM3, 550.54.15\n1, NVIDIA H100 80GB HBM3, 550.54.15\n");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);
  hw::DetectOptions o;
  o.nvml_library = fake_nvml();
  auto h = hw::detect_hardware(o);
  auto same = hw::compare_with_smi(*h, *rows);
  EXPECT_TRUE(same.agree) << (same.differences.empty() ? "" : same.differences[0]);
  auto fewer = hw::compare_with_smi(*h, {(*rows)[0]});
  EXPECT_FALSE(fewer.agree);
  EXPECT_EQ(fewer.differences.at(0), "GPU count: NVML 2, nvidia-smi 1");
  auto other = *rows;
  other[1].name = "NVIDIA H200";
  other[1].driver_version = "560.1";
  auto diff = hw::compare_with_smi(*h, other);
  ASSERT_EQ(diff.differences.size(), 2u);
  EXPECT_EQ(diff.differences[0], "GPU 1 name: NVML 'NVIDIA H100 80GB HBM3', nvidia-smi 'NVIDIA H200'");
  auto bad = hw::parse_smi_csv("zero, x, y\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("line 1"), std::string::npos);
}

TEST(NvidiaSmi, RunsTheProgram) {
  TempDir t;
  const std::string smi = t.path() + "/nvidia-smi";
  spit(smi, "#!/bin/sh\necho \"0, NVIDIA H100 80GB HBM3, 550.54.15\"\necho \"1, NVIDIA H100 80GB HBM3, 550.54.15\"\n");
  chmod(smi.c_str(), 0755);
  hw::DetectOptions o;
  o.nvml_library = fake_nvml();
  auto h = hw::detect_hardware(o);
  auto c = hw::check_nvidia_smi(*h, smi);
  EXPECT_TRUE(c.ran);
  EXPECT_TRUE(c.agree);
  auto missing = hw::check_nvidia_smi(*h, t.path() + "/no-such-smi");
  EXPECT_FALSE(missing.ran);
  EXPECT_NE(missing.status.find("No such file or directory"), std::string::npos) << missing.status;
  EXPECT_TRUE(hw::smi_comparison_json(missing)["agree"].is_null());
}

config::NodeConfig gpu_node(int cpus, int64_t mem, std::vector<GresSpec> gres) {
  config::NodeConfig n;
  n.name = "gpu01";
  n.cpus = cpus;
  n.sockets = 2;
  n.cores_per_socket = cpus / 2;
  n.real_memory_mb = mem;
  n.gres = std::move(gres);
  return n;
}

hw::NodeHardware found(int cpus, int64_t mem, int gpus, const std::string& type) {
  hw::NodeHardware h;
  h.cpus = cpus;
  h.sockets = 2;
  h.cores_per_socket = cpus / 2;
  h.threads_per_core = 1;
  h.real_memory_mb = mem;
  for (int i = 0; i < gpus; ++i) {
    hw::GpuInfo g;
    g.index = i;
    g.type = type;
    h.gpus.push_back(g);
  }
  return h;
}

TEST(NodeCheck, DrainReasonsNameBothNumbers) {
  struct Case {
    hw::NodeHardware found;
    config::NodeConfig conf;
    std::string want;  // "" = ok
  };
  const Case cases[] = {
      {found(128, 1000000, 8, "h100_80gb_hbm3"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}), ""},
      {found(128, 1000000, 4, "h100_80gb_hbm3"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}),
       "gres/gpu count reported lower than configured (4 < 8)"},
      {found(128, 1000000, 0, ""), gpu_node(128, 1000000, {{"gpu", "", 8}}),
       "gres/gpu count reported lower than configured (0 < 8)"},
      {found(128, 1000000, 8, "a100-sxm4-40gb"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}),
       "gres/gpu:h100 count reported lower than configured (0 < 8)"},
      {found(64, 1000000, 8, "h100"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}),
       "Low socket*core*thread count (reported:64 < configured:128), Low CPUs (reported:64 < configured:128)"},
      {found(128, 515000, 8, "h100"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}),
       "Low RealMemory (reported:515000 < 100.00% of configured:1000000)"},
      {found(256, 2000000, 16, "h100"), gpu_node(128, 1000000, {{"gpu", "h100", 8}}), ""},  // more is fine
  };
  for (const auto& c : cases) {
    NodeCheck check = compare_with_config(c.found, c.conf);
    EXPECT_EQ(check.drain_reason(), c.want);
    EXPECT_EQ(check.ok(), c.want.empty());
  }
  // TmpDisk= larger than the file system holding TmpFS.
  hw::NodeHardware small = found(128, 1000000, 0, "");
  small.tmp_disk_mb = 1000;
  config::NodeConfig wants = gpu_node(128, 1000000, {});
  wants.tmp_disk_mb = 4096;
  EXPECT_EQ(compare_with_config(small, wants).drain_reason(), "Low TmpDisk (reported:1000 < configured:4096)");
  wants.tmp_disk_mb = 1000;
  EXPECT_TRUE(compare_with_config(small, wants).ok());
}

TEST(NodeCheck, GpusFromGresConf) {
  TempDir t;
  config::ClusterConfig cfg;
  config::GresLine line;
  line.nodes = {"gpu01", "gpu02"};
  line.name = "gpu";
  line.type = "h100";
  line.files = {t.path() + "/nvidia0", t.path() + "/nvidia1", t.path() + "/nvidia2"};
  line.loc.file = "gres.conf";
  line.loc.line = 3;
  spit(t.path() + "/nvidia0", "");
  spit(t.path() + "/nvidia1", "");
  cfg.gres_lines.push_back(line);
  config::GresLine counted;
  counted.nodes = {"gpu03"};
  counted.name = "gpu";
  counted.count = 3;
  cfg.gres_lines.push_back(counted);
  std::vector<std::string> notes;
  auto g1 = gpus_from_gres_conf(cfg, "gpu02", &notes);
  ASSERT_EQ(g1.size(), 2u) << "nvidia2 does not exist: not a GPU found";
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "gres.conf:3: gres.conf names " + t.path() + "/nvidia2 for gpu02, which does not exist on this node");
  EXPECT_EQ(g1[1].device_file, t.path() + "/nvidia1");
  EXPECT_EQ(g1[1].type, "h100");
  EXPECT_EQ(g1[1].source, "gres.conf");
  EXPECT_EQ(gpus_from_gres_conf(cfg, "gpu03").size(), 3u);
  EXPECT_TRUE(gpus_from_gres_conf(cfg, "cpu01").empty());
}

}  // namespace
}  // namespace drover::agent

namespace drover::agent {
namespace {

struct Ran {
  int status = -1;
  std::string out;
};

Ran run_command(const std::string& cmd) {
  Ran r;
  FILE* p = popen((cmd + " 2>/dev/null").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(DetectCommand, ComparesWithTheNodeDeclaration) {
  const std::string conf = std::string(DROVER_SOURCE_DIR) + "/src/agent/testdata/detect/slurm.conf";
  const std::string drover = std::string(DROVER_BINARY_DIR) + "/bin/drover";
  Ran r = run_command(drover + " agent --detect --config " + conf + " --node gpu01 --nvml-library=/nonexistent.so");
  ASSERT_EQ(r.status, 0) << r.out;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["config_check"]["node"], "gpu01");
  EXPECT_EQ(doc["config_check"]["ok"], false);
  EXPECT_EQ(doc["config_check"]["drain_reason"], "gres/gpu count reported lower than configured (0 < 8)")
      << "the gres.conf device files do not exist; CPUs=1 RealMemory=1 are always met";
  EXPECT_EQ(doc["notes"].size(), 8u);
  Ran fake = run_command(drover + " agent --detect --config " + conf + " --node gpu01 --fake-gpus=h100:8");
  EXPECT_EQ(nlohmann::json::parse(fake.out)["config_check"]["ok"], true) << fake.out;
  Ran cpu = run_command(drover + " agent --detect --config " + conf + " --node cpu01 --nvml-library=/nonexistent.so");
  EXPECT_EQ(nlohmann::json::parse(cpu.out)["config_check"]["drain_reason"], "");
  EXPECT_EQ(run_command(drover + " agent --detect --config " + conf + " --node nosuch").status, 2);
}

TEST(DetectCommand, StandaloneBinaryChecksNvidiaSmi) {
  TempDir t;
  const std::string agree = t.path() + "/smi-agree", differ = t.path() + "/smi-differ";
  spit(agree, "#!/bin/sh\necho '0, NVIDIA H100 80GB HBM3, 550.54.15'\necho '1, NVIDIA H100 80GB HBM3, 550.54.15'\n");
  spit(differ, "#!/bin/sh\necho '0, NVIDIA H100 80GB HBM3, 550.54.15'\n");
  chmod(agree.c_str(), 0755);
  chmod(differ.c_str(), 0755);
  const std::string detect = std::string(DROVER_BINARY_DIR) + "/bin/drover-detect --nvml-library=" + fake_nvml() +
                             " --check-nvidia-smi --nvidia-smi=";
  Ran ok = run_command(detect + agree);
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_EQ(nlohmann::json::parse(ok.out)["nvidia_smi_check"]["agree"], true);
  Ran bad = run_command(detect + differ);
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_EQ(nlohmann::json::parse(bad.out)["nvidia_smi_check"]["differences"][0], "GPU count: NVML 2, nvidia-smi 1");
  EXPECT_EQ(run_command(std::string(DROVER_BINARY_DIR) + "/bin/drover-detect --bogus").status, 2);
}

// The seed's Fabric Manager pitfall: GPUs whose registration has not
// completed (or failed) make a "gpu health:" reason naming them; GPUs that
// do not take part (PCIe: not-supported) or completed make none.
TEST(GpuHealth, FabricManagerNotRegisteredIsAProblem) {
  hw::NodeHardware h;
  auto gpu = [](int index, const std::string& state, const std::string& status) {
    hw::GpuInfo g;
    g.index = index;
    g.fabric_state = state;
    g.fabric_status = status;
    return g;
  };
  h.gpus = {gpu(0, "not-supported", ""), gpu(1, "completed", "success"), gpu(2, "", "")};
  EXPECT_EQ(hw::gpu_health_problem(h), "");
  h.gpus.push_back(gpu(3, "not-started", "success"));
  h.gpus.push_back(gpu(4, "in-progress", "success"));
  h.gpus.push_back(gpu(5, "completed", "Unknown Error"));
  EXPECT_EQ(hw::gpu_health_problem(h),
            "gpu health: GPU 3 Fabric Manager not-started, GPU 4 Fabric Manager in-progress, GPU 5 Fabric Manager "
            "registration failed (Unknown Error); CUDA refuses such a GPU until nvidia-fabricmanager has registered it");
  // Why, in the seed's two causes: Fabric Manager missing, or another version than the driver.
  h.driver_version = "550.54.15";
  h.fabric_manager_status = "nv-fabricmanager is not installed";
  EXPECT_NE(hw::gpu_health_problem(h).find("registered it; nv-fabricmanager is not installed"), std::string::npos);
  h.fabric_manager_status = "";
  h.fabric_manager_version = "535.104.05";
  EXPECT_NE(hw::gpu_health_problem(h).find(
                "registered it; nv-fabricmanager is 535.104.05 but the driver 550.54.15: they must be the same version"),
            std::string::npos);
  // Through NVML: the stand-in's second GPU has not registered; nv-fabricmanager is asked its version.
  TempDir t;
  const std::string fm = t.path() + "/nv-fabricmanager";
  spit(fm, "#!/bin/sh\necho 'Fabric Manager version is : 550.54.15'\n");
  chmod(fm.c_str(), 0755);
  const std::string detect =
      std::string(DROVER_BINARY_DIR) + "/bin/drover-detect --nvml-library=" + fake_nvml() + " --fabric-manager=";
  Ran r = run_command(detect + fm);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["fabric_manager_version"], "550.54.15");
  EXPECT_EQ(doc["gpu_health"],
            "gpu health: GPU 1 Fabric Manager not-started; CUDA refuses such a GPU until nvidia-fabricmanager has "
            "registered it; nv-fabricmanager 550.54.15 matches the driver: is the nvidia-fabricmanager service running?")
      << r.out;
  Ran missing = run_command(detect + t.path() + "/none");
  EXPECT_NE(nlohmann::json::parse(missing.out)["gpu_health"].get<std::string>().find(
                "registered it; " + t.path() + "/none is not installed ("),
            std::string::npos)
      << missing.out;
  Ran healthy = run_command("DROVER_FAKE_NVML_REGISTERED=1 " + detect + fm);
  EXPECT_EQ(nlohmann::json::parse(healthy.out)["gpu_health"], "") << healthy.out;
}

TEST(DetectCommand, CudaShowsWhatACudaProgramSeesUnderCudaVisibleDevices) {
  const std::string detect = std::string(DROVER_BINARY_DIR) + "/bin/drover-detect --cuda --cuda-library=" +
                             std::string(DROVER_BINARY_DIR) + "/tests/libcuda-fake.so";
  Ran one = run_command("CUDA_VISIBLE_DEVICES=0 " + detect);
  EXPECT_EQ(one.status, 0) << one.out;
  auto doc = nlohmann::json::parse(one.out)["cuda"];
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["CUDA_VISIBLE_DEVICES"], "0");
  ASSERT_EQ(doc["device_count"], 1);
  EXPECT_EQ(doc["devices"][0]["uuid"], "GPU-00000000-0000-0000-0000-000000000000");
  EXPECT_EQ(doc["devices"][0]["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(doc["devices"][0]["use"], "ok: allocated and freed 1 MiB");
  // The second GPU alone: CUDA numbers it 0; it refuses a context, so no device is usable.
  Ran second = run_command("CUDA_VISIBLE_DEVICES=1 " + detect);
  EXPECT_EQ(second.status, 1) << second.out;
  auto d2 = nlohmann::json::parse(second.out)["cuda"]["devices"][0];
  EXPECT_EQ(d2["ordinal"], 0);
  EXPECT_EQ(d2["uuid"], "GPU-11111111-1111-1111-1111-111111111111");
  EXPECT_EQ(d2["use"], "no context: unknown error (CUDA error 999)");
  Ran none = run_command("CUDA_VISIBLE_DEVICES= " + detect);
  EXPECT_EQ(none.status, 1);
  EXPECT_EQ(nlohmann::json::parse(none.out)["cuda"]["device_count"], 0);
  Ran missing = run_command(std::string(DROVER_BINARY_DIR) + "/bin/drover-detect --cuda --cuda-library=/nonexistent.so");
  EXPECT_EQ(missing.status, 1);
  EXPECT_EQ(nlohmann::json::parse(missing.out)["cuda"]["status"].get<std::string>().rfind(
                "no CUDA driver here: cannot load /nonexistent.so", 0),
            0u)
      << missing.out;
}

}  // namespace
}  // namespace drover::agent
