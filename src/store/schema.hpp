// What a store holds and how its layout evolves.
//
// Record tables follow one convention so the controller can keep jobs,
// nodes, steps, accounting rows, QOS and accounts alike:
//   key      INTEGER or TEXT PRIMARY KEY  (job id, node name, ...)
//   payload  BLOB NOT NULL                (the whole record: serialized protobuf or JSON)
//   <column> typed, usually indexed      (copies of payload fields to query by:
//                                          state, user_id, end_time, ...)
// The payload is the truth; columns exist for lookups without decoding
// every payload (sacct -S/-E, squeue -u), and are written with it.
//
// The layout is versioned: Schema::migrations are applied in order at open,
// each in one transaction, and PRAGMA user_version records the last one
// applied. Released migrations are never edited; a change is a new one.
#pragma once

#include <string>
#include <vector>

#include "common/result.hpp"

namespace drover::store {

enum class ColumnType { kInteger, kReal, kText, kBlob };

struct ColumnDef {
  std::string name;
  ColumnType type = ColumnType::kText;
  bool indexed = true;
};

struct TableDef {
  std::string name;
  ColumnType key_type = ColumnType::kInteger;  // kInteger or kText
  std::vector<ColumnDef> columns;              // besides key and payload
};

struct Migration {
  int version = 0;          // 1, 2, 3, ... consecutive
  std::string description;  // "create jobs and nodes"
  std::vector<std::string> sql;
};

struct Schema {
  // Stored in the database; opening it with another application's schema is
  // refused ("drover-controller").
  std::string application;
  std::vector<Migration> migrations;
  int latest_version() const { return migrations.empty() ? 0 : migrations.back().version; }
};

// Statements that create a record table and the indexes of its indexed columns.
std::vector<std::string> create_table(const TableDef& table);
// Statements that add a column (and its index) to an existing record table;
// existing rows get NULL.
std::vector<std::string> add_column(const std::string& table, const ColumnDef& column);
std::string sql_type(ColumnType type);
// Versions consecutive from 1, application named.
Status check_schema(const Schema& schema);

}  // namespace drover::store
