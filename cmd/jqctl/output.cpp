#include "cmd/jqctl/output.hpp"

#include <algorithm>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace jq::ctl {

using nlohmann::json;

namespace {

// A body that is not a JSON error is quoted in the message only this far.
constexpr std::size_t kMaxQuotedBody = 200;

void print_body(const std::string& body, bool pretty) {
  if (body.empty()) return;
  const json value = json::parse(body, nullptr, false);
  if (value.is_discarded()) {
    std::cout << body << (body.back() == '\n' ? "" : "\n");
    return;
  }
  std::cout << value.dump(pretty ? 2 : -1, ' ', false, json::error_handler_t::replace) << "\n";
}

// The error body's `message`, or the status and the start of a body that is not one.
std::string error_message(const HttpResponse& response) {
  const json value = json::parse(response.body, nullptr, false);
  if (value.is_object() && value.contains("message") && value["message"].is_string()) {
    return value["message"].get<std::string>();
  }
  std::string message = "the master answered HTTP " + std::to_string(response.status);
  if (!response.body.empty()) message += ": " + response.body.substr(0, kMaxQuotedBody);
  return message;
}

}  // namespace

Exit report(const HttpResponse& response, bool pretty) {
  const Exit code = exit_for_status(response.status);
  if (code == Exit::ok) {
    print_body(response.body, pretty);
  } else {
    // The master says which header to send; with jqctl that is a flag.
    const char* hint =
        response.status == 401 ? " (jqctl sends the token of --token or $JQ_TOKEN)" : "";
    fail(code, error_message(response) + hint);
  }
  return code;
}

Exit fail(Exit code, std::string_view message) {
  std::string line(message);
  std::replace_if(
      line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  std::cerr << "jqctl: " << line << std::endl;
  return code;
}

}  // namespace jq::ctl
