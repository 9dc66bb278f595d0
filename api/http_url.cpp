#include "api/http_url.hpp"

#include <cctype>

namespace jq::api {

namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

bool is_ipv6_char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':';
}

template <class Pred>
bool all_of(std::string_view s, Pred pred) {
  for (char c : s) {
    if (!pred(c)) return false;
  }
  return true;
}

// "[::1]:8080" -> host "::1", port text "8080"; "example.com" -> host, no port.
Expected<void, std::string> split_authority(std::string_view authority, HttpUrl& url,
                                            std::string_view& port) {
  std::string_view host = authority;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return unexpected(std::string("has an unclosed '['"));
    host = authority.substr(1, close - 1);
    const std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) {
      return unexpected(std::string("has text after the IPv6 address"));
    }
    port = rest.empty() ? rest : rest.substr(1);
    if (host.empty() || !all_of(host, is_ipv6_char)) {
      return unexpected(std::string("has an invalid IPv6 address"));
    }
  } else {
    const std::size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    port = colon == std::string_view::npos ? std::string_view() : authority.substr(colon + 1);
    if (host.empty()) return unexpected(std::string("must name a host: http://HOST[:PORT]/path"));
    if (!all_of(host, is_host_char)) {
      return unexpected(std::string("has an invalid host \"") + std::string(host) + "\"");
    }
  }
  url.host = std::string(host);
  return {};
}

Expected<std::uint16_t, std::string> parse_port(std::string_view text) {
  unsigned long port = 0;
  bool ok = !text.empty() && text.size() <= 5;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    port = port * 10 + static_cast<unsigned long>(c - '0');
  }
  if (!ok || port < 1 || port > 65535) {
    return unexpected("has an invalid port \"" + std::string(text) + "\": use 1-65535");
  }
  return static_cast<std::uint16_t>(port);
}

// Printable ASCII: a request target goes on the wire as it is (RFC 9112), and the URL is stored
// as JSON text, which a byte that is not UTF-8 would break. Other characters are percent-encoded.
bool is_target_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && c != '#';
}

}  // namespace

Expected<HttpUrl, std::string> parse_http_url(std::string_view text, UrlSchemes schemes) {
  HttpUrl url;
  if (starts_with_nocase(text, "https://")) {
    if (schemes != UrlSchemes::http_or_https) {
      return unexpected(std::string("must start with http://: only http:// is supported for now"));
    }
    url.https = true;
    url.port = 443;
    text.remove_prefix(8);
  } else if (starts_with_nocase(text, "http://")) {
    text.remove_prefix(7);
  } else {
    return unexpected(std::string(schemes == UrlSchemes::http_or_https
                                      ? "must be an absolute URL starting with http:// or https://"
                                      : "must be an absolute URL starting with http://"));
  }
  const std::size_t end = text.find_first_of("/?#");
  const std::string_view authority = text.substr(0, end);
  const std::string_view target = end == std::string_view::npos ? "" : text.substr(end);
  if (authority.find('@') != std::string_view::npos) {
    return unexpected(std::string("must not contain user:password@; use headers for credentials"));
  }
  if (!all_of(target, is_target_char)) {
    return unexpected(std::string(
        "must not contain spaces, control characters, non-ASCII bytes (percent-encode them) or a "
        "#fragment"));
  }
  std::string_view port_text;
  if (auto split = split_authority(authority, url, port_text); !split) {
    return unexpected(split.error());
  }
  if (!port_text.empty() || authority.ends_with(':')) {
    auto port = parse_port(port_text);
    if (!port) return unexpected(port.error());
    url.port = *port;
  }
  if (target.starts_with('/'))
    url.target = std::string(target);
  else if (!target.empty())
    url.target = "/" + std::string(target);  // "http://h?x" -> "/?x"
  return url;
}

}  // namespace jq::api
