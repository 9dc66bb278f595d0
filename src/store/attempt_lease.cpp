#include "src/store/attempt_lease.hpp"

#include <msgpack.hpp>

namespace jq::store {

std::optional<AttemptLease> attempt_lease(const JobId& id, int attempt,
                                          const std::vector<std::string>& constraints) {
  if (constraints.empty()) return std::nullopt;
  msgpack::sbuffer packed;
  msgpack::packer<msgpack::sbuffer> pk(packed);
  pk.pack_array(static_cast<std::uint32_t>(constraints.size()));
  for (const std::string& s : constraints) pk.pack(s);
  return AttemptLease{id.str() + ":" + std::to_string(attempt),
                      std::string(packed.data(), packed.size())};
}

}  // namespace jq::store
