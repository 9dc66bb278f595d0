#include "src/redis/record_head.hpp"

#include <msgpack.hpp>

#include "common/string_sink.hpp"

namespace jq::redis {

std::string record_head(std::string_view name, std::string_view argument, std::int32_t priority,
                        std::int64_t max_retry, bool keep_result, std::int64_t timeout_ms) {
  std::string out;
  out.reserve(32 + name.size() + argument.size());
  StringSink sink{out};
  msgpack::packer<StringSink> pk(sink);
  pk.pack_str(static_cast<std::uint32_t>(name.size()))
      .pack_str_body(name.data(), static_cast<std::uint32_t>(name.size()));
  pk.pack_str(static_cast<std::uint32_t>(argument.size()))
      .pack_str_body(argument.data(), static_cast<std::uint32_t>(argument.size()));
  pk.pack_int32(priority);
  pk.pack_int64(max_retry);
  pk.pack_int(keep_result ? 1 : 0);
  pk.pack_int64(timeout_ms);
  return out;
}

}  // namespace jq::redis
