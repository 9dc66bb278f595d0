// One keep-alive HTTP/1.1 connection to the master, used by one coroutine at a time. It connects
// on first use and again after an error; a request that fails on a reused connection (the master
// closed it while idle) is sent once more on a fresh one. A request not answered within 60 s
// fails. It reads the master's answers only: HTTP/1.1 with a Content-Length.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace jq::bench {

enum class Method { get, post, del };

struct HttpResponse {
  int status = 0;  // 0: no answer; `error` says why
  std::string body;
  std::string error;
};

class HttpConnection {
 public:
  // `host` is sent as the Host header; `base` is the URL's path ("/" or "/prefix/").
  HttpConnection(boost::asio::any_io_executor executor, boost::asio::ip::tcp::endpoint master,
                 std::string host, std::string base);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // `path` is relative to the base ("v1/jobs"). Bodies are MessagePack unless `json`.
  boost::asio::awaitable<HttpResponse> request(Method method, std::string path,
                                               std::string body = {}, bool json = false);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The master's address from --url, resolved once (so every connection skips the resolver).
boost::asio::ip::tcp::endpoint resolve_master(const std::string& host, std::uint16_t port);

}  // namespace jq::bench
