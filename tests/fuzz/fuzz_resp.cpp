// Redis replies as they arrive from the socket, cut into pieces anywhere: the parser returns
// whole replies, asks for more, or fails, and stays failed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "src/redis/resp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = data[0] % 16 + 1;  // the first byte says how the bytes are cut
  jq::redis::ReplyParser parser;
  for (std::size_t at = 1; at < size; at += piece) {
    const std::size_t n = at + piece <= size ? piece : size - at;
    parser.feed(reinterpret_cast<const char*>(data + at), n);
    while (auto reply = parser.next()) (void)reply;
    if (parser.failed()) {
      if (parser.next()) std::abort();  // failed means failed
      break;
    }
  }
  return 0;
}
