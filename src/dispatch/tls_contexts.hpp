// The OpenSSL client contexts of https workers: which CAs a worker's certificate must chain to.
// Asio's ssl::context is only named here, so that this header stays free of OpenSSL and Asio.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "common/expected.hpp"

namespace boost::asio::ssl {
class context;
}

namespace jq::dispatch {

// Whether `path` is a regular file the master can read holding at least one PEM certificate.
// An error completes "ca_file ..." ("cannot be read: /x.pem: No such file or directory").
Expected<void, std::string> check_ca_file(const std::string& path);

// One context per distinct CA file, made on first use and shared by every connection after it.
// Each verifies the peer's chain; the host name is checked per connection (worker_call.cpp).
class TlsContexts {
 public:
  // `default_ca_file` (tls.ca_file; may be empty) adds to the system store for workers
  // registered without a ca_file of their own.
  explicit TlsContexts(std::string default_ca_file);
  ~TlsContexts();

  // The context for a worker's `ca_file`: that file's CAs only; empty: the system store plus the
  // default file. A file that cannot be loaded is an error ("ca_file " or "tls.ca_file " and the
  // words of check_ca_file), tried again on the next call.
  Expected<std::shared_ptr<boost::asio::ssl::context>, std::string> get(const std::string& ca_file);

 private:
  std::string default_ca_file_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<boost::asio::ssl::context>> contexts_;  // by ca_file
};

}  // namespace jq::dispatch
