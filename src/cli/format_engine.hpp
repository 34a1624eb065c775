// The output-format engine shared by squeue, sinfo, sprio (-o/-O forms) and
// sacct, sshare (comma lists with %N widths, parsable output).
//
// -o/--format (squeue, sinfo, sprio): "%[.][size]type" items. Text before,
// between and after items is copied verbatim (leading spaces, '|', ',',
// quotes, control bytes such as \x1E/\x1F: real clients depend on it). '.'
// right-justifies; a size pads and truncates to exactly that many bytes
// (keeping the left part); no size prints the value as is. An unknown type
// letter is reported ("squeue: error: Invalid job format specification: X")
// and its "%..." text is then printed literally, as Slurm does; "%%" prints
// nothing.
//
// -O/--Format (squeue, sinfo): comma list of "name[:[.][size][suffix]]".
// Without ":" a field is 20 bytes wide; with ":" and no size it takes its
// natural width. Fields are not separated: width and suffix do that.
//
// Column lists (sacct, sshare): comma list of "name[%[-]size]". Each column
// is followed by one space (fixed mode) or the delimiter (parsable modes). In
// fixed mode a header line and a line of dashes come first; "%N" sets the
// width and right-justifies, "%-N" left-justifies; values wider than the
// column are cut per field kind: text ends in '+', timestamps are cut
// plainly, numbers and durations are never cut.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace drover::cli {

// ---- -o / -O ---------------------------------------------------------------

struct FieldInfo {
  char code = 0;               // type letter in -o formats; 0 when there is none
  std::string_view long_name;  // -O name (matched case-insensitively); "" when there is none
  std::string_view header;
  // In right-aligned -o columns ("%.10N") Slurm cuts most values and headers to
  // the column, but not all (squeue prints node lists whole, sinfo node-list
  // headers whole, squeue durations whole), in -o and -O formats alike.
  // Left-aligned columns cut everything.
  bool cut = true;         // -o: a value wider than its column is cut
  bool cut_header = true;  // -o: a header wider than its column is cut
  char keep_last = 0;      // when cutting, keep this last character (sinfo's "c*" for "compute*")
};

struct FormatItem {
  int field = -1;           // index into the field table; -1 = literal text only (in suffix)
  int width = 0;            // 0 = natural width
  bool right = false;
  bool auto_width = false;  // widen to the longest value or header (sinfo's default columns)
  std::string suffix;       // literal text printed after the field
};

struct FormatLayout {
  std::string prefix;  // literal text before the first item
  std::vector<FormatItem> items;
  bool long_form = false;  // parsed from -O: left-aligned values and headers are cut to the width
};

// How one cell is fitted into its column.
struct CellStyle {
  bool cut = true;
  char keep_last = 0;
};

struct ParsedFormat {
  FormatLayout layout;
  std::vector<std::string> invalid;  // unknown specifications, as Slurm names them in its error
};

ParsedFormat parse_percent_format(std::string_view fmt, std::span<const FieldInfo> fields);
ParsedFormat parse_long_format(std::string_view fmt, std::span<const FieldInfo> fields, int default_width = 20);

// Pads or truncates `value` to `width` bytes (width 0: unchanged).
std::string fit(std::string_view value, int width, bool right, CellStyle style = {});

// Renders a layout given each item's text (values[i] for layout.items[i])
// and, optionally, how each is fitted (default: cut).
std::string render_line(const FormatLayout& layout, const std::vector<std::string>& values,
                        const std::vector<CellStyle>& styles = {});
// Sets the width of auto_width items to the widest of `rows` (and headers).
void resolve_auto_widths(FormatLayout& layout, const std::vector<std::vector<std::string>>& rows);

template <class Row>
struct Field {
  FieldInfo info;
  std::function<std::string(const Row&)> value;
  // -o only: decides per row whether the value is cut (squeue %R cuts a
  // reason but not a node list); unset = info.cut.
  std::function<bool(const Row&)> cut_if = nullptr;
};

template <class Row>
std::vector<FieldInfo> field_infos(const std::vector<Field<Row>>& fields) {
  std::vector<FieldInfo> out;
  out.reserve(fields.size());
  for (const auto& f : fields) out.push_back(f.info);
  return out;
}

// Header line plus one line per row; every line ends in '\n'.
template <class Row>
std::string render_table(FormatLayout layout, const std::vector<Field<Row>>& fields, const std::vector<Row>& rows,
                         bool header) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  std::vector<std::string> head;
  for (const auto& item : layout.items) head.push_back(item.field < 0 ? "" : std::string(fields[item.field].info.header));
  cells.push_back(std::move(head));
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (const auto& item : layout.items) line.push_back(item.field < 0 ? "" : fields[item.field].value(row));
    cells.push_back(std::move(line));
  }
  resolve_auto_widths(layout, cells);
  auto style = [&](const FormatItem& item, const Row* row) {
    if (item.field < 0) return CellStyle{};
    const Field<Row>& f = fields[item.field];
    // A left-aligned column cuts every value and header to its width (Slurm 22.05's squeue and sinfo:
    // "%10R" heads NODELIST(R, "%3M" prints 0:0); a right-aligned one, -o's or -O's, keeps what the field
    // keeps whole (-O "ReasonList:.5" heads NODELIST(REASON), "TimeUsed:.2" prints 0:00).
    bool cut = (!item.right && (layout.long_form || item.width > 0)) ||
               (row ? (f.cut_if ? f.cut_if(*row) : f.info.cut) : f.info.cut_header);
    return CellStyle{cut, f.info.keep_last};
  };
  std::string out;
  if (header) {
    std::vector<CellStyle> styles;
    for (const auto& item : layout.items) styles.push_back(style(item, nullptr));
    out += render_line(layout, cells[0], styles) + "\n";
  }
  for (std::size_t i = 1; i < cells.size(); ++i) {
    std::vector<CellStyle> styles;
    for (const auto& item : layout.items) styles.push_back(style(item, &rows[i - 1]));
    out += render_line(layout, cells[i], styles) + "\n";
  }
  return out;
}

// ---- column lists (sacct, sshare) ----------------------------------------------

enum class CutStyle {
  kPlus,   // text: cut to width-1 and end in '+'
  kPlain,  // timestamps: cut to width
  kNever,  // numbers, durations: printed whole
};

struct ColumnInfo {
  std::string_view name;    // as listed by --helpformat, matched case-insensitively
  std::string_view header;
  int width = 10;           // default width
  bool right = true;        // default justification
  CutStyle cut = CutStyle::kPlus;
};

struct ColumnItem {
  int field = 0;
  int width = 10;
  bool right = true;
};

// "JobID,State%20,NodeList%-30". Names match exactly (any case) or, failing
// that, as a prefix of a name in table order (sacct: "jobi" is JobID). The
// error is Slurm's: Invalid field requested: "foo".
Result<std::vector<ColumnItem>> parse_column_list(std::string_view list, std::span<const ColumnInfo> columns);

enum class ColumnMode { kFixed, kParsable, kParsable2 };

struct ColumnOptions {
  ColumnMode mode = ColumnMode::kFixed;
  std::string delimiter = "|";  // parsable modes
  bool header = true;
};

std::string render_columns(const std::vector<ColumnItem>& items, std::span<const ColumnInfo> columns,
                           const std::vector<std::vector<std::string>>& rows, const ColumnOptions& opts);

}  // namespace drover::cli
