// Where a Redis server listens: redis://[:password@]host[:port][/db] or unix:///path[?db=N].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::redis {

struct Address {
  bool is_unix = false;
  std::string host;  // TCP host, or the socket path when is_unix
  std::uint16_t port = 6379;
  int db = 0;
  std::string username;  // Redis 6 ACL user; empty: the default user
  std::string password;

  std::string describe() const;  // for logs: never shows the password
};

// Errors say what is wrong with the URL and what the accepted forms are.
Expected<Address, std::string> parse_address(std::string_view url);

}  // namespace jq::redis
