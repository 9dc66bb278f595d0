#include "src/dispatch/tls_contexts.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>
#include <vector>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/ssl/context.hpp>

namespace jq::dispatch {

namespace ssl = boost::asio::ssl;

namespace {

// A system bundle is about 200 KB; a registration must not make the master read a huge file.
constexpr off_t kMaxCaFileBytes = 4 << 20;

struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
using Certificates = std::vector<std::unique_ptr<X509, X509Free>>;

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};

std::string system_error(const std::string& path) {
  return "cannot be read: " + path + ": " + std::strerror(errno);
}

Expected<std::string, std::string> read_small_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return unexpected(system_error(path));
  if (!S_ISREG(st.st_mode)) return unexpected("must be a regular file: " + path + " is not");
  if (st.st_size > kMaxCaFileBytes) {
    return unexpected(path + " is larger than 4 MiB, too large for a PEM file of CAs");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return unexpected(system_error(path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return unexpected(system_error(path));
  return text;
}

// Every certificate of a PEM file (other PEM blocks, such as keys, are skipped).
Expected<Certificates, std::string> read_certificates(const std::string& path) {
  auto text = read_small_file(path);
  if (!text) return unexpected(text.error());
  ERR_clear_error();
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(text->data(), static_cast<int>(text->size())));
  if (!bio) return unexpected(std::string("cannot be read: out of memory"));
  Certificates certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  // The loop ends with "no start line" once the text holds no further certificate; any other
  // error is a block that does not parse.
  const unsigned long err = ERR_peek_last_error();
  ERR_clear_error();
  const bool at_end = ERR_GET_LIB(err) == ERR_LIB_PEM && ERR_GET_REASON(err) == PEM_R_NO_START_LINE;
  if (!at_end) {
    const char* reason = ERR_reason_error_string(err);
    return unexpected("cannot be parsed: " + path + ": " +
                      (reason != nullptr ? reason : "not a PEM file"));
  }
  if (certs.empty()) {
    return unexpected("holds no PEM certificate (-----BEGIN CERTIFICATE-----): " + path);
  }
  return certs;
}

// The host name is not set here: it differs per worker, so each connection sets its own. Errors
// begin with `key`, the setting that named the file.
Expected<std::shared_ptr<ssl::context>, std::string> make_context(const std::string& ca_file,
                                                                  std::string_view key,
                                                                  bool system_store) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_client);
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  context->set_verify_mode(ssl::verify_peer);
  if (system_store) {
    boost::system::error_code ec;
    context->set_default_verify_paths(ec);
    if (ec) return unexpected("the system CA store cannot be used: " + ec.message());
  }
  if (ca_file.empty()) return context;
  auto certs = read_certificates(ca_file);
  if (!certs) return unexpected(std::string(key) + " " + certs.error());
  X509_STORE* store = SSL_CTX_get_cert_store(context->native_handle());
  for (const auto& cert : *certs) {
    if (X509_STORE_add_cert(store, cert.get()) != 1) {
      ERR_clear_error();
      return unexpected(std::string(key) + " cannot be used: " + ca_file +
                        ": OpenSSL refused a certificate");
    }
  }
  return context;
}

}  // namespace

Expected<void, std::string> check_ca_file(const std::string& path) {
  auto certs = read_certificates(path);
  if (!certs) return unexpected(certs.error());
  return {};
}

TlsContexts::TlsContexts(std::string default_ca_file)
    : default_ca_file_(std::move(default_ca_file)) {}

TlsContexts::~TlsContexts() = default;

Expected<std::shared_ptr<ssl::context>, std::string> TlsContexts::get(const std::string& ca_file) {
  std::lock_guard lock(mutex_);
  if (auto it = contexts_.find(ca_file); it != contexts_.end()) return it->second;
  auto made = ca_file.empty() ? make_context(default_ca_file_, "tls.ca_file", true)
                              : make_context(ca_file, "ca_file", false);
  if (made) contexts_.emplace(ca_file, *made);
  return made;
}

}  // namespace jq::dispatch
