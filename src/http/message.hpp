// Requests and responses as handlers see them: plain structs, no Beast, so handlers and their
// tests compile without it.
#pragma once

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

  std::string_view param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string_view content_type;  // a constant name (api::content_type_name and the like)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace jq::http
