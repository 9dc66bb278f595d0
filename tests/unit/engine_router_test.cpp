// The route table: literal and {param} segments, 404 and 405 (with the allowed methods), and
// HEAD answered by the GET route.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <tuple>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "src/http/router.hpp"

using jq::http::Method;
using jq::http::Request;
using jq::http::Response;
using jq::http::Router;

namespace {

// A handler that answers with `status`, so a test can tell which route ran.
jq::http::Handler answering(int status) {
  return [status](Request&) -> boost::asio::awaitable<Response> {
    co_return Response{status, "text/plain", "", {}};
  };
}

Router make_router() {
  Router router;
  router.add(Method::get, "/healthz", answering(200));
  router.add(Method::post, "/v1/jobs", answering(201));
  router.add(Method::get, "/v1/jobs/stats", answering(202));
  router.add(Method::get, "/v1/jobs/{id}", answering(203));
  router.add(Method::del, "/v1/jobs/{id}", answering(204));
  router.add(Method::get, "/v1/jobs/{id}/result", answering(205));
  return router;
}

Request request(Method method, std::string path) {
  Request r;
  r.method = method;
  r.path = std::move(path);
  return r;
}

// Which route matched, by its index in routes(); -1 for none.
int matched_route(const Router& router, Router::Match& m) {
  for (std::size_t i = 0; i < router.routes().size(); ++i) {
    if (m.handler == &router.routes()[i].handler) return static_cast<int>(i);
  }
  return -1;
}

Response run(const Router& router, Request& req) {
  boost::asio::io_context io;
  Response out;
  boost::asio::co_spawn(io, router.handle(req), [&](std::exception_ptr e, Response r) {
    if (e) std::rethrow_exception(e);
    out = std::move(r);
  });
  io.run();
  return out;
}

}  // namespace

TEST_CASE("a literal path matches its route and sets no params", "[unit]") {
  Router router = make_router();
  auto req = request(Method::get, "/healthz");
  auto m = router.match(req);
  CHECK(matched_route(router, m) == 0);
  CHECK(req.params.empty());
}

TEST_CASE("a {param} segment matches any non-empty segment and is recorded", "[unit]") {
  Router router = make_router();
  auto req = request(Method::get, "/v1/jobs/3-00000000A");
  auto m = router.match(req);
  CHECK(matched_route(router, m) == 3);
  CHECK(req.param("id") == "3-00000000A");

  auto result = request(Method::get, "/v1/jobs/7-x/result");
  auto mr = router.match(result);
  CHECK(matched_route(router, mr) == 5);
  CHECK(result.param("id") == "7-x");
  CHECK(result.param("other").empty());
}

TEST_CASE("a literal route added before a {param} route of the same shape takes its path",
          "[unit]") {
  Router router = make_router();
  auto req = request(Method::get, "/v1/jobs/stats");
  auto m = router.match(req);
  CHECK(matched_route(router, m) == 2);
  CHECK(req.params.empty());
}

TEST_CASE("the method picks among routes of one path", "[unit]") {
  Router router = make_router();
  auto del = request(Method::del, "/v1/jobs/1-abc");
  auto m = router.match(del);
  CHECK(matched_route(router, m) == 4);
  CHECK(del.param("id") == "1-abc");
}

TEST_CASE("paths that differ in a segment, in length or by a trailing slash do not match",
          "[unit]") {
  Router router = make_router();
  for (const char* path :
       {"/healthz/", "/v1/jobs/", "/v1/jobs/x/", "/v1/jobz/x", "/v1", "/v1/jobs/x/result/more",
        "/v1/jobs//result", "/", "", "/v1/jobs/x/results"}) {
    INFO(path);
    auto req = request(Method::get, path);
    auto m = router.match(req);
    CHECK(m.handler == nullptr);
    CHECK(m.allowed_methods.empty());
  }
}

TEST_CASE("a known path with another method reports the methods it allows", "[unit]") {
  Router router = make_router();
  auto put = request(Method::put, "/v1/jobs/1-abc");
  auto m = router.match(put);
  CHECK(m.handler == nullptr);
  CHECK(m.allowed_methods == std::vector<Method>{Method::get, Method::del});

  auto post = request(Method::post, "/healthz");
  CHECK(router.match(post).allowed_methods == std::vector<Method>{Method::get});

  auto get_jobs = request(Method::get, "/v1/jobs");
  CHECK(router.match(get_jobs).allowed_methods == std::vector<Method>{Method::post});
}

TEST_CASE("HEAD is answered by the GET route of a path", "[unit]") {
  Router router = make_router();
  auto head = request(Method::head, "/v1/jobs/2-abc/result");
  auto m = router.match(head);
  CHECK(matched_route(router, m) == 5);
  CHECK(head.param("id") == "2-abc");

  auto head_post_only = request(Method::head, "/v1/jobs");
  auto none = router.match(head_post_only);
  CHECK(none.handler == nullptr);
  CHECK(none.allowed_methods == std::vector<Method>{Method::post});
}

TEST_CASE("a GET route that changes something refuses HEAD, naming GET", "[unit]") {
  Router router;
  router.add(Method::get, "/v1/jobs/{id}/result", jq::http::Roles{}, answering(205),
             jq::http::Head::refused);
  auto head = request(Method::head, "/v1/jobs/2-abc/result");
  auto m = router.match(head);
  CHECK(m.handler == nullptr);
  CHECK(m.allowed_methods == std::vector<Method>{Method::get});
  auto get = request(Method::get, "/v1/jobs/2-abc/result");
  CHECK(router.match(get).handler != nullptr);
}

TEST_CASE("handle runs the matching route's handler", "[unit]") {
  Router router = make_router();
  auto req = request(Method::del, "/v1/jobs/1-abc");
  CHECK(run(router, req).status == 204);
}

TEST_CASE("handle answers 404 for an unknown path", "[unit]") {
  Router router = make_router();
  auto req = request(Method::get, "/nope");
  Response r = run(router, req);
  CHECK(r.status == 404);
  CHECK(r.headers.empty());
}

TEST_CASE("handle answers 405 with an Allow header for a known path", "[unit]") {
  Router router = make_router();
  auto req = request(Method::put, "/v1/jobs/1-abc");
  Response r = run(router, req);
  CHECK(r.status == 405);
  CHECK(r.headers == std::vector<std::pair<std::string, std::string>>{{"Allow", "GET, DELETE"}});
  CHECK_THAT(r.body, Catch::Contains("GET, DELETE"));
}

TEST_CASE("a 405 for a method the master does not know names no method", "[unit]") {
  Router router = make_router();
  auto req = request(Method::other, "/v1/jobs");
  Response r = run(router, req);
  CHECK(r.status == 405);
  CHECK_THAT(r.body, Catch::Contains("this method is not allowed on /v1/jobs; use POST"));
}

TEST_CASE("a body of another type is 415 also on a route that reads none", "[unit]") {
  Router router = make_router();
  auto req = request(Method::get, "/v1/jobs/stats");
  req.body = "hello";
  req.content_type = "text/plain";
  Response r = run(router, req);
  CHECK(r.status == 415);
  CHECK_THAT(r.body, Catch::Contains("Content-Type \\\"text/plain\\\" is not supported"));
  req.content_type = "application/json";  // a body the route ignores, of a type the master reads
  CHECK(run(router, req).status == 202);
  req.body.clear();
  req.content_type = "text/plain";  // no body: its type does not matter
  CHECK(run(router, req).status == 202);
}

TEST_CASE("the observer hears each answer with the route's pattern, never the raw path", "[unit]") {
  Router router = make_router();
  router.add(Method::get, "/boom", [](Request&) -> boost::asio::awaitable<Response> {
    throw std::runtime_error("handler failed");
    co_return Response{};
  });
  std::vector<std::tuple<std::string, Method, int>> heard;
  router.set_observer([&heard](const jq::http::Route* route, Method method, int status) {
    heard.emplace_back(route != nullptr ? route->pattern : "(none)", method, status);
  });
  auto get_job = request(Method::get, "/v1/jobs/1-abc");
  auto unknown = request(Method::get, "/nope");
  auto not_allowed = request(Method::put, "/v1/jobs/1-abc");
  auto boom = request(Method::get, "/boom");
  run(router, get_job);
  run(router, unknown);
  run(router, not_allowed);
  CHECK_THROWS_AS(run(router, boom), std::runtime_error);
  using Heard = std::tuple<std::string, Method, int>;
  CHECK(heard == std::vector<Heard>{
                     Heard{"/v1/jobs/{id}", Method::get, 203}, Heard{"(none)", Method::get, 404},
                     Heard{"/v1/jobs/{id}", Method::put, 405}, Heard{"/boom", Method::get, 500}});
}
