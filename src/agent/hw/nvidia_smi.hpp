// Cross-check of NVML detection against nvidia-smi, for the lent GPU machine:
// `drover-detect --check-nvidia-smi`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "agent/hw/hardware.hpp"

namespace drover::agent::hw {

// A program's run with its standard output captured (no shell).
struct Captured {
  bool started = false;  // false: it could not be executed (error says why)
  int status = 0;        // wait status
  std::string out;
  std::string error;
};
Captured run_capture(const std::vector<std::string>& argv);

struct SmiGpu {
  int index = 0;
  std::string name;
  std::string driver_version;
};

struct SmiComparison {
  bool ran = false;      // nvidia-smi was found and exited 0
  bool agree = false;    // same count, and per index the same name and driver version
  std::string command;   // what was run
  std::string status;    // why it did not run, or its exit status
  std::vector<SmiGpu> smi;
  std::vector<std::string> differences;  // one line per disagreement
};

// Parses `nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader`
// output ("0, NVIDIA H200, 550.54.15" per line). Malformed lines are errors.
Result<std::vector<SmiGpu>> parse_smi_csv(std::string_view text);

// Compares what NVML found with what nvidia-smi printed.
SmiComparison compare_with_smi(const NodeHardware& hw, std::vector<SmiGpu> smi);

// Runs nvidia-smi (searched in PATH, `smi_path` when not empty) and compares.
SmiComparison check_nvidia_smi(const NodeHardware& hw, const std::string& smi_path = "");

nlohmann::json smi_comparison_json(const SmiComparison& c);

}  // namespace drover::agent::hw
