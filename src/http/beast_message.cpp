#include "src/http/beast_message.hpp"

#include "api/query.hpp"

namespace jq::http {

namespace bhttp = boost::beast::http;

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

bool fill_request_header(const bhttp::request_header<>& header, Request& out) {
  out.method = to_method(header.method());
  std::string_view target = header.target();
  auto q = target.find('?');
  out.query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
  auto path = api::percent_decode(target.substr(0, q), false);
  out.content_type = std::string(header[bhttp::field::content_type]);
  out.accept = std::string(header[bhttp::field::accept]);
  out.authorization = std::string(header[bhttp::field::authorization]);
  out.traceparent = std::string(header["traceparent"]);
  if (!path) return false;
  out.path = std::move(*path);
  return true;
}

bhttp::response<bhttp::string_body> to_beast(Response&& r, unsigned version, bool keep_alive,
                                             bool head) {
  bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), version};
  res.set(bhttp::field::server, "jqmaster");
  if (!r.content_type.empty()) res.set(bhttp::field::content_type, r.content_type);
  for (auto& [name, value] : r.headers) res.set(name, value);
  if (!head) res.body() = std::move(r.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  if (head) res.content_length(r.body.size());
  return res;
}

}  // namespace jq::http
