// Requests and responses as handlers see them: plain structs, no Beast, so handlers and their
// tests compile without it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jq::http {

enum class Method { get, post, put, patch, del, head, other };

std::string_view to_string(Method method);

struct Request {
  Method method = Method::get;
  std::string path;   // decoded path, without the query
  std::string query;  // raw query string, without '?'
  std::string content_type;
  std::string accept;
  std::string authorization;
  std::string traceparent;  // W3C Trace Context, as sent (not yet validated)
  std::string body;
  std::vector<std::pair<std::string, std::string>> params;  // path parameters set by the router
  // Set by the server while the handler runs; empty outside it (a handler called directly).
  // watch_client(on_left): from now until the handler returns, `on_left` runs (on the
  // connection's executor) if the client closes its side; client_left() says whether it did.
  // For a handler that waits (a long poll): what it waited for must stay for the client's next
  // try, not be taken for an answer nobody reads.
  std::function<void(std::function<void()> on_left)> watch_client;
  std::function<bool()> client_left;

  std::string_view param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string_view content_type;  // a constant name (api::content_type_name and the like)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace jq::http
