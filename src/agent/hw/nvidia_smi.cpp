#include "agent/hw/nvidia_smi.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <sstream>

#include <nlohmann/json.hpp>

namespace drover::agent::hw {
namespace {

std::string strip(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

// fork/exec with the output captured; no shell involved. An exec failure
// comes back through a close-on-exec pipe, so it is told apart from the
// program's own exit status.
Captured run_capture(const std::vector<std::string>& argv) {
  Captured c;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    return c;
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    c.error = std::string("pipe: ") + std::strerror(errno);
    close(out[0]);
    close(out[1]);
    return c;
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = write(err[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    c.error = std::string("fork: ") + std::strerror(errno);
    return c;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(out[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) c.out.append(buf, static_cast<std::size_t>(n));
  }
  close(out[0]);
  int exec_errno = 0;
  c.started = read(err[0], &exec_errno, sizeof exec_errno) != static_cast<ssize_t>(sizeof exec_errno);
  close(err[0]);
  while (waitpid(pid, &c.status, 0) < 0 && errno == EINTR) {
  }
  if (!c.started) c.error = argv[0] + ": " + std::strerror(exec_errno);
  return c;
}

Result<std::vector<SmiGpu>> parse_smi_csv(std::string_view text) {
  std::vector<SmiGpu> out;
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (strip(line).empty()) continue;
    auto c1 = line.find(',');
    auto c2 = c1 == std::string::npos ? c1 : line.rfind(',');
    if (c1 == std::string::npos || c2 == c1) {
      return make_error("nvidia-smi output line " + std::to_string(line_no) + ": expected 'index, name, driver', got '" +
                        line + "'");
    }
    SmiGpu g;
    std::string idx = strip(std::string_view(line).substr(0, c1));
    auto [p, ec] = std::from_chars(idx.data(), idx.data() + idx.size(), g.index);
    if (ec != std::errc() || p != idx.data() + idx.size()) {
      return make_error("nvidia-smi output line " + std::to_string(line_no) + ": index '" + idx + "' is not a number");
    }
    g.name = strip(std::string_view(line).substr(c1 + 1, c2 - c1 - 1));
    g.driver_version = strip(std::string_view(line).substr(c2 + 1));
    out.push_back(std::move(g));
  }
  return out;
}

SmiComparison compare_with_smi(const NodeHardware& hw, std::vector<SmiGpu> smi) {
  SmiComparison c;
  c.ran = true;
  c.smi = std::move(smi);
  if (c.smi.size() != hw.gpus.size()) {
    c.differences.push_back("GPU count: NVML " + std::to_string(hw.gpus.size()) + ", nvidia-smi " +
                            std::to_string(c.smi.size()));
  }
  for (const auto& s : c.smi) {
    const GpuInfo* mine = nullptr;
    for (const auto& g : hw.gpus) {
      if (g.index == s.index) mine = &g;
    }
    const std::string at = "GPU " + std::to_string(s.index);
    if (!mine) {
      c.differences.push_back(at + ": listed by nvidia-smi, not found through NVML");
      continue;
    }
    if (mine->name != s.name) c.differences.push_back(at + " name: NVML '" + mine->name + "', nvidia-smi '" + s.name + "'");
    if (hw.driver_version != s.driver_version) {
      c.differences.push_back(at + " driver: NVML '" + hw.driver_version + "', nvidia-smi '" + s.driver_version + "'");
    }
  }
  c.agree = c.differences.empty();
  return c;
}

SmiComparison check_nvidia_smi(const NodeHardware& hw, const std::string& smi_path) {
  std::vector<std::string> argv = {smi_path.empty() ? "nvidia-smi" : smi_path,
                                   "--query-gpu=index,name,driver_version", "--format=csv,noheader"};
  std::string command = argv[0] + " " + argv[1] + " " + argv[2];
  Captured run = run_capture(argv);
  SmiComparison c;
  if (!run.started || !run.error.empty()) {
    c.command = command;
    c.status = run.error + " (nothing to compare)";
    return c;
  }
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0) {
    c.command = command;
    c.status = "nvidia-smi failed (exit status " + std::to_string(WEXITSTATUS(run.status)) + "): " + strip(run.out);
    return c;
  }
  auto parsed = parse_smi_csv(run.out);
  if (!parsed) {
    c.command = command;
    c.status = parsed.error().message;
    return c;
  }
  c = compare_with_smi(hw, std::move(*parsed));
  c.command = command;
  c.status = "exit 0";
  return c;
}

nlohmann::json smi_comparison_json(const SmiComparison& c) {
  nlohmann::json smi = nlohmann::json::array();
  for (const auto& g : c.smi) smi.push_back({{"index", g.index}, {"name", g.name}, {"driver_version", g.driver_version}});
  nlohmann::json doc = {{"command", c.command}, {"ran", c.ran},          {"status", c.status},
                        {"agree", c.agree},     {"nvidia_smi", smi},     {"differences", c.differences}};
  if (!c.ran) doc["agree"] = nullptr;
  return doc;
}

}  // namespace drover::agent::hw
