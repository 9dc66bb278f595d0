// The RESP codec: commands to RESP bytes (written directly), RESP bytes to Reply trees (hiredis's
// reader). No sockets here.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "src/redis/reply.hpp"

namespace jq::redis {

// Appends one command, encoded as RESP, to `out`.
void append_command(std::string& out, std::span<const std::string_view> args);
void append_command(std::string& out, std::span<const std::string> args);
// The same in parts, for callers that hold their arguments in several places: a command of
// `count` arguments is one append_array_header and `count` append_bulk calls.
void append_array_header(std::string& out, std::size_t count);
void append_bulk(std::string& out, std::string_view arg);

// Incremental parser: feed bytes as they arrive, take complete replies one at a time.
class ReplyParser {
 public:
  ReplyParser();
  ~ReplyParser();
  ReplyParser(const ReplyParser&) = delete;
  ReplyParser& operator=(const ReplyParser&) = delete;

  void feed(const char* data, std::size_t size);
  // A complete reply, nullopt when more bytes are needed. Sets `failed()` on malformed input.
  std::optional<Reply> next();
  bool failed() const { return failed_; }

 private:
  struct ReaderDeleter {
    void operator()(void* reader) const;
  };
  std::unique_ptr<void, ReaderDeleter> reader_;
  bool failed_ = false;
};

}  // namespace jq::redis
