#include "src/http/router.hpp"

#include <string_view>

#include "api/media_type.hpp"
#include "src/http/respond.hpp"

namespace jq::http {
namespace {

std::string_view next_segment(std::string_view& path) {
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  auto slash = path.find('/');
  std::string_view segment = path.substr(0, slash);
  path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
  return segment;
}

bool matches(std::string_view pattern, std::string_view path,
             std::vector<std::pair<std::string, std::string>>& params) {
  params.clear();
  while (!pattern.empty() || !path.empty()) {
    if (pattern.empty() || path.empty()) return false;
    std::string_view want = next_segment(pattern);
    std::string_view have = next_segment(path);
    if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
      if (have.empty()) return false;
      params.emplace_back(std::string(want.substr(1, want.size() - 2)), std::string(have));
    } else if (want != have) {
      return false;
    }
  }
  return true;
}

}  // namespace

void Router::add(Method method, std::string pattern, Handler handler) {
  add(method, std::move(pattern), Roles{}, std::move(handler));
}

void Router::add(Method method, std::string pattern, Roles roles, Handler handler, Head head) {
  routes_.push_back(Route{method, std::move(pattern), std::move(roles), std::move(handler), head});
}

void Router::set_authenticator(Authenticator authenticator) {
  authenticator_ = std::move(authenticator);
}

void Router::set_observer(Observer observer) {
  observer_ = std::move(observer);
}

Router::Match Router::match(Request& request) const {
  Match result;
  std::vector<std::pair<std::string, std::string>> params;
  for (const Route& route : routes_) {
    if (!matches(route.pattern, request.path, params)) continue;
    if (route.method == request.method ||
        (request.method == Method::head && route.method == Method::get &&
         route.head == Head::as_get)) {
      request.params = std::move(params);
      result.handler = &route.handler;
      result.roles = &route.roles;
      result.route = &route;
      return result;
    }
    if (result.route == nullptr) result.route = &route;
    result.allowed_methods.push_back(route.method);
  }
  return result;
}

boost::asio::awaitable<Response> Router::handle(Request& request) const {
  const Match m = match(request);
  Response r;
  try {
    r = co_await answer(request, m);
  } catch (...) {
    if (observer_) observer_(m.route, request.method, 500);
    throw;
  }
  if (observer_) observer_(m.route, request.method, r.status);
  co_return r;
}

boost::asio::awaitable<Response> Router::answer(Request& request, const Match& m) const {
  if (auto refused = authenticator_.check(request, m.roles)) co_return std::move(*refused);
  // "Anything else with a body: 415" holds on every route, also those that read no body.
  if (m.handler != nullptr && !request.body.empty() &&
      !api::parse_content_type(request.content_type)) {
    co_return respond_error(request, api::ErrorCode::unsupported_media_type,
                            "Content-Type \"" + request.content_type +
                                "\" is not supported: send the body as application/msgpack or "
                                "application/json");
  }
  if (m.handler != nullptr) co_return co_await (*m.handler)(request);
  if (m.allowed_methods.empty()) {
    co_return respond_error(request, api::ErrorCode::not_found,
                            "no such endpoint: " + request.path + "; see openapi/master.yaml");
  }
  std::string allowed;
  for (Method method : m.allowed_methods) {
    if (!allowed.empty()) allowed += ", ";
    allowed += to_string(method);
  }
  Response r =
      respond_error(request, api::ErrorCode::not_found,
                    (request.method == Method::other ? std::string("this method")
                                                     : std::string(to_string(request.method))) +
                        " is not allowed on " + request.path + "; use " + allowed);
  r.status = 405;
  r.headers.emplace_back("Allow", allowed);
  co_return r;
}

}  // namespace jq::http
