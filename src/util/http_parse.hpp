// Reading an HTTP message with Beast without an asynchronous read where none is needed.
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>

namespace jq {

// After the header: parses the body bytes that came with it (usually all of them) straight from
// the buffer. True when the message is complete; `ec` is set when it is malformed. Only when it
// returns false with no error does the rest have to be read (common/read_message.hpp).
template <class Parser>
bool parse_buffered(boost::beast::flat_buffer& buffer, Parser& parser,
                    boost::system::error_code& ec) {
  while (!parser.is_done() && buffer.size() > 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == boost::beast::http::error::need_more) {
      ec = {};
      break;
    }
    if (ec || used == 0) break;
  }
  return parser.is_done();
}

}  // namespace jq
