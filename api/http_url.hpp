// Absolute http:// (and, for workers, https://) URLs. Boost 1.74 has no Boost.URL, so this is a
// small parser for the one shape we accept: http[s]://host[:port][/path][?query].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::api {

struct HttpUrl {
  bool https = false;
  std::string host;          // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 80;   // 443 when https and none is given
  std::string target = "/";  // path and query, as sent in the request line
};

// Worker URLs may be https://; the clients that reach the master (jqctl, jqworker, jqbench) speak
// plain HTTP only.
enum class UrlSchemes { http, http_or_https };

// On error, says what is wrong in words that complete "url ..." ("must start with http://").
// Rejected: other schemes (https:// unless allowed, with "only http:// is supported for now"),
// user:password@, fragments, an empty host, a port outside 1-65535, spaces and control characters.
Expected<HttpUrl, std::string> parse_http_url(std::string_view url,
                                              UrlSchemes schemes = UrlSchemes::http);

}  // namespace jq::api
