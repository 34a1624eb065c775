#include "common/task_layout.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

#include "common/strings.hpp"

namespace drover {

std::string_view plane_size(std::string_view distribution) {
  if (!istarts_with(distribution, "plane=")) return {};
  const std::string_view rest = distribution.substr(6);
  return rest.substr(0, rest.find_first_of(":,"));
}

std::vector<std::vector<int>> ranks_by_node(const std::vector<int>& tasks_per_node, std::string_view distribution) {
  const std::size_t n = tasks_per_node.size();
  std::vector<std::vector<int>> out(n);
  int total = 0;
  for (int t : tasks_per_node) total += std::max(0, t);
  // Round robin, `plane` ranks at a time, over the nodes that still have room:
  // one for cyclic, N for plane=N, and for block all of a node's at once.
  std::string first = to_lower(distribution.substr(0, distribution.find_first_of(":,")));
  int plane = std::numeric_limits<int>::max();
  if (first == "cyclic") plane = 1;
  if (istarts_with(first, "plane=")) plane = static_cast<int>(std::max<int64_t>(1, parse_int(plane_size(first)).value_or(1)));
  int next = 0;
  while (next < total) {
    for (std::size_t i = 0; i < n && next < total; ++i) {
      for (int k = 0; k < plane && static_cast<int>(out[i].size()) < tasks_per_node[i] && next < total; ++k) {
        out[i].push_back(next++);
      }
    }
  }
  return out;
}

std::string default_distribution(const std::vector<int>& tasks_per_node) {
  return std::any_of(tasks_per_node.begin(), tasks_per_node.end(), [](int t) { return t > 1; }) ? "block" : "cyclic";
}

std::string distribution_display(std::string_view typed, const std::vector<int>& tasks_per_node) {
  std::string levels(typed.substr(0, typed.find(',')));
  const std::string pack(typed.find(',') == std::string_view::npos ? std::string_view() : typed.substr(typed.find(',')));
  if (levels.empty()) levels = default_distribution(tasks_per_node);
  auto name = [](std::string level, bool node_level) -> std::string {
    level = to_lower(level);
    if (level == "*" || level.empty()) return node_level ? "Block" : "Cyclic";
    if (level.starts_with("plane")) return "Plane";
    if (level == "fcyclic") return "FCyclic";
    level[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(level[0])));
    return level;
  };
  const std::vector<std::string> parts = split(levels, ':');
  std::string out = name(parts[0], true);
  if (parts.size() > 1) {
    out = out.substr(0, 1);
    for (std::size_t i = 1; i < parts.size(); ++i) out += name(parts[i], false);
  }
  if (!pack.empty()) out += to_lower(pack) == ",pack" ? ",Pack" : to_lower(pack) == ",nopack" ? ",NoPack" : pack;
  return out;
}

std::vector<int> job_tasks_per_node(const std::vector<int>& cpus, const std::vector<int>& tasks, bool ntasks_given,
                                    int cpus_per_task) {
  if (ntasks_given) return tasks;
  std::vector<int> out;
  const int cpt = std::max(1, cpus_per_task);
  for (int c : cpus) out.push_back(std::max(1, c / cpt));
  return out;
}

namespace {

Error bad_bind(std::string_view text, const std::string& before = "") {
  return make_error(before + "Invalid --gpu-bind argument: gpu:" + std::string(text));
}

// One list entry of map_gpu/mask_gpu: "3", "0x3" or "0x3*4" (hex always for masks).
bool parse_bind_item(const std::string& item, bool hex, std::vector<unsigned long>& out, std::string& why) {
  std::string num = item, rep;
  if (auto star = item.find('*'); star != std::string::npos) {
    num = item.substr(0, star);
    rep = item.substr(star + 1);
  }
  const bool prefixed = istarts_with(num, "0x");
  const std::string digits = prefixed ? num.substr(2) : num;
  const bool as_hex = hex || prefixed;
  for (char ch : digits) {
    if (!(as_hex ? std::isxdigit(static_cast<unsigned char>(ch)) : std::isdigit(static_cast<unsigned char>(ch)))) {
      why = "Failed to validate " + item + ", offending character is " + std::string(1, ch) + "\n";
      return false;
    }
  }
  if (digits.empty() || digits.size() > 15) {
    why = "Failed to validate " + item + "\n";
    return false;
  }
  unsigned long v = std::stoul(digits, nullptr, as_hex ? 16 : 10);
  int64_t times = 1;
  if (!rep.empty()) {
    auto r = parse_int(rep);
    if (!r || *r <= 0 || *r > 65536) {
      why = "Failed to validate " + item + "\n";
      return false;
    }
    times = *r;
  }
  out.insert(out.end(), static_cast<std::size_t>(times), v);
  return true;
}

}  // namespace

Result<GpuBind> parse_gpu_bind(std::string_view text) {
  GpuBind b;
  std::string rest(text);
  bool bound = false;
  while (true) {
    std::string head = rest.substr(0, rest.find(','));
    if (!iequals(head, "verbose")) break;
    b.verbose = true;
    if (head.size() == rest.size()) return bad_bind(text);  // "verbose" alone binds nothing
    rest = rest.substr(head.size() + 1);
  }
  std::string lower = to_lower(rest);
  auto count_after = [&](std::size_t at) -> std::optional<int> {
    auto v = parse_int(rest.substr(at));
    if (!v || *v > 1024) return std::nullopt;
    return static_cast<int>(*v);
  };
  if (lower == "closest") {
    b.kind = GpuBind::Kind::kClosest;
    bound = true;
  } else if (lower == "none") {
    b.kind = GpuBind::Kind::kNone;
    bound = true;
  } else if (lower.rfind("per_task:", 0) == 0) {
    auto n = count_after(9);
    if (!n || *n <= 0) return bad_bind(text);
    b.kind = GpuBind::Kind::kPerTask;
    b.count = *n;
    bound = true;
  } else if (lower.rfind("single:", 0) == 0) {
    auto n = count_after(7);
    if (!n) return bad_bind(text);
    b.kind = GpuBind::Kind::kSingle;
    b.count = std::max(1, *n);  // single:0 runs as single:1 (Slurm 22.05's step daemon said so and went on)
    bound = true;
  } else if (lower.rfind("map_gpu:", 0) == 0 || lower.rfind("mask_gpu:", 0) == 0) {
    const bool mask = lower.rfind("mask_gpu:", 0) == 0;
    b.kind = mask ? GpuBind::Kind::kMaskGpu : GpuBind::Kind::kMapGpu;
    std::string why;
    const std::string list = rest.substr(mask ? 9 : 8);
    if (list.empty()) return bad_bind(text);
    for (const auto& item : split(list, ',')) {
      if (!parse_bind_item(item, mask, b.ids, why)) return bad_bind(text, why);
    }
    bound = !b.ids.empty();
  }
  if (!bound) return bad_bind(text);
  return b;
}

std::string effective_gpu_bind(const std::string& given, int gpus_per_task, int ntasks_per_gpu) {
  if (!given.empty()) return given;
  if (gpus_per_task > 0) return "per_task:" + std::to_string(gpus_per_task);
  if (ntasks_per_gpu > 0) return "single:" + std::to_string(ntasks_per_gpu);
  return "";
}

std::vector<std::size_t> gpus_for_task(const GpuBind& bind, std::string_view bind_text,
                                       const std::vector<int>& step_gpu_ids, int local_id, std::string* complaint) {
  std::vector<std::size_t> out;
  const std::size_t n = step_gpu_ids.size();
  if (bind.kind == GpuBind::Kind::kNone || n == 0) return out;
  const auto task = static_cast<std::size_t>(std::max(0, local_id));
  switch (bind.kind) {
    case GpuBind::Kind::kNone: break;
    case GpuBind::Kind::kClosest:  // no topology is known: every GPU of the step is as close
      for (std::size_t i = 0; i < n; ++i) out.push_back(i);
      break;
    case GpuBind::Kind::kPerTask:
      for (std::size_t i = task * static_cast<std::size_t>(bind.count);
           i < n && i < (task + 1) * static_cast<std::size_t>(bind.count); ++i) {
        out.push_back(i);
      }
      break;
    case GpuBind::Kind::kSingle:
      if (std::size_t i = task / static_cast<std::size_t>(bind.count); i < n) out.push_back(i);
      break;
    case GpuBind::Kind::kMapGpu:
    case GpuBind::Kind::kMaskGpu: {
      const unsigned long want = bind.ids[task % bind.ids.size()];
      for (std::size_t i = 0; i < n; ++i) {
        const auto id = static_cast<unsigned long>(step_gpu_ids[i]);
        bool hit = bind.kind == GpuBind::Kind::kMapGpu ? id == want : id < 64 && ((want >> id) & 1UL) != 0;
        if (hit) out.push_back(i);
      }
      break;
    }
  }
  if (out.empty()) {
    out.push_back(0);
    if (complaint) {
      *complaint = "Bind request gpu:" + std::string(bind_text) + " does not specify any devices within the allocation for task " +
                   std::to_string(local_id) + ". Binding to the first device in the allocation instead.";
    }
  }
  return out;
}

}  // namespace drover
