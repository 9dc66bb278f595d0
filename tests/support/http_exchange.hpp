// One HTTP/1.1 request and its answer over any connected Beast stream: shared by the plain test
// client (http_client.cpp) and the TLS one (tls_client.cpp). Only those two include it.
#pragma once

#include <cctype>
#include <string>

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "tests/support/http_client.hpp"

namespace jq::test::detail {

template <class Stream>
HttpResult exchange(Stream& stream, const std::string& method, const std::string& target,
                    const std::string& body, const Headers& headers) {
  namespace bhttp = boost::beast::http;
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = body;
  if (!body.empty() || method == "POST") req.prepare_payload();
  bhttp::write(stream, req);
  boost::beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  if (method == "HEAD") parser.skip(true);
  bhttp::read(stream, buffer, parser);
  HttpResult result;
  auto& res = parser.get();
  result.status = static_cast<int>(res.result_int());
  for (const auto& field : res) {
    std::string name(field.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    result.headers[name] = std::string(field.value());
  }
  result.body = std::move(res.body());
  return result;
}

}  // namespace jq::test::detail
