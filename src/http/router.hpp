// The route table: (method, path pattern) -> handler. Patterns are literal segments and
// {name} segments, e.g. "/v1/jobs/{id}/result".
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/http/message.hpp"

namespace jq::http {

namespace asio = boost::asio;
using Handler = std::function<boost::asio::awaitable<Response>(Request&)>;

struct Route {
  Method method;
  std::string pattern;
  Handler handler;
};

class Router {
 public:
  void add(Method method, std::string pattern, Handler handler);

  struct Match {
    const Handler* handler = nullptr;      // null: no route for this method and path
    std::vector<Method> allowed_methods;   // methods the path has, when the method did not match
  };
  // Sets request.params on a match.
  Match match(Request& request) const;

  const std::vector<Route>& routes() const { return routes_; }

  // Runs the matching handler; answers 404 for an unknown path and 405 (with Allow) for a known
  // path with another method.
  boost::asio::awaitable<Response> handle(Request& request) const;

 private:
  std::vector<Route> routes_;
};

}  // namespace jq::http
