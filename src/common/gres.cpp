#include "common/gres.hpp"

#include <algorithm>

#include "common/strings.hpp"
#include "common/units.hpp"

namespace drover {
namespace {

constexpr std::string_view kGresForms = "expected name[:type][:count], e.g. gpu:8 or gpu:h100:8";

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

// Splits at commas outside "(...)": "gpu:2(S:0,1),mps:100" has two items.
std::vector<std::string_view> gres_items(std::string_view s) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i < s.size() && s[i] == '(') ++depth;
    if (i < s.size() && s[i] == ')' && depth > 0) --depth;
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      out.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

// Drops a socket suffix "(S:0-1)"; refuses other text after it.
Result<std::string_view> without_sockets(std::string_view item) {
  std::size_t open = item.find('(');
  if (open == std::string_view::npos) return item;
  if (item.back() != ')') {
    return make_error("gres " + quoted(item) + " has text after its \"(...)\": " + std::string(kGresForms));
  }
  return trim(item.substr(0, open));
}

bool is_count(std::string_view s) { return parse_count(s).ok(); }

Result<GresSpec> parse_item(std::string_view item) {
  auto body = without_sockets(item);
  if (!body) return body.error();
  std::string_view text = *body;
  if (istarts_with(text, "gres/")) text.remove_prefix(5);
  std::vector<std::string> f = split(text, ':');
  GresSpec g;
  // The no_consume flag sits before the count; "gpu:no_consume" is the flag with count 1.
  auto flag = std::find_if(f.begin() + 1, f.end(), [](const std::string& x) { return iequals(x, "no_consume"); });
  bool no_consume = flag != f.end();
  if (no_consume) f.erase(flag);
  if (f.size() > 3) {
    return make_error("gres " + quoted(item) + " has too many fields: " + std::string(kGresForms) +
                      " (or name[:type]:no_consume:count)");
  }
  g.name = f[0];
  g.no_consume = no_consume;
  if (f.size() == 3 || (f.size() == 2 && !is_count(f[1]))) g.type = f[1];
  if (f.size() == 3 || (f.size() == 2 && g.type.empty())) {
    auto count = parse_count(f.back(), "gres count");
    if (!count) return make_error("gres " + quoted(item) + ": " + count.error().message);
    g.count = *count;
  }
  if (g.name.empty() || (f.size() == 3 && g.type.empty())) {
    return make_error("gres " + quoted(item) + " has an empty " + (g.name.empty() ? "name" : "type") + ": " +
                      std::string(kGresForms));
  }
  for (const std::string* part : {&g.name, &g.type}) {
    if (!part->empty() && !is_valid_gres_word(*part)) {
      return make_error("gres " + quoted(item) + ": " + quoted(*part) +
                        " may not hold spaces, control characters, \"=\", \"/\" or parentheses; " +
                        std::string(kGresForms));
    }
  }
  return g;
}

}  // namespace

bool is_valid_gres_word(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u == 0x7f || std::string_view(":,=/()").find(c) != std::string_view::npos) return false;
  }
  return !s.empty();
}

std::string GresSpec::str() const {
  std::string out = name;
  if (!type.empty()) out += ":" + type;
  if (no_consume) out += ":no_consume";
  return out + ":" + std::to_string(count);
}

std::string tres_per_text(const std::vector<GresSpec>& list) {
  std::string out;
  for (const GresSpec& g : list) out += (out.empty() ? "gres:" : ",gres:") + g.str();
  return out;
}

std::string GresSpec::tres_name() const { return "gres/" + name + (type.empty() ? "" : ":" + type); }

Result<std::vector<GresSpec>> parse_gres_list(std::string_view s) {
  std::vector<GresSpec> out;
  std::string_view t = trim(s);
  if (t.empty() || t == "(null)") return out;
  for (std::string_view item : gres_items(t)) {
    if (item.empty()) return make_error("empty item in gres list " + quoted(s) + ": " + std::string(kGresForms));
    auto g = parse_item(item);
    if (!g) return g.error();
    out.push_back(std::move(*g));
  }
  return out;
}

std::string format_gres_list(const std::vector<GresSpec>& list) {
  if (list.empty()) return "(null)";
  std::vector<std::string> parts;
  for (const auto& g : list) parts.push_back(g.str());
  return join(parts, ",");
}

}  // namespace drover
