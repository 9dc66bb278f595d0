#include "src/http/respond.hpp"

#include "api/body.hpp"

namespace jq::http {

api::MediaType response_type(const Request& request) {
  // The body's declared type counts even when the body was not read (a refused 413).
  return api::choose_response_type(request.accept, api::parse_content_type(request.content_type));
}

Response respond(const Request& request, int status, const nlohmann::json& body) {
  const api::MediaType type = response_type(request);
  return respond_encoded(type, status, api::encode_body(body, type));
}

Response respond_encoded(api::MediaType type, int status, std::string body) {
  return Response{status, api::content_type_name(type), std::move(body), {}};
}

Response respond_error(const Request& request, const api::ApiError& error) {
  const api::MediaType type = response_type(request);
  Response response{api::http_status(error.code),
                    api::content_type_name(type),
                    api::encode_error(error, type),
                    {}};
  if (error.retry_after_s) {
    response.headers.emplace_back("Retry-After", std::to_string(*error.retry_after_s));
  }
  return response;
}

Response respond_error(const Request& request, api::ErrorCode code, std::string message) {
  return respond_error(request, api::ApiError::make(code, std::move(message)));
}

Response respond_no_content() {
  return Response{204, {}, {}, {}};
}

}  // namespace jq::http
