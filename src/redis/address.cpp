#include "src/redis/address.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

namespace jq::redis {
namespace {

constexpr std::string_view kForms =
    "use redis://host:port/db, unix:///path/to/redis.sock or "
    "redis+cluster://host:port,host:port (Redis Cluster seed nodes)";

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

std::string problem_with(std::string_view url, std::string_view problem) {
  return "redis url \"" + std::string(url) + "\": " + std::string(problem) + "; " +
         std::string(kForms);
}

Expected<Address, std::string> fail(std::string_view url, std::string_view problem) {
  return unexpected(problem_with(url, problem));
}

Expected<Address, std::string> parse_unix(std::string_view url, std::string_view rest) {
  Address a;
  a.is_unix = true;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    if (!query.starts_with("db=") || !parse_int(query.substr(3), a.db) || a.db < 0) {
      return fail(url, "the only query parameter is db=N");
    }
  }
  if (rest.empty() || rest.front() != '/') return fail(url, "the socket path must be absolute");
  a.host = std::string(rest);
  return a;
}

// %XY sequences decoded (a password may hold any byte: `/` as %2F, `@` as %40, `:` as %3A).
std::optional<std::string> percent_decoded(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    unsigned value = 0;
    if (i + 2 >= text.size()) return std::nullopt;
    const auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
    if (ec != std::errc{} || end != text.data() + i + 3) return std::nullopt;
    out += static_cast<char>(value);
    i += 2;
  }
  return out;
}

// The credentials go before the last `@` (the host and the database have none), so a password
// with a raw `/` still parses; `user:password`, `:password` for the default user.
Expected<Address, std::string> parse_tcp(std::string_view url, std::string_view rest) {
  Address a;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    std::string_view user_info = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = user_info.find(':');
    if (colon == std::string_view::npos) {
      return fail(url,
                  "credentials are written user:password@ (or :password@ for the default "
                  "user)");
    }
    auto username = percent_decoded(user_info.substr(0, colon));
    auto password = percent_decoded(user_info.substr(colon + 1));
    if (!username || !password) {
      return fail(url, "a % in the credentials must be followed by two hex digits (%2F for /)");
    }
    a.username = std::move(*username);
    a.password = std::move(*password);
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = rest.substr(authority.size());
  std::string_view host = authority;
  std::string_view port;
  if (authority.starts_with('[')) {
    auto close = authority.find(']');
    if (close == std::string_view::npos) return fail(url, "unclosed [ in the host");
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return fail(url, "expected :port after ]");
      port = after.substr(1);
    }
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return fail(url, "the host is missing");
  a.host = std::string(host);
  if (!port.empty() && (!parse_int(port, a.port) || a.port == 0)) {
    return fail(url, "the port must be a number between 1 and 65535");
  }
  if (path.size() > 1 && (!parse_int(path.substr(1), a.db) || a.db < 0)) {
    return fail(url, "the database must be a non-negative number");
  }
  return a;
}

// "[user:password@]host:port[,host:port...][/0]": each seed parsed as a redis:// authority.
Expected<Target, std::string> parse_cluster(std::string_view url, std::string_view rest) {
  std::string user_info;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    user_info = std::string(rest.substr(0, at + 1));
    rest = rest.substr(at + 1);
  }
  std::string_view authority = rest.substr(0, rest.find('/'));
  const std::string_view path = rest.substr(authority.size());
  if (path.size() > 1 && path != "/0") {
    return unexpected(problem_with(url, "a Redis Cluster has only database 0"));
  }
  Target target{{}, true};
  while (!authority.empty()) {
    const std::string_view seed = authority.substr(0, authority.find(','));
    authority = authority.substr(std::min(authority.size(), seed.size() + 1));
    if (seed.empty()) return unexpected(problem_with(url, "an empty seed between commas"));
    auto address = parse_tcp(url, user_info + std::string(seed));
    if (!address) return unexpected(address.error());
    target.servers.push_back(std::move(*address));
  }
  if (target.servers.empty()) return unexpected(problem_with(url, "no seed node given"));
  return target;
}

}  // namespace

std::string Address::describe() const {
  if (is_unix) return "unix://" + host + (db != 0 ? "?db=" + std::to_string(db) : "");
  return "redis://" + host + ":" + std::to_string(port) + "/" + std::to_string(db);
}

Expected<Address, std::string> parse_address(std::string_view url) {
  constexpr std::string_view kRedis = "redis://";
  constexpr std::string_view kUnix = "unix://";
  if (url.starts_with(kRedis)) return parse_tcp(url, url.substr(kRedis.size()));
  if (url.starts_with(kUnix)) return parse_unix(url, url.substr(kUnix.size()));
  return fail(url, "unknown scheme");
}

}  // namespace jq::redis

namespace jq::redis {

std::string Target::describe() const {
  if (!cluster) return servers.empty() ? std::string() : servers.front().describe();
  std::string out = "redis+cluster://";
  for (std::size_t i = 0; i < servers.size(); ++i) {
    if (i > 0) out += ",";
    out += servers[i].host + ":" + std::to_string(servers[i].port);
  }
  return out;
}

Expected<Target, std::string> parse_target(std::string_view url) {
  constexpr std::string_view kCluster = "redis+cluster://";
  if (url.starts_with(kCluster)) return parse_cluster(url, url.substr(kCluster.size()));
  auto address = parse_address(url);
  if (!address) return unexpected(address.error());
  return Target{{std::move(*address)}, false};
}

}  // namespace jq::redis
