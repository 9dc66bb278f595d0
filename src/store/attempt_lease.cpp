#include "src/store/attempt_lease.hpp"

#include <msgpack.hpp>

namespace jq::store {
namespace {

// Packs straight into the string (an sbuffer starts at 8 KiB and would be copied out again):
// every constrained job packs its pairs twice, for admitJobs and for releaseLeases.
struct StringSink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};

}  // namespace

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
