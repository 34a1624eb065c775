#include "agent/hw/detect_cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "agent/hw/cuda_probe.hpp"
#include "agent/hw/nvidia_smi.hpp"

namespace drover::agent::hw {
namespace {

// Options that take a value, and where the value goes.
std::map<std::string, std::string DetectCliOptions::*> value_options() {
  return {{"--node", &DetectCliOptions::node_name}, {"--nvidia-smi", &DetectCliOptions::nvidia_smi},
          {"--cuda-library", &DetectCliOptions::cuda_library}};
}

std::map<std::string, std::string DetectOptions::*> detect_value_options() {
  return {{"--fake-gpus", &DetectOptions::fake_gpus},
          {"--fake-gpu-dir", &DetectOptions::fake_gpu_dir},
          {"--nvml-library", &DetectOptions::nvml_library},
          {"--tmp-dir", &DetectOptions::tmp_dir},
          {"--fabric-manager", &DetectOptions::fabric_manager}};
}

}  // namespace

Result<DetectCliOptions> parse_detect_args(const std::vector<std::string>& args) {
  DetectCliOptions o;
  const auto own = value_options();
  const auto det = detect_value_options();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto eq = a.find('=');
    std::string name = a.substr(0, eq);
    bool known = own.count(name) || det.count(name);
    if (known) {
      std::string value;
      if (eq != std::string::npos) {
        value = a.substr(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return make_error("option " + name + " needs a value (e.g. " + name + "=VALUE)");
      }
      if (own.count(name)) o.*(own.at(name)) = value;
      else o.detect.*(det.at(name)) = value;
    } else if (a == "--check-nvidia-smi") {
      o.check_nvidia_smi = true;
    } else if (a == "--cuda") {
      o.cuda = true;
    } else if (a == "-h" || a == "--help") {
      o.help = true;
    } else {
      o.unknown.push_back(a);
    }
  }
  if (o.node_name.empty()) o.node_name = short_host_name();
  return o;
}

std::string detect_usage(const std::string& program) {
  return "usage: " + program +
         " [--node=NAME] [--fake-gpus=TYPE:N[,TYPE:N]] [--fake-gpu-dir=DIR]\n"
         "       [--nvml-library=PATH] [--fabric-manager=PATH] [--tmp-dir=DIR] [--check-nvidia-smi [--nvidia-smi=PATH]]\n"
         "       " + program + " --cuda [--cuda-library=PATH]\n"
         "Prints the CPUs, memory and GPUs of this machine as JSON. GPUs come from NVML\n"
         "(libnvidia-ml.so.1, loaded at run time) unless --fake-gpus declares emulated ones.\n"
         "--check-nvidia-smi also runs nvidia-smi and reports whether both agree (exit 1 if not).\n"
         "--cuda prints instead what a CUDA program started here sees (libcuda.so.1 under this\n"
         "process's CUDA_VISIBLE_DEVICES and devices cgroup), making a context and allocating\n"
         "1 MiB on each device; exit 1 if no device could be used.\n";
}

int run_detect(const DetectCliOptions& opts, const std::function<void(const NodeHardware&, nlohmann::json&)>& extend) {
  if (opts.cuda) {
    CudaView v = probe_cuda(opts.cuda_library);
    std::printf("%s\n", nlohmann::json{{"cuda", cuda_json(v)}}.dump(2).c_str());
    for (const auto& d : v.devices) {
      if (d.use.rfind("ok", 0) == 0) return 0;
    }
    return 1;
  }
  auto hw = detect_hardware(opts.detect);
  if (!hw) {
    std::fprintf(stderr, "error: %s\n", hw.error().message.c_str());
    return 2;
  }
  nlohmann::json doc = hardware_json(*hw, opts.node_name);
  int rc = 0;
  if (opts.check_nvidia_smi) {
    SmiComparison cmp = check_nvidia_smi(*hw, opts.nvidia_smi);
    doc["nvidia_smi_check"] = smi_comparison_json(cmp);
    if (cmp.ran && !cmp.agree) rc = 1;
  }
  if (extend) extend(*hw, doc);
  std::printf("%s\n", doc.dump(2).c_str());
  return rc;
}

int detect_main(const std::vector<std::string>& args, const std::string& program) {
  auto opts = parse_detect_args(args);
  if (!opts) {
    std::fprintf(stderr, "%s: %s\n%s", program.c_str(), opts.error().message.c_str(), detect_usage(program).c_str());
    return 2;
  }
  if (opts->help) {
    std::printf("%s", detect_usage(program).c_str());
    return 0;
  }
  if (!opts->unknown.empty()) {
    std::fprintf(stderr, "%s: unknown option '%s'\n%s", program.c_str(), opts->unknown.front().c_str(),
                 detect_usage(program).c_str());
    return 2;
  }
  return run_detect(*opts);
}

}  // namespace drover::agent::hw
