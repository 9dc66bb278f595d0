#include "src/http/beast_message.hpp"

#include <charconv>
#include <utility>

#include "api/query.hpp"
#include "src/util/header_lines.hpp"

namespace jq::http {

namespace bhttp = boost::beast::http;
using namespace std::string_view_literals;

namespace {

Method to_method(bhttp::verb verb) {
  switch (verb) {
    case bhttp::verb::get:
      return Method::get;
    case bhttp::verb::post:
      return Method::post;
    case bhttp::verb::put:
      return Method::put;
    case bhttp::verb::patch:
      return Method::patch;
    case bhttp::verb::delete_:
      return Method::del;
    case bhttp::verb::head:
      return Method::head;
    default:
      return Method::other;
  }
}

}  // namespace

bool fill_request_header(MessageParser<true>& parsed, Request& out) {
  out.method = to_method(parsed.method());
  std::string_view target = parsed.target();
  auto q = target.find('?');
  out.query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  auto path = api::percent_decode(target.substr(0, q), false);
  auto& fields = parsed.fields();
  out.content_type = std::move(fields.content_type);
  out.accept = std::move(fields.accept);
  out.authorization = std::move(fields.authorization);
  out.traceparent = std::move(fields.traceparent);
  if (!path) return false;
  out.path = std::move(*path);
  return true;
}

std::string encode_response_head(const Response& r, unsigned version, bool keep_alive) {
  HeaderLines headers;
  headers.reserve(4 + r.headers.size());
  headers.emplace_back("Server", "jqmaster");
  if (!r.content_type.empty()) headers.emplace_back("Content-Type", r.content_type);
  for (const auto& [name, value] : r.headers) headers.emplace_back(name, value);
  // HTTP/1.1 keeps a connection alive unless told otherwise, HTTP/1.0 closes it unless told.
  if (version == 11 && !keep_alive) headers.emplace_back("Connection", "close");
  if (version == 10 && keep_alive) headers.emplace_back("Connection", "keep-alive");
  char length[24];
  const auto length_end = std::to_chars(length, length + sizeof length, r.body.size()).ptr;
  headers.emplace_back("Content-Length",
                       std::string_view(length, static_cast<std::size_t>(length_end - length)));
  const auto reason = bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(r.status)));
  std::string out;
  out.reserve(160 + r.content_type.size());
  out.append(version == 10 ? "HTTP/1.0 "sv : "HTTP/1.1 "sv).append(std::to_string(r.status));
  out.append(" "sv).append(reason.data(), reason.size()).append("\r\n"sv);
  append_header_lines(out, headers);
  out.append("\r\n"sv);
  return out;
}

}  // namespace jq::http
