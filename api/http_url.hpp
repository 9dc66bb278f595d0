// Absolute http:// URLs, as workers register them. Boost 1.74 has no Boost.URL, so this is a
// small parser for the one shape we accept: http://host[:port][/path][?query].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::api {

struct HttpUrl {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = 80;
  std::string target = "/";  // path and query, as sent in the request line
};

// On error, says what is wrong in words that complete "url ..." ("must start with http://").
// Rejected: other schemes (https:// with "only http:// is supported for now"), user:password@,
// fragments, an empty host, a port outside 1-65535, spaces and control characters.
Expected<HttpUrl, std::string> parse_http_url(std::string_view url);

}  // namespace jq::api
