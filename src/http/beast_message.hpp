// Request and Response to and from Beast's messages, for the server's sessions (server.cpp), so
// that handlers never see Beast.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "src/http/message.hpp"

namespace jq::http {

// Fills everything but the body from a parsed header; false when the path is badly encoded.
bool fill_request_header(const boost::beast::http::request_header<>& header, Request& out);

// The answer as Beast writes it; a HEAD answer gets the length of the body it leaves out.
boost::beast::http::response<boost::beast::http::string_body> to_beast(Response&& r,
                                                                       unsigned version,
                                                                       bool keep_alive, bool head);

}  // namespace jq::http
