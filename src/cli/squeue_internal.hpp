// Shared between squeue's field table and its renderer.
#pragma once

#include <vector>

#include "cli/format_engine.hpp"
#include "cli/squeue_output.hpp"

namespace drover::cli {

struct SqueueRow {
  const JobView* job = nullptr;
  UnixTime now = 0;
};

const std::vector<Field<SqueueRow>>& squeue_fields();

struct SqueueStepRow {
  const StepView* step = nullptr;
  UnixTime now = 0;
};

const std::vector<Field<SqueueStepRow>>& squeue_step_fields();

}  // namespace drover::cli
