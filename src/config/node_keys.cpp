// NodeName= line keys, declared as data (see key_table.hpp).
#include "common/gres.hpp"
#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/node_ports.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using N = NodeConfig;
using namespace keys;

const char* const kPassiveNodeKeys[] = {"BcastAddr", "CpuBind", "CpuSpecList"};

KeyDef<N> port() {
  KeyDef<N> d;
  d.name = "Port";
  d.values = "port 1..65535, or a range [17001-17004] with one port per node of the line";
  d.doc = "Port of this node's agent, for several agents on one host; default: SlurmdPort.";
  d.parse = [](N& n, std::string_view s, ValueContext&) -> Status {
    auto ports = expand_ports(s);
    if (!ports) return ports.error();
    n.port = ports->front();
    return {};
  };
  d.show = [](const N& n) { return n.port == 0 ? std::string() : std::to_string(n.port); };
  d.default_text = "SlurmdPort";
  return d;
}

KeyDef<N> gres() {
  KeyDef<N> d;
  d.name = "Gres";
  d.values = "comma-separated name[:type]:count, e.g. gpu:h100:8";
  d.doc = "Generic resources on each node of the line; must agree with gres.conf.";
  d.parse = [](N& n, std::string_view s, ValueContext&) -> Status {
    auto v = parse_gres_list(s);
    if (!v) return make_error("expected comma-separated name[:type]:count items such as gpu:8 or gpu:h100:8 (" +
                              v.error().message + ")");
    n.gres = std::move(*v);
    return {};
  };
  d.show = [](const N& n) { return n.gres.empty() ? std::string() : format_gres_list(n.gres); };
  return d;
}

std::vector<KeyDef<N>> make_node_keys() {
  const int64_t kMaxCount = 1 << 20;
  return key_defs<N>(
      line_head<N>("NodeName", "host list such as gpu[01-32], or DEFAULT",
                   "Starts a node line: the nodes it defines. NodeName=DEFAULT sets defaults for the node lines after it."),
      defaults_to(text<N>("NodeHostname", &N::hostname,
                          "Host name of each node: a host list matching NodeName's count, or one name for all.",
                          "host name or host list"),
                  "NodeName"),
      defaults_to(text<N>("NodeAddr", &N::addr,
                          "Address to reach each node: a list matching NodeName's count, or one address for all.",
                          "address or host list"),
                  "NodeHostname"),
      port(),
      defaults_to(aka(integer<N>("CPUs", &N::cpus, 1, kMaxCount, "Logical CPUs on each node."), {"Procs"}),
                  "Boards*Sockets*CoresPerSocket*ThreadsPerCore"),
      integer<N>("Boards", &N::boards, 1, 1024, "Baseboards per node."),
      defaults_to(aka(integer<N>("Sockets", &N::sockets, 1, 65535,
                                 "Sockets per board; when omitted and CPUs is given, CPUs/(CoresPerSocket*ThreadsPerCore)."),
                      {"SocketsPerBoard"}),
                  "1, or inferred from CPUs"),
      integer<N>("CoresPerSocket", &N::cores_per_socket, 1, 65535, "Physical cores per socket."),
      integer<N>("ThreadsPerCore", &N::threads_per_core, 1, 1024, "Hardware threads per core."),
      memory_mb<N>("RealMemory", &N::real_memory_mb, "Memory of each node in MB that jobs may be given."),
      memory_mb<N>("TmpDisk", &N::tmp_disk_mb, "Size of TmpFS on each node in MB."),
      gres(),
      aka(name_list<N>("Features", &N::features, "Features a job can ask for with --constraint."), {"Feature"}),
      integer<N>("Weight", &N::weight, 0, 4294967294LL,
                 "Scheduling weight: jobs go to the lowest-weight nodes that fit."),
      choice<N>("State", &N::state, {"UNKNOWN", "IDLE", "CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE"},
                "Initial state; DOWN, DRAIN and FAIL keep jobs off the node."),
      text<N>("Reason", &N::reason, "Why the node is DOWN or DRAIN (quote it when it has spaces)."),
      memory_mb<N>("MemSpecLimit", &N::mem_spec_limit_mb, "Memory in MB kept for the system, not given to jobs."),
      integer<N>("CoreSpecCount", &N::core_spec_count, 0, 65535, "Cores kept for the system, not given to jobs.")
  );
}

}  // namespace

const KeyTable<NodeConfig>& node_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<NodeConfig>& table =
      *new KeyTable<NodeConfig>("NodeName", make_node_keys(), passive_keys(kPassiveNodeKeys));
  return table;
}

}  // namespace drover::config
