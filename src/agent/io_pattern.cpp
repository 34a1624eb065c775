#include "agent/io_pattern.hpp"

#include <cctype>

namespace drover::agent {
namespace {

std::string pad(const std::string& digits, int width) {
  if (width <= 0 || static_cast<int>(digits.size()) >= width) return digits;
  return std::string(static_cast<std::size_t>(width) - digits.size(), '0') + digits;
}

// The expansion of one conversion; nullopt-like empty flag for unknown letters.
bool expand_one(char c, int width, const PatternValues& v, std::string& out) {
  switch (c) {
    case '%': out += '%'; return true;
    case 'A': out += pad(std::to_string(v.array_job_id ? v.array_job_id : v.job_id), width); return true;
    case 'a': out += pad(v.array_task, width); return true;
    case 'J':  // "128.0"; the batch step is the job id alone
      out += pad(std::to_string(v.job_id), width) + (v.step == "batch" ? "" : "." + v.step);
      return true;
    case 'j': out += pad(std::to_string(v.job_id), width); return true;
    case 'N': out += v.node_name; return true;
    case 'n': out += pad(std::to_string(v.node_index), width); return true;
    case 's': out += pad(v.step, width); return true;
    case 't': out += pad(std::to_string(v.task_rank), width); return true;
    case 'u': out += v.user; return true;
    case 'x': out += v.job_name; return true;
    default: return false;
  }
}

}  // namespace

std::string expand_io_pattern(std::string_view pattern, const PatternValues& v) {
  std::string out;
  // A backslash anywhere turns every conversion off; each backslash then
  // stands for the character after it (two stand for one; a last one alone
  // is dropped), as Slurm 22.05 named the files (anchor cluster).
  if (pattern.find('\\') != std::string_view::npos) {
    for (std::size_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i] == '\\') ++i;
      if (i < pattern.size()) out += pattern[i];
    }
    return out;
  }
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    std::size_t j = i + 1;
    int width = 0;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) {
      width = width * 10 + (pattern[j] - '0');
      ++j;
    }
    if (j < pattern.size() && expand_one(pattern[j], width, v, out)) {
      i = j;
    } else {
      out += pattern.substr(i, j - i);  // unknown or trailing: literal
      i = j - 1;
    }
  }
  return out;
}

bool pattern_is_per_task(std::string_view pattern) {
  if (pattern.find('\\') != std::string_view::npos) return false;
  for (std::size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    std::size_t j = i + 1;
    while (j < pattern.size() && std::isdigit(static_cast<unsigned char>(pattern[j]))) ++j;
    if (j >= pattern.size()) break;
    char c = pattern[j];
    if (c == 't') return true;
    i = j;  // skips "%%" too
  }
  return false;
}

std::string default_batch_output(bool is_array) { return is_array ? "slurm-%A_%a.out" : "slurm-%j.out"; }

}  // namespace drover::agent
