// An owned RESP2 reply tree, built as hiredis's reader parses (src/redis/resp.cpp); it can cross
// threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jq::redis {

struct Reply {
  enum class Type { nil, integer, string, status, error, array };

  Type type = Type::nil;
  std::int64_t integer = 0;
  std::string str;  // bulk string, status text or error text
  std::vector<Reply> elements;

  bool is_nil() const { return type == Type::nil; }
  bool is_error() const { return type == Type::error; }
  bool is_integer() const { return type == Type::integer; }
  bool is_string() const { return type == Type::string || type == Type::status; }
  bool is_array() const { return type == Type::array; }

  // An integer reply, or a string holding a decimal integer (as HGET returns them).
  std::optional<std::int64_t> as_integer() const;
};

}  // namespace jq::redis
