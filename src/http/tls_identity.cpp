#include "src/http/tls_identity.hpp"

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/buffer.hpp>
#include <boost/asio/ssl/context.hpp>

namespace jq::http {
namespace {

namespace ssl = boost::asio::ssl;

// A certificate chain or a key is a few KiB; anything this large is the wrong file.
constexpr std::size_t kMaxPemBytes = 1 << 20;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BnFree {
  void operator()(BIGNUM* n) const { BN_free(n); }
};
using Bio = std::unique_ptr<BIO, BioFree>;

std::string quoted(const std::string& path) {
  return "\"" + path + "\"";
}

Expected<std::string, std::string> read_pem(const char* key, const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    return unexpected(std::string(key) + ": cannot read " + quoted(path) + ": " +
                      std::strerror(errno));
  }
  std::string text;
  std::array<char, 4096> buffer;
  while (const std::size_t n = std::fread(buffer.data(), 1, buffer.size(), file.get())) {
    text.append(buffer.data(), n);
    if (text.size() > kMaxPemBytes) {
      return unexpected(std::string(key) + ": " + quoted(path) +
                        " is larger than 1 MiB; is it the right file?");
    }
  }
  if (std::ferror(file.get())) {
    return unexpected(std::string(key) + ": cannot read " + quoted(path) + ": " +
                      std::strerror(errno));
  }
  return text;
}

// OpenSSL's reason for the last failure, e.g. " (no start line)", and a clean error queue.
std::string openssl_reason() {
  const unsigned long code = ERR_peek_last_error();
  const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
  ERR_clear_error();
  return reason != nullptr ? std::string(" (") + reason + ")" : std::string();
}

// Never a prompt on the terminal for an encrypted key: it fails to load instead.
int no_passphrase(char*, int, int, void*) {
  return -1;
}

Expected<void, std::string> use_key(ssl::context& context, const std::string& pem,
                                    const TlsFiles& files) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) {
    return unexpected("tls.key: " + quoted(files.key) + " holds no unencrypted PEM private key" +
                      openssl_reason());
  }
  if (SSL_CTX_use_PrivateKey(context.native_handle(), key.get()) != 1 ||
      SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return unexpected("tls.key: " + quoted(files.key) + " is not the private key of tls.cert (" +
                      quoted(files.cert) + ")" + openssl_reason() +
                      "; give the key the certificate was made for");
  }
  return {};
}

Expected<std::shared_ptr<ssl::context>, std::string> make_context(const TlsFiles& files) {
  auto cert = read_pem("tls.cert", files.cert);
  if (!cert) return unexpected(cert.error());
  auto key = read_pem("tls.key", files.key);
  if (!key) return unexpected(key.error());
  std::shared_ptr<ssl::context> context;
  try {  // throws only when OpenSSL cannot allocate; a SIGHUP must not end the daemon for it
    context = std::make_shared<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& e) {
    return unexpected(std::string("tls: cannot set up an OpenSSL context: ") + e.what());
  }
  SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION);
  boost::system::error_code ec;
  context->use_certificate_chain(boost::asio::buffer(*cert), ec);
  if (ec) {
    const std::string reason = openssl_reason();
    return unexpected("tls.cert: " + quoted(files.cert) + " holds no PEM certificate" +
                      (reason.empty() ? " (" + ec.message() + ")" : reason));
  }
  if (auto used = use_key(*context, *key, files); !used) return unexpected(used.error());
  return context;
}

std::string summary_of(X509* cert) {
  Bio bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  std::string text = ", serial ";
  std::unique_ptr<BIGNUM, BnFree> serial(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (char* hex = serial ? BN_bn2hex(serial.get()) : nullptr) {
    text += hex;
    OPENSSL_free(hex);
  }
  BIO_write(bio.get(), text.data(), static_cast<int>(text.size()));
  BIO_puts(bio.get(), ", valid until ");
  ASN1_TIME_print(bio.get(), X509_get0_notAfter(cert));
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

}  // namespace

TlsIdentity::TlsIdentity(TlsFiles files, std::shared_ptr<ssl::context> context)
    : files_(std::move(files)), context_(std::move(context)) {}

Expected<std::shared_ptr<TlsIdentity>, std::string> TlsIdentity::load(TlsFiles files) {
  auto context = make_context(files);
  if (!context) return unexpected(context.error());
  return std::make_shared<TlsIdentity>(std::move(files), std::move(*context));
}

Expected<void, std::string> TlsIdentity::reload() {
  auto context = make_context(files_);
  if (!context) return unexpected(context.error());
  std::lock_guard lock(mutex_);
  context_ = std::move(*context);
  return {};
}

std::shared_ptr<ssl::context> TlsIdentity::current() const {
  std::lock_guard lock(mutex_);
  return context_;
}

std::string TlsIdentity::describe() const {
  const auto context = current();
  X509* cert = SSL_CTX_get0_certificate(context->native_handle());
  return cert != nullptr ? summary_of(cert) : std::string("no certificate");
}

}  // namespace jq::http
