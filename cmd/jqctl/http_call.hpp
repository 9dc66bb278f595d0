// jqctl's HTTP client: one JSON request to the master over a fresh connection (TLS for an
// https:// master), with one deadline for the whole exchange (name resolution, connect,
// handshake, write, read). Beast, Asio and OpenSSL stay inside http_call.cpp so the rest of jqctl
// compiles quickly and knows nothing of sockets.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace jq::ctl {

// The master's address from --url: http[s]://host[:port][/base]. `base_path` prefixes every
// request target ("/v1/...") and has no trailing slash; it is empty for the root.
struct BaseUrl {
  std::string host;         // IPv6 addresses without brackets
  std::uint16_t port = 80;  // 443 for https:// without a port
  std::string base_path;
  bool tls = false;  // https://
};

// The error completes "--url ..." ("must start with http:// or https://").
Expected<BaseUrl, std::string> parse_base_url(std::string_view url);

enum class Method { get, post, put, patch, del };

struct HttpRequest {
  Method method = Method::get;
  std::string target;                    // under the base path, e.g. "/v1/jobs/ID?wait=5"
  std::optional<std::string> json_body;  // sent as Content-Type: application/json
};

struct HttpResponse {
  int status = 0;
  std::string body;
};

struct CallOptions {
  BaseUrl base;
  std::string token;  // sent as Authorization: Bearer TOKEN when not empty
  std::chrono::milliseconds timeout{70'000};
  std::string
      ca_file;  // https: PEM CAs the master's certificate must chain to; empty: the system's
};

// Whether `path` is a readable PEM file of CA certificates (--cacert), whatever the URL's scheme.
Expected<void, std::string> check_ca_file(const std::string& path);

// Sends `request` with Accept: application/json and returns the master's answer, whatever its
// status. The error (no answer at all: refused, unresolvable, timed out, dropped, a certificate
// that does not verify) is a sentence for people, e.g. "cannot connect to 127.0.0.1:8080:
// Connection refused".
Expected<HttpResponse, std::string> http_call(const CallOptions& options,
                                              const HttpRequest& request);

}  // namespace jq::ctl
