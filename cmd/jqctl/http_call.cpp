#include "cmd/jqctl/http_call.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>

#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "api/http_url.hpp"

namespace jq::ctl {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

namespace {

// A dead-job list holds up to 1000 results; a master accepts bodies of 1 MiB by default.
constexpr std::uint64_t kMaxResponseBytes = 256ull * 1024 * 1024;
constexpr std::uint32_t kMaxResponseHeaderBytes = 64 * 1024;

// One request's I/O on a private io_context. Each step starts one asynchronous operation and runs
// the context until it completes or the deadline passes: Asio's synchronous calls (resolve
// included) cannot time out, while an asynchronous one can be abandoned.
class Exchange {
 public:
  explicit Exchange(Clock::time_point deadline) : deadline_(deadline) {}

  tcp::resolver& resolver() { return resolver_; }
  tcp::socket& socket() { return socket_; }

  // `start(done)` begins an operation whose handler calls done(error_code). Returns that error
  // code, or beast::error::timeout once the deadline has passed.
  template <class Start>
  error_code step(Start start) {
    std::optional<error_code> result;
    start([&result](error_code ec) { result = ec; });
    io_.restart();
    io_.run_until(deadline_);
    if (result) return *result;
    resolver_.cancel();
    error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();  // lets the abandoned operation's handler run, with operation_aborted
    return beast::error::timeout;
  }

 private:
  Clock::time_point deadline_;
  asio::io_context io_;
  tcp::resolver resolver_{io_};
  tcp::socket socket_{io_};
};

bhttp::verb to_verb(Method m) {
  switch (m) {
    case Method::post:
      return bhttp::verb::post;
    case Method::put:
      return bhttp::verb::put;
    case Method::patch:
      return bhttp::verb::patch;
    case Method::del:
      return bhttp::verb::delete_;
    case Method::get:
      break;
  }
  return bhttp::verb::get;
}

std::string host_port(const BaseUrl& base) {
  const bool ipv6 = base.host.find(':') != std::string::npos;
  return (ipv6 ? "[" + base.host + "]" : base.host) + ":" + std::to_string(base.port);
}

std::string seconds_text(std::chrono::milliseconds d) {
  std::ostringstream out;
  out << static_cast<double>(d.count()) / 1000.0 << " s";
  return out.str();
}

bhttp::request<bhttp::string_body> make_request(const CallOptions& options,
                                                const HttpRequest& request) {
  bhttp::request<bhttp::string_body> req{to_verb(request.method),
                                         options.base.base_path + request.target, 11};
  req.set(bhttp::field::host, host_port(options.base));
  req.set(bhttp::field::accept, "application/json");
  req.set(bhttp::field::user_agent, "jqctl");
  if (!options.token.empty()) req.set(bhttp::field::authorization, "Bearer " + options.token);
  if (request.json_body) {
    req.set(bhttp::field::content_type, "application/json");
    req.body() = *request.json_body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  return req;
}

// The sentence for a failed step: what was being done, and why it failed.
std::string describe(const char* doing, const std::string& where, error_code ec,
                     const CallOptions& options) {
  if (ec == beast::error::timeout) {
    return "no answer from " + where + " within " + seconds_text(options.timeout) + " (--timeout)";
  }
  return std::string(doing) + " " + where + ": " + ec.message();
}

bool has_scheme(std::string_view url, std::string_view scheme) {
  if (url.size() < scheme.size()) return false;
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(url[i])) != scheme[i]) return false;
  }
  return true;
}

// Whether the authority ("host:port", "[::1]:port") names a port.
bool has_port(std::string_view after_scheme) {
  const std::string_view authority = after_scheme.substr(0, after_scheme.find_first_of("/?#"));
  const std::size_t bracket = authority.rfind(']');
  return authority.find(':', bracket == std::string_view::npos ? 0 : bracket) !=
         std::string_view::npos;
}

// The request and its answer over a connected stream: the socket itself, or TLS over it.
template <class Stream>
Expected<HttpResponse, std::string> exchange(Exchange& x, Stream& stream,
                                             const CallOptions& options, const HttpRequest& request,
                                             const std::string& where) {
  auto req = make_request(options, request);
  error_code ec = x.step([&](auto done) {
    bhttp::async_write(stream, req, [done](error_code e, std::size_t) { done(e); });
  });
  if (ec) return unexpected(describe("cannot send the request to", where, ec, options));
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.header_limit(kMaxResponseHeaderBytes);
  parser.body_limit(kMaxResponseBytes);
  ec = x.step([&](auto done) {
    bhttp::async_read(stream, buffer, parser, [done](error_code e, std::size_t) { done(e); });
  });
  if (ec) return unexpected(describe("no answer from", where, ec, options));
  return HttpResponse{static_cast<int>(parser.get().result_int()), parser.get().body()};
}

// The CAs to verify the master with, and the name its certificate must carry (SNI sent too).
Expected<void, std::string> prepare_tls(ssl::context& context, ssl::stream<tcp::socket&>& stream,
                                        const CallOptions& options) {
  error_code ec;
  if (options.ca_file.empty()) {
    context.set_default_verify_paths(ec);
  } else {
    context.load_verify_file(options.ca_file, ec);
  }
  if (ec) {
    return unexpected((options.ca_file.empty() ? std::string("the system's CA certificates")
                                               : "--cacert " + options.ca_file) +
                      ": cannot load: " + ec.message());
  }
  stream.set_verify_mode(ssl::verify_peer);
  SSL* ssl = stream.native_handle();
  const std::string& host = options.base.host;
  if (asio::ip::make_address(host, ec); !ec) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, host.c_str());
    SSL_set1_host(ssl, host.c_str());
  }
  return {};
}

std::string describe_handshake(error_code ec, SSL* ssl, const std::string& where,
                               const CallOptions& options) {
  const long verified = SSL_get_verify_result(ssl);
  if (ec == beast::error::timeout || verified == X509_V_OK) {
    return describe("no TLS connection with", where, ec, options);
  }
  return "the certificate of " + where +
         " does not verify: " + X509_verify_cert_error_string(verified) +
         (options.ca_file.empty()
              ? "; give the CA that signed it with --cacert FILE (or $JQ_CACERT)"
              : "; is --cacert " + options.ca_file + " the CA that signed it?");
}

}  // namespace

Expected<void, std::string> check_ca_file(const std::string& path) {
  if (access(path.c_str(), R_OK) != 0) return unexpected(path + ": " + std::strerror(errno));
  ssl::context context(ssl::context::tls_client);
  error_code ec;
  context.load_verify_file(path, ec);
  if (ec) {
    return unexpected(path + ": not a PEM file of CA certificates (" + ec.message() + ")");
  }
  return {};
}

Expected<BaseUrl, std::string> parse_base_url(std::string_view url) {
  // The API's parser takes http:// URLs (what workers register); an https:// master has the
  // same shape, with port 443 by default.
  const bool tls = has_scheme(url, "https://");
  if (!tls && !has_scheme(url, "http://")) {
    return unexpected(std::string("must start with http:// or https://"));
  }
  const std::string after_scheme(url.substr(tls ? 8 : 7));
  if (after_scheme.substr(0, after_scheme.find_first_of("/?#")).find('@') != std::string::npos) {
    return unexpected(std::string(
        "must not contain user:password@: give the token with --token TOKEN (or $JQ_TOKEN)"));
  }
  auto parsed = api::parse_http_url("http://" + after_scheme);
  if (!parsed) return unexpected(std::string(parsed.error()));
  if (parsed->target.find('?') != std::string::npos) {
    return unexpected(std::string("must not have a query: http[s]://HOST[:PORT][/BASE]"));
  }
  BaseUrl base{parsed->host, parsed->port, parsed->target, tls};
  if (tls && !has_port(after_scheme)) base.port = 443;
  while (!base.base_path.empty() && base.base_path.back() == '/') base.base_path.pop_back();
  return base;
}

Expected<HttpResponse, std::string> http_call(const CallOptions& options,
                                              const HttpRequest& request) {
  Exchange x(Clock::now() + options.timeout);
  const std::string where = host_port(options.base);
  tcp::resolver::results_type endpoints;
  error_code ec = x.step([&](auto done) {
    x.resolver().async_resolve(options.base.host, std::to_string(options.base.port),
                               [&endpoints, done](error_code e, tcp::resolver::results_type r) {
                                 endpoints = std::move(r);
                                 done(e);
                               });
  });
  if (ec) return unexpected(describe("cannot resolve", options.base.host, ec, options));
  ec = x.step([&](auto done) {
    asio::async_connect(x.socket(), endpoints,
                        [done](error_code e, const tcp::endpoint&) { done(e); });
  });
  if (ec) return unexpected(describe("cannot connect to", where, ec, options));
  if (!options.base.tls) return exchange(x, x.socket(), options, request, where);
  ssl::context context(ssl::context::tls_client);
  ssl::stream<tcp::socket&> stream(x.socket(), context);
  if (auto prepared = prepare_tls(context, stream, options); !prepared) {
    return unexpected(prepared.error());
  }
  ec = x.step([&](auto done) {
    stream.async_handshake(ssl::stream_base::client, [done](error_code e) { done(e); });
  });
  if (ec) return unexpected(describe_handshake(ec, stream.native_handle(), where, options));
  return exchange(x, stream, options, request, where);
}

}  // namespace jq::ctl
