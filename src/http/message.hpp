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

// For a handler that waits (a long poll): what it waited for must stay for the client's next
// try, not be taken for an answer nobody reads.
class ClientWatch {
 public:
  // From now until the handler returns, `on_left` runs (on the connection's executor) if the
  // client closes its side.
  virtual void watch(std::function<void()> on_left) = 0;
  // Whether it did, since watch().
  virtual bool left() const = 0;

 protected:
  ~ClientWatch() = default;
};

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
  // The client as the server sees it while the handler runs; null outside the server (a
  // handler called directly).
  ClientWatch* client = nullptr;

  std::string_view param(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string_view content_type;  // a constant name (api::content_type_name and the like)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace jq::http
