// TLS for tests: a throwaway CA that issues server certificates (the openssl command in a temp
// dir) for HTTPS workers and the master's listener, and TlsWorker, an HTTPS worker
// (tests/support/tls_worker.py) serving one of them.
#pragma once

#include <cstdint>
#include <string>

#include "tests/support/process.hpp"

namespace jq::test {

struct ServerCert {
  std::string cert;  // PEM files
  std::string key;
};

class TestCa {
 public:
  TestCa();  // throws with openssl's output when it fails

  const std::string& ca_file() const { return ca_file_; }
  // A certificate for the subjectAltName entries `alt_names` ("IP:127.0.0.1,DNS:localhost").
  ServerCert issue(const std::string& alt_names);
  // A new key and a certificate for localhost and 127.0.0.1 with CN = `common_name` and a fresh
  // serial, written over what the two paths held (a renewal, for the listener's reload).
  void issue(const std::string& common_name, const std::string& cert_file,
             const std::string& key_file);

 private:
  void sign(const std::string& common_name, const std::string& alt_names,
            const std::string& cert_file, const std::string& key_file);

  TempDir dir_;
  std::string ca_file_;
  int issued_ = 0;
};

class TlsWorker {
 public:
  explicit TlsWorker(const ServerCert& cert);  // on 127.0.0.1, a port of its choosing

  std::uint16_t port() const { return port_; }
  std::string url() const { return "https://127.0.0.1:" + std::to_string(port_) + "/"; }
  std::string log() const { return read_file(log_file_); }
  int connections() const;  // TLS handshakes that succeeded
  int jobs() const;         // job requests answered

 private:
  int count_lines(const std::string& prefix) const;

  TempDir dir_;
  std::string log_file_;
  ChildProcess process_;
  std::uint16_t port_ = 0;
};

}  // namespace jq::test
