#include "tests/support/tls_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>

#include "tests/support/http_exchange.hpp"

namespace jq::test {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;

struct TlsConnection::Impl {
  asio::io_context io;
  ssl::context context{ssl::context::tls_client};
  ssl::stream<tcp::socket> stream{io, context};
};

TlsConnection::TlsConnection(std::uint16_t port, const std::string& ca_file)
    : impl_(std::make_unique<Impl>()) {
  impl_->context.load_verify_file(ca_file);
  impl_->stream.set_verify_mode(ssl::verify_peer);
  SSL_set_tlsext_host_name(impl_->stream.native_handle(), "localhost");
  SSL_set1_host(impl_->stream.native_handle(), "localhost");
  impl_->stream.next_layer().connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  impl_->stream.handshake(ssl::stream_base::client);
}

TlsConnection::~TlsConnection() {
  boost::system::error_code ignored;
  impl_->stream.next_layer().shutdown(tcp::socket::shutdown_both, ignored);
}

HttpResult TlsConnection::request(const std::string& method, const std::string& target,
                                  const std::string& body, const Headers& headers) {
  return detail::exchange(impl_->stream, method, target, body, headers);
}

std::string TlsConnection::peer_common_name() const {
  X509* cert = SSL_get0_peer_certificate(impl_->stream.native_handle());
  if (cert == nullptr) return {};
  char name[256] = "";
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof name);
  return name;
}

}  // namespace jq::test
