#include "cli/format_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/strings.hpp"

namespace drover::cli {
namespace {

int find_code(std::span<const FieldInfo> fields, char c) {
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (fields[i].code != 0 && fields[i].code == c) return static_cast<int>(i);
  return -1;
}

int find_long(std::span<const FieldInfo> fields, std::string_view name) {
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (!fields[i].long_name.empty() && iequals(fields[i].long_name, name)) return static_cast<int>(i);
  return -1;
}

// Reads "[.][digits]" from the front of `s`.
void read_width(std::string_view& s, int& width, bool& right) {
  if (!s.empty() && s.front() == '.') {
    right = true;
    s.remove_prefix(1);
  }
  std::size_t n = 0;
  while (n < s.size() && std::isdigit(static_cast<unsigned char>(s[n]))) ++n;
  width = 0;
  for (std::size_t i = 0; i < n && i < 9; ++i) width = width * 10 + (s[i] - '0');
  s.remove_prefix(n);
}

}  // namespace

ParsedFormat parse_percent_format(std::string_view fmt, std::span<const FieldInfo> fields) {
  ParsedFormat out;
  std::size_t pct = fmt.find('%');
  out.layout.prefix = std::string(fmt.substr(0, pct));
  while (pct != std::string_view::npos) {
    std::size_t next = fmt.find('%', pct + 1);
    std::string_view token = fmt.substr(pct + 1, next == std::string_view::npos ? std::string_view::npos : next - pct - 1);
    pct = next;
    if (token.empty()) continue;  // "%%" prints nothing, as in Slurm
    FormatItem item;
    std::string_view rest = token;
    read_width(rest, item.width, item.right);
    char type = rest.empty() ? '\0' : rest.front();
    item.field = type ? find_code(fields, type) : -1;
    if (item.field < 0) {
      out.invalid.push_back(std::string(type ? std::string_view(&rest.front(), 1) : std::string_view()));
      item = FormatItem{};
      item.suffix = fmt::format("%{}", token);
    } else {
      item.suffix = std::string(rest.substr(1));
    }
    out.layout.items.push_back(std::move(item));
  }
  return out;
}

ParsedFormat parse_long_format(std::string_view fmt, std::span<const FieldInfo> fields, int default_width) {
  ParsedFormat out;
  out.layout.long_form = true;
  for (const auto& entry : split(fmt, ',')) {
    std::string_view e = entry;
    if (e.empty()) continue;  // "JobID:\x1F," and "a,,b": Slurm 22.05 skips empty entries silently
    auto colon = e.find(':');
    FormatItem item;
    item.field = find_long(fields, e.substr(0, colon));
    if (item.field < 0) {
      out.invalid.push_back(std::string(e.substr(0, colon)));
      continue;
    }
    if (colon == std::string_view::npos) {
      item.width = default_width;
    } else {
      std::string_view spec = e.substr(colon + 1);
      // A negative size ("Name:-20"): the value at its natural width and one
      // blank, whatever the size (Slurm 22.05's squeue, anchor cluster).
      const bool negative = !spec.empty() && spec.front() == '-';
      if (negative) spec.remove_prefix(1);
      read_width(spec, item.width, item.right);
      item.suffix = std::string(spec);
      if (negative) {
        item.width = 0;
        item.suffix.insert(0, " ");
      }
    }
    out.layout.items.push_back(std::move(item));
  }
  return out;
}

std::string fit(std::string_view value, int width, bool right, CellStyle style) {
  if (width <= 0) return std::string(value);
  auto w = static_cast<std::size_t>(width);
  if (value.size() > w && style.cut && style.keep_last && value.back() == style.keep_last)
    return std::string(value.substr(0, w - 1)) + style.keep_last;
  if (value.size() >= w) return std::string(style.cut ? value.substr(0, w) : value);
  std::string pad(w - value.size(), ' ');
  return right ? pad + std::string(value) : std::string(value) + pad;
}

std::string render_line(const FormatLayout& layout, const std::vector<std::string>& values,
                        const std::vector<CellStyle>& styles) {
  std::string out = layout.prefix;
  for (std::size_t i = 0; i < layout.items.size(); ++i) {
    const FormatItem& item = layout.items[i];
    if (item.field >= 0) out += fit(values[i], item.width, item.right, i < styles.size() ? styles[i] : CellStyle{});
    out += item.suffix;
  }
  return out;
}

void resolve_auto_widths(FormatLayout& layout, const std::vector<std::vector<std::string>>& rows) {
  for (std::size_t i = 0; i < layout.items.size(); ++i) {
    FormatItem& item = layout.items[i];
    if (!item.auto_width) continue;
    for (const auto& row : rows) item.width = std::max(item.width, static_cast<int>(row[i].size()));
  }
}

// ---- column lists -----------------------------------------------------------------

Result<std::vector<ColumnItem>> parse_column_list(std::string_view list, std::span<const ColumnInfo> columns) {
  std::vector<ColumnItem> items;
  for (const auto& entry : split(list, ',')) {
    if (entry.empty()) continue;
    std::string_view e = entry;
    auto pct = e.find('%');
    std::string_view name = e.substr(0, pct);
    int found = -1;
    for (std::size_t i = 0; i < columns.size() && found < 0; ++i)
      if (iequals(columns[i].name, name)) found = static_cast<int>(i);
    for (std::size_t i = 0; i < columns.size() && found < 0; ++i)
      if (!name.empty() && istarts_with(columns[i].name, name)) found = static_cast<int>(i);
    if (found < 0) return make_error(fmt::format("Invalid field requested: \"{}\"", name));
    ColumnItem item{found, columns[found].width, columns[found].right};
    if (pct != std::string_view::npos) {
      auto w = parse_int(e.substr(pct + 1), true);
      if (!w) return make_error(fmt::format("Invalid field requested: \"{}\"", entry));
      item.width = static_cast<int>(*w < 0 ? -*w : *w);
      item.right = *w >= 0;
    }
    items.push_back(item);
  }
  return items;
}

namespace {

std::string cut_value(std::string_view v, int width, CutStyle cut) {
  auto w = static_cast<std::size_t>(width);
  if (width <= 0 || v.size() <= w || cut == CutStyle::kNever) return std::string(v);
  if (cut == CutStyle::kPlain) return std::string(v.substr(0, w));
  return std::string(v.substr(0, w - 1)) + "+";
}

std::string pad(std::string v, int width, bool right) {
  if (static_cast<int>(v.size()) >= width) return v;
  std::string sp(static_cast<std::size_t>(width) - v.size(), ' ');
  return right ? sp + v : v + sp;
}

}  // namespace

std::string render_columns(const std::vector<ColumnItem>& items, std::span<const ColumnInfo> columns,
                           const std::vector<std::vector<std::string>>& rows, const ColumnOptions& opts) {
  std::string out;
  auto emit = [&](auto cell_of) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      out += cell_of(i);
      bool last = i + 1 == items.size();
      if (opts.mode == ColumnMode::kFixed) out += ' ';
      else if (!last || opts.mode == ColumnMode::kParsable) out += opts.delimiter;
    }
    out += '\n';
  };
  bool fixed = opts.mode == ColumnMode::kFixed;
  if (opts.header) {
    emit([&](std::size_t i) {
      std::string_view h = columns[items[i].field].header;
      return fixed ? fit(h, items[i].width, items[i].right) : std::string(h);
    });
    if (fixed) emit([&](std::size_t i) { return std::string(static_cast<std::size_t>(items[i].width), '-'); });
  }
  for (const auto& row : rows) {
    emit([&](std::size_t i) {
      if (!fixed) return row[i];
      const ColumnItem& it = items[i];
      return pad(cut_value(row[i], it.width, columns[it.field].cut), it.width, it.right);
    });
  }
  return out;
}

}  // namespace drover::cli
