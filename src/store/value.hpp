// The values the store keeps: record keys and indexed column values.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace drover::store {

// A record's primary key: an integer (job id) or text (node name), as the table declares.
using Key = std::variant<int64_t, std::string>;
// A column value; std::monostate is SQL NULL. Text columns and BLOB columns
// both take std::string (bytes are kept exactly).
using Value = std::variant<std::monostate, int64_t, double, std::string>;

// For messages: 42, 'gpu01', NULL, 1.5.
std::string to_string(const Key& key);
std::string to_string(const Value& value);

}  // namespace drover::store
