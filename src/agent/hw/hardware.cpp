#include "agent/hw/hardware.hpp"

#include <sched.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "agent/hw/nvidia_smi.hpp"
#include "agent/hw/nvml.hpp"
#include "common/node_reasons.hpp"

namespace drover::agent::hw {
namespace {

std::optional<std::string> read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<int> read_int_file(const std::string& path) {
  auto line = read_first_line(path);
  if (!line) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(line->data(), line->data() + line->size(), v);
  if (ec != std::errc()) return std::nullopt;
  return v;
}

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<int> affinity_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) out.push_back(i);
  }
  return out;
}

// NVML says the GPU waits on Fabric Manager: CUDA fails on it ("system not
// yet initialized") until nvidia-fabricmanager has registered it.
bool waits_on_fabric_manager(const GpuInfo& g) {
  return g.fabric_state == "not-started" || g.fabric_state == "in-progress";
}

// Every GPU that waits on Fabric Manager gets a note.
void add_gpu_notes(NodeHardware& hw) {
  for (const auto& g : hw.gpus) {
    if (waits_on_fabric_manager(g)) {
      hw.notes.push_back("GPU " + std::to_string(g.index) + " (" + g.name + "): Fabric Manager state is " +
                         g.fabric_state + "; CUDA will not start on it until nvidia-fabricmanager has registered it");
    }
  }
}

}  // namespace

std::string gpu_health_problem(const NodeHardware& found) {
  std::string parts;
  for (const auto& g : found.gpus) {
    const bool waiting = waits_on_fabric_manager(g);
    const bool failed = g.fabric_state == "completed" && !g.fabric_status.empty() && g.fabric_status != "success";
    if (!waiting && !failed) continue;
    parts += (parts.empty() ? "GPU " : ", GPU ") + std::to_string(g.index) + " " +
             (failed ? "Fabric Manager registration failed (" + g.fabric_status + ")" : "Fabric Manager " + g.fabric_state);
  }
  if (parts.empty()) return "";
  // The seed's two causes: Fabric Manager missing, or not the driver's version.
  std::string cause;
  if (!found.fabric_manager_status.empty()) {
    cause = "; " + found.fabric_manager_status;
  } else if (!found.fabric_manager_version.empty() && !found.driver_version.empty()) {
    cause = found.fabric_manager_version == found.driver_version
                ? "; nv-fabricmanager " + found.fabric_manager_version + " matches the driver: is the nvidia-fabricmanager service running?"
                : "; nv-fabricmanager is " + found.fabric_manager_version + " but the driver " + found.driver_version +
                      ": they must be the same version";
  }
  return std::string(kGpuHealthPrefix) + parts + "; CUDA refuses such a GPU until nvidia-fabricmanager " +
         "has registered it" + cause;
}

namespace {

// The last word of `nv-fabricmanager --version` made of digits and dots
// ("Fabric Manager version is : 535.104.05" -> "535.104.05").
std::string fabric_manager_version(const std::string& out) {
  std::string best, word;
  auto take = [&] {
    if (word.find('.') != std::string::npos && std::isdigit(static_cast<unsigned char>(word.front())) &&
        std::isdigit(static_cast<unsigned char>(word.back()))) {
      best = word;
    }
    word.clear();
  };
  for (char ch : out) {
    if (std::isdigit(static_cast<unsigned char>(ch)) || ch == '.') {
      word += ch;
    } else {
      take();
    }
  }
  take();
  return best;
}

void probe_fabric_manager(const std::string& program, NodeHardware& hw) {
  hw.fabric_managed = std::any_of(hw.gpus.begin(), hw.gpus.end(), [](const GpuInfo& g) {
    return !g.fabric_state.empty() && g.fabric_state != "not-supported";
  });
  if (!hw.fabric_managed) return;
  Captured run = run_capture({program, "--version"});
  if (!run.started) {
    hw.fabric_manager_status = program + " is not installed (" + run.error + "): install the nvidia-fabricmanager " +
                               "package of the driver's version " + hw.driver_version;
    return;
  }
  hw.fabric_manager_version = fabric_manager_version(run.out);
  if (hw.fabric_manager_version.empty()) hw.fabric_manager_status = program + " --version printed no version";
}

}  // namespace

std::string short_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  std::string h = buf;
  return h.substr(0, h.find('.'));
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  std::vector<int> out;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    std::string_view item = s.substr(pos, comma == std::string_view::npos ? s.npos : comma - pos);
    std::size_t dash = item.find('-');
    auto lo = to_int(item.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : to_int(item.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return std::nullopt;
    for (int i = *lo; i <= *hi; ++i) out.push_back(i);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

Status detect_cpus(const std::string& sys_root, NodeHardware& hw) {
  const std::string base = sys_root + "/devices/system/cpu/";
  auto online_line = read_first_line(base + "online");
  if (!online_line) return make_error("cannot read " + base + "online: CPU topology unknown");
  auto online = parse_cpu_list(*online_line);
  if (!online || online->empty()) return make_error(base + "online holds no CPU list: '" + *online_line + "'");
  hw.online_cpu_ids = *online;
  hw.cpus = static_cast<int>(online->size());
  std::set<int> packages;
  std::map<std::pair<int, int>, int> threads_of_core;  // (package, core) -> logical CPUs
  for (int cpu : *online) {
    const std::string topo = base + "cpu" + std::to_string(cpu) + "/topology/";
    int pkg = read_int_file(topo + "physical_package_id").value_or(0);
    int core = read_int_file(topo + "core_id").value_or(cpu);
    packages.insert(pkg);
    ++threads_of_core[{pkg, core}];
  }
  hw.sockets = std::max<int>(1, static_cast<int>(packages.size()));
  int cores = std::max<int>(1, static_cast<int>(threads_of_core.size()));
  hw.cores_per_socket = std::max(1, cores / hw.sockets);
  int max_threads = 1;
  for (const auto& [key, n] : threads_of_core) max_threads = std::max(max_threads, n);
  hw.threads_per_core = max_threads;
  return {};
}

Status detect_memory(const std::string& proc_root, NodeHardware& hw) {
  std::ifstream in(proc_root + "/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb) {
    std::getline(in, unit);
    if (key == "MemTotal:") {
      hw.real_memory_mb = kb / 1024;
      return {};
    }
  }
  return make_error("no MemTotal line in " + proc_root + "/meminfo: memory size unknown");
}

std::string gres_type_from_name(std::string_view name) {
  std::string s;
  for (char c : name) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view prefix : {"nvidia ", "tesla "}) {
    if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  }
  for (auto& c : s) {
    if (c == ' ') c = '_';
  }
  return s;
}

Result<std::vector<GpuInfo>> parse_fake_gpus(std::string_view spec, const std::string& dir) {
  std::vector<GpuInfo> out;
  std::stringstream ss{std::string(spec)};
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto colon = item.rfind(':');
    std::string type = colon == std::string::npos ? "" : item.substr(0, colon);
    auto count = to_int(colon == std::string::npos ? item : item.substr(colon + 1));
    if (!count || *count < 1 || *count > 1024) {
      return make_error("--fake-gpus: '" + item + "' is not TYPE:COUNT or COUNT (e.g. h100:4 or 4)");
    }
    for (int i = 0; i < *count; ++i) {
      GpuInfo g;
      g.index = static_cast<int>(out.size());
      g.minor = g.index;
      g.type = type;
      g.name = type.empty() ? "emulated GPU" : "emulated " + type;
      g.device_file = dir + "/nvidia" + std::to_string(g.index);
      g.source = "fake";
      out.push_back(std::move(g));
    }
  }
  if (out.empty()) return make_error("--fake-gpus: empty specification (expected e.g. h100:4)");
  return out;
}

Result<NodeHardware> detect_hardware(const DetectOptions& opts) {
  NodeHardware hw;
  char full[256] = {};
  gethostname(full, sizeof full - 1);
  hw.hostname = full;
  hw.tmp_dir = opts.tmp_dir;
  if (auto st = detect_cpus(opts.sys_root, hw); !st) hw.notes.push_back(st.error().message);
  if (auto st = detect_memory(opts.proc_root, hw); !st) hw.notes.push_back(st.error().message);
  hw.usable_cpu_ids = affinity_cpus();
  struct statvfs vfs {};
  if (statvfs(opts.tmp_dir.c_str(), &vfs) == 0) {
    hw.tmp_disk_mb = static_cast<int64_t>(vfs.f_blocks) * static_cast<int64_t>(vfs.f_frsize) / (1024 * 1024);
  }
  if (!opts.fake_gpus.empty()) {
    auto fake = parse_fake_gpus(opts.fake_gpus, opts.fake_gpu_dir);
    if (!fake) return fake.error();
    hw.gpus = std::move(*fake);
    hw.gpu_source = "fake";
    hw.nvml_status = "not used: GPUs are emulated (--fake-gpus=" + opts.fake_gpus + ")";
    return hw;
  }
  NvmlProbe probe = probe_nvml(opts.nvml_library, opts.sys_root);
  hw.nvml_status = probe.status;
  hw.driver_version = probe.driver_version;
  hw.cuda_driver_version = probe.cuda_driver_version;
  hw.gpus = std::move(probe.gpus);
  hw.notes.insert(hw.notes.end(), probe.notes.begin(), probe.notes.end());
  probe_fabric_manager(opts.fabric_manager, hw);
  hw.gpu_source = hw.gpus.empty() ? "none" : "nvml";
  add_gpu_notes(hw);
  return hw;
}

std::string slurm_conf_line(const NodeHardware& hw, const std::string& node_name) {
  std::string line = "NodeName=" + node_name + " CPUs=" + std::to_string(hw.cpus) +
                     " Boards=" + std::to_string(hw.boards) + " SocketsPerBoard=" + std::to_string(hw.sockets) +
                     " CoresPerSocket=" + std::to_string(hw.cores_per_socket) +
                     " ThreadsPerCore=" + std::to_string(hw.threads_per_core) +
                     " RealMemory=" + std::to_string(hw.real_memory_mb);
  std::map<std::string, int> per_type;  // ordered: deterministic output
  for (const auto& g : hw.gpus) ++per_type[g.type];
  std::string gres;
  for (const auto& [type, n] : per_type) {
    gres += (gres.empty() ? "" : ",") + std::string("gpu:") + (type.empty() ? "" : type + ":") + std::to_string(n);
  }
  if (!gres.empty()) line += " Gres=" + gres;
  return line;
}

nlohmann::json hardware_json(const NodeHardware& hw, const std::string& node_name) {
  using nlohmann::json;
  json gpus = json::array();
  for (const auto& g : hw.gpus) {
    json j = {{"index", g.index}, {"name", g.name}, {"type", g.type}, {"minor", g.minor},
              {"file", g.device_file}, {"source", g.source}};
    if (!g.uuid.empty()) j["uuid"] = g.uuid;
    if (!g.pci_bus_id.empty()) j["pci_bus_id"] = g.pci_bus_id;
    if (g.memory_mb > 0) j["memory_mb"] = g.memory_mb;
    if (g.numa_node >= 0) j["numa_node"] = g.numa_node;
    if (g.nvlinks_active >= 0) j["nvlinks_active"] = g.nvlinks_active;
    if (!g.fabric_state.empty()) j["fabric_state"] = g.fabric_state;
    if (!g.fabric_status.empty()) j["fabric_status"] = g.fabric_status;
    if (!g.mig_mode.empty()) j["mig_mode"] = g.mig_mode;
    gpus.push_back(std::move(j));
  }
  json doc = {
      {"hostname", hw.hostname},
      {"cpus", hw.cpus},
      {"boards", hw.boards},
      {"sockets", hw.sockets},
      {"cores_per_socket", hw.cores_per_socket},
      {"threads_per_core", hw.threads_per_core},
      {"online_cpus", hw.online_cpu_ids},
      {"usable_cpus", hw.usable_cpu_ids},
      {"real_memory_mb", hw.real_memory_mb},
      {"tmp_disk_mb", hw.tmp_disk_mb},
      {"tmp_dir", hw.tmp_dir},
      {"gpu_source", hw.gpu_source},
      {"gpu_count", hw.gpus.size()},
      {"gpus", gpus},
      {"nvml", hw.nvml_status},
      {"driver_version", hw.driver_version},
      {"cuda_driver_version", hw.cuda_driver_version},
      {"notes", hw.notes},
      {"fabric_manager_version", hw.fabric_manager_version},
      {"gpu_health", gpu_health_problem(hw)},
      {"slurm_conf", slurm_conf_line(hw, node_name)},
  };
  return doc;
}

}  // namespace drover::agent::hw
