#include "src/dispatch/worker_call.hpp"

#include <array>
#include <mutex>
#include <optional>
#include <type_traits>
#include <variant>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/retry_after.hpp"
#include "common/message_parser.hpp"
#include "common/read_message.hpp"
#include "common/send_now.hpp"
#include "common/serial_executor.hpp"
#include "common/socket_deadline.hpp"
#include "common/socket_peek.hpp"
#include "src/dispatch/tls_contexts.hpp"
#include "src/util/header_lines.hpp"

namespace jq::dispatch {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using namespace std::string_view_literals;
using asio::use_awaitable;
using asio::ip::tcp;

namespace {

// The whole request in one buffer (src/util/header_lines.hpp says why). Of headers with the
// same name (case-insensitive) the last one is sent: a registration may replace Accept or
// User-Agent, a job's traceparent replaces a registered one. Names and values were validated
// when the worker registered (tokens; no CR, LF or NUL), so they are written as they are.
std::string encode_request(const std::string& host_port, const WorkerCall& call) {
  HeaderLines headers{{"Accept", "application/msgpack"}, {"User-Agent", "jqmaster"}};
  for (const auto& [name, value] : call.headers) headers.emplace_back(name, value);
  std::string out;
  out.reserve(256 + call.target.size() + call.body.size());
  out.append("POST "sv).append(call.target).append(" HTTP/1.1\r\nHost: "sv).append(host_port);
  out.append("\r\nContent-Type: application/msgpack\r\n"sv);
  append_header_lines(out, headers);
  out.append("Content-Length: "sv).append(std::to_string(call.body.size())).append("\r\n\r\n"sv);
  out.append(call.body);
  return out;
}

using TlsStream = ssl::stream<tcp::socket>;

// A TLS connection closed politely (close_notify) gets this long for the worker's reply.
constexpr std::chrono::seconds kTlsShutdownTimeout{1};

// How often a busy connection's deadline timer looks: a job timeout of at least this costs no
// timer operation per call (common/socket_deadline.hpp).
constexpr std::chrono::seconds kDeadlineTick{1};

// One connection to the worker: plain TCP, or TLS over it. Its deadline (connecting, a call's
// exchange, a polite close) is kept by `deadline`.
struct Connection {
  explicit Connection(const asio::any_io_executor& executor)
      : stream(std::in_place_type<tcp::socket>, executor),
        deadline(std::make_shared<SocketDeadline>(socket(), kDeadlineTick)) {}
  Connection(const asio::any_io_executor& executor, std::shared_ptr<ssl::context> tls)
      : context(std::move(tls)),
        stream(std::in_place_type<TlsStream>, executor, *context),
        deadline(std::make_shared<SocketDeadline>(socket(), kDeadlineTick)) {}

  tcp::socket& socket() {
    if (auto* tls = std::get_if<TlsStream>(&stream)) return tls->next_layer();
    return std::get<tcp::socket>(stream);
  }

  std::shared_ptr<ssl::context> context;  // outlives the stream that uses it
  std::variant<tcp::socket, TlsStream> stream;
  std::shared_ptr<SocketDeadline> deadline;  // its timer holds it weakly
};

// The certificate must be for the URL's host: an IP address is matched against the
// certificate's IP entries, a name against its DNS names (and sent as SNI, which takes no IP).
std::string expect_peer(SSL* ssl, const std::string& host) {
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  boost::system::error_code not_ip;
  asio::ip::make_address(host, not_ip);
  if (!not_ip) {
    if (X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1) return "bad IP address";
    return {};
  }
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  if (X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size()) != 1 ||
      SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    return "bad host name";
  }
  return {};
}

// Why a handshake failed, in words for last_error: OpenSSL's own reason for a certificate
// that did not verify, else the handshake's error.
std::string handshake_error(SSL* ssl, const boost::system::error_code& ec,
                            const std::string& origin) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    return "TLS: certificate verify failed (" + std::string(X509_verify_cert_error_string(verify)) +
           ") for " + origin;
  }
  return "TLS: handshake with " + origin + " failed: " + ec.message();
}

// An interim answer (100 Continue, 103 Early Hints): the answer to the job follows it. 101
// (Switching Protocols) ends the exchange as it is: the master never asks for it.
bool interim(unsigned status) {
  return status >= 100 && status < 200 && status != 101;
}

// Whether a failed exchange ran out of time. The connection's deadline closes the socket, which
// surfaces as operation_aborted or a reset rather than a timeout error: the clock says it.
bool past_deadline(const WorkerCall& call) {
  return std::chrono::steady_clock::now() >= call.deadline;
}

// What one request on one connection came to.
struct Exchange {
  WorkerAnswer answer;
  bool retry = false;  // writing to a reused connection failed: nothing was delivered
  bool keep = false;   // the connection may serve the next call
};

template <class Stream>
asio::awaitable<Exchange> exchange(Stream& stream, const std::string& request,
                                   const WorkerCall& call, bool reused) {
  Exchange out;
  WorkerAnswer& answer = out.answer;
  boost::system::error_code ec;
  std::array<asio::const_buffer, 1> unwritten{asio::buffer(request)};
  if constexpr (std::is_same_v<Stream, tcp::socket>) {
    unwritten = send_now(stream.native_handle(), unwritten, ec);
  }
  if (!ec && asio::buffer_size(unwritten) > 0) {
    co_await asio::async_write(stream, unwritten, asio::redirect_error(use_awaitable, ec));
  }
  if (ec) {
    // A pooled connection may have been closed by the worker while idle: if writing to it
    // fails, nothing was delivered.
    const bool late = past_deadline(call);
    out.retry = reused && !late;
    answer.kind = late ? WorkerAnswer::Kind::timed_out : WorkerAnswer::Kind::unreachable;
    answer.error = "sending the job failed: " + ec.message();
    co_return out;
  }
  beast::flat_buffer buffer;
  // Interim answers are read whole (a header) and skipped: left unread, the answer to this job
  // would be taken for the next one sent on the connection. A parser reads one message.
  std::optional<MessageParser<false>> parsing;
  do {
    parsing.emplace();
    parsing->body_limit(call.max_answer_bytes);
    // The header first, so a body declared larger than the limit is refused unread (Beast
    // 1.74's response parser was seen to read a Content-Length body past its body_limit).
    ec = co_await read_message(stream, buffer, *parsing, ReadUntil::header);
  } while (!ec && interim(parsing->status()));
  auto& parser = *parsing;
  if (!ec && parser.content_length() && *parser.content_length() > call.max_answer_bytes) {
    ec = bhttp::error::body_limit;
  }
  if (!ec) ec = co_await read_message(stream, buffer, parser, ReadUntil::whole);
  if (!ec && parser.body().size() > call.max_answer_bytes) ec = bhttp::error::body_limit;
  // A status other than 200 is the answer whatever its body says: a busy worker's or a proxy's
  // large error page is still a 503, a 500 still a 500 (its body, left unread, stays out of the
  // failure's message, and the connection is not used again).
  if (ec == bhttp::error::body_limit && parser.is_header_done() && parser.status() != 200) {
    answer.kind = WorkerAnswer::Kind::answered;
    answer.status = static_cast<int>(parser.status());
    answer.retry_after =
        api::parse_retry_after(parser.fields().retry_after, std::chrono::system_clock::now());
    answer.body = "(a body larger than limits.max_result_bytes, not read)";
    out.keep = false;
    co_return out;
  }
  if (ec) {
    // The job was sent (a pooled connection the worker had closed is not reused, see
    // Impl::take_idle): a close or a reset now means the worker went away holding it (it
    // crashed running it). Sending it again would find the worker down and give the attempt
    // back uncounted, again and again, so that a job that crashes its worker would never end
    // dead: the attempt counts.
    const bool late = past_deadline(call);
    answer.kind = late ? WorkerAnswer::Kind::timed_out : WorkerAnswer::Kind::broken;
    answer.error = late ? "no answer before the deadline"
                        : "the connection failed before the answer: " + ec.message();
    if (!late && (ec == asio::error::connection_reset || ec == bhttp::error::end_of_stream ||
                  ec == asio::error::eof || ec == ssl::error::stream_truncated)) {
      answer.error =
          "the worker closed the connection after the job was sent, before answering (did it "
          "crash running the job?): " +
          ec.message();
    }
    if (ec == bhttp::error::body_limit) {
      answer.error = "the worker's answer is larger than limits.max_result_bytes (" +
                     std::to_string(call.max_answer_bytes) + " bytes); nothing of it was stored";
    }
    co_return out;
  }
  answer.kind = WorkerAnswer::Kind::answered;
  answer.status = static_cast<int>(parser.status());
  answer.content_type = std::move(parser.fields().content_type);
  answer.retry_after =
      api::parse_retry_after(parser.fields().retry_after, std::chrono::system_clock::now());
  // Bytes after the answer were not asked for: the connection is not trusted with another job.
  out.keep = parser.keep_alive() && buffer.size() == 0;
  answer.body = std::move(parser.body());
  co_return out;
}

// The exchange within the call's deadline, run where the connection's handlers (and its
// deadline's timer) run.
asio::awaitable<Exchange> exchange_within(Connection& conn, const std::string& request,
                                          const WorkerCall& call, bool reused) {
  conn.deadline->expire_at(call.deadline);
  Exchange done = co_await std::visit(
      [&](auto& stream) { return exchange(stream, request, call, reused); }, conn.stream);
  conn.deadline->expire_never();
  co_return done;
}

// On the connection's executor, where its deadline may be moved.
asio::awaitable<void> shut_down(std::unique_ptr<Connection> conn) {
  conn->deadline->expire_after(kTlsShutdownTimeout);
  boost::system::error_code ignored;
  co_await std::get<TlsStream>(conn->stream)
      .async_shutdown(asio::redirect_error(use_awaitable, ignored));
}

// Sends close_notify on a TLS connection that is no longer wanted, so the worker sees a clean
// end rather than a truncated stream; a plain one is just closed.
void close_politely(std::unique_ptr<Connection> conn) {
  auto* tls = std::get_if<TlsStream>(&conn->stream);
  if (tls == nullptr) return;
  auto executor = tls->get_executor();
  asio::co_spawn(executor, shut_down(std::move(conn)), asio::detached);
}

}  // namespace

struct ConnectionPool::Impl {
  asio::any_io_executor executor;
  PoolOptions options;
  std::string host;
  std::string port;
  std::string host_port;             // the Host header
  std::string origin;                // scheme://host:port, in error messages
  std::shared_ptr<TlsContexts> tls;  // null: plain http
  std::string ca_file;
  std::mutex mutex;
  std::size_t max_idle;  // guarded by mutex
  std::vector<std::unique_ptr<Connection>> idle;

  // An idle connection, unless the worker closed it meanwhile (or sent something unasked): a
  // job sent on such a one would meet the close after it was written, which cannot be told from
  // a worker that crashed running it. One non-blocking peek says so before the job goes out.
  std::unique_ptr<Connection> take_idle() {
    for (;;) {
      std::unique_ptr<Connection> c;
      {
        std::lock_guard lock(mutex);
        if (idle.empty()) return nullptr;
        c = std::move(idle.back());
        idle.pop_back();
      }
      if (peek_peer(c->socket().native_handle()) == PeerState::quiet) return c;
    }
  }

  // Closes the idle connections beyond the first `keep`, once the mutex is released; with
  // `new_max`, sets max_idle in the same step.
  void close_idle_beyond(std::size_t keep, std::optional<std::size_t> new_max = std::nullopt) {
    std::vector<std::unique_ptr<Connection>> dropped;
    {
      std::lock_guard lock(mutex);
      if (new_max) max_idle = *new_max;
      while (idle.size() > keep) {
        dropped.push_back(std::move(idle.back()));
        idle.pop_back();
      }
    }
    for (auto& c : dropped) close_politely(std::move(c));
  }

  void give_back(std::unique_ptr<Connection> c) {
    {
      std::lock_guard lock(mutex);
      if (idle.size() < max_idle) {
        idle.push_back(std::move(c));
        return;
      }
    }
    close_politely(std::move(c));
  }

  // A new connection, its TLS handshake done for https; null with `error` set when none.
  asio::awaitable<std::unique_ptr<Connection>> connect(
      std::chrono::steady_clock::time_point deadline, std::string& error) {
    std::shared_ptr<ssl::context> context;
    if (tls) {
      auto got = tls->get(ca_file);
      if (!got) {
        error = "TLS: " + got.error() + " (for " + origin + ")";
        co_return nullptr;
      }
      context = std::move(*got);
    }
    boost::system::error_code ec;
    tcp::resolver resolver(executor);
    auto endpoints =
        co_await resolver.async_resolve(host, port, asio::redirect_error(use_awaitable, ec));
    if (ec) {
      error = "cannot resolve " + host + ": " + ec.message();
      co_return nullptr;
    }
    const auto serial = serial_executor(executor, options.one_io_thread);
    auto conn = context ? std::make_unique<Connection>(serial, std::move(context))
                        : std::make_unique<Connection>(serial);
    error = co_await on_connection(*conn, establish(*conn, std::move(endpoints), deadline));
    if (!error.empty()) co_return nullptr;
    co_return conn;
  }

  // Connects `conn` and, for https, shakes hands within `deadline`: empty when done, else why
  // not (and the connection's deadline stopped, here where its timer runs: the connection is
  // dropped wherever the caller runs).
  asio::awaitable<std::string> establish(Connection& conn, tcp::resolver::results_type endpoints,
                                         std::chrono::steady_clock::time_point deadline) {
    struct StopUnlessMade {
      SocketDeadline& deadline;
      bool made = false;
      ~StopUnlessMade() {
        if (!made) deadline.stop();
      }
    } guard{*conn.deadline};
    boost::system::error_code ec;
    // A host that drops packets would otherwise hold the job until its deadline (up to a day)
    // and count the attempt: past the connect timeout it is unreachable (not counted, the endpoint
    // held off), like a refused connection. The deadline closes the socket; an address after
    // the one it closed is not tried.
    const auto limit =
        std::min(deadline, std::chrono::steady_clock::now() + options.connect_timeout);
    const auto in_time = [limit](const boost::system::error_code&, const tcp::endpoint&) {
      return std::chrono::steady_clock::now() < limit;
    };
    conn.deadline->expire_at(limit);
    co_await asio::async_connect(conn.socket(), endpoints, in_time,
                                 asio::redirect_error(use_awaitable, ec));
    if (ec && std::chrono::steady_clock::now() >= limit) ec = asio::error::timed_out;
    if (ec) co_return "cannot connect to " + host_port + ": " + ec.message();
    conn.socket().set_option(tcp::no_delay(true), ec);
    auto* stream = std::get_if<TlsStream>(&conn.stream);
    if (stream != nullptr) {
      if (std::string bad = expect_peer(stream->native_handle(), host); !bad.empty()) {
        co_return "TLS: " + bad + " for " + origin;
      }
      co_await stream->async_handshake(ssl::stream_base::client,
                                       asio::redirect_error(use_awaitable, ec));
      if (ec && std::chrono::steady_clock::now() >= limit) ec = asio::error::timed_out;
      if (ec) co_return handshake_error(stream->native_handle(), ec, origin);
    }
    conn.deadline->expire_never();  // from here on the calls' deadline keeps time
    guard.made = true;
    co_return std::string();
  }

  // Runs `op`, which uses `conn`'s stream, where the stream's own handlers run. The deadline's
  // timer runs on the socket's executor: with several io threads that is the connection's
  // strand, and an operation started from another thread could meet the timer closing the socket.
  template <class T>
  asio::awaitable<T> on_connection(Connection& conn, asio::awaitable<T> op) {
    if (options.one_io_thread) co_return co_await std::move(op);
    co_return co_await asio::co_spawn(conn.socket().get_executor(), std::move(op), use_awaitable);
  }
};

ConnectionPool::ConnectionPool(asio::any_io_executor executor, const api::HttpUrl& address,
                               std::shared_ptr<TlsContexts> tls, std::string ca_file,
                               std::size_t max_idle, PoolOptions options)
    : impl_(std::make_shared<Impl>()) {
  impl_->executor = std::move(executor);
  impl_->options = options;
  impl_->host = address.host;
  impl_->port = std::to_string(address.port);
  // An IPv6 address goes in brackets in the Host header.
  const bool ipv6 = address.host.find(':') != std::string::npos;
  impl_->host_port = (ipv6 ? "[" + address.host + "]" : address.host) + ":" + impl_->port;
  impl_->origin = (address.https ? "https://" : "http://") + impl_->host_port;
  if (address.https) impl_->tls = std::move(tls);
  impl_->ca_file = std::move(ca_file);
  impl_->max_idle = max_idle;
}

void ConnectionPool::keep_idle(std::size_t max_idle) {
  impl_->close_idle_beyond(max_idle, max_idle);
}

ConnectionPool::~ConnectionPool() = default;

void ConnectionPool::clear() {
  impl_->close_idle_beyond(0);
}

asio::awaitable<WorkerAnswer> ConnectionPool::call(WorkerCall call) {
  auto impl = impl_;
  const std::string request = encode_request(impl->host_port, call);

  // Not sent once its deadline has passed (the reservation's answer came late, e.g. from a
  // Redis that hung): the master gives the attempt up at once and retries it, and a worker
  // that got it anyway would run it beside the retry. The connection's deadline does not stop
  // this by itself: the write goes out before its timer looks and closes the socket.
  const auto too_late = [&call] { return std::chrono::steady_clock::now() >= call.deadline; };
  const auto late_answer = [] {
    WorkerAnswer answer;
    answer.kind = WorkerAnswer::Kind::timed_out;
    answer.error = "the deadline passed before the job was sent";
    return answer;
  };
  // A pooled connection the worker closed while it was idle is retried once on a fresh one.
  for (int round = 0; round < 2; ++round) {
    if (too_late()) co_return late_answer();
    auto conn = round == 0 ? impl->take_idle() : nullptr;
    const bool reused = conn != nullptr;
    if (!conn) {
      std::string error;
      conn = co_await impl->connect(call.deadline, error);
      if (!conn) {
        // Never sent, whether the connect timeout or the job's own deadline cut it short: no
        // attempt is counted and the endpoint is held off (a host that drops packets must not
        // use up a short job's retries while it looks healthy).
        WorkerAnswer answer;
        answer.kind = WorkerAnswer::Kind::unreachable;
        answer.error = error;
        co_return answer;
      }
    }
    if (too_late()) {
      impl->give_back(std::move(conn));
      co_return late_answer();
    }
    Exchange done =
        co_await impl->on_connection(*conn, exchange_within(*conn, request, call, reused));
    if (done.retry) continue;
    if (done.keep) {
      impl->give_back(std::move(conn));
    } else if (done.answer.kind == WorkerAnswer::Kind::answered) {
      close_politely(std::move(conn));
    }
    co_return std::move(done.answer);
  }
  WorkerAnswer answer;
  answer.kind = WorkerAnswer::Kind::unreachable;
  answer.error = "the worker closed the connection";
  co_return answer;
}

}  // namespace jq::dispatch
