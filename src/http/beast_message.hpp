// Request and Response to and from Beast's messages, for the server's sessions (server.cpp), so
// that handlers never see Beast.
#pragma once

#include <string>

#include <boost/beast/http/message.hpp>

#include "common/message_parser.hpp"
#include "src/http/message.hpp"

namespace jq::http {

// Fills everything but the body from a parsed header (taking the fields kept), also from a header
// read in part; false when the path is badly encoded.
bool fill_request_header(MessageParser<true>& parsed, Request& out);

// The status line and headers of the answer (its body goes after them, except for HEAD), as
// Beast would write them, but into one string: Server, Content-Type, the handler's headers (a
// later one replaces an earlier one of the same name), Connection as `keep_alive` asks for the
// request's HTTP `version` (10 or 11), and Content-Length (for HEAD, of the body left out).
std::string encode_response_head(const Response& r, unsigned version, bool keep_alive);

}  // namespace jq::http
