#include "src/dispatch/worker_request.hpp"

#include <cstring>
#include <msgpack.hpp>

#include "src/util/time.hpp"

namespace jq::dispatch {

std::string encode_worker_request(const std::string& id, const store::JobRecord& record,
                                  std::int64_t deadline_ms) {
  // An sbuffer and a copy at the end: appending each of the packer's small writes to a string
  // instead took twice the instructions (callgrind, row b).
  msgpack::sbuffer buffer(256 + record.argument.size());
  msgpack::packer<msgpack::sbuffer> pk(buffer);
  auto key = [&pk](std::string_view k) {
    pk.pack_str(static_cast<uint32_t>(k.size()))
        .pack_str_body(k.data(), static_cast<uint32_t>(k.size()));
  };
  auto str = key;
  const bool scheduled = !record.schedule.empty();
  pk.pack_map(scheduled ? 10 : 8);
  key("id");
  str(id);
  key("name");
  str(record.name);
  key("argument");
  buffer.write(record.argument.data(), record.argument.size());
  key("priority");
  pk.pack_int32(record.priority);
  key("attempt");
  pk.pack_int32(record.attempts);
  key("max_retry");
  pk.pack_int32(record.max_retry);
  key("timeout");
  // Whole seconds stay integers; msgpack-cxx would write 3.0 as an integer anyway, so write
  // fractions as float64 explicitly.
  if (record.timeout_ms % 1000 == 0) {
    pk.pack_int64(record.timeout_ms / 1000);
  } else {
    const double seconds = static_cast<double>(record.timeout_ms) / 1000.0;
    char raw[9];
    raw[0] = static_cast<char>(0xcb);
    std::uint64_t bits;
    std::memcpy(&bits, &seconds, sizeof bits);
    for (int i = 0; i < 8; ++i) raw[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
    buffer.write(raw, sizeof raw);
  }
  key("deadline");
  Iso8601Text deadline;
  str(iso8601_utc(deadline_ms, deadline));
  if (scheduled) {
    key("schedule");
    str(record.schedule);
    key("scheduled_at");
    str(record.scheduled_at);
  }
  return std::string(buffer.data(), buffer.size());
}

}  // namespace jq::dispatch
