#include "common/pmix_relay.hpp"

#include <algorithm>
#include <cstdlib>

#include "common/strings.hpp"

namespace drover::pmix_wire {
namespace {

constexpr std::size_t kMaxHeader = 512;
constexpr std::size_t kMaxPayload = std::size_t{1} << 31;

bool parse_int(const std::string& s, long long& out) {
  if (s.empty() || s.size() > 19) return false;
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return end && *end == '\0';
}

}  // namespace

std::string encode(const std::vector<std::string>& words, std::string_view payload) {
  std::string out;
  for (const auto& w : words) out += w + " ";
  out += std::to_string(payload.size()) + "\n";
  out.append(payload.data(), payload.size());
  return out;
}

std::vector<int> parse_nodes(const std::string& text, int nnodes) {
  std::vector<int> out;
  if (text == "*") {
    for (int i = 0; i < nnodes; ++i) out.push_back(i);
    return out;
  }
  for (const auto& part : split(text, ',')) {
    long long v = 0;
    if (!parse_int(part, v) || v < 0 || v >= nnodes) return {};
    out.push_back(static_cast<int>(v));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string nodes_text(const std::vector<int>& nodes, int nnodes) {
  std::vector<int> n = nodes;
  std::sort(n.begin(), n.end());
  n.erase(std::unique(n.begin(), n.end()), n.end());
  if (static_cast<int>(n.size()) == nnodes) return "*";
  std::string out;
  for (int v : n) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

bool FrameReader::next(Frame& out) {
  if (bad_) return false;
  std::size_t nl = buf_.find('\n');
  if (nl == std::string::npos) {
    if (buf_.size() > kMaxHeader) bad_ = true;
    return false;
  }
  std::vector<std::string> words = split(buf_.substr(0, nl), ' ');
  long long len = -1;
  if (words.size() < 2 || !parse_int(words.back(), len) || len < 0 || static_cast<std::size_t>(len) > kMaxPayload) {
    bad_ = true;
    return false;
  }
  if (buf_.size() - nl - 1 < static_cast<std::size_t>(len)) return false;
  words.pop_back();
  out.words = std::move(words);
  out.payload = buf_.substr(nl + 1, static_cast<std::size_t>(len));
  buf_.erase(0, nl + 1 + static_cast<std::size_t>(len));
  return true;
}

void Relay::joined(int node) {
  present_.insert(node);
  auto it = held_.find(node);
  if (it == held_.end()) return;
  std::string bytes = std::move(it->second);
  held_.erase(it);
  send_(node, bytes);
}

void Relay::deliver(int node, const std::string& bytes) {
  if (gone_.count(node)) return;
  if (present_.count(node)) send_(node, bytes);
  else held_[node] += bytes;
}

bool Relay::feed(int node, const char* data, std::size_t n) {
  FrameReader& r = readers_[node];
  r.feed(data, n);
  Frame f;
  while (r.next(f)) handle(node, f);
  return !r.bad();
}

void Relay::handle(int node, const Frame& f) {
  const auto& w = f.words;
  const std::string& verb = w[0];
  if (verb == "F" && w.size() == 3) {
    std::vector<int> nodes = parse_nodes(w[2], nnodes_);
    if (nodes.empty() || !std::binary_search(nodes.begin(), nodes.end(), node)) return;
    const std::string key = w[1] + " " + nodes_text(nodes, nnodes_);
    Fence& fence = fences_[key];
    fence.nodes = nodes;
    fence.data[node] = f.payload;
    bool lost = std::any_of(nodes.begin(), nodes.end(), [&](int n) { return gone_.count(n) > 0; });
    if (lost) {
      for (int n : nodes) {
        if (!gone_.count(n)) deliver(n, encode({"X", w[1], w[2]}));
      }
      fences_.erase(key);
      return;
    }
    if (fence.data.size() < nodes.size()) return;
    std::string all;
    for (const auto& [n, d] : fence.data) all += d;  // node order
    const std::string out = encode({"F", w[1], w[2]}, all);
    for (int n : nodes) deliver(n, out);
    fences_.erase(key);
  } else if (verb == "D" && w.size() == 4) {
    long long target = -1;
    if (!parse_int(w[2], target) || target < 0 || target >= nnodes_ || target == node || gone_.count(static_cast<int>(target))) {
      deliver(node, encode({"R", w[1], std::to_string(node), "1"}));
      return;
    }
    asked_[static_cast<int>(target)].insert({node, w[1]});
    deliver(static_cast<int>(target), encode({"D", w[1], std::to_string(node), w[3]}));
  } else if (verb == "R" && w.size() == 4) {
    long long asker = -1;
    if (!parse_int(w[2], asker) || asker < 0 || asker >= nnodes_) return;
    if (asked_[node].erase({static_cast<int>(asker), w[1]}) == 0 || gone_.count(static_cast<int>(asker))) return;
    deliver(static_cast<int>(asker), encode({"R", w[1], std::to_string(node), w[3]}, f.payload));
  } else if (verb == "A" && w.size() == 2) {
    ++aborts_;
    if (abort_message_.empty()) abort_message_ = f.payload;
    for (int n = 0; n < nnodes_; ++n) {
      if (n != node) deliver(n, encode({"A", w[1]}, f.payload));
    }
  }
}

void Relay::left(int node) {
  if (!gone_.insert(node).second) return;
  present_.erase(node);
  readers_.erase(node);
  held_.erase(node);
  for (const auto& [asker, id] : asked_[node]) {
    if (!gone_.count(asker)) deliver(asker, encode({"R", id, std::to_string(node), "1"}));
  }
  asked_.erase(node);
  for (auto it = fences_.begin(); it != fences_.end();) {
    const Fence& fence = it->second;
    if (!std::binary_search(fence.nodes.begin(), fence.nodes.end(), node)) {
      ++it;
      continue;
    }
    const std::string seq = it->first.substr(0, it->first.find(' '));
    const std::string nodes = nodes_text(fence.nodes, nnodes_);
    for (const auto& [n, d] : fence.data) {
      if (!gone_.count(n)) deliver(n, encode({"X", seq, nodes}));
    }
    it = fences_.erase(it);
  }
}

}  // namespace drover::pmix_wire
