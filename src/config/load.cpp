// Reading configuration files from disk: load_config and the shared path
// resolution. Parsing itself is in the *_conf.cpp files.
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/model.hpp"
#include "config/parse.hpp"

namespace drover::config {

namespace fs = std::filesystem;

std::string resolve_config_path(std::string_view flag_value, const char* drover_conf, const char* slurm_conf) {
  if (!flag_value.empty()) return std::string(flag_value);
  if (drover_conf != nullptr && *drover_conf != '\0') return drover_conf;
  if (slurm_conf != nullptr && *slurm_conf != '\0') return slurm_conf;
  return kDefaultConfigPath;
}

std::string resolve_config_path(std::string_view flag_value) {
  return resolve_config_path(flag_value, std::getenv("DROVER_CONF"), std::getenv("SLURM_CONF"));
}

Result<std::string> read_config_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return make_error("cannot read " + path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return make_error("cannot read " + path + ": not a regular file");
  if (static_cast<std::size_t>(st.st_size) > kMaxConfigFileBytes) {
    return make_error("cannot read " + path + ": larger than " + std::to_string(kMaxConfigFileBytes >> 20) + " MiB");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) return make_error("cannot read " + path + ": read error");
  return buf.str();
}

namespace {

// gres.conf / qos.conf: the given path (must be readable), else the file of
// that name beside slurm.conf when it exists.
std::string companion_path(const std::string& given, const std::string& slurm_conf, const char* name) {
  if (!given.empty()) return given;
  fs::path beside = fs::path(slurm_conf).parent_path() / name;
  std::error_code ec;
  return fs::exists(beside, ec) ? beside.string() : std::string();
}

template <class ParseFn>
void load_companion(const std::string& given, const std::string& path, const char* key, ClusterConfig& cfg,
                    ParseFn parse) {
  if (path.empty()) return;
  auto text = read_config_file(path);
  if (!text) {
    cfg.diags.add(given.empty() ? Severity::kWarning : Severity::kError, "file-unreadable", SourceLoc{path, 0, 0},
                  key, text.error().message, "fix the file's permissions or path");
    return;
  }
  parse(*text, path, cfg);
}

}  // namespace

Result<ClusterConfig> load_config(const LoadOptions& opts) {
  auto text = read_config_file(opts.slurm_conf);
  if (!text) return text.error();
  ParseOptions parse;
  parse.globals_only = opts.globals_only;
  ClusterConfig cfg = parse_slurm_conf_text(*text, opts.slurm_conf, parse);
  if (opts.globals_only) return cfg;
  load_companion(opts.gres_conf, companion_path(opts.gres_conf, opts.slurm_conf, "gres.conf"), "gres.conf", cfg,
                 parse_gres_conf_text);
  load_companion(opts.qos_conf, companion_path(opts.qos_conf, opts.slurm_conf, "qos.conf"), "qos.conf", cfg,
                 parse_qos_conf_text);
  return cfg;
}

}  // namespace drover::config
