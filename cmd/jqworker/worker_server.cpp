// The listener accepts; each connection is one coroutine (on its own strand when several threads
// run the io_context) that reads a request (with a timeout and a body limit), answers it, and
// loops while keep-alive holds. Requests on one connection are answered in order, one at a
// time; concurrency comes from connections, as with the master's dispatch pool. A job's sleep
// is a steady_timer, so sleeping jobs never hold an io thread.
#include "cmd/jqworker/worker_server.hpp"

#include <array>
#include <charconv>
#include <csignal>
#include <iostream>
#include <set>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "cmd/jqworker/behaviour.hpp"
#include "cmd/jqworker/journal.hpp"
#include "cmd/jqworker/stats.hpp"
#include "common/message_parser.hpp"
#include "common/read_message.hpp"
#include "common/send_now.hpp"
#include "common/serial_executor.hpp"
#include "common/socket_deadline.hpp"

namespace jq::worker {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::use_awaitable;
using asio::ip::tcp;

namespace {

constexpr std::uint32_t kHeaderLimit = 16 * 1024;
constexpr std::uint64_t kBodyLimit = 64 * 1024 * 1024;
constexpr std::chrono::seconds kIdleTimeout{300};  // between requests; the master pools connections
constexpr std::chrono::seconds kReadTimeout{30};   // to read one request once it began
constexpr std::chrono::seconds kWriteTimeout{30};
constexpr std::chrono::seconds kDeadlineTick{30};  // how often the deadline looks, at most

// What jqworker reads of a request (common/message_parser.hpp: Beast's own parser stored every
// field in a node of its own, which only /stats and the request log look at).
struct Request {
  bhttp::verb method = bhttp::verb::unknown;
  std::string target;
  unsigned version = 11;
  bool keep_alive = true;
  std::string body;
  MessageParser<true>::FieldList fields;  // every field, when stats or the log want them

  // The first value of a field (case-insensitive), empty when absent or not kept.
  std::string_view field(std::string_view name) const {
    for (const auto& [n, v] : fields) {
      if (beast::iequals(n, name)) return v;
    }
    return {};
  }
};

struct Shared {
  Stats stats;
  bool log_requests = false;
  bool record_stats = true;
  AnswerFormat answer_format = AnswerFormat::msgpack;
  std::optional<Journal> journal;
  bool one_thread = false;  // one io thread: connections need no strand of their own
};

// Headers a test may want to see: the X-Jq-* ones and whatever a registration added. The ones
// every HTTP client sends are left out.
std::map<std::string, std::string> headers_to_record(const Request& req) {
  static const std::set<std::string> kTransport = {
      "host",       "content-type",    "content-length",    "accept", "connection",
      "user-agent", "accept-encoding", "transfer-encoding", "expect", "keep-alive",
      "te"};
  std::map<std::string, std::string> out;
  for (const auto& [field_name, value] : req.fields) {
    std::string name = field_name;
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!kTransport.contains(name)) out[name] = value;
  }
  return out;
}

Reply json_reply(const nlohmann::json& value) {
  Reply r;
  r.content_type = "application/json";
  r.body = value.dump();
  return r;
}

asio::awaitable<Reply> run_job(const Request& req, Shared& shared) {
  auto job = parse_job(req.body);
  if (!job) co_return text_reply(400, job.error() + "\n");
  if (shared.record_stats) shared.stats.record_attempt(job->id, job->attempt);
  if (shared.journal) shared.journal->start(job->id, job->attempt);
  if (job->directives.sleep.count() > 0) {
    asio::steady_timer timer(co_await asio::this_coro::executor, job->directives.sleep);
    co_await timer.async_wait(use_awaitable);
  }
  Reply reply = answer_job(*job, std::chrono::system_clock::now(), shared.answer_format);
  if (shared.journal) shared.journal->end(job->id, job->attempt, reply.success);
  co_return reply;
}

// Routes one request. A job is counted in flight through `in_flight`, which the caller keeps
// until the answer is ready.
asio::awaitable<Reply> route(const Request& req, Shared& shared,
                             std::optional<Stats::InFlight>& in_flight) {
  const std::string_view target = req.target;
  const std::string_view path = target.substr(0, target.find('?'));
  const bool get = req.method == bhttp::verb::get;
  const bool post = req.method == bhttp::verb::post;
  if (get && path == "/stats") co_return json_reply(shared.stats.to_json());
  if (post && path == "/stats/reset") {
    shared.stats.reset();
    co_return json_reply(shared.stats.to_json());
  }
  if (get && path == "/healthz") co_return text_reply(200, "ok\n");
  if (!post) co_return text_reply(405, "jobs are POSTed; GET /stats for what was seen\n");
  if (shared.record_stats) in_flight.emplace(shared.stats, headers_to_record(req));
  co_return co_await run_job(req, shared);
}

// HTTP gives a 1xx, 204 or 304 answer no body (RFC 9110 6.4.1), whatever the job asked for.
bool has_body(int status) {
  return status >= 200 && status != 204 && status != 304;
}

// The answer's head, written by hand (Beast's serializer took a tenth of a job's CPU here): the
// fields Beast wrote, but no Content-Length without a body, and the reply's extra headers
// (Retry-After) appended as they come.
std::string response_head(const Reply& reply, unsigned version, bool keep_alive) {
  std::string head;
  head.reserve(160 + reply.content_type.size());
  head.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ").append(std::to_string(reply.status));
  head.append(" ").append(bhttp::obsolete_reason(static_cast<bhttp::status>(reply.status)));
  head.append("\r\nServer: jqworker");
  if (!reply.content_type.empty()) head.append("\r\nContent-Type: ").append(reply.content_type);
  for (const auto& [name, value] : reply.headers) head.append("\r\n" + name + ": " + value);
  if (has_body(reply.status)) {
    head.append("\r\nContent-Length: ").append(std::to_string(reply.body.size()));
  }
  if (version == 10 && keep_alive) head.append("\r\nConnection: keep-alive");
  if (version != 10 && !keep_alive) head.append("\r\nConnection: close");
  head.append("\r\n\r\n");
  return head;
}

// A timeout closes the socket: what waited on it ends aborted, what starts after finds no socket.
bool is_quiet_end(const boost::system::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
         ec == asio::error::operation_aborted || ec == asio::error::bad_descriptor ||
         ec == asio::error::connection_reset || ec == asio::error::eof;
}

void log_request(const Request& req, int status, std::chrono::steady_clock::time_point start) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  const std::string_view job = req.field("X-Jq-Job-Id");
  const std::string about = job.empty() ? std::string()
                                        : " job=" + std::string(job) +
                                              " attempt=" + std::string(req.field("X-Jq-Attempt"));
  spdlog::info("{} {}{} -> {} ({} ms)", std::string(bhttp::to_string(req.method)), req.target,
               about, status, ms.count());
}

// Reads one request within the idle timeout for its first bytes and the read timeout for the
// rest; an error or a closed connection is an empty result. Every field is kept when
// `every_field`.
asio::awaitable<std::optional<Request>> read_request(tcp::socket& socket, SocketDeadline& deadline,
                                                     beast::flat_buffer& buffer, bool every_field) {
  MessageParser<true> parser;
  parser.header_limit(kHeaderLimit);
  parser.body_limit(kBodyLimit);
  if (every_field) parser.keep_every_field();
  deadline.expire_after(buffer.size() == 0 ? kIdleTimeout : kReadTimeout);
  boost::system::error_code ec = co_await read_message(socket, buffer, parser, ReadUntil::header);
  if (!ec && beast::iequals(parser.fields().expect, "100-continue")) {
    bhttp::response<bhttp::empty_body> go_on{bhttp::status::continue_, 11};  // curl waits for it
    deadline.expire_after(kWriteTimeout);
    co_await bhttp::async_write(socket, go_on, asio::redirect_error(use_awaitable, ec));
  }
  if (!ec && !parser.is_done()) {
    deadline.expire_after(kReadTimeout);
    ec = co_await read_message(socket, buffer, parser, ReadUntil::whole);
  }
  deadline.expire_never();  // a job may sleep as long as it asked
  if (ec) {
    if (!is_quiet_end(ec)) spdlog::warn("reading a request failed: {}", ec.message());
    co_return std::nullopt;
  }
  co_return Request{parser.method(),          std::move(parser.target()),
                    parser.version(),         parser.keep_alive(),
                    std::move(parser.body()), std::move(parser.every_field())};
}

// One deadline per connection (common/socket_deadline.hpp): moving it is a store, where Beast's
// tcp_stream armed and cancelled a timer for each read and write.
asio::awaitable<void> session(tcp::socket socket, std::shared_ptr<Shared> shared) {
  auto deadline = std::make_shared<SocketDeadline>(socket, kDeadlineTick);
  beast::flat_buffer buffer;
  bool carried_jobs = false;  // counted in the stats' connections once it carried a job
  for (;;) {
    auto req = co_await read_request(socket, *deadline, buffer,
                                     shared->record_stats || shared->log_requests);
    if (!req) break;
    const auto start = shared->log_requests ? std::chrono::steady_clock::now()
                                            : std::chrono::steady_clock::time_point();
    std::optional<Stats::InFlight> in_flight;
    Reply reply = co_await route(*req, *shared, in_flight);
    if (in_flight && !carried_jobs) {
      carried_jobs = true;
      shared->stats.record_connection();
    }
    // Not in flight once answered: a master that sends the next job as soon as it reads this
    // answer must not find this one still counted (max_in_flight would exceed its concurrency).
    in_flight.reset();
    if (reply.close_connection) break;
    const int status = reply.status;
    const bool keep_alive = req->keep_alive;
    const std::string head = response_head(reply, req->version, keep_alive);
    const bool body = has_body(reply.status);
    const std::array<asio::const_buffer, 2> answer{
        asio::buffer(head), body ? asio::buffer(reply.body) : asio::const_buffer()};
    boost::system::error_code ec;
    const auto unwritten = send_now(socket.native_handle(), answer, ec);
    if (!ec && asio::buffer_size(unwritten) > 0) {
      deadline->expire_after(kWriteTimeout);
      co_await asio::async_write(socket, unwritten, asio::redirect_error(use_awaitable, ec));
    }
    if (shared->log_requests) log_request(*req, status, start);
    if (ec || !keep_alive) break;
  }
  deadline->stop();
  boost::system::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_both, ignored);
  socket.close(ignored);
}

asio::awaitable<void> accept_loop(tcp::acceptor acceptor, std::shared_ptr<Shared> shared) {
  for (;;) {
    boost::system::error_code ec;
    auto socket = co_await acceptor.async_accept(
        jq::serial_executor(acceptor.get_executor(), shared->one_thread),
        asio::redirect_error(use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) {
      spdlog::warn("accept failed: {}", ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    asio::co_spawn(executor, session(std::move(socket), shared), asio::detached);
  }
}

tcp::endpoint resolve_listen(asio::io_context& io, const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, port);
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port));
  if (results.empty()) throw std::runtime_error("the host name resolves to no address");
  return results.begin()->endpoint();
}

tcp::acceptor listen(asio::io_context& io, const WorkerOptions& o) {
  tcp::acceptor acceptor(io);
  const auto endpoint = resolve_listen(io, o.host, o.port);
  acceptor.open(endpoint.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
  return acceptor;
}

std::string host_for_url(const std::string& host) {
  return host.find(':') == std::string::npos ? host : "[" + host + "]";
}

}  // namespace

Expected<std::pair<std::string, std::uint16_t>, std::string> parse_listen(std::string_view listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return unexpected(std::string("--listen must be HOST:PORT, got ") + std::string(listen));
  }
  std::string_view host = listen.substr(0, colon);
  const std::string_view port = listen.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return unexpected(std::string("--listen has a bad port: ") + std::string(port));
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::pair<std::string, std::uint16_t>{std::string(host),
                                               static_cast<std::uint16_t>(value)};
}

int run(WorkerOptions options) {
  asio::io_context io(options.threads);
  // Before anything else: a test that sees the "listening on" line may signal at once.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&io](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("received {}; stopping", signo == SIGINT ? "SIGINT" : "SIGTERM");
    io.stop();
  });
  tcp::acceptor acceptor(io);
  try {
    acceptor = listen(io, options);
  } catch (const std::exception& e) {
    spdlog::error("cannot listen on {}:{}: {}", options.host, options.port, e.what());
    return 1;
  }
  const std::string address =
      host_for_url(options.host) + ":" + std::to_string(acceptor.local_endpoint().port());
  auto shared = std::make_shared<Shared>();
  shared->log_requests = options.log_requests;
  shared->record_stats = options.record_stats;
  shared->answer_format = options.answer_format;
  shared->one_thread = options.threads <= 1;
  if (!options.journal_path.empty()) {
    auto journal = Journal::open(options.journal_path);
    if (!journal) {
      spdlog::error("{}", journal.error());
      return 1;
    }
    shared->journal.emplace(std::move(*journal));
  }
  asio::co_spawn(io, accept_loop(std::move(acceptor), shared), asio::detached);
  if (options.registration) {
    if (options.registration->own_url.empty()) {
      options.registration->own_url = "http://" + address + "/";
    }
    start_registration(io, std::move(*options.registration));
  }
  std::cout << "listening on " << address << std::endl;
  std::vector<std::thread> threads;
  for (int i = 1; i < options.threads; ++i) threads.emplace_back([&io] { io.run(); });
  io.run();
  for (auto& t : threads) t.join();
  return 0;
}

}  // namespace jq::worker
