// gres.conf keys, declared as data (see key_table.hpp).
#include <cctype>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using G = GresLine;
using namespace keys;

inline constexpr std::size_t kMaxFilesPerLine = 4096;
inline constexpr int kMaxCoreId = 65535;

const std::vector<std::string> kFlags = {"CountOnly",  "nvidia_gpu_env", "amd_gpu_env", "intel_gpu_env",
                                         "opencl_env", "no_gpu_env",     "one_sharing", "all_sharing"};

KeyDef<G> head() {
  KeyDef<G> d;
  d.name = "NodeName";
  d.values = "host list such as gpu[01-32]";
  d.doc = "Nodes this line describes; absent: every node of slurm.conf.";
  d.parse = [](G& g, std::string_view s, ValueContext&) -> Status {
    if (s.empty()) return make_error("expected a host list such as gpu[01-32]");
    g.node_expr = std::string(s);  // expanded by the gres.conf parser
    return {};
  };
  d.show = [](const G& g) { return g.node_expr; };
  d.default_text = "every node";
  return d;
}

KeyDef<G> file() {
  KeyDef<G> d;
  d.name = "File";
  d.values = "device path or range, e.g. /dev/nvidia[0-7]";
  d.doc = "Device files, one per device; their number is the line's device count.";
  d.parse = [](G& g, std::string_view s, ValueContext&) -> Status {
    auto v = hostlist_expand(s, kMaxFilesPerLine);
    if (!v || v->empty()) {
      return make_error("expected device paths such as /dev/nvidia0 or /dev/nvidia[0-7] (at most " +
                        std::to_string(kMaxFilesPerLine) + ")" + (v ? "" : " (" + v.error().message + ")"));
    }
    g.files = std::move(*v);
    return {};
  };
  d.show = [](const G& g) { return g.files.empty() ? std::string() : hostlist_compress(g.files); };
  return d;
}

// Count=N with an optional K/M/G/T/P suffix (powers of 1024, as Slurm reads gres counts).
KeyDef<G> count() {
  KeyDef<G> d;
  d.name = "Count";
  d.values = "count, optionally with K, M, G, T or P (powers of 1024)";
  d.doc = "Number of devices when File is not given (default: File's count, else 1).";
  d.parse = [](G& g, std::string_view s, ValueContext&) -> Status {
    const char* kExpected = "expected a count such as 8, or with a suffix such as 4G";
    int64_t mult = 1;
    std::string_view digits = s;
    if (!s.empty()) {
      auto pos = std::string_view("KMGTP").find(static_cast<char>(std::toupper(static_cast<unsigned char>(s.back()))));
      if (pos != std::string_view::npos) {
        mult = int64_t{1} << (10 * (pos + 1));
        digits.remove_suffix(1);
      }
    }
    auto v = parse_int(digits);
    if (!v || *v > INT64_MAX / mult) return make_error(kExpected);
    g.count = *v * mult;
    return {};
  };
  d.show = [](const G& g) { return g.count ? std::to_string(*g.count) : std::string(); };
  return d;
}

// Cores=0-31,64-95 (brackets allowed: [0-31]).
KeyDef<G> cores() {
  KeyDef<G> d;
  d.name = "Cores";
  d.aliases = {"CPUs"};
  d.values = "core ids and ranges, e.g. 0-31,64-95";
  d.doc = "Cores closest to these devices (socket affinity for placement).";
  d.parse = [](G& g, std::string_view s, ValueContext&) -> Status {
    const std::string kExpected = "expected core ids and ranges such as 0-31,64-95 (ids up to " +
                                  std::to_string(kMaxCoreId) + ")";
    std::string_view body = s.size() >= 2 && s.front() == '[' && s.back() == ']' ? s.substr(1, s.size() - 2) : s;
    std::vector<int> out;
    for (const auto& item : split(body, ',')) {
      auto dash = item.find('-');
      auto lo = parse_int(std::string_view(item).substr(0, dash));
      auto hi = dash == std::string::npos ? lo : parse_int(std::string_view(item).substr(dash + 1));
      if (!lo || !hi || *hi < *lo || *hi > kMaxCoreId) return make_error(kExpected);
      for (int64_t c = *lo; c <= *hi; ++c) out.push_back(static_cast<int>(c));
      if (out.size() > static_cast<std::size_t>(kMaxCoreId)) return make_error(kExpected);
    }
    g.cores_expr = std::string(s);
    g.cores = std::move(out);
    return {};
  };
  d.show = [](const G& g) { return g.cores_expr; };
  return d;
}

std::vector<KeyDef<G>> make_gres_keys() {
  return key_defs<G>(
      head(),
      text<G>("Name", &G::name, "Generic resource name; must be listed in GresTypes.", "name such as gpu"),
      text<G>("Type", &G::type, "Model or kind (h100, a100, 1g.10gb); must match the node's Gres=gpu:TYPE:N.",
              "type name"),
      file(),
      count(),
      cores(),
      text<G>("Links", &G::links, "Interconnect link counts between devices, kept as written.", "comma-separated numbers"),
      flag_list<G>("Flags", &G::flags, kFlags, "Slurm's gres flags, kept as written."),
      choice<G>("AutoDetect", &G::autodetect, {"nvml", "nvidia", "rsmi", "oneapi", "nrt", "off"},
                "Hardware detection: alone on a line it applies to every line; on a NodeName line, to those nodes. "
                "nvidia (Slurm 23.11's NVIDIA detection without NVML) is taken as nvml: the agent finds NVIDIA "
                "GPUs through NVML where the driver has it.")
  );
}

const char* const kPassiveGresKeys[] = {"MultipleFiles"};

}  // namespace

const KeyTable<GresLine>& gres_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<GresLine>& table =
      *new KeyTable<GresLine>("gres.conf", make_gres_keys(), passive_keys(kPassiveGresKeys));
  return table;
}

}  // namespace drover::config
