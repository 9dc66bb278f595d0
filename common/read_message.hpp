// Reads an HTTP message into a parser straight from the stream: what the buffer holds is parsed
// first, and the stream is read only when the parser needs more. This is what Beast's
// http::async_read_header and http::async_read do (the same parser calls, the same end-of-stream
// rules), without their composed operations around each read: each took a work guard and a
// type-erased executor of its own, about a tenth of the master's instructions per job (callgrind,
// docs/BENCHMARKS.md).
#pragma once

#include <cstddef>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

namespace jq {

enum class ReadUntil { header, whole };

// Parses what `buffer` holds, as far as `until`: true once the parser has it (no read needed);
// `ec` is set when the message is malformed. Only when it returns false with no error does more
// have to be read (read_message below).
template <class Parser>
bool parse_buffered(boost::beast::flat_buffer& buffer, Parser& parser, ReadUntil until,
                    boost::system::error_code& ec) {
  const auto got = [&] {
    return until == ReadUntil::header ? parser.is_header_done() : parser.is_done();
  };
  while (!got() && buffer.size() > 0) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == boost::beast::http::error::need_more) {
      ec = {};
      break;
    }
    if (ec || used == 0) break;
  }
  return got();
}

// An empty error code once the parser has what `until` asks for; else why not (the parser's
// error, the stream's, or http::error::end_of_stream for a stream that ended before a message
// began, as Beast says it).
template <class Stream, class Parser>
boost::asio::awaitable<boost::system::error_code> read_message(Stream& stream,
                                                               boost::beast::flat_buffer& buffer,
                                                               Parser& parser, ReadUntil until) {
  namespace http = boost::beast::http;
  constexpr std::size_t kReadSize = 64 * 1024;  // the most one read takes, as Beast's reads
  boost::system::error_code ec;
  for (;;) {
    if (parse_buffered(buffer, parser, until, ec) || ec) co_return ec;
    const std::size_t size = boost::beast::read_size(buffer, kReadSize);
    if (size == 0) co_return boost::beast::error_code(http::error::buffer_overflow);
    const std::size_t n = co_await stream.async_read_some(
        buffer.prepare(size), boost::asio::redirect_error(boost::asio::use_awaitable, ec));
    buffer.commit(n);
    if (ec == boost::asio::error::eof) {
      if (!parser.got_some()) co_return boost::beast::error_code(http::error::end_of_stream);
      ec = {};
      parser.put_eof(ec);  // a body that ends with the connection is whole now
      co_return ec;
    }
    if (ec) co_return ec;
  }
}

}  // namespace jq
