#include "src/redis/record_head.hpp"

#include <msgpack.hpp>

#include "common/string_sink.hpp"

namespace jq::redis {

namespace {

constexpr std::int64_t kQueued = 1;   // S_QUEUED in lua/lib/preamble.lua
constexpr std::int64_t kRunning = 3;  // S_RUNNING

// Fixed-width base62 in ASCII order (0-9, A-Z, a-z), as lua/lib/preamble.lua's base62.
std::string base62(std::int64_t n) {
  static constexpr char kDigits[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::string out(9, '0');
  for (std::size_t i = out.size(); i-- > 0 && n > 0; n /= 62) out[i] = kDigits[n % 62];
  return out;
}

void pack_str(msgpack::packer<StringSink>& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()))
      .pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void append_head(std::string& out, const RecordHead& head) {
  StringSink sink{out};
  msgpack::packer<StringSink> pk(sink);
  pack_str(pk, head.name);
  pack_str(pk, head.argument);
  pk.pack_int32(head.priority);
  pk.pack_int64(head.max_retry);
  pk.pack_int(head.keep_result ? 1 : 0);
  pk.pack_int64(head.timeout_ms);
}

}  // namespace

std::string record_head(const RecordHead& head) {
  std::string out;
  out.reserve(32 + head.name.size() + head.argument.size());
  append_head(out, head);
  return out;
}

std::string push_tail(PushedAs as, std::int64_t now_ms, std::int64_t ready_stamp_us,
                      std::string_view traceparent, std::string_view taken_by) {
  const bool running = as == PushedAs::running;
  std::string out;
  StringSink sink{out};
  msgpack::packer<StringSink> pk(sink);
  pk.pack_int64(running ? kRunning : kQueued);
  pk.pack_int64(running ? 1 : 0);
  pk.pack_int64(now_ms);
  pack_str(pk, base62(ready_stamp_us));
  pack_str(pk, "");
  pack_str(pk, traceparent);
  pack_str(pk, running ? taken_by : std::string_view());
  return out;
}

std::string plain_record(const RecordHead& head, std::string_view tail,
                         std::string_view constraints) {
  // fixarray 13; array 16 of 19; then slots 14-18 packed with their "none" values ('', 0, '', 0,
  // ''): lua/lib/preamble.lua's RECORD_HEADERS and R_NONE.
  static constexpr std::string_view kThirteen = "\x9d";
  static constexpr std::string_view kNineteen{"\xdc\x00\x13", 3};
  static constexpr std::string_view kNoneToConstraints{"\xa0\x00\xa0\x00\xa0", 5};
  std::string out;
  out.reserve(40 + head.name.size() + head.argument.size() + tail.size() + constraints.size());
  out.append(constraints.empty() ? kThirteen : kNineteen);
  append_head(out, head);
  out.append(tail);
  if (!constraints.empty()) out.append(kNoneToConstraints).append(constraints);
  return out;
}

}  // namespace jq::redis
