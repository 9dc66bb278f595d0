// Where Redis listens: one server, redis://[:password@]host[:port][/db] or unix:///path[?db=N],
// or a Redis Cluster, redis+cluster://[user:password@]host:port[,host:port...] (seed nodes: the
// other nodes are discovered from CLUSTER SLOTS).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

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

// What redis.url names.
struct Target {
  std::vector<Address> servers;  // the one server; for a cluster its seeds, in the URL's order
  bool cluster = false;          // redis+cluster://: every server shares the credentials, db 0

  std::string describe() const;  // for logs: never shows the password
};

Expected<Target, std::string> parse_target(std::string_view url);

}  // namespace jq::redis
