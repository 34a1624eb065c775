// Command line of hardware detection, shared by `drover agent --detect` and
// the standalone `drover-detect`.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "agent/hw/hardware.hpp"

namespace drover::agent::hw {

struct DetectCliOptions {
  DetectOptions detect;
  std::string node_name;      // --node (default: the short host name)
  bool check_nvidia_smi = false;
  std::string nvidia_smi;     // --nvidia-smi=PATH (default: search PATH)
  bool cuda = false;          // --cuda: print what a CUDA program sees here instead
  std::string cuda_library;   // --cuda-library=PATH (default libcuda.so.1)
  bool help = false;
  std::vector<std::string> unknown;  // options this parser does not know, in order
};

// Accepts --fake-gpus=SPEC, --fake-gpu-dir=DIR, --nvml-library=PATH, --node=NAME,
// --check-nvidia-smi, --nvidia-smi=PATH, --tmp-dir=DIR, --cuda, --cuda-library=PATH, -h/--help (also with the
// value as the next word). Unknown options are collected, not rejected, so a
// caller can add its own; values missing after an option are errors.
Result<DetectCliOptions> parse_detect_args(const std::vector<std::string>& args);

std::string detect_usage(const std::string& program);

// Detects, optionally compares with nvidia-smi, lets `extend` add fields to the
// document, prints it as JSON on stdout. Exit status: 0; 1 when
// --check-nvidia-smi ran and disagreed; 2 on a usage error. With --cuda it
// prints only what the CUDA driver offers this process ({"cuda": ...}), exit
// 0 when at least one device could be used and 1 when none.
int run_detect(const DetectCliOptions& opts,
               const std::function<void(const NodeHardware&, nlohmann::json&)>& extend = {});

// main() of `drover-detect`.
int detect_main(const std::vector<std::string>& args, const std::string& program);

}  // namespace drover::agent::hw
