// An HTTPS connection to the daemon for tests: it verifies the server's certificate against a
// test CA for the name "localhost", stays open across requests (keep-alive), and tells which
// certificate the server showed. Boost.Asio's SSL stays in tls_client.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "tests/support/http_client.hpp"

namespace jq::test {

class TlsConnection {
 public:
  // Connects to 127.0.0.1:port and completes the handshake; throws std::system_error (e.g.
  // "certificate verify failed") when it cannot.
  TlsConnection(std::uint16_t port, const std::string& ca_file);
  ~TlsConnection();
  TlsConnection(const TlsConnection&) = delete;
  TlsConnection& operator=(const TlsConnection&) = delete;

  HttpResult request(const std::string& method, const std::string& target,
                     const std::string& body = "", const Headers& headers = {});
  HttpResult get(const std::string& target) {
    return request("GET", target, "", {{"Accept", "application/json"}});
  }

  // The CN of the certificate the server presented in this connection's handshake.
  std::string peer_common_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jq::test
