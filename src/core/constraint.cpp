#include "core/constraint.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace drover::core {

struct Constraint::Node {
  enum class Kind { kFeature, kAnd, kOr, kMatchingOr } kind = Kind::kFeature;
  std::string feature;
  int32_t count = 0;  // kFeature with "*N"
  std::vector<std::unique_ptr<Node>> kids;

  std::unique_ptr<Node> clone() const {
    auto n = std::make_unique<Node>();
    n->kind = kind;
    n->feature = feature;
    n->count = count;
    for (const auto& k : kids) n->kids.push_back(k->clone());
    return n;
  }
};

namespace {

using NodePtr = std::unique_ptr<Constraint::Node>;
using Kind = Constraint::Node::Kind;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':' ||
         c == '=' || c == '+' || c == '/' || c == '@';
}

// Recursive descent over the expression text.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<NodePtr> parse_all() {
    auto e = parse_or();
    if (!e) return e;
    skip_space();
    if (pos_ != s_.size()) return fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return e;
  }

 private:
  Result<NodePtr> parse_or() {
    auto first = parse_and();
    if (!first) return first;
    NodePtr left = std::move(first).value();
    while (peek() == '|') {
      ++pos_;
      auto right = parse_and();
      if (!right) return right;
      left = join(Kind::kOr, std::move(left), std::move(right).value());
    }
    return left;
  }

  Result<NodePtr> parse_and() {
    auto first = parse_term();
    if (!first) return first;
    NodePtr left = std::move(first).value();
    while (peek() == '&' || peek() == ',') {
      ++pos_;
      auto right = parse_term();
      if (!right) return right;
      left = join(Kind::kAnd, std::move(left), std::move(right).value());
    }
    return left;
  }

  Result<NodePtr> parse_term() {
    char c = peek();
    if (c == '(' || c == '[') {
      ++pos_;
      auto inner = parse_or();
      if (!inner) return inner;
      char close = c == '(' ? ')' : ']';
      if (peek() != close) return fail(std::string("expected '") + close + "'");
      ++pos_;
      NodePtr n = std::move(inner).value();
      if (c == '[' && n->kind == Kind::kOr) n->kind = Kind::kMatchingOr;
      return parse_count(std::move(n));
    }
    size_t start = pos_;
    while (pos_ < s_.size() && is_name_char(s_[pos_])) ++pos_;
    if (pos_ == start) {
      return fail(pos_ == s_.size() ? "expected a feature name at the end" : "expected a feature name");
    }
    auto n = std::make_unique<Constraint::Node>();
    n->feature = std::string(s_.substr(start, pos_ - start));
    return parse_count(std::move(n));
  }

  Result<NodePtr> parse_count(NodePtr n) {
    if (peek() != '*') return n;
    ++pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == start) return fail("expected a node count after '*'");
    int64_t v = std::stoll(std::string(s_.substr(start, std::min<size_t>(pos_ - start, 9))));
    if (v <= 0) return fail("a node count after '*' must be at least 1");
    if (n->kind != Kind::kFeature) return fail("a node count ('*N') applies to one feature name");
    n->count = static_cast<int32_t>(v);
    return n;
  }

  static NodePtr join(Kind k, NodePtr a, NodePtr b) {
    if (a->kind == k) {
      a->kids.push_back(std::move(b));
      return a;
    }
    auto n = std::make_unique<Constraint::Node>();
    n->kind = k;
    n->kids.push_back(std::move(a));
    n->kids.push_back(std::move(b));
    return n;
  }

  char peek() {
    skip_space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  Error fail(const std::string& what) const {
    return make_error("invalid constraint \"" + std::string(s_) + "\" at position " + std::to_string(pos_ + 1) +
                      ": " + what);
  }

  std::string_view s_;
  size_t pos_ = 0;
};

bool eval(const Constraint::Node& n, const NodeSpec& node) {
  switch (n.kind) {
    // "f*N" asks that N of the job's nodes have f; the others need not.
    case Kind::kFeature: return n.count > 0 || node.has_feature(n.feature);
    case Kind::kAnd:
      return std::all_of(n.kids.begin(), n.kids.end(), [&](const auto& k) { return eval(*k, node); });
    case Kind::kOr:
    case Kind::kMatchingOr:
      return std::any_of(n.kids.begin(), n.kids.end(), [&](const auto& k) { return eval(*k, node); });
  }
  return false;
}

void collect_features(const Constraint::Node& n, std::set<std::string>& out) {
  if (n.kind == Kind::kFeature) out.insert(n.feature);
  for (const auto& k : n.kids) collect_features(*k, out);
}

void collect_counts(const Constraint::Node& n, std::vector<Constraint::CountTerm>& out) {
  if (n.kind == Kind::kFeature && n.count > 0) out.push_back({n.feature, n.count});
  for (const auto& k : n.kids) collect_counts(*k, out);
}

}  // namespace

Constraint::Constraint() = default;
Constraint::~Constraint() = default;
Constraint::Constraint(const Constraint& o) : text_(o.text_), root_(o.root_ ? o.root_->clone() : nullptr) {}
Constraint& Constraint::operator=(const Constraint& o) {
  if (this != &o) {
    text_ = o.text_;
    root_ = o.root_ ? o.root_->clone() : nullptr;
  }
  return *this;
}
Constraint::Constraint(Constraint&&) noexcept = default;
Constraint& Constraint::operator=(Constraint&&) noexcept = default;

Result<Constraint> Constraint::parse(std::string_view text) {
  Constraint c;
  c.text_ = std::string(text);
  bool blank = std::all_of(text.begin(), text.end(), [](char ch) { return ch == ' ' || ch == '\t'; });
  if (blank) return c;
  auto root = Parser(text).parse_all();
  if (!root) return root.error();
  c.root_ = std::move(root).value();
  return c;
}

namespace {

bool same_node(const Constraint::Node* a, const Constraint::Node* b) {
  if (!a || !b) return a == b;
  if (a->kind != b->kind || a->feature != b->feature || a->count != b->count || a->kids.size() != b->kids.size()) {
    return false;
  }
  for (size_t i = 0; i < a->kids.size(); ++i) {
    if (!same_node(a->kids[i].get(), b->kids[i].get())) return false;
  }
  return true;
}

}  // namespace

bool Constraint::operator==(const Constraint& o) const {
  return text_ == o.text_ && same_node(root_.get(), o.root_.get());
}

bool Constraint::empty() const { return root_ == nullptr; }

bool Constraint::matches(const NodeSpec& node) const { return !root_ || eval(*root_, node); }

std::vector<std::string> Constraint::features() const {
  std::set<std::string> out;
  if (root_) collect_features(*root_, out);
  return {out.begin(), out.end()};
}

std::vector<Constraint> Constraint::alternatives() const {
  std::vector<Constraint> out;
  // A top-level [a|b], alone or as one operand of a top-level '&', splits
  // the job into alternatives; anything else is one alternative.
  const Node* bracket = nullptr;
  if (root_ && root_->kind == Kind::kMatchingOr) bracket = root_.get();
  if (root_ && root_->kind == Kind::kAnd) {
    for (const auto& k : root_->kids) {
      if (k->kind == Kind::kMatchingOr) bracket = k.get();
    }
  }
  if (!bracket) {
    out.push_back(*this);
    return out;
  }
  for (const auto& option : bracket->kids) {
    Constraint alt;
    alt.text_ = text_;
    if (root_.get() == bracket) {
      alt.root_ = option->clone();
    } else {
      alt.root_ = std::make_unique<Node>();
      alt.root_->kind = Kind::kAnd;
      for (const auto& k : root_->kids) alt.root_->kids.push_back(k.get() == bracket ? option->clone() : k->clone());
    }
    out.push_back(std::move(alt));
  }
  return out;
}

std::vector<Constraint::CountTerm> Constraint::counts() const {
  std::vector<CountTerm> out;
  if (root_) collect_counts(*root_, out);
  return out;
}

}  // namespace drover::core
