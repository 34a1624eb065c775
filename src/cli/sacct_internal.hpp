// Shared between sacct's field table and its renderer.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/format_engine.hpp"
#include "cli/sacct_output.hpp"

namespace drover::cli {

struct SacctContext {
  UnixTime now = 0;
  std::optional<char> units;  // --units
  bool noconvert = false;
};

struct SacctField {
  ColumnInfo column;
  std::function<std::string(const AccountingRecord&, const SacctContext&)> value;
};

const std::vector<SacctField>& sacct_fields();

// A size (`value` in `base_unit`, one of K M G T P) as sacct prints it: in
// the --units unit with two decimals, else scaled up while exactly divisible
// ("4096M" -> "4G", "4000M" stays), unscaled with --noconvert.
std::string sacct_size_text(double value, char base_unit, const SacctContext& c);

// --helpformat (sacct -e, sstat -e): names 19 wide, four to a line, one space apart.
std::string help_format_text(const std::vector<std::string_view>& names);

}  // namespace drover::cli
