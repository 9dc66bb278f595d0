// The listener's certificate and private key (tls.cert, tls.key), read from PEM files into an
// OpenSSL context. A reload (SIGHUP) builds a whole new context and swaps it in only when both
// files load and match: new connections take the current context, while a connection already
// open keeps the one it was accepted with (it holds a reference). OpenSSL stays in the .cpp.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "common/expected.hpp"

namespace boost::asio::ssl {
class context;
}

namespace jq::http {

struct TlsFiles {
  std::string cert;  // PEM: the certificate, then any intermediate certificates
  std::string key;   // PEM: its private key, unencrypted
};

class TlsIdentity {
 public:
  // Reads and checks both files. The error names the config key and says what to fix, e.g.
  // "tls.cert: cannot read \"/etc/jq/cert.pem\": No such file or directory".
  static Expected<std::shared_ptr<TlsIdentity>, std::string> load(TlsFiles files);

  // Reads the same paths again. On error the current certificate stays in use.
  Expected<void, std::string> reload();

  // For a new connection.
  std::shared_ptr<boost::asio::ssl::context> current() const;

  // "CN=jq.example.com, serial 0B7D..., valid until Nov 25 12:00:00 2027 GMT", for the log.
  std::string describe() const;

  TlsIdentity(TlsFiles files, std::shared_ptr<boost::asio::ssl::context> context);

 private:
  TlsFiles files_;
  mutable std::mutex mutex_;
  std::shared_ptr<boost::asio::ssl::context> context_;
};

}  // namespace jq::http
