#include "common/tres.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/gres.hpp"
#include "common/strings.hpp"
#include "common/units.hpp"

namespace drover {
namespace {

// TRES without a name, in Slurm's order (their ids 1-8).
const std::vector<std::string> kPlainTres = {"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"};
// Categories that take a name after "/", in the order format_tres prints them.
const std::vector<std::string> kNamedCategories = {"gres", "license", "bb", "fs", "ic"};

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Position in Slurm's print order.
std::size_t print_rank(const std::string& name) {
  auto plain = std::find(kPlainTres.begin(), kPlainTres.end(), name);
  if (plain != kPlainTres.end()) return static_cast<std::size_t>(plain - kPlainTres.begin());
  std::string category = name.substr(0, name.find('/'));
  auto named = std::find(kNamedCategories.begin(), kNamedCategories.end(), category);
  return kPlainTres.size() + static_cast<std::size_t>(named - kNamedCategories.begin());
}

std::string item_text(const std::string& name, int64_t value) {
  return name + "=" + (name == "mem" ? format_memory_mb(value) : std::to_string(value));
}

Error unknown_name(std::string_view name, std::string_view item) {
  std::vector<std::string> candidates = kPlainTres;
  for (const auto& c : kNamedCategories) candidates.push_back(c + "/");
  std::string msg = "unknown TRES " + quoted(name) + " in " + quoted(item) +
                    ": expected cpu, mem, energy, node, billing, fs/disk, vmem, pages, gres/NAME[:TYPE], "
                    "license/NAME, bb/NAME, fs/NAME or ic/NAME";
  // A gres written without its category ("gpu", "gpu:h100") is the usual slip.
  static const std::vector<std::string> kGresNames = {"gpu", "mps", "shard", "mic", "nic"};
  std::string base = to_lower(name.substr(0, name.find(':')));
  bool looks_gres = name.find('/') == std::string_view::npos &&
                    (name.find(':') != std::string_view::npos ||
                     std::find(kGresNames.begin(), kGresNames.end(), base) != kGresNames.end());
  if (looks_gres) {
    msg += " (did you mean \"gres/" + std::string(name) + "\"?)";
  } else if (auto guess = nearest(name, candidates)) {
    msg += " (did you mean " + quoted(*guess) + "?)";
  }
  return make_error(msg);
}

}  // namespace

std::string canonical_tres_name(std::string_view name) {
  std::string_view n = trim(name);
  std::size_t slash = n.find('/');
  std::string category = to_lower(n.substr(0, slash));
  if (slash == std::string_view::npos) {
    bool known = std::find(kPlainTres.begin(), kPlainTres.end(), category) != kPlainTres.end();
    return known ? category : std::string();
  }
  std::string_view rest = n.substr(slash + 1);
  bool known = std::find(kNamedCategories.begin(), kNamedCategories.end(), category) != kNamedCategories.end();
  if (!known) return {};
  // gres/NAME[:TYPE]; the other categories take one word.
  std::size_t colon = category == "gres" ? rest.find(':') : std::string_view::npos;
  if (!is_valid_gres_word(rest.substr(0, colon))) return {};
  if (colon != std::string_view::npos && !is_valid_gres_word(rest.substr(colon + 1))) return {};
  return category + "/" + std::string(category == "fs" ? to_lower(rest) : std::string(rest));
}

const std::vector<std::string>& plain_tres_names() { return kPlainTres; }

std::string format_tres_counts(const std::vector<std::string>& names, const TresMap& tres) {
  std::string out;
  for (const auto& name : names) {
    auto it = tres.find(name);
    if (!out.empty()) out += ",";
    out += name + "=" + std::to_string(it == tres.end() ? 0 : it->second);
  }
  return out;
}

Result<TresMap> parse_tres(std::string_view s) {
  TresMap out;
  if (trim(s).empty()) return out;
  for (const std::string& raw : split(s, ',')) {
    std::string_view item = trim(raw);
    std::size_t eq = item.find('=');
    if (item.empty()) return make_error("empty item in TRES list " + quoted(s) + ": expected name=count items");
    if (eq == std::string_view::npos) {
      return make_error("TRES item " + quoted(item) + " has no \"=\": expected name=count, e.g. cpu=16");
    }
    std::string name = canonical_tres_name(item.substr(0, eq));
    if (name.empty()) return unknown_name(trim(item.substr(0, eq)), item);
    std::string_view value = trim(item.substr(eq + 1));
    auto count = name == "mem" ? parse_memory_mb(value) : parse_count(value, "count");
    if (!count) return make_error("TRES " + quoted(item) + ": " + count.error().message);
    if (!out.emplace(name, *count).second) {
      return make_error("TRES " + quoted(name) + " is given twice in " + quoted(s) + ": keep one");
    }
  }
  return out;
}

std::string format_tres(const TresMap& tres) {
  std::vector<const TresMap::value_type*> items;
  for (const auto& kv : tres) items.push_back(&kv);
  std::stable_sort(items.begin(), items.end(),
                   [](const auto* a, const auto* b) { return print_rank(a->first) < print_rank(b->first); });
  std::vector<std::string> parts;
  for (const auto* kv : items) parts.push_back(item_text(kv->first, kv->second));
  return join(parts, ",");
}

double in_unit(double value, char from, char to) {
  static constexpr std::string_view kUnits = "KMGTP";
  std::size_t u = kUnits.find(from), want = kUnits.find(to);
  if (u == std::string_view::npos || want == std::string_view::npos) return value;
  for (; u < want; ++u) value /= 1024;
  for (; u > want; --u) value *= 1024;
  return value;
}

std::string size_in_unit(double value, char from, char unit) {
  const double v = in_unit(value, from, unit);
  if (std::fmod(v, 1.0) == 0) return fmt::format("{}{}", static_cast<int64_t>(v), unit);
  return fmt::format("{:.2f}{}", v, unit);
}

std::string mb_in_unit(int64_t mb, char unit) {
  if (std::string_view("KMGTP").find(unit) == std::string_view::npos) return std::to_string(mb) + "M";
  return size_in_unit(static_cast<double>(mb), 'M', unit);
}

std::string format_tres_sacct(const TresMap& tres, std::optional<char> mem_unit) {
  std::vector<std::string> parts;
  for (const auto& [name, value] : tres) {
    parts.push_back(name == "mem" && mem_unit ? "mem=" + mb_in_unit(value, *mem_unit) : item_text(name, value));
  }
  std::sort(parts.begin(), parts.end());
  return join(parts, ",");
}

}  // namespace drover
