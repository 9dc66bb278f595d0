#include "src/redis/address.hpp"

#include <charconv>

namespace jq::redis {
namespace {

constexpr std::string_view kForms = "use redis://host:port/db or unix:///path/to/redis.sock";

template <class Int>
bool parse_int(std::string_view text, Int& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc{} && end == text.data() + text.size();
}

Expected<Address, std::string> fail(std::string_view url, std::string_view problem) {
  return unexpected("redis url \"" + std::string(url) + "\": " + std::string(problem) + "; " +
                    std::string(kForms));
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

Expected<Address, std::string> parse_tcp(std::string_view url, std::string_view rest) {
  Address a;
  std::string_view authority = rest.substr(0, rest.find('/'));
  std::string_view path = rest.substr(authority.size());
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view user_info = authority.substr(0, at);
    authority = authority.substr(at + 1);
    auto colon = user_info.find(':');
    if (colon != std::string_view::npos) {
      a.username = std::string(user_info.substr(0, colon));
      a.password = std::string(user_info.substr(colon + 1));
    }
  }
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
