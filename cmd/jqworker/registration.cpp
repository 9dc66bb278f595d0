#include "cmd/jqworker/registration.hpp"

#include <algorithm>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "api/http_url.hpp"

namespace jq::worker {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

namespace {

constexpr std::chrono::seconds kRetryDelay{1};
constexpr std::chrono::seconds kRequestTimeout{5};
constexpr std::chrono::milliseconds kMinHeartbeat{100};
constexpr std::size_t kMaxResponseBytes = 64 * 1024;

struct PostResult {
  int status = 0;  // 0: no answer (see `body` for why)
  std::string body;
};

asio::awaitable<PostResult> post_once(Registration r) {
  auto executor = co_await asio::this_coro::executor;
  tcp::resolver resolver(executor);
  beast::tcp_stream stream(executor);
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(kMaxResponseBytes);
  boost::system::error_code ec;
  auto on_error = asio::redirect_error(asio::use_awaitable, ec);
  auto endpoints =
      co_await resolver.async_resolve(r.master.host, std::to_string(r.master.port), on_error);
  if (!ec) {
    stream.expires_after(kRequestTimeout);
    co_await stream.async_connect(endpoints, on_error);
  }
  if (!ec) {
    bhttp::request<bhttp::string_body> req{bhttp::verb::post, r.master.base_path + "/v1/workers",
                                           11};
    req.set(bhttp::field::host, r.master.host);
    req.set(bhttp::field::content_type, "application/json");
    req.set(bhttp::field::accept, "application/json");
    if (!r.token.empty()) req.set(bhttp::field::authorization, "Bearer " + r.token);
    req.body() = registration_body(r);
    req.prepare_payload();
    co_await bhttp::async_write(stream, req, on_error);
  }
  if (!ec) co_await bhttp::async_read(stream, buffer, parser, on_error);
  if (ec) co_return PostResult{0, ec.message()};
  co_return PostResult{static_cast<int>(parser.get().result_int()), parser.get().body()};
}

std::string worker_id(const std::string& body) {
  auto json = nlohmann::json::parse(body, nullptr, false);
  if (json.is_object() && json.contains("id") && json["id"].is_string()) return json["id"];
  return "?";
}

// After a failure: retry within a second. After a success (only reached with a ttl): ttl/3.
std::chrono::milliseconds next_attempt_delay(const Registration& r, bool ok) {
  if (r.ttl_s == 0) return kRetryDelay;
  const auto heartbeat = std::max<std::chrono::milliseconds>(
      std::chrono::milliseconds(r.ttl_s * 1000 / 3), kMinHeartbeat);
  return ok ? heartbeat : std::min<std::chrono::milliseconds>(heartbeat, kRetryDelay);
}

// Registers, then heartbeats every ttl/3 (or stops after the first success without a ttl).
asio::awaitable<void> registration_loop(Registration r) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  const std::string where = r.master.host + ":" + std::to_string(r.master.port);
  bool registered = false;
  for (;;) {
    const PostResult result = co_await post_once(r);
    const bool ok = result.status == 200 || result.status == 201;
    if (ok && !registered) {
      spdlog::info("registered {} with {} as worker {}{}", r.own_url, where, worker_id(result.body),
                   r.ttl_s == 0 ? "; no ttl: not registering again" : "");
    } else if (!ok) {
      spdlog::warn("registering with {} failed: {} {}", where,
                   result.status == 0 ? std::string("no answer") : std::to_string(result.status),
                   result.body);
    }
    registered = registered || ok;
    if (ok && r.ttl_s == 0) co_return;
    timer.expires_after(next_attempt_delay(r, ok));
    co_await timer.async_wait(asio::use_awaitable);
  }
}

}  // namespace

Expected<MasterUrl, std::string> parse_master_url(std::string_view url) {
  auto parsed = api::parse_http_url(url);
  if (!parsed) return unexpected("the master URL " + parsed.error());
  if (parsed->target.find('?') != std::string::npos) {
    return unexpected(std::string("the master URL must not have a ?query: give its base path"));
  }
  MasterUrl out{std::move(parsed->host), parsed->port, std::move(parsed->target)};
  while (!out.base_path.empty() && out.base_path.back() == '/') out.base_path.pop_back();
  return out;
}

std::string registration_body(const Registration& r) {
  nlohmann::json body = {{"url", r.own_url}, {"names", r.names}, {"concurrency", r.concurrency}};
  if (r.ttl_s > 0) body["ttl"] = r.ttl_s;
  return body.dump();
}

void start_registration(asio::io_context& io, Registration registration) {
  asio::co_spawn(io, registration_loop(std::move(registration)), [](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("registration stopped: {}", ex.what());
    }
  });
}

}  // namespace jq::worker
