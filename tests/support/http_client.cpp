#include "tests/support/http_client.hpp"

#include "tests/support/process.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "tests/support/http_exchange.hpp"
#include "tests/support/tls_client.hpp"

namespace jq::test {

namespace beast = boost::beast;
using boost::asio::ip::tcp;

std::string HttpResult::header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? std::string() : it->second;
}

nlohmann::json HttpResult::value() const {
  const std::string type = header("content-type");
  if (type.find("json") != std::string::npos) return nlohmann::json::parse(body);
  return nlohmann::json::from_msgpack(body);
}

HttpResult HttpClient::request(const std::string& method, const std::string& target,
                               const std::string& body, const Headers& headers) const {
  if (!ca_file_.empty())
    return TlsConnection(port_, ca_file_).request(method, target, body, headers);
  boost::asio::io_context io;
  beast::tcp_stream stream(io);
  stream.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port_));
  HttpResult result = detail::exchange(stream, method, target, body, headers);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  return result;
}

HttpResult HttpClient::get(const std::string& target) const {
  return request("GET", target, "", {{"Accept", "application/json"}});
}

HttpResult HttpClient::del(const std::string& target) const {
  return request("DELETE", target, "", {{"Accept", "application/json"}});
}

HttpResult HttpClient::post(const std::string& target, const nlohmann::json& body) const {
  return request("POST", target, body.dump(), {{"Content-Type", "application/json"}});
}

HttpResult HttpClient::post_msgpack(const std::string& target, const std::string& body,
                                    const Headers& extra) const {
  Headers headers = {{"Content-Type", "application/msgpack"}};
  headers.insert(headers.end(), extra.begin(), extra.end());
  return request("POST", target, body, headers);
}

RawConnection::RawConnection(std::uint16_t port) : fd_(connect_loopback(port)) {}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::send(const std::string& bytes) {
  return fd_ >= 0 && send_all(fd_, bytes);
}

std::string RawConnection::read_until_closed(std::chrono::milliseconds timeout, bool* closed) {
  std::string out;
  if (closed) *closed = false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (fd_ >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      if (closed) *closed = true;
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

}  // namespace jq::test
