#include "src/http/message.hpp"

namespace jq::http {

std::string_view to_string(Method method) {
  switch (method) {
    case Method::get:
      return "GET";
    case Method::post:
      return "POST";
    case Method::put:
      return "PUT";
    case Method::patch:
      return "PATCH";
    case Method::del:
      return "DELETE";
    case Method::head:
      return "HEAD";
    case Method::other:
      return "OTHER";
  }
  return "OTHER";
}

std::string_view Request::param(std::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return value;
  }
  return {};
}

}  // namespace jq::http
