// A Beast parser that keeps only what jqmaster reads of an HTTP message: the start line, the
// first value of each of a few fields, and the body (and, when asked, every field: jqworker's
// /stats and request log). Beast's own parser stores every field in a
// node of its own (an allocation and a tree insertion each, seven per job in row b, callgrind)
// that nobody reads. Beast's basic_parser still does all the parsing and checking (header and
// body limits, Content-Length, chunked bodies, Connection); this keeps less of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>

namespace jq {

template <bool isRequest>
class MessageParser : public boost::beast::http::basic_parser<isRequest> {
 public:
  using field = boost::beast::http::field;
  using verb = boost::beast::http::verb;

  // Requests.
  verb method() const { return method_; }
  const std::string& target() const { return target_; }
  std::string& target() { return target_; }
  // Responses.
  unsigned status() const { return status_; }

  unsigned version() const { return version_; }  // 10 for HTTP/1.0, 11 for HTTP/1.1 (and 1.x)
  // The first value of each field (as message[name] gives), empty when it was not sent. Callers
  // move the values out (fill_request_header, the worker call) once the header is read.
  struct Fields {
    std::string content_type, accept, authorization, expect, retry_after, traceparent;
  };
  const Fields& fields() const { return fields_; }
  Fields& fields() { return fields_; }
  std::string& body() { return body_; }

  // Every field as sent (name, value), in order; only after keep_every_field() before parsing.
  using FieldList = std::vector<std::pair<std::string, std::string>>;
  void keep_every_field() { keep_every_field_ = true; }
  FieldList& every_field() { return every_field_; }

 private:
  using error_code = boost::system::error_code;
  using beast_view = boost::beast::string_view;

  void on_request_impl(verb method, beast_view, beast_view target, int version,
                       error_code&) override {
    method_ = method;
    target_.assign(target.data(), target.size());
    version_ = static_cast<unsigned>(version);
  }

  void on_response_impl(int code, beast_view, int version, error_code&) override {
    status_ = static_cast<unsigned>(code);
    version_ = static_cast<unsigned>(version);
  }

  void on_field_impl(field name, beast_view name_string, beast_view value, error_code&) override {
    if (keep_every_field_) every_field_.emplace_back(name_string, value);
    switch (name) {
      case field::content_type:
        keep_first(seen_.content_type, fields_.content_type, value);
        break;
      case field::accept:
        keep_first(seen_.accept, fields_.accept, value);
        break;
      case field::authorization:
        keep_first(seen_.authorization, fields_.authorization, value);
        break;
      case field::expect:
        keep_first(seen_.expect, fields_.expect, value);
        break;
      case field::retry_after:
        keep_first(seen_.retry_after, fields_.retry_after, value);
        break;
      case field::unknown:
        if (boost::beast::iequals(name_string, "traceparent")) {
          keep_first(seen_.traceparent, fields_.traceparent, value);
        }
        break;
      default:
        break;
    }
  }

  void on_header_impl(error_code&) override {}

  void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                         error_code&) override {
    // basic_parser has checked it against the body limit already.
    if (content_length) body_.reserve(static_cast<std::size_t>(*content_length));
  }

  std::size_t on_body_impl(beast_view body, error_code&) override {
    body_.append(body.data(), body.size());
    return body.size();
  }

  void on_chunk_header_impl(std::uint64_t, beast_view, error_code&) override {}

  std::size_t on_chunk_body_impl(std::uint64_t, beast_view body, error_code&) override {
    body_.append(body.data(), body.size());
    return body.size();
  }

  void on_finish_impl(error_code&) override {}

  static void keep_first(bool& seen, std::string& into, beast_view value) {
    if (seen) return;
    seen = true;
    into.assign(value.data(), value.size());
  }

  verb method_ = verb::unknown;
  std::string target_;
  unsigned status_ = 0;
  unsigned version_ = 11;
  Fields fields_;
  struct {
    bool content_type = false, accept = false, authorization = false, expect = false,
         retry_after = false, traceparent = false;
  } seen_;
  std::string body_;
  bool keep_every_field_ = false;
  FieldList every_field_;
};

}  // namespace jq
