#include "src/dispatch/worker_call.hpp"

#include <mutex>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/retry_after.hpp"

namespace jq::dispatch {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::use_awaitable;
using asio::ip::tcp;

namespace {

// After the header: parses the body bytes that came with it (usually all of them) without
// another asynchronous read. True when the answer is complete; `ec` set when it is malformed.
template <class Parser>
bool parse_buffered(beast::flat_buffer& buffer, Parser& parser, boost::system::error_code& ec) {
  while (!parser.is_done() && buffer.size() > 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == bhttp::error::need_more) {
      ec = {};
      break;
    }
    if (ec || used == 0) break;
  }
  return parser.is_done();
}

// The whole request in one buffer. Beast's serializer walks a chain of buffer views on every
// write, which cost more instructions than anything else in a worker call. Of headers with the
// same name (case-insensitive) the last one is sent: a registration may replace Accept or
// User-Agent, a job's traceparent replaces a registered one. Names and values were validated
// when the worker registered (tokens; no CR, LF or NUL), so they are written as they are.
std::string encode_request(const std::string& host_port, const WorkerCall& call) {
  std::vector<std::pair<std::string_view, std::string_view>> headers{
      {"Accept", "application/msgpack"}, {"User-Agent", "jqmaster"}};
  for (const auto& [name, value] : call.headers) headers.emplace_back(name, value);
  std::string out;
  out.reserve(256 + call.target.size() + call.body.size());
  out.append("POST ").append(call.target).append(" HTTP/1.1\r\nHost: ").append(host_port);
  out.append("\r\nContent-Type: application/msgpack\r\n");
  for (std::size_t i = 0; i < headers.size(); ++i) {
    bool replaced = false;
    for (std::size_t j = i + 1; j < headers.size() && !replaced; ++j) {
      replaced =
          beast::iequals(beast::string_view(headers[i].first.data(), headers[i].first.size()),
                         beast::string_view(headers[j].first.data(), headers[j].first.size()));
    }
    if (replaced) continue;
    out.append(headers[i].first).append(": ").append(headers[i].second).append("\r\n");
  }
  out.append("Content-Length: ").append(std::to_string(call.body.size())).append("\r\n\r\n");
  out.append(call.body);
  return out;
}

}  // namespace

struct ConnectionPool::Impl {
  asio::any_io_executor executor;
  std::string host;
  std::string port;
  std::string host_port;  // the Host header
  std::size_t max_idle;
  std::mutex mutex;
  std::vector<std::unique_ptr<beast::tcp_stream>> idle;

  std::unique_ptr<beast::tcp_stream> take_idle() {
    std::lock_guard lock(mutex);
    if (idle.empty()) return nullptr;
    auto s = std::move(idle.back());
    idle.pop_back();
    return s;
  }

  void give_back(std::unique_ptr<beast::tcp_stream> s) {
    std::lock_guard lock(mutex);
    if (idle.size() < max_idle) idle.push_back(std::move(s));
  }

  asio::awaitable<std::unique_ptr<beast::tcp_stream>> connect(
      std::chrono::steady_clock::time_point deadline, std::string& error) {
    boost::system::error_code ec;
    tcp::resolver resolver(executor);
    auto endpoints =
        co_await resolver.async_resolve(host, port, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      error = "cannot resolve " + host + ": " + ec.message();
      co_return nullptr;
    }
    auto stream = std::make_unique<beast::tcp_stream>(asio::make_strand(executor));
    stream->expires_at(deadline);
    co_await stream->async_connect(endpoints, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      error = "cannot connect to " + host + ":" + port + ": " + ec.message();
      co_return nullptr;
    }
    stream->socket().set_option(tcp::no_delay(true), ec);
    co_return stream;
  }
};

ConnectionPool::ConnectionPool(asio::any_io_executor executor, std::string host, std::uint16_t port,
                               std::size_t max_idle)
    : impl_(std::make_shared<Impl>()) {
  impl_->executor = std::move(executor);
  impl_->host = std::move(host);
  impl_->port = std::to_string(port);
  impl_->host_port = impl_->host + ":" + impl_->port;
  impl_->max_idle = max_idle;
}

ConnectionPool::~ConnectionPool() = default;

void ConnectionPool::clear() {
  std::lock_guard lock(impl_->mutex);
  impl_->idle.clear();
}

asio::awaitable<WorkerAnswer> ConnectionPool::call(WorkerCall call) {
  auto impl = impl_;
  const std::string request = encode_request(impl->host_port, call);

  WorkerAnswer answer;
  // A pooled connection may have been closed by the worker while idle: if writing to it fails,
  // nothing was delivered, so try once more on a fresh connection.
  for (int round = 0; round < 2; ++round) {
    auto stream = round == 0 ? impl->take_idle() : nullptr;
    const bool reused = stream != nullptr;
    if (!stream) {
      std::string error;
      stream = co_await impl->connect(call.deadline, error);
      if (!stream) {
        answer.kind = std::chrono::steady_clock::now() >= call.deadline
                          ? WorkerAnswer::Kind::timed_out
                          : WorkerAnswer::Kind::unreachable;
        answer.error = error;
        co_return answer;
      }
    }
    stream->expires_at(call.deadline);
    boost::system::error_code ec;
    co_await asio::async_write(*stream, asio::buffer(request),
                               asio::redirect_error(use_awaitable, ec));
    if (ec) {
      if (reused && ec != beast::error::timeout) continue;
      answer.kind = ec == beast::error::timeout ? WorkerAnswer::Kind::timed_out
                                                : WorkerAnswer::Kind::unreachable;
      answer.error = "sending the job failed: " + ec.message();
      co_return answer;
    }
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(call.max_answer_bytes);
    // The header first, so a body declared larger than the limit is refused unread (Beast
    // 1.74's response parser was seen to read a Content-Length body past its body_limit).
    co_await bhttp::async_read_header(*stream, buffer, parser,
                                      asio::redirect_error(use_awaitable, ec));
    if (!ec && parser.content_length() && *parser.content_length() > call.max_answer_bytes) {
      ec = bhttp::error::body_limit;
    }
    if (!ec && !parse_buffered(buffer, parser, ec) && !ec) {
      co_await bhttp::async_read(*stream, buffer, parser, asio::redirect_error(use_awaitable, ec));
    }
    if (!ec && parser.get().body().size() > call.max_answer_bytes) ec = bhttp::error::body_limit;
    if (ec) {
      // A reused connection the worker closed just before our request: nothing was read, so
      // the worker never saw the job.
      if (reused && (ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset) &&
          !parser.got_some()) {
        continue;
      }
      // The deadline timer closing the socket may surface as operation_aborted, not timeout.
      const bool late =
          ec == beast::error::timeout || std::chrono::steady_clock::now() >= call.deadline;
      answer.kind = late ? WorkerAnswer::Kind::timed_out : WorkerAnswer::Kind::broken;
      answer.error = late ? "no answer before the deadline"
                          : "the connection failed before the answer: " + ec.message();
      if (ec == bhttp::error::body_limit) {
        answer.error = "the worker's answer is larger than limits.max_result_bytes (" +
                       std::to_string(call.max_answer_bytes) + " bytes); nothing of it was stored";
      }
      co_return answer;
    }
    auto& res = parser.get();
    answer.kind = WorkerAnswer::Kind::answered;
    answer.status = static_cast<int>(res.result_int());
    answer.content_type = std::string(res[bhttp::field::content_type]);
    answer.retry_after =
        api::parse_retry_after(res[bhttp::field::retry_after], std::chrono::system_clock::now());
    const bool keep = res.keep_alive();
    answer.body = std::move(res.body());
    if (keep) {
      stream->expires_never();
      impl->give_back(std::move(stream));
    }
    co_return answer;
  }
  answer.kind = WorkerAnswer::Kind::unreachable;
  answer.error = "the worker closed the connection";
  co_return answer;
}

}  // namespace jq::dispatch
