// A blocking HTTP/1.1 client for tests (one connection per request; HTTPS when given a CA file),
// and a raw socket for sending bytes that are not HTTP at all.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace jq::test {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;

  std::string header(const std::string& lower_name) const;
  // The body decoded from JSON or MessagePack, per its Content-Type.
  nlohmann::json value() const;
};

using Headers = std::vector<std::pair<std::string, std::string>>;

class HttpClient {
 public:
  // `ca_file` set: HTTPS, the server's certificate verified against it (tls_client.hpp).
  explicit HttpClient(std::uint16_t port, std::string ca_file = {})
      : port_(port), ca_file_(std::move(ca_file)) {}

  HttpResult request(const std::string& method, const std::string& target,
                     const std::string& body = "", const Headers& headers = {}) const;

  // JSON in, JSON out.
  HttpResult get(const std::string& target) const;
  HttpResult del(const std::string& target) const;
  HttpResult post(const std::string& target, const nlohmann::json& body) const;
  // MessagePack in (and out, unless Accept says otherwise).
  HttpResult post_msgpack(const std::string& target, const std::string& body,
                          const Headers& extra = {}) const;

 private:
  std::uint16_t port_;
  std::string ca_file_;
};

// A plain TCP connection: write anything, read what comes back.
class RawConnection {
 public:
  explicit RawConnection(std::uint16_t port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool send(const std::string& bytes);
  // Reads until the peer closes or `timeout` passes; returns what arrived.
  std::string read_until_closed(std::chrono::milliseconds timeout, bool* closed = nullptr);

 private:
  int fd_ = -1;
};

}  // namespace jq::test
