#include "tests/support/tls.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tests/support/daemon.hpp"
#include "tests/support/worker.hpp"

namespace jq::test {

namespace {

using namespace std::chrono_literals;

// Small EC keys: fast to make, and what a modern worker would serve.
const std::vector<std::string> kNewKey = {"-newkey", "ec", "-pkeyopt",
                                          "ec_paramgen_curve:prime256v1", "-nodes"};

void openssl(std::vector<std::string> args) {
  args.insert(args.begin(), "openssl");
  const ProgramResult r = run_program(args);
  if (r.exit_code != 0) throw std::runtime_error("openssl failed:\n" + r.out + r.err);
}

}  // namespace

TestCa::TestCa() : ca_file_(dir_.file("ca.pem")) {
  std::vector<std::string> args = {"req", "-x509"};
  args.insert(args.end(), kNewKey.begin(), kNewKey.end());
  args.insert(args.end(), {"-keyout", dir_.file("ca.key"), "-out", ca_file_, "-days", "2", "-subj",
                           "/CN=jqmaster test CA", "-addext", "basicConstraints=critical,CA:TRUE",
                           "-addext", "keyUsage=critical,keyCertSign"});
  openssl(args);
}

ServerCert TestCa::issue(const std::string& alt_names) {
  const std::string base = dir_.file("server" + std::to_string(issued_ + 1));
  ServerCert out{base + ".pem", base + ".key"};
  sign("jqmaster test worker", alt_names, out.cert, out.key);
  return out;
}

void TestCa::issue(const std::string& common_name, const std::string& cert_file,
                   const std::string& key_file) {
  sign(common_name, "DNS:localhost,IP:127.0.0.1", cert_file, key_file);
}

void TestCa::sign(const std::string& common_name, const std::string& alt_names,
                  const std::string& cert_file, const std::string& key_file) {
  const std::string base = dir_.file("request" + std::to_string(++issued_));
  std::vector<std::string> request = {"req"};
  request.insert(request.end(), kNewKey.begin(), kNewKey.end());
  request.insert(request.end(),
                 {"-keyout", key_file, "-out", base + ".csr", "-subj", "/CN=" + common_name});
  openssl(request);
  std::ofstream(base + ".ext") << "subjectAltName=" << alt_names
                               << "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n";
  openssl({"x509", "-req", "-in", base + ".csr", "-CA", ca_file_, "-CAkey", dir_.file("ca.key"),
           "-set_serial", std::to_string(issued_ + 1), "-days", "2", "-out", cert_file, "-extfile",
           base + ".ext"});
}

TlsWorker::TlsWorker(const ServerCert& cert) : log_file_(dir_.file("tls_worker.log")) {
  process_ = ChildProcess({"/usr/bin/python3", JQ_TLS_WORKER, "--listen", "127.0.0.1:0", "--cert",
                           cert.cert, "--key", cert.key},
                          log_file_);
  auto port = wait_for_listening_port(process_, log_file_, 10s);
  if (!port) throw std::runtime_error("tls_worker.py did not come up; its log:\n" + log());
  port_ = *port;
}

int TlsWorker::count_lines(const std::string& prefix) const {
  std::istringstream lines(log());
  int n = 0;
  for (std::string line; std::getline(lines, line);) n += line.rfind(prefix, 0) == 0 ? 1 : 0;
  return n;
}

int TlsWorker::connections() const {
  return count_lines("connection");
}

int TlsWorker::jobs() const {
  return count_lines("job ");
}

}  // namespace jq::test
