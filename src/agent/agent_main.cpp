#include "agent/agent_main.hpp"

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "agent/hw/detect_cli.hpp"
#include "agent/node_check.hpp"
#include "agent/stepd.hpp"
#include "config/model.hpp"

namespace drover::agent {
namespace {

// --config PATH (or DROVER_CONF): compare with the node's declaration.
int detect_with_config(const hw::DetectCliOptions& opts, const std::string& conf_path) {
  auto cfg = config::load_config(config::LoadOptions{conf_path, "", ""});
  if (!cfg) {
    std::fprintf(stderr, "drover agent --detect: %s\n", cfg.error().message.c_str());
    return 2;
  }
  const config::NodeConfig* node = cfg->find_node(opts.node_name);
  if (!node) {
    std::fprintf(stderr, "drover agent --detect: node '%s' is not declared in %s (pass --node NAME)\n",
                 opts.node_name.c_str(), conf_path.c_str());
    return 2;
  }
  return hw::run_detect(opts, [&](const hw::NodeHardware& found, nlohmann::json& doc) {
    hw::NodeHardware hw = found;
    if (hw.gpus.empty() && opts.detect.fake_gpus.empty()) {
      std::vector<std::string> notes;
      hw.gpus = gpus_from_gres_conf(*cfg, node->name, &notes);
      for (const auto& n : notes) doc["notes"].push_back(n);
      if (!hw.gpus.empty()) {
        doc["gpu_source"] = "gres.conf";
        doc["gpu_count"] = hw.gpus.size();
      }
    }
    NodeCheck check = compare_with_config(hw, *node);
    doc["config_check"] = {{"config", conf_path},
                           {"node", node->name},
                           {"ok", check.ok()},
                           {"problems", check.problems},
                           {"drain_reason", check.drain_reason()}};
  });
}

int detect(const std::vector<std::string>& args) {
  auto opts = hw::parse_detect_args(args);
  if (!opts) {
    std::fprintf(stderr, "drover agent --detect: %s\n", opts.error().message.c_str());
    return 2;
  }
  if (opts->help) {
    std::printf("%s  --config=PATH  compare with the node's slurm.conf/gres.conf declaration\n",
                hw::detect_usage("drover agent --detect").c_str());
    return 0;
  }
  std::string conf;
  for (std::size_t i = 0; i < opts->unknown.size(); ++i) {
    const std::string& a = opts->unknown[i];
    if (a.rfind("--config=", 0) == 0) {
      conf = a.substr(9);
    } else if (a == "--config" && i + 1 < opts->unknown.size()) {
      conf = opts->unknown[++i];
    } else {
      std::fprintf(stderr, "drover agent --detect: unknown option '%s'\n%s", a.c_str(),
                   hw::detect_usage("drover agent --detect").c_str());
      return 2;
    }
  }
  if (conf.empty()) return hw::run_detect(*opts);
  return detect_with_config(*opts, conf);
}

}  // namespace

int agent_main(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "--detect") return detect({args.begin() + 1, args.end()});
  if (!args.empty() && args[0] == "--stepd") return stepd_main({args.begin() + 1, args.end()});
  for (const auto& a : args) {
    if (a == "--detect") {
      std::vector<std::string> rest;
      for (const auto& b : args) {
        if (b != "--detect") rest.push_back(b);
      }
      return detect(rest);
    }
  }
  std::fprintf(stderr,
               "drover agent: the node agent daemon is `drover agent --node NAME` (src/agentd); this entry takes "
               "--detect [--config PATH --node NAME] [--fake-gpus=TYPE:N] [--check-nvidia-smi] and --stepd DIR\n");
  return 2;
}

}  // namespace drover::agent
