// Node feature expressions, as Slurm's --constraint takes them:
//   h100              nodes with feature h100
//   h100&bigmem       both          a100|h100   either, node by node
//   [a100|h100]       one of them, the same for every node of the job
//   h100*2            at least 2 of the job's nodes have h100
//   (a|b)&c           grouping
// '&' binds tighter than '|'. Names are feature words (letters, digits,
// '_', '-', '.', ':', '=' ...).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"
#include "core/cluster.hpp"

namespace drover::core {

class Constraint {
 public:
  Constraint();  // empty: every node matches
  ~Constraint();
  Constraint(const Constraint&);
  Constraint& operator=(const Constraint&);
  Constraint(Constraint&&) noexcept;
  Constraint& operator=(Constraint&&) noexcept;

  // Errors name the position and what was expected.
  static Result<Constraint> parse(std::string_view text);

  bool empty() const;
  // Does one node satisfy the expression (counts ignored)?
  bool matches(const NodeSpec& node) const;
  // Every feature name mentioned, sorted, unique.
  std::vector<std::string> features() const;
  // Top-level matching-OR brackets ([a|b]): the alternatives, each a
  // constraint that every node of the job must meet. A constraint without
  // one is its own single alternative.
  std::vector<Constraint> alternatives() const;
  // Count terms (feature*N): the job's nodes must include N with feature.
  struct CountTerm {
    std::string feature;
    int32_t count = 0;
  };
  std::vector<CountTerm> counts() const;
  const std::string& text() const { return text_; }
  // The same text and the same expression (an alternative of a bracket
  // keeps the whole text: its expression tells it from the others).
  bool operator==(const Constraint& o) const;

  struct Node;

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
};

}  // namespace drover::core
