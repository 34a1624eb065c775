// Field-level helpers shared by the trace readers: one way to say where a
// bad value is ("trace.csv:12: field mem: ..."), and the value syntaxes the
// native and sacct formats have in common.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/duration.hpp"
#include "common/result.hpp"
#include "core/job.hpp"

namespace drover::sim {

// Calls fn(line_no, line) for each line of `text` (1-based; '\r' trimmed),
// stopping at the first error fn returns.
template <class Fn>
Status for_each_line(std::string_view text, Fn&& fn) {
  int64_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Status st = fn(++line_no, line); !st) return st;
    pos = nl + 1;
  }
  return {};
}

// "NAME:LINE: field FIELD: MESSAGE".
Error field_error(const std::string& name, int64_t line, std::string_view field, std::string_view message);

// A CSV field: as is, or "quoted" (with "" for a quote) when it holds ',', '"' or a newline.
std::string csv_quote(std::string_view v);

// Seconds: a bare integer is seconds ("3600"); anything with ':' or '-', or
// INFINITE/UNLIMITED, is Slurm's duration syntax ("12:00:00", "2-00:00:00").
Result<Seconds> parse_seconds(std::string_view s);

// yes/no, true/false, 1/0 (any case); "" is false.
Result<bool> parse_flag(std::string_view s);

// Slurm's --dependency syntax (common/dependency.hpp) on trace job ids, as
// the core takes it; "" is no dependency.
Result<core::Dependency> parse_dependency(std::string_view s);

// "YYYY-MM-DDTHH:MM:SS" read as UTC (the replay needs differences only, and
// must not depend on the machine's time zone). Errors name the form.
Result<int64_t> parse_iso_utc(std::string_view s);

}  // namespace drover::sim
