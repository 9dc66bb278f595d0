// The route table: (method, path pattern, roles) -> handler. Patterns are literal segments and
// {name} segments, e.g. "/v1/jobs/{id}/result". Roles say which tokens may call the route when
// auth is on (src/http/auth.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "src/http/auth.hpp"
#include "src/http/message.hpp"

namespace jq::http {

namespace asio = boost::asio;
using Handler = std::function<boost::asio::awaitable<Response>(Request&)>;

// Whether a GET route answers HEAD too (its answer without the body): not a GET that changes
// something, as fetching a kept result (it is gone once fetched) does.
enum class Head { as_get, refused };

struct Route {
  Method method;
  std::string pattern;
  Roles roles;  // besides admin; empty: open outside /v1, admin only under /v1
  Handler handler;
  Head head = Head::as_get;
};

// Told of every answer handle() gives (500 for a handler that threw): the route whose pattern
// matched the path (null: none did), the request's method and the status. Runs on the request's
// thread; must be cheap and thread-safe.
using Observer = std::function<void(const Route* route, Method method, int status)>;

class Router {
 public:
  void add(Method method, std::string pattern, Handler handler);
  void add(Method method, std::string pattern, Roles roles, Handler handler,
           Head head = Head::as_get);
  // Auth is off until this is called with an enabled Authenticator.
  void set_authenticator(Authenticator authenticator);
  void set_observer(Observer observer);

  struct Match {
    const Handler* handler = nullptr;     // null: no route for this method and path
    const Roles* roles = nullptr;         // the matched route's roles
    const Route* route = nullptr;         // the matched route, else the first with this path
    std::vector<Method> allowed_methods;  // methods the path has, when the method did not match
  };
  // Sets request.params on a match.
  Match match(Request& request) const;

  const std::vector<Route>& routes() const { return routes_; }

  // Runs the matching handler once the caller's token is good for it (401/403 otherwise);
  // answers 404 for an unknown path and 405 (with Allow) for a known path with another method.
  boost::asio::awaitable<Response> handle(Request& request) const;

 private:
  boost::asio::awaitable<Response> answer(Request& request, const Match& m) const;

  std::vector<Route> routes_;
  Authenticator authenticator_;
  Observer observer_;
};

}  // namespace jq::http
