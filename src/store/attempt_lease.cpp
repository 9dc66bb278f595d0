#include "src/store/attempt_lease.hpp"

#include <msgpack.hpp>

#include "common/string_sink.hpp"

namespace jq::store {

std::optional<AttemptLease> attempt_lease(const JobId& id, int attempt,
                                          const std::vector<std::string>& constraints) {
  if (constraints.empty()) return std::nullopt;
  std::string packed;
  std::size_t size = 5;  // the array's header, at most
  for (const std::string& s : constraints) size += 5 + s.size();
  packed.reserve(size);
  StringSink sink{packed};
  msgpack::packer<StringSink> pk(sink);
  pk.pack_array(static_cast<std::uint32_t>(constraints.size()));
  for (const std::string& s : constraints) pk.pack(s);
  return AttemptLease{id.str() + ":" + std::to_string(attempt), std::move(packed)};
}

}  // namespace jq::store
