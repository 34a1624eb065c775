// Shared between sinfo's field table and its renderer.
#pragma once

#include <vector>

#include "cli/format_engine.hpp"
#include "cli/sinfo_output.hpp"

namespace drover::cli {

// One output line: nodes of one partition (or, when no partition field is
// shown, of several partitions; `part` is then the first one).
struct SinfoRow {
  const PartitionView* part = nullptr;
  std::vector<const NodeView*> nodes;
};

// How a displayed field affects grouping nodes into lines.
enum class SinfoSplit {
  kNone,       // aggregated over the line's nodes
  kPartition,  // lines never mix partitions (%P, %R)
  kValue,      // nodes with different values go to different lines
  kExact,      // kValue with -e, else aggregated ("min+")
};

struct SinfoField {
  Field<SinfoRow> field;
  SinfoSplit split = SinfoSplit::kNone;
};

const std::vector<SinfoField>& sinfo_field_table();
// sinfo's GresUsed: "gpu:h100:2(IDX:0-1)", "gpu:0"; "(null)" for a node without GRES.
std::string gres_used_text(const NodeView& n);
const std::vector<Field<SinfoRow>>& sinfo_fields();  // the same, as the engine wants them

}  // namespace drover::cli
