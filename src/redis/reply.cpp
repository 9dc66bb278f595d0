#include "src/redis/reply.hpp"

#include <charconv>

namespace jq::redis {

std::optional<std::int64_t> Reply::as_integer() const {
  if (type == Type::integer) return integer;
  if (!is_string()) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(str.data(), str.data() + str.size(), value);
  if (ec != std::errc{} || end != str.data() + str.size()) return std::nullopt;
  return value;
}

}  // namespace jq::redis
