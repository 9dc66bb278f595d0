#include "tests/support/worker.hpp"

#include <csignal>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace jq::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;
using namespace std::chrono_literals;

std::string worker_binary() {
  return JQ_WORKER_BINARY;
}

std::string python_worker_script() {
  return JQ_PYTHON_WORKER;
}

std::optional<std::uint16_t> wait_for_listening_port(ChildProcess& process,
                                                     const std::string& log_file,
                                                     std::chrono::milliseconds timeout) {
  constexpr std::string_view kPrefix = "listening on ";
  std::optional<std::uint16_t> port;
  wait_until(
      [&] {
        std::istringstream lines(read_file(log_file));
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind(kPrefix, 0) != 0) continue;
          port = static_cast<std::uint16_t>(std::stoi(line.substr(line.rfind(':') + 1)));
          return true;
        }
        return !process.running();
      },
      timeout);
  return port;
}

Worker::Worker(const std::vector<std::string>& args, std::uint16_t port) {
  std::vector<std::string> argv = {worker_binary(), "--listen",
                                   "127.0.0.1:" + std::to_string(port)};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log_file = dir_.file("jqworker.log");
  process_ = ChildProcess(argv, log_file);
  auto listening = wait_for_listening_port(process_, log_file, 10s);
  if (!listening) throw std::runtime_error("jqworker did not come up; its log:\n" + log());
  port_ = *listening;
}

nlohmann::json Worker::stats() const {
  return nlohmann::json::parse(http().get("/stats").body);
}

void Worker::reset_stats() const {
  http().request("POST", "/stats/reset");
}

std::optional<int> Worker::stop(int signo, std::chrono::milliseconds timeout) {
  process_.signal(signo);
  return process_.wait(timeout);
}

struct RecordingServer::Impl {
  explicit Impl(Answer a) : answer(std::move(a)) {}
  const Answer answer;
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  const std::uint16_t port = acceptor.local_endpoint().port();
  mutable std::mutex mutex;
  std::vector<RecordedRequest> requests;
  std::thread thread;

  void record(const bhttp::request<bhttp::string_body>& req) {
    RecordedRequest r{std::string(req.method_string()), std::string(req.target()), {}, req.body()};
    for (const auto& field : req) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      r.headers[name] = std::string(field.value());
    }
    std::lock_guard lock(mutex);
    requests.push_back(std::move(r));
  }

  asio::awaitable<void> serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    for (;;) {
      boost::system::error_code ec;
      bhttp::request<bhttp::string_body> req;
      co_await bhttp::async_read(stream, buffer, req,
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      record(req);
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(answer.status),
                                              req.version()};
      res.set(bhttp::field::content_type, answer.content_type);
      res.body() = answer.body;
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      co_await bhttp::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
      if (ec || !req.keep_alive()) co_return;
    }
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      boost::system::error_code ec;
      auto socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      asio::co_spawn(io, serve(std::move(socket)), asio::detached);
    }
  }
};

RecordingServer::RecordingServer(Answer answer) : impl_(std::make_unique<Impl>(std::move(answer))) {
  asio::co_spawn(impl_->io, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

RecordingServer::~RecordingServer() {
  impl_->io.stop();
  impl_->thread.join();
}

std::uint16_t RecordingServer::port() const {
  return impl_->port;
}

std::vector<RecordedRequest> RecordingServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->requests;
}

}  // namespace jq::test
