#include "store/schema.hpp"

#include <fmt/format.h>

namespace drover::store {

std::string sql_type(ColumnType type) {
  switch (type) {
    case ColumnType::kInteger: return "INTEGER";
    case ColumnType::kReal: return "REAL";
    case ColumnType::kText: return "TEXT";
    case ColumnType::kBlob: return "BLOB";
  }
  return "BLOB";
}

namespace {
std::string index_sql(const std::string& table, const std::string& column) {
  return fmt::format("CREATE INDEX {0}__{1} ON {0}({1})", table, column);
}
}  // namespace

std::vector<std::string> create_table(const TableDef& table) {
  std::string sql = fmt::format("CREATE TABLE {} (key {} PRIMARY KEY NOT NULL, payload BLOB NOT NULL",
                                table.name, sql_type(table.key_type));
  for (const auto& c : table.columns) sql += fmt::format(", {} {}", c.name, sql_type(c.type));
  sql += ")";
  std::vector<std::string> out{sql};
  for (const auto& c : table.columns) {
    if (c.indexed) out.push_back(index_sql(table.name, c.name));
  }
  return out;
}

std::vector<std::string> add_column(const std::string& table, const ColumnDef& column) {
  std::vector<std::string> out{
      fmt::format("ALTER TABLE {} ADD COLUMN {} {}", table, column.name, sql_type(column.type))};
  if (column.indexed) out.push_back(index_sql(table, column.name));
  return out;
}

Status check_schema(const Schema& schema) {
  if (schema.application.empty()) return make_error("store: schema has no application name");
  int expected = 1;
  for (const auto& m : schema.migrations) {
    if (m.version != expected) {
      return make_error(fmt::format("store: migration '{}' has version {}; expected {} (versions are "
                                    "consecutive from 1)", m.description, m.version, expected));
    }
    ++expected;
  }
  return {};
}

}  // namespace drover::store
