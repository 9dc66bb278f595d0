// `listen`: "host:port" with IPv6 hosts in brackets ("[::1]:8080"). The host is only checked for
// shape here; whether it resolves is the listener's business at start-up.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "common/ascii.hpp"
#include "src/config/values.hpp"

namespace jq::config {
namespace {

constexpr std::string_view kListenForm =
    "must be HOST:PORT, e.g. 127.0.0.1:8080, 0.0.0.0:8080 or [::1]:8080";

struct HostPort {
  std::string_view host;
  std::string_view port;
};

// Splits "[v6]:port" or "host:port"; throws when the text has neither shape.
HostPort split_host_port(const std::string& key, std::string_view text) {
  if (text.starts_with('[')) {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos || text.substr(close + 1, 1) != ":") {
      detail::fail_value(key, kListenForm, text);
    }
    return {text.substr(1, close - 1), text.substr(close + 2)};
  }
  const std::size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) detail::fail_value(key, kListenForm, text);
  HostPort parts{text.substr(0, colon), text.substr(colon + 1)};
  if (parts.host.find(':') != std::string_view::npos) {
    detail::fail_value(key, "an IPv6 address needs brackets, e.g. [::1]:8080", text);
  }
  return parts;
}

std::uint16_t port_from(const std::string& key, std::string_view port, std::string_view text) {
  unsigned value = 0;
  const char* end = port.data() + port.size();
  const auto [stop, ec] = std::from_chars(port.data(), end, value);
  if (port.empty() || ec != std::errc() || stop != end || value < 1 || value > 65535) {
    detail::fail_value(key, "the port must be a number between 1 and 65535", text);
  }
  return static_cast<std::uint16_t>(value);
}

bool has_space(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); });
}

}  // namespace

bool ListenAddress::is_loopback() const {
  if (ascii_iequals(host, "localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

std::string to_string(const ListenAddress& address) {
  const bool v6 = address.host.find(':') != std::string::npos;
  const std::string host = v6 ? "[" + address.host + "]" : address.host;
  return host + ":" + std::to_string(address.port);
}

ListenAddress parse_listen(const std::string& text) {
  return detail::listen_from("listen", text);
}

namespace detail {

ListenAddress listen_from(const std::string& key, std::string_view text) {
  const HostPort parts = split_host_port(key, text);
  if (parts.host.empty()) {
    fail_value(key,
               "needs a host before the port: 127.0.0.1 for this machine only, 0.0.0.0 for "
               "every interface",
               text);
  }
  if (has_space(parts.host)) fail_value(key, "the host must not contain spaces", text);
  return ListenAddress{std::string(parts.host), port_from(key, parts.port, text)};
}

}  // namespace detail
}  // namespace jq::config
