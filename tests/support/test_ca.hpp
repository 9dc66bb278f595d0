// A throwaway certificate authority for TLS tests, made with the openssl command line: its
// certificate (to verify with) and server certificates it signs for localhost and 127.0.0.1.
#pragma once

#include <string>

#include "tests/support/process.hpp"

namespace jq::test {

class TestCa {
 public:
  TestCa();  // a new CA key and certificate in a temporary directory; throws when openssl fails

  const std::string& cert_file() const { return cert_file_; }

  // Writes a new key and a certificate for it (CN = common_name, a fresh serial) signed by
  // this CA, replacing what the two paths held.
  void issue(const std::string& common_name, const std::string& cert_file,
             const std::string& key_file) const;

 private:
  TempDir dir_;
  std::string cert_file_;
  std::string key_file_;
};

}  // namespace jq::test
