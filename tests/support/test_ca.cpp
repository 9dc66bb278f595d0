#include "tests/support/test_ca.hpp"

#include <stdexcept>
#include <vector>

#include "tests/support/daemon.hpp"

namespace jq::test {
namespace {

// P-256 keys: made in milliseconds, unlike RSA ones.
const std::vector<std::string> kNewKey = {
    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"};

void openssl_req(std::vector<std::string> args) {
  std::vector<std::string> argv = {"openssl", "req", "-x509"};
  argv.insert(argv.end(), kNewKey.begin(), kNewKey.end());
  argv.insert(argv.end(), args.begin(), args.end());
  const ProgramResult r = run_program(argv);
  if (r.exit_code != 0) throw std::runtime_error("openssl req failed: " + r.err);
}

}  // namespace

TestCa::TestCa() : cert_file_(dir_.file("ca.pem")), key_file_(dir_.file("ca.key")) {
  openssl_req({"-keyout", key_file_, "-out", cert_file_, "-subj", "/CN=jq test CA"});
}

void TestCa::issue(const std::string& common_name, const std::string& cert_file,
                   const std::string& key_file) const {
  openssl_req({"-keyout", key_file, "-out", cert_file, "-subj", "/CN=" + common_name, "-addext",
               "subjectAltName=DNS:localhost,IP:127.0.0.1", "-addext",
               "basicConstraints=critical,CA:FALSE", "-CA", cert_file_, "-CAkey", key_file_});
}

}  // namespace jq::test
