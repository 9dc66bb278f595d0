// Bearer-token auth without sockets: which token has which role, and what the router answers
// for each role on routes that admit some roles and not others.
#include <catch2/catch.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "src/http/auth.hpp"
#include "src/http/router.hpp"

using jq::config::Auth;
using jq::config::Role;
using jq::config::Token;
using jq::http::Authenticator;
using jq::http::Method;
using jq::http::Request;
using jq::http::Response;
using jq::http::Roles;
using jq::http::Router;

namespace {

const std::string kPush = "push-token-0000000001";
const std::string kWorker = "worker-token-01";  // shorter than the others on purpose
const std::string kAdmin = "admin-token-000000000000000001";

Auth three_tokens() {
  Auth auth;
  auth.configured = true;
  auth.tokens = {Token{kPush, Role::push}, Token{kWorker, Role::worker},
                 Token{kAdmin, Role::admin}};
  return auth;
}

jq::http::Handler answering(int status) {
  return [status](Request&) -> boost::asio::awaitable<Response> {
    co_return Response{status, "text/plain", "", {}};
  };
}

Router make_router(Authenticator authenticator) {
  Router router;
  router.add(Method::get, "/healthz", answering(200));
  router.add(Method::post, "/v1/jobs", Roles{Role::push}, answering(201));
  router.add(Method::post, "/v1/workers", Roles{Role::worker}, answering(202));
  router.add(Method::get, "/v1/stats", Roles{Role::admin}, answering(203));
  router.add(Method::get, "/v1/unannotated", answering(204));
  router.set_authenticator(std::move(authenticator));
  return router;
}

int status_of(const Router& router, Method method, std::string path, const std::string& token) {
  Request req;
  req.method = method;
  req.path = std::move(path);
  if (!token.empty()) req.authorization = "Bearer " + token;
  boost::asio::io_context io;
  int status = 0;
  boost::asio::co_spawn(io, router.handle(req), [&](std::exception_ptr e, Response r) {
    if (e) std::rethrow_exception(e);
    status = r.status;
  });
  io.run();
  return status;
}

}  // namespace

TEST_CASE("each configured token has its role, and nothing else has one", "[unit]") {
  const Authenticator auth(three_tokens());
  CHECK(auth.enabled());
  CHECK(auth.role_of("Bearer " + kPush) == Role::push);
  CHECK(auth.role_of("Bearer " + kWorker) == Role::worker);
  CHECK(auth.role_of("bearer  " + kAdmin) == Role::admin);
  CHECK_FALSE(auth.role_of(""));
  CHECK_FALSE(auth.role_of(kAdmin));
  CHECK_FALSE(auth.role_of("Basic " + kAdmin));
  CHECK_FALSE(auth.role_of("Bearer"));
  CHECK_FALSE(auth.role_of("Bearer " + kWorker + "x"));
  CHECK_FALSE(auth.role_of("Bearer " + kWorker.substr(1)));
  CHECK_FALSE(auth.role_of("Bearer " + kAdmin + "0"));  // longer than every token
  CHECK_FALSE(auth.role_of(std::string("Bearer ") + kWorker + std::string(1, '\0')));
}

TEST_CASE("without an auth section every request passes", "[unit]") {
  const Router router = make_router(Authenticator(Auth{}));
  CHECK(status_of(router, Method::post, "/v1/jobs", "") == 201);
  CHECK(status_of(router, Method::get, "/v1/stats", "") == 203);
  CHECK(status_of(router, Method::get, "/v1/unannotated", "") == 204);
}

TEST_CASE("a route admits its roles and admin, and refuses other roles with 403", "[unit]") {
  const Router router = make_router(Authenticator(three_tokens()));
  CHECK(status_of(router, Method::post, "/v1/jobs", kPush) == 201);
  CHECK(status_of(router, Method::post, "/v1/jobs", kAdmin) == 201);
  CHECK(status_of(router, Method::post, "/v1/jobs", kWorker) == 403);
  CHECK(status_of(router, Method::post, "/v1/workers", kWorker) == 202);
  CHECK(status_of(router, Method::post, "/v1/workers", kPush) == 403);
  CHECK(status_of(router, Method::get, "/v1/stats", kAdmin) == 203);
  CHECK(status_of(router, Method::get, "/v1/stats", kPush) == 403);
  CHECK(status_of(router, Method::get, "/v1/stats", kWorker) == 403);
}

TEST_CASE("under /v1 a missing or unknown token is 401, whether or not the path exists", "[unit]") {
  const Router router = make_router(Authenticator(three_tokens()));
  CHECK(status_of(router, Method::post, "/v1/jobs", "") == 401);
  CHECK(status_of(router, Method::post, "/v1/jobs", "unknown-token-000001") == 401);
  CHECK(status_of(router, Method::get, "/v1/nothing", "") == 401);
  CHECK(status_of(router, Method::get, "/v1", "") == 401);
  CHECK(status_of(router, Method::get, "/v1/nothing", kPush) == 404);
  CHECK(status_of(router, Method::put, "/v1/jobs", kPush) == 405);
}

TEST_CASE("routes without roles are open outside /v1 and admin-only under it", "[unit]") {
  const Router router = make_router(Authenticator(three_tokens()));
  CHECK(status_of(router, Method::get, "/healthz", "") == 200);
  CHECK(status_of(router, Method::get, "/v1x", "") == 404);
  CHECK(status_of(router, Method::get, "/v1/unannotated", kPush) == 403);
  CHECK(status_of(router, Method::get, "/v1/unannotated", kAdmin) == 204);
}

TEST_CASE("auth on with no tokens refuses every /v1 request", "[unit]") {
  Auth bare;
  bare.configured = true;
  const Router router = make_router(Authenticator(bare));
  CHECK(status_of(router, Method::post, "/v1/jobs", kAdmin) == 401);
  CHECK(status_of(router, Method::get, "/healthz", "") == 200);
}

TEST_CASE("an auth section with allow_open and no tokens checks none", "[unit]") {
  Auth open;
  open.configured = true;
  open.allow_open = true;
  const Router router = make_router(Authenticator(open));
  CHECK(status_of(router, Method::post, "/v1/jobs", "") == 201);
  CHECK(status_of(router, Method::get, "/v1/unannotated", "") == 204);
}
